// SPDX-License-Identifier: MIT
/*
 * Off-CPU intervals grouped by state, blocking function or waker.  Group
 * ids are small dense spaces (states, causes, keys), so one dense array of
 * (kind, id) slots accumulates and a sort by ns orders the result.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

uint32_t analysis__blocking_key(const struct analysis_names *n, uint32_t stack)
{
	const struct capture *c = n->capture;
	uint32_t s, innermost;

	if (stack == CAPTURE_NONE)
		return n->empty_stack_key;
	innermost = n->frame_keys[c->stacks[stack].frame];
	for (s = stack; s != CAPTURE_NONE; s = c->stacks[s].parent) {
		uint32_t key = n->frame_keys[c->stacks[s].frame];
		uint32_t kind = n->keys[key].kind;

		if (kind == ANALYSIS_KEY_FUNCTION || kind == ANALYSIS_KEY_INLINE)
			return key;
	}
	return innermost;
}

static int group_cmp(const void *pa, const void *pb)
{
	const struct analysis_offcpu_group *a = pa, *b = pb;

	if (a->ns != b->ns)
		return a->ns > b->ns ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int analysis_offcpu_groups__init(struct analysis_offcpu_groups *g,
				 const struct analysis_names *n, const struct analysis_query *q,
				 enum analysis_offcpu_by by)
{
	const struct capture *c = n->capture;
	/* slots: states, then causes, then keys */
	uint32_t nslots = CAPTURE_OFFCPU_STATE_COUNT + CAPTURE_OFFCPU_CAUSE_COUNT + n->nkeys;
	struct analysis_offcpu_group *slots = NULL;
	uint32_t i, nrows = 0;
	int err;

	memset(g, 0, sizeof(*g));
	err = analysis_query__check(c, q);
	if (err)
		return err;
	if (by != ANALYSIS_OFFCPU_BY_STATE && by != ANALYSIS_OFFCPU_BY_FUNCTION &&
	    by != ANALYSIS_OFFCPU_BY_WAKER)
		return -EINVAL;
	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint32_t slot, kind, id;

		if (!analysis_query__match_interval(q, v))
			continue;
		if (by == ANALYSIS_OFFCPU_BY_STATE) {
			kind = ANALYSIS_GROUP_STATE;
			id = v->state < CAPTURE_OFFCPU_STATE_COUNT ? v->state
								   : CAPTURE_OFFCPU_STATE_OTHER;
			slot = id;
		} else if (by == ANALYSIS_OFFCPU_BY_FUNCTION ||
			   (v->cause == CAPTURE_OFFCPU_CAUSE_TASK && v->waker_thread != CAPTURE_NONE)) {
			kind = ANALYSIS_GROUP_KEY;
			id = by == ANALYSIS_OFFCPU_BY_FUNCTION ? analysis__blocking_key(n, v->stack)
							       : n->thread_keys[v->waker_thread];
			slot = CAPTURE_OFFCPU_STATE_COUNT + CAPTURE_OFFCPU_CAUSE_COUNT + id;
		} else {
			kind = ANALYSIS_GROUP_CAUSE;
			id = v->cause < CAPTURE_OFFCPU_CAUSE_COUNT ? v->cause
								   : CAPTURE_OFFCPU_CAUSE_NONE;
			slot = CAPTURE_OFFCPU_STATE_COUNT + id;
		}
		slots[slot].kind = kind;
		slots[slot].id = id;
		slots[slot].count++;
		analysis__sat_add(&slots[slot].ns, v->weight);
		g->count++;
		analysis__sat_add(&g->ns, v->weight);
	}
	for (i = 0; i < nslots; i++)
		if (slots[i].count)
			slots[nrows++] = slots[i];
	qsort(slots, nrows, sizeof(*slots), group_cmp);
	g->rows = slots;
	g->nrows = nrows;
	return 0;
}

void analysis_offcpu_groups__release(struct analysis_offcpu_groups *g)
{
	free(g->rows);
	memset(g, 0, sizeof(*g));
}
