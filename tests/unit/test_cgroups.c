// SPDX-License-Identifier: MIT
/*
 * cgroup v2 and container resolution (userspace/cgroups/) on fake /proc and
 * /sys trees built in a temporary directory: the v2 mount from mountinfo
 * (hybrid, pure v2, v1-only), container ids from each runtime's cgroup
 * names, --cgroup path resolution (absolute, relative, outside the tree,
 * missing), the tree walk's ids, and --container matching by id, short id
 * and machine name.
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

#define DOCKER_ID "4f1c2a9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a"
#define PODMAN_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char tmp[PATH_MAX];

static void put_file(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void make_dir(const char *rel)
{
	char path[PATH_MAX * 2], *p;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	for (p = path + strlen(tmp) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	mkdir(path, 0755);
}

static int setup(void **state)
{
	snprintf(tmp, sizeof(tmp), "/tmp/ms-cgroups-XXXXXX");
	if (!mkdtemp(tmp))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) ? -1 : 0;
}

static void test_container_names(void **state)
{
	static const struct {
		const char *path, *runtime, *id;
		size_t prefix; /* bytes of the container's cgroup path */
	} cases[] = {
		{ "/system.slice/docker-" DOCKER_ID ".scope", "docker", DOCKER_ID, 91 },
		{ "/system.slice/docker-" DOCKER_ID ".scope/init.scope", "docker", DOCKER_ID, 91 },
		{ "/docker/" DOCKER_ID, "docker", DOCKER_ID, 72 },
		{ "/kubepods.slice/kubepods-pod1.slice/cri-containerd-" DOCKER_ID ".scope",
		  "containerd", DOCKER_ID, 121 },
		{ "/kubepods/besteffort/pod12/" DOCKER_ID, "containerd", DOCKER_ID, 91 },
		{ "/kubepods.slice/crio-" DOCKER_ID ".scope", "cri-o", DOCKER_ID, 91 },
		{ "/machine.slice/libpod-" PODMAN_ID ".scope/container", "podman", PODMAN_ID, 92 },
		{ "/libpod_parent/libpod-" PODMAN_ID, "podman", PODMAN_ID, 86 },
		{ "/machine.slice/machine-web\\x2d1.scope/payload", "systemd-nspawn", "web-1", 37 },
		{ "/lxc.payload.db", "lxc", "db", 15 },
	};
	static const char *const none[] = {
		"/", "/user.slice/user-0.slice/session-1.scope",
		"/machine.slice/libpod-conmon-" PODMAN_ID ".scope", /* conmon, not the container */
		"/system.slice/docker-abc.scope",		    /* too short for an id */
		"/system.slice/docker-" DOCKER_ID ".service",	    /* not a scope */
		"/docker/NOTHEX0123456789",
		"/" DOCKER_ID, /* a bare id outside kubepods/docker */
		"/machine.slice/machine-.scope",
	};
	struct cgroup_container c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(cgroup_path__container(cases[i].path, &c));
		assert_string_equal(c.runtime, cases[i].runtime);
		assert_string_equal(c.id, cases[i].id);
		assert_int_equal(c.path_len, cases[i].prefix);
	}
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		assert_false(cgroup_path__container(none[i], &c));
	/* nested: the innermost container wins */
	assert_true(cgroup_path__container("/machine.slice/machine-outer.scope/payload/docker/" DOCKER_ID,
					   &c));
	assert_string_equal(c.runtime, "docker");
}

