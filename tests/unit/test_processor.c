// SPDX-License-Identifier: MIT
/*
 * Processor tests: synthetic chunk streams through the real processor.
 * Checks ordering behind the drain-round watermark, mapping-at-sample-time
 * normalization (exec and a later overlapping mmap), symbolization of this
 * binary's own functions, and that malformed records are counted, not fatal.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/abi/python.h"
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bpf/abi/records.h"
#include "capture/capture.h"
#include "userspace/stream/perf_records.h"
#include "userspace/stream/stream.h"
#include "userspace/stream/memory_policy.h"
#include "userspace/processor/processor.h"
#include "self_maps.h"

/*
 * Functions whose addresses the synthetic samples carry.  They keep a frame
 * pointer (push %rbp; mov %rsp,%rbp, then a stack slot), so the processor's
 * CFI check of frame-pointer chains (fp_chain_proven) accepts a chain
 * through their bodies (MARKER_BODY bytes in); their first bytes are the
 * prologue, where it must not.
 */
#define MARKER_BODY 8

__attribute__((noinline, optimize("no-omit-frame-pointer"))) int marker_function_one(int x)
{
	volatile int v = x;

	return v * 3 + 1;
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) int marker_function_two(int x)
{
	volatile int v = x;

	return v * 5 + 2;
}

static struct processor *proc;
static struct capture_builder *builder;
static struct symbolizer *symz;

static void feed(uint32_t kind, uint32_t source, const void *payload, uint32_t len, uint64_t time)
{
	struct ms_chunk c = { .kind = kind, .source = source, .len = len, .time = time };

	assert_int_equal(processor__sink(proc, &c, payload), 0);
}

/* The side-band trailer the records below carry (META perf.sample_type). */
static struct perf_sample_id_layout sideband;

static void feed_built(uint32_t source, const void *buf, int size)
{
	assert_true(size > 0);
	feed(MS_CHUNK_PERF, source, buf, (uint32_t)size, 0);
}

static void feed_mmap2(uint32_t source, uint32_t pid, const struct exe_map *m, uint64_t time)
{
	uint8_t buf[1024];
	struct perf_sample_id id = { .pid = pid, .tid = pid, .time = time };
	struct perf_rec_mmap2 r = {
		.pid = pid,
		.tid = pid,
		.addr = m->start,
		.len = m->end - m->start,
		.pgoff = m->pgoff,
		.prot = PROT_READ | PROT_EXEC,
	};
	struct stat st;

	if (!stat(m->path, &st)) {
		/* maj, min, ino: the processor uses a path only if they match */
		r.maj = major(st.st_dev);
		r.min = minor(st.st_dev);
		r.ino = st.st_ino;
	}
	feed_built(source, buf, perf_rec__build_mmap2(buf, sizeof(buf), &sideband, &r, m->path, &id));
}

static void feed_task(uint32_t type, uint32_t source, uint32_t pid, uint32_t ppid, uint32_t tid,
		      uint64_t time)
{
	uint8_t buf[128];
	struct perf_sample_id id = { .pid = pid, .tid = tid, .time = time };
	struct perf_rec_task t = { .pid = pid, .ppid = ppid, .tid = tid, .ptid = tid, .time = time };

	feed_built(source, buf, perf_rec__build_task(buf, sizeof(buf), &sideband, type, &t, &id));
}

static void feed_comm(uint32_t source, uint32_t pid, const char *comm, int exec, uint64_t time)
{
	uint8_t buf[128];
	struct perf_sample_id id = { .pid = pid, .tid = pid, .time = time };

	feed_built(source, buf,
		   perf_rec__build_comm(buf, sizeof(buf), &sideband,
					exec ? PERF_RECORD_MISC_COMM_EXEC : 0, pid, pid, comm, &id));
}

static void feed_sample(uint32_t pid, uint64_t time, const uint64_t *uips, int n)
{
	union {
		struct ms_sample s;
		uint8_t b[sizeof(struct ms_sample) + 8 * 8];
	} u;

	memset(&u, 0, sizeof(u));
	u.s.hdr.type = MS_REC_SAMPLE;
	u.s.hdr.size = sizeof(struct ms_sample) + 8 * n;
	u.s.time_ns = time;
	u.s.pid = pid;
	u.s.tid = pid;
	u.s.period = 1001001;
	u.s.arch = MS_ARCH_X86_64;
	u.s.ustack_len = n;
	memcpy(u.s.ips, uips, 8 * n);
	feed(MS_CHUNK_BPF, 0, &u, u.s.hdr.size, 0);
}

/* A sample with n user ips and npy interpreted frames (no tracker: unreadable). */
static void feed_py_sample(uint32_t pid, uint64_t time, const uint64_t *uips, int n, int npy,
			   uint32_t status, int claim)
{
	union {
		struct ms_sample s;
		uint8_t b[sizeof(struct ms_sample) + 8 * 8 + 4 * sizeof(struct ms_py_frame)];
	} u;
	struct ms_py_frame f = { .code = 0x1000, .instr = 4, .fingerprint = 7,
				 .flags = MS_PY_F_ENTRY };

	memset(&u, 0, sizeof(u));
	u.s.hdr.type = MS_REC_SAMPLE;
	u.s.hdr.size = sizeof(struct ms_sample) + 8 * n + npy * sizeof(f);
	u.s.time_ns = time;
	u.s.pid = pid;
	u.s.tid = pid;
	u.s.period = 1001001;
	u.s.arch = MS_ARCH_X86_64;
	u.s.ustack_len = n;
	u.s.py_len = claim;
	u.s.py_status = status;
	memcpy(u.s.ips, uips, 8 * n);
	for (int i = 0; i < npy; i++)
		memcpy(u.b + sizeof(struct ms_sample) + 8 * n + i * sizeof(f), &f, sizeof(f));
	feed(MS_CHUNK_BPF, 0, &u, u.s.hdr.size, 0);
}

static int setup(void **state)
{
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &sideband);
	builder = capture_builder__new();
	symz = symbolizer__new();
	proc = processor__new(builder, symz);
	return !(builder && symz && proc);
}

static int teardown(void **state)
{
	processor__free(proc);
	symbolizer__free(symz);
	capture_builder__free(builder);
	return 0;
}

static struct capture *finish(void)
{
	void *buf;
	size_t len;
	char err[256];
	struct capture *c;

	assert_int_equal(processor__finish(proc), 0);
	assert_int_equal(capture_builder__serialize(builder, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "test", &c, err, sizeof(err)), 0);
	free(buf);
	return c;
}

static const char *leaf_name(const struct capture *c, uint32_t sample)
{
	uint32_t st = c->samples[sample].stack;

	return capture__string(c, c->frames[c->stacks[st].frame].function);
}

static void test_order_and_symbols(void **state)
{
	struct exe_map m;
	uint32_t pid = 4242;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;
	uint64_t two = (uint64_t)(uintptr_t)marker_function_two + 1;

	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_comm(MS_SOURCE_SNAPSHOT, pid, "tester", 0, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 100);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	/* Arrival order differs from time order; the watermark sorts them. */
	feed_sample(pid, 1500, &two, 1);
	feed_sample(pid, 1200, &one, 1);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 2000);
	feed_sample(pid, 1900, &one, 1);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 3000);
	feed(MS_CHUNK_END, 0, NULL, 0, 3000);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, 3);
	assert_true(c->samples[0].time_ns == 1200 && c->samples[1].time_ns == 1500 &&
		    c->samples[2].time_ns == 1900);
	assert_string_equal(leaf_name(c, 0), "marker_function_one");
	assert_string_equal(leaf_name(c, 1), "marker_function_two");
	assert_string_equal(leaf_name(c, 2), "marker_function_one");
	assert_string_equal(capture__string(c, c->threads[c->samples[0].thread].comm), "tester");
	assert_int_equal(c->nthreads, 1);
	capture__free(c);
}

