/* SPDX-License-Identifier: MIT */
/*
 * record -a with the probes SDK: which processes the collector looks in
 * (collector__probe_process).  A process is looked in when it maps a file
 * named *microscope_probes* (the SDK's shared library, also what Python's
 * ctypes module loads): running ones from the /proc snapshot's MMAP2
 * records at start, later ones from their MMAP2 records; a program
 * linking the static library by its executable's symbol (at start and at
 * each exec); a child forked without exec (it maps nothing new) from its
 * fork record, when its parent is looked in.  Pids are queued (at most
 * RECORD_PROBES_PENDING, and as many forks; more are counted,
 * probes.candidate_queue_full) and handed over between drain rounds,
 * never from inside the drain that delivered them.
 */
#ifndef MS_CLI_RECORD_PROBES_H
#define MS_CLI_RECORD_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../collector/collector.h"
#include "../stream/perf_records.h"
#include "../stream/stream.h"

#define RECORD_PROBES_PENDING 64
/* Executables whose answer is kept (a host's distinct executables; the
 * oldest is replaced; a linear search: compares, no system call). */
#define RECORD_PROBES_EXE_CACHE 256

struct record_probes_exe {
	uint64_t dev, ino, size;
	int64_t mtime_sec, mtime_nsec;
	bool has; /* defines microscope_probes_control */
};

struct record_probes {
	struct perf_sample_id_layout sideband; /* MS_SIDEBAND_SAMPLE_TYPE */
	pid_t pending[RECORD_PROBES_PENDING];
	uint32_t npending;
	/* children forked by a process looked in: child, parent */
	pid_t forks[RECORD_PROBES_PENDING][2];
	uint32_t nforks;
	uint64_t dropped; /* pids not queued: the queue was full */
	struct record_probes_exe exes[RECORD_PROBES_EXE_CACHE];
	uint32_t nexes, next_exe;
	uint64_t exe_reads;	     /* ELF files read (cache misses) */
	uint64_t exe_reads_at_start; /* of them, for the snapshot's processes */
	uint64_t exe_cpu_ns;	     /* thread CPU time spent looking at executables */
	uint64_t by_exe;	     /* processes queued for their executable */
};

void record_probes__init(struct record_probes *rp);
/* A drained chunk: queue the pid of an MMAP2 of a *microscope_probes*
 * file, or of a snapshot process or an exec (COMM with
 * PERF_RECORD_MISC_COMM_EXEC) whose executable defines the control block,
 * or of a FORK of a new process whose parent is queued or looked in by col
 * (read only; NULL before the collector exists). */
void record_probes__chunk(struct record_probes *rp, const struct collector *col,
			  const struct ms_chunk *c, const void *payload);
/* The queued pids to the collector.  Returns 0 or -errno. */
int record_probes__flush(struct record_probes *rp, struct collector *col);

#endif
