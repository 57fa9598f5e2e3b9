/* SPDX-License-Identifier: MIT */
/*
 * Zones: time ranges a program marked with the probes SDK (zone begin and
 * end records, capture probe_records), paired into blocks, and per-site
 * statistics.  Pure and deterministic over a validated capture.
 *
 * Pairing is the capture's one rule (capture/probe_pairs.h): zones need
 * not nest; unmatched begins and ends, and those a thread's dropped records
 * broke, are counted, never stretched to an edge or made into blocks.
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

/* A record no zone holds: an unmatched begin or end, or a mark. */
struct analysis_zone_loose {
	uint64_t time_ns;
	uint64_t value;	 /* a mark's value; 0 otherwise */
	uint32_t site;	 /* -> capture probe_sites */
	uint32_t thread; /* -> capture threads */
	uint32_t kind;	 /* CAPTURE_PROBE_ZONE_BEGIN (never ended), _END (none open), _MARK */
	uint32_t broken; /* 1: a begin or end left unpaired by dropped records
			  * (counted as broken, not as unmatched) */
};

struct analysis_zones {
	struct analysis_zone *zones; /* by (start_ns, thread, site, end_ns) */
	uint32_t nzones;
	struct analysis_zone_loose *loose; /* by (time_ns, thread, site, kind) */
	uint32_t nloose;
	struct analysis_zone_stats *sites; /* one per capture probe site, by id: all zones */
	uint32_t nsites;
	uint64_t unmatched_begins, unmatched_ends, broken;
};

/* Pair every zone of c.  Returns 0 or -ENOMEM (z then holds nothing). */
int analysis_zones__init(struct analysis_zones *z, const struct capture *c);
/* Accepts a zeroed or released z. */
void analysis_zones__release(struct analysis_zones *z);
/* The heap bytes z holds (a cache's budget). */
size_t analysis_zones__bytes(const struct analysis_zones *z);

/*
 * What analysis_zones__stats counts.  The window [start_ns, end_ns) (end_ns
 * 0: no end) clips zones, as perf --time clips samples: a zone overlapping
 * it counts once, with only its part inside the window as its duration (a
 * 10 ms zone of which 4 ms lie in the window counts 4 ms); loose records
 * (unmatched and broken begins and ends, marks) count when their time is in the
 * window.  threads, when not NULL, has one byte per capture thread: only
 * the records of threads with a nonzero byte count.
 */
struct analysis_zone_filter {
	uint64_t start_ns, end_ns;
	const uint8_t *threads;
};

struct analysis_zone_totals {
	uint64_t zones;	  /* zones counted */
	uint64_t clipped; /* of them, cut by an edge of the window */
	uint64_t unmatched_begins, unmatched_ends, marks;
	uint64_t broken; /* begins and ends left unpaired by dropped records */
};

/*
 * Per-site statistics of the zones and loose records f keeps (f NULL: all)
 * into sites[z->nsites] (by site id) and *totals.  Returns 0 or -ENOMEM.
 */
int analysis_zones__stats(const struct analysis_zones *z, const struct analysis_zone_filter *f,
			  struct analysis_zone_stats *sites, struct analysis_zone_totals *totals);

/*
 * The index of the first zone starting at or after until_ns (binary
 * search): zones [0, that) are the ones starting before it; a caller
 * wanting those that overlap [since_ns, until_ns) skips the ones ending at
 * or before since_ns.
 */
uint32_t analysis_zones__from(const struct analysis_zones *z, uint64_t until_ns);
/* The index of the first loose record at or after since_ns (binary search). */
uint32_t analysis_zones__loose_from(const struct analysis_zones *z, uint64_t since_ns);

#endif
