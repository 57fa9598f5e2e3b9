// SPDX-License-Identifier: MIT
/*
 * The GDB JIT interface reader (userspace/runtimes/gdb_jit.h), with this
 * test's own executable as the registered object (its function symbols lie
 * at their ELF addresses): the list read only when its bytes change,
 * damaged lists counted, and objects read again when their code is
 * remapped, unregistered or registered again with other bytes.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/runtimes/gdb_jit.h"
#include "userspace/runtimes/jit_funcs.h"
#include "userspace/runtimes/jit_policy.h"
#include "userspace/runtimes/jit_proc.h"

static struct jit_target self_target(void)
{
	struct jit_target t;

	assert_int_equal(jit_target__live(getpid(), &t), 0);
	return t;
}

static const struct jit_fn *fn_named(const struct jit_funcs *f, const char *name)
{
	for (uint32_t i = 0; i < f->n; i++)
		if (!(f->fns[i].flags & JIT_FN_ENDED) && !strcmp(jit_funcs__name(f, &f->fns[i]), name))
			return &f->fns[i];
	return NULL;
}

static uint8_t *read_self(size_t *size)
{
	struct stat st;
	uint8_t *img;
	int fd = open("/proc/self/exe", O_RDONLY);

	assert_true(fd >= 0 && !fstat(fd, &st));
	img = malloc((size_t)st.st_size);
	assert_non_null(img);
	assert_int_equal(read(fd, img, (size_t)st.st_size), st.st_size);
	close(fd);
	*size = (size_t)st.st_size;
	return img;
}

struct test_entry {
	struct test_entry *next, *prev;
	const char *symfile_addr;
	uint64_t symfile_size;
};

static struct {
	uint32_t version, action_flag;
	struct test_entry *relevant, *first;
} test_descriptor;

__attribute__((noinline)) int gdb_jit_marker(int x)
{
	return x * 7 + 3;
}

/* This test's own executable as the registered object: its function
 * symbols become functions at their ELF addresses. */
static void test_gdb_jit(void **state)
{
	struct test_entry e1 = { 0 }, e2 = { 0 };
	struct jit_target t = self_target();
	struct jit_funcs f;
	struct gdb_jit g;
	size_t size;
	uint8_t *img = read_self(&size);
	uint32_t added;

	jit_funcs__init(&f);
	gdb_jit__init(&g, (uintptr_t)&test_descriptor);
	test_descriptor.version = 1;
	/* An empty list: nothing, and nothing copied again while unchanged. */
	assert_int_equal(gdb_jit__read(&g, &f, &t, 1, &added), 0);
	assert_int_equal(added, 0);
	e1.symfile_addr = (const char *)img;
	e1.symfile_size = (uint64_t)size;
	test_descriptor.first = &e1;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 2, &added), 0);
	assert_true(added > 10);
	assert_int_equal(g.nobjs, 1);
	uint64_t reads = g.reads;

	assert_int_equal(gdb_jit__read(&g, &f, &t, 3, &added), 0);
	assert_int_equal(added, 0);
	assert_int_equal(g.reads, reads); /* the list's bytes did not change */
	/* The marker is named at its ELF address (this is a PIE: the
	 * object's addresses are its own, as the interface says). */
	bool found = false;

	for (uint32_t i = 0; i < f.n; i++)
		if (!strcmp(jit_funcs__name(&f, &f.fns[i]), "gdb_jit_marker")) {
			found = true;
			assert_true(f.fns[i].flags & JIT_FN_GDB);
			assert_int_equal(f.fns[i].object, 0);
		}
	assert_true(found);
	/* A second entry of garbage, a cyclic list, a wrong version: counted. */
	e2.symfile_addr = "not an ELF object";
	e2.symfile_size = 17;
	e1.next = &e2;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 4, &added), 0);
	assert_int_equal(f.problems[JIT_PROBLEM_GDB_BAD], 1);
	e2.next = &e1;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 5, &added), 0);
	assert_int_equal(f.problems[JIT_PROBLEM_GDB_BAD], 2);
	e2.next = NULL;
	e2.symfile_size = JIT_GDB_IMAGE_MAX + 1ull;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 6, &added), 0);
	assert_int_equal(f.problems[JIT_PROBLEM_GDB_BAD], 3);
	test_descriptor.version = 2;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 7, &added), 0);
	assert_int_equal(f.problems[JIT_PROBLEM_GDB_BAD], 4);
	assert_true(gdb_jit_marker(1) == 10);
	gdb_jit__release(&g);
	jit_funcs__release(&f);
	free(img);
}


#define RENAMED_MAX 16

/* The name "gdb_jit_marker" in img (its string tables among others),
 * renamed in place to "gdb_jit_markeR" or back (to 'r'; same length: the
 * object stays valid).  The offsets renamed go to at[] when renaming and
 * are read from it when renaming back.  Returns the number renamed. */
