/* SPDX-License-Identifier: MIT */
/*
 * Private to py_procs.c and py_detect.c: the CPython tracker's state
 * (py_procs.c keeps the thread map and the polling; py_detect.c finds
 * the interpreter of a process and its layout).
 */
#ifndef MS_RUNTIMES_PY_PROCS_INTERNAL_H
#define MS_RUNTIMES_PY_PROCS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "py_layout.h"
#include "py_procs.h"

/* ELF files read for CPython (py_layout__read_elf), by identity: every new
 * Python process maps the same interpreter, and one still starting is
 * tried again and again before its libpython is mapped.  Under -a every
 * executable on the host is asked about once (py_tracker__runs_cpython),
 * so the cache holds a host's distinct executables, not only interpreters
 * (a linear search: compares, no system call). */
#define PY_ELF_CACHE 256

struct py_elf_result {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
	int err;
	uint32_t version;
	uint64_t runtime_vaddr, load_vaddr;
};

struct py_task {
	uint32_t tid;	 /* kernel tid */
	uint32_t ns_tid; /* innermost NSpid */
	uint64_t exits;	 /* py_exits count read before the thread list */
	uint64_t tstate; /* the state naming it, 0 none, 1 several */
};

struct py_proc {
	pid_t pid;
	bool active;	    /* layout written */
	bool failed;	    /* layout refused: not retried */
	uint64_t first_try; /* CLOCK_MONOTONIC ns of the first detection try, 0 before */
	bool slow;	    /* PY_FAST_NS passed since: tried every PY_RETRY_SLOW_NS */
	uint64_t next_try;
	struct py_layout layout;
	uint32_t *tids; /* tids written to py_threads at the last refresh */
	uint32_t ntids, tids_cap;
	uint64_t task_nlink; /* st_nlink of /proc/PID/task (2 + threads) at the last look */
	int task_fd;	     /* /proc/PID/task held open for fstat, or -1 */
	uint64_t next_full;  /* refresh at the next period from then on even if unchanged */
	uint64_t hot_until;  /* thread count changed: refresh every period until then */
	uint64_t seen;	     /* the poll pass that last found it in "targets" */
	uint64_t gone_ns;    /* when a pass first missed it (it exited), 0 while there */
};

struct py_tracker {
	int procs_fd, threads_fd, targets_fd, exits_fd;
	struct py_proc *procs;
	uint32_t nprocs, procs_cap;
	uint64_t last_refresh;
	uint64_t pass;	     /* poll passes over "targets" */
	uint32_t undetected; /* recorded processes still being tried (last poll) */
	uint64_t errors;
	char describe[512];
	struct py_task *tasks;
	uint32_t ntasks, tasks_cap;
	uint64_t self_pidns;
	uint64_t cpu_ns;	     /* thread CPU time spent in py_tracker__poll */
	uint64_t refreshes, skipped; /* thread map refreshes done, and left out as unchanged */
	const volatile uint64_t *targets_gen; /* changes with "targets"; NULL: walk each pass */
	uint64_t walked_gen;		      /* its value before the last walk */
	bool walked;
	uint64_t walks;			      /* passes that walked "targets" */
	const volatile uint64_t *threads_gen; /* changes with Python threads; NULL: stat each */
	volatile uint64_t *threads_written;   /* changed here after py_threads changes, or NULL */
	uint64_t threads_seen;		      /* its value at the last look */
	uint64_t threads_hot_until;	      /* look at thread counts until then */
	struct py_elf_result elf_cache[PY_ELF_CACHE];
	uint32_t elf_cached, elf_next; /* entries used, next to replace */
	uint32_t task_fds;	       /* py_proc.task_fd held */
	uint64_t elf_reads;	       /* ELF files read (cache misses) */
	int (*first)(void *ctx);       /* before the first process enters py_procs, or NULL */
	void *first_ctx;
	bool first_done; /* first returned 0 */
};

/*
 * Find the interpreter module in /proc/PID/maps and fill pp's layout
 * (written to py_procs when found).  0 when found; else -errno, pp->failed
 * set when it will not be tried again (py_detect.c).
 */
int py_proc__detect(struct py_tracker *t, struct py_proc *pp);

#endif
