// SPDX-License-Identifier: MIT
/*
 * The per-module symbol table: candidates from every source (.symtab,
 * .dynsym, a debug file's .symtab, kallsyms) are merged here into one
 * sorted, deduplicated array of [start, end) ranges plus one names arena,
 * and looked up by binary search without allocating.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/symbols/symbols_internal.h"

void sym_builder__init(struct sym_builder *b) { memset(b, 0, sizeof(*b)); }

void sym_builder__release(struct sym_builder *b)
{
	if (!b)
		return;
	free(b->v);
	free(b->names);
	memset(b, 0, sizeof(*b));
}

int sym_builder__reserve(struct sym_builder *b, size_t symbols, size_t name_bytes)
{
	void *p;

	if (symbols > SYM_MAX_SYMBOLS - b->n || name_bytes >= UINT32_MAX - b->names_len)
		return -E2BIG;
	if (b->cap - b->n < symbols) {
		p = realloc(b->v, (b->n + symbols) * sizeof(*b->v));
		if (!p)
			return -ENOMEM;
		b->v = p;
		b->cap = b->n + symbols;
	}
	if (b->names_cap - b->names_len < name_bytes) {
		p = realloc(b->names, b->names_len + name_bytes);
		if (!p)
			return -ENOMEM;
		b->names = p;
		b->names_cap = b->names_len + name_bytes;
	}
	return 0;
}

int sym_builder__add(struct sym_builder *b, uint64_t start, uint64_t size, uint64_t limit,
		     const char *name, size_t len, uint32_t rank, uint32_t owner)
{
	struct sym_candidate *c;

	if (b->n >= SYM_MAX_SYMBOLS)
		return -E2BIG;
	if (len >= UINT32_MAX - b->names_len)
		return -E2BIG;
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		void *v = realloc(b->v, cap * sizeof(*b->v));

		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	if (b->names_cap - b->names_len < len + 1) {
		size_t cap = b->names_cap ? b->names_cap : 16384;
		void *names;

		while (cap - b->names_len < len + 1)
			cap *= 2;
		names = realloc(b->names, cap);
		if (!names)
			return -ENOMEM;
		b->names = names;
		b->names_cap = cap;
	}

	c = &b->v[b->n++];
	c->start = start;
	c->size = size;
	c->limit = limit;
	c->name = (uint32_t)b->names_len;
	c->owner = owner;
	c->rank = rank;
	memcpy(b->names + b->names_len, name, len);
	b->names[b->names_len + len] = '\0';
	b->names_len += len + 1;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (s[n] == '_')
		n++;
	return n;
}

int sym_name_cmp(const char *na, const char *nb)
{
	size_t ua = leading_underscores(na), ub = leading_underscores(nb), la, lb;

	if (ua != ub)
		return ua < ub ? -1 : 1;
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(na, nb);
}

/* What is sorted: 16 bytes, so glibc's merge sort moves words instead of
 * calling memcpy per element (which cost a third of a load). */
struct sort_key {
	uint64_t start;
	uint32_t rank;
	uint32_t idx; /* into the builder's candidates */
};

/*
 * Order by start, then best name first: higher rank (global > weak > local,
 * typed > untyped), then sym_name_cmp.  The tie-breaks after rank only make
 * the choice deterministic.
 */
static int sort_key_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_key *ka = pa, *kb = pb;
	const struct sym_builder *builder = arg;
	const struct sym_candidate *a, *b;
	int c;

	if (ka->start != kb->start)
		return ka->start < kb->start ? -1 : 1;
	if (ka->rank != kb->rank)
		return ka->rank > kb->rank ? -1 : 1;
	a = &builder->v[ka->idx];
	b = &builder->v[kb->idx];
	c = sym_name_cmp(builder->names + a->name, builder->names + b->name);
	if (c)
		return c;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return 0;
}

/* Past this many ascending runs the keys are sorted by qsort_r instead. */
#define SORT_RUNS_MAX 64

/*
 * Sort keys[0..n) by sort_key_cmp.  Symbol sources often come nearly sorted:
 * /proc/kallsyms lists the core kernel by address, then each module and BPF
 * program in a few ascending runs (about ten on 121k lines; aliases of one
 * address are put in order where they stand), so the input is split into
 * its ascending runs and, when they are few, merged pairwise
 * (n per level) instead of sorted from scratch (n log n: qsort_r was half of
 * sym_builder__finish and a tenth of loading kallsyms).  Returns 0 or
 * -ENOMEM.
 */