static void test_root_from_mountinfo(void **state)
{
	char path[PATH_MAX * 2], root[256];

	snprintf(path, sizeof(path), "%s/mountinfo", tmp);
	/* hybrid: v1 controllers and the v2 tree at /sys/fs/cgroup/unified */
	put_file("mountinfo",
		 "24 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"
		 "26 24 0:24 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
		 "27 26 0:25 / /sys/fs/cgroup/cpu rw shared:9 - cgroup cgroup rw,cpu\n"
		 "28 26 0:26 / /sys/fs/cgroup/unified rw shared:10 - cgroup2 cgroup2 rw\n");
	assert_int_equal(cgroup_root__find(path, root, sizeof(root)), 0);
	assert_string_equal(root, "/sys/fs/cgroup/unified");
	/* pure v2, with an escaped space in another mount point before it */
	put_file("mountinfo", "20 1 8:1 / /mnt/a\\040b rw - ext4 /dev/sda1 rw\n"
			      "29 24 0:27 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw\n");
	assert_int_equal(cgroup_root__find(path, root, sizeof(root)), 0);
	assert_string_equal(root, "/sys/fs/cgroup");
	/* v1 only */
	put_file("mountinfo", "27 26 0:25 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n");
	assert_int_equal(cgroup_root__find(path, root, sizeof(root)), -ENOENT);
	/* too small a buffer */
	put_file("mountinfo", "29 24 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	assert_int_equal(cgroup_root__find(path, root, 8), -ENAMETOOLONG);
	snprintf(path, sizeof(path), "%s/missing", tmp);
	assert_int_equal(cgroup_root__find(path, root, sizeof(root)), -ENOENT);
}

static void test_resolve(void **state)
{
	char root[PATH_MAX * 2], arg[PATH_MAX * 3], rel[CGROUP_PATH_MAX];
	struct stat st;
	uint64_t id = 0;

	make_dir("v2/machine.slice/machine-a.scope");
	make_dir("v1/cpu/x");
	snprintf(root, sizeof(root), "%s/v2", tmp);
	snprintf(arg, sizeof(arg), "%s/machine.slice/machine-a.scope", root);
	assert_int_equal(stat(arg, &st), 0);
	/* absolute */
	assert_int_equal(cgroup__resolve(root, arg, rel, sizeof(rel), &id), 0);
	assert_string_equal(rel, "/machine.slice/machine-a.scope");
	assert_true(id == (uint64_t)st.st_ino);
	/* relative to the v2 root, with and without the leading slash */
	id = 0;
	assert_int_equal(cgroup__resolve(root, "/machine.slice/machine-a.scope", rel, sizeof(rel), &id),
			 0);
	assert_true(id == (uint64_t)st.st_ino);
	assert_int_equal(cgroup__resolve(root, "machine.slice", rel, sizeof(rel), &id), 0);
	assert_string_equal(rel, "/machine.slice");
	assert_int_equal(cgroup__resolve(root, "/", rel, sizeof(rel), &id), 0);
	assert_string_equal(rel, "/");
	/* missing, escaping the tree, a v1 hierarchy */
	assert_int_equal(cgroup__resolve(root, "/nope", rel, sizeof(rel), &id), -ENOENT);
	assert_int_equal(cgroup__resolve(root, "../v1/cpu/x", rel, sizeof(rel), &id), -EXDEV);
	snprintf(arg, sizeof(arg), "%s/v1/cpu/x", tmp);
	assert_int_equal(cgroup__resolve(root, arg, rel, sizeof(rel), &id), -EXDEV);
}

struct seen {
	int n;
	char paths[16][64];
	uint64_t ids[16];
};

static int visit(void *ctx, uint64_t id, const char *rel)
{
	struct seen *s = ctx;

	if (s->n >= 16)
		return -E2BIG;
	snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", rel);
	s->ids[s->n++] = id;
	return 0;
}

static void test_walk(void **state)
{
	char root[PATH_MAX * 2], p[PATH_MAX * 3];
	struct seen s = { 0 };
	struct stat st;
	bool truncated = true;
	int i, found = 0;

	make_dir("w/a/b");
	make_dir("w/c");
	put_file("w/cgroup.procs", "1\n");
	snprintf(root, sizeof(root), "%s/w", tmp);
	assert_int_equal(cgroup_tree__walk(root, visit, &s, &truncated), 0);
	assert_false(truncated);
	assert_int_equal(s.n, 4); /* /, /a, /a/b, /c: files are not cgroups */
	assert_string_equal(s.paths[0], "/");
	for (i = 0; i < s.n; i++) {
		if (strcmp(s.paths[i], "/a/b"))
			continue;
		snprintf(p, sizeof(p), "%s/a/b", root);
		assert_int_equal(stat(p, &st), 0);
		assert_true(s.ids[i] == (uint64_t)st.st_ino);
		found++;
	}
	assert_int_equal(found, 1);
}

static void test_containers_find(void **state)
{
	char proc[PATH_MAX * 2], paths[4][CGROUP_PATH_MAX];
	const char *runtimes[4];

	make_dir("proc/1");
	make_dir("proc/100");
	make_dir("proc/101");
	make_dir("proc/200");
	make_dir("proc/300");
	make_dir("proc/self");
	put_file("proc/1/cgroup", "12:cpu:/\n0::/init.scope\n");
	/* two processes of one docker container, one in a sub-cgroup */
	put_file("proc/100/cgroup", "3:cpu:/docker\n0::/system.slice/docker-" DOCKER_ID ".scope\n");
	put_file("proc/101/cgroup",
		 "0::/system.slice/docker-" DOCKER_ID ".scope/init.scope\n");
	put_file("proc/200/cgroup", "0::/machine.slice/machine-web\\x2d1.scope/payload\n");
	put_file("proc/300/cgroup", "1:name=systemd:/machine.slice/libpod-" PODMAN_ID ".scope\n");
	snprintf(proc, sizeof(proc), "%s/proc", tmp);

	assert_int_equal(cgroup_containers__find(proc, NULL, DOCKER_ID, paths, runtimes, 4), 1);
	assert_string_equal(paths[0], "/system.slice/docker-" DOCKER_ID ".scope");
	assert_string_equal(runtimes[0], "docker");
	/* short id */
	assert_int_equal(cgroup_containers__find(proc, NULL, "4f1c2a9b8d7e", paths, runtimes, 4), 1);
	/* too short a prefix, not hex, or a prefix of a name: no match */
	assert_int_equal(cgroup_containers__find(proc, NULL, "4f1", paths, runtimes, 4), 0);
	assert_int_equal(cgroup_containers__find(proc, NULL, "web", paths, runtimes, 4), 0);
	/* machine name, unescaped */
	assert_int_equal(cgroup_containers__find(proc, NULL, "web-1", paths, runtimes, 4), 1);
	assert_string_equal(paths[0], "/machine.slice/machine-web\\x2d1.scope");
	assert_string_equal(runtimes[0], "systemd-nspawn");
	/* only a v1 line: not found through v2 */
	assert_int_equal(cgroup_containers__find(proc, NULL, PODMAN_ID, paths, runtimes, 4), 0);
	assert_int_equal(cgroup_containers__find("/nonexistent-proc", NULL, "x", paths, runtimes, 4),
			 -ENOENT);
}

/* A podman and a docker container with names in fake state files, next to
 * malformed and hostile entries that must be skipped. */
static void make_state(void)
{
	char big[4096];
	FILE *f;
	char path[PATH_MAX * 2];

	make_dir("state/var/lib/containers/storage/overlay-containers");
	make_dir("state/run/containers/storage/overlay-containers");
	put_file("state/var/lib/containers/storage/overlay-containers/containers.json",
		 "[{\"id\":\"" PODMAN_ID "\",\"names\":[\"s28burn\",\"alias\"],\"image\":\"x\"},"
		 "{\"id\":\"NOTHEX\",\"names\":[\"bad-id\"]},"
		 "{\"id\":\"" PODMAN_ID "\",\"names\":\"not-a-list\"},"
		 "{\"names\":[\"no-id\"]}, 7, \"x\","
		 "{\"id\":\"" DOCKER_ID "\",\"names\":[\"esc\\u001b[2J\"]}]");
	/* the runroot's copy names the same container: counted once */
	put_file("state/run/containers/storage/overlay-containers/containers.json",
		 "[{\"id\":\"" PODMAN_ID "\",\"names\":[\"s28burn\"]}]");
	make_dir("state/var/lib/docker/containers/" DOCKER_ID);
	put_file("state/var/lib/docker/containers/" DOCKER_ID "/config.v2.json",
		 "{\"ID\":\"" DOCKER_ID "\",\"Name\":\"/dockweb\",\"State\":{}}");
	/* a config whose ID is not its directory's: not believed */
	make_dir("state/var/lib/docker/containers/aaaaaaaaaaaaaaaa");
	put_file("state/var/lib/docker/containers/aaaaaaaaaaaaaaaa/config.v2.json",
		 "{\"ID\":\"" PODMAN_ID "\",\"Name\":\"/liar\"}");
	/* truncated JSON, and a config larger than the bound */
	make_dir("state/var/lib/docker/containers/bbbbbbbbbbbbbbbb");
	put_file("state/var/lib/docker/containers/bbbbbbbbbbbbbbbb/config.v2.json",
		 "{\"ID\":\"bbbbbbbbbbbbbbbb\",\"Name\":\"/cut");
	make_dir("state/var/lib/docker/containers/cccccccccccccccc");
	snprintf(path, sizeof(path),
		 "%s/state/var/lib/docker/containers/cccccccccccccccc/config.v2.json", tmp);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"ID\":\"cccccccccccccccc\",\"Name\":\"/huge\",\"Pad\":\"", f);
	memset(big, 'x', sizeof(big));
	for (int i = 0; i < 300; i++) /* 1.2 MB, over STATE_CONFIG_MAX */
		fwrite(big, 1, sizeof(big), f);
	fputs("\"}", f);
	fclose(f);
}

