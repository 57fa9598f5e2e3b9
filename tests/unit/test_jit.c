// SPDX-License-Identifier: MIT
/*
 * Code with no file (userspace/runtimes/): the JIT function table (later
 * lines replace what they overlap, mappings end what was read before them,
 * the code budget), the perf map parser (lines, malformed lines, lines cut
 * across reads, over-long lines) and reader (incremental reads, a map made
 * before its process, symlinks and FIFOs refused), and the jitdump parser
 * (records, damaged files, the marker mapping).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/runtimes/jit_funcs.h"
#include "userspace/runtimes/jit_policy.h"
#include "userspace/runtimes/jit_proc.h"
#include "userspace/runtimes/jitdump.h"
#include "userspace/runtimes/perf_map.h"

static const char *name_at(const struct jit_funcs *f, uint64_t addr)
{
	const struct jit_fn *fn = jit_funcs__find(f, addr, 0);

	return fn ? jit_funcs__name(f, fn) : NULL;
}

static void feed(struct perf_map *m, struct jit_funcs *f, const char *text, uint64_t read_ns)
{
	assert_true(perf_map__parse(m, f, text, strlen(text), read_ns) >= 0);
	assert_true(jit_funcs__commit(f) >= 0);
}

/* ---- perf map lines ------------------------------------------------------- */

static void test_lines(void **state)
{
	struct perf_map m;
	struct jit_funcs f;
	const char *text = "1000 10 first\n"
			   "0x2000 0x20 JS:*fib app.js:1:13\n" /* 0x prefixes, spaces in the name */
			   "3000\t8\tLazyCompile:~run\r\n"	   /* tabs, CRLF */
			   "4000 10\n"			   /* no name */
			   "5000 zz bad size\n"
			   "12345678901234567 10 seventeen digits\n"
			   "\n"
			   "6000 0 zero size\n"
			   "7000 ffffffffffff huge\n"
			   "fffffffffffffff0 20 wraps\n"
			   "8000 4 last";

	perf_map__init(&m);
	jit_funcs__init(&f);
	/* The incomplete last line is left for the next read. */
	assert_int_equal(perf_map__parse(&m, &f, text, strlen(text), 1),
			 strlen(text) - strlen("8000 4 last"));
	assert_int_equal(m.offset, strlen(text) - strlen("8000 4 last"));
	assert_int_equal(jit_funcs__commit(&f), 3);
	assert_string_equal(name_at(&f, 0x1000), "first");
	assert_string_equal(name_at(&f, 0x100f), "first");
	assert_null(name_at(&f, 0x1010)); /* end is exclusive */
	assert_null(name_at(&f, 0xfff));
	assert_string_equal(name_at(&f, 0x201f), "JS:*fib app.js:1:13");
	assert_string_equal(name_at(&f, 0x3007), "LazyCompile:~run");
	assert_int_equal(f.problems[JIT_PROBLEM_MALFORMED], 4); /* no name, zz, 17 digits, empty */
	assert_int_equal(f.problems[JIT_PROBLEM_HUGE], 3);	/* zero, over the limit, wraps */
	assert_int_equal(m.lines, 10);
	/* The writer finishes the line; the next read starts at m.offset. */
	feed(&m, &f, "8000 4 last\n", 2);
	assert_string_equal(name_at(&f, 0x8003), "last");
	jit_funcs__release(&f);
}

/* A line cut anywhere across two reads gives the same function. */
static void test_cut_lines(void **state)
{
	const char *text = "abc000 40 JS:~handler server.js:10:3\n";

	for (size_t cut = 0; cut <= strlen(text); cut++) {
		struct perf_map m;
		struct jit_funcs f;
		ssize_t used;

		perf_map__init(&m);
		jit_funcs__init(&f);
		used = perf_map__parse(&m, &f, text, cut, 1);
		assert_int_equal(used, cut == strlen(text) ? (ssize_t)cut : 0);
		assert_true(perf_map__parse(&m, &f, text + used, strlen(text) - (size_t)used, 1) >= 0);
		assert_int_equal(jit_funcs__commit(&f), 1);
		assert_string_equal(name_at(&f, 0xabc03f), "JS:~handler server.js:10:3");
		assert_int_equal(f.problems[JIT_PROBLEM_MALFORMED], 0);
		jit_funcs__release(&f);
	}
}

/* An over-long line is skipped up to its newline, even across reads. */
static void test_long_line(void **state)
{
	size_t len = JIT_LINE_MAX + 100;
	char *buf = malloc(len + 64);
	struct perf_map m;
	struct jit_funcs f;

	perf_map__init(&m);
	jit_funcs__init(&f);
	memcpy(buf, "1000 10 ", 8);
	memset(buf + 8, 'x', len - 8);
	/* First read: only the first JIT_LINE_MAX + 10 bytes of the long line. */
	assert_int_equal(perf_map__parse(&m, &f, buf, JIT_LINE_MAX + 10, 1), JIT_LINE_MAX + 10);
	assert_true(m.skipping);
	strcpy(buf + len, "\n2000 10 after\n");
	assert_true(perf_map__parse(&m, &f, buf + JIT_LINE_MAX + 10,
				    len - JIT_LINE_MAX - 10 + strlen("\n2000 10 after\n"), 1) > 0);
	assert_int_equal(jit_funcs__commit(&f), 1);
	assert_false(m.skipping);
	assert_null(name_at(&f, 0x1000));
	assert_string_equal(name_at(&f, 0x2000), "after");
	assert_int_equal(f.problems[JIT_PROBLEM_MALFORMED], 1);
	free(buf);
	jit_funcs__release(&f);
}

/* ---- the function table --------------------------------------------------- */

