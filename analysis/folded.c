// SPDX-License-Identifier: MIT
/*
 * Folded stacks, the text format of Brendan Gregg's stackcollapse scripts:
 * "outer;...;inner weight\n" per distinct stack.  Derived from the call
 * tree: a node with self weight is one line.  Lines are ordered as bytes
 * (LC_ALL=C sort), so the text is a function of the capture and query only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct folded_line {
	size_t off; /* path bytes in the paths buffer */
	size_t len;
	uint64_t weight;
	char digits[24]; /* weight in decimal */
	uint32_t ndigits;
};

struct folded_text {
	char *p;
	size_t len, cap;
};

static int text_put(struct folded_text *t, const void *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t ncap = t->cap ? t->cap : 4096;
		char *np;

		while (ncap < t->len + n + 1)
			ncap *= 2;
		np = realloc(t->p, ncap);
		if (!np)
			return -ENOMEM;
		t->p = np;
		t->cap = ncap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
	return 0;
}

/* A key's name as folded text: ';' -> ':', '\n' and '\r' -> ' ', kernel "_[k]",
 * inlined "_[i]" (flamegraph.pl's annotations). */
static int folded_name(struct folded_text *names, const struct analysis_key *k)
{
	size_t start = names->len, i;
	int err;

	err = text_put(names, k->name, strlen(k->name));
	if (!err && k->kind == ANALYSIS_KEY_KERNEL)
		err = text_put(names, "_[k]", 4);
	if (!err && k->kind == ANALYSIS_KEY_INLINE)
		err = text_put(names, "_[i]", 4);
	if (err)
		return err;
	for (i = start; i < names->len; i++) {
		if (names->p[i] == ';')
			names->p[i] = ':';
		else if (names->p[i] == '\n' || names->p[i] == '\r')
			names->p[i] = ' ';
	}
	return 0;
}

static int path_cmp(const void *pa, const void *pb, void *ctx)
{
	const char *paths = ctx;
	const struct folded_line *a = pa, *b = pb;
	size_t m = a->len < b->len ? a->len : b->len;
	int r = memcmp(paths + a->off, paths + b->off, m);

	if (r)
		return r;
	return a->len < b->len ? -1 : a->len > b->len;
}

/* Byte i of the line "path weight", or -1 past its end. */
static int line_byte(const char *paths, const struct folded_line *l, size_t i)
{
	if (i < l->len)
		return (unsigned char)paths[l->off + i];
	if (i == l->len)
		return ' ';
	i -= l->len + 1;
	return i < l->ndigits ? (unsigned char)l->digits[i] : -1;
}

static int line_cmp(const void *pa, const void *pb, void *ctx)
{
	const char *paths = ctx;
	const struct folded_line *a = pa, *b = pb;
	size_t m = a->len < b->len ? a->len : b->len, i;
	int r = memcmp(paths + a->off, paths + b->off, m);

	if (r)
		return r;
	for (i = m;; i++) {
		int ca = line_byte(paths, a, i), cb = line_byte(paths, b, i);

		if (ca != cb)
			return ca < cb ? -1 : 1;
		if (ca < 0)
			return 0;
	}
}

int analysis_tree__folded(const struct analysis_tree *t, char **text, size_t *len)
{
	const struct analysis_names *names = t->names;
	const struct analysis_node *nodes = t->nodes;
	struct folded_text fnames = { 0 }, cur = { 0 }, paths = { 0 }, out = { 0 };
	struct folded_line *lines = NULL;
	uint32_t nlines = 0, lines_cap = 0, n, i, j;
	size_t *name_off = NULL, *depth_len = NULL, maxdepth = 0;
	int err = -ENOMEM;

	*text = NULL;
	*len = 0;
	name_off = malloc(((size_t)names->nkeys + 1) * sizeof(*name_off));
	if (!name_off)
		goto cleanup;
	for (i = 0; i < names->nkeys; i++) {
		name_off[i] = fnames.len;
		/* Each name keeps its NUL, so it can be read with strlen. */
		if (folded_name(&fnames, &names->keys[i]) || text_put(&fnames, "", 1))
			goto cleanup;
	}
	for (i = 0; i < t->nnodes; i++)
		if (nodes[i].depth > maxdepth)
			maxdepth = nodes[i].depth;
	depth_len = calloc(maxdepth + 1, sizeof(*depth_len));
	if (!depth_len || text_put(&cur, "", 0) || text_put(&out, "", 0))
		goto cleanup;

	/* Pre-order walk; cur holds the path of the current node. */
	n = nodes[0].first_child;
	while (n != CAPTURE_NONE) {
		const struct analysis_node *nd = &nodes[n];
		const char *name = fnames.p + name_off[nd->key];

		cur.len = depth_len[nd->depth - 1];
		if (nd->depth > 1 && text_put(&cur, ";", 1))
			goto cleanup;
		if (text_put(&cur, name, strlen(name)))
			goto cleanup;
		depth_len[nd->depth] = cur.len;
		if (nd->self) {
			if (analysis__grow((void **)&lines, &lines_cap, (uint64_t)nlines + 1,
					   sizeof(*lines)))
				goto cleanup;
			lines[nlines++] = (struct folded_line){
				.off = paths.len,
				.len = cur.len,
				.weight = nd->self,
			};
			if (text_put(&paths, cur.p, cur.len))
				goto cleanup;
		}
		if (nd->first_child != CAPTURE_NONE) {
			n = nd->first_child;
			continue;
		}
		while (n != 0 && nodes[n].next_sibling == CAPTURE_NONE)
			n = nodes[n].parent;
		if (n == 0)
			break;
		n = nodes[n].next_sibling;
	}

	/* Renaming can make two paths equal ("a;b" and "a:b"): merge them. */
	if (nlines)
		qsort_r(lines, nlines, sizeof(*lines), path_cmp, paths.p);
	for (i = 0, j = 0; i < nlines; i++) {
		if (j && !path_cmp(&lines[j - 1], &lines[i], paths.p))
			analysis__sat_add(&lines[j - 1].weight, lines[i].weight);
		else
			lines[j++] = lines[i];
	}
	nlines = j;
	for (i = 0; i < nlines; i++)
		lines[i].ndigits = (uint32_t)snprintf(lines[i].digits, sizeof(lines[i].digits),
						      "%" PRIu64, lines[i].weight);
	if (nlines)
		qsort_r(lines, nlines, sizeof(*lines), line_cmp, paths.p);

	for (i = 0; i < nlines; i++) {
		if (text_put(&out, paths.p + lines[i].off, lines[i].len) ||
		    text_put(&out, " ", 1) ||
		    text_put(&out, lines[i].digits, lines[i].ndigits) || text_put(&out, "\n", 1))
			goto cleanup;
	}
	*text = out.p;
	*len = out.len;
	out.p = NULL;
	err = 0;
cleanup:
	free(name_off);
	free(depth_len);
	free(lines);
	free(fnames.p);
	free(cur.p);
	free(paths.p);
	free(out.p);
	return err;
}
