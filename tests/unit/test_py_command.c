// SPDX-License-Identifier: MIT
/*
 * record_python__command (userspace/cli/record_py_command.c): which
 * commands are taken to start CPython before they run, so the sampler's
 * CPython walk is loaded first.  Uses the host's Debian /usr/bin/python3.11
 * (an executable holding _PyRuntime); skipped without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/cli/record_python.h"

#define PY "/usr/bin/python3.11"

static char dir[64];

static void script(const char *name, const char *text, char *path, size_t size)
{
	FILE *f;

	snprintf(path, size, "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static bool runs(const char *a0, const char *a1, const char *a2)
{
	char *argv[] = { (char *)a0, (char *)a1, (char *)a2, NULL };

	return record_python__command(argv);
}

static void test_direct_and_shell_strings(void **state)
{
	(void)state;
	if (access(PY, X_OK))
		skip();
	assert_true(runs(PY, "-c", "pass"));
	assert_true(runs("sh", "-c", PY " x.py"));
	assert_true(runs("sh", "-c", "exec " PY " x.py"));
	assert_true(runs("bash", "-ec", "FOO=1 BAR=2 " PY " -u x.py"));
	assert_true(runs("sh", "-c", "cd /tmp && env -i " PY " x.py"));
	assert_true(runs("sh", "-c", "echo start; '" PY "' x.py"));
	/* no interpreter, or one behind an expansion: no */
	assert_false(runs("sh", "-c", "echo " PY));
	assert_false(runs("sh", "-c", "$PY x.py"));
	assert_false(runs("sh", "-c", "true"));
	assert_false(runs("/bin/true", NULL, NULL));
	assert_false(runs("sh", "--norc", PY)); /* not a -c string, not a script */
	assert_false(runs("no-such-program-xyz", "-c", PY));
	/* -c of a program that is not a shell is its own argument */
	assert_false(runs("/bin/echo", "-c", PY " x.py"));
}

static void test_scripts(void **state)
{
	char a[128], b[128], c[128], d[128], e[128], f[128], text[256];

	(void)state;
	if (access(PY, X_OK))
		skip();
	script("a.py", "#!" PY "\nprint(1)\n", a, sizeof(a));
	assert_true(runs(a, NULL, NULL));
	setenv("PATH", "/usr/bin:/bin", 1);
	script("b.py", "#!/usr/bin/env -S python3.11 -u\nprint(1)\n", b, sizeof(b));
	assert_true(runs(b, NULL, NULL));
	/* a shell script whose command execs one, and one that only names it */
	script("c.sh", "#!/bin/sh\nset -e\n# the worker\nexec " PY " app.py \"$@\"\n", c,
	       sizeof(c));
	assert_true(runs(c, NULL, NULL));
	assert_true(runs("sh", c, NULL));
	script("d.sh", "#!/bin/sh\n# runs " PY " later\necho " PY "\n", d, sizeof(d));
	assert_false(runs(d, NULL, NULL));
	/* scripts calling scripts, within the depth bound */
	snprintf(text, sizeof(text), "#!/bin/sh\nexec %s\n", c);
	script("e.sh", text, e, sizeof(e));
	assert_true(runs(e, NULL, NULL));
	/* a script calling itself ends at the bound */
	snprintf(f, sizeof(f), "%s/loop.sh", dir);
	snprintf(text, sizeof(text), "#!/bin/sh\nexec %s\n", f);
	script("loop.sh", text, f, sizeof(f));
	assert_false(runs(f, NULL, NULL));
}

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/ms-test-pycmd-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct_and_shell_strings),
		cmocka_unit_test(test_scripts),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
