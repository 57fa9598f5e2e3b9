// SPDX-License-Identifier: MIT
/*
 * Host-wide views (analysis/scope.c) on a small host capture built here:
 * two containers (a systemd-nspawn machine "msA" and a podman container)
 * and a host process, each burning in its own function and module.  The
 * capture goes through the writer and the reader, so the cgroups table and
 * the sample_cgroups column are checked on the way (and a bad column is
 * rejected).  Expected weights are derived in comments.
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
#include "analysis/scope.h"
#include "capture/capture.h"

#define PODMAN_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/*
 * Processes: 0 burnA [100] in cgroup A (machine msA), 1 burnB [200] with
 * two threads 200, 201 in cgroup B (podman), 2 sh [300] on the host.
 * Samples (weight each): A: 6 x 1 in burn_a (module /a/burn);
 * B: thread 200 4 x 1, thread 201 2 x 1 in burn_b (module /b/burn);
 * host: 3 x 1 in main (module /bin/sh) under libc's __libc_start_main;
 * 1 sample of 200 with no cgroup.  Total 16.
 */
static struct capture *build(bool bad_column)
{
	struct capture_builder *b = capture_builder__new();
	struct capture *c = NULL;
	uint32_t ev, mod[4], fr[4], st[4], th[4], pr[3], cg[3];
	void *buf = NULL;
	size_t len = 0;
	char err[256];
	int i, rc;

	assert_non_null(b);
	ev = capture_builder__add_event(b, &(struct capture_event){
		.name = capture_builder__string(b, "cpu-clock"),
		.unit = capture_builder__string(b, "samples"), .period = 1000000 });
	const char *paths[] = { "/a/burn", "/b/burn", "/bin/sh", "/lib/libc.so.6" };
	const char *funcs[] = { "burn_a", "burn_b", "main", "__libc_start_main" };
	for (i = 0; i < 4; i++) {
		mod[i] = capture_builder__add_module(b, &(struct capture_module){
			.path = capture_builder__string(b, paths[i]),
			.kind = CAPTURE_MODULE_FILE });
		fr[i] = capture_builder__add_frame(b, &(struct capture_frame){
			.module = mod[i], .address = 0x1000 + (uint64_t)i,
			.function = capture_builder__string(b, funcs[i]) });
	}
	st[3] = capture_builder__add_stack(b, CAPTURE_NONE, fr[3]); /* libc root */
	st[0] = capture_builder__add_stack(b, st[3], fr[0]);
	st[1] = capture_builder__add_stack(b, st[3], fr[1]);
	st[2] = capture_builder__add_stack(b, st[3], fr[2]);
	const char *comms[] = { "burnA", "burnB", "sh" };
	const uint32_t pids[] = { 100, 200, 300 };
	for (i = 0; i < 3; i++)
		pr[i] = capture_builder__add_process(b, &(struct capture_process){
			.pid = pids[i], .comm = capture_builder__string(b, comms[i]),
			.pidns = 4026531836u + (uint64_t)i });
	th[0] = capture_builder__add_thread(b, &(struct capture_thread){
		.tid = 100, .ns_tid = 1, .process = pr[0], .comm = capture_builder__string(b, "burnA") });
	th[1] = capture_builder__add_thread(b, &(struct capture_thread){
		.tid = 200, .ns_tid = 1, .process = pr[1], .comm = capture_builder__string(b, "burnB") });
	th[2] = capture_builder__add_thread(b, &(struct capture_thread){
		.tid = 201, .ns_tid = 2, .process = pr[1], .comm = capture_builder__string(b, "worker") });
	th[3] = capture_builder__add_thread(b, &(struct capture_thread){
		.tid = 300, .ns_tid = 300, .process = pr[2], .comm = capture_builder__string(b, "sh") });
	cg[0] = capture_builder__add_cgroup(b, &(struct capture_cgroup){
		.cgroup_id = 11, .path = capture_builder__string(b, "/machine.slice/machine-msA.scope"),
		.container = capture_builder__string(b, "msA"),
		.runtime = capture_builder__string(b, "systemd-nspawn") });
	cg[1] = capture_builder__add_cgroup(b, &(struct capture_cgroup){
		.cgroup_id = 12,
		.path = capture_builder__string(b, "/machine.slice/libpod-" PODMAN_ID ".scope"),
		.container = capture_builder__string(b, PODMAN_ID),
		.runtime = capture_builder__string(b, "podman") });
	cg[2] = capture_builder__add_cgroup(b, &(struct capture_cgroup){
		.cgroup_id = 13, .path = capture_builder__string(b, "/user.slice") });

