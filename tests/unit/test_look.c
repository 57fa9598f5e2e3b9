// SPDX-License-Identifier: MIT
/*
 * Looks (analysis/look.c) over every table that references stacks: a small
 * capture with CPython-spliced stacks, samples and off-CPU intervals (own
 * and waker stacks, some CAPTURE_NONE) through each look.  Every stack id in
 * the view must be in range, and an interval's stack (and waker stack) must
 * be exactly the look of its original stack: the same row a sample with the
 * same original stack gets, and the expected frame path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "capture/capture.h"

static uint32_t nat(struct capture_builder *b, const char *fn, uint32_t flags)
{
	struct capture_frame f = { .module = CAPTURE_NONE, .flags = flags, .address = 1 };

	f.function = capture_builder__string(b, fn);
	return capture_builder__add_frame(b, &f);
}

static uint32_t py(struct capture_builder *b, const char *fn, uint32_t line)
{
	struct capture_frame f = { .module = CAPTURE_NONE, .flags = CAPTURE_FRAME_F_INTERPRETED };

	f.function = capture_builder__string(b, fn);
	f.file = capture_builder__string(b, "/s/app.py");
	f.line = line;
	f.first_line = 1;
	return capture_builder__add_frame(b, &f);
}

static uint32_t chain(struct capture_builder *b, const uint32_t *frames, size_t n)
{
	uint32_t st = CAPTURE_NONE;

	for (size_t i = 0; i < n; i++)
		st = capture_builder__add_stack(b, st, frames[i]);
	return st;
}

/* "root;...;leaf" of stack id in c ("" for CAPTURE_NONE), into out. */
static void path_of(const struct capture *c, uint32_t id, char *out, size_t size)
{
	const char *names[64];
	size_t n = 0, len = 0;

	out[0] = '\0';
	for (uint32_t s = id; s != CAPTURE_NONE; s = c->stacks[s].parent) {
		assert_true(s < c->nstacks);
		assert_true(n < 64);
		names[n++] = capture__string(c, c->frames[c->stacks[s].frame].function);
	}
	while (n--)
		len += (size_t)snprintf(out + len, size - len, "%s%s", names[n], n ? ";" : "");
}

#define NSTACKS 4

struct fixture {
	struct capture *c;
	uint32_t stack[NSTACKS]; /* original stack ids, see build() */
};

/*
 * Stacks (root first):
 *   0 main;<module>;outer;eval;list_sort;vectorcall;key;eval;long_add
 *   1 main;eval;time_sleep;clock_nanosleep (an off-CPU stack: no Python frames)
 *   2 main;<module>;eval;select (Python frames, leaf native)
 *   3 main;native_only
 * Samples: one per stack, in that order.  Intervals: (stack, waker_stack) =
 * (1, 3), (2, 0), (0, NONE), (NONE, 2), (3, 1).
 */