static void test_container_state(void **state)
{
	char root[PATH_MAX * 2], ids[4][CGROUP_CONTAINER_ID_MAX], name[CGROUP_CONTAINER_ID_MAX];

	make_state();
	snprintf(root, sizeof(root), "%s/state", tmp);
	assert_int_equal(container_state__ids(root, "s28burn", ids, 4), 1);
	assert_string_equal(ids[0], PODMAN_ID);
	assert_int_equal(container_state__ids(root, "alias", ids, 4), 1);
	assert_int_equal(container_state__ids(root, "dockweb", ids, 4), 1);
	assert_string_equal(ids[0], DOCKER_ID);
	assert_int_equal(container_state__ids(root, "bad-id", ids, 4), 0);
	assert_int_equal(container_state__ids(root, "not-a-list", ids, 4), 0);
	assert_int_equal(container_state__ids(root, "esc\033[2J", ids, 4), 0);
	assert_int_equal(container_state__ids(root, "liar", ids, 4), 0);
	assert_int_equal(container_state__ids(root, "cut", ids, 4), 0);
	assert_int_equal(container_state__ids(root, "huge", ids, 4), 0);
	assert_true(container_state__name(root, DOCKER_ID, name, sizeof(name)));
	assert_string_equal(name, "dockweb");
	assert_true(container_state__name(root, PODMAN_ID, name, sizeof(name)));
	assert_string_equal(name, "s28burn");
	/* no state at all: nothing, no error */
	assert_int_equal(container_state__ids("/nonexistent-state", "s28burn", ids, 4), 0);
}

