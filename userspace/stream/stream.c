// SPDX-License-Identifier: MIT
/*
 * The raw ring stream file (stream.h): a buffered appender and a validating
 * replayer.  File layout: a 16-byte header { MS_RAW_MAGIC, u32 abi, u32
 * stream version },
 * then for each chunk struct ms_chunk and len payload bytes, zero-padded to a
 * multiple of 8.  From stream version 3 the chunk header's reserved field
 * holds the chunk's CRC-32 (chunk__crc).  Host byte order.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bpf/abi/records.h"
#include "capture/file_io.h"
#include "stream.h"

#define WRITER_BUF_BYTES (1u << 20)
/* Buffered bytes reach the file at the first drain round (ROUND chunk) a
 * second after the oldest of them was buffered, so a recording killed with
 * SIGKILL loses at most about that much of its stream, whatever the rate
 * (a slow one filled the 1 MiB buffer only after minutes). */
#define WRITER_FLUSH_NS	 1000000000ull

struct raw_file_header {
	char magic[8];
	uint32_t abi;	  /* MS_ABI_VERSION */
	uint32_t version; /* MS_STREAM_VERSION; 0 in files written before it existed (= 1) */
};
_Static_assert(sizeof(struct raw_file_header) == 16, "raw_file_header size");

struct stream_writer {
	int fd;
	char *partial; /* DIR/stream.msraw.partial, renamed at free */
	char *final;   /* DIR/stream.msraw */
	int err;       /* first write error, sticky */
	size_t used;
	uint64_t held_since_ns; /* time of the first ROUND since the last timed flush */
	bool held_timed;	/* held_since_ns is set */
	char buf[WRITER_BUF_BYTES];
};

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/*
 * A chunk's checksum in a stream of version 3 or later: zlib's CRC-32
 * (ISO 3309, the polynomial of gzip and PNG) of the chunk header with its
 * reserved field 0, then the payload and its zero padding (padded bytes).
 * Every bit a chunk occupies in the file is covered but the checksum itself.
 */
static uint32_t chunk__crc(const struct ms_chunk *c, const void *payload, size_t padded)
{
	static const unsigned char zeros[8];
	struct ms_chunk h = *c;
	uLong crc = crc32(0L, Z_NULL, 0);

	h.reserved = 0;
	crc = crc32(crc, (const Bytef *)&h, sizeof(h));
	if (c->len)
		crc = crc32(crc, payload, c->len);
	if (padded > c->len)
		crc = crc32(crc, zeros, (uInt)(padded - c->len));
	return (uint32_t)crc;
}


static int writer__flush(struct stream_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	err = file__write_all(w->fd, w->buf, w->used);
	w->used = 0;
	if (err)
		w->err = err;
	return err;
}

/* Append bytes through the buffer; large blocks go straight to the file. */
static int writer__append(struct stream_writer *w, const void *data, size_t len)
{
	int err;

	if (w->err)
		return w->err;
	if (w->used + len > sizeof(w->buf)) {
		err = writer__flush(w);
		if (err)
			return err;
	}
	if (len > sizeof(w->buf)) {
		err = file__write_all(w->fd, data, len);
		if (err)
			w->err = err;
		return err;
	}
	memcpy(w->buf + w->used, data, len);
	w->used += len;
	return 0;
}