static void build(struct fixture *fx)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_event ev = { 0 }, off = { .period = 1 };
	struct capture_process pr = { .pid = 1 };
	struct capture_thread th = { .tid = 1 };
	uint32_t main_, eval, vec, sorted, leaf, sleep_, nano, sel, fnative, modf, outer, key;
	uint32_t r, offev;
	static const int iv[][2] = { { 1, 3 }, { 2, 0 }, { 0, -1 }, { -1, 2 }, { 3, 1 } };
	char err[256];
	void *buf;
	size_t len;

	assert_non_null(b);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	assert_int_equal(capture_builder__add_event(b, &ev), 0);
	off.name = capture_builder__string(b, "off-cpu");
	off.unit = capture_builder__string(b, "nanoseconds");
	offev = capture_builder__add_event(b, &off);
	th.process = capture_builder__add_process(b, &pr);
	th.comm = capture_builder__string(b, "python");
	r = capture_builder__add_thread(b, &th);
	main_ = nat(b, "main", 0);
	eval = nat(b, "_PyEval_EvalFrameDefault", CAPTURE_FRAME_F_INTERPRETER);
	vec = nat(b, "_PyFunction_Vectorcall", CAPTURE_FRAME_F_INTERPRETER);
	sorted = nat(b, "list_sort", 0);
	leaf = nat(b, "long_add", 0);
	sleep_ = nat(b, "time_sleep", 0);
	nano = nat(b, "clock_nanosleep", 0);
	sel = nat(b, "select", 0);
	fnative = nat(b, "native_only", 0);
	modf = py(b, "<module>", 9);
	outer = py(b, "outer", 3);
	key = py(b, "key", 6);
	fx->stack[0] = chain(b, (uint32_t[]){ main_, modf, outer, eval, sorted, vec, key, eval, leaf },
			     9);
	fx->stack[1] = chain(b, (uint32_t[]){ main_, eval, sleep_, nano }, 4);
	fx->stack[2] = chain(b, (uint32_t[]){ main_, modf, eval, sel }, 4);
	fx->stack[3] = chain(b, (uint32_t[]){ main_, fnative }, 2);
	for (int i = 0; i < NSTACKS; i++)
		capture_builder__add_sample(b, &(struct capture_sample){ .thread = r,
									 .cpu = CAPTURE_NONE,
									 .stack = fx->stack[i],
									 .weight = 1 });
	for (size_t i = 0; i < sizeof(iv) / sizeof(iv[0]); i++) {
		struct capture_interval v = {
			.start_ns = 1000 * (i + 1), .end_ns = 1000 * (i + 1) + 500, .weight = 500,
			.thread = r, .event = offev, .state = CAPTURE_OFFCPU_STATE_SLEEP,
			.cause = iv[i][1] < 0 ? CAPTURE_OFFCPU_CAUSE_NONE : CAPTURE_OFFCPU_CAUSE_TASK,
			.waker_thread = iv[i][1] < 0 ? CAPTURE_NONE : r, .cpu = 0,
		};

		v.stack = iv[i][0] < 0 ? CAPTURE_NONE : fx->stack[iv[i][0]];
		v.waker_stack = iv[i][1] < 0 ? CAPTURE_NONE : fx->stack[iv[i][1]];
		capture_builder__add_interval(b, &v);
	}
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "looks", &fx->c, err, sizeof(err)), 0);
	free(buf);
	capture_builder__free(b);
	assert_int_equal(fx->c->nintervals, 5);
}

/* The view under kind; want[i] the expected path of original stack i. */
static void check_look(const struct fixture *fx, enum analysis_look_kind kind,
		       const char *const want[NSTACKS])
{
	const struct capture *c = fx->c, *v;
	struct analysis_look *look = NULL;
	char got[512];

	assert_int_equal(analysis_look__new(c, kind, &look), 0);
	v = analysis_look__capture(look);
	assert_int_equal(v->nsamples, c->nsamples);
	assert_int_equal(v->nintervals, c->nintervals);
	for (uint32_t i = 0; i < v->nstacks; i++)
		assert_true(v->stacks[i].parent == CAPTURE_NONE || v->stacks[i].parent < i);
	/* samples: one per original stack, in order */
	for (int i = 0; i < NSTACKS; i++) {
		assert_true(v->samples[i].stack < v->nstacks);
		path_of(v, v->samples[i].stack, got, sizeof(got));
		assert_string_equal(got, want[i]);
	}
	for (uint32_t i = 0; i < v->nintervals; i++) {
		const struct capture_interval *o = &c->intervals[i], *n = &v->intervals[i];
		const uint32_t ids[2][2] = { { o->stack, n->stack }, { o->waker_stack, n->waker_stack } };

		/* everything else is copied as is */
		assert_int_equal(n->start_ns, o->start_ns);
		assert_int_equal(n->weight, o->weight);
		assert_int_equal(n->cause, o->cause);
		assert_int_equal(n->waker_thread, o->waker_thread);
		for (int k = 0; k < 2; k++) {
			uint32_t old = ids[k][0], now = ids[k][1];
			int j;

			if (old == CAPTURE_NONE) {
				assert_int_equal(now, CAPTURE_NONE);
				continue;
			}
			assert_true(now < v->nstacks);
			for (j = 0; j < NSTACKS && fx->stack[j] != old; j++)
				;
			assert_true(j < NSTACKS);
			/* the same row as a sample of that stack, the same frames */
			assert_int_equal(now, v->samples[j].stack);
			path_of(v, now, got, sizeof(got));
			assert_string_equal(got, want[j]);
		}
	}
	analysis_look__free(look);
}

