// SPDX-License-Identifier: MIT
/*
 * Decompressed debug images kept across recordings (symbols_internal.h,
 * debug_cache__image).
 *
 * debug_inflate.c decompresses a debug file's compressed sections into an
 * image that libdw reads through a mapping: 30 ms of CPU for libc's and
 * ld.so's Debian debug files, a fifth of a short recording's fixed cost,
 * paid again by every recording.  Here the image is made once in the cache
 * directory and mapped from there by later recordings.  The file
 * "debug-BUILDID-DEV-INO.img" is
 *
 *   the image                   image_size bytes, exactly debug_inflate's
 *   struct dcache_trailer       magic, version, image_size, the key
 *
 * in host byte order (the trailer last, so the image starts at offset 0
 * and maps as debug_inflate's does).  The key is the module's build ID,
 * the debug file's device, inode, size and modification time (ns), and
 * DEBUG_LAYOUT_VERSION: a debug file replaced or rewritten in place, or a
 * layout that leaves out other sections, is a miss, and the image is made
 * again and replaces the file.  A cached file is untrusted input: it is
 * used only when it is the effective user's regular 0600 file reached
 * without a symbolic link (cache_dir.c), its size is image_size plus the
 * trailer, image_size is at most SYM_MAX_DEBUG_IMAGE and the trailer's
 * magic, version and key match; anything else is counted bad and the file
 * replaced.  The image itself is read by libelf and libdw as any debug
 * file is (bounds-checked, untrusted either way).
 *
 * The directory's images together take at most the limit the caller gives
 * (MS_DEBUG_CACHE_BYTES_MAX, stream/memory_policy.h): after each image
 * written, the least recently used (modification time, which a hit
 * renews) are unlinked until the rest fits.  An image larger than the
 * limit alone is made in the same unnamed file and never published.  A
 * recording mapping an image that another one evicts or replaces keeps
 * reading its own (the inode lives while mapped).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

#define DCACHE_MAGIC   "MSDBGIMG"
#define DCACHE_VERSION 1u
#define DCACHE_PREFIX  "debug-"
#define DCACHE_SUFFIX  ".img"
/* Images considered for eviction at most (a directory holding more is
 * trimmed by the first this many read). */
#define DCACHE_MAX_FILES 4096u

struct dcache_key {
	uint32_t layout_version; /* DEBUG_LAYOUT_VERSION */
	uint32_t build_id_len;
	uint8_t build_id[SYM_BUILD_ID_MAX]; /* zero-padded */
	uint64_t dev, ino, size;	    /* the debug file's */
	int64_t mtime_sec, mtime_nsec;
};
_Static_assert(sizeof(struct dcache_key) == 112, "no padding in the key");

struct dcache_trailer {
	char magic[8];
	uint32_t version;      /* DCACHE_VERSION */
	uint32_t trailer_size; /* sizeof(struct dcache_trailer) */
	uint64_t image_size;   /* bytes before the trailer */
	struct dcache_key key;
};
_Static_assert(sizeof(struct dcache_trailer) == 136, "no padding in the trailer");

int symbolizer__set_debug_cache(struct symbolizer *s, const char *dir, uint64_t max_bytes)
{
	struct debug_cache *c = &symbolizer__dwarf_lru(s)->dcache;

	if (dir && strlen(dir) >= sizeof(c->dir))
		return -ENAMETOOLONG;
	snprintf(c->dir, sizeof(c->dir), "%s", dir ? dir : "");
	c->max_bytes = max_bytes;
	return 0;
}

void symbolizer__debug_cache_stats(const struct symbolizer *s,
				   struct symbolizer_debug_cache_stats *out)
{
	*out = symbolizer__dwarf_lru((struct symbolizer *)s)->dcache.stats;
}

static int dcache_key__init(struct dcache_key *k, int src_fd, const uint8_t *build_id,
			    size_t build_id_len)
{
	struct stat st;

	if (fstat(src_fd, &st))
		return -errno;
	memset(k, 0, sizeof(*k));
	k->layout_version = DEBUG_LAYOUT_VERSION;
	k->build_id_len =
	    (uint32_t)(build_id_len < SYM_BUILD_ID_MAX ? build_id_len : SYM_BUILD_ID_MAX);
	memcpy(k->build_id, build_id, k->build_id_len);
	k->dev = (uint64_t)st.st_dev;
	k->ino = (uint64_t)st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_sec = (int64_t)st.st_mtim.tv_sec;
	k->mtime_nsec = (int64_t)st.st_mtim.tv_nsec;
	return 0;
}

/* "debug-BUILDID-DEV-INO.img" ("none" for no build ID). */
static void dcache_key__name(const struct dcache_key *k, char *out, size_t size)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1] = "none";

	for (uint32_t i = 0; i < k->build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", k->build_id[i]);
	snprintf(out, size, DCACHE_PREFIX "%s-%llx-%llx" DCACHE_SUFFIX, hex,
		 (unsigned long long)k->dev, (unsigned long long)k->ino);
}

/* The cached image name in dirfd when its key is k: *fd, *size.  0;
 * -ENOENT, -ESTALE (another key or version), -EINVAL (breaks a rule) or
 * another -errno. */
