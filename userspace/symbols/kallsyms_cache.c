// SPDX-License-Identifier: MIT
/*
 * A per-boot cache of the static part of the kernel's symbol table (what
 * kallsyms__load builds from /proc/kallsyms: 121k symbols, ~40 ms of CPU,
 * half of it the kernel formatting the file), so only the first recording
 * after a boot or a module load/unload pays for the parse.
 *
 * Static: the core kernel's text [_text or _stext, _etext), its init text
 * [_sinittext, _einittext), and each Live module of /proc/modules from its
 * first text symbol to the end of the page holding its last one (a module's
 * text is one page-granular allocation, so nothing else lies there), within
 * [load address, + size).  Nothing else is cached: BPF programs,
 * trampolines and dispatchers ([bpf]), ftrace and kprobe trampolines
 * ([__builtin__ftrace], [__builtin__kprobes]) come and go at any time, and
 * are allocated from the same area as modules.  A lookup outside the cached
 * ranges reads /proc/kallsyms whole, once (kallsyms_static__go_live), so no
 * name of theirs is ever stale.  Inside the ranges the cached entries are
 * those of a live table: every entry there is of the range's owner, so its
 * end (the next entry of its owner, or SYM_UNSIZED_TAIL past a module's
 * last, beyond that page) is the same.
 *
 * The file "kallsyms" in the cache directory is
 *
 *   struct kcache_header   (magic, version, boot id, build id, _stext, counts)
 *   uint64_t ranges[nr_ranges][2]   [lo, hi), ascending, disjoint
 *   uint64_t starts[nr_syms]        ascending, distinct, each in a range
 *   struct sym_entry syms[nr_syms]  end > start, parent < index or none
 *   char names[names_len]           every name offset < names_len, last byte NUL
 *   char modules[modules_len]       the key's module list
 *
 * in host byte order.  Its key is the boot (/proc/sys/kernel/random/boot_id),
 * the kernel's build ID (/sys/kernel/notes), each module's name, size,
 * state and load address (/proc/modules) and build ID
 * (/sys/module/NAME/notes), and KCACHE_VERSION; any difference
 * is a miss and the table is rebuilt from /proc/kallsyms and the file
 * replaced.  The file is untrusted input all the same: every count is
 * bounded before anything is allocated, every offset and order above is
 * checked before the table is used.
 *
 * Safety (cache_dir.c): the directory must be owned by the effective user
 * and not writable by group or others; neither it nor the file is reached
 * through a symbolic link (O_NOFOLLOW on the last component, openat from
 * the directory).  Files are written 0600 under a temporary name, fsync'ed
 * and renamed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

#define KCACHE_MAGIC "MSKSYMS\0"
#define KCACHE_FILE  "kallsyms"
/* Bump when the table's rules (kallsyms.c, sym_table.c) or this layout change. */
#define KCACHE_VERSION 2u
/* A cached names arena larger than this is malformed (bytes; kallsyms.c's
 * arena is bounded by 4 GiB >> 3, real ones are ~3 MiB). */
#define KCACHE_NAMES_MAX (UINT32_MAX >> 3)
/* More ranges than this (core, init, one a module) is malformed. */
#define KCACHE_RANGES_MAX (1u << 16)

struct kcache_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* sizeof(struct kcache_header) */
	char boot_id[KCACHE_BOOT_ID_LEN];
	uint8_t build_id[KCACHE_BUILD_ID_LEN];
	uint32_t build_id_len;
	uint32_t zero;
	uint64_t stext;
	uint64_t nr_ranges;
	uint64_t nr_syms;
	uint64_t names_len;   /* bytes */
	uint64_t modules_len; /* bytes */
};
_Static_assert(sizeof(struct kcache_header) == 168, "no padding in the header");

struct kallsyms_static {
	uint64_t (*ranges)[2];
	size_t nr_ranges;
	char *path; /* the kallsyms file read on going live */
	struct symbolizer_kcache_stats *stats;
	char *retired_names; /* the cached names, handed out before going live */
	bool live;	     /* gone live, or tried: the table covers all it can */
};

const struct kallsyms_cache_paths kallsyms_cache__proc = {
    .kallsyms = "/proc/kallsyms",
    .modules = "/proc/modules",
    .boot_id = "/proc/sys/kernel/random/boot_id",
    .notes = "/sys/kernel/notes",
    .sys_module = "/sys/module",
};