static void test_replace(void **state)
{
	struct perf_map m;
	struct jit_funcs f;

	perf_map__init(&m);
	jit_funcs__init(&f);
	feed(&m, &f,
	     "1000 100 a\n"
	     "2000 100 b\n"
	     "3000 100 c\n",
	     1);
	/* Same range: replaced.  Partial overlap of b's tail: b gone whole.
	 * Inside one batch: the later line wins over the earlier. */
	feed(&m, &f,
	     "1000 100 a2\n"
	     "2080 100 d\n"
	     "3000 10 e\n"
	     "3000 10 e2\n",
	     2);
	assert_string_equal(name_at(&f, 0x1000), "a2");
	assert_null(name_at(&f, 0x2000)); /* b's untouched head names nothing */
	assert_string_equal(name_at(&f, 0x2080), "d");
	assert_string_equal(name_at(&f, 0x217f), "d");
	assert_string_equal(name_at(&f, 0x3000), "e2");
	assert_null(name_at(&f, 0x3010)); /* c was replaced by e */
	assert_int_equal(f.n, 3);
	/* An earlier, larger function never survives a later one inside it. */
	feed(&m, &f, "0 10000 all\n900 2000 mid\n", 3);
	assert_string_equal(name_at(&f, 0x1000), "mid");
	assert_null(name_at(&f, 0x5000));
	assert_int_equal(f.n, 1);
	jit_funcs__release(&f);
}

/* ---- replacement in time (processing lag) ------------------------------- */

static struct { uint64_t start, end, time; } test_maps[8];
static uint32_t test_nmaps;
static bool test_maps_lost;

static int test_mapped(void *ctx, uint64_t start, uint64_t end, uint64_t after, uint64_t upto,
		       uint64_t *times, uint32_t max)
{
	int c = 0;

	(void)ctx;
	if (test_maps_lost)
		return -1;
	for (uint32_t i = 0; i < test_nmaps; i++) /* test_maps in time order */
		if (test_maps[i].start < end && test_maps[i].end > start &&
		    test_maps[i].time > after && test_maps[i].time <= upto) {
			if ((uint32_t)c < max)
				times[c] = test_maps[i].time;
			c++;
		}
	return c;
}

static const char *name_then(const struct jit_funcs *f, uint64_t addr, uint64_t t)
{
	const struct jit_fn *fn = jit_funcs__find(f, addr, t);

	return fn ? jit_funcs__name(f, fn) : NULL;
}

/* A read at read_ns of lines written after since_ns. */
static void feed_after(struct jit_funcs *f, const char *text, uint64_t since_ns, uint64_t read_ns)
{
	struct perf_map m;

	perf_map__init(&m);
	m.since_ns = since_ns;
	feed(&m, f, text, read_ns);
}

static void test_replace_in_time(void **state)
{
	struct jit_funcs f;

	(void)state;
	jit_funcs__init(&f);
	f.mapped = test_mapped;
	/* The first read came after the rewrite (processing lagged): f1's
	 * range was mapped at 100 for f1 and at 300 for g1.  Before 300 it is
	 * f1, from 300 on g1, before 100 nothing; f2 any time. */
	test_nmaps = 0;
	test_maps[test_nmaps++] = (typeof(test_maps[0])){ 0x1000, 0x2000, 100 };
	test_maps[test_nmaps++] = (typeof(test_maps[0])){ 0x3000, 0x4000, 110 };
	test_maps[test_nmaps++] = (typeof(test_maps[0])){ 0x1000, 0x2000, 300 };
	feed_after(&f, "1000 10 f1\n3000 10 f2\n1000 10 g1\n", 0, 500);
	assert_null(name_then(&f, 0x1000, 50));
	assert_string_equal(name_then(&f, 0x1000, 150), "f1");
	assert_string_equal(name_then(&f, 0x1000, 299), "f1");
	assert_string_equal(name_then(&f, 0x1000, 300), "g1");
	assert_string_equal(name_then(&f, 0x1000, 900), "g1");
	assert_string_equal(name_then(&f, 0x3000, 50), "f2");
	assert_string_equal(name_then(&f, 0x1000, 0), "g1"); /* no time: the live one */
	jit_funcs__release(&f);

	/* One mapping for two lines of one read: which line it went with is
	 * not known, so the window names nothing, the last line from its read
	 * on; the range stays covered (counted unnamed, not misnamed). */
	jit_funcs__init(&f);
	f.mapped = test_mapped;
	test_nmaps = 1;
	feed_after(&f, "1000 10 f1\n1000 10 g1\n", 0, 500);
	assert_null(name_then(&f, 0x1000, 150));
	assert_null(name_then(&f, 0x1000, 499));
	assert_string_equal(name_then(&f, 0x1000, 500), "g1");
	assert_true(jit_funcs__covers(&f, 0x1000));
	jit_funcs__release(&f);

	/* Rewritten in place between two reads (no mapping): a names samples
	 * before the first read's end (100), b from its read (200) on. */
	jit_funcs__init(&f);
	f.mapped = test_mapped;
	test_nmaps = 0;
	feed_after(&f, "1000 10 a\n", 0, 100);
	feed_after(&f, "1000 10 b\n", 100, 200);
	assert_string_equal(name_then(&f, 0x1000, 50), "a");
	assert_null(name_then(&f, 0x1000, 150));
	assert_string_equal(name_then(&f, 0x1000, 250), "b");
	/* Rewritten after a mapping at 260 between reads at 250 and 300. */
	test_maps[test_nmaps++] = (typeof(test_maps[0])){ 0x1000, 0x1010, 260 };
	feed_after(&f, "1000 10 c\n", 250, 300);
	assert_string_equal(name_then(&f, 0x1000, 259), "b");
	assert_string_equal(name_then(&f, 0x1000, 260), "c");
	/* A mapping at 255 over b (read at 200), processed only after c
	 * replaced b (as when processing lags the reads): b names nothing
	 * from 255 on; c, read at 300, stays. */
	jit_funcs__map(&f, 0x1000, 0x1010, 255);
	assert_string_equal(name_then(&f, 0x1000, 254), "b");
	assert_null(name_then(&f, 0x1000, 257));
	assert_string_equal(name_then(&f, 0x1000, 265), "c");
	/* History before the floor goes at the next commit. */
	f.floor_ns = 280;
	feed_after(&f, "8000 10 x\n", 300, 400);
	assert_null(name_then(&f, 0x1000, 250));
	assert_string_equal(name_then(&f, 0x1000, 290), "c");
	jit_funcs__release(&f);

	/* Mappings lost from the record: nothing concluded from them. */
	jit_funcs__init(&f);
	f.mapped = test_mapped;
	test_maps_lost = true;
	feed_after(&f, "1000 10 a\n", 0, 100);
	feed_after(&f, "1000 10 b\n", 100, 200);
	assert_string_equal(name_then(&f, 0x1000, 50), "a");
	assert_null(name_then(&f, 0x1000, 150));
	assert_string_equal(name_then(&f, 0x1000, 200), "b");
	test_maps_lost = false;
	jit_funcs__release(&f);
}

