// SPDX-License-Identifier: MIT
/*
 * Opening a capture: frame, checksum, decompress and validate everything
 * before the caller sees a struct capture.
 *
 * The order is: file header; every chunk header of the segment, its bounds
 * and crc, and the seal (nothing is allocated before the framing is
 * known good, and each raw size is bounded by its stored size); then one
 * allocation for all tables and their decompression; then the rows
 * (capture__validate).  Any failure is -EBADMSG (or -ENOTSUP for a newer
 * major version or a second segment) with a message naming the file, the
 * chunk or table and the row.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "capture/capture.h"
#include "capture/duty.h"
#include "capture/format.h"
#include "capture/limits.h"
#include "capture/message.h"

const struct capture_table_info capture_table_info[CAPTURE_TABLE_COUNT] = {
#define CAPTURE_TABLE_INFO(id, a, b, c, d, tname, size)                                            \
	[CAPTURE_TABLE_##id] = {.tag = CAPTURE_TAG(a, b, c, d), .row_size = size, .name = tname},
    CAPTURE_TABLES(CAPTURE_TABLE_INFO)
#undef CAPTURE_TABLE_INFO
};

int capture_table__by_tag(uint32_t tag)
{
	int t;

	for (t = 0; t < CAPTURE_TABLE_COUNT; t++)
		if (capture_table_info[t].tag == tag)
			return t;
	return -1;
}

uint32_t capture__crc32(uint32_t crc, const void *p, size_t n)
{
	const Bytef *s = p;
	uLong c = crc;

	while (n) {
		uInt piece = n > (1u << 30) ? (1u << 30) : (uInt)n;

		c = crc32(c, s, piece);
		s += piece;
		n -= piece;
	}
	return (uint32_t)c;
}

/* ---- framing ------------------------------------------------------------ */

struct reader {
	const uint8_t *buf;
	size_t len;
	const char *name;
	char *err;
	size_t errlen;
	/* where each table's chunk is: header copy and offset of its stored bytes */
	struct capture_chunk_header h[CAPTURE_TABLE_COUNT];
	size_t at[CAPTURE_TABLE_COUNT];
	bool seen[CAPTURE_TABLE_COUNT];
};

