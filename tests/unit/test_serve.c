// SPDX-License-Identifier: MIT
/*
 * The serve layer's pure parts and the analysis it relies on, over a
 * capture built here:
 *
 *   process app (pid 100): thread app-100, thread worker-101
 *   process other (pid 200): thread other-200
 *   cpu-clock samples (weight 1):  app-100     main;a;leaf x6
 *                                  worker-101  main;b;leaf x3
 *                                  other-200   main;b x1  (libz.so frame b)
 *   off-cpu intervals of app-100: 3 complete (sleep, woken by worker-101;
 *                                 2 x disk, woken by a hardirq) of 10, 20,
 *                                 30 us, blocked in a (kernel leaf
 *                                 schedule), and one incomplete.
 *   probe site "req" of app: app-100 zone [1000000, 1004000), worker-101
 *                            zone [1001000, 1002000), a mark of app-100
 *                            at 1003000 with value 5.
 *
 * Expected values are derived in comments next to each assertion.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "userspace/serve/internal.h"
#include "userspace/serve/query.h"

struct fx {
	struct serve_profile *p;
	uint32_t cpu, off;
};

static uint32_t frame(struct capture_builder *b, const char *fn, uint32_t module, uint32_t flags)
{
	struct capture_frame f = { .module = module, .flags = flags,
				   .function = capture_builder__string(b, fn) };

	return capture_builder__add_frame(b, &f);
}

static uint32_t path(struct capture_builder *b, const uint32_t *fr, size_t n)
{
	uint32_t s = CAPTURE_NONE;
	size_t i;

	for (i = 0; i < n; i++)
		s = capture_builder__add_stack(b, s, fr[i]);
	return s;
}

static void sample(struct capture_builder *b, uint64_t t, uint32_t th, uint32_t st, uint32_t ev)
{
	struct capture_sample s = { .time_ns = t, .thread = th, .stack = st, .event = ev,
				    .weight = 1 };

	capture_builder__add_sample(b, &s);
}

static int setup(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct fx *fx = calloc(1, sizeof(*fx));
	struct capture_process pr = { .pid = 100 };
	struct capture_thread th = { .tid = 100 };
	struct capture_module m = { .kind = CAPTURE_MODULE_FILE };
	struct capture_event ev = { .period = 1000000 };
	uint32_t p1, p2, t_app, t_worker, t_other, libz, f_main, f_a, f_b, f_leaf, f_bz, f_sched;
	uint32_t s_a, s_b, s_z, s_k, i;
	struct capture *c = NULL;
	char err[256];
	void *buf;
	size_t len;

	assert_non_null(b);
	pr.comm = capture_builder__string(b, "app");
	p1 = capture_builder__add_process(b, &pr);
	pr.pid = 200;
	pr.comm = capture_builder__string(b, "other");
	p2 = capture_builder__add_process(b, &pr);
	th.process = p1;
	th.comm = capture_builder__string(b, "app");
	t_app = capture_builder__add_thread(b, &th);
	th.tid = 101;
	th.comm = capture_builder__string(b, "worker");
	t_worker = capture_builder__add_thread(b, &th);
	th.tid = 200;
	th.process = p2;
	th.comm = capture_builder__string(b, "other");
	t_other = capture_builder__add_thread(b, &th);
	m.path = capture_builder__string(b, "/usr/lib/libz.so");
	libz = capture_builder__add_module(b, &m);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	fx->cpu = capture_builder__add_event(b, &ev);
	ev.name = capture_builder__string(b, "off-cpu");
	ev.unit = capture_builder__string(b, "nanoseconds");
	ev.period = 1;
	fx->off = capture_builder__add_event(b, &ev);
	f_main = frame(b, "main", CAPTURE_NONE, 0);
	f_a = frame(b, "a", CAPTURE_NONE, 0);
	f_b = frame(b, "b", CAPTURE_NONE, 0);
	f_leaf = frame(b, "leaf", CAPTURE_NONE, 0);
	f_bz = frame(b, "b", libz, 0);
	f_sched = frame(b, "schedule", CAPTURE_NONE, CAPTURE_FRAME_F_KERNEL);
	s_a = path(b, (uint32_t[]){ f_main, f_a, f_leaf }, 3);
	s_b = path(b, (uint32_t[]){ f_main, f_b, f_leaf }, 3);
	s_z = path(b, (uint32_t[]){ f_main, f_bz }, 2);
	s_k = path(b, (uint32_t[]){ f_main, f_a, f_sched }, 3);
	for (i = 0; i < 6; i++)
		sample(b, 1000000 + i * 1000, t_app, s_a, fx->cpu);
	for (i = 0; i < 3; i++)
		sample(b, 1000500 + i * 1000, t_worker, s_b, fx->cpu);
	sample(b, 1002000, t_other, s_z, fx->cpu);
	for (i = 0; i < 4; i++) {
		struct capture_interval v = {
			.start_ns = 1000000 + i * 100000, .end_ns = 1000000 + i * 100000 + (i + 1) * 10000,
			.weight = (i + 1) * 10000, .thread = t_app, .event = fx->off, .stack = s_k,
			.flags = i == 3 ? CAPTURE_INTERVAL_F_END_UNKNOWN : 0,
			.state = i == 0 ? CAPTURE_OFFCPU_STATE_SLEEP : CAPTURE_OFFCPU_STATE_DISK,
			.cause = i == 0 ? CAPTURE_OFFCPU_CAUSE_TASK : CAPTURE_OFFCPU_CAUSE_HARDIRQ,
			.waker_thread = i == 0 ? t_worker : CAPTURE_NONE, .waker_stack = s_b,
			.cpu = 0,
		};

		capture_builder__add_interval(b, &v);
	}
	{
		struct capture_probe_site site = { capture_builder__string(b, "req"), p1 };
		const struct capture_probe_record recs[] = {
			{ .time_ns = 1000000, .thread = t_app, .kind = CAPTURE_PROBE_ZONE_BEGIN },
			{ .time_ns = 1001000, .thread = t_worker, .kind = CAPTURE_PROBE_ZONE_BEGIN },
			{ .time_ns = 1002000, .thread = t_worker, .kind = CAPTURE_PROBE_ZONE_END },
			{ .time_ns = 1003000, .thread = t_app, .kind = CAPTURE_PROBE_MARK, .value = 5 },
			{ .time_ns = 1004000, .thread = t_app, .kind = CAPTURE_PROBE_ZONE_END },
		};

		capture_builder__add_probe_site(b, &site);
		for (i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
			capture_builder__add_probe_record(b, &recs[i]);
	}
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	if (capture__open_mem(buf, len, "serve.msc", &c, err, sizeof(err)))
		fail_msg("open_mem: %s", err);
	free(buf);
	capture_builder__free(b);
	assert_int_equal(serve_profile__new(c, "/x/serve.msc", &fx->p), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;

	serve_profile__free(fx->p);
	free(fx);
	return 0;
}

static int parse(struct serve_query *q, enum serve_endpoint ep, const char *const *kv, char *err)
{
	int rc = 0;

	serve_query__init(q, ep);
	for (; *kv && !rc; kv += 2)
		rc = serve_query__set(q, kv[0], kv[1], err, 256);
	return rc ? rc : serve_query__finish(q, err, 256);
}

static void test_query_parse(void **state)
{
	struct serve_query q, q2;
	enum serve_endpoint ep;
	char err[256], a[4096], b[4096];
	char big[SERVE_MAX_VALUE + 2];

	(void)state;
	assert_int_equal(serve_query__endpoint("/api/flat", &ep), 0);
	assert_int_equal(ep, SERVE_EP_FLAT);
	assert_int_equal(serve_query__endpoint("/api/flat/", &ep), -ENOENT);
	assert_int_equal(serve_query__endpoint("/api/../flat", &ep), -ENOENT);

	assert_int_equal(parse(&q, SERVE_EP_FLAT,
			       (const char *[]){ "limit", "1000", "sort", "total", "focus", "a;b",
						 NULL },
			       err),
			 0);
	assert_int_equal(q.limit, 1000);
	assert_int_equal(q.sort, SERVE_SORT_TOTAL);
	assert_string_equal(q.focus, "a;b");
	/* Each of these names what is wrong with it. */
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "limit", "1001", NULL }, err),
			 -EINVAL);
	assert_non_null(strstr(err, "limit"));
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "limit", "0", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "limit", "-1", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "limit", "1e3", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "buckets", "3", NULL }, err),
			 -EINVAL);
	assert_non_null(strstr(err, "does not apply to /api/flat"));
	assert_int_equal(parse(&q, SERVE_EP_FLAT,
			       (const char *[]){ "sort", "self", "sort", "self", NULL }, err),
			 -EINVAL);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "nope", "1", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "sort", NULL, NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT,
			       (const char *[]){ "start", "10", "end", "10", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAMEGRAPH,
			       (const char *[]){ "min_share", "100.5", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAMEGRAPH,
			       (const char *[]){ "min_share", "nan", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAMEGRAPH,
			       (const char *[]){ "granularity", "line", NULL }, err),
			 0);
	assert_int_equal(q.granularity, SERVE_GRAN_LINE);
	assert_int_equal(parse(&q, SERVE_EP_FLAMEGRAPH,
			       (const char *[]){ "granularity", "module", NULL }, err),
			 0);
	assert_int_equal(q.granularity, SERVE_GRAN_MODULE);
	assert_int_equal(parse(&q, SERVE_EP_FLAMEGRAPH,
			       (const char *[]){ "granularity", "dso", NULL }, err),
			 -EINVAL);
	assert_non_null(strstr(err, "granularity"));
	/* label terms: known fields with values, at most 8 of them */
	assert_int_equal(parse(&q, SERVE_EP_FLAT,
			       (const char *[]){ "label", "comm:app,pid:!200", NULL }, err),
			 0);
	assert_string_equal(q.label, "comm:app,pid:!200");
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "label", "comm", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "label", "pid:!", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "label", "app:x", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_FLAT,
			       (const char *[]){ "label", "pid:1,pid:2,pid:3,pid:4,pid:5,pid:6,pid:7,"
							  "pid:8,pid:9", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_SOURCE, (const char *[]){ NULL }, err), -EINVAL);
	assert_non_null(strstr(err, "function"));
	assert_int_equal(parse(&q, SERVE_EP_INTERVALS,
			       (const char *[]){ "limit", "5000", NULL }, err),
			 0);
	assert_int_equal(parse(&q, SERVE_EP_FLAT,
			       (const char *[]){ "thread", "4294967295", NULL }, err),
			 -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "focus", big, NULL }, err),
			 -EINVAL);

	/* Canonical forms: equal for equal queries in any order, else different. */
	assert_int_equal(parse(&q, SERVE_EP_FLAT,
			       (const char *[]){ "limit", "5", "focus", "a", NULL }, err), 0);
	assert_int_equal(parse(&q2, SERVE_EP_FLAT,
			       (const char *[]){ "focus", "a", "limit", "5", NULL }, err), 0);
	serve_query__canonical(&q, a, sizeof(a));
	serve_query__canonical(&q2, b, sizeof(b));
	assert_string_equal(a, b);
	assert_int_equal(parse(&q2, SERVE_EP_FLAT,
			       (const char *[]){ "ignore", "a", "limit", "5", NULL }, err), 0);
	serve_query__canonical(&q2, b, sizeof(b));
	assert_string_not_equal(a, b);

	/* The base's part: /api/diff only, end after start, in the canonical form. */
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "base_start", "5", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_DIFF,
			       (const char *[]){ "base_start", "5", "base_end", "5", NULL }, err),
			 -EINVAL);
	assert_int_equal(parse(&q, SERVE_EP_DIFF,
			       (const char *[]){ "base_start", "5", "base_end", "9", NULL }, err), 0);
	assert_true(q.base_start_ns == 5 && q.base_end_ns == 9);
	assert_int_equal(parse(&q2, SERVE_EP_DIFF, (const char *[]){ "base_start", "5", NULL }, err),
			 0);
	serve_query__canonical(&q, a, sizeof(a));
	serve_query__canonical(&q2, b, sizeof(b));
	assert_string_not_equal(a, b);
}

