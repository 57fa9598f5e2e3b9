// SPDX-License-Identifier: MIT
/*
 * Perf side-band record layouts (perf_records.h): build and parse, with the
 * sample_id trailer derived from the sample_type in use.
 */
#include <errno.h>
#include <string.h>

#include "perf_records.h"

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

void perf_sample_id__layout(uint64_t sample_type, struct perf_sample_id_layout *out)
{
	int32_t off = 0;

	memset(out, 0, sizeof(*out));
	out->sample_type = sample_type;
	out->tid_off = out->time_off = out->id_off = out->stream_id_off = out->cpu_off =
		out->identifier_off = -1;
	/* perf_event.h, struct sample_id: each field present iff its bit is set, in this order */
	if (sample_type & PERF_SAMPLE_TID) {
		out->tid_off = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_TIME) {
		out->time_off = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_ID) {
		out->id_off = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_STREAM_ID) {
		out->stream_id_off = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_CPU) {
		out->cpu_off = off;
		off += 8;
	}
	if (sample_type & PERF_SAMPLE_IDENTIFIER) {
		out->identifier_off = off;
		off += 8;
	}
	out->size = (uint32_t)off;
}

int perf_sample_id__read(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_sample_id *out)
{
	const uint8_t *t;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(struct perf_event_header) + l->size)
		return -EBADMSG;
	t = (const uint8_t *)rec + len - l->size;
	if (l->tid_off >= 0) {
		memcpy(&out->pid, t + l->tid_off, 4);
		memcpy(&out->tid, t + l->tid_off + 4, 4);
	}
	if (l->time_off >= 0)
		memcpy(&out->time, t + l->time_off, 8);
	if (l->id_off >= 0)
		memcpy(&out->id, t + l->id_off, 8);
	else if (l->identifier_off >= 0)
		memcpy(&out->id, t + l->identifier_off, 8);
	if (l->stream_id_off >= 0)
		memcpy(&out->stream_id, t + l->stream_id_off, 8);
	if (l->cpu_off >= 0)
		memcpy(&out->cpu, t + l->cpu_off, 4);
	return 0;
}

static void sample_id__write(const struct perf_sample_id_layout *l, uint8_t *t,
			     const struct perf_sample_id *id)
{
	memset(t, 0, l->size);
	if (!id)
		return;
	if (l->tid_off >= 0) {
		memcpy(t + l->tid_off, &id->pid, 4);
		memcpy(t + l->tid_off + 4, &id->tid, 4);
	}
	if (l->time_off >= 0)
		memcpy(t + l->time_off, &id->time, 8);
	if (l->id_off >= 0)
		memcpy(t + l->id_off, &id->id, 8);
	if (l->stream_id_off >= 0)
		memcpy(t + l->stream_id_off, &id->stream_id, 8);
	if (l->cpu_off >= 0)
		memcpy(t + l->cpu_off, &id->cpu, 4);
	if (l->identifier_off >= 0)
		memcpy(t + l->identifier_off, &id->id, 8);
}

int perf_rec__header(const void *rec, uint32_t len, struct perf_event_header *out)
{
	if (len < sizeof(*out))
		return -EBADMSG;
	memcpy(out, rec, sizeof(*out));
	if (out->size != len || len % 8)
		return -EBADMSG;
	return 0;
}

/* Check the header and that fixed + trailer fit; copy the fixed part. */
static int parse_fixed(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
		       void *fixed, size_t fixed_len, struct perf_sample_id *id)
{
	struct perf_event_header h;
	int err = perf_rec__header(rec, len, &h);

	if (err)
		return err;
	if (len < fixed_len + l->size)
		return -EBADMSG;
	memcpy(fixed, rec, fixed_len);
	return perf_sample_id__read(l, rec, len, id);
}

/* The NUL-terminated string between fixed_len and the trailer. */
static int parse_string(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			size_t fixed_len, const char **s, size_t *slen)
{
	size_t max = len - fixed_len - l->size, n;

	*s = (const char *)rec + fixed_len;
	n = strnlen(*s, max);
	if (n == max)
		return -EBADMSG; /* no NUL before the trailer */
	if (slen)
		*slen = n;
	return 0;
}

