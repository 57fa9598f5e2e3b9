// SPDX-License-Identifier: MIT
/*
 * Compact per-unit line tables and interned names (dwarf_linetab.h).
 *
 * dwarf_getsrc_die (libdw 0.188) binary-searches the unit's rows, sorted by
 * address (an end_sequence row before a normal one at the same address),
 * for the last row whose address is not above the one asked, and answers
 * nothing when that row ends a sequence.  So the answer only changes at a
 * row address, and at equal addresses the last row decides: the build
 * keeps, in address order, each address whose last row's answer (file,
 * line, or none) differs from the previous kept one.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/symbols/dwarf_linetab.h"

/* Interned strings are carved from chunks of this many bytes (or one of
 * their own when longer). */
#define NM_CHUNK (32u << 10)

struct nm_chunk {
	struct nm_chunk *next;
	char data[];
};

struct nm_slot {
	uint64_t hash;
	const char *s; /* NULL: empty */
};

struct dw_names {
	struct nm_chunk *chunks;
	char *cur; /* free room of the newest chunk */
	size_t left;
	struct nm_slot *slots;
	size_t cap, count; /* slots (a power of two), strings */
	size_t bytes;	   /* heap bytes held */
};

static uint64_t nm_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

struct dw_names *dw_names__new(void)
{
	struct dw_names *n = calloc(1, sizeof(*n));

	if (n)
		n->bytes = sizeof(*n);
	return n;
}

void dw_names__free(struct dw_names *n)
{
	if (!n)
		return;
	while (n->chunks) {
		struct nm_chunk *c = n->chunks;

		n->chunks = c->next;
		free(c);
	}
	free(n->slots);
	free(n);
}

size_t dw_names__bytes(const struct dw_names *n)
{
	return n ? n->bytes : 0;
}

static int nm_grow(struct dw_names *n)
{
	size_t cap = n->cap ? 2 * n->cap : 256;
	struct nm_slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n->cap; i++) {
		size_t j;

		if (!n->slots[i].s)
			continue;
		for (j = n->slots[i].hash & (cap - 1); s[j].s; j = (j + 1) & (cap - 1))
			;
		s[j] = n->slots[i];
	}
	free(n->slots);
	n->bytes += (cap - n->cap) * sizeof(*s);
	n->slots = s;
	n->cap = cap;
	return 0;
}

static char *nm_room(struct dw_names *n, size_t size)
{
	struct nm_chunk *c;
	size_t chunk;
	char *p;

	if (size > n->left) {
		chunk = size > NM_CHUNK ? size : NM_CHUNK;
		c = malloc(sizeof(*c) + chunk);
		if (!c)
			return NULL;
		c->next = n->chunks;
		n->chunks = c;
		n->cur = c->data;
		n->left = chunk;
		n->bytes += sizeof(*c) + chunk;
	}
	p = n->cur;
	n->cur += size;
	n->left -= size;
	return p;
}

int dw_names__intern(struct dw_names *n, const char *s, const char **out)
{
	size_t len, i;
	uint64_t h;
	char *copy;

	*out = NULL;
	if (!s)
		return 0;
	if (2 * (n->count + 1) > n->cap && nm_grow(n))
		return -ENOMEM;
	len = strlen(s);
	h = nm_hash(s, len);
	for (i = h & (n->cap - 1); n->slots[i].s; i = (i + 1) & (n->cap - 1)) {
		if (n->slots[i].hash == h && !strcmp(n->slots[i].s, s)) {
			*out = n->slots[i].s;
			return 0;
		}
	}
	copy = nm_room(n, len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, s, len + 1);
	n->slots[i] = (struct nm_slot){.hash = h, .s = copy};
	n->count++;
	*out = copy;
	return 0;
}

/* ---- the line table ---- */

struct lt_build {
	struct dw_linetab *t;
	size_t bcap, fcap, len, cap; /* blocks, files, bytes used and allocated */
	/* libdw's file name pointer -> index in t->files (open addressing) */
	struct {
		const char *src;
		uint32_t idx;
	} *map;
	size_t mcap, mcount;
	uint64_t last_addr;
	uint32_t last_line;
};

