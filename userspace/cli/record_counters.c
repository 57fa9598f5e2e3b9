// SPDX-License-Identifier: MIT
/* Per-segment counter deltas of a continuous recording (record_counters.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture/format.h"
#include "record_counters.h"

struct ledger_row {
	char *name;
	uint64_t sent; /* the total added to the builder so far */
};

struct mark_value {
	uint32_t row;
	uint64_t total;
};

struct mark {
	uint64_t at_ns;
	struct mark_value *v;
	uint32_t n, cap;
};

struct record_counters {
	struct capture_builder *b;
	struct ledger_row *rows;
	size_t n, cap;
	struct mark marks[RECORD_COUNTERS_MARKS_MAX]; /* oldest first */
	uint32_t nmarks;
};

struct record_counters *record_counters__new(struct capture_builder *b)
{
	struct record_counters *l = calloc(1, sizeof(*l));

	if (l)
		l->b = b;
	return l;
}

/* The index of name's row, added if new; -1 on ENOMEM or when absent and
 * not added.  A few dozen names, read once a segment: a linear search. */
static long ledger__row(struct record_counters *l, const char *name, bool add)
{
	struct ledger_row *r;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->rows[i].name, name))
			return (long)i;
	if (!add)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct ledger_row *v = reallocarray(l->rows, cap, sizeof(*v));

		if (!v)
			return -1;
		l->rows = v;
		l->cap = cap;
	}
	r = &l->rows[l->n];
	r->name = strdup(name);
	if (!r->name)
		return -1;
	r->sent = 0;
	return (long)l->n++;
}

/* Add row's growth up to total to the builder. */
static void ledger__send(struct record_counters *l, size_t row, uint64_t total)
{
	struct ledger_row *r = &l->rows[row];

	if (total <= r->sent)
		return;
	capture_builder__add_counter(l->b, r->name, total - r->sent);
	r->sent = total;
}

static void marks__drop(struct record_counters *l, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(l->marks[i].v);
	memmove(l->marks, l->marks + n, (l->nmarks - n) * sizeof(*l->marks));
	l->nmarks -= n;
}

void record_counters__mark(struct record_counters *l, uint64_t at_ns)
{
	if (l->nmarks == RECORD_COUNTERS_MARKS_MAX)
		marks__drop(l, 1); /* its growth shows in the next mark's */
	l->marks[l->nmarks++] = (struct mark){ .at_ns = at_ns };
}

int record_counters__sink(void *ctx, const struct ms_chunk *chunk, const void *payload)
{
	struct record_counters *l = ctx;
	struct mark *m = l->nmarks ? &l->marks[l->nmarks - 1] : NULL;
	char text[256], *eq, *end;
	unsigned long long v;
	long row;

	if (!m || chunk->kind != MS_CHUNK_COUNTER || chunk->len >= sizeof(text))
		return 0;
	memcpy(text, payload, chunk->len);
	text[chunk->len] = '\0';
	eq = strchr(text, '=');
	if (!eq || eq == text)
		return 0;
	*eq = '\0';
	errno = 0;
	v = strtoull(eq + 1, &end, 10);
	if (errno || *end || end == eq + 1)
		return 0;
	row = ledger__row(l, text, true);
	if (row < 0)
		return 0; /* ENOMEM: the final totals carry it */
	if (m->n == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 32;
		struct mark_value *nv = reallocarray(m->v, cap, sizeof(*nv));

		if (!nv)
			return 0;
		m->v = nv;
		m->cap = cap;
	}
	m->v[m->n++] = (struct mark_value){ .row = (uint32_t)row, .total = v };
	return 0;
}

void record_counters__apply(struct record_counters *l, uint64_t end_ns)
{
	uint32_t k = 0;

	while (k < l->nmarks && l->marks[k].at_ns <= end_ns)
		k++;
	if (!k)
		return;
	for (uint32_t i = 0; i < l->marks[k - 1].n; i++)
		ledger__send(l, l->marks[k - 1].v[i].row, l->marks[k - 1].v[i].total);
	marks__drop(l, k);
}

void record_counters__total(void *ledger, const char *name, uint64_t total)
{
	struct record_counters *l = ledger;
	long row = ledger__row(l, name, true);

	if (row >= 0)
		ledger__send(l, (size_t)row, total);
}

int record_counters__settle(struct record_counters *l)
{
	struct capture view;
	char **names = NULL;
	uint64_t *values = NULL;
	uint32_t n;
	int err = capture_builder__view(l->b, &view);

	if (err)
		return err;
	n = view.ncounters;
	names = calloc(n ? n : 1, sizeof(*names));
	values = calloc(n ? n : 1, sizeof(*values));
	if (!names || !values) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (uint32_t i = 0; i < n; i++) {
		names[i] = strdup(capture__string(&view, view.counters[i].name));
		if (!names[i]) {
			err = -ENOMEM;
			goto cleanup;
		}
		values[i] = view.counters[i].value;
	}
	/* view points into the builder: rebuild the counters from the copy */
	capture_builder__clear_counters(l->b);
	for (uint32_t i = 0; i < n; i++) {
		long row = ledger__row(l, names[i], false);
		uint64_t sent = row >= 0 ? l->rows[row].sent : 0;

		if (values[i] > sent)
			capture_builder__add_counter(l->b, names[i], values[i] - sent);
		if (row >= 0 && values[i] > sent)
			l->rows[row].sent = values[i];
	}
cleanup:
	for (uint32_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
	free(values);
	return err;
}

void record_counters__free(struct record_counters *l)
{
	if (!l)
		return;
	marks__drop(l, l->nmarks);
	for (size_t i = 0; i < l->n; i++)
		free(l->rows[i].name);
	free(l->rows);
	free(l);
}