/* Flat table of event's samples under a focus/ignore pattern and a selection. */
static struct analysis_flat *flat_of(const struct serve_profile *p, const char *focus,
				     const char *ignore, const struct analysis_select_spec *sel,
				     uint32_t event, struct analysis_tree **t, struct analysis_filter **f,
				     struct analysis_select **s)
{
	struct analysis_filter_spec spec = { .focus = focus, .ignore = ignore };
	struct analysis_query q;
	char err[256];

	analysis_query__init(&q, event);
	assert_int_equal(analysis_filter__new(p->views[0], &spec, f, err, sizeof(err)), 0);
	q.filter = *f;
	*s = NULL;
	if (sel) {
		assert_int_equal(analysis_select__new(p->views[0], sel, s), 0);
		q.select = *s;
	}
	*t = analysis_tree__new(p->names[0][SERVE_GRAN_FUNCTION], &q);
	assert_non_null(*t);
	return analysis_flat__new(*t, ANALYSIS_SORT_TOTAL);
}

static void flat_done(struct analysis_flat *fl, struct analysis_tree *t, struct analysis_filter *f,
		      struct analysis_select *s)
{
	analysis_flat__free(fl);
	analysis_tree__free(t);
	analysis_filter__free(f);
	analysis_select__free(s);
}

