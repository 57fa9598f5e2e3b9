// SPDX-License-Identifier: MIT
/*
 * The raw ring stream (userspace/stream/stream.h): what stream_writer
 * writes, stream__replay gives back chunk for chunk; damaged files are
 * -EBADMSG (or a clean stop at a chunk boundary), never a crash.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/abi/records.h"
#include "userspace/stream/memory_policy.h"
#include "userspace/stream/meta.h"
#include "userspace/stream/stream.h"

#define MAX_SEEN	  64
#define FILE_HEADER_BYTES 16

struct seen_chunk {
	struct ms_chunk c;
	unsigned char payload[256];
};

struct seen {
	struct seen_chunk chunks[MAX_SEEN];
	int n;
	int fail_at; /* return -EINTR for this chunk index; -1: never */
};

static int record_sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	struct seen *s = ctx;

	if (s->n == s->fail_at)
		return -EINTR;
	if (s->n < MAX_SEEN) {
		s->chunks[s->n].c = *c;
		if (c->len)
			memcpy(s->chunks[s->n].payload, payload,
			       c->len < sizeof(s->chunks[0].payload)
				   ? c->len
				   : sizeof(s->chunks[0].payload));
	}
	s->n++;
	return 0;
}

/* A stream with one chunk of each kind; BPF/PERF payloads of lengths that
 * need padding. */
struct sample_chunk {
	struct ms_chunk c;
	const void *payload;
};

static const unsigned char bpf_rec[13] = {1, 0, 0, 0, 13, 0, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
static const unsigned char perf_rec[24] = {10, 0, 2, 0, 24, 0, 0, 0, 1, 2, 3, 4};

static const struct sample_chunk sample[] = {
    {{.kind = MS_CHUNK_META, .len = 21}, "kernel.release=6.18.0"},
    {{.kind = MS_CHUNK_ROUND, .time = 1000}, NULL},
    {{.kind = MS_CHUNK_BPF, .source = 0, .len = sizeof(bpf_rec)}, bpf_rec},
    {{.kind = MS_CHUNK_PERF, .source = 1, .len = sizeof(perf_rec)}, perf_rec},
    {{.kind = MS_CHUNK_PERF, .source = MS_SOURCE_SNAPSHOT, .len = sizeof(perf_rec)}, perf_rec},
    {{.kind = MS_CHUNK_ROUND, .time = 2000}, NULL},
    {{.kind = MS_CHUNK_COUNTER, .len = 18}, "bpf.ringbuf_full=7"},
    {{.kind = MS_CHUNK_END, .time = 2500}, NULL},
};
#define NSAMPLE ((int)(sizeof(sample) / sizeof(sample[0])))

struct fixture {
	char dir[64];
	char path[96];
	unsigned char *bytes; /* the whole written file */
	size_t size;
	size_t boundary[NSAMPLE + 1]; /* file offset where chunk i starts; [NSAMPLE] = size */
};

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct stream_writer *w;
	size_t off = FILE_HEADER_BYTES;
	struct stat st;
	FILE *f;
	int i;

	if (!fx)
		return -1;
	strcpy(fx->dir, "/tmp/ms-test-stream-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->dir, MS_RAW_FILE);
	w = stream_writer__new(fx->dir);
	if (!w)
		return -1;
	for (i = 0; i < NSAMPLE; i++) {
		fx->boundary[i] = off;
		off += sizeof(struct ms_chunk) + ((sample[i].c.len + 7) & ~7u);
		if (stream_writer__sink(w, &sample[i].c, sample[i].payload))
			return -1;
	}
	fx->boundary[NSAMPLE] = off;
	if (stream_writer__free(w))
		return -1;
	if (stat(fx->path, &st) || (size_t)st.st_size != off)
		return -1;
	fx->size = off;
	fx->bytes = malloc(off);
	f = fopen(fx->path, "rb");
	if (!fx->bytes || !f || fread(fx->bytes, 1, off, f) != off)
		return -1;
	fclose(f);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	char other[128];

	snprintf(other, sizeof(other), "%s/damaged", fx->dir);
	unlink(other);
	unlink(fx->path);
	rmdir(fx->dir);
	free(fx->bytes);
	free(fx);
	return 0;
}

static int replay_bytes(struct fixture *fx, const void *bytes, size_t len, struct seen *s)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/damaged", fx->dir);
	write_file(path, bytes, len);
	memset(s, 0, sizeof(*s));
	s->fail_at = -1;
	return stream__replay(path, record_sink, s);
}

