// SPDX-License-Identifier: MIT
/*
 * Analysis over a capture with a known call graph, built with the capture
 * builder, serialized and read back through the validating reader:
 *
 *   thread app-100:    main;a;leaf1 x3, main;r;r;r x1
 *   thread worker-101: main;b;leaf2 x1, main;r;r;r x1,
 *                      [stack copy exhausted];libfoo.so+0x1a2b x1
 *   plus one off-cpu sample (another event) that no cpu-clock query sees.
 *
 * A second capture holds the naming edge cases: kernel frames, ';' and
 * newlines in names, unnamed frames without a module or a module path, an
 * empty stack, and equal totals for the tie-break rules.
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

struct fixture {
	struct capture *c;
	struct analysis_names *names;
	uint32_t cpu, offcpu; /* event ids */
	uint32_t t_app, t_worker; /* thread ids */
};

static uint32_t frame(struct capture_builder *b, const char *fn, uint32_t module, uint64_t addr,
		      uint32_t flags)
{
	struct capture_frame f = {
		.module = module,
		.flags = flags,
		.address = addr,
		.function = capture_builder__string(b, fn),
	};

	return capture_builder__add_frame(b, &f);
}

/* Stack id of the path frames[0] (outermost) .. frames[n - 1] (innermost). */
static uint32_t stack(struct capture_builder *b, const uint32_t *frames, size_t n)
{
	uint32_t s = CAPTURE_NONE;
	size_t i;

	for (i = 0; i < n; i++)
		s = capture_builder__add_stack(b, s, frames[i]);
	return s;
}

static void sample(struct capture_builder *b, uint64_t t, uint32_t thread, uint32_t stk,
		   uint32_t event, uint64_t weight)
{
	struct capture_sample s = {
		.time_ns = t,
		.thread = thread,
		.cpu = 0,
		.stack = stk,
		.event = event,
		.weight = weight,
	};

	capture_builder__add_sample(b, &s);
}

static struct capture *seal(struct capture_builder *b)
{
	struct capture *c = NULL;
	char err[256] = "";
	void *buf = NULL;
	size_t len = 0;

	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	if (capture__open_mem(buf, len, "test.msc", &c, err, sizeof(err)))
		fail_msg("open_mem: %s", err);
	free(buf);
	capture_builder__free(b);
	return c;
}

static int setup_graph(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct capture_process p = { .pid = 100 };
	struct capture_module m = { .kind = CAPTURE_MODULE_FILE };
	struct capture_event ev = { .period = 1001001 };
	struct capture_thread th = { 0 };
	uint32_t proc, mod, f_main, f_a, f_b, f_leaf1, f_leaf2, f_r, f_lib, f_trunc;
	uint32_t s_leaf1, s_leaf2, s_rrr, s_lib, i;

	assert_non_null(b);
	assert_non_null(fx);
	p.comm = capture_builder__string(b, "app");
	proc = capture_builder__add_process(b, &p);
	th.process = proc;
	th.tid = 100;
	th.comm = capture_builder__string(b, "app");
	fx->t_app = capture_builder__add_thread(b, &th);
	th.tid = 101;
	th.comm = capture_builder__string(b, "worker");
	fx->t_worker = capture_builder__add_thread(b, &th);
	m.path = capture_builder__string(b, "/usr/lib/libfoo.so");
	mod = capture_builder__add_module(b, &m);

	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	fx->cpu = capture_builder__add_event(b, &ev);
	ev.name = capture_builder__string(b, "off-cpu");
	ev.unit = capture_builder__string(b, "nanoseconds");
	ev.period = 1;
	fx->offcpu = capture_builder__add_event(b, &ev);

	f_main = frame(b, "main", mod, 0x100, 0);
	f_a = frame(b, "a", mod, 0x200, 0);
	f_b = frame(b, "b", mod, 0x300, 0);
	f_leaf1 = frame(b, "leaf1", mod, 0x400, 0);
	f_leaf2 = frame(b, "leaf2", mod, 0x500, 0);
	f_r = frame(b, "r", mod, 0x600, 0);
	f_lib = frame(b, "", mod, 0x1a2b, CAPTURE_FRAME_F_UNSYMBOLIZED);
	f_trunc = frame(b, "[stack copy exhausted]", CAPTURE_NONE, 0, CAPTURE_FRAME_F_TRUNCATION);

	s_leaf1 = stack(b, (uint32_t[]){ f_main, f_a, f_leaf1 }, 3);
	s_leaf2 = stack(b, (uint32_t[]){ f_main, f_b, f_leaf2 }, 3);
	s_rrr = stack(b, (uint32_t[]){ f_main, f_r, f_r, f_r }, 4);
	s_lib = stack(b, (uint32_t[]){ f_trunc, f_lib }, 2);

	/* app: 1 ms apart from t = 1 s; worker: 2 ms apart from t = 1.0005 s. */
	for (i = 0; i < 3; i++)
		sample(b, 1000000000ull + i * 1000000, fx->t_app, s_leaf1, fx->cpu, 1);
	sample(b, 1003000000ull, fx->t_app, s_rrr, fx->cpu, 1);
	sample(b, 1000500000ull, fx->t_worker, s_leaf2, fx->cpu, 1);
	sample(b, 1002500000ull, fx->t_worker, s_rrr, fx->cpu, 1);
	sample(b, 1004500000ull, fx->t_worker, s_lib, fx->cpu, 1);
	sample(b, 1005000000ull, fx->t_app, s_leaf2, fx->offcpu, 5000000);

	capture_builder__add_counter(b, "bpf.samples_seen", 100);
	capture_builder__add_counter(b, "bpf.ringbuf_full", 5);
	capture_builder__add_counter(b, "perf.lost", 2);
	capture_builder__add_counter(b, "processor.bad_record_size", 3);
	capture_builder__add_counter(b, "bpf.ustack_err", 1);
	capture_builder__add_counter(b, "bpf.kstack_err", 0);
	capture_builder__set_meta(b, "command", "./demo 3");

	fx->c = seal(b);
	fx->names = analysis_names__new(fx->c);
	assert_non_null(fx->names);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	analysis_names__free(fx->names);
	capture__free(fx->c);
	free(fx);
	return 0;
}

