/* SPDX-License-Identifier: MIT */
#ifndef MS_CAPTURE_OUTPUT_CHECK_H
#define MS_CAPTURE_OUTPUT_CHECK_H

#include <stddef.h>

/*
 * Check, before any work, that capture_builder__write(b, path) can publish
 * at path: path is not a directory; a device or FIFO standing there opens
 * for writing; otherwise a temporary file can be created (and is removed
 * again) in path's directory, as the atomic replace does, and an existing
 * regular file there is not immutable or append-only (FS_IOC_GETFLAGS,
 * include/uapi/linux/fs.h), which would make the rename fail.
 * Returns 0, or -errno with msg (msglen bytes) saying what failed, e.g.
 * "cannot create a file in /proc (for /proc/version): No such file or
 * directory"; msg does not repeat the program's prefix.
 */
int capture__check_output(const char *path, char *msg, size_t msglen);

#endif