/* Reads a small file whole into buf (NUL-terminated).  Returns its length
 * or -errno; a file of size - 1 bytes or more is -E2BIG. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	size_t have = 0;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (have < size - 1) {
		got = read(fd, buf + have, size - 1 - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			got = -errno;
			close(fd);
			return got;
		}
		if (!got)
			break;
		have += (size_t)got;
	}
	close(fd);
	buf[have] = '\0';
	return have == size - 1 ? -E2BIG : (ssize_t)have;
}

int kallsyms_cache__visible(const char *path)
{
	char buf[256];
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC), i;

	if (fd < 0)
		return -errno;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return got < 0 ? -errno : -ENOENT;
	buf[got] = '\0';
	for (i = 0; i < got && buf[i] != ' '; i++)
		if (buf[i] != '0')
			return 0;
	return -EPERM;
}

void kallsyms_cache_key__release(struct kallsyms_cache_key *key)
{
	free(key->modules);
	key->modules = NULL;
	key->modules_len = 0;
}

/* One /proc/modules line "NAME SIZE REFS DEPS STATE 0xADDR[ TAINTS]"
 * (kernel/module/procfs.c, m_show(); REFS DEPS are "- -" without module
 * unloading) appended to out as "NAME SIZE STATE ADDR BUILDID\n", the build
 * ID from sys_module/NAME/notes/.note.gnu.build-id in hex ("-" if none): a
 * module rebuilt and loaded again at the same address with the same size is
 * another key.  Returns the bytes written, -EPERM (the address reads 0:
 * kptr_restrict) or -EINVAL. */
