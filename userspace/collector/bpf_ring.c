// SPDX-License-Identifier: MIT
/*
 * Bounded drain rounds over a BPF ring buffer (bpf_ring.h), read here rather
 * than by libbpf so that the ring's data is mapped once.
 *
 * The kernel's ring is two pages of positions (the consumer's, writable by
 * the reader, and the producer's) followed by the data pages, which the
 * kernel maps twice in a row so that a record crossing the end reads as one
 * (include/uapi/linux/bpf.h, "BPF_MAP_TYPE_RINGBUF"; kernel/bpf/ringbuf.c).
 * libbpf maps both copies, and every page of a ring's mapping is resident
 * from mmap on (remap_vmalloc_range), so a 32 MiB ring cost 64 MiB of the
 * recorder's RSS.  Here the data is mapped once; the rare record that
 * crosses the end is copied whole into a buffer of the reader's.
 *
 * A record: an 8-byte header (u32 length with the busy and discard bits,
 * u32 page offset), the payload, rounded up to 8 bytes.  The consumer
 * position is stored (release) after each record has been handed on, as
 * libbpf does, so the kernel reuses the space only once it was read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/types.h>

#include "bpf_ring.h"

/* Each record's header (BPF_RINGBUF_HDR_SZ) and 8-byte rounding. */
#define REC_BYTES(len) ((((__u64)(len)) + BPF_RINGBUF_HDR_SZ + 7) & ~7ull)

struct bpf_ring {
	__u64 *cons;	  /* consumer page (read-write) */
	const char *prod; /* producer page, then the data once (read-only) */
	const char *data;
	size_t page;
	__u64 ring_bytes; /* a power of two */
	char *wrap;	  /* a record that crosses the end, made whole */
	size_t wrap_cap;
	bpf_ring_record_fn fn;
	void *ctx;
};

struct bpf_ring *bpf_ring__new(int map_fd, size_t ring_bytes, bpf_ring_record_fn fn, void *ctx)
{
	struct bpf_ring *r = calloc(1, sizeof(*r));
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int err;

	if (!r)
		return NULL;
	r->fn = fn;
	r->ctx = ctx;
	r->page = (size_t)page;
	r->ring_bytes = ring_bytes;
	if (!ring_bytes || (ring_bytes & (ring_bytes - 1)) || ring_bytes % r->page) {
		err = -EINVAL;
		goto cleanup;
	}
	p = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->cons = p;
	p = mmap(NULL, r->page + ring_bytes, PROT_READ, MAP_SHARED, map_fd, (off_t)r->page);
	if (p == MAP_FAILED) {
		err = -errno;
		goto cleanup;
	}
	r->prod = p;
	r->data = r->prod + r->page;
	return r;
cleanup:
	bpf_ring__free(r);
	errno = -err;
	return NULL;
}

/* The payload of len bytes at ring offset off, whole. */
static const void *record_at(struct bpf_ring *r, __u64 off, __u32 len)
{
	__u64 first = r->ring_bytes - off;

	if (len <= first)
		return r->data + off;
	if (len > r->wrap_cap) {
		char *w = realloc(r->wrap, len);

		if (!w)
			return NULL;
		r->wrap = w;
		r->wrap_cap = len;
	}
	memcpy(r->wrap, r->data + off, first);
	memcpy(r->wrap + first, r->data, len - first);
	return r->wrap;
}

int bpf_ring__drain(struct bpf_ring *r)
{
	__u64 cons = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	__u64 prod = __atomic_load_n((const __u64 *)r->prod, __ATOMIC_ACQUIRE);
	__u64 mask = r->ring_bytes - 1, end;
	int count = 0, err = 0;

	if (prod <= cons)
		return 0;
	end = cons + (prod - cons < r->ring_bytes ? prod - cons : r->ring_bytes);
	while (cons < end) {
		const __u32 *hdr = (const __u32 *)(r->data + (cons & mask));
		__u32 word = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		__u32 len = word & ~(__u32)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		const void *rec;

		if (word & BPF_RINGBUF_BUSY_BIT)
			break; /* not committed yet: the next round reads it */
		if (REC_BYTES(len) > r->ring_bytes) {
			err = -EBADMSG; /* a length the kernel cannot have written */
			break;
		}
		if (!(word & BPF_RINGBUF_DISCARD_BIT)) {
			rec = record_at(r, ((cons & mask) + BPF_RINGBUF_HDR_SZ) & mask, len);
			if (!rec) {
				err = -ENOMEM;
				break;
			}
			err = r->fn(r->ctx, rec, len);
			if (err) {
				err = err < 0 ? err : -EINVAL;
				cons += REC_BYTES(len);
				__atomic_store_n(r->cons, cons, __ATOMIC_RELEASE);
				break;
			}
			count++;
		}
		cons += REC_BYTES(len);
		__atomic_store_n(r->cons, cons, __ATOMIC_RELEASE);
	}
	return err ? err : count;
}

void bpf_ring__free(struct bpf_ring *r)
{
	if (!r)
		return;
	if (r->prod)
		munmap((void *)r->prod, r->page + r->ring_bytes);
	if (r->cons)
		munmap(r->cons, r->page);
	free(r->wrap);
	free(r);
}
