// SPDX-License-Identifier: MIT
/*
 * Compressed debug sections decompressed into an unnamed file on disk
 * rather than into the heap (symbols_internal.h, debug_inflate__file).
 *
 * libelf decompresses a section into the heap, whole, and libdw keeps it
 * for as long as the module's DWARF is open: a Debian debug file of
 * python3.11 takes 21 MiB so, libc's 9.5 MiB, resident for the recording.
 * Here the file's non-allocated sections are written, decompressed (zlib,
 * ELFCOMPRESS_ZLIB, and zstd, ELFCOMPRESS_ZSTD), into an ELF image in an
 * O_TMPFILE file (no name: nothing to remove, nothing to follow) that the
 * caller maps read-only: its pages are page cache, resident in the
 * recorder only while a lookup reads them, and the image serves again
 * when the DWARF budget reopens the module, without decompressing twice.
 * The file lives on a disk file system (never tmpfs or ramfs, where it
 * would be memory all the same); without one, the caller falls back to
 * the heap.
 *
 * The layout is debug_layout.c's: the file's ELF header and section header
 * table (same indexes, names and links) minus the program headers;
 * allocated sections become SHT_NOBITS.  The file is untrusted: declared
 * sizes are checked against SYM_MAX_DEBUG_SECTION and the image against
 * SYM_MAX_DEBUG_IMAGE before anything is written, each section must
 * decompress to exactly its declared size, and streaming keeps the heap
 * used to DI_CHUNK bytes whatever the sizes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "userspace/symbols/symbols_internal.h"


/* Decompressed bytes written at a time. */
#define DI_CHUNK (256u << 10)

/* Where the image goes: the first of these on a disk file system. */
static const char *const di_dirs[] = {"/var/tmp", "/tmp"};

