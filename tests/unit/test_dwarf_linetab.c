// SPDX-License-Identifier: MIT
/*
 * userspace/symbols/dwarf_linetab.c against libdw itself: for every address
 * of every unit of a binary (this test's own, or argv[1..] when run by
 * hand, e.g. a libpython or a libc debug file), the line and file name from
 * the compact table equal what dwarf_getsrc_die + dwarf_lineno +
 * dwarf_linesrc give (what dwarf_lines.c used before the table): the same
 * line, a positive one only, and the same file name, or none for both.
 * Addresses below a unit's first row, at the end of a sequence and in gaps
 * between sequences are among them.  And the name set: one copy per
 * distinct string, that outlives the Dwarf it was read from.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/symbols/dwarf_linetab.h"

static const char *const *paths;
static int npaths;

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t lt_leaf(uint64_t x)
{
	return x ^ (x << 9);
}

__attribute__((noinline, used)) uint64_t lt_outer(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += lt_leaf(i) * 3;
	return sink;
}

/* The reference: what dwarf_lines.c did before the table. */
static void ref_line(Dwarf_Die *cu, uint64_t pc, const char **file, uint32_t *line)
{
	Dwarf_Line *l = dwarf_getsrc_die(cu, pc);
	int ln;

	*file = NULL;
	*line = 0;
	if (l && !dwarf_lineno(l, &ln) && ln > 0) {
		*line = (uint32_t)ln;
		*file = dwarf_linesrc(l, NULL, NULL);
	}
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

struct totals {
	size_t checked, with_line, bad, rows, bytes;
};

/* Compares the addresses of every unit of path, [lo - 16, hi + 16) of each
 * range. */
static void compare_file(const char *path, struct totals *t)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	struct dw_names *names = dw_names__new();
	Dwarf_CU *cu = NULL, *next;

	assert_non_null(dw);
	assert_non_null(names);
	for (;;) {
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_Die cudie, subdie;
		struct dw_linetab *lt = NULL;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		size_t rows = 0;
		int err;

		if (dwarf_get_units(dw, cu, &next, &version, &unit_type, &cudie, &subdie))
			break;
		cu = next;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_partial)
			continue;
		err = dw_linetab__build(&cudie, names, &lt, &rows);
		assert_true(err == 0 || err == -ENOENT);
		t->rows += rows;
		t->bytes += dw_linetab__bytes(lt);
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			uint64_t from = lo > 16 ? lo - 16 : 0;

			for (uint64_t pc = from; pc < hi + 16; pc++) {
				const char *wf, *gf;
				uint32_t wl, gl;

				ref_line(&cudie, pc, &wf, &wl);
				dw_linetab__find(lt, pc, &gf, &gl);
				t->checked++;
				t->with_line += wl > 0;
				if (wl == gl && str_eq(wf, gf))
					continue;
				if (t->bad++ < 10)
					print_message("%s 0x%lx: libdw %s:%u, table %s:%u\n", path,
						      (unsigned long)pc, wf ? wf : "-", wl,
						      gf ? gf : "-", gl);
			}
		}
		dw_linetab__free(lt);
	}
	dwarf_end(dw);
	close(fd);
	dw_names__free(names);
}

static void test_table_equals_libdw(void **state)
{
	const char *self[] = {"/proc/self/exe"};
	const char *const *p = npaths ? paths : self;
	int n = npaths ? npaths : 1;

	(void)state;
	assert_true(lt_outer(3) != 1);
	for (int i = 0; i < n; i++) {
		struct totals t = {0};

		compare_file(p[i], &t);
		print_message("%s: %zu addresses (%zu with a line), %zu differ; libdw %zu rows, "
			      "table %zu bytes\n",
			      p[i], t.checked, t.with_line, t.bad, t.rows, t.bytes);
		assert_int_equal(t.bad, 0);
		/* the comparison saw lines, and the table is smaller than
		 * libdw's 40-byte rows by far */
		assert_true(t.with_line > t.checked / 4);
		assert_true(t.bytes * 4 < t.rows * 40);
	}
}

/* Interning: equal strings share one copy, which outlives its source. */
static void test_names(void **state)
{
	struct dw_names *n = dw_names__new();
	const char *a, *b, *c, *null;
	char buf[64];

	(void)state;
	assert_non_null(n);
	snprintf(buf, sizeof(buf), "ceval.c");
	assert_int_equal(dw_names__intern(n, buf, &a), 0);
	assert_ptr_not_equal(a, buf);
	memset(buf, 'x', sizeof(buf) - 1); /* the source goes away */
	assert_string_equal(a, "ceval.c");
	assert_int_equal(dw_names__intern(n, "ceval.c", &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(dw_names__intern(n, "ceval.h", &c), 0);
	assert_ptr_not_equal(a, c);
	assert_int_equal(dw_names__intern(n, NULL, &null), 0);
	assert_null(null);
	/* many names: the set grows, earlier pointers stay */
	for (int i = 0; i < 10000; i++) {
		const char *x;

		snprintf(buf, sizeof(buf), "file%d.c", i);
		assert_int_equal(dw_names__intern(n, buf, &x), 0);
		assert_string_equal(x, buf);
	}
	assert_string_equal(a, "ceval.c");
	assert_int_equal(dw_names__intern(n, "ceval.c", &b), 0);
	assert_ptr_equal(a, b);
	assert_true(dw_names__bytes(n) > 10000 * 8);
	dw_names__free(n);
	dw_names__free(NULL);
}

static void test_empty_and_null(void **state)
{
	const char *f = "x";
	uint32_t l = 7;

	(void)state;
	dw_linetab__find(NULL, 0x1000, &f, &l);
	assert_null(f);
	assert_int_equal(l, 0);
	assert_int_equal(dw_linetab__bytes(NULL), 0);
	dw_linetab__free(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_equals_libdw),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_empty_and_null),
	};

	paths = (const char *const *)argv + 1;
	npaths = argc - 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
