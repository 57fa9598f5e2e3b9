// SPDX-License-Identifier: MIT
/*
 * record -p PID --pid-ns NS (cgroups.h): a pid as a container's own pid
 * namespace shows it, translated to the pid the host sees, from evidence
 * only.  A process is in NS at depth d when NS is its own pid namespace
 * (d = 0) or the namespace NS_GET_PARENT reaches after d steps (namespaces
 * nest); its pid there is then the (d+1)-th last entry of the NSpid line of
 * /proc/PID/status (outermost first, proc(5)).  Numbers are never assumed
 * equal across namespaces.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"

/* NSpid entries of pid's status, outermost first, into ids (room for
 * NSPID_MAX): their number (1 in the initial pid namespace), or -1. */
#define NSPID_MAX (PID_NS_MAX_DEPTH + 2)
static int nspid_read(const char *proc_root, const char *pid, long ids[NSPID_MAX])
{
	char path[512], line[512];
	int n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/status", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		n = 0;
		while (n < NSPID_MAX) {
			long x = strtol(p, &end, 10);

			if (end == p || x < 0)
				break;
			ids[n++] = x;
			p = end;
		}
		break;
	}
	fclose(f);
	return n;
}

/* Entries of pid's NSpid line (1 in the initial pid namespace), or -1. */
static int nspid_levels(const char *proc_root, const char *pid)
{
	long ids[NSPID_MAX];

	return nspid_read(proc_root, pid, ids);
}

/*
 * The pid namespace of the processes of container cgroup cg (relative to
 * the v2 root), see pid_ns__open: the host pid of a process in it, in
 * *pid.  Returns 0, -ESRCH or -EINVAL with a message in err.
 */
static int container__ns_pid(const char *proc_root, const char *ref, const char *cg, long *pid,
			     char *err, size_t errlen)
{
	char path[512], rel[CGROUP_PATH_MAX];
	size_t cglen = strlen(cg), seen = 0;
	struct stat self = { 0 }, st, best = { 0 };
	int best_levels = 0, ret = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/self/ns/pid", proc_root);
	if (stat(path, &self))
		memset(&self, 0, sizeof(self));
	d = opendir(proc_root);
	if (!d) {
		ret = -errno;
		snprintf(err, errlen, "--pid-ns %s: cannot list %s: %s", ref, proc_root,
			 strerror(-ret));
		return ret;
	}
	while ((de = readdir(d)) && seen++ < CGROUP_PROC_MAX) {
		char *end;
		long p = strtol(de->d_name, &end, 10);
		int levels;

		if (*end || p <= 0 || p > INT_MAX)
			continue;
		if (cgroup__of_pid(proc_root, (int)p, rel, sizeof(rel)) || strncmp(rel, cg, cglen) ||
		    (rel[cglen] && rel[cglen] != '/'))
			continue;
		snprintf(path, sizeof(path), "%s/%ld/ns/pid", proc_root, p);
		if (stat(path, &st) || (st.st_dev == self.st_dev && st.st_ino == self.st_ino))
			continue; /* gone, or the runtime's own process in our namespace */
		levels = nspid_levels(proc_root, de->d_name);
		if (levels < 1 || (best_levels && levels > best_levels))
			continue;
		if (best_levels == levels && (st.st_dev != best.st_dev || st.st_ino != best.st_ino)) {
			ret = -EINVAL; /* two unrelated namespaces at one level */
			continue;
		}
		if (levels < best_levels)
			ret = 0;
		best = st;
		best_levels = levels;
		*pid = p;
	}
	closedir(d);
	if (!best_levels) {
		snprintf(err, errlen,
			 "--pid-ns %s: container %s has no process in a pid namespace of its own",
			 ref, cg);
		return -ESRCH;
	}
	if (ret)
		snprintf(err, errlen,
			 "--pid-ns %s: the processes of container %s are in several unrelated pid "
			 "namespaces; give one of them as a host pid",
			 ref, cg);
	return ret;
}

