// SPDX-License-Identifier: MIT
/*
 * Summary numbers of a query: samples, weight, duration, effective rate,
 * truncation reasons, and the capture's loss and problem counters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const problem_prefixes[] = {
	"processor.", "symbols.", "capture.",
};
static const char *const problem_suffixes[] = {
	"_err", "_error", "_errors", "_full",
};
/* Probe records the SDK or the recorder could not keep (collector/probes.h):
 * problems of the recording, not samples lost. */
static const char *const probe_problems[] = {
	"probes.dropped", "probes.timeouts", "probes.bad_control", "probes.bad_site",
	"probes.bad_record", "probes.torn", "probes.sites_refused",
};

/* Perf map lines and jitdump records the recorder could not use, and JIT
 * code it refused to read or to prove (userspace/runtimes/jit_funcs.h,
 * JIT_PROBLEMS): frames there stay unnamed or unproved.  The "_full" ones
 * are problems by their suffix.  Not problems: "jit.stale" (an earlier
 * process's file, rightly not read), "jit.unknown_record" and
 * "jit.debug_unused" (records the jitdump format says to skip, or that name
 * no code). */
static const char *const jit_problems[] = {
	"jit.malformed", "jit.huge", "jit.no_code", "jit.bad_header", "jit.bad_record",
	"jit.move_unknown", "jit.bad_text", "jit.gdb_bad", "jit.not_owned", "jit.late_no_memory",
};

/* Counters that measure (a time, a size) rather than count events. */
static const char *const measure_suffixes[] = {
	"_ms", "_us", "_ns", "_kib",
};

static bool has_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && !memcmp(s + ls - lx, suffix, lx);
}

enum analysis_counter_class analysis__counter_class(const char *name)
{
	size_t i;

	/* Samples dropped whole, wherever: a perf user reads "lost" as every
	 * sample that is not in the capture (the processor's held-record
	 * budget drops them as surely as a full ring). */
	if (strstr(name, "lost") || strstr(name, "ringbuf_full") ||
	    !strcmp(name, "processor.held_budget_full"))
		return ANALYSIS_COUNTER_LOST;
	/* Code no symbol covers (a stripped binary) is a property of the
	 * target, not a fault of the recording: the report says it apart. */
	if (!strcmp(name, "processor.frame_no_symbol"))
		return ANALYSIS_COUNTER_INFO;
	/* A measurement (processor.lag_max_ms) is never a number of problems. */
	for (i = 0; i < sizeof(measure_suffixes) / sizeof(measure_suffixes[0]); i++)
		if (has_suffix(name, measure_suffixes[i]))
			return ANALYSIS_COUNTER_INFO;
	for (i = 0; i < sizeof(probe_problems) / sizeof(probe_problems[0]); i++)
		if (!strcmp(name, probe_problems[i]))
			return ANALYSIS_COUNTER_PROBLEM;
	for (i = 0; i < sizeof(jit_problems) / sizeof(jit_problems[0]); i++)
		if (!strcmp(name, jit_problems[i]))
			return ANALYSIS_COUNTER_PROBLEM;
	for (i = 0; i < sizeof(problem_prefixes) / sizeof(problem_prefixes[0]); i++)
		if (!strncmp(name, problem_prefixes[i], strlen(problem_prefixes[i])))
			return ANALYSIS_COUNTER_PROBLEM;
	for (i = 0; i < sizeof(problem_suffixes) / sizeof(problem_suffixes[0]); i++)
		if (has_suffix(name, problem_suffixes[i]))
			return ANALYSIS_COUNTER_PROBLEM;
	return ANALYSIS_COUNTER_INFO;
}

static int counter_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct capture *c = ctx;
	const struct analysis_count *a = pa, *b = pb;

	return strcmp(capture__string(c, c->counters[a->id].name),
		      capture__string(c, c->counters[b->id].name));
}

static int trunc_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct analysis_count *a = pa, *b = pb;

	if (a->value != b->value)
		return a->value > b->value ? -1 : 1;
	return analysis__key_cmp(ctx, a->id, b->id);
}

/* Meta "duration_ns" as a decimal u64; false if absent or malformed. */
static bool meta_duration(const struct capture *c, uint64_t *ns)
{
	const char *v = capture__meta(c, "duration_ns");
	char *end;

	if (!v || !*v || *v < '0' || *v > '9')
		return false;
	errno = 0;
	*ns = strtoull(v, &end, 10);
	return !errno && !*end;
}

