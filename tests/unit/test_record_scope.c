// SPDX-License-Identifier: MIT
/*
 * record --container following (userspace/cli/record_scope.c) on a fake
 * /proc, mountinfo and cgroup v2 tree: a container whose cgroup is removed
 * and made again (a restart: same name, another id) leaves and rejoins the
 * scope, counted; one that stays away is looked for once per period; the
 * errors name the running containers and the id-prefix rule.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/cgroups/cgroups.h"
#include "userspace/cli/record_scope.h"

#define WEB "/machine.slice/machine-web\\x2d1.scope"
#define PODMAN_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char tmp[PATH_MAX];

static void path_of(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", tmp, rel);
}

static void put_file(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	path_of(path, sizeof(path), rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void make_dir(const char *rel)
{
	char path[PATH_MAX * 2], *p;

	path_of(path, sizeof(path), rel);
	for (p = path + strlen(tmp) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static uint64_t inode_of(const char *rel)
{
	char path[PATH_MAX * 2];
	struct stat st;

	path_of(path, sizeof(path), rel);
	assert_int_equal(stat(path, &st), 0);
	return (uint64_t)st.st_ino;
}

/* The kernel's set, as the set callback changes it. */
struct fake_set {
	uint64_t ids[16];
	int n;
	int adds, removes;
};

static int fake_set__set(void *ctx, uint64_t id, bool in)
{
	struct fake_set *f = ctx;

	for (int i = 0; i < f->n; i++) {
		if (f->ids[i] != id)
			continue;
		if (!in) {
			f->ids[i] = f->ids[--f->n];
			f->removes++;
		}
		return 0;
	}
	if (!in)
		return -ENOENT;
	f->ids[f->n++] = id;
	f->adds++;
	return 0;
}

static bool fake_set__has(const struct fake_set *f, uint64_t id)
{
	for (int i = 0; i < f->n; i++)
		if (f->ids[i] == id)
			return true;
	return false;
}

static char mountinfo[PATH_MAX * 2], proc[PATH_MAX * 2];

static int setup(void **state)
{
	char text[PATH_MAX * 3];

	(void)state;
	snprintf(tmp, sizeof(tmp), "/tmp/ms-record-scope-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	make_dir("cg" WEB);
	make_dir("proc/200");
	make_dir("proc/1");
	put_file("proc/200/cgroup", "0::" WEB "/payload\n");
	put_file("proc/1/cgroup", "0::/init.scope\n");
	snprintf(text, sizeof(text),
		 "30 1 0:26 / %s/cg rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", tmp);
	put_file("mountinfo", text);
	path_of(mountinfo, sizeof(mountinfo), "mountinfo");
	path_of(proc, sizeof(proc), "proc");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) ? -1 : 0;
}

/* Resolve --container web-1 and load the fake set as collector_start does. */
static struct record_scope *start(struct record_options *o, struct fake_set *set)
{
	static const char *const containers[] = { "web-1" };
	char desc[256], err[512];
	struct record_scope *sc = record_scope__new(proc, NULL);

	assert_non_null(sc);
	memset(o, 0, sizeof(*o));
	assert_int_equal(record_scope__resolve(sc, o, mountinfo, NULL, 0, containers, 1, desc,
					       sizeof(desc), err, sizeof(err)),
			 0);
	assert_string_equal(desc, WEB);
	assert_int_equal(o->ncgroup_ids, 1);
	memset(set, 0, sizeof(*set));
	for (size_t i = 0; i < o->ncgroup_ids; i++)
		fake_set__set(set, o->cgroup_ids[i], true);
	set->adds = 0;
	return sc;
}

