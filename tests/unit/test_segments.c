// SPDX-License-Identifier: MIT
/*
 * Segments: capture_builder__merge / __take (ids remapped, only referenced
 * rows copied, rows deduplicated across merges, time ranges half-open),
 * segment names (strict), the segment writer (lock, stale temporaries,
 * retention by size, foreign files untouched) and the directory reader
 * (notes and exact totals), and the duration/size parsers of --segment,
 * --retain and --window.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "capture/capture.h"
#include "capture/merge.h"
#include "capture/segment_dir.h"
#include "capture/segment_writer.h"
#include "userspace/cli/input.h"
#include "userspace/options/record_options.h"

/* Two threads of one process, a used and an unused module, 4 samples at
 * t = 10, 20, 30, 40 ns: thread 0 in main<-work, thread 1 in main. */
struct known {
	uint32_t t[2], stack_main, stack_work, event;
};

static void build(struct capture_builder *b, struct known *k)
{
	struct capture_module m = {capture_builder__string(b, "/bin/app"),
				   capture_builder__string(b, "abcd"), CAPTURE_MODULE_FILE, 0, 1, 0};
	struct capture_module unused = {capture_builder__string(b, "/lib/unused.so"), 0,
					CAPTURE_MODULE_FILE, 0, 2, 0};
	struct capture_process p = {.pid = 7, .start_time_ns = 5,
				    .comm = capture_builder__string(b, "app")};
	uint32_t mod = capture_builder__add_module(b, &m), proc;
	struct capture_mapping map = {0, mod, 0x1000, 0x2000, 0, 1};
	struct capture_frame f_main = {mod, 0, 0x1100, capture_builder__string(b, "main"), 0, 0, 0};
	struct capture_frame f_work = {mod, 0, 0x1200, capture_builder__string(b, "work"), 0, 0, 0};
	struct capture_frame f_unused = {capture_builder__add_module(b, &unused), 0, 0x10,
					 capture_builder__string(b, "never"), 0, 0, 0};
	struct capture_event e = {capture_builder__string(b, "cpu-clock"),
				  capture_builder__string(b, "samples"), 1000};

	proc = capture_builder__add_process(b, &p);
	map.process = proc;
	capture_builder__add_mapping(b, &map);
	k->t[0] = capture_builder__add_thread(
	    b, &(struct capture_thread){7, 7, proc, capture_builder__string(b, "app")});
	k->t[1] = capture_builder__add_thread(
	    b, &(struct capture_thread){8, 8, proc, capture_builder__string(b, "helper")});
	capture_builder__add_stack(b, CAPTURE_NONE, capture_builder__add_frame(b, &f_unused));
	k->stack_main = capture_builder__add_stack(b, CAPTURE_NONE,
						   capture_builder__add_frame(b, &f_main));
	k->stack_work = capture_builder__add_stack(b, k->stack_main,
						   capture_builder__add_frame(b, &f_work));
	k->event = capture_builder__add_event(b, &e);
	for (int i = 0; i < 4; i++) {
		struct capture_sample s = {(uint64_t)(i + 1) * 10, k->t[i & 1], 0,
					   i & 1 ? k->stack_main : k->stack_work, k->event, 1};

		capture_builder__add_sample(b, &s);
	}
	capture_builder__add_counter(b, "collector.lost", 3);
	capture_builder__set_meta(b, "command", "app");
}

static struct capture *seal(struct capture_builder *b)
{
	struct capture *c = NULL;
	char err[256];
	void *buf;
	size_t len;

	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "t.msc", &c, err, sizeof(err)), 0);
	free(buf);
	return c;
}

/* Name of the innermost frame of sample i. */
static const char *leaf(const struct capture *c, uint32_t i)
{
	return capture__string(c, c->frames[c->stacks[c->samples[i].stack].frame].function);
}

