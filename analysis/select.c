// SPDX-License-Identifier: MIT
/*
 * Query selections: which threads (by process) and which stacks (by
 * module) a query keeps, as dense byte arrays computed once (pprof-style
 * focus/ignore/hide patterns are analysis_filter's, filter.c).  A stack
 * row's parent has a smaller index, so one forward pass settles "some
 * frame of this stack is in the module" for every row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/frame_label.h"
#include "internal.h"

struct select_storage {
	uint8_t *threads;
	uint8_t *stacks;
};

void analysis_select_spec__init(struct analysis_select_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->process = CAPTURE_NONE;
}

int analysis_select__new(const struct capture *c, const struct analysis_select_spec *spec,
			 struct analysis_select **out)
{
	struct analysis_select *f = NULL;
	struct select_storage *st = NULL;
	uint8_t *module_hit = NULL;
	uint32_t i;
	int err = -ENOMEM;

	*out = NULL;
	if (spec->process != CAPTURE_NONE && spec->process >= c->nprocesses)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto cleanup;
	st = calloc(1, sizeof(*st));
	if (!st)
		goto cleanup;
	f->storage = st; /* freed with f from here on */
	f->nstacks = c->nstacks;
	f->keep_no_thread = spec->process == CAPTURE_NONE;
	if (spec->process != CAPTURE_NONE) {
		st->threads = calloc(c->nthreads ? c->nthreads : 1, 1);
		if (!st->threads)
			goto cleanup;
		for (i = 0; i < c->nthreads; i++)
			st->threads[i] = c->threads[i].process == spec->process;
		f->threads = st->threads;
	}
	if (!spec->module)
		goto done;

	module_hit = calloc(c->nmodules ? c->nmodules : 1, 1);
	st->stacks = malloc((size_t)c->nstacks + 1);
	if (!module_hit || !st->stacks)
		goto cleanup;
	for (i = 0; i < c->nmodules; i++)
		module_hit[i] = !strcmp(capture__module_label(c, i), spec->module);
	/* stacks[s]: some frame from row s up to its root is in the module. */
	for (i = 0; i < c->nstacks; i++) {
		const struct capture_stack *row = &c->stacks[i];
		const struct capture_frame *fr = &c->frames[row->frame];

		st->stacks[i] = (fr->module != CAPTURE_NONE && module_hit[fr->module]) ||
				(row->parent != CAPTURE_NONE && st->stacks[row->parent]);
	}
	st->stacks[c->nstacks] = 0; /* the empty stack has no frame in any module */
	f->stacks = st->stacks;
done:
	*out = f;
	f = NULL;
	err = 0;
cleanup:
	free(module_hit);
	analysis_select__free(f);
	return err;
}

void analysis_select__free(struct analysis_select *f)
{
	struct select_storage *st;

	if (!f)
		return;
	st = f->storage;
	if (st) {
		free(st->threads);
		free(st->stacks);
		free(st);
	}
	free(f);
}

bool analysis_select__keeps(const struct analysis_select *f, uint32_t thread, uint32_t stack)
{
	if (!f)
		return true;
	if (thread == CAPTURE_NONE) {
		if (!f->keep_no_thread)
			return false;
	} else if (f->threads && !f->threads[thread]) {
		return false;
	}
	if (f->stacks && !f->stacks[stack == CAPTURE_NONE ? f->nstacks : stack])
		return false;
	return true;
}
