// SPDX-License-Identifier: MIT
/*
 * Keys at a granularity (analysis_names__new_opts): a capture whose
 * stacks hold an inline chain, Python frames at several lines of one
 * function, and unsymbolized addresses of one stripped module:
 *
 *   main;hot;mix[i];step[i]            x6   (inlined into hot)
 *   main;hot                           x2
 *   main;libfoo.so+0x10                x1   (no symbol)
 *   main;libfoo.so+0x20                x1   (no symbol)
 *   run (app.py:3);leaf (app.py:6)     x3   (interpreted)
 *   run (app.py:3);leaf (app.py:7)     x1
 *   run (app.py:4);leaf (app.py:6)     x2
 *
 * 16 samples.  Expected, at function granularity with inline folded:
 * hot self 8 (6 of its inlined calls + 2 of its own), libfoo.so+? self 2,
 * leaf (app.py) self 6, total 6; run (app.py) total 6; main total 10.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "capture/capture.h"

static struct capture *cap;
static uint32_t ev_off, thr_writer; /* the off-CPU event, the waking thread */

static uint32_t frame(struct capture_builder *b, const char *fn, uint32_t module, uint64_t addr,
		      uint32_t flags, const char *file, uint32_t line)
{
	struct capture_frame f = {
		.module = module,
		.flags = flags,
		.address = addr,
		.function = capture_builder__string(b, fn),
		.file = capture_builder__string(b, file),
		.line = line,
		.first_line = (flags & CAPTURE_FRAME_F_INTERPRETED) ? 2 : 0,
	};

	return capture_builder__add_frame(b, &f);
}

static void samples(struct capture_builder *b, const uint32_t *frames, size_t n, uint32_t event,
		    uint32_t thread, int count)
{
	static uint64_t t = 1000;
	uint32_t s = CAPTURE_NONE;
	size_t i;

	for (i = 0; i < n; i++)
		s = capture_builder__add_stack(b, s, frames[i]);
	while (count--) {
		struct capture_sample row = {
			.time_ns = t += 1000,
			.thread = thread,
			.stack = s,
			.event = event,
			.weight = 1,
		};
		capture_builder__add_sample(b, &row);
	}
}

