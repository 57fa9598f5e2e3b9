/* SPDX-License-Identifier: MIT */
/*
 * record -a with Python frames: which processes the CPython tracker is
 * given (record_session.c calls these).  A process runs CPython when
 *  - its comm starts with "python" (also found at exec, bpf/sampler.bpf.c
 *    handle_exec);
 *  - its executable holds an interpreter (a defined _PyRuntime symbol,
 *    py_tracker__runs_cpython): a python whose comm was changed
 *    (setproctitle, PR_SET_NAME: "gunicorn: worker"), one started through
 *    a link or script of another name, a program linking a static
 *    libpython.  Read through /proc/PID/exe (any mount namespace), one
 *    stat() per process for an executable seen before;
 *  - or it maps a libpython3.N shared library: an interpreter embedded in
 *    a program of another name (uwsgi, a C program linking libpython).
 * Running processes are looked at once, at start (record_python__scan);
 * while recording, a process is looked at from its exec's COMM record
 * (its executable, at once: a stat() and the cached answer, so a host's
 * thousands of execs never wait in the queue) and its libpython's MMAP2
 * record.
 *
 * Pids found in side-band records are queued (at most RECORD_PY_PENDING;
 * more are counted, python.candidate_queue_full) and added to the
 * collector between drain rounds, never from inside the drain that
 * delivered them.
 */
#ifndef MS_CLI_RECORD_PYTHON_H
#define MS_CLI_RECORD_PYTHON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../collector/collector.h"
#include "../runtimes/py_procs.h"
#include "../stream/perf_records.h"
#include "../stream/stream.h"

#define RECORD_PY_PENDING 256

struct record_python_pending {
	pid_t pid;
	bool by_exe; /* found by its executable (else by its libpython mapping) */
};

struct record_python {
	struct perf_sample_id_layout sideband; /* MS_SIDEBAND_SAMPLE_TYPE */
	struct record_python_pending pending[RECORD_PY_PENDING];
	uint32_t npending;
	uint64_t embedded; /* processes added for their libpython mapping */
	uint64_t by_exe;   /* processes added for their executable's _PyRuntime */
	uint64_t dropped;  /* pids not queued: the queue was full */
};

void record_python__init(struct record_python *rp);

/* Every running process that runs CPython into the collector's targets;
 * py (borrowed) answers for executables.  Returns 0 or -errno. */
int record_python__scan(struct record_python *rp, struct py_tracker *py, struct collector *col);

/* A drained chunk: queue the pid of an exec (COMM with
 * PERF_RECORD_MISC_COMM_EXEC) whose comm is not python* (the sampler
 * takes those itself) and whose executable py (borrowed) finds CPython in,
 * or of an executable libpython3 MMAP2. */
void record_python__chunk(struct record_python *rp, struct py_tracker *py,
			  const struct ms_chunk *c, const void *payload);

/* The queued pids into the collector's targets (a gone one is skipped).
 * Returns 0 or -errno. */
int record_python__flush(struct record_python *rp, struct collector *col);

/*
 * Will the command argv (NULL-terminated) run CPython (record_py_command.c)?
 * Its file is an interpreter (its _PyRuntime, or a libpython3 it needs), or
 * runs one first, followed up to 5 programs deep: a "#!" script's
 * interpreter (/usr/bin/env NAME looked up in PATH), a shell's -c string or
 * script file, whose commands' first programs are followed.  A guess for
 * loading the CPython walk before the command runs; never a proof.
 */
bool record_python__command(char *const *argv);

#endif