/* Overlap by brute force: a function lives iff no later one overlaps it. */
static void test_replace_random(void **state)
{
	enum { N = 3000 };
	static uint64_t s[N], e[N];
	struct jit_funcs f;
	uint32_t rng = 12345;

	jit_funcs__init(&f);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N / 3; i++) {
			int k = round * (N / 3) + i;
			char name[32];

			rng = rng * 1103515245 + 12345;
			s[k] = (rng >> 8) % 100000;
			rng = rng * 1103515245 + 12345;
			e[k] = s[k] + 1 + (rng >> 8) % 300;
			snprintf(name, sizeof(name), "f%d", k);
			assert_int_equal(jit_funcs__add(&f, s[k], e[k] - s[k], name, strlen(name),
							1, 0, 0),
					 0);
		}
		assert_true(jit_funcs__commit(&f) >= 0);
	}
	uint32_t live = 0;

	for (int k = 0; k < N; k++) {
		bool alive = true;
		char name[32];

		for (int j = k + 1; j < N && alive; j++)
			if (s[j] < e[k] && s[k] < e[j])
				alive = false;
		if (!alive)
			continue;
		live++;
		snprintf(name, sizeof(name), "f%d", k);
		assert_string_equal(name_at(&f, s[k]), name);
		assert_string_equal(name_at(&f, e[k] - 1), name);
	}
	assert_int_equal(f.n, live);
	for (uint32_t i = 1; i < f.n; i++)
		assert_true(f.fns[i - 1].end <= f.fns[i].start);
	jit_funcs__release(&f);
}

static void test_mapping_ends(void **state)
{
	struct perf_map m;
	struct jit_funcs f;

	perf_map__init(&m);
	jit_funcs__init(&f);
	feed(&m, &f, "1000 100 old\n5000 100 kept\n", 100);
	feed(&m, &f, "2000 100 read_late\n", 300);
	/* A mapping at 200 over all three: old (read at 100) ends; read_late
	 * (read at 300, after the mapping) may already be the new code. */
	assert_int_equal(jit_funcs__map(&f, 0x1000, 0x2100, 200), 1);
	assert_null(name_at(&f, 0x1000));
	assert_string_equal(name_at(&f, 0x2000), "read_late");
	assert_string_equal(name_at(&f, 0x5000), "kept");
	/* The next read brings the new line for the remapped range. */
	feed(&m, &f, "1000 80 new\n", 400);
	assert_string_equal(name_at(&f, 0x1000), "new");
	assert_null(name_at(&f, 0x1090));
	jit_funcs__release(&f);
}

static void test_code_budget(void **state)
{
	struct jit_funcs f;
	uint64_t size = JIT_FUNC_SIZE_MAX / 2;
	uint32_t n = (uint32_t)(JIT_CODE_MAX / size);

	jit_funcs__init(&f);
	for (uint32_t i = 0; i <= n; i++)
		assert_int_equal(jit_funcs__add(&f, (i + 1) * size, size, "f", 1, 1, 0, 0), 0);
	assert_int_equal(jit_funcs__commit(&f), n + 1);
	/* The first n fit JIT_CODE_MAX; the last is named without code. */
	assert_false(jit_funcs__find(&f, n * size, 0)->flags & JIT_FN_NO_CODE);
	assert_true(jit_funcs__find(&f, (n + 1) * size, 0)->flags & JIT_FN_NO_CODE);
	assert_int_equal(f.problems[JIT_PROBLEM_NO_CODE], 1);
	assert_int_equal(f.code_bytes, n * size);
	jit_funcs__release(&f);
}

/* Names of replaced functions are reclaimed: a map rewriting one range
 * forever stays under JIT_NAMES_MAX without dropping a line. */
/* At JIT_FUNCS_MAX live functions a line is dropped and counted, not paid
 * for with a commit of the whole table per line (a 1.06M-line map read for
 * minutes); replacements still make room, one commit per JIT_FUNCS_ROOM. */
static void test_funcs_full(void **state)
{
	const uint32_t extra = 20000;
	struct jit_funcs f;
	char name[32];
	int len;

	jit_funcs__init(&f);
	for (uint32_t i = 0; i < JIT_FUNCS_MAX + extra; i++) {
		len = snprintf(name, sizeof(name), "fn%u", i);
		assert_int_equal(jit_funcs__add(&f, 0x10000 + 16ull * i, 16, name, (size_t)len, 1, 0, 0), 0);
	}
	/* One commit made room for the first JIT_FUNCS_MAX; the rest dropped. */
	assert_int_equal(f.commits, 1);
	assert_int_equal(f.n, JIT_FUNCS_MAX);
	assert_int_equal(f.problems[JIT_PROBLEM_FUNCS_FULL], extra);
	assert_int_equal(jit_funcs__commit(&f), 0);
	assert_string_equal(name_at(&f, 0x10000 + 16ull * (JIT_FUNCS_MAX - 1)), "fn1048575");
	assert_null(name_at(&f, 0x10000 + 16ull * JIT_FUNCS_MAX));
	jit_funcs__release(&f);

	/* JIT_FUNCS_ROOM short of full, then 2 * JIT_FUNCS_ROOM lines each
	 * replacing a live function: one commit in the middle makes room. */
	jit_funcs__init(&f);
	for (uint32_t i = 0; i < JIT_FUNCS_MAX - JIT_FUNCS_ROOM; i++) {
		len = snprintf(name, sizeof(name), "old%u", i);
		assert_int_equal(jit_funcs__add(&f, 0x10000 + 16ull * i, 16, name, (size_t)len, 1, 0, 0), 0);
	}
	assert_int_equal(jit_funcs__commit(&f), JIT_FUNCS_MAX - JIT_FUNCS_ROOM);
	for (uint32_t i = 0; i < 2 * JIT_FUNCS_ROOM; i++) {
		len = snprintf(name, sizeof(name), "new%u", i);
		assert_int_equal(jit_funcs__add(&f, 0x10000 + 16ull * i, 16, name, (size_t)len, 2, 0, 0), 0);
	}
	assert_int_equal(f.commits, 2);
	assert_int_equal(f.problems[JIT_PROBLEM_FUNCS_FULL], 0);
	assert_int_equal(jit_funcs__commit(&f), JIT_FUNCS_ROOM);
	assert_int_equal(f.n, JIT_FUNCS_MAX - JIT_FUNCS_ROOM);
	assert_string_equal(name_at(&f, 0x10000 + 16ull * (2 * JIT_FUNCS_ROOM - 1)), "new131071");
	assert_string_equal(name_at(&f, 0x10000 + 16ull * 2 * JIT_FUNCS_ROOM), "old131072");
	jit_funcs__release(&f);
}

