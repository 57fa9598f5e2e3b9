// SPDX-License-Identifier: MIT
/*
 * Diff of two flat tables: functions matched by (kind, display name), so
 * captures of different runs, binaries or machines compare by what a
 * reader sees.  Both sides are sorted by (name, kind) and merged.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct diff_ref {
	const char *name;
	uint32_t kind;
	uint32_t row;
};

static int ref_cmp(const void *pa, const void *pb)
{
	const struct diff_ref *a = pa, *b = pb;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct analysis_diff_row *a = pa, *b = pb;
	double da = fabs(a->self_delta), db = fabs(b->self_delta);
	int c;

	if (da != db)
		return da > db ? -1 : 1;
	da = fabs(a->total_delta);
	db = fabs(b->total_delta);
	if (da != db)
		return da > db ? -1 : 1;
	c = strcmp(a->name, b->name);
	if (c)
		return c;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static struct diff_ref *diff_refs(const struct analysis_flat *f)
{
	struct diff_ref *refs = malloc(((size_t)f->nrows + 1) * sizeof(*refs));
	uint32_t i;

	if (!refs)
		return NULL;
	for (i = 0; i < f->nrows; i++) {
		const struct analysis_key *k = &f->names->keys[f->rows[i].key];

		refs[i] = (struct diff_ref){ .name = k->name, .kind = k->kind, .row = i };
	}
	qsort(refs, f->nrows, sizeof(*refs), ref_cmp);
	return refs;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int analysis_diff__init(struct analysis_diff *d, const struct analysis_flat *base,
			const struct analysis_flat *cur)
{
	struct diff_ref *a = NULL, *b = NULL;
	uint32_t i = 0, j = 0, n = 0;
	int err = -ENOMEM;

	memset(d, 0, sizeof(*d));
	d->base_weight = base->total_weight;
	d->weight = cur->total_weight;
	a = diff_refs(base);
	b = diff_refs(cur);
	d->rows = calloc((size_t)base->nrows + cur->nrows + 1, sizeof(*d->rows));
	if (!a || !b || !d->rows)
		goto cleanup;
	while (i < base->nrows || j < cur->nrows) {
		struct analysis_diff_row *r = &d->rows[n++];
		int c = i >= base->nrows ? 1 : j >= cur->nrows ? -1 : ref_cmp(&a[i], &b[j]);

		if (c <= 0) {
			const struct analysis_flat_row *fr = &base->rows[a[i].row];

			r->name = a[i].name;
			r->kind = a[i].kind;
			r->base_self = fr->self;
			r->base_total = fr->total;
			i++;
		}
		if (c >= 0) {
			const struct analysis_flat_row *fr = &cur->rows[b[j].row];

			r->name = b[j].name;
			r->kind = b[j].kind;
			r->self = fr->self;
			r->total = fr->total;
			j++;
		}
		r->self_delta = share(r->self, d->weight) - share(r->base_self, d->base_weight);
		r->total_delta = share(r->total, d->weight) - share(r->base_total, d->base_weight);
	}
	d->nrows = n;
	qsort(d->rows, n, sizeof(*d->rows), row_cmp);
	err = 0;
cleanup:
	free(a);
	free(b);
	if (err)
		analysis_diff__release(d);
	return err;
}

void analysis_diff__release(struct analysis_diff *d)
{
	free(d->rows);
	memset(d, 0, sizeof(*d));
}
