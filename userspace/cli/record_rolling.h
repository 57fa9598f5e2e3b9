/* SPDX-License-Identifier: MIT */
/*
 * The two long-running shapes of a recording (record --continuous and
 * record --window), both driven from the drain loop of record_session.c
 * over the processor's builder:
 *
 *   continuous  every --segment, what the processor appended moves into a
 *               new complete segment of DIR (capture/segment_writer.h);
 *               retention runs after each
 *   window      every slice (a second, or less for a short window), what
 *               the processor appended moves into an in-memory slice with
 *               only the rows it needs; slices older than --window are
 *               freed, so memory follows the window; a snapshot merges the
 *               slices of the last --window into window-START-END.msc
 *
 * In both, the processor's builder loses its samples, intervals and
 * counters at each move; then the processor compacts its dictionaries to
 * the rows still needed (processor__compact), so memory follows the
 * segment or window and the live processes, not the length of the run.
 */
#ifndef MS_RECORD_ROLLING_H
#define MS_RECORD_ROLLING_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"
#include "../options/record_options.h"

struct record_rolling;

/* NULL in *out (and 0) when o asks for neither mode.  release_lag_ns: how
 * far behind now the processor may still hold records (its max lag); a
 * segment ends that far behind the tick that cuts it, so its samples are
 * all there.  -errno with a message printed (a locked or unusable
 * directory). */
int record_rolling__open(const struct record_options *o, uint64_t release_lag_ns,
			 struct record_rolling **out);

/* When sampling starts (now_ns CLOCK_MONOTONIC), where --duration counts
 * from (duration_ns, 0 without one): the first segment or slice starts
 * here, and the cell reaching the duration's end is the last.  Without it
 * the first tick starts the grid.  Accepts NULL. */
void record_rolling__begin(struct record_rolling *r, uint64_t now_ns, uint64_t duration_ns);

/* At each drain round: cut a segment or a slice when due.  now_ns is
 * CLOCK_MONOTONIC; released_ns: every record before it is in b
 * (processor__released_until; UINT64_MAX in window mode) -- a segment is
 * cut only once it reaches the segment's end.  Returns 1 when it cut one (the caller then compacts
 * the processor's state: processor__compact), 0 when none was due, or
 * -errno (message printed). */
int record_rolling__tick(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns,
			 uint64_t released_ns);

struct record_counters;

/* Continuous: the ledger of per-segment counter deltas
 * (record_counters.h): applied before each segment is cut, settled before
 * the last.  Ignored in window mode. */
void record_rolling__set_counters(struct record_rolling *r, struct record_counters *l);

/* Continuous, with a ledger: true once per --segment boundary passed by
 * now_ns, with that boundary in *at_ns -- read the running counters into
 * a record_counters__mark(at_ns) then.  False otherwise (and for NULL). */
bool record_rolling__mark_due(struct record_rolling *r, uint64_t now_ns, uint64_t *at_ns);

/* Whether record_rolling__tick at now_ns, released_ns would cut a segment
 * or slice. */
bool record_rolling__due(const struct record_rolling *r, uint64_t now_ns, uint64_t released_ns);

/* Window mode: write the --window up to now_ns to a new
 * window-START-END.msc beside -o -- at once when processing has released
 * everything before now_ns (released_ns, processor__released_until), else
 * from a later record_rolling__tick once it has, or after at most 5 s with
 * meta window.behind_ns saying how much of the window's end processing had
 * not reached (a warning on stderr).  A snapshot asked for while one waits
 * is that one.  Returns 0 or -errno (message printed). */
int record_rolling__snapshot(struct record_rolling *r, struct capture_builder *b,
			     uint64_t now_ns, uint64_t released_ns);

/* After processor__finish: the last segments, or the last window to -o
 * (meta window.samples_total = total_samples).  What the release lag held
 * back is cut on the same --segment grid as the ticks', so every segment
 * is at most --segment long (the last one ends at its last sample).
 * Returns 0 or -errno. */
int record_rolling__finish(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns,
			   uint64_t total_samples);

/* Accepts NULL. */
void record_rolling__free(struct record_rolling *r);

#endif
