// SPDX-License-Identifier: MIT
/*
 * userspace/symbols: ELF, debug-file, vdso and kernel symbolization.
 * Runs as root on the build host (reads /proc/kallsyms, /proc/self/map_files,
 * libc6-dbg's files); tests that need what the host lacks skip with a
 * reason.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/symbols/symbols.h"
#include "userspace/symbols/symbols_internal.h"

#define LIBC_PATH_PART "libc.so.6"

static char tmpdir[] = "/tmp/test_symbols.XXXXXX";

/* A function of this binary with a known name; large enough that +3 is
 * still inside it. */
__attribute__((noinline, used)) int symbols_test_marker_function(int x)
{
	volatile int acc = x;
	int i;

	for (i = 0; i < x; i++)
		acc += i * 3;
	return acc;
}

struct mapping {
	uint64_t start, end, pgoff;
	char path[PATH_MAX];
};

/* The /proc/self/maps line containing addr. */
static bool find_mapping(const void *addr, struct mapping *out)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;
	char line[PATH_MAX + 128];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		int path_at = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &pgoff, &path_at) <
		    3)
			continue;
		if (a < start || a >= end)
			continue;
		out->start = start;
		out->end = end;
		out->pgoff = pgoff;
		snprintf(out->path, sizeof(out->path), "%s", path_at ? line + path_at : "");
		out->path[strcspn(out->path, "\n")] = '\0';
		found = true;
	}
	fclose(f);
	return found;
}

/* Symbolizes a live address of this process the way the processor will:
 * mapping -> file offset -> ELF vaddr -> lookup. */
static const char *symbolize_live(struct symbolizer *s, const void *addr, bool via_map_files,
				  uint64_t *offset, struct sym_module **mod)
{
	char map_files[128];
	struct mapping mp;
	struct sym_module *m;
	uint64_t vaddr;

	assert_true(find_mapping(addr, &mp));
	snprintf(map_files, sizeof(map_files), "/proc/self/map_files/%" PRIx64 "-%" PRIx64,
		 mp.start, mp.end);
	m = symbolizer__file(s, (uint32_t)getpid(), via_map_files ? map_files : NULL, mp.path, NULL,
			     0);
	assert_non_null(m);
	assert_null(sym_module__error(m));
	assert_true(sym_module__to_vaddr(m, mp.pgoff + ((uintptr_t)addr - mp.start), &vaddr));
	if (mod)
		*mod = m;
	return sym_module__lookup(m, vaddr, offset);
}

static void *libc_symbol(const char *name)
{
	/* dlsym on libc's own handle: past sanitizer interceptors. */
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *p;

	assert_non_null(h);
	p = dlsym(h, name);
	dlclose(h);
	assert_non_null(p);
	return p;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void *read_whole(const char *path, size_t *len)
{
	struct stat st;
	void *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size ? st.st_size : 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, st.st_size, 0), st.st_size);
	close(fd);
	*len = st.st_size;
	return buf;
}

static void tmp_path(char *out, size_t size, const char *name)
{
	snprintf(out, size, "%s/%s", tmpdir, name);
}

/* The index of the first symbol named name (or starting with it when
 * prefix), or -1. */
static long find_symbol(const struct sym_module *m, const char *name, bool prefix)
{
	size_t i, n = sym_module__symbol_count(m), len = strlen(name);

	for (i = 0; i < n; i++) {
		const char *s = sym_module__symbol(m, i, NULL, NULL);

		if (prefix ? !strncmp(s, name, len) : !strcmp(s, name))
			return (long)i;
	}
	return -1;
}

static void test_own_function(void **state)
{
	struct symbolizer *s = symbolizer__new();
	const char *name;
	uint64_t off = 99;

	assert_non_null(s);
	name = symbolize_live(s, (const char *)symbols_test_marker_function, false, &off, NULL);
	assert_non_null(name);
	assert_string_equal(name, "symbols_test_marker_function");
	assert_int_equal(off, 0);

	/* Inside the function, through /proc/self/map_files. */
	name = symbolize_live(s, (const char *)symbols_test_marker_function + 3, true, &off, NULL);
	assert_non_null(name);
	assert_string_equal(name, "symbols_test_marker_function");
	assert_int_equal(off, 3);
	symbolizer__free(s);
}

static void test_libc_functions(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m, *m2;
	const char *name;
	uint64_t off = 99;

	name = symbolize_live(s, libc_symbol("qsort"), false, &off, &m);
	assert_non_null(strstr(sym_module__path(m), LIBC_PATH_PART));
	assert_non_null(name);
	assert_string_equal(name, "qsort");
	assert_int_equal(off, 0);

	/* getpid is a weak alias of the global __getpid: global wins. */
	name = symbolize_live(s, (const char *)libc_symbol("getpid") + 1, false, &off, &m2);
	assert_ptr_equal(m, m2); /* one module per file */
	assert_non_null(name);
	assert_string_equal(name, "__getpid");
	assert_int_equal(off, 1);
	symbolizer__free(s);
}