static int module_line(char *line, const char *sys_module, char *out, size_t room)
{
	char *tok[6], *save = NULL, *end, path[PATH_MAX], hex[2 * SYM_BUILD_ID_MAX + 1] = "-";
	uint8_t bid[SYM_BUILD_ID_MAX];
	unsigned long long size, addr;
	ssize_t len;
	int i, n;

	for (i = 0; i < 6; i++) {
		tok[i] = strtok_r(i ? NULL : line, " ", &save);
		if (!tok[i])
			return -EINVAL;
	}
	if (strlen(tok[0]) >= KALLSYMS_OWNER_NAME ||
	    strspn(tok[0], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") !=
		strlen(tok[0]))
		return -EINVAL;
	errno = 0;
	size = strtoull(tok[1], &end, 10);
	if (errno || *end || end == tok[1] || strncmp(tok[5], "0x", 2))
		return -EINVAL;
	addr = strtoull(tok[5] + 2, &end, 16);
	if (errno || *end || end == tok[5] + 2)
		return -EINVAL;
	if (!addr)
		return -EPERM;
	n = snprintf(path, sizeof(path), "%s/%s/notes/.note.gnu.build-id", sys_module, tok[0]);
	len = n > 0 && (size_t)n < sizeof(path) ? kernel_notes__build_id(path, bid) : 0;
	if (len > 0)
		sym_hex(bid, (size_t)len, hex);
	n = snprintf(out, room, "%s %llu %s %llx %s\n", tok[0], size, tok[4], addr, hex);
	return n > 0 && (size_t)n < room ? n : -EINVAL;
}

int kallsyms_cache__key(struct kallsyms_cache_key *key, const struct kallsyms_cache_paths *paths)
{
	uint8_t bid[SYM_BUILD_ID_MAX];
	char boot[64], *buf = NULL, *line, *save = NULL;
	ssize_t n, len;
	int err;

	memset(key, 0, sizeof(*key));
	n = read_small(paths->boot_id, boot, sizeof(boot));
	if (n < 0)
		return (int)n;
	if (n < 36)
		return -EINVAL;
	memcpy(key->boot_id, boot, 36);
	len = kernel_notes__build_id(paths->notes, bid);
	if (len > 0 && len <= KCACHE_BUILD_ID_LEN) {
		memcpy(key->build_id, bid, (size_t)len);
		key->build_id_len = (uint32_t)len;
	}
	/* kptr_restrict: kallsyms' first address (the seq_file formats only
	 * the lines read) reads as 0, and so do the modules' below. */
	err = kallsyms_cache__visible(paths->kallsyms);
	if (err)
		return err;
	buf = malloc(KCACHE_MODULES_MAX + 1);
	key->modules = malloc(KCACHE_MODULES_MAX + 1);
	if (!buf || !key->modules) {
		err = -ENOMEM;
		goto cleanup;
	}
	n = read_small(paths->modules, buf, KCACHE_MODULES_MAX + 1);
	if (n == -ENOENT) /* a kernel without modules */
		n = 0, buf[0] = '\0';
	if (n < 0) {
		err = (int)n;
		goto cleanup;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int w = module_line(line, paths->sys_module, key->modules + key->modules_len,
				    KCACHE_MODULES_MAX + 1 - key->modules_len);

		if (w < 0) {
			err = w;
			goto cleanup;
		}
		key->modules_len += (size_t)w;
	}
cleanup:
	free(buf);
	return err;
}

void kallsyms_static_table__release(struct kallsyms_static_table *t)
{
	free(t->ranges);
	free(t->starts);
	free(t->syms);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

static int range_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* The static ranges of the file's top comment into t (sorted, merged). */
static int static_ranges(struct kallsyms_static_table *t, uint64_t stext,
			 const struct kallsyms_info *info, const struct kallsyms_cache_key *key)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), lo;
	size_t cap = 2, i, k;
	const char *p, *end = key->modules + key->modules_len;

	for (p = key->modules; p < end; p++)
		cap += *p == '\n';
	t->ranges = malloc(cap * sizeof(*t->ranges));
	if (!t->ranges)
		return -ENOMEM;
	lo = info->text && info->text < stext ? info->text : stext;
	if (!stext || info->etext <= lo)
		return -EINVAL; /* no core bounds: nothing known to be static */
	t->ranges[t->nr_ranges][0] = lo;
	t->ranges[t->nr_ranges++][1] = info->etext;
	if (info->sinittext && info->einittext > info->sinittext) {
		t->ranges[t->nr_ranges][0] = info->sinittext;
		t->ranges[t->nr_ranges++][1] = info->einittext;
	}
	for (p = key->modules; p < end; p = strchr(p, '\n') + 1) {
		char name[KALLSYMS_OWNER_NAME], state[32];
		unsigned long long size, addr;
		uint64_t hi;

		if (sscanf(p, "%63s %llu %31s %llx", name, &size, state, &addr) != 4)
			return -EINVAL;
		if (strcmp(state, "Live")) /* Loading: init symbols listed too */
			continue;
		for (i = 0; i < info->nr_owners; i++)
			if (info->owners[i].text && !strcmp(info->owners[i].name, name))
				break;
		if (i == info->nr_owners || addr > UINT64_MAX - size ||
		    info->owners[i].last > UINT64_MAX - page)
			continue;
		lo = info->owners[i].first > addr ? info->owners[i].first : addr;
		hi = (info->owners[i].last + page) / page * page;
		if (hi > addr + size)
			hi = addr + size;
		if (lo < hi) {
			t->ranges[t->nr_ranges][0] = lo;
			t->ranges[t->nr_ranges++][1] = hi;
		}
	}
	qsort(t->ranges, t->nr_ranges, sizeof(*t->ranges), range_cmp);
	for (i = 1, k = 0; i < t->nr_ranges; i++) {
		if (t->ranges[i][0] <= t->ranges[k][1]) {
			if (t->ranges[i][1] > t->ranges[k][1])
				t->ranges[k][1] = t->ranges[i][1];
		} else {
			k++;
			t->ranges[k][0] = t->ranges[i][0];
			t->ranges[k][1] = t->ranges[i][1];
		}
	}
	t->nr_ranges = k + 1;
	return 0;
}

