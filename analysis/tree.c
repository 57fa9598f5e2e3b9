// SPDX-License-Identifier: MIT
/*
 * Top-down call tree.  Samples are aggregated per (root, stack) first.
 * Phase 1 maps each distinct capture stack row to a node of the function
 * tree G, once (memoized), hashing (parent node, key) to merge rows whose
 * frames have equal keys.  Without thread roots G is the result; with them,
 * phase 2 copies the G paths each thread uses under its root with dense,
 * generation-stamped arrays.  The cost follows the distinct stacks, not the
 * samples.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct tree_storage {
	struct analysis_node *nodes;
	uint32_t nnodes, cap;
	struct u64map children; /* (parent node << 32 | key) -> node, see tree_child */
};

/*
 * The child of parent with key, created if new; U64MAP_EMPTY on ENOMEM.
 *
 * Most nodes have one child (a deep stack is a chain), so the hash map only
 * holds the children of parents with two or more: while the tree is built,
 * a node's first_child is its child looked up last (a hint) and nchildren
 * is 1 once its children are in the map.  tree_finish resets both.
 */
static uint32_t tree_child(struct tree_storage *st, uint32_t parent, uint32_t key)
{
	struct analysis_node *p = &st->nodes[parent];
	uint32_t id = st->nnodes, hint = p->first_child;
	bool inserted = true;

	if (hint != CAPTURE_NONE && st->nodes[hint].key == key)
		return hint;
	if (hint != CAPTURE_NONE && !p->nchildren) {
		/* a second child: the first one joins the map */
		if (u64map__upsert(&st->children, (uint64_t)parent << 32 | st->nodes[hint].key,
				   &hint, &inserted))
			return U64MAP_EMPTY;
		p->nchildren = 1;
	}
	if (p->nchildren &&
	    u64map__upsert(&st->children, (uint64_t)parent << 32 | key, &id, &inserted))
		return U64MAP_EMPTY;
	if (inserted) {
		/* the map entry, if any, is never looked up again after ENOMEM */
		if (analysis__grow((void **)&st->nodes, &st->cap, (uint64_t)st->nnodes + 1,
				   sizeof(*st->nodes)))
			return U64MAP_EMPTY;
		st->nodes[id] = (struct analysis_node){
			.key = key,
			.parent = parent,
			.first_child = CAPTURE_NONE,
			.next_sibling = CAPTURE_NONE,
			.depth = st->nodes[parent].depth + 1,
		};
		st->nnodes++;
	}
	st->nodes[parent].first_child = id;
	return id;
}

/*
 * Phase 1 maps each used capture stack row to a node of the function tree
 * without thread roots (G), merging rows whose frames share keys: memo[s]
 * is row s's G node.  Rows are resolved once, whatever their sample count.
 */
struct tree_build {
	const struct capture *c;
	const struct analysis_names *names;
	const uint8_t *frame_hidden; /* [nframes] the filter's hide, or NULL */
	uint32_t *memo; /* [nstacks] G node of a stack row, or CAPTURE_NONE */
	uint32_t *walk; /* scratch: rows or nodes from a leaf up to a known one */
	uint32_t walk_cap;
};

static int walk_push(struct tree_build *b, uint32_t nwalk, uint32_t v)
{
	if (analysis__grow((void **)&b->walk, &b->walk_cap, (uint64_t)nwalk + 1, sizeof(*b->walk)))
		return -ENOMEM;
	b->walk[nwalk] = v;
	return 0;
}

/* The G node of capture stack row s; U64MAP_EMPTY on ENOMEM. */
static uint32_t tree_resolve(struct tree_storage *g, struct tree_build *b, uint32_t s)
{
	uint32_t nwalk = 0, node = 0;

	while (s != CAPTURE_NONE && b->memo[s] == CAPTURE_NONE) {
		if (walk_push(b, nwalk++, s))
			return U64MAP_EMPTY;
		s = b->c->stacks[s].parent;
	}
	if (s != CAPTURE_NONE)
		node = b->memo[s];
	while (nwalk--) {
		uint32_t key;

		s = b->walk[nwalk];
		key = analysis_names__row_key(b->names, s);
		/* A folded frame (an inlined call) charges the node that holds it. */
		if (key != ANALYSIS_KEY_FOLDED &&
		    !(b->frame_hidden && b->frame_hidden[b->c->stacks[s].frame]))
			node = tree_child(g, node, key);
		if (node == U64MAP_EMPTY)
			return U64MAP_EMPTY;
		b->memo[s] = node;
	}
	return node;
}