static void test_follow_restart(void **state)
{
	static struct record_options o;
	struct record_scope_stats st;
	struct fake_set set;
	struct record_scope *sc = start(&o, &set);
	uint64_t old = inode_of("cg" WEB), now;
	char path[PATH_MAX * 2], fresh[PATH_MAX * 2];

	(void)state;
	assert_true(o.cgroup_ids[0] == old);
	/* nothing changed: the set stays, no scan */
	assert_int_equal(record_scope__follow(sc, 1, fake_set__set, &set, NULL), 0);
	record_scope__stats(sc, &st);
	assert_int_equal(st.rescans, 0);
	assert_int_equal(st.left, 0);

	/* restart: the cgroup is made again under the same name (another
	 * inode: made before the old one is removed, then renamed over) */
	make_dir("cg/machine.slice/new");
	path_of(path, sizeof(path), "cg" WEB);
	path_of(fresh, sizeof(fresh), "cg/machine.slice/new");
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rename(fresh, path), 0);
	assert_true(inode_of("cg" WEB) != old);

	/* within the period: not looked at yet */
	now = 2;
	assert_int_equal(record_scope__follow(sc, now, fake_set__set, &set, NULL), 0);
	assert_true(fake_set__has(&set, old));

	now = 1 + RECORD_SCOPE_FOLLOW_NS;
	assert_int_equal(record_scope__follow(sc, now, fake_set__set, &set, NULL), 1);
	assert_false(fake_set__has(&set, old));
	assert_true(fake_set__has(&set, inode_of("cg" WEB)));
	assert_int_equal(set.n, 1);
	record_scope__stats(sc, &st);
	assert_int_equal(st.left, 1);
	assert_int_equal(st.rejoined, 1);
	assert_int_equal(st.rescans, 1);

	/* steady again: no scan while the new cgroup stands */
	now += RECORD_SCOPE_FOLLOW_NS;
	assert_int_equal(record_scope__follow(sc, now, fake_set__set, &set, NULL), 0);
	record_scope__stats(sc, &st);
	assert_int_equal(st.rescans, 1);
	assert_int_equal(st.rejoined, 1);
	record_scope__free(sc);
}

static void test_follow_stopped(void **state)
{
	static struct record_options o;
	struct record_scope_stats st;
	struct fake_set set;
	struct record_scope *sc = start(&o, &set);
	char path[PATH_MAX * 2];
	uint64_t now = 10;

	(void)state;
	/* stopped: the process leaves, the cgroup is removed */
	put_file("proc/200/cgroup", "0::/init.scope\n");
	path_of(path, sizeof(path), "cg" WEB);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(record_scope__follow(sc, now, fake_set__set, &set, NULL), 0);
	assert_int_equal(set.n, 0);
	assert_int_equal(set.removes, 1);
	/* looked for once per period, not at every call */
	for (int i = 0; i < 5; i++)
		record_scope__follow(sc, now + (uint64_t)i, fake_set__set, &set, NULL);
	now += RECORD_SCOPE_FOLLOW_NS;
	record_scope__follow(sc, now, fake_set__set, &set, NULL);
	record_scope__stats(sc, &st);
	assert_int_equal(st.left, 1);
	assert_int_equal(st.rejoined, 0);
	assert_int_equal(st.rescans, 2);
	assert_int_equal(set.n, 0);
	record_scope__free(sc);
}

static void test_errors(void **state)
{
	static struct record_options o;
	const char *q[1];
	char desc[256], err[1024];
	struct record_scope *sc = record_scope__new(proc, NULL);

	(void)state;
	make_dir("cg/machine.slice/libpod-" PODMAN_ID ".scope");
	make_dir("proc/300");
	put_file("proc/300/cgroup", "0::/machine.slice/libpod-" PODMAN_ID ".scope\n");
	memset(&o, 0, sizeof(o));
	/* a 3-digit prefix of a running container's id: the rule is said */
	q[0] = "012";
	assert_int_equal(record_scope__resolve(sc, &o, mountinfo, NULL, 0, q, 1, desc,
					       sizeof(desc), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "an id prefix needs at least 4 hex digits"));
	assert_non_null(strstr(err, "running containers: "));
	assert_non_null(strstr(err, "web-1 (systemd-nspawn)"));
	assert_non_null(strstr(err, "0123456789ab (podman)"));
	/* a name matching nothing: the running ones too */
	q[0] = "nosuch";
	assert_int_equal(record_scope__resolve(sc, &o, mountinfo, NULL, 0, q, 1, desc,
					       sizeof(desc), err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no running container matches"));
	assert_null(strstr(err, "an id prefix needs"));
	assert_non_null(strstr(err, "web-1 (systemd-nspawn)"));
	/* four digits match */
	q[0] = "0123";
	assert_int_equal(record_scope__resolve(sc, &o, mountinfo, NULL, 0, q, 1, desc,
					       sizeof(desc), err, sizeof(err)),
			 0);
	assert_int_equal(o.ncgroup_ids, 1);
	record_scope__free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_follow_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_follow_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
