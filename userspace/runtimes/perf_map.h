/* SPDX-License-Identifier: MIT */
/*
 * Perf maps: /tmp/perf-PID.map, the text file a JIT compiler appends a line
 * "START SIZE NAME" (hex START and SIZE, 0x optional) to for each function
 * it makes (format: Linux tools/perf/Documentation/jit-interface.txt; V8
 * --perf-basic-prof, CPython -X perf, the JVM's perf-map-agent, .NET).
 *
 * The process writes the map while it is read, so a reader goes on from
 * where the last read stopped and takes only complete lines; at most
 * JIT_READ_MAX bytes per read.  The map is found through the process's own
 * root and under its own pid (innermost NSpid), so a container's map is
 * found, and opened without following symlinks out of that root.  A file
 * that is not a regular file owned by the process's user or root, or that
 * was made before the process began (an earlier process with the same pid
 * wrote it), is not read and the state says why.  Malformed lines are
 * counted (jit_funcs problems), never fatal.
 */
#ifndef MS_PERF_MAP_H
#define MS_PERF_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jit_funcs.h"
#include "jit_proc.h"

/* X(id, name, meaning): why a map is (not) being read. */
#define PERF_MAP_STATES(X)                                                                         \
	X(UNREAD, "unread", "no read tried yet")                                                   \
	X(ABSENT, "absent", "the process has no perf map")                                         \
	X(READING, "reading", "read")                                                              \
	X(STALE, "stale", "made before the process began: an earlier process with its pid wrote it") \
	X(NOT_OWNED, "not_owned", "not a regular file owned by the process's user or root")        \
	X(UNREADABLE, "unreadable", "could not be opened or read")

enum perf_map_state {
#define PERF_MAP_STATE_ENUM(id, name, text) PERF_MAP_##id,
	PERF_MAP_STATES(PERF_MAP_STATE_ENUM)
#undef PERF_MAP_STATE_ENUM
		PERF_MAP_STATE_COUNT
};

/* A state's name ("stale") and its meaning; NULL out of range. */
const char *perf_map_state__name(unsigned int state);
const char *perf_map_state__text(unsigned int state);

struct perf_map {
	uint64_t offset;	  /* bytes of the file consumed */
	uint64_t dev, ino;	  /* the file read (a new file restarts at 0) */
	uint64_t lines;		  /* lines read (well-formed or not) */
	uint64_t eof_ns;	  /* when a read last reached the end of the file */
	uint64_t since_ns;	  /* lines parsed now were written after this */
	uint32_t state;		  /* PERF_MAP_* */
	bool skipping;		  /* inside an over-long line: skip to its newline */
};

void perf_map__init(struct perf_map *m);

/*
 * Parse the complete lines of buf (len bytes, the file's bytes from
 * m->offset on) into f as functions read at read_ns (CLOCK_MONOTONIC); an
 * incomplete last line is left for the next call unless it is already
 * longer than JIT_LINE_MAX (then it is malformed and skipped up to its
 * newline).  Advances m->offset by the bytes consumed and returns them.
 * Functions are staged: jit_funcs__commit makes them live; they name
 * samples from m->since_ns on (a line past the end of the file at a read
 * was written after it, and a JIT writes a line before its code runs; 0:
 * any sample).  -ENOMEM is returned as a negative value.
 */
ssize_t perf_map__parse(struct perf_map *m, struct jit_funcs *f, const char *buf, size_t len,
			uint64_t read_ns);

/*
 * Read on the map of target t (jit_proc.h: its root, its own pid naming
 * the file, its uid and start time checking it) from where the last read
 * stopped: at most JIT_READ_MAX bytes, then commit.  read_ns: now
 * (CLOCK_MONOTONIC).  *added: functions made live by this read.  Returns 0
 * (also when the map is absent, stale or not owned: m->state says which)
 * or -ENOMEM.
 */
int perf_map__read(struct perf_map *m, struct jit_funcs *f, const struct jit_target *t,
		   uint64_t read_ns, uint32_t *added);

#endif
