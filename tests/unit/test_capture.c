// SPDX-License-Identifier: MIT
/*
 * Capture layer: builder -> serialize -> reader round trips, interning,
 * determinism, atomic publication, and a damaged-capture corpus.
 *
 * Malicious inputs are made by taking a valid file apart into chunks
 * (struct tfile), editing the decompressed rows, and putting it back
 * together with fresh zstd frames, crcs and seal, so they reach the row
 * validation instead of stopping at a checksum.
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>
#include <zstd.h>

#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/format.h"
#include "capture/limits.h"

#define NAME "crafted.msc"

/* ---- a known capture ------------------------------------------------------ */

struct ids {
	uint32_t m[4], p, t[2], map[2], f[4], s[4], e[2], smp[4];
};

static void build_known(struct capture_builder *b, struct ids *id)
{
	struct capture_module m;
	struct capture_process p;
	struct capture_thread t;
	struct capture_mapping map;
	struct capture_frame f;
	struct capture_event e;
	struct capture_sample s;

	m = (struct capture_module){capture_builder__string(b, "/usr/bin/demo"),
				    capture_builder__string(b, "0123abcd"),
				    CAPTURE_MODULE_FILE,
				    CAPTURE_MODULE_F_SYMBOLIZED,
				    123456,
				    0};
	id->m[0] = capture_builder__add_module(b, &m);
	m = (struct capture_module){
	    capture_builder__string(b, "[kernel.kallsyms]"), 0, CAPTURE_MODULE_KERNEL, 0, 0, 0};
	id->m[1] = capture_builder__add_module(b, &m);
	m = (struct capture_module){capture_builder__string(b, "//anon"), 0, CAPTURE_MODULE_ANON,
				    CAPTURE_MODULE_F_CONTENT_HASH,	  0, 0xfeedfacecafebeefull};
	id->m[2] = capture_builder__add_module(b, &m);
	m = (struct capture_module){
	    capture_builder__string(b, "[vdso]"), 0, CAPTURE_MODULE_VDSO, 0, 8192, 0};
	id->m[3] = capture_builder__add_module(b, &m);

	p = (struct capture_process){.pid = 4242,
				     .ppid = 1,
				     .start_time_ns = 5000000001ull,
				     .comm = capture_builder__string(b, "demo"),
				     .exe = capture_builder__string(b, "/usr/bin/demo"),
				     .pidns = 4026531836ull,
				     .mntns = 4026531840ull,
				     .cgroupns = 4026531835ull};
	id->p = capture_builder__add_process(b, &p);

	t = (struct capture_thread){4242, 1, id->p, capture_builder__string(b, "demo")};
	id->t[0] = capture_builder__add_thread(b, &t);
	t = (struct capture_thread){4243, 2, id->p, capture_builder__string(b, "worker")};
	id->t[1] = capture_builder__add_thread(b, &t);

	map = (struct capture_mapping){id->p, id->m[0], 0x400000, 0x401000, 0x1000, 7000000000ull};
	id->map[0] = capture_builder__add_mapping(b, &map);
	map = (struct capture_mapping){id->p, id->m[2],	    0x7f0000000000ull, 0x7f0000010000ull,
				       0,     7000000002ull};
	id->map[1] = capture_builder__add_mapping(b, &map);

	f = (struct capture_frame){id->m[0],
				   0,
				   0x401234,
				   capture_builder__string(b, "main"),
				   capture_builder__string(b, "demo.c"),
				   42,
				   0};
	id->f[0] = capture_builder__add_frame(b, &f);
	f = (struct capture_frame){id->m[0],
				   CAPTURE_FRAME_F_INLINE,
				   0x401240,
				   capture_builder__string(b, "helper"),
				   capture_builder__string(b, "demo.h"),
				   7,
				   0};
	id->f[1] = capture_builder__add_frame(b, &f);
	f = (struct capture_frame){id->m[1],
				   CAPTURE_FRAME_F_KERNEL,
				   0xffffffff81000010ull,
				   capture_builder__string(b, "do_syscall_64"),
				   0,
				   0,
				   0};
	id->f[2] = capture_builder__add_frame(b, &f);
	f = (struct capture_frame){CAPTURE_NONE,
				   CAPTURE_FRAME_F_TRUNCATION,
				   0,
				   capture_builder__string(b, "[truncated: no CFI]"),
				   0,
				   0,
				   0};
	id->f[3] = capture_builder__add_frame(b, &f);

	id->s[0] = capture_builder__add_stack(b, CAPTURE_NONE, id->f[0]);
	id->s[1] = capture_builder__add_stack(b, id->s[0], id->f[1]);
	id->s[2] = capture_builder__add_stack(b, id->s[1], id->f[2]);
	id->s[3] = capture_builder__add_stack(b, id->s[0], id->f[3]);

	e = (struct capture_event){capture_builder__string(b, "cpu-clock"),
				   capture_builder__string(b, "samples"), 1001001};
	id->e[0] = capture_builder__add_event(b, &e);
	e = (struct capture_event){capture_builder__string(b, "off-cpu"),
				   capture_builder__string(b, "nanoseconds"), 1};
	id->e[1] = capture_builder__add_event(b, &e);

	s = (struct capture_sample){10000000001ull, id->t[0], 3, id->s[2], id->e[0], 1};
	id->smp[0] = capture_builder__add_sample(b, &s);
	s = (struct capture_sample){10000000002ull, id->t[1], CAPTURE_NONE,
				    id->s[3],	    id->e[1], 250000};
	id->smp[1] = capture_builder__add_sample(b, &s);
	s = (struct capture_sample){10000000003ull, CAPTURE_NONE, 0, CAPTURE_NONE, id->e[0], 2};
	id->smp[2] = capture_builder__add_sample(b, &s);
	s = (struct capture_sample){UINT64_MAX, id->t[0], 7, id->s[0], id->e[0], UINT64_MAX};
	id->smp[3] = capture_builder__add_sample(b, &s);

	capture_builder__add_counter(b, "processor.bad_record_size", 3);
	capture_builder__add_counter(b, "collector.lost", 1);
	capture_builder__add_counter(b, "processor.bad_record_size", 4);
	capture_builder__add_counter(b, "collector.lost", UINT64_MAX); /* saturates */
	capture_builder__set_meta(b, "command", "./demo 2");
	capture_builder__set_meta(b, "hostname", "box");
	capture_builder__set_meta(b, "command", "./demo 3");
}

static void serialize_known(uint8_t **buf, size_t *len)
{
	struct capture_builder *b = capture_builder__new();
	struct ids id;

	assert_non_null(b);
	build_known(b, &id);
	assert_int_equal(capture_builder__serialize(b, (void **)buf, len), 0);
	assert_string_equal(capture_builder__error(b), "");
	capture_builder__free(b);
}

/* Touch every row, string and reference: ASan catches what validation missed. */
static uint64_t walk(const struct capture *c)
{
	uint64_t sum = 0;
	uint32_t i, s;

	for (i = 0; i < c->nmodules; i++)
		sum += strlen(capture__string(c, c->modules[i].path)) +
		       strlen(capture__string(c, c->modules[i].build_id));
	for (i = 0; i < c->nthreads; i++)
		sum += c->processes[c->threads[i].process].pid +
		       strlen(capture__string(c, c->threads[i].comm));
	for (i = 0; i < c->nmappings; i++)
		sum += c->processes[c->mappings[i].process].pid +
		       c->modules[c->mappings[i].module].kind;
	for (i = 0; i < c->nframes; i++)
		sum +=
		    (c->frames[i].module == CAPTURE_NONE ? 0
							 : c->modules[c->frames[i].module].kind) +
		    strlen(capture__string(c, c->frames[i].function));
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *smp = &c->samples[i];

		sum += c->events[smp->event].period;
		if (smp->thread != CAPTURE_NONE)
			sum += c->threads[smp->thread].tid;
		uint32_t steps = 0;

		for (s = smp->stack; s != CAPTURE_NONE; s = c->stacks[s].parent) {
			sum += c->frames[c->stacks[s].frame].address;
			/* parents are earlier rows, so a walk ends within nstacks steps */
			assert_true(++steps <= c->nstacks);
		}
	}
	for (i = 0; i < c->ncounters; i++)
		sum += strlen(capture__string(c, c->counters[i].name));
	for (i = 0; i < c->nmeta; i++)
		sum += strlen(capture__string(c, c->meta[i].value));
	return sum;
}

/* ---- round trips ---------------------------------------------------------- */