static int setup(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_module m = { .kind = CAPTURE_MODULE_FILE };
	struct capture_process p = { .pid = 1 };
	struct capture_thread th = { .tid = 1 };
	struct capture_event ev = { .period = 1 };
	uint32_t app, lib, ev_cpu, thr;
	uint32_t main_, hot, mix, step, u1, u2, run3, run4, leaf6, leaf7;
	char err[256] = "";
	void *buf = NULL;
	size_t len = 0;

	(void)state;
	m.path = capture_builder__string(b, "/bin/app");
	app = capture_builder__add_module(b, &m);
	m.path = capture_builder__string(b, "/usr/lib/libfoo.so");
	lib = capture_builder__add_module(b, &m);
	th.process = capture_builder__add_process(b, &p);
	th.comm = capture_builder__string(b, "app");
	thr = capture_builder__add_thread(b, &th);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	ev_cpu = capture_builder__add_event(b, &ev);

	main_ = frame(b, "main", app, 0x100, 0, "app.c", 10);
	hot = frame(b, "hot", app, 0x200, 0, "app.c", 20);
	mix = frame(b, "mix", app, 0x200, CAPTURE_FRAME_F_INLINE, "app.c", 30);
	step = frame(b, "step", app, 0x200, CAPTURE_FRAME_F_INLINE, "app.c", 40);
	u1 = frame(b, "", lib, 0x10, CAPTURE_FRAME_F_UNSYMBOLIZED, "", 0);
	u2 = frame(b, "", lib, 0x20, CAPTURE_FRAME_F_UNSYMBOLIZED, "", 0);
	run3 = frame(b, "run", CAPTURE_NONE, 0, CAPTURE_FRAME_F_INTERPRETED, "app.py", 3);
	run4 = frame(b, "run", CAPTURE_NONE, 0, CAPTURE_FRAME_F_INTERPRETED, "app.py", 4);
	leaf6 = frame(b, "leaf", CAPTURE_NONE, 0, CAPTURE_FRAME_F_INTERPRETED, "app.py", 6);
	leaf7 = frame(b, "leaf", CAPTURE_NONE, 0, CAPTURE_FRAME_F_INTERPRETED, "app.py", 7);

	samples(b, (uint32_t[]){ main_, hot, mix, step }, 4, ev_cpu, thr, 6);
	samples(b, (uint32_t[]){ main_, hot }, 2, ev_cpu, thr, 2);
	samples(b, (uint32_t[]){ main_, u1 }, 2, ev_cpu, thr, 1);
	samples(b, (uint32_t[]){ main_, u2 }, 2, ev_cpu, thr, 1);
	samples(b, (uint32_t[]){ run3, leaf6 }, 2, ev_cpu, thr, 3);
	samples(b, (uint32_t[]){ run3, leaf7 }, 2, ev_cpu, thr, 1);
	samples(b, (uint32_t[]){ run4, leaf6 }, 2, ev_cpu, thr, 2);

	/* Off-CPU: read() blocked twice (100 ns woken by the writer's write(),
	 * 50 ns with no waker seen), a kernel-only wait of 30 ns (runnable,
	 * woken from a hard interrupt),
	 * and an interval cut by the recording's start (no total counts it). */
	{
		uint32_t rd = frame(b, "read", app, 0x300, 0, "", 0);
		uint32_t wr = frame(b, "write", app, 0x400, 0, "", 0);
		uint32_t sched = frame(b, "__schedule", CAPTURE_NONE, 0x1, CAPTURE_FRAME_F_KERNEL, "", 0);
		uint32_t pw = frame(b, "pipe_write", CAPTURE_NONE, 0x2, CAPTURE_FRAME_F_KERNEL, "", 0);
		uint32_t ttwu = frame(b, "try_to_wake_up", CAPTURE_NONE, 0x3, CAPTURE_FRAME_F_KERNEL,
				      "", 0);
		uint32_t blocked = CAPTURE_NONE, waker = CAPTURE_NONE, konly;
		struct capture_interval v = { .thread = thr, .waker_thread = CAPTURE_NONE,
					      .waker_stack = CAPTURE_NONE, .cpu = CAPTURE_NONE };

		th.tid = 2;
		th.comm = capture_builder__string(b, "writer");
		thr_writer = capture_builder__add_thread(b, &th);
		ev.name = capture_builder__string(b, "off-cpu");
		ev.unit = capture_builder__string(b, "nanoseconds");
		ev_off = capture_builder__add_event(b, &ev);
		blocked = capture_builder__add_stack(b, blocked, main_);
		blocked = capture_builder__add_stack(b, blocked, rd);
		blocked = capture_builder__add_stack(b, blocked, sched);
		waker = capture_builder__add_stack(b, waker, wr);
		waker = capture_builder__add_stack(b, waker, pw);
		waker = capture_builder__add_stack(b, waker, ttwu);
		konly = capture_builder__add_stack(b, CAPTURE_NONE, sched);
		v.event = ev_off;
		v.stack = blocked;
		v.state = CAPTURE_OFFCPU_STATE_SLEEP;
		v.cause = CAPTURE_OFFCPU_CAUSE_TASK;
		v.waker_thread = thr_writer;
		v.waker_stack = waker;
		v.start_ns = 3000, v.end_ns = 3100, v.weight = 100;
		capture_builder__add_interval(b, &v);
		v.cause = CAPTURE_OFFCPU_CAUSE_NONE;
		v.waker_thread = v.waker_stack = CAPTURE_NONE;
		v.start_ns = 4000, v.end_ns = 4050, v.weight = 50;
		capture_builder__add_interval(b, &v);
		v.stack = konly;
		v.state = CAPTURE_OFFCPU_STATE_RUNNABLE;
		v.cause = CAPTURE_OFFCPU_CAUSE_HARDIRQ; /* an interrupt: no waker thread */
		v.start_ns = 5000, v.end_ns = 5030, v.weight = 30;
		capture_builder__add_interval(b, &v);
		v.cause = CAPTURE_OFFCPU_CAUSE_NONE;
		v.flags = CAPTURE_INTERVAL_F_START_UNKNOWN;
		v.start_ns = 2000, v.end_ns = 3000, v.weight = 1000;
		capture_builder__add_interval(b, &v);
	}

	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	if (capture__open_mem(buf, len, "keys.msc", &cap, err, sizeof(err)))
		fail_msg("open_mem: %s", err);
	free(buf);
	capture_builder__free(b);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	capture__free(cap);
	return 0;
}