static int rename_marker(uint8_t *img, size_t size, size_t *at, char last)
{
	static const char name[] = "gdb_jit_marker";
	int n = 0;

	if (last == 'r') {
		for (n = 0; n < RENAMED_MAX && at[n]; n++)
			img[at[n]] = 'r';
		return n;
	}
	for (size_t i = 0; i + sizeof(name) <= size && n < RENAMED_MAX; i++)
		if (!memcmp(img + i, name, sizeof(name))) {
			img[i + sizeof(name) - 2] = last;
			at[n++] = i + sizeof(name) - 2;
		}
	return n;
}

/*
 * Code remapped, unregistered and registered again: each time the objects
 * are read again.  A mapping over the marker ends it and the next read
 * (the list's bytes unchanged) makes it live again from the same object; an
 * unregistered object's functions end; registered again at the same address
 * with other bytes, it is a new object whose names are the new ones.
 */
static void test_gdb_jit_reregister(void **state)
{
	struct test_entry e = { 0 };
	struct jit_target t = self_target();
	struct jit_funcs f;
	struct gdb_jit g;
	const struct jit_fn *fn;
	uint64_t start, end;
	size_t size;
	uint8_t *img = read_self(&size);
	size_t renamed[RENAMED_MAX + 1] = { 0 };
	uint32_t added;

	jit_funcs__init(&f);
	gdb_jit__init(&g, (uintptr_t)&test_descriptor);
	test_descriptor.version = 1;
	e.symfile_addr = (const char *)img;
	e.symfile_size = (uint64_t)size;
	test_descriptor.first = &e;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 10, &added), 0);
	fn = fn_named(&f, "gdb_jit_marker");
	assert_non_null(fn);
	start = fn->start;
	end = fn->end;
	assert_ptr_equal(jit_funcs__find(&f, start, 0), fn);

	/* Remapped (read at 10, mapped at 20): ended; read again, live. */
	assert_true(jit_funcs__map(&f, start, end, 20) >= 1);
	assert_null(jit_funcs__find(&f, start, 0));
	assert_int_equal(gdb_jit__read(&g, &f, &t, 21, &added), 0);
	assert_null(jit_funcs__find(&f, start, 0)); /* no mapping said so: not read */
	gdb_jit__remapped(&g);
	assert_int_equal(gdb_jit__read(&g, &f, &t, 22, &added), 0);
	fn = jit_funcs__find(&f, start, 0);
	assert_non_null(fn);
	assert_string_equal(jit_funcs__name(&f, fn), "gdb_jit_marker");
	assert_int_equal(g.nobjs, 1);
	assert_int_equal(g.restaged, 1);
	/* Remapped elsewhere: its live object is not copied again. */
	gdb_jit__remapped(&g);
	assert_int_equal(gdb_jit__read(&g, &f, &t, 23, &added), 0);
	assert_int_equal(added, 0);
	assert_int_equal(g.restaged, 1);

	/* Unregistered: its functions end. */
	test_descriptor.first = NULL;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 30, &added), 0);
	assert_null(jit_funcs__find(&f, start, 0));
	assert_null(fn_named(&f, "gdb_jit_marker"));

	/* Registered again at the same address, other bytes: a new object. */
	assert_true(rename_marker(img, size, renamed, 'R') >= 1);
	test_descriptor.first = &e;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 40, &added), 0);
	assert_true(added > 10);
	assert_int_equal(g.nobjs, 2);
	fn = jit_funcs__find(&f, start, 0);
	assert_non_null(fn);
	assert_string_equal(jit_funcs__name(&f, fn), "gdb_jit_markeR");
	assert_int_equal(fn->object, 1);
	assert_int_equal(g.restaged, 1);

	/* Unregistered and registered again with the first bytes, read in
	 * between: the first object's functions are live again. */
	test_descriptor.first = NULL;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 50, &added), 0);
	assert_null(jit_funcs__find(&f, start, 0));
	assert_true(rename_marker(img, size, renamed, 'r') >= 1);
	test_descriptor.first = &e;
	assert_int_equal(gdb_jit__read(&g, &f, &t, 60, &added), 0);
	fn = jit_funcs__find(&f, start, 0);
	assert_non_null(fn);
	assert_string_equal(jit_funcs__name(&f, fn), "gdb_jit_marker");
	assert_int_equal(fn->object, 0);
	assert_int_equal(g.nobjs, 2);
	assert_int_equal(g.restaged, 2);
	assert_int_equal(f.problems[JIT_PROBLEM_GDB_BAD], 0);
	test_descriptor.first = NULL;
	gdb_jit__release(&g);
	jit_funcs__release(&f);
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gdb_jit),
		cmocka_unit_test(test_gdb_jit_reregister),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
