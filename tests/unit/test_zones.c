// SPDX-License-Identifier: MIT
/*
 * Probe tables (capture format 1.3) and zone pairing (analysis/zones.c)
 * over a capture built with the builder and read back through the
 * validating reader.  Processes P0 (pid 10: threads T0, T1) and P1 (pid
 * 20: thread T2); sites a, b of P0 and c of P1.  Records, given out of time
 * order (late records arrive so):
 *
 *   T0  a+100  b+150  a-300  b-400       crossing: a [100,300) depth 0,
 *                                        b [150,400) depth 1
 *   T0  a+500  a+600  a-700  a-900       same site nested: [600,700) depth 1,
 *                                        [500,900) depth 0
 *   T1  a-50                             an end with nothing open
 *   T1  a+200  a-260                     T1's own: [200,260); T0's open a
 *                                        at 260 is not T1's to close
 *   T1  b+1000                           never ends: an unmatched begin
 *   T1  mark a = 7
 *
 * a: durations 60, 100, 200, 400: count 4, total 760, min 60, max 400,
 *    mean 190, median (2nd of 4) 100, p99 (ceil(3.96) = 4th) 400,
 *    1 unmatched end, 1 mark.
 * b: 250: count 1, 1 unmatched begin.  c: nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/scope.h"
#include "analysis/zones.h"
#include "capture/capture.h"

#define B CAPTURE_PROBE_ZONE_BEGIN
#define E CAPTURE_PROBE_ZONE_END
#define M CAPTURE_PROBE_MARK

struct rec {
	uint64_t t;
	uint32_t site, thread, kind;
	uint64_t value;
	uint32_t flags;
};

static const struct rec recs[] = {
	{ 300, 0, 0, E }, { 100, 0, 0, B }, { 150, 1, 0, B }, { 400, 1, 0, E },
	{ 500, 0, 0, B }, { 600, 0, 0, B }, { 700, 0, 0, E }, { 900, 0, 0, E },
	{ 50, 0, 1, E },  { 200, 0, 1, B }, { 260, 0, 1, E }, { 1000, 1, 1, B },
	{ 1100, 0, 1, M, 7 },
};

static struct capture_builder *builder(const struct rec *r, size_t n)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_process p = { .pid = 10 };
	struct capture_thread t = { .tid = 10 };
	struct capture_probe_site s;

	assert_non_null(b);
	p.comm = t.comm = capture_builder__string(b, "app");
	assert_int_equal(capture_builder__add_process(b, &p), 0);
	p.pid = 20;
	assert_int_equal(capture_builder__add_process(b, &p), 1);
	t.process = 0;
	assert_int_equal(capture_builder__add_thread(b, &t), 0);
	t.tid = 11;
	assert_int_equal(capture_builder__add_thread(b, &t), 1);
	t.tid = 20;
	t.process = 1;
	assert_int_equal(capture_builder__add_thread(b, &t), 2);
	s = (struct capture_probe_site){ capture_builder__string(b, "a"), 0 };
	assert_int_equal(capture_builder__add_probe_site(b, &s), 0);
	s = (struct capture_probe_site){ capture_builder__string(b, "b"), 0 };
	assert_int_equal(capture_builder__add_probe_site(b, &s), 1);
	s = (struct capture_probe_site){ capture_builder__string(b, "c"), 1 };
	assert_int_equal(capture_builder__add_probe_site(b, &s), 2);
	for (size_t i = 0; i < n; i++) {
		struct capture_probe_record row = {
			.time_ns = r[i].t,
			.value = r[i].value,
			.site = r[i].site,
			.thread = r[i].thread,
			.kind = r[i].kind,
			.flags = r[i].flags,
		};

		assert_int_equal(capture_builder__add_probe_record(b, &row), i);
	}
	return b;
}

static struct capture *read_back(struct capture_builder *b)
{
	struct capture *c = NULL;
	char err[256];
	void *buf;
	size_t len;

	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "zones.msc", &c, err, sizeof(err)), 0);
	free(buf);
	return c;
}

static void test_roundtrip(void **state)
{
	struct capture_builder *b = builder(recs, sizeof(recs) / sizeof(recs[0]));
	struct capture *c = read_back(b);

	(void)state;
	assert_int_equal(c->nprobe_sites, 3);
	assert_int_equal(c->nprobe_records, sizeof(recs) / sizeof(recs[0]));
	assert_string_equal(capture__string(c, c->probe_sites[2].name), "c");
	assert_int_equal(c->probe_sites[2].process, 1);
	for (uint32_t i = 0; i < c->nprobe_records; i++) {
		const struct capture_probe_record *r = &c->probe_records[i];

		assert_int_equal(r->time_ns, recs[i].t);
		assert_int_equal(r->site, recs[i].site);
		assert_int_equal(r->thread, recs[i].thread);
		assert_int_equal(r->kind, recs[i].kind);
		assert_int_equal(r->value, recs[i].value);
		assert_int_equal(r->flags, 0);
	}
	capture__free(c);
	capture_builder__free(b);
}

static void test_pairing(void **state)
{
	static const struct analysis_zone want[] = {
		{ 100, 300, 0, 0, 0, 0 }, { 150, 400, 1, 0, 1, 0 }, { 200, 260, 0, 1, 0, 0 },
		{ 500, 900, 0, 0, 0, 0 }, { 600, 700, 0, 0, 1, 0 },
	};
	struct capture_builder *b = builder(recs, sizeof(recs) / sizeof(recs[0]));
	struct capture *c = read_back(b);
	struct analysis_zones z;
	const struct analysis_zone_stats *a, *bs, *cs;

	(void)state;
	assert_int_equal(analysis_zones__init(&z, c), 0);
	assert_int_equal(z.nzones, 5);
	for (uint32_t i = 0; i < z.nzones; i++) {
		assert_int_equal(z.zones[i].start_ns, want[i].start_ns);
		assert_int_equal(z.zones[i].end_ns, want[i].end_ns);
		assert_int_equal(z.zones[i].site, want[i].site);
		assert_int_equal(z.zones[i].thread, want[i].thread);
		assert_int_equal(z.zones[i].depth, want[i].depth);
	}
	assert_int_equal(z.nsites, 3);
	a = &z.sites[0], bs = &z.sites[1], cs = &z.sites[2];
	assert_int_equal(a->count, 4);
	assert_int_equal(a->total_ns, 760);
	assert_int_equal(a->min_ns, 60);
	assert_int_equal(a->max_ns, 400);
	assert_int_equal(a->mean_ns, 190);
	assert_int_equal(a->median_ns, 100);
	assert_int_equal(a->p99_ns, 400);
	assert_int_equal(a->unmatched_ends, 1);
	assert_int_equal(a->unmatched_begins, 0);
	assert_int_equal(a->marks, 1);
	assert_int_equal(bs->count, 1);
	assert_int_equal(bs->total_ns, 250);
	assert_int_equal(bs->unmatched_begins, 1);
	assert_int_equal(cs->count, 0);
	assert_int_equal(z.unmatched_begins, 1);
	assert_int_equal(z.unmatched_ends, 1);
	/* zones starting before 500: the first four; before 100: none */
	assert_int_equal(analysis_zones__from(&z, 500), 3);
	assert_int_equal(analysis_zones__from(&z, 100), 0);
	assert_int_equal(analysis_zones__from(&z, UINT64_MAX), 5);
	analysis_zones__release(&z);
	analysis_zones__release(&z); /* released twice: harmless */
	capture__free(c);
	capture_builder__free(b);
}

