// SPDX-License-Identifier: MIT
/*
 * The kernel symbol table's cache (userspace/symbols/kallsyms_cache.c):
 * a table loaded from the cache is byte for byte the one kallsyms__load
 * builds; a cache of another key is not used; a corrupted one (truncated,
 * a name offset out of bounds, unsorted starts, a loop in the parents, a
 * mode or a symbolic link it must not have) is refused and the table comes
 * from the kallsyms file, the same; an unsafe directory is refused.
 * Runs as root (reads /proc/sys/kernel/random/boot_id, chowns a directory).
 */
#include <errno.h>
#include <fcntl.h>
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

#include "userspace/symbols/symbols.h"
#include "userspace/symbols/symbols_internal.h"

#define HEADER 88 /* sizeof(struct kcache_header) */

static char tmpdir[64];

static const char kallsyms_text[] = "ffffffff81000000 T _stext\n"
				    "ffffffff81000000 T _text\n"
				    "ffffffff81000010 t alpha\n"
				    "ffffffff81000100 t beta\n"
				    "ffffffff81000100 T beta_global\n"
				    "ffffffff81000200 D data_not_text\n"
				    "ffffffff81000300 W weak_one\n"
				    "ffffffffc0001040 t mod_fn2\t[mymod]\n"
				    "ffffffffc0001000 t mod_fn\t[mymod]\n"
				    "ffffffffc0100000 t other_fn\t[other]\n"
				    "ffffffffc0200000 t bpf_prog_0123456789abcdef_f\t[bpf]\n";

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ms-kcache-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

static void path_of(char *out, const char *name)
{
	snprintf(out, PATH_MAX, "%.63s/%.200s", tmpdir, name);
}

/* The two tables are the same bytes. */
static void assert_same_table(const struct sym_module *a, const struct sym_module *b)
{
	assert_null(sym_module__error(a));
	assert_null(sym_module__error(b));
	assert_int_equal(a->nr_syms, b->nr_syms);
	assert_true(a->nr_syms > 0);
	assert_memory_equal(a->starts, b->starts, a->nr_syms * sizeof(*a->starts));
	assert_memory_equal(a->syms, b->syms, a->nr_syms * sizeof(*a->syms));
	assert_int_equal(a->names_len, b->names_len);
	assert_memory_equal(a->names, b->names, a->names_len);
}

/* kallsyms__load of the synthetic file, the reference table. */
static struct sym_module *reference(const char *ksyms, uint64_t *stext)
{
	struct sym_module *m = sym_module__new("[kernel.kallsyms]");

	assert_non_null(m);
	assert_int_equal(kallsyms__load(m, ksyms, stext), 0);
	assert_null(sym_module__error(m));
	return m;
}

static void test_round_trip(void **state)
{
	struct kallsyms_cache_key key = {.boot_id = "boot-a", .modules_hash = 42}, other;
	char ksyms[PATH_MAX], dir[PATH_MAX];
	struct sym_module *ref, *m;
	uint64_t stext, got_stext = 0;
	int dfd;

	(void)state;
	path_of(ksyms, "kallsyms-rt");
	write_file(ksyms, kallsyms_text, sizeof(kallsyms_text) - 1);
	ref = reference(ksyms, &stext);
	assert_int_equal(stext, 0xffffffff81000000ull);
	path_of(dir, "rt");
	dfd = kallsyms_cache__open_dir(dir);
	assert_true(dfd >= 0);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms_cache__read(dfd, &key, m, &got_stext), -ENOENT);
	assert_int_equal(kallsyms_cache__write(dfd, &key, ref, stext), 0);
	assert_int_equal(kallsyms_cache__read(dfd, &key, m, &got_stext), 0);
	assert_int_equal(got_stext, stext);
	assert_same_table(ref, m);
	sym_module__free(m);

	/* Another boot, another module set: not used, m untouched. */
	other = key;
	other.boot_id[0] = 'B';
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms_cache__read(dfd, &other, m, &got_stext), -ESTALE);
	other = key;
	other.modules_hash++;
	assert_int_equal(kallsyms_cache__read(dfd, &other, m, &got_stext), -ESTALE);
	assert_int_equal(m->nr_syms, 0);
	assert_null(m->starts);
	sym_module__free(m);
	sym_module__free(ref);
	close(dfd);
}

