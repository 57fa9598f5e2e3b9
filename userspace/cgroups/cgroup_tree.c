// SPDX-License-Identifier: MIT
/*
 * The cgroup v2 tree: where it is mounted, ids of its directories, walks,
 * and the processes' cgroups from /proc (cgroups.h).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"

/* Longest line read from mountinfo or /proc/PID/cgroup; longer lines are skipped. */
#define LINE_MAX_BYTES (CGROUP_PATH_MAX + 512)

/* Copy s into out[len]; -ENAMETOOLONG if it does not fit. */
static int copy_str(char *out, size_t len, const char *s)
{
	size_t n = strlen(s);

	if (n + 1 > len)
		return -ENAMETOOLONG;
	memcpy(out, s, n + 1);
	return 0;
}

/* Undo mountinfo's octal escapes (\040 for a space, proc_pid_mountinfo(5)) in place. */
static void unescape_octal(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/*
 * mountinfo lines: "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPER"
 * (proc_pid_mountinfo(5)).  The first cgroup2 mount wins.
 */
int cgroup_root__find(const char *mountinfo, char *root, size_t len)
{
	char line[LINE_MAX_BYTES];
	FILE *f = fopen(mountinfo, "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok, *mnt = NULL, *dash;
		int field = 0;

		if (!strchr(line, '\n') && !feof(f)) { /* over-long: skip the rest */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		dash = strstr(line, " - ");
		if (!dash)
			continue;
		if (strncmp(dash + 3, "cgroup2 ", 8))
			continue;
		*dash = '\0';
		for (tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			if (++field == 5) {
				mnt = tok;
				break;
			}
		if (!mnt)
			continue;
		unescape_octal(mnt);
		err = copy_str(root, len, mnt);
		break;
	}
	fclose(f);
	return err;
}

int cgroup__id(const char *dir, uint64_t *id)
{
	struct stat st;

	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	*id = (uint64_t)st.st_ino;
	return 0;
}

int cgroup__resolve(const char *root, const char *arg, char *rel, size_t len, uint64_t *id)
{
	char want[PATH_MAX], real[PATH_MAX], real_root[PATH_MAX];
	size_t rn;
	int fd, n, err;

	if (!realpath(root, real_root))
		return -errno;
	rn = strlen(real_root);
	/* An absolute path inside the tree as given; anything else is relative to the root. */
	if (arg[0] == '/' && !strncmp(arg, real_root, rn) && (arg[rn] == '/' || !arg[rn]))
		n = snprintf(want, sizeof(want), "%s", arg);
	else if (arg[0] == '/' && !strncmp(arg, root, strlen(root)) &&
		 (arg[strlen(root)] == '/' || !arg[strlen(root)]))
		n = snprintf(want, sizeof(want), "%s", arg);
	else if (arg[0] == '/' && !access(arg, F_OK) && strcmp(arg, "/"))
		return -EXDEV; /* an existing path outside the tree, e.g. a v1 hierarchy */
	else
		n = snprintf(want, sizeof(want), "%s/%s", real_root, arg + (arg[0] == '/'));
	if (n < 0 || (size_t)n >= sizeof(want))
		return -ENAMETOOLONG;
	fd = open(want, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	if (!realpath(want, real))
		return -errno;
	if (strncmp(real, real_root, rn) || (real[rn] != '/' && real[rn]))
		return -EXDEV;
	err = copy_str(rel, len, real[rn] ? real + rn : "/");
	if (err)
		return err;
	return cgroup__id(real, id);
}

struct walk {
	cgroup_visit_fn fn;
	void *ctx;
	char path[PATH_MAX];
	size_t root_len;
	unsigned dirs;
	bool truncated;
};

/* Visit w->path (of length n) and descend. */
static int walk__dir(struct walk *w, size_t n, int depth)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int err = 0;

	if (w->dirs >= CGROUP_TREE_MAX_DIRS) {
		w->truncated = true;
		return 0;
	}
	w->dirs++;
	if (stat(w->path, &st))
		return errno == ENOENT ? 0 : -errno; /* removed while walking */
	err = w->fn(w->ctx, (uint64_t)st.st_ino, n > w->root_len ? w->path + w->root_len : "/");
	if (err)
		return err;
	if (depth >= CGROUP_TREE_MAX_DEPTH) {
		w->truncated = true;
		return 0;
	}
	d = opendir(w->path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(d))) {
		size_t dn = strlen(de->d_name);

		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (n + 1 + dn + 1 > sizeof(w->path) || n + 1 + dn - w->root_len + 1 > CGROUP_PATH_MAX) {
			w->truncated = true;
			continue;
		}
		w->path[n] = '/';
		memcpy(w->path + n + 1, de->d_name, dn + 1);
		if (de->d_type == DT_UNKNOWN && (stat(w->path, &st) || !S_ISDIR(st.st_mode))) {
			w->path[n] = '\0';
			continue;
		}
		err = walk__dir(w, n + 1 + dn, depth + 1);
		w->path[n] = '\0';
	}
	closedir(d);
	return err;
}

int cgroup_tree__walk(const char *root, cgroup_visit_fn fn, void *ctx, bool *truncated)
{
	struct walk *w = calloc(1, sizeof(*w));
	size_t n = strlen(root);
	int err;

	if (!w)
		return -ENOMEM;
	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n + 1 > sizeof(w->path)) {
		free(w);
		return -ENAMETOOLONG;
	}
	memcpy(w->path, root, n);
	w->path[n] = '\0';
	w->root_len = n;
	w->fn = fn;
	w->ctx = ctx;
	err = walk__dir(w, n, 0);
	if (truncated)
		*truncated = w->truncated;
	free(w);
	return err;
}

int cgroup__of_pid(const char *proc_root, int pid, char *rel, size_t len)
{
	char path[PATH_MAX], line[LINE_MAX_BYTES];
	FILE *f;
	int err = -ENOENT;

	snprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n && line[n - 1] == '\n') {
			line[--n] = '\0';
		} else if (!feof(f)) { /* over-long: skip the rest */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		/* "hierarchy-ID:controller-list:cgroup-path"; v2 is "0::PATH" (cgroups(7)). */
		if (strncmp(line, "0::", 3) || line[3] != '/')
			continue;
		err = copy_str(rel, len, line + 3);
		break;
	}
	fclose(f);
	return err;
}

