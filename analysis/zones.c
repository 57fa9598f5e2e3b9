// SPDX-License-Identifier: MIT
/*
 * Zone pairing and statistics (zones.h).  One sort of the record indexes
 * by (thread, time, row), then one pass per thread with a stack of open
 * begins per site (an open begin remembers its site; an end searches the
 * thread's open stack from the top for its site, so crossing zones pair
 * with their own).  Durations per site are then sorted for the ranks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "zones.h"

static int rec_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct capture *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_probe_record *x = &c->probe_records[a], *y = &c->probe_records[b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

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

static int zones__stats(struct analysis_zones *z)
{
	uint64_t *d = malloc(((size_t)z->nzones + 1) * sizeof(*d));
	uint32_t *order = malloc(((size_t)z->nzones + 1) * sizeof(*order));
	uint32_t *start = calloc((size_t)z->nsites + 1, sizeof(*start));
	int err = -ENOMEM;

	if (!d || !order || !start)
		goto cleanup;
	/* zones grouped by site (counting sort, keeping z->zones' order) */
	for (uint32_t i = 0; i < z->nzones; i++)
		start[z->zones[i].site + 1]++;
	for (uint32_t s = 0; s < z->nsites; s++)
		start[s + 1] += start[s];
	for (uint32_t i = 0; i < z->nzones; i++)
		order[start[z->zones[i].site]++] = i;
	for (uint32_t s = 0, at = 0; s < z->nsites; s++) {
		struct analysis_zone_stats *st = &z->sites[s];
		uint64_t n = 0;

		for (; at < z->nzones && z->zones[order[at]].site == s; at++) {
			const struct analysis_zone *zn = &z->zones[order[at]];

			d[n++] = zn->end_ns - zn->start_ns;
		}
		st->count = n;
		if (!n)
			continue;
		qsort(d, n, sizeof(*d), u64_cmp);
		for (uint64_t i = 0; i < n; i++)
			st->total_ns += d[i];
		st->min_ns = d[0];
		st->max_ns = d[n - 1];
		st->mean_ns = st->total_ns / n;
		st->median_ns = rank(d, n, 50);
		st->p99_ns = rank(d, n, 99);
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
	uint32_t n = c->nprobe_records, *idx = NULL, *open = NULL, *depth = NULL, nopen = 0;
	int err = -ENOMEM;

	memset(z, 0, sizeof(*z));
	z->nsites = c->nprobe_sites;
	z->sites = calloc((size_t)z->nsites + 1, sizeof(*z->sites));
	idx = malloc(((size_t)n + 1) * sizeof(*idx));
	open = malloc(((size_t)n + 1) * sizeof(*open)); /* open begins of the thread, oldest first */
	depth = malloc(((size_t)n + 1) * sizeof(*depth)); /* open[k]'s depth when it began */
	z->zones = malloc(((size_t)n / 2 + 1) * sizeof(*z->zones));
	if (!z->sites || !idx || !open || !depth || !z->zones)
		goto cleanup;
	for (uint32_t s = 0; s < z->nsites; s++)
		z->sites[s].site = s;
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof(*idx), rec_cmp, (void *)c);
	for (uint32_t i = 0; i < n; i++) {
		const struct capture_probe_record *r = &c->probe_records[idx[i]];
		struct analysis_zone_stats *st = &z->sites[r->site];

		if (i && c->probe_records[idx[i - 1]].thread != r->thread) {
			/* the previous thread's begins never ended */
			for (uint32_t k = 0; k < nopen; k++)
				z->sites[c->probe_records[open[k]].site].unmatched_begins++;
			nopen = 0;
		}
		if (r->flags & CAPTURE_PROBE_F_AFTER_DROP) {
			/* records of this thread were dropped just before */
			for (uint32_t k = 0; k < nopen; k++)
				z->sites[c->probe_records[open[k]].site].broken++;
			nopen = 0;
			if (r->kind == CAPTURE_PROBE_ZONE_END) {
				st->broken++;
				continue;
			}
		}
		if (r->kind == CAPTURE_PROBE_MARK) {
			st->marks++;
		} else if (r->kind == CAPTURE_PROBE_ZONE_BEGIN) {
			depth[nopen] = nopen;
			open[nopen++] = idx[i];
		} else {
			uint32_t k = nopen;

			while (k && c->probe_records[open[k - 1]].site != r->site)
				k--;
			if (!k) {
				st->unmatched_ends++;
				continue;
			}
			z->zones[z->nzones++] = (struct analysis_zone){
				.start_ns = c->probe_records[open[k - 1]].time_ns,
				.end_ns = r->time_ns,
				.site = r->site,
				.thread = r->thread,
				.depth = depth[k - 1],
			};
			memmove(&open[k - 1], &open[k], (nopen - k) * sizeof(*open));
			memmove(&depth[k - 1], &depth[k], (nopen - k) * sizeof(*depth));
			nopen--;
		}
	}
	for (uint32_t k = 0; k < nopen; k++)
		z->sites[c->probe_records[open[k]].site].unmatched_begins++;
	qsort(z->zones, z->nzones, sizeof(*z->zones), zone_cmp);
	for (uint32_t s = 0; s < z->nsites; s++) {
		z->unmatched_begins += z->sites[s].unmatched_begins;
		z->unmatched_ends += z->sites[s].unmatched_ends;
		z->broken += z->sites[s].broken;
	}
	err = zones__stats(z);
cleanup:
	free(idx);
	free(open);
	free(depth);
	if (err)
		analysis_zones__release(z);
	return err;
}

void analysis_zones__release(struct analysis_zones *z)
{
	free(z->zones);
	free(z->sites);
	memset(z, 0, sizeof(*z));
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
