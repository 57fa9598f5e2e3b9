/* SPDX-License-Identifier: MIT */
/*
 * A process's own files, for the readers of perf maps and jitdump files:
 * the facts that name and date them (/proc/PID/status NSpid and Uid,
 * /proc/PID/stat starttime) and a safe open below the process's root.  The
 * process controls its root and its files, so opening never leaves that
 * root, never follows a final symlink and never blocks on a FIFO.
 */
#ifndef MS_JIT_PROC_H
#define MS_JIT_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Whose files to read, and how to check them. */
struct jit_target {
	pid_t pid;		/* in our pid namespace */
	pid_t ns_pid;		/* in its own: names its files */
	uid_t uid;		/* its files are owned by uid or root ... */
	bool any_owner;		/* ... unless its uid is not known (it exited) */
	bool own_root;		/* its root is ours (it exited; same namespaces) */
	uint64_t start_boot_ns; /* its start (CLOCK_BOOTTIME ns); 0 unknown */
};

/*
 * The target of live process pid, from /proc (own_root false).  0, or
 * -ESRCH when it is gone.
 */
int jit_target__live(pid_t pid, struct jit_target *t);

/*
 * Read n bytes at addr of live target t's memory (process_vm_readv).  0,
 * -EFAULT for a short or failed read, -ESRCH when t is not live (own_root:
 * it exited, its pid may be another's).
 */
int jit_target__read(const struct jit_target *t, uint64_t addr, void *buf, size_t n);

/* An O_PATH descriptor of t's root directory, or -errno. */
int jit_target__root(const struct jit_target *t);

/*
 * Check an open file of t: a regular file owned by t's uid or root (else
 * -EPERM; any owner when t->any_owner) and, when t->start_boot_ns is set,
 * made (birth time,
 * else last modification) no earlier than JIT_STALE_SLACK_NS before it
 * (else -ESTALE: an earlier process with the same pid made it).  The file's
 * identity goes to *dev / *ino (either may be NULL).  0 or -errno.
 */
int jit_file__check(int fd, const struct jit_target *t, uint64_t *dev, uint64_t *ino);

/*
 * Open path (relative, or absolute meaning inside the root) below the root
 * directory root_fd without leaving it (symlinks resolve inside it, magic
 * links refused), not following a final symlink and without blocking on a
 * FIFO; then jit_file__check it.  Returns the fd (O_CLOEXEC), or -errno
 * (-ENOENT: absent, -EPERM, -ESTALE as jit_file__check).
 */
int jit_file__open(int root_fd, const char *path, const struct jit_target *t, uint64_t *dev,
		   uint64_t *ino);


#endif
