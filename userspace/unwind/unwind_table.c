// SPDX-License-Identifier: MIT
/*
 * A module's CFI table laid out from compiled rows (unwind_table.h): gaps
 * as NONE rows, equal neighbours merged, .debug_frame rows clipped to the
 * gaps of .eh_frame's, rows kept as indexes into the module's distinct
 * rows, and the page index that narrows a lookup to a few rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/unwind/unwind_table.h"

static int page_index(struct unwind_module *m, uint64_t span);
static int palette_build(struct unwind_module *m, const struct unwind_row *table);

void *unwind_vec__push(struct vec *v, size_t elem)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		void *p = realloc(v->p, cap * elem);
		if (!p)
			return NULL;
		v->p = p;
		v->cap = cap;
	}
	return (char *)v->p + elem * v->n++;
}

void unwind__shrink(void **p, size_t bytes)
{
	void *np = realloc(*p, bytes ? bytes : 1);

	if (np)
		*p = np;
}

static int cmp_brow(const void *a, const void *b)
{
	const struct brow *x = a, *y = b;
	return (x->start > y->start) - (x->start < y->start);
}

static int dense_put(struct dense *d, uint64_t start, const struct unwind_row *row)
{
	if (d->k == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 1024;
		uint32_t *st = realloc(d->starts, cap * sizeof(*st));

		if (!st)
			return -ENOMEM;
		d->starts = st;
		struct unwind_row *r = realloc(d->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		d->rows = r;
		d->cap = cap;
	}
	d->starts[d->k] = (uint32_t)(start - d->base);
	d->rows[d->k++] = *row;
	d->last = *row;
	return 0;
}

int unwind_dense__push(struct dense *d, uint64_t start, uint64_t end, const struct unwind_row *row)
{
	const struct unwind_row none = {.flags = UNWIND_ROW_NONE};
	int err;

	if (!d->started) {
		d->base = d->at = start;
		d->last = none;
		d->started = true;
	}
	if (end <= d->at)
		return 0; /* overlapped (cannot happen for libdw answers) */
	if (end - d->base >= UINT32_MAX)
		return -EFBIG;
	uint64_t s = start > d->at ? start : d->at;
	if (s > d->at) {
		err = dense_put(d, d->at, &none);
		if (err)
			return err;
	}
	bool same =
	    d->k > 0 && !(row->flags & UNWIND_ROW_FULL) && memcmp(&d->last, row, sizeof(*row)) == 0;
	if (!same) {
		err = dense_put(d, s, row);
		if (err)
			return err;
	}
	d->at = end;
	return 0;
}

/*
 * The dense table of rows[0..n) (sorted, not overlapping): gaps become NONE
 * rows, equal neighbours merge, one sentinel ends it.  Writes starts[] and
 * out[] when given (base: the first row's start), else only counts.
 * Returns the rows written (or that would be); *end_at: the last row's end.
 */

static size_t dense_rows(const struct brow *rows, size_t n, uint64_t base, uint32_t *starts,
			 struct unwind_row *out, uint64_t *end_at)
{
	const struct unwind_row none = {.flags = UNWIND_ROW_NONE};
	struct unwind_row last = none;
	size_t k = 0;
	uint64_t at = base;

	for (size_t i = 0; i < n; i++) {
		if (rows[i].end <= at)
			continue; /* overlapped (cannot happen for libdw answers) */
		uint64_t s = rows[i].start > at ? rows[i].start : at;
		if (s > at) {
			if (starts) {
				starts[k] = (uint32_t)(at - base);
				out[k] = none;
			}
			last = none;
			k++;
		}
		bool same = k > 0 && !(rows[i].row.flags & UNWIND_ROW_FULL) &&
			    memcmp(&last, &rows[i].row, sizeof(last)) == 0;
		if (!same) {
			if (starts) {
				starts[k] = (uint32_t)(s - base);
				out[k] = rows[i].row;
			}
			last = rows[i].row;
			k++;
		}
		at = rows[i].end;
	}
	if (starts) {
		starts[k] = (uint32_t)(at - base);
		out[k] = none;
	}
	*end_at = at;
	return k + 1;
}