/*
 * Windows clip, thread masks keep.  [250, 650) over the records above:
 * a [100,300) -> 50, b [150,400) -> 150, T1's a [200,260) -> 10,
 * a [500,900) -> 150, a [600,700) -> 50; all five cut at an edge.
 * a: 10 50 50 150: count 4, total 260, min 10, mean 65, median 50,
 * p99 150.  No loose record lies in the window (end at 50, begin at 1000,
 * mark at 1100).  T1 alone: a [200,260) -> 60, its end at 50, b's begin at
 * 1000 and the mark.  T1 over [900, 1050): b's begin only; T0's a
 * [500,900) ends at the window's start, so is not in it.
 */
static void test_window_and_threads(void **state)
{
	static const uint8_t t1[] = { 0, 1, 0 };
	struct capture_builder *b = builder(recs, sizeof(recs) / sizeof(recs[0]));
	struct capture *c = read_back(b);
	struct analysis_zone_filter f = { .start_ns = 250, .end_ns = 650 };
	struct analysis_zone_stats st[3];
	struct analysis_zone_totals t;
	struct analysis_zones z;

	(void)state;
	assert_int_equal(analysis_zones__init(&z, c), 0);
	assert_int_equal(analysis_zones__stats(&z, &f, st, &t), 0);
	assert_int_equal(t.zones, 5);
	assert_int_equal(t.clipped, 5);
	assert_int_equal(st[0].count, 4);
	assert_int_equal(st[0].total_ns, 260);
	assert_int_equal(st[0].min_ns, 10);
	assert_int_equal(st[0].mean_ns, 65);
	assert_int_equal(st[0].median_ns, 50);
	assert_int_equal(st[0].p99_ns, 150);
	assert_int_equal(st[0].max_ns, 150);
	assert_int_equal(st[1].count, 1);
	assert_int_equal(st[1].total_ns, 150);
	assert_int_equal(t.unmatched_begins + t.unmatched_ends + t.marks, 0);
	f = (struct analysis_zone_filter){ .threads = t1 };
	assert_int_equal(analysis_zones__stats(&z, &f, st, &t), 0);
	assert_int_equal(t.zones, 1);
	assert_int_equal(t.clipped, 0);
	assert_int_equal(st[0].count, 1);
	assert_int_equal(st[0].total_ns, 60);
	assert_int_equal(st[0].unmatched_ends, 1);
	assert_int_equal(st[0].marks, 1);
	assert_int_equal(st[1].count, 0);
	assert_int_equal(st[1].unmatched_begins, 1);
	f = (struct analysis_zone_filter){ .start_ns = 900, .end_ns = 1050, .threads = t1 };
	assert_int_equal(analysis_zones__stats(&z, &f, st, &t), 0);
	assert_int_equal(t.zones + t.unmatched_ends + t.marks, 0);
	assert_int_equal(t.unmatched_begins, 1);
	f.threads = NULL;
	assert_int_equal(analysis_zones__stats(&z, &f, st, &t), 0);
	assert_int_equal(t.zones, 0);
	analysis_zones__release(&z);
	capture__free(c);
	capture_builder__free(b);
}

