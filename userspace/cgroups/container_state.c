// SPDX-License-Identifier: MIT
/*
 * Container names from the runtimes' state files (cgroups.h:
 * container_state__each).  The cgroup directory names carry only the ids
 * of docker and podman containers; their names are in:
 *   podman (root): storage's container list, a JSON array of objects with
 *     "id" and "names" (containers/storage containers.go, the
 *     "overlay-containers" directory of the driver), under
 *     /var/lib/containers/storage and /run/containers/storage (the runroot);
 *   docker: /var/lib/docker/containers/<id>/config.v2.json, an object with
 *     "ID" and "Name" ("/name", moby container/container.go).
 * Those files belong to other programs and are read as untrusted input:
 * each read is bounded (STATE_FILE_MAX), entries and directories are
 * counted (CONTAINER_STATE_MAX), ids must be hex and names must fit
 * CGROUP_CONTAINER_ID_MAX; anything else is skipped.  jansson parses the
 * JSON (its parser bounds nesting depth).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"

/* Bytes read of one state file: podman's list holds every container (a few
 * hundred bytes each), docker's config.v2.json one. */
#define STATE_LIST_MAX (16u << 20)
#define STATE_CONFIG_MAX (1u << 20)

static const char *const podman_lists[] = {
	"/var/lib/containers/storage/overlay-containers/containers.json",
	"/run/containers/storage/overlay-containers/containers.json",
};
#define DOCKER_CONTAINERS "/var/lib/docker/containers"

/* A regular file's contents, at most max bytes (larger files: -EFBIG), in
 * *buf (malloc'd, NUL-terminated).  Returns its length or -errno. */
static long file__read(const char *path, size_t max, char **buf)
{
	struct stat st;
	long n = 0, err;
	size_t cap;
	char *b = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		err = S_ISREG(st.st_mode) ? -EFBIG : -EINVAL;
		goto cleanup;
	}
	/* The file may grow while read: read at most cap bytes. */
	cap = (size_t)st.st_size + 4096 < max ? (size_t)st.st_size + 4096 : max;
	b = malloc(cap + 1);
	if (!b) {
		err = -ENOMEM;
		goto cleanup;
	}
	while ((size_t)n < cap) {
		ssize_t r = read(fd, b + n, cap - (size_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto cleanup;
		}
		if (!r)
			break;
		n += r;
	}
	b[n] = '\0';
	*buf = b;
	b = NULL;
	err = n;
cleanup:
	free(b);
	close(fd);
	return err;
}

