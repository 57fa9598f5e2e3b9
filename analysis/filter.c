// SPDX-License-Identifier: MIT
/*
 * Query filters: which threads (by process) and which stacks (by module,
 * focus and ignore function) a query keeps, as dense byte arrays computed
 * once.  A stack row's parent has a smaller index, so one forward pass
 * settles "some frame of this stack is X" for every row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct filter_storage {
	uint8_t *threads;
	uint8_t *stacks;
};

void analysis_filter_spec__init(struct analysis_filter_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->process = CAPTURE_NONE;
}

/* The name a module filter compares: the path's basename, or its kind's bracket name. */
static const char *module_label(const struct capture *c, const struct capture_module *m)
{
	const char *path = capture__string(c, m->path), *slash;

	if (!*path) {
		switch (m->kind) {
		case CAPTURE_MODULE_KERNEL:
			return "[kernel]";
		case CAPTURE_MODULE_VDSO:
			return "[vdso]";
		case CAPTURE_MODULE_ANON:
			return "[anon]";
		default:
			return "[unknown]";
		}
	}
	slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* bits of a stack row's own frame: 1 module match, 2 focus match, 4 ignore match */
#define F_MODULE 1u
#define F_FOCUS 2u
#define F_IGNORE 4u

int analysis_filter__new(const struct analysis_names *n, const struct analysis_filter_spec *spec,
			 struct analysis_filter **out)
{
	const struct capture *c = n->capture;
	struct analysis_filter *f = NULL;
	struct filter_storage *st = NULL;
	uint8_t *module_hit = NULL, *key_bits = NULL, *seen = NULL, want = 0;
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
	if (!spec->module && !spec->focus && !spec->ignore)
		goto done;

	module_hit = calloc(c->nmodules ? c->nmodules : 1, 1);
	key_bits = calloc(n->nkeys ? n->nkeys : 1, 1);
	seen = malloc((size_t)c->nstacks + 1);
	st->stacks = malloc((size_t)c->nstacks + 1);
	if (!module_hit || !key_bits || !seen || !st->stacks)
		goto cleanup;
	if (spec->module) {
		want |= F_MODULE;
		for (i = 0; i < c->nmodules; i++)
			module_hit[i] = !strcmp(module_label(c, &c->modules[i]), spec->module);
	}
	if (spec->focus)
		want |= F_FOCUS;
	for (i = 0; i < n->nkeys; i++) {
		if (spec->focus && !strcmp(n->keys[i].name, spec->focus))
			key_bits[i] |= F_FOCUS;
		if (spec->ignore && !strcmp(n->keys[i].name, spec->ignore))
			key_bits[i] |= F_IGNORE;
	}
	/* seen[s]: the bits some frame from row s up to its root has. */
	for (i = 0; i < c->nstacks; i++) {
		const struct capture_stack *row = &c->stacks[i];
		const struct capture_frame *fr = &c->frames[row->frame];
		uint8_t bits = key_bits[n->frame_keys[row->frame]];

		if (fr->module != CAPTURE_NONE && module_hit[fr->module])
			bits |= F_MODULE;
		if (row->parent != CAPTURE_NONE)
			bits |= seen[row->parent];
		seen[i] = bits;
		st->stacks[i] = (bits & want) == want && !(bits & F_IGNORE);
	}
	st->stacks[c->nstacks] = !want; /* the empty stack */
	f->stacks = st->stacks;
done:
	*out = f;
	f = NULL;
	err = 0;
cleanup:
	free(module_hit);
	free(key_bits);
	free(seen);
	analysis_filter__free(f);
	return err;
}

void analysis_filter__free(struct analysis_filter *f)
{
	struct filter_storage *st;

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

bool analysis_filter__keeps(const struct analysis_filter *f, uint32_t thread, uint32_t stack)
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