/* Child of node n with display name name, or fail. */
static const struct analysis_node *child(const struct analysis_tree *t,
					 const struct analysis_node *n, const char *name)
{
	uint32_t id;

	for (id = n->first_child; id != CAPTURE_NONE; id = t->nodes[id].next_sibling)
		if (!strcmp(t->names->keys[t->nodes[id].key].name, name))
			return &t->nodes[id];
	fail_msg("no child '%s'", name);
	return NULL;
}

static const char *node_name(const struct analysis_tree *t, uint32_t id)
{
	return id == CAPTURE_NONE ? "(none)" : t->names->keys[t->nodes[id].key].name;
}

static struct analysis_tree *tree_of(struct fixture *fx, bool per_thread, uint32_t thread)
{
	struct analysis_query q;
	struct analysis_tree *t;

	analysis_query__init(&q, fx->cpu);
	q.per_thread = per_thread;
	q.thread = thread;
	t = analysis_tree__new(fx->names, &q);
	assert_non_null(t);
	return t;
}

static void test_call_tree(void **state)
{
	struct fixture *fx = *state;
	struct analysis_tree *t = tree_of(fx, false, CAPTURE_NONE);
	const struct analysis_node *root = &t->nodes[0], *main, *a, *r, *n;

	/* The off-cpu sample (weight 5000000) is another event: not here. */
	assert_int_equal(root->total, 7);
	assert_int_equal(root->self, 0);
	assert_int_equal(root->samples, 7);
	assert_int_equal(root->nchildren, 2);
	/* Root children by total descending: main (6) before the truncation (1). */
	assert_string_equal(node_name(t, root->first_child), "main");
	assert_string_equal(node_name(t, t->nodes[root->first_child].next_sibling),
			    "[stack copy exhausted]");

	main = child(t, root, "main");
	assert_int_equal(main->total, 6);
	assert_int_equal(main->self, 0);
	assert_int_equal(main->depth, 1);
	/* a (3), r (2), b (1). */
	assert_string_equal(node_name(t, main->first_child), "a");
	assert_string_equal(node_name(t, t->nodes[main->first_child].next_sibling), "r");
	a = child(t, main, "a");
	assert_int_equal(a->total, 3);
	assert_int_equal(a->self, 0);
	n = child(t, a, "leaf1");
	assert_int_equal(n->total, 3);
	assert_int_equal(n->self, 3);
	assert_int_equal(n->first_child, CAPTURE_NONE);
	n = child(t, child(t, main, "b"), "leaf2");
	assert_int_equal(n->self, 1);

	/* Recursion stays a chain in the tree: r -> r -> r, self at the end. */
	r = child(t, main, "r");
	assert_int_equal(r->total, 2);
	assert_int_equal(r->self, 0);
	r = child(t, r, "r");
	assert_int_equal(r->total, 2);
	r = child(t, r, "r");
	assert_int_equal(r->self, 2);
	assert_int_equal(r->depth, 4);

	n = child(t, child(t, root, "[stack copy exhausted]"), "libfoo.so+0x1a2b");
	assert_int_equal(n->self, 1);
	analysis_tree__free(t);
}

