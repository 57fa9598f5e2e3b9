// SPDX-License-Identifier: MIT
/*
 * Unit tests of capture/formats: folded and pprof importers (edge cases and a
 * malformed corpus: clear errors or counted skips, never a crash), exact
 * round trips, and frame labels equal to analysis's display names.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/formats/formats.h"
#include "capture/formats/profile.pb-c.h"

/* Seal b and open it through the reader (the recorder's validator). */
static struct capture *seal(struct capture_builder *b)
{
	struct capture *c = NULL;
	void *buf = NULL;
	size_t len = 0;
	char err[256] = "";

	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "test", &c, err, sizeof(err)), 0);
	free(buf);
	capture_builder__free(b);
	return c;
}

static struct capture *import_folded(const char *text, struct formats_note *note)
{
	struct capture_builder *b = capture_builder__new();
	char err[256] = "";

	assert_non_null(b);
	assert_int_equal(folded__import(text, strlen(text), b, note, err, sizeof(err)), 0);
	return seal(b);
}

/* folded__import of text[len] (len 0: strlen) must fail with -EBADMSG and a message holding want. */
static void import_folded_fails(const char *text, size_t len, const char *want)
{
	struct capture_builder *b = capture_builder__new();
	struct formats_note note = { "" };
	char err[256] = "";

	assert_non_null(b);
	if (!len)
		len = strlen(text);
	assert_int_equal(folded__import(text, len, b, &note, err, sizeof(err)), -EBADMSG);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	capture_builder__free(b);
}

static char *export_folded(const struct capture *c)
{
	struct analysis_names *n = analysis_names__new(c);
	struct analysis_tree *t;
	struct analysis_query q;
	char *text = NULL;
	size_t len;

	assert_non_null(n);
	analysis_query__init(&q, 0);
	t = analysis_tree__new(n, &q);
	assert_non_null(t);
	assert_int_equal(analysis_tree__folded(t, &text, &len), 0);
	analysis_tree__free(t);
	analysis_names__free(n);
	return text;
}

static void test_folded_edge_cases(void **state)
{
	const char *in = "# a comment\r\n"
			 "\r\n"
			 "   \n"
			 "main;do work (x, y) [clone .0];std::map<int, int>::find 12\r\n"
			 "main;leaf 3\n"
			 "no-count-here\n"
			 "main;leaf 1.5\n"
			 "main;leaf 99999999999999999999999\n"
			 "main;;leaf 2\n"
			 "main;sys_read_[k] 4\n"
			 "main;leaf 2";
	struct formats_note note = { "" };
	struct capture *c = import_folded(in, &note);
	char *out = export_folded(c);

	assert_string_equal(out, "main;do work (x, y) [clone .0];std::map<int, int>::find 12\n"
				 "main;leaf 5\n"
				 "main;sys_read_[k] 4\n");
	assert_int_equal(capture__counter(c, "folded.skipped_comment"), 1);
	assert_int_equal(capture__counter(c, "folded.skipped_blank"), 2);
	assert_int_equal(capture__counter(c, "folded.skipped_no_count"), 3);
	assert_int_equal(capture__counter(c, "folded.skipped_empty_frame"), 1);
	assert_non_null(strstr(note.text, "2 blank, 1 comment, 3 count-less, 1 empty-frame"));
	assert_non_null(strstr(note.text, "of 11"));
	/* the kernel mark became a flag */
	for (uint32_t i = 0; i < c->nframes; i++)
		if (!strcmp(capture__string(c, c->frames[i].function), "sys_read"))
			assert_true(c->frames[i].flags & CAPTURE_FRAME_F_KERNEL);
	free(out);
	capture__free(c);
}

/* Input that is not folded text, or whose total overflows, is an error naming the line. */
static void test_folded_rejects(void **state)
{
	static const char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0 1\n";

	(void)state;
	import_folded_fails("a;b;c 5\na;b 3\nx y;z w 18446744073709551615\n",
			    0,
			    "line 3 \"x y;z w 18446744073709551615\": count 18446744073709551615 "
			    "makes the total weight overflow");
	import_folded_fails(elf, sizeof(elf) - 1, "not a capture, pprof or folded file");
	import_folded_fails("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/bin/sh\n", 0,
			    "line 1 \"root:x:0:0:root:/root:/bin/bash\" has no count");
	import_folded_fails("# c\n\na;;b 3\n", 0, "line 3 \"a;;b 3\" has an empty frame");
	/* an empty-frame line's count is not part of the total */
	struct formats_note note = { "" };
	struct capture *c = import_folded("a;;b 18446744073709551615\na 2\n", &note);

	assert_int_equal(c->nsamples, 1);
	capture__free(c);
}

static void test_folded_round_trip(void **state)
{
	const char *in = "a;b;c 1\na;b;d 20\na;e 300\nf_[k] 7\n[empty stack] 2\n";
	struct formats_note note = { "" };
	struct capture *c = import_folded(in, &note);
	char *out = export_folded(c);

	assert_string_equal(out, "[empty stack] 2\na;b;c 1\na;b;d 20\na;e 300\nf_[k] 7\n");
	assert_string_equal(note.text, "");
	free(out);
	capture__free(c);
	/* the largest count is fine alone: the total fits */
	c = import_folded("x 18446744073709551615\n", &note);
	out = export_folded(c);
	assert_string_equal(out, "x 18446744073709551615\n");
	free(out);
	capture__free(c);
	/* nothing at all, and only skipped lines */
	c = import_folded("", &note);
	assert_int_equal(c->nsamples, 0);
	capture__free(c);
	c = import_folded("#\n#\n", &note);
	assert_int_equal(c->nsamples, 0);
	assert_int_equal(capture__counter(c, "folded.skipped_comment"), 2);
	capture__free(c);
}

/* ---- pprof ------------------------------------------------------------- */

typedef Perftools__Profiles__Profile pb_profile;

/* A small valid profile: 2 types, 2 functions, locations 1 (inline chain) and 2. */
struct pb_fixture {
	pb_profile p;
	Perftools__Profiles__ValueType vt[2], *vtp[2], period_type;
	Perftools__Profiles__Sample s[2], *sp[2];
	uint64_t locs0[2], locs1[1];
	int64_t vals0[2], vals1[2];
	Perftools__Profiles__Mapping m, *mp[1];
	Perftools__Profiles__Location l[2], *lp[2];
	Perftools__Profiles__Line ln[3], *lnp0[2], *lnp1[1];
	Perftools__Profiles__Function f[2], *fp[2];
	char *strs[8];
};