bool cgroup_query__short_prefix(const char *query)
{
	size_t q = strlen(query);

	if (!q || q >= CGROUP_ID_PREFIX_MIN)
		return false;
	for (size_t i = 0; i < q; i++)
		if (!isxdigit((unsigned char)query[i]))
			return false;
	return true;
}

/* query names container c: same id or name, a hex prefix of at least
 * CGROUP_ID_PREFIX_MIN digits, or one of the ids[n] its state files name
 * query; NULL names every container. */
static bool container__matches(const struct cgroup_container *c, const char *query,
			       char (*ids)[CGROUP_CONTAINER_ID_MAX], int n)
{
	size_t q;

	if (!query)
		return true;
	q = strlen(query);
	if (!strcmp(c->id, query))
		return true;
	for (int i = 0; i < n; i++)
		if (!strcmp(c->id, ids[i]))
			return true;
	if (q < CGROUP_ID_PREFIX_MIN || q > strlen(c->id))
		return false;
	for (size_t i = 0; i < q; i++)
		if (!isxdigit((unsigned char)query[i]))
			return false;
	return !strncasecmp(c->id, query, q);
}

int cgroup_containers__find(const char *proc_root, const char *state_root, const char *query,
			    char (*paths)[CGROUP_PATH_MAX], const char **runtimes, int max)
{
	char rel[CGROUP_PATH_MAX], ids[CONTAINER_NAME_IDS_MAX][CGROUP_CONTAINER_ID_MAX];
	struct cgroup_container c;
	struct dirent *de;
	unsigned seen = 0;
	int found = 0, nids = 0;
	DIR *d = opendir(proc_root);

	if (!d)
		return -errno;
	/* A docker or podman name: the ids it stands for (unreadable state: none). */
	if (query && state_root) {
		nids = container_state__ids(state_root, query, ids, CONTAINER_NAME_IDS_MAX);
		if (nids < 0)
			nids = 0;
		if (nids > CONTAINER_NAME_IDS_MAX)
			nids = CONTAINER_NAME_IDS_MAX;
	}
	while ((de = readdir(d)) && seen++ < CGROUP_PROC_MAX) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		bool dup = false;

		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		if (cgroup__of_pid(proc_root, (int)pid, rel, sizeof(rel)))
			continue; /* gone, or no v2 line */
		if (!cgroup_path__container(rel, &c) || !container__matches(&c, query, ids, nids))
			continue;
		rel[c.path_len] = '\0';
		for (int i = 0; i < found && i < max && !dup; i++)
			dup = !strcmp(paths[i], rel);
		if (dup)
			continue;
		if (found < max) {
			memcpy(paths[found], rel, c.path_len + 1);
			if (runtimes)
				runtimes[found] = c.runtime;
		}
		found++;
	}
	closedir(d);
	return found;
}