	struct { uint32_t thread, stack, cgroup, n; } plan[] = {
		{ th[0], st[0], cg[0], 6 }, { th[1], st[1], cg[1], 4 }, { th[2], st[1], cg[1], 2 },
		{ th[3], st[2], cg[2], 3 }, { th[1], st[1], CAPTURE_NONE, 1 },
	};
	uint64_t t = 1000;
	for (size_t p = 0; p < sizeof(plan) / sizeof(plan[0]); p++)
		for (uint32_t k = 0; k < plan[p].n; k++) {
			uint32_t s = capture_builder__add_sample(b, &(struct capture_sample){
				.time_ns = t++, .thread = plan[p].thread, .cpu = 0,
				.stack = plan[p].stack, .event = ev, .weight = 1 });

			if (plan[p].cgroup != CAPTURE_NONE)
				assert_int_equal(capture_builder__set_sample_cgroup(b, s, plan[p].cgroup),
						 0);
		}
	if (bad_column)
		capture_builder__set_sample_cgroup(b, 3, 7); /* no cgroups row 7 */
	capture_builder__set_meta(b, "mode", "system-wide");
	rc = capture_builder__serialize(b, &buf, &len);
	if (bad_column) {
		assert_int_equal(rc, -EINVAL);
		assert_non_null(strstr(capture_builder__error(b), "sample_cgroups"));
		capture_builder__free(b);
		free(buf);
		return NULL;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(capture__open_mem(buf, len, "host.msc", &c, err, sizeof(err)), 0);
	free(buf);
	capture_builder__free(b);
	return c;
}

static void test_roundtrip(void **state)
{
	struct capture *c = build(false);

	assert_int_equal(c->ncgroups, 3);
	assert_int_equal(c->nsample_cgroups, 16);
	assert_int_equal(capture__sample_cgroup(c, 0), 0);
	assert_int_equal(capture__sample_cgroup(c, 15), CAPTURE_NONE); /* the cgroup-less one */
	assert_true(c->cgroups[1].cgroup_id == 12);
	assert_string_equal(capture__string(c, c->cgroups[1].runtime), "podman");
	capture__free(c);
	assert_null(build(true));
}

/* Summed weight of v's samples. */
static uint64_t weight(const struct capture *v)
{
	uint64_t w = 0;

	for (uint32_t i = 0; i < v->nsamples; i++)
		w += v->samples[i].weight;
	return w;
}

static uint64_t filtered(const struct capture *c, const char *const *args, const int *fields,
			 int n)
{
	struct analysis_scope_filter f = { 0 };
	struct analysis_scope *s = NULL;
	uint64_t w;

	for (int i = 0; i < n; i++)
		assert_int_equal(analysis_scope_filter__add(&f, fields[i], args[i]), 0);
	assert_int_equal(analysis_scope__new(c, &f, false, &s), 0);
	w = weight(analysis_scope__capture(s));
	/* the column stays parallel to the kept samples */
	assert_int_equal(analysis_scope__capture(s)->nsample_cgroups,
			 analysis_scope__capture(s)->nsamples);
	analysis_scope__free(s);
	analysis_scope_filter__release(&f);
	return w;
}

#define F1(c, field, a) filtered(c, (const char *[]){ a }, (const int[]){ field }, 1)

static void test_filters(void **state)
{
	struct capture *c = build(false);
	struct analysis_scope_filter f = { 0 };

	assert_int_equal(F1(c, ANALYSIS_FIELD_PID, "200"), 7);	  /* 4 + 2 + 1 */
	assert_int_equal(F1(c, ANALYSIS_FIELD_PID, "!200"), 9);	  /* 16 - 7 */
	assert_int_equal(F1(c, ANALYSIS_FIELD_TID, "201"), 2);
	assert_int_equal(F1(c, ANALYSIS_FIELD_COMM, "worker"), 2); /* the thread's comm */
	assert_int_equal(F1(c, ANALYSIS_FIELD_COMM, "burnB"), 7);  /* the process's comm too */
	assert_int_equal(F1(c, ANALYSIS_FIELD_MODULE, "burn"), 13); /* both /a/burn and /b/burn */
	assert_int_equal(F1(c, ANALYSIS_FIELD_MODULE, "/a/burn"), 6);
	assert_int_equal(F1(c, ANALYSIS_FIELD_MODULE, "libc.so.6"), 16); /* every stack */
	assert_int_equal(F1(c, ANALYSIS_FIELD_MODULE, "!sh"), 13);
	assert_int_equal(F1(c, ANALYSIS_FIELD_CONTAINER, "msA"), 6);
	assert_int_equal(F1(c, ANALYSIS_FIELD_CONTAINER, "0123456789ab"), 6); /* short id: B's 4+2 */
	assert_int_equal(F1(c, ANALYSIS_FIELD_CONTAINER, "012"), 0);	/* too short a prefix */
	assert_int_equal(F1(c, ANALYSIS_FIELD_CONTAINER, "!msA"), 10);
	assert_int_equal(F1(c, ANALYSIS_FIELD_CGROUP, "/machine.slice"), 12); /* 6 + 6 */
	assert_int_equal(F1(c, ANALYSIS_FIELD_CGROUP, "/machine.slice/"), 12);
	assert_int_equal(F1(c, ANALYSIS_FIELD_CGROUP, "/machine"), 0); /* not a path prefix */
	assert_int_equal(F1(c, ANALYSIS_FIELD_CGROUP, "/"), 15);	      /* all with a cgroup */
	/* two of one field: either; two fields: both */
	assert_int_equal(filtered(c, (const char *[]){ "100", "300" },
				  (const int[]){ ANALYSIS_FIELD_PID, ANALYSIS_FIELD_PID }, 2),
			 9);
	assert_int_equal(filtered(c, (const char *[]){ "200", "0123456789ab" },
				  (const int[]){ ANALYSIS_FIELD_PID, ANALYSIS_FIELD_CONTAINER }, 2),
			 6);
	/* bad values */
	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_PID, "12x"), -EINVAL);
	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_PID, "!"), -EINVAL);
	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_TID, "-1"), -EINVAL);
	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_COMM, ""), -EINVAL);
	assert_int_equal(f.nterms, 0);
	capture__free(c);
}