static void test_round_trip(void **state)
{
	struct fixture *fx = *state;
	static struct seen s;
	int i;

	/* the directory form and the file form name the same stream */
	const char *paths[] = {fx->dir, fx->path};
	for (int p = 0; p < 2; p++) {
		memset(&s, 0, sizeof(s));
		s.fail_at = -1;
		assert_int_equal(stream__replay(paths[p], record_sink, &s), 0);
		assert_int_equal(s.n, NSAMPLE);
		for (i = 0; i < NSAMPLE; i++) {
			const struct ms_chunk *got = &s.chunks[i].c, *want = &sample[i].c;

			assert_int_equal(got->kind, want->kind);
			assert_int_equal(got->source, want->source);
			assert_int_equal(got->len, want->len);
			assert_int_equal(got->time, want->time);
			assert_int_equal(got->reserved, 0);
			if (want->len)
				assert_memory_equal(s.chunks[i].payload, sample[i].payload,
						    want->len);
		}
	}
	/* the header: magic, then the record ABI version */
	assert_memory_equal(fx->bytes, MS_RAW_MAGIC, 8);
	/* padding after the 13-byte BPF record is zero */
	assert_int_equal(fx->bytes[fx->boundary[2] + sizeof(struct ms_chunk) + 13], 0);
	assert_int_equal(fx->boundary[3] - fx->boundary[2], sizeof(struct ms_chunk) + 16);
}

/* Cut the file at every length: the complete chunks before the cut come
 * back and replay succeeds, as for a recording killed by SIGKILL mid-write
 * (no END chunk yet); a cut file header is -EBADMSG.  After an END chunk, a
 * cut chunk is damage: -EBADMSG. */
static void test_truncated(void **state)
{
	struct fixture *fx = *state;
	static struct seen s;
	size_t cut;

	for (cut = 0; cut < fx->size; cut++) {
		int complete = 0, ret, i;
		bool at_boundary = false;

		for (i = 0; i <= NSAMPLE; i++) {
			if (fx->boundary[i] <= cut && i < NSAMPLE && fx->boundary[i + 1] <= cut)
				complete = i + 1;
			if (fx->boundary[i] == cut)
				at_boundary = true;
		}
		ret = replay_bytes(fx, fx->bytes, cut, &s);
		if (at_boundary || cut >= FILE_HEADER_BYTES) {
			if (ret != 0)
				fail_msg("cut at %zu: expected 0, got %d", cut, ret);
		} else {
			if (ret != -EBADMSG)
				fail_msg("cut at %zu: expected -EBADMSG, got %d", cut, ret);
		}
		assert_int_equal(s.n, complete);
	}
	/* a complete stream (END seen) followed by a cut chunk header */
	{
		unsigned char *longer = calloc(1, fx->size + 10);
		int ret;

		assert_non_null(longer);
		memcpy(longer, fx->bytes, fx->size);
		longer[fx->size] = MS_CHUNK_ROUND;
		ret = replay_bytes(fx, longer, fx->size + 10, &s);
		assert_int_equal(ret, -EBADMSG);
		assert_int_equal(s.n, NSAMPLE);
		free(longer);
	}
}

static void expect_bad(struct fixture *fx, unsigned char *copy, const char *what)
{
	static struct seen s;
	int ret = replay_bytes(fx, copy, fx->size, &s);

	if (ret != -EBADMSG)
		fail_msg("%s: expected -EBADMSG, got %d", what, ret);
	memcpy(copy, fx->bytes, fx->size);
}

/*
 * The header's stream version (offset 12): this build's and version 1
 * (written as 0 before the field existed) replay; anything newer or older
 * is refused with -EPROTONOSUPPORT, as is a record ABI (offset 8) outside
 * MS_ABI_VERSION_MIN..MS_ABI_VERSION.
 */
