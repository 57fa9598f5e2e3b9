// SPDX-License-Identifier: MIT
/* record --cgroup / --container resolution and following (record_scope.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../cgroups/cgroups.h"
#include "record_scope.h"

#define MATCHES_MAX 16 /* cgroups one --container may select */

/* A container cgroup in scope, selected by containers[selector]. */
struct scope_cgroup {
	uint64_t id;
	size_t selector;
	char path[CGROUP_PATH_MAX]; /* relative to the v2 root */
};

struct record_scope {
	const char *proc_root, *state_root;
	char root[PATH_MAX]; /* the v2 mount */
	const char *const *containers;
	size_t ncontainers;
	struct scope_cgroup cg[MS_MAX_CGROUPS];
	size_t ncg;
	uint64_t next_ns;
	struct record_scope_stats st;
	char matches[MATCHES_MAX][CGROUP_PATH_MAX];
};

struct record_scope *record_scope__new(const char *proc_root, const char *state_root)
{
	struct record_scope *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->proc_root = proc_root;
	sc->state_root = state_root;
	return sc;
}

void record_scope__free(struct record_scope *sc)
{
	free(sc);
}

const char *record_scope__state_root(void)
{
	const char *env = getenv(RECORD_SCOPE_STATE_ROOT_ENV);

	return env ? env : "";
}

/* Add id (path rel) unless present.  Returns 0 or -E2BIG. */
static int scope__add(struct record_options *o, uint64_t id, const char *rel, char *desc,
		      size_t desclen)
{
	size_t used = strlen(desc);

	for (size_t i = 0; i < o->ncgroup_ids; i++)
		if (o->cgroup_ids[i] == id)
			return 0;
	if (o->ncgroup_ids == MS_MAX_CGROUPS)
		return -E2BIG;
	o->cgroup_ids[o->ncgroup_ids++] = id;
	if (used < desclen)
		snprintf(desc + used, desclen - used, "%s%s", used ? "," : "", rel);
	return 0;
}

/* Remember container cgroup rel (id) as selected by containers[sel]. */
static void scope__track(struct record_scope *sc, uint64_t id, const char *rel, size_t sel)
{
	for (size_t i = 0; i < sc->ncg; i++)
		if (sc->cg[i].id == id)
			return;
	if (sc->ncg == MS_MAX_CGROUPS)
		return;
	sc->cg[sc->ncg].id = id;
	sc->cg[sc->ncg].selector = sel;
	snprintf(sc->cg[sc->ncg].path, sizeof(sc->cg[0].path), "%s", rel);
	sc->ncg++;
}

/* Why --container query matches nothing, with the running containers. */
static void scope__no_match(struct record_scope *sc, const char *query, char *err,
			    size_t errlen)
{
	char running[1024];

	cgroup_containers__describe(sc->proc_root, sc->state_root, running, sizeof(running));
	if (cgroup_query__short_prefix(query))
		snprintf(err, errlen,
			 "--container %s: no running container matches: an id prefix needs at "
			 "least %d hex digits (docker shows 12), and no container is named %s; "
			 "running containers: %s",
			 query, CGROUP_ID_PREFIX_MIN, query, running);
	else
		snprintf(err, errlen,
			 "--container %s: no running container matches (by id, id prefix of at "
			 "least %d hex digits, or name: docker and podman names from their state "
			 "files, systemd-nspawn and lxc names from the cgroups of the processes in "
			 "%s); running containers: %s",
			 query, CGROUP_ID_PREFIX_MIN, sc->proc_root, running);
}

static int scope__resolve_cgroups(struct record_options *o, const char *root,
				  const char *const *cgroups, size_t ncg, char *desc,
				  size_t desclen, char *err, size_t errlen)
{
	char rel[CGROUP_PATH_MAX];
	uint64_t id;
	int ret;

	for (size_t i = 0; i < ncg; i++) {
		ret = cgroup__resolve(root, cgroups[i], rel, sizeof(rel), &id);
		if (ret == -ENOENT || ret == -ENOTDIR)
			snprintf(err, errlen, "--cgroup %s: no such cgroup in the v2 hierarchy at %s",
				 cgroups[i], root);
		else if (ret == -EXDEV)
			snprintf(err, errlen,
				 "--cgroup %s: not in the cgroup v2 hierarchy (mounted at %s; "
				 "cgroup v1 hierarchies cannot be filtered on)",
				 cgroups[i], root);
		else if (ret)
			snprintf(err, errlen, "--cgroup %s: cannot read it: %s", cgroups[i],
				 strerror(-ret));
		if (!ret)
			ret = scope__add(o, id, rel, desc, desclen);
		if (ret == -E2BIG)
			snprintf(err, errlen, "more than %d cgroups selected", MS_MAX_CGROUPS);
		if (ret)
			return ret;
	}
	return 0;
}