static void test_roundtrip(void **state)
{
	struct capture *c = NULL;
	uint8_t *buf;
	size_t len;
	char err[256] = "";
	const struct capture_stack *st;

	serialize_known(&buf, &len);
	assert_int_equal(capture__open_mem(buf, len, NAME, &c, err, sizeof(err)), 0);
	free(buf); /* the capture holds copies */
	assert_string_equal(err, "");
	assert_int_equal(c->version, CAPTURE_FORMAT_VERSION);

	assert_int_equal(c->nmodules, 4);
	assert_string_equal(capture__string(c, c->modules[0].path), "/usr/bin/demo");
	assert_string_equal(capture__string(c, c->modules[0].build_id), "0123abcd");
	assert_int_equal(c->modules[0].kind, CAPTURE_MODULE_FILE);
	assert_int_equal(c->modules[0].flags, CAPTURE_MODULE_F_SYMBOLIZED);
	assert_int_equal(c->modules[0].size, 123456);
	assert_int_equal(c->modules[0].content_hash, 0);
	assert_int_equal(c->modules[1].kind, CAPTURE_MODULE_KERNEL);
	assert_string_equal(capture__string(c, c->modules[1].build_id), "");
	assert_int_equal(c->modules[2].kind, CAPTURE_MODULE_ANON);
	assert_int_equal(c->modules[2].flags, CAPTURE_MODULE_F_CONTENT_HASH);
	assert_true(c->modules[2].content_hash == 0xfeedfacecafebeefull);
	assert_int_equal(c->modules[3].kind, CAPTURE_MODULE_VDSO);
	assert_int_equal(c->modules[3].size, 8192);

	assert_int_equal(c->nprocesses, 1);
	assert_int_equal(c->processes[0].pid, 4242);
	assert_int_equal(c->processes[0].ppid, 1);
	assert_true(c->processes[0].start_time_ns == 5000000001ull);
	assert_string_equal(capture__string(c, c->processes[0].comm), "demo");
	assert_string_equal(capture__string(c, c->processes[0].exe), "/usr/bin/demo");
	/* interned: the exe and the module path are one string */
	assert_int_equal(c->processes[0].exe, c->modules[0].path);
	assert_true(c->processes[0].pidns == 4026531836ull);
	assert_true(c->processes[0].mntns == 4026531840ull);
	assert_true(c->processes[0].cgroupns == 4026531835ull);

	assert_int_equal(c->nthreads, 2);
	assert_int_equal(c->threads[1].tid, 4243);
	assert_int_equal(c->threads[1].ns_tid, 2);
	assert_int_equal(c->threads[1].process, 0);
	assert_string_equal(capture__string(c, c->threads[1].comm), "worker");
	assert_int_equal(c->threads[0].comm, c->processes[0].comm);

	assert_int_equal(c->nmappings, 2);
	assert_int_equal(c->mappings[1].process, 0);
	assert_int_equal(c->mappings[1].module, 2);
	assert_true(c->mappings[1].start == 0x7f0000000000ull);
	assert_true(c->mappings[1].end == 0x7f0000010000ull);
	assert_int_equal(c->mappings[0].pgoff, 0x1000);
	assert_true(c->mappings[1].time_ns == 7000000002ull);

	assert_int_equal(c->nframes, 4);
	assert_int_equal(c->frames[1].module, 0);
	assert_int_equal(c->frames[1].flags, CAPTURE_FRAME_F_INLINE);
	assert_int_equal(c->frames[1].address, 0x401240);
	assert_string_equal(capture__string(c, c->frames[1].function), "helper");
	assert_string_equal(capture__string(c, c->frames[1].file), "demo.h");
	assert_int_equal(c->frames[1].line, 7);
	assert_true(c->frames[2].address == 0xffffffff81000010ull);
	assert_int_equal(c->frames[3].module, CAPTURE_NONE);
	assert_int_equal(c->frames[3].flags, CAPTURE_FRAME_F_TRUNCATION);
	assert_string_equal(capture__string(c, c->frames[3].file), "");

	assert_int_equal(c->nstacks, 4);
	st = c->stacks;
	assert_int_equal(st[0].parent, CAPTURE_NONE);
	assert_int_equal(st[0].frame, 0);
	assert_int_equal(st[2].parent, 1);
	assert_int_equal(st[2].frame, 2);
	assert_int_equal(st[3].parent, 0);
	assert_int_equal(st[3].frame, 3);

	assert_int_equal(c->nevents, 2);
	assert_string_equal(capture__string(c, c->events[0].name), "cpu-clock");
	assert_string_equal(capture__string(c, c->events[0].unit), "samples");
	assert_int_equal(c->events[0].period, 1001001);
	assert_string_equal(capture__string(c, c->events[1].unit), "nanoseconds");

	assert_int_equal(c->nsamples, 4);
	assert_true(c->samples[0].time_ns == 10000000001ull);
	assert_int_equal(c->samples[0].thread, 0);
	assert_int_equal(c->samples[0].cpu, 3);
	assert_int_equal(c->samples[0].stack, 2);
	assert_int_equal(c->samples[0].event, 0);
	assert_int_equal(c->samples[0].weight, 1);
	assert_int_equal(c->samples[1].cpu, CAPTURE_NONE);
	assert_int_equal(c->samples[1].event, 1);
	assert_int_equal(c->samples[1].weight, 250000);
	assert_int_equal(c->samples[2].thread, CAPTURE_NONE);
	assert_int_equal(c->samples[2].stack, CAPTURE_NONE);
	assert_true(c->samples[3].time_ns == UINT64_MAX);
	assert_true(c->samples[3].weight == UINT64_MAX);

	/* counters accumulate in first-add order; meta replaces in place */
	assert_int_equal(c->ncounters, 2);
	assert_string_equal(capture__string(c, c->counters[0].name), "processor.bad_record_size");
	assert_int_equal(c->counters[0].value, 7);
	assert_int_equal(c->counters[0].reserved, 0);
	assert_int_equal(capture__counter(c, "processor.bad_record_size"), 7);
	assert_true(capture__counter(c, "collector.lost") == UINT64_MAX);
	assert_int_equal(capture__counter(c, "absent"), 0);
	assert_int_equal(c->nmeta, 2);
	assert_string_equal(capture__string(c, c->meta[0].key), "command");
	assert_string_equal(capture__meta(c, "command"), "./demo 3");
	assert_string_equal(capture__meta(c, "hostname"), "box");
	assert_null(capture__meta(c, "absent"));

	assert_string_equal(capture__string(c, 0), "");
	assert_string_equal(capture__string(c, CAPTURE_NONE), "");
	/* "", 4 module paths and a build id, comm demo, worker, 6 frame strings,
	 * 4 event strings, 2 counter names, 2 meta keys, 3 meta values (one stale) */
	assert_int_equal(c->nstrings, 1 + 5 + 1 + 1 + 6 + 4 + 2 + 2 + 3);
	walk(c);
	capture__free(c);
}

static void test_empty(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture *c = NULL;
	char err[256];
	void *buf;
	size_t len;

	assert_non_null(b);
	assert_int_equal(capture_builder__sample_count(b), 0);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, NAME, &c, err, sizeof(err)), 0);
	assert_int_equal(c->nstrings, 1);
	assert_int_equal(c->nsamples + c->nstacks + c->nframes + c->nmodules + c->nmeta, 0);
	assert_non_null(c->samples);
	assert_null(capture__meta(c, ""));
	capture__free(c);
	free(buf);
	capture_builder__free(b);
	capture_builder__free(NULL);
	capture__free(NULL);
}

