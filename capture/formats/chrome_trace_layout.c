// SPDX-License-Identifier: MIT
/*
 * Layout of the Chrome trace (chrome_trace.c): items, their spans, the
 * rest of samples cut by off-CPU intervals, the interned off-CPU leaves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/chrome_trace.h"
#include "capture/formats/formats.h"

static const char *const state_words[CAPTURE_OFFCPU_STATE_COUNT] = {
	[CAPTURE_OFFCPU_STATE_RUNNABLE] = "runnable (preempted)",
	[CAPTURE_OFFCPU_STATE_SLEEP] = "sleep",
	[CAPTURE_OFFCPU_STATE_DISK] = "disk wait (D)",
	[CAPTURE_OFFCPU_STATE_STOPPED] = "stopped (T)",
	[CAPTURE_OFFCPU_STATE_OTHER] = "other",
};

static const char *const cause_words[CAPTURE_OFFCPU_CAUSE_COUNT] = {
	[CAPTURE_OFFCPU_CAUSE_NONE] = "none",
	[CAPTURE_OFFCPU_CAUSE_TASK] = "task",
	[CAPTURE_OFFCPU_CAUSE_HARDIRQ] = "hardirq",
	[CAPTURE_OFFCPU_CAUSE_SOFTIRQ] = "softirq",
	[CAPTURE_OFFCPU_CAUSE_NMI] = "nmi",
};

static const char *state_word(uint32_t state)
{
	return state < CAPTURE_OFFCPU_STATE_COUNT ? state_words[state] : "?";
}

static const char *cause_word(uint32_t cause)
{
	return cause < CAPTURE_OFFCPU_CAUSE_COUNT ? cause_words[cause] : "?";
}

/* "off-CPU: sleep (woken by comm-tid) [start unknown]": malloc'd or NULL. */
static char *interval_name(const struct capture *c, const struct capture_interval *v)
{
	char by[340] = "", waker[300];
	const char *edge = "";
	char *name;

	if (v->cause == CAPTURE_OFFCPU_CAUSE_TASK && v->waker_thread != CAPTURE_NONE) {
		formats__thread_label(c, v->waker_thread, waker, sizeof(waker));
		snprintf(by, sizeof(by), " (woken by %s)", waker);
	} else if (v->cause == CAPTURE_OFFCPU_CAUSE_TASK) {
		snprintf(by, sizeof(by), " (woken by a task)");
	} else if (v->cause != CAPTURE_OFFCPU_CAUSE_NONE) {
		snprintf(by, sizeof(by), " (woken by %s)", cause_word(v->cause));
	}
	if ((v->flags & TRACE_EDGE_FLAGS) == TRACE_EDGE_FLAGS)
		edge = " [start and end unknown]";
	else if (v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN)
		edge = " [start unknown]";
	else if (v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN)
		edge = " [end unknown]";
	if (asprintf(&name, "off-CPU: %s%s%s", state_word(v->state), by, edge) < 0)
		return NULL;
	return name;
}

static int item_cmp(const void *pa, const void *pb)
{
	const struct trace_item *x = pa, *y = pb;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->interval != y->interval)
		return x->interval ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

uint32_t trace__blocking_frame(const struct capture *c, uint32_t stack)
{
	for (; stack != CAPTURE_NONE; stack = c->stacks[stack].parent) {
		uint32_t f = c->stacks[stack].frame;

		if (!(c->frames[f].flags & (CAPTURE_FRAME_F_KERNEL | CAPTURE_FRAME_F_TRUNCATION)))
			return f;
	}
	return CAPTURE_NONE;
}

/*
 * Whether v is a preemption in the code of the sample stack s: their
 * innermost user frames have the same label.  (A preemption's stack is
 * often only that frame under kernel ones, "[no stack copy]" above it, so
 * the thread is taken to resume the sampled code, its stack the sample's.)
 */
static bool preempted_in(const struct trace *t, const struct capture_interval *v, uint32_t s)
{
	uint32_t fs = trace__blocking_frame(t->c, s), fv = trace__blocking_frame(t->c, v->stack);

	return v->state == CAPTURE_OFFCPU_STATE_RUNNABLE && fs != CAPTURE_NONE &&
	       fv != CAPTURE_NONE && (fs == fv || !strcmp(t->labels[fs], t->labels[fv]));
}

