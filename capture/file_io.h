/* SPDX-License-Identifier: MIT */
/*
 * Small file helpers for publishing outputs (captures, raw streams,
 * converted files) durably: every writer of the project uses these.
 */
#ifndef MS_CAPTURE_FILE_IO_H
#define MS_CAPTURE_FILE_IO_H

#include <stddef.h>

/* Write all len bytes of buf to fd, retrying short writes and EINTR.
 * Returns 0 or -errno. */
int file__write_all(int fd, const void *buf, size_t len);

/* fsync the directory holding path, so that a rename into it is durable.
 * File systems that cannot fsync a directory (EINVAL) count as success.
 * Returns 0 or -errno. */
int file__fsync_parent(const char *path);

#endif
