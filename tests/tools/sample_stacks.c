// SPDX-License-Identifier: MIT
/*
 * sample_stacks CAPTURE [logical|native|python]: one line per sample,
 * "TIME_NS TID FRAME;FRAME;..." (root first, display names as the report
 * shows them), under the given look (default python).  For tests that need
 * each sample's time and thread, which folded stacks do not carry.
 * sample_stacks CAPTURE counters: one line per counter, "NAME VALUE".
 * sample_stacks CAPTURE meta: one line per meta key, "KEY VALUE".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"

int main(int argc, char **argv)
{
	enum analysis_look_kind kind = ANALYSIS_LOOK_PYTHON;
	struct analysis_look *look = NULL;
	const struct capture *v;
	struct capture *c = NULL;
	char err[512], name[2048];
	uint32_t path[4096];

	bool counters = argc > 2 && !strcmp(argv[2], "counters");
	bool meta = argc > 2 && !strcmp(argv[2], "meta");

	if (argc < 2 ||
	    (argc > 2 && !counters && !meta && analysis_look__parse(argv[2], &kind))) {
		fprintf(stderr,
			"usage: sample_stacks CAPTURE [logical|native|python|counters|meta]\n");
		return 2;
	}
	if (capture__open(argv[1], &c, err, sizeof(err))) {
		fprintf(stderr, "sample_stacks: %s\n", err);
		return 1;
	}
	if (counters) {
		for (uint32_t i = 0; i < c->ncounters; i++)
			printf("%s %llu\n", capture__string(c, c->counters[i].name),
			       (unsigned long long)c->counters[i].value);
		capture__free(c);
		return 0;
	}
	if (meta) {
		for (uint32_t i = 0; i < c->nmeta; i++)
			printf("%s %s\n", capture__string(c, c->meta[i].key),
			       capture__string(c, c->meta[i].value));
		capture__free(c);
		return 0;
	}
	if (analysis_look__new(c, kind, &look)) {
		fprintf(stderr, "sample_stacks: out of memory\n");
		return 1;
	}
	v = analysis_look__capture(look);
	for (uint32_t i = 0; i < v->nsamples; i++) {
		const struct capture_sample *s = &v->samples[i];
		uint32_t n = 0, st = s->stack;

		while (st != CAPTURE_NONE && n < 4096) {
			path[n++] = v->stacks[st].frame;
			st = v->stacks[st].parent;
		}
		printf("%llu %u %llu ", (unsigned long long)s->time_ns,
		       s->thread == CAPTURE_NONE ? 0 : v->threads[s->thread].tid,
		       (unsigned long long)s->weight);
		while (n-- > 0) {
			analysis__frame_name(v, &v->frames[path[n]], name, sizeof(name));
			printf("%s%s", name, n ? ";" : "");
		}
		printf("\n");
	}
	analysis_look__free(look);
	capture__free(c);
	return 0;
}
