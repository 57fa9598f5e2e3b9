// SPDX-License-Identifier: MIT
/*
 * Per-line costs of one function (analysis_source, analysis.h): the source
 * view's numbers, from the line each frame of the function carries (the
 * capture's line tables, resolved at record time).  Pure: the source text
 * itself is the presenter's to read, if it can.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "internal.h"

struct line_acc {
	const char *file;
	uint32_t file_id, line;
	uint64_t self, total;
};

static int line_cmp(const void *pa, const void *pb)
{
	const struct line_acc *a = pa, *b = pb;
	int d = strcmp(a->file, b->file);

	if (d)
		return d;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* The weight of one matched row (sample or interval) whose stack is stack. */
static void charge(const uint32_t *innermost, uint32_t stack, uint64_t weight,
		   const struct capture *c, uint64_t *self, uint64_t *total, uint64_t *through)
{
	uint32_t row;

	if (stack == CAPTURE_NONE)
		return;
	row = innermost[stack];
	if (row == CAPTURE_NONE)
		return;
	analysis__sat_add(&total[c->stacks[row].frame], weight);
	analysis__sat_add(through, weight);
	if (row == stack)
		analysis__sat_add(&self[c->stacks[row].frame], weight);
}

/*
 * Mark the frames of function (and file, when not NULL) in target; the
 * display-name form when no frame has that recorded name (analysis.h).
 * Returns how many frames are marked, or -ENOMEM.
 */
static int64_t mark_frames(const struct capture *c, const char *function, const char *file,
			   uint8_t *target)
{
	char buf[512];
	int64_t n = 0;
	uint32_t i;

	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *f = &c->frames[i];

		target[i] = !(f->flags & CAPTURE_FRAME_F_TRUNCATION) &&
			    !strcmp(capture__string(c, f->function), function) &&
			    (!file || !strcmp(capture__string(c, f->file), file));
		n += target[i];
	}
	if (n || file)
		return n;
	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *f = &c->frames[i];
		size_t len;

		if (f->flags & CAPTURE_FRAME_F_TRUNCATION)
			continue;
		len = analysis__frame_key_name(c, f, ANALYSIS_GRANULARITY_FUNCTION, buf,
					       sizeof(buf));
		/* A name longer than buf is compared whole, from the heap. */
		if (len >= sizeof(buf)) {
			char *big = malloc(len + 1);

			if (!big)
				return -ENOMEM;
			analysis__frame_key_name(c, f, ANALYSIS_GRANULARITY_FUNCTION, big, len + 1);
			target[i] = !strcmp(big, function);
			free(big);
		} else {
			target[i] = !strcmp(buf, function);
		}
		n += target[i];
	}
	return n;
}

int analysis_source__init(struct analysis_source *s, const struct capture *c,
			  const struct analysis_query *q, const char *function, const char *file)
{
	uint8_t *target = NULL;
	uint32_t *innermost = NULL;
	uint64_t *self = NULL, *total = NULL;
	struct line_acc *acc = NULL;
	uint32_t i, n = 0, out = 0;
	int err;

	memset(s, 0, sizeof(*s));
	err = analysis_query__check(c, q);
	if (err)
		return err;
	err = -ENOMEM;
	target = calloc((size_t)c->nframes + 1, 1);
	innermost = malloc(((size_t)c->nstacks + 1) * sizeof(*innermost));
	self = calloc((size_t)c->nframes + 1, sizeof(*self));
	total = calloc((size_t)c->nframes + 1, sizeof(*total));
	if (!target || !innermost || !self || !total)
		goto cleanup;
	/* The function's frames: named so, truncation marks excepted. */
	if (mark_frames(c, function, file, target) < 0)
		goto cleanup;
	/* Per stack row, its innermost row in the function: a parent's row id
	 * is smaller, so one forward pass. */
	for (i = 0; i < c->nstacks; i++) {
		const struct capture_stack *st = &c->stacks[i];

		innermost[i] = target[st->frame] ? i
			       : st->parent == CAPTURE_NONE ? CAPTURE_NONE
							    : innermost[st->parent];
	}
	for (i = 0; i < c->nsamples; i++)
		if (analysis_query__match(q, &c->samples[i])) {
			analysis__sat_add(&s->weight, c->samples[i].weight);
			charge(innermost, c->samples[i].stack, c->samples[i].weight, c, self, total,
			       &s->total);
		}
	for (i = 0; i < c->nintervals; i++)
		if (analysis_query__match_interval(q, &c->intervals[i])) {
			analysis__sat_add(&s->weight, c->intervals[i].weight);
			charge(innermost, c->intervals[i].stack, c->intervals[i].weight, c, self,
			       total, &s->total);
		}
	for (i = 0; i < c->nframes; i++)
		n += target[i] && total[i];
	acc = malloc(((size_t)n + 1) * sizeof(*acc));
	if (!acc)
		goto cleanup;
	for (i = 0, n = 0; i < c->nframes; i++) {
		if (!target[i] || !total[i])
			continue;
		acc[n++] = (struct line_acc){
			.file = capture__string(c, c->frames[i].file),
			.file_id = c->frames[i].file,
			.line = c->frames[i].line,
			.self = self[i],
			.total = total[i],
		};
	}
	qsort(acc, n, sizeof(*acc), line_cmp);
	/* Merge the frames of one line (addresses of one line, inlined copies). */
	for (i = 0; i < n; i++) {
		if (out && !line_cmp(&acc[out - 1], &acc[i])) {
			analysis__sat_add(&acc[out - 1].self, acc[i].self);
			analysis__sat_add(&acc[out - 1].total, acc[i].total);
		} else {
			acc[out++] = acc[i];
		}
	}
	s->lines = calloc((size_t)out + 1, sizeof(*s->lines));
	if (!s->lines)
		goto cleanup;
	for (i = 0; i < out; i++)
		s->lines[i] = (struct analysis_source_line){
			.file = acc[i].file_id,
			.line = acc[i].line,
			.self = acc[i].self,
			.total = acc[i].total,
		};
	s->nlines = out;
	err = 0;
cleanup:
	if (err)
		analysis_source__release(s);
	free(acc);
	free(total);
	free(self);
	free(innermost);
	free(target);
	return err;
}

void analysis_source__release(struct analysis_source *s)
{
	free(s->lines);
	memset(s, 0, sizeof(*s));
}