struct table {
	struct analysis_names *names;
	struct analysis_tree *tree;
	struct analysis_flat *flat;
};

static void table__init_filtered(struct table *t, enum analysis_granularity g, bool fold,
				 const struct analysis_filter *filter)
{
	struct analysis_key_options o = { .granularity = g, .fold_inline = fold };
	struct analysis_query q;

	analysis_query__init(&q, 0);
	q.filter = filter;
	t->names = analysis_names__new_opts(cap, &o);
	assert_non_null(t->names);
	t->tree = analysis_tree__new(t->names, &q);
	assert_non_null(t->tree);
	t->flat = analysis_flat__new(t->tree, ANALYSIS_SORT_SELF);
	assert_non_null(t->flat);
}

static void table__init(struct table *t, enum analysis_granularity g, bool fold)
{
	table__init_filtered(t, g, fold, NULL);
}

static void table__release(struct table *t)
{
	analysis_flat__free(t->flat);
	analysis_tree__free(t->tree);
	analysis_names__free(t->names);
}

/* The row named name: its self and total; fails if absent. */
static const struct analysis_flat_row *row(const struct table *t, const char *name)
{
	uint32_t i;

	for (i = 0; i < t->flat->nrows; i++)
		if (!strcmp(t->names->keys[t->flat->rows[i].key].name, name))
			return &t->flat->rows[i];
	fail_msg("no row '%s'", name);
	return NULL;
}

static uint32_t t_kind(const struct table *t, const char *name)
{
	return t->names->keys[row(t, name)->key].kind;
}

static bool has_row(const struct table *t, const char *name)
{
	uint32_t i;

	for (i = 0; i < t->flat->nrows; i++)
		if (!strcmp(t->names->keys[t->flat->rows[i].key].name, name))
			return true;
	return false;
}

static void test_function_folded(void **state)
{
	struct table t;

	(void)state;
	table__init(&t, ANALYSIS_GRANULARITY_FUNCTION, true);
	assert_int_equal(t.flat->total_weight, 16);
	/* sorted by self: hot 8, then leaf 6, then libfoo 2 */
	assert_string_equal(t.names->keys[t.flat->rows[0].key].name, "hot");
	assert_int_equal(row(&t, "hot")->self, 8);
	assert_int_equal(row(&t, "hot")->total, 8);
	assert_string_equal(t.names->keys[t.flat->rows[1].key].name, "leaf (app.py)");
	assert_int_equal(row(&t, "leaf (app.py)")->self, 6);
	assert_int_equal(row(&t, "run (app.py)")->total, 6);
	assert_int_equal(row(&t, "run (app.py)")->self, 0);
	assert_int_equal(row(&t, "libfoo.so+?")->self, 2);
	assert_int_equal(row(&t, "main")->total, 10);
	assert_false(has_row(&t, "mix"));
	assert_false(has_row(&t, "step"));
	assert_false(has_row(&t, "libfoo.so+0x10"));
	assert_int_equal(t.flat->nrows, 5);
	/* the folded frames leave no node: main -> hot is a leaf */
	table__release(&t);
}

static void test_function_shown(void **state)
{
	struct table t;

	(void)state;
	table__init(&t, ANALYSIS_GRANULARITY_FUNCTION, false);
	assert_int_equal(row(&t, "step")->self, 6);
	assert_int_equal(row(&t, "mix")->total, 6);
	assert_int_equal(row(&t, "mix")->self, 0);
	assert_int_equal(row(&t, "hot")->self, 2);
	assert_int_equal(row(&t, "hot")->total, 8);
	assert_int_equal(t.names->keys[row(&t, "step")->key].kind, ANALYSIS_KEY_INLINE);
	table__release(&t);
}

/* Line granularity splits Python functions per line; each function's
 * total at function granularity is the sum of its lines' (no recursion). */