static void assert_rows(const struct analysis_flat *f, const char *const *names,
			const uint64_t *self, const uint64_t *total, uint32_t n)
{
	uint32_t i;

	assert_int_equal(f->nrows, n);
	for (i = 0; i < n; i++) {
		const struct analysis_flat_row *row = &f->rows[i];

		assert_string_equal(f->names->keys[row->key].name, names[i]);
		assert_int_equal(row->self, self[i]);
		assert_int_equal(row->total, total[i]);
	}
}

static void test_flat(void **state)
{
	struct fixture *fx = *state;
	struct analysis_tree *t = tree_of(fx, false, CAPTURE_NONE);
	struct analysis_flat *f;

	/* By self; ties by name bytes: "[" (0x5b) sorts before lowercase. */
	f = analysis_flat__new(t, ANALYSIS_SORT_SELF);
	assert_non_null(f);
	assert_int_equal(f->total_weight, 7);
	assert_rows(f,
		    (const char *const[]){ "leaf1", "r", "leaf2", "libfoo.so+0x1a2b",
					   "[stack copy exhausted]", "a", "b", "main" },
		    (const uint64_t[]){ 3, 2, 1, 1, 0, 0, 0, 0 },
		    (const uint64_t[]){ 3, 2, 1, 1, 1, 3, 1, 6 }, 8);
	analysis_flat__free(f);

	/* By total: r is counted once per sample although it is on the
	 * stack three times. */
	f = analysis_flat__new(t, ANALYSIS_SORT_TOTAL);
	assert_non_null(f);
	assert_rows(f,
		    (const char *const[]){ "main", "a", "leaf1", "r", "[stack copy exhausted]",
					   "b", "leaf2", "libfoo.so+0x1a2b" },
		    (const uint64_t[]){ 0, 0, 3, 2, 0, 0, 1, 1 },
		    (const uint64_t[]){ 6, 3, 3, 2, 1, 1, 1, 1 }, 8);
	analysis_flat__free(f);
	analysis_tree__free(t);
}

static void assert_folded(struct fixture *fx, bool per_thread, uint32_t thread,
			  const char *expect)
{
	struct analysis_tree *t = tree_of(fx, per_thread, thread);
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(analysis_tree__folded(t, &text, &len), 0);
	assert_string_equal(text, expect);
	assert_int_equal(len, strlen(expect));
	free(text);
	analysis_tree__free(t);
}

static void test_folded(void **state)
{
	struct fixture *fx = *state;

	assert_folded(fx, false, CAPTURE_NONE,
		      "[stack copy exhausted];libfoo.so+0x1a2b 1\n"
		      "main;a;leaf1 3\n"
		      "main;b;leaf2 1\n"
		      "main;r;r;r 2\n");
}