static void test_names_reclaimed(void **state)
{
	struct jit_funcs f;
	char name[2048];

	memset(name, 'n', sizeof(name));
	jit_funcs__init(&f);
	for (uint32_t i = 0; i < 2 * JIT_NAMES_MAX / sizeof(name); i++) {
		snprintf(name, sizeof(name), "%u", i);
		name[strlen(name)] = 'n';
		assert_int_equal(jit_funcs__add(&f, 0x1000, 0x10, name, sizeof(name), 1, 0, 0), 0);
		if (i % 1024 == 0)
			assert_true(jit_funcs__commit(&f) >= 0);
	}
	assert_true(jit_funcs__commit(&f) >= 0);
	assert_int_equal(f.problems[JIT_PROBLEM_NAMES_FULL], 0);
	assert_true(f.names_len <= JIT_NAMES_MAX);
	assert_int_equal(f.n, 1);
	jit_funcs__release(&f);
}

/* ---- reading the file ----------------------------------------------------- */

/* This process as a target; start_boot_ns replaced when set. */
static struct jit_target self_target(uint64_t start_boot_ns)
{
	struct jit_target t;

	assert_int_equal(jit_target__live(getpid(), &t), 0);
	assert_int_equal(t.ns_pid, getpid());
	if (start_boot_ns)
		t.start_boot_ns = start_boot_ns;
	return t;
}

static uint64_t boot_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void append(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_read_file(void **state)
{
	char path[64];
	struct perf_map m;
	struct jit_funcs f;
	pid_t self = getpid();
	struct jit_target t = self_target(0);
	uint32_t added;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)self);
	unlink(path);
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, &t, 1, &added), 0);
	assert_int_equal(m.state, PERF_MAP_ABSENT);
	uint64_t before = boot_ns(); /* the map is made after this */

	append(path, "1000 10 one\n2000 10 tw");
	assert_int_equal(perf_map__read(&m, &f, &t, 2, &added), 0);
	assert_int_equal(m.state, PERF_MAP_READING);
	assert_int_equal(added, 1);
	assert_int_equal(m.offset, strlen("1000 10 one\n"));
	/* Nothing new: nothing added. */
	assert_int_equal(perf_map__read(&m, &f, &t, 3, &added), 0);
	assert_int_equal(added, 0);
	append(path, "o\n3000 10 three\n");
	assert_int_equal(perf_map__read(&m, &f, &t, 4, &added), 0);
	assert_int_equal(added, 2);
	assert_string_equal(name_at(&f, 0x2000), "two");
	assert_string_equal(name_at(&f, 0x3000), "three");
	assert_string_equal(name_at(&f, 0x1000), "one");
	/* "three" was past the end of the file at the read at 3: written
	 * after it, so its code ran after it too.  "one" may name any time. */
	assert_null(jit_funcs__find(&f, 0x3000, 2));
	assert_non_null(jit_funcs__find(&f, 0x3000, 3));
	assert_non_null(jit_funcs__find(&f, 0x1000, 1));
	jit_funcs__release(&f);

	/* A process that began after the map was made: not read, says why. */
	perf_map__init(&m);
	jit_funcs__init(&f);
	t = self_target(boot_ns() + 2 * JIT_STALE_SLACK_NS);
	assert_int_equal(perf_map__read(&m, &f, &t, 5, &added), 0);
	assert_int_equal(m.state, PERF_MAP_STALE);
	assert_string_equal(perf_map_state__name(m.state), "stale");
	assert_int_equal(f.n, 0);
	assert_int_equal(f.problems[JIT_PROBLEM_STALE], 1);
	jit_funcs__release(&f);
	/* Made after a process began (however slowly this test runs): read. */
	perf_map__init(&m);
	jit_funcs__init(&f);
	t = self_target(before);
	assert_int_equal(perf_map__read(&m, &f, &t, 5, &added), 0);
	assert_int_equal(m.state, PERF_MAP_READING);
	assert_int_equal(added, 3);
	jit_funcs__release(&f);
	/* A process that exited, in our namespaces: its map read through our
	 * own root, whoever owns it, still checked against its start. */
	struct jit_target gone = { .pid = 0x7ffffff0, .ns_pid = self, .any_owner = true,
				   .own_root = true, .start_boot_ns = t.start_boot_ns };

	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, &gone, 5, &added), 0);
	assert_int_equal(added, 3);
	jit_funcs__release(&f);
	gone.start_boot_ns = boot_ns() + 2 * JIT_STALE_SLACK_NS;
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, &gone, 5, &added), 0);
	assert_int_equal(m.state, PERF_MAP_STALE);
	jit_funcs__release(&f);
	unlink(path);
	t = self_target(0);

	/* A symlink (to a file that looks like a map) and a FIFO: refused. */
	char target[64];

	snprintf(target, sizeof(target), "/tmp/ms-jit-target-%d", (int)self);
	append(target, "1000 10 planted\n");
	assert_int_equal(symlink(target, path), 0);
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, &t, 6, &added), 0);
	assert_int_equal(m.state, PERF_MAP_NOT_OWNED);
	assert_int_equal(f.n, 0);
	jit_funcs__release(&f);
	unlink(path);
	unlink(target);
	assert_int_equal(mkfifo(path, 0600), 0);
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, &t, 7, &added), 0);
	assert_int_equal(m.state, PERF_MAP_NOT_OWNED);
	jit_funcs__release(&f);
	unlink(path);
}