static void pb_fixture_init(struct pb_fixture *x)
{
	static char *strings[] = { "", "samples", "count", "cpu", "nanoseconds", "inner", "outer",
				   "/bin/app" };
	int i;

	memset(x, 0, sizeof(*x));
	x->p = (pb_profile)PERFTOOLS__PROFILES__PROFILE__INIT;
	for (i = 0; i < 8; i++)
		x->strs[i] = strings[i];
	x->p.string_table = x->strs;
	x->p.n_string_table = 8;
	for (i = 0; i < 2; i++) {
		x->vt[i] = (Perftools__Profiles__ValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		x->vt[i].type = 1 + 2 * i;
		x->vt[i].unit = 2 + 2 * i;
		x->vtp[i] = &x->vt[i];
	}
	x->p.sample_type = x->vtp;
	x->p.n_sample_type = 2;
	x->period_type = x->vt[1];
	x->p.period_type = &x->period_type;
	x->p.period = 1000;
	x->p.duration_nanos = 5000000;
	x->m = (Perftools__Profiles__Mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
	x->m.id = 7;
	x->m.memory_start = 0x1000;
	x->m.memory_limit = 0x9000;
	x->m.filename = 7;
	x->m.has_functions = 1;
	x->mp[0] = &x->m;
	x->p.mapping = x->mp;
	x->p.n_mapping = 1;
	for (i = 0; i < 2; i++) {
		x->f[i] = (Perftools__Profiles__Function)PERFTOOLS__PROFILES__FUNCTION__INIT;
		x->f[i].id = 10 + i;
		x->f[i].name = 5 + i;
		x->f[i].system_name = 5 + i;
		x->fp[i] = &x->f[i];
	}
	x->p.function = x->fp;
	x->p.n_function = 2;
	for (i = 0; i < 3; i++) {
		x->ln[i] = (Perftools__Profiles__Line)PERFTOOLS__PROFILES__LINE__INIT;
		x->ln[i].line = 40 + i;
	}
	x->ln[0].function_id = 10; /* inner, inlined into */
	x->ln[1].function_id = 11; /* outer */
	x->ln[2].function_id = 11;
	x->lnp0[0] = &x->ln[0];
	x->lnp0[1] = &x->ln[1];
	x->lnp1[0] = &x->ln[2];
	for (i = 0; i < 2; i++) {
		x->l[i] = (Perftools__Profiles__Location)PERFTOOLS__PROFILES__LOCATION__INIT;
		x->l[i].id = 100 + i;
		x->l[i].mapping_id = 7;
		x->l[i].address = 0x1234 + i;
		x->lp[i] = &x->l[i];
	}
	x->l[0].line = x->lnp0;
	x->l[0].n_line = 2;
	x->l[1].line = x->lnp1;
	x->l[1].n_line = 1;
	x->p.location = x->lp;
	x->p.n_location = 2;
	x->locs0[0] = 100;
	x->locs0[1] = 101;
	x->locs1[0] = 101;
	x->vals0[0] = 3;
	x->vals0[1] = 3000;
	x->vals1[0] = 0;
	x->vals1[1] = 0;
	for (i = 0; i < 2; i++) {
		x->s[i] = (Perftools__Profiles__Sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		x->s[i].n_value = 2;
		x->sp[i] = &x->s[i];
	}
	x->s[0].location_id = x->locs0;
	x->s[0].n_location_id = 2;
	x->s[0].value = x->vals0;
	x->s[1].location_id = x->locs1;
	x->s[1].n_location_id = 1;
	x->s[1].value = x->vals1;
	x->p.sample = x->sp;
	x->p.n_sample = 2;
}

static uint8_t *pb_pack(const pb_profile *p, size_t *len)
{
	uint8_t *buf = malloc(perftools__profiles__profile__get_packed_size(p) + 1);

	assert_non_null(buf);
	*len = perftools__profiles__profile__pack(p, buf);
	return buf;
}

static uint8_t *gz(const void *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	uint8_t *out = malloc(len + 256);

	assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (void *)in;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)len + 256;
	assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* Import buf; returns the status, err holds the message. */
static int try_import(const void *buf, size_t len, char *err, size_t errlen,
		      struct capture **out)
{
	struct capture_builder *b = capture_builder__new();
	struct formats_note note = { "" };
	int rc = pprof__import(buf, len, b, &note, err, errlen);

	if (rc || !out) {
		capture_builder__free(b);
		return rc;
	}
	*out = seal(b);
	return 0;
}

static int import_fixture(struct pb_fixture *x, char *err, size_t errlen)
{
	size_t len;
	uint8_t *buf = pb_pack(&x->p, &len);
	int rc = try_import(buf, len, err, errlen, NULL);

	free(buf);
	return rc;
}

static void test_pprof_import_model(void **state)
{
	struct pb_fixture x;
	struct capture *c = NULL;
	char err[256];
	size_t len, glen;
	uint8_t *buf, *g;
	uint32_t s;

	pb_fixture_init(&x);
	buf = pb_pack(&x.p, &len);
	g = gz(buf, len, &glen);
	assert_int_equal(try_import(g, glen, err, sizeof(err), &c), 0);
	/* 2 events; sample 0 gives two capture samples, all-zero sample 1 one of weight 0 */
	assert_int_equal(c->nevents, 2);
	assert_int_equal(c->events[1].period, 1000);
	assert_int_equal(c->nsamples, 3);
	assert_int_equal(c->samples[0].weight, 3);
	assert_int_equal(c->samples[1].weight, 3000);
	assert_int_equal(c->samples[2].weight, 0);
	/* leaf-first chain: inner (INLINE, line 40), outer (line 41), outer (line 42) */
	s = c->samples[0].stack;
	assert_string_equal(capture__string(c, c->frames[c->stacks[s].frame].function), "inner");
	assert_true(c->frames[c->stacks[s].frame].flags & CAPTURE_FRAME_F_INLINE);
	assert_int_equal(c->frames[c->stacks[s].frame].line, 40);
	s = c->stacks[s].parent;
	assert_false(c->frames[c->stacks[s].frame].flags & CAPTURE_FRAME_F_INLINE);
	assert_int_equal(c->frames[c->stacks[s].frame].line, 41);
	s = c->stacks[s].parent;
	assert_int_equal(c->frames[c->stacks[s].frame].line, 42);
	assert_int_equal(c->stacks[s].parent, CAPTURE_NONE);
	assert_string_equal(capture__meta(c, "duration_ns"), "5000000");

	/* export and import again: identical export bytes (values and chains kept) */
	{
		struct formats_note note = { "" };
		void *e1 = NULL, *e2 = NULL;
		size_t l1, l2;
		struct capture *c2 = NULL;

		assert_int_equal(pprof__export(c, &e1, &l1, &note), 0);
		assert_int_equal(try_import(e1, l1, err, sizeof(err), &c2), 0);
		assert_int_equal(pprof__export(c2, &e2, &l2, &note), 0);
		assert_int_equal(l1, l2);
		assert_memory_equal(e1, e2, l1);
		free(e1);
		free(e2);
		capture__free(c2);
	}
	capture__free(c);

	/* truncated gzip, at several cut points */
	for (size_t cut = 1; cut < glen; cut += glen / 7 + 1) {
		int rc = try_import(g, cut, err, sizeof(err), NULL);

		assert_int_equal(rc, -EBADMSG);
		assert_true(strstr(err, "gzip") || strstr(err, "protobuf"));
	}
	assert_int_equal(try_import(g, glen - 4, err, sizeof(err), NULL), -EBADMSG);
	assert_non_null(strstr(err, "truncated gzip"));
	free(g);
	free(buf);
}

static void test_pprof_malformed(void **state)
{
	struct pb_fixture x;
	char err[256];
	static const uint8_t junk[] = { 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01 };

	pb_fixture_init(&x);
	assert_int_equal(import_fixture(&x, err, sizeof(err)), 0);

	x.strs[0] = "x";
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "string_table[0]"));
	pb_fixture_init(&x);
	x.p.n_string_table = 0;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "string_table[0]"));

	pb_fixture_init(&x);
	x.l[1].id = 0;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "id 0"));
	pb_fixture_init(&x);
	x.f[1].id = 10;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "used twice"));
	pb_fixture_init(&x);
	x.locs0[1] = 999;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "location_id 999 names no location"));
	pb_fixture_init(&x);
	x.locs0[1] = 0;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "location id 0"));
	pb_fixture_init(&x);
	x.ln[1].function_id = 12;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "function_id 12 names no function"));
	pb_fixture_init(&x);
	x.ln[1].function_id = 0;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "function_id 0"));
	pb_fixture_init(&x);
	x.l[0].mapping_id = 8;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "mapping_id 8 names no mapping"));
	pb_fixture_init(&x);
	x.f[0].name = 8;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "string index 8 out of range"));
	pb_fixture_init(&x);
	x.vt[0].type = -1;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	pb_fixture_init(&x);
	x.p.n_sample_type = 1;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "2 values for 1 sample types"));
	/* two values of INT64_MAX in one type still fit (2^64-2); a third does not */
	pb_fixture_init(&x);
	x.vals0[1] = INT64_MAX;
	x.vals1[1] = INT64_MAX;
	assert_int_equal(import_fixture(&x, err, sizeof(err)), 0);
	{
		Perftools__Profiles__Sample *three[3] = { &x.s[0], &x.s[1], &x.s[1] };

		x.p.sample = three;
		x.p.n_sample = 3;
		assert_int_equal(import_fixture(&x, err, sizeof(err)), -EBADMSG);
		if (!strstr(err, "sample 2: value 9223372036854775807 of sample type 1 makes the "
				 "type's total overflow"))
			fail_msg("%s", err);
	}

	assert_int_equal(try_import(junk, sizeof(junk), err, sizeof(err), NULL), -EBADMSG);
	assert_non_null(strstr(err, "does not parse"));
	assert_int_equal(try_import("\x1f\x8b", 2, err, sizeof(err), NULL), -EBADMSG);

	/* negative values are dropped, counted and noted */
	{
		struct capture_builder *b = capture_builder__new();
		struct formats_note note = { "" };
		struct capture *c;
		size_t len;
		uint8_t *buf;

		pb_fixture_init(&x);
		x.vals0[0] = -5;
		buf = pb_pack(&x.p, &len);
		assert_int_equal(pprof__import(buf, len, b, &note, err, sizeof(err)), 0);
		free(buf);
		c = seal(b);
		assert_int_equal(capture__counter(c, "pprof.negative_values_dropped"), 1);
		assert_non_null(strstr(note.text, "1 negative sample values dropped"));
		capture__free(c);
	}
}

