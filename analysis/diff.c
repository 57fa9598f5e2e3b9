// SPDX-License-Identifier: MIT
/*
 * Diff of two profiles: per-key self and total shares of each side's own
 * total, so a longer or faster-sampled recording compares with a shorter
 * one, and a two-proportion z test on sample counts to say which changes
 * are beyond sampling noise.  Keys match by (display name, kind): ids of
 * two captures mean nothing to each other.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int analysis__diff_check(const struct capture *base, uint32_t base_event,
			 const struct capture *new_, uint32_t new_event, char *why, size_t size)
{
	const char *bn, *bu, *nn, *nu;

	if (base_event >= base->nevents || new_event >= new_->nevents) {
		snprintf(why, size, "a profile has no events");
		return -EINVAL;
	}
	bn = capture__string(base, base->events[base_event].name);
	bu = capture__string(base, base->events[base_event].unit);
	nn = capture__string(new_, new_->events[new_event].name);
	nu = capture__string(new_, new_->events[new_event].unit);
	/* Folded stacks name no event ("folded"): their unit decides. */
	if (strcmp(bu, nu) || (strcmp(bn, nn) && strcmp(bn, "folded") && strcmp(nn, "folded"))) {
		snprintf(why, size, "events differ: %s (%s) vs %s (%s)", bn, bu, nn, nu);
		return -EINVAL;
	}
	if (size)
		why[0] = '\0';
	return 0;
}

struct diff_side {
	const struct analysis_flat *flat;
	uint32_t *order; /* row indexes by (name, kind) */
};

static int by_name(const void *pa, const void *pb, void *ctx)
{
	const struct analysis_flat *f = ctx;
	const struct analysis_key *a = &f->names->keys[f->rows[*(const uint32_t *)pa].key];
	const struct analysis_key *b = &f->names->keys[f->rows[*(const uint32_t *)pb].key];
	int r = strcmp(a->name, b->name);

	if (r)
		return r;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

static int side__init(struct diff_side *s, const struct analysis_flat *f)
{
	uint32_t i;

	s->flat = f;
	s->order = malloc(((size_t)f->nrows + 1) * sizeof(*s->order));
	if (!s->order)
		return -ENOMEM;
	for (i = 0; i < f->nrows; i++)
		s->order[i] = i;
	qsort_r(s->order, f->nrows, sizeof(*s->order), by_name, (void *)f);
	return 0;
}

static const struct analysis_key *side__key(const struct diff_side *s, uint32_t i)
{
	return &s->flat->names->keys[s->flat->rows[s->order[i]].key];
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* Two-proportion z: (x2/n2 - x1/n1) / sqrt(p(1-p)(1/n1 + 1/n2)), p pooled. */
static double two_proportion_z(uint64_t x1, uint64_t n1, uint64_t x2, uint64_t n2)
{
	double p, se;

	if (!n1 || !n2)
		return 0.0;
	p = ((double)x1 + (double)x2) / ((double)n1 + (double)n2);
	se = sqrt(p * (1.0 - p) * (1.0 / (double)n1 + 1.0 / (double)n2));
	if (se <= 0.0)
		return 0.0;
	return (share(x2, n2) - share(x1, n1)) / se;
}

struct diff_sort_ctx {
	enum analysis_sort sort;
};

static int by_change(const void *pa, const void *pb, void *ctx)
{
	const struct diff_sort_ctx *sc = ctx;
	const struct analysis_diff_row *a = pa, *b = pb;
	double da = fabs(sc->sort == ANALYSIS_SORT_SELF ? a->delta_self : a->delta_total);
	double db = fabs(sc->sort == ANALYSIS_SORT_SELF ? b->delta_self : b->delta_total);
	int r;

	if (da != db)
		return da > db ? -1 : 1;
	r = strcmp(a->name, b->name);
	if (r)
		return r;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

int analysis_diff__init(struct analysis_diff *d, const struct analysis_flat *base,
			const struct analysis_flat *new_, enum analysis_sort sort, bool counted)
{
	struct diff_side sb = { 0 }, sn = { 0 };
	struct diff_sort_ctx sc = { .sort = sort };
	uint32_t i = 0, j = 0, n = 0;
	int err;

	memset(d, 0, sizeof(*d));
	d->base_weight = base->total_weight;
	d->new_weight = new_->total_weight;
	d->counted = counted;
	err = side__init(&sb, base);
	if (!err)
		err = side__init(&sn, new_);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	d->rows = calloc((size_t)base->nrows + new_->nrows + 1, sizeof(*d->rows));
	if (!d->rows)
		goto cleanup;
	/* Merge the two name-ordered lists. */
	while (i < base->nrows || j < new_->nrows) {
		struct analysis_diff_row *r = &d->rows[n++];
		const struct analysis_flat_row *fb = NULL, *fn = NULL;
		const struct analysis_key *k;
		int cmp;

		if (i >= base->nrows)
			cmp = 1;
		else if (j >= new_->nrows)
			cmp = -1;
		else {
			const struct analysis_key *kb = side__key(&sb, i), *kn = side__key(&sn, j);

			cmp = strcmp(kb->name, kn->name);
			if (!cmp)
				cmp = kb->kind < kn->kind ? -1 : kb->kind > kn->kind;
		}
		if (cmp <= 0)
			fb = &base->rows[sb.order[i++]];
		if (cmp >= 0)
			fn = &new_->rows[sn.order[j++]];
		k = fb ? &base->names->keys[fb->key] : &new_->names->keys[fn->key];
		r->name = k->name;
		r->kind = k->kind;
		r->base_self = fb ? fb->self : 0;
		r->base_total = fb ? fb->total : 0;
		r->new_self = fn ? fn->self : 0;
		r->new_total = fn ? fn->total : 0;
		r->base_self_share = share(r->base_self, d->base_weight);
		r->base_total_share = share(r->base_total, d->base_weight);
		r->new_self_share = share(r->new_self, d->new_weight);
		r->new_total_share = share(r->new_total, d->new_weight);
		r->delta_self = r->new_self_share - r->base_self_share;
		r->delta_total = r->new_total_share - r->base_total_share;
		if (counted) {
			if (sort == ANALYSIS_SORT_SELF)
				r->z = two_proportion_z(r->base_self, d->base_weight, r->new_self,
							d->new_weight);
			else
				r->z = two_proportion_z(r->base_total, d->base_weight, r->new_total,
							d->new_weight);
			r->significant = fabs(r->z) >= ANALYSIS_DIFF_Z_SIGNIFICANT;
		}
	}
	qsort_r(d->rows, n, sizeof(*d->rows), by_change, &sc);
	d->nrows = n;
	err = 0;
cleanup:
	free(sb.order);
	free(sn.order);
	if (err)
		analysis_diff__release(d);
	return err;
}

void analysis_diff__release(struct analysis_diff *d)
{
	free(d->rows);
	memset(d, 0, sizeof(*d));
}