static int lt_put(struct lt_build *b, uint64_t v)
{
	if (b->cap - b->len < 10) {
		size_t cap = b->cap ? 2 * b->cap : 1024;
		uint8_t *p = realloc(b->t->bytes, cap);

		if (!p)
			return -ENOMEM;
		b->t->bytes = p;
		b->cap = cap;
	}
	while (v >= 0x80) {
		b->t->bytes[b->len++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b->t->bytes[b->len++] = (uint8_t)v;
	return 0;
}

static int lt_map_grow(struct lt_build *b)
{
	size_t cap = b->mcap ? 2 * b->mcap : 64;
	__typeof__(b->map) m = calloc(cap, sizeof(*m));

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; i < b->mcap; i++) {
		size_t j;

		if (!b->map[i].src)
			continue;
		for (j = ((uintptr_t)b->map[i].src >> 3) & (cap - 1); m[j].src; j = (j + 1) & (cap - 1))
			;
		m[j] = b->map[i];
	}
	free(b->map);
	b->map = m;
	b->mcap = cap;
	return 0;
}

/* *idx = index in t->files of libdw's name src (0 for NULL). */
static int lt_file(struct lt_build *b, struct dw_names *names, const char *src, uint32_t *idx)
{
	struct dw_linetab *t = b->t;
	const char *name;
	size_t i;
	int err;

	*idx = 0;
	if (!src)
		return 0;
	if (2 * (b->mcount + 1) > b->mcap && (err = lt_map_grow(b)))
		return err;
	for (i = ((uintptr_t)src >> 3) & (b->mcap - 1); b->map[i].src; i = (i + 1) & (b->mcap - 1))
		if (b->map[i].src == src) {
			*idx = b->map[i].idx;
			return 0;
		}
	err = dw_names__intern(names, src, &name);
	if (err)
		return err;
	/* Two indexes of libdw naming the same file share ours (DWARF 5
	 * repeats the primary file as entry 0 and 1). */
	for (uint32_t k = 1; k < t->nfiles; k++)
		if (t->files[k] == name) {
			*idx = k;
			goto mapped;
		}
	if (t->nfiles == b->fcap) {
		size_t cap = 2 * b->fcap;
		const char **f = realloc(t->files, cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		t->files = f;
		b->fcap = cap;
	}
	t->files[t->nfiles] = name;
	*idx = t->nfiles++;
mapped:
	b->map[i].src = src;
	b->map[i].idx = *idx;
	b->mcount++;
	return 0;
}

static int lt_row(struct lt_build *b, uint64_t addr, uint32_t file, uint32_t line)
{
	struct dw_linetab *t = b->t;
	struct dw_lt_block *blk = t->nblocks ? &t->blocks[t->nblocks - 1] : NULL;
	int64_t dl;
	int err;

	if (!blk || blk->rows == DW_LT_BLOCK) {
		if (t->nblocks == b->bcap) {
			size_t cap = b->bcap ? 2 * b->bcap : 16;
			struct dw_lt_block *p = realloc(t->blocks, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			t->blocks = p;
			b->bcap = cap;
		}
		if (b->len > UINT32_MAX - 64)
			return -E2BIG;
		blk = &t->blocks[t->nblocks++];
		*blk = (struct dw_lt_block){.addr = addr, .off = (uint32_t)b->len};
		b->last_line = 0;
	} else if ((err = lt_put(b, addr - b->last_addr))) {
		return err;
	}
	dl = (int64_t)line - (int64_t)b->last_line;
	err = lt_put(b, file);
	if (!err)
		err = lt_put(b, ((uint64_t)dl << 1) ^ (uint64_t)(dl >> 63));
	if (err)
		return err;
	blk->rows++;
	b->last_addr = addr;
	b->last_line = line;
	return 0;
}

/* What dwarf_getsrc_die + dwarf_lineno + dwarf_linesrc answer when l is
 * the row found: (0, 0) for an end of sequence or a line not positive. */
static int lt_answer(struct lt_build *b, struct dw_names *names, Dwarf_Line *l, uint32_t *file,
		     uint32_t *line)
{
	bool end = false;
	int ln;

	*file = *line = 0;
	if (dwarf_lineendsequence(l, &end) || end)
		return 0;
	if (dwarf_lineno(l, &ln) || ln <= 0)
		return 0;
	*line = (uint32_t)ln;
	return lt_file(b, names, dwarf_linesrc(l, NULL, NULL), file);
}

int dw_linetab__build(Dwarf_Die *cu, struct dw_names *names, struct dw_linetab **out,
		      size_t *nrows)
{
	struct lt_build b = {0};
	uint32_t prev_file = 0, prev_line = 0, rows = 0;
	Dwarf_Lines *lines;
	size_t nlines;
	int err = 0;

	*out = NULL;
	if (dwarf_getsrclines(cu, &lines, &nlines) || !nlines)
		return -ENOENT;
	*nrows = nlines;
	b.t = calloc(1, sizeof(*b.t));
	b.fcap = 16;
	if (!b.t || !(b.t->files = calloc(b.fcap, sizeof(*b.t->files)))) {
		err = -ENOMEM;
		goto cleanup;
	}
	b.t->nfiles = 1; /* [0]: no file */
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i), *next;
		Dwarf_Addr addr, next_addr;
		uint32_t file, line;

		if (!l || dwarf_lineaddr(l, &addr))
			continue;
		/* At equal addresses the last row is the one found. */
		next = i + 1 < nlines ? dwarf_onesrcline(lines, i + 1) : NULL;
		if (next && !dwarf_lineaddr(next, &next_addr) && next_addr == addr)
			continue;
		err = lt_answer(&b, names, l, &file, &line);
		if (err)
			goto cleanup;
		if (file == prev_file && line == prev_line)
			continue;
		if (++rows > DW_LT_MAX_ROWS) {
			err = -E2BIG;
			goto cleanup;
		}
		err = lt_row(&b, addr, file, line);
		if (err)
			goto cleanup;
		prev_file = file;
		prev_line = line;
	}
	/* Give back the room the arrays grew in. */
	if (b.t->nblocks < b.bcap) {
		struct dw_lt_block *p = realloc(b.t->blocks, b.t->nblocks * sizeof(*p) + 1);

		if (p)
			b.t->blocks = p;
	}
	if (b.len < b.cap) {
		uint8_t *p = realloc(b.t->bytes, b.len + 1);

		if (p)
			b.t->bytes = p;
	}
	if (b.t->nfiles < b.fcap) {
		const char **p = realloc(b.t->files, b.t->nfiles * sizeof(*p));

		if (p)
			b.t->files = p;
	}
	b.t->nbytes = (uint32_t)b.len;
	*out = b.t;
	b.t = NULL;
cleanup:
	free(b.map);
	dw_linetab__free(b.t);
	return err;
}

void dw_linetab__free(struct dw_linetab *t)
{
	if (!t)
		return;
	free(t->blocks);
	free(t->bytes);
	free(t->files);
	free(t);
}

size_t dw_linetab__bytes(const struct dw_linetab *t)
{
	if (!t)
		return 0;
	return sizeof(*t) + t->nblocks * sizeof(*t->blocks) + t->nfiles * sizeof(*t->files) +
	       t->nbytes;
}

static uint64_t lt_get(const uint8_t **p)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (**p & 0x80) {
		if (shift < 64)
			v |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
		(*p)++;
	}
	if (shift < 64)
		v |= (uint64_t)**p << shift;
	(*p)++;
	return v;
}

/* The zigzag-encoded signed delta of lt_row. */
static int64_t lt_get_delta(const uint8_t **p)
{
	uint64_t v = lt_get(p);

	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

void dw_linetab__find(const struct dw_linetab *t, uint64_t addr, const char **file,
		      uint32_t *line)
{
	const struct dw_lt_block *blk;
	size_t lo = 0, hi;
	const uint8_t *p;
	uint32_t f, l;
	uint64_t a;

	*file = NULL;
	*line = 0;
	if (!t)
		return;
	hi = t->nblocks;
	while (lo < hi) { /* the first block starting above addr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->blocks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return; /* below the first row */
	blk = &t->blocks[lo - 1];
	p = t->bytes + blk->off;
	a = blk->addr;
	f = (uint32_t)lt_get(&p);
	l = (uint32_t)lt_get_delta(&p);
	for (uint32_t r = 1; r < blk->rows; r++) {
		uint64_t next = a + lt_get(&p);

		if (next > addr)
			break;
		a = next;
		f = (uint32_t)lt_get(&p);
		l = (uint32_t)((int64_t)l + lt_get_delta(&p));
	}
	*file = f < t->nfiles ? t->files[f] : NULL;
	*line = l;
}