/* s is a container id as the cgroup names carry it: 12..64 lowercase hex. */
static bool state__hex_id(const char *s)
{
	size_t n = strlen(s);

	if (n < 12 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* s is a name docker and podman accept: [a-zA-Z0-9][a-zA-Z0-9_.-]*
 * (moby daemon/names, podman's libpod/define), short enough.  Anything else
 * (control characters for the terminal, say) is not believed. */
static bool state__name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= CGROUP_CONTAINER_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');

		if (!alnum && (!i || (c != '_' && c != '.' && c != '-')))
			return false;
	}
	return true;
}

/* Parse text as JSON; NULL when it is not. */
static json_t *state__json(const char *text, size_t n)
{
	json_error_t e;

	return json_loadb(text, n, JSON_REJECT_DUPLICATES, &e);
}

/* podman's list at path: fn for every (id, name).  *seen counts entries. */
static int podman__each(const char *path, container_state_fn fn, void *ctx, unsigned *seen)
{
	char *text = NULL;
	json_t *list = NULL, *ct;
	size_t i;
	long n = file__read(path, STATE_LIST_MAX, &text);
	int err = 0;

	if (n < 0)
		return n == -ENOENT || n == -ENOTDIR ? 0 : (int)n;
	list = state__json(text, (size_t)n);
	if (!json_is_array(list))
		goto cleanup; /* not podman's format: nothing learned */
	json_array_foreach(list, i, ct) {
		const char *id = json_string_value(json_object_get(ct, "id"));
		json_t *names = json_object_get(ct, "names"), *nm;
		size_t k;

		if (++*seen > CONTAINER_STATE_MAX)
			break;
		if (!id || !state__hex_id(id) || !json_is_array(names))
			continue;
		json_array_foreach(names, k, nm) {
			const char *name = json_string_value(nm);

			if (k >= 16)
				break;
			if (!name || !state__name_ok(name))
				continue;
			err = fn(ctx, CGROUP_RUNTIME_PODMAN, id, name);
			if (err)
				goto cleanup;
		}
	}
cleanup:
	json_decref(list);
	free(text);
	return err;
}

/* docker's containers directory dir: fn for every (id, name). */
static int docker__each(const char *dir, container_state_fn fn, void *ctx, unsigned *seen)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	while (!err && (de = readdir(d))) {
		char *text = NULL;
		json_t *cfg;
		const char *id, *name;
		long n;

		if (!state__hex_id(de->d_name))
			continue;
		if (++*seen > CONTAINER_STATE_MAX)
			break;
		if (snprintf(path, sizeof(path), "%s/%s/config.v2.json", dir, de->d_name) >=
		    (int)sizeof(path))
			continue;
		n = file__read(path, STATE_CONFIG_MAX, &text);
		if (n < 0)
			continue; /* removed meanwhile, or not a plain file */
		cfg = state__json(text, (size_t)n);
		id = json_string_value(json_object_get(cfg, "ID"));
		name = json_string_value(json_object_get(cfg, "Name"));
		/* The directory is named by the id; a file saying otherwise is not believed. */
		if (id && name && !strcmp(id, de->d_name)) {
			if (name[0] == '/')
				name++;
			if (state__name_ok(name))
				err = fn(ctx, CGROUP_RUNTIME_DOCKER, id, name);
		}
		json_decref(cfg);
		free(text);
	}
	closedir(d);
	return err;
}

int container_state__each(const char *state_root, container_state_fn fn, void *ctx)
{
	char path[PATH_MAX];
	unsigned seen = 0;
	int err = 0;

	if (!state_root)
		state_root = "";
	for (size_t i = 0; !err && i < sizeof(podman_lists) / sizeof(podman_lists[0]); i++) {
		if (snprintf(path, sizeof(path), "%s%s", state_root, podman_lists[i]) >=
		    (int)sizeof(path))
			return -ENAMETOOLONG;
		err = podman__each(path, fn, ctx, &seen);
	}
	if (err)
		return err;
	if (snprintf(path, sizeof(path), "%s%s", state_root, DOCKER_CONTAINERS) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return docker__each(path, fn, ctx, &seen);
}

struct by_name {
	const char *name;
	char (*ids)[CGROUP_CONTAINER_ID_MAX];
	int max, n;
};

static int by_name__visit(void *ctx, const char *runtime, const char *id, const char *name)
{
	struct by_name *q = ctx;

	(void)runtime;
	if (strcmp(name, q->name))
		return 0;
	for (int i = 0; i < q->n && i < q->max; i++)
		if (!strcmp(q->ids[i], id))
			return 0; /* in both podman lists */
	if (q->n < q->max)
		snprintf(q->ids[q->n], CGROUP_CONTAINER_ID_MAX, "%s", id);
	q->n++;
	return 0;
}

int container_state__ids(const char *state_root, const char *name,
			 char (*ids)[CGROUP_CONTAINER_ID_MAX], int max)
{
	struct by_name q = { .name = name, .ids = ids, .max = max };
	int err = container_state__each(state_root, by_name__visit, &q);

	return err ? err : q.n;
}

struct by_id {
	const char *id;
	char *name;
	size_t len;
	bool found;
};

static int by_id__visit(void *ctx, const char *runtime, const char *id, const char *name)
{
	struct by_id *q = ctx;

	(void)runtime;
	if (q->found || strcmp(id, q->id))
		return 0;
	snprintf(q->name, q->len, "%s", name);
	q->found = true;
	return 0;
}

bool container_state__name(const char *state_root, const char *id, char *name, size_t len)
{
	struct by_id q = { .id = id, .name = name, .len = len };

	return !container_state__each(state_root, by_id__visit, &q) && q.found;
}