static void test_threads(void **state)
{
	struct fixture *fx = *state;
	struct analysis_tree *t;
	struct analysis_flat *f;

	assert_folded(fx, true, CAPTURE_NONE,
		      "app-100;main;a;leaf1 3\n"
		      "app-100;main;r;r;r 1\n"
		      "worker-101;[stack copy exhausted];libfoo.so+0x1a2b 1\n"
		      "worker-101;main;b;leaf2 1\n"
		      "worker-101;main;r;r;r 1\n");
	/* A thread filter without roots. */
	assert_folded(fx, false, fx->t_worker,
		      "[stack copy exhausted];libfoo.so+0x1a2b 1\n"
		      "main;b;leaf2 1\n"
		      "main;r;r;r 1\n");

	t = tree_of(fx, true, CAPTURE_NONE);
	assert_int_equal(t->nodes[0].total, 7);
	assert_string_equal(node_name(t, t->nodes[0].first_child), "app-100");
	assert_int_equal(child(t, &t->nodes[0], "app-100")->total, 4);
	assert_int_equal(child(t, &t->nodes[0], "worker-101")->total, 3);
	assert_int_equal(child(t, child(t, &t->nodes[0], "worker-101"), "main")->depth, 2);
	/* Thread roots are not functions: the flat table leaves them out. */
	f = analysis_flat__new(t, ANALYSIS_SORT_TOTAL);
	assert_non_null(f);
	assert_int_equal(f->nrows, 8);
	assert_string_equal(f->names->keys[f->rows[0].key].name, "main");
	assert_int_equal(f->rows[0].total, 6);
	analysis_flat__free(f);
	analysis_tree__free(t);
}

static void test_summary(void **state)
{
	struct fixture *fx = *state;
	const struct capture *c = fx->c;
	struct analysis_summary s;
	struct analysis_query q;

	analysis_query__init(&q, fx->cpu);
	assert_int_equal(analysis_summary__init(&s, fx->names, &q), 0);
	assert_int_equal(s.samples, 7);
	assert_int_equal(s.weight, 7);
	assert_int_equal(s.first_ns, 1000000000ull);
	assert_int_equal(s.last_ns, 1004500000ull);
	assert_false(s.duration_from_meta);
	assert_int_equal(s.duration_ns, 4500000);
	assert_int_equal(s.threads, 2);
	/* app: 3 gaps over 3 ms; worker: 2 gaps over 4 ms -> 5 / 7 ms. */
	assert_float_equal(s.rate_hz, 5.0 / 0.007, 1e-6);
	assert_int_equal(s.truncated, 1);
	assert_int_equal(s.ntruncations, 1);
	assert_string_equal(fx->names->keys[s.truncations[0].id].name, "[stack copy exhausted]");
	assert_int_equal(s.truncations[0].value, 1);
	assert_int_equal(s.empty_stacks, 0);

	/* Counters, in name order; zero values and info counters left out. */
	assert_int_equal(s.lost, 7);
	assert_int_equal(s.nlost_counters, 2);
	assert_string_equal(capture__string(c, c->counters[s.lost_counters[0].id].name),
			    "bpf.ringbuf_full");
	assert_string_equal(capture__string(c, c->counters[s.lost_counters[1].id].name),
			    "perf.lost");
	assert_int_equal(s.problems, 4);
	assert_int_equal(s.nproblem_counters, 2);
	assert_string_equal(capture__string(c, c->counters[s.problem_counters[0].id].name),
			    "bpf.ustack_err");
	assert_string_equal(capture__string(c, c->counters[s.problem_counters[1].id].name),
			    "processor.bad_record_size");
	analysis_summary__release(&s);

	/* The off-cpu event alone. */
	analysis_query__init(&q, fx->offcpu);
	assert_int_equal(analysis_summary__init(&s, fx->names, &q), 0);
	assert_int_equal(s.samples, 1);
	assert_int_equal(s.weight, 5000000);
	assert_int_equal(s.rate_hz * 1000, 0);
	analysis_summary__release(&s);

	q.event = 7;
	assert_int_equal(analysis_summary__init(&s, fx->names, &q), -EINVAL);
}