/* A scope keeps a thread's probe records whole (tid 11 is T1: 5 records),
 * and module terms do not judge them (records have no stack). */
static void test_scope_keeps_threads(void **state)
{
	struct capture_builder *b = builder(recs, sizeof(recs) / sizeof(recs[0]));
	struct capture *c = read_back(b);
	struct analysis_scope_filter f = { 0 };
	struct analysis_scope *sc = NULL;
	const struct capture *v;

	(void)state;
	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_TID, "11"), 0);
	assert_int_equal(analysis_scope__new(c, &f, false, &sc), 0);
	v = analysis_scope__capture(sc);
	assert_int_equal(v->nprobe_records, 5);
	for (uint32_t i = 0; i < v->nprobe_records; i++)
		assert_int_equal(v->probe_records[i].thread, 1);
	analysis_scope__free(sc);
	analysis_scope_filter__release(&f);
	memset(&f, 0, sizeof(f));
	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_MODULE, "libc.so.6"), 0);
	assert_int_equal(analysis_scope_filter__add(&f, ANALYSIS_FIELD_PID, "!20"), 0);
	assert_int_equal(analysis_scope__new(c, &f, false, &sc), 0);
	assert_int_equal(analysis_scope__capture(sc)->nprobe_records, c->nprobe_records);
	analysis_scope__free(sc);
	analysis_scope_filter__release(&f);
	capture__free(c);
	capture_builder__free(b);
}

/* A capture the builder refuses, with its reason. */
static void refused(const struct rec *r, const char *why, void (*tamper)(struct capture_builder *))
{
	struct capture_builder *b = builder(r, 1);
	void *buf = NULL;
	size_t len;

	if (tamper)
		tamper(b);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), -EINVAL);
	if (!strstr(capture_builder__error(b), why))
		fail_msg("error '%s' lacks '%s'", capture_builder__error(b), why);
	free(buf);
	capture_builder__free(b);
}

static void bad_site_process(struct capture_builder *b)
{
	struct capture_probe_site s = { 0, 7 };

	capture_builder__add_probe_site(b, &s);
}

static void bad_site_name(struct capture_builder *b)
{
	struct capture_probe_site s = { 12345, 0 };

	capture_builder__add_probe_site(b, &s);
}