static void test_groups(void **state)
{
	struct capture *c = build(false);
	struct analysis_groups g;
	struct analysis_query q;

	analysis_query__init(&q, 0);
	assert_int_equal(analysis_groups__init(&g, c, &q, ANALYSIS_BY_CONTAINER), 0);
	assert_int_equal(g.total, 16);
	assert_int_equal(g.nrows, 4);
	assert_string_equal(g.rows[0].name, "0123456789ab (podman)"); /* 6, ties by name */
	assert_int_equal(g.rows[0].weight, 6);
	assert_string_equal(g.rows[1].name, "msA (systemd-nspawn)");
	assert_int_equal(g.rows[1].weight, 6);
	assert_string_equal(g.rows[2].name, "[host]");
	assert_int_equal(g.rows[2].weight, 3);
	assert_string_equal(g.rows[3].name, "[unknown]");
	assert_int_equal(g.rows[3].weight, 1);
	analysis_groups__release(&g);

	assert_int_equal(analysis_groups__init(&g, c, &q, ANALYSIS_BY_PROCESS), 0);
	assert_int_equal(g.nrows, 3);
	assert_string_equal(g.rows[0].name, "burnB [200, ns 1]");
	assert_int_equal(g.rows[0].weight, 7);
	assert_string_equal(g.rows[2].name, "sh [300]");
	analysis_groups__release(&g);

	assert_int_equal(analysis_groups__init(&g, c, &q, ANALYSIS_BY_THREAD), 0);
	assert_int_equal(g.nrows, 4);
	assert_string_equal(g.rows[1].name, "burnB [200/200, ns 1/1]"); /* 4 + 1 */
	assert_int_equal(g.rows[1].weight, 5);
	assert_string_equal(g.rows[3].name, "worker [200/201, ns 1/2]");
	analysis_groups__release(&g);

	/* module of the innermost frame: both burn modules are "burn" but stay apart */
	assert_int_equal(analysis_groups__init(&g, c, &q, ANALYSIS_BY_MODULE), 0);
	assert_int_equal(g.nrows, 3);
	assert_string_equal(g.rows[0].name, "burn");
	assert_int_equal(g.rows[0].weight, 7);
	assert_string_equal(g.rows[1].name, "burn");
	assert_int_equal(g.rows[1].weight, 6);
	assert_string_equal(g.rows[2].name, "sh");
	analysis_groups__release(&g);

	/* the query's window and thread select as they do for the tree: samples
	 * 1006..1011 are burnB's 4 and its worker's 2, none of the others */
	q.start_ns = 1006;
	q.end_ns = 1012;
	assert_int_equal(analysis_groups__init(&g, c, &q, ANALYSIS_BY_PROCESS), 0);
	assert_int_equal(g.nrows, 1);
	assert_string_equal(g.rows[0].name, "burnB [200, ns 1]");
	assert_int_equal(g.rows[0].weight, 6);
	assert_int_equal(g.total, 6);
	analysis_groups__release(&g);
	q.thread = 2; /* the worker */
	assert_int_equal(analysis_groups__init(&g, c, &q, ANALYSIS_BY_THREAD), 0);
	assert_int_equal(g.nrows, 1);
	assert_string_equal(g.rows[0].name, "worker [200/201, ns 1/2]");
	assert_int_equal(g.total, 2);
	analysis_groups__release(&g);

	analysis_query__init(&q, 5);
	assert_int_equal(analysis_groups__init(&g, c, &q, ANALYSIS_BY_MODULE), -EINVAL);
	capture__free(c);
}