static void test_interning(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_frame f = {CAPTURE_NONE, 0, 0x1000, 0, 0, 0, 0};
	struct capture_event e = {0, 0, 1};
	struct capture_module m = {0, 0, CAPTURE_MODULE_FILE, 0, 0, 0};
	uint32_t f0, f1, s0, s1;

	assert_non_null(b);
	assert_int_equal(capture_builder__string(b, ""), 0);
	assert_int_equal(capture_builder__string(b, NULL), 0);
	assert_int_equal(capture_builder__string(b, "a"), 1);
	assert_int_equal(capture_builder__string(b, "ab"), 2);
	assert_int_equal(capture_builder__string(b, "a"), 1);

	f0 = capture_builder__add_frame(b, &f);
	f.first_line = 99; /* not part of a native frame's identity */
	assert_int_equal(capture_builder__add_frame(b, &f), f0);
	f.line = 1;
	f1 = capture_builder__add_frame(b, &f);
	assert_int_equal(f1, f0 + 1);
	f.line = 0;
	assert_int_equal(capture_builder__add_frame(b, &f), f0);

	s0 = capture_builder__add_stack(b, CAPTURE_NONE, f0);
	s1 = capture_builder__add_stack(b, s0, f1);
	assert_int_equal(capture_builder__add_stack(b, CAPTURE_NONE, f0), s0);
	assert_int_equal(capture_builder__add_stack(b, s0, f1), s1);
	assert_int_equal(capture_builder__add_stack(b, s0, f0), s1 + 1);
	assert_int_equal(capture_builder__add_stack(b, CAPTURE_NONE, f1), s1 + 2);

	assert_int_equal(capture_builder__add_event(b, &e), 0);
	assert_int_equal(capture_builder__add_event(b, &e), 0);
	e.period = 2;
	assert_int_equal(capture_builder__add_event(b, &e), 1);

	/* appended kinds are not interned */
	assert_int_equal(capture_builder__add_module(b, &m), 0);
	assert_int_equal(capture_builder__add_module(b, &m), 1);

	/* mutable access */
	assert_non_null(capture_builder__module(b, 1));
	capture_builder__module(b, 1)->flags = CAPTURE_MODULE_F_SYMBOLIZED;
	assert_int_equal(capture_builder__module(b, 1)->flags, CAPTURE_MODULE_F_SYMBOLIZED);
	assert_null(capture_builder__module(b, 2));
	assert_null(capture_builder__thread(b, 0));
	assert_null(capture_builder__process(b, CAPTURE_NONE));
	capture_builder__free(b);
}

static void test_mutable_rows(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_process p = {.pid = 1};
	struct capture_thread t = {.tid = 1};
	struct capture *c = NULL;
	char err[256];
	void *buf;
	size_t len;

	assert_non_null(b);
	assert_int_equal(capture_builder__add_process(b, &p), 0);
	assert_int_equal(capture_builder__add_thread(b, &t), 0);
	capture_builder__thread(b, 0)->comm = capture_builder__string(b, "late-comm");
	capture_builder__process(b, 0)->exe = capture_builder__string(b, "/bin/late");
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, NAME, &c, err, sizeof(err)), 0);
	assert_string_equal(capture__string(c, c->threads[0].comm), "late-comm");
	assert_string_equal(capture__string(c, c->processes[0].exe), "/bin/late");
	capture__free(c);
	free(buf);
	capture_builder__free(b);
}

/* Enough rows to grow every vector and hash index several times. */
static void test_large(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_event e = {0, 0, 1};
	struct capture_process p = {.pid = 1};
	struct capture_thread t = {.tid = 1};
	struct capture *c = NULL;
	enum { NFRAMES = 3000, NSAMPLES = 30000 };
	uint32_t *stack_of = calloc(NSAMPLES, sizeof(*stack_of));
	char name[64], err[256];
	uint32_t i, s;
	void *buf;
	size_t len;

	assert_non_null(b);
	assert_non_null(stack_of);
	capture_builder__add_event(b, &e);
	capture_builder__add_process(b, &p);
	capture_builder__add_thread(b, &t);
	for (i = 0; i < NSAMPLES; i++) {
		struct capture_sample smp = {.time_ns = i, .thread = 0, .cpu = i % 8, .weight = 1};
		uint32_t depth = 1 + i % 9, d;

		s = CAPTURE_NONE;
		for (d = 0; d < depth; d++) {
			struct capture_frame f = {.module = CAPTURE_NONE,
						  .address = (i * 7 + d * 13) % NFRAMES};

			snprintf(name, sizeof(name), "fn_%llu", (unsigned long long)f.address);
			f.function = capture_builder__string(b, name);
			s = capture_builder__add_stack(b, s, capture_builder__add_frame(b, &f));
		}
		smp.stack = stack_of[i] = s;
		assert_int_equal(capture_builder__add_sample(b, &smp), i);
		if (i % 1000 == 0) {
			snprintf(name, sizeof(name), "counter.%u", i % 7000);
			capture_builder__add_counter(b, name, i);
		}
	}
	assert_int_equal(capture_builder__sample_count(b), NSAMPLES);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, NAME, &c, err, sizeof(err)), 0);
	assert_int_equal(c->nsamples, NSAMPLES);
	assert_true(c->nframes <= NFRAMES);
	assert_int_equal(c->nstrings, c->nframes + 1 + 7); /* "", fn_*, 7 counter names */
	for (i = 0; i < NSAMPLES; i++) {
		uint32_t depth = 0;

		assert_int_equal(c->samples[i].stack, stack_of[i]);
		for (s = c->samples[i].stack; s != CAPTURE_NONE; s = c->stacks[s].parent) {
			const struct capture_frame *f = &c->frames[c->stacks[s].frame];

			snprintf(name, sizeof(name), "fn_%llu", (unsigned long long)f->address);
			assert_string_equal(capture__string(c, f->function), name);
			depth++;
		}
		assert_int_equal(depth, 1 + i % 9);
	}
	/* i = 1000, 8000, 15000, 22000, 29000 */
	assert_int_equal(capture__counter(c, "counter.1000"), 75000);
	walk(c);
	capture__free(c);
	free(buf);
	free(stack_of);
	capture_builder__free(b);
}

static void test_deterministic(void **state)
{
	struct capture_builder *b1 = capture_builder__new(), *b2 = capture_builder__new();
	struct ids id;
	void *x, *y, *z;
	size_t xl, yl, zl;

	assert_non_null(b1);
	assert_non_null(b2);
	build_known(b1, &id);
	build_known(b2, &id);
	assert_int_equal(capture_builder__serialize(b1, &x, &xl), 0);
	assert_int_equal(capture_builder__serialize(b1, &y, &yl), 0);
	assert_int_equal(capture_builder__serialize(b2, &z, &zl), 0);
	assert_int_equal(xl, yl);
	assert_int_equal(xl, zl);
	assert_memory_equal(x, y, xl);
	assert_memory_equal(x, z, xl);
	free(x);
	free(y);
	free(z);
	capture_builder__free(b1);
	capture_builder__free(b2);
}

static void test_serialize_rejects_bad_refs(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_event e = {0, 0, 1};
	struct capture_sample s = {.thread = CAPTURE_NONE, .stack = 9, .event = 0};
	void *buf = (void *)1;
	size_t len = 1;

	assert_non_null(b);
	capture_builder__add_event(b, &e);
	capture_builder__add_sample(b, &s);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), -EINVAL);
	assert_null(buf);
	assert_int_equal(len, 0);
	assert_non_null(strstr(capture_builder__error(b), "table 'samples' row 0: stack 9"));
	capture_builder__free(b);

	/* a stack whose parent is not an earlier stack */
	b = capture_builder__new();
	assert_non_null(b);
	struct capture_frame f = {.module = CAPTURE_NONE};
	uint32_t fr = capture_builder__add_frame(b, &f);
	capture_builder__add_stack(b, 5, fr);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), -EINVAL);
	assert_non_null(strstr(capture_builder__error(b), "table 'stacks' row 0: parent 5"));
	assert_int_equal(capture_builder__write(b, "/nonexistent-dir/x.msc"), -EINVAL);
	capture_builder__free(b);
}

/* Off-CPU intervals (format 1.1): round trip and the row rules. */
static struct capture_builder *interval_builder(const char *unit, struct capture_interval *v)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_process p = {.pid = 7};
	struct capture_event e;
	uint32_t proc;

	assert_non_null(b);
	e = (struct capture_event){capture_builder__string(b, "off-cpu"),
				   capture_builder__string(b, unit), 1};
	proc = capture_builder__add_process(b, &p);
	struct capture_thread t = {.tid = 7, .process = proc};
	v->thread = capture_builder__add_thread(b, &t);
	v->event = capture_builder__add_event(b, &e);
	capture_builder__add_interval(b, v);
	return b;
}

static void test_intervals(void **state)
{
	struct capture_interval v = {.start_ns = 100, .end_ns = 350, .weight = 250,
				     .stack = CAPTURE_NONE, .flags = CAPTURE_INTERVAL_F_END_UNKNOWN,
				     .state = CAPTURE_OFFCPU_STATE_DISK,
				     .cause = CAPTURE_OFFCPU_CAUSE_HARDIRQ,
				     .waker_thread = CAPTURE_NONE, .waker_stack = CAPTURE_NONE,
				     .cpu = 1};
	struct capture_builder *b = interval_builder("nanoseconds", &v);
	struct capture *c = NULL;
	char err[256];
	void *buf;
	size_t len;

	(void)state;
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, NAME, &c, err, sizeof(err)), 0);
	assert_int_equal(c->nintervals, 1);
	assert_memory_equal(&c->intervals[0], &v, sizeof(v));
	capture__free(c);
	free(buf);
	capture_builder__free(b);

	/* weight must equal the span */
	v.weight = 251;
	b = interval_builder("nanoseconds", &v);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), -EINVAL);
	assert_non_null(strstr(capture_builder__error(b), "table 'intervals' row 0: start 100"));
	capture_builder__free(b);
	/* a waker thread needs a task cause */
	v.weight = 250;
	v.waker_thread = 0;
	b = interval_builder("nanoseconds", &v);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), -EINVAL);
	assert_non_null(strstr(capture_builder__error(b), "waker thread 0 without a task cause"));
	capture_builder__free(b);
	/* never samples weighted as nanoseconds */
	v.waker_thread = CAPTURE_NONE;
	b = interval_builder("samples", &v);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), -EINVAL);
	assert_non_null(strstr(capture_builder__error(b), "not nanoseconds"));
	capture_builder__free(b);
}

