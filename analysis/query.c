// SPDX-License-Identifier: MIT
/* Queries: which samples a result covers, and their per-stack aggregation. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void analysis_query__init(struct analysis_query *q, uint32_t event)
{
	memset(q, 0, sizeof(*q));
	q->event = event;
	q->thread = CAPTURE_NONE;
}

int analysis_query__check(const struct capture *c, const struct analysis_query *q)
{
	if (q->event >= c->nevents)
		return -EINVAL;
	if (q->thread != CAPTURE_NONE && q->thread >= c->nthreads)
		return -EINVAL;
	if (q->select && q->select->nstacks != c->nstacks)
		return -EINVAL; /* built over another capture */
	if (q->filter && q->filter->capture != c)
		return -EINVAL;
	if (q->wall && q->wall_event >= c->nevents)
		return -EINVAL;
	return 0;
}

bool analysis_query__match(const struct analysis_query *q, const struct capture_sample *s)
{
	if (s->event != q->event)
		return false;
	if (q->thread != CAPTURE_NONE && s->thread != q->thread)
		return false;
	if (s->time_ns < q->start_ns)
		return false;
	if (q->end_ns && s->time_ns >= q->end_ns)
		return false;
	return analysis_filter__stack(q->filter, s->stack) &&
	       analysis_select__keeps(q->select, s->thread, s->stack);
}

bool analysis_query__match_interval(const struct analysis_query *q,
				    const struct capture_interval *v)
{
	if (v->event != q->event || (q->thread != CAPTURE_NONE && v->thread != q->thread) ||
	    v->start_ns < q->start_ns || (q->end_ns && v->start_ns >= q->end_ns))
		return false;
	if (q->complete_only &&
	    (v->flags & (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)))
		return false;
	return analysis_filter__stack(q->filter, v->stack) &&
	       analysis_select__keeps(q->select, v->thread, v->stack);
}

/* How many events before event (and in all, in *total) share its name. */
static uint32_t event__rank(const struct capture *c, uint32_t event, uint32_t *total)
{
	const char *name = capture__string(c, c->events[event].name);
	uint32_t rank = 0;

	*total = 0;
	for (uint32_t i = 0; i < c->nevents; i++) {
		if (strcmp(capture__string(c, c->events[i].name), name))
			continue;
		if (i < event)
			rank++;
		++*total;
	}
	return rank;
}

/* Events named name[0..len): the count, and in *event the nth of them
 * (from 1; n 0: the first). */
static uint32_t events__named(const struct capture *c, const char *name, size_t len, uint32_t n,
			      uint32_t *event)
{
	uint32_t found = 0;

	for (uint32_t i = 0; i < c->nevents; i++) {
		const char *e = capture__string(c, c->events[i].name);

		if (strlen(e) != len || strncmp(e, name, len))
			continue;
		if (++found == n || (!n && found == 1))
			*event = i;
	}
	return found;
}

int analysis__find_event(const struct capture *c, const char *name, uint32_t *event)
{
	const char *hash = strrchr(name, '#');
	uint32_t found = events__named(c, name, strlen(name), 0, event);
	unsigned long n;
	char *end;

	if (found)
		return found == 1 ? 0 : -ENOTUNIQ;
	/* "NAME#N": the Nth event named NAME, counting from 1 (a name that
	 * holds '#' itself matched above) */
	if (!hash || hash[1] < '1' || hash[1] > '9')
		return -ENOENT;
	n = strtoul(hash + 1, &end, 10);
	if (*end || n > UINT32_MAX)
		return -ENOENT;
	found = events__named(c, name, (size_t)(hash - name), (uint32_t)n, event);
	return n <= found ? 0 : -ENOENT;
}

void analysis__event_label(const struct capture *c, uint32_t event, char *buf, size_t size)
{
	uint32_t total, rank = event__rank(c, event, &total);
	const char *name = capture__string(c, c->events[event].name);

	if (total > 1)
		snprintf(buf, size, "%s#%" PRIu32, name, rank + 1);
	else
		snprintf(buf, size, "%s", name);
}

uint32_t analysis__default_event(const struct capture *c)
{
	uint32_t best = CAPTURE_NONE, i;

	if (!c->nevents)
		return CAPTURE_NONE;
	for (i = 0; i < c->nsamples; i++) {
		if (c->samples[i].event < best)
			best = c->samples[i].event;
		if (best == 0)
			break;
	}
	/* A capture of intervals only: their event. */
	if (best == CAPTURE_NONE && c->nintervals)
		best = c->intervals[0].event;
	return best == CAPTURE_NONE ? 0 : best;
}