static void test_hostile(void **state)
{
	(void)state;
	refused(&(struct rec){ 1, 3, 0, B }, "table 'probe_records' row 0: site 3 out of range",
		NULL);
	refused(&(struct rec){ 1, 0, 3, B }, "table 'probe_records' row 0: thread 3 out of range",
		NULL);
	refused(&(struct rec){ 1, 0, 0, 0 }, "unknown kind 0", NULL);
	refused(&(struct rec){ 1, 0, 0, 4 }, "unknown kind 4", NULL);
	refused(&(struct rec){ 1, 0, 0, B, 0, 2 }, "unknown flags 0x2", NULL);
	/* thread T2 is of P1, site a of P0 */
	refused(&(struct rec){ 1, 0, 2, B }, "thread 2 is of process 1, site 0 of process 0", NULL);
	refused(&(struct rec){ 1, 0, 0, B }, "table 'probe_sites' row 3: process 7 out of range",
		bad_site_process);
	refused(&(struct rec){ 1, 0, 0, B }, "table 'probe_sites' row 3", bad_site_name);
}

/*
 * Records dropped (ring full) between T0's begins and its later records:
 * the SDK flags the thread's first record after the drop.  Without the
 * flag, a-1000 would close a+100 (a 900 ns zone that never was).
 *
 *   T0  a+100  b+150  [dropped: b-160 a-170 a+180]  F a-190   (an orphan end)
 *   T0  a-1000                                                 (an orphan end)
 *   T0  a+2000  a-2010                                         one real zone
 *   T1  a+300  F b+305  b-320  a-330   T1's a+300 forgotten, b [305,320)
 *                                      kept, a-330 unmatched
 *
 * a: count 1 (10 ns), broken 3 (a+100, a-190 of T0; a+300 of T1),
 *    unmatched ends 2 (a-1000, a-330).  b: count 1 (15), broken 1 (b+150).
 */
static void test_after_drop(void **state)
{
	static const struct rec dr[] = {
		{ 100, 0, 0, B },  { 150, 1, 0, B },	 { 190, 0, 0, E, 0, CAPTURE_PROBE_F_AFTER_DROP },
		{ 1000, 0, 0, E }, { 2000, 0, 0, B },	 { 2010, 0, 0, E },
		{ 300, 0, 1, B },  { 305, 1, 1, B, 0, CAPTURE_PROBE_F_AFTER_DROP },
		{ 320, 1, 1, E },  { 330, 0, 1, E },
	};
	struct capture_builder *b = builder(dr, sizeof(dr) / sizeof(dr[0]));
	struct capture *c = read_back(b);
	struct analysis_zones z;

	(void)state;
	assert_int_equal(c->probe_records[2].flags, CAPTURE_PROBE_F_AFTER_DROP);
	assert_int_equal(analysis_zones__init(&z, c), 0);
	assert_int_equal(z.nzones, 2);
	assert_int_equal(z.sites[0].count, 1);
	assert_int_equal(z.sites[0].max_ns, 10);
	assert_int_equal(z.sites[0].broken, 3);
	assert_int_equal(z.sites[0].unmatched_ends, 2);
	assert_int_equal(z.sites[0].unmatched_begins, 0);
	assert_int_equal(z.sites[1].count, 1);
	assert_int_equal(z.sites[1].max_ns, 15);
	assert_int_equal(z.sites[1].broken, 1);
	assert_int_equal(z.broken, 4);
	assert_int_equal(z.unmatched_ends, 2);
	analysis_zones__release(&z);
	capture__free(c);
	capture_builder__free(b);
}

/* A capture without probes (any earlier format) pairs to nothing. */
static void test_empty(void **state)
{
	struct capture_builder *b = builder(recs, 0);
	struct capture *c = read_back(b);
	struct analysis_zones z;

	(void)state;
	assert_int_equal(analysis_zones__init(&z, c), 0);
	assert_int_equal(z.nzones, 0);
	assert_int_equal(z.nsites, 3);
	assert_int_equal(z.sites[0].count, 0);
	analysis_zones__release(&z);
	capture__free(c);
	capture_builder__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_pairing),
		cmocka_unit_test(test_window_and_threads),
		cmocka_unit_test(test_scope_keeps_threads),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_after_drop),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