/* Append a node under parent to st; no merging.  U64MAP_EMPTY on ENOMEM. */
static uint32_t tree_append(struct tree_storage *st, uint32_t parent, uint32_t key)
{
	if (analysis__grow((void **)&st->nodes, &st->cap, (uint64_t)st->nnodes + 1,
			   sizeof(*st->nodes)))
		return U64MAP_EMPTY;
	st->nodes[st->nnodes] = (struct analysis_node){
		.key = key,
		.parent = parent,
		.first_child = CAPTURE_NONE,
		.next_sibling = CAPTURE_NONE,
		.depth = parent == CAPTURE_NONE ? 0 : st->nodes[parent].depth + 1,
	};
	return st->nnodes++;
}

/*
 * Phase 2, per thread: copy the G path of each row under its thread root.
 * Rows come grouped by root, and a root's (G node -> node) memo is stamped
 * with the group's generation, so no hashing is needed: G already merged
 * equal keys, and distinct G nodes stay distinct under one root.
 */
struct thread_build {
	uint32_t *node; /* [G nnodes] node under the current root */
	uint32_t *gen;	/* [G nnodes] generation node[] is valid for */
	uint32_t cur;
};

static uint32_t tree_copy_path(struct tree_storage *st, const struct tree_storage *g,
			       struct tree_build *b, struct thread_build *tb, uint32_t base,
			       uint32_t gn)
{
	uint32_t nwalk = 0, node = base;

	while (gn != 0 && tb->gen[gn] != tb->cur) {
		if (walk_push(b, nwalk++, gn))
			return U64MAP_EMPTY;
		gn = g->nodes[gn].parent;
	}
	if (gn != 0)
		node = tb->node[gn];
	while (nwalk--) {
		gn = b->walk[nwalk];
		node = tree_append(st, node, g->nodes[gn].key);
		if (node == U64MAP_EMPTY)
			return U64MAP_EMPTY;
		tb->node[gn] = node;
		tb->gen[gn] = tb->cur;
	}
	return node;
}

/* Children order: total descending, then key rank. */
static int child_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct analysis_tree *t = ctx;
	const struct analysis_node *a = &t->nodes[*(const uint32_t *)pa];
	const struct analysis_node *b = &t->nodes[*(const uint32_t *)pb];

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return analysis__key_cmp(t->names, a->key, b->key);
}

/* Totals from selves, then children bucketed by parent and sorted, then linked. */
static int tree_finish(struct analysis_tree *t, struct tree_storage *st)
{
	uint32_t *order = NULL, *start = NULL, i, j;
	int err = -ENOMEM;

	/* A parent's id is smaller than its children's. */
	for (i = 0; i < st->nnodes; i++) {
		st->nodes[i].total = st->nodes[i].self;
		st->nodes[i].nchildren = 0;
		st->nodes[i].first_child = CAPTURE_NONE; /* a hint of tree_child until now */
	}
	for (i = st->nnodes - 1; i > 0; i--) {
		struct analysis_node *n = &st->nodes[i];

		analysis__sat_add(&st->nodes[n->parent].total, n->total);
		st->nodes[n->parent].samples += n->samples;
		st->nodes[n->parent].nchildren++;
	}
	t->nodes = st->nodes;
	t->nnodes = st->nnodes;

	order = malloc((size_t)st->nnodes * sizeof(*order));
	start = malloc(((size_t)st->nnodes + 1) * sizeof(*start));
	if (!order || !start)
		goto cleanup;
	/* Counting sort by parent: start[p] is where p's children begin. */
	for (i = 0, j = 0; i < st->nnodes; i++) {
		start[i] = j;
		j += st->nodes[i].nchildren;
	}
	start[st->nnodes] = j;
	for (i = 1; i < st->nnodes; i++)
		order[start[st->nodes[i].parent]++] = i;
	for (i = 0, j = 0; i < st->nnodes; i++) {
		uint32_t n = st->nodes[i].nchildren, k;

		/* start[i] now points past i's children. */
		if (!n)
			continue;
		j = start[i] - n;
		if (n > 1)
			qsort_r(order + j, n, sizeof(*order), child_cmp, t);
		st->nodes[i].first_child = order[j];
		for (k = 0; k + 1 < n; k++)
			st->nodes[order[j + k]].next_sibling = order[j + k + 1];
	}
	err = 0;
cleanup:
	free(order);
	free(start);
	return err;
}