/* ---- publication ------------------------------------------------------------ */

static void test_write_atomic(void **state)
{
	char dir[] = "/tmp/test_capture.XXXXXX", path[512], err[512];
	struct capture_builder *b = capture_builder__new();
	struct capture *c = NULL;
	struct dirent *de;
	struct ids id;
	int entries = 0;
	DIR *d;

	assert_non_null(b);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.msc", dir);
	build_known(b, &id);
	assert_int_equal(capture_builder__write(b, path), 0);
	/* replacing an existing capture is the same atomic rename */
	capture_builder__set_meta(b, "command", "rewritten");
	assert_int_equal(capture_builder__write(b, path), 0);

	assert_int_equal(capture__open(path, &c, err, sizeof(err)), 0);
	assert_string_equal(capture__meta(c, "command"), "rewritten");
	assert_int_equal(c->nsamples, 4);
	capture__free(c);

	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		assert_string_equal(de->d_name, "out.msc"); /* no .tmp left */
		entries++;
	}
	closedir(d);
	assert_int_equal(entries, 1);

	/* I/O errors: -errno with the path in the message */
	snprintf(path, sizeof(path), "%s/missing/out.msc", dir);
	assert_int_equal(capture_builder__write(b, path), -ENOENT);
	assert_non_null(strstr(capture_builder__error(b), "missing/out.msc"));
	c = (void *)1;
	assert_int_equal(capture__open(path, &c, err, sizeof(err)), -ENOENT);
	assert_null(c);
	assert_non_null(strstr(err, "missing/out.msc: open"));
	assert_int_equal(capture__open(dir, &c, err, sizeof(err)), -EINVAL);
	assert_null(c);

	snprintf(path, sizeof(path), "%s/out.msc", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	capture_builder__free(b);
}

/* ---- taking a file apart and putting it back ---------------------------- */

#define MAX_CHUNKS 32

struct tchunk {
	struct capture_chunk_header h;
	uint8_t *raw; /* decompressed payload */
	size_t raw_len;
	bool keep_raw_size; /* emit h.raw_size as set, not raw_len */
	bool keep_crc;	    /* emit h.crc as set */
	bool keep_payload;  /* seal: emit raw as set, not a recomputed seal */
	bool two_frames;    /* zstd: append a second (empty) frame */
};

struct tfile {
	struct capture_file_header fh;
	bool keep_fh_crc;
	struct tchunk c[MAX_CHUNKS];
	int n;
	const uint8_t *tail; /* appended after the seal */
	size_t tail_len;
};

static void tfile__parse(struct tfile *f, const uint8_t *buf, size_t len)
{
	size_t pos = sizeof(f->fh);

	memset(f, 0, sizeof(*f));
	memcpy(&f->fh, buf, sizeof(f->fh));
	for (;;) {
		struct tchunk *c = &f->c[f->n++];

		assert_true(f->n <= MAX_CHUNKS);
		assert_true(pos + sizeof(c->h) <= len);
		memcpy(&c->h, buf + pos, sizeof(c->h));
		pos += sizeof(c->h);
		c->raw_len = c->h.raw_size;
		c->raw = malloc(c->raw_len + 64);
		assert_non_null(c->raw);
		if (c->h.compression == CAPTURE_COMPRESSION_ZSTD)
			assert_int_equal(
			    ZSTD_decompress(c->raw, c->raw_len, buf + pos, c->h.stored_size),
			    c->raw_len);
		else
			memcpy(c->raw, buf + pos, c->raw_len);
		pos += c->h.stored_size;
		if (c->h.tag == CAPTURE_TAG_SEAL)
			break;
	}
	assert_int_equal(pos, len);
}

static void tfile__release(struct tfile *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		free(f->c[i].raw);
}

static struct tchunk *tfile__chunk(struct tfile *f, uint32_t tag)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (f->c[i].h.tag == tag)
			return &f->c[i];
	fail_msg("no chunk 0x%08x", tag);
	return NULL;
}

static int tfile__index(struct tfile *f, uint32_t tag)
{
	return (int)(tfile__chunk(f, tag) - f->c);
}

static void *tfile__rows(struct tfile *f, enum capture_table t)
{
	return tfile__chunk(f, capture_table_info[t].tag)->raw;
}

static void tfile__insert(struct tfile *f, int at, const struct tchunk *src)
{
	assert_true(f->n < MAX_CHUNKS);
	memmove(&f->c[at + 1], &f->c[at], (size_t)(f->n - at) * sizeof(f->c[0]));
	f->c[at] = *src;
	f->c[at].raw = malloc(src->raw_len + 64);
	assert_non_null(f->c[at].raw);
	memcpy(f->c[at].raw, src->raw, src->raw_len);
	f->n++;
}

static void tfile__remove(struct tfile *f, int at)
{
	free(f->c[at].raw);
	memmove(&f->c[at], &f->c[at + 1], (size_t)(f->n - at - 1) * sizeof(f->c[0]));
	f->n--;
}

/* Put f back together: fresh zstd frames, crcs, seal and header crc (unless kept). */
static void tfile__emit(const struct tfile *f, uint8_t **out, size_t *outlen)
{
	size_t cap = sizeof(f->fh) + f->tail_len, pos, seg_start;
	uint32_t headers_crc = 0, nchunks = 0;
	struct capture_file_header fh = f->fh;
	uint8_t *buf;
	int i;

	for (i = 0; i < f->n; i++)
		cap += sizeof(f->c[i].h) + 2 * ZSTD_compressBound(f->c[i].raw_len) + 64;
	buf = malloc(cap);
	assert_non_null(buf);
	if (!f->keep_fh_crc)
		fh.header_crc = (uint32_t)crc32(0, (const Bytef *)&fh,
						offsetof(struct capture_file_header, header_crc));
	memcpy(buf, &fh, sizeof(fh));
	pos = seg_start = sizeof(fh);
	for (i = 0; i < f->n; i++) {
		const struct tchunk *c = &f->c[i];
		struct capture_chunk_header h = c->h;
		struct capture_seal_payload seal;
		const void *raw = c->raw;
		size_t raw_len = c->raw_len, stored;
		uint8_t *p = buf + pos + sizeof(h);

		if (h.tag == CAPTURE_TAG_SEAL && !c->keep_payload) {
			seal.chunk_count = nchunks;
			seal.headers_crc = headers_crc;
			seal.segment_size = pos + sizeof(h) + sizeof(seal) - seg_start;
			raw = &seal;
			raw_len = sizeof(seal);
		}
		if (h.compression == CAPTURE_COMPRESSION_ZSTD) {
			stored = ZSTD_compress(p, cap - pos - sizeof(h), raw, raw_len, 3);
			assert_false(ZSTD_isError(stored));
			if (c->two_frames)
				stored += ZSTD_compress(p + stored, cap - pos - sizeof(h) - stored,
							"", 0, 3);
		} else {
			memcpy(p, raw, raw_len);
			stored = raw_len;
		}
		h.stored_size = stored;
		if (!c->keep_raw_size)
			h.raw_size = raw_len;
		if (!c->keep_crc)
			h.crc = (uint32_t)crc32(0, p, (uInt)stored);
		memcpy(buf + pos, &h, sizeof(h));
		if (h.tag != CAPTURE_TAG_SEAL) {
			headers_crc = (uint32_t)crc32(headers_crc, (const Bytef *)&h, sizeof(h));
			nchunks++;
		}
		pos += sizeof(h) + stored;
	}
	if (f->tail_len)
		memcpy(buf + pos, f->tail, f->tail_len);
	*out = buf;
	*outlen = pos + f->tail_len;
}

struct open_result {
	int rc;
	char err[512];
};

static struct open_result open_bytes(const uint8_t *buf, size_t len)
{
	struct open_result r = {0};
	struct capture *c = (void *)1;

