// SPDX-License-Identifier: MIT
/*
 * Copying samples and intervals between captures with the rows they
 * reference (merge.h).
 *
 * One remap table per source table maps a source id to its destination id
 * (CAPTURE_NONE until the row is first needed), so each source row is
 * copied at most once per call and only rows something copied refers to
 * reach the destination.  Every source id is range-checked before it is
 * used as an index, also for a builder's own (unvalidated) tables.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/format.h"
#include "capture/merge.h"

struct remap {
	const struct capture *src;
	struct capture_builder *dst;
	uint32_t *map[CAPTURE_TABLE_COUNT]; /* src id -> dst id; [STRINGS] for strings */
	uint32_t *chain;		     /* scratch: a stack's rows, innermost first */
	bool bad;			     /* a source id out of range */
};

static uint32_t remap__bad(struct remap *r)
{
	r->bad = true;
	return CAPTURE_NONE;
}

static int remap__init(struct remap *r, struct capture_builder *dst, const struct capture *src)
{
	const uint32_t counts[CAPTURE_TABLE_COUNT] = {
		[CAPTURE_TABLE_STRINGS] = src->nstrings,     [CAPTURE_TABLE_MODULES] = src->nmodules,
		[CAPTURE_TABLE_PROCESSES] = src->nprocesses, [CAPTURE_TABLE_THREADS] = src->nthreads,
		[CAPTURE_TABLE_FRAMES] = src->nframes,	     [CAPTURE_TABLE_STACKS] = src->nstacks,
		[CAPTURE_TABLE_EVENTS] = src->nevents,	     [CAPTURE_TABLE_CGROUPS] = src->ncgroups,
		[CAPTURE_TABLE_PROBE_SITES] = src->nprobe_sites,
	};

	memset(r, 0, sizeof(*r));
	r->src = src;
	r->dst = dst;
	for (int t = 0; t < CAPTURE_TABLE_COUNT; t++) {
		if (!counts[t])
			continue;
		r->map[t] = malloc((size_t)counts[t] * sizeof(uint32_t));
		if (!r->map[t])
			return -ENOMEM;
		memset(r->map[t], 0xff, (size_t)counts[t] * sizeof(uint32_t)); /* CAPTURE_NONE */
	}
	if (src->nstacks) {
		r->chain = malloc((size_t)src->nstacks * sizeof(uint32_t));
		if (!r->chain)
			return -ENOMEM;
	}
	return 0;
}

static void remap__release(struct remap *r)
{
	for (int t = 0; t < CAPTURE_TABLE_COUNT; t++)
		free(r->map[t]);
	free(r->chain);
}

static uint32_t remap__string(struct remap *r, uint32_t id)
{
	uint32_t *m;

	if (id >= r->src->nstrings)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_STRINGS][id];
	if (*m == CAPTURE_NONE)
		*m = capture_builder__string(r->dst, capture__string(r->src, id));
	return *m;
}

static uint32_t remap__module(struct remap *r, uint32_t id)
{
	struct capture_module row;
	uint32_t *m;

	if (id == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (id >= r->src->nmodules)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_MODULES][id];
	if (*m != CAPTURE_NONE)
		return *m;
	row = r->src->modules[id];
	row.path = remap__string(r, row.path);
	row.build_id = remap__string(r, row.build_id);
	*m = capture_builder__intern_row(r->dst, CAPTURE_TABLE_MODULES, &row);
	return *m;
}

/* A sample's cgroups row (format 1.2): the same row, interned, in dst. */
static uint32_t remap__cgroup(struct remap *r, uint32_t id)
{
	struct capture_cgroup row;
	uint32_t *m;

	if (id == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (id >= r->src->ncgroups)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_CGROUPS][id];
	if (*m != CAPTURE_NONE)
		return *m;
	row = r->src->cgroups[id];
	row.path = remap__string(r, row.path);
	row.container = remap__string(r, row.container);
	row.runtime = remap__string(r, row.runtime);
	*m = capture_builder__intern_row(r->dst, CAPTURE_TABLE_CGROUPS, &row);
	return *m;
}