static void test_containers_find_by_name(void **state)
{
	char proc[PATH_MAX * 2], root[PATH_MAX * 2], paths[4][CGROUP_PATH_MAX], list[1024];
	const char *runtimes[4];

	make_state();
	make_dir("proc/100");
	make_dir("proc/300");
	make_dir("proc/400");
	put_file("proc/100/cgroup", "0::/system.slice/docker-" DOCKER_ID ".scope\n");
	put_file("proc/300/cgroup", "0::/machine.slice/libpod-" PODMAN_ID ".scope/container\n");
	put_file("proc/400/cgroup", "0::/machine.slice/machine-web\\x2d1.scope\n");
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	snprintf(root, sizeof(root), "%s/state", tmp);

	/* podman and docker names, through their state files */
	assert_int_equal(cgroup_containers__find(proc, root, "s28burn", paths, runtimes, 4), 1);
	assert_string_equal(paths[0], "/machine.slice/libpod-" PODMAN_ID ".scope");
	assert_string_equal(runtimes[0], "podman");
	assert_int_equal(cgroup_containers__find(proc, root, "dockweb", paths, runtimes, 4), 1);
	assert_string_equal(paths[0], "/system.slice/docker-" DOCKER_ID ".scope");
	/* without the state files the names are unknown */
	assert_int_equal(cgroup_containers__find(proc, NULL, "s28burn", paths, runtimes, 4), 0);
	/* ids still match as before */
	assert_int_equal(cgroup_containers__find(proc, root, "0123", paths, runtimes, 4), 1);
	assert_int_equal(cgroup_containers__find(proc, root, "012", paths, runtimes, 4), 0);
	assert_true(cgroup_query__short_prefix("012"));
	assert_true(cgroup_query__short_prefix("76e"));
	assert_false(cgroup_query__short_prefix("0123"));
	assert_false(cgroup_query__short_prefix("web"));
	assert_false(cgroup_query__short_prefix(""));

	/* the running containers, named where the state files name them */
	assert_int_equal(cgroup_containers__describe(proc, root, list, sizeof(list)), 3);
	assert_non_null(strstr(list, "s28burn (podman 0123456789ab)"));
	assert_non_null(strstr(list, "dockweb (docker 4f1c2a9b8d7e)"));
	assert_non_null(strstr(list, "web-1 (systemd-nspawn)"));
	/* bounded: a tiny buffer is cut, not overrun */
	assert_int_equal(cgroup_containers__describe(proc, root, list, 8), 3);
	assert_int_equal(strlen(list), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_names),
		cmocka_unit_test_setup_teardown(test_root_from_mountinfo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_containers_find, setup, teardown),
		cmocka_unit_test_setup_teardown(test_container_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_containers_find_by_name, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