/*
 * Final table from the built rows: eh_frame rows first in brows[0, n_eh),
 * then .debug_frame rows, used only where no eh_frame row applies (libdwfl's
 * order: dwfl_module_eh_cfi, then dwfl_module_dwarf_cfi).  The built rows
 * (32 bytes each) are this path's peak: the clipped rows replace the
 * .debug_frame ones in place and the table is counted before it is
 * allocated (libLLVM's 950k rows took 85 MiB of RSS to compile with a
 * second copy and a table for 2n + 1 rows); they are freed before the
 * page index.
 */
int unwind_table__finish(struct unwind_module *m, struct vec *brows, size_t n_eh)
{
	struct brow *rows = brows->p;
	size_t n = brows->n;

	/* Clip .debug_frame rows to the gaps of .eh_frame (both lists sorted):
	 * the pieces replace the .debug_frame rows. */
	qsort(rows, n_eh, sizeof(*rows), cmp_brow);
	qsort(rows + n_eh, n - n_eh, sizeof(*rows), cmp_brow);
	if (n > n_eh) {
		struct vec pieces = {0};
		size_t e = 0;

		for (size_t i = n_eh; i < n; i++) {
			uint64_t s = rows[i].start, end = rows[i].end;
			while (e < n_eh && rows[e].end <= s)
				e++;
			size_t k = e;
			while (s < end) {
				uint64_t piece_end = end;
				if (k < n_eh && rows[k].start < end) {
					if (rows[k].start <= s) {
						s = rows[k].end > s ? rows[k].end : s;
						k++;
						continue;
					}
					piece_end = rows[k].start;
				}
				struct brow *r = unwind_vec__push(&pieces, sizeof(*r));
				if (!r) {
					free(pieces.p);
					return -ENOMEM;
				}
				*r = rows[i];
				r->start = s;
				r->end = piece_end;
				m->stats.debug_frame_rows++;
				s = piece_end;
			}
		}
		brows->n = n_eh;
		for (size_t i = 0; i < pieces.n; i++) {
			struct brow *r = unwind_vec__push(brows, sizeof(*r));
			if (!r) {
				free(pieces.p);
				return -ENOMEM;
			}
			*r = ((struct brow *)pieces.p)[i];
		}
		free(pieces.p);
		rows = brows->p;
		n = brows->n;
		qsort(rows, n, sizeof(*rows), cmp_brow);
	}

	if (n == 0)
		return 0;
	uint64_t base = rows[0].start, limit = 0;
	for (size_t i = 0; i < n; i++)
		limit = rows[i].end > limit ? rows[i].end : limit;
	if (limit - base >= UINT32_MAX)
		return -EFBIG;

	/* Counted first, then written: allocated at their size. */
	uint64_t at;
	size_t k = dense_rows(rows, n, base, NULL, NULL, &at);
	struct unwind_row *table = malloc(k * sizeof(*table));
	m->starts = malloc(k * sizeof(*m->starts));
	if (!m->starts || !table) {
		free(table);
		return -ENOMEM;
	}
	(void)dense_rows(rows, n, base, m->starts, table, &at);
	m->nrows = (uint32_t)k;
	m->base = base;
	free(brows->p);
	*brows = (struct vec){0};
	int err = palette_build(m, table);
	free(table);
	return err ? err : page_index(m, at - base);
}

/* m's page index (page_first), span: the table's last end - base. */
static int page_index(struct unwind_module *m, uint64_t span)
{
	size_t k = m->nrows;

	/* Page index: a page per four rows or more (a lookup searches a page's
	 * few rows; at a page per half row the index was the table's largest
	 * part once rows took 6 bytes). */
	unsigned shift = 4;
	while (shift < 31 && (span >> shift) > (uint64_t)k / 4)
		shift++;
	m->page_shift = shift;
	m->npages = (uint32_t)(span >> shift) + 1;
	m->page_first = malloc(((size_t)m->npages + 1) * sizeof(*m->page_first));
	if (!m->page_first)
		return -ENOMEM;
	uint32_t r = 0;
	for (uint32_t p = 0; p <= m->npages; p++) {
		uint64_t addr = (uint64_t)p << shift;
		while (r + 1 < k && m->starts[r + 1] <= addr)
			r++;
		m->page_first[p] = r;
	}
	return 0;
}

