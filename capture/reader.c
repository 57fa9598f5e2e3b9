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

/* ---- messages ----------------------------------------------------------- */

__attribute__((format(printf, 5, 6))) static int fail(char *err, size_t errlen, const char *name,
						      int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return ret;
	n = snprintf(err, errlen, "%s: ", name);
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return ret;
}

/* A string for a message: at most 48 bytes, non-printable bytes as '?'. */
static const char *printable(const char *s, char buf[52])
{
	size_t i;

	for (i = 0; s[i] && i < 48; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i])
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}

/* A chunk tag as text, e.g. "'STKS'", or its hex value when not printable. */
static const char *tag_text(uint32_t tag, char buf[16])
{
	char c[4];
	int i;

	for (i = 0; i < 4; i++) {
		c[i] = (char)(tag >> (8 * i));
		if (c[i] < 0x20 || c[i] >= 0x7f) {
			snprintf(buf, 16, "0x%08x", tag);
			return buf;
		}
	}
	snprintf(buf, 16, "'%c%c%c%c'", c[0], c[1], c[2], c[3]);
	return buf;
}

/* ---- row validation ----------------------------------------------------- */

struct check {
	const struct capture *c;
	const char *name;
	char *err;
	size_t errlen;
};

#define ROW_FAIL(k, table, row, fmt, ...)                                                          \
	fail((k)->err, (k)->errlen, (k)->name, -EBADMSG, "table '%s' row %u: " fmt,                \
	     capture_table_info[table].name, (unsigned)(row), ##__VA_ARGS__)

/* id must index a table of n rows (or be CAPTURE_NONE when none_ok). */
static bool in_range(uint32_t id, uint32_t n, bool none_ok)
{
	return id < n || (none_ok && id == CAPTURE_NONE);
}

static int check_string(const struct check *k, int table, uint32_t row, const char *field,
			uint32_t id)
{
	if (id < k->c->nstrings)
		return 0;
	return ROW_FAIL(k, table, row, "%s string %u out of range (%u strings)", field, id,
			k->c->nstrings);
}

static int check_ref(const struct check *k, int table, uint32_t row, const char *field, uint32_t id,
		     int target, uint32_t n, bool none_ok)
{
	if (in_range(id, n, none_ok))
		return 0;
	if (id == CAPTURE_NONE)
		return ROW_FAIL(k, table, row, "%s is none but must name a row of '%s'", field,
				capture_table_info[target].name);
	return ROW_FAIL(k, table, row, "%s %u out of range ('%s' has %u rows)", field, id,
			capture_table_info[target].name, n);
}

static int check_strings(const struct check *k)
{
	const struct capture *c = k->c;
	const uint32_t *off = c->string_offsets;
	uint32_t i;

	if (c->nstrings < 1 || off[0] != 0)
		return fail(k->err, k->errlen, k->name, -EBADMSG,
			    "table 'strings': string 0 must start at offset 0");
	for (i = 0; i < c->nstrings; i++) {
		uint32_t start = off[i], end = off[i + 1];

		/* off[nstrings] is the stored byte count (checked by the caller) */
		if (end <= start || end > off[c->nstrings])
			return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, i,
					"end offset %u not in (%u, %u]", end, start,
					off[c->nstrings]);
		if (c->string_data[end - 1] != '\0')
			return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, i, "not NUL-terminated");
		if (memchr(c->string_data + start, '\0', end - 1 - start))
			return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, i, "embedded NUL byte");
	}
	if (off[1] != 1)
		return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, 0, "string 0 must be \"\"");
	return 0;
}

struct by_name {
	const struct capture *c;
	const void *rows;
	size_t row_size;
};

static const char *row_name(const struct by_name *t, uint32_t row)
{
	uint32_t id;

	/* the key is the first u32 of a counter and of a meta row */
	memcpy(&id, (const char *)t->rows + (size_t)row * t->row_size, sizeof(id));
	return t->c->string_data + t->c->string_offsets[id];
}