struct stream_writer *stream_writer__new(const char *dir)
{
	struct raw_file_header hdr = {.abi = MS_ABI_VERSION, .version = MS_STREAM_VERSION};
	struct stream_writer *w;
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = -1;
	if (asprintf(&w->final, "%s/%s", dir, MS_RAW_FILE) < 0 ||
	    asprintf(&w->partial, "%s/%s.partial", dir, MS_RAW_FILE) < 0) {
		w->final = w->partial = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	w->fd = open(w->partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (w->fd < 0) {
		err = -errno;
		goto cleanup;
	}
	memcpy(hdr.magic, MS_RAW_MAGIC, sizeof(hdr.magic));
	err = writer__append(w, &hdr, sizeof(hdr));
cleanup:
	if (err) {
		if (w->fd >= 0) {
			close(w->fd);
			unlink(w->partial);
		}
		free(w->final);
		free(w->partial);
		free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

int stream_writer__sink(void *ctx, const struct ms_chunk *chunk, const void *payload)
{
	static const char zeros[8];
	struct stream_writer *w = ctx;
	struct ms_chunk h;
	size_t pad;
	int err;

	if (chunk->len > MS_CHUNK_MAX_PAYLOAD)
		return -E2BIG;
	if (chunk->len && !payload)
		return -EINVAL;
	h = *chunk;
	h.reserved = chunk__crc(chunk, payload, pad8(chunk->len));
	err = writer__append(w, &h, sizeof(h));
	if (!err && chunk->len)
		err = writer__append(w, payload, chunk->len);
	pad = pad8(chunk->len) - chunk->len;
	if (!err && pad)
		err = writer__append(w, zeros, pad);
	if (!err && chunk->kind == MS_CHUNK_ROUND) {
		if (!w->held_timed) {
			w->held_since_ns = chunk->time;
			w->held_timed = true;
		} else if (chunk->time - w->held_since_ns >= WRITER_FLUSH_NS) {
			err = writer__flush(w);
			w->held_timed = false;
		}
	}
	return err;
}


int stream_writer__free(struct stream_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = writer__flush(w);
	if (fsync(w->fd) && !err)
		err = -errno;
	if (close(w->fd) && !err)
		err = -errno;
	/* Publish under the final name only when complete (ARCHITECTURE.md:
	 * write, fsync, rename); a failed stream keeps its .partial name. */
	if (!err && rename(w->partial, w->final))
		err = -errno;
	if (!err)
		err = file__fsync_parent(w->final);
	free(w->final);
	free(w->partial);
	free(w);
	return err;
}

/* ---- replay ---- */

struct replay {
	const char *path;
	FILE *f;
	uint32_t version; /* the stream's: checksums from 3 on */
	uint64_t off; /* bytes consumed so far */
	char *payload;
};

static int replay__bad(const struct replay *r, uint64_t off, const char *why)
{
	fprintf(stderr, "microscope: %s: offset %llu: malformed raw stream: %s\n", r->path,
		(unsigned long long)off, why);
	return -EBADMSG;
}

/* Read up to len bytes.  Returns the number read (short only at end of
 * file), or -errno for a read error. */
static ssize_t replay__read(struct replay *r, void *buf, size_t len)
{
	size_t got = fread(buf, 1, len, r->f);

	if (got < len && ferror(r->f))
		return -EIO;
	r->off += got;
	return (ssize_t)got;
}

static bool kind__known(uint32_t kind) { return kind >= MS_CHUNK_META && kind <= MS_CHUNK_DUTY; }

static bool kind__timed(uint32_t kind) { return kind == MS_CHUNK_ROUND || kind == MS_CHUNK_END; }

/* META and COUNTER payloads are "key=value" text without NUL bytes. */
static bool text__valid(const char *p, uint32_t len)
{
	return len > 0 && !memchr(p, '\0', len) && memchr(p, '=', len) && p[0] != '=';
}

/* c: the chunk header as read; its checksum (version 3 on) is taken out,
 * leaving reserved 0 as the sink sees it. */
static int replay__chunk(struct replay *r, struct ms_chunk *c, uint64_t at)
{
	size_t padded = pad8(c->len);
	uint32_t sum = 0;
	ssize_t got;
	size_t i;

	if (r->version >= 3) {
		sum = c->reserved;
		c->reserved = 0;
	}
	if (!kind__known(c->kind))
		return replay__bad(r, at, "unknown chunk kind");
	if (c->reserved)
		return replay__bad(r, at, "nonzero reserved field in chunk header");
	if (c->len > MS_CHUNK_MAX_PAYLOAD)
		return replay__bad(r, at, "chunk payload larger than MS_CHUNK_MAX_PAYLOAD");
	if (c->kind == MS_CHUNK_DUTY) {
		if (c->len != sizeof(struct ms_duty))
			return replay__bad(r, at, "DUTY chunk of the wrong size");
	} else if (kind__timed(c->kind) ? c->len != 0 : c->time != 0)
		return replay__bad(r, at,
				   kind__timed(c->kind) ? "ROUND/END chunk with a payload"
							: "time set on an untimed chunk");
	got = replay__read(r, r->payload, padded);
	if (got < 0)
		return (int)got;
	if ((size_t)got < padded)
		return -ENODATA; /* cut at the end: the caller decides */
	if (r->version >= 3 && chunk__crc(c, r->payload, padded) != sum)
		return replay__bad(r, at, "chunk checksum mismatch: its bytes changed after "
					  "they were written");
	for (i = c->len; i < padded; i++)
		if (r->payload[i])
			return replay__bad(r, at + sizeof(*c) + i, "nonzero padding");
	switch (c->kind) {
	case MS_CHUNK_META:
	case MS_CHUNK_COUNTER:
		if (!text__valid(r->payload, c->len))
			return replay__bad(r, at, "META/COUNTER payload is not key=value text");
		break;
	case MS_CHUNK_BPF:
	case MS_CHUNK_PERF:
		if (c->len < 8)
			return replay__bad(r, at, "record shorter than its 8-byte header");
		break;
	case MS_CHUNK_PROCESS:
		if (c->len != sizeof(struct ms_process_info))
			return replay__bad(r, at, "PROCESS chunk of the wrong size");
		break;
	}
	return 0;
}

int stream__replay(const char *path, stream_sink_fn sink, void *ctx)
{
	struct replay r = {.path = path};
	struct raw_file_header hdr;
	char *joined = NULL;
	struct ms_chunk c;
	struct stat st;
	uint32_t version;
	uint64_t at, chunks = 0;
	bool seen_end = false;
	ssize_t got;
	int err;

	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		if (asprintf(&joined, "%s/%s", path, MS_RAW_FILE) < 0)
			return -ENOMEM;
		r.path = joined;
		if (access(joined, F_OK) && errno == ENOENT) {
			/* a recording killed before it could publish its stream
			 * (SIGKILL) left only DIR/stream.msraw.partial */
			char *partial = NULL;

			if (asprintf(&partial, "%s.partial", joined) < 0) {
				free(joined);
				return -ENOMEM;
			}
			if (!access(partial, F_OK)) {
				fprintf(stderr,
					"microscope: %s: no %s, replaying %s.partial (its recording "
					"never finished)\n",
					path, MS_RAW_FILE, MS_RAW_FILE);
				free(joined);
				joined = partial;
				r.path = joined;
			} else {
				free(partial);
			}
		}
	}
	r.payload = malloc(MS_CHUNK_MAX_PAYLOAD);
	if (!r.payload) {
		err = -ENOMEM;
		goto cleanup;
	}
	r.f = fopen(r.path, "rbe");
	if (!r.f) {
		err = -errno;
		goto cleanup;
	}
	got = replay__read(&r, &hdr, sizeof(hdr));
	if (got < 0) {
		err = (int)got;
		goto cleanup;
	}
	if ((size_t)got < sizeof(hdr)) {
		err = replay__bad(&r, r.off, "truncated file header");
		goto cleanup;
	}
	if (memcmp(hdr.magic, MS_RAW_MAGIC, sizeof(hdr.magic))) {
		err = replay__bad(&r, 0, "bad magic (not a microscope raw stream)");
		goto cleanup;
	}
	version = hdr.version ? hdr.version : 1;
	r.version = version;
	if (version < MS_STREAM_VERSION_MIN || version > MS_STREAM_VERSION) {
		fprintf(stderr,
			"microscope: %s: raw stream version %u; this build replays stream versions "
			"%u to %u (%s)\n",
			r.path, version, MS_STREAM_VERSION_MIN, MS_STREAM_VERSION,
			version > MS_STREAM_VERSION ? "written by a newer microscope"
						    : "too old for this build");
		err = -EPROTONOSUPPORT;
		goto cleanup;
	}
	if (hdr.abi < MS_ABI_VERSION_MIN || hdr.abi > MS_ABI_VERSION) {
		fprintf(stderr,
			"microscope: %s: raw stream of record ABI %u; this build reads record ABI "
			"%u to %u\n",
			r.path, hdr.abi, MS_ABI_VERSION_MIN, MS_ABI_VERSION);
		err = -EPROTONOSUPPORT;
		goto cleanup;
	}
	for (;;) {
		at = r.off;
		got = replay__read(&r, &c, sizeof(c));
		if (got < 0) {
			err = (int)got;
			break;
		}
		if (got == 0) {
			err = 0; /* end of file at a chunk boundary */
			if (!seen_end)
				/* a recording killed (SIGKILL) between two writes */
				fprintf(stderr,
					"microscope: %s: the stream is cut at offset %llu, after its "
					"last complete chunk, without an END (its recording never "
					"stopped): replaying its %llu chunks\n",
					r.path, (unsigned long long)at, (unsigned long long)chunks);
			break;
		}
		err = (size_t)got < sizeof(c) ? -ENODATA : replay__chunk(&r, &c, at);
		if (err == -ENODATA && !seen_end) {
			/* a recording killed mid-write (SIGKILL): its complete chunks
			 * stand; a published stream (not .partial) was cut since */
			size_t n = strlen(r.path), k = strlen(".partial");
			bool partial = n >= k && !strcmp(r.path + n - k, ".partial");

			fprintf(stderr,
				"microscope: %s: the stream is cut at offset %llu (%s): replaying "
				"its %llu complete chunks\n",
				r.path, (unsigned long long)at,
				partial ? "its recording never stopped"
					: "truncated after it was written",
				(unsigned long long)chunks);
			err = 0;
			break;
		}
		if (err == -ENODATA)
			err = replay__bad(&r, r.off, (size_t)got < sizeof(c)
							 ? "truncated chunk header"
							 : "truncated chunk payload");
		if (err)
			break;
		chunks++;
		seen_end |= c.kind == MS_CHUNK_END;
		err = sink(ctx, &c, c.len ? r.payload : NULL);
		if (err < 0)
			break;
		err = 0;
	}
cleanup:
	if (r.f)
		fclose(r.f);
	free(r.payload);
	free(joined);
	return err;
}