static void test_libc_debug_file(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m;
	uint64_t start, end, off = 99;
	const char *dbg, *name;
	long i;

	symbolize_live(s, libc_symbol("qsort"), false, NULL, &m);
	dbg = sym_module__debug_path(m);
	if (!dbg) {
		symbolizer__free(s);
		skip(); /* libc6-dbg not installed */
	}
	assert_non_null(strstr(dbg, "/usr/lib/debug/.build-id/"));

	/* A static function only the debug file's .symtab knows. */
	i = find_symbol(m, "msort_with_tmp", true);
	assert_true(i >= 0);
	assert_non_null(sym_module__symbol(m, (size_t)i, &start, &end));
	assert_true(end > start + 1);
	name = sym_module__lookup(m, start + 1, &off);
	assert_non_null(name);
	assert_int_equal(strncmp(name, "msort_with_tmp", 14), 0);
	assert_int_equal(off, 1);
	symbolizer__free(s);
}

static void test_vdso(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m = symbolizer__vdso(s);
	uint64_t start, end, off = 99;
	const char *name;
	long i;

	assert_non_null(m);
	assert_null(sym_module__error(m));
	assert_ptr_equal(symbolizer__file(s, 1, NULL, "[vdso]", NULL, 0), m);
	i = find_symbol(m, "__vdso_clock_gettime", false);
	if (i < 0)
		i = find_symbol(m, "clock_gettime", false);
	assert_true(i >= 0);
	sym_module__symbol(m, (size_t)i, &start, &end);
	name = sym_module__lookup(m, start + 2, &off);
	assert_non_null(name);
	assert_true(!strcmp(name, "__vdso_clock_gettime") || !strcmp(name, "clock_gettime"));
	assert_int_equal(off, 2);
	symbolizer__free(s);
}

/* The runtime address of a global text symbol in /proc/kallsyms, 0 if
 * absent or hidden. */
static uint64_t kallsyms_address(const char *want)
{
	char line[1024], name[512], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) == 3 && type == 'T' &&
		    !strcmp(name, want))
			found = addr;
	fclose(f);
	return found;
}

static void test_kernel(void **state)
{
	uint64_t sched = kallsyms_address("schedule"), stext = kallsyms_address("_stext");
	struct symbolizer *s;
	struct sym_module *m;
	const char *name, *bid;
	uint64_t off = 99;

	if (!sched)
		skip(); /* kallsyms hidden (not root, or kptr_restrict) */
	s = symbolizer__new();
	m = symbolizer__kernel(s);
	assert_non_null(m);
	assert_null(sym_module__error(m));
	assert_true(sym_module__symbol_count(m) > 1000);
	name = sym_module__lookup(m, sched + 1, &off);
	assert_non_null(name);
	assert_string_equal(name, "schedule");
	assert_int_equal(off, 1);
	assert_true(sym_module__to_vaddr(m, sched, &off));
	assert_int_equal(off, sched);
#if defined(__x86_64__)
	assert_int_equal(symbolizer__kaslr_offset(s) + 0xffffffff81000000ull, stext);
#endif
	bid = symbolizer__kernel_build_id(s);
	if (bid[0]) {
		assert_true(strlen(bid) % 2 == 0);
		assert_int_equal(strspn(bid, "0123456789abcdef"), strlen(bid));
	}
	symbolizer__free(s);
}