/* Recorded-style capture: thread, kernel + unnamed + inline + truncation frames. */
static struct capture *recorded_capture(void)
{
	struct capture_builder *b = capture_builder__new();
	uint32_t mod, kmod, proc, th, ev, f[5], s = CAPTURE_NONE, i;

	mod = capture_builder__add_module(b, &(struct capture_module){
						     .path = capture_builder__string(b, "/usr/lib/libx.so"),
						     .build_id = capture_builder__string(b, "beef"),
						     .kind = CAPTURE_MODULE_FILE,
					     });
	kmod = capture_builder__add_module(b, &(struct capture_module){
						      .path = capture_builder__string(b, "[kernel.kallsyms]"),
						      .kind = CAPTURE_MODULE_KERNEL,
					      });
	proc = capture_builder__add_process(b, &(struct capture_process){
						       .pid = 42, .comm = capture_builder__string(b, "app") });
	th = capture_builder__add_thread(b, &(struct capture_thread){
						    .tid = 43, .process = proc,
						    .comm = capture_builder__string(b, "worker") });
	capture_builder__add_mapping(b, &(struct capture_mapping){
						.process = proc, .module = mod, .start = 0x7f0000,
						.end = 0x7f9000 });
	ev = capture_builder__add_event(b, &(struct capture_event){
						   .name = capture_builder__string(b, "cpu-clock"),
						   .unit = capture_builder__string(b, "samples"),
						   .period = 1000000 });
	f[0] = capture_builder__add_frame(b, &(struct capture_frame){
						     .module = mod, .address = 0x10,
						     .function = capture_builder__string(b, "main") });
	f[1] = capture_builder__add_frame(b, &(struct capture_frame){
						     .module = mod, .address = 0x20,
						     .function = capture_builder__string(b, "outer"),
						     .file = capture_builder__string(b, "x.c"), .line = 7 });
	f[2] = capture_builder__add_frame(b, &(struct capture_frame){
						     .module = mod, .address = 0x20,
						     .flags = CAPTURE_FRAME_F_INLINE,
						     .function = capture_builder__string(b, "inlined"),
						     .file = capture_builder__string(b, "x.h"), .line = 3 });
	f[3] = capture_builder__add_frame(b, &(struct capture_frame){
						     .module = mod, .address = 0x30,
						     .flags = CAPTURE_FRAME_F_UNSYMBOLIZED });
	f[4] = capture_builder__add_frame(b, &(struct capture_frame){
						     .module = kmod, .address = 0xffffffff81000000,
						     .flags = CAPTURE_FRAME_F_KERNEL,
						     .function = capture_builder__string(b, "do_sys") });
	for (i = 0; i < 5; i++) {
		s = capture_builder__add_stack(b, s, f[i]);
		capture_builder__add_sample(b, &(struct capture_sample){
						       .time_ns = 1000 + i * 1000000, .thread = th,
						       .cpu = 0, .stack = s, .event = ev, .weight = 1 });
	}
	capture_builder__add_stack(b, CAPTURE_NONE, capture_builder__add_frame(
				   b, &(struct capture_frame){
					      .module = CAPTURE_NONE,
					      .flags = CAPTURE_FRAME_F_TRUNCATION,
					      .function = capture_builder__string(b, "[no CFI for pc]") }));
	return seal(b);
}

