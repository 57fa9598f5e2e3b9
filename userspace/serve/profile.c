// SPDX-License-Identifier: MIT
/* Loading a capture to serve: the capture, its three looks and their names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/no_event.h"
#include "capture/segment_dir.h"
#include "internal.h"

/* FNV-1a over bytes: deterministic, independent of paths and load addresses. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Identity of the capture's content: every table a query reads. */
static uint64_t capture_hash(const struct capture *c)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = hash_bytes(h, c->samples, (size_t)c->nsamples * sizeof(*c->samples));
	h = hash_bytes(h, c->intervals, (size_t)c->nintervals * sizeof(*c->intervals));
	h = hash_bytes(h, c->stacks, (size_t)c->nstacks * sizeof(*c->stacks));
	h = hash_bytes(h, c->frames, (size_t)c->nframes * sizeof(*c->frames));
	h = hash_bytes(h, c->threads, (size_t)c->nthreads * sizeof(*c->threads));
	h = hash_bytes(h, c->events, (size_t)c->nevents * sizeof(*c->events));
	h = hash_bytes(h, c->probe_sites, (size_t)c->nprobe_sites * sizeof(*c->probe_sites));
	h = hash_bytes(h, c->probe_records, (size_t)c->nprobe_records * sizeof(*c->probe_records));
	h = hash_bytes(h, c->string_data, c->string_offsets[c->nstrings]);
	return h;
}

static void time_span(struct serve_profile *p)
{
	const struct capture *c = p->capture;
	uint64_t lo = UINT64_MAX, hi = 0;
	uint32_t i;

	for (i = 0; i < c->nsamples; i++) {
		lo = c->samples[i].time_ns < lo ? c->samples[i].time_ns : lo;
		hi = c->samples[i].time_ns > hi ? c->samples[i].time_ns : hi;
	}
	for (i = 0; i < c->nintervals; i++) {
		lo = c->intervals[i].start_ns < lo ? c->intervals[i].start_ns : lo;
		hi = c->intervals[i].end_ns > hi ? c->intervals[i].end_ns : hi;
	}
	/* zones and marks after the last sample stay on the timeline (the
	 * origin stays the other views': a zone begun before it is negative) */
	for (i = 0; lo != UINT64_MAX && i < c->nprobe_records; i++)
		hi = c->probe_records[i].time_ns > hi ? c->probe_records[i].time_ns : hi;
	p->origin_ns = lo == UINT64_MAX ? 0 : lo;
	p->last_ns = lo == UINT64_MAX ? 0 : hi;
}

int serve_profile__new(struct capture *c, const char *name, struct serve_profile **out)
{
	static const enum analysis_look_kind kinds[SERVE_NLOOKS] = {
		[SERVE_LOOK_LOGICAL] = ANALYSIS_LOOK_LOGICAL,
		[SERVE_LOOK_NATIVE] = ANALYSIS_LOOK_NATIVE,
		[SERVE_LOOK_PYTHON] = ANALYSIS_LOOK_PYTHON,
	};
	struct serve_profile *p;
	const char *slash;
	int i;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		capture__free(c);
		return -ENOMEM;
	}
	p->capture = c;
	p->refs = 1;
	p->zones_budget = SERVE_ZONES_CACHE_BYTES;
	pthread_mutex_init(&p->lock, NULL);
	slash = strrchr(name, '/');
	snprintf(p->name, sizeof(p->name), "%s", slash ? slash + 1 : name);
	for (i = 0; i < SERVE_NLOOKS; i++) {
		if (kinds[i] == ANALYSIS_LOOK_LOGICAL) {
			p->views[i] = p->capture;
		} else {
			if (analysis_look__new(p->capture, kinds[i], &p->looks[i]))
				goto nomem;
			p->views[i] = analysis_look__capture(p->looks[i]);
		}
		if (!serve_profile__names(p, (uint32_t)i, SERVE_GRAN_FUNCTION))
			goto nomem;
	}
	time_span(p);
	p->hash = capture_hash(p->capture);
	*out = p;
	return 0;
nomem:
	serve_profile__free(p);
	return -ENOMEM;
}

static void diff_note(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "microscope serve: --diff: %s\n", line);
}