static void test_versions(void **state)
{
	struct fixture *fx = *state;
	unsigned char *copy = malloc(fx->size);
	static struct seen s;
	uint32_t v;

	assert_non_null(copy);
	memcpy(&v, fx->bytes + 12, 4);
	assert_int_equal(v, MS_STREAM_VERSION); /* the writer stamps its version */
	memcpy(&v, fx->bytes + 8, 4);
	assert_int_equal(v, MS_ABI_VERSION);
	for (uint32_t ver = 0; ver <= MS_STREAM_VERSION + 1; ver++) {
		memcpy(copy, fx->bytes, fx->size);
		memcpy(copy + 12, &ver, 4);
		/* an older version's chunks carry no checksum: reserved 0 */
		if (ver < 3) {
			assert_int_equal(replay_bytes(fx, copy, fx->size, &s), -EBADMSG);
			for (int i = 0; i < NSAMPLE; i++)
				((struct ms_chunk *)(copy + fx->boundary[i]))->reserved = 0;
		}
		assert_int_equal(replay_bytes(fx, copy, fx->size, &s),
				 ver <= MS_STREAM_VERSION ? 0 : -EPROTONOSUPPORT);
		if (ver <= MS_STREAM_VERSION)
			assert_int_equal(s.n, NSAMPLE);
	}
	memcpy(copy, fx->bytes, fx->size);
	v = 0xffffffffu;
	memcpy(copy + 12, &v, 4);
	assert_int_equal(replay_bytes(fx, copy, fx->size, &s), -EPROTONOSUPPORT);
	memcpy(copy, fx->bytes, fx->size);
	v = MS_ABI_VERSION + 98;
	memcpy(copy + 8, &v, 4);
	assert_int_equal(replay_bytes(fx, copy, fx->size, &s), -EPROTONOSUPPORT);
	/* an older record ABI that reads the same replays; one before it does not */
	for (v = MS_ABI_VERSION_MIN - 1; v <= MS_ABI_VERSION + 1; v++) {
		memcpy(copy, fx->bytes, fx->size);
		memcpy(copy + 8, &v, 4);
		assert_int_equal(replay_bytes(fx, copy, fx->size, &s),
				 v >= MS_ABI_VERSION_MIN && v <= MS_ABI_VERSION ? 0
										 : -EPROTONOSUPPORT);
	}
	free(copy);
}

static void test_malformed(void **state)
{
	struct fixture *fx = *state;
	unsigned char *copy = malloc(fx->size);
	struct ms_chunk *bpf, *round;

	assert_non_null(copy);
	memcpy(copy, fx->bytes, fx->size);
	bpf = (struct ms_chunk *)(copy + fx->boundary[2]);
	round = (struct ms_chunk *)(copy + fx->boundary[1]);

	copy[0] = 'X';
	expect_bad(fx, copy, "bad magic");
	bpf->kind = 0;
	expect_bad(fx, copy, "kind 0");
	bpf = (struct ms_chunk *)(copy + fx->boundary[2]);
	bpf->kind = 77;
	expect_bad(fx, copy, "unknown kind");
	bpf->len = MS_CHUNK_MAX_PAYLOAD + 8;
	expect_bad(fx, copy, "payload larger than the maximum");
	bpf->len = 0xffffffffu;
	expect_bad(fx, copy, "length 2^32-1");
	bpf->len = 4000; /* runs past the end of the file: read as a cut stream */
	{
		static struct seen cut;

		assert_int_equal(replay_bytes(fx, copy, fx->size, &cut), 0);
		assert_int_equal(cut.n, 2); /* the chunks before it */
		memcpy(copy, fx->bytes, fx->size);
	}
	bpf->reserved ^= 1;
	expect_bad(fx, copy, "checksum (reserved) changed");
	bpf->time = 5;
	expect_bad(fx, copy, "time on a BPF chunk");
	copy[fx->boundary[2] + sizeof(struct ms_chunk) + 13] = 1;
	expect_bad(fx, copy, "nonzero padding");
	bpf->len = 4;
	expect_bad(fx, copy, "record shorter than its header");
	round->len = 8;
	expect_bad(fx, copy, "ROUND with a payload");
	/* META text without '=' */
	memset(copy + fx->boundary[0] + sizeof(struct ms_chunk), 'x', 21);
	expect_bad(fx, copy, "META without key=value");
	free(copy);
}

/*
 * Stream version 3: one flipped bit anywhere in a chunk's payload or
 * padding, or in its source or time, is found by the chunk's checksum
 * (before, a flip inside a payload replayed as if written so): -EBADMSG,
 * and the chunks before it came back, as for any damage.
 */
static void test_checksums(void **state)
{
	struct fixture *fx = *state;
	unsigned char *copy = malloc(fx->size);
	static struct seen s;

	assert_non_null(copy);
	for (int i = 0; i < NSAMPLE; i++) {
		size_t hdr = fx->boundary[i], end = fx->boundary[i + 1];
		size_t fields[] = { offsetof(struct ms_chunk, source),
				    offsetof(struct ms_chunk, time) };

		for (size_t off = hdr + sizeof(struct ms_chunk); off < end; off++) {
			for (int bit = 0; bit < 8; bit++) {
				memcpy(copy, fx->bytes, fx->size);
				copy[off] ^= (unsigned char)(1u << bit);
				if (replay_bytes(fx, copy, fx->size, &s) != -EBADMSG)
					fail_msg("chunk %d, byte %zu bit %d flipped: replayed", i,
						 off - hdr, bit);
				assert_int_equal(s.n, i);
			}
		}
		for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
			memcpy(copy, fx->bytes, fx->size);
			copy[hdr + fields[k]] ^= 0x10;
			assert_int_equal(replay_bytes(fx, copy, fx->size, &s), -EBADMSG);
			assert_int_equal(s.n, i);
		}
	}
	free(copy);
}