static uint64_t total_of(const struct analysis_flat *fl, const char *name)
{
	uint32_t i;

	for (i = 0; i < fl->nrows; i++)
		if (!strcmp(fl->names->keys[fl->rows[i].key].name, name))
			return fl->rows[i].total;
	return 0;
}

static void test_filters(void **state)
{
	struct fx *fx = *state;
	struct analysis_select_spec sel;
	struct analysis_select *s;
	struct analysis_filter *f;
	struct analysis_tree *t;
	struct analysis_flat *fl;

	/* focus a (exactly, as the API asks): only app's 6 samples (main;a;leaf) */
	fl = flat_of(fx->p, "^a$", NULL, NULL, fx->cpu, &t, &f, &s);
	assert_int_equal(fl->total_weight, 6);
	assert_int_equal(total_of(fl, "b"), 0);
	flat_done(fl, t, f, s);

	/* ignore leaf: only other's main;b (1 sample) */
	fl = flat_of(fx->p, NULL, "^leaf$", NULL, fx->cpu, &t, &f, &s);
	assert_int_equal(fl->total_weight, 1);
	flat_done(fl, t, f, s);

	/* process 0 (app): app 6 + worker 3; other's sample dropped */
	analysis_select_spec__init(&sel);
	sel.process = 0;
	fl = flat_of(fx->p, NULL, NULL, &sel, fx->cpu, &t, &f, &s);
	assert_int_equal(fl->total_weight, 9);
	assert_int_equal(total_of(fl, "b"), 3);
	flat_done(fl, t, f, s);

	/* module libz.so: the one sample with a libz frame */
	analysis_select_spec__init(&sel);
	sel.module = "libz.so";
	fl = flat_of(fx->p, NULL, NULL, &sel, fx->cpu, &t, &f, &s);
	assert_int_equal(fl->total_weight, 1);
	flat_done(fl, t, f, s);

	analysis_select_spec__init(&sel);
	sel.process = 7;
	assert_int_equal(analysis_select__new(fx->p->views[0], &sel, &s), -EINVAL);
	assert_null(s);
}

