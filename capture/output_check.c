// SPDX-License-Identifier: MIT
/* Can a capture be published at a path?  Checked before recording starts. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_check.h"

int capture__check_output(const char *path, char *msg, size_t msglen)
{
	char *resolved = NULL, *copy = NULL, *tmp = NULL;
	const char *dir;
	struct stat st;
	int fd, err = 0;

	msg[0] = '\0';
	if (!path || !*path) {
		snprintf(msg, msglen, "empty output path");
		return -EINVAL;
	}
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(msg, msglen, "output %s is a directory", path);
			return -EISDIR;
		}
		if (S_ISFIFO(st.st_mode))
			return 0; /* written through; opening it would wait for a reader */
		if (!S_ISREG(st.st_mode)) {
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd < 0) {
				err = -errno;
				snprintf(msg, msglen, "cannot open %s for writing: %s", path,
					 strerror(errno));
				return err;
			}
			close(fd);
			return 0;
		}
		/* The writer replaces a symlink's target. */
		resolved = realpath(path, NULL);
		if (resolved)
			path = resolved;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			int flags = 0;

			if (!ioctl(fd, FS_IOC_GETFLAGS, &flags) &&
			    (flags & (FS_IMMUTABLE_FL | FS_APPEND_FL))) {
				err = -EPERM;
				snprintf(msg, msglen, "cannot replace %s: it is %s (chattr)", path,
					 flags & FS_IMMUTABLE_FL ? "immutable" : "append-only");
			}
			close(fd);
			if (err)
				goto cleanup;
		}
	}
	copy = strdup(path);
	if (!copy || asprintf(&tmp, "%s.tmp.%d", path, (int)getpid()) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		snprintf(msg, msglen, "out of memory");
		goto cleanup;
	}
	dir = dirname(copy);
	unlink(tmp); /* a leftover of an earlier process with our pid, as the writer does */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		if (errno == ENOENT && access(dir, F_OK))
			snprintf(msg, msglen, "cannot write %s: directory %s does not exist", path,
				 dir);
		else
			snprintf(msg, msglen, "cannot create a file in %s (to write %s): %s", dir,
				 path, errno == ENOENT ? "files cannot be created there" :
				 strerror(errno));
		goto cleanup;
	}
	close(fd);
	unlink(tmp);
cleanup:
	free(tmp);
	free(copy);
	free(resolved);
	return err;
}
