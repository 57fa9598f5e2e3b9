// SPDX-License-Identifier: MIT
/*
 * The capture builder: dense tables grown by appending, with hash indexes
 * for the interned kinds.
 *
 * Ids are row indexes assigned in insertion order; the hash indexes only
 * answer "is this row already there", so no hash order reaches the output.
 * The first allocation failure is sticky: every later add returns
 * CAPTURE_NONE and serialize/write report -ENOMEM.
 */
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "capture/capture.h"
#include "capture/format.h"

/* A growable array of fixed-size rows; at most CAPTURE_NONE rows (ids < CAPTURE_NONE). */
struct vec {
	void *data;
	uint32_t len; /* rows */
	uint32_t cap; /* rows allocated */
};

/*
 * Open addressing, linear probing.  A slot is 0 when empty, else the high
 * 32 bits of the row's hash << 32 | (id + 1), so growing needs no rehash
 * of the rows and most mismatches are rejected without touching them.
 */
struct intern {
	uint64_t *slots;
	uint32_t cap; /* power of two, or 0 */
	uint32_t used;
};

/* Does row id equal key?  ctx is the builder. */
typedef bool (*intern_eq_fn)(const struct capture_builder *b, uint32_t id, const void *key);

struct capture_builder {
	int err; /* sticky: 0 or -ENOMEM */
	/* strings: str_offsets has nstrings + 1 u32 entries into str_data */
	struct vec str_offsets;
	char *str_data;
	size_t str_len, str_cap;
	struct intern str_index;
	/* every table but CAPTURE_TABLE_STRINGS */
	struct vec tables[CAPTURE_TABLE_COUNT];
	struct intern frame_index, stack_index, event_index, counter_index, meta_index;
	/* capture_builder__intern_row(): rows of appended tables added through it */
	struct intern row_index[CAPTURE_TABLE_COUNT];
	ZSTD_CCtx *cctx;
	char msg[256];
};

/* ---- hashing ------------------------------------------------------------ */

static uint64_t mix64(uint64_t h)
{
	/* splitmix64 finalizer */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = mix64(h ^ w);
	}
	w = 0;
	if (n) {
		memcpy(&w, s, n);
		h = mix64(h ^ w ^ 0xff);
	}
	return mix64(h);
}

/* ---- vec ------------------------------------------------------------------ */

/* Make room for one more row; returns the row's address or NULL. */
static void *vec__push(struct vec *v, size_t row_size)
{
	if (v->len == v->cap) {
		uint32_t cap;
		size_t bytes;
		void *data;

		if (v->cap >= CAPTURE_NONE)
			return NULL;
		cap = v->cap ? (v->cap > CAPTURE_NONE / 2 ? CAPTURE_NONE : v->cap * 2) : 16;
		if (__builtin_mul_overflow((size_t)cap, row_size, &bytes))
			return NULL;
		data = realloc(v->data, bytes);
		if (!data)
			return NULL;
		v->data = data;
		v->cap = cap;
	}
	return (char *)v->data + (size_t)v->len++ * row_size;
}

static void *vec__row(const struct vec *v, size_t row_size, uint32_t id)
{
	return (char *)v->data + (size_t)id * row_size;
}

/* ---- intern ------------------------------------------------------------- */

/* Keep the load at most 3/4 after one more insert. */
static int intern__reserve(struct intern *ix)
{
	uint64_t *slots;
	uint32_t cap, i;

	if ((uint64_t)(ix->used + 1) * 4 <= (uint64_t)ix->cap * 3)
		return 0;
	if (ix->cap >= (1u << 31))
		return -ENOMEM;
	cap = ix->cap ? ix->cap * 2 : 64;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; i < ix->cap; i++) {
		uint64_t s = ix->slots[i];
		uint32_t j;

		if (!s)
			continue;
		for (j = (uint32_t)(s >> 32) & (cap - 1); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = s;
	}
	free(ix->slots);
	ix->slots = slots;
	ix->cap = cap;
	return 0;
}