static const struct analysis_node *child(const struct analysis_tree *t, uint32_t id,
					 const char *name)
{
	for (id = t->nodes[id].first_child; id != CAPTURE_NONE; id = t->nodes[id].next_sibling)
		if (!strcmp(t->names->keys[t->nodes[id].key].name, name))
			return &t->nodes[id];
	return NULL;
}

static void test_process_roots(void **state)
{
	struct capture *c = build(false);
	struct analysis_scope_filter f = { 0 };
	struct analysis_scope *s = NULL;
	struct analysis_names *n;
	struct analysis_tree *t;
	struct analysis_query q;
	const struct analysis_node *root, *libc;

	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_PID, "!100"), 0);
	assert_int_equal(analysis_scope__new(c, &f, true, &s), 0);
	n = analysis_names__new(analysis_scope__capture(s));
	assert_non_null(n);
	analysis_query__init(&q, 0);
	t = analysis_tree__new(n, &q);
	assert_non_null(t);
	assert_int_equal(t->nodes[0].total, 10);
	assert_int_equal(t->nodes[0].nchildren, 2); /* burnB [200], sh [300]: burnA filtered */
	root = child(t, 0, "burnB [200]");
	assert_non_null(root);
	assert_int_equal(root->total, 7);
	libc = child(t, (uint32_t)(root - t->nodes), "__libc_start_main");
	assert_non_null(libc);
	assert_non_null(child(t, (uint32_t)(libc - t->nodes), "burn_b"));
	assert_null(child(t, 0, "__libc_start_main")); /* not merged across processes */
	assert_int_equal(child(t, 0, "sh [300]")->total, 3);
	analysis_tree__free(t);
	analysis_names__free(n);
	analysis_scope__free(s);
	analysis_scope_filter__release(&f);
	capture__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_process_roots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