static void test_counter_class(void **state)
{
	assert_int_equal(analysis__counter_class("bpf.ringbuf_full"), ANALYSIS_COUNTER_LOST);
	assert_int_equal(analysis__counter_class("perf.lost_samples"), ANALYSIS_COUNTER_LOST);
	/* dropped whole by the processor: a loss, not a problem (a new user read
	 * "lost 14683" while 31,426 more were dropped on the problems line) */
	assert_int_equal(analysis__counter_class("processor.held_budget_full"), ANALYSIS_COUNTER_LOST);
	assert_int_equal(analysis__counter_class("processor.unknown_record"),
			 ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("bpf.filter_full"), ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("bpf.kstack_err"), ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("bpf.samples_seen"), ANALYSIS_COUNTER_INFO);
	/* Damaged or refused JIT input is a problem; its reading costs are not. */
	assert_int_equal(analysis__counter_class("jit.malformed"), ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("jit.huge"), ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("jit.bad_record"), ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("jit.funcs_full"), ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("jit.stale"), ANALYSIS_COUNTER_INFO);
	assert_int_equal(analysis__counter_class("jit.reads"), ANALYSIS_COUNTER_INFO);
	assert_int_equal(analysis__counter_class("jit.frames_proved"), ANALYSIS_COUNTER_INFO);
	/* A failed stack copy is a problem; a sample in execve past its point
	 * of no return (no stack left to copy) is a note, not counted there. */
	assert_int_equal(analysis__counter_class("bpf.stack_copy_err"), ANALYSIS_COUNTER_PROBLEM);
	assert_int_equal(analysis__counter_class("unwind.exec_replaced"), ANALYSIS_COUNTER_INFO);
	/* Measurements are never problems, whatever their prefix. */
	assert_int_equal(analysis__counter_class("processor.lag_max_ms"), ANALYSIS_COUNTER_INFO);
	assert_int_equal(analysis__counter_class("processor.lag_mean_ms"), ANALYSIS_COUNTER_INFO);
	assert_int_equal(analysis__counter_class("python.tracker_cpu_us"), ANALYSIS_COUNTER_INFO);
}

static void test_events(void **state)
{
	struct fixture *fx = *state;
	uint32_t ev = CAPTURE_NONE;

	assert_int_equal(analysis__find_event(fx->c, "off-cpu", &ev), 0);
	assert_int_equal(ev, fx->offcpu);
	assert_int_equal(analysis__find_event(fx->c, "cycles", &ev), -ENOENT);
	assert_int_equal(analysis__default_event(fx->c), fx->cpu);
}

/* Events of one name at two periods (segments of two recordings), and a
 * name that holds '#' itself: NAME#N picks the Nth, a bare repeated name
 * is ambiguous, a literal name wins over the NAME#N reading. */
static void test_repeated_event_names(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_event ev = { .period = 10101010 };
	uint32_t e1, e2, e3, out = CAPTURE_NONE;
	struct capture *c;
	char label[64];

	(void)state;
	assert_non_null(b);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	e1 = capture_builder__add_event(b, &ev);
	ev.period = 2004008;
	e2 = capture_builder__add_event(b, &ev);
	ev.name = capture_builder__string(b, "x#2");
	e3 = capture_builder__add_event(b, &ev);
	c = seal(b);
	assert_int_equal(analysis__find_event(c, "cpu-clock", &out), -ENOTUNIQ);
	assert_int_equal(analysis__find_event(c, "cpu-clock#1", &out), 0);
	assert_int_equal(out, e1);
	assert_int_equal(analysis__find_event(c, "cpu-clock#2", &out), 0);
	assert_int_equal(out, e2);
	assert_int_equal(analysis__find_event(c, "cpu-clock#3", &out), -ENOENT);
	assert_int_equal(analysis__find_event(c, "cpu-clock#0", &out), -ENOENT);
	assert_int_equal(analysis__find_event(c, "cpu-clock#2x", &out), -ENOENT);
	assert_int_equal(analysis__find_event(c, "x#2", &out), 0);
	assert_int_equal(out, e3);
	assert_int_equal(analysis__find_event(c, "x#1", &out), -ENOENT);
	analysis__event_label(c, e2, label, sizeof(label));
	assert_string_equal(label, "cpu-clock#2");
	analysis__event_label(c, e3, label, sizeof(label));
	assert_string_equal(label, "x#2");
	capture__free(c);
}

/* ---- naming edge cases --------------------------------------------------- */

