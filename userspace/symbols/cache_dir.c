// SPDX-License-Identifier: MIT
/*
 * The rules every persistent cache of the symbolizer follows (the kernel
 * table's, kallsyms_cache.c; the debug images', debug_cache.c), in one
 * place: the directory is owned by the effective user and writable by no
 * one else; neither it nor a file in it is reached through a symbolic link
 * (O_NOFOLLOW on the last component, every file opened relative to the
 * checked directory's descriptor); a file is read only when it is a
 * regular file of the effective user with no group or other bits; files
 * are created 0600 and appear under their name only whole (rename of a
 * finished file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

int cache_dir__open(const char *path)
{
	char *copy = strdup(path), *slash, *last;
	const char *parent;
	struct stat st;
	int pfd = -1, fd = -1, err = 0;

	if (!copy)
		return -ENOMEM;
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	if (!slash) {
		parent = ".";
		last = copy;
	} else {
		*slash = '\0';
		parent = slash == copy ? "/" : copy;
		last = slash + 1;
	}
	if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) {
		err = -EINVAL;
		goto cleanup;
	}
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (mkdirat(pfd, last, 0700) && errno != EEXIST) {
		err = -errno;
		goto cleanup;
	}
	fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOTDIR ? -ELOOP : -errno; /* a symlink: O_NOFOLLOW */
		goto cleanup;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		err = -EPERM;
cleanup:
	if (err && fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	free(copy);
	return err ? err : fd;
}

int cache_dir__open_file(int dirfd, const char *name, int flags, struct stat *st)
{
	/* O_NONBLOCK: a FIFO planted under the name would block open until a
	 * writer came (the recording hung after its command ended); it opens
	 * at once and is refused below as not a regular file, and on a
	 * regular file the flag changes nothing */
	int fd = openat(dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode) || st->st_uid != geteuid() || (st->st_mode & 077)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

int cache_dir__tmpfile(int dirfd)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	return fd < 0 ? -errno : fd;
}

int cache_dir__publish(int dirfd, int fd, const char *name)
{
	char tmp[64], proc[64];
	int err = 0;

	if (fsync(fd))
		return -errno;
	snprintf(tmp, sizeof(tmp), ".publish.%d.tmp", (int)getpid());
	unlinkat(dirfd, tmp, 0); /* one left by a crashed run of this pid */
	if (linkat(fd, "", dirfd, tmp, AT_EMPTY_PATH)) {
		/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH: the /proc link then */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, proc, dirfd, tmp, AT_SYMLINK_FOLLOW))
			return -errno;
	}
	if (renameat(dirfd, tmp, dirfd, name)) {
		err = -errno;
		unlinkat(dirfd, tmp, 0);
	}
	return err;
}
