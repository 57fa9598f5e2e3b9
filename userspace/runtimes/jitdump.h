/* SPDX-License-Identifier: MIT */
/*
 * jitdump files: jit-PID.dump, the binary log of code loads that
 * `perf inject --jit` reads (Linux tools/perf/Documentation/
 * jitdump-specification.txt; written by V8 --perf-prof, Java agents,
 * .NET).  A 40-byte header (magic "JiTD", version 1, its own size, ELF
 * machine, pid, timestamp, flags), then records of a 16-byte prefix (id,
 * total size, timestamp): JIT_CODE_LOAD (address, size, name, code bytes),
 * JIT_CODE_MOVE, JIT_CODE_DEBUG_INFO (source lines of the next load of that
 * address), JIT_CODE_CLOSE, JIT_CODE_UNWINDING_INFO (skipped).
 *
 * The writer announces the file by mapping it executable (the marker
 * mapping: a file mapping whose name is jit-PID.dump); the processor hands
 * that mapping to jitdump__read, which opens the very file mapped
 * (/proc/PID/map_files), else the path below the process's root.  Read on
 * from where the last read stopped, whole records only, at most
 * JIT_READ_MAX bytes a read.  Timestamps are CLOCK_MONOTONIC unless the
 * header's flags say otherwise; a load then names samples from its time on.
 * A header of the wrong magic, version or pid, or a record whose length
 * cannot be trusted, ends the file's reading (counted; the state says why).
 */
#ifndef MS_JITDUMP_H
#define MS_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jit_funcs.h"
#include "jit_proc.h"

#define JITDUMP_MAGIC 0x4A695444u /* "JiTD" as a native (little-endian) u32 */
#define JITDUMP_VERSION 1
#define JITDUMP_HEADER_SIZE 40
#define JITDUMP_HEADER_MAX 4096 /* a larger header's size field is not believed */
#define JITDUMP_RECORD_PREFIX 16
#define JITDUMP_FLAGS_ARCH_TIMESTAMP (1ull << 0)

enum jitdump_record {
	JIT_CODE_LOAD = 0,
	JIT_CODE_MOVE = 1,
	JIT_CODE_DEBUG_INFO = 2,
	JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};

/* X(id, name, meaning) */
#define JITDUMP_STATES(X)                                                                          \
	X(UNREAD, "unread", "no read tried yet")                                                   \
	X(READING, "reading", "read")                                                              \
	X(CLOSED, "closed", "read to its JIT_CODE_CLOSE record")                                   \
	X(BAD, "bad", "a bad header or a record of untrustworthy length ended its reading")        \
	X(FOREIGN, "foreign", "its header names another process")                                  \
	X(STALE, "stale", "made before the process began: an earlier process with its pid wrote it") \
	X(NOT_OWNED, "not_owned", "not a regular file owned by the process's user or root")        \
	X(UNREADABLE, "unreadable", "could not be opened or read")

enum jitdump_state {
#define JITDUMP_STATE_ENUM(id, name, text) JITDUMP_##id,
	JITDUMP_STATES(JITDUMP_STATE_ENUM)
#undef JITDUMP_STATE_ENUM
		JITDUMP_STATE_COUNT
};

const char *jitdump_state__name(unsigned int state);
const char *jitdump_state__text(unsigned int state);

struct jitdump {
	uint64_t offset; /* bytes of the file consumed */
	uint64_t dev, ino;
	uint64_t records; /* records read */
	uint32_t state;	  /* JITDUMP_* */
	uint32_t pid;	  /* the header's pid (0: not read yet) */
	bool header_read;
	bool arch_timestamp; /* timestamps not on the samples' clock: not used */
	uint8_t *debug;	     /* the last debug-info record's body, owned; NULL none */
	uint32_t debug_len;
	/* The file, kept open once found (fd valid when kept), so what the
	 * process wrote is read after it exits and its map_files are gone. */
	int fd;
	bool kept;
};

void jitdump__init(struct jitdump *d);
void jitdump__release(struct jitdump *d);

/* Does path (as a mapping names it) end in "jit-<digits>.dump"? */
bool jitdump__is_marker(const char *path);

/*
 * Parse the whole records of buf (len bytes, the file's bytes from
 * d->offset on) into f, read at read_ns.  expect_pid: the process's own pid
 * as its namespace sees it (0: not checked).  Advances d->offset and
 * returns the bytes consumed, or -ENOMEM.  Functions are staged
 * (jit_funcs__commit makes them live).
 */
ssize_t jitdump__parse(struct jitdump *d, struct jit_funcs *f, const uint8_t *buf, size_t len,
		       uint32_t expect_pid, uint64_t read_ns);

/*
 * Read on the jitdump file of target t (jit_proc.h) that its marker mapping
 * [start, end) maps (path: the mapping's file name): at most JIT_READ_MAX
 * bytes, then commit; *added: functions made live.  Returns 0 (d->state
 * says whether the file could be read) or -ENOMEM.
 */
int jitdump__read(struct jitdump *d, struct jit_funcs *f, const struct jit_target *t,
		  uint64_t start, uint64_t end, const char *path, uint64_t read_ns, uint32_t *added);

/*
 * The history of the kept file of d (jitdump__read found it): every code
 * load from its start, in file order, staged in h (an empty table, not
 * committed: no load replaces another; jit_funcs__add commits only past
 * JIT_FUNCS_MAX) with its load time and source lines.  Reads at most
 * JIT_HISTORY_READ_MAX bytes, whole records; d is not changed.  expect_pid:
 * as jitdump__parse.  Returns the loads staged (0 when d has no kept file
 * or its header is bad), or -ENOMEM.
 */
int jitdump__history(const struct jitdump *d, struct jit_funcs *h, uint32_t expect_pid,
		     uint64_t read_ns);

/* Loads of a history sorted by start, for jitdump__history_find. */
struct jit_history {
	const struct jit_funcs *h; /* borrowed */
	struct jit_fn *by_start;   /* owned copy of h->staged, sorted by start */
	uint32_t n;
	uint64_t max_size;	   /* the largest load's size */
	uint64_t cut;		   /* lookups that hit JIT_HISTORY_SCAN_MAX */
};

/* Index h's staged loads.  0 or -ENOMEM. */
int jit_history__init(struct jit_history *x, const struct jit_funcs *h);
void jit_history__release(struct jit_history *x);

/*
 * The load that named addr at every time of [first_ns, last_ns] (the
 * samples' clock): the latest load covering addr made at or before
 * first_ns, when no other load covering addr was made after it and at or
 * before last_ns (else the name changed in between: NULL).  NULL too when
 * none covers addr then, or after JIT_HISTORY_SCAN_MAX loads examined
 * (counted in x->cut).  A load of unknown time (0) counts as made before
 * every sample.
 */
const struct jit_fn *jit_history__find(struct jit_history *x, uint64_t addr, uint64_t first_ns,
				       uint64_t last_ns);

#endif