static void test_labels_match_analysis(void **state)
{
	struct capture *c = recorded_capture();
	char a[256], b[256];

	for (uint32_t i = 0; i < c->nframes; i++) {
		analysis__frame_name(c, &c->frames[i], a, sizeof(a));
		formats__frame_label(c, &c->frames[i], b, sizeof(b));
		assert_string_equal(a, b);
	}
	formats__thread_label(c, 0, b, sizeof(b));
	assert_string_equal(b, "worker-43");
	capture__free(c);
}

static void test_pprof_export_recorded(void **state)
{
	struct capture *c = recorded_capture(), *c2 = NULL;
	struct formats_note note = { "" };
	void *buf = NULL;
	size_t len;
	char err[256];
	uint32_t s;

	assert_int_equal(pprof__export(c, &buf, &len, &note), 0);
	assert_non_null(strstr(note.text, "pprof keeps no sample times"));
	assert_int_equal(try_import(buf, len, err, sizeof(err), &c2), 0);
	/* samples/count and cpu/nanoseconds */
	assert_int_equal(c2->nevents, 2);
	assert_string_equal(capture__string(c2, c2->events[0].name), "samples");
	assert_string_equal(capture__string(c2, c2->events[0].unit), "count");
	assert_string_equal(capture__string(c2, c2->events[1].name), "cpu");
	assert_int_equal(c2->events[1].period, 1000000);
	assert_int_equal(c2->nsamples, 10);
	assert_int_equal(c2->samples[9].weight, 1000000);
	/* the deepest chain survives: do_sys [k], unsymbolized, inlined (INLINE), outer, main */
	s = c2->samples[8].stack;
	assert_string_equal(capture__string(c2, c2->frames[c2->stacks[s].frame].function),
			    "do_sys");
	assert_true(c2->frames[c2->stacks[s].frame].flags & CAPTURE_FRAME_F_KERNEL);
	s = c2->stacks[s].parent;
	assert_true(c2->frames[c2->stacks[s].frame].flags & CAPTURE_FRAME_F_UNSYMBOLIZED);
	assert_int_equal(c2->frames[c2->stacks[s].frame].address, 0x30);
	s = c2->stacks[s].parent;
	assert_string_equal(capture__string(c2, c2->frames[c2->stacks[s].frame].function),
			    "inlined");
	assert_true(c2->frames[c2->stacks[s].frame].flags & CAPTURE_FRAME_F_INLINE);
	assert_int_equal(c2->frames[c2->stacks[s].frame].line, 3);
	s = c2->stacks[s].parent;
	assert_string_equal(capture__string(c2, c2->frames[c2->stacks[s].frame].function),
			    "outer");
	s = c2->stacks[s].parent;
	assert_string_equal(capture__string(c2, c2->frames[c2->stacks[s].frame].function),
			    "main");
	assert_int_equal(c2->stacks[s].parent, CAPTURE_NONE);
	assert_string_equal(capture__string(c2, c2->modules[0].build_id), "beef");
	assert_int_equal(c2->modules[1].kind, CAPTURE_MODULE_KERNEL);
	free(buf);
	capture__free(c2);
	capture__free(c);
}

/*
 * The labels pprof__export writes come back as rows: each sample's thread
 * (tid, thread comm) and process (pid, comm), and its cgroup (id, path,
 * full container id, runtime), so report --by process/thread/container
 * read the same after a round trip (before: every label was dropped and
 * counted, 2 samples x 9 labels here).  A label microscope does not write
 * stays dropped and counted.
 */