/* 100 MB of garbage as a map, then as a jitdump file: each read takes at
 * most JIT_READ_MAX bytes, lines of garbage are counted, nothing grows
 * without bound, and the jitdump reader stops at its header. */
static void test_read_garbage(void **state)
{
	enum { TOTAL = 100 << 20, CHUNK = 1 << 20 };
	char path[64];
	uint8_t *buf = malloc(CHUNK);
	struct perf_map m;
	struct jit_funcs f;
	struct jit_target t = self_target(0);
	uint32_t added, reads = 0, rng = 99;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0 && buf);
	for (size_t off = 0; off < TOTAL; off += CHUNK) {
		for (size_t i = 0; i < CHUNK; i++) {
			rng = rng * 1103515245 + 12345;
			buf[i] = (uint8_t)(rng >> 16);
		}
		/* Now and then a line that parses, with a huge or overlapping range. */
		memcpy(buf + 100, "\n1000 ffffffffff huge\n2000 10 ok\n2008 10 over\n", 47);
		assert_int_equal(write(fd, buf, CHUNK), CHUNK);
	}
	close(fd);
	perf_map__init(&m);
	jit_funcs__init(&f);
	for (uint64_t last = 1; m.offset != last && reads < 100; reads++) {
		last = m.offset;
		assert_int_equal(perf_map__read(&m, &f, &t, reads + 1, &added), 0);
		assert_true(m.offset - last <= JIT_READ_MAX);
	}
	assert_true(reads >= TOTAL / JIT_READ_MAX);
	assert_true(m.offset >= TOTAL - JIT_LINE_MAX);
	assert_true(f.problems[JIT_PROBLEM_MALFORMED] > 1000);
	assert_true(f.problems[JIT_PROBLEM_HUGE] >= TOTAL / CHUNK);
	assert_string_equal(name_at(&f, 0x2010), "over");
	assert_null(name_at(&f, 0x2000));
	assert_true(f.n < 1000 && f.names_len < JIT_NAMES_MAX);
	jit_funcs__release(&f);

	/* The same bytes as a jitdump file under a marker: a bad header. */
	struct jitdump d;
	char dump[64];

	snprintf(dump, sizeof(dump), "/tmp/jit-%d.dump", (int)getpid());
	assert_int_equal(rename(path, dump), 0);
	fd = open(dump, O_RDONLY);
	void *marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

	assert_true(marker != MAP_FAILED);
	jitdump__init(&d);
	jit_funcs__init(&f);
	assert_int_equal(jitdump__read(&d, &f, &t, (uintptr_t)marker, (uintptr_t)marker + 4096, dump,
				       1, &added),
			 0);
	assert_int_equal(d.state, JITDUMP_BAD);
	assert_int_equal(f.problems[JIT_PROBLEM_BAD_HEADER], 1);
	assert_int_equal(jitdump__read(&d, &f, &t, (uintptr_t)marker, (uintptr_t)marker + 4096, dump,
				       2, &added),
			 0);
	assert_int_equal(f.problems[JIT_PROBLEM_BAD_HEADER], 1); /* not read again */
	munmap(marker, 4096);
	close(fd);
	unlink(dump);
	jitdump__release(&d);
	jit_funcs__release(&f);
	free(buf);
}

