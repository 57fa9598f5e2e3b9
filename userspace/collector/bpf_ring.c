// SPDX-License-Identifier: MIT
/*
 * Bounded drain rounds over a BPF ring buffer (bpf_ring.h).  The records
 * themselves are read by libbpf; this file only decides where a round ends:
 * at the producer position seen when it started (the consumer and producer
 * positions are read through a read-only mapping of the ring's first two
 * pages, include/uapi/linux/bpf.h, "BPF_MAP_TYPE_RINGBUF").
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/types.h>

#include "bpf_ring.h"

/* Returned by the libbpf callback to end a round early (never escapes). */
#define ROUND_DONE (-ECANCELED)
/* Each record's header (BPF_RINGBUF_HDR_SZ) and 8-byte rounding. */
#define REC_BYTES(len) ((((__u64)(len)) + 8 + 7) & ~7ull)

struct bpf_ring {
	struct ring_buffer *rb;
	void *pos;	 /* consumer page, producer page (read-only) */
	size_t pos_len;
	__u64 ring_bytes;
	__u64 left;	 /* bytes this round may still read */
	int count;	 /* records this round */
	int cb_err;	 /* the callback's own error, if any */
	bpf_ring_record_fn fn;
	void *ctx;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct bpf_ring *r = ctx;
	int err = r->fn(r->ctx, data, size);
	__u64 n = REC_BYTES(size);

	if (err) {
		r->cb_err = err;
		return err < 0 ? err : -EINVAL;
	}
	r->count++;
	r->left = r->left > n ? r->left - n : 0;
	return r->left ? 0 : ROUND_DONE;
}

struct bpf_ring *bpf_ring__new(int map_fd, size_t ring_bytes, bpf_ring_record_fn fn, void *ctx)
{
	struct bpf_ring *r = calloc(1, sizeof(*r));
	long page = sysconf(_SC_PAGESIZE);
	int err;

	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->ring_bytes = ring_bytes;
	r->pos_len = 2 * (size_t)page;
	r->pos = mmap(NULL, r->pos_len, PROT_READ, MAP_SHARED, map_fd, 0);
	if (r->pos == MAP_FAILED) {
		err = -errno;
		r->pos = NULL;
		goto cleanup;
	}
	r->rb = ring_buffer__new(map_fd, on_record, r, NULL);
	if (!r->rb) {
		err = -errno;
		goto cleanup;
	}
	return r;
cleanup:
	bpf_ring__free(r);
	errno = -err;
	return NULL;
}

int bpf_ring__drain(struct bpf_ring *r)
{
	const char *base = r->pos;
	long page = (long)(r->pos_len / 2);
	__u64 cons = __atomic_load_n((const __u64 *)base, __ATOMIC_ACQUIRE);
	__u64 prod = __atomic_load_n((const __u64 *)(base + page), __ATOMIC_ACQUIRE);
	int n;

	if (prod <= cons)
		return 0;
	r->left = prod - cons < r->ring_bytes ? prod - cons : r->ring_bytes;
	r->cb_err = 0;
	r->count = 0;
	n = ring_buffer__consume(r->rb);
	if (r->cb_err)
		return r->cb_err;
	if (n < 0 && n != ROUND_DONE)
		return n;
	return r->count;
}

void bpf_ring__free(struct bpf_ring *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	if (r->pos)
		munmap(r->pos, r->pos_len);
	free(r);
}
