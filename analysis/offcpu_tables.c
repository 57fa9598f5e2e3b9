// SPDX-License-Identifier: MIT
/*
 * Off-CPU totals grouped the ways a waiting program is read: by the user
 * function that blocked (the innermost frame that is neither kernel nor
 * a truncation mark; for a stack with none, the innermost kernel frame
 * that is not the scheduler's own or its wakeup plumbing), by the waker's thread and function,
 * and by state.  Only complete intervals unless the query includes the
 * incomplete ones; each interval counted once.  Pure and deterministic:
 * rows by nanoseconds descending, then id.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define EDGE_FLAGS (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)

/* The scheduler's own functions and its wakeup plumbing: what every
 * off-CPU stack ends in and every waker stack ends in. */
static bool is_scheduler(const char *name)
{
	static const char *const prefixes[] = {
		"schedule",	       "__schedule",	    "preempt_schedule",
		"io_schedule",	       "__cond_resched",    "finish_task_switch",
		"__switch_to",	       "context_switch",    "try_to_wake_up",
		"wake_up",	       "__wake_up",	    "autoremove_wake_function",
		"default_wake_function", "hrtimer_wakeup",  "ttwu_",
	};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

uint32_t analysis__blocking_key(const struct analysis_names *n, uint32_t stack)
{
	const struct capture *c = n->capture;
	uint32_t s, fallback = CAPTURE_NONE;

	for (s = stack; s != CAPTURE_NONE; s = c->stacks[s].parent) {
		uint32_t k = analysis_names__row_key(n, s);

		if (k == ANALYSIS_KEY_FOLDED)
			continue;
		switch (n->keys[k].kind) {
		case ANALYSIS_KEY_TRUNCATION:
		case ANALYSIS_KEY_THREAD:
			continue;
		case ANALYSIS_KEY_KERNEL:
			if (fallback == CAPTURE_NONE && !is_scheduler(n->keys[k].name))
				fallback = k;
			continue;
		default:
			return k;
		}
	}
	return fallback;
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct analysis_offcpu_group *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->cause < b->cause ? -1 : a->cause > b->cause;
}

int analysis_offcpu_table__init(struct analysis_offcpu_table *t, const struct analysis_names *n,
				const struct analysis_query *q, enum analysis_offcpu_by by)
{
	const struct capture *c = n->capture;
	struct analysis_offcpu_group *acc = NULL;
	uint32_t slots, i, none;
	int err;

	memset(t, 0, sizeof(*t));
	err = analysis_query__check(c, q);
	if (err)
		return err;
	switch (by) {
	case ANALYSIS_OFFCPU_BY_BLOCKER:
	case ANALYSIS_OFFCPU_BY_WAKER_FUNCTION:
		slots = n->nkeys;
		break;
	case ANALYSIS_OFFCPU_BY_WAKER_THREAD:
		slots = c->nthreads;
		break;
	case ANALYSIS_OFFCPU_BY_STATE:
		slots = CAPTURE_OFFCPU_STATE_COUNT;
		break;
	default:
		return -EINVAL;
	}
	none = slots; /* the last slots: no blocker / no waker, by cause */
	acc = calloc((size_t)slots + CAPTURE_OFFCPU_CAUSE_COUNT, sizeof(*acc));
	if (!acc)
		return -ENOMEM;
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint32_t id;

		if (v->event != q->event || (q->thread != CAPTURE_NONE && v->thread != q->thread) ||
		    v->start_ns < q->start_ns || (q->end_ns && v->start_ns >= q->end_ns))
			continue;
		if (q->complete_only && (v->flags & EDGE_FLAGS))
			continue;
		if (!analysis_filter__stack(q->filter, v->stack))
			continue;
		switch (by) {
		case ANALYSIS_OFFCPU_BY_BLOCKER:
			id = analysis__blocking_key(n, v->stack);
			break;
		case ANALYSIS_OFFCPU_BY_WAKER_FUNCTION:
			id = v->waker_stack == CAPTURE_NONE ? CAPTURE_NONE
							    : analysis__blocking_key(n, v->waker_stack);
			break;
		case ANALYSIS_OFFCPU_BY_WAKER_THREAD:
			id = v->waker_thread;
			break;
		default:
			id = v->state < CAPTURE_OFFCPU_STATE_COUNT ? v->state : CAPTURE_NONE;
		}
		if (id == CAPTURE_NONE || id >= slots) {
			uint32_t cause = 0;

			/* an interrupt wakes with no waker thread: say which */
			if (by == ANALYSIS_OFFCPU_BY_WAKER_THREAD &&
			    (v->cause == CAPTURE_OFFCPU_CAUSE_HARDIRQ ||
			     v->cause == CAPTURE_OFFCPU_CAUSE_SOFTIRQ))
				cause = v->cause;
			id = none + cause;
			acc[id].cause = cause;
		}
		acc[id].id = id >= none ? CAPTURE_NONE : id;
		acc[id].count++;
		analysis__sat_add(&acc[id].ns, v->weight);
		analysis__sat_add(&t->total_ns, v->weight);
		if (v->flags & EDGE_FLAGS) {
			analysis__sat_add(&acc[id].clipped_ns, v->weight);
			analysis__sat_add(&t->clipped_ns, v->weight);
		}
	}
	for (i = 0; i < slots + CAPTURE_OFFCPU_CAUSE_COUNT; i++)
		if (acc[i].count)
			acc[t->nrows++] = acc[i];
	qsort(acc, t->nrows, sizeof(*acc), group_cmp);
	t->rows = acc;
	return 0;
}

void analysis_offcpu_table__release(struct analysis_offcpu_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