/* A map owned by another user (not root, not the process's): refused. */
static void test_read_not_owned(void **state)
{
	char path[64];
	struct perf_map m;
	struct jit_funcs f;
	uint32_t added;

	if (geteuid()) {
		printf("  skip: chown needs root\n");
		return;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	append(path, "1000 10 theirs\n");
	assert_int_equal(chown(path, 12345, 12345), 0);
	perf_map__init(&m);
	jit_funcs__init(&f);
	struct jit_target t = self_target(0);

	assert_int_equal(perf_map__read(&m, &f, &t, 1, &added), 0);
	assert_int_equal(m.state, PERF_MAP_NOT_OWNED);
	assert_int_equal(f.problems[JIT_PROBLEM_NOT_OWNED], 1);
	assert_int_equal(f.n, 0);
	jit_funcs__release(&f);
	unlink(path);
}

/* ---- jitdump -------------------------------------------------------------- */

struct jd_buf {
	uint8_t b[8192];
	size_t len;
};

static void jd_put(struct jd_buf *j, const void *p, size_t n)
{
	assert_true(j->len + n <= sizeof(j->b));
	memcpy(j->b + j->len, p, n);
	j->len += n;
}

static void jd_u32(struct jd_buf *j, uint32_t v)
{
	jd_put(j, &v, 4);
}

static void jd_u64(struct jd_buf *j, uint64_t v)
{
	jd_put(j, &v, 8);
}

static void jd_header(struct jd_buf *j, uint32_t magic, uint32_t pid, uint64_t flags)
{
	jd_u32(j, magic);
	jd_u32(j, JITDUMP_VERSION);
	jd_u32(j, JITDUMP_HEADER_SIZE);
	jd_u32(j, 62); /* EM_X86_64 */
	jd_u32(j, 0);
	jd_u32(j, pid);
	jd_u64(j, 1);
	jd_u64(j, flags);
}

static void jd_prefix(struct jd_buf *j, uint32_t id, uint32_t size, uint64_t time)
{
	jd_u32(j, id);
	jd_u32(j, size);
	jd_u64(j, time);
}

static void jd_load(struct jd_buf *j, uint64_t time, uint64_t addr, uint64_t size,
		    const char *name)
{
	uint8_t code[256] = { 0x55 }; /* push %rbp */

	assert_true(size <= sizeof(code));
	jd_prefix(j, JIT_CODE_LOAD, (uint32_t)(16 + 40 + strlen(name) + 1 + size), time);
	jd_u32(j, 42);
	jd_u32(j, 42);
	jd_u64(j, addr);
	jd_u64(j, addr);
	jd_u64(j, size);
	jd_u64(j, 7);
	jd_put(j, name, strlen(name) + 1);
	jd_put(j, code, size);
}

static void jd_move(struct jd_buf *j, uint64_t time, uint64_t from, uint64_t to, uint64_t size)
{
	jd_prefix(j, JIT_CODE_MOVE, 16 + 48, time);
	jd_u32(j, 42);
	jd_u32(j, 42);
	jd_u64(j, to);
	jd_u64(j, from);
	jd_u64(j, to);
	jd_u64(j, size);
	jd_u64(j, 7);
}

/* Debug info for code at addr: (offset, line) pairs, file "app.js" then
 * "\xff" (same file) for the rest. */
static void jd_debug(struct jd_buf *j, uint64_t addr, const uint32_t (*ent)[2], uint32_t n)
{
	uint32_t size = 16 + 16 + (uint32_t)strlen("app.js") + 1 + (n - 1) * 2 + n * 16;

	jd_prefix(j, JIT_CODE_DEBUG_INFO, size, 5);
	jd_u64(j, addr);
	jd_u64(j, n);
	for (uint32_t i = 0; i < n; i++) {
		jd_u64(j, addr + ent[i][0]);
		jd_u32(j, ent[i][1]);
		jd_u32(j, 0);
		jd_put(j, i ? "\xff" : "app.js", i ? 2 : strlen("app.js") + 1);
	}
}

static void test_jitdump_records(void **state)
{
	/* V8 writes positions 0x40 after the code they describe (jitdump.c,
	 * V8_POSITION_SKEW): these name offsets 0, 0x10 and 0x30. */
	static const uint32_t ent[][2] = { { 0x40, 10 }, { 0x50, 11 }, { 0x70, 13 } };
	struct jd_buf j = { .len = 0 };
	struct jitdump d;
	struct jit_funcs f;
	uint32_t line;
	const char *file;
	size_t close_at;

	jd_header(&j, JITDUMP_MAGIC, 42, 0);
	jd_debug(&j, 0x1000, ent, 3);
	jd_load(&j, 100, 0x1000, 0x40, "JS:*fib app.js:1:13");
	jd_load(&j, 200, 0x2000, 0x20, "JS:^main app.js:5:1");
	jd_prefix(&j, 99, 24, 0); /* unknown: skipped by its length */
	jd_u64(&j, 0);
	jd_prefix(&j, JIT_CODE_UNWINDING_INFO, 16 + 24, 0);
	jd_u64(&j, 0);
	jd_u64(&j, 0);
	jd_u64(&j, 0);
	jd_move(&j, 300, 0x2000, 0x3000, 0x20);
	jd_move(&j, 300, 0x9000, 0xa000, 0x20); /* never loaded */
	close_at = j.len;
	jd_prefix(&j, JIT_CODE_CLOSE, 16, 400);
	jd_load(&j, 500, 0x4000, 0x10, "after close");

	/* Fed a byte at a time, as a writer might leave it: same result. */
	jitdump__init(&d);
	jit_funcs__init(&f);
	for (size_t have = 0; have <= j.len; have++) {
		ssize_t used = jitdump__parse(&d, &f, j.b + d.offset, have - d.offset, 42, 1);

		assert_true(used >= 0);
	}
	assert_int_equal(d.offset, close_at + 16);
	assert_int_equal(d.state, JITDUMP_CLOSED);
	assert_int_equal(jit_funcs__commit(&f), 3);
	const struct jit_fn *fib = jit_funcs__find(&f, 0x1020, 150);

	assert_non_null(fib);
	assert_string_equal(jit_funcs__name(&f, fib), "JS:*fib app.js:1:13");
	/* Loaded at 100: a sample at 99 in its range is not its. */
	assert_null(jit_funcs__find(&f, 0x1020, 99));
	assert_int_equal(fib->nlines, 3);
	assert_int_equal(jit_funcs__line(&f, fib, 0x1020, &line, &file), 0);
	assert_int_equal(line, 11);
	assert_string_equal(file, "app.js");
	assert_int_equal(jit_funcs__line(&f, fib, 0x103f, &line, &file), 0);
	assert_int_equal(line, 13);
	/* main has no debug info; the move copied it to 0x3000 (the old
	 * range keeps its name until something replaces it). */
	const struct jit_fn *moved = jit_funcs__find(&f, 0x3010, 350);

	assert_non_null(moved);
	assert_string_equal(jit_funcs__name(&f, moved), "JS:^main app.js:5:1");
	assert_int_equal(jit_funcs__line(&f, moved, 0x3010, &line, &file), -ENOENT);
	assert_null(jit_funcs__find(&f, 0x4000, 600));
	assert_int_equal(f.problems[JIT_PROBLEM_UNKNOWN_RECORD], 1);
	assert_int_equal(f.problems[JIT_PROBLEM_MOVE_UNKNOWN], 1);
	assert_int_equal(f.problems[JIT_PROBLEM_BAD_RECORD], 0);
	jitdump__release(&d);
	jit_funcs__release(&f);
}

static void test_jitdump_damaged(void **state)
{
	struct jd_buf j = { .len = 0 };
	struct jitdump d;
	struct jit_funcs f;

	/* Another process's file, and a file of the wrong magic. */
	jd_header(&j, JITDUMP_MAGIC, 43, 0);
	jd_load(&j, 1, 0x1000, 0x10, "theirs");
	jitdump__init(&d);
	jit_funcs__init(&f);
	assert_int_equal(jitdump__parse(&d, &f, j.b, j.len, 42, 1), 0);
	assert_int_equal(d.state, JITDUMP_FOREIGN);
	assert_int_equal(jitdump__parse(&d, &f, j.b, j.len, 42, 1), 0);
	assert_int_equal(f.nstaged, 0);
	j.b[0] ^= 1;
	jitdump__init(&d);
	assert_int_equal(jitdump__parse(&d, &f, j.b, j.len, 0, 1), 0);
	assert_int_equal(d.state, JITDUMP_BAD);
	assert_int_equal(f.problems[JIT_PROBLEM_BAD_HEADER], 2);

	/* A load whose code runs past its record, one with no NUL in its
	 * name, a huge size: counted, and the records after them read. */
	j.len = 0;
	jd_header(&j, JITDUMP_MAGIC, 42, JITDUMP_FLAGS_ARCH_TIMESTAMP);
	jd_prefix(&j, JIT_CODE_LOAD, 16 + 40 + 2, 1);
	jd_u32(&j, 42);
	jd_u32(&j, 42);
	jd_u64(&j, 0x1000);
	jd_u64(&j, 0x1000);
	jd_u64(&j, 0x100); /* 256 bytes of code claimed, none there */
	jd_u64(&j, 1);
	jd_put(&j, "x", 2);
	jd_prefix(&j, JIT_CODE_LOAD, 16 + 41, 1);
	jd_u32(&j, 42);
	jd_u32(&j, 42);
	jd_u64(&j, 0x1000);
	jd_u64(&j, 0x1000);
	jd_u64(&j, 0);
	jd_u64(&j, 1);
	jd_put(&j, "y", 1); /* no NUL */
	jd_load(&j, 1, UINT64_MAX - 8, 0x10, "wraps");
	jd_load(&j, 7, 0x5000, 0x10, "good");
	/* A length that cannot be believed ends the reading. */
	jd_prefix(&j, JIT_CODE_LOAD, JIT_RECORD_MAX + 1, 1);
	jd_load(&j, 1, 0x6000, 0x10, "unreachable");
	jitdump__release(&d);
	jitdump__init(&d);
	jit_funcs__init(&f);
	assert_true(jitdump__parse(&d, &f, j.b, j.len, 42, 1) > 0);
	assert_int_equal(d.state, JITDUMP_BAD);
	assert_int_equal(jit_funcs__commit(&f), 1);
	/* The header says TSC timestamps: not the samples' clock, not used. */
	assert_non_null(jit_funcs__find(&f, 0x5000, 3));
	assert_null(jit_funcs__find(&f, 0x6000, 0));
	assert_int_equal(f.problems[JIT_PROBLEM_BAD_RECORD], 3);
	assert_int_equal(f.problems[JIT_PROBLEM_HUGE], 1);
	jitdump__release(&d);
	jit_funcs__release(&f);
}

/* Found through the marker mapping, read on as the writer appends. */
static void test_jitdump_marker(void **state)
{
	struct jd_buf j = { .len = 0 };
	char path[64];
	struct jitdump d;
	struct jit_funcs f;
	uint32_t added;
	void *marker;
	int fd;

	snprintf(path, sizeof(path), "/tmp/jit-%d.dump", (int)getpid());
	assert_true(jitdump__is_marker(path));
	assert_false(jitdump__is_marker("/tmp/jit-12a.dump"));
	assert_false(jitdump__is_marker("/tmp/jit-.dump"));
	assert_false(jitdump__is_marker("/tmp/notjit-1.dump.so"));
	unlink(path);
	jd_header(&j, JITDUMP_MAGIC, (uint32_t)getpid(), 0);
	jd_load(&j, 1, 0x1000, 0x10, "one");
	jd_prefix(&j, JIT_CODE_LOAD, 200, 2); /* the writer is inside this one */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, j.b, j.len), (ssize_t)j.len);
	marker = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(marker != MAP_FAILED);
	jitdump__init(&d);
	jit_funcs__init(&f);
	struct jit_target t = self_target(0);

	assert_int_equal(jitdump__read(&d, &f, &t, (uintptr_t)marker, (uintptr_t)marker + 4096, path,
				       1, &added),
			 0);
	assert_int_equal(d.state, JITDUMP_READING);
	assert_int_equal(added, 1);
	assert_int_equal(d.offset, j.len - 16);
	j.len -= 16;
	jd_load(&j, 2, 0x2000, 0x10, "two");
	assert_int_equal(pwrite(fd, j.b + d.offset, j.len - d.offset, (off_t)d.offset),
			 (ssize_t)(j.len - d.offset));
	assert_int_equal(jitdump__read(&d, &f, &t, (uintptr_t)marker, (uintptr_t)marker + 4096, path,
				       2, &added),
			 0);
	assert_int_equal(added, 1);
	assert_string_equal(name_at(&f, 0x2000), "two");
	assert_string_equal(name_at(&f, 0x1000), "one");
	munmap(marker, 4096);
	close(fd);
	unlink(path);
	jitdump__release(&d);
	jit_funcs__release(&f);
}