static void test_diff(void **state)
{
	struct fx *fx = *state;
	struct analysis_filter *fa, *fb;
	struct analysis_select *sa, *sb;
	struct analysis_tree *ta, *tb;
	struct analysis_flat *base, *cur;
	struct analysis_diff d;

	/* base: everything (10 samples: a 6, b 4 incl. libz's); current: focus b
	 * (4 samples).  Self shares: b 10% -> 25% (+15 pp), leaf 90% -> 75%
	 * (-15 pp): the two largest self changes come first. */
	base = flat_of(fx->p, NULL, NULL, NULL, fx->cpu, &tb, &fb, &sb);
	cur = flat_of(fx->p, "^b$", NULL, NULL, fx->cpu, &ta, &fa, &sa);
	assert_int_equal(analysis_diff__init(&d, base, cur, ANALYSIS_SORT_SELF, true), 0);
	assert_int_equal(d.base_weight, 10);
	assert_int_equal(d.new_weight, 4);
	assert_true(!strcmp(d.rows[0].name, "b") || !strcmp(d.rows[0].name, "leaf"));
	assert_true(fabs(fabs(d.rows[0].delta_self) - 0.15) < 1e-9);
	analysis_diff__release(&d);
	flat_done(base, tb, fb, sb);
	flat_done(cur, ta, fa, sa);
}