static int sort_keys(struct sort_key *keys, size_t n, struct sym_builder *b)
{
	size_t bounds[SORT_RUNS_MAX + 1], runs = 0, i;
	struct sort_key *tmp, *src, *dst, *t;

	bounds[runs++] = 0;
	for (i = 1; i < n; i++) {
		size_t j;

		if (sort_key_cmp(&keys[i - 1], &keys[i], b) <= 0)
			continue;
		if (keys[i - 1].start == keys[i].start) {
			/* Aliases of one address in another order (kallsyms has a
			 * few hundred): put this one in place among them. */
			for (j = i; j > bounds[runs - 1] && keys[j - 1].start == keys[j].start &&
				    sort_key_cmp(&keys[j - 1], &keys[j], b) > 0;
			     j--) {
				struct sort_key swap = keys[j];

				keys[j] = keys[j - 1];
				keys[j - 1] = swap;
			}
			continue;
		}
		if (runs == SORT_RUNS_MAX) {
			qsort_r(keys, n, sizeof(*keys), sort_key_cmp, b);
			return 0;
		}
		bounds[runs++] = i;
	}
	if (runs == 1)
		return 0;
	bounds[runs] = n;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	src = keys;
	dst = tmp;
	while (runs > 1) {
		size_t r, out = 0;

		/* Merge runs 2r and 2r + 1 into dst; an odd last run is copied. */
		for (r = 0; r < runs; r += 2) {
			size_t a = bounds[r], a_end = bounds[r + 1];
			size_t c = a_end, c_end = r + 1 < runs ? bounds[r + 2] : a_end;
			size_t o = a;

			while (a < a_end && c < c_end)
				dst[o++] =
				    sort_key_cmp(&src[c], &src[a], b) < 0 ? src[c++] : src[a++];
			memcpy(dst + o, src + a, (a_end - a) * sizeof(*dst));
			o += a_end - a;
			memcpy(dst + o, src + c, (c_end - c) * sizeof(*dst));
			bounds[out++] = bounds[r];
		}
		bounds[out] = n;
		runs = out;
		t = src;
		src = dst;
		dst = t;
	}
	if (src != keys)
		memcpy(keys, src, n * sizeof(*keys));
	free(tmp);
	return 0;
}

static uint64_t add_clamped(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Gives back a buffer's unused tail (glibc maps large buffers apart and
 * shrinks them in place); keeps the buffer when that fails. */
static void *shrink(void *p, size_t bytes)
{
	void *q = bytes ? realloc(p, bytes) : NULL;

	return q ? q : p;
}

/*
 * Rules, in order:
 *  1. One entry per start address.  Its name is the best-ranked candidate's
 *     (global over weak over local); its size the largest of the group.
 *  2. An unsized entry strictly inside an earlier sized one is dropped (an
 *     assembler label within a function, not a function).
 *  3. An unsized entry ends at the next entry of the same owner, else after
 *     SYM_UNSIZED_TAIL bytes or at the next entry, whichever is first; and
 *     never past its limit (its section's end).
 *  4. parent links let a lookup fall back from a nested symbol to the one
 *     enclosing it.
 *
 * Memory: the candidates are read in place through the sorted keys (no
 * sorted copy of them), and the kept names are packed in place at the
 * front of the builder's arena, which becomes the module's (no second
 * arena): kallsyms' 121k symbols, built here then, peaked at 18 MiB of
 * heap with both copies, 12 MiB without (kallsyms.c has its own since).
 */