/* Random damage: every outcome is 0 or -EBADMSG, and nothing crashes
 * (run under ASan by `make check`).  Deterministic seed. */
static void test_random_damage(void **state)
{
	struct fixture *fx = *state;
	unsigned char *copy = malloc(fx->size);
	static struct seen s;
	uint32_t rng = 12345;
	int iter, bad = 0;

	assert_non_null(copy);
	for (iter = 0; iter < 2000; iter++) {
		int flips = 1 + iter % 4, k, ret;
		size_t len = fx->size;

		memcpy(copy, fx->bytes, fx->size);
		for (k = 0; k < flips; k++) {
			rng = rng * 1103515245u + 12345u;
			copy[FILE_HEADER_BYTES + (rng >> 8) % (fx->size - FILE_HEADER_BYTES)] ^=
			    (unsigned char)(1u << ((rng >> 4) & 7));
		}
		if (iter % 3 == 0) {
			rng = rng * 1103515245u + 12345u;
			len = (rng >> 8) % (fx->size + 1);
		}
		ret = replay_bytes(fx, copy, len, &s);
		if (ret != 0 && ret != -EBADMSG)
			fail_msg("iteration %d: unexpected %d", iter, ret);
		bad += ret == -EBADMSG;
	}
	assert_true(bad > 0);
	free(copy);
}

static void test_sink_error_stops(void **state)
{
	struct fixture *fx = *state;
	static struct seen s;

	memset(&s, 0, sizeof(s));
	s.fail_at = 3;
	assert_int_equal(stream__replay(fx->path, record_sink, &s), -EINTR);
	assert_int_equal(s.n, 3);
}

static void test_errors(void **state)
{
	struct fixture *fx = *state;
	struct ms_chunk big = {.kind = MS_CHUNK_BPF, .len = MS_CHUNK_MAX_PAYLOAD + 1};
	struct stream_writer *w;
	static char payload[8];
	char dir[128];
	static struct seen s;

	assert_int_equal(stream__replay("/nonexistent/ms/stream.msraw", record_sink, &s), -ENOENT);
	/* an empty file is not a stream */
	assert_int_equal(replay_bytes(fx, fx->bytes, 0, &s), -EBADMSG);
	/* a payload over the limit is refused when written */
	snprintf(dir, sizeof(dir), "%s/w", fx->dir);
	w = stream_writer__new(dir);
	assert_non_null(w);
	assert_int_equal(stream_writer__sink(w, &big, payload), -E2BIG);
	/* not published under the final name until complete */
	snprintf(dir, sizeof(dir), "%s/w/%s", fx->dir, MS_RAW_FILE);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(stream_writer__free(w), 0);
	assert_int_equal(access(dir, F_OK), 0);
	snprintf(dir, sizeof(dir), "%s/w/%s", fx->dir, MS_RAW_FILE);
	unlink(dir);
	snprintf(dir, sizeof(dir), "%s/w", fx->dir);
	rmdir(dir);
	assert_int_equal(stream_writer__free(NULL), 0);
}

/* Every typed META key is a row of docs/capture-format.md's key table,
 * with the same type and unit ("| `key` | type | unit | meaning |"). */
static void test_meta_keys_documented(void **state)
{
	FILE *f = fopen("docs/capture-format.md", "r");
	char *doc = NULL;
	size_t cap = 0;
	ssize_t n;

	assert_non_null(f);
	n = getdelim(&doc, &cap, '\0', f);
	fclose(f);
	assert_true(n > 0);
	for (int i = 0; i < MS_META__COUNT; i++) {
		const struct ms_meta_key *k = &ms_meta_keys[i];
		char row[256];

		snprintf(row, sizeof(row), "\n| `%s` | %s | %s |", k->key,
			 ms_meta_type__name(k->type), k->unit[0] ? k->unit : "\u2014");
		if (!strstr(doc, row))
			fail_msg("docs/capture-format.md has no row '%s'", row + 1);
	}
	free(doc);
}

static int meta_sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	char *out = ctx;

	assert_int_equal(c->kind, MS_CHUNK_META);
	memcpy(out, payload, c->len);
	out[c->len] = '\0';
	return 0;
}