static void test_line(void **state)
{
	struct table t, f;

	(void)state;
	table__init(&t, ANALYSIS_GRANULARITY_LINE, true);
	table__init(&f, ANALYSIS_GRANULARITY_FUNCTION, true);
	assert_int_equal(row(&t, "leaf (app.py:6)")->self, 5);
	assert_int_equal(row(&t, "leaf (app.py:7)")->self, 1);
	assert_int_equal(row(&t, "run (app.py:3)")->total, 4);
	assert_int_equal(row(&t, "run (app.py:4)")->total, 2);
	assert_int_equal(row(&t, "leaf (app.py:6)")->total + row(&t, "leaf (app.py:7)")->total,
			 row(&f, "leaf (app.py)")->total);
	assert_int_equal(row(&t, "run (app.py:3)")->total + row(&t, "run (app.py:4)")->total,
			 row(&f, "run (app.py)")->total);
	/* native frames with a source line, unnamed ones by address */
	assert_int_equal(row(&t, "hot (app.c:20)")->self, 8);
	assert_int_equal(row(&t, "libfoo.so+0x10")->self, 1);
	assert_int_equal(row(&t, "libfoo.so+0x20")->self, 1);
	table__release(&f);
	table__release(&t);
}

static void test_address(void **state)
{
	struct table t;

	(void)state;
	table__init(&t, ANALYSIS_GRANULARITY_ADDRESS, false);
	assert_int_equal(row(&t, "step (app+0x200)")->self, 6);
	assert_int_equal(row(&t, "hot (app+0x200)")->self, 2);
	assert_int_equal(row(&t, "main (app+0x100)")->total, 10);
	assert_int_equal(row(&t, "libfoo.so+0x20")->self, 1);
	table__release(&t);
}

/*
 * Module granularity: one key per module, runs of one module collapsed, so
 * a module's self is the sum of its functions' and no node repeats its
 * parent's key.  Python frames are keyed by their file, kernel frames are
 * "[kernel]".
 */
static void test_module(void **state)
{
	struct table m, f, mf;
	char *text = NULL, path[128];
	size_t len = 0;
	uint32_t i;

	(void)state;
	table__init(&m, ANALYSIS_GRANULARITY_MODULE, false);
	table__init(&mf, ANALYSIS_GRANULARITY_MODULE, true);
	table__init(&f, ANALYSIS_GRANULARITY_FUNCTION, true);
	assert_int_equal(m.flat->nrows, 3);
	assert_int_equal(row(&m, "app")->self, row(&f, "hot")->self);
	assert_int_equal(row(&m, "app")->self, 8);
	assert_int_equal(row(&m, "app")->total, row(&f, "main")->total);
	assert_int_equal(row(&m, "libfoo.so")->self, row(&f, "libfoo.so+?")->self);
	assert_int_equal(row(&m, "libfoo.so")->total, 2);
	assert_int_equal(row(&m, "app.py")->self, row(&f, "leaf (app.py)")->self);
	assert_int_equal(row(&m, "app.py")->total, 6);
	/* an inlined call is of its module, whether folded or shown */
	assert_int_equal(t_kind(&m, "app"), ANALYSIS_KEY_FUNCTION);
	assert_int_equal(row(&mf, "app")->self, 8);
	assert_int_equal(mf.flat->nrows, 3);
	for (i = 1; i < m.tree->nnodes; i++) {
		uint32_t p = m.tree->nodes[i].parent;

		assert_true(p == 0 || m.tree->nodes[p].key != m.tree->nodes[i].key);
	}
	/* main;hot;mix;step is one frame: app */
	assert_int_equal(analysis_tree__folded(m.tree, &text, &len), 0);
	assert_string_equal(text, "app 8\napp.py 6\napp;libfoo.so 2\n");
	free(text);
	/* the blocked off-CPU stack main;read;__schedule reads app;[kernel] */
	analysis__stack_path(m.names, cap->intervals[0].stack, path, sizeof(path));
	assert_string_equal(path, "app;[kernel] [k]");
	/* function granularity keeps every frame */
	analysis__stack_path(f.names, cap->intervals[0].stack, path, sizeof(path));
	assert_string_equal(path, "main;read;__schedule [k]");
	table__release(&f);
	table__release(&mf);
	table__release(&m);
}

