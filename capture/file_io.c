// SPDX-License-Identifier: MIT
/* Durable-publication helpers (file_io.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_io.h"

int file__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int file__fsync_parent(const char *path)
{
	char *copy = strdup(path);
	int fd = -1, err;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* Some file systems cannot fsync a directory; the rename still happened. */
	err = fsync(fd) && errno != EINVAL ? -errno : 0;

cleanup:
	if (fd >= 0)
		close(fd);
	free(copy);
	return err;
}