static void test_kallsyms_rules(void **state)
{
	static const char text[] = "ffffffffa0000000 T alpha\n"
				   "ffffffffa0000100 t beta\n"
				   "ffffffffa0000100 T beta_global\n"
				   "ffffffffa0000200 D data_not_text\n"
				   "ffffffffa0000300 W weak_one\n"
				   "this is not a kallsyms line\n"
				   "ffffffffc0001040 t mod_fn2\t[mymod]\n"
				   "ffffffffc0001000 t mod_fn\t[mymod]\n"
				   "ffffffffc0100000 t other_fn\t[other]\n"
				   "ffffffff81000000 T _stext\n";
	static const char hidden[] = "0000000000000000 T alpha\n"
				     "0000000000000000 t beta\n";
	char path[PATH_MAX];
	struct sym_module *m;
	uint64_t stext, off;

	tmp_path(path, sizeof(path), "kallsyms");
	write_file(path, text, sizeof(text) - 1);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load(m, path, &stext), 0);
	assert_null(sym_module__error(m));
	assert_int_equal(stext, 0xffffffff81000000ull);
	assert_int_equal(sym_module__symbol_count(m), 7); /* _stext counts */
	/* T beats t at the same address; a data symbol does not end text. */
	assert_string_equal(sym_module__lookup(m, 0xffffffffa0000250ull, &off), "beta_global");
	assert_int_equal(off, 0x150);
	assert_string_equal(sym_module__lookup(m, 0xffffffffa0000300ull, &off), "weak_one");
	/* Unsorted input is sorted; within a module, up to the next symbol. */
	assert_string_equal(sym_module__lookup(m, 0xffffffffc0001030ull, &off), "mod_fn");
	assert_string_equal(sym_module__lookup(m, 0xffffffffc0001050ull, &off), "mod_fn2");
	assert_int_equal(off, 0x10);
	/* The last symbol before another owner covers one page at most. */
	assert_null(sym_module__lookup(m, 0xffffffffc0001040ull + 4096, &off));
	assert_null(sym_module__lookup(m, 0xffffffffa0000300ull + 4096, &off));
	assert_null(sym_module__lookup(m, 0xffffffff80000000ull, &off));
	sym_module__free(m);

	write_file(path, hidden, sizeof(hidden) - 1);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load(m, path, &stext), 0);
	assert_non_null(sym_module__error(m));
	assert_non_null(strstr(sym_module__error(m), "kptr_restrict"));
	assert_int_equal(sym_module__symbol_count(m), 0);
	sym_module__free(m);

	write_file(path, "", 0);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load(m, path, &stext), 0);
	assert_non_null(sym_module__error(m));
	sym_module__free(m);
}

static void test_kernel_notes(void **state)
{
	/* A Xen note (name "Xen", 8-byte desc), then GNU build ID (20 bytes). */
	// clang-format off
	static const uint8_t blob[] = {
		4, 0, 0, 0,  8, 0, 0, 0,  6, 0, 0, 0,  'X', 'e', 'n', 0,
		1, 2, 3, 4, 5, 6, 7, 8,
		4, 0, 0, 0,  20, 0, 0, 0,  3, 0, 0, 0,  'G', 'N', 'U', 0,
		0xa3, 0xe4, 0xcd, 0x60, 0xa8, 0xec, 0x14, 0xf0, 0x2a, 0xa4,
		0x1b, 0x41, 0xd5, 0xb5, 0x84, 0x6d, 0x3d, 0x9f, 0x1d, 0xd8,
	};
	// clang-format on
	uint8_t out[SYM_BUILD_ID_MAX];
	char path[PATH_MAX], hex[2 * SYM_BUILD_ID_MAX + 1];

	tmp_path(path, sizeof(path), "notes");
	write_file(path, blob, sizeof(blob));
	assert_int_equal(kernel_notes__build_id(path, out), 20);
	sym_hex(out, 20, hex);
	assert_string_equal(hex, "a3e4cd60a8ec14f02aa41b41d5b5846d3d9f1dd8");
	/* Cut inside the descriptor: no build ID, no overread. */
	write_file(path, blob, sizeof(blob) - 1);
	assert_int_equal(kernel_notes__build_id(path, out), 0);
	assert_int_equal(kernel_notes__build_id("/nonexistent/notes", out), -ENOENT);
}

static void test_table_rules(void **state)
{
	struct sym_module *m = sym_module__new("synthetic");
	struct sym_builder b;
	uint64_t off;

	sym_builder__init(&b);
#define ADD(start, size, limit, name, rank)                                                        \
	assert_int_equal(sym_builder__add(&b, start, size, limit, name, strlen(name), rank, 0), 0)
	ADD(0x1000, 0x100, UINT64_MAX, "f_weak", SYM_RANK_WEAK | SYM_RANK_TYPED);
	ADD(0x1000, 0x80, UINT64_MAX, "f", SYM_RANK_GLOBAL | SYM_RANK_TYPED);
	ADD(0x1000, 0x40, UINT64_MAX, "__GI_f", SYM_RANK_LOCAL | SYM_RANK_TYPED);
	ADD(0x1040, 0x10, UINT64_MAX, "nested", SYM_RANK_LOCAL | SYM_RANK_TYPED);
	ADD(0x10c0, 0, UINT64_MAX, "label_in_f", SYM_RANK_LOCAL);
	ADD(0x2000, 0, 0x2100, "unsized", SYM_RANK_GLOBAL);
	ADD(0x3000, 0x10, UINT64_MAX, "last", SYM_RANK_GLOBAL | SYM_RANK_TYPED);
#undef ADD
	assert_int_equal(sym_builder__finish(&b, m), 0);
	assert_int_equal(sym_module__symbol_count(m), 4);

	/* Global name, longest size of the aliases. */
	assert_string_equal(sym_module__lookup(m, 0x10ff, &off), "f");
	assert_int_equal(off, 0xff);
	assert_null(sym_module__lookup(m, 0x1100, &off));
	/* Nested: the inner symbol, then back to the enclosing one. */
	assert_string_equal(sym_module__lookup(m, 0x1045, &off), "nested");
	assert_string_equal(sym_module__lookup(m, 0x1050, &off), "f");
	assert_int_equal(off, 0x50);
	/* A label inside a sized function is not a function. */
	assert_string_equal(sym_module__lookup(m, 0x10c0, &off), "f");
	/* Unsized: up to the next symbol but never past its section. */
	assert_string_equal(sym_module__lookup(m, 0x20ff, &off), "unsized");
	assert_null(sym_module__lookup(m, 0x2100, &off));
	assert_null(sym_module__lookup(m, 0xfff, &off));
	assert_null(sym_module__lookup(m, 0x3010, &off));
	sym_module__free(m);
}

