// SPDX-License-Identifier: MIT
/*
 * /api/ views over analysis/ results: flame graph (a call tree pruned by
 * share and capped in nodes), call-tree pages, flat table, lanes, off-CPU
 * intervals and groups, diff.  Each selects and pages what analysis/
 * computed; none aggregates capture rows.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

static json_t *key_json(const struct analysis_names *n, uint32_t key)
{
	if (key == CAPTURE_NONE)
		return json_pack("{s:s,s:s}", "name", "all", "kind", "root");
	return json_pack("{s:s,s:s}", "name", n->keys[key].name, "kind",
			 api__key_kind(n->keys[key].kind));
}

/*
 * Key's function identity on its row o, apart from its display name:
 * "function" (the recorded name, as /api/source's function= takes it) and,
 * for an interpreted frame, "file" (a Python function is one per name and
 * file).  Nothing for threads, truncation marks, modules and unnamed code.
 */
static int key_identity(const struct analysis_names *n, uint32_t key, json_t *o)
{
	const struct capture *c = n->capture;
	const struct capture_frame *f;
	json_t *fn, *file;

	if (key == CAPTURE_NONE || n->keys[key].frame == CAPTURE_NONE ||
	    n->options.granularity == ANALYSIS_GRANULARITY_MODULE)
		return 0;
	f = &c->frames[n->keys[key].frame];
	if ((f->flags & CAPTURE_FRAME_F_TRUNCATION) || !capture__string(c, f->function)[0])
		return 0;
	/* A name that is no UTF-8 has no JSON form: the row keeps its label only. */
	fn = json_string(capture__string(c, f->function));
	if (!fn)
		return 0;
	if (api__set(o, "function", fn))
		return -ENOMEM;
	if (!(f->flags & CAPTURE_FRAME_F_INTERPRETED))
		return 0;
	file = json_string(capture__string(c, f->file));
	return file ? api__set(o, "file", file) : 0;
}

int api__head(struct api_ctx *ctx, json_t *out, uint64_t total)
{
	const struct capture_event *e = &ctx->c->events[ctx->q.event];

	if (api__set(out, "event", json_string(capture__string(ctx->c, e->name))) ||
	    api__set(out, "unit", json_string(capture__string(ctx->c, e->unit))) ||
	    api__set(out, "total", api__u64(total)))
		return -ENOMEM;
	return 0;
}

/* The query's call tree (shared from the profile's cache when unfiltered). */
static struct analysis_tree *tree_new(struct api_ctx *ctx, int *rc, bool *owned)
{
	struct analysis_tree *t;

	/* A label scope is this request's own view: its tree is its own too. */
	if (ctx->scope) {
		*owned = true;
		t = analysis_tree__new(ctx->names, &ctx->q);
	} else {
		t = serve_profile__tree(ctx->p, ctx->sq->look, ctx->sq->granularity, &ctx->q,
					owned);
	}

	*rc = t ? 0 : errno == EINVAL ? api__fail(ctx, "bad query") : -ENOMEM;
	return t;
}

static void tree_put(struct analysis_tree *t, bool owned)
{
	if (owned)
		analysis_tree__free(t);
}

/* Node order for the cap: total descending, then id (a parent before its children). */
struct node_order {
	uint64_t total;
	uint32_t id;
	uint32_t reserved;
};

