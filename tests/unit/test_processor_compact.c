// SPDX-License-Identifier: MIT
/*
 * processor__compact (userspace/processor/compact.c): a long recording cut
 * into segments keeps only what live processes need.  A synthetic stream of
 * process churn (each segment: 40 short processes that exec, map the test
 * binary, start and end a thread, take a sample and exit) goes through the
 * real processor; after each segment is moved out (capture_builder__take)
 * the processor compacts.  The state it holds (processes, threads,
 * mappings, modules only the children mapped, builder rows) must be the same after the
 * 3rd and the 30th segment (counts, not time), and every segment must
 * still name its samples right after the ids were rewritten.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "bpf/abi/records.h"
#include "capture/capture.h"
#include "capture/merge.h"
#include "userspace/processor/processor.h"
#include "userspace/stream/perf_records.h"
#include "userspace/stream/stream.h"
#include "self_maps.h"

#define CHURN_PER_SEGMENT 40
#define SEGMENT_NS 1000000ull
#define ROOT_PID 500

__attribute__((noinline, optimize("no-omit-frame-pointer"))) int compact_marker_one(int x)
{
	volatile int v = x;

	return v * 3 + 1;
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) int compact_marker_two(int x)
{
	volatile int v = x;

	return v * 5 + 2;
}

static struct processor *proc;
static struct capture_builder *builder;
static struct symbolizer *symz;
static struct perf_sample_id_layout sideband;

static void feed(uint32_t kind, uint32_t source, const void *payload, uint32_t len, uint64_t time)
{
	struct ms_chunk c = { .kind = kind, .source = source, .len = len, .time = time };

	assert_int_equal(processor__sink(proc, &c, payload), 0);
}

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

static void feed_comm(uint32_t pid, const char *comm, uint64_t time)
{
	uint8_t buf[128];
	struct perf_sample_id id = { .pid = pid, .tid = pid, .time = time };

	feed_built(3, buf,
		   perf_rec__build_comm(buf, sizeof(buf), &sideband, PERF_RECORD_MISC_COMM_EXEC, pid,
					pid, comm, &id));
}

static void feed_sample(uint32_t pid, uint32_t tid, uint64_t time, uint64_t ip)
{
	union {
		struct ms_sample s;
		uint8_t b[sizeof(struct ms_sample) + 8];
	} u;

	memset(&u, 0, sizeof(u));
	u.s.hdr.type = MS_REC_SAMPLE;
	u.s.hdr.size = sizeof(struct ms_sample) + 8;
	u.s.time_ns = time;
	u.s.pid = pid;
	u.s.tid = tid;
	u.s.period = 1001001;
	u.s.arch = MS_ARCH_X86_64;
	u.s.ustack_len = 1;
	u.s.ips[0] = ip;
	feed(MS_CHUNK_BPF, 0, &u, u.s.hdr.size, 0);
}

static int setup(void **state)
{
	(void)state;
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &sideband);
	builder = capture_builder__new();
	symz = symbolizer__new();
	proc = processor__new(builder, symz);
	return !(builder && symz && proc);
}

static int teardown(void **state)
{
	(void)state;
	processor__free(proc);
	symbolizer__free(symz);
	capture_builder__free(builder);
	return 0;
}

/* One segment of churn: children pid0.. of ROOT_PID, each with a thread. */
static void churn(const struct exe_map *m, const struct exe_map *lib, uint32_t pid0, uint64_t t0)
{
	uint64_t one = (uint64_t)(uintptr_t)compact_marker_one + 1;
	uint64_t two = (uint64_t)(uintptr_t)compact_marker_two + 1;
	char comm[16];

	for (uint32_t i = 0; i < CHURN_PER_SEGMENT; i++) {
		uint32_t pid = pid0 + 2 * i, tid = pid + 1;
		uint64_t t = t0 + 1000 + i * 20000;

		snprintf(comm, sizeof(comm), "child%u", pid % 7);
		feed_task(PERF_RECORD_FORK, 3, pid, ROOT_PID, pid, t);
		feed_comm(pid, comm, t + 1);
		feed_mmap2(3, pid, m, t + 2);
		feed_mmap2(3, pid, lib, t + 2); /* only the children map it */
		feed_task(PERF_RECORD_FORK, 3, pid, pid, tid, t + 3);
		feed_sample(pid, tid, t + 4, i & 1 ? two : one);
		feed_task(PERF_RECORD_EXIT, 3, pid, pid, tid, t + 5);
		feed_task(PERF_RECORD_EXIT, 3, pid, ROOT_PID, pid, t + 6);
	}
	/* the long-lived root samples too */
	feed_sample(ROOT_PID, ROOT_PID, t0 + SEGMENT_NS - 10, one);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, t0 + SEGMENT_NS);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, t0 + SEGMENT_NS + 1);
}

static const char *leaf(const struct capture *c, uint32_t sample)
{
	uint32_t st = c->samples[sample].stack;

	return capture__string(c, c->frames[c->stacks[st].frame].function);
}