	r.rc = capture__open_mem(buf, len, NAME, &c, r.err, sizeof(r.err));
	if (r.rc == 0) {
		assert_non_null(c);
		walk(c);
		capture__free(c);
	} else {
		assert_null(c);
	}
	return r;
}

/* The edited file must be rejected with rc and a message holding want (and want2). */
static void expect_reject(struct tfile *f, const char *what, int rc, const char *want,
			  const char *want2)
{
	struct open_result r;
	uint8_t *buf;
	size_t len;

	tfile__emit(f, &buf, &len);
	r = open_bytes(buf, len);
	free(buf);
	if (r.rc != rc || !strstr(r.err, want) || (want2 && !strstr(r.err, want2)))
		fail_msg("%s: rc %d (want %d), message \"%s\" (want \"%s\"%s%s)", what, r.rc, rc,
			 r.err, want, want2 ? " and " : "", want2 ? want2 : "");
	assert_int_equal(strncmp(r.err, NAME ": ", strlen(NAME) + 2), 0);
}

static void expect_accept(struct tfile *f)
{
	struct open_result r;
	uint8_t *buf;
	size_t len;

	tfile__emit(f, &buf, &len);
	r = open_bytes(buf, len);
	free(buf);
	if (r.rc)
		fail_msg("rejected: %s", r.err);
}

static void known_tfile(struct tfile *f)
{
	uint8_t *buf;
	size_t len;

	serialize_known(&buf, &len);
	tfile__parse(f, buf, len);
	free(buf);
}

/* A file taken apart and put back unchanged is byte-identical and valid. */
static void test_tfile_identity(void **state)
{
	struct tfile f;
	uint8_t *buf, *again;
	size_t len, again_len;

	serialize_known(&buf, &len);
	tfile__parse(&f, buf, len);
	tfile__emit(&f, &again, &again_len);
	assert_int_equal(len, again_len);
	assert_memory_equal(buf, again, len);
	/* one SEGM, eleven tables, one SEAL */
	assert_int_equal(f.n, CAPTURE_TABLE_COUNT + 2);
	assert_int_equal(f.c[0].h.tag, CAPTURE_TAG_SEGMENT);
	free(buf);
	free(again);
	tfile__release(&f);
}

/* ---- the damaged corpus -------------------------------------------------- */

struct crafted {
	const char *what;
	void (*edit)(struct tfile *f);
	int rc;
	const char *want, *want2;
};

#define ROWS(f, T, type) ((type *)tfile__rows(f, CAPTURE_TABLE_##T))

static void edit_stack_parent_self(struct tfile *f)
{
	ROWS(f, STACKS, struct capture_stack)[2].parent = 2;
}

static void edit_stack_parent_later(struct tfile *f)
{
	ROWS(f, STACKS, struct capture_stack)[1].parent = 40;
}

static void edit_stack_frame(struct tfile *f)
{
	ROWS(f, STACKS, struct capture_stack)[3].frame = CAPTURE_NONE;
}

static void edit_sample_stack(struct tfile *f)
{
	ROWS(f, SAMPLES, struct capture_sample)[1].stack = 4;
}

static void edit_sample_thread(struct tfile *f)
{
	ROWS(f, SAMPLES, struct capture_sample)[0].thread = 2;
}

static void edit_sample_event(struct tfile *f)
{
	ROWS(f, SAMPLES, struct capture_sample)[3].event = CAPTURE_NONE;
}

static void edit_thread_process(struct tfile *f)
{
	ROWS(f, THREADS, struct capture_thread)[1].process = 1;
}

static void edit_thread_comm(struct tfile *f)
{
	ROWS(f, THREADS, struct capture_thread)[0].comm = 0x7fffffff;
}

static void edit_frame_function(struct tfile *f)
{
	ROWS(f, FRAMES, struct capture_frame)[2].function = 25; /* == nstrings */
}

static void edit_frame_module(struct tfile *f)
{
	ROWS(f, FRAMES, struct capture_frame)[0].module = 4;
}

static void edit_mapping_range(struct tfile *f)
{
	struct capture_mapping *m = ROWS(f, MAPPINGS, struct capture_mapping);

	m[1].end = m[1].start;
}

static void edit_mapping_module(struct tfile *f)
{
	ROWS(f, MAPPINGS, struct capture_mapping)[0].module = CAPTURE_NONE;
}

static void edit_mapping_process(struct tfile *f)
{
	ROWS(f, MAPPINGS, struct capture_mapping)[0].process = 1;
}

static void edit_module_kind(struct tfile *f)
{
	ROWS(f, MODULES, struct capture_module)[3].kind = 0;
}

static void edit_module_kind_high(struct tfile *f)
{
	ROWS(f, MODULES, struct capture_module)[1].kind = CAPTURE_MODULE_KIND_MAX + 1;
}

static void edit_module_build_id(struct tfile *f)
{
	ROWS(f, MODULES, struct capture_module)[0].build_id = CAPTURE_NONE;
}

static void edit_process_exe(struct tfile *f)
{
	ROWS(f, PROCESSES, struct capture_process)[0].exe = 1000;
}

static void edit_event_unit(struct tfile *f) { ROWS(f, EVENTS, struct capture_event)[1].unit = 26; }

static void edit_counter_dup(struct tfile *f)
{
	struct capture_counter *c = ROWS(f, COUNTERS, struct capture_counter);

	c[1].name = c[0].name;
}

static void edit_counter_name(struct tfile *f)
{
	ROWS(f, COUNTERS, struct capture_counter)[0].name = CAPTURE_NONE;
}

static void edit_meta_dup(struct tfile *f)
{
	struct capture_meta *m = ROWS(f, META, struct capture_meta);

	m[1].key = m[0].key;
}

static void edit_meta_value(struct tfile *f) { ROWS(f, META, struct capture_meta)[1].value = 99; }

static uint32_t *str_offsets(struct tfile *f, uint32_t *n, char **data)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STRINGS].tag);

	*n = (uint32_t)c->h.row_count;
	*data = (char *)c->raw + (*n + 1) * sizeof(uint32_t);
	return (uint32_t *)c->raw;
}

static void edit_strings_order(struct tfile *f)
{
	uint32_t n, *off = str_offsets(f, &n, &(char *){0}), t = off[3];

	off[3] = off[2];
	off[2] = t;
}

static void edit_strings_past_end(struct tfile *f)
{
	uint32_t n, *off = str_offsets(f, &n, &(char *){0});

	off[1] = 1000000;
}

static void edit_strings_embedded_nul(struct tfile *f)
{
	char *data;
	uint32_t n, *off = str_offsets(f, &n, &data);

	data[off[1] + 2] = '\0';
}

static void edit_strings_unterminated(struct tfile *f)
{
	char *data;
	uint32_t n, *off = str_offsets(f, &n, &data);

	data[off[3] - 1] = 'x';
}

static void edit_strings_last_offset(struct tfile *f)
{
	uint32_t n, *off = str_offsets(f, &n, &(char *){0});

	off[n] -= 1;
}

/* string 0 becomes "x": every later string moves one byte */
static void edit_strings_first_not_empty(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STRINGS].tag);
	char *data;
	uint32_t n, *off = str_offsets(f, &n, &data), i;
	size_t data_len = off[n];

	memmove(data + 1, data, data_len);
	data[0] = 'x';
	for (i = 1; i <= n; i++)
		off[i]++;
	c->raw_len++;
}

static void edit_strings_none(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STRINGS].tag);

	c->h.row_count = 0;
	c->raw_len = 4;
	memcpy(c->raw, &(uint32_t){0}, 4);
}

static void edit_strings_short_raw(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STRINGS].tag);

	c->raw_len = c->h.row_count * 4; /* one offset short, no bytes */
}

static void edit_row_count(struct tfile *f)
{
	tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STACKS].tag)->h.row_count++;
}

static void edit_row_count_and_raw(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_SAMPLES].tag);

	/* a consistent header whose zstd frame is one row short */
	c->h.row_count++;
	c->h.raw_size = c->raw_len + sizeof(struct capture_sample);
	c->keep_raw_size = true;
}

static void edit_row_size(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STACKS].tag);

	c->h.row_size = 16;
	c->h.row_count /= 2;
}

static void edit_huge_count(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_SAMPLES].tag);

	c->h.row_count = CAPTURE_NONE;
	c->h.raw_size = (uint64_t)CAPTURE_NONE * sizeof(struct capture_sample);
	c->keep_raw_size = true;
}