static int setup_names(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct capture_module m = { .kind = CAPTURE_MODULE_VDSO };
	struct capture_event ev = { 0 };
	uint32_t vdso, kmod, f_main, f_sys, f_vdso, f_anon, f_semi, f_colon, f_nl, f_x, f_y;
	uint32_t f_kmain, f_knoname;

	assert_non_null(b);
	assert_non_null(fx);
	vdso = capture_builder__add_module(b, &m); /* no path */
	m.kind = CAPTURE_MODULE_KERNEL;
	m.path = capture_builder__string(b, "[kernel.kallsyms]");
	kmod = capture_builder__add_module(b, &m);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	fx->cpu = capture_builder__add_event(b, &ev);

	f_main = frame(b, "main", CAPTURE_NONE, 0x10, 0);
	f_sys = frame(b, "do_syscall_64", kmod, 0xffffffff81000010ull, CAPTURE_FRAME_F_KERNEL);
	f_knoname = frame(b, "", kmod, 0xffffffff81abcdefull, CAPTURE_FRAME_F_KERNEL);
	f_kmain = frame(b, "main", kmod, 0xffffffff81000020ull, CAPTURE_FRAME_F_KERNEL);
	f_vdso = frame(b, "", vdso, 0x9f0, 0);
	f_anon = frame(b, "", CAPTURE_NONE, 0xdead, 0);
	f_semi = frame(b, "ns::f;g", CAPTURE_NONE, 0x20, 0);
	f_colon = frame(b, "ns::f:g", CAPTURE_NONE, 0x30, 0);
	f_nl = frame(b, "two\nlines\r", CAPTURE_NONE, 0x40, 0);
	f_x = frame(b, "x", CAPTURE_NONE, 0x50, 0);
	f_y = frame(b, "y", CAPTURE_NONE, 0x60, 0);

	sample(b, 1, CAPTURE_NONE, stack(b, (uint32_t[]){ f_main, f_sys }, 2), fx->cpu, 2);
	sample(b, 2, CAPTURE_NONE, stack(b, (uint32_t[]){ f_main, f_kmain, f_knoname }, 3),
	       fx->cpu, 1);
	sample(b, 3, CAPTURE_NONE, stack(b, (uint32_t[]){ f_main, f_vdso }, 2), fx->cpu, 1);
	sample(b, 4, CAPTURE_NONE, stack(b, (uint32_t[]){ f_anon }, 1), fx->cpu, 1);
	sample(b, 5, CAPTURE_NONE, stack(b, (uint32_t[]){ f_semi }, 1), fx->cpu, 2);
	sample(b, 6, CAPTURE_NONE, stack(b, (uint32_t[]){ f_colon }, 1), fx->cpu, 3);
	sample(b, 7, CAPTURE_NONE, stack(b, (uint32_t[]){ f_nl }, 1), fx->cpu, 1);
	sample(b, 8, CAPTURE_NONE, CAPTURE_NONE, fx->cpu, 4);
	/* y and x tie at 1 under main: name order decides. */
	sample(b, 9, CAPTURE_NONE, stack(b, (uint32_t[]){ f_main, f_y }, 2), fx->cpu, 1);
	sample(b, 10, CAPTURE_NONE, stack(b, (uint32_t[]){ f_main, f_x }, 2), fx->cpu, 1);
	capture_builder__set_meta(b, "duration_ns", "2000000000");

	fx->c = seal(b);
	fx->names = analysis_names__new(fx->c);
	assert_non_null(fx->names);
	*state = fx;
	return 0;
}

static void test_frame_names(void **state)
{
	struct fixture *fx = *state;
	const struct capture *c = fx->c;
	const struct analysis_names *n = fx->names;
	const char *const expect[] = {
		"main", "do_syscall_64", "[kernel.kallsyms]+0xffffffff81abcdef", "main",
		"[vdso]+0x9f0", "[unknown]+0xdead", "ns::f;g", "ns::f:g", "two\nlines\r", "x", "y",
	};
	char small[8];
	uint32_t i;

	assert_int_equal(c->nframes, 11);
	for (i = 0; i < c->nframes; i++)
		assert_string_equal(n->keys[n->frame_keys[i]].name, expect[i]);
	/* A kernel and a user function of one name are different keys. */
	assert_int_not_equal(n->frame_keys[0], n->frame_keys[3]);
	assert_int_equal(n->keys[n->frame_keys[0]].kind, ANALYSIS_KEY_FUNCTION);
	assert_int_equal(n->keys[n->frame_keys[3]].kind, ANALYSIS_KEY_KERNEL);
	/* snprintf semantics. */
	assert_int_equal(analysis__frame_name(c, &c->frames[5], small, sizeof(small)), 16);
	assert_string_equal(small, "[unknow");
}

static void test_folded_names(void **state)
{
	struct fixture *fx = *state;

	/* ';' -> ':' merges "ns::f;g" (2) into "ns::f:g" (3); newlines become
	 * spaces; kernel frames end in "_[k]"; the empty stack is a frame. */
	assert_folded(fx, false, CAPTURE_NONE,
		      "[empty stack] 4\n"
		      "[unknown]+0xdead 1\n"
		      "main;[vdso]+0x9f0 1\n"
		      "main;do_syscall_64_[k] 2\n"
		      "main;main_[k];[kernel.kallsyms]+0xffffffff81abcdef_[k] 1\n"
		      "main;x 1\n"
		      "main;y 1\n"
		      "ns::f:g 5\n"
		      "two lines  1\n");
}

