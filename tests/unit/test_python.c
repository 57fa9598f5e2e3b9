// SPDX-License-Identifier: MIT
/*
 * CPython support (userspace/runtimes/): the 3.13 _Py_DebugOffsets reader on
 * crafted blocks (valid, truncated, misaligned, spans out of range, wrong
 * cookie/version, free-threaded), the line-table decoders on hand-made
 * tables, the native-role names, the looks on a small spliced capture, the
 * 3.10-3.12 offset tables against the DWARF of the interpreters on this
 * machine (pyenv builds with -g; a version that is absent is skipped), and
 * which executables hold an interpreter (py_tracker__runs_cpython).
 */
#include <dirent.h>
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
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "userspace/runtimes/py_code.h"
#include "userspace/runtimes/py_layout.h"
#include "userspace/runtimes/py_procs.h"
#include "userspace/runtimes/py_roles.h"

/* ---- _Py_DebugOffsets ----------------------------------------------------- */

static void put(uint8_t *img, size_t off, uint64_t v)
{
	memcpy(img + off, &v, 8);
}

/* A block as 3.13.0 on x86-64 has it (values from its own _PyRuntime). */
static void valid_313(uint8_t *img)
{
	static const uint64_t fields[][2] = {
		{ 8, 0x030d00f0 }, { 16, 0 },
		{ 24, 283320 }, { 32, 608 }, { 40, 632 },
		{ 48, 194968 }, { 56, 0 }, { 64, 7264 }, { 72, 7344 },
		{ 152, 304 }, { 160, 0 }, { 168, 8 }, { 176, 16 }, { 184, 72 }, { 192, 152 },
		{ 200, 160 },
		{ 224, 80 }, { 232, 8 }, { 240, 0 }, { 248, 56 }, { 256, 72 }, { 264, 70 },
		{ 272, 208 }, { 280, 112 }, { 288, 120 }, { 296, 128 }, { 304, 136 }, { 312, 68 },
		{ 344, 200 },
		{ 512, 40 }, { 520, 16 }, { 528, 32 },
		{ 536, 40 }, { 544, 32 }, { 552, 16 }, { 560, 40 },
	};

	memset(img, 0, PY_DEBUG_OFFSETS_313_SIZE);
	memcpy(img, "xdebugpy", 8);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		put(img, fields[i][0], fields[i][1]);
}

static void test_debug_offsets_valid(void **state)
{
	uint8_t img[PY_DEBUG_OFFSETS_313_SIZE];
	struct py_layout l;
	char why[256];

	valid_313(img);
	assert_int_equal(py_layout__from_debug_offsets(img, sizeof(img), 0x030d00f0, &l, why,
						       sizeof(why)),
			 0);
	assert_int_equal(l.bpf.rt_interp_head, 632);
	assert_int_equal(l.bpf.interp_threads_head, 7344);
	assert_int_equal(l.bpf.ts_frame, 72);
	assert_int_equal(l.bpf.cframe_frame, MS_PY_NO_FIELD);
	assert_int_equal(l.bpf.ts_native_tid, 160);
	assert_int_equal(l.bpf.fr_code, 0);
	assert_int_equal(l.bpf.fr_instr, 56);
	assert_int_equal(l.bpf.fr_owner, 70);
	assert_int_equal(l.bpf.fr_read, 71);
	assert_int_equal(l.bpf.code_adaptive, 200);
	assert_int_equal(l.bpf.cstack_owner, 3);
	assert_int_equal(l.code_qualname, 128);
	assert_int_equal(l.ascii_size, 40);
	assert_int_equal(l.compact_size, 56);
	assert_int_equal(l.lines, PY_LINES_LOCATIONS);
}

static void expect_bad(const uint8_t *img, size_t len, uint32_t version, int err,
		       const char *needle)
{
	struct py_layout l;
	char why[256];

	assert_int_equal(py_layout__from_debug_offsets(img, len, version, &l, why, sizeof(why)),
			 err);
	if (!strstr(why, needle))
		fail_msg("reason '%s' does not mention '%s'", why, needle);
}