static void edit_count_2_32(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STACKS].tag);

	c->h.row_count = 1ull << 32;
	c->h.raw_size = c->h.row_count * sizeof(struct capture_stack);
	c->keep_raw_size = true;
}

static void edit_bad_crc(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_STACKS].tag);

	c->h.crc = 0x12345678; /* the seal covers the header: still consistent */
	c->keep_crc = true;
}

static void edit_unknown_compression(struct tfile *f)
{
	tfile__chunk(f, capture_table_info[CAPTURE_TABLE_EVENTS].tag)->h.compression = 7;
}

static void edit_uncompressed_size(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, capture_table_info[CAPTURE_TABLE_EVENTS].tag);

	c->h.compression = CAPTURE_COMPRESSION_NONE;
	c->h.raw_size = c->raw_len + 16;
	c->h.row_count++;
	c->keep_raw_size = true;
}

static void edit_two_frames(struct tfile *f)
{
	tfile__chunk(f, capture_table_info[CAPTURE_TABLE_MODULES].tag)->two_frames = true;
}

static void edit_chunk_flags(struct tfile *f)
{
	tfile__chunk(f, capture_table_info[CAPTURE_TABLE_THREADS].tag)->h.flags = 0x8000;
}

static void edit_chunk_reserved(struct tfile *f)
{
	tfile__chunk(f, capture_table_info[CAPTURE_TABLE_THREADS].tag)->h.reserved = 1;
}

static void edit_duplicate_table(struct tfile *f)
{
	int at = tfile__index(f, capture_table_info[CAPTURE_TABLE_FRAMES].tag);

	tfile__insert(f, at + 1, &f->c[at]);
}

static void edit_missing_table(struct tfile *f)
{
	tfile__remove(f, tfile__index(f, capture_table_info[CAPTURE_TABLE_META].tag));
}

static void edit_unknown_required(struct tfile *f)
{
	struct tchunk c = {.h = {.tag = CAPTURE_TAG('X', 'T', 'R', 'A'), .row_size = 1},
			   .raw = (uint8_t *)"future"};

	c.h.row_count = c.raw_len = 6;
	tfile__insert(f, 3, &c);
}

static void edit_missing_segment_header(struct tfile *f) { tfile__remove(f, 0); }

static void edit_segment_header_twice(struct tfile *f) { tfile__insert(f, 4, &f->c[0]); }

static void edit_segment_reserved(struct tfile *f) { f->c[0].raw[8] = 1; }

static void edit_seal_count(struct tfile *f)
{
	struct tchunk *c = tfile__chunk(f, CAPTURE_TAG_SEAL);
	struct capture_seal_payload seal;

	memcpy(&seal, c->raw, sizeof(seal));
	seal.chunk_count--;
	memcpy(c->raw, &seal, sizeof(seal));
	c->keep_payload = true;
}

static void edit_seal_headers_crc(struct tfile *f)
{
	/* a header change no table check sees; the old seal no longer matches */
	tfile__chunk(f, capture_table_info[CAPTURE_TABLE_SAMPLES].tag)->h.flags =
	    CAPTURE_CHUNK_F_OPTIONAL;
	tfile__chunk(f, CAPTURE_TAG_SEAL)->keep_payload = true;
}

static void edit_seal_compressed(struct tfile *f)
{
	tfile__chunk(f, CAPTURE_TAG_SEAL)->h.compression = CAPTURE_COMPRESSION_ZSTD;
}

static void edit_no_seal(struct tfile *f) { tfile__remove(f, f->n - 1); }

static void edit_magic(struct tfile *f) { f->fh.magic[1] = 'X'; }

static void edit_newer_major(struct tfile *f) { f->fh.version_major = CAPTURE_FORMAT_VERSION + 1; }

static void edit_major_zero(struct tfile *f) { f->fh.version_major = 0; }

static void edit_file_flags(struct tfile *f) { f->fh.flags = 1; }

static void edit_file_header_crc(struct tfile *f)
{
	f->fh.version_minor = 9;
	f->keep_fh_crc = true;
}

static uint8_t second_segment[4096];

static void edit_second_segment(struct tfile *f)
{
	uint8_t *buf;
	size_t len;

	/* the same segment again, as continuous mode will write it */
	tfile__emit(f, &buf, &len);
	assert_true(len - sizeof(f->fh) <= sizeof(second_segment));
	memcpy(second_segment, buf + sizeof(f->fh), len - sizeof(f->fh));
	f->tail = second_segment;
	f->tail_len = len - sizeof(f->fh);
	free(buf);
}

static void edit_trailing_garbage(struct tfile *f)
{
	f->tail = (const uint8_t *)"garbage";
	f->tail_len = 7;
}

static const struct crafted crafted[] = {
    {"stack parent is itself", edit_stack_parent_self, -EBADMSG,
     NAME ": table 'stacks' row 2: parent 2 out of range (2 rows before it)", NULL},
    {"stack parent later", edit_stack_parent_later, -EBADMSG,
     "table 'stacks' row 1: parent 40 out of range (1 rows before it)", NULL},
    {"stack frame none", edit_stack_frame, -EBADMSG, "table 'stacks' row 3: frame", NULL},
    {"sample stack", edit_sample_stack, -EBADMSG,
     "table 'samples' row 1: stack 4 out of range ('stacks' has 4 rows)", NULL},
    {"sample thread", edit_sample_thread, -EBADMSG, "table 'samples' row 0: thread 2", NULL},
    {"sample event none", edit_sample_event, -EBADMSG, "table 'samples' row 3: event", NULL},
    {"thread process", edit_thread_process, -EBADMSG,
     "table 'threads' row 1: process 1 out of range", NULL},
    {"thread comm", edit_thread_comm, -EBADMSG, "table 'threads' row 0: comm string", NULL},
    {"frame function string", edit_frame_function, -EBADMSG,
     "table 'frames' row 2: function string 25 out of range (25 strings)", NULL},
    {"frame module", edit_frame_module, -EBADMSG, "table 'frames' row 0: module 4", NULL},
    {"mapping start == end", edit_mapping_range, -EBADMSG, "table 'mappings' row 1: start", NULL},
    {"mapping module none", edit_mapping_module, -EBADMSG, "table 'mappings' row 0: module", NULL},
    {"mapping process", edit_mapping_process, -EBADMSG, "table 'mappings' row 0: process", NULL},
    {"module kind 0", edit_module_kind, -EBADMSG, "table 'modules' row 3: unknown kind 0", NULL},
    {"module kind 5", edit_module_kind_high, -EBADMSG, "table 'modules' row 1: unknown kind", NULL},
    {"module build id", edit_module_build_id, -EBADMSG, "table 'modules' row 0: build_id", NULL},
    {"process exe", edit_process_exe, -EBADMSG, "table 'processes' row 0: exe", NULL},
    {"event unit", edit_event_unit, -EBADMSG, "table 'events' row 1: unit", NULL},
    {"duplicate counter", edit_counter_dup, -EBADMSG, "table 'counters' row 1: name",
     "repeats row 0"},
    {"counter name", edit_counter_name, -EBADMSG, "table 'counters' row 0: name string", NULL},
    {"duplicate meta key", edit_meta_dup, -EBADMSG, "table 'meta' row 1: key 'command'",
     "repeats row 0"},
    {"meta value", edit_meta_value, -EBADMSG, "table 'meta' row 1: value", NULL},
    {"string offsets out of order", edit_strings_order, -EBADMSG, "table 'strings' row ", NULL},
    {"string offset past end", edit_strings_past_end, -EBADMSG, "table 'strings' row 0", NULL},
    {"embedded NUL", edit_strings_embedded_nul, -EBADMSG, "table 'strings' row 1", "embedded NUL"},
    {"unterminated string", edit_strings_unterminated, -EBADMSG, "table 'strings' row 2",
     "not NUL-terminated"},
    {"last string offset", edit_strings_last_offset, -EBADMSG, "table 'strings'", "last offset"},
    {"string 0 not empty", edit_strings_first_not_empty, -EBADMSG,
     "table 'strings' row 0: string 0 must be \"\"", NULL},
    {"no strings", edit_strings_none, -EBADMSG, "table 'strings'", "0 rows"},
    {"strings raw too short", edit_strings_short_raw, -EBADMSG, "table 'strings'", "raw size"},
    {"row count", edit_row_count, -EBADMSG, "table 'stacks'", "is not 5 rows of 8 bytes"},
    {"zstd content short", edit_row_count_and_raw, -EBADMSG, "table 'samples'",
     "zstd frame holds 128 bytes, raw size is 160"},
    {"row size", edit_row_size, -EBADMSG, "table 'stacks'", "row size 16, expected 8"},
    {"2^32-1 rows in a small file", edit_huge_count, -EBADMSG, "table 'samples'",
     "cannot come from"},
    {"2^32 rows", edit_count_2_32, -EBADMSG, "table 'stacks'", "4294967296 rows"},
    {"bad crc", edit_bad_crc, -EBADMSG, "stacks", "crc 0x12345678"},
    {"unknown compression", edit_unknown_compression, -EBADMSG, "table 'events'",
     "unknown compression 7"},
    {"uncompressed size", edit_uncompressed_size, -EBADMSG, "table 'events'",
     "uncompressed but stores"},
    {"two zstd frames", edit_two_frames, -EBADMSG, "table 'modules'", "not one zstd frame"},
    {"chunk flags", edit_chunk_flags, -EBADMSG, "unknown flags 0x8000", NULL},
    {"chunk reserved", edit_chunk_reserved, -EBADMSG, "reserved 0x1", NULL},
    {"duplicate table", edit_duplicate_table, -EBADMSG, "table 'frames' appears twice", NULL},
    {"missing table", edit_missing_table, -EBADMSG, "missing table 'meta'", NULL},
    {"unknown required chunk", edit_unknown_required, -EBADMSG, "unknown required chunk 'XTRA'",
     NULL},
    {"no segment header", edit_missing_segment_header, -EBADMSG, "where a segment header belongs",
     NULL},
    {"segment header twice", edit_segment_header_twice, -EBADMSG, "segment header inside a segment",
     NULL},
    {
	"segment reserved",
	edit_segment_reserved,
	-EBADMSG,
	"segment header",
	"reserved",
    },
    {"seal chunk count", edit_seal_count, -EBADMSG, "seal at offset", "16 chunks"},
    {"seal headers crc", edit_seal_headers_crc, -EBADMSG, "seal at offset", "headers crc"},
    {"seal compressed", edit_seal_compressed, -EBADMSG, "seal chunk 17", "bad header"},
    {"no seal", edit_no_seal, -EBADMSG, "without a seal", NULL},
    {"bad magic", edit_magic, -EBADMSG, "not a microscope capture (bad magic)", NULL},
    {"newer major version", edit_newer_major, -ENOTSUP, "format version 2.3 is newer", NULL},
    {"major version 0", edit_major_zero, -EBADMSG, "bad format version 0", NULL},
    {"file flags", edit_file_flags, -EBADMSG, "unknown file header flags 0x1", NULL},
    {"file header crc", edit_file_header_crc, -EBADMSG, "file header crc", NULL},
    {"second segment", edit_second_segment, -ENOTSUP, "second segment at offset",
     "not supported yet"},
    {"trailing garbage", edit_trailing_garbage, -EBADMSG, "7 bytes of trailing garbage", NULL},
};

