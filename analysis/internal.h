/* SPDX-License-Identifier: MIT */
/*
 * Private helpers shared by the files of analysis/; not part of the analysis API.
 *
 * u64map: an open-addressing map from a u64 key to a u32 value (a row
 * index).  It is only ever probed, never iterated, so its layout cannot leak
 * hash order into results.  Values must be < U64MAP_EMPTY.
 */
#ifndef MS_ANALYSIS_INTERNAL_H
#define MS_ANALYSIS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

#define U64MAP_EMPTY 0xffffffffu

struct u64map {
	uint64_t *keys;
	uint32_t *vals; /* U64MAP_EMPTY marks a free slot */
	uint32_t cap;	/* power of two, or 0 before the first insert */
	uint32_t n;
};

/* Embedded: zero-initialize or call init.  release accepts a zeroed map. */
void u64map__init(struct u64map *m);
void u64map__release(struct u64map *m);

/*
 * Find key; if absent, insert it with value *val.  On return *val holds the
 * stored value and *inserted says whether it was new.  Returns 0 or -ENOMEM.
 */
int u64map__upsert(struct u64map *m, uint64_t key, uint32_t *val, bool *inserted);

/* Stored value for key, or U64MAP_EMPTY. */
uint32_t u64map__get(const struct u64map *m, uint64_t key);

/* A 64-bit mixer (splitmix64's finalizer): good spread for packed ids. */
static inline uint64_t analysis__mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/*
 * Make room for need elements of size elem in *p (capacity *cap, in
 * elements), growing geometrically.  Returns 0 or -ENOMEM (*p unchanged).
 */
int analysis__grow(void **p, uint32_t *cap, uint64_t need, size_t elem);

/*
 * One aggregated stack: the samples of a query that share a root key (a
 * thread root, or CAPTURE_NONE without per_thread) and a capture stack id
 * (CAPTURE_NONE for an empty stack).
 */
struct analysis_agg {
	uint32_t root;
	uint32_t stack;
	uint64_t weight;
	uint64_t samples;
	bool clipped; /* off-CPU intervals cut by the window: a clipped_key leaf */
};

/*
 * Aggregate the samples q matches per (root, stack); *out (malloc'd, caller
 * frees) holds *n rows sorted by (root, stack, clipped).  Returns 0, -EINVAL for a
 * bad query, or -ENOMEM.
 */
int analysis__aggregate(const struct analysis_names *names, const struct analysis_query *q,
			struct analysis_agg **out, uint32_t *n);

/* Compare two keys in display order (rank). */
static inline int analysis__key_cmp(const struct analysis_names *names, uint32_t a, uint32_t b)
{
	uint32_t ra = names->keys[a].rank, rb = names->keys[b].rank;

	return ra < rb ? -1 : ra > rb;
}

/*
 * *acc += v, saturating at UINT64_MAX: weights are untrusted u64s, and a
 * saturated sum keeps every part <= its whole, so no share exceeds 100%.
 */
static inline void analysis__sat_add(uint64_t *acc, uint64_t v)
{
	if (__builtin_add_overflow(*acc, v, acc))
		*acc = UINT64_MAX;
}

#endif
