// SPDX-License-Identifier: MIT
/*
 * report --zones: the zones a program marked with the probes SDK
 * (analysis/zones.h), one row per site, and what the recording could not
 * keep of them (probes.* counters).  Durations are shown in microseconds
 * with three decimals: exact to the nanosecond.
 *
 * The scope options (--pid, --tid, --comm, --container, --cgroup) keep the
 * zones of matching threads, as they keep samples (analysis/scope.h);
 * --since/--until clip every zone to the window, as perf --time clips
 * samples: a zone crossing an edge counts with its part inside only, and
 * the header says how many were cut (analysis/zones.h).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/zones.h"
#include "capture/text.h"
#include "report.h"

/* A site name is at most MS_PROBE_NAME_MAX - 1 bytes; each may become 4. */
#define ZONE_NAME_BUF 256

/*
 * name made one table cell: every control byte (also newline and tab,
 * which would break the row), DEL, C1 control and invalid UTF-8 byte as
 * "\xHH", as the terminal stream shows them elsewhere.  Returns its width
 * in characters (one per code point).
 */
static int zone_name(const char *name, char *buf, size_t size)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t at = 0;
	int cols = 0;

	buf[0] = 0;
	while (*s && at + 5 < size) {
		int n = text__utf8_len(s, strlen((const char *)s));
		bool c1 = n == 2 && s[0] == 0xc2 && s[1] < 0xa0;

		if (n <= 0 || c1 || *s < 0x20 || *s == 0x7f) {
			for (int k = 0; k < (c1 ? 2 : 1); k++)
				at += (size_t)snprintf(buf + at, size - at, "\\x%02x", s[k]);
			cols += c1 ? 8 : 4;
			s += c1 ? 2 : 1;
			continue;
		}
		memcpy(buf + at, s, (size_t)n);
		at += (size_t)n;
		buf[at] = 0;
		s += n;
		cols++;
	}
	return cols;
}

static void us(uint64_t ns, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

int report_zones(const struct report_options *opt, const struct capture *capture)
{
	static const char *const counters[] = {
		"probes.dropped",    "probes.timeouts", "probes.bad_control", "probes.bad_site",
		"probes.bad_record", "probes.torn",	"probes.sites_refused", "processor.bad_probe",
	};
	const struct capture *c = capture;
	struct analysis_scope *scope = NULL;
	struct analysis_zone_stats *sites = NULL;
	struct analysis_zone_filter f = { 0 };
	struct analysis_zone_totals tot;
	struct analysis_zones z = { 0 };
	uint64_t problems = 0, start;
	char list[512] = "", a[32], b[32];
	size_t used = 0;
	int width = 4, status = 1;

	if (scope_options__view(&opt->scope, capture, false, &scope))
		goto oom;
	if (scope)
		c = analysis_scope__capture(scope);
	start = analysis__start_ns(c); /* the other views' origin (report.c) */
	f.start_ns = opt->since_set ? start + opt->since_ns : 0;
	f.end_ns = opt->until_set ? start + opt->until_ns : 0;
	if (analysis_zones__init(&z, c))
		goto oom;
	sites = calloc((size_t)z.nsites + 1, sizeof(*sites));
	if (!sites || analysis_zones__stats(&z, &f, sites, &tot))
		goto oom;
	printf("microscope report: %s\n", opt->path);
	if (opt->since_set || opt->until_set) {
		us(opt->since_ns, a, sizeof(a));
		us(opt->until_ns, b, sizeof(b));
		printf("  window %s to %s us from the recording's start: zones clipped to it, "
		       "%" PRIu64 " cut at an edge\n",
		       opt->since_set ? a : "start", opt->until_set ? b : "end", tot.clipped);
	}
	if (scope)
		printf("  scope: the zones of the threads the scope options keep\n");
	printf("  probe sites %" PRIu32 ", records %" PRIu32 ", zones %" PRIu64
	       ", unmatched begins %" PRIu64 ", unmatched ends %" PRIu64
	       ", broken by dropped records %" PRIu64 "\n",
	       c->nprobe_sites, c->nprobe_records, tot.zones, tot.unmatched_begins,
	       tot.unmatched_ends, tot.broken);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		uint64_t v = capture__counter(c, counters[i]);

		problems += v;
		if (v && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s %" PRIu64,
						 used ? ", " : "", counters[i], v);
	}
	printf("  probe problems %" PRIu64 "%s%s%s\n", problems, used ? " (" : "", list,
	       used ? ")" : "");
	if (!c->nprobe_sites) {
		printf("\nno probe sites: the program wrote no zones (link sdk/c's "
		       "libmicroscope_probes and record it with `microscope record`)\n");
		status = 0;
		goto cleanup;
	}
	for (uint32_t s = 0; s < z.nsites; s++) {
		char name[ZONE_NAME_BUF];
		int l;

		if (scope && !sites[s].count && !sites[s].marks && !sites[s].unmatched_begins &&
		    !sites[s].unmatched_ends && !sites[s].broken)
			continue;
		l = zone_name(capture__string(c, c->probe_sites[s].name), name, sizeof(name));

		width = l > width ? l : width;
	}
	printf("\nzones (durations in us)\n");
	printf("  %-*s %5s %8s %12s %12s %12s %12s %12s %12s %9s %9s %9s %7s\n", width, "site",
	       "pid", "count", "total", "min", "mean", "median", "p99", "max", "unm.begin", "unm.end",
	       "broken", "marks");
	for (uint32_t s = 0; s < z.nsites; s++) {
		const struct analysis_zone_stats *st = &sites[s];
		const struct capture_probe_site *ps = &c->probe_sites[s];
		char t[32], mn[32], me[32], md[32], p99[32], mx[32], name[ZONE_NAME_BUF];
		int cols = zone_name(capture__string(c, ps->name), name, sizeof(name));

		/* a scope leaves out the sites of its other threads */
		if (scope && !st->count && !st->marks && !st->unmatched_begins &&
		    !st->unmatched_ends && !st->broken)
			continue;
		us(st->total_ns, t, sizeof(t));
		us(st->min_ns, mn, sizeof(mn));
		us(st->mean_ns, me, sizeof(me));
		us(st->median_ns, md, sizeof(md));
		us(st->p99_ns, p99, sizeof(p99));
		us(st->max_ns, mx, sizeof(mx));
		/* padded by characters, not bytes */
		printf("  %s%*s %5" PRIu32 " %8" PRIu64 " %12s %12s %12s %12s %12s %12s %9" PRIu64
		       " %9" PRIu64 " %9" PRIu64 " %7" PRIu64 "\n",
		       name, width - cols, "", c->processes[ps->process].pid, st->count,
		       t, mn, me, md, p99, mx, st->unmatched_begins, st->unmatched_ends, st->broken,
		       st->marks);
	}
	status = 0;
	goto cleanup;
oom:
	fprintf(stderr, "microscope report: %s: out of memory\n", opt->path);
cleanup:
	free(sites);
	analysis_zones__release(&z);
	analysis_scope__free(scope);
	return status;
}