int serve_profile__open(const char *path, struct serve_profile **out, char *err, size_t errlen)
{
	struct capture *c;
	int rc;

	*out = NULL;
	/* A segment directory (record --continuous) is read whole, as report
	 * --diff DIR reads it; notes on damaged segments go to stderr. */
	rc = segment_dir__open_path(path, &c, err, errlen, diff_note, NULL);
	if (rc)
		return rc;
	/* a capture with no event (no sample taken) serves empty views */
	rc = capture__ensure_event(&c, err, errlen);
	if (rc) {
		capture__free(c);
		return rc;
	}
	rc = serve_profile__new(c, path, out);
	if (rc)
		snprintf(err, errlen, "%s: out of memory building the views", path);
	return rc;
}

void serve_profile__free(struct serve_profile *p)
{
	int i, g;

	if (!p)
		return;
	for (i = 0; i < (int)p->ntrees; i++)
		analysis_tree__free(p->trees[i].tree);
	for (i = 0; i < (int)p->nweights; i++)
		analysis_weights__release(&p->weights[i].w);
	analysis_summary__release(&p->summary);
	if (p->zones)
		analysis_zones__release(p->zones);
	free(p->zones);
	for (i = 0; i < SERVE_NLOOKS; i++)
		for (g = 0; g < SERVE_GRAN_COUNT; g++)
			analysis_shape__free(p->shapes[i][g]);
	pthread_mutex_destroy(&p->lock);
	for (i = SERVE_NLOOKS - 1; i >= 0; i--) {
		for (g = 0; g < SERVE_GRAN_COUNT; g++)
			analysis_names__free(p->names[i][g]);
		analysis_look__free(p->looks[i]);
	}
	capture__free(p->capture);
	free(p);
}

static const enum analysis_granularity granularities[SERVE_GRAN_COUNT] = {
	[SERVE_GRAN_FUNCTION] = ANALYSIS_GRANULARITY_FUNCTION,
	[SERVE_GRAN_LINE] = ANALYSIS_GRANULARITY_LINE,
	[SERVE_GRAN_ADDRESS] = ANALYSIS_GRANULARITY_ADDRESS,
	[SERVE_GRAN_FRAME] = ANALYSIS_GRANULARITY_FRAME,
	[SERVE_GRAN_MODULE] = ANALYSIS_GRANULARITY_MODULE,
};

enum analysis_granularity serve__granularity(uint32_t gran)
{
	return gran < SERVE_GRAN_COUNT ? granularities[gran] : ANALYSIS_GRANULARITY_FUNCTION;
}

const struct analysis_names *serve_profile__names(struct serve_profile *p, uint32_t look,
						  uint32_t gran)
{
	struct analysis_key_options o = { .granularity = granularities[gran] };
	struct analysis_names *n;

	/* Built at load, read-only since: no lock (serve_profile__new). */
	if (gran == SERVE_GRAN_FUNCTION && p->names[look][gran])
		return p->names[look][gran];
	pthread_mutex_lock(&p->lock);
	if (!p->names[look][gran])
		p->names[look][gran] = analysis_names__new_opts(p->views[look], &o);
	n = p->names[look][gran];
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* q asks for all of the capture: no thread, time bounds, filter, selection or wall time. */
static bool unfiltered(const struct serve_profile *p, const struct analysis_query *q)
{
	return q->thread == CAPTURE_NONE && q->start_ns <= p->origin_ns && !q->end_ns &&
	       !q->filter && !q->select && !q->wall;
}

struct analysis_tree *serve_profile__tree(struct serve_profile *p, uint32_t look, uint32_t gran,
					  const struct analysis_query *q, bool *owned)
{
	const struct analysis_names *names = serve_profile__names(p, look, gran);
	struct analysis_tree *t = NULL;
	uint32_t i;

	*owned = true;
	if (!names)
		return NULL;
	if (!unfiltered(p, q))
		return analysis_tree__new(names, q);
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->ntrees; i++) {
		const struct serve_cached_tree *e = &p->trees[i];

		if (e->look == look && e->granularity == gran && e->event == q->event &&
		    e->per_thread == q->per_thread && e->incomplete == !q->complete_only) {
			t = e->tree;
			*owned = false;
			goto out;
		}
	}
	t = analysis_tree__new(names, q);
	if (t && p->ntrees < SERVE_TREE_CACHE) {
		p->trees[p->ntrees++] = (struct serve_cached_tree){
			.look = look,
			.granularity = gran,
			.event = q->event,
			.per_thread = q->per_thread,
			.incomplete = !q->complete_only,
			.tree = t,
		};
		*owned = false;
	}
out:
	pthread_mutex_unlock(&p->lock);
	return t;
}

