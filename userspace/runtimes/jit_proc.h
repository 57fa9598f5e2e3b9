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

#include <stdint.h>
#include <sys/types.h>

/*
 * Check an open file: a regular file owned by uid or root (else -EPERM)
 * and, when start_boot_ns (CLOCK_BOOTTIME ns) is set, made (birth time,
 * else last modification) no earlier than JIT_STALE_SLACK_NS before it
 * (else -ESTALE: an earlier process with the same pid made it).  The file's
 * identity goes to *dev / *ino (either may be NULL).  0 or -errno.
 */
int jit_file__check(int fd, uid_t uid, uint64_t start_boot_ns, uint64_t *dev, uint64_t *ino);

/*
 * Open path (relative, or absolute meaning inside the root) below the root
 * directory root_fd without leaving it (symlinks resolve inside it, magic
 * links refused), not following a final symlink and without blocking on a
 * FIFO; then jit_file__check it.  Returns the fd (O_CLOEXEC), or -errno
 * (-ENOENT: absent, -EPERM, -ESTALE as jit_file__check).
 */
int jit_file__open(int root_fd, const char *path, uid_t uid, uint64_t start_boot_ns, uint64_t *dev,
		   uint64_t *ino);

/*
 * Facts about process pid from /proc: its innermost NSpid, real uid and
 * start time (CLOCK_BOOTTIME ns).  0 or -errno (-ESRCH: gone).
 */
int jit_proc__facts(pid_t pid, pid_t *ns_pid, uid_t *uid, uint64_t *start_boot_ns);

#endif
