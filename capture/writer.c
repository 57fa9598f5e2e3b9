// SPDX-License-Identifier: MIT
/*
 * Sealing a builder into file bytes and publishing them atomically.
 *
 * Layout (docs/capture-format.md): file header, then one segment: a SEGM
 * chunk, one zstd chunk per table in enum capture_table order, a SEAL
 * chunk.  The bytes depend only on the rows, the zstd version and the
 * level, so the same adds give the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/format.h"

struct out {
	uint8_t *buf;
	size_t len, cap;
	ZSTD_CCtx *cctx;
	uint32_t nchunks;     /* chunks of the segment so far */
	uint32_t headers_crc; /* crc32 over their headers */
	uint16_t flags;	      /* chunk flags of the next chunk */
};

static int size_add(size_t *acc, size_t n)
{
	return __builtin_add_overflow(*acc, n, acc) ? -ENOMEM : 0;
}

/* Append a chunk whose raw payload is raw[raw_size] (row_count rows of row_size). */
static int out__chunk(struct out *o, uint32_t tag, uint32_t row_size, uint64_t row_count,
		      const void *raw, size_t raw_size, int compression)
{
	static const uint8_t empty;
	struct capture_chunk_header h = {
	    .tag = tag,
	    .flags = o->flags,
	    .compression = (uint8_t)compression,
	    .row_size = row_size,
	    .row_count = row_count,
	    .raw_size = raw_size,
	};
	uint8_t *payload = o->buf + o->len + sizeof(h);
	size_t room = o->cap - o->len - sizeof(h), stored;

	if (!raw)
		raw = &empty;
	if (compression == CAPTURE_COMPRESSION_ZSTD) {
		stored = ZSTD_compress2(o->cctx, payload, room, raw, raw_size);
		if (ZSTD_isError(stored))
			return -ENOMEM; /* room is ZSTD_compressBound(); only allocation fails */
	} else {
		stored = raw_size;
		memcpy(payload, raw, raw_size);
	}
	h.stored_size = stored;
	h.crc = capture__crc32(0, payload, stored);
	memcpy(o->buf + o->len, &h, sizeof(h));
	o->headers_crc = capture__crc32(o->headers_crc, &h, sizeof(h));
	o->nchunks++;
	o->len += sizeof(h) + stored;
	return 0;
}

/* Bytes of the strings chunk payload: offsets[n + 1] then the string bytes. */
static int strings__raw(const struct capture *v, void **raw, size_t *len)
{
	size_t off_bytes = ((size_t)v->nstrings + 1) * sizeof(uint32_t);
	size_t data_bytes = v->string_offsets[v->nstrings];

	*len = off_bytes + data_bytes;
	*raw = malloc(*len);
	if (!*raw)
		return -ENOMEM;
	memcpy(*raw, v->string_offsets, off_bytes);
	memcpy((char *)*raw + off_bytes, v->string_data, data_bytes);
	return 0;
}

static void table__rows(const struct capture *v, enum capture_table t, const void **rows,
			uint32_t *count)
{
	switch (t) {
	case CAPTURE_TABLE_MODULES:
		*rows = v->modules, *count = v->nmodules;
		break;
	case CAPTURE_TABLE_PROCESSES:
		*rows = v->processes, *count = v->nprocesses;
		break;
	case CAPTURE_TABLE_THREADS:
		*rows = v->threads, *count = v->nthreads;
		break;
	case CAPTURE_TABLE_MAPPINGS:
		*rows = v->mappings, *count = v->nmappings;
		break;
	case CAPTURE_TABLE_FRAMES:
		*rows = v->frames, *count = v->nframes;
		break;
	case CAPTURE_TABLE_STACKS:
		*rows = v->stacks, *count = v->nstacks;
		break;
	case CAPTURE_TABLE_EVENTS:
		*rows = v->events, *count = v->nevents;
		break;
	case CAPTURE_TABLE_SAMPLES:
		*rows = v->samples, *count = v->nsamples;
		break;
	case CAPTURE_TABLE_COUNTERS:
		*rows = v->counters, *count = v->ncounters;
		break;
	case CAPTURE_TABLE_META:
		*rows = v->meta, *count = v->nmeta;
		break;
	case CAPTURE_TABLE_INTERVALS:
		*rows = v->intervals, *count = v->nintervals;
		break;
	case CAPTURE_TABLE_CGROUPS:
		*rows = v->cgroups, *count = v->ncgroups;
		break;
	case CAPTURE_TABLE_SAMPLE_CGROUPS:
		*rows = v->sample_cgroups, *count = v->nsample_cgroups;
		break;
	case CAPTURE_TABLE_PROBE_SITES:
		*rows = v->probe_sites, *count = v->nprobe_sites;
		break;
	case CAPTURE_TABLE_PROBE_RECORDS:
		*rows = v->probe_records, *count = v->nprobe_records;
		break;
	default:
		*rows = NULL, *count = 0;
		break;
	}
}

/*
 * Seal b into *buf (malloc'd, caller frees) of *len bytes.  Rows are
 * validated with the reader's rules first, so a file this writes always
 * opens.  Returns 0, the builder's sticky -ENOMEM, -ENOMEM, or -EINVAL
 * (capture_builder__error() says which row).
 */
