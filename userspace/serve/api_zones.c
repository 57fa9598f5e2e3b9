// SPDX-License-Identifier: MIT
/*
 * /api/zones: the zones a program marked with the probes SDK
 * (analysis/zones.h): every site's statistics, and a page of the zones
 * overlapping the query's time range (thread= and process= narrow it),
 * by start.  Times are ns from the profile's origin; a zone that began
 * before the origin (before the first sample) has a negative start.
 */
#include <errno.h>

#include "analysis/zones.h"
#include "api.h"

static json_t *i64(uint64_t t, uint64_t origin)
{
	return json_integer((json_int_t)(int64_t)(t - origin));
}

static json_t *site_json(const struct capture *c, const struct analysis_zone_stats *st)
{
	const struct capture_probe_site *ps = &c->probe_sites[st->site];

	return json_pack("{s:I,s:s,s:I,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "id",
			 (json_int_t)st->site, "name", capture__string(c, ps->name), "pid",
			 (json_int_t)c->processes[ps->process].pid, "count", api__u64(st->count),
			 "total_ns", api__u64(st->total_ns), "min_ns", api__u64(st->min_ns),
			 "mean_ns", api__u64(st->mean_ns), "median_ns", api__u64(st->median_ns),
			 "p99_ns", api__u64(st->p99_ns), "max_ns", api__u64(st->max_ns),
			 "unmatched_begins", api__u64(st->unmatched_begins), "unmatched_ends",
			 api__u64(st->unmatched_ends), "marks", api__u64(st->marks));
}

int api__zones(struct api_ctx *ctx, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	const struct capture *c = ctx->c;
	uint64_t origin = ctx->p->origin_ns, total = 0;
	struct analysis_zones z;
	json_t *sites, *zones;
	uint32_t end;
	int rc = -ENOMEM;

	if (analysis_zones__init(&z, c))
		return -ENOMEM;
	sites = json_array();
	zones = json_array();
	if (api__set(out, "sites", sites) || api__set(out, "zones", zones) ||
	    api__set(out, "unmatched_begins", api__u64(z.unmatched_begins)) ||
	    api__set(out, "unmatched_ends", api__u64(z.unmatched_ends)) ||
	    api__set(out, "offset", json_integer(sq->offset)))
		goto cleanup;
	for (uint32_t s = 0; s < z.nsites; s++)
		if (json_array_append_new(sites, site_json(c, &z.sites[s])))
			goto cleanup;
	end = ctx->q.end_ns ? analysis_zones__from(&z, ctx->q.end_ns) : z.nzones;
	for (uint32_t i = 0; i < end; i++) {
		const struct analysis_zone *zn = &z.zones[i];
		json_t *o;

		if (zn->end_ns <= ctx->q.start_ns)
			continue;
		if (sq->thread != UINT32_MAX && zn->thread != sq->thread)
			continue;
		if (sq->process != UINT32_MAX && c->threads[zn->thread].process != sq->process)
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
	if (api__set(out, "total", api__u64(total)))
		goto cleanup;
	rc = 0;
cleanup:
	analysis_zones__release(&z);
	return rc;
}