static void test_merge_range_copies_only_referenced_rows(void **state)
{
	struct capture_builder *b = capture_builder__new(), *dst = capture_builder__new();
	struct capture *src, *out;
	struct known k;

	(void)state;
	build(b, &k);
	src = seal(b);
	/* [15, 35): the samples at 20 (thread 1, main) and 30 (thread 0, work) */
	assert_int_equal(capture_builder__merge(dst, src, 15, 35), 0);
	out = seal(dst);
	assert_int_equal(out->nsamples, 2);
	assert_true(out->samples[0].time_ns == 20 && out->samples[1].time_ns == 30);
	assert_string_equal(leaf(out, 0), "main");
	assert_string_equal(leaf(out, 1), "work");
	assert_string_equal(capture__string(out, out->threads[out->samples[0].thread].comm),
			    "helper");
	/* the unused module and its frame stay behind; main's mapping comes along */
	assert_int_equal(out->nmodules, 1);
	assert_int_equal(out->nframes, 2);
	assert_int_equal(out->nstacks, 2);
	assert_int_equal(out->nmappings, 1);
	assert_true(out->mappings[0].start == 0x1000);
	assert_int_equal(capture__counter(out, "collector.lost"), 3);
	assert_string_equal(capture__meta(out, "command"), "app");
	capture__free(out);
	capture__free(src);
	capture_builder__free(b);
	capture_builder__free(dst);
}

static void test_merge_twice_dedupes_and_adds(void **state)
{
	struct capture_builder *b = capture_builder__new(), *dst = capture_builder__new();
	struct capture *src, *out;
	struct known k;

	(void)state;
	build(b, &k);
	src = seal(b);
	assert_int_equal(capture_builder__merge(dst, src, 0, 25), 0);
	assert_int_equal(capture_builder__merge(dst, src, 25, UINT64_MAX), 0);
	out = seal(dst);
	/* adjacent ranges: every sample once; one process, two threads, one module */
	assert_int_equal(out->nsamples, 4);
	assert_int_equal(out->nprocesses, 1);
	assert_int_equal(out->nthreads, 2);
	assert_int_equal(out->nmodules, 1);
	assert_int_equal(out->nmappings, 1);
	assert_int_equal(capture__counter(out, "collector.lost"), 6); /* counters add */
	capture__free(out);
	capture__free(src);
	capture_builder__free(b);
	capture_builder__free(dst);
}

static void test_take_keeps_dictionaries(void **state)
{
	struct capture_builder *b = capture_builder__new(), *s1 = capture_builder__new(),
			       *s2 = capture_builder__new();
	struct capture *c1, *c2;
	struct known k;
	struct capture_sample later;

	(void)state;
	build(b, &k);
	assert_int_equal(capture_builder__take(b, s1, UINT64_MAX), 0);
	assert_int_equal(capture_builder__sample_count(b), 0);
	/* ids handed out before the take still name the same rows */
	later = (struct capture_sample){50, k.t[1], 0, k.stack_work, k.event, 1};
	capture_builder__add_sample(b, &later);
	capture_builder__add_counter(b, "collector.lost", 2);
	assert_int_equal(capture_builder__take(b, s2, UINT64_MAX), 0);
	c1 = seal(s1);
	c2 = seal(s2);
	assert_int_equal(c1->nsamples, 4);
	assert_int_equal(c2->nsamples, 1);
	assert_string_equal(leaf(c2, 0), "work");
	assert_string_equal(capture__string(c2, c2->threads[c2->samples[0].thread].comm),
			    "helper");
	/* counters move: each segment holds what was counted since the last */
	assert_int_equal(capture__counter(c1, "collector.lost"), 3);
	assert_int_equal(capture__counter(c2, "collector.lost"), 2);
	capture__free(c1);
	capture__free(c2);
	capture_builder__free(b);
	capture_builder__free(s1);
	capture_builder__free(s2);
}