static void test_look_intervals(void **state)
{
	static const char *const logical[NSTACKS] = {
		"main;<module>;outer;_PyEval_EvalFrameDefault;list_sort;_PyFunction_Vectorcall;"
		"key;_PyEval_EvalFrameDefault;long_add",
		"main;_PyEval_EvalFrameDefault;time_sleep;clock_nanosleep",
		"main;<module>;_PyEval_EvalFrameDefault;select",
		"main;native_only",
	};
	static const char *const native[NSTACKS] = {
		"main;_PyEval_EvalFrameDefault;list_sort;_PyFunction_Vectorcall;"
		"_PyEval_EvalFrameDefault;long_add",
		"main;_PyEval_EvalFrameDefault;time_sleep;clock_nanosleep",
		"main;_PyEval_EvalFrameDefault;select",
		"main;native_only",
	};
	static const char *const python[NSTACKS] = {
		"<module>;outer;list_sort;key;long_add",
		"main;time_sleep;clock_nanosleep",
		"<module>;select",
		"main;native_only",
	};
	struct fixture fx = { 0 };

	(void)state;
	build(&fx);
	check_look(&fx, ANALYSIS_LOOK_LOGICAL, logical);
	check_look(&fx, ANALYSIS_LOOK_NATIVE, native);
	check_look(&fx, ANALYSIS_LOOK_PYTHON, python);
	capture__free(fx.c);
}

/* A capture with intervals but no samples, and one with neither. */
static void test_look_empty(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_event off = { .period = 1 };
	struct capture_process pr = { .pid = 1 };
	struct capture_thread th = { .tid = 1 };
	struct capture *c = NULL;
	struct analysis_look *look = NULL;
	const struct capture *v;
	uint32_t st;
	char err[256];
	void *buf;
	size_t len;

	(void)state;
	assert_non_null(b);
	off.name = capture_builder__string(b, "off-cpu");
	off.unit = capture_builder__string(b, "nanoseconds");
	capture_builder__add_event(b, &off);
	th.process = capture_builder__add_process(b, &pr);
	capture_builder__add_thread(b, &th);
	st = capture_builder__add_stack(b, CAPTURE_NONE, py(b, "f", 2));
	capture_builder__add_interval(b, &(struct capture_interval){
		.end_ns = 10, .weight = 10, .stack = st, .waker_thread = CAPTURE_NONE,
		.waker_stack = CAPTURE_NONE, .cpu = CAPTURE_NONE });
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "empty", &c, err, sizeof(err)), 0);
	free(buf);
	capture_builder__free(b);
	/* native drops the only frame: the interval's stack becomes empty */
	assert_int_equal(analysis_look__new(c, ANALYSIS_LOOK_NATIVE, &look), 0);
	v = analysis_look__capture(look);
	assert_int_equal(v->nintervals, 1);
	assert_int_equal(v->nstacks, 0);
	assert_int_equal(v->intervals[0].stack, CAPTURE_NONE);
	analysis_look__free(look);
	assert_int_equal(analysis_look__new(c, ANALYSIS_LOOK_PYTHON, &look), 0);
	v = analysis_look__capture(look);
	assert_true(v->intervals[0].stack < v->nstacks);
	analysis_look__free(look);
	capture__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_look_intervals),
		cmocka_unit_test(test_look_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