static void test_pprof_labels_round_trip(void **state)
{
	static const char id[] = "c0ffee0000000000000000000000000000000000000000000000000000000077";
	struct capture_builder *b = capture_builder__new();
	struct formats_note note = { "" };
	struct capture *c, *c2 = NULL;
	uint32_t mod, proc[2], th[2], ev, f, st, cg[2], row, i;
	char err[256], name[160];
	const char *runtime;
	void *buf = NULL;
	size_t len;

	(void)state;
	mod = capture_builder__add_module(b, &(struct capture_module){
						     .path = capture_builder__string(b, "/bin/app"),
						     .kind = CAPTURE_MODULE_FILE });
	proc[0] = capture_builder__add_process(b, &(struct capture_process){
							  .pid = 100, .comm = capture_builder__string(b, "web") });
	proc[1] = capture_builder__add_process(b, &(struct capture_process){
							  .pid = 200, .comm = capture_builder__string(b, "db") });
	th[0] = capture_builder__add_thread(b, &(struct capture_thread){
						       .tid = 101, .process = proc[0],
						       .comm = capture_builder__string(b, "web-io") });
	th[1] = capture_builder__add_thread(b, &(struct capture_thread){
						       .tid = 200, .process = proc[1],
						       .comm = capture_builder__string(b, "db") });
	cg[0] = capture_builder__add_cgroup(
		b, &(struct capture_cgroup){
			   .cgroup_id = 4242,
			   .path = capture_builder__string(b, "/machine.slice/libpod-c0ffee.scope"),
			   .container = capture_builder__string(b, id),
			   .runtime = capture_builder__string(b, "podman") });
	cg[1] = capture_builder__add_cgroup(
		b, &(struct capture_cgroup){ .cgroup_id = 7,
					     .path = capture_builder__string(b, "/user.slice"),
					     .container = capture_builder__string(b, ""),
					     .runtime = capture_builder__string(b, "") });
	ev = capture_builder__add_event(b, &(struct capture_event){
						   .name = capture_builder__string(b, "cpu-clock"),
						   .unit = capture_builder__string(b, "samples") });
	f = capture_builder__add_frame(b, &(struct capture_frame){
						  .module = mod, .address = 0x10,
						  .function = capture_builder__string(b, "main") });
	st = capture_builder__add_stack(b, CAPTURE_NONE, f);
	/* web-io in the container 3 times, db on the host twice */
	for (i = 0; i < 5; i++) {
		row = capture_builder__add_sample(b, &(struct capture_sample){
							     .time_ns = 1000 + i, .thread = th[i >= 3],
							     .cpu = 0, .stack = st, .event = ev,
							     .weight = 1 });
		assert_int_equal(capture_builder__set_sample_cgroup(b, row, cg[i >= 3]), 0);
	}
	c = seal(b);
	assert_int_equal(pprof__export(c, &buf, &len, &note), 0);
	b = capture_builder__new();
	note.text[0] = '\0';
	assert_int_equal(pprof__import(buf, len, b, &note, err, sizeof(err)), 0);
	c2 = seal(b);
	assert_null(strstr(note.text, "labels dropped"));
	assert_int_equal(capture__counter(c2, "pprof.labels_dropped"), 0);
	/* samples/count: one per (stack, thread, cgroup), weights 3 and 2 */
	assert_int_equal(c2->nsamples, 2);
	assert_int_equal(c2->nthreads, 2);
	assert_int_equal(c2->ncgroups, 2);
	for (i = 0; i < c2->nsamples; i++) {
		const struct capture_thread *t = &c2->threads[c2->samples[i].thread];
		const struct capture_process *pr = &c2->processes[t->process];
		const struct capture_cgroup *g = &c2->cgroups[capture__sample_cgroup(c2, i)];
		bool web = t->tid == 101;

		assert_int_equal(c2->samples[i].weight, web ? 3 : 2);
		assert_int_equal(pr->pid, web ? 100 : 200);
		assert_string_equal(capture__string(c2, pr->comm), web ? "web" : "db");
		assert_string_equal(capture__string(c2, t->comm), web ? "web-io" : "db");
		assert_int_equal(g->cgroup_id, web ? 4242 : 7);
		assert_string_equal(capture__string(c2, g->path),
				    web ? "/machine.slice/libpod-c0ffee.scope" : "/user.slice");
		assert_string_equal(capture__string(c2, g->container), web ? id : "");
		assert_int_equal(capture__container_name(c2, capture__sample_cgroup(c2, i), name,
							 sizeof(name), &runtime),
				 web);
		if (web) {
			assert_string_equal(name, "c0ffee000000");
			assert_string_equal(runtime, "podman");
		}
	}
	capture__free(c2);
	free(buf);
	capture__free(c);

	/* A label of a key microscope does not write: dropped, counted, named. */
	{
		struct pb_fixture x;
		Perftools__Profiles__Label l = PERFTOOLS__PROFILES__LABEL__INIT, *lp = &l;
		char *strs[16];
		uint8_t *packed;

		pb_fixture_init(&x);
		assert_true(x.p.n_string_table + 2 <= 16);
		memcpy(strs, x.p.string_table, x.p.n_string_table * sizeof(*strs));
		strs[x.p.n_string_table] = "goroutine";
		strs[x.p.n_string_table + 1] = "17";
		l.key = (int64_t)x.p.n_string_table;
		l.str = (int64_t)x.p.n_string_table + 1;
		x.p.string_table = strs;
		x.p.n_string_table += 2;
		x.s[0].label = &lp;
		x.s[0].n_label = 1;
		packed = pb_pack(&x.p, &len);
		b = capture_builder__new();
		note.text[0] = '\0';
		assert_int_equal(pprof__import(packed, len, b, &note, err, sizeof(err)), 0);
		c2 = seal(b);
		assert_int_equal(capture__counter(c2, "pprof.labels_dropped"), 1);
		assert_non_null(strstr(note.text, "1 sample labels dropped"));
		assert_non_null(strstr(note.text, "'goroutine'"));
		capture__free(c2);
		free(packed);
		/* a label's string index out of the table is an error */
		l.str = 99;
		packed = pb_pack(&x.p, &len);
		assert_int_equal(try_import(packed, len, err, sizeof(err), NULL), -EBADMSG);
		assert_non_null(strstr(err, "sample 0: label 0"));
		free(packed);
	}
}

