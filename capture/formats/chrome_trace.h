/* SPDX-License-Identifier: MIT */
/*
 * The Chrome trace exporter's private state (chrome_trace.c writes,
 * chrome_trace_layout.c lays out): the items of every thread (samples and
 * off-CPU intervals) with the spans they are drawn over, and the walk's
 * scratch.  struct trace owns every array in it; chrome_trace__export
 * frees them on its one cleanup path.
 */
#ifndef MS_CAPTURE_FORMATS_CHROME_TRACE_H
#define MS_CAPTURE_FORMATS_CHROME_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/capture.h"

/* A sample within 1/TRACE_JITTER_DIV of the previous one's length of its end
 * (timer jitter, a delayed sample; either way) starts where it ends. */
#define TRACE_JITTER_DIV 2u
/* Frames shared by consecutive items of a thread stay one slice across a gap
 * up to this long. */
#define TRACE_BRIDGE_NS 100000000ull
/* Perfetto drops a slice nested this deep, with an error
 * (src/trace_processor/importers/common/slice_tracker.h kMaxDepth,
 * stat slice_max_depth_exceeded): deeper frames get no slice. */
#define TRACE_MAX_DEPTH 512u

/* An interval cut by the recording's start or end. */
#define TRACE_EDGE_FLAGS (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)

/* A sample or an interval of one thread, with the span it is drawn over. */
struct trace_item {
	uint64_t key;	 /* sort key: sample time_ns or interval start_ns */
	uint64_t start, end;
	uint32_t thread; /* CAPTURE_NONE sorts last */
	uint32_t id;	 /* sample or interval id */
	bool interval;
	bool clamped;	 /* an interval moved to start after an overlapping one */
	bool resumes;	 /* a preemption in the code of the sample before it */
	uint64_t rest;	 /* ns of a sample cut off by an interval, drawn after it */
};

/* An off-CPU leaf of "stackFrames": one per distinct (stack, name). */
struct trace_leaf {
	uint32_t stack;
	uint32_t interval; /* the first interval with it (its name) */
};

struct trace {
	const struct capture *c;
	uint32_t event;
	FILE *out;
	char **labels, **markers, **ivnames;
	uint32_t *ivleaf;	  /* per interval: its index in leaves */
	struct trace_leaf *leaves; /* distinct off-CPU leaves */
	uint32_t nleaves;
	struct trace_item *items;
	size_t nitems;
	uint64_t t0;
	bool timed, any_unknown;
	uint64_t trimmed, dropped, cut_short, clamped_ivs, edge_ivs, too_deep, continued;
	/* the walk */
	const char **path;
	uint32_t *path_frames, maxdepth;
	const char **open;  /* labels of the open slices, outermost first */
	size_t *open_slice; /* their index in ends[] */
	uint32_t nopen;
	uint64_t *ends; /* per slice, in opening order: its end (ns) */
	size_t nslices, slices_cap;
	uint64_t budget;
	uint8_t *probe_keep;   /* per probe record: 1 written (marks, paired zones) */
	uint64_t probes_left;  /* zone records left out, unmatched */
	size_t cut_item; /* the item where slices stopped, or SIZE_MAX */
	bool first_event;
};

/*
 * Collect t->c's samples and intervals into t->items (their names into
 * t->ivnames, to be allocated by the caller with nintervals entries), sort
 * them per thread and time, draw their spans (the rest of a sample cut by
 * an interval as one more item after it), set t->t0, t->timed, t->maxdepth
 * and the counts the notes tell, and intern the off-CPU leaves
 * (t->leaves, t->ivleaf).  Returns 0 or -ENOMEM.
 */
int trace__layout(struct trace *t);

/* The innermost frame of stack row stack that is neither kernel code nor a
 * truncation marker, or CAPTURE_NONE. */
uint32_t trace__blocking_frame(const struct capture *c, uint32_t stack);

#endif