/*
 * The history of a jitdump file read again from its start (a writer held
 * its records until it exited): a frame is named by the load that named
 * its address over all its samples' times, never by a later load, and not
 * at all when the name changed between its first and last sample.
 */
static void test_jitdump_history(void **state)
{
	static const uint32_t ent[][2] = { { 0x40, 10 }, { 0x50, 11 } }; /* V8's skew */
	struct jd_buf j = { .len = 0 };
	struct jitdump d;
	struct jit_funcs h;
	struct jit_history x;
	const struct jit_fn *fn;
	char path[64];
	uint32_t line;
	const char *file;
	int fd;

	jd_header(&j, JITDUMP_MAGIC, 42, 0);
	jd_load(&j, 100, 0x1000, 0x40, "JS:~old");
	jd_debug(&j, 0x1000, ent, 2);
	jd_load(&j, 500, 0x1000, 0x40, "JS:*new"); /* same range, rewritten at 500 */
	jd_load(&j, 300, 0x2000, 0x20, "JS:*other");
	snprintf(path, sizeof(path), "/tmp/test-jit-history-%d.dump", (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, j.b, j.len), (ssize_t)j.len);
	unlink(path);
	jitdump__init(&d);
	jit_funcs__init(&h);
	/* No kept file: nothing. */
	assert_int_equal(jitdump__history(&d, &h, 42, 1), 0);
	d.fd = fd;
	d.kept = true;
	d.offset = 12345; /* where live reads stopped: the history starts over */
	assert_int_equal(jitdump__history(&d, &h, 42, 1), 3);
	assert_int_equal(d.offset, 12345);
	assert_int_equal(jit_history__init(&x, &h), 0);
	fn = jit_history__find(&x, 0x1010, 150, 450);
	assert_non_null(fn);
	assert_string_equal(jit_funcs__name(&h, fn), "JS:~old");
	fn = jit_history__find(&x, 0x1010, 500, 900);
	assert_non_null(fn);
	assert_string_equal(jit_funcs__name(&h, fn), "JS:*new");
	assert_int_equal(jit_funcs__line(&h, fn, 0x1010, &line, &file), 0);
	assert_int_equal(line, 11);
	/* Samples on both sides of the rewrite: neither name. */
	assert_null(jit_history__find(&x, 0x1010, 150, 600));
	/* Before any load, past every load's end. */
	assert_null(jit_history__find(&x, 0x1010, 50, 60));
	assert_null(jit_history__find(&x, 0x2000, 200, 250));
	assert_non_null(jit_history__find(&x, 0x2000, 300, 300));
	assert_null(jit_history__find(&x, 0x2020, 400, 400));
	assert_null(jit_history__find(&x, 0xfff, 400, 400));
	assert_int_equal(x.cut, 0);
	jit_history__release(&x);
	jit_funcs__release(&h);
	jitdump__release(&d); /* closes fd */
}

