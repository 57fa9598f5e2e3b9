// SPDX-License-Identifier: MIT
/*
 * userspace/symbols/debug_cache.c: decompressed debug images kept across
 * symbolizers.  A zlib-compressed copy of this test binary (as Debian's
 * debug files are) gives the same lines and inline chains with the cache
 * off, cold (a miss that writes the image) and warm (a hit that maps it,
 * renewing its modification time);
 * a source file changed since is a miss; a damaged or truncated image file,
 * one of the wrong mode or a symbolic link is counted bad and made again,
 * with the same chains; a symbolic link as the directory is refused; the
 * directory's images stay under the limit, least recently used evicted.
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
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/symbols/symbols.h"
#include "userspace/symbols/symbols_internal.h"

static char tmpdir[] = "/tmp/test_debug_cache.XXXXXX";
static char zlib_path[256]; /* the zlib-compressed copy of this binary */
static char cache[256];	    /* the cache directory */
static char want[1 << 16];  /* the chains with the cache off */

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t dc_inner(uint64_t x)
{
	x ^= x << 13;
	x ^= x >> 7;
	return x;
}

/* The marker: its loop body is dc_inner, inlined. */
__attribute__((noinline, used)) uint64_t dc_marker(uint64_t n)
{
	uint64_t x = n | 1;

	for (uint64_t i = 0; i < n; i++)
		x = dc_inner(x + i);
	sink = x;
	return x;
}

/* Every address of dc_marker of path as "function:file:line:inlined;"
 * chains into out (cap bytes), through a symbolizer whose debug cache is
 * dir (NULL: off) bounded by max_bytes; its cache counters into *st. */
static void chains(const char *path, const char *dir, uint64_t max_bytes, char *out, size_t cap,
		   struct symbolizer_debug_cache_stats *st)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m;
	uint64_t start = 0, end = 0;
	size_t i, used = 0;

	assert_non_null(s);
	assert_int_equal(symbolizer__set_debug_cache(s, dir, max_bytes), 0);
	m = symbolizer__file(s, 0, path, path, NULL, 0);
	assert_non_null(m);
	for (i = 0; i < sym_module__symbol_count(m); i++)
		if (!strcmp(sym_module__symbol(m, i, &start, &end), "dc_marker"))
			break;
	assert_true(i < sym_module__symbol_count(m));
	out[0] = '\0';
	for (uint64_t a = start; a < end; a++) {
		struct sym_frame f[8];
		size_t k = sym_module__frames(m, a, f, 8);

		for (size_t j = 0; j < k && used + 256 < cap; j++)
			used +=
			    (size_t)snprintf(out + used, cap - used, "%s:%s:%u:%d;", f[j].function,
					     f[j].file ? f[j].file : "?", f[j].line, f[j].inlined);
		if (used + 2 < cap)
			out[used++] = '\n', out[used] = '\0';
	}
	if (sym_module__dwarf_error(m))
		fail_msg("%s: %s", path, sym_module__dwarf_error(m));
	symbolizer__debug_cache_stats(s, st);
	symbolizer__free(s);
}

/* The one image file in dir, into name (NAME_MAX + 1 bytes); how many. */
static int image_in(const char *dir, char *name)
{
	char cmd[PATH_MAX + 64];
	FILE *p;
	int n = 0;

	snprintf(cmd, sizeof(cmd), "ls '%s' | grep '^debug-.*\\.img$'", dir);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(name, NAME_MAX + 1, p))
		n++;
	pclose(p);
	name[strcspn(name, "\n")] = '\0';
	return n;
}

static void image_path(char *out, const char *name)
{
	snprintf(out, PATH_MAX, "%s/%s", cache, name);
}

/* Off, cold, warm: the same chains; the files' modes. */
static void test_round_trip(void **state)
{
	static char got[1 << 16];
	struct symbolizer_debug_cache_stats st;
	struct timespec old[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
	char name[NAME_MAX + 1], path[PATH_MAX];
	struct stat sb;

	(void)state;
	chains(zlib_path, NULL, 0, want, sizeof(want), &st);
	assert_non_null(strstr(want, "dc_inner:"));
	assert_non_null(strstr(want, "test_debug_cache.c"));
	assert_int_equal(st.hit + st.miss + st.bad + st.unusable, 0);

	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st);
	assert_int_equal(st.miss, 1);
	assert_int_equal(st.hit + st.bad + st.unusable + st.evicted, 0);
	assert_string_equal(got, want);
	assert_int_equal(stat(cache, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);
	assert_int_equal(image_in(cache, name), 1);
	image_path(path, name);
	assert_int_equal(lstat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);
	assert_int_equal(sb.st_uid, geteuid());

	/* a hit renews the modification time eviction goes by */
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st);
	assert_int_equal(st.hit, 1);
	assert_int_equal(st.miss + st.bad + st.unusable, 0);
	assert_string_equal(got, want);
	assert_int_equal(stat(path, &sb), 0);
	assert_true(sb.st_mtim.tv_sec > 1000);
}

