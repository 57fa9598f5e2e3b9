/* SPDX-License-Identifier: MIT */
/*
 * Private to userspace/serve: the loaded profiles and the API answerer.
 *
 * A struct serve_profile owns one validated capture, its looks and their
 * names; everything in it is read-only after serve_profile__open(), so the
 * HTTP worker threads share it without locks (analysis/ is pure).
 */
#ifndef MS_SERVE_INTERNAL_H
#define MS_SERVE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "query.h"

#define SERVE_NLOOKS 3
/* Policy: unfiltered call trees kept per profile (look x event x thread
 * roots); they are what the default views ask for, so they are built once. */
#define SERVE_TREE_CACHE 4

struct serve_cached_tree {
	uint32_t look, event;
	bool per_thread, incomplete;
	struct analysis_tree *tree; /* owned by the profile; read-only once here */
};

struct serve_profile {
	char name[256];		/* the file's basename, for titles */
	struct capture *capture;
	struct analysis_look *looks[SERVE_NLOOKS]; /* [SERVE_LOOK_LOGICAL] is NULL */
	const struct capture *views[SERVE_NLOOKS];
	struct analysis_names *names[SERVE_NLOOKS];
	uint64_t origin_ns; /* earliest sample or interval time: API times count from it */
	uint64_t last_ns;   /* latest sample time or interval end */
	uint64_t hash;	    /* of the capture's tables: part of every ETag */
	pthread_mutex_t lock; /* guards trees, ntrees and shapes */
	struct analysis_shape *shapes[SERVE_NLOOKS]; /* built on first use */
	struct serve_cached_tree trees[SERVE_TREE_CACHE];
	uint32_t ntrees;
};

/*
 * The call tree of q over look's view.  An unfiltered q (all threads, no
 * time bounds, no filter) is answered from the profile's cache, building
 * it once (*owned false: do not free it); any other is built for the
 * caller (*owned true).  Returns NULL and sets errno (EINVAL, ENOMEM).
 */
/*
 * The tree shape of look's view (analysis_shape), built on first use and
 * kept.  Returns NULL and sets errno (ENOMEM).
 */
const struct analysis_shape *serve_profile__shape(struct serve_profile *p, uint32_t look);

struct analysis_tree *serve_profile__tree(struct serve_profile *p, uint32_t look,
					  const struct analysis_query *q, bool *owned);

/*
 * A profile over c, which it takes over (freed with it, or at once on
 * failure); name is shown in titles (its basename).  Returns 0 or -ENOMEM.
 */
int serve_profile__new(struct capture *c, const char *name, struct serve_profile **out);
/* Open path and build its profile.  Returns 0, or -errno with a message in
 * err naming the file. */
int serve_profile__open(const char *path, struct serve_profile **out, char *err, size_t errlen);
/* Accepts NULL. */
void serve_profile__free(struct serve_profile *p);

struct serve_app {
	struct serve_profile *profile; /* the capture served */
	struct serve_profile *base;    /* --diff: the base of /api/diff, or NULL */
};

/*
 * Answer q: 0 with *body (malloc'd JSON, caller frees) of *len bytes;
 * -EINVAL (a bad query: err says why, HTTP 400), -ENOENT (a row the query
 * names does not exist: 404 with err) or -ENOMEM.
 */
int serve_api__answer(const struct serve_app *app, const struct serve_query *q, char **body,
		      size_t *len, char *err, size_t errlen);

/* The ETag of q's answer: a quoted hex hash of the profiles and the canonical query. */
void serve_api__etag(const struct serve_app *app, const struct serve_query *q, char *buf,
		     size_t size);

#endif