int kallsyms_cache__static_table(struct kallsyms_static_table *t, const struct sym_module *m,
				 uint64_t stext, const struct kallsyms_info *info,
				 const struct kallsyms_cache_key *key)
{
	uint32_t *map = NULL;
	size_t i, r = 0, n = 0, names = 0;
	int err;

	memset(t, 0, sizeof(*t));
	err = static_ranges(t, stext, info, key);
	if (err)
		goto cleanup;
	map = malloc((m->nr_syms ? m->nr_syms : 1) * sizeof(*map));
	if (!map) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < m->nr_syms; i++) {
		while (r < t->nr_ranges && t->ranges[r][1] <= m->starts[i])
			r++;
		map[i] = SYM_NO_PARENT;
		if (r < t->nr_ranges && m->starts[i] >= t->ranges[r][0]) {
			map[i] = (uint32_t)n++;
			names += strlen(m->names + m->syms[i].name) + 1;
		}
	}
	if (!n) {
		err = -EINVAL;
		goto cleanup;
	}
	t->starts = malloc(n * sizeof(*t->starts));
	t->syms = malloc(n * sizeof(*t->syms));
	t->names = malloc(names);
	if (!t->starts || !t->syms || !t->names) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < m->nr_syms; i++) {
		const char *name = m->names + m->syms[i].name;
		size_t len = strlen(name) + 1;
		uint32_t j = map[i], parent = m->syms[i].parent;

		if (j == SYM_NO_PARENT)
			continue;
		while (parent != SYM_NO_PARENT && map[parent] == SYM_NO_PARENT)
			parent = m->syms[parent].parent;
		t->starts[j] = m->starts[i];
		t->syms[j].end = m->syms[i].end;
		t->syms[j].name = (uint32_t)t->names_len;
		t->syms[j].parent = parent == SYM_NO_PARENT ? SYM_NO_PARENT : map[parent];
		memcpy(t->names + t->names_len, name, len);
		t->names_len += len;
	}
	t->nr_syms = n;
cleanup:
	free(map);
	if (err)
		kallsyms_static_table__release(t);
	return err;
}

/* Every rule of the file's top comment.  0 or -EINVAL. */
static int kcache__validate(const struct kallsyms_static_table *t)
{
	size_t i, r = 0;

	if (!t->names_len || t->names[t->names_len - 1] != '\0')
		return -EINVAL;
	for (i = 0; i < t->nr_ranges; i++)
		if (t->ranges[i][0] >= t->ranges[i][1] ||
		    (i && t->ranges[i][0] < t->ranges[i - 1][1]))
			return -EINVAL;
	for (i = 0; i < t->nr_syms; i++) {
		if (i && t->starts[i] <= t->starts[i - 1])
			return -EINVAL;
		if (t->syms[i].end <= t->starts[i] || t->syms[i].name >= t->names_len)
			return -EINVAL;
		if (t->syms[i].parent != SYM_NO_PARENT && t->syms[i].parent >= i)
			return -EINVAL;
		while (r < t->nr_ranges && t->ranges[r][1] <= t->starts[i])
			r++;
		if (r == t->nr_ranges || t->starts[i] < t->ranges[r][0])
			return -EINVAL;
	}
	return 0;
}

int kallsyms_cache__read(int dirfd, const struct kallsyms_cache_key *key,
			 struct kallsyms_static_table *t, uint64_t *stext)
{
	struct kcache_header h;
	char *modules = NULL;
	struct iovec iov[5];
	struct stat st;
	ssize_t got;
	size_t want;
	int fd, err = 0;

