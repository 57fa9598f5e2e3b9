/* SPDX-License-Identifier: MIT */
/*
 * File helpers every reader and writer of the project uses: publishing
 * outputs (captures, converted files, flame graphs) and reading untrusted
 * inputs with a bound.
 *
 * Publication rules (docs/capture-format.md, "Writing"):
 *   - an output is written to a temporary PATH.tmp.XXXXXX created with
 *     O_EXCL, mode 0600 whatever the umask, in PATH's directory; fsync'd,
 *     then renamed over PATH, then the directory is fsync'd, so a partial
 *     file never carries PATH's name;
 *   - a symbolic link at PATH is refused (-ELOOP): the tool never writes
 *     through a link to a file, so a link planted in /tmp cannot redirect
 *     an output (a link to a device, FIFO or socket, like /dev/stdout, is
 *     written through: no file is replaced);
 *   - an existing device or FIFO at PATH (-o /dev/null) is written through,
 *     opened with O_NOFOLLOW;
 *   - while a temporary exists, SIGINT, SIGTERM, SIGHUP and SIGPIPE remove
 *     it before the process dies (only where the signal's disposition was
 *     the default; a command that handles them, like record, finishes its
 *     write instead).
 */
#ifndef MS_CAPTURE_FILE_IO_H
#define MS_CAPTURE_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

/* Write all len bytes of buf to fd, retrying short writes and EINTR.
 * Returns 0 or -errno. */
int file__write_all(int fd, const void *buf, size_t len);

/* The error of a stdio write or flush that just failed: -errno as the
 * failing write(2) left it (-ENOSPC for a full file system, not a vague
 * -EIO), or -EIO when none is known.  Call it before anything else can
 * change errno. */
int file__stream_error(void);

/* fsync the directory holding path, so that a rename into it is durable.
 * File systems that cannot fsync a directory (EINVAL) count as success.
 * Returns 0 or -errno. */
int file__fsync_parent(const char *path);

/* An output being published (embedded; file_out__open initialises it). */
struct file_out {
	int fd;		 /* write here */
	char *path;	 /* the destination (owned copy) */
	char *tmp;	 /* the temporary (owned), NULL when written through */
	int slot;	 /* signal-cleanup registration, -1 if none */
	const char *step; /* the system call that failed, for messages */
};

/*
 * Start publishing at path under the rules above.  Returns 0 with o->fd
 * open for writing, or -errno (-ELOOP for a symlink, -EISDIR for a
 * directory) with "path: reason" in msg[msglen].  On failure nothing is
 * left to release.
 */
int file_out__open(struct file_out *o, const char *path, char *msg, size_t msglen);

/*
 * fsync, close and rename the temporary over o->path, fsync the directory
 * (a device or FIFO is just closed).  Releases o in every case; on failure
 * the temporary is removed and msg says which step failed.  Returns 0 or
 * -errno.
 */
int file_out__commit(struct file_out *o, char *msg, size_t msglen);

/*
 * A stdio stream over o's file (a duplicate of o->fd: fclose it before
 * file_out__commit).  NULL with errno set on failure.
 */
#include <stdio.h>
FILE *file_out__stream(struct file_out *o);

/* Abandon an output: close it and remove its temporary.  Accepts a
 * released or never-opened (zeroed, fd -1) o. */
void file_out__abort(struct file_out *o);

/*
 * Read an untrusted input into *buf (malloc'd, caller frees; one spare NUL
 * byte after *len): path, or standard input for "-", after the prefix
 * pre[npre] (bytes file__read_head already consumed from standard input;
 * NULL, 0 otherwise).  A regular file must hold at most max bytes (checked
 * before reading); a pipe, FIFO or socket is read until EOF or max bytes,
 * whichever is first; anything else (a device such as /dev/zero, a
 * directory) is refused with -EINVAL.  Returns 0, -EFBIG beyond max,
 * -EINVAL, or -errno, with "path: reason" in msg[msglen].
 */
int file__read_bounded(const char *path, uint64_t max, const void *pre, size_t npre, void **buf,
		       size_t *len, char *msg, size_t msglen);

/*
 * The first up to n bytes of path without reading further: *got bytes in
 * head.  A regular file is read with pread (returns 0: nothing consumed);
 * "-" reads standard input until n bytes or EOF (returns 1: the bytes are
 * consumed, pass them to file__read_bounded).  Another path that is not a
 * regular file gives -ESPIPE (read it whole with file__read_bounded).
 * Returns 0, 1 or -errno.
 */
int file__read_head(const char *path, void *head, size_t n, size_t *got);

#endif
