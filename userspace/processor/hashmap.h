/* SPDX-License-Identifier: MIT */
/*
 * A small open-addressing hash map from u64 keys to u64 values, for the
 * processor's per-record lookups (tid -> thread, frame key -> frame id).
 * Linear probing, power-of-two capacity, grows at 50% load; lookups
 * allocate nothing.  Key 0 is reserved as "empty": callers store key+1 or
 * mix a tag in.  Iteration order is not used for any output.
 */
#ifndef MS_PROCESSOR_HASHMAP_H
#define MS_PROCESSOR_HASHMAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint32_t cap; /* power of two, 0 before first insert */
	uint32_t len;
};

static inline uint64_t u64map__hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

/* Returns a pointer to the value for key, or NULL.  key must not be 0. */
static inline uint64_t *u64map__get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (uint32_t i = u64map__hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

static inline int u64map__grow(struct u64map *m)
{
	uint32_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *nk = calloc(ncap, sizeof(*nk)), *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		uint32_t j = u64map__hash(m->keys[i]) & (ncap - 1);
		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

/* Insert or replace.  Returns 0 or -ENOMEM.  key must not be 0. */
static inline int u64map__put(struct u64map *m, uint64_t key, uint64_t val)
{
	uint64_t *v = u64map__get(m, key);

	if (v) {
		*v = val;
		return 0;
	}
	if ((m->len + 1) * 2 > m->cap && u64map__grow(m))
		return -ENOMEM;
	uint32_t i = u64map__hash(key) & (m->cap - 1);
	while (m->keys[i])
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->len++;
	return 0;
}

static inline void u64map__release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = m->vals = NULL;
	m->cap = m->len = 0;
}

#endif