/*
 * Look key up.  Returns its id, or CAPTURE_NONE with *slot the empty slot
 * to insert it into.  Call intern__reserve() first (cap must be > used).
 */
static uint32_t intern__find(const struct intern *ix, uint64_t hash, intern_eq_fn eq,
			     const struct capture_builder *b, const void *key, uint32_t *slot)
{
	uint32_t h = (uint32_t)(hash >> 32), mask = ix->cap - 1, j;

	for (j = h & mask; ix->slots[j]; j = (j + 1) & mask) {
		uint64_t s = ix->slots[j];
		uint32_t id = (uint32_t)s - 1;

		if ((uint32_t)(s >> 32) == h && eq(b, id, key))
			return id;
	}
	*slot = j;
	return CAPTURE_NONE;
}

static void intern__insert(struct intern *ix, uint32_t slot, uint64_t hash, uint32_t id)
{
	ix->slots[slot] = (hash >> 32) << 32 | ((uint64_t)id + 1);
	ix->used++;
}

static void intern__release(struct intern *ix)
{
	free(ix->slots);
	memset(ix, 0, sizeof(*ix));
}

/* ---- builder ------------------------------------------------------------ */

static uint32_t builder__fail(struct capture_builder *b)
{
	if (!b->err)
		b->err = -ENOMEM;
	return CAPTURE_NONE;
}

struct capture_builder *capture_builder__new(void)
{
	struct capture_builder *b = calloc(1, sizeof(*b));
	uint32_t *zero;

	if (!b)
		return NULL;
	/* string 0 is "": offsets {0, 1}, data "\0" */
	zero = vec__push(&b->str_offsets, sizeof(uint32_t));
	if (!zero)
		goto cleanup;
	*zero = 0;
	if (capture_builder__string(b, "") != 0)
		goto cleanup;
	return b;

cleanup:
	capture_builder__free(b);
	errno = ENOMEM;
	return NULL;
}

void capture_builder__free(struct capture_builder *b)
{
	int t;

	if (!b)
		return;
	free(b->str_offsets.data);
	free(b->str_data);
	intern__release(&b->str_index);
	for (t = 0; t < CAPTURE_TABLE_COUNT; t++)
		free(b->tables[t].data);
	intern__release(&b->frame_index);
	intern__release(&b->stack_index);
	intern__release(&b->event_index);
	intern__release(&b->counter_index);
	intern__release(&b->meta_index);
	for (t = 0; t < CAPTURE_TABLE_COUNT; t++)
		intern__release(&b->row_index[t]);
	ZSTD_freeCCtx(b->cctx);
	free(b);
}

void capture_builder__swap(struct capture_builder *a, struct capture_builder *b)
{
	struct capture_builder t = *a;

	*a = *b;
	*b = t;
}

struct str_key {
	const char *s;
	size_t len; /* without the NUL */
};

static bool str_eq(const struct capture_builder *b, uint32_t id, const void *key)
{
	const struct str_key *k = key;
	const uint32_t *off = b->str_offsets.data;

	return off[id + 1] - off[id] - 1 == k->len && !memcmp(b->str_data + off[id], k->s, k->len);
}

/*
 * Intern s (NULL is taken as "").  Ids are dense and in first-insertion
 * order; the total of string bytes is limited to 4 GiB - 1 by the u32
 * offsets, beyond which this fails like an allocation.
 */