static void test_debug_offsets_untrusted(void **state)
{
	uint8_t img[PY_DEBUG_OFFSETS_313_SIZE];

	valid_313(img);
	expect_bad(img, 100, 0x030d00f0, -EINVAL, "truncated");
	expect_bad(NULL, 0, 0x030d00f0, -EINVAL, "truncated");
	expect_bad(img, sizeof(img), 0x030d01f0, -EINVAL, "the binary");

	img[0] = 'y';
	expect_bad(img, sizeof(img), 0, -EINVAL, "cookie");

	valid_313(img);
	put(img, 16, 1);
	expect_bad(img, sizeof(img), 0, -ENOTSUP, "free-threaded");

	valid_313(img);
	put(img, 8, 0x030e00f0); /* 3.14 lays the block out differently */
	expect_bad(img, sizeof(img), 0, -ENOTSUP, "3.13");

	valid_313(img);
	put(img, 232, 9); /* frame.previous misaligned */
	expect_bad(img, sizeof(img), 0, -EINVAL, "aligned");

	valid_313(img);
	put(img, 184, 304); /* thread.current_frame at the end of its structure */
	expect_bad(img, sizeof(img), 0, -EINVAL, "spans past");

	valid_313(img);
	put(img, 72, UINT64_MAX - 4); /* an offset that wraps */
	expect_bad(img, sizeof(img), 0, -EINVAL, "spans past");

	valid_313(img);
	put(img, 224, 4096);
	put(img, 248, 1024); /* inside the frame, outside the walker's read window */
	expect_bad(img, sizeof(img), 0, -EINVAL, "beyond");

	valid_313(img);
	put(img, 152, 1ull << 40); /* implausible structure size */
	expect_bad(img, sizeof(img), 0, -EINVAL, "thread state size");

	valid_313(img);
	put(img, 560, 8); /* asciiobject_size smaller than its own fields */
	expect_bad(img, sizeof(img), 0, -EINVAL, "asciiobject_size");
}

/* ---- line tables ---------------------------------------------------------- */

static void test_lines_310(void **state)
{
	/* firstlineno 10: [0,6) line 11, [6,10) no line, [10,14) line 13, [14,270) line 12 */
	static const uint8_t t[] = { 6, 1, 4, 0x80, 4, 2, 254, 0xff, 2, 0 };

	assert_int_equal(py_lines__lookup(t, sizeof(t), PY_LINES_LNOTAB310, 10, 0), 11);
	assert_int_equal(py_lines__lookup(t, sizeof(t), PY_LINES_LNOTAB310, 10, 4), 11);
	assert_int_equal(py_lines__lookup(t, sizeof(t), PY_LINES_LNOTAB310, 10, 6), -1);
	assert_int_equal(py_lines__lookup(t, sizeof(t), PY_LINES_LNOTAB310, 10, 10), 13);
	assert_int_equal(py_lines__lookup(t, sizeof(t), PY_LINES_LNOTAB310, 10, 14), 12);
	assert_int_equal(py_lines__lookup(t, sizeof(t), PY_LINES_LNOTAB310, 10, 300), -1);
	assert_int_equal(py_lines__lookup(t, sizeof(t), PY_LINES_LNOTAB310, 10, UINT32_MAX), 10);
	assert_int_equal(py_lines__lookup(t, 1, PY_LINES_LNOTAB310, 10, 0), -1);
}

static void test_lines_locations(void **state)
{
	static const uint8_t t[] = {
		0x80 | (13 << 3) | 0, 2,	    /* 1 unit, no column, line +1 (svarint 2) */
		0x80 | (11 << 3) | 1, 4, 9,	    /* 2 units, one-line form: +1 */
		0x80 | (15 << 3) | 0,		    /* 1 unit, no location */
		0x80 | (3 << 3) | 2, 7,		    /* 3 units, short form: same line */
		0x80 | (14 << 3) | 0, 0x45, 0x01, 0, 1, 1, /* long form: -34 (varint 69 odd) */
	};
	const size_t n = sizeof(t);

	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 0), 41);
	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 2), 42);
	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 4), 42);
	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 6), -1);
	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 8), 42);
	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 12), 42);
	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 14), 8);
	assert_int_equal(py_lines__lookup(t, n, PY_LINES_LOCATIONS, 40, 16), -1);
	/* truncated varint, an entry without its start bit */
	assert_int_equal(py_lines__lookup(t, 11, PY_LINES_LOCATIONS, 40, 14), -1);
	assert_int_equal(py_lines__lookup((const uint8_t *)"\x01", 1, PY_LINES_LOCATIONS, 1, 0), -1);
}

