// SPDX-License-Identifier: MIT
/*
 * Zones and their statistics (zones.h) from the capture's one pairing
 * rule (capture/probe_pairs.h): paired begins become zones, every other
 * record a loose one.  Durations per site are then sorted for the ranks.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/probe_pairs.h"
#include "zones.h"

static int zone_cmp(const void *pa, const void *pb)
{
	const struct analysis_zone *a = pa, *b = pb;

	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->end_ns < b->end_ns ? -1 : a->end_ns > b->end_ns;
}

/* Loose records by time, thread, site: the order a window scan wants. */
static int loose_cmp(const void *pa, const void *pb)
{
	const struct analysis_zone_loose *a = pa, *b = pb;

	if (a->time_ns != b->time_ns)
		return a->time_ns < b->time_ns ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->broken < b->broken ? -1 : a->broken > b->broken;
}

/* Record row of c, which no zone holds, into z->loose (sized for every record). */
static void zones__add_loose(struct analysis_zones *z, const struct capture *c, uint32_t row,
			     uint32_t broken)
{
	const struct capture_probe_record *r = &c->probe_records[row];

	z->loose[z->nloose++] = (struct analysis_zone_loose){
		.time_ns = r->time_ns, .value = r->value, .site = r->site, .thread = r->thread,
		.kind = r->kind, .broken = broken,
	};
}