static void test_parse(void **state)
{
	enum analysis_granularity g;

	(void)state;
	assert_int_equal(analysis_granularity__parse("line", &g), 0);
	assert_int_equal(g, ANALYSIS_GRANULARITY_LINE);
	assert_int_equal(analysis_granularity__parse("function", &g), 0);
	assert_int_equal(g, ANALYSIS_GRANULARITY_FUNCTION);
	assert_int_equal(analysis_granularity__parse("Function", &g), -EINVAL);
	assert_int_equal(analysis_granularity__parse("module", &g), 0);
	assert_int_equal(g, ANALYSIS_GRANULARITY_MODULE);
	assert_int_equal(analysis_granularity__parse("dso", &g), -EINVAL);
	/* the plain constructor keeps the exporters' labels */
	struct analysis_names *n = analysis_names__new(cap);

	assert_non_null(n);
	assert_int_equal(n->options.granularity, ANALYSIS_GRANULARITY_FRAME);
	assert_string_equal(n->keys[n->frame_keys[4]].name, "libfoo.so+0x10");
	assert_string_equal(n->keys[n->frame_keys[8]].name, "leaf (app.py:6)");
	analysis_names__free(n);
}

static struct analysis_filter *filter(const char *focus, const char *ignore, const char *hide)
{
	struct analysis_filter_spec spec = { .focus = focus, .ignore = ignore, .hide = hide };
	struct analysis_filter *f = NULL;
	char err[128];

	assert_int_equal(analysis_filter__new(cap, &spec, &f, err, sizeof(err)), 0);
	return f;
}

static void test_filters(void **state)
{
	struct analysis_filter_spec bad = { .ignore = "(" };
	struct analysis_filter *f = NULL;
	struct table t;
	char err[128];

	(void)state;
	/* focus matches an inlined frame by name, even when the table folds it */
	f = filter("^step$", NULL, NULL);
	table__init_filtered(&t, ANALYSIS_GRANULARITY_FUNCTION, true, f);
	assert_int_equal(t.flat->total_weight, 6);
	assert_int_equal(row(&t, "hot")->self, 6);
	table__release(&t);
	analysis_filter__free(f);
	/* ignore by the as-recorded label (a line) drops only those samples */
	f = filter(NULL, "app\\.py:7", NULL);
	table__init_filtered(&t, ANALYSIS_GRANULARITY_FUNCTION, true, f);
	assert_int_equal(t.flat->total_weight, 15);
	assert_int_equal(row(&t, "leaf (app.py)")->self, 5);
	table__release(&t);
	analysis_filter__free(f);
	/* hide: hot's cost (and its inlined calls', folded into it) goes to main */
	f = filter(NULL, NULL, "^hot$");
	table__init_filtered(&t, ANALYSIS_GRANULARITY_FUNCTION, true, f);
	assert_int_equal(t.flat->total_weight, 16);
	assert_int_equal(row(&t, "main")->self, 8);
	assert_false(has_row(&t, "hot"));
	table__release(&t);
	analysis_filter__free(f);
	/* focus on a module's unsymbolized code, by its function-granularity key */
	f = filter("libfoo\\.so\\+\\?", NULL, NULL);
	table__init_filtered(&t, ANALYSIS_GRANULARITY_FUNCTION, true, f);
	assert_int_equal(t.flat->total_weight, 2);
	table__release(&t);
	analysis_filter__free(f);
	/* a bad pattern is an error naming it */
	assert_int_equal(analysis_filter__new(cap, &bad, &f, err, sizeof(err)), -EINVAL);
	assert_null(f);
	assert_non_null(strstr(err, "--ignore '('"));
	/* the start is the earliest sample: 2000 ns (the first sample time) */
	assert_int_equal(analysis__start_ns(cap), 2000);
}

