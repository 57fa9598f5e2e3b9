/* SPDX-License-Identifier: MIT */
/*
 * The CPython tracker of a recording: finds the recorded processes that run
 * CPython, gives the BPF walker their layout ("py_procs" map: tgid ->
 * struct ms_py_layout) and refreshes the kernel tid -> PyThreadState map
 * ("py_threads") from each interpreter's thread list, and answers the
 * processor's questions about a process's layout while it names frames.
 *
 * Reads target memory only with process_vm_readv (no ptrace, no stop).  All
 * of it is untrusted: thread lists are walked within bounds, ids are
 * checked against /proc, and a state claimed by two threads is left out.
 */
#ifndef MS_PY_PROCS_H
#define MS_PY_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "py_layout.h"

struct py_tracker;

/* Refresh period of the thread map (ns). */
#define PY_REFRESH_NS (20ull * 1000 * 1000)

/*
 * procs_fd/threads_fd/targets_fd/exits_fd: the sampler's py_procs,
 * py_threads, targets and py_exits maps (borrowed).  NULL + errno on failure.
 */
struct py_tracker *py_tracker__new(int procs_fd, int threads_fd, int targets_fd, int exits_fd);
/* first(ctx) runs once, before the first CPython process enters "py_procs"
 * (the sampler loads its CPython walk then); a process it fails for (-errno)
 * gets no Python frames and first runs again for the next one. */
void py_tracker__on_first_process(struct py_tracker *t, int (*first)(void *ctx), void *ctx);

/*
 * Detect CPython in recorded processes not known yet and refresh the thread
 * map of the known ones, if PY_REFRESH_NS passed since the last refresh
 * (now_ns: CLOCK_MONOTONIC).  Returns the processes known to run CPython.
 */
int py_tracker__poll(struct py_tracker *t, uint64_t now_ns);

/*
 * CLOCK_MONOTONIC ns by which the tracker wants its next poll, or
 * UINT64_MAX when it can wait for whatever wakes the caller next (records,
 * a change of "targets" or of a CPython process's threads, or the caller's
 * own slow period, which the full refresh and slow detection retries
 * ride on): a process being detected (its next fast try, at most one per
 * PY_REFRESH_NS), or thread counts to look at after a thread started or
 * exited (every PY_REFRESH_NS while hot).  Without py_tracker__watch's
 * threads_gen every period is due, as thread counts are polled.
 */
uint64_t py_tracker__due(const struct py_tracker *t);

/*
 * targets_gen (borrowed, may be NULL): a counter that changes whenever
 * "targets" changes (collector__targets_gen).  With it, a poll walks the
 * map only after a change, and otherwise visits the processes of the last
 * walk.  threads_gen (borrowed, may be NULL): one that changes whenever a
 * thread of a process in "py_procs" starts or exits
 * (collector__py_threads_gen).  With it, thread counts are looked at only
 * for PY_HOT_NS after a change; the full refresh each second stays.
 * threads_written (borrowed, may be NULL): a counter the tracker sets
 * non-zero here and changes after each change it makes to "py_threads"
 * (collector__py_threads_written), so the walker may remember a thread's
 * state across samples until then.
 */
void py_tracker__watch(struct py_tracker *t, const volatile uint64_t *targets_gen,
		       const volatile uint64_t *threads_gen, volatile uint64_t *threads_written);

/* The layout of process pid, or NULL when it is not known to run CPython. */
const struct py_layout *py_tracker__layout(const struct py_tracker *t, pid_t pid);

/* A one-line description of the first interpreter found ("3.11.7 at
 * /usr/lib/libpython3.11.so.1.0"), or NULL. */
const char *py_tracker__describe(const struct py_tracker *t);

/*
 * What the tracker cost: CPU time of the calling thread spent in
 * py_tracker__poll (ns), thread maps rewritten, and refreshes left out
 * because the process's thread count had not changed (a full refresh still
 * runs every second per process).
 */
void py_tracker__costs(const struct py_tracker *t, uint64_t *cpu_ns, uint64_t *refreshes,
		       uint64_t *skipped);

/* Polls that walked "targets" (the others found it unchanged). */
uint64_t py_tracker__walks(const struct py_tracker *t);

/* Interpreter ELF files read (the others were answered from the cache of
 * files already read, by device, inode, size and mtime). */
uint64_t py_tracker__elf_reads(const struct py_tracker *t);

/*
 * Does the ELF file at path hold a CPython 3 interpreter of a known
 * version (a defined _PyRuntime symbol in its dynamic or full symbol
 * table, py_layout__read_elf)?  That is the evidence for a python
 * executable whose comm was changed (setproctitle, PR_SET_NAME) and for a
 * program linking a static libpython.  path: any path open() takes;
 * "/proc/PID/exe" reads a process's executable in whatever mount
 * namespace it runs.  Answered from the tracker's cache of ELF files by
 * identity (device, inode, size, mtime): one stat() for a file seen
 * before.  Returns 1 (it does), 0 (it does not, or cannot be read), or
 * -ENOENT when path names no file (a kernel thread's or a zombie's
 * /proc/PID/exe).
 */
int py_tracker__runs_cpython(struct py_tracker *t, const char *path);

/* Counters: layout failures (messages go to stderr once per process). */
uint64_t py_tracker__errors(const struct py_tracker *t);

/* Accepts NULL. */
void py_tracker__free(struct py_tracker *t);

/*
 * Read n bytes at addr of process pid into buf with process_vm_readv.
 * Returns 0, or -EFAULT for a short or failed read (-ESRCH: no process).
 */
int py_mem__read(pid_t pid, uint64_t addr, void *buf, size_t n);

/*
 * Does file (a path as /proc/PID/maps shows it) look like a CPython
 * interpreter module: libpython3.N*.so*, or an executable named python3*?
 */
bool py_module__is_candidate(const char *path);

#endif
