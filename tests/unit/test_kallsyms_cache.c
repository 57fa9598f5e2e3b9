// SPDX-License-Identifier: MIT
/*
 * The kernel symbol table's cache (userspace/symbols/kallsyms_cache.c):
 * it holds the static part only (core text, init text, Live modules), and a
 * table loaded from it names every address in that part as kallsyms__load's
 * table does; an address outside (a BPF program, a trampoline, anything
 * unknown) makes the lookup read the kallsyms file live, once, so a BPF
 * program loaded since, even at a cached address, is named as it is now
 * (a synthetic file, and a real program loaded here with the real
 * /proc/kallsyms); a changed /proc/modules (a module moved, resized,
 * unloaded, loading, rebuilt: its build ID) or boot or build ID is a miss; a corrupted cache
 * (truncated, an offset out of bounds, unsorted starts, a loop in the
 * parents, a range inverted, a start outside the ranges, a count past its
 * bound, a mode or a symbolic link it must not have) is refused and the
 * table comes from the kallsyms file; an unsafe directory is refused.
 * Runs as root (the real BPF program, chowning a directory).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/symbols/symbols.h"
#include "userspace/symbols/symbols_internal.h"

/* struct kcache_header: its size and the offsets of its counts. */
#define HEADER	       168
#define OFF_NR_RANGES  136
#define OFF_NR_SYMS    144
#define OFF_NAMES_LEN  152
#define OFF_MODULE_LEN 160

static char tmpdir[64];

#define KALLSYMS_CORE                                                                              \
	"ffffffff81000000 T _stext\n"                                                              \
	"ffffffff81000000 T _text\n"                                                               \
	"ffffffff81000010 t alpha\n"                                                               \
	"ffffffff81000100 t beta\n"                                                                \
	"ffffffff81000100 T beta_global\n"                                                         \
	"ffffffff81000200 D data_not_text\n"                                                       \
	"ffffffff81000300 W weak_one\n"                                                            \
	"ffffffff81000400 T _etext\n"                                                              \
	"ffffffff82000000 T _sinittext\n"                                                          \
	"ffffffff82000010 t init_fn\n"                                                             \
	"ffffffff82000100 T _einittext\n"                                                          \
	"ffffffffc0001040 t mod_fn2\t[mymod]\n"                                                    \
	"ffffffffc0001000 t mod_fn\t[mymod]\n"                                                     \
	"ffffffffc0003000 d mod_data\t[mymod]\n"                                                   \
	"ffffffffc0100000 t other_fn\t[other]\n"

/* A BPF program one page past mymod's text, and an ftrace trampoline. */
static const char kallsyms_text[] =
    KALLSYMS_CORE "ffffffffc0002000 t bpf_prog_0123456789abcdef_old\t[bpf]\n"
		  "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n";
/* Later: another program at the same address. */
static const char kallsyms_later[] =
    KALLSYMS_CORE "ffffffffc0002000 t bpf_prog_fedcba9876543210_new\t[bpf]\n"
		  "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n";

static const char modules_text[] = "mymod 16384 0 - Live 0xffffffffc0001000\n"
				   "other 8192 1 mymod, Live 0xffffffffc0100000 (OE)\n";

struct fake {
	char ksyms[PATH_MAX], modules[PATH_MAX], boot[PATH_MAX], notes[PATH_MAX], dir[PATH_MAX];
	char sysmod[PATH_MAX];
	struct kallsyms_cache_paths paths;
};

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void write_str(const char *path, const char *s) { write_file(path, s, strlen(s)); }