static int by_name_cmp(const void *a, const void *b, void *ctx)
{
	uint32_t ra = *(const uint32_t *)a, rb = *(const uint32_t *)b;
	int d = strcmp(row_name(ctx, ra), row_name(ctx, rb));

	return d ? d : (ra > rb) - (ra < rb);
}

/* Names (compared as strings, not ids) must be unique among n rows. */
static int check_unique(const struct check *k, int table, const void *rows, size_t row_size,
			uint32_t n, const char *field)
{
	struct by_name t = {k->c, rows, row_size};
	uint32_t *order, i;
	int err = 0;
	char buf[52];

	if (n < 2)
		return 0;
	order = malloc((size_t)n * sizeof(*order));
	if (!order)
		return fail(k->err, k->errlen, k->name, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_name_cmp, &t);
	for (i = 1; i < n; i++) {
		if (strcmp(row_name(&t, order[i - 1]), row_name(&t, order[i])))
			continue;
		err = ROW_FAIL(k, table, order[i], "%s '%s' repeats row %u", field,
			       printable(row_name(&t, order[i]), buf), order[i - 1]);
		break;
	}
	free(order);
	return err;
}

int capture__validate(const struct capture *c, const char *name, char *err, size_t errlen)
{
	const struct check k = {c, name, err, errlen};
	uint32_t i;
	int e;

	e = check_strings(&k);
	if (e)
		return e;

	for (i = 0; i < c->nmodules; i++) {
		const struct capture_module *m = &c->modules[i];

		if ((e = check_string(&k, CAPTURE_TABLE_MODULES, i, "path", m->path)) ||
		    (e = check_string(&k, CAPTURE_TABLE_MODULES, i, "build_id", m->build_id)))
			return e;
		if (m->kind < CAPTURE_MODULE_FILE || m->kind > CAPTURE_MODULE_KIND_MAX)
			return ROW_FAIL(&k, CAPTURE_TABLE_MODULES, i, "unknown kind %u", m->kind);
	}
	for (i = 0; i < c->nprocesses; i++) {
		const struct capture_process *p = &c->processes[i];

		if ((e = check_string(&k, CAPTURE_TABLE_PROCESSES, i, "comm", p->comm)) ||
		    (e = check_string(&k, CAPTURE_TABLE_PROCESSES, i, "exe", p->exe)))
			return e;
	}
	for (i = 0; i < c->nthreads; i++) {
		const struct capture_thread *t = &c->threads[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_THREADS, i, "process", t->process,
				   CAPTURE_TABLE_PROCESSES, c->nprocesses, false)) ||
		    (e = check_string(&k, CAPTURE_TABLE_THREADS, i, "comm", t->comm)))
			return e;
	}
	for (i = 0; i < c->nmappings; i++) {
		const struct capture_mapping *m = &c->mappings[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_MAPPINGS, i, "process", m->process,
				   CAPTURE_TABLE_PROCESSES, c->nprocesses, false)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_MAPPINGS, i, "module", m->module,
				   CAPTURE_TABLE_MODULES, c->nmodules, false)))
			return e;
		if (m->start >= m->end)
			return ROW_FAIL(&k, CAPTURE_TABLE_MAPPINGS, i,
					"start 0x%llx not below end 0x%llx",
					(unsigned long long)m->start, (unsigned long long)m->end);
	}
	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *f = &c->frames[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_FRAMES, i, "module", f->module,
				   CAPTURE_TABLE_MODULES, c->nmodules, true)) ||
		    (e = check_string(&k, CAPTURE_TABLE_FRAMES, i, "function", f->function)) ||
		    (e = check_string(&k, CAPTURE_TABLE_FRAMES, i, "file", f->file)))
			return e;
	}
	for (i = 0; i < c->nstacks; i++) {
		const struct capture_stack *s = &c->stacks[i];

		if (s->parent != CAPTURE_NONE && s->parent >= i)
			return ROW_FAIL(&k, CAPTURE_TABLE_STACKS, i,
					"parent %u out of range (%u rows before it)", s->parent, i);
		if ((e = check_ref(&k, CAPTURE_TABLE_STACKS, i, "frame", s->frame,
				   CAPTURE_TABLE_FRAMES, c->nframes, false)))
			return e;
	}
	for (i = 0; i < c->nevents; i++) {
		const struct capture_event *ev = &c->events[i];

		if ((e = check_string(&k, CAPTURE_TABLE_EVENTS, i, "name", ev->name)) ||
		    (e = check_string(&k, CAPTURE_TABLE_EVENTS, i, "unit", ev->unit)))
			return e;
	}
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_SAMPLES, i, "thread", s->thread,
				   CAPTURE_TABLE_THREADS, c->nthreads, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_SAMPLES, i, "stack", s->stack,
				   CAPTURE_TABLE_STACKS, c->nstacks, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_SAMPLES, i, "event", s->event,
				   CAPTURE_TABLE_EVENTS, c->nevents, false)))
			return e;
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "thread", v->thread,
				   CAPTURE_TABLE_THREADS, c->nthreads, false)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "event", v->event,
				   CAPTURE_TABLE_EVENTS, c->nevents, false)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "stack", v->stack,
				   CAPTURE_TABLE_STACKS, c->nstacks, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "waker_thread",
				   v->waker_thread, CAPTURE_TABLE_THREADS, c->nthreads, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "waker_stack", v->waker_stack,
				   CAPTURE_TABLE_STACKS, c->nstacks, true)))
			return e;
		if (v->start_ns > v->end_ns || v->weight != v->end_ns - v->start_ns)
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i,
					"start %llu, end %llu and weight %llu disagree",
					(unsigned long long)v->start_ns,
					(unsigned long long)v->end_ns, (unsigned long long)v->weight);
		/* unknown flag bits and reserved are ignored (compatibility policy) */
		if (v->state >= CAPTURE_OFFCPU_STATE_COUNT || v->cause >= CAPTURE_OFFCPU_CAUSE_COUNT)
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i, "unknown state %u or cause %u",
					v->state, v->cause);
		if (v->cause != CAPTURE_OFFCPU_CAUSE_TASK && v->waker_thread != CAPTURE_NONE)
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i,
					"waker thread %u without a task cause", v->waker_thread);
		if (strcmp(capture__string(c, c->events[v->event].unit), "nanoseconds"))
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i,
					"event %u has unit '%s', not nanoseconds", v->event,
					capture__string(c, c->events[v->event].unit));
	}
	for (i = 0; i < c->ncgroups; i++) {
		const struct capture_cgroup *g = &c->cgroups[i];

		if ((e = check_string(&k, CAPTURE_TABLE_CGROUPS, i, "path", g->path)) ||
		    (e = check_string(&k, CAPTURE_TABLE_CGROUPS, i, "container", g->container)) ||
		    (e = check_string(&k, CAPTURE_TABLE_CGROUPS, i, "runtime", g->runtime)))
			return e;
	}
	if (c->nsample_cgroups && c->nsample_cgroups != c->nsamples)
		return ROW_FAIL(&k, CAPTURE_TABLE_SAMPLE_CGROUPS, 0,
				"%u rows for %u samples (must be 0 or equal)", c->nsample_cgroups,
				c->nsamples);
	for (i = 0; i < c->nsample_cgroups; i++)
		if ((e = check_ref(&k, CAPTURE_TABLE_SAMPLE_CGROUPS, i, "cgroup",
				   c->sample_cgroups[i], CAPTURE_TABLE_CGROUPS, c->ncgroups, true)))
			return e;
	for (i = 0; i < c->ncounters; i++)
		if ((e = check_string(&k, CAPTURE_TABLE_COUNTERS, i, "name", c->counters[i].name)))
			return e;
	for (i = 0; i < c->nmeta; i++)
		if ((e = check_string(&k, CAPTURE_TABLE_META, i, "key", c->meta[i].key)) ||
		    (e = check_string(&k, CAPTURE_TABLE_META, i, "value", c->meta[i].value)))
			return e;
	e = check_unique(&k, CAPTURE_TABLE_COUNTERS, c->counters, sizeof(*c->counters),
			 c->ncounters, "name");
	if (!e)
		e = check_unique(&k, CAPTURE_TABLE_META, c->meta, sizeof(*c->meta), c->nmeta,
				 "key");
	for (i = 0; !e && i < c->nmeta; i++) {
		char why[96];

		/* Sampling duty changes (record --budget) must be a well-formed list. */
		if (strcmp(capture__string(c, c->meta[i].key), CAPTURE_META_DUTY_CHANGES))
			continue;
		if (capture_duty__parse(capture__string(c, c->meta[i].value), NULL, 0, why,
					sizeof(why)) < 0)
			e = ROW_FAIL(&k, CAPTURE_TABLE_META, i, "%s: %s", CAPTURE_META_DUTY_CHANGES,
				     why);
	}
	return e;
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