	memset(t, 0, sizeof(*t));
	fd = cache_dir__open_file(dirfd, KCACHE_FILE, O_RDONLY, &st);
	if (fd < 0)
		return fd;
	got = pread(fd, &h, sizeof(h), 0);
	if (got != (ssize_t)sizeof(h) || memcmp(h.magic, KCACHE_MAGIC, 8) ||
	    h.header_size != sizeof(h)) {
		err = -EINVAL;
		goto cleanup;
	}
	if (h.version != KCACHE_VERSION || memcmp(h.boot_id, key->boot_id, sizeof(h.boot_id)) ||
	    h.build_id_len != key->build_id_len ||
	    memcmp(h.build_id, key->build_id, sizeof(h.build_id)) ||
	    h.modules_len != key->modules_len) {
		err = -ESTALE;
		goto cleanup;
	}
	/* Every count bounded before any allocation or sum. */
	if (!h.nr_ranges || h.nr_ranges > KCACHE_RANGES_MAX || !h.nr_syms ||
	    h.nr_syms > SYM_MAX_SYMBOLS || !h.names_len || h.names_len > KCACHE_NAMES_MAX ||
	    h.modules_len > KCACHE_MODULES_MAX || h.zero) {
		err = -EINVAL;
		goto cleanup;
	}
	t->nr_ranges = (size_t)h.nr_ranges;
	t->nr_syms = (size_t)h.nr_syms;
	t->names_len = (size_t)h.names_len;
	want = t->nr_ranges * sizeof(*t->ranges) + t->nr_syms * sizeof(*t->starts) +
	       t->nr_syms * sizeof(*t->syms) + t->names_len + (size_t)h.modules_len;
	if ((uint64_t)st.st_size != sizeof(h) + want) {
		err = -EINVAL;
		goto cleanup;
	}
	t->ranges = malloc(t->nr_ranges * sizeof(*t->ranges));
	t->starts = malloc(t->nr_syms * sizeof(*t->starts));
	t->syms = malloc(t->nr_syms * sizeof(*t->syms));
	t->names = malloc(t->names_len);
	modules = malloc(h.modules_len ? (size_t)h.modules_len : 1);
	if (!t->ranges || !t->starts || !t->syms || !t->names || !modules) {
		err = -ENOMEM;
		goto cleanup;
	}
	iov[0] = (struct iovec){t->ranges, t->nr_ranges * sizeof(*t->ranges)};
	iov[1] = (struct iovec){t->starts, t->nr_syms * sizeof(*t->starts)};
	iov[2] = (struct iovec){t->syms, t->nr_syms * sizeof(*t->syms)};
	iov[3] = (struct iovec){t->names, t->names_len};
	iov[4] = (struct iovec){modules, (size_t)h.modules_len};
	got = preadv(fd, iov, 5, sizeof(h));
	if (got != (ssize_t)want) {
		err = -EINVAL;
		goto cleanup;
	}
	if (memcmp(modules, key->modules, key->modules_len)) {
		err = -ESTALE;
		goto cleanup;
	}
	err = kcache__validate(t);
	if (!err)
		*stext = h.stext;
cleanup:
	if (err)
		kallsyms_static_table__release(t);
	free(modules);
	close(fd);
	return err;
}

int kallsyms_cache__write(int dirfd, const struct kallsyms_cache_key *key,
			  const struct kallsyms_static_table *t, uint64_t stext)
{
	struct kcache_header h = {0};
	char tmp[64];
	struct iovec iov[6];
	size_t want = 0;
	ssize_t got;
	int fd, err = 0, i;

	if (!t->nr_syms || !t->nr_ranges || t->nr_ranges > KCACHE_RANGES_MAX ||
	    t->nr_syms > SYM_MAX_SYMBOLS || t->names_len > KCACHE_NAMES_MAX ||
	    key->modules_len > KCACHE_MODULES_MAX)
		return -EINVAL;
	memcpy(h.magic, KCACHE_MAGIC, 8);
	h.version = KCACHE_VERSION;
	h.header_size = sizeof(h);
	memcpy(h.boot_id, key->boot_id, sizeof(h.boot_id));
	memcpy(h.build_id, key->build_id, sizeof(h.build_id));
	h.build_id_len = key->build_id_len;
	h.stext = stext;
	h.nr_ranges = t->nr_ranges;
	h.nr_syms = t->nr_syms;
	h.names_len = t->names_len;
	h.modules_len = key->modules_len;
	iov[0] = (struct iovec){&h, sizeof(h)};
	iov[1] = (struct iovec){t->ranges, t->nr_ranges * sizeof(*t->ranges)};
	iov[2] = (struct iovec){t->starts, t->nr_syms * sizeof(*t->starts)};
	iov[3] = (struct iovec){t->syms, t->nr_syms * sizeof(*t->syms)};
	iov[4] = (struct iovec){t->names, t->names_len};
	iov[5] = (struct iovec){key->modules, key->modules_len};
	for (i = 0; i < 6; i++)
		want += iov[i].iov_len;

	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", KCACHE_FILE, (int)getpid());
	unlinkat(dirfd, tmp, 0); /* one left by a crashed run of this pid */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	got = writev(fd, iov, 6);
	if (got < 0)
		err = -errno;
	else if ((size_t)got != want)
		err = -EIO;
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, KCACHE_FILE))
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

/* m takes t's table and a kallsyms_static of its ranges.  0 or -ENOMEM
 * (t untouched). */
static int kcache__adopt(struct sym_module *m, struct kallsyms_static_table *t, const char *path,
			 struct symbolizer_kcache_stats *stats)
{
	struct kallsyms_static *ks = calloc(1, sizeof(*ks));