static uint32_t remap__process(struct remap *r, uint32_t id)
{
	struct capture_process row;
	uint32_t *m;

	if (id >= r->src->nprocesses)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_PROCESSES][id];
	if (*m != CAPTURE_NONE)
		return *m;
	row = r->src->processes[id];
	row.comm = remap__string(r, row.comm);
	row.exe = remap__string(r, row.exe);
	*m = capture_builder__intern_row(r->dst, CAPTURE_TABLE_PROCESSES, &row);
	return *m;
}

/* A probe site (format 1.3): the same name and process, interned, in dst. */
static uint32_t remap__probe_site(struct remap *r, uint32_t id)
{
	struct capture_probe_site row;
	uint32_t *m;

	if (id == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (id >= r->src->nprobe_sites)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_PROBE_SITES][id];
	if (*m != CAPTURE_NONE)
		return *m;
	row = r->src->probe_sites[id];
	row.name = remap__string(r, row.name);
	row.process = remap__process(r, row.process);
	if (r->bad)
		return CAPTURE_NONE;
	*m = capture_builder__intern_row(r->dst, CAPTURE_TABLE_PROBE_SITES, &row);
	return *m;
}

static uint32_t remap__thread(struct remap *r, uint32_t id)
{
	struct capture_thread row;
	uint32_t *m;

	if (id == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (id >= r->src->nthreads)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_THREADS][id];
	if (*m != CAPTURE_NONE)
		return *m;
	row = r->src->threads[id];
	row.process = remap__process(r, row.process);
	row.comm = remap__string(r, row.comm);
	*m = capture_builder__intern_row(r->dst, CAPTURE_TABLE_THREADS, &row);
	return *m;
}

static uint32_t remap__frame(struct remap *r, uint32_t id)
{
	struct capture_frame row;
	uint32_t *m;

	if (id >= r->src->nframes)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_FRAMES][id];
	if (*m != CAPTURE_NONE)
		return *m;
	row = r->src->frames[id];
	row.module = remap__module(r, row.module);
	row.function = remap__string(r, row.function);
	row.file = remap__string(r, row.file);
	*m = capture_builder__add_frame(r->dst, &row);
	return *m;
}

/* A stack: walk to the first row already copied (or the root), then copy
 * outward-in so each parent exists before its callee's row. */