uint32_t capture_builder__string(struct capture_builder *b, const char *s)
{
	struct str_key key = {s ? s : "", 0};
	uint32_t id, slot = 0, *off;
	uint64_t hash;

	if (b->err)
		return CAPTURE_NONE;
	key.len = strlen(key.s);
	hash = hash_bytes(key.s, key.len);
	if (intern__reserve(&b->str_index))
		return builder__fail(b);
	id = intern__find(&b->str_index, hash, str_eq, b, &key, &slot);
	if (id != CAPTURE_NONE)
		return id;

	if (key.len >= UINT32_MAX - b->str_len)
		return builder__fail(b);
	if (b->str_len + key.len + 1 > b->str_cap) {
		size_t cap = b->str_cap ? b->str_cap : 4096;
		char *data;

		while (cap < b->str_len + key.len + 1)
			cap *= 2;
		data = realloc(b->str_data, cap);
		if (!data)
			return builder__fail(b);
		b->str_data = data;
		b->str_cap = cap;
	}
	id = b->str_offsets.len - 1;
	off = vec__push(&b->str_offsets, sizeof(uint32_t));
	if (!off)
		return builder__fail(b);
	memcpy(b->str_data + b->str_len, key.s, key.len + 1);
	b->str_len += key.len + 1;
	*off = (uint32_t)b->str_len;
	intern__insert(&b->str_index, slot, hash, id);
	return id;
}

const char *capture_builder__string_at(const struct capture_builder *b, uint32_t id)
{
	if (id >= b->str_offsets.len - 1 || !b->str_data)
		return id == 0 ? "" : NULL;
	return b->str_data + ((const uint32_t *)b->str_offsets.data)[id];
}

static uint32_t builder__append(struct capture_builder *b, enum capture_table t, const void *row)
{
	uint32_t size = capture_table_info[t].row_size;
	void *dst;

	if (b->err)
		return CAPTURE_NONE;
	dst = vec__push(&b->tables[t], size);
	if (!dst)
		return builder__fail(b);
	memcpy(dst, row, size);
	return b->tables[t].len - 1;
}

/* Rows of these tables have no padding (capture.h asserts their sizes), so bytes compare. */
static bool frame_eq(const struct capture_builder *b, uint32_t id, const void *key)
{
	return !memcmp(vec__row(&b->tables[CAPTURE_TABLE_FRAMES], sizeof(struct capture_frame), id),
		       key, sizeof(struct capture_frame));
}

static bool stack_eq(const struct capture_builder *b, uint32_t id, const void *key)
{
	return !memcmp(vec__row(&b->tables[CAPTURE_TABLE_STACKS], sizeof(struct capture_stack), id),
		       key, sizeof(struct capture_stack));
}

static bool event_eq(const struct capture_builder *b, uint32_t id, const void *key)
{
	return !memcmp(vec__row(&b->tables[CAPTURE_TABLE_EVENTS], sizeof(struct capture_event), id),
		       key, sizeof(struct capture_event));
}

/* Key: the name's string id. */
static bool counter_eq(const struct capture_builder *b, uint32_t id, const void *key)
{
	const struct capture_counter *row =
	    vec__row(&b->tables[CAPTURE_TABLE_COUNTERS], sizeof(*row), id);

	return row->name == *(const uint32_t *)key;
}

static bool meta_eq(const struct capture_builder *b, uint32_t id, const void *key)
{
	const struct capture_meta *row = vec__row(&b->tables[CAPTURE_TABLE_META], sizeof(*row), id);

	return row->key == *(const uint32_t *)key;
}

static uint32_t builder__intern(struct capture_builder *b, enum capture_table t, struct intern *ix,
				intern_eq_fn eq, const void *row)
{
	uint32_t size = capture_table_info[t].row_size, slot = 0, id;
	uint64_t hash = hash_bytes(row, size);

	if (b->err)
		return CAPTURE_NONE;
	if (intern__reserve(ix))
		return builder__fail(b);
	id = intern__find(ix, hash, eq, b, row, &slot);
	if (id != CAPTURE_NONE)
		return id;
	id = builder__append(b, t, row);
	if (id != CAPTURE_NONE)
		intern__insert(ix, slot, hash, id);
	return id;
}

uint32_t capture_builder__add_module(struct capture_builder *b, const struct capture_module *row)
{
	return builder__append(b, CAPTURE_TABLE_MODULES, row);
}