static void test_take_before_a_time(void **state)
{
	struct capture_builder *b = capture_builder__new(), *s1 = capture_builder__new();
	struct capture *c1, *rest;
	struct known k;

	(void)state;
	build(b, &k);
	/* the samples at 10 and 20 move; 30 and 40 stay, in order */
	assert_int_equal(capture_builder__take(b, s1, 25), 0);
	c1 = seal(s1);
	rest = seal(b);
	assert_int_equal(c1->nsamples, 2);
	assert_true(c1->samples[0].time_ns == 10 && c1->samples[1].time_ns == 20);
	assert_int_equal(rest->nsamples, 2);
	assert_true(rest->samples[0].time_ns == 30 && rest->samples[1].time_ns == 40);
	assert_int_equal(capture__counter(c1, "collector.lost"), 3);
	assert_int_equal(capture__counter(rest, "collector.lost"), 0);
	capture__free(c1);
	capture__free(rest);
	capture_builder__free(b);
	capture_builder__free(s1);
}

static void test_segment_names(void **state)
{
	char buf[SEGMENT_NAME_MAX];
	uint64_t seq;

	(void)state;
	/* 2026-12-02 14:17:00 UTC */
	assert_int_equal(segment_name__format(buf, sizeof(buf), 1796221020ull * 1000000000, 42), 0);
	assert_string_equal(buf, "seg-20261202T141700Z-00000042.msc");
	assert_true(segment_name__is_segment(buf, &seq));
	assert_int_equal(seq, 42);
	assert_int_equal(segment_name__format(buf, sizeof(buf), 0, 100000000), -EINVAL);
	assert_false(segment_name__is_segment("seg-20261202T141700Z-00000042.msc~", &seq));
	assert_false(segment_name__is_segment("seg-20261202T141700Z-0000042.msc", &seq));
	assert_false(segment_name__is_segment("seg-2026120xT141700Z-00000042.msc", &seq));
	assert_false(segment_name__is_segment("Seg-20261202T141700Z-00000042.msc", &seq));
	assert_false(segment_name__is_segment("seg-20261202T141700Z-00000042.msc.tmp.5", &seq));
	assert_true(segment_name__is_temp("seg-20261202T141700Z-00000042.msc.tmp.5"));
	/* file_out's own temporaries (mkostemp's XXXXXX) */
	assert_true(segment_name__is_temp("seg-20261202T141700Z-00000042.msc.tmp.aZ09xq"));
	assert_false(segment_name__is_temp("seg-20261202T141700Z-00000042.msc.tmp."));
	assert_false(segment_name__is_temp("seg-20261202T141700Z-00000042.msc.tmp.5-x"));
	assert_false(segment_name__is_temp("seg-20261202T141700Z-00000042.msc.tmp.../x"));
	assert_false(segment_name__is_temp("seg-20261202T141700Z-00000042.msc.tmp.0123456789abcdefg"));
	assert_false(segment_name__is_temp("other.msc.tmp.5"));
	assert_true(segment_name__is_temp("seg-20261202T141700Z-00000042.pb.gz.tmp.5"));
	assert_false(segment_name__is_temp("seg-20261202T141700Z-00000042.gz.tmp.5"));
	assert_false(segment_name__is_segment("seg-20261202T141700Z-00000042.pb.gz", &seq));
}

static void touch(const char *dir, const char *name, size_t bytes)
{
	char path[512], *zero = calloc(1, bytes + 1);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(zero, 1, bytes, f);
	fclose(f);
	free(zero);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !access(path, F_OK);
}

static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[512];

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		assert_int_equal(unlink(path), 0);
	}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
}

static int notes;
static char last_note[512];

static void count_note(void *ctx, const char *line)
{
	(void)ctx;
	notes++;
	snprintf(last_note, sizeof(last_note), "%s", line);
}

