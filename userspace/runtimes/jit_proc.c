// SPDX-License-Identifier: MIT
/*
 * A process's own files and facts (jit_proc.h).  openat2(2) with
 * RESOLVE_IN_ROOT keeps the walk inside the process's root; without it
 * (kernels before 5.6) only a path with no symlink component is opened
 * (RESOLVE_NO_SYMLINKS emulated by O_NOFOLLOW on the last component and a
 * refusal of any other: the caller then finds no map, never a wrong one).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "jit_policy.h"
#include "jit_proc.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int jit_file__check(int fd, const struct jit_target *t, uint64_t *dev, uint64_t *ino)
{
	uint64_t start_boot_ns = t->start_boot_ns;
	struct statx stx;
	uint64_t made_ns;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &stx))
		return -errno;
	if (!S_ISREG(stx.stx_mode) || (!t->any_owner && stx.stx_uid != t->uid && stx.stx_uid != 0))
		return -EPERM;
	if (dev)
		*dev = (uint64_t)stx.stx_dev_major << 32 | stx.stx_dev_minor;
	if (ino)
		*ino = stx.stx_ino;
	if (!start_boot_ns)
		return 0;
	if (stx.stx_mask & STATX_BTIME)
		made_ns = (uint64_t)stx.stx_btime.tv_sec * 1000000000ull + stx.stx_btime.tv_nsec;
	else
		made_ns = (uint64_t)stx.stx_mtime.tv_sec * 1000000000ull + stx.stx_mtime.tv_nsec;
	/* The process's start on the realtime clock the file times use. */
	uint64_t real = clock_ns(CLOCK_REALTIME), boot = clock_ns(CLOCK_BOOTTIME);
	uint64_t start_real = real - boot + start_boot_ns;

	if (made_ns + JIT_STALE_SLACK_NS < start_real)
		return -ESTALE;
	return 0;
}

int jit_file__open(int root_fd, const char *path, const struct jit_target *t, uint64_t *dev,
		   uint64_t *ino)
{
	struct open_how how = {
		.flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd, err;

	while (*path == '/')
		path++;
	fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS) {
		how.resolve = RESOLVE_NO_SYMLINKS;
		fd = openat(root_fd, path, (int)how.flags);
		/* Without openat2 a middle symlink could leave the root: only
		 * paths that hold none are opened (checked after the fact). */
		if (fd >= 0) {
			char link[64], real[4096];
			ssize_t n;

			snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
			n = readlink(link, real, sizeof(real) - 1);
			real[n > 0 ? n : 0] = '\0';
			if (n <= 0 || strlen(real) < strlen(path) ||
			    strcmp(real + strlen(real) - strlen(path), path)) {
				close(fd);
				return -EPERM;
			}
		}
	}
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	err = jit_file__check(fd, t, dev, ino);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int jit_target__read(const struct jit_target *t, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = {.iov_base = buf, .iov_len = n};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = n};
	ssize_t got;

	if (t->own_root)
		return -ESRCH;
	got = process_vm_readv(t->pid, &local, 1, &remote, 1, 0);
	if (got < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)got == n ? 0 : -EFAULT;
}

int jit_target__root(const struct jit_target *t)
{
	char root[64];
	int fd;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)t->pid);
	fd = open(t->own_root ? "/" : root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int jit_target__live(pid_t pid, struct jit_target *t)
{
	pid_t *ns_pid = &t->ns_pid;
	uid_t *uid = &t->uid;
	uint64_t *start_boot_ns = &t->start_boot_ns;
	char path[64], line[512], stat[1024];
	bool have_pid = false, have_uid = false;
	unsigned long long start = 0;
	FILE *fp;
	int err = -ESRCH;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *end;
			long v = 0;

			/* The last value is the pid in the innermost namespace. */
			for (;;) {
				long n = strtol(p, &end, 10);

				if (end == p)
					break;
				v = n;
				p = end;
			}
			*ns_pid = (pid_t)v;
			have_pid = v > 0;
		} else if (!strncmp(line, "Uid:", 4)) {
			*uid = (uid_t)strtoul(line + 4, NULL, 10);
			have_uid = true;
		}
	}
	fclose(fp);
	if (!have_pid || !have_uid)
		return -ESRCH;
	t->pid = pid;
	t->any_owner = false;
	t->own_root = false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fp = fopen(path, "re");
	if (!fp)
		return -ESRCH;
	if (fgets(stat, sizeof(stat), fp)) {
		/* Fields after "comm)": state is field 3, starttime field 22. */
		char *p = strrchr(stat, ')');

		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
				       "%*d %*d %*d %*d %llu",
				&start) == 1)
			err = 0;
	}
	fclose(fp);
	if (err)
		return err;
	long hz = sysconf(_SC_CLK_TCK);

	*start_boot_ns = start * (1000000000ull / (unsigned long long)(hz > 0 ? hz : 100));
	return 0;
}
