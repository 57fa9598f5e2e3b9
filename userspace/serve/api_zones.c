// SPDX-License-Identifier: MIT
/*
 * /api/zones: the zones a program marked with the probes SDK
 * (analysis/zones.h): every site's statistics over the query's window and
 * threads, and a page of the zones overlapping the window, by start.
 * thread=, process= and label= keep the zones of their threads (a label
 * term judges a thread as analysis/scope.h judges its probe records);
 * start= and end= clip the statistics' durations to the window, as
 * report --zones --since/--until does, while the page lists each zone
 * whole.  The pairing is the profile's, made once (serve_profile__zones);
 * each request only selects from it.  Times are ns from the profile's
 * origin; a zone that began before the origin (before the first sample)
 * has a negative start.
 */
#include <errno.h>
#include <stdlib.h>

#include "analysis/zones.h"
#include "api.h"

static json_t *i64(uint64_t t, uint64_t origin)
{
	return json_integer((json_int_t)(int64_t)(t - origin));
}

static json_t *site_json(const struct capture *c, const struct analysis_zone_stats *st)
{
	const struct capture_probe_site *ps = &c->probe_sites[st->site];

	return json_pack("{s:I,s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "id",
			 (json_int_t)st->site, "name", capture__string(c, ps->name), "pid",
			 (json_int_t)c->processes[ps->process].pid, "count", api__u64(st->count),
			 "total_ns", api__u64(st->total_ns), "min_ns", api__u64(st->min_ns),
			 "mean_ns", api__u64(st->mean_ns), "median_ns", api__u64(st->median_ns),
			 "p99_ns", api__u64(st->p99_ns), "max_ns", api__u64(st->max_ns),
			 "unmatched_begins", api__u64(st->unmatched_begins), "unmatched_ends",
			 api__u64(st->unmatched_ends), "broken", api__u64(st->broken), "marks",
			 api__u64(st->marks));
}

/*
 * The threads whose zones count: thread=, process= and the label= view's
 * (the threads its probe records keep).  NULL (no error) when all count.
 */
static uint8_t *zones__threads(const struct api_ctx *ctx, const struct capture *all, int *err)
{
	const struct serve_query *sq = ctx->sq;
	uint8_t *keep, *labelled = NULL;

	*err = 0;
	if (sq->thread == UINT32_MAX && sq->process == UINT32_MAX && !ctx->scope)
		return NULL;
	keep = calloc((size_t)all->nthreads + 1, 1);
	if (ctx->scope)
		labelled = calloc((size_t)all->nthreads + 1, 1);
	if (!keep || (ctx->scope && !labelled)) {
		free(keep);
		free(labelled);
		*err = -ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; ctx->scope && i < ctx->c->nprobe_records; i++)
		labelled[ctx->c->probe_records[i].thread] = 1;
	for (uint32_t t = 0; t < all->nthreads; t++)
		keep[t] = (sq->thread == UINT32_MAX || t == sq->thread) &&
			  (sq->process == UINT32_MAX || all->threads[t].process == sq->process) &&
			  (!labelled || labelled[t]);
	free(labelled);
	return keep;
}

/* The marks f keeps, by time: the first sq->limit, and how many in all. */
static int zones__marks(struct api_ctx *ctx, const struct analysis_zones *z,
			const struct analysis_zone_filter *f, json_t *out)
{
	const struct capture *c = ctx->p->capture;
	json_t *marks = json_array();
	uint64_t n = 0;

	if (api__set(out, "marks", marks))
		return -ENOMEM;
	for (uint32_t i = analysis_zones__loose_from(z, f->start_ns); i < z->nloose; i++) {
		const struct analysis_zone_loose *l = &z->loose[i];
		json_t *o;

		if (f->end_ns && l->time_ns >= f->end_ns)
			break;
		if (l->kind != CAPTURE_PROBE_MARK || (f->threads && !f->threads[l->thread]))
			continue;
		if (n++ >= ctx->sq->limit)
			continue;
		o = json_pack("{s:I,s:o,s:o,s:o}", "site", (json_int_t)l->site, "thread",
			      api__thread(c, l->thread), "time_ns", i64(l->time_ns, ctx->p->origin_ns),
			      "value", api__u64(l->value));
		if (!o || json_array_append_new(marks, o))
			return -ENOMEM;
	}
	return api__set(out, "marks_total", api__u64(n));
}

int api__zones(struct api_ctx *ctx, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	const struct capture *c = ctx->p->capture; /* every look's probe tables; ctx->c is label='s view */
	uint64_t origin = ctx->p->origin_ns, total = 0;
	struct analysis_zone_stats *st = NULL;
	struct analysis_zone_totals tot;
	struct analysis_zone_filter f = { 0 };
	struct analysis_zones mine = { 0 };
	const struct analysis_zones *zp;
	uint8_t *keep = NULL;
	json_t *sites, *zones;
	uint32_t end;
	int rc;

	keep = zones__threads(ctx, c, &rc);
	if (rc)
		return rc;
	zp = serve_profile__zones(ctx->p, &mine, &rc);
	if (!zp)
		goto cleanup;
	rc = -ENOMEM;
	/* start= unset lets zones begun before the origin count whole */
	f.start_ns = sq->start_ns ? ctx->q.start_ns : 0;
	f.end_ns = ctx->q.end_ns;
	f.threads = keep;
	st = calloc((size_t)zp->nsites + 1, sizeof(*st));
	if (!st || analysis_zones__stats(zp, &f, st, &tot))
		goto cleanup;
	sites = json_array();
	zones = json_array();
	if (api__set(out, "sites", sites) || api__set(out, "zones", zones) ||
	    api__set(out, "unmatched_begins", api__u64(tot.unmatched_begins)) ||
	    api__set(out, "unmatched_ends", api__u64(tot.unmatched_ends)) ||
	    api__set(out, "broken", api__u64(tot.broken)) ||
	    api__set(out, "clipped", api__u64(tot.clipped)) ||
	    api__set(out, "offset", json_integer(sq->offset)))
		goto cleanup;
	for (uint32_t s = 0; s < zp->nsites; s++)
		if (json_array_append_new(sites, site_json(c, &st[s])))
			goto cleanup;
	end = f.end_ns ? analysis_zones__from(zp, f.end_ns) : zp->nzones;
	for (uint32_t i = 0; i < end; i++) {
		const struct analysis_zone *zn = &zp->zones[i];
		json_t *o;

		if (zn->end_ns <= f.start_ns || (keep && !keep[zn->thread]))
			continue;
		if (total++ < sq->offset || total - sq->offset > sq->limit)
			continue;
		o = json_pack("{s:I,s:o,s:o,s:o,s:o,s:I}", "site", (json_int_t)zn->site, "thread",
			      api__thread(c, zn->thread), "start_ns", i64(zn->start_ns, origin),
			      "end_ns", i64(zn->end_ns, origin), "ns", api__u64(zn->end_ns - zn->start_ns),
			      "depth", (json_int_t)zn->depth);
		if (!o || json_array_append_new(zones, o))
			goto cleanup;
	}
	if (api__set(out, "total", api__u64(total)) || zones__marks(ctx, zp, &f, out))
		goto cleanup;
	rc = 0;
cleanup:
	free(st);
	free(keep);
	analysis_zones__release(&mine);
	return rc;
}
