// SPDX-License-Identifier: MIT
/*
 * Finding a module's separate debug file.
 *
 * Each finder proposes candidate paths for a module; a candidate is used
 * only if it is a readable ELF whose build ID equals the module's, so a
 * finder may guess freely.  Finders run in table order and the first match
 * wins.  Today there is one: the build-ID tree under each debug root
 * (<root>/.build-id/xx/rest.debug, as Debian's -dbg and -dbgsym packages
 * install).  Places for later:
 *   - more roots (--debug-dir): add to debug_roots, or pass them in;
 *   - .gnu_debuglink: <dir>/<name>, <dir>/.debug/<name>,
 *     <root>/<dir>/<name>, with the CRC-32 check (GDB manual, "Separate
 *     Debug Files"); dwelf_elf_gnu_debuglink() reads the section;
 *   - debuginfod (deferred symbolization only; never while recording).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

static const char *const debug_roots[] = {
    "/usr/lib/debug",
};

/* Writes candidate number idx into buf; returns false when there are no
 * more candidates. */
typedef bool (*debug_finder_fn)(const struct debug_query *q, size_t idx, char *buf, size_t size);

static bool find_by_build_id(const struct debug_query *q, size_t idx, char *buf, size_t size)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1];
	int n;

	/* Shorter IDs are not unique enough to name a file (libdwfl: >= 3). */
	if (q->build_id_len < 3 || idx >= sizeof(debug_roots) / sizeof(debug_roots[0]))
		return false;
	sym_hex(q->build_id, q->build_id_len, hex);
	n = snprintf(buf, size, "%s/.build-id/%.2s/%s.debug", debug_roots[idx], hex, hex + 2);
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0'; /* cannot happen with our roots; skip */
	return true;
}

static const debug_finder_fn debug_finders[] = {
    find_by_build_id,
};

/* Opens path and keeps it if its build ID equals q's.  0 or -ENOENT. */
static int debug_file__try(const struct debug_query *q, const char *path, struct elf_file *out)
{
	uint8_t build_id[SYM_BUILD_ID_MAX];
	struct stat st;
	ssize_t len;
	int fd, err = -ENOENT;

	if (!path[0])
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto cleanup;
	if (elf_file__open_fd(out, fd)) {
		elf_file__release(out);
		goto cleanup;
	}
	len = elf_file__build_id(out, build_id);
	if (len <= 0 || (size_t)len != q->build_id_len || memcmp(build_id, q->build_id, len)) {
		elf_file__release(out);
		goto cleanup;
	}
	/* ELF_C_READ reads lazily: out keeps the fd until released. */
	out->owns_fd = true;
	return 0;
cleanup:
	close(fd);
	return err;
}

int debug_file__find(const struct debug_query *q, struct elf_file *out, char **found_path)
{
	char path[PATH_MAX];
	size_t f, idx;

	*found_path = NULL;
	if (!q->build_id_len)
		return -ENOENT;
	for (f = 0; f < sizeof(debug_finders) / sizeof(debug_finders[0]); f++) {
		for (idx = 0; debug_finders[f](q, idx, path, sizeof(path)); idx++) {
			if (debug_file__try(q, path, out))
				continue;
			*found_path = strdup(path);
			if (!*found_path) {
				elf_file__release(out);
				return -ENOMEM;
			}
			return 0;
		}
	}
	return -ENOENT;
}