static void test_roles(void **state)
{
	assert_int_equal(py_role__of("_PyEval_EvalFrameDefault"), PY_ROLE_EVAL);
	assert_int_equal(py_role__of("_PyEval_EvalFrameDefault.cold"), PY_ROLE_PLUMBING);
	assert_int_equal(py_role__of("cfunction_vectorcall_FASTCALL_KEYWORDS.lto_priv.0"),
			 PY_ROLE_PLUMBING);
	assert_int_equal(py_role__of("_PyFunction_Vectorcall"), PY_ROLE_PLUMBING);
	assert_int_equal(py_role__of("list_sort_impl.lto_priv.0"), PY_ROLE_NONE);
	assert_int_equal(py_role__of("builtin_sorted"), PY_ROLE_NONE);
	assert_int_equal(py_role__of(""), PY_ROLE_NONE);
	assert_int_equal(py_role__of(NULL), PY_ROLE_NONE);
}

/* ---- looks ---------------------------------------------------------------- */

static uint32_t nat(struct capture_builder *b, const char *fn, uint32_t flags)
{
	struct capture_frame f = { .module = CAPTURE_NONE, .flags = flags, .address = 1 };

	f.function = capture_builder__string(b, fn);
	return capture_builder__add_frame(b, &f);
}

static uint32_t py(struct capture_builder *b, const char *fn, uint32_t line, uint32_t first)
{
	struct capture_frame f = { .module = CAPTURE_NONE, .flags = CAPTURE_FRAME_F_INTERPRETED };

	f.function = capture_builder__string(b, fn);
	f.file = capture_builder__string(b, "/s/app.py");
	f.line = line;
	f.first_line = first;
	return capture_builder__add_frame(b, &f);
}

static void look_folded(const struct capture *c, enum analysis_look_kind kind, const char *want)
{
	struct analysis_look *look = NULL;
	struct analysis_names *names;
	struct analysis_tree *tree;
	struct analysis_query q;
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(analysis_look__new(c, kind, &look), 0);
	names = analysis_names__new(analysis_look__capture(look));
	assert_non_null(names);
	analysis_query__init(&q, 0);
	tree = analysis_tree__new(names, &q);
	assert_non_null(tree);
	assert_int_equal(analysis_tree__folded(tree, &text, &len), 0);
	assert_string_equal(text, want);
	free(text);
	analysis_tree__free(tree);
	analysis_names__free(names);
	analysis_look__free(look);
}

static void test_looks(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_event ev = { 0 };
	struct capture_process pr = { .pid = 1 };
	struct capture_thread th = { .tid = 1 };
	struct capture *c = NULL;
	uint32_t main_, eval, vec, sorted, modf, outer, key, st, leaf, fnative, r;
	char err[256];
	void *buf;
	size_t len;

	assert_non_null(b);
	ev.name = capture_builder__string(b, "cpu-clock");
	ev.unit = capture_builder__string(b, "samples");
	assert_int_equal(capture_builder__add_event(b, &ev), 0);
	th.process = capture_builder__add_process(b, &pr);
	th.comm = capture_builder__string(b, "python");
	r = capture_builder__add_thread(b, &th);
	main_ = nat(b, "main", 0);
	eval = nat(b, "_PyEval_EvalFrameDefault", CAPTURE_FRAME_F_INTERPRETER);
	vec = nat(b, "_PyFunction_Vectorcall", CAPTURE_FRAME_F_INTERPRETER);
	sorted = nat(b, "list_sort", 0);
	leaf = nat(b, "long_add", 0);
	fnative = nat(b, "native_only", 0);
	modf = py(b, "<module>", 9, 1);
	outer = py(b, "outer", 3, 2);
	key = py(b, "key", 6, 5);
	/* main;<module>;outer;eval;list_sort;vectorcall;key;eval;long_add */
	st = capture_builder__add_stack(b, CAPTURE_NONE, main_);
	st = capture_builder__add_stack(b, st, modf);
	st = capture_builder__add_stack(b, st, outer);
	st = capture_builder__add_stack(b, st, eval);
	st = capture_builder__add_stack(b, st, sorted);
	st = capture_builder__add_stack(b, st, vec);
	st = capture_builder__add_stack(b, st, key);
	st = capture_builder__add_stack(b, st, eval);
	st = capture_builder__add_stack(b, st, leaf);
	capture_builder__add_sample(b, &(struct capture_sample){ .thread = r, .stack = st,
								 .weight = 1 });
	st = capture_builder__add_stack(b, CAPTURE_NONE, main_);
	st = capture_builder__add_stack(b, st, fnative);
	capture_builder__add_sample(b, &(struct capture_sample){ .thread = r, .stack = st,
								 .weight = 1 });
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "looks", &c, err, sizeof(err)), 0);
	free(buf);
	/* first_line survives the round trip for interpreted frames */
	assert_int_equal(c->frames[outer].first_line, 2);

	look_folded(c, ANALYSIS_LOOK_LOGICAL,
		    "main;<module> (/s/app.py:9);outer (/s/app.py:3);_PyEval_EvalFrameDefault;"
		    "list_sort;_PyFunction_Vectorcall;key (/s/app.py:6);_PyEval_EvalFrameDefault;"
		    "long_add 1\nmain;native_only 1\n");
	look_folded(c, ANALYSIS_LOOK_NATIVE,
		    "main;_PyEval_EvalFrameDefault;list_sort;_PyFunction_Vectorcall;"
		    "_PyEval_EvalFrameDefault;long_add 1\nmain;native_only 1\n");
	look_folded(c, ANALYSIS_LOOK_PYTHON,
		    "<module> (/s/app.py:9);outer (/s/app.py:3);list_sort;key (/s/app.py:6);"
		    "long_add 1\nmain;native_only 1\n");
	capture__free(c);
	capture_builder__free(b);
}

