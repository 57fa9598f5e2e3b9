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
#include <linux/nsfs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroups.h"

int pid_ns__open(const char *proc_root, const char *ref, char *err, size_t errlen)
{
	char path[4096], *end;
	long pid = strtol(ref, &end, 10);
	int fd, type, e;

	if (*ref && !*end && pid > 0)
		snprintf(path, sizeof(path), "%s/%ld/ns/pid", proc_root, pid);
	else
		snprintf(path, sizeof(path), "%s", ref);
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
	char path[512], line[512];
	long ids[PID_NS_MAX_DEPTH + 2], v = -1;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/status", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		while (n < (int)(sizeof(ids) / sizeof(ids[0]))) {
			long x = strtol(p, &end, 10);

			if (end == p)
				break;
			ids[n++] = x;
			p = end;
		}
		break;
	}
	fclose(f);
	if (depth < n)
		v = ids[n - 1 - depth];
	return v;
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
