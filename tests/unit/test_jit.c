// SPDX-License-Identifier: MIT
/*
 * Code with no file (userspace/runtimes/): the JIT function table (later
 * lines replace what they overlap, mappings end what was read before them,
 * the code budget), the perf map parser (lines, malformed lines, lines cut
 * across reads, over-long lines) and reader (incremental reads, a map made
 * before its process, symlinks and FIFOs refused), and the jitdump parser.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/runtimes/jit_funcs.h"
#include "userspace/runtimes/jit_policy.h"
#include "userspace/runtimes/jit_proc.h"
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
	uint32_t added;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)self);
	unlink(path);
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, self, self, 0, 1, &added), 0);
	assert_int_equal(m.state, PERF_MAP_ABSENT);
	append(path, "1000 10 one\n2000 10 tw");
	assert_int_equal(perf_map__read(&m, &f, self, self, 0, 2, &added), 0);
	assert_int_equal(m.state, PERF_MAP_READING);
	assert_int_equal(added, 1);
	assert_int_equal(m.offset, strlen("1000 10 one\n"));
	/* Nothing new: nothing added. */
	assert_int_equal(perf_map__read(&m, &f, self, self, 0, 3, &added), 0);
	assert_int_equal(added, 0);
	append(path, "o\n3000 10 three\n");
	assert_int_equal(perf_map__read(&m, &f, self, self, 0, 4, &added), 0);
	assert_int_equal(added, 2);
	assert_string_equal(name_at(&f, 0x2000), "two");
	assert_string_equal(name_at(&f, 0x3000), "three");
	assert_string_equal(name_at(&f, 0x1000), "one");
	jit_funcs__release(&f);

	/* A process that began after the map was made: not read, says why. */
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, self, self, boot_ns() + 2 * JIT_STALE_SLACK_NS, 5,
					&added),
			 0);
	assert_int_equal(m.state, PERF_MAP_STALE);
	assert_string_equal(perf_map_state__name(m.state), "stale");
	assert_int_equal(f.n, 0);
	assert_int_equal(f.problems[JIT_PROBLEM_STALE], 1);
	jit_funcs__release(&f);
	/* Made just now, by a process begun a moment ago: read. */
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, self, self, boot_ns(), 5, &added), 0);
	assert_int_equal(m.state, PERF_MAP_READING);
	assert_int_equal(added, 3);
	jit_funcs__release(&f);
	unlink(path);

	/* A symlink (to a file that looks like a map) and a FIFO: refused. */
	char target[64];

	snprintf(target, sizeof(target), "/tmp/ms-jit-target-%d", (int)self);
	append(target, "1000 10 planted\n");
	assert_int_equal(symlink(target, path), 0);
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, self, self, 0, 6, &added), 0);
	assert_int_equal(m.state, PERF_MAP_NOT_OWNED);
	assert_int_equal(f.n, 0);
	jit_funcs__release(&f);
	unlink(path);
	unlink(target);
	assert_int_equal(mkfifo(path, 0600), 0);
	perf_map__init(&m);
	jit_funcs__init(&f);
	assert_int_equal(perf_map__read(&m, &f, self, self, 0, 7, &added), 0);
	assert_int_equal(m.state, PERF_MAP_NOT_OWNED);
	jit_funcs__release(&f);
	unlink(path);
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
	assert_int_equal(perf_map__read(&m, &f, getpid(), getpid(), 0, 1, &added), 0);
	assert_int_equal(m.state, PERF_MAP_NOT_OWNED);
	assert_int_equal(f.problems[JIT_PROBLEM_NOT_OWNED], 1);
	assert_int_equal(f.n, 0);
	jit_funcs__release(&f);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_cut_lines),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_replace),
		cmocka_unit_test(test_replace_random),
		cmocka_unit_test(test_mapping_ends),
		cmocka_unit_test(test_code_budget),
		cmocka_unit_test(test_names_reclaimed),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_read_not_owned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