/* xorshift64: a fixed pseudo-random sequence for the tests below. */
static uint64_t test_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * The table from a few ascending runs (merged, aliases put in place within a
 * run) equals the one from a shuffled order (past SORT_RUNS_MAX runs: sorted
 * by qsort_r): same names and offsets at every address.
 */
static void test_table_sort_paths_agree(void **state)
{
	enum { N = 6000, RUNS = 5, ADDRS = 2500 };
	struct sym_module *few = sym_module__new("runs"), *many = sym_module__new("shuffled");
	struct sym_builder b;
	uint64_t x = 0x9e3779b97f4a7c15ull, off1, off2;
	uint64_t *start = calloc(N, sizeof(*start));
	uint32_t *rank = calloc(N, sizeof(*rank)), *order = calloc(N, sizeof(*order));
	char name[32];
	size_t i, j, n = 0;

	assert_non_null(start);
	assert_non_null(rank);
	assert_non_null(order);
	for (i = 0; i < N; i++) {
		start[i] = 0x10000 + 16 * (test_rand(&x) % ADDRS);
		static const uint32_t ranks[3] = {SYM_RANK_GLOBAL, SYM_RANK_LOCAL, SYM_RANK_WEAK};

		rank[i] = ranks[test_rand(&x) % 3] | SYM_RANK_TYPED;
	}
	/* RUNS runs, each ascending by address only (aliases in input order). */
	for (size_t r = 0; r < RUNS; r++) {
		size_t first = n;

		for (i = r; i < N; i += RUNS)
			order[n++] = (uint32_t)i;
		for (i = first + 1; i < n; i++)
			for (j = i; j > first && start[order[j - 1]] > start[order[j]]; j--) {
				uint32_t t = order[j];

				order[j] = order[j - 1];
				order[j - 1] = t;
			}
	}
	sym_builder__init(&b);
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "s%u", order[i]);
		assert_int_equal(sym_builder__add(&b, start[order[i]], 0, UINT64_MAX, name,
						  strlen(name), rank[order[i]], 0),
				 0);
	}
	assert_int_equal(sym_builder__finish(&b, few), 0);
	for (i = N - 1; i > 0; i--) { /* Fisher-Yates */
		uint32_t t;

		j = test_rand(&x) % (i + 1);
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	sym_builder__init(&b);
	for (i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "s%u", order[i]);
		assert_int_equal(sym_builder__add(&b, start[order[i]], 0, UINT64_MAX, name,
						  strlen(name), rank[order[i]], 0),
				 0);
	}
	assert_int_equal(sym_builder__finish(&b, many), 0);

	assert_true(sym_module__symbol_count(few) > ADDRS / 2);
	assert_int_equal(sym_module__symbol_count(few), sym_module__symbol_count(many));
	for (uint64_t a = 0x10000; a < 0x10000 + 16 * ADDRS; a += 4) {
		const char *n1 = sym_module__lookup(few, a, &off1);
		const char *n2 = sym_module__lookup(many, a, &off2);

		assert_true((n1 == NULL) == (n2 == NULL));
		if (n1) {
			assert_string_equal(n1, n2);
			assert_int_equal(off1, off2);
		}
	}
	sym_module__free(few);
	sym_module__free(many);
	free(start);
	free(rank);
	free(order);
}

/* A kallsyms file over the 1 MiB read size, its last line without a newline:
 * no line is lost or split at a read boundary. */
static void test_kallsyms_long_file(void **state)
{
	enum { LINES = 50000 }; /* 28 bytes a line: 1.4 MB */
	size_t cap = (size_t)LINES * 40, len = 0;
	char *text = malloc(cap), path[PATH_MAX];
	struct sym_module *m;
	uint64_t stext, off, last;

	assert_non_null(text);
	for (size_t i = 0; i < LINES; i++)
		len += (size_t)snprintf(text + len, cap - len, "%016llx t fn_%07zu%s",
					0xffffffff81000000ull + 0x40 * i, i,
					i + 1 < LINES ? "\n" : "");
	tmp_path(path, sizeof(path), "kallsyms-long");
	write_file(path, text, len);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load(m, path, &stext), 0);
	assert_null(sym_module__error(m));
	assert_int_equal(sym_module__symbol_count(m), LINES);
	for (size_t i = 0; i < LINES; i += 997) {
		char want[32];

		uint64_t base = 0xffffffff81000000ull;

		snprintf(want, sizeof(want), "fn_%07zu", i);
		assert_string_equal(sym_module__lookup(m, base + 0x40 * i + 8, &off), want);
		assert_int_equal(off, 8);
	}
	last = 0xffffffff81000000ull + 0x40 * (LINES - 1);
	assert_string_equal(sym_module__lookup(m, last, &off), "fn_0049999");
	sym_module__free(m);
	free(text);
}