static void test_exec_drops_mappings(void **state)
{
	struct exe_map m;
	uint32_t pid = 777;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;

	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 10);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 100);
	feed_sample(pid, 150, &one, 1);
	feed_comm(0, pid, "newimage", 1, 200); /* exec: old mappings are gone */
	feed_sample(pid, 250, &one, 1);
	feed(MS_CHUNK_END, 0, NULL, 0, 1000);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, 2);
	assert_string_equal(leaf_name(c, 0), "marker_function_one");
	assert_string_equal(leaf_name(c, 1), ""); /* no mapping after exec */
	assert_int_equal(capture__counter(c, "processor.frame_no_mapping"), 1);
	capture__free(c);
}

/*
 * The sample_id trailer (perf_event.h, "struct sample_id") is laid out from
 * the sample_type in use: TID (8 bytes: pid, tid), TIME (8), ID (8),
 * STREAM_ID (8), CPU (8: cpu, res), IDENTIFIER (8), each present iff its bit
 * is set, in that order.  Expected offsets derived by hand below.
 */
static void test_sample_id_layouts(void **state)
{
	struct perf_sample_id_layout l;

	/* the collector's side-band events: TID|TIME|CPU -> pid@0 time@8 cpu@16, 24 bytes */
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &l);
	assert_int_equal(l.size, 24);
	assert_int_equal(l.tid_off, 0);
	assert_int_equal(l.time_off, 8);
	assert_int_equal(l.cpu_off, 16);
	assert_int_equal(l.id_off, -1);
	assert_int_equal(l.identifier_off, -1);
	/* perf record's usual: TID|TIME|ID|CPU|IDENTIFIER -> 0, 8, 16, 24, 32; 40 bytes */
	perf_sample_id__layout(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
				       PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
			       &l);
	assert_int_equal(l.size, 40);
	assert_int_equal(l.time_off, 8);
	assert_int_equal(l.id_off, 16);
	assert_int_equal(l.cpu_off, 24);
	assert_int_equal(l.identifier_off, 32);
	/* TIME|STREAM_ID without TID: time first; bits outside the trailer
	 * (IP, CALLCHAIN) change nothing -> time@0 stream_id@8, 16 bytes */
	perf_sample_id__layout(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TIME |
				       PERF_SAMPLE_STREAM_ID,
			       &l);
	assert_int_equal(l.size, 16);
	assert_int_equal(l.tid_off, -1);
	assert_int_equal(l.time_off, 0);
	assert_int_equal(l.stream_id_off, 8);
}

/* A round trip through build and parse keeps every field. */
static void test_perf_record_round_trip(void **state)
{
	uint8_t buf[256];
	struct perf_sample_id id = { .pid = 7, .tid = 8, .time = 123456789, .cpu = 3 };
	struct perf_rec_mmap2 m = { .pid = 7, .tid = 7, .addr = 0x400000, .len = 0x1000,
				    .pgoff = 0x2000, .maj = 8, .min = 1, .ino = 99,
				    .prot = PROT_READ | PROT_EXEC };
	struct perf_mmap2 pm;
	struct perf_comm pc;
	struct perf_lost pl;
	int n;

	n = perf_rec__build_mmap2(buf, sizeof(buf), &sideband, &m, "/usr/bin/x", &id);
	/* 72 fixed + "/usr/bin/x\0" (11) padded to 88, + 24 trailer */
	assert_int_equal(n, 112);
	assert_int_equal(perf_rec__parse_mmap2(&sideband, buf, n, &pm), 0);
	assert_int_equal(pm.f.addr, 0x400000);
	assert_int_equal(pm.f.pgoff, 0x2000);
	assert_int_equal(pm.f.ino, 99);
	assert_string_equal(pm.filename, "/usr/bin/x");
	assert_int_equal(pm.id.time, 123456789);
	assert_int_equal(pm.id.cpu, 3);
	assert_int_equal(pm.id.tid, 8);
	/* a trailer cut off, a string without its NUL: refused */
	assert_int_equal(perf_rec__parse_mmap2(&sideband, buf, n - 8, &pm), -EBADMSG);
	n = perf_rec__build_comm(buf, sizeof(buf), &sideband, PERF_RECORD_MISC_COMM_EXEC, 7, 8,
				 "0123456789abcdefXYZ", &id);
	assert_int_equal(n, 16 + 16 + 24); /* comm cut to 15 bytes + NUL */
	assert_int_equal(perf_rec__parse_comm(&sideband, buf, n, &pc), 0);
	assert_string_equal(pc.comm, "0123456789abcde");
	assert_true(pc.misc & PERF_RECORD_MISC_COMM_EXEC);
	memset(buf + sizeof(struct perf_rec_comm), 'x', 16); /* no NUL before the trailer */
	assert_int_equal(perf_rec__parse_comm(&sideband, buf, n, &pc), -EBADMSG);
	n = perf_rec__build_lost(buf, sizeof(buf), &sideband, 5, 42, &id);
	assert_int_equal(n, 48);
	assert_int_equal(perf_rec__parse_lost(&sideband, buf, n, &pl), 0);
	assert_int_equal(pl.f.lost, 42);
	assert_int_equal(perf_rec__build_mmap2(buf, 64, &sideband, &m, "/x", &id), -ENOSPC);
}

/*
 * The processor reads record times from the trailer of the sample_type META
 * perf.sample_type names.  The exec at 200 must fall between the samples at
 * 150 and 250 for every layout; a trailer read at the wrong offset misorders
 * it and the second sample keeps its mapping.
 */
static void test_sideband_sample_types(void **state)
{
	static const uint64_t types[] = {
		MS_SIDEBAND_SAMPLE_TYPE, /* what the collector uses */
		PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
			PERF_SAMPLE_IDENTIFIER,
		PERF_SAMPLE_TIME | PERF_SAMPLE_STREAM_ID,
	};
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;
	struct exe_map m;

	find_map(marker_function_one, &m);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		char meta[64];
		int n = snprintf(meta, sizeof(meta), "perf.sample_type=0x%llx",
				 (unsigned long long)types[i]);

		teardown(state);
		assert_int_equal(setup(state), 0);
		perf_sample_id__layout(types[i], &sideband);
		feed(MS_CHUNK_META, 0, meta, (uint32_t)n, 0);
		feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 777, 1, 777, 10);
		feed_mmap2(MS_SOURCE_SNAPSHOT, 777, &m, 10);
		feed(MS_CHUNK_ROUND, 0, NULL, 0, 100);
		feed_sample(777, 250, &one, 1);
		feed_comm(0, 777, "newimage", 1, 200); /* arrives late, sorted by its time */
		feed_sample(777, 150, &one, 1);
		feed(MS_CHUNK_END, 0, NULL, 0, 1000);

		struct capture *c = finish();

		assert_int_equal(c->nsamples, 2);
		assert_int_equal(c->samples[0].time_ns, 150);
		assert_string_equal(leaf_name(c, 0), "marker_function_one");
		assert_string_equal(leaf_name(c, 1), "");
		assert_int_equal(capture__counter(c, "processor.bad_perf_record"), 0);
		capture__free(c);
	}
}

/*
 * A module whose symbols cannot be loaded (its file is gone) is a counted
 * problem, not an aborted recording: its frames keep their addresses,
 * unnamed, under one frame per run that says why.
 */