int perf_rec__parse_mmap2(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			  struct perf_mmap2 *out)
{
	int err = parse_fixed(l, rec, len, &out->f, sizeof(out->f), &out->id);

	if (!err && out->f.header.type != PERF_RECORD_MMAP2)
		err = -EBADMSG;
	if (!err)
		err = parse_string(l, rec, len, sizeof(out->f), &out->filename, &out->filename_len);
	return err;
}

int perf_rec__parse_comm(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_comm *out)
{
	int err = parse_fixed(l, rec, len, &out->f, sizeof(out->f), &out->id);

	if (!err && out->f.header.type != PERF_RECORD_COMM)
		err = -EBADMSG;
	if (!err)
		err = parse_string(l, rec, len, sizeof(out->f), &out->comm, NULL);
	out->misc = out->f.header.misc;
	return err;
}

int perf_rec__parse_task(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_task *out)
{
	int err = parse_fixed(l, rec, len, &out->f, sizeof(out->f), &out->id);

	if (!err && out->f.header.type != PERF_RECORD_FORK &&
	    out->f.header.type != PERF_RECORD_EXIT)
		err = -EBADMSG;
	return err;
}

int perf_rec__parse_lost(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_lost *out)
{
	int err = parse_fixed(l, rec, len, &out->f, sizeof(out->f), &out->id);

	if (!err && out->f.header.type != PERF_RECORD_LOST)
		err = -EBADMSG;
	return err;
}

/* Lay out fixed part + string (NUL, padded to 8) + trailer into buf. */
static int build(void *buf, size_t cap, const struct perf_sample_id_layout *l, void *fixed,
		 size_t fixed_len, const char *s, size_t slen, const struct perf_sample_id *id)
{
	size_t body = s ? align8(fixed_len + slen + 1) : fixed_len, size = body + l->size;
	struct perf_event_header *h = fixed;

	if (size > cap || size >= MS_PERF_RECORD_MAX)
		return -ENOSPC;
	h->size = (uint16_t)size;
	memset(buf, 0, body);
	memcpy(buf, fixed, fixed_len);
	if (s)
		memcpy((uint8_t *)buf + fixed_len, s, slen);
	sample_id__write(l, (uint8_t *)buf + body, id);
	return (int)size;
}

int perf_rec__build_mmap2(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			  const struct perf_rec_mmap2 *m, const char *filename,
			  const struct perf_sample_id *id)
{
	struct perf_rec_mmap2 f = *m;

	f.header.type = PERF_RECORD_MMAP2;
	return build(buf, cap, l, &f, sizeof(f), filename, strlen(filename), id);
}

int perf_rec__build_comm(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			 uint16_t misc, uint32_t pid, uint32_t tid, const char *comm,
			 const struct perf_sample_id *id)
{
	struct perf_rec_comm f = {
		.header = { .type = PERF_RECORD_COMM, .misc = misc },
		.pid = pid,
		.tid = tid,
	};

	/* the kernel's comm is at most TASK_COMM_LEN (16) bytes with its NUL */
	return build(buf, cap, l, &f, sizeof(f), comm, strnlen(comm, 15), id);
}

int perf_rec__build_task(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			 uint32_t type, const struct perf_rec_task *t,
			 const struct perf_sample_id *id)
{
	struct perf_rec_task f = *t;

	if (type != PERF_RECORD_FORK && type != PERF_RECORD_EXIT)
		return -EINVAL;
	f.header.type = type;
	return build(buf, cap, l, &f, sizeof(f), NULL, 0, id);
}

int perf_rec__build_lost(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			 uint64_t stream_id, uint64_t lost, const struct perf_sample_id *id)
{
	struct perf_rec_lost f = {
		.header = { .type = PERF_RECORD_LOST },
		.id = stream_id,
		.lost = lost,
	};

	return build(buf, cap, l, &f, sizeof(f), NULL, 0, id);
}