static void test_build_id_mismatch(void **state)
{
	static const uint8_t fake[20] = {0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab,
					 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab,
					 0xab, 0xab, 0xab, 0xab, 0xab, 0xab};
	char expect[256], hex[2 * SYM_BUILD_ID_MAX + 1];
	struct sym_module *good, *bad;
	const uint8_t *bid;
	struct mapping mp;
	size_t len;
	int order;

	assert_true(find_mapping(libc_symbol("qsort"), &mp));
	for (order = 0; order < 2; order++) {
		struct symbolizer *s = symbolizer__new();

		if (order == 0) {
			bad = symbolizer__file(s, 0, NULL, mp.path, fake, sizeof(fake));
			good = symbolizer__file(s, 0, NULL, mp.path, NULL, 0);
		} else {
			good = symbolizer__file(s, 0, NULL, mp.path, NULL, 0);
			bad = symbolizer__file(s, 0, NULL, mp.path, fake, sizeof(fake));
		}
		assert_non_null(good);
		assert_non_null(bad);
		assert_ptr_not_equal(good, bad);
		assert_null(sym_module__error(good));
		bid = sym_module__build_id(good, &len);
		assert_non_null(bid);
		sym_hex(bid, len, hex);
		snprintf(
		    expect, sizeof(expect),
		    "build ID mismatch: mapping abababababababababababababababababababab file %s",
		    hex);
		assert_string_equal(sym_module__error(bad), expect);
		assert_int_equal(sym_module__symbol_count(bad), 0);
		assert_null(sym_module__lookup(bad, 0x1000, NULL));
		/* The refused module is identified by the mapping's build ID. */
		bid = sym_module__build_id(bad, &len);
		assert_int_equal(len, sizeof(fake));
		assert_memory_equal(bid, fake, sizeof(fake));
		/* Cached both ways; the right build ID finds the good module. */
		assert_ptr_equal(symbolizer__file(s, 0, NULL, mp.path, fake, sizeof(fake)), bad);
		bid = sym_module__build_id(good, &len);
		assert_ptr_equal(symbolizer__file(s, 0, NULL, "/does/not/matter", bid, len), good);
		symbolizer__free(s);
	}
}

/* Copies of one file share one module (build ID); a deleted file still
 * symbolizes through /proc/self/map_files while mapped, and after. */
static void test_cache_and_pinning(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m1, *m2, *m3;
	char copy[PATH_MAX], map_files[128];
	struct mapping mp;
	uint64_t start;
	size_t len;
	void *buf, *map;
	long i;

	symbolize_live(s, (const char *)symbols_test_marker_function, false, NULL, &m1);
	assert_ptr_equal(symbolizer__file(s, 0, NULL, sym_module__path(m1), NULL, 0), m1);

	/* A copy with the same build ID is the same module. */
	buf = read_whole("/proc/self/exe", &len);
	tmp_path(copy, sizeof(copy), "exe-copy");
	write_file(copy, buf, len);
	free(buf);
	m2 = symbolizer__file(s, 0, NULL, copy, NULL, 0);
	if (sym_module__build_id(m1, &len))
		assert_ptr_equal(m2, m1);

	/* Deleted but mapped: opened through map_files in a fresh symbolizer. */
	symbolizer__free(s);
	s = symbolizer__new();
	{
		int fd = open(copy, O_RDONLY | O_CLOEXEC);
		struct stat st;

		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		assert_true(map != MAP_FAILED);
		close(fd);
		assert_int_equal(unlink(copy), 0);
		assert_true(find_mapping(map, &mp));
		snprintf(map_files, sizeof(map_files), "/proc/self/map_files/%" PRIx64 "-%" PRIx64,
			 mp.start, mp.end);
		m3 = symbolizer__file(s, (uint32_t)getpid(), map_files, mp.path, NULL, 0);
		munmap(map, st.st_size);
	}
	assert_null(sym_module__error(m3));
	/* Now unmapped and deleted: the names were loaded when first seen. */
	i = find_symbol(m3, "symbols_test_marker_function", false);
	assert_true(i >= 0);
	sym_module__symbol(m3, (size_t)i, &start, NULL);
	assert_string_equal(sym_module__lookup(m3, start, NULL), "symbols_test_marker_function");
	symbolizer__free(s);
}