static int di_tmpfile(void)
{
	for (size_t i = 0; i < sizeof(di_dirs) / sizeof(di_dirs[0]); i++) {
		struct statfs fs;
		int fd;

		if (statfs(di_dirs[i], &fs) || fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC)
			continue;
		fd = open(di_dirs[i], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
	}
	return -ENOENT;
}

static int di_write(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Gives back the pages of the mapping [map, map + map_size) that hold
 * [p, p + len), once read (clean file pages: read again on need). */
static void di_drop(const void *map, size_t map_size, const uint8_t *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len, page = (uintptr_t)sysconf(_SC_PAGESIZE);

	if (!map || lo < (uintptr_t)map || hi > (uintptr_t)map + map_size || !len)
		return;
	lo &= ~(page - 1);
	madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

/* Where a section's input has been given back to: dropped every DI_CHUNK
 * bytes read, so a large section's compressed bytes are not all resident
 * at its end. */
struct di_in {
	const void *map;
	size_t map_size;
	const uint8_t *mark;
};

static void di_in__advance(struct di_in *in, const uint8_t *now, bool last)
{
	if (now - in->mark >= (ptrdiff_t)DI_CHUNK || (last && now > in->mark)) {
		di_drop(in->map, in->map_size, in->mark, (size_t)(now - in->mark));
		in->mark = now;
	}
}

/* A zlib stream's header and trailer (RFC 1950 section 2.2): CMF, FLG
 * before the deflate data, the Adler-32 of the output after it. */
#define DI_ZLIB_HEADER	2u
#define DI_ZLIB_TRAILER 4u

/* Whether p starts a zlib stream inflate could take: deflate (CM 8) with a
 * window of at most 32 KiB, no preset dictionary, a valid FCHECK. */
static bool di_zlib_header_ok(const uint8_t *p)
{
	return (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && !(p[1] & 0x20) &&
	       ((unsigned)p[0] << 8 | p[1]) % 31 == 0;
}

/*
 * Streams z's zlib data into fd at z->offset: exactly z->size bytes.  The
 * deflate data is inflated raw, past the zlib header, and its Adler-32 is
 * not computed (a tenth of the inflate's CPU): it would catch a damaged
 * file, not a hostile one, which can carry a matching checksum, and the
 * image is bounded all the same (the exact size, the deflate stream's own
 * end within the section's bytes); what libdw then reads of the image is
 * untrusted either way.
 */
static int di_inflate_zlib(const struct debug_sec *z, int fd, uint8_t *buf, struct di_in *in)
{
	const uint64_t framing = sizeof(Elf64_Chdr) + DI_ZLIB_HEADER + DI_ZLIB_TRAILER;
	z_stream s = {0};
	uint64_t done = 0;
	int rc, err = 0;

	if (z->raw_size < framing || z->raw_size - framing > UINT32_MAX ||
	    !di_zlib_header_ok(z->raw + sizeof(Elf64_Chdr)))
		return -EINVAL;
	if (inflateInit2(&s, -15) != Z_OK) /* raw deflate, windows up to 32 KiB */
		return -ENOMEM;
	s.next_in = (Bytef *)(uintptr_t)(z->raw + sizeof(Elf64_Chdr) + DI_ZLIB_HEADER);
	s.avail_in = (uInt)(z->raw_size - framing);
	do {
		s.next_out = buf;
		s.avail_out = DI_CHUNK;
		rc = inflate(&s, Z_NO_FLUSH);
		if (rc != Z_OK && rc != Z_STREAM_END) {
			err = rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
			break;
		}
		if (done + (DI_CHUNK - s.avail_out) > z->size) {
			err = -EINVAL;
			break;
		}
		err = di_write(fd, buf, DI_CHUNK - s.avail_out, z->offset + done);
		done += DI_CHUNK - s.avail_out;
		di_in__advance(in, s.next_in, false);
	} while (!err && rc != Z_STREAM_END && (s.avail_in || !s.avail_out));
	if (!err && (rc != Z_STREAM_END || done != z->size))
		err = -EINVAL;
	inflateEnd(&s);
	return err;
}

/* Streams z's zstd frames into fd at z->offset: exactly z->size bytes. */
static int di_inflate_zstd(const struct debug_sec *z, int fd, uint8_t *buf, struct di_in *di)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	ZSTD_inBuffer in = {z->raw + sizeof(Elf64_Chdr), z->raw_size - sizeof(Elf64_Chdr), 0};
	uint64_t done = 0;
	size_t rc = 1;
	int err = 0;

	if (!ds)
		return -ENOMEM;
	while (!err && (in.pos < in.size || rc != 0)) {
		ZSTD_outBuffer out = {buf, DI_CHUNK, 0};

		rc = ZSTD_decompressStream(ds, &out, &in);
		if (ZSTD_isError(rc) || done + out.pos > z->size ||
		    (!out.pos && in.pos == in.size && rc != 0)) {
			err = -EINVAL;
			break;
		}
		err = di_write(fd, buf, out.pos, z->offset + done);
		done += out.pos;
		di_in__advance(di, (const uint8_t *)in.src + in.pos, false);
	}
	if (!err && done != z->size)
		err = -EINVAL;
	ZSTD_freeDStream(ds);
	return err;
}

int debug_inflate__into(Elf *elf, const void *map, size_t map_size, int fd, size_t *out_size)
{
	struct debug_layout l;
	uint8_t *buf = NULL;
	Elf64_Ehdr eh;
	int err;

	*out_size = 0;
	err = debug_layout__plan(elf, 1u << ELFCOMPRESS_ZLIB | 1u << ELFCOMPRESS_ZSTD, &l);
	if (err)
		return err;
	buf = malloc(DI_CHUNK);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = ftruncate(fd, (off_t)l.size) ? -errno : 0;
	debug_layout__ehdr(&l, &eh);
	if (!err)
		err = di_write(fd, &eh, sizeof(eh), 0);
	for (size_t i = 0; !err && i < l.shnum; i++) {
		const struct debug_sec *z = &l.secs[i];
		Elf64_Shdr sh;

		struct di_in in = {map, map_size, z->raw};

		debug_layout__shdr(elf, &l, i, &sh);
		if (i > 0 && z->ch_type)
			err = z->ch_type == ELFCOMPRESS_ZLIB ? di_inflate_zlib(z, fd, buf, &in)
							     : di_inflate_zstd(z, fd, buf, &in);
		else if (i > 0 && z->raw)
			err = di_write(fd, z->raw, z->size, z->offset);
		if (i > 0 && z->raw)
			di_in__advance(&in, z->raw + z->raw_size, true);
		if (!err)
			err = di_write(fd, &sh, sizeof(sh), l.shoff + i * sizeof(Elf64_Shdr));
	}
	if (!err)
		*out_size = l.size;
cleanup:
	free(buf);
	debug_layout__release(&l);
	return err;
}

int debug_inflate__file(Elf *elf, const void *map, size_t map_size, int *out_fd, size_t *out_size)
{
	int fd = di_tmpfile(), err;

	*out_fd = -1;
	*out_size = 0;
	if (fd < 0)
		return fd;
	err = debug_inflate__into(elf, map, map_size, fd, out_size);
	if (err) {
		close(fd);
		return err;
	}
	*out_fd = fd;
	return 0;
}