/* Writers refuse a value that is not of its key's type; readers count it. */
static void test_meta_types(void **state)
{
	char out[256] = "";
	struct ms_meta m;

	assert_int_equal(ms_meta__emit_u64(meta_sink, out, MS_META_FREQ_HZ, 999), 0);
	assert_string_equal(out, "freq_hz=999");
	assert_int_equal(ms_meta__emit_u64(meta_sink, out, MS_META_PERF_SAMPLE_TYPE, 0x283), 0);
	assert_string_equal(out, "perf.sample_type=0x283");
	assert_int_equal(ms_meta__emit_u64(meta_sink, out, MS_META_OFF_CPU, 7), 0);
	assert_string_equal(out, "off_cpu=1");
	assert_int_equal(ms_meta__emit_number(meta_sink, out, MS_META_BUDGET_PCT, 2.5), 0);
	assert_string_equal(out, "budget.pct=2.5");
	out[0] = '\0';
	assert_int_equal(ms_meta__emit(meta_sink, out, MS_META_STACK_SIZE, "16k"), -EINVAL);
	assert_int_equal(ms_meta__emit_u64(meta_sink, out, MS_META_EVENT, 1), -EINVAL);
	assert_int_equal(ms_meta__emit(meta_sink, out, MS_META_UNKNOWN, "x"), -EINVAL);
	assert_string_equal(out, "");

	assert_int_equal(ms_meta__parse("stack_size=16384", 16, &m), 0);
	assert_int_equal(m.id, MS_META_STACK_SIZE);
	assert_int_equal(m.u64, 16384);
	ms_meta__release(&m);
	assert_int_equal(ms_meta__parse("perf.sample_type=0x283", 22, &m), 0);
	assert_int_equal(m.u64, 0x283);
	ms_meta__release(&m);
	assert_int_equal(ms_meta__parse("future.key=anything", 19, &m), 0);
	assert_int_equal(m.id, MS_META_UNKNOWN);
	assert_string_equal(m.value, "anything");
	ms_meta__release(&m);
	assert_int_equal(ms_meta__parse("stack_size=lots", 15, &m), -EBADMSG);
	assert_int_equal(ms_meta__parse("perf.sample_type=283", 20, &m), -EBADMSG);
	assert_int_equal(ms_meta__parse("off_cpu=2", 9, &m), -EBADMSG);
	assert_int_equal(ms_meta__parse("=1", 2, &m), -EBADMSG);
	assert_int_equal(ms_meta__parse("novalue", 7, &m), -EBADMSG);
}

/*
 * The automatic ring for a rate, CPU count, copy size and mode: with the
 * in-kernel unwinder a sample carries its copy only when handed over, so
 * the 999 Hz default (auto = dwarf-kernel, 16 KiB copies) on 2 CPUs gets
 * 4 MiB, not the 16 MiB a userspace DWARF recording needs; verifying
 * copies every stack and is sized as dwarf (collector.c).
 */
static void test_ring_auto_sizes(void **state)
{
	/* 8 + 144 + 2 * 127 * 8 bytes before any copy */
	assert_int_equal(ms_ringbuf_record_bytes(0, false), 2184);
	assert_int_equal(ms_ringbuf_record_bytes(16384, false), 2184 + 16384);
	assert_int_equal(ms_ringbuf_record_bytes(16384, true), 2184 + 88 + 16384 / 16);

	assert_int_equal(ms_ringbuf_auto_bytes(999, 2, 16384, true), 4u << 20);
	assert_int_equal(ms_ringbuf_auto_bytes(999, 2, 16384, false), 16u << 20);
	assert_int_equal(ms_ringbuf_auto_bytes(999, 2, 0, false), 4u << 20); /* fp */
	assert_int_equal(ms_ringbuf_auto_bytes(999, 2, 65536, true), 8u << 20);
	assert_int_equal(ms_ringbuf_auto_bytes(999, 8, 16384, true), 16u << 20);
	assert_int_equal(ms_ringbuf_auto_bytes(4999, 2, 16384, true), 16u << 20);
	assert_int_equal(ms_ringbuf_auto_bytes(99, 1, 0, false), MS_RINGBUF_AUTO_MIN);
	assert_int_equal(ms_ringbuf_auto_bytes(99999, 64, 65536, false), MS_RINGBUF_AUTO_MAX);
	assert_int_equal(ms_ringbuf_auto_bytes(999, 0, 0, false), 2u << 20); /* 0 CPUs: 1 */
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_versions, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_checksums, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_random_damage, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sink_error_stops, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
	    cmocka_unit_test(test_meta_keys_documented),
	    cmocka_unit_test(test_meta_types),
	    cmocka_unit_test(test_ring_auto_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