static void test_crafted(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
		struct tfile f;

		known_tfile(&f);
		crafted[i].edit(&f);
		expect_reject(&f, crafted[i].what, crafted[i].rc, crafted[i].want,
			      crafted[i].want2);
		tfile__release(&f);
	}
}

/* What the format lets a reader accept: skipped optional chunks, any chunk order, raw chunks. */
static void test_compatible_variants(void **state)
{
	struct tchunk opt = {.h = {.tag = CAPTURE_TAG('N', 'E', 'X', 'T'),
				   .flags = CAPTURE_CHUNK_F_OPTIONAL,
				   .compression = CAPTURE_COMPRESSION_ZSTD,
				   .row_size = 1},
			     .raw = (uint8_t *)"a later minor version's table"};
	struct tchunk weird = opt;
	struct tfile f;
	int a, b;

	/* an unknown optional chunk is skipped, even with a compression we lack */
	known_tfile(&f);
	opt.raw_len = opt.h.row_count = strlen((char *)opt.raw);
	tfile__insert(&f, 5, &opt);
	weird.raw_len = weird.h.row_count = 3;
	weird.h.tag = CAPTURE_TAG('W', 'I', 'E', 'R');
	weird.h.compression = 9;
	tfile__insert(&f, 1, &weird);
	f.fh.version_minor = CAPTURE_FORMAT_VERSION_MINOR + 3;
	expect_accept(&f);
	tfile__release(&f);

	/* tables in another order, some stored uncompressed */
	known_tfile(&f);
	a = tfile__index(&f, capture_table_info[CAPTURE_TABLE_STACKS].tag);
	b = tfile__index(&f, capture_table_info[CAPTURE_TABLE_STRINGS].tag);
	opt = f.c[a];
	f.c[a] = f.c[b];
	f.c[b] = opt;
	tfile__chunk(&f, capture_table_info[CAPTURE_TABLE_SAMPLES].tag)->h.compression =
	    CAPTURE_COMPRESSION_NONE;
	tfile__chunk(&f, capture_table_info[CAPTURE_TABLE_STRINGS].tag)->h.compression =
	    CAPTURE_COMPRESSION_NONE;
	/* a known table marked optional is still read */
	tfile__chunk(&f, capture_table_info[CAPTURE_TABLE_META].tag)->h.flags =
	    CAPTURE_CHUNK_F_OPTIONAL;
	expect_accept(&f);
	tfile__release(&f);
}

/* Every prefix of a valid file is rejected; chunk boundaries say "truncated". */
static void test_truncation(void **state)
{
	struct open_result r;
	struct tfile f;
	uint8_t *buf;
	size_t len, cut, pos;
	int i;

	serialize_known(&buf, &len);
	tfile__parse(&f, buf, len);
	for (cut = 0; cut < len; cut++) {
		r = open_bytes(buf, cut);
		if (r.rc != -EBADMSG || !r.err[0])
			fail_msg("cut at %zu: rc %d, \"%s\"", cut, r.rc, r.err);
	}
	/* at and inside every chunk */
	for (i = 0, pos = sizeof(f.fh); i < f.n; i++) {
		size_t at[] = {pos,
			       pos + 1,
			       pos + 20,
			       pos + sizeof(f.c[i].h),
			       pos + sizeof(f.c[i].h) + f.c[i].h.stored_size / 2,
			       pos + sizeof(f.c[i].h) + f.c[i].h.stored_size - 1};
		size_t j;

		for (j = 0; j < sizeof(at) / sizeof(at[0]); j++) {
			if (at[j] >= len)
				continue;
			r = open_bytes(buf, at[j]);
			assert_int_equal(r.rc, -EBADMSG);
			assert_non_null(strstr(r.err, "truncated"));
		}
		pos += sizeof(f.c[i].h) + f.c[i].h.stored_size;
	}
	r = open_bytes(buf, 3);
	assert_non_null(strstr(r.err, "bad magic"));
	r = open_bytes(buf, 12);
	assert_non_null(strstr(r.err, "truncated file header"));
	r = open_bytes(NULL, 0);
	assert_int_equal(r.rc, -EBADMSG);
	tfile__release(&f);
	free(buf);
}

