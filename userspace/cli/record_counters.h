/* SPDX-License-Identifier: MIT */
/*
 * A continuous recording's counters as per-segment deltas.
 *
 * The recorder's loss, problem and budget counters are running totals
 * (collector__counters, budget_monitor__counters,
 * processor__problem_counters).  The kernel's and the budget's are read as
 * each --segment boundary passes (a mark: record_counters__mark, then the
 * totals through record_counters__sink) and held until the segment ending
 * at that boundary is cut, which may be seconds later when processing lags
 * (record_counters__apply adds what they grew by since the last segment's
 * to the builder).  The processor's problems are counted as records are
 * processed, so they are read as the segment is cut
 * (record_counters__total).  Each segment so carries what accrued during
 * its span, and a killed recorder loses at most the segments not yet cut.
 * At stop the recording's final totals land in the builder as before
 * (COUNTER chunks, processor__finish, budget_monitor__finish);
 * record_counters__settle takes off what earlier segments carried, so the
 * last segment holds its own part and a directory's segments sum to the
 * recording's totals.  Counters never read here (peaks, lag, kunwind, the
 * budget's factors) stay whole-recording figures in the last segment.
 */
#ifndef MS_RECORD_COUNTERS_H
#define MS_RECORD_COUNTERS_H

#include <stdint.h>

#include "capture/capture.h"
#include "../stream/stream.h"

/* Marks held at most (a lag of this many segments); past it the oldest is
 * dropped and its growth goes to the segment of the next. */
#define RECORD_COUNTERS_MARKS_MAX 64

struct record_counters;

/* NULL on ENOMEM.  b: the builder the deltas go into. */
struct record_counters *record_counters__new(struct capture_builder *b);

/* Start a mark for the segment boundary at_ns (CLOCK_MONOTONIC): the
 * totals record_counters__sink receives until the next mark belong to it. */
void record_counters__mark(struct record_counters *l, uint64_t at_ns);

/* A COUNTER chunk ("name=value", a running total) into the current mark;
 * a stream_sink_fn for collector__counters and budget_monitor__counters.
 * Other chunks, malformed ones, and any before the first mark are ignored.
 * Returns 0. */
int record_counters__sink(void *ctx, const struct ms_chunk *chunk, const void *payload);

/* The segment ending at end_ns is about to be cut: add to the builder what
 * the totals of the newest mark at or before end_ns grew by since the ones
 * added last, and forget the marks up to it. */
void record_counters__apply(struct record_counters *l, uint64_t end_ns);

/* name's running total is now total: add its growth since the last call
 * to the builder at once (a callback for processor__problem_counters).  A
 * total below the last one (a counter that does not only grow) adds
 * nothing. */
void record_counters__total(void *ledger, const char *name, uint64_t total);

/* The builder now holds the final totals: subtract from each counter read
 * here what was already added for it.  Returns 0 or -ENOMEM. */
int record_counters__settle(struct record_counters *l);

/* Accepts NULL. */
void record_counters__free(struct record_counters *l);

#endif