/* Writes the reference's cache, changes it with damage(), and reads it. */
typedef void (*damage_fn)(int fd, const struct sym_module *ref);

static void damage_truncate(int fd, const struct sym_module *ref)
{
	struct stat st;

	(void)ref;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(ftruncate(fd, st.st_size - 1), 0);
}

static void damage_name_offset(int fd, const struct sym_module *ref)
{
	struct sym_entry e = ref->syms[1];

	e.name = (uint32_t)ref->names_len; /* one past the arena */
	assert_int_equal(pwrite(fd, &e, sizeof(e), HEADER + ref->nr_syms * 8 + sizeof(e)),
			 sizeof(e));
}

static void damage_unsorted(int fd, const struct sym_module *ref)
{
	uint64_t swap[2] = {ref->starts[2], ref->starts[1]};

	assert_int_equal(pwrite(fd, swap, sizeof(swap), HEADER + 8), sizeof(swap));
}

static void damage_parent_loop(int fd, const struct sym_module *ref)
{
	struct sym_entry e = ref->syms[1];

	e.parent = 1; /* itself */
	assert_int_equal(pwrite(fd, &e, sizeof(e), HEADER + ref->nr_syms * 8 + sizeof(e)),
			 sizeof(e));
}

static void damage_names_end(int fd, const struct sym_module *ref)
{
	char c = 'x';

	assert_int_equal(pwrite(fd, &c, 1, HEADER + ref->nr_syms * 24 + ref->names_len - 1), 1);
}

static void damage_count(int fd, const struct sym_module *ref)
{
	uint64_t n = (uint64_t)SYM_MAX_SYMBOLS + 1;

	(void)ref;
	assert_int_equal(pwrite(fd, &n, 8, 72), 8); /* nr_syms */
}

static void damage_mode(int fd, const struct sym_module *ref)
{
	(void)ref;
	assert_int_equal(fchmod(fd, 0644), 0);
}

/*
 * Each damage: the read refuses the file (-EINVAL, m untouched), and
 * kallsyms__load_cached counts it bad, builds the same table from the
 * kallsyms file and replaces the file, so the next load is a hit.
 */
static void test_corrupted_falls_back(void **state)
{
	static const damage_fn damages[] = {
	    damage_truncate,  damage_name_offset, damage_unsorted, damage_parent_loop,
	    damage_names_end, damage_count,	  damage_mode,
	};
	struct symbolizer_kcache_stats st = {0};
	struct kallsyms_cache_key key;
	char ksyms[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 16];
	struct sym_module *ref, *m;
	uint64_t stext, s2;
	size_t i;
	int dfd, fd;

	(void)state;
	path_of(ksyms, "kallsyms-bad");
	write_file(ksyms, kallsyms_text, sizeof(kallsyms_text) - 1);
	ref = reference(ksyms, &stext);
	path_of(dir, "bad");
	snprintf(file, sizeof(file), "%s/kallsyms", dir);
	assert_int_equal(kallsyms_cache__key(&key, ksyms), 0);

	/* First load: a miss that writes the cache; the second a hit. */
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load_cached(m, ksyms, dir, &s2, &st), 0);
	assert_same_table(ref, m);
	sym_module__free(m);
	assert_int_equal(st.miss, 1);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load_cached(m, ksyms, dir, &s2, &st), 0);
	assert_same_table(ref, m);
	assert_int_equal(s2, stext);
	sym_module__free(m);
	assert_int_equal(st.hit, 1);

	dfd = kallsyms_cache__open_dir(dir);
	assert_true(dfd >= 0);
	for (i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		fd = open(file, O_RDWR | O_CLOEXEC);
		assert_true(fd >= 0);
		damages[i](fd, ref);
		close(fd);
		m = sym_module__new("[kernel.kallsyms]");
		assert_int_equal(kallsyms_cache__read(dfd, &key, m, &s2), -EINVAL);
		assert_int_equal(m->nr_syms, 0);
		assert_int_equal(kallsyms__load_cached(m, ksyms, dir, &s2, &st), 0);
		assert_same_table(ref, m);
		sym_module__free(m);
		assert_int_equal(st.bad, i + 1);
		m = sym_module__new("[kernel.kallsyms]");
		assert_int_equal(kallsyms__load_cached(m, ksyms, dir, &s2, &st), 0);
		assert_same_table(ref, m);
		sym_module__free(m);
		assert_int_equal(st.hit, i + 2);
	}

	/* A symbolic link in the file's place is never followed. */
	assert_int_equal(rename(file, ksyms), 0); /* a good cache, elsewhere */
	assert_int_equal(symlink(ksyms, file), 0);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms_cache__read(dfd, &key, m, &s2), -EINVAL);
	sym_module__free(m);
	close(dfd);
	assert_int_equal(st.miss, 1);
	assert_int_equal(st.unusable, 0);
	sym_module__free(ref);
}