size_t unwind_table__bytes(const struct unwind_module *m)
{
	return sizeof(*m) + (size_t)m->nrows * sizeof(*m->starts) +
	       (size_t)m->nrows * (m->idx16 ? sizeof(*m->idx16) : sizeof(*m->idx32)) +
	       (size_t)m->npalette * sizeof(*m->palette) +
	       ((size_t)m->npages + 1) * sizeof(*m->page_first);
}

static uint32_t row_hash(const struct unwind_row *r)
{
	uint64_t w[2];

	memcpy(w, r, sizeof(w));
	uint64_t h = (w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return (uint32_t)(h >> 32);
}

/*
 * m's rows as indexes into its distinct rows, from table[0..m->nrows) (which
 * the caller frees): 16-bit indexes unless the module has more than 65536
 * distinct rows (never seen: libLLVM has 987).
 */
static int palette_build(struct unwind_module *m, const struct unwind_row *table)
{
	uint32_t n = m->nrows, cap = 1024, np = 0, pcap = 256;
	uint32_t *slot = NULL; /* palette index + 1, 0 = empty */
	struct unwind_row *pal = malloc(pcap * sizeof(*pal));
	uint32_t *idx = malloc((size_t)n * sizeof(*idx));
	int err = -ENOMEM;

	slot = calloc(cap, sizeof(*slot));
	if (!pal || !idx || !slot)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t h = row_hash(&table[i]) & (cap - 1);

		while (slot[h] && memcmp(&pal[slot[h] - 1], &table[i], sizeof(*pal)))
			h = (h + 1) & (cap - 1);
		if (!slot[h]) {
			if (np == pcap) {
				struct unwind_row *p = realloc(pal, 2 * (size_t)pcap * sizeof(*p));

				if (!p)
					goto out;
				pal = p;
				pcap *= 2;
			}
			pal[np++] = table[i];
			slot[h] = np;
			if (2 * np > cap) { /* rehash at half full */
				uint32_t ncap = 2 * cap, *ns = calloc(ncap, sizeof(*ns));

				if (!ns)
					goto out;
				for (uint32_t j = 0; j < np; j++) {
					uint32_t g = row_hash(&pal[j]) & (ncap - 1);

					while (ns[g])
						g = (g + 1) & (ncap - 1);
					ns[g] = j + 1;
				}
				free(slot);
				slot = ns;
				cap = ncap;
			}
			idx[i] = np - 1;
			continue;
		}
		idx[i] = slot[h] - 1;
	}
	unwind__shrink((void **)&pal, (size_t)np * sizeof(*pal));
	m->palette = pal;
	m->npalette = np;
	pal = NULL;
	if (np <= 65536) {
		uint16_t *i16 = malloc((size_t)n * sizeof(*i16) + 1);

		if (!i16)
			goto out;
		for (uint32_t i = 0; i < n; i++)
			i16[i] = (uint16_t)idx[i];
		m->idx16 = i16;
	} else {
		m->idx32 = idx;
		idx = NULL;
	}
	err = 0;
out:
	free(slot);
	free(pal);
	free(idx);
	return err;
}

/* The streamed table into m: its sentinel, the room it grew into given
 * back, the page index. */
int unwind_dense__finish(struct unwind_module *m, struct dense *d)
{
	const struct unwind_row none = {.flags = UNWIND_ROW_NONE};
	int err;

	if (!d->started)
		return 0; /* no rows: a module with no CFI (nrows 0) */
	err = dense_put(d, d->at, &none);
	if (err)
		return err;
	unwind__shrink((void **)&d->starts, d->k * sizeof(*d->starts));
	m->starts = d->starts;
	m->nrows = (uint32_t)d->k;
	m->base = d->base;
	d->starts = NULL;
	err = palette_build(m, d->rows);
	free(d->rows);
	d->rows = NULL;
	return err ? err : page_index(m, d->at - d->base);
}