/* "key/key/..." of a node, from the root: comparable across tree and shape. */
static void node_path(const uint32_t *keys, const uint32_t *parents, uint32_t id, char *buf,
		      size_t size)
{
	char tmp[256];

	buf[0] = '\0';
	for (; id && id != CAPTURE_NONE; id = parents[id]) {
		snprintf(tmp, sizeof(tmp), "%u/%s", keys[id], buf);
		snprintf(buf, size, "%s", tmp);
	}
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shape's weights equal the tree's, node for node, for filtered queries too. */
static void test_shape_matches_tree(void **state)
{
	struct fx *fx = *state;
	const struct analysis_names *n = fx->p->names[0][SERVE_GRAN_FUNCTION];
	struct analysis_shape *sh;
	struct analysis_filter_spec spec = { 0 };
	const char *focus[] = { NULL, "^b$", "^leaf$", "^schedule$" };
	char err[256];
	uint32_t event[] = { fx->cpu, fx->cpu, fx->cpu, fx->off };
	int k;

	assert_int_equal(analysis_shape__new(n, &sh), 0);
	for (k = 0; k < 4; k++) {
		struct analysis_filter *f = NULL;
		struct analysis_weights w;
		struct analysis_query q;
		struct analysis_tree *t;
		char *a[64], *b[64], path[256];
		uint32_t keys[64], parents[64], i, na = 0, nb = 0;

		analysis_query__init(&q, event[k]);
		spec.focus = focus[k];
		assert_int_equal(analysis_filter__new(fx->p->views[0], &spec, &f, err, sizeof(err)), 0);
		q.filter = f;
		q.complete_only = k != 3;
		t = analysis_tree__new(n, &q);
		assert_non_null(t);
		assert_int_equal(analysis_shape__weigh(sh, &q, &w), 0);
		assert_int_equal(w.total[0], t->nodes[0].total);
		assert_true(t->nnodes < 64 && sh->nnodes < 64);
		/* Clipped intervals: the tree hangs their time under a
		 * [clipped by the recording window] leaf, the shape keeps it in
		 * the interval's own frame; the totals above agree. */
		if (!q.complete_only) {
			analysis_tree__free(t);
			analysis_weights__release(&w);
			analysis_filter__free(f);
			continue;
		}
		for (i = 0; i < t->nnodes; i++) {
			keys[i] = t->nodes[i].key;
			parents[i] = t->nodes[i].parent;
		}
		for (i = 1; i < t->nnodes; i++) {
			node_path(keys, parents, i, path, sizeof(path));
			assert_true(asprintf(&a[na++], "%s %lu %lu", path,
					     (unsigned long)t->nodes[i].self,
					     (unsigned long)t->nodes[i].total) > 0);
		}
		for (i = 0; i < sh->nnodes; i++) {
			keys[i] = sh->nodes[i].key;
			parents[i] = sh->nodes[i].parent;
		}
		for (i = 1; i < sh->nnodes; i++) {
			if (!w.total[i])
				continue;
			node_path(keys, parents, i, path, sizeof(path));
			assert_true(asprintf(&b[nb++], "%s %lu %lu", path, (unsigned long)w.self[i],
					     (unsigned long)w.total[i]) > 0);
		}
		assert_int_equal(na, nb);
		qsort(a, na, sizeof(*a), str_cmp);
		qsort(b, nb, sizeof(*b), str_cmp);
		for (i = 0; i < na; i++) {
			assert_string_equal(a[i], b[i]);
			free(a[i]);
			free(b[i]);
		}
		/* thread roots are the tree's business */
		q.per_thread = true;
		analysis_weights__release(&w);
		assert_int_equal(analysis_shape__weigh(sh, &q, &w), -EINVAL);
		analysis_tree__free(t);
		analysis_filter__free(f);
	}
	analysis_shape__free(sh);
}

static void test_api_answers(void **state)
{
	struct fx *fx = *state;
	struct serve_app app = { .profile = fx->p };
	struct serve_query q;
	char err[256], *body;
	size_t len;

	/* flamegraph pruned at 50%: all (10), main (10), a (6), leaf under a (6) kept;
	 * b (4: the libz frame has the same key) and leaf under b (3) pruned */
	assert_int_equal(parse(&q, SERVE_EP_FLAMEGRAPH, (const char *[]){ "min_share", "50", NULL },
			       err), 0);
	assert_int_equal(serve_api__answer(&app, &q, &body, &len, err, sizeof(err)), 0);
	assert_non_null(strstr(body, "\"pruned\":2"));
	assert_non_null(strstr(body, "\"name\":\"a\""));
	assert_null(strstr(body, "\"name\":\"b\""));
	free(body);
	/* a thread row that does not exist is a 400 with a message */
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "thread", "3", NULL }, err), 0);
	assert_int_equal(serve_api__answer(&app, &q, &body, &len, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "thread"));
	/* diff without a base */
	assert_int_equal(parse(&q, SERVE_EP_DIFF, (const char *[]){ NULL }, err), 0);
	assert_int_equal(serve_api__answer(&app, &q, &body, &len, err, sizeof(err)), -EINVAL);
	/* intervals of app: 3 complete by start; the first woken by worker-101 */
	assert_int_equal(parse(&q, SERVE_EP_INTERVALS,
			       (const char *[]){ "thread", "0", "incomplete", "0", NULL }, err),
			 0);
	assert_int_equal(serve_api__answer(&app, &q, &body, &len, err, sizeof(err)), 0);
	assert_non_null(strstr(body, "\"total\":3"));
	assert_non_null(strstr(body, "\"comm\":\"worker\""));
	free(body);
	/* by default (as report) the incomplete one is listed too */
	assert_int_equal(parse(&q, SERVE_EP_INTERVALS, (const char *[]){ "thread", "0", NULL }, err),
			 0);
	assert_int_equal(serve_api__answer(&app, &q, &body, &len, err, sizeof(err)), 0);
	assert_non_null(strstr(body, "\"total\":4"));
	free(body);
	/* label=comm:worker keeps worker-101's 3 samples; by thread, one group */
	assert_int_equal(parse(&q, SERVE_EP_FLAT, (const char *[]){ "label", "comm:worker", NULL },
			       err), 0);
	assert_int_equal(serve_api__answer(&app, &q, &body, &len, err, sizeof(err)), 0);
	assert_non_null(strstr(body, "\"total\":3"));
	free(body);
	assert_int_equal(parse(&q, SERVE_EP_GROUPS,
			       (const char *[]){ "by", "process", "label", "pid:!200", NULL }, err),
			 0);
	assert_int_equal(serve_api__answer(&app, &q, &body, &len, err, sizeof(err)), 0);
	/* app [100] holds app-100's 6 and worker-101's 3; other [200] is left out */
	assert_non_null(strstr(body, "\"total\":9"));
	assert_non_null(strstr(body, "\"nrows\":1"));
	free(body);
}