/* An Elf64_Nhdr "GNU" NT_GNU_BUILD_ID note of 20 bytes of fill. */
static void write_note(const char *path, uint8_t fill)
{
	uint8_t note[12 + 4 + 20] = {4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0};

	memset(note + 16, fill, 20);
	write_file(path, note, sizeof(note));
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

static void path_of(char *out, const char *tag, const char *name)
{
	snprintf(out, PATH_MAX, "%.63s/%.60s-%.60s", tmpdir, tag, name);
}

/* Synthetic kallsyms, modules, boot id (no notes: no build ID) under tag. */
static void fake_init(struct fake *f, const char *tag)
{
	path_of(f->ksyms, tag, "kallsyms");
	path_of(f->modules, tag, "modules");
	path_of(f->boot, tag, "boot_id");
	path_of(f->notes, tag, "notes-none");
	path_of(f->dir, tag, "cache");
	path_of(f->sysmod, tag, "sys-module");
	write_str(f->ksyms, kallsyms_text);
	write_str(f->modules, modules_text);
	write_str(f->boot, "0f0e0d0c-0b0a-4908-8706-050403020100\n");
	f->paths =
	    (struct kallsyms_cache_paths){f->ksyms, f->modules, f->boot, f->notes, f->sysmod};
}

static struct sym_module *load(const struct fake *f, struct symbolizer_kcache_stats *st)
{
	struct sym_module *m = sym_module__new("[kernel.kallsyms]");
	uint64_t stext = 0;

	assert_non_null(m);
	assert_int_equal(kallsyms__load_cached(m, &f->paths, f->dir, &stext, st), 0);
	assert_null(sym_module__error(m));
	assert_int_equal(stext, 0xffffffff81000000ull);
	return m;
}

static struct sym_module *reference(const char *ksyms)
{
	struct sym_module *m = sym_module__new("[kernel.kallsyms]");
	uint64_t stext;

	assert_non_null(m);
	assert_int_equal(kallsyms__load(m, ksyms, &stext), 0);
	assert_null(sym_module__error(m));
	return m;
}

static bool has_name(const struct sym_module *m, const char *name)
{
	for (size_t i = 0; i < m->nr_syms; i++)
		if (!strcmp(m->names + m->syms[i].name, name))
			return true;
	return false;
}

static const char *name_at(struct sym_module *m, uint64_t a)
{
	return sym_module__lookup(m, a, NULL);
}

static void assert_name(struct sym_module *m, uint64_t a, const char *want)
{
	const char *got = name_at(m, a);

	if (!want)
		assert_null(got);
	else
		assert_string_equal(got ? got : "(none)", want);
}

/* Addresses in the static part: the cached table and the full one agree
 * (names and offsets), without a live read. */
static const uint64_t static_addrs[] = {
    0xffffffff81000000, 0xffffffff81000010, 0xffffffff8100001f, 0xffffffff81000150,
    0xffffffff81000300, 0xffffffff810003ff, 0xffffffff82000010, 0xffffffff820000ff,
    0xffffffffc0001000, 0xffffffffc0001041, 0xffffffffc0001fff, 0xffffffffc0100000,
    0xffffffffc0100800,
};

static void test_static_part_round_trip(void **state)
{
	struct symbolizer_kcache_stats st = {0};
	struct sym_module *ref, *m;
	struct fake f;
	size_t i;

	(void)state;
	fake_init(&f, "rt");
	ref = reference(f.ksyms);
	m = load(&f, &st); /* miss: the full table, the static part cached */
	assert_int_equal(st.miss, 1);
	assert_null(m->kstatic);
	sym_module__free(m);
	m = load(&f, &st);
	assert_int_equal(st.hit, 1);
	assert_non_null(m->kstatic);
	/* Dynamic symbols and the core's bounds past its text are not cached. */
	assert_false(has_name(m, "bpf_prog_0123456789abcdef_old"));
	assert_false(has_name(m, "ftrace_trampoline"));
	assert_true(has_name(m, "mod_fn2") && has_name(m, "init_fn") && has_name(m, "other_fn"));
	for (i = 0; i < sizeof(static_addrs) / sizeof(static_addrs[0]); i++) {
		uint64_t o1 = 1, o2 = 2;
		const char *a = sym_module__lookup(ref, static_addrs[i], &o1);
		const char *b = sym_module__lookup(m, static_addrs[i], &o2);

		assert_non_null(a);
		assert_string_equal(a, b ? b : "(none)");
		assert_int_equal(o1, o2);
	}
	assert_int_equal(st.outside_bpf + st.outside_other + st.outside_unknown, 0);
	assert_true(kallsyms_static__covers(m->kstatic, 0xffffffffc0001fff));
	/* One page past mymod's last text symbol: another allocation's. */
	assert_false(kallsyms_static__covers(m->kstatic, 0xffffffffc0002000));
	assert_false(kallsyms_static__covers(m->kstatic, 0xffffffff81000400)); /* _etext */
	sym_module__free(m);
	sym_module__free(ref);
}

/* A program loaded since the cache was written, at an address an older
 * one had: named as kallsyms names it now, counted once, read once. */
static void test_bpf_address_read_live(void **state)
{
	struct symbolizer_kcache_stats st = {0};
	struct sym_module *m;
	struct fake f;

	(void)state;
	fake_init(&f, "bpf");
	sym_module__free(load(&f, &st)); /* miss: cached */
	write_str(f.ksyms, kallsyms_later);
	m = load(&f, &st);
	assert_int_equal(st.hit, 1);
	assert_name(m, 0xffffffff81000010, "alpha"); /* static: no read */
	assert_int_equal(st.outside_bpf, 0);
	assert_name(m, 0xffffffffc0002010, "bpf_prog_fedcba9876543210_new");
	assert_int_equal(st.outside_bpf, 1);
	/* The live table now: the rest still named, no second read. */
	write_str(f.ksyms, kallsyms_text);
	assert_name(m, 0xffffffffc0201004, "ftrace_trampoline");
	assert_name(m, 0xffffffffc0002010, "bpf_prog_fedcba9876543210_new");
	assert_name(m, 0xffffffffc0001041, "mod_fn2");
	assert_int_equal(st.outside_bpf + st.outside_other + st.outside_unknown, 1);
	sym_module__free(m);

	/* An ftrace trampoline: another owner; an unknown address: unknown. */
	m = load(&f, &st);
	assert_name(m, 0xffffffffc0201004, "ftrace_trampoline");
	assert_int_equal(st.outside_other, 1);
	sym_module__free(m);
	m = load(&f, &st);
	assert_name(m, 0xffffffffd0000000, NULL);
	assert_int_equal(st.outside_unknown, 1);
	sym_module__free(m);
	/* The live file unreadable: the cached names stay, nothing else. */
	m = load(&f, &st);
	assert_int_equal(unlink(f.ksyms), 0);
	assert_name(m, 0xffffffffc0002010, NULL);
	assert_name(m, 0xffffffff81000150, "beta_global");
	assert_int_equal(st.outside_unknown, 2);
	assert_int_equal(st.hit, 4);
	sym_module__free(m);
}

/* Any change of a module's name, size, state or address, or of the boot
 * or the build ID, is a miss: the table is rebuilt and cached again. */
static void test_modules_change_invalidates(void **state)
{
	static const char *const changes[] = {
	    "mymod 16384 0 - Live 0xffffffffc0009000\n" /* reloaded elsewhere */
	    "other 8192 1 mymod, Live 0xffffffffc0100000 (OE)\n",
	    "mymod 20480 0 - Live 0xffffffffc0001000\n" /* another build */
	    "other 8192 1 mymod, Live 0xffffffffc0100000 (OE)\n",
	    "mymod 16384 0 - Live 0xffffffffc0001000\n", /* other unloaded */
	    "mymod 16384 0 - Live 0xffffffffc0001000\n"
	    "other 8192 1 mymod, Live 0xffffffffc0100000 (OE)\n"
	    "third 4096 0 - Loading 0xffffffffc0200000\n", /* a module loading */
	    "",						   /* all unloaded */
	};
	struct symbolizer_kcache_stats st = {0};
	struct kallsyms_cache_key key;
	struct kallsyms_static_table t;
	struct fake f;
	uint64_t stext;
	size_t i;
	int dfd;

	(void)state;
	fake_init(&f, "mods");
	sym_module__free(load(&f, &st));
	sym_module__free(load(&f, &st));
	assert_int_equal(st.miss, 1);
	assert_int_equal(st.hit, 1);
	for (i = 0; i < sizeof(changes) / sizeof(changes[0]); i++) {
		write_str(f.modules, changes[i]);
		assert_int_equal(kallsyms_cache__key(&key, &f.paths), 0);
		dfd = cache_dir__open(f.dir);
		assert_true(dfd >= 0);
		assert_int_equal(kallsyms_cache__read(dfd, &key, &t, &stext), -ESTALE);
		assert_null(t.starts);
		close(dfd);
		kallsyms_cache_key__release(&key);
		sym_module__free(load(&f, &st));
		assert_int_equal(st.miss, i + 2);
		sym_module__free(load(&f, &st));
		assert_int_equal(st.hit, i + 2);
	}
	/* A loading module (init symbols listed) and an unloaded one's
	 * symbols are not cached: their addresses read live. */
	{
		struct sym_module *m;

		write_str(f.modules, "mymod 16384 0 - Loading 0xffffffffc0001000\n");
		sym_module__free(load(&f, &st));
		m = load(&f, &st);
		assert_false(has_name(m, "mod_fn") || has_name(m, "other_fn"));
		assert_name(m, 0xffffffffc0100004, "other_fn");
		assert_int_equal(st.outside_other, 1);
		sym_module__free(m);
	}
	/* Another boot; a kernel build ID appearing; a module's build ID
	 * (rebuilt, loaded again where it was, the same size) appearing, then
	 * changing. */
	write_str(f.boot, "1f0e0d0c-0b0a-4908-8706-050403020100\n");
	sym_module__free(load(&f, &st));
	assert_int_equal(st.miss, i + 3);
	write_note(f.notes, 0xab);
	sym_module__free(load(&f, &st));
	assert_int_equal(st.miss, i + 4);
	write_str(f.modules, modules_text);
	sym_module__free(load(&f, &st));
	sym_module__free(load(&f, &st));
	assert_int_equal(st.miss, i + 5);
	assert_int_equal(st.hit, i + 3);
	{
		char p[PATH_MAX + 64];

		assert_int_equal(mkdir(f.sysmod, 0700), 0);
		snprintf(p, sizeof(p), "%s/mymod", f.sysmod);
		assert_int_equal(mkdir(p, 0700), 0);
		snprintf(p, sizeof(p), "%s/mymod/notes", f.sysmod);
		assert_int_equal(mkdir(p, 0700), 0);
		snprintf(p, sizeof(p), "%s/mymod/notes/.note.gnu.build-id", f.sysmod);
		write_note(p, 0x11);
		sym_module__free(load(&f, &st));
		assert_int_equal(st.miss, i + 6);
		sym_module__free(load(&f, &st));
		assert_int_equal(st.hit, i + 4);
		write_note(p, 0x22);
		sym_module__free(load(&f, &st));
		assert_int_equal(st.miss, i + 7);
	}
	sym_module__free(load(&f, &st));
	assert_int_equal(st.hit, i + 5);
	assert_int_equal(st.bad + st.unusable, 0);
}

/* Offsets into the cache file from its header. */
struct layout {
	uint64_t nr_ranges, nr_syms, names_len, modules_len;
	off_t ranges, starts, syms, names, modules;
};

static struct layout layout_of(int fd)
{
	struct layout l;

	assert_int_equal(pread(fd, &l.nr_ranges, 8, OFF_NR_RANGES), 8);
	assert_int_equal(pread(fd, &l.nr_syms, 8, OFF_NR_SYMS), 8);
	assert_int_equal(pread(fd, &l.names_len, 8, OFF_NAMES_LEN), 8);
	assert_int_equal(pread(fd, &l.modules_len, 8, OFF_MODULE_LEN), 8);
	l.ranges = HEADER;
	l.starts = l.ranges + (off_t)l.nr_ranges * 16;
	l.syms = l.starts + (off_t)l.nr_syms * 8;
	l.names = l.syms + (off_t)l.nr_syms * 16;
	l.modules = l.names + (off_t)l.names_len;
	return l;
}

typedef void (*damage_fn)(int fd, const struct layout *l);

static void damage_truncate(int fd, const struct layout *l)
{
	assert_int_equal(ftruncate(fd, l->modules + (off_t)l->modules_len - 1), 0);
}

static void damage_name_offset(int fd, const struct layout *l)
{
	struct sym_entry e;

	assert_int_equal(pread(fd, &e, sizeof(e), l->syms + 16), sizeof(e));
	e.name = (uint32_t)l->names_len; /* one past the arena */
	assert_int_equal(pwrite(fd, &e, sizeof(e), l->syms + 16), sizeof(e));
}

static void damage_unsorted(int fd, const struct layout *l)
{
	uint64_t s[2];

	assert_int_equal(pread(fd, s, sizeof(s), l->starts + 8), sizeof(s));
	uint64_t swap[2] = {s[1], s[0]};
	assert_int_equal(pwrite(fd, swap, sizeof(swap), l->starts + 8), sizeof(swap));
}

static void damage_parent_loop(int fd, const struct layout *l)
{
	struct sym_entry e;

	assert_int_equal(pread(fd, &e, sizeof(e), l->syms + 16), sizeof(e));
	e.parent = 1; /* itself */
	assert_int_equal(pwrite(fd, &e, sizeof(e), l->syms + 16), sizeof(e));
}

static void damage_names_end(int fd, const struct layout *l)
{
	char c = 'x';

	assert_int_equal(pwrite(fd, &c, 1, l->names + (off_t)l->names_len - 1), 1);
}

static void damage_count(int fd, const struct layout *l)
{
	uint64_t n = (uint64_t)SYM_MAX_SYMBOLS + 1;

	(void)l;
	assert_int_equal(pwrite(fd, &n, 8, OFF_NR_SYMS), 8);
}

static void damage_ranges_count(int fd, const struct layout *l)
{
	uint64_t n = UINT64_MAX / 16 + 2; /* wraps a size computed unbounded */

	(void)l;
	assert_int_equal(pwrite(fd, &n, 8, OFF_NR_RANGES), 8);
}

static void damage_range_inverted(int fd, const struct layout *l)
{
	uint64_t r[2];

	assert_int_equal(pread(fd, r, sizeof(r), l->ranges), sizeof(r));
	uint64_t inv[2] = {r[1], r[0]};
	assert_int_equal(pwrite(fd, inv, sizeof(inv), l->ranges), sizeof(inv));
}

/* A start moved past every range: the cache would name an address it
 * does not cover (a BPF program's). */
static void damage_start_outside(int fd, const struct layout *l)
{
	uint64_t s = 0xfffffffff0000000ull;
	struct sym_entry e;

	assert_int_equal(pread(fd, &e, sizeof(e), l->syms + ((off_t)l->nr_syms - 1) * 16),
			 sizeof(e));
	e.end = s + 16;
	assert_int_equal(pwrite(fd, &s, 8, l->starts + ((off_t)l->nr_syms - 1) * 8), 8);
	assert_int_equal(pwrite(fd, &e, sizeof(e), l->syms + ((off_t)l->nr_syms - 1) * 16),
			 sizeof(e));
}

static void damage_mode(int fd, const struct layout *l)
{
	(void)l;
	assert_int_equal(fchmod(fd, 0644), 0);
}

/*
 * Each damage: the read refuses the file (-EINVAL, t empty), and
 * kallsyms__load_cached counts it bad, builds the table from the kallsyms
 * file and replaces the file, so the next load is a hit.
 */
static void test_corrupted_falls_back(void **state)
{
	static const damage_fn damages[] = {
	    damage_truncate,	  damage_name_offset, damage_unsorted,	   damage_parent_loop,
	    damage_names_end,	  damage_count,	      damage_ranges_count, damage_range_inverted,
	    damage_start_outside, damage_mode,
	};
	struct symbolizer_kcache_stats st = {0};
	struct kallsyms_cache_key key;
	struct kallsyms_static_table t;
	char file[PATH_MAX + 16];
	struct sym_module *m;
	struct layout l;
	struct fake f;
	uint64_t s2;
	size_t i;
	int dfd, fd;

	(void)state;
	fake_init(&f, "bad");
	snprintf(file, sizeof(file), "%s/kallsyms", f.dir);
	assert_int_equal(kallsyms_cache__key(&key, &f.paths), 0);
	sym_module__free(load(&f, &st));
	sym_module__free(load(&f, &st));
	assert_int_equal(st.hit, 1);

	dfd = cache_dir__open(f.dir);
	assert_true(dfd >= 0);
	for (i = 0; i < sizeof(damages) / sizeof(damages[0]); i++) {
		fd = open(file, O_RDWR | O_CLOEXEC);
		assert_true(fd >= 0);
		l = layout_of(fd);
		assert_true(l.nr_ranges == 4 && l.nr_syms > 4);
		damages[i](fd, &l);
		close(fd);
		assert_int_equal(kallsyms_cache__read(dfd, &key, &t, &s2), -EINVAL);
		assert_null(t.starts);
		m = load(&f, &st);
		assert_name(m, 0xffffffffc0001041, "mod_fn2");
		sym_module__free(m);
		assert_int_equal(st.bad, i + 1);
		m = load(&f, &st);
		assert_name(m, 0xffffffffc0001041, "mod_fn2");
		sym_module__free(m);
		assert_int_equal(st.hit, i + 2);
	}

	/* A symbolic link in the file's place is never followed. */
	assert_int_equal(rename(file, f.ksyms), 0); /* a good cache, elsewhere */
	assert_int_equal(symlink(f.ksyms, file), 0);
	assert_int_equal(kallsyms_cache__read(dfd, &key, &t, &s2), -EINVAL);
	close(dfd);
	kallsyms_cache_key__release(&key);
	assert_int_equal(st.miss, 1);
	assert_int_equal(st.unusable, 0);
}

/* Directories: a symbolic link, a group/world-writable one, another
 * user's are refused, counted unusable, and the table still loads. */
static void test_unsafe_dir_refused(void **state)
{
	struct symbolizer_kcache_stats st = {0};
	char link[PATH_MAX];
	struct sym_module *m;
	struct stat sb;
	struct fake f;
	int dfd;

	(void)state;
	fake_init(&f, "dir");
	dfd = cache_dir__open(f.dir); /* created 0700 */
	assert_true(dfd >= 0);
	close(dfd);
	assert_int_equal(stat(f.dir, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0700);

	path_of(link, "dir", "link");
	assert_int_equal(symlink(f.dir, link), 0);
	assert_int_equal(cache_dir__open(link), -ELOOP);
	snprintf(f.dir, sizeof(f.dir), "%s", link);
	m = load(&f, &st);
	assert_name(m, 0xffffffffc0002010, "bpf_prog_0123456789abcdef_old");
	sym_module__free(m);
	assert_int_equal(st.unusable, 1);
	path_of(f.dir, "dir", "cache");

	assert_int_equal(chmod(f.dir, 0777), 0);
	assert_int_equal(cache_dir__open(f.dir), -EPERM);
	assert_int_equal(chmod(f.dir, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(f.dir, 65534, 65534), 0);
		assert_int_equal(cache_dir__open(f.dir), -EPERM);
		assert_int_equal(chown(f.dir, 0, 0), 0);
	}
	dfd = cache_dir__open(f.dir);
	assert_true(dfd >= 0);
	close(dfd);
	assert_int_equal(st.hit + st.miss + st.bad, 0);
}

/* Addresses hidden (kptr_restrict): no key, so nothing is cached. */
static void test_hidden_addresses_not_cached(void **state)
{
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 t alpha\n";
	struct symbolizer_kcache_stats st = {0};
	struct kallsyms_cache_key key;
	char file[PATH_MAX + 16];
	struct sym_module *m;
	struct fake f;
	uint64_t s2;

	(void)state;
	fake_init(&f, "hidden");
	write_str(f.ksyms, hidden);
	assert_int_equal(kallsyms_cache__key(&key, &f.paths), -EPERM);
	kallsyms_cache_key__release(&key);
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load_cached(m, &f.paths, f.dir, &s2, &st), 0);
	assert_non_null(sym_module__error(m));
	sym_module__free(m);
	/* Visible kallsyms, hidden module addresses: no key either. */
	write_str(f.ksyms, kallsyms_text);
	write_str(f.modules, "mymod 16384 0 - Live 0x0000000000000000\n");
	assert_int_equal(kallsyms_cache__key(&key, &f.paths), -EPERM);
	kallsyms_cache_key__release(&key);
	snprintf(file, sizeof(file), "%s/kallsyms", f.dir);
	assert_int_equal(access(file, F_OK), -1);
	assert_int_equal(st.hit + st.miss + st.bad + st.unusable, 0);
}

/* A socket filter "r0 = 0; exit" named name; its descriptor or -errno. */
static int load_prog(const char *name)
{
	struct bpf_insn insns[2] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uintptr_t) "GPL";
	snprintf(a.prog_name, sizeof(a.prog_name), "%s", name);
	fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* The [bpf] symbol of /proc/kallsyms ending in suffix: its address and
 * name, or false. */
static bool find_bpf(const char *suffix, uint64_t *addr, char *name, size_t size)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512], sym[256];
	unsigned long long a;
	char type;
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n;

		if (!strstr(line, "\t[bpf]") || sscanf(line, "%llx %c %255s", &a, &type, sym) != 3)
			continue;
		n = strlen(sym);
		if (n >= strlen(suffix) && !strcmp(sym + n - strlen(suffix), suffix)) {
			*addr = a;
			snprintf(name, size, "%s", sym);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/* The real /proc/kallsyms: a BPF program loaded after the cache was
 * written is named by its own symbol with the cache warm, and counted. */
static void test_real_bpf_program_named(void **state)
{
	struct symbolizer_kcache_stats st = {0};
	struct fake f = {0};
	char name[256];
	struct sym_module *m;
	uint64_t addr, stext;
	int fd;

	(void)state;
	if (geteuid() != 0 || kallsyms_cache__visible("/proc/kallsyms")) {
		skip();
		return;
	}
	f.paths = kallsyms_cache__proc;
	path_of(f.dir, "real", "cache");
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load_cached(m, &f.paths, f.dir, &stext, &st), 0);
	sym_module__free(m);
	assert_int_equal(st.miss, 1);
	fd = load_prog("ms_kcache_t");
	if (fd < 0) {
		skip(); /* no BPF here */
		return;
	}
	if (!find_bpf("_ms_kcache_t", &addr, name, sizeof(name))) {
		close(fd);
		skip(); /* no JIT, or bpf_jit_kallsyms off */
		return;
	}
	m = sym_module__new("[kernel.kallsyms]");
	assert_int_equal(kallsyms__load_cached(m, &f.paths, f.dir, &stext, &st), 0);
	assert_int_equal(st.hit, 1);
	assert_non_null(m->kstatic);
	assert_false(kallsyms_static__covers(m->kstatic, addr));
	assert_name(m, addr, name);
	assert_int_equal(st.outside_bpf, 1);
	sym_module__free(m);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_static_part_round_trip),
	    cmocka_unit_test(test_bpf_address_read_live),
	    cmocka_unit_test(test_modules_change_invalidates),
	    cmocka_unit_test(test_corrupted_falls_back),
	    cmocka_unit_test(test_unsafe_dir_refused),
	    cmocka_unit_test(test_hidden_addresses_not_cached),
	    cmocka_unit_test(test_real_bpf_program_named),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