/* ---- tables against DWARF ------------------------------------------------- */

/* The struct/union/typedef DIE named name with a body, in any CU. */
static bool dwarf_find_type(Dwarf *dw, const char *name, Dwarf_Die *out)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu, child;

		if (dwarf_offdie(dw, off + hsize, &cu) && !dwarf_child(&cu, &child)) {
			do {
				int tag = dwarf_tag(&child);
				const char *n = dwarf_diename(&child);

				if (!n || strcmp(n, name))
					continue;
				if (tag == DW_TAG_typedef) {
					Dwarf_Attribute a;
					Dwarf_Die t;

					if (dwarf_attr(&child, DW_AT_type, &a) && dwarf_formref_die(&a, &t) &&
					    dwarf_haschildren(&t)) {
						*out = t;
						return true;
					}
				} else if ((tag == DW_TAG_structure_type || tag == DW_TAG_union_type) &&
					   dwarf_haschildren(&child)) {
					*out = child;
					return true;
				}
			} while (dwarf_siblingof(&child, &child) == 0);
		}
		off = next;
	}
	return false;
}

/* Offset of member path "a.b" in type t, or -1. */
static long dwarf_member_offset(Dwarf_Die *t, const char *path)
{
	char part[64];
	const char *dot = strchr(path, '.');
	size_t n = dot ? (size_t)(dot - path) : strlen(path);
	Dwarf_Die child;

	snprintf(part, sizeof(part), "%.*s", (int)n, path);
	if (dwarf_child(t, &child))
		return -1;
	do {
		Dwarf_Attribute a;
		Dwarf_Word loc;
		const char *name = dwarf_diename(&child);

		if (dwarf_tag(&child) != DW_TAG_member || !name || strcmp(name, part))
			continue;
		if (!dwarf_attr(&child, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &loc))
			loc = 0; /* union members */
		if (!dot)
			return (long)loc;
		{
			Dwarf_Die mt;

			if (!dwarf_attr(&child, DW_AT_type, &a) || !dwarf_formref_die(&a, &mt))
				return -1;
			while (dwarf_tag(&mt) == DW_TAG_typedef &&
			       dwarf_attr(&mt, DW_AT_type, &a) && dwarf_formref_die(&a, &mt))
				;
			long sub = dwarf_member_offset(&mt, dot + 1);

			return sub < 0 ? -1 : (long)loc + sub;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return -1;
}

struct field_check {
	const char *type, *member;
	size_t layout_off; /* offsetof into struct py_layout of a uint16_t */
};

#define B(f) offsetof(struct py_layout, bpf.f)
#define U(f) offsetof(struct py_layout, f)

static void check_version(const char *lib, uint32_t version, const struct field_check *fc,
			  size_t n)
{
	struct py_layout l;
	Dwarf_Die t;
	Dwarf *dw;
	int fd = open(lib, O_RDONLY);

	if (fd < 0) {
		printf("  skip: %s absent\n", lib);
		return;
	}
	dw = dwarf_begin(fd, DWARF_C_READ);
	assert_non_null(dw);
	assert_int_equal(py_layout__from_table(version, &l), 0);
	for (size_t i = 0; i < n; i++) {
		uint16_t want;
		long got;

		memcpy(&want, (const uint8_t *)&l + fc[i].layout_off, 2);
		if (!dwarf_find_type(dw, fc[i].type, &t))
			fail_msg("%s: no type %s", lib, fc[i].type);
		got = dwarf_member_offset(&t, fc[i].member);
		if (got != (long)want)
			fail_msg("%s: %s.%s at %ld, table says %u", lib, fc[i].type, fc[i].member, got,
				 want);
	}
	printf("  %s: %zu offsets match DWARF\n", lib, n);
	dwarf_end(dw);
	close(fd);
}

static void test_tables_match_dwarf(void **state)
{
	static const struct field_check v310[] = {
		{ "_PyRuntimeState", "interpreters.head", B(rt_interp_head) },
		{ "PyInterpreterState", "next", B(interp_next) },
		{ "PyInterpreterState", "tstate_head", B(interp_threads_head) },
		{ "PyThreadState", "next", B(ts_next) },
		{ "PyThreadState", "thread_id", B(ts_thread_id) },
		{ "PyThreadState", "frame", B(ts_frame) },
		{ "_frame", "f_back", B(fr_previous) },
		{ "_frame", "f_code", B(fr_code) },
		{ "_frame", "f_lasti", B(fr_instr) },
		{ "PyCodeObject", "co_firstlineno", B(code_firstlineno) },
		{ "PyCodeObject", "co_name", B(code_name) },
		{ "PyCodeObject", "co_filename", U(code_filename) },
		{ "PyCodeObject", "co_linetable", U(code_linetable) },
		{ "PyASCIIObject", "state", U(unicode_state) },
		{ "PyASCIIObject", "length", U(unicode_length) },
		{ "PyBytesObject", "ob_sval", U(bytes_sval) },
	};
	static const struct field_check v311[] = {
		{ "_PyRuntimeState", "interpreters.head", B(rt_interp_head) },
		{ "PyInterpreterState", "next", B(interp_next) },
		{ "PyInterpreterState", "threads.head", B(interp_threads_head) },
		{ "PyThreadState", "next", B(ts_next) },
		{ "PyThreadState", "native_thread_id", B(ts_native_tid) },
		{ "PyThreadState", "thread_id", B(ts_thread_id) },
		{ "PyThreadState", "cframe", B(ts_frame) },
		{ "_PyCFrame", "current_frame", B(cframe_frame) },
		{ "_PyInterpreterFrame", "previous", B(fr_previous) },
		{ "_PyInterpreterFrame", "f_code", B(fr_code) },
		{ "_PyInterpreterFrame", "prev_instr", B(fr_instr) },
		{ "_PyInterpreterFrame", "is_entry", B(fr_is_entry) },
		{ "_PyInterpreterFrame", "owner", B(fr_owner) },
		{ "PyCodeObject", "co_firstlineno", B(code_firstlineno) },
		{ "PyCodeObject", "co_name", B(code_name) },
		{ "PyCodeObject", "co_code_adaptive", B(code_adaptive) },
		{ "PyCodeObject", "co_qualname", U(code_qualname) },
		{ "PyCodeObject", "co_filename", U(code_filename) },
		{ "PyCodeObject", "co_linetable", U(code_linetable) },
		{ "PyASCIIObject", "state", U(unicode_state) },
		{ "PyASCIIObject", "length", U(unicode_length) },
		{ "PyBytesObject", "ob_sval", U(bytes_sval) },
	};
	static const struct field_check v312[] = {
		{ "_PyRuntimeState", "interpreters.head", B(rt_interp_head) },
		{ "PyInterpreterState", "next", B(interp_next) },
		{ "PyInterpreterState", "threads.head", B(interp_threads_head) },
		{ "PyThreadState", "next", B(ts_next) },
		{ "PyThreadState", "native_thread_id", B(ts_native_tid) },
		{ "PyThreadState", "thread_id", B(ts_thread_id) },
		{ "PyThreadState", "cframe", B(ts_frame) },
		{ "_PyCFrame", "current_frame", B(cframe_frame) },
		{ "_PyInterpreterFrame", "previous", B(fr_previous) },
		{ "_PyInterpreterFrame", "f_code", B(fr_code) },
		{ "_PyInterpreterFrame", "prev_instr", B(fr_instr) },
		{ "_PyInterpreterFrame", "owner", B(fr_owner) },
		{ "PyCodeObject", "co_firstlineno", B(code_firstlineno) },
		{ "PyCodeObject", "co_name", B(code_name) },
		{ "PyCodeObject", "co_code_adaptive", B(code_adaptive) },
		{ "PyCodeObject", "co_qualname", U(code_qualname) },
		{ "PyCodeObject", "co_filename", U(code_filename) },
		{ "PyCodeObject", "co_linetable", U(code_linetable) },
		{ "PyASCIIObject", "state", U(unicode_state) },
		{ "PyASCIIObject", "length", U(unicode_length) },
		{ "PyBytesObject", "ob_sval", U(bytes_sval) },
	};

	check_version("/root/.pyenv/versions/3.10.13/lib/libpython3.10.so.1.0", 0x030a0df0, v310,
		      sizeof(v310) / sizeof(v310[0]));
	check_version("/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0", 0x030b07f0, v311,
		      sizeof(v311) / sizeof(v311[0]));
	check_version("/root/.pyenv/versions/3.12.1/lib/libpython3.12.so.1.0", 0x030c01f0, v312,
		      sizeof(v312) / sizeof(v312[0]));
	/* Debian's release interpreter: its separate debug file (python3.11-dbg). */
	{
		DIR *d = opendir("/usr/lib/debug/.build-id");
		char path[600] = "";
		FILE *p = popen("readelf -n /usr/bin/python3.11 2>/dev/null | "
				"sed -n 's/.*Build ID: \\([0-9a-f]*\\).*/\\1/p'", "r");
		char id[128] = "";

		if (p && fgets(id, sizeof(id), p)) {
			id[strcspn(id, "\n")] = '\0';
			if (strlen(id) > 2)
				snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id,
					 id + 2);
		}
		if (p)
			pclose(p);
		if (d)
			closedir(d);
		if (path[0])
			check_version(path, 0x030b02f0, v311, sizeof(v311) / sizeof(v311[0]));
		else
			printf("  skip: no build ID for /usr/bin/python3.11\n");
	}
}

/* ---- interpreter executables --------------------------------------------- */

/* Debian's python3.11 (libpython linked in, _PyRuntime in .dynsym) holds
 * CPython, /bin/sh does not, a missing file is -ENOENT; the answers come
 * from the cache by file identity: asking twice, or through another path
 * naming the same file (/proc/self/exe here is the test itself), reads
 * each file once. */
static void test_runs_cpython(void **state)
{
	struct py_tracker *t = py_tracker__new(-1, -1, -1, -1);
	uint64_t reads;

	(void)state;
	assert_non_null(t);
	assert_int_equal(py_tracker__runs_cpython(t, "/bin/sh"), 0);
	assert_int_equal(py_tracker__runs_cpython(t, "/proc/self/exe"), 0);
	assert_int_equal(py_tracker__runs_cpython(t, "/no/such/file"), -ENOENT);
	if (!access("/usr/bin/python3.11", R_OK)) {
		assert_int_equal(py_tracker__runs_cpython(t, "/usr/bin/python3.11"), 1);
		assert_int_equal(py_tracker__elf_reads(t), 3);
	} else {
		printf("  skip: no /usr/bin/python3.11\n");
	}
	reads = py_tracker__elf_reads(t);
	assert_int_equal(py_tracker__runs_cpython(t, "/bin/sh"), 0);
	assert_int_equal(py_tracker__runs_cpython(t, "/proc/self/exe"), 0);
	if (!access("/usr/bin/python3.11", R_OK))
		assert_int_equal(py_tracker__runs_cpython(t, "/usr/bin/python3.11"), 1);
	assert_int_equal(py_tracker__elf_reads(t), reads);
	py_tracker__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debug_offsets_valid),
		cmocka_unit_test(test_debug_offsets_untrusted),
		cmocka_unit_test(test_lines_310),
		cmocka_unit_test(test_lines_locations),
		cmocka_unit_test(test_roles),
		cmocka_unit_test(test_looks),
		cmocka_unit_test(test_tables_match_dwarf),
		cmocka_unit_test(test_runs_cpython),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