/* A debug-info record naming file name (one entry at addr, line 7). */
static void jd_debug_file(struct jd_buf *j, uint64_t addr, const char *name)
{
	jd_prefix(j, JIT_CODE_DEBUG_INFO, (uint32_t)(16 + 16 + 16 + strlen(name) + 1), 5);
	jd_u64(j, addr);
	jd_u64(j, 1);
	jd_u64(j, addr);
	jd_u32(j, 7);
	jd_u32(j, 0);
	jd_put(j, name, strlen(name) + 1);
}

/*
 * Source file names must be well-formed UTF-8 without control characters
 * (V8 11 writes a freed buffer's bytes): others are left out, the line
 * kept, and counted (bad_text).
 */
static void test_jitdump_file_names(void **state)
{
	static const char *const names[] = {
		"/srv/app.js", "/srv/\xd0\xb4\xd0\xbe\xd0\xbc.js", "\xe0]", "\xc0\xaf", "a\x01b",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "ok\xf0\x9f\x98\x80",
	};
	static const bool kept[] = { true, true, false, false, false, false, false, true };
	struct jd_buf j = { .len = 0 };
	struct jitdump d;
	struct jit_funcs f;
	uint32_t line, bad = 0;
	const char *file;

	jd_header(&j, JITDUMP_MAGIC, 42, 0);
	for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		jd_debug_file(&j, 0x1000 + i * 0x100, names[i]);
		jd_load(&j, 100, 0x1000 + i * 0x100, 0x10, "fn");
	}
	jitdump__init(&d);
	jit_funcs__init(&f);
	assert_true(jitdump__parse(&d, &f, j.b, j.len, 42, 1) > 0);
	assert_int_equal(jit_funcs__commit(&f), (int)(sizeof(names) / sizeof(names[0])));
	for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct jit_fn *fn = jit_funcs__find(&f, 0x1000 + i * 0x100, 0);

		assert_non_null(fn);
		assert_int_equal(jit_funcs__line(&f, fn, fn->start, &line, &file), 0);
		assert_int_equal(line, 7);
		assert_string_equal(file, kept[i] ? names[i] : "");
		bad += !kept[i];
	}
	assert_int_equal(f.problems[JIT_PROBLEM_BAD_TEXT], bad);
	jitdump__release(&d);
	jit_funcs__release(&f);

	/* Positions of a V8 load are 0x40 after their code, others' are not. */
	static const uint32_t ent[][2] = { { 0x40, 20 }, { 0x48, 21 } };

	j.len = 0;
	jd_header(&j, JITDUMP_MAGIC, 42, 0);
	jd_debug(&j, 0x1000, ent, 2);
	jd_load(&j, 100, 0x1000, 0x60, "JS:*f /srv/a.js:1:1");
	jd_debug(&j, 0x2000, ent, 2);
	jd_load(&j, 100, 0x2000, 0x60, "Lcom/example/A;run");
	jitdump__init(&d);
	jit_funcs__init(&f);
	assert_true(jitdump__parse(&d, &f, j.b, j.len, 42, 1) > 0);
	assert_int_equal(jit_funcs__commit(&f), 2);
	const struct jit_fn *v8 = jit_funcs__find(&f, 0x1000, 0), *java = jit_funcs__find(&f, 0x2000, 0);

	assert_int_equal(jit_funcs__line(&f, v8, 0x1000, &line, &file), 0);
	assert_int_equal(line, 20);
	assert_int_equal(jit_funcs__line(&f, v8, 0x1008, &line, &file), 0);
	assert_int_equal(line, 21);
	assert_int_equal(jit_funcs__line(&f, java, 0x2000, &line, &file), -ENOENT);
	assert_int_equal(jit_funcs__line(&f, java, 0x2040, &line, &file), 0);
	assert_int_equal(line, 20);
	jitdump__release(&d);
	jit_funcs__release(&f);

	/* A V8 position naming a file its load's name does not hold is Node's
	 * garbage ("k^" passed the text check): the line stays, the file goes. */
	j.len = 0;
	jd_header(&j, JITDUMP_MAGIC, 42, 0);
	jd_debug_file(&j, 0x1000, "/srv/a.js");
	jd_load(&j, 100, 0x1000, 0x60, "JS:*f /srv/a.js:1:1");
	jd_debug_file(&j, 0x2000, "k^");
	jd_load(&j, 100, 0x2000, 0x60, "JS:*g /srv/a.js:3:1");
	jitdump__init(&d);
	jit_funcs__init(&f);
	assert_true(jitdump__parse(&d, &f, j.b, j.len, 42, 1) > 0);
	assert_int_equal(jit_funcs__commit(&f), 2);
	assert_int_equal(jit_funcs__line(&f, jit_funcs__find(&f, 0x1000, 0), 0x1000, &line, &file),
			 0);
	assert_string_equal(file, "/srv/a.js");
	assert_int_equal(jit_funcs__line(&f, jit_funcs__find(&f, 0x2000, 0), 0x2000, &line, &file),
			 0);
	assert_int_equal(line, 7);
	assert_string_equal(file, "");
	assert_int_equal(f.problems[JIT_PROBLEM_BAD_TEXT], 1);
	jitdump__release(&d);
	jit_funcs__release(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_cut_lines),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_replace_random),
		cmocka_unit_test(test_replace_in_time),
		cmocka_unit_test(test_mapping_ends),
		cmocka_unit_test(test_code_budget),
		cmocka_unit_test(test_funcs_full),
		cmocka_unit_test(test_names_reclaimed),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_read_not_owned),
		cmocka_unit_test(test_read_garbage),
		cmocka_unit_test(test_jitdump_records),
		cmocka_unit_test(test_jitdump_damaged),
		cmocka_unit_test(test_jitdump_marker),
		cmocka_unit_test(test_jitdump_history),
		cmocka_unit_test(test_jitdump_file_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