static int order_cmp(const void *pa, const void *pb)
{
	const struct node_order *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/*
 * Flame graph nodes: those whose total is at least min_share of the root's
 * (and always the root); a child's total never exceeds its parent's, so the
 * kept nodes form a subtree.  Over the cap the largest win: by (total desc,
 * id) a parent sorts before its children, so the cut stays a subtree.
 * Sets kept[id] for the nodes to send and *nonzero to the count of nodes
 * with weight (and the root); returns how many are kept, or -ENOMEM.
 */
static int64_t flame_select(const struct analysis_node *tnodes, const uint64_t *totals,
			    uint32_t nnodes, double min_share, uint32_t max_nodes, uint8_t *kept,
			    uint32_t *nonzero)
{
	struct node_order *keep = malloc((size_t)nnodes * sizeof(*keep));
	uint64_t root = tnodes ? tnodes[0].total : totals[0];
	uint64_t threshold = (uint64_t)((double)root * min_share / 100.0);
	uint32_t i, nkeep = 0, nout;

	if (!keep)
		return -ENOMEM;
	*nonzero = 0;
	for (i = 0; i < nnodes; i++) {
		uint64_t total = tnodes ? tnodes[i].total : totals[i];

		*nonzero += !i || total;
		if (!i || (total >= threshold && total))
			keep[nkeep++] = (struct node_order){ .total = total, .id = i };
	}
	nout = nkeep;
	if (nout > max_nodes) {
		qsort(keep, nkeep, sizeof(*keep), order_cmp);
		nout = max_nodes;
	}
	for (i = 0; i < nout; i++)
		kept[keep[i].id] = 1;
	free(keep);
	return nout;
}

static int flame_node(struct api_ctx *ctx, json_t *arr, uint32_t id, uint32_t key,
		      uint32_t parent, uint64_t self, uint64_t total)
{
	json_t *o = key_json(ctx->names, key);

	if (!o || json_array_append_new(arr, o) || api__set(o, "id", json_integer(id)) ||
	    api__set(o, "parent", parent == CAPTURE_NONE ? json_integer(-1) : json_integer(parent)) ||
	    api__set(o, "self", api__u64(self)) || api__set(o, "total", api__u64(total)))
		return -ENOMEM;
	return 0;
}

int api__flamegraph(struct api_ctx *ctx, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	const struct analysis_shape *sh = NULL;
	const struct analysis_weights *wp = NULL;
	struct analysis_weights mine = { 0 };
	struct analysis_tree *t = NULL;
	bool owned = false;
	uint8_t *kept = NULL;
	uint32_t i, nnodes, nonzero = 0;
	int64_t nout;
	json_t *arr;
	int rc;

	/* Without thread roots the weights go on the capture's tree shape (node
	 * ids then stay the same whatever the filters); with them, a tree. */
	if (!ctx->q.per_thread && !ctx->scope) {
		sh = serve_profile__shape(ctx->p, sq->look, sq->granularity);
		if (!sh)
			return -ENOMEM;
		/* Unfiltered (every page load's first view) from the profile's cache. */
		wp = serve_profile__weights(ctx->p, sq->look, sq->granularity, &ctx->q, &mine, &rc);
		if (!wp)
			return rc == -EINVAL ? api__fail(ctx, "bad query") : rc;
		nnodes = sh->nnodes;
	} else {
		t = tree_new(ctx, &rc, &owned);
		if (!t)
			return rc;
		nnodes = t->nnodes;
	}
	rc = -ENOMEM;
	kept = calloc(nnodes, 1);
	if (!kept)
		goto cleanup;
	nout = flame_select(t ? t->nodes : NULL, wp ? wp->total : NULL, nnodes, sq->min_share, sq->max_nodes,
			    kept, &nonzero);
	if (nout < 0)
		goto cleanup;
	arr = json_array();
	if (api__head(ctx, out, t ? t->nodes[0].total : wp->total[0]) ||
	    api__set(out, "samples", api__u64(t ? t->nodes[0].samples : wp->samples)) ||
	    api__set(out, "min_share", json_real(sq->min_share)) ||
	    api__set(out, "pruned", json_integer(nonzero - (uint32_t)nout)) ||
	    api__set(out, "nodes", arr))
		goto cleanup;
	/* In id order: a parent before its children. */
	for (i = 0; i < nnodes; i++) {
		if (!kept[i])
			continue;
		if (t ? flame_node(ctx, arr, i, t->nodes[i].key, t->nodes[i].parent,
				   t->nodes[i].self, t->nodes[i].total)
		      : flame_node(ctx, arr, i, sh->nodes[i].key, sh->nodes[i].parent, wp->self[i],
				   wp->total[i]))
			goto cleanup;
	}
	rc = 0;
cleanup:
	free(kept);
	analysis_weights__release(&mine);
	tree_put(t, owned);
	return rc;
}

int api__calltree(struct api_ctx *ctx, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	const struct analysis_node *nd;
	struct analysis_tree *t;
	bool owned;
	json_t *arr, *node;
	uint32_t ch, i;
	int rc;

	t = tree_new(ctx, &rc, &owned);
	if (!t)
		return rc;
	if (sq->node >= t->nnodes) {
		rc = api__fail(ctx, "node: %u is not a node of this tree (0 to %u)", sq->node,
			       t->nnodes - 1);
		goto cleanup;
	}
	rc = -ENOMEM;
	nd = &t->nodes[sq->node];
	node = key_json(ctx->names, nd->key);
	arr = json_array();
	if (api__head(ctx, out, t->nodes[0].total) || api__set(out, "node", node) ||
	    api__set(node, "id", json_integer(sq->node)) ||
	    api__set(node, "self", api__u64(nd->self)) ||
	    api__set(node, "total", api__u64(nd->total)) ||
	    api__set(out, "nchildren", json_integer(nd->nchildren)) ||
	    api__set(out, "offset", json_integer(sq->offset)) || api__set(out, "children", arr))
		goto cleanup;
	for (i = 0, ch = nd->first_child; ch != CAPTURE_NONE && i < sq->offset + sq->limit;
	     ch = t->nodes[ch].next_sibling, i++) {
		const struct analysis_node *c = &t->nodes[ch];
		json_t *o;

		if (i < sq->offset)
			continue;
		o = key_json(ctx->names, c->key);
		if (!o || json_array_append_new(arr, o) || api__set(o, "id", json_integer(ch)) ||
		    api__set(o, "self", api__u64(c->self)) ||
		    api__set(o, "total", api__u64(c->total)) ||
		    api__set(o, "nchildren", json_integer(c->nchildren)))
			goto cleanup;
	}
	rc = 0;
cleanup:
	tree_put(t, owned);
	return rc;
}

int api__flat(struct api_ctx *ctx, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	struct analysis_flat *f = NULL;
	struct analysis_tree *t;
	bool owned;
	json_t *arr;
	uint32_t i;
	int rc;

	t = tree_new(ctx, &rc, &owned);
	if (!t)
		return rc;
	rc = -ENOMEM;
	f = analysis_flat__new(t, sq->sort == SERVE_SORT_TOTAL ? ANALYSIS_SORT_TOTAL
							       : ANALYSIS_SORT_SELF);
	if (!f)
		goto cleanup;
	arr = json_array();
	if (api__head(ctx, out, f->total_weight) || api__set(out, "nrows", json_integer(f->nrows)) ||
	    api__set(out, "offset", json_integer(sq->offset)) ||
	    api__set(out, "sort", json_string(sq->sort == SERVE_SORT_TOTAL ? "total" : "self")) ||
	    api__set(out, "rows", arr))
		goto cleanup;
	for (i = sq->offset; i < f->nrows && i - sq->offset < sq->limit; i++) {
		json_t *o = key_json(ctx->names, f->rows[i].key);

		if (!o || json_array_append_new(arr, o) ||
		    api__set(o, "self", api__u64(f->rows[i].self)) ||
		    api__set(o, "total", api__u64(f->rows[i].total)) ||
		    key_identity(ctx->names, f->rows[i].key, o))
			goto cleanup;
	}
	rc = 0;
cleanup:
	analysis_flat__free(f);
	tree_put(t, owned);
	return rc;
}

static bool thread_selected(struct api_ctx *ctx, uint32_t thread)
{
	const struct serve_query *sq = ctx->sq;

	if (sq->thread != UINT32_MAX && thread != sq->thread)
		return false;
	if (sq->process != UINT32_MAX && ctx->c->threads[thread].process != sq->process)
		return false;
	return true;
}

static json_t *u64_array(const uint64_t *v, uint32_t n)
{
	json_t *arr = json_array();
	uint32_t i;

	for (i = 0; arr && i < n; i++) {
		if (json_array_append_new(arr, api__u64(v[i]))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

int api__lanes(struct api_ctx *ctx, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	struct serve_profile *p = ctx->p;
	struct analysis_lanes l = { 0 };
	uint64_t end = ctx->q.end_ns ? ctx->q.end_ns : p->last_ns + 1;
	uint32_t i, n = 0;
	json_t *arr;
	int rc;

	if (end <= ctx->q.start_ns)
		return api__fail(ctx, "start: after the end of the capture");
	rc = analysis_lanes__init(&l, ctx->c, ctx->q.start_ns, end, sq->buckets);
	if (rc)
		return rc == -EINVAL ? api__fail(ctx, "empty time range") : rc;
	rc = -ENOMEM;
	arr = json_array();
	if (api__set(out, "start_ns", api__u64(l.start_ns - p->origin_ns)) ||
	    api__set(out, "bucket_ns", api__u64(l.bucket_ns)) ||
	    api__set(out, "nbuckets", json_integer(l.nbuckets)) ||
	    api__set(out, "offset", json_integer(sq->offset)) || api__set(out, "lanes", arr))
		goto cleanup;
	for (i = 0; i < l.nlanes; i++) {
		const struct analysis_lane *ln = &l.lanes[i];
		json_t *o;

		if (!thread_selected(ctx, ln->thread))
			continue;
		if (n++ < sq->offset || n - sq->offset > sq->limit)
			continue;
		o = json_pack("{s:o,s:o,s:o}", "thread", api__thread(ctx->c, ln->thread), "samples",
			      u64_array(ln->samples, l.nbuckets), "off_cpu_ns",
			      u64_array(ln->off_cpu_ns, l.nbuckets));
		if (!o || json_array_append_new(arr, o))
			goto cleanup;
	}
	if (api__set(out, "nlanes", json_integer(n)))
		goto cleanup;
	rc = 0;
cleanup:
	analysis_lanes__release(&l);
	return rc;
}

/* The names of stack's frames, innermost first, at most max of them. */
static json_t *frames_json(const struct analysis_names *n, uint32_t stack, uint32_t max)
{
	const struct capture *c = n->capture;
	json_t *arr = json_array();
	uint32_t i = 0;

	for (; arr && stack != CAPTURE_NONE && i < max; stack = c->stacks[stack].parent) {
		uint32_t key = analysis_names__row_key(n, stack);
		const struct analysis_key *k;

		if (key == ANALYSIS_KEY_FOLDED)
			continue;
		k = &n->keys[key];
		i++;
		if (json_array_append_new(arr, json_pack("{s:s,s:s}", "name", k->name, "kind",
							 api__key_kind(k->kind)))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

/* Intervals are listed by start time, then id. */
struct iv_key {
	uint64_t start;
	uint32_t id;
	uint32_t reserved;
};

static int iv_key_cmp(const void *pa, const void *pb)
{
	const struct iv_key *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

/* Policy: frames of an interval's stack and of its waker's stack listed. */
#define SERVE_INTERVAL_FRAMES 12

int api__intervals(struct api_ctx *ctx, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	const struct capture *c = ctx->c;
	struct iv_key *keys = NULL;
	uint32_t *ids = NULL, n = 0, i;
	json_t *arr;
	int rc = -ENOMEM;

	ids = malloc(((size_t)c->nintervals + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];

		if (!thread_selected(ctx, v->thread) || v->weight < sq->min_ns)
			continue;
		if (v->end_ns <= ctx->q.start_ns || (ctx->q.end_ns && v->start_ns >= ctx->q.end_ns))
			continue;
		if (!sq->incomplete && (v->flags & (CAPTURE_INTERVAL_F_START_UNKNOWN |
						    CAPTURE_INTERVAL_F_END_UNKNOWN)))
			continue;
		ids[n++] = i;
	}
	keys = malloc(((size_t)n + 1) * sizeof(*keys));
	if (!keys)
		goto cleanup;
	for (i = 0; i < n; i++)
		keys[i] = (struct iv_key){ .start = c->intervals[ids[i]].start_ns, .id = ids[i] };
	qsort(keys, n, sizeof(*keys), iv_key_cmp);
	arr = json_array();
	if (api__set(out, "total", json_integer(n)) ||
	    api__set(out, "offset", json_integer(sq->offset)) || api__set(out, "intervals", arr))
		goto cleanup;
	for (i = sq->offset; i < n && i - sq->offset < sq->limit; i++) {
		const struct capture_interval *v = &c->intervals[keys[i].id];
		uint32_t blk_key = analysis__blocking_key(ctx->names, v->stack);
		const char *blk = blk_key == CAPTURE_NONE ? "" : ctx->names->keys[blk_key].name;
		json_t *o = json_pack(
			"{s:I,s:o,s:o,s:o,s:o,s:s,s:s,s:b,s:b,s:o,s:s,s:o,s:o}", "id",
			(json_int_t)keys[i].id, "thread", api__thread(c, v->thread), "start_ns",
			api__u64(v->start_ns - ctx->p->origin_ns), "end_ns",
			api__u64(v->end_ns - ctx->p->origin_ns), "ns", api__u64(v->weight), "state",
			analysis__offcpu_state_name(v->state), "cause",
			analysis__offcpu_cause_name(v->cause), "start_known",
			!(v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN), "end_known",
			!(v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN), "waker",
			api__thread(c, v->waker_thread), "blocking", blk, "stack",
			frames_json(ctx->names, v->stack, SERVE_INTERVAL_FRAMES), "waker_stack",
			frames_json(ctx->names, v->waker_stack, SERVE_INTERVAL_FRAMES));

		if (!o || json_array_append_new(arr, o))
			goto cleanup;
	}
	rc = 0;
cleanup:
	free(keys);
	free(ids);
	return rc;
}

int api__offcpu(struct api_ctx *ctx, json_t *out)
{
	static const enum analysis_offcpu_by bys[] = {
		[SERVE_BY_STATE] = ANALYSIS_OFFCPU_BY_STATE,
		[SERVE_BY_FUNCTION] = ANALYSIS_OFFCPU_BY_BLOCKER,
		[SERVE_BY_WAKER] = ANALYSIS_OFFCPU_BY_WAKER_THREAD,
	};
	static const char *const by_names[] = { "state", "function", "waker" };
	const struct serve_query *sq = ctx->sq;
	struct analysis_offcpu_table g;
	uint64_t count = 0;
	json_t *arr;
	uint32_t i;
	int rc;

	rc = analysis_offcpu_table__init(&g, ctx->names, &ctx->q, bys[sq->by]);
	if (rc)
		return rc == -EINVAL ? api__fail(ctx, "bad query") : rc;
	for (i = 0; i < g.nrows; i++)
		count += g.rows[i].count;
	rc = -ENOMEM;
	arr = json_array();
	if (api__head(ctx, out, g.total_ns) || api__set(out, "by", json_string(by_names[sq->by])) ||
	    api__set(out, "count", api__u64(count)) ||
	    api__set(out, "nrows", json_integer(g.nrows)) ||
	    api__set(out, "offset", json_integer(sq->offset)) || api__set(out, "rows", arr))
		goto cleanup;
	for (i = sq->offset; i < g.nrows && i - sq->offset < sq->limit; i++) {
		const struct analysis_offcpu_group *r = &g.rows[i];
		const char *kind, *name;
		json_t *o;

		if (sq->by == SERVE_BY_STATE) {
			kind = "state";
			name = analysis__offcpu_state_name(r->id);
		} else if (r->id == CAPTURE_NONE) {
			kind = "none";
			name = sq->by == SERVE_BY_WAKER ? "[no waker thread]" : "[no function]";
		} else if (sq->by == SERVE_BY_WAKER) {
			kind = "thread";
			name = ctx->names->keys[ctx->names->thread_keys[r->id]].name;
		} else {
			kind = api__key_kind(ctx->names->keys[r->id].kind);
			name = ctx->names->keys[r->id].name;
		}
		o = json_pack("{s:s,s:s,s:o,s:o}", "kind", kind, "name", name, "count",
			      api__u64(r->count), "ns", api__u64(r->ns));
		if (!o || json_array_append_new(arr, o))
			goto cleanup;
	}
	rc = 0;
cleanup:
	analysis_offcpu_table__release(&g);
	return rc;
}

/* "none of the SIDE's N samples is selected: check WINDOW and the filters" */
static json_t *diff_none_selected(const struct api_ctx *ctx, const char *side, const char *window)
{
	char text[200];

	snprintf(text, sizeof(text), "none of the %s's %" PRIu32 " samples is selected: check %s "
		 "and the filters", side, ctx->c->nsamples, window);
	return json_string(text);
}

int api__diff(struct api_ctx *ctx, struct serve_profile *base, json_t *out)
{
	const struct serve_query *sq = ctx->sq;
	struct analysis_tree *t = NULL, *bt = NULL;
	bool owned = false, bowned = false;
	struct analysis_flat *f = NULL, *bf = NULL;
	struct analysis_diff d = { 0 };
	struct api_ctx bctx;
	struct serve_query bq = *sq;
	const char *ev = capture__string(ctx->c, ctx->c->events[ctx->q.event].name);
	json_t *arr;
	uint32_t i;
	int rc;

	/* The base answers the same query, its event found by name, over its
	 * own part (base_start, base_end from its origin; whole by default):
	 * the time selection (start, end) is a zone of the served capture's
	 * clock, which means nothing in another recording.  A thread or
	 * process row id means nothing there either. */
	if (sq->thread != UINT32_MAX || sq->process != UINT32_MAX)
		return api__fail(ctx, "diff: thread and process ids do not carry across captures");
	snprintf(bq.event, sizeof(bq.event), "%s", ev);
	bq.start_ns = sq->base_start_ns;
	bq.end_ns = sq->base_end_ns;
	rc = api_ctx__init(&bctx, base, &bq, false, ctx->err, ctx->errlen);
	if (rc)
		goto cleanup;
	t = tree_new(ctx, &rc, &owned);
	if (!t)
		goto cleanup;
	bt = tree_new(&bctx, &rc, &bowned);
	if (!bt)
		goto cleanup;
	rc = -ENOMEM;
	f = analysis_flat__new(t, ANALYSIS_SORT_SELF);
	bf = analysis_flat__new(bt, ANALYSIS_SORT_SELF);
	if (!f || !bf)
		goto cleanup;
	rc = analysis_diff__init(&d, bf, f, ANALYSIS_SORT_SELF,
				 !strcmp(capture__string(ctx->c, ctx->c->events[ctx->q.event].unit),
					 "samples"));
	if (rc)
		goto cleanup;
	rc = -ENOMEM;
	arr = json_array();
	if (api__head(ctx, out, d.new_weight) || api__set(out, "base", json_string(base->name)) ||
	    api__set(out, "base_total", api__u64(d.base_weight)) ||
	    api__set(out, "nrows", json_integer(d.nrows)) ||
	    api__set(out, "offset", json_integer(sq->offset)) || api__set(out, "rows", arr))
		goto cleanup;
	/* A part that selects none of a side's samples says so (as report's
	 * --since warns): its shares are all 0 and every delta is the other's. */
	if (!d.base_weight && bctx.c->nsamples &&
	    api__set(out, "base_note", diff_none_selected(&bctx, "base", "base_start/base_end")))
		goto cleanup;
	if (!d.new_weight && ctx->c->nsamples &&
	    api__set(out, "note", diff_none_selected(ctx, "served capture", "start/end")))
		goto cleanup;
	for (i = sq->offset; i < d.nrows && i - sq->offset < sq->limit; i++) {
		const struct analysis_diff_row *r = &d.rows[i];
		json_t *o = json_pack("{s:s,s:s,s:o,s:o,s:o,s:o,s:f,s:f,s:f,s:b}", "name", r->name,
				      "kind", api__key_kind(r->kind), "base_self",
				      api__u64(r->base_self), "base_total", api__u64(r->base_total),
				      "self", api__u64(r->new_self), "total", api__u64(r->new_total),
				      "self_delta", 100.0 * r->delta_self, "total_delta",
				      100.0 * r->delta_total, "z", r->z, "significant",
				      r->significant);

		if (!o || json_array_append_new(arr, o))
			goto cleanup;
	}
	rc = 0;
cleanup:
	analysis_diff__release(&d);
	analysis_flat__free(f);
	analysis_flat__free(bf);
	tree_put(t, owned);
	tree_put(bt, bowned);
	api_ctx__release(&bctx);
	return rc;
}

int api__groups(struct api_ctx *ctx, json_t *out)
{
	static const enum analysis_by bys[] = {
		[SERVE_GROUP_PROCESS] = ANALYSIS_BY_PROCESS,
		[SERVE_GROUP_THREAD] = ANALYSIS_BY_THREAD,
		[SERVE_GROUP_CONTAINER] = ANALYSIS_BY_CONTAINER,
		[SERVE_GROUP_MODULE] = ANALYSIS_BY_MODULE,
	};
	static const char *const by_names[] = { "process", "thread", "container", "module" };
	const struct serve_query *sq = ctx->sq;
	struct analysis_groups g = { 0 };
	json_t *arr;
	uint32_t i;
	int rc;

	rc = analysis_groups__init(&g, ctx->c, &ctx->q, bys[sq->group_by]);
	if (rc)
		return rc == -EINVAL ? api__fail(ctx, "bad query") : rc;
	rc = -ENOMEM;
	arr = json_array();
	if (api__head(ctx, out, g.total) || api__set(out, "by", json_string(by_names[sq->group_by])) ||
	    api__set(out, "nrows", json_integer(g.nrows)) ||
	    api__set(out, "offset", json_integer(sq->offset)) || api__set(out, "rows", arr))
		goto cleanup;
	for (i = sq->offset; i < g.nrows && i - sq->offset < sq->limit; i++) {
		json_t *o = json_pack("{s:s,s:o,s:o}", "name", g.rows[i].name, "weight",
				      api__u64(g.rows[i].weight), "samples",
				      api__u64(g.rows[i].samples));

		if (!o || json_array_append_new(arr, o))
			goto cleanup;
	}
	rc = 0;
cleanup:
	analysis_groups__release(&g);
	return rc;
}