static void test_diff(void **state)
{
	struct table a, b;
	struct analysis_diff d;
	char why[128];
	uint32_t i;

	(void)state;
	table__init(&a, ANALYSIS_GRANULARITY_FUNCTION, true);
	table__init(&b, ANALYSIS_GRANULARITY_LINE, true);
	assert_int_equal(analysis__diff_check(cap, 0, cap, 0, why, sizeof(why)), 0);
	/* the same profile: every delta 0, nothing significant */
	assert_int_equal(analysis_diff__init(&d, a.flat, a.flat, ANALYSIS_SORT_SELF, true), 0);
	assert_int_equal(d.nrows, a.flat->nrows);
	for (i = 0; i < d.nrows; i++) {
		assert_true(d.rows[i].delta_self == 0.0 && !d.rows[i].significant);
		assert_true(d.rows[i].z == 0.0);
	}
	analysis_diff__release(&d);
	/* function vs line keys: "hot" (8 of 16) is only in the base, so its
	 * delta is -0.5; "hot (app.c:20)" only in the new, +0.5; they lead */
	assert_int_equal(analysis_diff__init(&d, a.flat, b.flat, ANALYSIS_SORT_SELF, true), 0);
	assert_string_equal(d.rows[0].name, "hot");
	assert_true(d.rows[0].delta_self == -0.5);
	assert_int_equal(d.rows[0].base_self, 8);
	assert_int_equal(d.rows[0].new_self, 0);
	assert_string_equal(d.rows[1].name, "hot (app.c:20)");
	assert_true(d.rows[1].delta_self == 0.5);
	/* z of 8/16 vs 0/16: p = 0.25, se = sqrt(0.25*0.75*(2/16)) = 0.1531 -> 3.27 */
	assert_true(d.rows[0].z < -3.26 && d.rows[0].z > -3.28);
	assert_false(d.rows[0].significant);
	analysis_diff__release(&d);
	/* not counted (e.g. nanoseconds): no test */
	assert_int_equal(analysis_diff__init(&d, a.flat, b.flat, ANALYSIS_SORT_SELF, false), 0);
	assert_true(d.rows[0].z == 0.0 && !d.rows[0].significant);
	analysis_diff__release(&d);
	table__release(&b);
	table__release(&a);
}

/* Lanes: samples 1-8 (2000..9000 ns) run hot (inlined calls folded into
 * it), 9-16 (10000..17000 ns) two unsymbolized then leaf x6. */
static void test_lanes_top_keys(void **state)
{
	struct analysis_key_options o = { .granularity = ANALYSIS_GRANULARITY_FUNCTION,
					  .fold_inline = true };
	struct analysis_names *n = analysis_names__new_opts(cap, &o);
	struct analysis_lanes l;
	struct analysis_query q;
	uint32_t tops[2];

	(void)state;
	assert_non_null(n);
	analysis_query__init(&q, 0);
	assert_int_equal(analysis_lanes__init(&l, cap, 2000, 18000, 2), 0);
	assert_int_equal(l.nlanes, 1);
	assert_int_equal(l.bucket_ns, 8000);
	assert_int_equal(l.lanes[0].samples[0], 8);
	assert_int_equal(l.lanes[0].samples[1], 8);
	assert_int_equal(analysis_lanes__top_keys(&l, n, &q, tops), 0);
	assert_string_equal(n->keys[tops[0]].name, "hot");
	assert_string_equal(n->keys[tops[1]].name, "leaf (app.py)");
	analysis_lanes__release(&l);
	/* a window with no samples: no top */
	assert_int_equal(analysis_lanes__init(&l, cap, 100000, 200000, 2), 0);
	analysis_lanes__release(&l);
	analysis_names__free(n);
}