static void test_json_exports(void **state)
{
	struct capture *c = recorded_capture();
	struct formats_note note = { "" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(chrome_trace__export(c, 0, f, &note), 0);
	fclose(f);
	if (getenv("TEST_FORMATS_DUMP"))
		fputs(text, stderr);
	/* 5 samples, each one level deeper: main spans all 5 ms, do_sys the last */
	assert_non_null(strstr(text, "\"thread_name\",\"args\":{\"name\":\"worker-43\"}"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"pid\":42,\"tid\":43,\"ts\":0,\"dur\":5000,"
				     "\"name\":\"main\"}"));
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"pid\":42,\"tid\":43,\"ts\":4000,\"dur\":1000,"
				     "\"name\":\"do_sys [k]\"}"));
	/* the compact form: one entry per sample at its start, its leaf's
	 * stack row + 1 as "sf", and one without "sf" where the thread ends */
	assert_non_null(strstr(text, "\"2\":{\"name\":\"outer\",\"parent\":1}"));
	assert_non_null(strstr(text, "{\"pid\":42,\"tid\":43,\"ts\":1000,\"sf\":2},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":2000,\"sf\":3}"));
	assert_non_null(strstr(text, "{\"pid\":42,\"tid\":43,\"ts\":4000,\"sf\":5},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":5000}\n]"));
	/* the unused truncation row is not written */
	assert_null(strstr(text, "no CFI"));
	free(text);
	text = NULL;
	f = open_memstream(&text, &len);
	assert_int_equal(speedscope__export(c, 0, f, &note), 0);
	fclose(f);
	assert_non_null(strstr(text, "\"samples\":[[0],[0,1],[0,1,2],[0,1,2,3],[0,1,2,3,4]]"));
	assert_non_null(strstr(text, "\"weights\":[1000000,1000000,1000000,1000000,1000000]"));
	assert_non_null(strstr(text, "{\"name\":\"libx.so+0x30\"}"));
	free(text);
	/* JSON strings: quotes, control bytes, invalid UTF-8 escaped */
	text = NULL;
	f = open_memstream(&text, &len);
	formats__json_string(f, "a\"b\\c\n\x01\xff\xc3\xa9");
	fclose(f);
	assert_string_equal(text, "\"a\\\"b\\\\c\\n\\u0001\\u00ff\xc3\xa9\"");
	free(text);
	capture__free(c);
}

/* recorded_capture's layout plus an off-CPU event and the intervals ivs
 * (their event set here; stack i means recorded_capture's stack row i). */
static struct capture *capture_with_intervals(const struct capture_interval *ivs, uint32_t n)
{
	struct capture *c0 = recorded_capture();
	struct capture_builder *b = capture_builder__new();
	uint32_t i, ev, st[8];
	void *buf = NULL;
	size_t len = 0;
	struct capture *c = NULL;
	char err[256];

	/* rebuild c0's rows, then add the intervals */
	for (i = 1; i < c0->nstrings; i++)
		capture_builder__string(b, capture__string(c0, i));
	for (i = 0; i < c0->nmodules; i++)
		capture_builder__add_module(b, &c0->modules[i]);
	for (i = 0; i < c0->nprocesses; i++)
		capture_builder__add_process(b, &c0->processes[i]);
	for (i = 0; i < c0->nthreads; i++)
		capture_builder__add_thread(b, &c0->threads[i]);
	for (i = 0; i < c0->nmappings; i++)
		capture_builder__add_mapping(b, &c0->mappings[i]);
	for (i = 0; i < c0->nframes; i++)
		capture_builder__add_frame(b, &c0->frames[i]);
	for (i = 0; i < c0->nstacks && i < 8; i++)
		st[i] = capture_builder__add_stack(b, c0->stacks[i].parent, c0->stacks[i].frame);
	for (i = 0; i < c0->nevents; i++)
		capture_builder__add_event(b, &c0->events[i]);
	for (i = 0; i < c0->nsamples; i++)
		capture_builder__add_sample(b, &c0->samples[i]);
	ev = capture_builder__add_event(b, &(struct capture_event){
						   .name = capture_builder__string(b, "off-cpu"),
						   .unit = capture_builder__string(b, "nanoseconds"),
						   .period = 1 });
	for (i = 0; i < n; i++) {
		struct capture_interval v = ivs[i];

		v.event = ev;
		v.stack = v.stack == CAPTURE_NONE ? CAPTURE_NONE : st[v.stack];
		capture_builder__add_interval(b, &v);
	}
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "offcpu", &c, err, sizeof(err)), 0);
	free(buf);
	capture_builder__free(b);
	capture__free(c0);
	return c;
}

/* On thread 0 of recorded_capture (samples at 1000 + i ms, 1 ms each):
 * A [501000, 1501000) sleep/hardirq at stack "main" overlaps samples 0 and 1;
 * B [1400000, 1600000) runnable overlaps A (not from a recorder: clamped);
 * C [4500000, 5000000) END_UNKNOWN overlaps sample 4. */
static struct capture *offcpu_capture(void)
{
	static const struct capture_interval ivs[] = {
		{ .start_ns = 501000, .end_ns = 1501000, .weight = 1000000, .stack = 0,
		  .state = CAPTURE_OFFCPU_STATE_SLEEP, .cause = CAPTURE_OFFCPU_CAUSE_HARDIRQ,
		  .waker_thread = CAPTURE_NONE, .waker_stack = CAPTURE_NONE, .cpu = 1 },
		{ .start_ns = 1400000, .end_ns = 1600000, .weight = 200000, .stack = 1,
		  .state = CAPTURE_OFFCPU_STATE_RUNNABLE, .waker_thread = CAPTURE_NONE,
		  .waker_stack = CAPTURE_NONE, .cpu = CAPTURE_NONE },
		{ .start_ns = 4500000, .end_ns = 5000000, .weight = 500000, .stack = 0,
		  .flags = CAPTURE_INTERVAL_F_END_UNKNOWN, .state = CAPTURE_OFFCPU_STATE_SLEEP,
		  .cause = CAPTURE_OFFCPU_CAUSE_TASK, .waker_thread = 0,
		  .waker_stack = CAPTURE_NONE, .cpu = CAPTURE_NONE },
	};

	return capture_with_intervals(ivs, 3);
}

/* X events (one per line, one thread) are written parents first, in time
 * order, and each lies within the slice it is written inside. */
static void assert_trace_nests(const char *text)
{
	double start[64], end[64], last = -1;
	int depth = 0, n = 0;
	const char *l;

	for (l = text; (l = strstr(l, "{\"ph\":\"X\"")); l++) {
		const char *ts = strstr(l, "\"ts\":"), *dur = strstr(l, "\"dur\":");
		double t, e;

		assert_non_null(ts);
		assert_non_null(dur);
		t = strtod(ts + 5, NULL);
		e = t + strtod(dur + 6, NULL);
		assert_true(t >= last);
		last = t;
		while (depth > 0 && t >= end[depth - 1] && e > end[depth - 1])
			depth--;
		if (depth > 0)
			assert_true(t >= start[depth - 1] && e <= end[depth - 1]);
		assert_true(depth < 64);
		start[depth] = t;
		end[depth++] = e;
		n++;
	}
	assert_true(n > 0);
}

