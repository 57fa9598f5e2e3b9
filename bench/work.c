// SPDX-License-Identifier: MIT
/*
 * work: the benchmark's fixed-work CPU-bound target (bench/run.py).
 *
 * The same number of xorshift steps on every run (about 1 s of CPU at
 * MS_FIXTURE_SCALE=1 on a 2020s x86-64 core; the amount, not the time, is
 * fixed), spread over three leaves at the bottom of a recursive descent 8..23
 * frames deep, so a profiler has real stacks to walk (about 26 frames with
 * the libc start-up frames) and 48 distinct ones to store.  Built with frame
 * pointers, so both frame-pointer and DWARF call graphs see every caller.
 *
 * At the end it reports its own process CPU time (CLOCK_PROCESS_CPUTIME_ID,
 * which a profiler's in-kernel work on its behalf is charged to) and its own
 * wall time from the first line of main, so neither includes the recorder's
 * start-up or shutdown:
 *	work cpu_ns=N wall_ns=N steps=N
 * appended to the file named by $MS_FIXTURE_OUT, or to stdout when unset
 * (the convention of tests/fixtures/fixture.h).  MS_FIXTURE_SCALE=0 does no
 * work at all: the recorders' fixed start-up cost is measured with it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOIPA __attribute__((noipa))
#define ROUNDS 240
/* xorshift steps per round at scale 1, split 3:2:1 over leaf_a/b/c. */
#define ROUND_STEPS 2400000ull

static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mix(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

/* The volatile slot gives each leaf a real frame (push %rbp; mov %rsp,%rbp)
 * even at -O2, as in tests/fixtures/ratio.c. */
#define LEAF(name)                                          \
	NOIPA uint64_t name(uint64_t n, uint64_t x)          \
	{                                                   \
		volatile uint64_t after[2];                 \
		for (uint64_t i = 0; i < n; i++)            \
			x = mix(x);                         \
		after[0] = x;                               \
		after[1] = x >> 1;                          \
		sink ^= after[0] + after[1];                \
		return x + 1;                               \
	}

LEAF(leaf_a)
LEAF(leaf_b)
LEAF(leaf_c)

/* Recurse @depth more frames, then run one leaf.  The store after the call
 * keeps it from being a tail call, so every level stays on the stack. */
NOIPA uint64_t descend(int depth, int which, uint64_t n, uint64_t x)
{
	volatile uint64_t slot = x;
	uint64_t r;

	if (depth > 0)
		r = descend(depth - 1, which, n, x);
	else if (which == 0)
		r = leaf_a(n, x);
	else if (which == 1)
		r = leaf_b(n, x);
	else
		r = leaf_c(n, x);
	slot ^= r;
	return r ^ (slot & 0);
}

NOIPA uint64_t round_of_work(int r, uint64_t steps, uint64_t x)
{
	int depth = 8 + r % 16;

	x = descend(depth, 0, 3 * steps, x);
	x = descend(depth, 1, 2 * steps, x);
	x = descend(depth, 2, steps, x);
	return x;
}

int main(void)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	const char *s = getenv("MS_FIXTURE_SCALE"), *path = getenv("MS_FIXTURE_OUT");
	double scale = s ? strtod(s, NULL) : 1.0;
	uint64_t steps = 0, x = 88172645463325252ull;
	FILE *f = stdout;

	if (!(scale >= 0))
		scale = 1.0;
	steps = (uint64_t)(ROUND_STEPS / 6 * scale);
	for (int r = 0; steps && r < ROUNDS; r++)
		x = round_of_work(r, steps, x);
	sink ^= x;

	uint64_t cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID), wall = clock_ns(CLOCK_MONOTONIC) - t0;

	if (path && *path && !(f = fopen(path, "a"))) {
		perror(path);
		return 70;
	}
	fprintf(f, "work cpu_ns=%llu wall_ns=%llu steps=%llu\n", (unsigned long long)cpu,
		(unsigned long long)wall, (unsigned long long)(steps * 6 * ROUNDS));
	fclose(f);
	return 0;
}