const struct analysis_shape *serve_profile__shape(struct serve_profile *p, uint32_t look,
						  uint32_t gran)
{
	const struct analysis_names *names = serve_profile__names(p, look, gran);
	const struct analysis_shape *sh;
	int err = 0;

	if (!names)
		return NULL;
	pthread_mutex_lock(&p->lock);
	if (!p->shapes[look][gran])
		err = analysis_shape__new(names, &p->shapes[look][gran]);
	sh = p->shapes[look][gran];
	pthread_mutex_unlock(&p->lock);
	if (err)
		errno = -err;
	return sh;
}

const struct analysis_weights *serve_profile__weights(struct serve_profile *p, uint32_t look,
						      uint32_t gran,
						      const struct analysis_query *q,
						      struct analysis_weights *mine, int *err)
{
	const struct analysis_shape *sh = serve_profile__shape(p, look, gran);
	const struct analysis_weights *w = NULL;
	struct serve_cached_weights *e;
	uint32_t i;

	memset(mine, 0, sizeof(*mine));
	*err = -ENOMEM;
	if (!sh)
		return NULL;
	if (!unfiltered(p, q) || q->per_thread) {
		*err = analysis_shape__weigh(sh, q, mine);
		return *err ? NULL : mine;
	}
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->nweights; i++) {
		e = &p->weights[i];
		if (e->look == look && e->granularity == gran && e->event == q->event &&
		    e->incomplete == !q->complete_only) {
			w = &e->w;
			*err = 0;
			goto out;
		}
	}
	*err = analysis_shape__weigh(sh, q, mine);
	if (*err)
		goto out;
	w = mine;
	if (p->nweights < SERVE_WEIGHTS_CACHE) {
		e = &p->weights[p->nweights++];
		*e = (struct serve_cached_weights){
			.look = look,
			.granularity = gran,
			.event = q->event,
			.incomplete = !q->complete_only,
			.w = *mine,
		};
		memset(mine, 0, sizeof(*mine));
		w = &e->w;
	}
out:
	pthread_mutex_unlock(&p->lock);
	return w;
}

const struct analysis_zones *serve_profile__zones(struct serve_profile *p,
						  struct analysis_zones *mine, int *err)
{
	const struct analysis_zones *z = NULL;

	memset(mine, 0, sizeof(*mine));
	*err = 0;
	pthread_mutex_lock(&p->lock);
	if (p->zones) {
		z = p->zones;
		goto out;
	}
	p->zone_pairings++;
	*err = analysis_zones__init(mine, p->capture);
	if (*err)
		goto out;
	z = mine;
	if (analysis_zones__bytes(mine) <= p->zones_budget) {
		p->zones = malloc(sizeof(*p->zones));
		if (p->zones) {
			*p->zones = *mine;
			memset(mine, 0, sizeof(*mine));
			z = p->zones;
		}
	}
out:
	pthread_mutex_unlock(&p->lock);
	return z;
}

struct serve_profile *serve_profile__get(struct serve_profile *p)
{
	__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void serve_profile__put(struct serve_profile *p)
{
	if (p && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0)
		serve_profile__free(p);
}

void serve_profile__warm(struct serve_profile *p)
{
	struct analysis_query q;
	struct analysis_weights mine;
	struct analysis_tree *t;
	uint32_t event = analysis__default_event(p->capture);
	bool owned;
	int err;

	if (event == CAPTURE_NONE)
		return;
	analysis_query__init(&q, event);
	t = serve_profile__tree(p, SERVE_LOOK_LOGICAL, SERVE_GRAN_FUNCTION, &q, &owned);
	if (owned)
		analysis_tree__free(t);
	/* As api_ctx__init makes it without parameters (/api/info, /api/flamegraph). */
	q.start_ns = p->origin_ns;
	serve_profile__weights(p, SERVE_LOOK_LOGICAL, SERVE_GRAN_FUNCTION, &q, &mine, &err);
	analysis_weights__release(&mine);
	if (!analysis_summary__init(&p->summary, p->names[SERVE_LOOK_LOGICAL][SERVE_GRAN_FUNCTION],
				    &q)) {
		p->summary_event = event;
		p->has_summary = true;
	}
}
