// SPDX-License-Identifier: MIT
/*
 * The symbolizer's user-space files (symbolizer.c holds the cache): a
 * mapping's file opened where the process sees it and proved to be the
 * mapped one (symbolizer__file, symbolizer__mapped_file), or a module
 * found by build ID at its path or as a separate debug file
 * (symbolizer__by_build_id).  Failures and refused files are cached too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <linux/magic.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "userspace/symbols/symbolizer_cache.h"
#include "userspace/symbols/symbols_internal.h"

/*
 * FNV-1a (64-bit) over the whole file, the identity of a module without a
 * build ID (capture_module.content_hash).  Reads with pread in 64 KiB
 * blocks; returns 0 if the file cannot be read to its end.
 */
static uint64_t file__content_hash(int fd, uint64_t size)
{
	static uint8_t buf[65536];
	uint64_t h = 0xcbf29ce484222325ull, off = 0;

	while (off < size) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		if (n <= 0)
			return 0;
		for (ssize_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ull;
		}
		off += (uint64_t)n;
	}
	return h ? h : 1;
}

/* Opens p if it is a regular file.  Returns the fd, or -errno (-EISDIR for
 * anything that is not a regular file: devices are never opened). */
static int open_regular(const char *p)
{
	struct stat st;
	int fd;

	if (stat(p, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EISDIR;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	return fd;
}

/* Tries open_path, then /proc/PID/root + path, then path (absolute paths
 * only: "[heap]" or "//anon" are never opened relative to our cwd).  Leaves
 * the last path tried in tried.  Returns an fd or -errno. */
static int open_module_file(uint32_t pid, const char *open_path, const char *path, char *tried,
			    size_t size)
{
	int fd = -ENOENT;

	snprintf(tried, size, "%s", path);
	if (open_path) {
		snprintf(tried, size, "%s", open_path);
		fd = open_regular(tried);
		if (fd >= 0)
			return fd;
	}
	if (path[0] != '/')
		return fd;
	if (pid) {
		int n = snprintf(tried, size, "/proc/%u/root%s", pid, path);

		if (n > 0 && (size_t)n < size) {
			fd = open_regular(tried);
			if (fd >= 0)
				return fd;
		}
	}
	snprintf(tried, size, "%s", path);
	return open_regular(tried);
}

/* The cached or new module for a file that could not be opened. */
static struct sym_module *symbolizer__failed(struct symbolizer *s, const char *path,
					     const char *tried, int err, const uint8_t *build_id,
					     size_t build_id_len)
{
	struct cache_key k = {
	    .kind = CACHE_FAILED,
	    .build_id = build_id,
	    .build_id_len = build_id_len,
	    .tried = tried,
	};
	struct sym_module *m = symbolizer__find(s, &k);

	if (m)
		return m;
	m = symbolizer__add_module(s, path);
	if (!m)
		return NULL;
	m->tried = strdup(tried);
	if (!m->tried) {
		errno = ENOMEM;
		return NULL; /* m is on the list; freed with s */
	}
	if (build_id_len)
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	if (err == -EISDIR)
		sym_module__fail(m, SYM_ERR_NOT_FILE, "%s", tried);
	else if (err == -ESTALE)
		sym_module__fail(m, SYM_ERR_OPEN,
				 "%s: not the mapped file (device or inode differs)", tried);
	else if (path[0] != '/' && !strcmp(tried, path))
		sym_module__fail(m, SYM_ERR_OPEN, "%s: not an absolute path", tried);
	else
		sym_module__fail(m, SYM_ERR_OPEN, "%s: %s", tried, strerror(-err));
	symbolizer__insert(s, &k, m);
	return m;
}

/* The cached or new module refusing a file whose build ID is not the
 * mapping's.  Its identity is the mapping's build ID. */
static struct sym_module *symbolizer__mismatch(struct symbolizer *s, const char *path,
					       const struct sym_file_key *key,
					       const uint8_t *build_id, size_t build_id_len,
					       const uint8_t *file_id, size_t file_id_len)
{
	char want[2 * SYM_BUILD_ID_MAX + 1], have[2 * SYM_BUILD_ID_MAX + 1];
	struct cache_key k = {
	    .kind = CACHE_MISMATCH,
	    .build_id = build_id,
	    .build_id_len = build_id_len,
	    .file = key,
	};
	struct sym_module *m = symbolizer__find(s, &k);

	if (m)
		return m;
	m = symbolizer__add_module(s, path);
	if (!m)
		return NULL;
	m->file_key = *key;
	m->has_file_key = true;
	m->size = key->size;
	memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	sym_hex(build_id, build_id_len, want);
	sym_hex(file_id, file_id_len, have);
	sym_module__fail(m, SYM_ERR_BUILD_ID_MISMATCH, "mapping %s file %s", want, have);
	symbolizer__insert(s, &k, m);
	return m;
}

/*
 * Keeps a dup of fd in m->pin_fd when m's display path, opened in our own
 * mount namespace, is not the file fd reads (deleted, replaced, memfd,
 * another mount namespace): later readers of the module's file
 * (sym_module__open_file, the unwinder's CFI) then read what was verified.
 * At most SYM_MAX_PINNED modules are pinned; failures just leave none.
 */
static void symbolizer__pin(struct symbolizer *s, struct sym_module *m, int fd)
{
	struct stat st;

	if (m->path[0] == '/' && !stat(m->path, &st) && (uint64_t)st.st_dev == m->file_key.dev &&
	    (uint64_t)st.st_ino == m->file_key.ino)
		return;
	if (s->nr_pinned >= SYM_MAX_PINNED)
		return;
	m->pin_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (m->pin_fd >= 0)
		s->nr_pinned++;
}

struct sym_module *symbolizer__file(struct symbolizer *s, uint32_t pid, const char *open_path,
				    const char *path, const uint8_t *build_id, size_t build_id_len)
{
	uint8_t file_id[SYM_BUILD_ID_MAX];
	char tried[PATH_MAX + 32];
	struct sym_file_key key = {0};
	struct cache_key k = {0};
	struct elf_file f = {.fd = -1};
	struct sym_module *m = NULL;
	ssize_t file_id_len = 0;
	struct stat st;
	int fd, err;

	if (!path)
		path = open_path ? open_path : "";
	if (!build_id || build_id_len > SYM_BUILD_ID_MAX)
		build_id_len = 0; /* no usable ID: identify by file */
	if (!open_path && !strcmp(path, "[vdso]"))
		return symbolizer__vdso(s);

	k.kind = CACHE_BUILD_ID;
	k.build_id = build_id;
	k.build_id_len = build_id_len;
	if (build_id_len && (m = symbolizer__find(s, &k)))
		return m;

	fd = open_module_file(pid, open_path, path, tried, sizeof(tried));
	if (fd < 0)
		return symbolizer__failed(s, path, tried, fd, build_id, build_id_len);
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return symbolizer__failed(s, path, tried, err, build_id, build_id_len);
	}
	key = sym_file_key__of(&st);

	k.file = &key;
	if (build_id_len) {
		k.kind = CACHE_MISMATCH;
		m = symbolizer__find(s, &k);
		if (m)
			goto cleanup;
	}
	k.kind = CACHE_FILE;
	m = symbolizer__find(s, &k);
	if (m) {
		if (build_id_len && m->build_id_len &&
		    !sym_build_id__equal(m->build_id, m->build_id_len, build_id, build_id_len))
			m = symbolizer__mismatch(s, path, &key, build_id, build_id_len, m->build_id,
						 m->build_id_len);
		goto cleanup;
	}

	err = elf_file__open_fd(&f, fd);
	if (!err) {
		file_id_len = elf_file__build_id(&f, file_id);
		if (file_id_len < 0)
			err = (int)file_id_len;
	}
	if (err != -ENOMEM && file_id_len > 0 && build_id_len &&
	    !sym_build_id__equal(file_id, (size_t)file_id_len, build_id, build_id_len)) {
		m = symbolizer__mismatch(s, path, &key, build_id, build_id_len, file_id,
					 (size_t)file_id_len);
		goto cleanup;
	}
	if (file_id_len > 0) {
		/* The same content under another inode (a copy, a container
		 * layer): one module. */
		k.kind = CACHE_BUILD_ID;
		k.build_id = file_id;
		k.build_id_len = (size_t)file_id_len;
		m = symbolizer__find(s, &k);
		if (m)
			goto cleanup;
	}

	m = symbolizer__add_module(s, path);
	if (!m)
		goto cleanup;
	m->file_key = key;
	m->has_file_key = true;
	m->size = key.size;
	if (file_id_len > 0) {
		memcpy(m->build_id, file_id, (size_t)file_id_len);
		m->build_id_len = (size_t)file_id_len;
	} else if (build_id_len) {
		memcpy(m->build_id, build_id, build_id_len);
		m->build_id_len = build_id_len;
	}
	if (!m->build_id_len)
		m->content_hash = file__content_hash(fd, key.size);
	if (err == -ENOMEM || (!err && elf_module__load(m, &f) == -ENOMEM)) {
		m = NULL; /* on the list; freed with s */
		goto cleanup;
	}
	if (err)
		sym_module__fail(m, f.why_kind, "%s", f.why);
	else
		symbolizer__pin(s, m, fd);

	k.kind = CACHE_FILE;
	k.file = &key;
	symbolizer__insert(s, &k, m);
	if (m->build_id_len && !m->error_kind) {
		k.kind = CACHE_BUILD_ID;
		k.build_id = m->build_id;
		k.build_id_len = m->build_id_len;
		symbolizer__insert(s, &k, m);
	}
cleanup:
	elf_file__release(&f);
	close(fd);
	if (!m)
		errno = ENOMEM;
	return m;
}

/*
 * overlayfs (containers, the vmtest guest's root) reports its own st_dev
 * for a file while the kernel's MMAP2 record carries the device of the
 * real file underneath (overlay maps the real file: fs/overlayfs/file.c);
 * the inode number is the real one in both.  There the inode must match
 * and the device is not compared.
 */
static bool on_overlayfs(int fd)
{
	struct statfs sfs;

	return !fstatfs(fd, &sfs) && (unsigned long)sfs.f_type == OVERLAYFS_SUPER_MAGIC;
}

/* True when fd is the file an MMAP2 record names (device maj:min, inode
 * ino; overlayfs reports its own device, so there the inode decides). */
static bool same_file(int fd, uint32_t maj, uint32_t min, uint64_t ino, struct stat *st)
{
	if (fstat(fd, st) || (uint64_t)st->st_ino != ino)
		return false;
	return (major(st->st_dev) == maj && minor(st->st_dev) == min) || on_overlayfs(fd);
}

/* The module already made from the file fd is open on (symbolizer__file's
 * CACHE_FILE key, from its fstat st), or NULL: most mappings are of files
 * another process mapped before. */
static struct sym_module *symbolizer__known_file(struct symbolizer *s, const struct stat *st)
{
	struct sym_file_key key = sym_file_key__of(st);
	struct cache_key k = {.kind = CACHE_FILE, .file = &key};

	return symbolizer__find(s, &k);
}

struct sym_module *symbolizer__mapped_file(struct symbolizer *s, uint32_t pid,
					   const char *open_path, const char *path, uint32_t maj,
					   uint32_t min, uint64_t ino)
{
	char tried[PATH_MAX + 32], fdpath[64];
	struct sym_module *m;
	struct stat st;
	int fd = -ENOENT;

	if (!path || path[0] != '/')
		return symbolizer__file(s, pid, open_path, path, NULL, 0);
	if (open_path) {
		snprintf(tried, sizeof(tried), "%s", open_path);
		fd = open_regular(tried);
		/* /proc/PID/map_files/START-END names what is mapped there NOW:
		 * by the time the record is processed the range may hold another
		 * file (dlclose, then a dlopen of another library at the same
		 * base), so it must be the record's file too. */
		if (fd >= 0 && !same_file(fd, maj, min, ino, &st)) {
			close(fd);
			fd = -ESTALE;
		}
	}
	if (fd < 0) {
		int n = pid ? snprintf(tried, sizeof(tried), "/proc/%u/root%s", pid, path) : -1;

		fd = n > 0 && (size_t)n < sizeof(tried) ? open_regular(tried) : -ENOENT;
		if (fd < 0) {
			snprintf(tried, sizeof(tried), "%s", path);
			fd = open_regular(tried);
		}
		if (fd < 0)
			return symbolizer__failed(s, path, tried, fd, NULL, 0);
		if (!same_file(fd, maj, min, ino, &st)) {
			close(fd);
			return symbolizer__failed(s, path, tried, -ESTALE, NULL, 0);
		}
	}
	m = symbolizer__known_file(s, &st);
	if (m) {
		close(fd);
		return m;
	}
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	m = symbolizer__file(s, 0, fdpath, path, NULL, 0);
	close(fd);
	return m;
}

/* Build ID of the ELF file at path into out; its length, or -errno. */
static ssize_t file_build_id(const char *path, uint8_t *out)
{
	struct elf_file f;
	ssize_t len;
	int fd = open_regular(path);

	if (fd < 0)
		return fd;
	if (elf_file__open_fd(&f, fd)) {
		elf_file__release(&f);
		close(fd);
		return -EINVAL;
	}
	len = elf_file__build_id(&f, out);
	elf_file__release(&f);
	close(fd);
	return len;
}

struct sym_module *symbolizer__by_build_id(struct symbolizer *s, const char *path,
					   const uint8_t *build_id, size_t build_id_len,
					   const char **why)
{
	char want[2 * SYM_BUILD_ID_MAX + 1], have[2 * SYM_BUILD_ID_MAX + 1];
	uint8_t file_id[SYM_BUILD_ID_MAX];
	struct cache_key k = {.kind = CACHE_BUILD_ID};
	struct debug_query q = {
	    .build_id = build_id,
	    .build_id_len = build_id_len,
	    .path = path,
	    .cfg = &s->cfg,
	};
	struct elf_file dbg = {.fd = -1};
	struct sym_module *m;
	ssize_t file_id_len = -ENOENT;
	char *found = NULL;
	int err;

	*why = NULL;
	if (!build_id_len || build_id_len > SYM_BUILD_ID_MAX) {
		*why = "no build ID: identity cannot be proved";
		errno = ENOENT;
		return NULL;
	}
	k.build_id = build_id;
	k.build_id_len = build_id_len;
	m = symbolizer__find(s, &k);
	if (m)
		return m;
	sym_hex(build_id, build_id_len, want);

	/* The file at its recorded path, if it is the same build. */
	if (path && path[0] == '/') {
		file_id_len = file_build_id(path, file_id);
		if (file_id_len > 0 &&
		    sym_build_id__equal(file_id, (size_t)file_id_len, build_id, build_id_len)) {
			m = symbolizer__file(s, 0, path, path, build_id, build_id_len);
			if (m && !m->error_kind)
				return m;
		}
	}
	/* A separate debug file proved by the same build ID. */
	err = debug_file__find(&q, &dbg, &found);
	if (err == -ENOMEM) {
		errno = ENOMEM;
		return NULL;
	}
	if (!err) {
		m = symbolizer__add_module(s, path ? path : found);
		if (!m) {
			elf_file__release(&dbg);
			free(found);
			errno = ENOMEM;
			return NULL;
		}
		memcpy(m->build_id, build_id, build_id_len);
		m->build_id_len = build_id_len;
		m->size = dbg.size;
		err = elf_module__load(m, &dbg);
		elf_file__release(&dbg);
		if (!m->debug_path)
			m->debug_path = found;
		else
			free(found);
		if (err) {
			errno = ENOMEM;
			return NULL;
		}
		if (!m->error_kind) {
			symbolizer__insert(s, &k, m);
			return m;
		}
		snprintf(s->why, sizeof(s->why), "%s", sym_module__error(m));
		*why = s->why;
		errno = ENOENT;
		return NULL;
	}
	if (file_id_len > 0) {
		sym_hex(file_id, (size_t)file_id_len, have);
		snprintf(s->why, sizeof(s->why),
			 "build ID mismatch: the capture's module has build ID %s, %s has %s; "
			 "no debug file with %s found",
			 want, path, have, want);
	} else {
		snprintf(s->why, sizeof(s->why),
			 "no file with build ID %s found (%s%s, %zu --debug-dir, /usr/lib/debug%s)",
			 want, path ? path : "", file_id_len == -ENOENT ? " missing" : "",
			 s->cfg.ndebug_dirs, s->cfg.debuginfod ? ", debuginfod" : "");
	}
	*why = s->why;
	errno = ENOENT;
	return NULL;
}