struct listed {
	struct cgroup_container c[CONTAINERS_LISTED_MAX];
	char name[CONTAINERS_LISTED_MAX][CGROUP_CONTAINER_ID_MAX];
	int n;
};

/* Name the listed containers (container_state_fn): one pass over the state files. */
static int listed__name(void *ctx, const char *runtime, const char *id, const char *name)
{
	struct listed *l = ctx;

	(void)runtime;
	for (int i = 0; i < l->n; i++)
		if (!l->name[i][0] && !strcmp(l->c[i].id, id))
			snprintf(l->name[i], sizeof(l->name[i]), "%s", name);
	return 0;
}

int cgroup_containers__describe(const char *proc_root, const char *state_root, char *buf,
				size_t len)
{
	static char paths[CONTAINERS_LISTED_MAX][CGROUP_PATH_MAX];
	static struct listed l;
	int n = cgroup_containers__find(proc_root, NULL, NULL, paths, NULL, CONTAINERS_LISTED_MAX);
	size_t used = 0;

	if (!len)
		return n;
	buf[0] = '\0';
	if (n < 0) {
		snprintf(buf, len, "unknown (cannot read %s: %s)", proc_root, strerror(-n));
		return n;
	}
	memset(&l, 0, sizeof(l));
	for (int i = 0; i < n && i < CONTAINERS_LISTED_MAX; i++)
		if (cgroup_path__container(paths[i], &l.c[l.n]))
			l.n++;
	if (state_root && l.n)
		(void)container_state__each(state_root, listed__name, &l);
	for (int i = 0; i < l.n && used < len; i++) {
		const struct cgroup_container *c = &l.c[i];
		/* ids shortened as report --by container shortens them */
		int idn = strlen(c->id) == 64 ? 12 : (int)strlen(c->id);

		if (l.name[i][0])
			used += (size_t)snprintf(buf + used, len - used, "%s%s (%s %.*s)",
						 used ? ", " : "", l.name[i], c->runtime, idn,
						 c->id);
		else
			used += (size_t)snprintf(buf + used, len - used, "%s%.*s (%s)",
						 used ? ", " : "", idn, c->id,
						 c->runtime ? c->runtime : "?");
	}
	if (n > CONTAINERS_LISTED_MAX && used < len)
		snprintf(buf + used, len - used, " and %d more", n - CONTAINERS_LISTED_MAX);
	else if (!n)
		snprintf(buf, len, "none");
	return n;
}