static void test_unreadable_module_frames_say_why(void **state)
{
	struct exe_map gone = { .start = 0x7f0000000000ull, .end = 0x7f0000010000ull,
				.path = "/nonexistent/microscope-test/libgone.so" };
	/* innermost first: three frames in the module */
	uint64_t uips[3] = { 0x7f0000001000ull, 0x7f0000002010ull, 0x7f0000003020ull };
	uint32_t pid = 4343;

	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &gone, 100);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	feed_sample(pid, 1200, uips, 3);
	feed(MS_CHUNK_END, 0, NULL, 0, 2000);

	struct capture *c = finish();
	const char *want = "[libgone.so: no symbols: ";
	uint32_t st, marks = 0, unnamed = 0;

	assert_int_equal(c->nsamples, 1);
	assert_int_equal(capture__counter(c, "processor.module_unreadable"), 1);
	/* leaf to root: 0x1000, 0x2010, 0x3020 (all in the module), the mark */
	for (st = c->samples[0].stack; st != CAPTURE_NONE; st = c->stacks[st].parent) {
		const struct capture_frame *f = &c->frames[c->stacks[st].frame];
		const char *fn = capture__string(c, f->function);

		if (!strncmp(fn, want, strlen(want))) {
			marks++;
			assert_int_equal(c->stacks[st].parent, CAPTURE_NONE); /* heads the run */
		} else {
			assert_true(f->flags & CAPTURE_FRAME_F_UNSYMBOLIZED);
			assert_string_equal(fn, "");
			unnamed++;
		}
	}
	assert_int_equal(marks, 1);
	assert_int_equal(unnamed, 3);
	capture__free(c);
}

static void test_forked_child_inherits_mappings(void **state)
{
	struct exe_map m;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;

	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 500, 1, 500, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, 500, &m, 10);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 100);
	feed_task(PERF_RECORD_FORK, 3, 501, 500, 501, 120);
	/* an unrelated process's records are ignored when not system-wide */
	feed_task(PERF_RECORD_FORK, 3, 900, 1, 900, 121);
	feed_mmap2(3, 900, &m, 122);
	feed_sample(501, 150, &one, 1);
	feed(MS_CHUNK_END, 0, NULL, 0, 1000);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, 1);
	assert_string_equal(leaf_name(c, 0), "marker_function_one");
	assert_int_equal(c->processes[c->threads[c->samples[0].thread].process].ppid, 500);
	for (uint32_t i = 0; i < c->nprocesses; i++)
		assert_int_not_equal(c->processes[i].pid, 900);
	capture__free(c);
}

static void test_process_info_and_inheritance(void **state)
{
	struct ms_process_info info = {
		.pid = 600, .ns_pid = 1, .pidns = 4026531836ull, .mntns = 4026531841ull,
		.cgroupns = 4026531835ull, .start_time_ns = 123456789,
	};
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;
	struct exe_map m;

	find_map(marker_function_one, &m);
	feed(MS_CHUNK_PROCESS, MS_SOURCE_SNAPSHOT, &info, sizeof(info), 0);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 600, 1, 600, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, 600, &m, 10);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 100);
	feed_task(PERF_RECORD_FORK, 2, 601, 600, 601, 150);
	feed_sample(601, 160, &one, 1);
	feed(MS_CHUNK_PROCESS, 0, &info, 7, 0); /* wrong size: counted */
	feed(MS_CHUNK_END, 0, NULL, 0, 1000);

	struct capture *c = finish();
	const struct capture_process *parent = NULL, *child = NULL;

	for (uint32_t i = 0; i < c->nprocesses; i++) {
		if (c->processes[i].pid == 600)
			parent = &c->processes[i];
		if (c->processes[i].pid == 601)
			child = &c->processes[i];
	}
	assert_non_null(parent);
	assert_non_null(child);
	assert_int_equal(parent->start_time_ns, 123456789);
	assert_int_equal(parent->pidns, 4026531836ull);
	assert_int_equal(parent->mntns, 4026531841ull);
	assert_int_equal(child->cgroupns, 4026531835ull);
	assert_int_equal(child->pidns, 4026531836ull);
	assert_int_equal(child->start_time_ns, 150); /* its FORK record's time */
	/* the parent, never sampled, keeps its NSpid as its main thread's
	 * ns_tid; the child's own is unknown (its sample carried none) */
	int seen = 0;

	for (uint32_t i = 0; i < c->nthreads; i++) {
		if (c->threads[i].tid == 600)
			assert_int_equal(c->threads[i].ns_tid, 1), seen++;
		if (c->threads[i].tid == 601)
			assert_int_equal(c->threads[i].ns_tid, 0), seen++;
	}
	assert_int_equal(seen, 2);
	assert_int_equal(capture__counter(c, "processor.bad_chunk"), 1);
	capture__free(c);
}

/*
 * perf writes a task's EXIT record early in do_exit, and the task can be
 * sampled on the rest of its exit path: such a sample is the process's last,
 * not a new unnamed process of the same pid.  A FORK of the pid after the
 * EXIT is a new process, and so is a sample long after the exit.
 */
static void test_sample_on_exit_path_is_the_process(void **state)
{
	const uint64_t ms = 1000 * 1000;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;
	struct exe_map m;

	find_map(marker_function_one, &m);
	feed(MS_CHUNK_META, 0, "mode=system-wide", 16, 0);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 700, 1, 700, 10);
	feed_comm(MS_SOURCE_SNAPSHOT, 700, "parentcomm", 0, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, 700, &m, 10);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 100);
	feed_task(PERF_RECORD_FORK, 2, 701, 700, 701, 140);
	feed_sample(701, 150, &one, 1);
	feed_task(PERF_RECORD_EXIT, 2, 701, 700, 701, 200);
	feed_sample(701, 2 * ms, &one, 1);	/* on its exit path */
	feed_task(PERF_RECORD_FORK, 2, 701, 700, 701, 3 * ms); /* the pid reused */
	feed_sample(701, 4 * ms, &one, 1);
	feed_task(PERF_RECORD_EXIT, 2, 701, 700, 701, 5 * ms);
	feed_sample(701, 2000 * ms, &one, 1); /* long after: not that process */
	feed(MS_CHUNK_END, 0, NULL, 0, 3000 * ms);

	struct capture *c = finish();
	uint32_t proc[4];

	assert_int_equal(c->nsamples, 4);
	for (int i = 0; i < 4; i++)
		proc[i] = c->threads[c->samples[i].thread].process;
	assert_int_equal(c->samples[0].thread, c->samples[1].thread);
	assert_int_not_equal(proc[1], proc[2]);
	assert_int_not_equal(proc[2], proc[3]);
	assert_string_equal(capture__string(c, c->processes[proc[0]].comm), "parentcomm");
	assert_string_equal(capture__string(c, c->processes[proc[2]].comm), "parentcomm");
	assert_string_equal(capture__string(c, c->processes[proc[3]].comm), "");
	assert_int_equal(capture__counter(c, "processor.sample_unknown_process"), 1);
	capture__free(c);
}

static void test_malformed_counted(void **state)
{
	uint8_t junk[64];
	struct ms_sample s;

	memset(junk, 0xab, sizeof(junk));
	feed(MS_CHUNK_BPF, 0, junk, sizeof(junk), 0);	  /* size field wrong */
	feed(MS_CHUNK_PERF, 0, junk, sizeof(junk), 0);	  /* size field wrong */
	feed(MS_CHUNK_BPF, 0, junk, 4, 0);		  /* too short */
	feed(99, 0, junk, 8, 0);			  /* unknown chunk */
	memset(&s, 0, sizeof(s));
	s.hdr.type = MS_REC_SAMPLE;
	s.hdr.size = sizeof(s);
	s.arch = MS_ARCH_X86_64;
	s.ustack_len = 100; /* claims 800 bytes that are not there */
	feed(MS_CHUNK_BPF, 0, &s, sizeof(s), 0);
	s.ustack_len = 0;
	s.hdr.type = 77;
	feed(MS_CHUNK_BPF, 0, &s, sizeof(s), 0);
	feed(MS_CHUNK_META, 0, "novalue", 7, 0);
	feed(MS_CHUNK_END, 0, NULL, 0, 10);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, 0);
	assert_int_equal(capture__counter(c, "processor.bad_record_size"), 3);
	assert_int_equal(capture__counter(c, "processor.bad_chunk"), 1);
	assert_int_equal(capture__counter(c, "processor.bad_sample"), 1);
	assert_int_equal(capture__counter(c, "processor.unknown_bpf_record"), 1);
	assert_int_equal(capture__counter(c, "processor.bad_meta"), 1);
	capture__free(c);
}

