// SPDX-License-Identifier: MIT
/* What the CPU budget did (budget.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "capture/duty.h"

static uint64_t meta_u64(const struct capture *c, const char *key)
{
	const char *v = capture__meta(c, key);

	return v && *v >= '0' && *v <= '9' ? strtoull(v, NULL, 10) : 0;
}

int analysis_budget__init(struct analysis_budget *b, const struct capture *c)
{
	const char *pct = capture__meta(c, "budget.pct");
	const char *list = capture__meta(c, CAPTURE_META_DUTY_CHANGES);
	uint64_t start = meta_u64(c, "start_time_ns");
	uint32_t i, prev = 1;
	char why[96];

	memset(b, 0, sizeof(*b));
	b->peak_factor = b->final_factor = 1;
	for (i = 0; i < c->nsamples; i++) {
		b->samples++;
		/* saturate: weights are untrusted u64s */
		if (__builtin_add_overflow(b->weight, c->samples[i].weight, &b->weight))
			b->weight = UINT64_MAX;
	}
	if (!pct)
		return 0;
	b->present = true;
	b->pct = strtod(pct, NULL);
	b->recorder_cpu_ns = capture__counter(c, "budget.recorder_cpu_ns");
	b->bpf_run_ns = capture__counter(c, "budget.bpf_run_time_ns");
	b->perf_estimate_ns = capture__counter(c, "budget.perf_estimate_ns");
	b->observed_ns = capture__counter(c, "budget.observed_ns");
	b->steady_recorder_cpu_ns = capture__counter(c, "budget.steady_recorder_cpu_ns");
	b->steady_bpf_run_ns = capture__counter(c, "budget.steady_bpf_run_time_ns");
	b->steady_perf_estimate_ns = capture__counter(c, "budget.steady_perf_estimate_ns");
	b->steady_observed_ns = capture__counter(c, "budget.steady_observed_ns");
	b->steady_closed = capture__counter(c, "budget.steady_closed") != 0;
	b->warmup_ns = capture__counter(c, "budget.warmup_ns");
	b->lower_after_ns = capture__counter(c, "budget.lower_after_ns");
	if (!list)
		return 0;

	int n = capture_duty__parse(list, NULL, 0, why, sizeof(why));
	struct capture_duty_change *ch;

	if (n < 0)
		return n;
	ch = calloc((size_t)n + 1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	capture_duty__parse(list, ch, (uint32_t)n, why, sizeof(why));
	b->changes = (uint32_t)n;
	for (i = 0; i < (uint32_t)n; i++) {
		if (ch[i].factor > prev) {
			if (!b->lowered && start && ch[i].time_ns >= start)
				b->first_lowered_ns = ch[i].time_ns - start;
			b->lowered++;
		}
		if (ch[i].factor > b->peak_factor)
			b->peak_factor = ch[i].factor;
		prev = ch[i].factor;
	}
	b->final_factor = prev;
	free(ch);
	return 0;
}