int capture_builder__serialize(struct capture_builder *b, void **buf, size_t *len)
{
	struct capture_file_header fh = {.version_major = CAPTURE_FORMAT_VERSION,
					 .version_minor = CAPTURE_FORMAT_VERSION_MINOR};
	struct capture_segment_payload seg = {0};
	struct capture_seal_payload seal = {0};
	struct out o = {0};
	struct capture v;
	void *strings = NULL;
	size_t strings_len = 0, seg_start, msglen, need;
	char *msg = capture_builder__msg(b, &msglen);
	int err, t;

	*buf = NULL;
	*len = 0;
	msg[0] = '\0';
	err = capture_builder__view(b, &v);
	if (err) {
		snprintf(msg, msglen, "capture builder: out of memory while adding rows");
		goto cleanup;
	}
	err = capture__validate(&v, "capture builder", msg, msglen);
	if (err) {
		if (err == -EBADMSG)
			err = -EINVAL;
		goto cleanup;
	}
	err = strings__raw(&v, &strings, &strings_len);
	if (err)
		goto cleanup;

	/* One allocation bounded by the worst case of every chunk. */
	need = sizeof(fh) + 2 * (sizeof(struct capture_chunk_header) + sizeof(seg));
	err = -ENOMEM;
	for (t = 0; t < CAPTURE_TABLE_COUNT; t++) {
		size_t raw = strings_len, bound;
		const void *rows;
		uint32_t count;

		if (t != CAPTURE_TABLE_STRINGS) {
			table__rows(&v, t, &rows, &count);
			raw = (size_t)count * capture_table_info[t].row_size;
		}
		bound = ZSTD_compressBound(raw);
		if (ZSTD_isError(bound) || size_add(&need, sizeof(struct capture_chunk_header)) ||
		    size_add(&need, bound))
			goto cleanup;
	}
	o.buf = malloc(need);
	o.cctx = capture_builder__cctx(b);
	if (!o.buf || !o.cctx)
		goto cleanup;
	o.cap = need;
	ZSTD_CCtx_reset(o.cctx, ZSTD_reset_session_and_parameters);
	if (ZSTD_isError(
		ZSTD_CCtx_setParameter(o.cctx, ZSTD_c_compressionLevel, CAPTURE_ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(o.cctx, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(o.cctx, ZSTD_c_checksumFlag, 0)))
		goto cleanup;

	memcpy(fh.magic, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN);
	fh.header_crc = capture__crc32(0, &fh, offsetof(struct capture_file_header, header_crc));
	memcpy(o.buf, &fh, sizeof(fh));
	o.len = sizeof(fh);

	seg_start = o.len;
	err = out__chunk(&o, CAPTURE_TAG_SEGMENT, sizeof(seg), 1, &seg, sizeof(seg),
			 CAPTURE_COMPRESSION_NONE);
	if (err)
		goto cleanup;
	for (t = 0; t < CAPTURE_TABLE_COUNT; t++) {
		const struct capture_table_info *ti = &capture_table_info[t];
		const void *rows = strings;
		uint32_t count = v.nstrings;
		size_t raw = strings_len;

		if (t != CAPTURE_TABLE_STRINGS) {
			table__rows(&v, t, &rows, &count);
			raw = (size_t)count * ti->row_size;
		}
		o.flags = t >= CAPTURE_TABLE_REQUIRED_COUNT ? CAPTURE_CHUNK_F_OPTIONAL : 0;
		err = out__chunk(&o, ti->tag, ti->row_size, count, rows, raw,
				 CAPTURE_COMPRESSION_ZSTD);
		o.flags = 0;
		if (err)
			goto cleanup;
	}
	seal.chunk_count = o.nchunks;
	seal.headers_crc = o.headers_crc;
	seal.segment_size = o.len - seg_start + sizeof(struct capture_chunk_header) + sizeof(seal);
	err = out__chunk(&o, CAPTURE_TAG_SEAL, sizeof(seal), 1, &seal, sizeof(seal),
			 CAPTURE_COMPRESSION_NONE);
	if (err)
		goto cleanup;

	*buf = o.buf;
	*len = o.len;
	o.buf = NULL;
	err = 0;

cleanup:
	if (err == -ENOMEM && !msg[0])
		snprintf(msg, msglen, "capture builder: out of memory while serializing");
	free(strings);
	free(o.buf);
	return err;
}



/*
 * Serialize and publish at path with file_out (file_io.h): a temporary
 * PATH.tmp.XXXXXX (O_EXCL, mode 0600) in the same directory, fsync'd and
 * renamed over path, then the directory fsync'd; a symlink at path is
 * refused, a device or FIFO written through.  On failure before the rename
 * the temporary is removed and path is untouched; a partial file never
 * carries path's name.  Returns 0, the errors of
 * capture_builder__serialize(), or -errno of the failing system call
 * (capture_builder__error() names it).
 */
int capture_builder__write(struct capture_builder *b, const char *path)
{
	struct file_out o = {.fd = -1, .slot = -1};
	void *buf = NULL;
	size_t len, msglen;
	char *msg;
	int err;

	err = capture_builder__serialize(b, &buf, &len);
	if (err)
		return err;
	msg = capture_builder__msg(b, &msglen);
	err = file_out__open(&o, path, msg, msglen);
	if (err)
		goto cleanup;
	err = file__write_all(o.fd, buf, len);
	if (err) {
		snprintf(msg, msglen, "%s: write %s: %s", path, o.tmp ? o.tmp : path,
			 strerror(-err));
		file_out__abort(&o);
		goto cleanup;
	}
	err = file_out__commit(&o, msg, msglen);
cleanup:
	free(buf);
	return err;
}