/*
 * A preemption P [2501000, 2701000) in sample 2's code (its stack "inlined",
 * sample 2 drawn [2001000, 3001000)): sample 2 is cut at P's start and
 * drawn on from P's end until sample 3 at 3001000 (300 of its 500 µs left;
 * the rest is cut short), and its slices stay open across P.
 */
static void test_preempted_sample_drawn_on(void **state)
{
	static const struct capture_interval ivs[] = {
		{ .start_ns = 2501000, .end_ns = 2701000, .weight = 200000, .stack = 2,
		  .state = CAPTURE_OFFCPU_STATE_RUNNABLE, .waker_thread = CAPTURE_NONE,
		  .waker_stack = CAPTURE_NONE, .cpu = CAPTURE_NONE },
	};
	struct capture *c = capture_with_intervals(ivs, 1);
	struct formats_note note = { "" };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(chrome_trace__export(c, 0, f, &note), 0);
	fclose(f);
	assert_trace_nests(text);
	if (getenv("TEST_FORMATS_DUMP"))
		fprintf(stderr, "%s\nnote: %s\n", text, note.text);
	/* speedscope: sample 2, P's leaf (id nstacks 6 + 1 + 1 + 5), sample 2
	 * again, sample 3: 500 + 300 µs for sample 2's stack */
	assert_non_null(strstr(text, "{\"pid\":42,\"tid\":43,\"ts\":2000,\"sf\":3},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":2500,\"sf\":13},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":2700,\"sf\":3},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":3000,\"sf\":4}"));
	/* Perfetto: one "inlined" slice across P, P a thread state without args */
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"pid\":42,\"tid\":43,\"ts\":2000,\"dur\":3000,"
				     "\"name\":\"inlined\"}"));
	assert_non_null(strstr(text, "{\"ph\":\"T\",\"pid\":42,\"tid\":43,\"ts\":2500,\"dur\":200,"
				     "\"name\":\"R+\"}"));
	assert_non_null(strstr(note.text, "1 samples cut by an off-CPU interval drawn on after it"));
	assert_non_null(strstr(note.text, "1 samples cut short"));
	free(text);
	capture__free(c);
}

static void test_offcpu_exports(void **state)
{
	struct capture *c = offcpu_capture(), *c2 = NULL;
	struct formats_note note = { "" };
	struct capture_builder *b;
	char *text = NULL, err[256];
	size_t len = 0;
	void *buf = NULL, *sealed = NULL;
	uint64_t offcpu = 0, clipped = 0;
	uint32_t i;
	FILE *f = open_memstream(&text, &len);

	assert_int_equal(chrome_trace__export(c, 0, f, &note), 0);
	fclose(f);
	assert_trace_nests(text);
	if (getenv("TEST_FORMATS_DUMP"))
		fprintf(stderr, "%s\nnote: %s\n", text, note.text);
	/* A keeps its real bounds, a thread-state event (Perfetto's "T") in
	 * exact µs from t0 = 1000 ns, with the CPU and the blocking frame */
	assert_non_null(strstr(text, "{\"ph\":\"T\",\"pid\":42,\"tid\":43,\"ts\":500,\"dur\":1000,"
				     "\"name\":\"S\",\"args\":{\"cpu\":1,\"blocked_function\":\"main\"}}"));
	/* main stays open across both intervals (on their stacks); sample 0
	 * is cut at A's start; sample 1 (at 1000 µs, inside A) is dropped,
	 * said in the note; outer opens at A's end */
	assert_non_null(strstr(text, "{\"ph\":\"X\",\"pid\":42,\"tid\":43,\"ts\":0,\"dur\":4999,"
				     "\"name\":\"main\"}"));
	assert_non_null(strstr(text, "\"ts\":2000,\"dur\":2499,\"name\":\"outer\"}"));
	assert_null(strstr(text, "\"ts\":1000,"));
	/* no slice for an interval's leaf: its state is the "T" event */
	assert_true(strstr(text, "\"name\":\"off-CPU") > strstr(text, "\"stackFrames\""));
	assert_null(strstr(text, "\"ph\":\"X\",\"pid\":42,\"tid\":43,\"ts\":500,"));
	/* B clamped to start at A's end (a preemption: no blocking frame);
	 * C drawn with its flag */
	assert_non_null(strstr(text, "{\"ph\":\"T\",\"pid\":42,\"tid\":43,\"ts\":1500,\"dur\":99,"
				     "\"name\":\"R+\",\"args\":{\"clamped\":1}}"));
	assert_non_null(strstr(text, "\"ts\":4499,\"dur\":500,\"name\":\"S\",\"args\":"
				     "{\"blocked_function\":\"main\",\"end_unknown\":1}}"));
	/* the compact form: one leaf per distinct (stack, name), ids from
	 * nstacks 6 + 1 + 1 + nsamples 5 = 13 in (stack, name) order; the gap
	 * after B, before sample 2, has an entry of its own */
	assert_non_null(strstr(text, "\"13\":{\"name\":\"off-CPU: sleep (woken by hardirq)\","
				     "\"parent\":1}"));
	assert_non_null(strstr(text, "\"14\":{\"name\":\"off-CPU: sleep (woken by worker-43) "
				     "[end unknown]\",\"parent\":1}"));
	assert_non_null(strstr(text, "\"15\":{\"name\":\"off-CPU: runnable (preempted)\","
				     "\"parent\":2}"));
	assert_non_null(strstr(text, "{\"pid\":42,\"tid\":43,\"ts\":0,\"sf\":1},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":500,\"sf\":13},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":1500,\"sf\":15},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":1599},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":2000,\"sf\":3}"));
	assert_non_null(strstr(text, "{\"pid\":42,\"tid\":43,\"ts\":4499,\"sf\":14},\n"
				     "{\"pid\":42,\"tid\":43,\"ts\":4999}\n]"));
	/* Perfetto records displayTimeUnit as a stat (json_display_time_unit) */
	assert_null(strstr(text, "displayTimeUnit"));
	assert_non_null(strstr(text, "\"t0_ns\":1000"));
	assert_non_null(strstr(note.text, "3 off-CPU intervals drawn"));
	assert_non_null(strstr(note.text, "0 samples trimmed and 1 dropped"));
	/* samples 0 (cut by A, no room before B) and 4 (cut by C, whose end
	 * is unknown: nothing drawn past it) */
	assert_non_null(strstr(note.text, "2 samples cut short"));
	assert_null(strstr(note.text, "drawn on after"));
	free(text);

	/* speedscope: an off-CPU profile of the complete intervals */
	note.text[0] = '\0';
	text = NULL;
	f = open_memstream(&text, &len);
	assert_int_equal(speedscope__export(c, 0, f, &note), 0);
	fclose(f);
	assert_non_null(strstr(text, "\"name\":\"worker-43 off-CPU\",\"unit\":\"nanoseconds\","
				     "\"startValue\":0,\"endValue\":1200000"));
	assert_non_null(strstr(text, "\"weights\":[1000000,200000]"));
	assert_non_null(strstr(note.text, "1 off-CPU intervals cut"));
	free(text);

	/* pprof: off-cpu/nanoseconds holds the complete intervals and C's part
	 * inside the window in a sample of its own (labelled clipped, never
	 * merged with A's of the same stack and thread); an import carries the
	 * values back as samples of event "off-cpu" */
	note.text[0] = '\0';
	assert_int_equal(pprof__export(c, &buf, &len, &note), 0);
	assert_non_null(strstr(note.text, "2 off-CPU intervals summed"));
	assert_non_null(strstr(note.text, "1 off-CPU intervals cut by the recording's edges "
					  "count their part inside it"));
	b = capture_builder__new();
	assert_int_equal(pprof__import(buf, len, b, &note, err, sizeof(err)), 0);
	assert_int_equal(capture_builder__serialize(b, &sealed, &len), 0);
	assert_int_equal(capture__open_mem(sealed, len, "re", &c2, err, sizeof(err)), 0);
	for (i = 0; i < c2->nsamples; i++) {
		const struct capture_event *ev = &c2->events[c2->samples[i].event];

		if (!strcmp(capture__string(c2, ev->name), "off-cpu")) {
			assert_string_equal(capture__string(c2, ev->unit), "nanoseconds");
			offcpu += c2->samples[i].weight;
			clipped += c2->samples[i].weight == 500000;
		}
	}
	assert_int_equal(offcpu, 1200000 + 500000);
	assert_int_equal(clipped, 1);
	/* the default (last) pprof type stays cpu */
	assert_string_equal(capture__string(c2, c2->events[c2->nevents - 1].name), "cpu");
	free(buf);
	free(sealed);
	capture_builder__free(b);
	capture__free(c2);
	capture__free(c);
}