#define READ_FAIL(r, ret, fmt, ...)                                                                \
	capture_msg__fail((r)->err, (r)->errlen, (r)->name, ret, fmt, ##__VA_ARGS__)

static int reader__file_header(struct reader *r)
{
	struct capture_file_header fh;
	uint32_t crc;

	if (!r->len)
		return READ_FAIL(r, -EBADMSG, "empty file (0 bytes): not a microscope capture");
	if (r->len < CAPTURE_MAGIC_LEN || memcmp(r->buf, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN))
		return READ_FAIL(r, -EBADMSG, "not a microscope capture (bad magic)");
	if (r->len < sizeof(fh))
		return READ_FAIL(r, -EBADMSG, "truncated file header (%zu bytes of %zu)", r->len,
				 sizeof(fh));
	memcpy(&fh, r->buf, sizeof(fh));
	/* magic and major version keep their place in every version */
	if (fh.version_major > CAPTURE_FORMAT_VERSION)
		return READ_FAIL(r, -ENOTSUP,
				 "format version %u.%u is newer than this reader (%u.%u)",
				 fh.version_major, fh.version_minor, CAPTURE_FORMAT_VERSION,
				 CAPTURE_FORMAT_VERSION_MINOR);
	if (fh.version_major < 1)
		return READ_FAIL(r, -EBADMSG, "bad format version %u.%u", fh.version_major,
				 fh.version_minor);
	crc = capture__crc32(0, &fh, offsetof(struct capture_file_header, header_crc));
	if (crc != fh.header_crc)
		return READ_FAIL(r, -EBADMSG, "file header crc 0x%08x, computed 0x%08x",
				 fh.header_crc, crc);
	if (fh.flags || fh.reserved)
		return READ_FAIL(r, -EBADMSG, "unknown file header flags 0x%x / reserved 0x%x",
				 fh.flags, fh.reserved);
	return 0;
}

/* Check the sizes a known table's chunk header claims, before any allocation. */
static int reader__table_header(struct reader *r, uint32_t k, size_t pos, int t,
				const struct capture_chunk_header *h)
{
	const struct capture_table_info *ti = &capture_table_info[t];
	uint64_t need, max;

	if (r->seen[t])
		return READ_FAIL(r, -EBADMSG, "chunk %u at offset %zu: table '%s' appears twice", k,
				 pos, ti->name);
	if (h->row_size != ti->row_size)
		return READ_FAIL(r, -EBADMSG,
				 "table '%s' (chunk %u at offset %zu): row size %u, expected %u",
				 ti->name, k, pos, h->row_size, ti->row_size);
	/* ids are u32 and CAPTURE_NONE is no id; strings need one more offset */
	max = t == CAPTURE_TABLE_STRINGS ? CAPTURE_NONE - 1 : CAPTURE_NONE;
	if (h->row_count > max || (t == CAPTURE_TABLE_STRINGS && h->row_count < 1))
		return READ_FAIL(r, -EBADMSG, "table '%s' (chunk %u at offset %zu): %llu rows",
				 ti->name, k, pos, (unsigned long long)h->row_count);
	if (t == CAPTURE_TABLE_STRINGS) {
		need = (h->row_count + 1) * sizeof(uint32_t);
		if (h->raw_size < need || h->raw_size - need > UINT32_MAX)
			return READ_FAIL(r, -EBADMSG,
					 "table 'strings' (chunk %u at offset %zu): raw size %llu "
					 "does not fit %llu offsets and at most 4 GiB of bytes",
					 k, pos, (unsigned long long)h->raw_size,
					 (unsigned long long)h->row_count + 1);
	} else {
		need = h->row_count * h->row_size; /* < 2^32 * 2^32: no overflow */
		if (h->raw_size != need)
			return READ_FAIL(
			    r, -EBADMSG,
			    "table '%s' (chunk %u at offset %zu): raw size %llu is not "
			    "%llu rows of %u bytes",
			    ti->name, k, pos, (unsigned long long)h->raw_size,
			    (unsigned long long)h->row_count, h->row_size);
	}
	switch (h->compression) {
	case CAPTURE_COMPRESSION_NONE:
		if (h->stored_size != h->raw_size)
			return READ_FAIL(r, -EBADMSG,
					 "table '%s' (chunk %u at offset %zu): uncompressed but "
					 "stores %llu bytes for raw size %llu",
					 ti->name, k, pos, (unsigned long long)h->stored_size,
					 (unsigned long long)h->raw_size);
		break;
	case CAPTURE_COMPRESSION_ZSTD:
		if (__builtin_mul_overflow(h->stored_size, CAPTURE_ZSTD_MAX_RATIO, &max))
			max = UINT64_MAX;
		if (h->raw_size > max)
			return READ_FAIL(
			    r, -EBADMSG,
			    "table '%s' (chunk %u at offset %zu): raw size %llu cannot "
			    "come from %llu zstd bytes",
			    ti->name, k, pos, (unsigned long long)h->raw_size,
			    (unsigned long long)h->stored_size);
		/* A valid frame may still be a bomb: the policy of capture/limits.h.
		 * sample_cgroups parallels samples (a constant column when every
		 * sample is in one cgroup: 1.2 MB from 58 bytes is real) and is
		 * bounded by the samples table's rows instead, checked below. */
		if (t != CAPTURE_TABLE_SAMPLE_CGROUPS &&
		    h->raw_size > capture_limits__max_inflated(h->stored_size))
			return READ_FAIL(
			    r, -EFBIG,
			    "table '%s' (chunk %u at offset %zu): raw size %llu from %llu zstd "
			    "bytes exceeds the inflation limit (%u x stored + %llu, at most "
			    "%llu bytes per table)",
			    ti->name, k, pos, (unsigned long long)h->raw_size,
			    (unsigned long long)h->stored_size, CAPTURE_LIMIT_INFLATE_RATIO,
			    CAPTURE_LIMIT_INFLATE_SLACK, CAPTURE_LIMIT_TABLE_BYTES);
		break;
	default:
		return READ_FAIL(r, -EBADMSG,
				 "table '%s' (chunk %u at offset %zu): unknown compression %u",
				 ti->name, k, pos, h->compression);
	}
	r->seen[t] = true;
	r->h[t] = *h;
	r->at[t] = pos + sizeof(*h);
	return 0;
}

/* An uncompressed fixed-payload chunk (SEGM, SEAL): exact header fields. */
static int reader__fixed_header(struct reader *r, uint32_t k, size_t pos, const char *what,
				const struct capture_chunk_header *h, uint32_t size)
{
	if (h->flags || h->compression != CAPTURE_COMPRESSION_NONE || h->row_size != size ||
	    h->row_count != 1 || h->raw_size != size || h->stored_size != size)
		return READ_FAIL(r, -EBADMSG,
				 "%s chunk %u at offset %zu: bad header (flags 0x%x, compression "
				 "%u, row size %u, rows %llu, raw %llu, stored %llu)",
				 what, k, pos, h->flags, h->compression, h->row_size,
				 (unsigned long long)h->row_count, (unsigned long long)h->raw_size,
				 (unsigned long long)h->stored_size);
	return 0;
}

/* Frame the segment at *pos: every chunk header, bound and crc, then the seal. */
static int reader__segment(struct reader *r, size_t *pos)
{
	size_t start = *pos, p = start;
	uint32_t k, headers_crc = 0;
	char tagbuf[16];
	int t, err;

	for (k = 0;; k++) {
		struct capture_chunk_header h;
		const uint8_t *payload;
		uint32_t crc;

		if (r->len - p < sizeof(h)) {
			if (r->len == p)
				return READ_FAIL(
				    r, -EBADMSG,
				    "truncated: segment ends after %u chunks at offset "
				    "%zu without a seal",
				    k, p);
			return READ_FAIL(
			    r, -EBADMSG,
			    "truncated: chunk %u header at offset %zu needs %zu bytes, "
			    "%zu left",
			    k, p, sizeof(h), r->len - p);
		}
		memcpy(&h, r->buf + p, sizeof(h));
		t = capture_table__by_tag(h.tag);
		if (h.stored_size > r->len - p - sizeof(h))
			return READ_FAIL(
			    r, -EBADMSG,
			    "truncated: chunk %u %s at offset %zu stores %llu bytes, "
			    "%zu left",
			    k,
			    t >= 0 ? capture_table_info[t].name : capture_msg__tag(h.tag, tagbuf),
			    p, (unsigned long long)h.stored_size, r->len - p - sizeof(h));
		payload = r->buf + p + sizeof(h);
		if (h.reserved || (h.flags & ~CAPTURE_CHUNK_F_KNOWN))
			return READ_FAIL(
			    r, -EBADMSG,
			    "chunk %u at offset %zu: unknown flags 0x%x / reserved 0x%x", k, p,
			    h.flags, h.reserved);
		if (k == 0 && h.tag != CAPTURE_TAG_SEGMENT)
			return READ_FAIL(r, -EBADMSG,
					 "chunk 0 at offset %zu: %s where a segment header belongs",
					 p, capture_msg__tag(h.tag, tagbuf));

		err = 0;
		/* Header fields first, then the crc: a chunk claiming gigabytes is
		 * refused before its bytes are read. */
		if (h.tag == CAPTURE_TAG_SEAL || h.tag == CAPTURE_TAG_SEGMENT)
			err = reader__fixed_header(r, k, p,
						   h.tag == CAPTURE_TAG_SEAL ? "seal" : "segment",
						   &h, sizeof(struct capture_seal_payload));
		else if (t >= 0)
			err = reader__table_header(r, k, p, t, &h);
		else if (!(h.flags & CAPTURE_CHUNK_F_OPTIONAL))
			err = READ_FAIL(r, -EBADMSG,
					"chunk %u at offset %zu: unknown required chunk %s", k, p,
					capture_msg__tag(h.tag, tagbuf));
		if (err)
			return err;
		crc = capture__crc32(0, payload, h.stored_size);
		if (crc != h.crc)
			return READ_FAIL(
			    r, -EBADMSG, "chunk %u %s at offset %zu: crc 0x%08x, computed 0x%08x",
			    k,
			    t >= 0 ? capture_table_info[t].name : capture_msg__tag(h.tag, tagbuf),
			    p, h.crc, crc);

		if (h.tag == CAPTURE_TAG_SEAL) {
			struct capture_seal_payload seal;

			memcpy(&seal, payload, sizeof(seal));
			if (seal.chunk_count != k || seal.headers_crc != headers_crc ||
			    seal.segment_size != p + sizeof(h) + sizeof(seal) - start)
				return READ_FAIL(
				    r, -EBADMSG,
				    "seal at offset %zu: %u chunks, headers crc 0x%08x, "
				    "%llu bytes; the segment has %u, 0x%08x, %zu",
				    p, seal.chunk_count, seal.headers_crc,
				    (unsigned long long)seal.segment_size, k, headers_crc,
				    p + sizeof(h) + sizeof(seal) - start);
			*pos = p + sizeof(h) + sizeof(seal);
			return 0;
		}
		if (h.tag == CAPTURE_TAG_SEGMENT) {
			struct capture_segment_payload seg;

			if (k != 0)
				return READ_FAIL(r, -EBADMSG,
						 "chunk %u at offset %zu: segment header inside a "
						 "segment (missing seal)",
						 k, p);
			memcpy(&seg, payload, sizeof(seg));
			if (seg.reserved)
				return READ_FAIL(r, -EBADMSG,
						 "segment header at offset %zu: reserved 0x%llx", p,
						 (unsigned long long)seg.reserved);
		}
		/* an unknown optional chunk is framed and checksummed, then skipped */
		headers_crc = capture__crc32(headers_crc, r->buf + p, sizeof(h));
		p += sizeof(h) + h.stored_size;
	}
}

/* Decompress (or copy) table t's chunk into dst of exactly raw_size bytes. */
static int reader__inflate(struct reader *r, ZSTD_DCtx *dctx, int t, void *dst)
{
	const struct capture_chunk_header *h = &r->h[t];
	const void *src = r->buf + r->at[t];
	const char *tname = capture_table_info[t].name;
	unsigned long long content;
	size_t n;

	if (h->compression == CAPTURE_COMPRESSION_NONE) {
		if (h->raw_size)
			memcpy(dst, src, h->raw_size);
		return 0;
	}
	n = ZSTD_findFrameCompressedSize(src, h->stored_size);
	if (ZSTD_isError(n) || n != h->stored_size)
		return READ_FAIL(r, -EBADMSG,
				 "table '%s': stored bytes are not one zstd frame (%s)", tname,
				 ZSTD_isError(n) ? ZSTD_getErrorName(n) : "trailing bytes");
	content = ZSTD_getFrameContentSize(src, h->stored_size);
	if (content != h->raw_size)
		return READ_FAIL(r, -EBADMSG,
				 "table '%s': zstd frame holds %lld bytes, raw size is %llu", tname,
				 content >= ZSTD_CONTENTSIZE_ERROR ? -1LL : (long long)content,
				 (unsigned long long)h->raw_size);
	n = ZSTD_decompressDCtx(dctx, dst, h->raw_size, src, h->stored_size);
	if (ZSTD_isError(n) || n != h->raw_size)
		return READ_FAIL(r, -EBADMSG, "table '%s': zstd: %s", tname,
				 ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short output");
	return 0;
}

static void capture__bind(struct capture *c, int t, const void *rows, uint32_t n)
{
	switch (t) {
	case CAPTURE_TABLE_STRINGS:
		c->nstrings = n;
		c->string_offsets = rows;
		c->string_data = (const char *)rows + ((size_t)n + 1) * sizeof(uint32_t);
		break;
	case CAPTURE_TABLE_MODULES:
		c->modules = rows, c->nmodules = n;
		break;
	case CAPTURE_TABLE_PROCESSES:
		c->processes = rows, c->nprocesses = n;
		break;
	case CAPTURE_TABLE_THREADS:
		c->threads = rows, c->nthreads = n;
		break;
	case CAPTURE_TABLE_MAPPINGS:
		c->mappings = rows, c->nmappings = n;
		break;
	case CAPTURE_TABLE_FRAMES:
		c->frames = rows, c->nframes = n;
		break;
	case CAPTURE_TABLE_STACKS:
		c->stacks = rows, c->nstacks = n;
		break;
	case CAPTURE_TABLE_EVENTS:
		c->events = rows, c->nevents = n;
		break;
	case CAPTURE_TABLE_SAMPLES:
		c->samples = rows, c->nsamples = n;
		break;
	case CAPTURE_TABLE_COUNTERS:
		c->counters = rows, c->ncounters = n;
		break;
	case CAPTURE_TABLE_META:
		c->meta = rows, c->nmeta = n;
		break;
	case CAPTURE_TABLE_INTERVALS:
		c->intervals = rows, c->nintervals = n;
		break;
	case CAPTURE_TABLE_CGROUPS:
		c->cgroups = rows, c->ncgroups = n;
		break;
	case CAPTURE_TABLE_SAMPLE_CGROUPS:
		c->sample_cgroups = rows, c->nsample_cgroups = n;
		break;
	case CAPTURE_TABLE_PROBE_SITES:
		c->probe_sites = rows, c->nprobe_sites = n;
		break;
	case CAPTURE_TABLE_PROBE_RECORDS:
		c->probe_records = rows, c->nprobe_records = n;
		break;
	}
}

/* Parse buf (borrowed for the call only) into a new capture. */
static int capture__parse(const void *buf, size_t len, const char *name, struct capture **out,
			  char *err, size_t errlen)
{
	struct reader *r;
	struct capture *c = NULL;
	ZSTD_DCtx *dctx = NULL;
	size_t pos, total = 0, at[CAPTURE_TABLE_COUNT];
	uint64_t max_memory;
	uint32_t data_len;
	int e, t;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!name)
		name = "capture";
	r = calloc(1, sizeof(*r));
	if (!r)
		return capture_msg__fail(err, errlen, name, -ENOMEM, "out of memory");
	*r = (struct reader){.buf = buf, .len = len, .name = name, .err = err, .errlen = errlen};

	e = reader__file_header(r);
	if (e)
		goto cleanup;
	pos = sizeof(struct capture_file_header);
	e = reader__segment(r, &pos);
	if (e)
		goto cleanup;
	if (pos != len) {
		uint32_t tag = 0;

		if (len - pos >= sizeof(tag))
			memcpy(&tag, r->buf + pos, sizeof(tag));
		if (tag == CAPTURE_TAG_SEGMENT)
			e = READ_FAIL(
			    r, -ENOTSUP,
			    "second segment at offset %zu: multi-segment captures are not "
			    "supported yet",
			    pos);
		else
			e = READ_FAIL(r, -EBADMSG,
				      "%zu bytes of trailing garbage after the seal "
				      "at offset %zu",
				      len - pos, pos);
		goto cleanup;
	}
	for (t = 0; t < CAPTURE_TABLE_COUNT; t++) {
		if (!r->seen[t] && t >= CAPTURE_TABLE_REQUIRED_COUNT) {
			at[t] = total; /* absent later table: 0 rows */
			continue;
		}
		if (!r->seen[t]) {
			e = READ_FAIL(r, -EBADMSG, "missing table '%s'",
				      capture_table_info[t].name);
			goto cleanup;
		}
		/* each raw size is bounded by its stored size; the sum may still overflow */
		at[t] = total;
		if (__builtin_add_overflow(total, (r->h[t].raw_size + 7) & ~(uint64_t)7, &total)) {
			e = READ_FAIL(r, -EBADMSG, "tables too large for this machine");
			goto cleanup;
		}
	}

	if (r->seen[CAPTURE_TABLE_SAMPLE_CGROUPS] && r->h[CAPTURE_TABLE_SAMPLE_CGROUPS].row_count &&
	    r->h[CAPTURE_TABLE_SAMPLE_CGROUPS].row_count != r->h[CAPTURE_TABLE_SAMPLES].row_count) {
		e = READ_FAIL(r, -EBADMSG, "table 'sample_cgroups': %llu rows for %llu samples",
			      (unsigned long long)r->h[CAPTURE_TABLE_SAMPLE_CGROUPS].row_count,
			      (unsigned long long)r->h[CAPTURE_TABLE_SAMPLES].row_count);
		goto cleanup;
	}

	/* the inflated tables and the input together stay inside the budget */
	max_memory = capture_limits__memory_for(len, CAPTURE_LIMIT_INPUT_MEMORY_K);
	if (total > max_memory || len > max_memory - total) {
		e = READ_FAIL(r, -EFBIG,
			      "%zu bytes of tables (inflated) and %zu of input exceed the memory "
			      "limit of %llu bytes (%s)",
			      total, len, (unsigned long long)max_memory,
			      capture_limits__memory_name(len, CAPTURE_LIMIT_INPUT_MEMORY_K));
		goto cleanup;
	}
	e = -ENOMEM;
	c = calloc(1, sizeof(*c));
	dctx = ZSTD_createDCtx();
	if (!c || !dctx || !(c->storage = malloc(total ? total : 1))) {
		READ_FAIL(r, e, "out of memory for %zu bytes of tables", total);
		goto cleanup;
	}
	c->version = CAPTURE_FORMAT_VERSION;
	for (t = 0; t < CAPTURE_TABLE_COUNT; t++) {
		void *dst = (char *)c->storage + at[t];

		e = reader__inflate(r, dctx, t, dst);
		if (e)
			goto cleanup;
		capture__bind(c, t, dst, (uint32_t)r->h[t].row_count);
	}
	data_len = (uint32_t)(r->h[CAPTURE_TABLE_STRINGS].raw_size -
			      ((uint64_t)c->nstrings + 1) * sizeof(uint32_t));
	if (c->string_offsets[c->nstrings] != data_len) {
		e = READ_FAIL(r, -EBADMSG,
			      "table 'strings': last offset %u is not the %u stored string bytes",
			      c->string_offsets[c->nstrings], data_len);
		goto cleanup;
	}
	e = capture__validate(c, name, err, errlen);
	if (e)
		goto cleanup;
	*out = c;
	c = NULL;

cleanup:
	ZSTD_freeDCtx(dctx);
	capture__free(c);
	free(r);
	return e;
}

/*
 * Checks the file header from the first bytes, then the size against the
 * memory budget, then reads the whole file (regular files only) and parses
 * it as capture__open_mem.  Returns -errno of open/fstat/read with
 * "path: read: reason" in err, -EINVAL for a file that is not regular, or
 * -EFBIG beyond the budget.
 */
int capture__open(const char *path, struct capture **out, char *err, size_t errlen)
{
	struct capture_file_header fh;
	struct stat st;
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd, e;
	const char *step = "open";

	*out = NULL;
	/* O_NONBLOCK: a FIFO planted at path does not block the open */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		e = -errno;
		goto cleanup;
	}
	step = "stat";
	if (fstat(fd, &st)) {
		e = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		e = -EINVAL;
		goto cleanup;
	}
	step = "read";
	/* The magic and header decide from 24 bytes, before any large read. */
	len = (size_t)(st.st_size < (off_t)sizeof(fh) ? st.st_size : (off_t)sizeof(fh));
	if (pread(fd, &fh, len, 0) != (ssize_t)len) {
		e = errno ? -errno : -EIO;
		goto cleanup;
	}
	step = NULL;
	e = capture__check_header(&fh, len, path, err, errlen);
	if (e)
		goto cleanup;
	if ((uint64_t)st.st_size > capture_limits__max_memory()) {
		e = capture_msg__fail(
		    err, errlen, path, -EFBIG,
		    "%llu bytes exceed the memory limit of %llu bytes (" CAPTURE_LIMIT_MEMORY_NAME
		    ")",
		    (unsigned long long)st.st_size,
		    (unsigned long long)capture_limits__max_memory());
		goto cleanup;
	}
	step = "read";
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		e = -ENOMEM;
		goto cleanup;
	}
	len = 0;
	while (len < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = -errno;
			goto cleanup;
		}
		if (n == 0)
			break; /* shrank under us: parse what there is (and reject it) */
		len += (size_t)n;
	}
	close(fd);
	fd = -1;
	e = capture__parse(buf, len, path, out, err, errlen);
	step = NULL;

