// SPDX-License-Identifier: MIT
/*
 * Display names and function keys: every frame and thread of a capture
 * mapped once to a dense key id, so queries never format a name per sample.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/frame_label.h"

#include "internal.h"

struct names_storage {
	struct analysis_key *keys;
	uint32_t nkeys, keys_cap;
	uint32_t *name_off; /* [nkeys] offsets into text while building */
	uint32_t name_off_cap;
	char *text; /* NUL-terminated names back to back */
	uint32_t text_len, text_cap;
	uint32_t *slots; /* intern table: key id or U64MAP_EMPTY */
	uint32_t slots_cap;
	uint32_t *frame_keys;
	uint32_t *thread_keys;
	uint32_t *row_keys;
};

size_t analysis__frame_name(const struct capture *c, const struct capture_frame *f, char *buf,
			    size_t size)
{
	return capture__frame_label(c, f, buf, size);
}

int analysis_granularity__parse(const char *name, enum analysis_granularity *g)
{
	if (!strcmp(name, "function"))
		*g = ANALYSIS_GRANULARITY_FUNCTION;
	else if (!strcmp(name, "line"))
		*g = ANALYSIS_GRANULARITY_LINE;
	else if (!strcmp(name, "address"))
		*g = ANALYSIS_GRANULARITY_ADDRESS;
	else if (!strcmp(name, "module"))
		*g = ANALYSIS_GRANULARITY_MODULE;
	else
		return -EINVAL;
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* Frame f's key name at granularity g (rules in analysis.h), like snprintf. */
size_t analysis__frame_key_name(const struct capture *c, const struct capture_frame *f,
				enum analysis_granularity g, char *buf, size_t size)
{
	const char *fn = capture__string(c, f->function);
	const char *file = capture__string(c, f->file);
	char name[512];
	int n;

	if (g == ANALYSIS_GRANULARITY_FRAME || (f->flags & CAPTURE_FRAME_F_TRUNCATION))
		return capture__frame_label(c, f, buf, size);
	if (g == ANALYSIS_GRANULARITY_MODULE) {
		if (f->flags & CAPTURE_FRAME_F_KERNEL)
			n = snprintf(buf, size, "[kernel]");
		else if ((f->flags & CAPTURE_FRAME_F_INTERPRETED) && file[0])
			n = snprintf(buf, size, "%s", file);
		else
			n = snprintf(buf, size, "%s", capture__module_label(c, f->module));
		return n < 0 ? 0 : (size_t)n;
	}
	if (f->flags & CAPTURE_FRAME_F_INTERPRETED) {
		if (g == ANALYSIS_GRANULARITY_FUNCTION)
			n = snprintf(buf, size, "%s (%s)", fn[0] ? fn : "[unknown]", file);
		else
			n = snprintf(buf, size, "%s (%s:%u)", fn[0] ? fn : "[unknown]", file, f->line);
		return n < 0 ? 0 : (size_t)n;
	}
	if (!fn[0]) {
		if (g == ANALYSIS_GRANULARITY_FUNCTION)
			n = snprintf(buf, size, "%s+?", capture__module_label(c, f->module));
		else
			n = snprintf(buf, size, "%s+0x%" PRIx64, capture__module_label(c, f->module), f->address);
		return n < 0 ? 0 : (size_t)n;
	}
	capture__frame_label(c, f, name, sizeof(name));
	switch (g) {
	case ANALYSIS_GRANULARITY_LINE:
		if (f->line && file[0])
			n = snprintf(buf, size, "%s (%s:%u)", name, basename_of(file), f->line);
		else
			n = snprintf(buf, size, "%s", name);
		break;
	case ANALYSIS_GRANULARITY_ADDRESS:
		n = snprintf(buf, size, "%s (%s+0x%" PRIx64 ")", name, capture__module_label(c, f->module),
			     f->address);
		break;
	default:
		n = snprintf(buf, size, "%s", name);
	}
	return n < 0 ? 0 : (size_t)n;
}

static uint64_t name_hash(const char *s, size_t len, uint32_t kind)
{
	uint64_t h = 0xcbf29ce484222325ull ^ kind; /* FNV-1a, then mixed */
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return analysis__mix64(h);
}

static int slots_rehash(struct names_storage *st, uint32_t ncap)
{
	uint32_t *slots = malloc((size_t)ncap * sizeof(*slots));
	uint32_t k, i;

	if (!slots)
		return -ENOMEM;
	memset(slots, 0xff, (size_t)ncap * sizeof(*slots));
	for (k = 0; k < st->nkeys; k++) {
		const char *s = st->text + st->name_off[k];

		i = (uint32_t)name_hash(s, strlen(s), st->keys[k].kind) & (ncap - 1);
		while (slots[i] != U64MAP_EMPTY)
			i = (i + 1) & (ncap - 1);
		slots[i] = k;
	}
	free(st->slots);
	st->slots = slots;
	st->slots_cap = ncap;
	return 0;
}

/* Key id of (kind, s[0..len)), adding it if new; U64MAP_EMPTY on ENOMEM. */
static uint32_t names_intern(struct names_storage *st, const char *s, size_t len, uint32_t kind)
{
	uint32_t i, k;

	if ((uint64_t)(st->nkeys + 1) * 2 > st->slots_cap) {
		if (st->slots_cap >= (1u << 31) ||
		    slots_rehash(st, st->slots_cap ? st->slots_cap * 2 : 256))
			return U64MAP_EMPTY;
	}
	i = (uint32_t)name_hash(s, len, kind) & (st->slots_cap - 1);
	while ((k = st->slots[i]) != U64MAP_EMPTY) {
		const char *t = st->text + st->name_off[k];

		if (st->keys[k].kind == kind && !strncmp(t, s, len) && t[len] == '\0')
			return k;
		i = (i + 1) & (st->slots_cap - 1);
	}
	if (len > UINT32_MAX - 2 - st->text_len ||
	    analysis__grow((void **)&st->text, &st->text_cap, (uint64_t)st->text_len + len + 1, 1) ||
	    analysis__grow((void **)&st->keys, &st->keys_cap, st->nkeys + 1, sizeof(*st->keys)) ||
	    analysis__grow((void **)&st->name_off, &st->name_off_cap, st->nkeys + 1,
			   sizeof(*st->name_off)))
		return U64MAP_EMPTY;
	k = st->nkeys++;
	memcpy(st->text + st->text_len, s, len);
	st->text[st->text_len + len] = '\0';
	st->name_off[k] = st->text_len;
	st->text_len += (uint32_t)len + 1;
	st->keys[k] = (struct analysis_key){ .kind = kind, .frame = CAPTURE_NONE };
	st->slots[i] = k;
	return k;
}

/* Display order for ranks: name bytes, then kind, then id. */
static int rank_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct names_storage *st = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	int r = strcmp(st->text + st->name_off[a], st->text + st->name_off[b]);

	if (r)
		return r;
	if (st->keys[a].kind != st->keys[b].kind)
		return st->keys[a].kind < st->keys[b].kind ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int names_rank(struct names_storage *st)
{
	uint32_t *order = malloc(((size_t)st->nkeys + 1) * sizeof(*order));
	uint32_t i;

	if (!order)
		return -ENOMEM;
	for (i = 0; i < st->nkeys; i++)
		order[i] = i;
	qsort_r(order, st->nkeys, sizeof(*order), rank_cmp, st);
	for (i = 0; i < st->nkeys; i++)
		st->keys[order[i]].rank = i;
	free(order);
	return 0;
}

/*
 * MODULE granularity: row_keys[s] is s's frame key, or ANALYSIS_KEY_FOLDED
 * when it equals the key of the node its caller row charges (the nearest
 * unfolded ancestor), so runs of one module are one node.  A row's parent
 * has a smaller index, so one pass in row order sees callers first.
 */
static int names_collapse(const struct capture *c, struct names_storage *st)
{
	uint32_t *node_key = malloc(((size_t)c->nstacks + 1) * sizeof(*node_key));
	uint32_t i;

	st->row_keys = malloc(((size_t)c->nstacks + 1) * sizeof(*st->row_keys));
	if (!node_key || !st->row_keys) {
		free(node_key);
		return -ENOMEM;
	}
	for (i = 0; i < c->nstacks; i++) {
		uint32_t parent = c->stacks[i].parent;
		uint32_t up = parent == CAPTURE_NONE ? ANALYSIS_KEY_FOLDED : node_key[parent];
		uint32_t k = st->frame_keys[c->stacks[i].frame];

		st->row_keys[i] = k == up ? ANALYSIS_KEY_FOLDED : k;
		node_key[i] = k == ANALYSIS_KEY_FOLDED ? up : k;
	}
	free(node_key);
	return 0;
}

struct analysis_names *analysis_names__new(const struct capture *c)
{
	static const struct analysis_key_options as_recorded = {
		.granularity = ANALYSIS_GRANULARITY_FRAME,
	};

	return analysis_names__new_opts(c, &as_recorded);
}

struct analysis_names *analysis_names__new_opts(const struct capture *c,
						const struct analysis_key_options *o)
{
	struct analysis_names *n = calloc(1, sizeof(*n));
	struct names_storage *st = NULL;
	size_t bufsz = 256, len;
	char *buf = malloc(bufsz);
	uint32_t i;
	int err = -ENOMEM;

	if (!n || !buf)
		goto cleanup;
	st = calloc(1, sizeof(*st));
	if (!st)
		goto cleanup;
	n->capture = c;
	n->storage = st;
	n->options = *o;
	st->frame_keys = malloc(((size_t)c->nframes + 1) * sizeof(*st->frame_keys));
	st->thread_keys = malloc(((size_t)c->nthreads + 1) * sizeof(*st->thread_keys));
	if (!st->frame_keys || !st->thread_keys)
		goto cleanup;

	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *f = &c->frames[i];
		uint32_t kind = ANALYSIS_KEY_FUNCTION;

		if (o->fold_inline && (f->flags & CAPTURE_FRAME_F_INLINE) &&
		    !(f->flags & CAPTURE_FRAME_F_TRUNCATION)) {
			st->frame_keys[i] = ANALYSIS_KEY_FOLDED;
			continue;
		}
		len = analysis__frame_key_name(c, f, o->granularity, buf, bufsz);
		if (len >= bufsz) {
			char *nb = realloc(buf, len + 1);

			if (!nb)
				goto cleanup;
			buf = nb;
			bufsz = len + 1;
			analysis__frame_key_name(c, f, o->granularity, buf, bufsz);
		}
		if (f->flags & CAPTURE_FRAME_F_TRUNCATION)
			kind = ANALYSIS_KEY_TRUNCATION;
		else if (f->flags & CAPTURE_FRAME_F_KERNEL)
			kind = ANALYSIS_KEY_KERNEL;
		else if ((f->flags & CAPTURE_FRAME_F_INLINE) &&
			 o->granularity != ANALYSIS_GRANULARITY_MODULE)
			kind = ANALYSIS_KEY_INLINE;
		st->frame_keys[i] = names_intern(st, buf, len, kind);
		if (st->frame_keys[i] == U64MAP_EMPTY)
			goto cleanup;
		if (st->keys[st->frame_keys[i]].frame == CAPTURE_NONE)
			st->keys[st->frame_keys[i]].frame = i;
	}

	for (i = 0; i < c->nthreads; i++) {
		const struct capture_thread *t = &c->threads[i];
		const char *comm = capture__string(c, t->comm);
		char *s = NULL;
		int r = asprintf(&s, "%s-%" PRIu32, comm[0] ? comm : "[unknown]", t->tid);

		if (r < 0)
			goto cleanup;
		st->thread_keys[i] = names_intern(st, s, (size_t)r, ANALYSIS_KEY_THREAD);
		free(s);
		if (st->thread_keys[i] == U64MAP_EMPTY)
			goto cleanup;
	}

	n->no_thread_key = names_intern(st, "[no thread]", 11, ANALYSIS_KEY_THREAD);
	n->empty_stack_key = names_intern(st, "[empty stack]", 13, ANALYSIS_KEY_TRUNCATION);
	n->clipped_key = names_intern(st, "[clipped by the recording window]", 33,
				      ANALYSIS_KEY_TRUNCATION);
	if (n->no_thread_key == U64MAP_EMPTY || n->empty_stack_key == U64MAP_EMPTY ||
	    n->clipped_key == U64MAP_EMPTY)
		goto cleanup;

	err = names_rank(st);
	if (err)
		goto cleanup;
	if (o->granularity == ANALYSIS_GRANULARITY_MODULE) {
		err = names_collapse(c, st);
		if (err)
			goto cleanup;
	}
	for (i = 0; i < st->nkeys; i++)
		st->keys[i].name = st->text + st->name_off[i];

	n->keys = st->keys;
	n->nkeys = st->nkeys;
	n->frame_keys = st->frame_keys;
	n->thread_keys = st->thread_keys;
	n->row_keys = st->row_keys;
	err = 0;
cleanup:
	free(buf);
	if (err) {
		analysis_names__free(n);
		errno = -err;
		return NULL;
	}
	/* The intern table is only needed while building. */
	free(st->slots);
	st->slots = NULL;
	st->slots_cap = 0;
	return n;
}

void analysis_names__free(struct analysis_names *n)
{
	struct names_storage *st;

	if (!n)
		return;
	st = n->storage;
	if (st) {
		free(st->keys);
		free(st->name_off);
		free(st->text);
		free(st->slots);
		free(st->frame_keys);
		free(st->thread_keys);
		free(st->row_keys);
		free(st);
	}
	free(n);
}
