/* SPDX-License-Identifier: MIT */
/* report --timeline: per-thread density lanes on stdout (report_timeline.c). */
#ifndef MS_CLI_REPORT_TIMELINE_H
#define MS_CLI_REPORT_TIMELINE_H

#include "analysis/analysis.h"

struct report_timeline {
	const struct analysis_names *names; /* keys for the top functions (folded) */
	const struct analysis_query *query; /* which samples name the functions */
	uint64_t origin_ns;		    /* the recording's start, for the scale */
	uint64_t start_ns, end_ns;	    /* the window drawn */
	uint32_t buckets;		    /* columns */
	uint32_t max_lanes;		    /* threads drawn, first by thread id */
};

/* Returns 0, -EINVAL (empty window) or -ENOMEM. */
int report_timeline__print(const struct report_timeline *t);

#endif