cleanup:
	if (e && step)
		capture_msg__fail(err, errlen, path, e, "%s: %s", step,
				  e == -EINVAL ? "not a regular file" : strerror(-e));
	if (fd >= 0)
		close(fd);
	free(buf);
	return e;
}

int capture__check_header(const void *buf, size_t len, const char *name, char *err, size_t errlen)
{
	struct reader r = {
	    .buf = buf, .len = len, .name = name ? name : "capture", .err = err, .errlen = errlen};

	return reader__file_header(&r);
}

/*
 * Validate buf[len] and copy what it holds into a new capture (buf is not
 * referenced afterwards).  name prefixes messages.
 */
int capture__open_mem(const void *buf, size_t len, const char *name, struct capture **out,
		      char *err, size_t errlen)
{
	static const uint8_t empty;

	return capture__parse(buf ? buf : &empty, buf ? len : 0, name, out, err, errlen);
}

void capture__free(struct capture *c)
{
	if (!c)
		return;
	free(c->storage);
	free(c);
}

const char *capture__string(const struct capture *c, uint32_t id)
{
	if (id >= c->nstrings)
		return "";
	return c->string_data + c->string_offsets[id];
}

/* Linear in nmeta. */
const char *capture__meta(const struct capture *c, const char *key)
{
	uint32_t i;

	for (i = 0; i < c->nmeta; i++)
		if (!strcmp(capture__string(c, c->meta[i].key), key))
			return capture__string(c, c->meta[i].value);
	return NULL;
}

/* Linear in ncounters. */
uint64_t capture__counter(const struct capture *c, const char *name)
{
	uint32_t i;

	for (i = 0; i < c->ncounters; i++)
		if (!strcmp(capture__string(c, c->counters[i].name), name))
			return c->counters[i].value;
	return 0;
}