/* The source's modification time changed: a miss, the image made again
 * under the same name, then a hit. */
static void test_stale_source(void **state)
{
	static char got[1 << 16];
	struct symbolizer_debug_cache_stats st;
	struct timespec ts[2] = {{.tv_sec = 1000000000}, {.tv_sec = 1000000000}};
	char name[NAME_MAX + 1], name2[NAME_MAX + 1];

	(void)state;
	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st); /* warm */
	assert_int_equal(image_in(cache, name), 1);
	assert_int_equal(utimensat(AT_FDCWD, zlib_path, ts, 0), 0);
	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st);
	assert_int_equal(st.miss, 1);
	assert_int_equal(st.hit + st.bad, 0);
	assert_string_equal(got, want);
	assert_int_equal(image_in(cache, name2), 1);
	assert_string_equal(name, name2);
	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st);
	assert_int_equal(st.hit, 1);
}

static void flip(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, off), 1);
	b ^= 0x5a;
	assert_int_equal(pwrite(fd, &b, 1, off), 1);
	close(fd);
}

/* One damage done to the image file by how, then: counted bad, the same
 * chains, and the next symbolizer hits the file made again. */
static void damaged(int how)
{
	static char got[1 << 16];
	struct symbolizer_debug_cache_stats st;
	char name[NAME_MAX + 1], path[PATH_MAX], other[PATH_MAX + 8];
	struct stat sb;

	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st); /* warm */
	assert_int_equal(image_in(cache, name), 1);
	image_path(path, name);
	assert_int_equal(stat(path, &sb), 0);
	switch (how) {
	case 0: /* the trailer's magic (its first byte: 136 from the end) */
		flip(path, sb.st_size - 136);
		break;
	case 1: /* the trailer's image size (16 bytes into it) */
		flip(path, sb.st_size - 136 + 16);
		break;
	case 2: /* cut short */
		assert_int_equal(truncate(path, sb.st_size - 4096), 0);
		break;
	case 3: /* grown */
		assert_int_equal(truncate(path, sb.st_size + 1), 0);
		break;
	case 4: /* readable by others */
		assert_int_equal(chmod(path, 0644), 0);
		break;
	case 5: /* a symbolic link to a valid image */
		snprintf(other, sizeof(other), "%s.kept", path);
		assert_int_equal(rename(path, other), 0);
		assert_int_equal(symlink(other, path), 0);
		break;
	}
	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st);
	if (st.bad != 1)
		fail_msg("damage %d: bad %llu hit %llu miss %llu", how, (unsigned long long)st.bad,
			 (unsigned long long)st.hit, (unsigned long long)st.miss);
	assert_int_equal(st.hit + st.miss, 0);
	assert_string_equal(got, want);
	assert_int_equal(lstat(path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode)); /* replaced, the link itself */
	assert_int_equal(sb.st_mode & 07777, 0600);
	if (how == 5) {
		assert_int_equal(lstat(other, &sb), 0); /* the link's target untouched */
		assert_int_equal(unlink(other), 0);
	}
	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st);
	assert_int_equal(st.hit, 1);
	assert_int_equal(st.bad, 0);
}

static void test_damaged_image_file(void **state)
{
	(void)state;
	for (int how = 0; how < 6; how++)
		damaged(how);
}

/* A symbolic link as the directory: refused (unusable), nothing written
 * through it, the same chains. */
static void test_symlinked_dir_refused(void **state)
{
	static char got[1 << 16];
	struct symbolizer_debug_cache_stats st;
	char target[PATH_MAX], link[PATH_MAX], name[NAME_MAX + 1];

	(void)state;
	snprintf(target, sizeof(target), "%s/target", tmpdir);
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	assert_int_equal(mkdir(target, 0700), 0);
	assert_int_equal(symlink(target, link), 0);
	chains(zlib_path, link, 64u << 20, got, sizeof(got), &st);
	assert_int_equal(st.unusable, 1);
	assert_int_equal(st.hit + st.miss + st.bad, 0);
	assert_string_equal(got, want);
	assert_int_equal(image_in(target, name), 0);
}