int sym_builder__finish(struct sym_builder *b, struct sym_module *m)
{
	struct sort_key *keys = NULL;
	struct sym_entry *syms = NULL;
	uint64_t *starts = NULL;
	uint8_t *kept = NULL;
	uint64_t cover_end = 0;
	size_t i, j, k = 0, names_len = 0;
	int err = 0;

	if (b->n == 0)
		goto cleanup;
	b->v = shrink(b->v, b->n * sizeof(*b->v));
	b->cap = b->n;
	b->names = shrink(b->names, b->names_len);
	b->names_cap = b->names_len;
	keys = malloc(b->n * sizeof(*keys));
	kept = calloc((b->n + 7) / 8, 1);
	if (!keys || !kept) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < b->n; i++) {
		keys[i].start = b->v[i].start;
		keys[i].rank = b->v[i].rank;
		keys[i].idx = (uint32_t)i;
	}
	err = sort_keys(keys, b->n, b);
	if (err)
		goto cleanup;

	/* Rules 1 and 2, compacting keys in place (k <= i always); a kept
	 * candidate's size becomes its group's. */
	for (i = 0; i < b->n; i = j) {
		struct sym_candidate *best = &b->v[keys[i].idx];
		uint64_t sized_end = 0;

		for (j = i; j < b->n && keys[j].start == best->start; j++) {
			const struct sym_candidate *c = &b->v[keys[j].idx];

			if (c->size) {
				uint64_t e = add_clamped(c->start, c->size);

				if (e > sized_end)
					sized_end = e;
			}
		}
		if (!sized_end && best->start < cover_end)
			continue;
		best->size = sized_end ? sized_end - best->start : 0;
		if (sized_end > cover_end)
			cover_end = sized_end;
		kept[keys[i].idx / 8] |= (uint8_t)(1u << (keys[i].idx % 8));
		keys[k++] = keys[i];
	}

	/* The kept names packed at the arena's front, in arena order (a
	 * candidate's name is after every earlier candidate's). */
	for (i = 0; i < b->n; i++) {
		struct sym_candidate *c = &b->v[i];
		size_t len;

		if (!(kept[i / 8] & (1u << (i % 8))))
			continue;
		len = strlen(b->names + c->name) + 1;
		memmove(b->names + names_len, b->names + c->name, len);
		c->name = (uint32_t)names_len;
		names_len += len;
	}
	b->names = shrink(b->names, names_len);
	b->names_len = b->names_cap = names_len;

	syms = malloc(k * sizeof(*syms));
	starts = malloc(k * sizeof(*starts));
	if (!syms || !starts) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < k; i++) {
		const struct sym_candidate *c = &b->v[keys[i].idx];
		struct sym_entry *e = &syms[i];

		starts[i] = c->start;
		if (c->size) {
			e->end = add_clamped(c->start, c->size);
		} else {
			/* Rule 3. */
			e->end = add_clamped(c->start, SYM_UNSIZED_TAIL);
			if (i + 1 < k) {
				const struct sym_candidate *next = &b->v[keys[i + 1].idx];

				if (next->owner == c->owner || next->start < e->end)
					e->end = next->start;
			}
			if (c->limit > c->start && c->limit < e->end)
				e->end = c->limit;
		}
		e->name = c->name;

		/* Rule 4: walk the previous entry's chain of enclosing ranges;
		 * entries skipped here are never on a later chain either, so the
		 * whole pass is linear. */
		e->parent = i ? (uint32_t)(i - 1) : SYM_NO_PARENT;
		while (e->parent != SYM_NO_PARENT && syms[e->parent].end <= c->start)
			e->parent = syms[e->parent].parent;
	}

	m->starts = starts;
	m->syms = syms;
	m->nr_syms = k;
	m->names = b->names;
	m->names_len = names_len;
	b->names = NULL;
	starts = NULL;
	syms = NULL;
cleanup:
	free(kept);
	free(keys);
	free(starts);
	free(syms);
	sym_builder__release(b);
	return err;
}

size_t sym_table__find(const struct sym_module *m, uint64_t addr)
{
	const uint64_t *base = m->starts;
	size_t len = m->nr_syms, half;
	uint32_t i;
	int depth;

	if (!len || addr < base[0])
		return SIZE_MAX;
	/* Last start <= addr.  Branch-free halving (the compiler emits a
	 * conditional move): random addresses defeat branch prediction, which
	 * made the classic loop three times slower. */
	while (len > 1) {
		half = len / 2;
		base = base[half] <= addr ? base + half : base;
		len -= half;
	}
	i = (uint32_t)(base - m->starts);
	for (depth = 0; depth < SYM_MAX_NESTING && i != SYM_NO_PARENT; depth++) {
		if (addr < m->syms[i].end)
			return i;
		i = m->syms[i].parent;
	}
	return SIZE_MAX;
}