/*
 * speedscope: zones as one "evented" profile per thread, times from the
 * thread's first zone.  Thread T: a+100 b+150 a-300 b-400 (crossing: b is
 * closed at 300, a closed, b opened again), a-450 (no begin open: left
 * out), b+500 (never ended: left out).  Frames: no samples, so site a is
 * frame 0, b frame 1.
 */
static void test_speedscope_zones(void **state)
{
	static const struct capture_probe_record recs[] = {
		{ .time_ns = 100, .site = 0, .kind = CAPTURE_PROBE_ZONE_BEGIN },
		{ .time_ns = 150, .site = 1, .kind = CAPTURE_PROBE_ZONE_BEGIN },
		{ .time_ns = 300, .site = 0, .kind = CAPTURE_PROBE_ZONE_END },
		{ .time_ns = 400, .site = 1, .kind = CAPTURE_PROBE_ZONE_END },
		{ .time_ns = 450, .site = 0, .kind = CAPTURE_PROBE_ZONE_END },
		{ .time_ns = 500, .site = 1, .kind = CAPTURE_PROBE_ZONE_BEGIN },
	};
	struct capture_builder *b = capture_builder__new();
	struct capture_process p = { .pid = 7 };
	struct capture_thread t = { .tid = 8 };
	struct formats_note note = { 0 };
	struct capture *c;
	char *text = NULL;
	size_t len;
	FILE *f;

	(void)state;
	p.comm = t.comm = capture_builder__string(b, "app");
	capture_builder__add_process(b, &p);
	capture_builder__add_thread(b, &t);
	capture_builder__add_event(b, &(struct capture_event){
					      .name = capture_builder__string(b, "cpu-clock"),
					      .unit = capture_builder__string(b, "samples"),
					      .period = 1 });
	capture_builder__add_probe_site(b, &(struct capture_probe_site){
						   capture_builder__string(b, "a"), 0 });
	capture_builder__add_probe_site(b, &(struct capture_probe_site){
						   capture_builder__string(b, "b"), 0 });
	for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
		capture_builder__add_probe_record(b, &recs[i]);
	c = seal(b);
	f = open_memstream(&text, &len);
	assert_int_equal(speedscope__export(c, 0, f, &note), 0);
	fclose(f);
	if (!strstr(text, "{\"type\":\"evented\",\"name\":\"app-8 zones\",\"unit\":\"nanoseconds\","
			  "\"startValue\":0,\"endValue\":300,\n\"events\":["
			  "{\"type\":\"O\",\"frame\":0,\"at\":0},"
			  "{\"type\":\"O\",\"frame\":1,\"at\":50},"
			  "{\"type\":\"C\",\"frame\":1,\"at\":200},"
			  "{\"type\":\"C\",\"frame\":0,\"at\":200},"
			  "{\"type\":\"O\",\"frame\":1,\"at\":200},"
			  "{\"type\":\"C\",\"frame\":1,\"at\":300}]}"))
		fail_msg("%s", text);
	assert_non_null(strstr(text, "\"frames\":[\n{\"name\":\"a\"},\n{\"name\":\"b\"}\n]"));
	assert_non_null(strstr(note.text, "2 probe zones as per-thread 'zones' evented profiles "
					  "(1 splits"));
	free(text);
	capture__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_edge_cases),
		cmocka_unit_test(test_folded_round_trip),
		cmocka_unit_test(test_folded_rejects),
		cmocka_unit_test(test_pprof_import_model),
		cmocka_unit_test(test_pprof_malformed),
		cmocka_unit_test(test_labels_match_analysis),
		cmocka_unit_test(test_pprof_export_recorded),
		cmocka_unit_test(test_pprof_labels_round_trip),
		cmocka_unit_test(test_json_exports),
		cmocka_unit_test(test_offcpu_exports),
		cmocka_unit_test(test_speedscope_zones),
		cmocka_unit_test(test_preempted_sample_drawn_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
