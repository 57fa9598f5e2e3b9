// SPDX-License-Identifier: MIT
/*
 * Flat per-function costs, derived from the call tree: self sums the
 * nodes' self weights per key; total adds a node's total only where no
 * ancestor on its path has the same key, so recursion counts each sample
 * once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct flat_sort_ctx {
	const struct analysis_names *names;
	enum analysis_sort sort;
};

static int row_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct flat_sort_ctx *sc = ctx;
	const struct analysis_flat_row *a = pa, *b = pb;
	uint64_t va = sc->sort == ANALYSIS_SORT_SELF ? a->self : a->total;
	uint64_t vb = sc->sort == ANALYSIS_SORT_SELF ? b->self : b->total;

	if (va != vb)
		return va > vb ? -1 : 1;
	return analysis__key_cmp(sc->names, a->key, b->key);
}

struct analysis_flat *analysis_flat__new(const struct analysis_tree *t, enum analysis_sort sort)
{
	const struct analysis_names *names = t->names;
	const struct analysis_node *nodes = t->nodes;
	struct flat_sort_ctx sc = { .names = names, .sort = sort };
	struct analysis_flat_row *acc = NULL;
	struct analysis_flat *f = NULL;
	uint32_t *on_path = NULL, n, k, nrows = 0;
	uint8_t *seen = NULL;
	int err = -ENOMEM;

	f = calloc(1, sizeof(*f));
	acc = calloc((size_t)names->nkeys + 1, sizeof(*acc));
	on_path = calloc((size_t)names->nkeys + 1, sizeof(*on_path));
	seen = calloc((size_t)names->nkeys + 1, 1);
	if (!f || !acc || !on_path || !seen)
		goto cleanup;
	f->names = names;
	f->total_weight = nodes[0].total;

	/* Pre-order walk over the sibling links, keeping per-key path depth. */
	n = nodes[0].first_child;
	while (n != CAPTURE_NONE) {
		k = nodes[n].key;
		if (!on_path[k])
			analysis__sat_add(&acc[k].total, nodes[n].total);
		on_path[k]++;
		analysis__sat_add(&acc[k].self, nodes[n].self);
		seen[k] = 1;
		if (nodes[n].first_child != CAPTURE_NONE) {
			n = nodes[n].first_child;
			continue;
		}
		/* Leave n and every ancestor that has no next sibling. */
		while (n != 0) {
			on_path[nodes[n].key]--;
			if (nodes[n].next_sibling != CAPTURE_NONE) {
				n = nodes[n].next_sibling;
				break;
			}
			n = nodes[n].parent;
		}
		if (n == 0)
			break;
	}

	for (k = 0; k < names->nkeys; k++) {
		if (!seen[k] || names->keys[k].kind == ANALYSIS_KEY_THREAD)
			continue;
		acc[nrows] = (struct analysis_flat_row){
			.key = k,
			.self = acc[k].self,
			.total = acc[k].total,
		};
		nrows++;
	}
	qsort_r(acc, nrows, sizeof(*acc), row_cmp, &sc);
	f->rows = acc;
	f->nrows = nrows;
	acc = NULL;
	err = 0;
cleanup:
	free(acc);
	free(on_path);
	free(seen);
	if (err) {
		free(f);
		errno = -err;
		return NULL;
	}
	return f;
}

void analysis_flat__free(struct analysis_flat *f)
{
	if (!f)
		return;
	free(f->rows);
	free(f);
}