/* The segment just moved out names every sample and process right. */
static void check_segment(struct capture_builder *seg, uint32_t pid0)
{
	struct capture c;
	uint32_t root = 0;

	assert_int_equal(capture_builder__view(seg, &c), 0);
	assert_int_equal(c.nsamples, CHURN_PER_SEGMENT + 1);
	for (uint32_t i = 0; i < c.nsamples; i++) {
		const struct capture_thread *th = &c.threads[c.samples[i].thread];
		const struct capture_process *pr = &c.processes[th->process];

		if (pr->pid == ROOT_PID) {
			root++;
			assert_string_equal(leaf(&c, i), "compact_marker_one");
			continue;
		}
		assert_true(pr->pid >= pid0 && pr->pid < pid0 + 2 * CHURN_PER_SEGMENT);
		assert_int_equal(th->tid, pr->pid + 1);
		assert_int_equal(pr->ppid, ROOT_PID);
		assert_string_equal(leaf(&c, i), (pr->pid - pid0) / 2 & 1 ? "compact_marker_two"
									 : "compact_marker_one");
		assert_int_equal(strncmp(capture__string(&c, pr->comm), "child", 5), 0);
	}
	assert_int_equal(root, 1);
}

static void test_state_flat_under_churn(void **state)
{
	struct processor_state third = { 0 }, st;
	struct exe_map m, lib;
	uint64_t grown_rows = 0;

	(void)state;
	find_map(compact_marker_one, &m);
	find_map((void *)fclose, &lib); /* libc's code */
	assert_string_not_equal(m.path, lib.path);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, ROOT_PID, 1, ROOT_PID, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, ROOT_PID, &m, 10);
	for (uint32_t k = 0; k < 30; k++) {
		uint32_t pid0 = 1000 + k * 2 * CHURN_PER_SEGMENT;
		struct capture_builder *seg = capture_builder__new();
		struct capture v;

		assert_non_null(seg);
		churn(&m, &lib, pid0, (k + 1) * SEGMENT_NS);
		assert_int_equal(capture_builder__take(builder, seg, UINT64_MAX), 0);
		check_segment(seg, pid0);
		capture_builder__free(seg);
		/* before compacting, the builder still holds every dead process */
		assert_int_equal(capture_builder__view(builder, &v), 0);
		if (k == 0)
			assert_true(v.nprocesses >= CHURN_PER_SEGMENT);
		processor__state(proc, &st);
		assert_int_equal(st.modules, 2);
		if (!grown_rows)
			grown_rows = st.rows;
		assert_int_equal(processor__compact(proc), 0);
		processor__state(proc, &st);
		/* only the root lives on: one process, one thread, its mapping */
		assert_int_equal(st.processes, 1);
		assert_int_equal(st.threads, 1);
		assert_int_equal(st.mappings, 1);
		assert_int_equal(st.modules, 1); /* libc's went with the children */
		assert_true(st.rows < grown_rows);
		assert_int_equal(capture_builder__view(builder, &v), 0);
		assert_int_equal(v.nsamples, 0);
		assert_int_equal(v.nprocesses, 1);
		assert_int_equal(v.nthreads, 1);
		assert_int_equal(v.nframes, 0);
		assert_int_equal(v.nstacks, 0);
		if (k == 2)
			third = st;
		if (k > 2)
			assert_memory_equal(&st, &third, sizeof(st));
	}
}

/* A sample not cut yet keeps its rows through a compaction. */
static void test_pending_sample_survives(void **state)
{
	uint64_t one = (uint64_t)(uintptr_t)compact_marker_one + 1;
	struct capture_builder *seg = capture_builder__new();
	struct exe_map m;
	struct capture v;

	(void)state;
	assert_non_null(seg);
	find_map(compact_marker_one, &m);
	feed_task(PERF_RECORD_FORK, MS_SOURCE_SNAPSHOT, ROOT_PID, 1, ROOT_PID, 10);
	feed_mmap2(MS_SOURCE_SNAPSHOT, ROOT_PID, &m, 10);
	feed_task(PERF_RECORD_FORK, 3, 700, ROOT_PID, 700, 20);
	feed_sample(700, 700, 30, one);
	feed_task(PERF_RECORD_EXIT, 3, 700, ROOT_PID, 700, 40);
	feed_sample(ROOT_PID, ROOT_PID, 200, one);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1000);
	feed(MS_CHUNK_ROUND, 0, NULL, 0, 1001);
	/* the segment ends at 100: the root's sample at 200 stays behind */
	assert_int_equal(capture_builder__take(builder, seg, 100), 0);
	assert_int_equal(processor__compact(proc), 0);
	feed_sample(ROOT_PID, ROOT_PID, 300, one);
	feed(MS_CHUNK_END, 0, NULL, 0, 2000);
	assert_int_equal(processor__finish(proc), 0);
	assert_int_equal(capture_builder__view(builder, &v), 0);
	assert_int_equal(v.nsamples, 2);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(v.processes[v.threads[v.samples[i].thread].process].pid, ROOT_PID);
		assert_string_equal(leaf(&v, i), "compact_marker_one");
	}
	/* the exited process went with the segment that needed it */
	for (uint32_t i = 0; i < v.nprocesses; i++)
		assert_int_not_equal(v.processes[i].pid, 700);
	assert_int_equal(v.samples[0].stack, v.samples[1].stack); /* one interned stack */
	capture_builder__free(seg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_state_flat_under_churn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_sample_survives, setup, teardown),
	};
	return cmocka_run_group_tests_name("processor_compact", tests, NULL, NULL);
}