/* Directories: a symbolic link, a group/world-writable one, another
 * user's are refused, counted unusable, and the table still loads. */
static void test_unsafe_dir_refused(void **state)
{
	struct symbolizer_kcache_stats st = {0};
	char ksyms[PATH_MAX], dir[PATH_MAX], link[PATH_MAX];
	struct sym_module *ref, *m;
	uint64_t stext, s2;
	struct stat sb;
	int dfd;

	(void)state;
	path_of(ksyms, "kallsyms-dir");
	write_file(ksyms, kallsyms_text, sizeof(kallsyms_text) - 1);
	ref = reference(ksyms, &stext);
	path_of(dir, "new");
	dfd = kallsyms_cache__open_dir(dir); /* created 0700 */
	assert_true(dfd >= 0);
	close(dfd);
	assert_int_equal(stat(dir, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);

	path_of(link, "link");
	assert_int_equal(symlink(dir, link), 0);
	assert_int_equal(kallsyms_cache__open_dir(link), -ELOOP);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load_cached(m, ksyms, link, &s2, &st), 0);
	assert_same_table(ref, m);
	sym_module__free(m);
	assert_int_equal(st.unusable, 1);

	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(kallsyms_cache__open_dir(dir), -EPERM);
	assert_int_equal(chmod(dir, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(dir, 65534, 65534), 0);
		assert_int_equal(kallsyms_cache__open_dir(dir), -EPERM);
		assert_int_equal(chown(dir, 0, 0), 0);
	}
	dfd = kallsyms_cache__open_dir(dir);
	assert_true(dfd >= 0);
	close(dfd);
	assert_int_equal(st.hit + st.miss + st.bad, 0);
	sym_module__free(ref);
}

/* Addresses hidden (kptr_restrict): no key, so nothing is cached. */
static void test_hidden_addresses_not_cached(void **state)
{
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 t alpha\n";
	struct symbolizer_kcache_stats st = {0};
	struct kallsyms_cache_key key;
	char ksyms[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 16];
	struct sym_module *m;
	uint64_t s2;

	(void)state;
	path_of(ksyms, "kallsyms-hidden");
	write_file(ksyms, hidden, sizeof(hidden) - 1);
	assert_int_equal(kallsyms_cache__key(&key, ksyms), -EPERM);
	path_of(dir, "hidden");
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load_cached(m, ksyms, dir, &s2, &st), 0);
	assert_non_null(sym_module__error(m));
	sym_module__free(m);
	snprintf(file, sizeof(file), "%s/kallsyms", dir);
	assert_int_equal(access(file, F_OK), -1);
	assert_int_equal(st.hit + st.miss + st.bad + st.unusable, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_corrupted_falls_back),
	    cmocka_unit_test(test_unsafe_dir_refused),
	    cmocka_unit_test(test_hidden_addresses_not_cached),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