int record_scope__resolve(struct record_scope *sc, struct record_options *o,
			  const char *mountinfo, const char *const *cgroups, size_t ncg,
			  const char *const *containers, size_t nct, char *desc, size_t desclen,
			  char *err, size_t errlen)
{
	char *root = sc->root;
	uint64_t id;
	int ret;

	if (desclen)
		desc[0] = '\0';
	sc->containers = containers;
	sc->ncontainers = nct;
	sc->ncg = 0;
	if (!ncg && !nct)
		return 0;
	ret = cgroup_root__find(mountinfo, root, sizeof(sc->root));
	if (ret == -ENOENT) {
		snprintf(err, errlen,
			 "%s needs the cgroup v2 hierarchy, and this host mounts only cgroup v1 "
			 "(no cgroup2 file system in %s)",
			 ncg ? "--cgroup" : "--container", mountinfo);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "cannot find the cgroup v2 mount in %s: %s", mountinfo,
			 strerror(-ret));
		return ret;
	}
	ret = scope__resolve_cgroups(o, root, cgroups, ncg, desc, desclen, err, errlen);
	if (ret)
		return ret;
	for (size_t i = 0; i < nct; i++) {
		int n = cgroup_containers__find(sc->proc_root, sc->state_root, containers[i],
						sc->matches, NULL, MATCHES_MAX);

		if (n < 0) {
			snprintf(err, errlen, "--container %s: cannot read %s: %s", containers[i],
				 sc->proc_root, strerror(-n));
			return n;
		}
		if (!n) {
			scope__no_match(sc, containers[i], err, errlen);
			return -ENOENT;
		}
		if (n > MATCHES_MAX) {
			snprintf(err, errlen, "--container %s matches %d containers; give more of its id",
				 containers[i], n);
			return -E2BIG;
		}
		for (int k = 0; k < n; k++) {
			char abs[PATH_MAX + CGROUP_PATH_MAX];

			snprintf(abs, sizeof(abs), "%s%s", root, sc->matches[k]);
			ret = cgroup__id(abs, &id);
			if (ret) {
				snprintf(err, errlen, "--container %s: cgroup %s: %s", containers[i],
					 abs, strerror(-ret));
				return ret;
			}
			ret = scope__add(o, id, sc->matches[k], desc, desclen);
			if (ret) {
				snprintf(err, errlen, "more than %d cgroups selected", MS_MAX_CGROUPS);
				return ret;
			}
			scope__track(sc, id, sc->matches[k], i);
		}
	}
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Drop the container cgroups whose directory is gone or replaced. */
static int follow__drop_gone(struct record_scope *sc, record_scope_set_fn set, void *ctx,
			     FILE *log)
{
	char abs[PATH_MAX + CGROUP_PATH_MAX];
	size_t i = 0;
	int err;

	while (i < sc->ncg) {
		struct scope_cgroup *g = &sc->cg[i];
		uint64_t id;

		snprintf(abs, sizeof(abs), "%s%s", sc->root, g->path);
		if (!cgroup__id(abs, &id) && id == g->id) {
			i++;
			continue;
		}
		err = set(ctx, g->id, false);
		if (err && err != -ENOENT)
			return err;
		sc->st.left++;
		if (log)
			fprintf(log,
				"microscope record: --container %s: its cgroup %s is gone (container "
				"stopped or restarted); looking for it again every %llu ms\n",
				sc->containers[g->selector], g->path,
				RECORD_SCOPE_FOLLOW_NS / 1000000ull);
		sc->cg[i] = sc->cg[--sc->ncg];
	}
	return 0;
}

/* Resolve containers[sel] again; its cgroups join.  Returns how many joined or -errno. */
static int follow__rejoin(struct record_scope *sc, size_t sel, record_scope_set_fn set,
			  void *ctx, FILE *log)
{
	char abs[PATH_MAX + CGROUP_PATH_MAX];
	int n, joined = 0;

	sc->st.rescans++;
	n = cgroup_containers__find(sc->proc_root, sc->state_root, sc->containers[sel],
				    sc->matches, NULL, MATCHES_MAX);
	for (int k = 0; k < n && k < MATCHES_MAX; k++) {
		uint64_t id;
		int err;

		snprintf(abs, sizeof(abs), "%s%s", sc->root, sc->matches[k]);
		if (cgroup__id(abs, &id))
			continue; /* gone again */
		if (sc->ncg == MS_MAX_CGROUPS) {
			if (log)
				fprintf(log,
					"microscope record: --container %s: cannot follow it into %s: "
					"more than %d cgroups in scope\n",
					sc->containers[sel], sc->matches[k], MS_MAX_CGROUPS);
			break;
		}
		err = set(ctx, id, true);
		if (err)
			return err;
		scope__track(sc, id, sc->matches[k], sel);
		sc->st.rejoined++;
		joined++;
		if (log)
			fprintf(log,
				"microscope record: --container %s: restarted; recording its new "
				"cgroup %s\n",
				sc->containers[sel], sc->matches[k]);
	}
	return joined;
}

int record_scope__follow(struct record_scope *sc, uint64_t now_ns, record_scope_set_fn set,
			 void *ctx, FILE *log)
{
	uint64_t t0;
	int err = 0, joined = 0;

	if (!sc || !sc->ncontainers || now_ns < sc->next_ns)
		return 0;
	sc->next_ns = now_ns + RECORD_SCOPE_FOLLOW_NS;
	t0 = thread_cpu_ns();
	err = follow__drop_gone(sc, set, ctx, log);
	for (size_t sel = 0; !err && sel < sc->ncontainers; sel++) {
		bool live = false;
		int n;

		for (size_t i = 0; i < sc->ncg && !live; i++)
			live = sc->cg[i].selector == sel;
		if (live)
			continue;
		n = follow__rejoin(sc, sel, set, ctx, log);
		if (n < 0)
			err = n;
		else
			joined += n;
	}
	sc->st.cpu_ns += thread_cpu_ns() - t0;
	return err ? err : joined;
}

void record_scope__stats(const struct record_scope *sc, struct record_scope_stats *st)
{
	if (sc)
		*st = sc->st;
	else
		memset(st, 0, sizeof(*st));
}