/* The off-CPU groupings of the intervals built in setup. */
static void test_offcpu_tables(void **state)
{
	struct analysis_key_options o = { .granularity = ANALYSIS_GRANULARITY_FUNCTION,
					  .fold_inline = true };
	struct analysis_names *n = analysis_names__new_opts(cap, &o);
	struct analysis_offcpu_table t;
	struct analysis_query q;

	(void)state;
	assert_non_null(n);
	analysis_query__init(&q, ev_off);
	q.complete_only = true;
	assert_int_equal(analysis_offcpu_table__init(&t, n, &q, ANALYSIS_OFFCPU_BY_BLOCKER), 0);
	assert_int_equal(t.total_ns, 180);
	assert_int_equal(t.clipped_ns, 0);
	assert_int_equal(t.nrows, 2);
	assert_string_equal(n->keys[t.rows[0].id].name, "read");
	assert_int_equal(t.rows[0].ns, 150);
	assert_int_equal(t.rows[0].count, 2);
	assert_int_equal(t.rows[1].id, CAPTURE_NONE); /* only the scheduler's frame */
	assert_int_equal(t.rows[1].ns, 30);
	analysis_offcpu_table__release(&t);
	assert_int_equal(analysis_offcpu_table__init(&t, n, &q, ANALYSIS_OFFCPU_BY_WAKER_THREAD), 0);
	assert_int_equal(t.rows[0].id, thr_writer);
	assert_int_equal(t.rows[0].ns, 100);
	/* no waker thread: one row per cause */
	assert_int_equal(t.nrows, 3);
	assert_int_equal(t.rows[1].id, CAPTURE_NONE);
	assert_int_equal(t.rows[1].ns, 50);
	assert_int_equal(t.rows[1].cause, CAPTURE_OFFCPU_CAUSE_NONE);
	assert_int_equal(t.rows[2].id, CAPTURE_NONE);
	assert_int_equal(t.rows[2].ns, 30);
	assert_int_equal(t.rows[2].cause, CAPTURE_OFFCPU_CAUSE_HARDIRQ);
	analysis_offcpu_table__release(&t);
	assert_int_equal(analysis_offcpu_table__init(&t, n, &q, ANALYSIS_OFFCPU_BY_WAKER_FUNCTION),
			 0);
	assert_string_equal(n->keys[t.rows[0].id].name, "write"); /* past the wakeup plumbing */
	assert_int_equal(t.rows[0].ns, 100);
	analysis_offcpu_table__release(&t);
	assert_int_equal(analysis_offcpu_table__init(&t, n, &q, ANALYSIS_OFFCPU_BY_STATE), 0);
	assert_int_equal(t.rows[0].id, CAPTURE_OFFCPU_STATE_SLEEP);
	assert_int_equal(t.rows[0].ns, 150);
	assert_int_equal(t.rows[1].id, CAPTURE_OFFCPU_STATE_RUNNABLE);
	analysis_offcpu_table__release(&t);
	/* by default the clipped one counts its 1000 ns inside the window, marked */
	q.complete_only = false;
	assert_int_equal(analysis_offcpu_table__init(&t, n, &q, ANALYSIS_OFFCPU_BY_STATE), 0);
	assert_int_equal(t.total_ns, 1180);
	assert_int_equal(t.clipped_ns, 1000);
	assert_int_equal(t.rows[0].id, CAPTURE_OFFCPU_STATE_RUNNABLE); /* 30 + 1000 clipped */
	assert_int_equal(t.rows[0].ns, 1030);
	assert_int_equal(t.rows[0].clipped_ns, 1000);
	analysis_offcpu_table__release(&t);
	/* the tree: the clipped 1000 ns under a leaf of its own below the same stack
	 * as the complete 30 ns one, never merged into it */
	{
		struct analysis_tree *tr = analysis_tree__new(n, &q);
		uint32_t i, clip = CAPTURE_NONE;

		assert_non_null(tr);
		assert_int_equal(tr->nodes[0].total, 1180);
		for (i = 0; i < tr->nnodes; i++)
			if (tr->nodes[i].key == n->clipped_key)
				clip = i;
		assert_int_not_equal(clip, CAPTURE_NONE);
		assert_int_equal(tr->nodes[clip].self, 1000);
		assert_int_equal(tr->nodes[tr->nodes[clip].parent].self, 30);
		analysis_tree__free(tr);
		q.complete_only = true;
		tr = analysis_tree__new(n, &q);
		assert_non_null(tr);
		assert_int_equal(tr->nodes[0].total, 180);
		analysis_tree__free(tr);
		q.complete_only = false;
	}
	/* the wall tree: 16 CPU samples x period 1 + 180 ns off-CPU */
	{
		struct analysis_tree *tr;

		analysis_query__init(&q, ev_off);
		q.wall = true;
		q.wall_event = 0;
		tr = analysis_tree__new(n, &q);
		assert_non_null(tr);
		assert_int_equal(tr->nodes[0].total, 16 + 1180); /* clipped 1000 counted */
		analysis_tree__free(tr);
	}
	analysis_names__free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offcpu_tables),
		cmocka_unit_test(test_lanes_top_keys),
		cmocka_unit_test(test_filters), cmocka_unit_test(test_diff),
		cmocka_unit_test(test_function_folded), cmocka_unit_test(test_function_shown),
		cmocka_unit_test(test_line),		cmocka_unit_test(test_address),
		cmocka_unit_test(test_parse),		cmocka_unit_test(test_module),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
