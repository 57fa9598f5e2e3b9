// SPDX-License-Identifier: MIT
/* Growth and a u64 -> u32 open-addressing map for the analysis layer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int analysis__grow(void **p, uint32_t *cap, uint64_t need, size_t elem)
{
	uint64_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	if (need > UINT32_MAX - 1)
		return -ENOMEM;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	if (ncap > UINT32_MAX - 1)
		ncap = UINT32_MAX - 1;
	np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = (uint32_t)ncap;
	return 0;
}

void u64map__init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void u64map__release(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	u64map__init(m);
}

static uint32_t u64map__probe(const struct u64map *m, uint64_t key)
{
	uint32_t mask = m->cap - 1;
	uint32_t i = (uint32_t)analysis__mix64(key) & mask;

	while (m->vals[i] != U64MAP_EMPTY && m->keys[i] != key)
		i = (i + 1) & mask;
	return i;
}

static int u64map__rehash(struct u64map *m, uint32_t ncap)
{
	struct u64map nm = { .cap = ncap, .n = m->n };
	uint32_t i, j;

	nm.keys = malloc((size_t)ncap * sizeof(*nm.keys));
	nm.vals = malloc((size_t)ncap * sizeof(*nm.vals));
	if (!nm.keys || !nm.vals) {
		free(nm.keys);
		free(nm.vals);
		return -ENOMEM;
	}
	memset(nm.vals, 0xff, (size_t)ncap * sizeof(*nm.vals));
	for (i = 0; i < m->cap; i++) {
		if (m->vals[i] == U64MAP_EMPTY)
			continue;
		j = u64map__probe(&nm, m->keys[i]);
		nm.keys[j] = m->keys[i];
		nm.vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	*m = nm;
	return 0;
}

int u64map__upsert(struct u64map *m, uint64_t key, uint32_t *val, bool *inserted)
{
	uint32_t i;
	int err;

	/* Keep the load at or below one half. */
	if ((uint64_t)(m->n + 1) * 2 > m->cap) {
		if (m->cap >= (1u << 31))
			return -ENOMEM;
		err = u64map__rehash(m, m->cap ? m->cap * 2 : 64);
		if (err)
			return err;
	}
	i = u64map__probe(m, key);
	if (m->vals[i] != U64MAP_EMPTY) {
		*val = m->vals[i];
		*inserted = false;
		return 0;
	}
	m->keys[i] = key;
	m->vals[i] = *val;
	m->n++;
	*inserted = true;
	return 0;
}

uint32_t u64map__get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return U64MAP_EMPTY;
	return m->vals[u64map__probe(m, key)];
}
