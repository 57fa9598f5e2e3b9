/* SPDX-License-Identifier: MIT */
/*
 * record -a with Python frames: which processes the CPython tracker is
 * given (record_session.c calls these).  A process runs CPython when its
 * comm starts with "python" (also found at exec, bpf/sampler.bpf.c
 * handle_exec) or when it maps a libpython3.N shared library: an
 * interpreter embedded in a program of another name (uwsgi, a C program
 * linking libpython), found in /proc/PID/maps at start and from its MMAP2
 * record while recording.
 *
 * Pids seen in MMAP2 records are queued (at most RECORD_PY_PENDING) and
 * added to the collector between drain rounds, never from inside the drain
 * that delivered them.
 */
#ifndef MS_CLI_RECORD_PYTHON_H
#define MS_CLI_RECORD_PYTHON_H

#include <stdint.h>
#include <sys/types.h>

#include "../collector/collector.h"
#include "../stream/perf_records.h"
#include "../stream/stream.h"

#define RECORD_PY_PENDING 256

struct record_python {
	struct perf_sample_id_layout sideband; /* MS_SIDEBAND_SAMPLE_TYPE */
	pid_t pending[RECORD_PY_PENDING];
	uint32_t npending;
	uint64_t embedded; /* processes added for their libpython mapping */
	uint64_t dropped;  /* pids not queued: the queue was full */
};

void record_python__init(struct record_python *rp);

/* Every running process that runs CPython into the collector's targets.
 * Returns 0 or -errno. */
int record_python__scan(struct record_python *rp, struct collector *col);

/* A drained chunk: queue the pid of an executable libpython3 MMAP2. */
void record_python__chunk(struct record_python *rp, const struct ms_chunk *c,
			  const void *payload);

/* The queued pids into the collector's targets (a gone one is skipped).
 * Returns 0 or -errno. */
int record_python__flush(struct record_python *rp, struct collector *col);

#endif