/* A file of bytes bytes, modified at sec, in dir. */
static void fake_image(const char *dir, const char *name, off_t bytes, time_t sec)
{
	char path[PATH_MAX];
	struct timespec ts[2] = {{.tv_sec = sec}, {.tv_sec = sec}};
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, bytes), 0);
	assert_int_equal(futimens(fd, ts), 0);
	close(fd);
}

static bool exists(const char *dir, const char *name)
{
	char path[2 * PATH_MAX];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &sb);
}

/*
 * The limit: images a (oldest), b, c of 1000 bytes each and a larger
 * non-image file; a limit of 2500 evicts a only (3000 - 1000 <= 2500),
 * never the other file.  Then through a symbolizer: an image written
 * evicts the old ones past the limit but never itself, and an image
 * larger than the limit alone is used but never published.
 */
static void test_eviction_honours_the_limit(void **state)
{
	static char got[1 << 16];
	struct symbolizer_debug_cache_stats st;
	struct debug_cache c = {0};
	char dir[PATH_MAX], name[NAME_MAX + 1], path[PATH_MAX];
	struct stat sb;
	int dfd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/evict", tmpdir);
	dfd = cache_dir__open(dir);
	assert_true(dfd >= 0);
	fake_image(dir, "debug-a.img", 1000, 1000);
	fake_image(dir, "debug-b.img", 1000, 2000);
	fake_image(dir, "debug-c.img", 1000, 3000);
	fake_image(dir, "kallsyms", 100000, 10);
	assert_int_equal(debug_cache__evict(&c, dfd, NULL, 2500), 0);
	assert_int_equal(c.stats.evicted, 1);
	assert_false(exists(dir, "debug-a.img"));
	assert_true(exists(dir, "debug-b.img") && exists(dir, "debug-c.img"));
	assert_true(exists(dir, "kallsyms"));
	assert_int_equal(debug_cache__evict(&c, dfd, "debug-b.img", 500), 0);
	assert_int_equal(c.stats.evicted, 2); /* c: b is kept */
	assert_true(exists(dir, "debug-b.img") && !exists(dir, "debug-c.img"));
	close(dfd);

	/* F: the size of this binary's image file (test_round_trip's). */
	chains(zlib_path, cache, 64u << 20, got, sizeof(got), &st);
	assert_int_equal(image_in(cache, name), 1);
	image_path(path, name);
	assert_int_equal(stat(path, &sb), 0);
	snprintf(dir, sizeof(dir), "%s/evict2", tmpdir);
	close(cache_dir__open(dir));
	fake_image(dir, "debug-old1.img", sb.st_size, 1000);
	fake_image(dir, "debug-old2.img", sb.st_size, 2000);
	/* 3F after the write, over 2.5F: the oldest goes, 2F fits */
	chains(zlib_path, dir, (uint64_t)sb.st_size * 5 / 2, got, sizeof(got), &st);
	assert_int_equal(st.miss, 1);
	assert_int_equal(st.evicted, 1);
	assert_string_equal(got, want);
	assert_false(exists(dir, "debug-old1.img"));
	assert_true(exists(dir, "debug-old2.img"));
	assert_true(exists(dir, name));

	/* larger than the limit alone: used, never published */
	snprintf(dir, sizeof(dir), "%s/evict3", tmpdir);
	for (int i = 0; i < 2; i++) {
		chains(zlib_path, dir, (uint64_t)sb.st_size / 2, got, sizeof(got), &st);
		assert_int_equal(st.miss, 1);
		assert_int_equal(st.hit + st.evicted, 0);
		assert_string_equal(got, want);
		assert_int_equal(image_in(dir, name), 0);
	}
}

static int group_setup(void **state)
{
	char plain[256], self[PATH_MAX], cmd[2 * PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	if (!mkdtemp(tmpdir) || n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(plain, sizeof(plain), "%s/plain", tmpdir);
	snprintf(zlib_path, sizeof(zlib_path), "%s/zlib", tmpdir);
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "cp '%s' '%s' && objcopy --compress-debug-sections=zlib '%s' '%s'", self, plain,
		 plain, zlib_path);
	return system(cmd) ? -1 : 0;
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_stale_source),
	    cmocka_unit_test(test_damaged_image_file),
	    cmocka_unit_test(test_symlinked_dir_refused),
	    cmocka_unit_test(test_eviction_honours_the_limit),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
