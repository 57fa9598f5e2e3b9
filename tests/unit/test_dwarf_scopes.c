// SPDX-License-Identifier: MIT
/*
 * userspace/symbols/dwarf_scopes.c against libdw itself: for every address
 * of every unit of a binary (this test's own, or argv[1..] when run by
 * hand, e.g. a libpython with its debug info: every 61st address), the inline chain from the
 * compiled scope table equals the one dwarf_getscopes + dwarf_getscopes_die
 * give (the reference eu-addr2line -i uses): function names, call files
 * and call lines, innermost first.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
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

#include "userspace/symbols/dwarf_scopes.h"

static const char *const *paths;
static int npaths;

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t ds_leaf(uint64_t x)
{
	return x ^ (x << 7);
}

static inline __attribute__((always_inline)) uint64_t ds_mid(uint64_t x)
{
	for (int i = 0; i < 3; i++) {
		uint64_t y = ds_leaf(x + (uint64_t)i);

		x = ds_leaf(y) * 31;
	}
	return x;
}

__attribute__((noinline, used)) uint64_t ds_outer(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += ds_mid(i);
	return sink;
}

struct chain {
	const char *fn[16];
	uint64_t call_line[16];
	const char *call_file[16];
	int n;
};

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return name;
}

static const char *die_call_file(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Die cu;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx))
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles))
		return NULL;
	return idx < nfiles ? dwarf_filesrc(files, idx, NULL, NULL) : NULL;
}

/* The reference: what dwarf_lines.c did before the table. */
static void ref_chain(Dwarf_Die *unit, uint64_t pc, struct chain *c)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(unit, pc, &scopes);

	c->n = 0;
	if (n > 0) {
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
	}
	for (int i = 0; i < n && c->n < 16; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute a;
		Dwarf_Word cl = 0;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram &&
		    tag != DW_TAG_entry_point)
			continue;
		c->fn[c->n] = die_name(&scopes[i]);
		c->call_file[c->n] = NULL;
		c->call_line[c->n] = 0;
		if (tag == DW_TAG_inlined_subroutine) {
			c->call_file[c->n] = die_call_file(&scopes[i]);
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl))
				cl = 0;
			c->call_line[c->n] = cl;
		}
		c->n++;
		if (tag != DW_TAG_inlined_subroutine)
			break;
	}
	free(scopes);
}

static void table_chain(const struct dw_scopes *s, uint64_t pc, struct chain *c)
{
	int32_t node = dw_scopes__innermost(s, pc);

	c->n = 0;
	while (node >= 0 && c->n < 16) {
		const struct dw_scope_node *sn = &s->nodes[node];

		node = sn->parent;
		if (sn->hidden)
			continue;
		c->fn[c->n] = sn->function;
		c->call_file[c->n] = sn->call_file;
		c->call_line[c->n] = sn->call_line;
		c->n++;
		if (!sn->inlined)
			break;
	}
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Compares every address of every unit of path; returns mismatches. */
static size_t compare_file(const char *path, size_t *checked, bool *saw_ds_mid)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	Dwarf_CU *cu = NULL, *next;
	size_t bad = 0;

	assert_non_null(dw);
	for (;;) {
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_Die cudie, subdie, *scope;
		struct dw_scopes *s = NULL;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (dwarf_get_units(dw, cu, &next, &version, &unit_type, &cudie, &subdie))
			break;
		cu = next;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton)
			continue;
		scope = unit_type == DW_UT_skeleton ? &subdie : &cudie;
		assert_int_equal(dw_scopes__build(scope, &s), 0);
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			for (uint64_t pc = lo; pc < hi; pc += npaths ? 61 : 1) {
				struct chain want, got;
				bool same;

				ref_chain(scope, pc, &want);
				table_chain(s, pc, &got);
				same = want.n == got.n;
				for (int i = 0; same && i < want.n; i++)
					same = str_eq(want.fn[i], got.fn[i]) &&
					       str_eq(want.call_file[i], got.call_file[i]) &&
					       want.call_line[i] == got.call_line[i];
				for (int i = 0; i < got.n; i++)
					if (got.fn[i] && !strcmp(got.fn[i], "ds_mid") && i + 1 < got.n)
						*saw_ds_mid = true;
				(*checked)++;
				if (!same && bad++ < 10)
					print_message("%s 0x%lx: libdw %d frames (%s), table %d (%s)\n",
						      path, (unsigned long)pc, want.n,
						      want.n ? want.fn[0] : "-", got.n,
						      got.n ? got.fn[0] : "-");
			}
		}
		dw_scopes__free(s);
	}
	dwarf_end(dw);
	close(fd);
	return bad;
}

static void test_table_equals_libdw(void **state)
{
	const char *self[] = { "/proc/self/exe" };
	const char *const *p = npaths ? paths : self;
	int n = npaths ? npaths : 1;
	bool saw = false;

	(void)state;
	assert_true(ds_outer(3) != 1);
	for (int i = 0; i < n; i++) {
		size_t checked = 0, bad = compare_file(p[i], &checked, &saw);

		print_message("%s: %zu addresses, %zu differ\n", p[i], checked, bad);
		assert_int_equal(bad, 0);
	}
	if (!npaths)
		assert_true(saw); /* ds_mid inlined into ds_outer was seen */
}

static void test_empty_and_null(void **state)
{
	(void)state;
	assert_int_equal(dw_scopes__innermost(NULL, 0x1000), -1);
	dw_scopes__free(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_equals_libdw),
		cmocka_unit_test(test_empty_and_null),
	};

	paths = (const char *const *)argv + 1;
	npaths = argc - 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
