// SPDX-License-Identifier: MIT
/*
 * report --timeline: per-thread lanes in the terminal.  Each lane is one
 * line of density glyphs (CPU samples per time bucket, scaled to the
 * busiest bucket of any lane) with off-CPU buckets shaded, and one line of
 * letters naming each bucket's top function, with a legend.  The numbers
 * come from analysis_lanes (and analysis_lanes__top_keys): this file only
 * lays them out.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_timeline.h"

#define TIMELINE_LEGEND_MAX 26 /* letters a..z; more functions share '+' */

static const char *const density[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };

/* The glyph of a bucket: samples scaled to 1..8 of max, off-CPU shaded
 * where the thread spent at least half the bucket off the CPU without a
 * sample, a dot where it was seen neither way. */
static const char *glyph(uint64_t samples, uint64_t max, uint64_t off_ns, uint64_t bucket_ns)
{
	if (samples) {
		uint64_t level = (samples * 8 + max - 1) / max;

		return density[level > 8 ? 8 : level ? level : 1];
	}
	if (off_ns * 2 >= bucket_ns)
		return "░";
	return off_ns ? "·" : " ";
}

int report_timeline__print(const struct report_timeline *t)
{
	const struct capture *c = t->names->capture;
	struct analysis_lanes l = { 0 };
	uint32_t *tops = NULL, legend[TIMELINE_LEGEND_MAX], nlegend = 0, i, b, shown;
	uint64_t start = t->start_ns, end = t->end_ns, max = 1;
	bool off_cpu = false;
	int err;

	if (end <= start)
		end = start + 1;
	err = analysis_lanes__init(&l, c, start, end, t->buckets);
	if (err)
		return err;
	if (!l.nlanes) { /* the scope kept no thread: no lane to draw */
		printf("\ntimeline: no samples in the selection\n");
		goto cleanup;
	}
	err = -ENOMEM;
	tops = malloc(((size_t)l.nlanes * l.nbuckets + 1) * sizeof(*tops));
	if (!tops)
		goto cleanup;
	err = analysis_lanes__top_keys(&l, t->names, t->query, tops);
	if (err)
		goto cleanup;
	shown = l.nlanes < t->max_lanes ? l.nlanes : t->max_lanes;
	for (i = 0; i < l.nlanes; i++)
		for (b = 0; b < l.nbuckets; b++) {
			if (l.lanes[i].samples[b] > max)
				max = l.lanes[i].samples[b];
			if (i < shown && l.lanes[i].off_cpu_ns[b])
				off_cpu = true;
		}
	printf("\ntimeline (%" PRIu32 " of %" PRIu32 " threads; %" PRIu32 " buckets of %.1f ms "
	       "from the recording's start to %.3f s)\n",
	       shown, l.nlanes, l.nbuckets, l.bucket_ns / 1e6, (end - t->origin_ns) / 1e9);
	/* The shading is explained only where some lane shows it. */
	printf("  density: CPU samples per bucket, █ = %" PRIu64 "; letters: the bucket's top "
	       "function\n", max);
	if (off_cpu)
		printf("  off-CPU: ░ a bucket without samples the thread spent half or more "
		       "off the CPU, · less\n");
	for (i = 0; i < shown; i++) {
		const struct analysis_lane *ln = &l.lanes[i];
		char name[40];

		snprintf(name, sizeof(name), "%s-%" PRIu32,
			 *capture__string(c, c->threads[ln->thread].comm)
				 ? capture__string(c, c->threads[ln->thread].comm)
				 : "[unknown]",
			 c->threads[ln->thread].tid);
		printf("  %-22.22s |", name);
		for (b = 0; b < l.nbuckets; b++)
			fputs(glyph(ln->samples[b], max, ln->off_cpu_ns[b], l.bucket_ns), stdout);
		printf("|\n  %-22s |", "");
		for (b = 0; b < l.nbuckets; b++) {
			uint32_t k = tops[i * l.nbuckets + b], j;

			if (k == CAPTURE_NONE) {
				putchar(' ');
				continue;
			}
			for (j = 0; j < nlegend && legend[j] != k; j++)
				;
			if (j == nlegend && nlegend < TIMELINE_LEGEND_MAX)
				legend[nlegend++] = k;
			putchar(j < TIMELINE_LEGEND_MAX ? 'a' + (int)j : '+');
		}
		printf("|\n");
	}
	for (i = 0; i < nlegend; i++) {
		const struct analysis_key *k = &t->names->keys[legend[i]];

		printf("  %c  %s%s\n", 'a' + (int)i, k->name,
		       k->kind == ANALYSIS_KEY_KERNEL ? " [k]" : "");
	}
	if (nlegend == TIMELINE_LEGEND_MAX)
		printf("  +  other functions\n");
	err = 0;
cleanup:
	free(tops);
	analysis_lanes__release(&l);
	return err;
}