/* The held-record budget (stream/memory_policy.h): with no watermark to
 * release them, samples beyond MS_HELD_BYTES_MAX are dropped whole and
 * counted; the ones held are all processed (here: counted as unknown, since
 * their type is not a sample's); a side-band record fed after the budget
 * is full is still accepted. */
/*
 * Live ordering under a round budget: each round brings 50 samples whose
 * times overlap the previous round's (so new arrivals merge into the held
 * run, not just append), and the 1 ns budget releases only part of what is
 * due each round (records then wait at the front of held[]).  Every sample
 * still comes out once, in time order, none counted late, and the lag seen
 * is at least one round (the release limit trails the newest round by one).
 */
static void test_round_budget_keeps_order(void **state)
{
	enum { ROUNDS = 12, PER = 50 };
	struct exe_map m;
	uint32_t pid = 4343;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1, mean = 0;

	(void)state;
	processor__set_round_budget(proc, 1, 1000000000ull);
	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 100);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	for (uint64_t k = 0; k < ROUNDS; k++) {
		/* times 1000k+500 .. 1000k+1970 in a scrambled order; the round
		 * before released only what is below 1000k, so none is late */
		for (uint64_t j = 0; j < PER; j++)
			feed_sample(pid, 1000 * k + 500 + (j * 29 % PER) * 30, &one, 1);
		feed(MS_CHUNK_ROUND, 0, NULL, 0, 2000 + 1000 * k);
	}
	assert_true(processor__lag_ns(proc, &mean) >= 1000);
	assert_true(mean > 0);
	feed(MS_CHUNK_END, 0, NULL, 0, 2000 + 1000 * ROUNDS);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, ROUNDS * PER);
	for (uint32_t i = 1; i < c->nsamples; i++)
		assert_true(c->samples[i - 1].time_ns < c->samples[i].time_ns);
	assert_int_equal(capture__counter(c, "processor.late_record"), 0);
	capture__free(c);
}

static void test_held_budget_drops_whole_samples(void **state)
{
	enum { REC = 65536, EXTRA = 7 };
	uint32_t fit = MS_HELD_BYTES_MAX / REC;
	uint8_t *rec = calloc(1, REC);
	struct ms_sample s;

	assert_non_null(rec);
	memset(&s, 0, sizeof(s));
	s.hdr.type = 77;
	s.hdr.size = REC;
	for (uint32_t i = 0; i < fit + EXTRA; i++) {
		s.time_ns = 1000 + i;
		memcpy(rec, &s, sizeof(s));
		feed(MS_CHUNK_BPF, 0, rec, REC, 0);
	}
	feed_task(PERF_RECORD_FORK, 0, 42, 1, 42, 5000);
	feed(MS_CHUNK_END, 0, NULL, 0, 10000);
	free(rec);

	struct capture *c = finish();

	assert_int_equal(capture__counter(c, "processor.held_budget_full"), EXTRA);
	assert_int_equal(capture__counter(c, "processor.unknown_bpf_record"), fit);
	assert_int_equal(c->nsamples, 0);
	capture__free(c);
}

/* record --budget: a DUTY chunk, ordered by its time among the samples (it
 * arrives after a sample stamped before it), gives later samples its factor
 * as weight; the event keeps the requested period; the changes land in meta
 * budget.duty_changes; a zero factor is counted, not applied. */
static void test_duty_changes_weight_samples(void **state)
{
	struct ms_duty d = { .factor = 8, .period = 8 * 1001001 };
	struct ms_duty zero = { .factor = 0 };
	struct exe_map m;
	uint32_t pid = 4343;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;

	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 100);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	feed_sample(pid, 1100, &one, 1);
	feed(MS_CHUNK_DUTY, 0, &d, sizeof(d), 1300);
	feed_sample(pid, 1200, &one, 1); /* before the change: weight 1 */
	feed_sample(pid, 1400, &one, 1);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 2000);
	d.factor = 2;
	feed(MS_CHUNK_DUTY, 0, &d, sizeof(d), 2100);
	feed(MS_CHUNK_DUTY, 0, &zero, sizeof(zero), 2150);
	feed_sample(pid, 2200, &one, 1);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 3000);
	feed(MS_CHUNK_END, 0, NULL, 0, 3000);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, 4);
	assert_int_equal(c->samples[0].weight, 1);
	assert_int_equal(c->samples[1].weight, 1);
	assert_int_equal(c->samples[2].weight, 8);
	assert_int_equal(c->samples[3].weight, 2);
	assert_int_equal(c->nevents, 1);
	assert_int_equal(c->events[0].period, 1001001);
	assert_string_equal(capture__meta(c, "budget.duty_changes"), "1300:8,2100:2");
	assert_int_equal(capture__counter(c, "processor.bad_chunk"), 1);
	capture__free(c);
}

/* Off-CPU records: a good one becomes an interval with the user stack and
 * the waker; inconsistent ones are counted, never read past their end. */
static void test_offcpu_records(void **state)
{
	union {
		struct ms_offcpu r;
		uint8_t b[sizeof(struct ms_offcpu) + 8 * 8];
	} u;
	struct exe_map m;
	uint64_t *ips = (uint64_t *)(&u.r + 1);
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 4;
	uint64_t two = (uint64_t)(uintptr_t)marker_function_two + 4;

	find_map((void *)marker_function_one, &m);
	/* as the /proc snapshot announces recorded processes */
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 500, 1, 500, 10);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 500, 500, 501, 11);
	feed_mmap2(MS_SOURCE_SNAPSHOT, 500, &m, 20);

	memset(&u, 0, sizeof(u));
	u.r.hdr.type = MS_REC_OFFCPU;
	u.r.hdr.size = sizeof(struct ms_offcpu) + 2 * 8;
	u.r.start_ns = 1000;
	u.r.time_ns = 5000;
	u.r.pid = 500;
	u.r.tid = 500;
	u.r.arch = MS_ARCH_X86_64;
	u.r.state = MS_OFFCPU_STATE_SLEEP;
	u.r.cause = MS_OFFCPU_CAUSE_TASK;
	u.r.waker_pid = 500;
	u.r.waker_tid = 501;
	u.r.ustack_len = 1;
	u.r.waker_ustack_len = 1;
	ips[0] = one;
	ips[1] = two;
	feed(MS_CHUNK_BPF, 0, &u, u.r.hdr.size, 0);

	/* claims a waker stack that is not there */
	u.r.waker_kstack_len = 5;
	feed(MS_CHUNK_BPF, 0, &u, u.r.hdr.size, 0);
	/* ends before it starts */
	u.r.waker_kstack_len = 0;
	u.r.start_ns = 9000;
	feed(MS_CHUNK_BPF, 0, &u, u.r.hdr.size, 0);
	/* unknown state */
	u.r.start_ns = 1000;
	u.r.state = 9;
	feed(MS_CHUNK_BPF, 0, &u, u.r.hdr.size, 0);
	/* waker copies: one that claims more bytes than it holds is counted;
	 * a good one for no interval of ours is kept aside, harmless */
	{
		union {
			struct ms_offcpu_waker w;
			uint8_t b[sizeof(struct ms_offcpu_waker) + 16];
		} wk;

		memset(&wk, 0, sizeof(wk));
		wk.w.hdr.type = MS_REC_OFFCPU_WAKER;
		wk.w.hdr.size = sizeof(wk);
		wk.w.time_ns = 3000;
		wk.w.start_ns = 2000;
		wk.w.tid = 777;
		wk.w.waker_pid = 500;
		wk.w.waker_tid = 501;
		wk.w.arch = MS_ARCH_X86_64;
		wk.w.stack_copy_len = 24;
		feed(MS_CHUNK_BPF, 0, &wk, wk.w.hdr.size, 0);
		wk.w.stack_copy_len = 16;
		feed(MS_CHUNK_BPF, 0, &wk, wk.w.hdr.size, 0);
	}
	feed(MS_CHUNK_END, 0, NULL, 0, 10000);

	struct capture *c = finish();

	assert_int_equal(c->nintervals, 1);
	assert_int_equal(capture__counter(c, "processor.bad_offcpu"), 4);
	const struct capture_interval *v = &c->intervals[0];
	assert_int_equal(v->weight, 4000);
	assert_int_equal(v->state, CAPTURE_OFFCPU_STATE_SLEEP);
	assert_int_equal(v->cause, CAPTURE_OFFCPU_CAUSE_TASK);
	assert_int_equal(c->threads[v->thread].tid, 500);
	assert_int_not_equal(v->waker_thread, CAPTURE_NONE);
	assert_int_equal(c->threads[v->waker_thread].tid, 501);
	assert_string_equal(capture__string(c, c->events[v->event].unit), "nanoseconds");
	assert_string_equal(
	    capture__string(c, c->frames[c->stacks[v->stack].frame].function),
	    "marker_function_one");
	assert_string_equal(
	    capture__string(c, c->frames[c->stacks[v->waker_stack].frame].function),
	    "marker_function_two");
	capture__free(c);
}