/* One /api/zones answer of the fixture's profile, with keys kv. */
static char *zones_answer(struct fx *fx, const char *const *kv)
{
	struct serve_app app = { .profile = fx->p };
	struct serve_query q;
	char err[256], *body = NULL;
	size_t len;

	assert_int_equal(parse(&q, SERVE_EP_ZONES, kv, err), 0);
	if (serve_api__answer(&app, &q, &body, &len, err, sizeof(err)))
		fail_msg("zones: %s", err);
	return body;
}

static void expect_in(char *body, const char *want)
{
	if (!strstr(body, want))
		fail_msg("'%s' not in %s", want, body);
	free(body);
}

/*
 * /api/zones pairs once per profile: three requests (all, label, window)
 * make one pairing.  The origin is the first sample, 1000000: the window
 * start=1500&end=2500 is [1001500, 1002500), clipping app's zone to 1000
 * and worker's to 500 (total 1500, both cut); label=comm:worker keeps
 * worker's zone alone (1000); the mark of app counts in the whole range.
 */
static void test_zones_paired_once(void **state)
{
	struct fx *fx = *state;

	expect_in(zones_answer(fx, (const char *[]){ NULL }), "\"total_ns\":5000");
	expect_in(zones_answer(fx, (const char *[]){ "label", "comm:worker", NULL }),
		  "\"total_ns\":1000");
	expect_in(zones_answer(fx, (const char *[]){ "start", "1500", "end", "2500", NULL }),
		  "\"total_ns\":1500");
	expect_in(zones_answer(fx, (const char *[]){ "start", "1500", "end", "2500", NULL }),
		  "\"clipped\":2");
	expect_in(zones_answer(fx, (const char *[]){ "thread", "0", NULL }), "\"value\":5");
	assert_int_equal(fx->p->zone_pairings, 1);
	assert_non_null(fx->p->zones);
}

/* Over the budget, each request pairs for itself and keeps nothing. */
static void test_zones_over_budget(void **state)
{
	struct fx *fx = *state;

	fx->p->zones_budget = 16;
	expect_in(zones_answer(fx, (const char *[]){ NULL }), "\"count\":2");
	expect_in(zones_answer(fx, (const char *[]){ NULL }), "\"count\":2");
	assert_int_equal(fx->p->zone_pairings, 2);
	assert_null(fx->p->zones);
}

