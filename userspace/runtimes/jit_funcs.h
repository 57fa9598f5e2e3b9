/* SPDX-License-Identifier: MIT */
/*
 * The functions a process's JIT compiler described (perf map lines, jitdump
 * code loads): one table per process, filled by the readers (perf_map.h,
 * jitdump.h) and asked by the processor when a sample lands in anonymous
 * code.
 *
 * Invariants: the live functions are sorted by start and disjoint.  A
 * function is replaced by any later one (a later line or record) that
 * overlaps it, even in part: its code was rewritten.  Additions are staged
 * and take effect together at jit_funcs__commit, which keeps the work of a
 * read O(n log n) however the lines are ordered.  A mapping made over a
 * function read before the mapping was made ends it (jit_funcs__map).
 *
 * Time: samples are named long after they were taken when processing lags,
 * so each function names only the samples of the time its code can have
 * run, [since_ns, until_ns).  A line read at read_ns was written after the
 * read before it reached the end of the file (since_ns); a replaced
 * function moves to the history (old[]) and keeps naming samples before
 * its replacement.  Where the replacement happened between two reads, the
 * mappings the process made over the range then (jit_funcs.mapped, the
 * caller's log of them) say when: the k functions one read found for a
 * range go with the k mappings over it in that read's window, when there
 * are exactly that many; else the window is named by neither (a sample
 * there is unnamed, never misnamed) and the new function names samples
 * from its read on.  (A mapping made within one drain round of the read
 * may not be in the log yet: a count that matches by coincidence then
 * pairs wrongly.)  jitdump loads carry their own times: exact.
 *
 * Owns every function, name and line entry; pointers returned stay valid
 * until the next jit_funcs__commit, jit_funcs__map or jit_funcs__release.
 * Bounds: jit_policy.h; a bound reached is counted (JIT_PROBLEMS).
 */
#ifndef MS_JIT_FUNCS_H
#define MS_JIT_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Problems counted while reading; X(id, counter name, meaning). */
#define JIT_PROBLEMS(X)                                                                            \
	X(MALFORMED, "malformed", "perf map line that is not START SIZE NAME")                     \
	X(HUGE, "huge", "function whose size is 0, wraps or exceeds JIT_FUNC_SIZE_MAX")            \
	X(FUNCS_FULL, "funcs_full", "function dropped: JIT_FUNCS_MAX live functions")              \
	X(NAMES_FULL, "names_full", "function dropped: JIT_NAMES_MAX bytes of names")              \
	X(NO_CODE, "no_code", "function past JIT_CODE_MAX bytes of code: named, no frame proof")   \
	X(LINES_FULL, "lines_full", "source lines dropped: JIT_LINES_MAX entries")                  \
	X(BAD_HEADER, "bad_header", "jitdump header of wrong magic, version, size or pid")         \
	X(BAD_RECORD, "bad_record", "jitdump record too short, too long or inconsistent")          \
	X(UNKNOWN_RECORD, "unknown_record", "jitdump record of an unknown type (skipped)")          \
	X(MOVE_UNKNOWN, "move_unknown", "jitdump move of code never loaded")                       \
	X(DEBUG_UNUSED, "debug_unused", "jitdump debug info that no code load claimed")            \
	X(BAD_TEXT, "bad_text", "jitdump source file name that is not text (line kept, file left out)") \
	X(GDB_BAD, "gdb_bad", "GDB JIT descriptor, entry or object unreadable or malformed")      \
	X(STALE, "stale", "file made before its process began (an earlier process's; not read)")  \
	X(NOT_OWNED, "not_owned", "file not a regular file owned by the process's user or root")   \
	X(HISTORY_FULL, "history_full", "replaced function dropped: JIT_OLD_FUNCS_MAX kept (its samples unnamed)")

enum jit_problem {
#define JIT_PROBLEM_ENUM(id, name, text) JIT_PROBLEM_##id,
	JIT_PROBLEMS(JIT_PROBLEM_ENUM)
#undef JIT_PROBLEM_ENUM
		JIT_PROBLEM_COUNT
};

/* The counter name of a problem ("malformed"), or NULL out of range. */
const char *jit_problem__name(unsigned int problem);

#define JIT_FN_NO_CODE (1u << 0) /* past the code budget: no frame proof */
#define JIT_FN_ENDED (1u << 1)	 /* a mapping replaced its code */
#define JIT_FN_JITDUMP (1u << 2) /* from a jitdump code load (else a perf map line) */
#define JIT_FN_GDB (1u << 3)	 /* from an object registered through the GDB JIT interface */

struct jit_fn {
	uint64_t start, end; /* [start, end), process addresses */
	uint64_t seq;	     /* order of the line or record that made it */
	uint64_t read_ns;    /* CLOCK_MONOTONIC when its line was read */
	uint64_t since_ns;   /* load time (jitdump, samples' clock); 0: unknown */
	uint32_t name;	     /* offset of its NUL-terminated name in the names */
	uint32_t flags;	     /* JIT_FN_* */
	uint32_t lines;	     /* first source-line entry (jit_funcs__lines) */
	uint32_t nlines;     /* entries, sorted by address; 0: none */
	uint32_t object;     /* JIT_FN_GDB: its object (gdb_jit.h); else UINT32_MAX */
	uint32_t reserved;
	uint64_t until_ns;   /* replaced or unregistered: names samples before this; else 0 */
};