static void test_ties(void **state)
{
	struct fixture *fx = *state;
	struct analysis_tree *t = tree_of(fx, false, CAPTURE_NONE);
	const struct analysis_node *main = child(t, &t->nodes[0], "main");
	uint32_t id;
	const char *order[] = { "do_syscall_64", "[vdso]+0x9f0", "main", "x", "y" };
	size_t i = 0;

	assert_int_equal(main->total, 6);
	for (id = main->first_child; id != CAPTURE_NONE; id = t->nodes[id].next_sibling)
		assert_string_equal(node_name(t, id), order[i++]);
	assert_int_equal(i, 5);
	analysis_tree__free(t);
}

static void test_meta_duration(void **state)
{
	struct fixture *fx = *state;
	struct analysis_summary s;
	struct analysis_query q;

	analysis_query__init(&q, fx->cpu);
	assert_int_equal(analysis_summary__init(&s, fx->names, &q), 0);
	assert_true(s.duration_from_meta);
	assert_int_equal(s.duration_ns, 2000000000ull);
	assert_int_equal(s.samples, 10);
	assert_int_equal(s.weight, 17);
	assert_int_equal(s.empty_stacks, 4); /* in weight: the stackless sample weighs 4 */
	assert_int_equal(s.threads, 1);
	analysis_summary__release(&s);
}

/* ---- a capture with an event and nothing else ----------------------------- */

static int setup_empty(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct capture_event ev = { 0 };

	assert_non_null(b);
	assert_non_null(fx);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	fx->cpu = capture_builder__add_event(b, &ev);
	fx->c = seal(b);
	fx->names = analysis_names__new(fx->c);
	assert_non_null(fx->names);
	*state = fx;
	return 0;
}

static void test_empty(void **state)
{
	struct fixture *fx = *state;
	struct analysis_tree *t = tree_of(fx, true, CAPTURE_NONE);
	struct analysis_summary s;
	struct analysis_flat *f;
	char *text = NULL;
	size_t len = 1;

	assert_int_equal(t->nnodes, 1);
	assert_int_equal(t->nodes[0].total, 0);
	assert_int_equal(t->nodes[0].first_child, CAPTURE_NONE);
	assert_int_equal(analysis_tree__folded(t, &text, &len), 0);
	assert_string_equal(text, "");
	assert_int_equal(len, 0);
	free(text);
	f = analysis_flat__new(t, ANALYSIS_SORT_SELF);
	assert_non_null(f);
	assert_int_equal(f->nrows, 0);
	analysis_flat__free(f);
	assert_int_equal(analysis_summary__init(&s, fx->names, &t->query), 0);
	assert_int_equal(s.samples, 0);
	assert_int_equal(s.duration_ns, 0);
	assert_int_equal(s.threads, 0);
	assert_int_equal(s.rate_hz * 1000, 0);
	analysis_summary__release(&s);
	assert_int_equal(analysis__default_event(fx->c), 0);
	analysis_tree__free(t);
}

int main(void)
{
	const struct CMUnitTest graph[] = {
		cmocka_unit_test(test_call_tree), cmocka_unit_test(test_flat),
		cmocka_unit_test(test_folded),	  cmocka_unit_test(test_threads),
		cmocka_unit_test(test_summary),	  cmocka_unit_test(test_counter_class),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_repeated_event_names),
	};
	const struct CMUnitTest names[] = {
		cmocka_unit_test(test_frame_names),
		cmocka_unit_test(test_folded_names),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_meta_duration),
	};
	const struct CMUnitTest empty[] = {
		cmocka_unit_test(test_empty),
	};
	int failed = 0;

	failed += cmocka_run_group_tests_name("analysis graph", graph, setup_graph, teardown);
	failed += cmocka_run_group_tests_name("analysis names", names, setup_names, teardown);
	failed += cmocka_run_group_tests_name("analysis empty", empty, setup_empty, teardown);
	return failed ? 1 : 0;
}