/* Any one changed byte is caught: crcs cover payloads, the seal covers headers. */
static void test_byte_flips(void **state)
{
	static const uint8_t masks[] = {0x01, 0x80, 0xff, 0x10};
	struct open_result r;
	uint8_t *buf;
	size_t len, pos, m, tried = 0;

	serialize_known(&buf, &len);
	for (m = 0; m < sizeof(masks); m++) {
		/* every byte for the first masks, every 7th for the rest */
		for (pos = 0; pos < len; pos += m < 2 ? 1 : 7) {
			buf[pos] ^= masks[m];
			r = open_bytes(buf, len);
			buf[pos] ^= masks[m];
			/* -EFBIG: a flipped size now exceeds a limit (capture/limits.h) */
			if ((r.rc != -EBADMSG && r.rc != -ENOTSUP && r.rc != -EFBIG) || !r.err[0])
				fail_msg("byte %zu ^ 0x%02x: rc %d \"%s\"", pos, masks[m], r.rc,
					 r.err);
			tried++;
		}
	}
	assert_true(tried > len);
	r = open_bytes(buf, len);
	assert_int_equal(r.rc, 0);
	free(buf);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/*
 * Random values written into decompressed rows, re-sealed: whatever the
 * reader accepts must be safe to walk (ASan checks), whatever it rejects
 * must say why.
 */
static void test_random_rows(void **state)
{
	static const uint32_t values[] = {
	    0, 1, 2, 3, 4, 5, 23, 24, 25, CAPTURE_NONE, CAPTURE_NONE - 1, 0x80000000u};
	int accepted = 0, rejected = 0, iter, t;

	for (t = 0; t < CAPTURE_TABLE_COUNT; t++) {
		for (iter = 0; iter < 150; iter++) {
			struct open_result r;
			struct tchunk *c;
			struct tfile f;
			uint8_t *buf;
			size_t len;
			int k, edits = 1 + (int)(rng() % 3);

			known_tfile(&f);
			c = tfile__chunk(&f, capture_table_info[t].tag);
			for (k = 0; k < edits && c->raw_len >= 4; k++) {
				size_t at = (rng() % (c->raw_len / 4)) * 4;
				uint32_t v = rng() % 4 ? values[rng() % 12] : rng();

				memcpy(c->raw + at, &v, 4);
			}
			tfile__emit(&f, &buf, &len);
			r = open_bytes(buf, len);
			if (r.rc == 0) {
				accepted++;
			} else {
				rejected++;
				assert_int_equal(r.rc, -EBADMSG);
				assert_non_null(strstr(r.err, capture_table_info[t].name));
			}
			free(buf);
			tfile__release(&f);
		}
	}
	print_message("  random rows: %d accepted, %d rejected\n", accepted, rejected);
	assert_true(rejected > 0);
}

/* Messages are optional, bounded and always terminated. */
/* Limits (capture/limits.h): a zstd bomb and the memory limit give -EFBIG
 * with the limit named, before the tables are allocated. */
static void test_limits(void **state)
{
	struct tfile f;
	struct tchunk *c;
	struct open_result r;
	uint8_t *buf;
	size_t len, rows = (4u << 20) / sizeof(struct capture_sample);

	(void)state;
	/* 4 MiB of zero rows: a valid frame of a few hundred bytes, ratio > 1024 */
	known_tfile(&f);
	c = tfile__chunk(&f, capture_table_info[CAPTURE_TABLE_SAMPLES].tag);
	free(c->raw);
	c->raw = calloc(rows, sizeof(struct capture_sample));
	assert_non_null(c->raw);
	c->raw_len = rows * sizeof(struct capture_sample);
	c->h.row_count = rows;
	expect_reject(&f, "zstd bomb", -EFBIG, "exceeds the inflation limit (1024 x stored",
		      "table 'samples'");
	tfile__release(&f);

	/* the file and its inflated tables must fit --max-memory */
	serialize_known(&buf, &len);
	capture_limits__set_max_memory(len + 64);
	r = open_bytes(buf, len);
	capture_limits__set_max_memory(0);
	assert_int_equal(r.rc, -EFBIG);
	assert_non_null(strstr(r.err, "exceed the memory limit of"));
	assert_non_null(strstr(r.err, "(--max-memory)"));
	r = open_bytes(buf, len);
	assert_int_equal(r.rc, 0);
	free(buf);

	/* sizes */
	{
		uint64_t v = 0;

		assert_int_equal(capture_limits__parse_size("512M", &v), 0);
		assert_int_equal(v, 512ull << 20);
		assert_int_equal(capture_limits__parse_size("3g", &v), 0);
		assert_int_equal(v, 3ull << 30);
		assert_int_equal(capture_limits__parse_size("4096", &v), 0);
		assert_int_equal(v, 4096);
		assert_int_equal(capture_limits__parse_size("0", &v), -EINVAL);
		assert_int_equal(capture_limits__parse_size("12X", &v), -EINVAL);
		assert_int_equal(capture_limits__parse_size("-1", &v), -EINVAL);
		assert_int_equal(capture_limits__parse_size("99999999999T", &v), -EINVAL);
		assert_int_equal(capture_limits__max_inflated(1000), 1024000 + (1 << 20));
		assert_int_equal(capture_limits__max_inflated(UINT64_MAX / 2),
				 CAPTURE_LIMIT_TABLE_BYTES);
	}

	/* the default follows the input (256 x its bytes + 64 MiB, 16 x for
	 * text) up to the RAM-derived default; a given --max-memory replaces it */
	{
		uint64_t dflt = capture_limits__max_memory();
		const unsigned in_k = CAPTURE_LIMIT_INPUT_MEMORY_K, text_k = CAPTURE_LIMIT_TEXT_MEMORY_K;

		assert_true(dflt >= CAPTURE_LIMIT_MEMORY_FLOOR);
		assert_int_equal(capture_limits__memory_for(1 << 20, in_k),
				 (320ull << 20) < dflt ? (320ull << 20) : dflt);
		assert_int_equal(capture_limits__memory_for(1 << 20, text_k),
				 (80ull << 20) < dflt ? (80ull << 20) : dflt);
		assert_int_equal(capture_limits__memory_for(0, in_k), 64ull << 20);
		assert_int_equal(capture_limits__memory_for(UINT64_MAX / 8, in_k), dflt);
		assert_string_equal(capture_limits__memory_name(0, in_k),
				    "the default --max-memory for this input: 256 x its bytes + "
				    "64 MiB; give --max-memory to raise it");
		assert_non_null(strstr(capture_limits__memory_name(0, text_k), ": 16 x its bytes"));
		assert_string_equal(capture_limits__memory_name(UINT64_MAX / 8, in_k),
				    "--max-memory");
		capture_limits__set_max_memory(16ull << 30);
		assert_int_equal(capture_limits__memory_for(0, in_k), 16ull << 30);
		assert_string_equal(capture_limits__memory_name(0, text_k), "--max-memory");
		capture_limits__set_max_memory(0);
	}
}

/* Publication: 0600 under umask 0, a symlink refused and its target kept,
 * no temporary left, a FIFO-less device written through. */
static void test_publish_safely(void **state)
{
	char dir[] = "/tmp/test_publish.XXXXXX", path[512], link[512], target[512];
	struct capture_builder *b = capture_builder__new();
	struct file_out o;
	struct stat st;
	struct ids id;
	char msg[512], buf[16] = "";
	mode_t old;
	DIR *d;
	struct dirent *de;
	int entries = 0, fd;

	(void)state;
	assert_non_null(b);
	assert_non_null(mkdtemp(dir));
	build_known(b, &id);
	snprintf(path, sizeof(path), "%s/out.msc", dir);
	old = umask(0);
	assert_int_equal(capture_builder__write(b, path), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);

	snprintf(target, sizeof(target), "%s/victim", dir);
	snprintf(link, sizeof(link), "%s/link.msc", dir);
	fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(symlink(target, link), 0);
	assert_int_equal(capture_builder__write(b, link), -ELOOP);
	assert_non_null(strstr(capture_builder__error(b), "symbolic link"));
	assert_int_equal(file_out__open(&o, link, msg, sizeof(msg)), -ELOOP);
	file_out__abort(&o);
	fd = open(target, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 4);
	close(fd);
	assert_string_equal(buf, "keep");

	/* an abandoned output leaves nothing; /dev/null is written through */
	snprintf(path, sizeof(path), "%s/abandoned", dir);
	assert_int_equal(file_out__open(&o, path, msg, sizeof(msg)), 0);
	assert_non_null(o.tmp);
	file_out__abort(&o);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(file_out__open(&o, "/dev/null", msg, sizeof(msg)), 0);
	assert_null(o.tmp);
	assert_int_equal(file_out__commit(&o, msg, sizeof(msg)), 0);

	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		assert_null(strstr(de->d_name, ".tmp."));
		entries++;
	}
	closedir(d);
	assert_int_equal(entries, 3); /* out.msc, victim, link.msc */
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	assert_int_equal(system(path), 0);
	capture_builder__free(b);
}

static void test_error_buffers(void **state)
{
	struct capture *c = (void *)1;
	uint8_t junk[64] = {0};
	char small[8];

	assert_int_equal(capture__open_mem(junk, sizeof(junk), NAME, &c, NULL, 0), -EBADMSG);
	assert_null(c);
	memset(small, 'x', sizeof(small));
	assert_int_equal(capture__open_mem(junk, sizeof(junk), NULL, &c, small, sizeof(small)),
			 -EBADMSG);
	assert_int_equal(strnlen(small, sizeof(small)), sizeof(small) - 1);
	assert_int_equal(strncmp(small, "capture", 7), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_empty),
	    cmocka_unit_test(test_interning),
	    cmocka_unit_test(test_mutable_rows),
	    cmocka_unit_test(test_large),
	    cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_serialize_rejects_bad_refs),
	    cmocka_unit_test(test_intervals),
	    cmocka_unit_test(test_write_atomic),
	    cmocka_unit_test(test_tfile_identity),
	    cmocka_unit_test(test_crafted),
	    cmocka_unit_test(test_compatible_variants),
	    cmocka_unit_test(test_truncation),
	    cmocka_unit_test(test_byte_flips),
	    cmocka_unit_test(test_random_rows),
	    cmocka_unit_test(test_error_buffers),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_publish_safely),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