/*
 * A thread that wakes another on its way out (pthread_join's futex, woken by
 * the kernel's clear_child_tid after perf's EXIT record was written) and the
 * interval that wake ends, ordered after that EXIT: the waker is the thread's
 * row, not a second row of the same tid (before: /api/threads listed each
 * exited thread twice, report --off-cpu its waker line twice).
 */
static void test_offcpu_waker_on_its_exit_path(void **state)
{
	union {
		struct ms_offcpu r;
		uint8_t b[sizeof(struct ms_offcpu) + 8];
	} u;
	struct exe_map m;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 4;
	uint32_t n501 = 0;

	find_map((void *)marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 500, 1, 500, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, 500, &m, 20);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 100);
	feed_task(PERF_RECORD_FORK, 2, 500, 500, 501, 200); /* pthread_create */
	feed_sample(500, 300, &one, 1);
	feed_task(PERF_RECORD_EXIT, 2, 500, 500, 501, 3000);

	memset(&u, 0, sizeof(u));
	u.r.hdr.type = MS_REC_OFFCPU;
	u.r.hdr.size = sizeof(struct ms_offcpu) + 8;
	u.r.start_ns = 1000;
	u.r.time_ns = 5000; /* main runs again after 501's EXIT */
	u.r.pid = 500;
	u.r.tid = 500;
	u.r.arch = MS_ARCH_X86_64;
	u.r.state = MS_OFFCPU_STATE_SLEEP;
	u.r.cause = MS_OFFCPU_CAUSE_TASK;
	u.r.waker_pid = 500;
	u.r.waker_tid = 501;
	u.r.ustack_len = 1;
	memcpy(&u.r + 1, &one, 8);
	feed(MS_CHUNK_BPF, 0, &u, u.r.hdr.size, 0);
	feed(MS_CHUNK_END, 0, NULL, 0, 10000);

	struct capture *c = finish();

	assert_int_equal(c->nintervals, 1);
	for (uint32_t t = 0; t < c->nthreads; t++)
		n501 += c->threads[t].tid == 501;
	assert_int_equal(n501, 1);
	assert_int_equal(c->nthreads, 2);
	assert_int_not_equal(c->intervals[0].waker_thread, CAPTURE_NONE);
	assert_int_equal(c->threads[c->intervals[0].waker_thread].tid, 501);
	capture__free(c);
}

/* An interval without stacks is smaller than a sample: its time is still
 * read (offset 8 in every BPF record), so after a round it is neither late
 * nor released before the samples that precede it. */
static void test_small_interval_keeps_its_time(void **state)
{
	struct ms_offcpu r;
	struct exe_map m;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 4;

	(void)state;
	find_map((void *)marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, 600, 1, 600, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, 600, &m, 20);
	feed_sample(600, 500, &one, 1);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1500); /* releases the sample at 500 */
	feed_sample(600, 4000, &one, 1);
	memset(&r, 0, sizeof(r));
	r.hdr.type = MS_REC_OFFCPU;
	r.hdr.size = sizeof(r);
	assert_true(sizeof(r) < sizeof(struct ms_sample));
	r.start_ns = 2000;
	r.time_ns = 3000;
	r.pid = 600;
	r.tid = 600;
	r.arch = MS_ARCH_X86_64;
	r.state = MS_OFFCPU_STATE_SLEEP;
	feed(MS_CHUNK_BPF, 0, &r, sizeof(r), 0);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 3500);
	feed(MS_CHUNK_END, 0, NULL, 0, 10000);

	struct capture *c = finish();

	assert_int_equal(c->nintervals, 1);
	assert_int_equal(c->nsamples, 2);
	assert_int_equal(capture__counter(c, "processor.late_record"), 0);
	assert_int_equal(c->intervals[0].weight, 1000);
	capture__free(c);
}

/* An off-CPU interval of pid with one user ip and, with MS_OFFCPU_F_PYTHON,
 * a CPython part claiming claim frames, status status, holding npy. */
static void feed_py_interval(uint32_t pid, uint64_t start, uint64_t uip, int npy, int claim,
			     uint32_t status, bool python)
{
	union {
		struct ms_offcpu r;
		uint8_t b[sizeof(struct ms_offcpu) + 8 + sizeof(struct ms_offcpu_py) +
			  4 * sizeof(struct ms_py_frame)];
	} u;
	struct ms_py_frame f = { .code = 0x1000, .instr = 4, .fingerprint = 7,
				 .flags = MS_PY_F_ENTRY };
	struct ms_offcpu_py py = { .py_len = claim, .py_status = status };
	uint8_t *at = u.b + sizeof(struct ms_offcpu) + 8;

	memset(&u, 0, sizeof(u));
	u.r.hdr.type = MS_REC_OFFCPU;
	u.r.hdr.size = sizeof(struct ms_offcpu) + 8;
	u.r.start_ns = start;
	u.r.time_ns = start + 1000;
	u.r.pid = pid;
	u.r.tid = pid;
	u.r.arch = MS_ARCH_X86_64;
	u.r.state = MS_OFFCPU_STATE_SLEEP;
	u.r.ustack_len = 1;
	memcpy(u.b + sizeof(struct ms_offcpu), &uip, 8);
	if (python) {
		u.r.flags |= MS_OFFCPU_F_PYTHON;
		memcpy(at, &py, sizeof(py));
		for (int i = 0; i < npy; i++)
			memcpy(at + sizeof(py) + i * sizeof(f), &f, sizeof(f));
		u.r.hdr.size += sizeof(py) + npy * sizeof(f);
	}
	feed(MS_CHUNK_BPF, 0, &u, u.r.hdr.size, 0);
}

/* The innermost frame's function of interval i (in arrival order). */
static const char *interval_leaf(const struct capture *c, uint32_t i)
{
	uint32_t st = c->intervals[i].stack;

	return capture__string(c, c->frames[c->stacks[st].frame].function);
}