static int dcache__read(int dirfd, const char *name, const struct dcache_key *k, int *out_fd,
			size_t *out_size)
{
	struct dcache_trailer t;
	struct stat st;
	int fd, err = 0;

	fd = cache_dir__open_file(dirfd, name, O_RDONLY, &st);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size < sizeof(t) ||
	    pread(fd, &t, sizeof(t), st.st_size - (off_t)sizeof(t)) != (ssize_t)sizeof(t) ||
	    memcmp(t.magic, DCACHE_MAGIC, sizeof(t.magic)) || t.trailer_size != sizeof(t)) {
		err = -EINVAL;
		goto cleanup;
	}
	if (t.version != DCACHE_VERSION || memcmp(&t.key, k, sizeof(*k))) {
		err = -ESTALE;
		goto cleanup;
	}
	if (t.image_size < sizeof(Elf64_Ehdr) || t.image_size > SYM_MAX_DEBUG_IMAGE ||
	    t.image_size + sizeof(t) != (uint64_t)st.st_size) {
		err = -EINVAL;
		goto cleanup;
	}
	futimens(fd, NULL); /* recently used: last to be evicted */
	*out_fd = fd;
	*out_size = (size_t)t.image_size;
	fd = -1;
cleanup:
	if (fd >= 0)
		close(fd);
	return err;
}

/* Makes the image into fd (an unnamed file of dirfd) and publishes it as
 * name when it fits the limit.  0 (*size) or debug_inflate's errors. */
static int dcache__make(struct debug_cache *c, int dirfd, int fd, const char *name,
			const struct dcache_key *k, Elf *elf, const void *map, size_t map_size,
			size_t *out_size)
{
	struct dcache_trailer t = {.version = DCACHE_VERSION, .trailer_size = sizeof(t)};
	int err = debug_inflate__into(elf, map, map_size, fd, out_size);

	if (err)
		return err;
	if (*out_size + sizeof(t) > c->max_bytes)
		return 0; /* used unnamed, never cached */
	memcpy(t.magic, DCACHE_MAGIC, sizeof(t.magic));
	t.image_size = *out_size;
	t.key = *k;
	if (pwrite(fd, &t, sizeof(t), (off_t)*out_size) != (ssize_t)sizeof(t) ||
	    cache_dir__publish(dirfd, fd, name)) {
		c->stats.unusable++;
		return 0;
	}
	debug_cache__evict(c, dirfd, name, c->max_bytes);
	return 0;
}

int debug_cache__image(struct debug_cache *c, int src_fd, const uint8_t *build_id,
		       size_t build_id_len, Elf *elf, const void *map, size_t map_size, int *fd,
		       size_t *size)
{
	struct dcache_key k;
	char name[NAME_MAX + 1];
	int dirfd = -1, tfd = -1, err;

	*fd = -1;
	*size = 0;
	if (!c->dir[0] || dcache_key__init(&k, src_fd, build_id, build_id_len))
		return debug_inflate__file(elf, map, map_size, fd, size);
	dirfd = cache_dir__open(c->dir);
	if (dirfd < 0) {
		c->stats.unusable++;
		return debug_inflate__file(elf, map, map_size, fd, size);
	}
	dcache_key__name(&k, name, sizeof(name));
	err = dcache__read(dirfd, name, &k, fd, size);
	if (!err) {
		c->stats.hit++;
		goto cleanup;
	}
	if (err == -ENOENT || err == -ESTALE)
		c->stats.miss++;
	else
		c->stats.bad++;
	tfd = cache_dir__tmpfile(dirfd);
	if (tfd < 0) { /* a file system without O_TMPFILE */
		c->stats.unusable++;
		err = debug_inflate__file(elf, map, map_size, fd, size);
		goto cleanup;
	}
	err = dcache__make(c, dirfd, tfd, name, &k, elf, map, map_size, size);
	if (!err) {
		*fd = tfd;
		tfd = -1;
	}
cleanup:
	if (tfd >= 0)
		close(tfd);
	close(dirfd);
	return err;
}

struct dcache_file {
	char name[NAME_MAX + 1];
	struct timespec mtime;
	uint64_t bytes;
};

static int dcache_file_cmp(const void *pa, const void *pb)
{
	const struct dcache_file *a = pa, *b = pb;

	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec < b->mtime.tv_nsec ? -1 : 1;
	return strcmp(a->name, b->name);
}

static bool dcache__is_image(const char *name)
{
	size_t n = strlen(name), p = strlen(DCACHE_PREFIX), s = strlen(DCACHE_SUFFIX);

	return n > p + s && !strncmp(name, DCACHE_PREFIX, p) &&
	       !strcmp(name + n - s, DCACHE_SUFFIX);
}

int debug_cache__evict(struct debug_cache *c, int dirfd, const char *keep, uint64_t max_bytes)
{
	struct dcache_file *files = NULL;
	size_t n = 0;
	uint64_t total = 0;
	struct dirent *e;
	DIR *dir = NULL;
	int dfd = dup(dirfd), err = 0;

	if (dfd < 0)
		return -errno;
	dir = fdopendir(dfd);
	if (!dir) {
		err = -errno;
		close(dfd);
		return err;
	}
	rewinddir(dir);
	files = calloc(DCACHE_MAX_FILES, sizeof(*files));
	if (!files) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (n < DCACHE_MAX_FILES && (e = readdir(dir))) {
		struct stat st;

		if (!dcache__is_image(e->d_name) || strlen(e->d_name) > NAME_MAX ||
		    fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		snprintf(files[n].name, sizeof(files[n].name), "%s", e->d_name);
		files[n].mtime = st.st_mtim;
		files[n].bytes = (uint64_t)st.st_size;
		total += files[n].bytes;
		n++;
	}
	qsort(files, n, sizeof(*files), dcache_file_cmp);
	for (size_t i = 0; i < n && total > max_bytes; i++) {
		if (keep && !strcmp(files[i].name, keep))
			continue;
		if (unlinkat(dirfd, files[i].name, 0))
			continue;
		total -= files[i].bytes;
		c->stats.evicted++;
	}
cleanup:
	free(files);
	closedir(dir);
	return err;
}
