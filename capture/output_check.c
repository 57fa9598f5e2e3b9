// SPDX-License-Identifier: MIT
/* Can a capture be published at a path?  Checked before recording starts. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_io.h"
#include "output_check.h"

int capture__check_output(const char *path, char *msg, size_t msglen)
{
	struct file_out o;
	struct stat st;
	int fd, err = 0;

	msg[0] = '\0';
	if (!path || !*path) {
		snprintf(msg, msglen, "empty output path");
		return -EINVAL;
	}
	if (!lstat(path, &st)) {
		struct stat target;

		if (S_ISLNK(st.st_mode) && !stat(path, &target) &&
		    (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode) ||
		     S_ISSOCK(target.st_mode)))
			return 0; /* -o /dev/stdout: written through (file_io.h) */
		if (S_ISLNK(st.st_mode)) {
			snprintf(msg, msglen,
				 "output %s is a symbolic link; refusing to write through it "
				 "(remove it or name its target)",
				 path);
			return -ELOOP;
		}
		if (S_ISDIR(st.st_mode)) {
			snprintf(msg, msglen, "output %s is a directory", path);
			return -EISDIR;
		}
		if (S_ISFIFO(st.st_mode))
			return 0; /* written through; opening it would wait for a reader */
		if (!S_ISREG(st.st_mode)) {
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
			if (fd < 0) {
				err = -errno;
				snprintf(msg, msglen, "cannot open %s for writing: %s", path,
					 strerror(errno));
				return err;
			}
			close(fd);
			return 0;
		}
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
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
				return err;
		}
	}
	/* the writer's temporary can be created (and is removed again) */
	err = file_out__open(&o, path, msg, msglen);
	if (err) {
		char why[512];

		snprintf(why, sizeof(why), "%s", msg);
		/* keep the historical wording: "cannot write PATH: ..." */
		snprintf(msg, msglen, "cannot write %s", why);
		return err;
	}
	file_out__abort(&o);
	return 0;
}