/* Inode of fd (then closed), or 0 when fd is an error. */
static ino_t fd_inode(int fd)
{
	struct stat st;
	ino_t ino;

	if (fd < 0)
		return 0;
	assert_int_equal(fstat(fd, &st), 0);
	ino = st.st_ino;
	close(fd);
	return ino;
}

/* sym_module__open_file: the verified file, never what the path holds now. */
static void test_open_file_is_the_verified_file(void **state)
{
	struct symbolizer *s = symbolizer__new();
	char a[PATH_MAX], b[PATH_MAX], fdpath[64];
	struct sym_module *m;
	struct stat st_a;
	size_t len;
	void *buf;
	int fd;

	(void)state;
	buf = read_whole("/proc/self/exe", &len);
	tmp_path(a, sizeof(a), "open-file-a");
	tmp_path(b, sizeof(b), "open-file-b");
	write_file(a, buf, len);

	/* Reachable by its path: reopened there while it is the same file. */
	m = symbolizer__file(s, 0, NULL, a, NULL, 0);
	assert_null(sym_module__error(m));
	assert_int_equal(stat(a, &st_a), 0);
	assert_int_equal(fd_inode(sym_module__open_file(m)), st_a.st_ino);
	/* Replaced by another file: refused, not read. */
	write_file(b, "not the module", 14);
	assert_int_equal(rename(b, a), 0);
	assert_int_equal(sym_module__open_file(m), -ESTALE);
	symbolizer__free(s);

	/* Deleted (or reached only through /proc/PID/...): the descriptor the
	 * symbols were read from is kept and handed out. */
	s = symbolizer__new();
	write_file(b, buf, len);
	fd = open(b, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st_a), 0);
	assert_int_equal(unlink(b), 0);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	m = symbolizer__file(s, (uint32_t)getpid(), fdpath, b, NULL, 0);
	close(fd);
	assert_null(sym_module__error(m));
	assert_int_equal(fd_inode(sym_module__open_file(m)), st_a.st_ino);
	assert_int_equal(fd_inode(sym_module__open_file(m)), st_a.st_ino);
	/* No file behind the kernel or the vdso. */
	assert_true(sym_module__open_file(symbolizer__vdso(s)) < 0);
	assert_true(sym_module__open_file(NULL) < 0);
	symbolizer__free(s);
	free(buf);
}

static void expect_refused(const char *name, const void *bytes, size_t len)
{
	struct symbolizer *s = symbolizer__new();
	char path[PATH_MAX];
	struct sym_module *m;
	uint64_t vaddr;

	tmp_path(path, sizeof(path), name);
	write_file(path, bytes, len);
	m = symbolizer__file(s, 0, NULL, path, NULL, 0);
	assert_non_null(m);
	if (!sym_module__error(m))
		fail_msg("%s (%zu bytes): accepted", name, len);
	assert_int_equal(sym_module__symbol_count(m), 0);
	assert_null(sym_module__lookup(m, 0x1000, NULL));
	assert_false(sym_module__to_vaddr(m, 0x1000, &vaddr));
	assert_int_equal(vaddr, 0x1000);
	symbolizer__free(s);
}

