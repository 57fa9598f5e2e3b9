// SPDX-License-Identifier: MIT
/*
 * Finding a module's separate debug file.
 *
 * Each finder proposes candidate paths for a module; a candidate is used
 * only if it is a readable ELF whose build ID equals the module's (and, for
 * .gnu_debuglink candidates, whose CRC-32 equals the link's), so a finder
 * may guess freely.  Finders run in table order and the first match wins:
 *   1. the build-ID tree under each root: ROOT/.build-id/xx/rest.debug
 *      (Debian's -dbg and -dbgsym packages, `--debug-dir` trees);
 *   2. .gnu_debuglink (GDB manual, "Separate Debug Files"): DIR/NAME,
 *      DIR/.debug/NAME, ROOT/DIR/NAME for each root, and ROOT/NAME for the
 *      user's --debug-dir roots; DIR is the module's directory;
 *   3. debuginfod (libdebuginfod: DEBUGINFOD_URLS and its cache), only when
 *      the symbolizer enabled it (deferred symbolization, never recording);
 *      libdebuginfod is opened with dlopen then, not linked: it brings
 *      libcurl, GnuTLS and Kerberos, 4 MiB of RSS a recording never uses
 *      (docs/recorder-memory.md).
 * Roots are the --debug-dir directories in the order given, then
 * /usr/lib/debug.
 */
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "userspace/symbols/symbols_internal.h"

static const char system_root[] = "/usr/lib/debug";

/* Root number idx (user roots first), or NULL past the end. */
static const char *debug_root(const struct debug_query *q, size_t idx)
{
	size_t n = q->cfg ? q->cfg->ndebug_dirs : 0;

	if (idx < n)
		return q->cfg->debug_dirs[idx];
	return idx == n ? system_root : NULL;
}

/* Writes candidate number idx into buf (may be "" to skip one); returns
 * false when there are no more candidates. */
typedef bool (*debug_finder_fn)(const struct debug_query *q, size_t idx, char *buf, size_t size);

static bool find_by_build_id(const struct debug_query *q, size_t idx, char *buf, size_t size)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1];
	const char *root = debug_root(q, idx);
	int n;

	/* Shorter IDs are not unique enough to name a file (libdwfl: >= 3). */
	if (q->build_id_len < 3 || !root)
		return false;
	sym_hex(q->build_id, q->build_id_len, hex);
	n = snprintf(buf, size, "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
	return true;
}

static bool find_by_debuglink(const struct debug_query *q, size_t idx, char *buf, size_t size)
{
	char dir[PATH_MAX];
	const char *slash, *root;
	size_t nuser = q->cfg ? q->cfg->ndebug_dirs : 0;
	int n = 0;

	if (!q->debuglink || !q->debuglink[0] || strchr(q->debuglink, '/'))
		return false;
	slash = q->path ? strrchr(q->path, '/') : NULL;
	if (!slash || (size_t)(slash - q->path) >= sizeof(dir))
		dir[0] = '\0';
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - q->path), q->path);
	buf[0] = '\0';
	if (idx == 0) {
		if (dir[0] || slash == q->path)
			n = snprintf(buf, size, "%s/%s", dir, q->debuglink);
	} else if (idx == 1) {
		if (dir[0] || slash == q->path)
			n = snprintf(buf, size, "%s/.debug/%s", dir, q->debuglink);
	} else if (idx - 2 < nuser) {
		n = snprintf(buf, size, "%s/%s", debug_root(q, idx - 2), q->debuglink);
	} else if ((root = debug_root(q, idx - 2 - nuser))) {
		if (dir[0])
			n = snprintf(buf, size, "%s%s/%s", root, dir, q->debuglink);
	} else {
		return false;
	}
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
	return true;
}

/*
 * The vdso image in memory has only .dynsym: its static helpers (on x86-64
 * vread_pvclock, vread_hvclock, do_hres...) have no name there.  The kernel
 * build's unstripped image is installed (perf looks there too) as
 * /lib/modules/RELEASE/vdso/vdso64.so, or under a debug root; candidates are
 * ROOT/lib/modules/RELEASE/vdso/vdso64.so for each root, then the system
 * path.  Only for the module "[vdso]"; the build ID must match as always.
 */
static bool find_kernel_vdso(const struct debug_query *q, size_t idx, char *buf, size_t size)
{
	size_t nroots = (q->cfg ? q->cfg->ndebug_dirs : 0) + 1;
	struct utsname uts;
	int n;

	if (!q->path || strcmp(q->path, "[vdso]") || idx > nroots || uname(&uts))
		return false;
	n = snprintf(buf, size, "%s/lib/modules/%s/vdso/vdso64.so",
		     idx < nroots ? debug_root(q, idx) : "", uts.release);
	if (n < 0 || (size_t)n >= size)
		buf[0] = '\0';
	return true;
}