uint32_t capture_builder__add_process(struct capture_builder *b, const struct capture_process *row)
{
	return builder__append(b, CAPTURE_TABLE_PROCESSES, row);
}

uint32_t capture_builder__add_thread(struct capture_builder *b, const struct capture_thread *row)
{
	return builder__append(b, CAPTURE_TABLE_THREADS, row);
}

uint32_t capture_builder__add_mapping(struct capture_builder *b, const struct capture_mapping *row)
{
	return builder__append(b, CAPTURE_TABLE_MAPPINGS, row);
}

/* Interned by every field; first_line is stored (and part of the identity) only for
 * interpreted frames, 0 otherwise. */
uint32_t capture_builder__add_frame(struct capture_builder *b, const struct capture_frame *row)
{
	struct capture_frame f = *row;

	if (!(f.flags & CAPTURE_FRAME_F_INTERPRETED))
		f.first_line = 0;
	return builder__intern(b, CAPTURE_TABLE_FRAMES, &b->frame_index, frame_eq, &f);
}

/*
 * Interned by (parent, frame).  parent must be CAPTURE_NONE or an existing
 * stack id (so smaller than the new row's); serialize reports -EINVAL
 * otherwise.
 */
uint32_t capture_builder__add_stack(struct capture_builder *b, uint32_t parent, uint32_t frame)
{
	struct capture_stack s = {.parent = parent, .frame = frame};

	return builder__intern(b, CAPTURE_TABLE_STACKS, &b->stack_index, stack_eq, &s);
}

uint32_t capture_builder__add_event(struct capture_builder *b, const struct capture_event *row)
{
	return builder__intern(b, CAPTURE_TABLE_EVENTS, &b->event_index, event_eq, row);
}

uint32_t capture_builder__add_sample(struct capture_builder *b, const struct capture_sample *row)
{
	return builder__append(b, CAPTURE_TABLE_SAMPLES, row);
}

uint32_t capture_builder__add_interval(struct capture_builder *b,
				       const struct capture_interval *row)
{
	struct capture_interval r = *row;

	r.reserved = 0;
	return builder__append(b, CAPTURE_TABLE_INTERVALS, &r);
}

static bool row_eq(const struct capture_builder *b, uint32_t id, const void *key)
{
	const int *t = key; /* key: the table, then the row right after it (struct row_key) */
	uint32_t size = capture_table_info[*t].row_size;

	return !memcmp(vec__row(&b->tables[*t], size, id), (const char *)key + sizeof(uint64_t),
		       size);
}

uint32_t capture_builder__intern_row(struct capture_builder *b, enum capture_table t,
				     const void *row)
{
	struct {
		int table;
		uint64_t row[sizeof(struct capture_interval) / sizeof(uint64_t)];
	} key;
	uint32_t size, slot = 0, id;
	uint64_t hash;

	_Static_assert(offsetof(__typeof__(key), row) == sizeof(uint64_t), "row_key layout");
	if (t != CAPTURE_TABLE_MODULES && t != CAPTURE_TABLE_PROCESSES &&
	    t != CAPTURE_TABLE_THREADS && t != CAPTURE_TABLE_MAPPINGS && t != CAPTURE_TABLE_CGROUPS &&
	    t != CAPTURE_TABLE_PROBE_SITES)
		return builder__fail(b);
	size = capture_table_info[t].row_size;
	if (size > sizeof(key.row))
		return builder__fail(b);
	key.table = t;
	memcpy(key.row, row, size);
	hash = hash_bytes(row, size);
	if (b->err)
		return CAPTURE_NONE;
	if (intern__reserve(&b->row_index[t]))
		return builder__fail(b);
	id = intern__find(&b->row_index[t], hash, row_eq, b, &key, &slot);
	if (id != CAPTURE_NONE)
		return id;
	id = builder__append(b, t, row);
	if (id != CAPTURE_NONE)
		intern__insert(&b->row_index[t], slot, hash, id);
	return id;
}