static void test_garbage_files(void **state)
{
	struct symbolizer *s = symbolizer__new();
	static const size_t cuts[] = {1, 16, 63, 64, 100, 4096, 65536, 1 << 20};
	char path[PATH_MAX];
	struct sym_module *m;
	struct mapping mp;
	uint8_t noise[4096];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t len, i;
	uint8_t *libc;

	for (i = 0; i < sizeof(noise); i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		noise[i] = (uint8_t)x;
	}
	expect_refused("empty", "", 0);
	expect_refused("random", noise, sizeof(noise));
	memcpy(noise, "\177ELF\2\1\1", 7); /* ELF magic, garbage after */
	expect_refused("elf-magic", noise, sizeof(noise));

	assert_true(find_mapping(libc_symbol("qsort"), &mp));
	libc = read_whole(mp.path, &len);
	for (i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		if (cuts[i] < len)
			expect_refused("libc-truncated", libc, cuts[i]);
	expect_refused("libc-minus-one", libc, len - 1);

	/* Not regular files and non-paths are refused without opening. */
	m = symbolizer__file(s, 0, NULL, "/dev/zero", NULL, 0);
	assert_non_null(sym_module__error(m));
	m = symbolizer__file(s, 0, NULL, "[heap]", NULL, 0);
	assert_non_null(sym_module__error(m));
	m = symbolizer__file(s, 0, NULL, "//anon", NULL, 0);
	assert_non_null(sym_module__error(m));
	tmp_path(path, sizeof(path), "no-such-file");
	m = symbolizer__file(s, 0, NULL, path, NULL, 0);
	assert_non_null(strstr(sym_module__error(m), "No such file"));
	assert_ptr_equal(symbolizer__file(s, 0, NULL, path, NULL, 0), m);
	free(libc);
	symbolizer__free(s);
}

/* Random corruption of a real, small ELF image (our vdso): every variant
 * loads or is refused, and lookups over it stay in bounds (run under ASan). */
static void test_corrupted_elf(void **state)
{
	struct symbolizer *vs = symbolizer__new();
	struct sym_module *vdso = symbolizer__vdso(vs);
	size_t size = (size_t)sym_module__size(vdso), iter, i;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	uint64_t x = 0x2545f4914f6cdd1dull;
	char path[PATH_MAX];
	uint8_t *image, *buf;
	int loaded = 0;

	assert_true(base && size);
	image = malloc(size);
	buf = malloc(size);
	assert_non_null(image);
	assert_non_null(buf);
	memcpy(image, (const void *)base, size);
	tmp_path(path, sizeof(path), "vdso-image");

	/* The image as a file gives the same symbols as from memory. */
	{
		struct symbolizer *s = symbolizer__new();
		struct sym_module *m;

		write_file(path, image, size);
		m = symbolizer__file(s, 0, NULL, path, NULL, 0);
		assert_null(sym_module__error(m));
		assert_int_equal(sym_module__symbol_count(m), sym_module__symbol_count(vdso));
		symbolizer__free(s);
	}

	for (iter = 0; iter < 500; iter++) {
		struct symbolizer *s = symbolizer__new();
		struct sym_module *m;
		size_t len = size, flips;
		uint64_t a, vaddr;

		memcpy(buf, image, size);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		flips = 1 + x % 16;
		for (i = 0; i < flips; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* Half the flips in the headers, where they hurt most. */
			buf[(i & 1 ? x % 128 : x) % size] = (uint8_t)(x >> 32);
		}
		if (iter % 5 == 0)
			len = (size_t)(x >> 40) % size;
		write_file(path, buf, len);
		m = symbolizer__file(s, 0, NULL, path, NULL, 0);
		assert_non_null(m);
		if (!sym_module__error(m))
			loaded++;
		for (a = 0; a < 2 * size; a += 7) {
			sym_module__to_vaddr(m, a, &vaddr);
			sym_module__lookup(m, vaddr, NULL);
		}
		for (i = 0; i < sym_module__symbol_count(m); i++)
			assert_non_null(sym_module__symbol(m, i, NULL, NULL));
		symbolizer__free(s);
	}
	print_message("corrupted vdso images: %d of 500 loaded, the rest refused\n", loaded);
	free(buf);
	free(image);
	symbolizer__free(vs);
}

static int group_setup(void **state) { return mkdtemp(tmpdir) ? 0 : -1; }

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A module without a build ID is identified by a hash of its content. */
static void test_content_hash_without_build_id(void **state)
{
	char dir[] = "/tmp/ms-symtest-XXXXXX", a[64], b[64], cmd[1024];
	struct symbolizer *s = symbolizer__new();
	struct sym_module *ma, *mb, *me;
	size_t len;

	assert_non_null(s);
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/nobid", dir);
	snprintf(b, sizeof(b), "%s/nobid2", dir);
	snprintf(cmd, sizeof(cmd),
		 "cp /proc/self/exe %s && objcopy --remove-section .note.gnu.build-id %s && "
		 "cp %s %s && printf x >> %s",
		 a, a, a, b, b);
	assert_int_equal(system(cmd), 0);
	ma = symbolizer__file(s, 0, NULL, a, NULL, 0);
	mb = symbolizer__file(s, 0, NULL, b, NULL, 0);
	me = symbolizer__file(s, 0, "/proc/self/exe", "/proc/self/exe", NULL, 0);
	assert_non_null(ma);
	assert_non_null(mb);
	assert_null(sym_module__build_id(ma, &len));
	assert_int_not_equal(sym_module__content_hash(ma), 0);
	assert_int_not_equal(sym_module__content_hash(mb), 0);
	assert_int_not_equal(sym_module__content_hash(ma), sym_module__content_hash(mb));
	assert_int_equal(sym_module__content_hash(me), 0); /* has a build ID */
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	symbolizer__free(s);
}

/*
 * PLT entries are named "func@plt" (as perf and gdb): every entry objdump names
 * in libc's .plt/.plt.sec (e.g. __tunable_get_val@plt) is found at its start
 * and in its middle.
 */
static void test_plt_entries_named(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m;
	Dl_info info;
	char cmd[PATH_MAX + 96], line[512];
	int checked = 0;
	FILE *p;

	assert_non_null(s);
	assert_true(dladdr((void *)strlen, &info) && info.dli_fname);
	m = symbolizer__file(s, (uint32_t)getpid(), NULL, info.dli_fname, NULL, 0);
	assert_non_null(m);
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec '%s' 2>/dev/null",
		 info.dli_fname);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char name[256];
		uint64_t off;
		const char *got;

		/* "00000000000262c0 <__tunable_get_val@plt>:" */
		size_t len;

		/* not "*ABS*+0x..@plt" (IRELATIVE) nor "f@plt-0x10" (the header) */
		if (sscanf(line, "%llx <%255[^>]>:", &addr, name) != 2 || name[0] == '*' ||
		    (len = strlen(name)) < 5 || strcmp(name + len - 4, "@plt"))
			continue;
		got = sym_module__lookup(m, addr, &off);
		if (!got)
			print_message("no name at 0x%llx, objdump says %s\n", addr, name);
		assert_non_null(got);
		assert_string_equal(got, name);
		assert_int_equal(off, 0);
		got = sym_module__lookup(m, addr + 11, &off);
		assert_non_null(got);
		assert_string_equal(got, name);
		checked++;
	}
	pclose(p);
	print_message("%d PLT entries of %s checked against objdump\n", checked, info.dli_fname);
	assert_true(checked > 0);
	symbolizer__free(s);
}