static void test_writer_and_reader(void **state)
{
	char dir[] = "/tmp/ms-segments-XXXXXX", err[512], export[64];
	struct segment_policy policy = {0};
	struct segment_writer *w = NULL, *w2 = NULL;
	struct capture_builder *b = capture_builder__new();
	struct capture *all = NULL;
	char **names;
	size_t n;
	struct stat st;
	struct known k;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* a killed recorder's temporary, a foreign file, and a foreign look-alike */
	touch(dir, "seg-20200101T000000Z-00000007.msc.tmp.99", 10);
	touch(dir, "seg-20200101T000000Z-00000008.msc.tmp.Ab3xYz", 10); /* file_out's */
	touch(dir, "seg-20200101T000000Z-00000008.pb.gz.tmp.q1W2e3", 10);
	touch(dir, "notes.txt", 10);
	touch(dir, "seg-20200101T000000Z-00000001.msc.bak", 10);
	policy.retain_bytes = 1; /* only the newest segment stays */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(segment_writer__open(dir, &policy, &w, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by other users"));
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(segment_writer__open(dir, &policy, &w, err, sizeof(err)), 0);
	assert_false(exists(dir, "seg-20200101T000000Z-00000007.msc.tmp.99"));
	assert_false(exists(dir, "seg-20200101T000000Z-00000008.msc.tmp.Ab3xYz"));
	assert_false(exists(dir, "seg-20200101T000000Z-00000008.pb.gz.tmp.q1W2e3"));
	/* a second writer is kept out while the first holds the lock */
	assert_int_equal(segment_writer__open(dir, &policy, &w2, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "another recorder (pid"));
	build(b, &k);
	assert_int_equal(segment_writer__publish(w, b, 5, 45, err, sizeof(err)), 0);
	/* its pprof export, as record --export writes it, goes with it */
	assert_int_equal(segment_dir__list(dir, &names, &n), 0);
	assert_int_equal(n, 1);
	snprintf(export, sizeof(export), "%.29s.pb.gz", names[0]);
	segment_dir__free_names(names, n);
	touch(dir, export, 10);
	capture_builder__add_sample(b, &(struct capture_sample){60, k.t[0], 0, k.stack_main,
								k.event, 1});
	assert_int_equal(segment_writer__publish(w, b, 45, 70, err, sizeof(err)), 0);
	assert_int_equal(segment_writer__published(w), 2);
	assert_int_equal(segment_writer__deleted(w), 1);
	assert_int_equal(segment_dir__list(dir, &names, &n), 0);
	assert_int_equal(n, 1);
	assert_non_null(strstr(names[0], "-00000001.msc")); /* sequence 0 went */
	segment_dir__free_names(names, n);
	assert_false(exists(dir, export));
	assert_true(exists(dir, "notes.txt"));
	assert_true(exists(dir, "seg-20200101T000000Z-00000001.msc.bak"));
	assert_int_equal(stat(dir, &st), 0);
	segment_writer__free(w);

	/* The reader: one segment left (1 sample), a temporary noted. */
	touch(dir, "seg-20200101T000000Z-00000009.msc.tmp.12", 10);
	notes = 0;
	assert_int_equal(segment_dir__open(dir, 0, UINT64_MAX, &all, err, sizeof(err), count_note,
					   NULL),
			 0);
	assert_int_equal(notes, 1);
	assert_non_null(strstr(last_note, "being written"));
	assert_int_equal(all->nsamples, 1);
	assert_true(all->samples[0].time_ns == 60);
	assert_string_equal(capture__meta(all, "segments"), "1");
	capture__free(all);
	capture_builder__free(b);
	remove_dir(dir);
}

static void test_parse_duration_and_size(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(record_options__parse_duration("10s", &v), 0);
	assert_true(v == 10000000000ull);
	assert_int_equal(record_options__parse_duration("1.5m", &v), 0);
	assert_true(v == 90000000000ull);
	assert_int_equal(record_options__parse_duration("500ms", &v), 0);
	assert_true(v == 500000000ull);
	assert_int_equal(record_options__parse_duration("7d", &v), 0);
	assert_true(v == 7ull * 86400 * 1000000000);
	assert_int_equal(record_options__parse_duration("3", &v), 0);
	assert_true(v == 3000000000ull);
	assert_int_equal(record_options__parse_duration("-1s", &v), -EINVAL);
	assert_int_equal(record_options__parse_duration("10x", &v), -EINVAL);
	assert_int_equal(record_options__parse_duration("1e30d", &v), -EINVAL);
	assert_int_equal(record_options__parse_duration("100M", &v), -EINVAL);
	assert_int_equal(record_options__parse_size("100M", &v), 0);
	assert_true(v == 100ull << 20);
	assert_int_equal(record_options__parse_size("2GiB", &v), 0);
	assert_true(v == 2ull << 30);
	assert_int_equal(record_options__parse_size("512KB", &v), 0);
	assert_true(v == 512ull << 10);
	assert_int_equal(record_options__parse_size("4096B", &v), 0);
	assert_true(v == 4096);
	assert_int_equal(record_options__parse_size("30s", &v), -EINVAL);
	assert_int_equal(record_options__parse_size("30", &v), -EINVAL);
}

static void test_parse_when(void **state)
{
	const uint64_t s = 1000000000ull;
	const uint64_t now = 1796234400ull * s; /* 2026-12-02 18:00:00 UTC */
	uint64_t v;

	(void)state;
	assert_int_equal(cli_input__parse_when("-10m", now, &v), 0);
	assert_true(v == now - 600 * s);
	assert_int_equal(cli_input__parse_when("2026-12-02T14:17:00Z", now, &v), 0);
	assert_true(v == 1796221020ull * s);
	assert_int_equal(cli_input__parse_when("2026-12-02 14:17", now, &v), 0);
	assert_true(v == 1796221020ull * s);
	assert_int_equal(cli_input__parse_when("14:17", now, &v), 0); /* today, UTC */
	assert_true(v == 1796221020ull * s);
	assert_int_equal(cli_input__parse_when("14:17:30", now, &v), 0);
	assert_true(v == 1796221050ull * s);
	assert_int_equal(cli_input__parse_when("@5", now, &v), 0);
	assert_true(v == 5 * s);
	assert_int_equal(cli_input__parse_when("2026-13-01T00:00", now, &v), -EINVAL);
	/* Calendar days and clock fields are checked, not normalized by timegm
	 * (before: 2026-02-30 was taken as 2026-03-02). */
	assert_int_equal(cli_input__parse_when("2026-02-30T00:00Z", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-02-29T00:00Z", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-04-31 12:00", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-00-10T00:00", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-12-00T00:00", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-12-02T24:00", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-12-02T23:60", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-12-02T23:59:60", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("24:00", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("9:00", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-12-2T14:17", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-12-02T14:17ZZ", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("2026-12-02", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("1.5", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("5", now, &v), -EINVAL);
	/* 2024 is a leap year: 2024-02-29 00:00 UTC is 1709164800. */
	assert_int_equal(cli_input__parse_when("2024-02-29T00:00Z", now, &v), 0);
	assert_true(v == 1709164800ull * s);
	assert_int_equal(cli_input__parse_when("2026-12-02T23:59:59", now, &v), 0);
	assert_true(v == 1796255999ull * s);
	assert_int_equal(cli_input__parse_when("14:17x", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("-", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("@", now, &v), -EINVAL);
	assert_int_equal(cli_input__parse_when("10m", now, &v), -EINVAL);
}

static void test_options_check(void **state)
{
	struct record_options o;
	char err[256];

	(void)state;
	record_options__init(&o);
	assert_true(o.segment_ns == MS_DEFAULT_SEGMENT_NS);
	o.retain_ns = 30000000000ull;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "need --continuous"));
	o.continuous = "/tmp/x";
	o.segment_ns = 60000000000ull;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL); /* retain < segment */
	o.segment_ns = 10000000000ull;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	o.segment_ns = 999999999;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	o.segment_ns = 10000000000ull;
	o.window_ns = 5000000000ull;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL); /* exclusive */
	o.continuous = NULL;
	o.retain_ns = 0;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	/* production: 97 Hz, budget 1 %, 60 s segments, -a without a command */
	record_options__init(&o);
	assert_int_equal(record_options__apply_preset(&o, "production", 0), 0);
	assert_int_equal(o.freq_hz, 97);
	assert_true(o.budget_pct == 1);
	assert_true(o.system_wide);
	assert_true(o.segment_ns == 60000000000ull);
}

/* One sample at t of a recording started at rec_ns, requested at freq Hz
 * (its event's period 1e9 / freq, as cpu-clock's). */
static void one_sample(struct capture_builder *b, uint64_t t, uint64_t rec_ns, const char *freq)
{
	struct capture_event e = {capture_builder__string(b, "cpu-clock"),
				  capture_builder__string(b, "samples"),
				  1000000000ull / strtoull(freq, NULL, 10)};
	char buf[32];

	capture_builder__add_sample(b, &(struct capture_sample){
					   t, CAPTURE_NONE, 0, CAPTURE_NONE,
					   capture_builder__add_event(b, &e), 1});
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rec_ns);
	capture_builder__set_meta(b, "start_time_ns", buf);
	capture_builder__set_meta(b, "freq_hz", freq);
}

/*
 * A segment is stamped with the span it was cut for, never widened to a
 * late sample (before: its start moved back to the sample, overlapping the
 * segment before); the directory's duration is the union of its segments'
 * spans (before: their sum, 90 ns here for 75 ns covered); each event says
 * the rate its own recording requested (before: the last recording's).
 */
static void test_spans_union_and_rates(void **state)
{
	char dir[] = "/tmp/ms-segments-XXXXXX", err[512];
	struct segment_policy policy = {0};
	struct segment_writer *w = NULL;
	struct capture_builder *b = capture_builder__new();
	struct capture *all = NULL, *seg = NULL;
	char **names;
	size_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(segment_writer__open(dir, &policy, &w, err, sizeof(err)), 0);
	one_sample(b, 10, 1, "999");
	assert_int_equal(segment_writer__publish(w, b, 5, 45, err, sizeof(err)), 0);
	one_sample(b, 25, 1, "999"); /* released after [5, 45) was cut */
	one_sample(b, 50, 1, "999");
	/* an older recorder's overlapping span, as a starved one cut them */
	assert_int_equal(segment_writer__publish(w, b, 30, 60, err, sizeof(err)), 0);
	one_sample(b, 110, 100, "499"); /* a second recording */
	assert_int_equal(segment_writer__publish(w, b, 100, 120, err, sizeof(err)), 0);
	segment_writer__free(w);

	assert_int_equal(segment_dir__list(dir, &names, &n), 0);
	assert_int_equal(n, 3);
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/%s", dir, names[1]);
		assert_int_equal(capture__open(path, &seg, err, sizeof(err)), 0);
	}
	segment_dir__free_names(names, n);
	assert_string_equal(capture__meta(seg, SEGMENT_META_START), "30");
	assert_string_equal(capture__meta(seg, SEGMENT_META_END), "60");
	assert_string_equal(capture__meta(seg, SEGMENT_META_LATE), "1");
	assert_int_equal(seg->nsamples, 2);
	capture__free(seg);

	notes = 0;
	assert_int_equal(segment_dir__open(dir, 0, UINT64_MAX, &all, err, sizeof(err), count_note,
					   NULL),
			 0);
	assert_int_equal(all->nsamples, 4);
	assert_int_equal(all->nevents, 2);
	assert_string_equal(capture__meta(all, "duration_ns"), "75"); /* [5, 60) + [100, 120) */
	assert_string_equal(capture__meta(all, "event.0.freq_hz"), "999");
	assert_string_equal(capture__meta(all, "event.1.freq_hz"), "499");
	capture__free(all);
	capture_builder__free(b);
	remove_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_merge_range_copies_only_referenced_rows),
	    cmocka_unit_test(test_merge_twice_dedupes_and_adds),
	    cmocka_unit_test(test_take_keeps_dictionaries),
	    cmocka_unit_test(test_take_before_a_time),
	    cmocka_unit_test(test_segment_names),
	    cmocka_unit_test(test_writer_and_reader),
	    cmocka_unit_test(test_spans_union_and_rates),
	    cmocka_unit_test(test_parse_duration_and_size),
	    cmocka_unit_test(test_parse_when),
	    cmocka_unit_test(test_options_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
