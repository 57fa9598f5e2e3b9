// SPDX-License-Identifier: MIT
/*
 * A per-boot cache of the kernel's compiled symbol table (what
 * kallsyms__load builds from /proc/kallsyms: 121k symbols, ~40 ms of CPU,
 * half of it the kernel formatting the file), so only the first recording
 * after a boot or a module load/unload pays for the parse.
 *
 * The file "kallsyms" in the cache directory is
 *
 *   struct kcache_header   (magic, version, key, _stext, counts)
 *   uint64_t starts[nr_syms]        ascending, distinct
 *   struct sym_entry syms[nr_syms]  end > start, parent < index or none
 *   char names[names_len]           every name offset < names_len, last byte NUL
 *
 * in host byte order.  Its key is the boot (/proc/sys/kernel/random/boot_id),
 * a hash of /proc/modules' names and load addresses, and KCACHE_VERSION; any
 * difference is a miss and the table is rebuilt from /proc/kallsyms and the
 * file replaced.  The file is untrusted input all the same: every count,
 * offset and order above is checked before the table is used.
 *
 * Safety: the directory must be owned by the effective user and not
 * writable by group or others; neither it nor the file is reached through a
 * symbolic link (O_NOFOLLOW on the last component, openat from the directory).
 * Files are written 0600 under a temporary name, fsync'ed and renamed.
 *
 * Not in the key: BPF programs, ftrace trampolines and kprobe slots, which
 * kallsyms also lists ([bpf], [__builtin__ftrace], [__builtin__kprobes]);
 * their symbols are those of the cache's build.
 */
#include <errno.h>
#include <fcntl.h>
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
#define KCACHE_VERSION 1u
/* A cached names arena larger than this is malformed (bytes; kallsyms.c's
 * arena is bounded by 4 GiB >> 3, real ones are ~3 MiB). */
#define KCACHE_NAMES_MAX (UINT32_MAX >> 3)

struct kcache_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* sizeof(struct kcache_header) */
	char boot_id[KCACHE_BOOT_ID_LEN];
	uint64_t modules_hash;
	uint64_t stext;
	uint64_t nr_syms;
	uint64_t names_len; /* bytes */
};
_Static_assert(sizeof(struct kcache_header) == 88, "no padding in the header");

static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* Reads a small /proc file whole into buf (NUL-terminated).  Returns its
 * length or -errno; a file longer than buf is -E2BIG. */
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

int kallsyms_cache__key(struct kallsyms_cache_key *key, const char *kallsyms)
{
	static char buf[1 << 20]; /* /proc/modules: ~100 bytes a module */
	uint64_t h = 14695981039346656037ull;
	ssize_t n;
	char *line, *save = NULL;
	int err;

	memset(key, 0, sizeof(*key));
	n = read_small("/proc/sys/kernel/random/boot_id", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	if (n < 36)
		return -EINVAL;
	memcpy(key->boot_id, buf, 36);
	/* kptr_restrict: kallsyms' first address (the seq_file formats only
	 * the lines read) reads as 0, and so do the modules' below. */
	err = kallsyms_cache__visible(kallsyms);
	if (err)
		return err;
	n = read_small("/proc/modules", buf, sizeof(buf));
	if (n == -ENOENT) /* a kernel without modules */
		n = 0, buf[0] = '\0';
	if (n < 0)
		return (int)n;
	/* "name size refcount deps state 0xADDR" (kernel/module/procfs.c,
	 * m_show()); the address reads 0x0 under kptr_restrict. */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *name_end = strchr(line, ' '), *addr = strrchr(line, ' ');

		if (!name_end || !addr)
			return -EINVAL;
		addr++;
		if (!strcmp(addr, "0x0000000000000000") || !strcmp(addr, "0x0"))
			return -EPERM;
		h = fnv64(h, line, (size_t)(name_end - line) + 1);
		h = fnv64(h, addr, strlen(addr) + 1);
	}
	key->modules_hash = h;
	return 0;
}