static int summary_counters(struct analysis_summary *s, const struct capture *c)
{
	uint32_t i;

	s->lost_counters = calloc((size_t)c->ncounters + 1, sizeof(*s->lost_counters));
	s->problem_counters = calloc((size_t)c->ncounters + 1, sizeof(*s->problem_counters));
	if (!s->lost_counters || !s->problem_counters)
		return -ENOMEM;
	for (i = 0; i < c->ncounters; i++) {
		const struct capture_counter *k = &c->counters[i];
		struct analysis_count row = { .id = i, .value = k->value };

		if (!k->value)
			continue;
		switch (analysis__counter_class(capture__string(c, k->name))) {
		case ANALYSIS_COUNTER_LOST:
			s->lost += k->value;
			s->lost_counters[s->nlost_counters++] = row;
			break;
		case ANALYSIS_COUNTER_PROBLEM:
			s->problems += k->value;
			s->problem_counters[s->nproblem_counters++] = row;
			break;
		default:
			break;
		}
	}
	qsort_r(s->lost_counters, s->nlost_counters, sizeof(struct analysis_count), counter_cmp, (void *)c);
	qsort_r(s->problem_counters, s->nproblem_counters, sizeof(struct analysis_count),
		counter_cmp, (void *)c);
	return 0;
}

struct thread_span {
	uint64_t samples;
	uint64_t first_ns, last_ns;
};

int analysis_summary__init(struct analysis_summary *s, const struct analysis_names *n,
			   const struct analysis_query *q)
{
	const struct capture *c = n->capture;
	struct thread_span *spans = NULL;
	uint32_t *trunc = NULL, i;
	uint64_t *per_key = NULL, gaps = 0, span_ns = 0;
	int err;

	memset(s, 0, sizeof(*s));
	err = analysis_query__check(c, q);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	spans = calloc((size_t)c->nthreads + 1, sizeof(*spans));
	trunc = malloc(((size_t)c->nstacks + 1) * sizeof(*trunc));
	per_key = calloc((size_t)n->nkeys + 1, sizeof(*per_key));
	if (!spans || !trunc || !per_key)
		goto cleanup;

	/* Innermost truncation frame of each stack row; parents come first. */
	for (i = 0; i < c->nstacks; i++) {
		const struct capture_stack *st = &c->stacks[i];

		if (c->frames[st->frame].flags & CAPTURE_FRAME_F_TRUNCATION)
			trunc[i] = n->frame_keys[st->frame];
		else
			trunc[i] = st->parent == CAPTURE_NONE ? CAPTURE_NONE : trunc[st->parent];
	}

	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *smp = &c->samples[i];
		struct thread_span *sp;

		if (!analysis_query__match(q, smp))
			continue;
		if (!s->samples || smp->time_ns < s->first_ns)
			s->first_ns = smp->time_ns;
		if (!s->samples || smp->time_ns > s->last_ns)
			s->last_ns = smp->time_ns;
		s->samples++;
		analysis__sat_add(&s->weight, smp->weight);
		sp = &spans[smp->thread == CAPTURE_NONE ? c->nthreads : smp->thread];
		if (!sp->samples || smp->time_ns < sp->first_ns)
			sp->first_ns = smp->time_ns;
		if (!sp->samples || smp->time_ns > sp->last_ns)
			sp->last_ns = smp->time_ns;
		sp->samples++;
		/* in weight, like every total: a sample taken at a lowered
		 * duty stands for weight samples at the requested rate */
		if (smp->stack == CAPTURE_NONE)
			analysis__sat_add(&s->empty_stacks, smp->weight);
		else if (trunc[smp->stack] != CAPTURE_NONE) {
			analysis__sat_add(&s->truncated, smp->weight);
			analysis__sat_add(&per_key[trunc[smp->stack]], smp->weight);
		}
	}

	for (i = 0; i <= c->nthreads; i++) {
		if (!spans[i].samples)
			continue;
		s->threads++;
		if (spans[i].samples < 2)
			continue;
		gaps += spans[i].samples - 1;
		span_ns += spans[i].last_ns - spans[i].first_ns;
	}
	if (span_ns)
		s->rate_hz = (double)gaps * 1e9 / (double)span_ns;

	s->duration_from_meta = meta_duration(c, &s->duration_ns);
	if (!s->duration_from_meta)
		s->duration_ns = s->last_ns - s->first_ns;

	for (i = 0; i < n->nkeys; i++)
		if (per_key[i])
			s->ntruncations++;
	s->truncations = calloc((size_t)s->ntruncations + 1, sizeof(*s->truncations));
	if (!s->truncations)
		goto cleanup;
	s->ntruncations = 0;
	for (i = 0; i < n->nkeys; i++)
		if (per_key[i])
			s->truncations[s->ntruncations++] =
				(struct analysis_count){ .id = i, .value = per_key[i] };
	qsort_r(s->truncations, s->ntruncations, sizeof(*s->truncations), trunc_cmp, (void *)n);

	err = summary_counters(s, c);
cleanup:
	free(spans);
	free(trunc);
	free(per_key);
	if (err)
		analysis_summary__release(s);
	return err;
}

void analysis_summary__release(struct analysis_summary *s)
{
	free(s->truncations);
	free(s->lost_counters);
	free(s->problem_counters);
	memset(s, 0, sizeof(*s));
}