/* --pid-ns REF as a container: a host pid in its pid namespace, in *pid. */
static int container__resolve(const char *proc_root, const char *state_root, const char *ref,
			      long *pid, char *err, size_t errlen)
{
	static char paths[16][CGROUP_PATH_MAX];
	char names[768];
	int n = cgroup_containers__find(proc_root, state_root, ref, paths, NULL, 16);

	if (n < 0) {
		snprintf(err, errlen, "--pid-ns %s: cannot read %s: %s", ref, proc_root,
			 strerror(-n));
		return n;
	}
	if (n == 1)
		return container__ns_pid(proc_root, ref, paths[0], pid, err, errlen);
	if (n > 1) {
		size_t used = 0;

		names[0] = '\0';
		for (int i = 0; i < n && i < 16 && used < sizeof(names); i++)
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 i ? ", " : "", paths[i]);
		snprintf(err, errlen, "--pid-ns %s matches %d containers: %s; give more of its id",
			 ref, n, names);
		return -E2BIG;
	}
	cgroup_containers__describe(proc_root, state_root, names, sizeof(names));
	snprintf(err, errlen,
		 "--pid-ns %s: not a host pid, and no running container matches it (by id, "
		 "short id of at least %d hex digits, or name, as --container); running "
		 "containers: %s",
		 ref, CGROUP_ID_PREFIX_MIN, names);
	return -ENOENT;
}

int pid_ns__open(const char *proc_root, const char *state_root, const char *ref, char *err,
		 size_t errlen)
{
	char path[4096], *end;
	long pid = strtol(ref, &end, 10);
	int fd, type, e;

	if (*ref && !*end && pid > 0 && pid <= PID_NS_PID_MAX) {
		snprintf(path, sizeof(path), "%s/%ld/ns/pid", proc_root, pid);
	} else if (strchr(ref, '/')) {
		snprintf(path, sizeof(path), "%s", ref);
	} else {
		e = container__resolve(proc_root, state_root, ref, &pid, err, errlen);
		if (e)
			return e;
		snprintf(path, sizeof(path), "%s/%ld/ns/pid", proc_root, pid);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "--pid-ns %s: cannot open %s: %s", ref, path, strerror(e));
		return -e;
	}
	type = ioctl(fd, NS_GET_NSTYPE);
	if (type != CLONE_NEWPID) {
		snprintf(err, errlen, "--pid-ns %s: %s is not a pid namespace", ref, path);
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Steps from pid's own pid namespace up to (dev, ino), or -1. */
static int ns_depth(const char *proc_root, const char *pid, dev_t dev, ino_t ino)
{
	char path[512];
	struct stat st;
	int fd, depth = -1;

	snprintf(path, sizeof(path), "%s/%s/ns/pid", proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	for (int d = 0; fd >= 0 && d <= PID_NS_MAX_DEPTH; d++) {
		int parent;

		if (fstat(fd, &st))
			break;
		if (st.st_dev == dev && st.st_ino == ino) {
			depth = d;
			break;
		}
		parent = ioctl(fd, NS_GET_PARENT); /* EPERM above our own namespace */
		close(fd);
		fd = parent;
	}
	if (fd >= 0)
		close(fd);
	return depth;
}

/* The NSpid entry depth steps from the innermost of pid's status, or -1. */
static long nspid_at(const char *proc_root, const char *pid, int depth)
{
	long ids[NSPID_MAX];
	int n = nspid_read(proc_root, pid, ids);

	return depth >= 0 && depth < n ? ids[n - 1 - depth] : -1;
}

int pid_ns__host_pid(const char *proc_root, int ns_fd, pid_t ns_pid, pid_t *host, char *err,
		     size_t errlen)
{
	struct stat st;
	struct dirent *de;
	size_t seen = 0;
	int found = 0;
	DIR *d;

	if (fstat(ns_fd, &st))
		return -errno;
	d = opendir(proc_root);
	if (!d) {
		int e = errno;

		snprintf(err, errlen, "cannot list %s: %s", proc_root, strerror(e));
		return -e;
	}
	while ((de = readdir(d)) && seen++ < CGROUP_PROC_MAX) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		int depth;

		if (*end || pid <= 0)
			continue;
		depth = ns_depth(proc_root, de->d_name, st.st_dev, st.st_ino);
		if (depth < 0 || nspid_at(proc_root, de->d_name, depth) != ns_pid)
			continue;
		if (found++) /* pids are unique in a namespace: the evidence disagrees */
			break;
		*host = (pid_t)pid;
	}
	closedir(d);
	if (found == 1)
		return 0;
	if (found)
		snprintf(err, errlen, "pid %d in that pid namespace names several processes",
			 (int)ns_pid);
	else
		snprintf(err, errlen, "no process %d in that pid namespace", (int)ns_pid);
	return found ? -EINVAL : -ESRCH;
}