void capture_builder__drop_before(struct capture_builder *b, uint64_t until_ns)
{
	struct vec *smp = &b->tables[CAPTURE_TABLE_SAMPLES], *iv = &b->tables[CAPTURE_TABLE_INTERVALS];
	struct vec *scg = &b->tables[CAPTURE_TABLE_SAMPLE_CGROUPS];
	struct capture_sample *s = smp->data;
	struct capture_interval *v = iv->data;
	uint32_t *cg = scg->data; /* a column beside the samples: empty or shorter */
	uint32_t n = 0, ncg = 0;

	for (uint32_t i = 0; i < smp->len; i++)
		if (until_ns != UINT64_MAX && s[i].time_ns >= until_ns) {
			if (i < scg->len)
				cg[n] = cg[i], ncg = n + 1;
			s[n++] = s[i];
		}
	smp->len = n;
	scg->len = ncg;
	n = 0;
	for (uint32_t i = 0; i < iv->len; i++)
		if (until_ns != UINT64_MAX && v[i].end_ns >= until_ns)
			v[n++] = v[i];
	iv->len = n;
	{
		struct vec *pv = &b->tables[CAPTURE_TABLE_PROBE_RECORDS];
		struct capture_probe_record *r = pv->data;

		n = 0;
		for (uint32_t i = 0; i < pv->len; i++)
			if (until_ns != UINT64_MAX && r[i].time_ns >= until_ns)
				r[n++] = r[i];
		pv->len = n;
	}
	capture_builder__clear_counters(b);
}

void capture_builder__clear_counters(struct capture_builder *b)
{
	b->tables[CAPTURE_TABLE_COUNTERS].len = 0;
	intern__release(&b->counter_index);
}

uint32_t capture_builder__add_cgroup(struct capture_builder *b, const struct capture_cgroup *row)
{
	struct capture_cgroup r = *row;

	r.reserved = 0;
	return builder__append(b, CAPTURE_TABLE_CGROUPS, &r);
}

uint32_t capture_builder__add_probe_site(struct capture_builder *b,
					 const struct capture_probe_site *row)
{
	return builder__append(b, CAPTURE_TABLE_PROBE_SITES, row);
}

uint32_t capture_builder__add_probe_record(struct capture_builder *b,
					   const struct capture_probe_record *row)
{
	return builder__append(b, CAPTURE_TABLE_PROBE_RECORDS, row);
}

int capture_builder__set_sample_cgroup(struct capture_builder *b, uint32_t sample,
				       uint32_t cgroup)
{
	struct vec *v = &b->tables[CAPTURE_TABLE_SAMPLE_CGROUPS];
	const uint32_t none = CAPTURE_NONE;

	if (b->err)
		return b->err;
	while (v->len <= sample)
		if (builder__append(b, CAPTURE_TABLE_SAMPLE_CGROUPS, &none) == CAPTURE_NONE)
			return b->err ? b->err : -ENOMEM;
	((uint32_t *)v->data)[sample] = cgroup;
	return 0;
}

/* Find the row of a name-keyed table (counters, meta) whose key is the string key. */
static uint32_t builder__keyed(struct capture_builder *b, struct intern *ix, intern_eq_fn eq,
			       uint32_t key, uint64_t *hash, uint32_t *slot)
{
	*hash = mix64(key);
	if (intern__reserve(ix)) {
		builder__fail(b);
		return CAPTURE_NONE;
	}
	return intern__find(ix, *hash, eq, b, &key, slot);
}

