// SPDX-License-Identifier: MIT
/*
 * Sample filters with pprof's meanings, bound to one capture (or look
 * view): --focus keeps samples whose stack has a frame matching, --ignore
 * drops samples whose stack has one, --hide removes matching frames from
 * stacks (their cost goes to the caller).  A frame matches when its
 * function-granularity key name or its as-recorded label does (so
 * "app.py:6" and "libfoo.so" both work).  Each frame is tested once,
 * each stack row once (a row inherits its parent's flags): the cost
 * follows the tables, not the samples.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/frame_label.h"

#include "internal.h"

enum { F_FOCUS = 1, F_IGNORE = 2, F_HIDE = 4 };

struct filter_re {
	regex_t re;
	bool set;
};

static int filter_re__compile(struct filter_re *r, const char *what, const char *pattern,
			      char *err, size_t size)
{
	int rc;

	if (!pattern)
		return 0;
	rc = regcomp(&r->re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		char msg[128];

		regerror(rc, &r->re, msg, sizeof(msg));
		snprintf(err, size, "--%s '%s': %s", what, pattern, msg);
		return -EINVAL;
	}
	r->set = true;
	return 0;
}

static bool filter_re__match(const struct filter_re *r, const char *a, const char *b)
{
	return r->set && (!regexec(&r->re, a, 0, NULL, 0) || !regexec(&r->re, b, 0, NULL, 0));
}

int analysis_filter__check(const struct analysis_filter_spec *spec, char *err, size_t size)
{
	struct filter_re r[3] = { 0 };
	int rc;

	if (size)
		err[0] = '\0';
	rc = filter_re__compile(&r[0], "focus", spec->focus, err, size);
	if (!rc)
		rc = filter_re__compile(&r[1], "ignore", spec->ignore, err, size);
	if (!rc)
		rc = filter_re__compile(&r[2], "hide", spec->hide, err, size);
	for (int i = 0; i < 3; i++)
		if (r[i].set)
			regfree(&r[i].re);
	return rc;
}

int analysis_filter__new(const struct capture *c, const struct analysis_filter_spec *spec,
			 struct analysis_filter **out, char *err, size_t size)
{
	struct filter_re focus = { 0 }, ignore = { 0 }, hide = { 0 };
	struct analysis_filter *f = NULL;
	uint8_t *frame_bits = NULL;
	char a[512], b[512];
	uint32_t i;
	int rc;

	*out = NULL;
	if (size)
		err[0] = '\0';
	rc = filter_re__compile(&focus, "focus", spec->focus, err, size);
	if (!rc)
		rc = filter_re__compile(&ignore, "ignore", spec->ignore, err, size);
	if (!rc)
		rc = filter_re__compile(&hide, "hide", spec->hide, err, size);
	if (rc)
		goto cleanup;
	rc = -ENOMEM;
	f = calloc(1, sizeof(*f));
	frame_bits = calloc((size_t)c->nframes + 1, 1);
	if (!f || !frame_bits)
		goto cleanup;
	f->capture = c;
	f->stack_pass = malloc((size_t)c->nstacks + 1);
	f->stack_bits = malloc((size_t)c->nstacks + 1);
	if (hide.set)
		f->frame_hidden = calloc((size_t)c->nframes + 1, 1);
	if (!f->stack_pass || !f->stack_bits || (hide.set && !f->frame_hidden))
		goto cleanup;
	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *fr = &c->frames[i];

		analysis__frame_key_name(c, fr, ANALYSIS_GRANULARITY_FUNCTION, a, sizeof(a));
		capture__frame_label(c, fr, b, sizeof(b));
		frame_bits[i] = (filter_re__match(&focus, a, b) ? F_FOCUS : 0) |
				(filter_re__match(&ignore, a, b) ? F_IGNORE : 0) |
				(filter_re__match(&hide, a, b) ? F_HIDE : 0);
		if (f->frame_hidden)
			f->frame_hidden[i] = !!(frame_bits[i] & F_HIDE);
	}
	/* A row's parent has a smaller id: one pass in id order. */
	for (i = 0; i < c->nstacks; i++) {
		uint32_t p = c->stacks[i].parent;

		f->stack_bits[i] = frame_bits[c->stacks[i].frame] |
				   (p == CAPTURE_NONE ? 0 : f->stack_bits[p]);
		f->stack_pass[i] = (!focus.set || (f->stack_bits[i] & F_FOCUS)) &&
				   !(f->stack_bits[i] & F_IGNORE);
	}
	f->empty_pass = !focus.set;
	*out = f;
	f = NULL;
	rc = 0;
cleanup:
	if (focus.set)
		regfree(&focus.re);
	if (ignore.set)
		regfree(&ignore.re);
	if (hide.set)
		regfree(&hide.re);
	free(frame_bits);
	analysis_filter__free(f);
	return rc;
}

void analysis_filter__free(struct analysis_filter *f)
{
	if (!f)
		return;
	free(f->stack_pass);
	free(f->stack_bits);
	free(f->frame_hidden);
	free(f);
}

bool analysis_filter__stack(const struct analysis_filter *f, uint32_t stack)
{
	if (!f)
		return true;
	return stack == CAPTURE_NONE ? f->empty_pass : f->stack_pass[stack];
}

uint64_t analysis__start_ns(const struct capture *c)
{
	uint64_t start = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < c->nsamples; i++)
		if (c->samples[i].time_ns && c->samples[i].time_ns < start)
			start = c->samples[i].time_ns;
	for (i = 0; i < c->nintervals; i++)
		if (c->intervals[i].start_ns < start)
			start = c->intervals[i].start_ns;
	return start == UINT64_MAX ? 0 : start;
}
