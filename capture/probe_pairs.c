// SPDX-License-Identifier: MIT
/* Zone pairing over a capture's probe records: the rule is in probe_pairs.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe_pairs.h"

static int rec_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct capture *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_probe_record *x = &c->probe_records[a], *y = &c->probe_records[b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* open[n] (rows, oldest first) left unpaired as state. */
static void forget(struct capture_probe_pairs *pp, const uint32_t *open, uint32_t n,
		   enum capture_pair_state state)
{
	for (uint32_t k = 0; k < n; k++)
		pp->state[open[k]] = state;
}

int capture_probe_pairs__init(struct capture_probe_pairs *pp, const struct capture *c)
{
	uint32_t n = c->nprobe_records, nopen = 0, *open;

	memset(pp, 0, sizeof(*pp));
	pp->n = n;
	pp->order = malloc(((size_t)n + 1) * sizeof(*pp->order));
	pp->mate = malloc(((size_t)n + 1) * sizeof(*pp->mate));
	pp->depth = calloc((size_t)n + 1, sizeof(*pp->depth));
	pp->state = calloc((size_t)n + 1, sizeof(*pp->state));
	open = malloc(((size_t)n + 1) * sizeof(*open)); /* the thread's open begins, oldest first */
	if (!pp->order || !pp->mate || !pp->depth || !pp->state || !open) {
		free(open);
		capture_probe_pairs__release(pp);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++) {
		pp->order[i] = i;
		pp->mate[i] = CAPTURE_NONE;
	}
	qsort_r(pp->order, n, sizeof(*pp->order), rec_cmp, (void *)c);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t row = pp->order[i], k;
		const struct capture_probe_record *r = &c->probe_records[row];

		if (i && c->probe_records[pp->order[i - 1]].thread != r->thread) {
			/* the previous thread's begins never ended */
			forget(pp, open, nopen, CAPTURE_PAIR_UNMATCHED);
			nopen = 0;
		}
		if (r->flags & CAPTURE_PROBE_F_AFTER_DROP) {
			/* records of this thread were dropped just before */
			forget(pp, open, nopen, CAPTURE_PAIR_BROKEN);
			nopen = 0;
			if (r->kind == CAPTURE_PROBE_ZONE_END) {
				pp->state[row] = CAPTURE_PAIR_BROKEN;
				continue;
			}
		}
		if (r->kind == CAPTURE_PROBE_MARK) {
			pp->state[row] = CAPTURE_PAIR_MARK;
			continue;
		}
		if (r->kind == CAPTURE_PROBE_ZONE_BEGIN) {
			pp->depth[row] = nopen;
			open[nopen++] = row;
			continue;
		}
		for (k = nopen; k && c->probe_records[open[k - 1]].site != r->site; k--)
			;
		if (!k) {
			pp->state[row] = CAPTURE_PAIR_UNMATCHED;
			continue;
		}
		pp->state[row] = pp->state[open[k - 1]] = CAPTURE_PAIR_ZONE;
		pp->mate[row] = open[k - 1];
		pp->mate[open[k - 1]] = row;
		memmove(&open[k - 1], &open[k], (nopen - k) * sizeof(*open));
		nopen--;
	}
	forget(pp, open, nopen, CAPTURE_PAIR_UNMATCHED);
	free(open);
	return 0;
}

void capture_probe_pairs__release(struct capture_probe_pairs *pp)
{
	free(pp->order);
	free(pp->mate);
	free(pp->depth);
	free(pp->state);
	memset(pp, 0, sizeof(*pp));
}