/*
 * symbolizer__mapped_file: the path, and the map_files link too (it names
 * what is mapped at the range now, which may be another file than the
 * record's), are used only when their device and inode are the MMAP2
 * record's; the build ID is the file's own note either way.
 */
static void test_mapped_file_identity(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *by_path, *m;
	char map_files[128];
	const uint8_t *id, *id2;
	size_t len, len2;
	struct mapping mp;
	struct stat st;

	assert_true(find_mapping(libc_symbol("qsort"), &mp));
	assert_int_equal(stat(mp.path, &st), 0);
	by_path = symbolizer__file(s, 0, NULL, mp.path, NULL, 0);
	assert_null(sym_module__error(by_path));
	id = sym_module__build_id(by_path, &len);
	assert_non_null(id);

	m = symbolizer__mapped_file(s, 0, NULL, mp.path, major(st.st_dev), minor(st.st_dev),
				    st.st_ino);
	assert_ptr_equal(m, by_path);

	/* Another inode in the record: the file at the path is not used. */
	m = symbolizer__mapped_file(s, 0, NULL, mp.path, major(st.st_dev), minor(st.st_dev),
				    st.st_ino + 1);
	assert_non_null(m);
	assert_ptr_not_equal(m, by_path);
	assert_non_null(sym_module__error(m));
	assert_non_null(strstr(sym_module__error(m), "not the mapped file"));
	assert_null(sym_module__build_id(m, &len2));
	assert_int_equal(sym_module__symbol_count(m), 0);

	/* Through map_files: the same module, same ID. */
	snprintf(map_files, sizeof(map_files), "/proc/self/map_files/%" PRIx64 "-%" PRIx64,
		 mp.start, mp.end);
	m = symbolizer__mapped_file(s, (uint32_t)getpid(), map_files, mp.path,
				    major(st.st_dev), minor(st.st_dev), st.st_ino);
	assert_ptr_equal(m, by_path);
	id2 = sym_module__build_id(m, &len2);
	assert_int_equal(len2, len);
	assert_memory_equal(id2, id, len);

	/* A range reused by another file since the record (dlclose, then a
	 * dlopen of another library at the same base): map_files now names
	 * libc, the record names this test binary: the record's file is
	 * used, found by its path. */
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct stat self_st;

	assert_true(n > 0);
	self[n] = '\0';
	assert_int_equal(stat(self, &self_st), 0);
	m = symbolizer__mapped_file(s, (uint32_t)getpid(), map_files, self,
				    major(self_st.st_dev), minor(self_st.st_dev), self_st.st_ino);
	assert_non_null(m);
	assert_ptr_not_equal(m, by_path);
	assert_null(sym_module__error(m));
	assert_ptr_equal(m, symbolizer__file(s, 0, NULL, self, NULL, 0));
	symbolizer__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_own_function),
	    cmocka_unit_test(test_libc_functions),
	    cmocka_unit_test(test_libc_debug_file),
	    cmocka_unit_test(test_vdso),
	    cmocka_unit_test(test_kernel),
	    cmocka_unit_test(test_kallsyms_rules),
	    cmocka_unit_test(test_kernel_notes),
	    cmocka_unit_test(test_table_rules),
	    cmocka_unit_test(test_table_sort_paths_agree),
	    cmocka_unit_test(test_kallsyms_long_file),
	    cmocka_unit_test(test_build_id_mismatch),
	    cmocka_unit_test(test_cache_and_pinning),
	    cmocka_unit_test(test_garbage_files),
	    cmocka_unit_test(test_corrupted_elf),
	    cmocka_unit_test(test_content_hash_without_build_id),
	    cmocka_unit_test(test_open_file_is_the_verified_file),
	    cmocka_unit_test(test_plt_entries_named),
	    cmocka_unit_test(test_mapped_file_identity),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