static uint32_t remap__stack(struct remap *r, uint32_t id)
{
	uint32_t n = 0, parent;

	if (id == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (id >= r->src->nstacks)
		return remap__bad(r);
	for (uint32_t s = id; s != CAPTURE_NONE && r->map[CAPTURE_TABLE_STACKS][s] == CAPTURE_NONE;
	     s = r->src->stacks[s].parent) {
		uint32_t p = r->src->stacks[s].parent;

		if (p != CAPTURE_NONE && p >= s) /* parents come first: the walk ends */
			return remap__bad(r);
		r->chain[n++] = s;
	}
	while (n--) {
		const struct capture_stack *row = &r->src->stacks[r->chain[n]];

		parent = row->parent == CAPTURE_NONE ? CAPTURE_NONE
						     : r->map[CAPTURE_TABLE_STACKS][row->parent];
		r->map[CAPTURE_TABLE_STACKS][r->chain[n]] =
		    capture_builder__add_stack(r->dst, parent, remap__frame(r, row->frame));
	}
	return r->map[CAPTURE_TABLE_STACKS][id];
}

static uint32_t remap__event(struct remap *r, uint32_t id)
{
	struct capture_event row;
	uint32_t *m;

	if (id >= r->src->nevents)
		return remap__bad(r);
	m = &r->map[CAPTURE_TABLE_EVENTS][id];
	if (*m != CAPTURE_NONE)
		return *m;
	row = r->src->events[id];
	row.name = remap__string(r, row.name);
	row.unit = remap__string(r, row.unit);
	*m = capture_builder__add_event(r->dst, &row);
	return *m;
}

/* Times in [since_ns, until_ns) are copied, or every time when all. */
static void remap__rows(struct remap *r, uint64_t since_ns, uint64_t until_ns, bool all)
{
	const struct capture *src = r->src;
	uint32_t id, cgroup;

	/* Every event, in src's order: what was recorded, even in a quiet span. */
	for (uint32_t i = 0; i < src->nevents && !r->bad; i++)
		remap__event(r, i);
	for (uint32_t i = 0; i < src->nsamples && !r->bad; i++) {
		struct capture_sample row = src->samples[i];

		if (!all && (row.time_ns < since_ns || row.time_ns >= until_ns))
			continue;
		row.thread = remap__thread(r, row.thread);
		row.stack = remap__stack(r, row.stack);
		row.event = remap__event(r, row.event);
		cgroup = remap__cgroup(r, capture__sample_cgroup(src, i));
		if (r->bad)
			break;
		id = capture_builder__add_sample(r->dst, &row);
		if (id != CAPTURE_NONE && cgroup != CAPTURE_NONE)
			capture_builder__set_sample_cgroup(r->dst, id, cgroup); /* sticky error */
	}
	for (uint32_t i = 0; i < src->nintervals && !r->bad; i++) {
		struct capture_interval row = src->intervals[i];

		if (!all && (row.end_ns < since_ns || row.end_ns >= until_ns))
			continue;
		row.thread = remap__thread(r, row.thread);
		row.event = remap__event(r, row.event);
		row.stack = remap__stack(r, row.stack);
		row.waker_thread = remap__thread(r, row.waker_thread);
		row.waker_stack = remap__stack(r, row.waker_stack);
		if (!r->bad)
			capture_builder__add_interval(r->dst, &row);
	}
	for (uint32_t i = 0; i < src->nprobe_records && !r->bad; i++) {
		struct capture_probe_record row = src->probe_records[i];

		if (!all && (row.time_ns < since_ns || row.time_ns >= until_ns))
			continue;
		row.site = remap__probe_site(r, row.site);
		row.thread = remap__thread(r, row.thread);
		if (!r->bad)
			capture_builder__add_probe_record(r->dst, &row);
	}
	/* The mappings of every process something copied belongs to. */
	for (uint32_t i = 0; i < src->nmappings && !r->bad; i++) {
		struct capture_mapping row = src->mappings[i];

		if (row.process >= src->nprocesses)
			remap__bad(r);
		else if (r->map[CAPTURE_TABLE_PROCESSES][row.process] != CAPTURE_NONE) {
			row.process = r->map[CAPTURE_TABLE_PROCESSES][row.process];
			row.module = remap__module(r, row.module);
			capture_builder__intern_row(r->dst, CAPTURE_TABLE_MAPPINGS, &row);
		}
	}
	for (uint32_t i = 0; i < src->nmeta && !r->bad; i++) {
		if (src->meta[i].key >= src->nstrings || src->meta[i].value >= src->nstrings)
			remap__bad(r);
		else
			capture_builder__set_meta(r->dst, capture__string(src, src->meta[i].key),
						  capture__string(src, src->meta[i].value));
	}
	for (uint32_t i = 0; i < src->ncounters && !r->bad; i++) {
		if (src->counters[i].name >= src->nstrings)
			remap__bad(r);
		else
			capture_builder__add_counter(r->dst,
						     capture__string(src, src->counters[i].name),
						     src->counters[i].value);
	}
}

static int merge(struct capture_builder *dst, const struct capture *src, uint64_t since_ns,
		 uint64_t until_ns, bool all)
{
	struct remap r;
	struct capture check;
	int err = remap__init(&r, dst, src);

	if (err)
		goto cleanup;
	remap__rows(&r, since_ns, until_ns, all);
	err = r.bad ? -EINVAL : capture_builder__view(dst, &check); /* dst's sticky error */
cleanup:
	remap__release(&r);
	return err;
}

int capture_builder__merge(struct capture_builder *dst, const struct capture *src,
			   uint64_t since_ns, uint64_t until_ns)
{
	return merge(dst, src, since_ns, until_ns, false);
}

int capture_builder__take(struct capture_builder *src, struct capture_builder *dst,
			  uint64_t until_ns)
{
	struct capture view;
	int err = capture_builder__view(src, &view);

	if (!err)
		err = merge(dst, &view, 0, until_ns, until_ns == UINT64_MAX);
	if (!err)
		capture_builder__drop_before(src, until_ns);
	return err;
}

int capture_builder__move_counters(struct capture_builder *src, struct capture_builder *dst)
{
	struct capture view, check;
	int err = capture_builder__view(src, &view);

	if (err)
		return err;
	for (uint32_t i = 0; i < view.ncounters; i++)
		capture_builder__add_counter(dst, capture__string(&view, view.counters[i].name),
					     view.counters[i].value);
	err = capture_builder__view(dst, &check); /* dst's sticky error */
	if (!err)
		capture_builder__clear_counters(src);
	return err;
}

int capture_builder__merge_builder(struct capture_builder *dst, struct capture_builder *src,
				   uint64_t since_ns, uint64_t until_ns)
{
	struct capture view;
	int err = capture_builder__view(src, &view);

	return err ? err : merge(dst, &view, since_ns, until_ns, false);
}

/* capture_refs_fn pass 1: copy the row an owner holds (and what it needs). */
static void compact__keep(void *ctx, enum capture_table t, uint32_t *id)
{
	struct remap *r = ctx;

	if (*id == CAPTURE_NONE)
		return;
	switch (t) {
	case CAPTURE_TABLE_STRINGS:
		remap__string(r, *id);
		break;
	case CAPTURE_TABLE_MODULES:
		remap__module(r, *id);
		break;
	case CAPTURE_TABLE_PROCESSES:
		remap__process(r, *id);
		break;
	case CAPTURE_TABLE_THREADS:
		remap__thread(r, *id);
		break;
	case CAPTURE_TABLE_FRAMES:
		remap__frame(r, *id);
		break;
	case CAPTURE_TABLE_STACKS:
		remap__stack(r, *id);
		break;
	case CAPTURE_TABLE_EVENTS:
		remap__event(r, *id);
		break;
	case CAPTURE_TABLE_CGROUPS:
		remap__cgroup(r, *id);
		break;
	case CAPTURE_TABLE_PROBE_SITES:
		remap__probe_site(r, *id);
		break;
	default:
		remap__bad(r);
	}
}

/* capture_refs_fn pass 2: the id of the row pass 1 copied. */
static void compact__rewrite(void *ctx, enum capture_table t, uint32_t *id)
{
	struct remap *r = ctx;

	if (*id != CAPTURE_NONE)
		*id = r->map[t][*id]; /* pass 1 checked t and the range */
}

int capture_builder__compact(struct capture_builder *b, capture_refs_fn refs, void *owner)
{
	struct capture_builder *dst = capture_builder__new();
	struct capture view, check;
	struct remap r;
	int err;

	memset(&r, 0, sizeof(r));
	if (!dst)
		return -ENOMEM;
	err = capture_builder__view(b, &view);
	if (!err)
		err = remap__init(&r, dst, &view);
	if (err)
		goto cleanup;
	/* The owner's rows first, so ids of long-lived rows stay small. */
	refs(owner, compact__keep, &r);
	if (!r.bad)
		remap__rows(&r, 0, UINT64_MAX, true);
	err = r.bad ? -EINVAL : capture_builder__view(dst, &check);
	if (err)
		goto cleanup;
	refs(owner, compact__rewrite, &r);
	capture_builder__swap(b, dst); /* dst now holds the old rows */
cleanup:
	remap__release(&r);
	capture_builder__free(dst);
	return err;
}

bool capture_builder__time_range(struct capture_builder *b, uint64_t *first_ns,
				 uint64_t *last_ns)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	struct capture v;

	capture_builder__view(b, &v);
	if (!v.nsamples && !v.nintervals && !v.nprobe_records)
		return false;
	for (uint32_t i = 0; i < v.nsamples; i++) {
		lo = v.samples[i].time_ns < lo ? v.samples[i].time_ns : lo;
		hi = v.samples[i].time_ns > hi ? v.samples[i].time_ns : hi;
	}
	for (uint32_t i = 0; i < v.nintervals; i++) {
		lo = v.intervals[i].end_ns < lo ? v.intervals[i].end_ns : lo;
		hi = v.intervals[i].end_ns > hi ? v.intervals[i].end_ns : hi;
	}
	for (uint32_t i = 0; i < v.nprobe_records; i++) {
		lo = v.probe_records[i].time_ns < lo ? v.probe_records[i].time_ns : lo;
		hi = v.probe_records[i].time_ns > hi ? v.probe_records[i].time_ns : hi;
	}
	*first_ns = lo;
	*last_ns = hi;
	return true;
}