/*
 * ABI 3: an off-CPU interval carries the thread's CPython frames at
 * switch-out (MS_OFFCPU_F_PYTHON).  They are placed as in a sample (here
 * without a runtime to name them: unreadable marks after the native frames,
 * the stack ending in the unplaced mark), counted by walk status; an
 * interval without the flag (every ABI-2 record) keeps its native stack.
 * A CPython part that claims more frames than the record holds, a flag
 * without the part, or an unknown status is a bad interval.
 */
static void test_offcpu_python_frames(void **state)
{
	struct exe_map m;
	uint32_t pid = 4545;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;

	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 100);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	feed_py_interval(pid, 1100, one, 2, 2, MS_PY_OK, true);
	feed_py_interval(pid, 3100, one, 0, 0, MS_PY_NONE, false);    /* an ABI-2 record */
	feed_py_interval(pid, 5100, one, 1, 3, MS_PY_OK, true);	     /* claims 3, holds 1 */
	{
		/* the flag with nothing after the callchain */
		union {
			struct ms_offcpu r;
			uint8_t b[sizeof(struct ms_offcpu) + 8];
		} u;

		memset(&u, 0, sizeof(u));
		u.r.hdr.type = MS_REC_OFFCPU;
		u.r.hdr.size = sizeof(u);
		u.r.start_ns = 7100;
		u.r.time_ns = 8100;
		u.r.pid = u.r.tid = pid;
		u.r.arch = MS_ARCH_X86_64;
		u.r.ustack_len = 1;
		u.r.flags = MS_OFFCPU_F_PYTHON;
		memcpy(u.b + sizeof(struct ms_offcpu), &one, 8);
		feed(MS_CHUNK_BPF, 0, &u, u.r.hdr.size, 0);
	}
	feed_py_interval(pid, 9100, one, 1, 1, MS_PY_STATUS_COUNT, true); /* unknown status */
	feed(MS_CHUNK_END, 0, NULL, 0, 20000);

	struct capture *c = finish();
	uint32_t st;

	assert_int_equal(c->nintervals, 2);
	assert_int_equal(capture__counter(c, "processor.bad_offcpu"), 3);
	assert_string_equal(interval_leaf(c, 0), "[python frames unplaced]");
	st = c->stacks[c->intervals[0].stack].parent;
	assert_string_equal(capture__string(c, c->frames[c->stacks[st].frame].function),
			    "[python code unreadable]");
	st = c->stacks[st].parent;
	assert_string_equal(capture__string(c, c->frames[c->stacks[st].frame].function),
			    "[python code unreadable]");
	st = c->stacks[st].parent;
	assert_string_equal(capture__string(c, c->frames[c->stacks[st].frame].function),
			    "marker_function_one");
	assert_string_equal(interval_leaf(c, 1), "marker_function_one");
	assert_int_equal(capture__counter(c, "python.offcpu_walk.ok"), 1);
	assert_int_equal(capture__counter(c, "processor.py_code_unreadable"), 2);
	capture__free(c);
}

/* Interpreted frames without a runtime to name them (a replay): each is an
 * unreadable mark; with no evaluation-loop activation to place them before,
 * they follow the native frames and the stack ends in the unplaced mark.
 * A walk that claims more frames than the record holds is a bad sample. */
static void test_python_frames_unplaced_and_unreadable(void **state)
{
	struct exe_map m;
	uint32_t pid = 4343;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + 1;

	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 100);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	feed_py_sample(pid, 1100, &one, 1, 2, MS_PY_OK, 2);
	feed_py_sample(pid, 1200, &one, 1, 0, MS_PY_AMBIGUOUS, 0); /* no activation: no mark */
	feed_py_sample(pid, 1300, &one, 1, 1, MS_PY_OK, 3);	   /* claims 3, holds 1 */
	feed(MS_CHUNK_END, 0, NULL, 0, 3000);

	struct capture *c = finish();
	uint32_t st;

	assert_int_equal(c->nsamples, 2);
	assert_string_equal(leaf_name(c, 0), "[python frames unplaced]");
	st = c->stacks[c->samples[0].stack].parent;
	assert_string_equal(capture__string(c, c->frames[c->stacks[st].frame].function),
			    "[python code unreadable]");
	assert_true(c->frames[c->stacks[st].frame].flags & CAPTURE_FRAME_F_INTERPRETED);
	assert_string_equal(leaf_name(c, 1), "marker_function_one");
	assert_int_equal(capture__counter(c, "processor.py_code_unreadable"), 2);
	assert_int_equal(capture__counter(c, "processor.py_unplaced"), 1);
	assert_int_equal(capture__counter(c, "processor.bad_sample"), 1);
	assert_int_equal(capture__counter(c, "python.walk.ambiguous"), 1);
	capture__free(c);
}

/* A sample with nk kernel ips (innermost first) and n user ips. */
static void feed_ksample(uint32_t pid, uint64_t time, const uint64_t *kips, int nk,
			 const uint64_t *uips, int n)
{
	union {
		struct ms_sample s;
		uint8_t b[sizeof(struct ms_sample) + 8 * 32];
	} u;

	assert_true(nk + n <= 32);
	memset(&u, 0, sizeof(u));
	u.s.hdr.type = MS_REC_SAMPLE;
	u.s.hdr.size = sizeof(struct ms_sample) + 8 * (nk + n);
	u.s.time_ns = time;
	u.s.pid = pid;
	u.s.tid = pid;
	u.s.period = 1001001;
	u.s.arch = MS_ARCH_X86_64;
	u.s.kstack_len = nk;
	u.s.ustack_len = n;
	memcpy(u.s.ips, kips, 8 * nk);
	memcpy(u.s.ips + nk, uips, 8 * n);
	feed(MS_CHUNK_BPF, 0, &u, u.s.hdr.size, 0);
}

/* Function names of a sample's stack, root first, into names[]; the count. */
static int stack_names(const struct capture *c, uint32_t sample, const char **names, int cap)
{
	const char *rev[64];
	int n = 0;

	for (uint32_t st = c->samples[sample].stack; st != CAPTURE_NONE && n < 64;
	     st = c->stacks[st].parent) {
		const struct capture_frame *f = &c->frames[c->stacks[st].frame];

		rev[n++] = (f->flags & CAPTURE_FRAME_F_KERNEL) ? "[k]" : capture__string(c, f->function);
	}
	for (int i = 0; i < n && i < cap; i++)
		names[i] = rev[n - 1 - i] ? rev[n - 1 - i] : "";
	return n;
}

/*
 * A frame-pointer chain that leaves mapped code (code built without frame
 * pointers sends the kernel's walk through stack data) ends at its last real
 * frame under "[frame pointer chain left mapped code]", counted once per
 * stack, whether it left for unmapped addresses or a repeated address.
 */