	if (ks)
		ks->path = strdup(path);
	if (!ks || !ks->path) {
		free(ks);
		return -ENOMEM;
	}
	ks->ranges = t->ranges;
	ks->nr_ranges = t->nr_ranges;
	ks->stats = stats;
	m->starts = t->starts;
	m->syms = t->syms;
	m->nr_syms = t->nr_syms;
	m->names = t->names;
	m->names_len = t->names_len;
	m->kstatic = ks;
	memset(t, 0, sizeof(*t));
	return 0;
}

int kallsyms__load_cached(struct sym_module *m, const struct kallsyms_cache_paths *paths,
			  const char *dir, uint64_t *stext, struct symbolizer_kcache_stats *stats)
{
	struct kallsyms_cache_key key = {0};
	struct kallsyms_static_table t = {0};
	struct kallsyms_info info = {0};
	int dirfd = -1, err;

	if (!dir || kallsyms_cache__key(&key, paths)) {
		err = kallsyms__load(m, paths->kallsyms, stext);
		goto cleanup;
	}
	dirfd = cache_dir__open(dir);
	if (dirfd < 0) {
		stats->unusable++;
		err = kallsyms__load(m, paths->kallsyms, stext);
		goto cleanup;
	}
	err = kallsyms_cache__read(dirfd, &key, &t, stext);
	if (!err)
		err = kcache__adopt(m, &t, paths->kallsyms, stats);
	if (!err) {
		stats->hit++;
		goto cleanup;
	}
	if (err == -ENOMEM)
		goto cleanup;
	if (err == -ENOENT || err == -ESTALE)
		stats->miss++;
	else
		stats->bad++;
	kallsyms_static_table__release(&t);
	err = kallsyms__load_info(m, paths->kallsyms, stext, &info);
	if (!err && !sym_module__error(m) &&
	    (kallsyms_cache__static_table(&t, m, *stext, &info, &key) ||
	     kallsyms_cache__write(dirfd, &key, &t, *stext)))
		stats->unusable++;
cleanup:
	if (dirfd >= 0)
		close(dirfd);
	kallsyms_static_table__release(&t);
	kallsyms_info__release(&info);
	kallsyms_cache_key__release(&key);
	return err;
}

bool kallsyms_static__covers(const struct kallsyms_static *ks, uint64_t vaddr)
{
	size_t lo = 0, hi = ks->nr_ranges, mid;

	if (ks->live)
		return true;
	while (lo < hi) { /* the first range ending above vaddr */
		mid = lo + (hi - lo) / 2;
		if (ks->ranges[mid][1] <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ks->nr_ranges && vaddr >= ks->ranges[lo][0];
}

void kallsyms_static__go_live(struct sym_module *m, uint64_t vaddr)
{
	struct kallsyms_static *ks = m->kstatic;
	struct kallsyms_info info = {.probe = vaddr};
	struct sym_module *live = sym_module__new(m->path);
	uint64_t stext;
	int owner;

	ks->live = true;
	if (!live || kallsyms__load_info(live, ks->path, &stext, &info) ||
	    sym_module__error(live)) {
		ks->stats->outside_unknown++;
		goto cleanup;
	}
	owner = sym_table__find(live, vaddr) == SIZE_MAX ? KALLSYMS_PROBE_NONE : info.probe_owner;
	if (owner >= 0 && !strcmp(info.owners[owner].name, "bpf"))
		ks->stats->outside_bpf++;
	else if (owner >= 0 || owner == -1)
		ks->stats->outside_other++;
	else
		ks->stats->outside_unknown++;
	/* Names handed out so far stay valid (symbols.h). */
	free(m->starts);
	free(m->syms);
	ks->retired_names = m->names;
	m->starts = live->starts;
	m->syms = live->syms;
	m->nr_syms = live->nr_syms;
	m->names = live->names;
	m->names_len = live->names_len;
	live->starts = NULL;
	live->syms = NULL;
	live->names = NULL;
	live->nr_syms = live->names_len = 0;
cleanup:
	kallsyms_info__release(&info);
	sym_module__free(live);
}

void kallsyms_static__free(struct kallsyms_static *ks)
{
	if (!ks)
		return;
	free(ks->ranges);
	free(ks->path);
	free(ks->retired_names);
	free(ks);
}