/*
 * analysis_source: per-line costs of f.  Samples (weight 1):
 *   main;f@10        x4   innermost f frame: line 10, the stack's leaf -> self
 *   main;f@10';g     x2   f@10' (another address of line 10), g is the leaf
 *   main;f@10;f@11   x3   recursion: the innermost f frame, line 11, is charged
 *   main;g           x1   no f
 * So line 10: self 4, total 4 + 2 = 6; line 11: self 3, total 3; the
 * lines' totals add up to f's total 9 of all 10.  A frame of g at line 10
 * of f.c is not f's.
 */
static void test_source_lines(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_event ev = { .period = 1 };
	struct capture_frame fr = { .module = CAPTURE_NONE };
	struct analysis_source src;
	struct analysis_query q;
	struct capture *c = NULL;
	uint32_t f_main, f10, f10b, f11, f_g, s1, s2, s3, s4, e, i;
	char err[256];
	void *buf;
	size_t len;

	(void)state;
	assert_non_null(b);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	e = capture_builder__add_event(b, &ev);
	fr.file = capture_builder__string(b, "/src/f.c");
	fr.function = capture_builder__string(b, "main");
	fr.line = 5;
	fr.address = 0x100;
	f_main = capture_builder__add_frame(b, &fr);
	fr.function = capture_builder__string(b, "f");
	fr.line = 10;
	fr.address = 0x200;
	f10 = capture_builder__add_frame(b, &fr);
	fr.address = 0x204;
	f10b = capture_builder__add_frame(b, &fr);
	fr.line = 11;
	fr.address = 0x210;
	f11 = capture_builder__add_frame(b, &fr);
	fr.function = capture_builder__string(b, "g");
	fr.line = 10;
	fr.address = 0x300;
	f_g = capture_builder__add_frame(b, &fr);
	s1 = path(b, (uint32_t[]){ f_main, f10 }, 2);
	s2 = path(b, (uint32_t[]){ f_main, f10b, f_g }, 3);
	s3 = path(b, (uint32_t[]){ f_main, f10, f11 }, 3);
	s4 = path(b, (uint32_t[]){ f_main, f_g }, 2);
	for (i = 0; i < 4; i++)
		sample(b, 100 + i, CAPTURE_NONE, s1, e);
	for (i = 0; i < 2; i++)
		sample(b, 200 + i, CAPTURE_NONE, s2, e);
	for (i = 0; i < 3; i++)
		sample(b, 300 + i, CAPTURE_NONE, s3, e);
	sample(b, 400, CAPTURE_NONE, s4, e);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	if (capture__open_mem(buf, len, "src.msc", &c, err, sizeof(err)))
		fail_msg("open_mem: %s", err);
	free(buf);
	capture_builder__free(b);

	analysis_query__init(&q, e);
	assert_int_equal(analysis_source__init(&src, c, &q, "f", NULL), 0);
	assert_int_equal(src.weight, 10);
	assert_int_equal(src.total, 9);
	assert_int_equal(src.nlines, 2);
	assert_string_equal(capture__string(c, src.lines[0].file), "/src/f.c");
	assert_int_equal(src.lines[0].line, 10);
	assert_int_equal(src.lines[0].self, 4);
	assert_int_equal(src.lines[0].total, 6);
	assert_int_equal(src.lines[1].line, 11);
	assert_int_equal(src.lines[1].self, 3);
	assert_int_equal(src.lines[1].total, 3);
	analysis_source__release(&src);
	/* A time window: only the recursion's samples (t 300..302). */
	q.start_ns = 300;
	assert_int_equal(analysis_source__init(&src, c, &q, "f", NULL), 0);
	assert_int_equal(src.total, 3);
	assert_int_equal(src.nlines, 1);
	assert_int_equal(src.lines[0].line, 11);
	analysis_source__release(&src);
	/* No such function: nothing charged, nothing listed. */
	q.start_ns = 0;
	assert_int_equal(analysis_source__init(&src, c, &q, "nope", NULL), 0);
	assert_int_equal(src.total, 0);
	assert_int_equal(src.nlines, 0);
	analysis_source__release(&src);
	q.event = 7;
	assert_int_equal(analysis_source__init(&src, c, &q, "f", NULL), -EINVAL);
	capture__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_parse),
		cmocka_unit_test(test_source_lines),
		cmocka_unit_test_setup_teardown(test_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_diff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shape_matches_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_api_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zones_paired_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zones_over_budget, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