static int agg_cmp(const void *pa, const void *pb)
{
	const struct analysis_agg *a = pa, *b = pb;

	if (a->root != b->root)
		return a->root < b->root ? -1 : 1;
	if (a->stack != b->stack)
		return a->stack < b->stack ? -1 : 1;
	return (int)a->clipped - (int)b->clipped;
}

int analysis__aggregate(const struct analysis_names *names, const struct analysis_query *q,
			struct analysis_agg **out, uint32_t *n)
{
	const struct capture *c = names->capture;
	struct analysis_agg *rows = NULL;
	uint32_t nrows = 0, cap = 0, *by_stack = NULL, i;
	struct u64map map;
	int err;

	u64map__init(&map);
	*out = NULL;
	*n = 0;
	err = analysis_query__check(c, q);
	if (err)
		goto cleanup;
	if (!q->per_thread) {
		/* One root: a dense stack -> row index (slot nstacks: empty
		 * stack); the second half for clipped intervals. */
		err = -ENOMEM;
		by_stack = malloc(((size_t)c->nstacks + 1) * 2 * sizeof(*by_stack));
		if (!by_stack)
			goto cleanup;
		memset(by_stack, 0xff, ((size_t)c->nstacks + 1) * 2 * sizeof(*by_stack));
	}

	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];
		uint32_t root = CAPTURE_NONE, row = nrows, *slot = &row;
		bool inserted = true;

		uint64_t weight = s->weight;

		if (q->wall && s->event == q->wall_event && s->event != q->event) {
			struct analysis_query wq = *q;

			wq.event = q->wall_event;
			if (!analysis_query__match(&wq, s))
				continue;
			if (__builtin_mul_overflow(weight, c->events[q->wall_event].period, &weight))
				weight = UINT64_MAX;
		} else if (!analysis_query__match(q, s)) {
			continue;
		}
		if (q->per_thread) {
			root = s->thread == CAPTURE_NONE ? names->no_thread_key
							 : names->thread_keys[s->thread];
			err = u64map__upsert(&map, (uint64_t)root << 32 | s->stack, &row, &inserted);
			if (err)
				goto cleanup;
		} else {
			slot = &by_stack[s->stack == CAPTURE_NONE ? c->nstacks : s->stack];
			inserted = *slot == U64MAP_EMPTY;
			if (inserted)
				*slot = nrows;
		}
		if (inserted) {
			err = analysis__grow((void **)&rows, &cap, (uint64_t)nrows + 1, sizeof(*rows));
			if (err)
				goto cleanup;
			rows[nrows++] = (struct analysis_agg){ .root = root, .stack = s->stack };
		}
		analysis__sat_add(&rows[*slot].weight, weight);
		rows[*slot].samples++;
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint32_t root = CAPTURE_NONE, row = nrows, *slot = &row;
		bool inserted = true, clipped;

		if (!analysis_query__match_interval(q, v))
			continue;
		clipped = v->flags & (CAPTURE_INTERVAL_F_START_UNKNOWN |
				      CAPTURE_INTERVAL_F_END_UNKNOWN);
		if (q->per_thread) {
			/* clipped rows apart: the u64map key's top bit (key ids < 2^31) */
			root = names->thread_keys[v->thread];
			err = u64map__upsert(&map,
					     ((uint64_t)root | (uint64_t)clipped << 31) << 32 | v->stack,
					     &row, &inserted);
			if (err)
				goto cleanup;
		} else {
			slot = &by_stack[(v->stack == CAPTURE_NONE ? c->nstacks : v->stack) +
					 (clipped ? (size_t)c->nstacks + 1 : 0)];
			inserted = *slot == U64MAP_EMPTY;
			if (inserted)
				*slot = nrows;
		}
		if (inserted) {
			err = analysis__grow((void **)&rows, &cap, (uint64_t)nrows + 1, sizeof(*rows));
			if (err)
				goto cleanup;
			rows[nrows++] = (struct analysis_agg){ .root = root, .stack = v->stack,
							       .clipped = clipped };
		}
		analysis__sat_add(&rows[*slot].weight, v->weight);
		rows[*slot].samples++;
	}
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), agg_cmp);
	*out = rows;
	*n = nrows;
	rows = NULL;
	err = 0;
cleanup:
	free(rows);
	free(by_stack);
	u64map__release(&map);
	return err;
}