int kallsyms_cache__open_dir(const char *path)
{
	char *copy = strdup(path), *slash, *last;
	const char *parent;
	struct stat st;
	int pfd = -1, fd = -1, err = 0;

	if (!copy)
		return -ENOMEM;
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	if (!slash) {
		parent = ".";
		last = copy;
	} else {
		*slash = '\0';
		parent = slash == copy ? "/" : copy;
		last = slash + 1;
	}
	if (!*last || !strcmp(last, ".") || !strcmp(last, "..")) {
		err = -EINVAL;
		goto cleanup;
	}
	pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (mkdirat(pfd, last, 0700) && errno != EEXIST) {
		err = -errno;
		goto cleanup;
	}
	fd = openat(pfd, last, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = errno == ENOTDIR ? -ELOOP : -errno; /* a symlink: O_NOFOLLOW */
		goto cleanup;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		err = -EPERM;
cleanup:
	if (err && fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	free(copy);
	return err ? err : fd;
}

/* Every rule of the file's top comment.  0 or -EINVAL. */
static int kcache__validate(const uint64_t *starts, const struct sym_entry *syms, size_t n,
			    const char *names, size_t names_len)
{
	size_t i;

	if (!names_len || names[names_len - 1] != '\0')
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (i && starts[i] <= starts[i - 1])
			return -EINVAL;
		if (syms[i].end <= starts[i] || syms[i].name >= names_len)
			return -EINVAL;
		if (syms[i].parent != SYM_NO_PARENT && syms[i].parent >= i)
			return -EINVAL;
	}
	return 0;
}

int kallsyms_cache__read(int dirfd, const struct kallsyms_cache_key *key, struct sym_module *m,
			 uint64_t *stext)
{
	struct kcache_header h;
	struct sym_entry *syms = NULL;
	uint64_t *starts = NULL;
	char *names = NULL;
	struct iovec iov[3];
	struct stat st;
	ssize_t got;
	size_t n, want;
	int fd, err = 0;

	fd = openat(dirfd, KCACHE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		err = -EINVAL;
		goto cleanup;
	}
	got = pread(fd, &h, sizeof(h), 0);
	if (got != (ssize_t)sizeof(h) || memcmp(h.magic, KCACHE_MAGIC, 8) ||
	    h.header_size != sizeof(h)) {
		err = -EINVAL;
		goto cleanup;
	}
	if (h.version != KCACHE_VERSION || memcmp(h.boot_id, key->boot_id, sizeof(h.boot_id)) ||
	    h.modules_hash != key->modules_hash) {
		err = -ESTALE;
		goto cleanup;
	}
	if (!h.nr_syms || h.nr_syms > SYM_MAX_SYMBOLS || !h.names_len ||
	    h.names_len > KCACHE_NAMES_MAX) {
		err = -EINVAL;
		goto cleanup;
	}
	n = (size_t)h.nr_syms;
	want = n * sizeof(*starts) + n * sizeof(*syms) + (size_t)h.names_len;
	if ((uint64_t)st.st_size != sizeof(h) + want) {
		err = -EINVAL;
		goto cleanup;
	}
	starts = malloc(n * sizeof(*starts));
	syms = malloc(n * sizeof(*syms));
	names = malloc((size_t)h.names_len);
	if (!starts || !syms || !names) {
		err = -ENOMEM;
		goto cleanup;
	}
	iov[0] = (struct iovec){starts, n * sizeof(*starts)};
	iov[1] = (struct iovec){syms, n * sizeof(*syms)};
	iov[2] = (struct iovec){names, (size_t)h.names_len};
	got = preadv(fd, iov, 3, sizeof(h));
	if (got != (ssize_t)want || kcache__validate(starts, syms, n, names, (size_t)h.names_len)) {
		err = -EINVAL;
		goto cleanup;
	}
	m->starts = starts;
	m->syms = syms;
	m->nr_syms = n;
	m->names = names;
	m->names_len = (size_t)h.names_len;
	*stext = h.stext;
	starts = NULL;
	syms = NULL;
	names = NULL;
cleanup:
	free(starts);
	free(syms);
	free(names);
	close(fd);
	return err;
}

int kallsyms_cache__write(int dirfd, const struct kallsyms_cache_key *key,
			  const struct sym_module *m, uint64_t stext)
{
	struct kcache_header h = {0};
	char tmp[64];
	struct iovec iov[4];
	size_t want;
	ssize_t got;
	int fd, err = 0;

	if (!m->nr_syms || sym_module__error(m) || m->nr_syms > SYM_MAX_SYMBOLS ||
	    m->names_len > KCACHE_NAMES_MAX)
		return -EINVAL;
	memcpy(h.magic, KCACHE_MAGIC, 8);
	h.version = KCACHE_VERSION;
	h.header_size = sizeof(h);
	memcpy(h.boot_id, key->boot_id, sizeof(h.boot_id));
	h.modules_hash = key->modules_hash;
	h.stext = stext;
	h.nr_syms = m->nr_syms;
	h.names_len = m->names_len;
	iov[0] = (struct iovec){&h, sizeof(h)};
	iov[1] = (struct iovec){m->starts, m->nr_syms * sizeof(*m->starts)};
	iov[2] = (struct iovec){m->syms, m->nr_syms * sizeof(*m->syms)};
	iov[3] = (struct iovec){m->names, m->names_len};
	want = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len + iov[3].iov_len;

	snprintf(tmp, sizeof(tmp), ".%s.%d.tmp", KCACHE_FILE, (int)getpid());
	unlinkat(dirfd, tmp, 0); /* one left by a crashed run of this pid */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	got = writev(fd, iov, 4);
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

int kallsyms__load_cached(struct sym_module *m, const char *path, const char *dir, uint64_t *stext,
			  struct symbolizer_kcache_stats *stats)
{
	struct kallsyms_cache_key key;
	int dirfd = -1, err;

	if (!dir || kallsyms_cache__key(&key, path))
		return kallsyms__load(m, path, stext);
	dirfd = kallsyms_cache__open_dir(dir);
	if (dirfd < 0) {
		stats->unusable++;
		return kallsyms__load(m, path, stext);
	}
	err = kallsyms_cache__read(dirfd, &key, m, stext);
	if (!err) {
		stats->hit++;
		close(dirfd);
		return 0;
	}
	if (err == -ENOMEM) {
		close(dirfd);
		return err;
	}
	if (err == -ENOENT || err == -ESTALE)
		stats->miss++;
	else
		stats->bad++;
	err = kallsyms__load(m, path, stext);
	if (!err && !sym_module__error(m) && kallsyms_cache__write(dirfd, &key, m, *stext))
		stats->unusable++;
	close(dirfd);
	return err;
}
