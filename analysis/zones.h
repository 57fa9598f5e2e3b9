/* SPDX-License-Identifier: MIT */
/*
 * Zones: time ranges a program marked with the probes SDK (zone begin and
 * end records, capture probe_records), paired into blocks, and per-site
 * statistics.  Pure and deterministic over a validated capture.
 *
 * Pairing does not assume that zones nest: records are taken per thread
 * and site in time order (ties by row), and an end closes the latest begin
 * of that site on that thread still open.  An end with none open is an
 * unmatched end; a begin still open after the thread's last record is an
 * unmatched begin (the recording ended, or its end was lost).  Neither is
 * stretched to an edge: they are counted, never made into blocks.  Zones
 * of different sites may cross (A begins, B begins, A ends, B ends).
 *
 * A record flagged CAPTURE_PROBE_F_AFTER_DROP (the SDK dropped some of its
 * thread's records just before it, ring full) closes nothing it cannot
 * vouch for: the thread's open begins are forgotten there (their ends may
 * be among the dropped, and a later end must not stretch them) and counted
 * as broken, as is the flagged record itself when it is an end with no
 * begin left.  So dropped records never make a zone longer than it was.
 */
#ifndef MS_ANALYSIS_ZONES_H
#define MS_ANALYSIS_ZONES_H

#include <stdint.h>

#include "capture/capture.h"

/* One paired zone: [start_ns, end_ns) of site on thread. */
struct analysis_zone {
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t site;	 /* -> capture probe_sites */
	uint32_t thread; /* -> capture threads */
	uint32_t depth;	 /* zones of any site still open on the thread when it began */
	uint32_t reserved;
};

/* Statistics of one site's zones (durations in ns); count 0: no zone. */
struct analysis_zone_stats {
	uint32_t site;
	uint64_t count;
	uint64_t total_ns, min_ns, max_ns;
	uint64_t mean_ns;   /* total / count, rounded down */
	uint64_t median_ns; /* nearest rank: the ceil(n / 2)-th shortest */
	uint64_t p99_ns;    /* nearest rank: the ceil(0.99 n)-th shortest */
	uint64_t unmatched_begins, unmatched_ends;
	uint64_t broken; /* begins and ends left unpaired by dropped records */
	uint64_t marks;	 /* MARK records of the site */
};

struct analysis_zones {
	struct analysis_zone *zones; /* by (start_ns, thread, site, end_ns) */
	uint32_t nzones;
	struct analysis_zone_stats *sites; /* one per capture probe site, by id */
	uint32_t nsites;
	uint64_t unmatched_begins, unmatched_ends, broken;
};

/* Pair every zone of c.  Returns 0 or -ENOMEM (z then holds nothing). */
int analysis_zones__init(struct analysis_zones *z, const struct capture *c);
/* Accepts a zeroed or released z. */
void analysis_zones__release(struct analysis_zones *z);

/*
 * The index of the first zone starting at or after until_ns (binary
 * search): zones [0, that) are the ones starting before it; a caller
 * wanting those that overlap [since_ns, until_ns) skips the ones ending at
 * or before since_ns.
 */
uint32_t analysis_zones__from(const struct analysis_zones *z, uint64_t until_ns);

#endif