static void test_fp_chain_left_code(void **state)
{
	struct exe_map m;
	uint32_t pid = 4343;
	uint64_t one = (uint64_t)(uintptr_t)marker_function_one + MARKER_BODY;
	uint64_t two = (uint64_t)(uintptr_t)marker_function_two + MARKER_BODY;
	uint64_t unmapped[8] = { one, two, 0x555ed2a5e3d0ull, 0x555ed2a5e3d0ull,
				 0x555ed2a5e3d0ull, 0x555ed2a5e3d0ull, 0x555ed2a5e3d0ull,
				 0x555ed2a5e3d0ull };
	uint64_t repeated[6] = { one, two, two, two, two, two };
	uint64_t clean[2] = { one, two };
	const char *names[16];

	find_map(marker_function_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 100);
	feed_sample(pid, 1100, unmapped, 8);
	feed_sample(pid, 1200, repeated, 6);
	feed_sample(pid, 1300, clean, 2);
	feed(MS_CHUNK_END, 0, NULL, 0, 3000);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, 3);
	assert_int_equal(stack_names(c, 0, names, 16), 3);
	assert_string_equal(names[0], "[frame pointer chain left mapped code]");
	assert_string_equal(names[1], "marker_function_two");
	assert_string_equal(names[2], "marker_function_one");
	/* The run's first entry is kept. */
	assert_int_equal(stack_names(c, 1, names, 16), 3);
	assert_string_equal(names[0], "[frame pointer chain left mapped code]");
	assert_string_equal(names[1], "marker_function_two");
	assert_string_equal(names[2], "marker_function_one");
	assert_int_equal(stack_names(c, 2, names, 16), 2);
	assert_string_equal(names[0], "marker_function_two");
	assert_int_equal(capture__counter(c, "processor.fp_left_code"), 2);
	assert_int_equal(capture__counter(c, "processor.frame_no_mapping"), 0);
	capture__free(c);
}

/*
 * The innermost user frame is the interrupted pc, never a return address,
 * even when the sample also has a kernel stack (a page fault in user mode
 * leaves regs->ip at the faulting instruction): a pc at a function's first
 * instruction is named by that function, not by whatever precedes pc-1.
 */
static void test_innermost_user_pc_not_return(void **state)
{
	struct exe_map m;
	uint32_t pid = 4444;
	uint64_t entry = (uint64_t)(uintptr_t)marker_function_two;
	uint64_t uips[1] = { entry };
	uint64_t kips[2] = { 0, 0 };
	const char *names[8];
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];

	/* Any kernel text address; unsymbolized is fine, it is only context. */
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && !kips[0]) {
		unsigned long long a;
		char t;

		if (sscanf(line, "%llx %c", &a, &t) == 2 && (t == 'T' || t == 't') && a)
			kips[0] = kips[1] = a + 8;
	}
	fclose(f);
	if (!kips[0])
		kips[0] = kips[1] = 0xffffffff81000008ull;
	find_map(marker_function_two, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid, 100);
	feed_mmap2(MS_SOURCE_SNAPSHOT, pid, &m, 100);
	feed_ksample(pid, 1100, kips, 2, uips, 1);
	feed(MS_CHUNK_END, 0, NULL, 0, 3000);

	struct capture *c = finish();

	assert_int_equal(c->nsamples, 1);
	/* At the first instruction rbp is still the caller's: the chain ends
	 * marked above the frame (processor fp_chain_proven). */
	assert_int_equal(stack_names(c, 0, names, 8), 4);
	assert_string_equal(names[0], "[frame without frame pointer]");
	assert_string_equal(names[1], "marker_function_two");
	assert_string_equal(names[2], "[k]");
	capture__free(c);
}

/* Release every record before time t (a round's watermark is the one before). */
static void process_until(uint64_t t)
{
	feed(MS_CHUNK_ROUND, 0, NULL, 0, t);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, t + 1);
}

static void map_append(const char *path, const char *fmt, uint64_t a, uint64_t b)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fprintf(f, fmt, (unsigned long long)a, (unsigned long long)b);
	fclose(f);
}

static uint64_t counter(const struct capture *c, const char *name)
{
	for (uint32_t i = 0; i < c->ncounters; i++)
		if (!strcmp(capture__string(c, c->counters[i].name), name))
			return c->counters[i].value;
	return 0;
}

/*
 * Code with no file (processor/jit.c) with this live process as the target:
 * its perf map is read when a sample lands in anonymous code nothing names,
 * not again for 20 ms of sample time after a fruitless read unless the
 * process maps something, and a mapping over a function read before it
 * ends it.  Sample times lie ahead of the real clock, so every line is read
 * before the samples' times (as when the recorder keeps up).
 */
static void test_jit_perf_map(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	struct exe_map anon = { .path = "//anon" };
	char path[64], line[256];
	FILE *stat_f;
	unsigned long long start_ticks = 0;
	struct timespec ts;
	uint64_t a = 0x7f0000100000ull, t, ip;
	const char *names[8];

	snprintf(path, sizeof(path), "/tmp/perf-%u.map", pid);
	unlink(path);
	/* The process's start, as a FORK record of it would carry it. */
	snprintf(line, sizeof(line), "/proc/%u/stat", pid);
	stat_f = fopen(line, "r");
	assert_non_null(stat_f);
	assert_non_null(fgets(line, sizeof(line), stat_f));
	fclose(stat_f);
	assert_int_equal(sscanf(strrchr(line, ')') + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%*u %*u %*d %*d %*d %*d %*d %*d %llu", &start_ticks), 1);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 10000000000ull;

	processor__read_processes(proc, true);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid,
		  start_ticks * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK)));
	anon.start = a;
	anon.end = a + 0x3000;
	feed_mmap2(0, pid, &anon, t);
	map_append(path, "%llx 100 first\n%llx 100 second\n", a, a + 0x1000);
	ip = a + 0x10;
	feed_sample(pid, t + 1000000, &ip, 1); /* read: first */
	ip = a + 0x2000;
	feed_sample(pid, t + 2000000, &ip, 1); /* read again: nothing new */
	feed_sample(pid, t + 5000000, &ip, 1); /* quiet: no read */
	process_until(t + 6000000);
	map_append(path, "%llx %llx third\n", a + 0x2000, 0x100);
	feed_sample(pid, t + 10000000, &ip, 1); /* still quiet: unnamed */
	process_until(t + 11000000);
	/* The process maps over third's range: a read at the next sample. */
	anon.start = a + 0x2000;
	feed_mmap2(0, pid, &anon, t + 12000000);
	feed_sample(pid, t + 13000000, &ip, 1); /* read: third */
	process_until(t + 14000000);
	/* first's code is freed and rewritten: the mapping ends it, a new
	 * line names the new code. */
	anon.start = a;
	anon.end = a + 0x1000;
	feed_mmap2(0, pid, &anon, t + 20000000);
	map_append(path, "%llx %llx first_v2\n", a, 0x80);
	ip = a + 0x10;
	feed_sample(pid, t + 21000000, &ip, 1);
	ip = a + 0x1010;
	feed_sample(pid, t + 22000000, &ip, 1); /* second: untouched */
	feed(MS_CHUNK_END, 0, NULL, 0, t + 30000000);

	struct capture *c = finish();

	unlink(path);
	assert_int_equal(c->nsamples, 7);
	assert_string_equal(leaf_name(c, 0), "first");
	assert_string_equal(leaf_name(c, 1), "");
	assert_string_equal(leaf_name(c, 2), "");
	assert_string_equal(leaf_name(c, 3), ""); /* third was written, but quiet */
	assert_string_equal(leaf_name(c, 4), "third");
	assert_string_equal(leaf_name(c, 5), "first_v2");
	assert_string_equal(leaf_name(c, 6), "second");
	assert_int_equal(counter(c, "jit.reads"), 4);
	uint32_t fr = c->stacks[c->samples[0].stack].frame;

	assert_int_equal(c->modules[c->frames[fr].module].kind, CAPTURE_MODULE_JIT);
	snprintf(line, sizeof(line), "/tmp/perf-%u.map", pid);
	assert_string_equal(capture__string(c, c->modules[c->frames[fr].module].path), line);
	snprintf(line, sizeof(line), "jit.perf_map.%u", pid);
	assert_non_null(capture__meta(c, line));
	assert_int_equal(strncmp(capture__meta(c, line), "reading:", 8), 0);
	assert_int_equal(stack_names(c, 1, names, 8), 1);
	capture__free(c);
}

/* Append a jitdump record (id, time, body) to path; a header first when
 * the file is new. */
