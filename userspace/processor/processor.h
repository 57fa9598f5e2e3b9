/* SPDX-License-Identifier: MIT */
/*
 * The processor turns the raw chunk stream (stream/stream.h) into capture
 * rows.  It validates every record as untrusted input (counted problems,
 * problems.h), orders records from all rings by time behind a watermark
 * based on drain rounds, tracks processes, threads and mappings as of each
 * record's time, builds kernel + user stacks, normalizes user addresses to
 * (module, ELF address) through the mapping active at the sample's time,
 * symbolizes immediately, and appends rows to a capture_builder.
 *
 * Ordering: records are held until a ROUND chunk arrives; at ROUND k (taken
 * at time T_k before drain k) every held record stamped before T_{k-1} is
 * released in (time, arrival) order.  An idle ring never stalls the stream.
 * END releases everything.
 *
 * Per-sample work reuses buffers; nothing is allocated per sample beyond the
 * amortized growth of tables.
 */
#ifndef MS_PROCESSOR_H
#define MS_PROCESSOR_H

#include <stdbool.h>

#include "../../capture/capture.h"
#include "../stream/stream.h"
#include "../symbols/symbols.h"

struct py_tracker;

struct processor;

/* b and s are borrowed and must outlive the processor.  NULL + errno on failure. */
struct processor *processor__new(struct capture_builder *b, struct symbolizer *s);

/* A stream_sink_fn: ctx is the struct processor *.  Returns 0 or -ENOMEM;
 * malformed input is counted, not returned. */
int processor__sink(void *ctx, const struct ms_chunk *chunk, const void *payload);

/* Release every held record, store counters and summary meta in the
 * builder.  Returns 0 or -errno. */
int processor__finish(struct processor *p);

/* Name interpreted frames with the layouts of tracker (borrowed; must
 * outlive the processor).  Without one, interpreted frames are unreadable. */
void processor__set_python(struct processor *p, const struct py_tracker *tracker);
/* Load what samples unwound in the kernel lacked (--call-graph dwarf-kernel)
 * into km's tables (borrowed; must outlive the processor).  Without one
 * such samples are still processed, nothing is loaded.  eager (targeted
 * recordings, -p and -- CMD; not -a): a process's table is written from
 * its live /proc/PID/maps as soon as a drained sample lacks it
 * (kunwind_live.c), not when that sample is processed in time order. */
struct kunwind_maps;
void processor__set_kunwind(struct processor *p, struct kunwind_maps *km, bool eager);
/* A running target (-p pid) of an eager recording: the rows of every module
 * it maps now are loaded at once, before its first sample asks. */
void processor__kunwind_prepare(struct processor *p, uint32_t pid);
/* The command of an eager recording (path: the file execvp will run,
 * absolute, without symbolic links): its rows are loaded before it runs. */
void processor__kunwind_prepare_command(struct processor *p, const char *path);
/* Symbolize deferred (true) or immediately, whatever the stream's meta
 * "symbolize" says (record --replay DIR --symbolize MODE).  Call before
 * the first chunk. */
void processor__force_symbolize(struct processor *p, bool deferred);
/* The recorded processes are live: the processor may read their own files
 * (perf maps, jitdump files) to name code with no file.  Off by default: a
 * replayed stream's pids name other processes, if any. */
void processor__read_processes(struct processor *p, bool live);

/*
 * Live recordings: spend at most budget_ns (CLOCK_MONOTONIC) releasing held
 * records at each ROUND chunk, so the recording loop returns to draining
 * (and to naming CPython code objects while their process lives) even when
 * the first samples of a large module are slow to symbolize.  Records older
 * than max_lag_ns before the newest round are released regardless, so what
 * is held stays bounded.  The order of released records is unchanged; a
 * record that arrives late is still counted as late only if a record after
 * it in time was released before it.  Not for replays (0 = no budget, the
 * default): their rounds then release exactly as recorded.
 */
void processor__set_round_budget(struct processor *p, uint64_t budget_ns, uint64_t max_lag_ns);

/*
 * Tests: hold every record back hold_ns (CLOCK_MONOTONIC) longer than the
 * watermark needs before releasing it, so processing runs that far behind
 * sampling, as it does on a loaded machine (record honours the environment
 * variable MICROSCOPE_TEST_LAG_MS).  0 (the default): none.
 */
void processor__set_hold_back(struct processor *p, uint64_t hold_ns);

/*
 * --duration: the capture holds what happened in [first ROUND, first ROUND +
 * window_ns]: later samples and off-CPU intervals are dropped, intervals
 * running past the end are cut there (END_UNKNOWN), and the recording ends
 * there (meta duration_ns) even when sampling halted later (a late timer
 * signal on a loaded machine).  Counted: duration.samples_dropped,
 * duration.offcpu_dropped, duration.offcpu_cut.  0 (the default): none.
 */
void processor__set_window(struct processor *p, uint64_t window_ns);

/* True when the round budget left records that could already be released
 * (the caller should come back soon rather than sleep). */
bool processor__behind(const struct processor *p);

/* Live recordings: every record drained so far with a time before this
 * (CLOCK_MONOTONIC ns) has been released into the builder -- the previous
 * round's time less any hold-back, or the oldest record still held.  A
 * record drained later may still be older (a starved drain). */
uint64_t processor__released_until(const struct processor *p);

/*
 * How far processing ran behind draining (live recordings): after each
 * round, the round's time minus the oldest due record still held (0 when
 * none).  Returns the largest so far (ns); *mean_ns (may be NULL) gets the
 * mean over rounds.  processor__finish stores both as the counters
 * processor.lag_max_ms and processor.lag_mean_ms.
 */
uint64_t processor__lag_ns(const struct processor *p, uint64_t *mean_ns);

/* Samples appended so far. */
uint64_t processor__samples(const struct processor *p);

/* The problem counters processor__finish writes (processor.*), as they
 * stand now (totals since start), each non-zero one to fn: a continuous
 * recording's per-segment deltas (cli/record_counters.h). */
void processor__problem_counters(const struct processor *p,
				 void (*fn)(void *ctx, const char *name, uint64_t total), void *ctx);

/*
 * Between segments or window slices of a long recording, after the
 * caller moved the builder's samples out (capture_builder__take): release
 * the state of processes and threads that exited, forget the cached
 * frame rows, and rebuild the builder with only the rows still needed
 * (userspace/processor/compact.c).  Ids the processor handed out before
 * are no longer valid.  Returns 0, or -ENOMEM (the builder is then
 * unchanged and recording may go on).
 */
int processor__compact(struct processor *p);

/*
 * Before a segment or window slice is cut: name the JIT frames still
 * waiting for their jitdump records (those processor__finish names at the
 * seal) from the files as they are now, so a segment does not keep them
 * unnamed when its process wrote the records meanwhile.  Returns 0, or
 * -ENOMEM (the frames stay unnamed; recording may go on).
 */
int processor__name_late(struct processor *p);

/* What the processor holds now, for tests and status: its tables' rows. */
struct processor_state {
	uint64_t processes, threads, modules, mappings; /* processor's own tables */
	uint64_t rows; /* builder rows: strings, modules, processes, threads,
			  mappings, frames, stacks, cgroups */
};
void processor__state(const struct processor *p, struct processor_state *out);

/* Accepts NULL. */
void processor__free(struct processor *p);

#endif