#define READ_FAIL(r, ret, fmt, ...) fail((r)->err, (r)->errlen, (r)->name, ret, fmt, ##__VA_ARGS__)

static int reader__file_header(struct reader *r)
{
	struct capture_file_header fh;
	uint32_t crc;

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
		/* a valid frame may still be a bomb: the policy of capture/limits.h */
		if (h->raw_size > capture_limits__max_inflated(h->stored_size))
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
			    k, t >= 0 ? capture_table_info[t].name : tag_text(h.tag, tagbuf), p,
			    (unsigned long long)h.stored_size, r->len - p - sizeof(h));
		payload = r->buf + p + sizeof(h);
		if (h.reserved || (h.flags & ~CAPTURE_CHUNK_F_KNOWN))
			return READ_FAIL(
			    r, -EBADMSG,
			    "chunk %u at offset %zu: unknown flags 0x%x / reserved 0x%x", k, p,
			    h.flags, h.reserved);
		if (k == 0 && h.tag != CAPTURE_TAG_SEGMENT)
			return READ_FAIL(r, -EBADMSG,
					 "chunk 0 at offset %zu: %s where a segment header belongs",
					 p, tag_text(h.tag, tagbuf));

		err = 0;
		/* Header fields first, then the crc: a chunk claiming gigabytes is
		 * refused before its bytes are read. */
		if (h.tag == CAPTURE_TAG_SEAL || h.tag == CAPTURE_TAG_SEGMENT)
			err = reader__fixed_header(r, k, p,
						   h.tag == CAPTURE_TAG_SEAL ? "seal" : "segment", &h,
						   sizeof(struct capture_seal_payload));
		else if (t >= 0)
			err = reader__table_header(r, k, p, t, &h);
		else if (!(h.flags & CAPTURE_CHUNK_F_OPTIONAL))
			err = READ_FAIL(r, -EBADMSG,
					"chunk %u at offset %zu: unknown required chunk %s", k, p,
					tag_text(h.tag, tagbuf));
		if (err)
			return err;
		crc = capture__crc32(0, payload, h.stored_size);
		if (crc != h.crc)
			return READ_FAIL(
			    r, -EBADMSG, "chunk %u %s at offset %zu: crc 0x%08x, computed 0x%08x",
			    k, t >= 0 ? capture_table_info[t].name : tag_text(h.tag, tagbuf), p,
			    h.crc, crc);

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
		return fail(err, errlen, name, -ENOMEM, "out of memory");
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
		e = fail(err, errlen, path, -EFBIG,
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
		fail(err, errlen, path, e, "%s: %s", step,
		     e == -EINVAL ? "not a regular file" : strerror(-e));
	if (fd >= 0)
		close(fd);
	free(buf);
	return e;
}

int capture__check_header(const void *buf, size_t len, const char *name, char *err,
			  size_t errlen)
{
	struct reader r = {.buf = buf, .len = len, .name = name ? name : "capture",
			   .err = err, .errlen = errlen};

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