static void jd_append(const char *path, uint32_t id, uint64_t time, const void *body, uint32_t len)
{
	FILE *f = fopen(path, "a");
	uint32_t prefix[2] = { id, 16 + len };

	assert_non_null(f);
	if (ftell(f) == 0) {
		uint32_t h[6] = { 0x4A695444u, 1, 40, 62, 0, (uint32_t)getpid() };
		uint64_t h2[2] = { 1, 0 };

		fwrite(h, sizeof(h), 1, f);
		fwrite(h2, sizeof(h2), 1, f);
	}
	fwrite(prefix, sizeof(prefix), 1, f);
	fwrite(&time, sizeof(time), 1, f);
	fwrite(body, len, 1, f);
	fclose(f);
}

static void jd_append_load(const char *path, uint64_t time, uint64_t addr, uint64_t size,
			   const char *name)
{
	uint8_t body[512] = { 0 };
	uint32_t pid = (uint32_t)getpid(), len = 40 + (uint32_t)strlen(name) + 1 + (uint32_t)size;
	uint64_t idx = 1;

	assert_true(len <= sizeof(body));
	memcpy(body, &pid, 4);
	memcpy(body + 4, &pid, 4);
	memcpy(body + 8, &addr, 8);
	memcpy(body + 16, &addr, 8);
	memcpy(body + 24, &size, 8);
	memcpy(body + 32, &idx, 8);
	memcpy(body + 40, name, strlen(name) + 1);
	jd_append(path, 0 /* JIT_CODE_LOAD */, time, body, len);
}

/*
 * A jitdump writer that holds its records (V8 keeps 2 MiB in stdio until
 * it exits): frames no record read while recording names get rows of their
 * own, named when the capture is sealed from the whole file, by the load
 * that named their address over all their samples' times (a load written
 * late but made before the sample names it; a range rewritten between two
 * samples of one frame names neither).
 */
/*
 * A jitdump whose writer holds records back (V8's stdio buffer): "early" is
 * on disk before the samples, the rest is written after four samples were
 * processed.  Returns the samples' base time; *marker is the dump's path.
 */
static uint64_t jd_late_setup(struct exe_map *marker_out)
{
	uint32_t pid = (uint32_t)getpid();
	struct exe_map anon = { .path = "//anon" }, marker = { 0 };
	char line[256];
	FILE *stat_f;
	unsigned long long start_ticks = 0;
	struct timespec ts;
	uint64_t a = 0x7f0000100000ull, t, ip, ms = 1000000;

	snprintf(marker.path, sizeof(marker.path), "/tmp/jit-%u.dump", pid);
	unlink(marker.path);
	snprintf(line, sizeof(line), "/proc/%u/stat", pid);
	stat_f = fopen(line, "r");
	assert_non_null(stat_f);
	assert_non_null(fgets(line, sizeof(line), stat_f));
	fclose(stat_f);
	assert_int_equal(sscanf(strrchr(line, ')') + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%*u %*u %*d %*d %*d %*d %*d %*d %llu", &start_ticks), 1);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + 10000000000ull;

	processor__read_processes(proc, true);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, pid, 1, pid,
		  start_ticks * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK)));
	jd_append_load(marker.path, t, a, 0x100, "early");
	marker.start = 0x7f0000900000ull;
	marker.end = marker.start + 0x1000;
	feed_mmap2(0, pid, &marker, t);
	anon.start = a;
	anon.end = a + 0x3000;
	feed_mmap2(0, pid, &anon, t);
	ip = a + 0x10;
	feed_sample(pid, t + 1 * ms, &ip, 1); /* read: early */
	ip = a + 0x1010;
	feed_sample(pid, t + 2 * ms, &ip, 1); /* read: nothing yet */
	ip = a + 0x2010;
	feed_sample(pid, t + 3 * ms, &ip, 1);
	feed_sample(pid, t + 4 * ms, &ip, 1);
	process_until(t + 5 * ms);
	/* What the writer held: made before the samples, written after. */
	jd_append_load(marker.path, t + 1500000, a + 0x1000, 0x100, "buffered");
	jd_append_load(marker.path, t + 2500000, a + 0x2000, 0x100, "c_old");
	jd_append_load(marker.path, t + 3500000, a + 0x2000, 0x100, "c_new");
	*marker_out = marker;
	return t;
}

static void test_jit_jitdump_late(void **state)
{
	uint32_t pid = (uint32_t)getpid();
	struct exe_map marker;
	char line[256];
	uint64_t a = 0x7f0000100000ull, ms = 1000000, t = jd_late_setup(&marker);

	feed(MS_CHUNK_END, 0, NULL, 0, t + 30 * ms);

	struct capture *c = finish();

	unlink(marker.path);
	assert_int_equal(c->nsamples, 4);
	assert_string_equal(leaf_name(c, 0), "early");
	assert_string_equal(leaf_name(c, 1), "buffered");
	assert_string_equal(leaf_name(c, 2), ""); /* c_old, then c_new */
	assert_string_equal(leaf_name(c, 3), "");
	assert_int_equal(counter(c, "jit.late_named"), 1);
	assert_int_equal(counter(c, "jit.late_unnamed"), 1);
	uint32_t fr = c->stacks[c->samples[1].stack].frame;

	assert_int_equal(c->frames[fr].line, 0);
	assert_int_equal(c->modules[c->frames[fr].module].kind, CAPTURE_MODULE_JIT);
	snprintf(line, sizeof(line), "jit-%u.dump", pid);
	assert_string_equal(capture__string(c, c->modules[c->frames[fr].module].path), line);
	fr = c->stacks[c->samples[2].stack].frame;
	assert_int_equal(c->frames[fr].module, CAPTURE_NONE);
	assert_int_equal(c->frames[fr].line, 0);
	assert_int_equal(c->frames[fr].address, a + 0x2010);
	capture__free(c);
}

/* Before a segment is cut (continuous mode), the frames waiting for jitdump
 * records are named from the file as it is then: the segment keeps the
 * names, not only the capture sealed at the end. */
static void test_jit_jitdump_named_before_a_cut(void **state)
{
	struct exe_map marker;
	uint64_t ms = 1000000, t = jd_late_setup(&marker);
	struct capture *c;
	void *buf;
	size_t len;
	char err[256];

	for (int named = 0; named < 2; named++) {
		if (named)
			assert_int_equal(processor__name_late(proc), 0);
		assert_int_equal(capture_builder__serialize(builder, &buf, &len), 0);
		assert_int_equal(capture__open_mem(buf, len, "segment", &c, err, sizeof(err)), 0);
		free(buf);
		assert_int_equal(c->nsamples, 4);
		assert_string_equal(leaf_name(c, 0), "early");
		assert_string_equal(leaf_name(c, 1), named ? "buffered" : "");
		capture__free(c);
	}
	feed(MS_CHUNK_END, 0, NULL, 0, t + 30 * ms);
	c = finish();
	unlink(marker.path);
	assert_string_equal(leaf_name(c, 1), "buffered");
	capture__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_order_and_symbols, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_budget_keeps_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_drops_mappings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_id_layouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_perf_record_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sideband_sample_types, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_module_frames_say_why, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forked_child_inherits_mappings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_process_info_and_inheritance, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sample_on_exit_path_is_the_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_counted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_held_budget_drops_whole_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duty_changes_weight_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_interval_keeps_its_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_waker_on_its_exit_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_python_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_python_frames_unplaced_and_unreadable, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_fp_chain_left_code, setup, teardown),
		cmocka_unit_test_setup_teardown(test_innermost_user_pc_not_return, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jit_perf_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jit_jitdump_late, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jit_jitdump_named_before_a_cut, setup, teardown),
	};
	return cmocka_run_group_tests_name("processor", tests, NULL, NULL);
}
