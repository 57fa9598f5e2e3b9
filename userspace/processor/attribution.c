// SPDX-License-Identifier: MIT
/*
 * Where a sample ran: its cgroup (a capture cgroups row with the cgroup's
 * path, container and runtime, docs/capture-format.md) and its thread's and
 * process's namespace identity, from the ids the sampler wrote
 * (struct ms_sample: cgroup_id, ns_tid, ns_pid, pidns).
 *
 * Cgroup ids are turned into paths by walking the cgroup v2 tree of the
 * host the processor runs on (userspace/cgroups/), once when the first
 * sample arrives and again when an id is not in the last walk, at most
 * ATTR_MAX_WALKS times per recording (policy: a host whose containers come
 * and go by the thousand does not pay a walk for each); an id still
 * unknown gets a row with an empty path, counted as
 * "processor.cgroup_unresolved".  Containers come from the path's
 * directory names.  A replayed raw stream resolves against the replaying
 * host's tree.
 *
 * Per sample this costs one hash lookup; rows and strings are made once
 * per cgroup.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../cgroups/cgroups.h"
#include "internal.h"

#define ATTR_MAX_WALKS 64

struct attribution {
	struct u64map rows;  /* cgroup id + 1 -> cgroups row */
	struct u64map paths; /* cgroup id + 1 -> string id of its path, from the last walk */
	char root[CGROUP_PATH_MAX];
	bool root_known, root_tried;
	uint32_t walks;
	struct capture_builder *b; /* for the walk callback */
	int err;
};

static int attribution__visit(void *ctx, uint64_t id, const char *rel)
{
	struct attribution *a = ctx;
	uint32_t s = capture_builder__string(a->b, rel);

	if (s == CAPTURE_NONE)
		return -ENOMEM;
	return u64map__put(&a->paths, id + 1, s);
}

/* Walk the v2 tree into a->paths.  Returns 0 or -ENOMEM (other errors: nothing learned). */
static int attribution__walk(struct attribution *a)
{
	int err;

	if (!a->root_tried) {
		a->root_tried = true;
		a->root_known = !cgroup_root__find("/proc/self/mountinfo", a->root, sizeof(a->root));
	}
	if (!a->root_known || a->walks >= ATTR_MAX_WALKS)
		return 0;
	a->walks++;
	err = cgroup_tree__walk(a->root, attribution__visit, a, NULL);
	return err == -ENOMEM ? err : 0;
}

/* The cgroups row of id, made on first sight. */
static int attribution__row(struct processor *p, struct attribution *a, uint64_t id, uint32_t *row)
{
	struct capture_cgroup r = { .cgroup_id = id };
	struct cgroup_container ct;
	uint64_t *v = u64map__get(&a->rows, id + 1);
	const char *path;
	int err;

	if (v) {
		*row = (uint32_t)*v;
		return 0;
	}
	v = u64map__get(&a->paths, id + 1);
	if (!v) {
		err = attribution__walk(a);
		if (err)
			return err;
		v = u64map__get(&a->paths, id + 1);
	}
	if (v) {
		r.path = (uint32_t)*v;
		path = capture_builder__string_at(p->b, r.path);
		if (path && cgroup_path__container(path, &ct)) {
			r.container = capture_builder__string(p->b, ct.id);
			r.runtime = capture_builder__string(p->b, ct.runtime);
		}
	} else {
		processor__problem(p, MS_PROBLEM_CGROUP_UNRESOLVED);
	}
	*row = capture_builder__add_cgroup(p->b, &r);
	if (*row == CAPTURE_NONE)
		return -ENOMEM;
	return u64map__put(&a->rows, id + 1, *row);
}

int attribution__sample(struct processor *p, struct thread_state *ts, uint32_t sample,
			const struct ms_sample *s)
{
	struct attribution *a = p->attribution;
	struct capture_thread *trow;
	struct capture_process *prow;
	uint32_t row;
	int err;

	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		a->b = p->b;
		p->attribution = a;
	}
	/* Namespace identity: the kernel's own numbers, never guessed. */
	trow = capture_builder__thread(p->b, ts->row);
	if (trow && s->ns_tid)
		trow->ns_tid = s->ns_tid;
	prow = capture_builder__process(p->b, p->procs[ts->proc].row);
	if (prow && s->pidns) /* the task's own: a forked child may have left its parent's */
		prow->pidns = s->pidns;
	if (!s->cgroup_id || sample == CAPTURE_NONE)
		return 0;
	err = attribution__row(p, a, s->cgroup_id, &row);
	if (err)
		return err;
	return capture_builder__set_sample_cgroup(p->b, sample, row);
}

void attribution__free(struct attribution *a)
{
	if (!a)
		return;
	u64map__release(&a->rows);
	u64map__release(&a->paths);
	free(a);
}

void attribution__refs(struct attribution *a, capture_ref_fn ref, void *ctx)
{
	if (!a)
		return;
	for (uint32_t i = 0; i < a->paths.cap; i++) {
		uint32_t id;

		if (!a->paths.keys[i])
			continue;
		id = (uint32_t)a->paths.vals[i];
		ref(ctx, CAPTURE_TABLE_STRINGS, &id);
		a->paths.vals[i] = id;
	}
}

void attribution__forget_rows(struct attribution *a)
{
	if (a)
		u64map__release(&a->rows);
}
