// SPDX-License-Identifier: MIT
/*
 * gen_capture: write a synthetic capture for timing `microscope report`
 * (bench/run.py).
 *
 *	gen_capture OUT.msc [SAMPLES [STACKS [FUNCTIONS [THREADS]]]]
 *
 * Defaults: 1,000,000 samples over 20,000 distinct stacks of depth 10..40
 * built from 2,000 function names (1,800 user, 200 kernel), on 64 threads
 * of 8 processes.  Stacks share prefixes the way real ones do: each new
 * stack is an earlier one cut at a random depth and extended with random
 * frames (a quarter of them end in a kernel tail of 2..6 frames).  Sample
 * stacks follow a skewed distribution (a few hot stacks, a long tail).
 * Everything comes from a fixed-seed xorshift generator through the capture
 * builder, so the same arguments always give the same bytes.
 *
 * Prints one line: "gen_capture samples=N stacks=N stack_rows=N frames=N
 * threads=N bytes=N build_s=X" (stack_rows: prefix-tree rows as read back;
 * build_s: CPU seconds to add the rows and write the file).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capture/capture.h"

#define MIN_DEPTH 10
#define MAX_DEPTH 40
#define ROOT_FRAMES 3 /* _start, __libc_start_main, main */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Uniform in [0, n). */
static uint32_t below(uint32_t n)
{
	return (uint32_t)((next() >> 11) % n);
}

static double unit(void)
{
	return (double)(next() >> 11) / (double)(1ull << 53);
}