/* Adds value to the counter called name (created at 0, in first-add order); saturates. */
void capture_builder__add_counter(struct capture_builder *b, const char *name, uint64_t value)
{
	struct capture_counter row = {.name = capture_builder__string(b, name), .value = value};
	uint32_t slot = 0, id;
	uint64_t hash;

	if (b->err)
		return;
	id = builder__keyed(b, &b->counter_index, counter_eq, row.name, &hash, &slot);
	if (b->err)
		return;
	if (id != CAPTURE_NONE) {
		struct capture_counter *c =
		    vec__row(&b->tables[CAPTURE_TABLE_COUNTERS], sizeof(*c), id);

		if (__builtin_add_overflow(c->value, value, &c->value))
			c->value = UINT64_MAX;
		return;
	}
	id = builder__append(b, CAPTURE_TABLE_COUNTERS, &row);
	if (id != CAPTURE_NONE)
		intern__insert(&b->counter_index, slot, hash, id);
}

/* Sets key to value; a key keeps the position of its first set. */
void capture_builder__set_meta(struct capture_builder *b, const char *key, const char *value)
{
	struct capture_meta row = {
	    .key = capture_builder__string(b, key),
	    .value = capture_builder__string(b, value),
	};
	uint32_t slot = 0, id;
	uint64_t hash;

	if (b->err)
		return;
	id = builder__keyed(b, &b->meta_index, meta_eq, row.key, &hash, &slot);
	if (b->err)
		return;
	if (id != CAPTURE_NONE) {
		struct capture_meta *m = vec__row(&b->tables[CAPTURE_TABLE_META], sizeof(*m), id);

		m->value = row.value;
		return;
	}
	id = builder__append(b, CAPTURE_TABLE_META, &row);
	if (id != CAPTURE_NONE)
		intern__insert(&b->meta_index, slot, hash, id);
}

static void *builder__row(struct capture_builder *b, enum capture_table t, uint32_t id)
{
	if (id >= b->tables[t].len)
		return NULL;
	return vec__row(&b->tables[t], capture_table_info[t].row_size, id);
}

struct capture_thread *capture_builder__thread(struct capture_builder *b, uint32_t id)
{
	return builder__row(b, CAPTURE_TABLE_THREADS, id);
}

struct capture_process *capture_builder__process(struct capture_builder *b, uint32_t id)
{
	return builder__row(b, CAPTURE_TABLE_PROCESSES, id);
}

struct capture_module *capture_builder__module(struct capture_builder *b, uint32_t id)
{
	return builder__row(b, CAPTURE_TABLE_MODULES, id);
}

struct capture_frame *capture_builder__frame(struct capture_builder *b, uint32_t id)
{
	return builder__row(b, CAPTURE_TABLE_FRAMES, id);
}

uint32_t capture_builder__sample_count(const struct capture_builder *b)
{
	return b->tables[CAPTURE_TABLE_SAMPLES].len;
}

size_t capture_builder__bytes(const struct capture_builder *b)
{
	const struct intern *ix[] = {&b->str_index,   &b->frame_index,	 &b->stack_index,
				     &b->event_index, &b->counter_index, &b->meta_index};
	size_t n = sizeof(*b) + (size_t)b->str_offsets.cap * sizeof(uint32_t) + b->str_cap;
	int t;

	for (t = 0; t < CAPTURE_TABLE_COUNT; t++)
		n += (size_t)b->tables[t].cap * capture_table_info[t].row_size;
	for (t = 0; t < (int)(sizeof(ix) / sizeof(ix[0])); t++)
		n += (size_t)ix[t]->cap * sizeof(uint64_t);
	return n;
}

const char *capture_builder__error(const struct capture_builder *b) { return b->msg; }

/* ---- for writer.c ------------------------------------------------------- */

/* The cgroup set for sample i so far, CAPTURE_NONE when none was. */
static uint32_t builder__sample_cgroup(const struct capture_builder *b, uint32_t i)
{
	const struct vec *v = &b->tables[CAPTURE_TABLE_SAMPLE_CGROUPS];

	return i < v->len ? ((const uint32_t *)v->data)[i] : CAPTURE_NONE;
}

