// SPDX-License-Identifier: MIT
/* Loading a capture to serve: the capture, its three looks and their names. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		p->names[i] = analysis_names__new(p->views[i]);
		if (!p->names[i])
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

int serve_profile__open(const char *path, struct serve_profile **out, char *err, size_t errlen)
{
	struct capture *c;
	int rc;

	*out = NULL;
	rc = capture__open(path, &c, err, errlen);
	if (rc)
		return rc;
	rc = serve_profile__new(c, path, out);
	if (rc)
		snprintf(err, errlen, "%s: out of memory building the views", path);
	return rc;
}

void serve_profile__free(struct serve_profile *p)
{
	int i;

	if (!p)
		return;
	for (i = 0; i < (int)p->ntrees; i++)
		analysis_tree__free(p->trees[i].tree);
	for (i = 0; i < SERVE_NLOOKS; i++)
		analysis_shape__free(p->shapes[i]);
	pthread_mutex_destroy(&p->lock);
	for (i = SERVE_NLOOKS - 1; i >= 0; i--) {
		analysis_names__free(p->names[i]);
		analysis_look__free(p->looks[i]);
	}
	capture__free(p->capture);
	free(p);
}

struct analysis_tree *serve_profile__tree(struct serve_profile *p, uint32_t look,
					  const struct analysis_query *q, bool *owned)
{
	struct analysis_tree *t = NULL;
	uint32_t i;

	*owned = true;
	if (q->thread != CAPTURE_NONE || q->start_ns > p->origin_ns || q->end_ns || q->filter ||
	    q->select || q->wall)
		return analysis_tree__new(p->names[look], q);
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->ntrees; i++) {
		const struct serve_cached_tree *e = &p->trees[i];

		if (e->look == look && e->event == q->event && e->per_thread == q->per_thread &&
		    e->incomplete == !q->complete_only) {
			t = e->tree;
			*owned = false;
			goto out;
		}
	}
	t = analysis_tree__new(p->names[look], q);
	if (t && p->ntrees < SERVE_TREE_CACHE) {
		p->trees[p->ntrees++] = (struct serve_cached_tree){
			.look = look,
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

const struct analysis_shape *serve_profile__shape(struct serve_profile *p, uint32_t look)
{
	const struct analysis_shape *sh;
	int err = 0;

	pthread_mutex_lock(&p->lock);
	if (!p->shapes[look])
		err = analysis_shape__new(p->names[look], &p->shapes[look]);
	sh = p->shapes[look];
	pthread_mutex_unlock(&p->lock);
	if (err)
		errno = -err;
	return sh;
}