/* Collect the items, sort them per thread and time, and draw their spans. */
static int trace_layout(struct trace *t)
{
	const struct capture *c = t->c;
	uint64_t tmin = UINT64_MAX, hard_end = 0, cursor = 0, *ivnext;
	size_t k, kept;
	uint32_t i, s;

	t->items = calloc((size_t)c->nsamples + c->nintervals + 1, sizeof(*t->items));
	if (!t->items)
		return -ENOMEM;
	t->maxdepth = 2;
	for (i = 0; i < c->nsamples; i++) {
		uint32_t d = 2;

		for (s = c->samples[i].stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > t->maxdepth)
			t->maxdepth = d;
		if (c->samples[i].time_ns) {
			t->timed = true;
			if (c->samples[i].time_ns < tmin)
				tmin = c->samples[i].time_ns;
		}
		t->items[t->nitems++] = (struct trace_item){
			.key = c->samples[i].time_ns, .thread = c->samples[i].thread, .id = i };
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint32_t d = 2;

		for (s = v->stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > t->maxdepth)
			t->maxdepth = d;
		t->timed = true;
		if (v->start_ns < tmin)
			tmin = v->start_ns;
		t->ivnames[i] = interval_name(c, v);
		if (!t->ivnames[i])
			return -ENOMEM;
		if (v->flags & TRACE_EDGE_FLAGS)
			t->edge_ivs++;
		t->items[t->nitems++] = (struct trace_item){
			.key = v->start_ns, .thread = v->thread, .id = i, .interval = true };
	}
	qsort(t->items, t->nitems, sizeof(*t->items), item_cmp);
	/* probe records (zones, marks) are drawn at their times too */
	for (i = 0; t->timed && i < c->nprobe_records; i++)
		if (c->probe_records[i].time_ns < tmin)
			tmin = c->probe_records[i].time_ns;
	t->t0 = t->timed ? tmin : 0;
	/* per item, the start of its thread's next interval: no sample span,
	 * moved or not, reaches past it */
	ivnext = calloc(t->nitems + 1, sizeof(*ivnext));
	if (!ivnext)
		return -ENOMEM;
	for (k = t->nitems; k-- > 0;) {
		const struct trace_item *n1 = k + 1 < t->nitems ? &t->items[k + 1] : NULL;

		ivnext[k] = !n1 || n1->thread != t->items[k].thread ? UINT64_MAX
			    : n1->interval ? n1->key : ivnext[k + 1];
	}

	for (k = 0, kept = 0; k < t->nitems; k++) {
		struct trace_item *it = &t->items[k];
		const struct trace_item *next = k + 1 < t->nitems ? &t->items[k + 1] : NULL;
		struct trace_item *prev = kept && t->items[kept - 1].thread == it->thread
						  ? &t->items[kept - 1] : NULL;

		if (next && next->thread != it->thread)
			next = NULL;
		if (!prev)
			hard_end = 0;
		if (it->interval) {
			const struct capture_interval *v = &c->intervals[it->id];

			it->start = v->start_ns;
			it->end = v->end_ns;
			if (it->start < hard_end) {
				/* overlapping intervals of one thread (not from a recorder) */
				it->start = hard_end;
				if (it->end < it->start)
					it->end = it->start;
				it->clamped = true;
				t->clamped_ivs++;
			}
			hard_end = it->end;
			it->resumes = prev && !prev->interval &&
				      preempted_in(t, v, c->samples[prev->id].stack);
		} else {
			const struct capture_sample *smp = &c->samples[it->id];
			uint64_t dur = formats__sample_ns(&c->events[smp->event], c, smp);

			if (t->timed) {
				it->start = smp->time_ns ? smp->time_ns : t->t0;
				if (!dur) {
					t->any_unknown = true;
					/* unknown duration: until the thread's next item, or 1 µs */
					dur = next && next->key > it->start ? next->key - it->start : 1000;
				}
			} else {
				/* no times at all (imported data): laid end to end */
				it->start = cursor;
				if (!dur)
					dur = smp->weight * 1000;
			}
			/* timer jitter: within 1/TRACE_JITTER_DIV of the previous
			 * sample's length of its end, start at its end */
			if (t->timed && prev && !prev->interval) {
				uint64_t tol = (prev->end - prev->start) / TRACE_JITTER_DIV;

				if (it->start >= prev->end - tol && it->start <= prev->end + tol)
					it->start = prev->end;
			}
			if (__builtin_add_overflow(it->start, dur, &it->end))
				it->end = UINT64_MAX;
			cursor = it->end;
			/* not for a next sample that will start at this one's end */
			if (t->timed && next && next->key < it->end &&
			    (next->interval || next->key < it->end - dur / TRACE_JITTER_DIV)) {
				uint64_t to = next->key > it->start ? next->key : it->start;

				/* the rest of its period is drawn after the
				 * interval (trace_resume) */
				if (next->interval)
					it->rest = it->end - to;
				else
					t->cut_short++;
				it->end = to;
			}
			if (t->timed && it->end > ivnext[k]) {
				if (it->start > ivnext[k])
					it->start = ivnext[k];
				if (it->end != ivnext[k])
					t->cut_short++;
				it->end = ivnext[k];
			}
			if (t->timed && it->start < hard_end) {
				if (it->end <= hard_end) {
					t->dropped++;
					continue;
				}
				it->start = hard_end;
				t->trimmed++;
			}
		}
		t->items[kept++] = *it;
	}
	t->nitems = kept;
	free(ivnext);
	return 0;
}