/* One source position (jitdump debug info): from addr on, until the next. */
struct jit_line {
	uint64_t addr;
	uint32_t line;
	uint32_t file; /* offset of the file name in the names */
};

/*
 * The caller's record of the process's mappings: how many executable
 * mappings it made over [start, end) at times in (after, upto], their times
 * ascending in times[0, min(count, max)) (the earliest).  Returns the count,
 * or -1 when that is not known (the record lost entries of that window).
 */
typedef int (*jit_mapped_fn)(void *ctx, uint64_t start, uint64_t end, uint64_t after,
			     uint64_t upto, uint64_t *times, uint32_t max);

struct jit_funcs {
	struct jit_fn *fns; /* live, sorted by start, disjoint */
	uint32_t n, cap;
	struct jit_fn *staged; /* added since the last commit, in order */
	uint32_t nstaged, staged_cap;
	char *names;
	size_t names_len, names_cap;
	struct jit_line *line_tab;
	uint32_t nline_tab, line_tab_cap;
	uint32_t pin; /* first line entry of the function being built; UINT32_MAX none */
	uint64_t next_seq;
	uint64_t code_bytes; /* code budget used (bytes) */
	uint64_t commits;    /* jit_funcs__commit calls (each costs the table's size) */
	uint64_t problems[JIT_PROBLEM_COUNT];
	/* replaced functions still naming samples before their until_ns */
	struct jit_fn *old;
	uint32_t nold, old_cap;
	uint64_t floor_ns; /* samples before this are not asked for: older history goes */
	jit_mapped_fn mapped; /* NULL: no record of mappings (windows stay unnamed) */
	void *mapped_ctx;
};

void jit_funcs__init(struct jit_funcs *f);
void jit_funcs__release(struct jit_funcs *f);

/* Count one problem. */
void jit_funcs__problem(struct jit_funcs *f, enum jit_problem problem);

/*
 * Stage the function [start, start + size) named name (len bytes, need not
 * be NUL-terminated; cut at JIT_NAME_MAX), read at read_ns (CLOCK_MONOTONIC)
 * and loaded at since_ns (0: unknown), flags JIT_FN_JITDUMP or 0.  Its
 * source lines are the entries added since jit_funcs__begin_lines, if that
 * was called (they must be sorted by address).  A size of 0, one that wraps
 * or one over JIT_FUNC_SIZE_MAX is counted (HUGE) and not staged.  Returns 0
 * (also when the function was refused and counted) or -ENOMEM.
 */
int jit_funcs__add(struct jit_funcs *f, uint64_t start, uint64_t size, const char *name,
		   size_t len, uint64_t read_ns, uint64_t since_ns, uint32_t flags);

/* jit_funcs__add for a function of GDB JIT object index object. */
int jit_funcs__add_object(struct jit_funcs *f, uint64_t start, uint64_t size, const char *name,
			  size_t len, uint64_t read_ns, uint32_t object);

/* The source-line entries added from now on belong to the next function
 * staged (they survive compaction until then). */
void jit_funcs__begin_lines(struct jit_funcs *f);

/*
 * Append a source-line entry for the function being built (file: len
 * bytes).  0, -ENOSPC when JIT_LINES_MAX or JIT_NAMES_MAX is reached
 * (counted), or -ENOMEM.
 */
int jit_funcs__add_line(struct jit_funcs *f, uint64_t addr, uint32_t line, const char *file,
			size_t len);

/*
 * Make the staged functions live: each replaces every function, live or
 * staged before it, that it overlaps.  Returns the number of staged
 * functions that survived (>= 0), or -ENOMEM (the table is then as before).
 */
int jit_funcs__commit(struct jit_funcs *f);

/*
 * A mapping [start, end) made at map_ns (the samples' clock, which is
 * CLOCK_MONOTONIC): ends every live function it overlaps whose line was
 * read before map_ns.  One read after the mapping may already describe the
 * new code, so a function read later is kept until a later line replaces
 * it.  A replaced function read before map_ns names no sample from map_ns
 * on.  Returns the number of functions ended or cut.
 */
uint32_t jit_funcs__map(struct jit_funcs *f, uint64_t start, uint64_t end, uint64_t map_ns);

/* End every live function of GDB JIT object index object: it was
 * unregistered after since_ns (the read before) and before read_ns; the
 * earliest mapping over a function's range in that window, after its own
 * read, is when it ended (else since_ns).  Returns the number ended. */
uint32_t jit_funcs__end_object(struct jit_funcs *f, uint32_t object, uint64_t since_ns,
			       uint64_t read_ns);

/*
 * The function covering addr for a sample at time_ns (0: any time), live
 * or replaced, whose time [since_ns, until_ns) holds time_ns; or NULL.
 */
const struct jit_fn *jit_funcs__find(const struct jit_funcs *f, uint64_t addr, uint64_t time_ns);

/* Does any function, live or replaced, cover addr (whatever the time)? */
bool jit_funcs__covers(const struct jit_funcs *f, uint64_t addr);

/* A function's name (never NULL). */
const char *jit_funcs__name(const struct jit_funcs *f, const struct jit_fn *fn);

/*
 * The source position of addr inside fn: 0 and *line / *file set, or
 * -ENOENT when fn has no entry at or before addr.
 */
int jit_funcs__line(const struct jit_funcs *f, const struct jit_fn *fn, uint64_t addr,
		    uint32_t *line, const char **file);

#endif