static unsigned long parse(const char *s, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v) {
		fprintf(stderr, "gen_capture: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	uint32_t nsamples = 1000000, nstacks = 20000, nfuncs = 2000, nthreads = 64;
	uint32_t nprocs = 8, nkfuncs, nufuncs;
	struct capture_builder *b;
	struct timespec t0, t1;
	char name[128];

	if (argc < 2 || argc > 6) {
		fprintf(stderr, "usage: gen_capture OUT.msc [SAMPLES [STACKS [FUNCTIONS [THREADS]]]]\n");
		return 2;
	}
	if (argc > 2)
		nsamples = parse(argv[2], "sample count");
	if (argc > 3)
		nstacks = parse(argv[3], "stack count");
	if (argc > 4)
		nfuncs = parse(argv[4], "function count");
	if (argc > 5)
		nthreads = parse(argv[5], "thread count");
	if (nfuncs < 20) {
		fprintf(stderr, "gen_capture: need at least 20 functions\n");
		return 2;
	}
	if (nthreads < nprocs)
		nprocs = nthreads;
	nkfuncs = nfuncs / 10;
	nufuncs = nfuncs - nkfuncs;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	b = capture_builder__new();
	if (!b) {
		perror("gen_capture");
		return 1;
	}

	/* Modules: the program, one library, the kernel. */
	struct capture_module mod = {
		.path = capture_builder__string(b, "/usr/bin/synthetic"),
		.build_id = capture_builder__string(b, "0123456789abcdef0123456789abcdef01234567"),
		.kind = CAPTURE_MODULE_FILE,
		.flags = CAPTURE_MODULE_F_SYMBOLIZED,
		.size = 4u << 20,
	};
	uint32_t m_exe = capture_builder__add_module(b, &mod);
	mod.path = capture_builder__string(b, "/usr/lib/x86_64-linux-gnu/libsynthetic.so.1");
	mod.build_id = capture_builder__string(b, "fedcba9876543210fedcba9876543210fedcba98");
	uint32_t m_lib = capture_builder__add_module(b, &mod);
	mod.path = capture_builder__string(b, "[kernel.kallsyms]");
	mod.build_id = capture_builder__string(b, "00112233445566778899aabbccddeeff00112233");
	mod.kind = CAPTURE_MODULE_KERNEL;
	mod.size = 0;
	uint32_t m_kernel = capture_builder__add_module(b, &mod);

	/* Processes, their mappings, threads. */
	uint32_t *threads = calloc(nthreads, sizeof(*threads));
	uint32_t *procs = calloc(nprocs, sizeof(*procs));
	if (!threads || !procs) {
		perror("gen_capture");
		return 1;
	}
	for (uint32_t p = 0; p < nprocs; p++) {
		snprintf(name, sizeof(name), "synth-%u", p);
		struct capture_process pr = {
			.pid = 10000 + p * 100,
			.ppid = 1,
			.start_time_ns = 1000000000ull + p,
			.comm = capture_builder__string(b, name),
			.exe = capture_builder__string(b, "/usr/bin/synthetic"),
		};
		procs[p] = capture_builder__add_process(b, &pr);
		struct capture_mapping mp = { .process = procs[p], .module = m_exe,
					      .start = 0x555555554000ull, .end = 0x555555954000ull,
					      .time_ns = pr.start_time_ns };
		capture_builder__add_mapping(b, &mp);
		mp.module = m_lib;
		mp.start = 0x7ffff7a00000ull;
		mp.end = 0x7ffff7e00000ull;
		capture_builder__add_mapping(b, &mp);
	}
	for (uint32_t t = 0; t < nthreads; t++) {
		uint32_t p = t % nprocs;

		snprintf(name, sizeof(name), "worker-%u", t / nprocs);
		struct capture_thread th = {
			.tid = 10000 + p * 100 + t / nprocs,
			.ns_tid = 10000 + p * 100 + t / nprocs,
			.process = procs[p],
			.comm = capture_builder__string(b, t < nprocs ? "synthetic" : name),
		};
		threads[t] = capture_builder__add_thread(b, &th);
	}

	/* Frames: one per function.  The first ROOT_FRAMES are the roots of
	 * every stack; user functions are split between program and library. */
	uint32_t *frames = calloc(nfuncs, sizeof(*frames));
	if (!frames) {
		perror("gen_capture");
		return 1;
	}
	for (uint32_t f = 0; f < nfuncs; f++) {
		struct capture_frame fr = { 0 };

		if (f == 0) {
			snprintf(name, sizeof(name), "_start");
		} else if (f == 1) {
			snprintf(name, sizeof(name), "__libc_start_main");
		} else if (f == 2) {
			snprintf(name, sizeof(name), "main");
		} else if (f < nufuncs) {
			snprintf(name, sizeof(name), "%s_%04u_%s", f % 3 ? "app" : "lib", f,
				 f % 7 ? "process_items" : "std::vector<int>::push_back");
		} else {
			snprintf(name, sizeof(name), "kfunc_%04u_handler", f - nufuncs);
		}
		if (f >= nufuncs) {
			fr.module = m_kernel;
			fr.flags = CAPTURE_FRAME_F_KERNEL;
			fr.address = 0xffffffff81000000ull + (uint64_t)f * 0x140;
		} else {
			fr.module = (f % 3 && f != 1) ? m_exe : m_lib;
			fr.address = 0x1000 + (uint64_t)f * 0x80;
			snprintf(name + 64, 64, "src/file_%u.c", f / 40);
			fr.file = capture_builder__string(b, name + 64);
			fr.line = 10 + f % 500;
		}
		fr.function = capture_builder__string(b, name);
		frames[f] = capture_builder__add_frame(b, &fr);
	}

	/* Stacks: paths of frame indexes, root first; the leaf row id names a
	 * stack.  Duplicates (a leaf row seen before) are redrawn. */
	uint32_t (*paths)[MAX_DEPTH] = calloc(nstacks, sizeof(*paths));
	uint8_t *depths = calloc(nstacks, 1);
	uint32_t *leaves = calloc(nstacks, sizeof(*leaves));
	size_t seen_cap = 1u << 20;
	uint8_t *seen = calloc(seen_cap, 1);
	if (!paths || !depths || !leaves || !seen) {
		perror("gen_capture");
		return 1;
	}
	uint32_t redraws = 0;
	for (uint32_t s = 0; s < nstacks;) {
		uint32_t depth = MIN_DEPTH + below(MAX_DEPTH - MIN_DEPTH + 1), keep = ROOT_FRAMES;
		uint32_t *path = paths[s];

		path[0] = 0, path[1] = 1, path[2] = 2;
		if (s > 0 && unit() < 0.85) {
			uint32_t from = below(s);

			uint32_t user = ROOT_FRAMES; /* the source's frames above its kernel tail */

			while (user < depths[from] && paths[from][user] < nufuncs)
				user++;
			keep = ROOT_FRAMES + below(user - ROOT_FRAMES + 1);
			if (keep >= depth)
				keep = depth - 1;
			memcpy(path, paths[from], keep * sizeof(*path));
		}
		uint32_t ktail = unit() < 0.25 ? 2 + below(5) : 0;
		for (uint32_t i = keep; i < depth; i++) {
			if (i >= depth - ktail && i >= ROOT_FRAMES)
				path[i] = nufuncs + below(nkfuncs);
			else /* user frames: a few hot helpers, a long tail */
				path[i] = ROOT_FRAMES +
					  (uint32_t)((nufuncs - ROOT_FRAMES) * unit() * unit());
		}
		uint32_t row = CAPTURE_NONE;
		for (uint32_t i = 0; i < depth; i++)
			row = capture_builder__add_stack(b, row, frames[path[i]]);
		if (row == CAPTURE_NONE)
			break; /* out of memory: write reports it */
		while (row >= seen_cap * 8) {
			uint8_t *n = realloc(seen, seen_cap * 2);
			if (!n) {
				perror("gen_capture");
				return 1;
			}
			memset(n + seen_cap, 0, seen_cap);
			seen = n;
			seen_cap *= 2;
		}
		if (seen[row / 8] & (1u << (row % 8))) {
			if (++redraws > 1000000) {
				fprintf(stderr, "gen_capture: cannot draw %u distinct stacks\n", nstacks);
				return 1;
			}
			continue;
		}
		seen[row / 8] |= 1u << (row % 8);
		depths[s] = depth;
		leaves[s++] = row;
	}

	struct capture_event ev = {
		.name = capture_builder__string(b, "cpu-clock"),
		.unit = capture_builder__string(b, "samples"),
		.period = 1001001,
	};
	uint32_t event = capture_builder__add_event(b, &ev);
	uint64_t t_ns = 2000000000ull, step = 1001001ull / (nthreads > 8 ? 8 : nthreads);
	for (uint32_t i = 0; i < nsamples; i++) {
		double u = unit();
		struct capture_sample sm = {
			.time_ns = t_ns + (uint64_t)i * step,
			.thread = threads[below(nthreads)],
			.cpu = below(8),
			.stack = leaves[(uint32_t)(nstacks * u * u * u)],
			.event = event,
			.weight = 1,
		};
		capture_builder__add_sample(b, &sm);
	}

	char v[64];
	capture_builder__set_meta(b, "command", "synthetic (bench/gen_capture)");
	capture_builder__set_meta(b, "freq_hz", "999");
	capture_builder__set_meta(b, "requested_freq_hz", "999");
	capture_builder__set_meta(b, "call_graph", "fp");
	capture_builder__set_meta(b, "stack_size", "0");
	capture_builder__set_meta(b, "preset", "synthetic");
	snprintf(v, sizeof(v), "%u", nsamples);
	capture_builder__set_meta(b, "samples", v);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)nsamples * step);
	capture_builder__set_meta(b, "duration_ns", v);
	capture_builder__add_counter(b, "bpf.lost_samples", 0);

	int err = capture_builder__write(b, argv[1]);
	if (err) {
		fprintf(stderr, "gen_capture: %s: %s %s\n", argv[1], strerror(-err),
			capture_builder__error(b));
		return 1;
	}
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);

	/* Read it back: the row counts the reader validated. */
	struct capture *c = NULL;
	struct stat st;
	char msg[256];

	if (stat(argv[1], &st))
		st.st_size = 0;
	err = capture__open(argv[1], &c, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "gen_capture: cannot read back %s: %s\n", argv[1], msg);
		return 1;
	}
	printf("gen_capture samples=%u stacks=%u stack_rows=%u frames=%u threads=%u bytes=%lld "
	       "build_s=%.3f\n",
	       c->nsamples, nstacks, c->nstacks, c->nframes, c->nthreads, (long long)st.st_size,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	capture__free(c);
	capture_builder__free(b);
	free(threads);
	free(procs);
	free(frames);
	free(paths);
	free(depths);
	free(leaves);
	free(seen);
	return 0;
}