static int leaf_cmp(const void *pa, const void *pb, void *arg)
{
	const struct trace *t = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_interval *x = &t->c->intervals[a], *y = &t->c->intervals[b];
	int d;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	d = strcmp(t->ivnames[a], t->ivnames[b]);
	return d ? d : (a > b) - (a < b);
}

/*
 * Intern the off-CPU leaves: intervals with the same stack and the same
 * name (state, waker, edges) share one "stackFrames" entry, so an interval
 * costs its "samples" entry and its "T" event, not a frame of its own.
 */
static int trace_leaves(struct trace *t)
{
	const struct capture *c = t->c;
	uint32_t *order, i, prev = CAPTURE_NONE;

	if (!c->nintervals)
		return 0;
	order = calloc(c->nintervals, sizeof(*order));
	t->ivleaf = calloc(c->nintervals, sizeof(*t->ivleaf));
	t->leaves = calloc(c->nintervals, sizeof(*t->leaves));
	if (!order || !t->ivleaf || !t->leaves) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < c->nintervals; i++)
		order[i] = i;
	qsort_r(order, c->nintervals, sizeof(*order), leaf_cmp, t);
	for (i = 0; i < c->nintervals; i++) {
		uint32_t v = order[i];

		if (prev == CAPTURE_NONE || c->intervals[v].stack != c->intervals[prev].stack ||
		    strcmp(t->ivnames[v], t->ivnames[prev]))
			t->leaves[t->nleaves++] = (struct trace_leaf){
				.stack = c->intervals[v].stack, .interval = v };
		t->ivleaf[v] = t->nleaves - 1;
		prev = v;
	}
	free(order);
	return 0;
}

/*
 * A sample cut by an off-CPU interval keeps its length: the rest of its
 * period is one more item of the same sample from the interval's end, cut
 * at the thread's next item (its span is a drawing of the CPU time it
 * stands for, so each function keeps its samples x period), unless the
 * interval's end is unknown.  Items are reallocated.
 */
static int trace_resume(struct trace *t)
{
	struct trace_item *items;
	size_t k, n = 0, extra = 0;

	for (k = 0; k < t->nitems; k++)
		extra += t->items[k].rest != 0;
	if (!extra)
		return 0;
	items = calloc(t->nitems + extra, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (k = 0; k < t->nitems; k++) {
		const struct trace_item *it = &t->items[k], *iv, *nx;
		uint64_t start, end;

		items[n++] = *it;
		if (!it->rest)
			continue;
		iv = k + 1 < t->nitems ? &t->items[k + 1] : NULL;
		/* not past an interval cut by the recording's end */
		if (!iv || !iv->interval || iv->thread != it->thread ||
		    (t->c->intervals[iv->id].flags & CAPTURE_INTERVAL_F_END_UNKNOWN)) {
			t->cut_short++;
			continue;
		}
		nx = k + 2 < t->nitems && t->items[k + 2].thread == it->thread ? &t->items[k + 2]
									      : NULL;
		start = iv->end;
		if (__builtin_add_overflow(start, it->rest, &end))
			end = UINT64_MAX;
		if (nx && end > nx->start)
			end = nx->start > start ? nx->start : start;
		if (end - start < it->rest)
			t->cut_short++;
		if (end == start)
			continue;
		items[n++] = *iv;
		items[n++] = (struct trace_item){ .key = start, .start = start, .end = end,
						  .thread = it->thread, .id = it->id };
		t->continued++;
		k++;
	}
	free(t->items);
	t->items = items;
	t->nitems = n;
	return 0;
}

int trace__layout(struct trace *t)
{
	int err = trace_layout(t);

	if (!err)
		err = trace_resume(t);
	if (!err)
		err = trace_leaves(t);
	return err;
}