static void tree_storage__free(struct tree_storage *st)
{
	if (!st)
		return;
	free(st->nodes);
	u64map__release(&st->children);
	free(st);
}

struct analysis_tree *analysis_tree__new(const struct analysis_names *names,
					 const struct analysis_query *q)
{
	const struct capture *c = names->capture;
	struct tree_build b = { .c = c, .names = names };
	struct thread_build tb = { 0 };
	struct analysis_agg *rows = NULL;
	struct analysis_tree *t = NULL;
	struct tree_storage *g = NULL, *st = NULL;
	uint32_t nrows = 0, i, *leaf = NULL, base = 0;
	int err;

	err = analysis__aggregate(names, q, &rows, &nrows);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	t = calloc(1, sizeof(*t));
	g = calloc(1, sizeof(*g));
	b.memo = malloc(((size_t)c->nstacks + 1) * sizeof(*b.memo));
	leaf = malloc(((size_t)nrows + 1) * sizeof(*leaf));
	if (!t || !g || !b.memo || !leaf)
		goto cleanup;
	t->names = names;
	t->query = *q;
	memset(b.memo, 0xff, ((size_t)c->nstacks + 1) * sizeof(*b.memo));
	b.frame_hidden = q->filter ? q->filter->frame_hidden : NULL;
	if (tree_append(g, CAPTURE_NONE, CAPTURE_NONE) == U64MAP_EMPTY)
		goto cleanup;

	/* Phase 1: the G leaf of every row. */
	for (i = 0; i < nrows; i++) {
		if (rows[i].stack == CAPTURE_NONE)
			leaf[i] = tree_child(g, 0, names->empty_stack_key);
		else
			leaf[i] = tree_resolve(g, &b, rows[i].stack);
		if (leaf[i] != U64MAP_EMPTY && rows[i].clipped)
			leaf[i] = tree_child(g, leaf[i], names->clipped_key);
		if (leaf[i] == U64MAP_EMPTY)
			goto cleanup;
	}
	u64map__release(&g->children);

	if (!q->per_thread) {
		st = g; /* G is the tree */
		g = NULL;
		for (i = 0; i < nrows; i++) {
			analysis__sat_add(&st->nodes[leaf[i]].self, rows[i].weight);
			st->nodes[leaf[i]].samples += rows[i].samples;
		}
	} else {
		/* Phase 2: under each thread root, a copy of the G paths it uses. */
		st = calloc(1, sizeof(*st));
		tb.node = malloc((size_t)g->nnodes * sizeof(*tb.node));
		tb.gen = calloc(g->nnodes, sizeof(*tb.gen));
		if (!st || !tb.node || !tb.gen ||
		    tree_append(st, CAPTURE_NONE, CAPTURE_NONE) == U64MAP_EMPTY)
			goto cleanup;
		for (i = 0; i < nrows; i++) {
			uint32_t n;

			if (i == 0 || rows[i].root != rows[i - 1].root) {
				tb.cur++;
				base = tree_append(st, 0, rows[i].root);
				if (base == U64MAP_EMPTY)
					goto cleanup;
			}
			n = tree_copy_path(st, g, &b, &tb, base, leaf[i]);
			if (n == U64MAP_EMPTY)
				goto cleanup;
			analysis__sat_add(&st->nodes[n].self, rows[i].weight);
			st->nodes[n].samples += rows[i].samples;
		}
	}
	t->storage = st;
	err = tree_finish(t, st);
	st = NULL;
cleanup:
	free(rows);
	free(leaf);
	free(b.memo);
	free(b.walk);
	free(tb.node);
	free(tb.gen);
	tree_storage__free(g);
	tree_storage__free(st);
	if (err) {
		analysis_tree__free(t);
		errno = -err;
		return NULL;
	}
	return t;
}

void analysis_tree__free(struct analysis_tree *t)
{
	struct tree_storage *st;

	if (!t)
		return;
	st = t->storage;
	if (st) {
		free(st->nodes);
		u64map__release(&st->children);
		free(st);
	}
	free(t);
}
