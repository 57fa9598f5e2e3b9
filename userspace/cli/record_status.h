/* SPDX-License-Identifier: MIT */
/*
 * The one-line live status of `record` on a terminal:
 *	[ microscope: 3.2 s, 3120 samples, 0 lost, own CPU 2.1% ]
 * redrawn in place on stderr at most every RECORD_STATUS_PERIOD_MS, only
 * when stderr is a TTY and not -q, and erased before anything else is
 * printed at the end.  Reads clocks and getrusage; allocates nothing.
 */
#ifndef MS_CLI_RECORD_STATUS_H
#define MS_CLI_RECORD_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#define RECORD_STATUS_PERIOD_MS 250

struct record_status {
	bool on;	     /* stderr is a TTY and not quiet */
	bool drawn;	     /* a line is on screen */
	double t0, next;     /* CLOCK_MONOTONIC s: start, next redraw */
	double cpu0;	     /* own CPU s at start */
};

/* Start the clock; on only when enabled and stderr is a terminal. */
void record_status__init(struct record_status *st, bool enabled);
/* Redraw if due: samples so far and samples lost so far. */
void record_status__tick(struct record_status *st, uint64_t samples, uint64_t lost);
/* Erase the line (if drawn). */
void record_status__finish(struct record_status *st);

#endif
