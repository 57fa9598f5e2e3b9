// SPDX-License-Identifier: MIT
/*
 * The shape of a capture's call tree: the function tree (keys merged, no
 * thread roots) of every stack row, built once, so that a query's weights
 * can be laid on it in one pass over the samples instead of building a
 * tree per query.  Node ids depend only on the capture (rows in order), so
 * they stay the same whatever a query filters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct shape_storage {
	struct analysis_shape_node *nodes;
	uint32_t *stack_node;
	uint32_t cap;
};

static uint32_t shape_child(struct analysis_shape *sh, struct shape_storage *st,
			    struct u64map *children, uint32_t parent, uint32_t key)
{
	uint32_t id = sh->nnodes;
	bool inserted;

	if (u64map__upsert(children, (uint64_t)parent << 32 | key, &id, &inserted))
		return U64MAP_EMPTY;
	if (!inserted)
		return id;
	if (analysis__grow((void **)&st->nodes, &st->cap, (uint64_t)sh->nnodes + 1,
			   sizeof(*st->nodes)))
		return U64MAP_EMPTY;
	st->nodes[id] = (struct analysis_shape_node){ .key = key, .parent = parent };
	sh->nodes = st->nodes;
	sh->nnodes++;
	return id;
}

int analysis_shape__new(const struct analysis_names *n, struct analysis_shape **out)
{
	const struct capture *c = n->capture;
	struct analysis_shape *sh = NULL;
	struct shape_storage *st = NULL;
	struct u64map children;
	uint32_t i, node;
	int err = -ENOMEM;

	*out = NULL;
	u64map__init(&children);
	sh = calloc(1, sizeof(*sh));
	if (!sh)
		goto cleanup;
	st = calloc(1, sizeof(*st));
	if (!st)
		goto cleanup;
	sh->storage = st; /* freed with sh from here on */
	sh->names = n;
	st->stack_node = malloc(((size_t)c->nstacks + 1) * sizeof(*st->stack_node));
	if (!st->stack_node)
		goto cleanup;
	sh->stack_node = st->stack_node;
	if (analysis__grow((void **)&st->nodes, &st->cap, 1, sizeof(*st->nodes)))
		goto cleanup;
	st->nodes[0] = (struct analysis_shape_node){ .key = CAPTURE_NONE, .parent = CAPTURE_NONE };
	sh->nodes = st->nodes;
	sh->nnodes = 1;
	/* A row's parent row comes first, so its node is known. */
	for (i = 0; i < c->nstacks; i++) {
		uint32_t parent = c->stacks[i].parent;
		uint32_t up = parent == CAPTURE_NONE ? 0 : st->stack_node[parent];
		uint32_t key = analysis_names__row_key(n, i);

		/* A folded row (an inlined call, a run of one module) is its caller's node. */
		node = key == ANALYSIS_KEY_FOLDED ? up : shape_child(sh, st, &children, up, key);
		if (node == U64MAP_EMPTY)
			goto cleanup;
		st->stack_node[i] = node;
	}
	node = shape_child(sh, st, &children, 0, n->empty_stack_key);
	if (node == U64MAP_EMPTY)
		goto cleanup;
	st->stack_node[c->nstacks] = node;
	*out = sh;
	sh = NULL;
	err = 0;
cleanup:
	u64map__release(&children);
	analysis_shape__free(sh);
	return err;
}

void analysis_shape__free(struct analysis_shape *sh)
{
	struct shape_storage *st;

	if (!sh)
		return;
	st = sh->storage;
	if (st) {
		free(st->nodes);
		free(st->stack_node);
		free(st);
	}
	free(sh);
}

int analysis_shape__weigh(const struct analysis_shape *sh, const struct analysis_query *q,
			  struct analysis_weights *w)
{
	const struct capture *c = sh->names->capture;
	uint32_t i;
	int err;

	memset(w, 0, sizeof(*w));
	err = analysis_query__check(c, q);
	if (err)
		return err;
	if (q->per_thread || q->wall || (q->filter && q->filter->frame_hidden))
		return -EINVAL;
	w->self = calloc(sh->nnodes, sizeof(*w->self));
	w->total = calloc(sh->nnodes, sizeof(*w->total));
	if (!w->self || !w->total) {
		analysis_weights__release(w);
		return -ENOMEM;
	}
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];

		if (!analysis_query__match(q, s))
			continue;
		analysis__sat_add(&w->self[sh->stack_node[s->stack == CAPTURE_NONE ? c->nstacks
										   : s->stack]],
				  s->weight);
		w->samples++;
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];

		if (!analysis_query__match_interval(q, v))
			continue;
		analysis__sat_add(&w->self[sh->stack_node[v->stack == CAPTURE_NONE ? c->nstacks
										   : v->stack]],
				  v->weight);
		w->samples++;
	}
	/* A parent's id is smaller than its children's: one backward pass. */
	for (i = sh->nnodes; i-- > 0;) {
		analysis__sat_add(&w->total[i], w->self[i]);
		if (i)
			analysis__sat_add(&w->total[sh->nodes[i].parent], w->total[i]);
	}
	return 0;
}

void analysis_weights__release(struct analysis_weights *w)
{
	free(w->self);
	free(w->total);
	memset(w, 0, sizeof(*w));
}