static const debug_finder_fn debug_finders[] = {
    find_by_build_id,
    find_by_debuglink,
    find_kernel_vdso,
};

/* zlib crc32 of the whole file (the .gnu_debuglink CRC, GDB manual). */
static bool file_crc32(int fd, uint32_t *out)
{
	static uint8_t buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	*out = (uint32_t)crc;
	return n == 0;
}

/* Checks fd (taken) as q's debug file: build ID (when the module has one)
 * and, for debuglink candidates, CRC.  0 with out open, or -ENOENT. */
static int debug_file__take(const struct debug_query *q, int fd, bool check_crc,
			    struct elf_file *out)
{
	uint8_t build_id[SYM_BUILD_ID_MAX];
	struct stat st;
	uint32_t crc;
	ssize_t len;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto fail;
	if (check_crc && (!file_crc32(fd, &crc) || crc != q->debuglink_crc))
		goto fail;
	if (elf_file__open_debug_fd(out, fd)) {
		elf_file__release(out);
		goto fail;
	}
	len = elf_file__build_id(out, build_id);
	if (q->build_id_len &&
	    (len <= 0 || (size_t)len != q->build_id_len || memcmp(build_id, q->build_id, len))) {
		elf_file__release(out);
		goto fail;
	}
	/* ELF_C_READ reads lazily: out keeps the fd until released. */
	out->owns_fd = true;
	return 0;
fail:
	close(fd);
	return -ENOENT;
}

static int debug_file__try(const struct debug_query *q, const char *path, bool check_crc,
			   struct elf_file *out)
{
	int fd;

	if (!path[0])
		return -ENOENT;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -ENOENT;
	return debug_file__take(q, fd, check_crc, out);
}

/* libdebuginfod's entry points, resolved once (all or none). */
static struct {
	__typeof__(debuginfod_begin) *begin;
	__typeof__(debuginfod_find_debuginfo) *find_debuginfo;
	__typeof__(debuginfod_end) *end;
} dfd;
static pthread_once_t dfd_once = PTHREAD_ONCE_INIT;

static void debuginfod__load(void)
{
	void *h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	dfd.find_debuginfo = (__typeof__(dfd.find_debuginfo))dlsym(h, "debuginfod_find_debuginfo");
	dfd.end = (__typeof__(dfd.end))dlsym(h, "debuginfod_end");
	if (dfd.find_debuginfo && dfd.end) /* begin last: the flag */
		dfd.begin = (__typeof__(dfd.begin))dlsym(h, "debuginfod_begin");
}

bool debug_file__debuginfod_usable(void)
{
	pthread_once(&dfd_once, debuginfod__load);
	return dfd.begin != NULL;
}

/* libdebuginfod as the last resort.  0, -ENOENT, -ENOMEM. */
static int debug_file__debuginfod(const struct debug_query *q, struct elf_file *out,
				  char **found_path)
{
	struct sym_config *cfg = (struct sym_config *)q->cfg;
	char *path = NULL;
	int fd;

	if (!cfg || !cfg->debuginfod || q->build_id_len < 3)
		return -ENOENT;
	if (!cfg->debuginfod_client && debug_file__debuginfod_usable())
		cfg->debuginfod_client = dfd.begin();
	if (!cfg->debuginfod_client)
		return -ENOENT;
	fd = dfd.find_debuginfo(cfg->debuginfod_client, q->build_id, (int)q->build_id_len, &path);
	if (fd < 0) {
		free(path);
		return -ENOENT;
	}
	if (debug_file__take(q, fd, false, out)) {
		free(path);
		return -ENOENT;
	}
	cfg->debuginfod_fetched++;
	*found_path = path ? path : strdup("(debuginfod)");
	if (!*found_path) {
		elf_file__release(out);
		return -ENOMEM;
	}
	return 0;
}

int debug_file__find(const struct debug_query *q, struct elf_file *out, char **found_path)
{
	char path[PATH_MAX];
	size_t f, idx;

	*found_path = NULL;
	if (!q->build_id_len && !q->debuglink)
		return -ENOENT;
	for (f = 0; f < sizeof(debug_finders) / sizeof(debug_finders[0]); f++) {
		for (idx = 0; debug_finders[f](q, idx, path, sizeof(path)); idx++) {
			if (debug_file__try(q, path, debug_finders[f] == find_by_debuglink, out))
				continue;
			*found_path = strdup(path);
			if (!*found_path) {
				elf_file__release(out);
				return -ENOMEM;
			}
			return 0;
		}
	}
	return debug_file__debuginfod(q, out, found_path);
}

void sym_config__release(struct sym_config *cfg)
{
	size_t i;

	for (i = 0; i < cfg->ndebug_dirs; i++)
		free(cfg->debug_dirs[i]);
	free(cfg->debug_dirs);
	if (cfg->debuginfod_client)
		dfd.end(cfg->debuginfod_client);
	memset(cfg, 0, sizeof(*cfg));
}