int capture_builder__view(struct capture_builder *b, struct capture *view)
{
	static const uint64_t empty; /* an aligned non-NULL address for empty tables */
	const void *rows[CAPTURE_TABLE_COUNT];
	int t;

	memset(view, 0, sizeof(*view));
	for (t = 0; t < CAPTURE_TABLE_COUNT; t++)
		rows[t] = b->tables[t].data ? b->tables[t].data : (const void *)&empty;

	view->version = CAPTURE_FORMAT_VERSION;
	view->nstrings = b->str_offsets.len - 1;
	view->nmodules = b->tables[CAPTURE_TABLE_MODULES].len;
	view->nprocesses = b->tables[CAPTURE_TABLE_PROCESSES].len;
	view->nthreads = b->tables[CAPTURE_TABLE_THREADS].len;
	view->nmappings = b->tables[CAPTURE_TABLE_MAPPINGS].len;
	view->nframes = b->tables[CAPTURE_TABLE_FRAMES].len;
	view->nstacks = b->tables[CAPTURE_TABLE_STACKS].len;
	view->nevents = b->tables[CAPTURE_TABLE_EVENTS].len;
	view->nsamples = b->tables[CAPTURE_TABLE_SAMPLES].len;
	view->ncounters = b->tables[CAPTURE_TABLE_COUNTERS].len;
	view->nmeta = b->tables[CAPTURE_TABLE_META].len;
	view->modules = rows[CAPTURE_TABLE_MODULES];
	view->processes = rows[CAPTURE_TABLE_PROCESSES];
	view->threads = rows[CAPTURE_TABLE_THREADS];
	view->mappings = rows[CAPTURE_TABLE_MAPPINGS];
	view->frames = rows[CAPTURE_TABLE_FRAMES];
	view->stacks = rows[CAPTURE_TABLE_STACKS];
	view->events = rows[CAPTURE_TABLE_EVENTS];
	view->samples = rows[CAPTURE_TABLE_SAMPLES];
	view->counters = rows[CAPTURE_TABLE_COUNTERS];
	view->meta = rows[CAPTURE_TABLE_META];
	view->nintervals = b->tables[CAPTURE_TABLE_INTERVALS].len;
	view->intervals = rows[CAPTURE_TABLE_INTERVALS];
	/* the column covers every sample once any has a cgroup */
	if (b->tables[CAPTURE_TABLE_SAMPLE_CGROUPS].len && view->nsamples)
		capture_builder__set_sample_cgroup(b, view->nsamples - 1,
						   builder__sample_cgroup(b, view->nsamples - 1));
	rows[CAPTURE_TABLE_SAMPLE_CGROUPS] = b->tables[CAPTURE_TABLE_SAMPLE_CGROUPS].data
						     ? b->tables[CAPTURE_TABLE_SAMPLE_CGROUPS].data
						     : (const void *)&empty;
	view->ncgroups = b->tables[CAPTURE_TABLE_CGROUPS].len;
	view->cgroups = rows[CAPTURE_TABLE_CGROUPS];
	view->nsample_cgroups = b->tables[CAPTURE_TABLE_SAMPLE_CGROUPS].len;
	view->sample_cgroups = rows[CAPTURE_TABLE_SAMPLE_CGROUPS];
	view->nprobe_sites = b->tables[CAPTURE_TABLE_PROBE_SITES].len;
	view->probe_sites = rows[CAPTURE_TABLE_PROBE_SITES];
	view->nprobe_records = b->tables[CAPTURE_TABLE_PROBE_RECORDS].len;
	view->probe_records = rows[CAPTURE_TABLE_PROBE_RECORDS];
	view->string_offsets = b->str_offsets.data;
	view->string_data = b->str_data;
	return b->err;
}

ZSTD_CCtx *capture_builder__cctx(struct capture_builder *b)
{
	if (!b->cctx)
		b->cctx = ZSTD_createCCtx();
	return b->cctx;
}

char *capture_builder__msg(struct capture_builder *b, size_t *len)
{
	*len = sizeof(b->msg);
	return b->msg;
}