/* Give back what an array sized for every record does not use (kept on failure). */
static void zones__shrink(void **a, uint32_t n, size_t size)
{
	void *smaller = realloc(*a, ((size_t)n + 1) * size);

	if (smaller)
		*a = smaller;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* The ceil(q * n)-th shortest (1-based nearest rank) of sorted d[n], q in
 * hundredths. */
static uint64_t rank(const uint64_t *d, uint64_t n, uint64_t q)
{
	uint64_t r = (q * n + 99) / 100;

	return d[r ? r - 1 : 0];
}

static bool filter__keeps(const struct analysis_zone_filter *f, uint32_t thread)
{
	return !f->threads || f->threads[thread];
}

int analysis_zones__stats(const struct analysis_zones *z, const struct analysis_zone_filter *f,
			  struct analysis_zone_stats *sites, struct analysis_zone_totals *totals)
{
	static const struct analysis_zone_filter all;
	uint64_t *d = malloc(((size_t)z->nzones + 1) * sizeof(*d));
	uint32_t *order = malloc(((size_t)z->nzones + 1) * sizeof(*order));
	uint32_t *start = calloc((size_t)z->nsites + 1, sizeof(*start));
	uint64_t lo, hi;
	uint32_t nkept = 0, end;
	int err = -ENOMEM;

	if (!f)
		f = &all;
	lo = f->start_ns;
	hi = f->end_ns ? f->end_ns : UINT64_MAX;
	memset(totals, 0, sizeof(*totals));
	for (uint32_t s = 0; s < z->nsites; s++)
		sites[s] = (struct analysis_zone_stats){ .site = s };
	if (!d || !order || !start)
		goto cleanup;
	/* the zones kept (starting before the window's end, ending after its
	 * start), grouped by site (counting sort, keeping z->zones' order) */
	end = analysis_zones__from(z, hi);
	for (uint32_t i = 0; i < end; i++) {
		const struct analysis_zone *zn = &z->zones[i];

		if (zn->end_ns <= lo || !filter__keeps(f, zn->thread))
			continue;
		order[nkept++] = i;
		start[zn->site + 1]++;
	}
	for (uint32_t s = 0; s < z->nsites; s++)
		start[s + 1] += start[s];
	for (uint32_t k = 0; k < nkept; k++) {
		const struct analysis_zone *zn = &z->zones[order[k]];
		uint64_t a = zn->start_ns > lo ? zn->start_ns : lo;
		uint64_t b = zn->end_ns < hi ? zn->end_ns : hi;

		totals->clipped += a != zn->start_ns || b != zn->end_ns;
		d[start[zn->site]++] = b - a;
	}
	totals->zones = nkept;
	for (uint32_t s = 0, at = 0; s < z->nsites; s++) {
		struct analysis_zone_stats *st = &sites[s];
		uint64_t n = start[s] - at, *ds = d + at;

		at = start[s];
		st->count = n;
		if (!n)
			continue;
		qsort(ds, n, sizeof(*ds), u64_cmp);
		for (uint64_t i = 0; i < n; i++)
			st->total_ns += ds[i];
		st->min_ns = ds[0];
		st->max_ns = ds[n - 1];
		st->mean_ns = st->total_ns / n;
		st->median_ns = rank(ds, n, 50);
		st->p99_ns = rank(ds, n, 99);
	}
	for (uint32_t i = analysis_zones__loose_from(z, lo); i < z->nloose; i++) {
		const struct analysis_zone_loose *l = &z->loose[i];
		struct analysis_zone_stats *st = &sites[l->site];

		if (l->time_ns >= hi)
			break;
		if (!filter__keeps(f, l->thread))
			continue;
		if (l->broken)
			st->broken++, totals->broken++;
		else if (l->kind == CAPTURE_PROBE_MARK)
			st->marks++, totals->marks++;
		else if (l->kind == CAPTURE_PROBE_ZONE_BEGIN)
			st->unmatched_begins++, totals->unmatched_begins++;
		else
			st->unmatched_ends++, totals->unmatched_ends++;
	}
	err = 0;
cleanup:
	free(d);
	free(order);
	free(start);
	return err;
}

int analysis_zones__init(struct analysis_zones *z, const struct capture *c)
{
	struct capture_probe_pairs pp;
	struct analysis_zone_totals totals;
	uint32_t n = c->nprobe_records;
	int err = -ENOMEM;

	memset(z, 0, sizeof(*z));
	if (capture_probe_pairs__init(&pp, c))
		return -ENOMEM;
	z->nsites = c->nprobe_sites;
	z->sites = calloc((size_t)z->nsites + 1, sizeof(*z->sites));
	z->zones = malloc(((size_t)n / 2 + 1) * sizeof(*z->zones));
	z->loose = malloc(((size_t)n + 1) * sizeof(*z->loose));
	if (!z->sites || !z->zones || !z->loose)
		goto cleanup;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t row = pp.order[i];
		const struct capture_probe_record *r = &c->probe_records[row];

		if (pp.state[row] != CAPTURE_PAIR_ZONE) {
			zones__add_loose(z, c, row, pp.state[row] == CAPTURE_PAIR_BROKEN);
		} else if (r->kind == CAPTURE_PROBE_ZONE_BEGIN) {
			z->zones[z->nzones++] = (struct analysis_zone){
				.start_ns = r->time_ns,
				.end_ns = c->probe_records[pp.mate[row]].time_ns,
				.site = r->site,
				.thread = r->thread,
				.depth = pp.depth[row],
			};
		}
	}
	qsort(z->zones, z->nzones, sizeof(*z->zones), zone_cmp);
	qsort(z->loose, z->nloose, sizeof(*z->loose), loose_cmp);
	zones__shrink((void **)&z->zones, z->nzones, sizeof(*z->zones));
	zones__shrink((void **)&z->loose, z->nloose, sizeof(*z->loose));
	err = analysis_zones__stats(z, NULL, z->sites, &totals);
	z->unmatched_begins = totals.unmatched_begins;
	z->unmatched_ends = totals.unmatched_ends;
	z->broken = totals.broken;
cleanup:
	capture_probe_pairs__release(&pp);
	if (err)
		analysis_zones__release(z);
	return err;
}

void analysis_zones__release(struct analysis_zones *z)
{
	free(z->zones);
	free(z->loose);
	free(z->sites);
	memset(z, 0, sizeof(*z));
}

size_t analysis_zones__bytes(const struct analysis_zones *z)
{
	return (size_t)z->nzones * sizeof(*z->zones) + (size_t)z->nloose * sizeof(*z->loose) +
	       (size_t)z->nsites * sizeof(*z->sites);
}

uint32_t analysis_zones__from(const struct analysis_zones *z, uint64_t until_ns)
{
	uint32_t lo = 0, hi = z->nzones;

	/* the first zone starting at or after until_ns */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (z->zones[mid].start_ns < until_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t analysis_zones__loose_from(const struct analysis_zones *z, uint64_t since_ns)
{
	uint32_t lo = 0, hi = z->nloose;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (z->loose[mid].time_ns < since_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}
