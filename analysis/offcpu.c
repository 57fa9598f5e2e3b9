// SPDX-License-Identifier: MIT
/*
 * Off-CPU analysis: complete and incomplete interval lists, the wall view
 * (on-CPU samples beside off-CPU nanoseconds, per thread, with the
 * conversion stated), per-thread lanes, and stack paths for listings.
 * Pure: every order depends only on the capture's rows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EDGE_FLAGS (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)

static const char *const state_names[CAPTURE_OFFCPU_STATE_COUNT] = {
	[CAPTURE_OFFCPU_STATE_RUNNABLE] = "runnable",
	[CAPTURE_OFFCPU_STATE_SLEEP] = "sleep (S)",
	[CAPTURE_OFFCPU_STATE_DISK] = "disk (D)",
	[CAPTURE_OFFCPU_STATE_STOPPED] = "stopped (T)",
	[CAPTURE_OFFCPU_STATE_OTHER] = "other",
};

static const char *const cause_names[CAPTURE_OFFCPU_CAUSE_COUNT] = {
	[CAPTURE_OFFCPU_CAUSE_NONE] = "-",
	[CAPTURE_OFFCPU_CAUSE_TASK] = "task",
	[CAPTURE_OFFCPU_CAUSE_HARDIRQ] = "hardirq",
	[CAPTURE_OFFCPU_CAUSE_SOFTIRQ] = "softirq",
	[CAPTURE_OFFCPU_CAUSE_NMI] = "nmi",
};

const char *analysis__offcpu_state_name(uint32_t state)
{
	return state < CAPTURE_OFFCPU_STATE_COUNT ? state_names[state] : "?";
}

const char *analysis__offcpu_cause_name(uint32_t cause)
{
	return cause < CAPTURE_OFFCPU_CAUSE_COUNT ? cause_names[cause] : "?";
}

/* qsort_r comparators over interval ids. */
static int by_weight(const void *pa, const void *pb, void *ctx)
{
	const struct capture *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_interval *x = &c->intervals[a], *y = &c->intervals[b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int by_thread_start(const void *pa, const void *pb, void *ctx)
{
	const struct capture *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_interval *x = &c->intervals[a], *y = &c->intervals[b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

void analysis_offcpu__release(struct analysis_offcpu *o)
{
	free(o->complete);
	free(o->incomplete);
	memset(o, 0, sizeof(*o));
}

/* The intervals of thread (CAPTURE_NONE: all) that q covers (NULL: all). */
static int offcpu__fill(struct analysis_offcpu *o, const struct capture *c, uint32_t thread,
			const struct analysis_query *q)
{
	uint32_t i;

	memset(o, 0, sizeof(*o));
	if ((thread != CAPTURE_NONE && thread >= c->nthreads) ||
	    (q && analysis_query__check(c, q)))
		return -EINVAL;
	o->complete = malloc(((size_t)c->nintervals + 1) * sizeof(*o->complete));
	o->incomplete = malloc(((size_t)c->nintervals + 1) * sizeof(*o->incomplete));
	if (!o->complete || !o->incomplete) {
		analysis_offcpu__release(o);
		return -ENOMEM;
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];

		if ((thread != CAPTURE_NONE && v->thread != thread) ||
		    (q && !analysis_query__match_interval(q, v)))
			continue;
		if (v->flags & EDGE_FLAGS) {
			o->incomplete[o->nincomplete++] = i;
			analysis__sat_add(&o->incomplete_ns, v->weight);
			continue;
		}
		o->complete[o->ncomplete++] = i;
		analysis__sat_add(&o->complete_ns, v->weight);
		analysis__sat_add(&o->state_ns[v->state], v->weight);
		o->state_count[v->state]++;
		analysis__sat_add(&o->cause_ns[v->cause], v->weight);
		o->cause_count[v->cause]++;
	}
	qsort_r(o->complete, o->ncomplete, sizeof(uint32_t), by_weight, (void *)c);
	qsort_r(o->incomplete, o->nincomplete, sizeof(uint32_t), by_thread_start, (void *)c);
	return 0;
}

int analysis_offcpu__init(struct analysis_offcpu *o, const struct capture *c, uint32_t thread)
{
	return offcpu__fill(o, c, thread, NULL);
}

int analysis_offcpu__init_query(struct analysis_offcpu *o, const struct capture *c,
				const struct analysis_query *q)
{
	return offcpu__fill(o, c, CAPTURE_NONE, q);
}

/* ---- wall view ---------------------------------------------------------- */

static void seen(struct analysis_wall_row *r, uint64_t t)
{
	if (!r->first_ns || t < r->first_ns)
		r->first_ns = t;
	if (t > r->last_ns)
		r->last_ns = t;
}

static int wall_cmp(const void *pa, const void *pb)
{
	const struct analysis_wall_row *a = pa, *b = pb;
	uint64_t x = a->on_cpu_ns + a->off_cpu_ns, y = b->on_cpu_ns + b->off_cpu_ns;

	if (x != y)
		return x > y ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

void analysis_wall__release(struct analysis_wall *w)
{
	free(w->rows);
	memset(w, 0, sizeof(*w));
}

int analysis_wall__init(struct analysis_wall *w, const struct capture *c)
{
	return analysis_wall__init_window(w, c, 0, 0);
}

int analysis_wall__init_window(struct analysis_wall *w, const struct capture *c,
			       uint64_t start_ns, uint64_t end_ns)
{
	struct analysis_wall_row *rows;
	uint32_t i, n = 0;

	memset(w, 0, sizeof(*w));
	w->cpu_event = CAPTURE_NONE;
	w->offcpu_event = c->nintervals ? c->intervals[0].event : CAPTURE_NONE;
	for (i = 0; i < c->nsamples; i++)
		if (c->samples[i].event < w->cpu_event)
			w->cpu_event = c->samples[i].event;
	if (w->cpu_event != CAPTURE_NONE) {
		const struct capture_event *ev = &c->events[w->cpu_event];
		const char *name = capture__string(c, ev->name);

		/* cpu-clock: period is ns of CPU time per sample (perf_event_open(2)). */
		w->period_known = !strcmp(capture__string(c, ev->unit), "samples") &&
				  (!strcmp(name, "cpu-clock") || !strcmp(name, "task-clock")) &&
				  ev->period;
		w->period_ns = w->period_known ? ev->period : 0;
	}
	rows = calloc((size_t)c->nthreads + 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (i = 0; i < c->nthreads; i++)
		rows[i].thread = i;
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];

		if (s->event != w->cpu_event || s->thread == CAPTURE_NONE ||
		    s->time_ns < start_ns || (end_ns && s->time_ns >= end_ns))
			continue;
		rows[s->thread].samples++;
		seen(&rows[s->thread], s->time_ns);
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		struct analysis_wall_row *r = &rows[v->thread];

		if (v->start_ns < start_ns || (end_ns && v->start_ns >= end_ns))
			continue; /* by its start, as analysis_query__match_interval */
		if (v->flags & EDGE_FLAGS) {
			r->incomplete++;
			analysis__sat_add(&r->incomplete_ns, v->weight);
		} else {
			r->intervals++;
			analysis__sat_add(&r->off_cpu_ns, v->weight);
			analysis__sat_add(&r->state_ns[v->state], v->weight);
		}
		seen(r, v->start_ns);
		seen(r, v->end_ns);
	}
	for (i = 0; i < c->nthreads; i++) {
		rows[i].on_cpu_ns = rows[i].samples * w->period_ns;
		if (rows[i].samples || rows[i].intervals || rows[i].incomplete)
			rows[n++] = rows[i];
	}
	qsort(rows, n, sizeof(*rows), wall_cmp);
	w->rows = rows;
	w->nrows = n;
	return 0;
}

/* ---- lanes -------------------------------------------------------------- */

void analysis_lanes__release(struct analysis_lanes *l)
{
	for (uint32_t i = 0; l->lanes && i < l->nlanes; i++) {
		free(l->lanes[i].samples);
		free(l->lanes[i].off_cpu_ns);
	}
	free(l->lanes);
	memset(l, 0, sizeof(*l));
}

int analysis_lanes__init(struct analysis_lanes *l, const struct capture *c, uint64_t start_ns,
			 uint64_t end_ns, uint32_t nbuckets)
{
	uint32_t *lane_of = NULL, i;
	int err = -ENOMEM;

	memset(l, 0, sizeof(*l));
	if (!nbuckets || end_ns <= start_ns)
		return -EINVAL;
	l->start_ns = start_ns;
	l->nbuckets = nbuckets;
	l->bucket_ns = (end_ns - start_ns + nbuckets - 1) / nbuckets;
	lane_of = malloc(((size_t)c->nthreads + 1) * sizeof(*lane_of));
	l->lanes = calloc((size_t)c->nthreads + 1, sizeof(*l->lanes));
	if (!lane_of || !l->lanes)
		goto cleanup;
	memset(lane_of, 0xff, ((size_t)c->nthreads + 1) * sizeof(*lane_of));
	/* Lanes in thread-id order: mark the threads first. */
	for (i = 0; i < c->nsamples; i++)
		if (c->samples[i].thread != CAPTURE_NONE)
			lane_of[c->samples[i].thread] = 0;
	for (i = 0; i < c->nintervals; i++)
		lane_of[c->intervals[i].thread] = 0;
	for (i = 0; i < c->nthreads; i++) {
		struct analysis_lane *ln;

		if (lane_of[i] == CAPTURE_NONE)
			continue;
		lane_of[i] = l->nlanes;
		ln = &l->lanes[l->nlanes++];
		ln->thread = i;
		ln->samples = calloc(nbuckets, sizeof(*ln->samples));
		ln->off_cpu_ns = calloc(nbuckets, sizeof(*ln->off_cpu_ns));
		if (!ln->samples || !ln->off_cpu_ns)
			goto cleanup;
	}
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];

		if (s->thread == CAPTURE_NONE || s->time_ns < start_ns || s->time_ns >= end_ns)
			continue;
		l->lanes[lane_of[s->thread]].samples[(s->time_ns - start_ns) / l->bucket_ns]++;
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint64_t a = v->start_ns > start_ns ? v->start_ns : start_ns;
		uint64_t b = v->end_ns < end_ns ? v->end_ns : end_ns;
		uint64_t *row = l->lanes[lane_of[v->thread]].off_cpu_ns;

		while (a < b) {
			uint64_t k = (a - start_ns) / l->bucket_ns;
			uint64_t edge = start_ns + (k + 1) * l->bucket_ns;
			uint64_t stop = edge < b ? edge : b;

			if (k >= nbuckets)
				break;
			row[k] += stop - a;
			a = stop;
		}
	}
	err = 0;
cleanup:
	free(lane_of);
	if (err)
		analysis_lanes__release(l);
	return err;
}

/* ---- stack paths ---------------------------------------------------------- */

size_t analysis__stack_path(const struct analysis_names *n, uint32_t stack, char *buf, size_t size)
{
	const struct capture *c = n->capture;
	uint32_t depth = 0, s, *chain;
	size_t len = 0;

	if (!size)
		return 0;
	buf[0] = '\0';
	for (s = stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
		depth++;
	if (!depth)
		return 0;
	chain = malloc(depth * sizeof(*chain));
	if (!chain)
		return 0;
	depth = 0;
	for (s = stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
		chain[depth++] = s;
	while (depth-- > 0 && len + 1 < size) {
		uint32_t key = analysis_names__row_key(n, chain[depth]);
		const struct analysis_key *k;
		int w;

		if (key == ANALYSIS_KEY_FOLDED)
			continue;
		k = &n->keys[key];
		w = snprintf(buf + len, size - len, "%s%s%s", len ? ";" : "", k->name,
				 k->kind == ANALYSIS_KEY_KERNEL ? " [k]" : "");

		if (w < 0)
			break;
		len += (size_t)w < size - len ? (size_t)w : size - len - 1;
	}
	free(chain);
	return len;
}

/* The innermost frame of stack with a key of its own (inlined calls folded
 * into their function); CAPTURE_NONE for an empty stack. */
static uint32_t leaf_key(const struct analysis_names *n, uint32_t stack)
{
	const struct capture *c = n->capture;

	for (; stack != CAPTURE_NONE; stack = c->stacks[stack].parent) {
		uint32_t k = analysis_names__row_key(n, stack);

		if (k != ANALYSIS_KEY_FOLDED)
			return k;
	}
	return n->empty_stack_key;
}

int analysis_lanes__top_keys(const struct analysis_lanes *l, const struct analysis_names *n,
			     const struct analysis_query *q, uint32_t *tops)
{
	const struct capture *c = n->capture;
	uint64_t ncells = (uint64_t)l->nlanes * l->nbuckets, end;
	uint32_t *lane_of = NULL, ncounts = 0, cap = 0, i;
	uint64_t *counts = NULL, *best = NULL;
	struct u64map map;
	int err;

	u64map__init(&map);
	err = analysis_query__check(c, q);
	if (err)
		return err;
	err = -ENOMEM;
	if (ncells >= UINT32_MAX)
		goto cleanup;
	for (i = 0; i < ncells; i++)
		tops[i] = CAPTURE_NONE;
	lane_of = malloc(((size_t)c->nthreads + 1) * sizeof(*lane_of));
	best = calloc(ncells + 1, sizeof(*best));
	if (!lane_of || !best)
		goto cleanup;
	memset(lane_of, 0xff, ((size_t)c->nthreads + 1) * sizeof(*lane_of));
	for (i = 0; i < l->nlanes; i++)
		lane_of[l->lanes[i].thread] = i;
	end = l->start_ns + l->bucket_ns * l->nbuckets;
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];
		uint32_t cell, slot;
		bool inserted;

		if (s->thread == CAPTURE_NONE || lane_of[s->thread] == CAPTURE_NONE ||
		    s->time_ns < l->start_ns || s->time_ns >= end || !analysis_query__match(q, s))
			continue;
		cell = lane_of[s->thread] * l->nbuckets +
		       (uint32_t)((s->time_ns - l->start_ns) / l->bucket_ns);
		slot = ncounts;
		if (u64map__upsert(&map, (uint64_t)cell << 32 | leaf_key(n, s->stack), &slot,
				   &inserted))
			goto cleanup;
		if (inserted) {
			if (analysis__grow((void **)&counts, &cap, (uint64_t)ncounts + 1,
					   sizeof(*counts)))
				goto cleanup;
			counts[ncounts++] = 0;
		}
		counts[slot]++;
	}
	/* Second pass in sample order: each (cell, key) is met again, so the
	 * best per cell is found without iterating the map. */
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];
		uint32_t cell, key, slot;

		if (s->thread == CAPTURE_NONE || lane_of[s->thread] == CAPTURE_NONE ||
		    s->time_ns < l->start_ns || s->time_ns >= end || !analysis_query__match(q, s))
			continue;
		cell = lane_of[s->thread] * l->nbuckets +
		       (uint32_t)((s->time_ns - l->start_ns) / l->bucket_ns);
		key = leaf_key(n, s->stack);
		slot = u64map__get(&map, (uint64_t)cell << 32 | key);
		if (counts[slot] > best[cell] ||
		    (counts[slot] == best[cell] && tops[cell] != CAPTURE_NONE &&
		     analysis__key_cmp(n, key, tops[cell]) < 0)) {
			best[cell] = counts[slot];
			tops[cell] = key;
		}
	}
	err = 0;
cleanup:
	u64map__release(&map);
	free(lane_of);
	free(counts);
	free(best);
	return err;
}
