/* SPDX-License-Identifier: MIT */
/*
 * A small open-addressing map from a pair of u64 to a u32 value, for the
 * converters' interning (functions, samples, strings by content hash).
 * Lookup order never reaches an output: callers assign ids in insertion
 * order.  Grows at 1/2 load; values are stored as given.
 */
#ifndef MS_CAPTURE_FORMATS_KEYMAP_H
#define MS_CAPTURE_FORMATS_KEYMAP_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct keymap_slot {
	uint64_t a, b;
	uint32_t value;
	uint32_t used;
};

struct keymap {
	struct keymap_slot *slots;
	size_t cap; /* power of two or 0 */
	size_t len;
};

static inline uint64_t keymap__mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

static inline size_t keymap__index(const struct keymap *m, uint64_t a, uint64_t b)
{
	return (size_t)keymap__mix(a ^ keymap__mix(b + 0x9e3779b97f4a7c15ull)) & (m->cap - 1);
}

/* Value of (a, b) in *value: true if present. */
static inline bool keymap__get(const struct keymap *m, uint64_t a, uint64_t b, uint32_t *value)
{
	size_t i;

	if (!m->cap)
		return false;
	for (i = keymap__index(m, a, b); m->slots[i].used; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].a == a && m->slots[i].b == b) {
			*value = m->slots[i].value;
			return true;
		}
	}
	return false;
}

/* Insert (a, b) -> value; (a, b) must be absent.  Returns 0 or -ENOMEM. */
static inline int keymap__put(struct keymap *m, uint64_t a, uint64_t b, uint32_t value)
{
	size_t i;

	if ((m->len + 1) * 2 > m->cap) {
		struct keymap old = *m;
		size_t ncap = m->cap ? m->cap * 2 : 256;

		m->slots = calloc(ncap, sizeof(*m->slots));
		if (!m->slots) {
			*m = old;
			return -ENOMEM;
		}
		m->cap = ncap;
		m->len = 0;
		for (i = 0; i < old.cap; i++)
			if (old.slots[i].used)
				keymap__put(m, old.slots[i].a, old.slots[i].b, old.slots[i].value);
		free(old.slots);
	}
	for (i = keymap__index(m, a, b); m->slots[i].used; i = (i + 1) & (m->cap - 1))
		;
	m->slots[i] = (struct keymap_slot){ .a = a, .b = b, .value = value, .used = 1 };
	m->len++;
	return 0;
}

static inline void keymap__release(struct keymap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->len = 0;
}

/* FNV-1a of a NUL-terminated string, mixed. */
static inline uint64_t keymap__hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return keymap__mix(h);
}

#endif
