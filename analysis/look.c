// SPDX-License-Identifier: MIT
/*
 * Looks: how a query sees each stack that holds interpreted frames.
 *
 *   logical  as recorded: interpreted segments spliced before the
 *            evaluation-loop activations that run them;
 *   native   interpreted frames (and the marks about them) dropped: the
 *            interpreter's own frames stand for them;
 *   python   from the outermost interpreted frame in, without the
 *            interpreter's own frames (CAPTURE_FRAME_F_INTERPRETER), so the
 *            segments join and native code called from Python stays where
 *            it was called.  A stack with no interpreted frame is kept whole.
 *
 * A look is a derived view of the capture: the same frames, threads and
 * strings (borrowed), new stack rows (interned in creation order, parents
 * first, so a view is as deterministic as its capture) and samples pointing
 * at them: samples, and off-CPU intervals (stack and waker_stack), the
 * tables that reference stacks, are copied with their stack ids mapped the
 * same way.  Every analysis runs on the view unchanged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct analysis_look {
	struct capture view;
	struct capture_stack *stacks;
	struct capture_sample *samples;
	struct capture_interval *intervals;
};

int analysis_look__parse(const char *name, enum analysis_look_kind *look)
{
	if (!strcmp(name, "logical"))
		*look = ANALYSIS_LOOK_LOGICAL;
	else if (!strcmp(name, "native"))
		*look = ANALYSIS_LOOK_NATIVE;
	else if (!strcmp(name, "python"))
		*look = ANALYSIS_LOOK_PYTHON;
	else
		return -EINVAL;
	return 0;
}

static bool is_python_mark(const struct capture *c, const struct capture_frame *f)
{
	return (f->flags & CAPTURE_FRAME_F_TRUNCATION) &&
	       !strncmp(capture__string(c, f->function), "[python ", 8);
}

struct look_builder {
	struct capture_stack *rows;
	uint32_t n, cap;
	struct u64map index; /* (parent + 1) << 32 | frame -> row */
};

/* The row for frame under parent (CAPTURE_NONE: a root), interned. */
static int look__intern(struct look_builder *b, uint32_t parent, uint32_t frame, uint32_t *out)
{
	uint64_t key = ((uint64_t)(parent + 1) << 32) | frame; /* parent NONE -> 0 */
	uint32_t val = b->n;
	bool inserted;
	int err;

	err = u64map__upsert(&b->index, key, &val, &inserted);
	if (err)
		return err;
	if (inserted) {
		if (analysis__grow((void **)&b->rows, &b->cap, (uint64_t)b->n + 1, sizeof(*b->rows)))
			return -ENOMEM;
		b->rows[b->n++] = (struct capture_stack){ .parent = parent, .frame = frame };
	}
	*out = val;
	return 0;
}

/* An old stack id (or CAPTURE_NONE) as the look sees it; may be CAPTURE_NONE
 * when the look drops every frame of the stack. */
static uint32_t look__map(uint32_t stack, const uint8_t *seen, const uint32_t *py,
			  const uint32_t *keep)
{
	if (stack == CAPTURE_NONE)
		return CAPTURE_NONE;
	return seen[stack] ? py[stack] : keep[stack];
}

int analysis_look__new(const struct capture *c, enum analysis_look_kind look,
		       struct analysis_look **out)
{
	struct look_builder b = { 0 };
	struct analysis_look *l = NULL;
	/* per old stack: new id on the kept track, and for python whether an
	 * interpreted frame was seen (then py holds the python-look id) */
	uint32_t *keep = NULL, *py = NULL;
	uint8_t *seen = NULL;
	int err = -ENOMEM;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	keep = malloc(((size_t)c->nstacks + 1) * sizeof(*keep));
	py = malloc(((size_t)c->nstacks + 1) * sizeof(*py));
	seen = calloc((size_t)c->nstacks + 1, 1);
	l->samples = l ? malloc(((size_t)c->nsamples + 1) * sizeof(*l->samples)) : NULL;
	l->intervals = l ? malloc(((size_t)c->nintervals + 1) * sizeof(*l->intervals)) : NULL;
	if (!l || !keep || !py || !seen || !l->samples || !l->intervals)
		goto cleanup;
	u64map__init(&b.index);
	for (uint32_t i = 0; i < c->nstacks; i++) {
		const struct capture_stack *s = &c->stacks[i];
		const struct capture_frame *f = &c->frames[s->frame];
		uint32_t pk = s->parent == CAPTURE_NONE ? CAPTURE_NONE : keep[s->parent];
		uint32_t pp = s->parent == CAPTURE_NONE ? CAPTURE_NONE : py[s->parent];
		bool pseen = s->parent != CAPTURE_NONE && seen[s->parent];
		bool interp = f->flags & CAPTURE_FRAME_F_INTERPRETED;
		bool drop;

		switch (look) {
		case ANALYSIS_LOOK_NATIVE:
			drop = interp || is_python_mark(c, f);
			break;
		case ANALYSIS_LOOK_PYTHON:
			drop = f->flags & CAPTURE_FRAME_F_INTERPRETER;
			break;
		default:
			drop = false;
		}
		/* The kept track: every frame the look keeps, from the root. */
		keep[i] = pk;
		if (!drop && (err = look__intern(&b, pk, s->frame, &keep[i])))
			goto cleanup;
		py[i] = CAPTURE_NONE;
		if (look == ANALYSIS_LOOK_PYTHON) {
			seen[i] = pseen || interp;
			if (pseen) {
				py[i] = pp;
				if (!drop && (err = look__intern(&b, pp, s->frame, &py[i])))
					goto cleanup;
			} else if (interp && (err = look__intern(&b, CAPTURE_NONE, s->frame, &py[i]))) {
				goto cleanup;
			}
		}
	}
	for (uint32_t i = 0; i < c->nsamples; i++) {
		struct capture_sample s = c->samples[i];

		s.stack = look__map(s.stack, seen, py, keep);
		l->samples[i] = s;
	}
	for (uint32_t i = 0; i < c->nintervals; i++) {
		struct capture_interval v = c->intervals[i];

		v.stack = look__map(v.stack, seen, py, keep);
		v.waker_stack = look__map(v.waker_stack, seen, py, keep);
		l->intervals[i] = v;
	}
	l->view = *c;
	l->view.storage = NULL;
	l->stacks = b.rows;
	b.rows = NULL;
	l->view.stacks = l->stacks;
	l->view.nstacks = b.n;
	l->view.samples = l->samples;
	l->view.intervals = l->intervals;
	*out = l;
	l = NULL;
	err = 0;
cleanup:
	analysis_look__free(l);
	free(b.rows);
	u64map__release(&b.index);
	free(keep);
	free(py);
	free(seen);
	return err;
}

const struct capture *analysis_look__capture(const struct analysis_look *l)
{
	return &l->view;
}

void analysis_look__free(struct analysis_look *l)
{
	if (!l)
		return;
	free(l->stacks);
	free(l->samples);
	free(l->intervals);
	free(l);
}
