/* SPDX-License-Identifier: MIT */
/*
 * A BPF ring buffer read one bounded round at a time.
 *
 * libbpf's ring_buffer__consume() keeps reading while the producer keeps
 * writing, so a producer faster than its reader never lets a drain round
 * end: everything it reads piles up behind one watermark (issue 14: 2.6 GB
 * RSS in 10 s).  A round here reads only what the ring held when it started
 * (the producer position read once, at the start), at most the ring's size;
 * what arrives meanwhile waits for the next round, or, if the ring fills,
 * is dropped by the kernel and counted (sampler.ringbuf_full).
 */
#ifndef MS_COLLECTOR_BPF_RING_H
#define MS_COLLECTOR_BPF_RING_H

#include <stddef.h>

/* Called once per record, in ring order; nonzero ends the round with it. */
typedef int (*bpf_ring_record_fn)(void *ctx, const void *rec, size_t len);

struct bpf_ring;

/* Reader of the BPF_MAP_TYPE_RINGBUF map_fd, ring_bytes long.  NULL with
 * errno set on failure. */
struct bpf_ring *bpf_ring__new(int map_fd, size_t ring_bytes, bpf_ring_record_fn fn, void *ctx);

/* One round: the records the ring held when it started.  Returns the records
 * read or -errno (a callback's error passes through). */
int bpf_ring__drain(struct bpf_ring *r);

/* Accepts NULL. */
void bpf_ring__free(struct bpf_ring *r);

#endif
