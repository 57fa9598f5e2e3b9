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
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/zones.h"
#include "capture/capture.h"
#include "query.h"

#define SERVE_NLOOKS 3
/* Policy: unfiltered call trees kept per profile (look x event x thread
 * roots); they are what the default views ask for, so they are built once. */
#define SERVE_TREE_CACHE 4
/* Policy: unfiltered shape weights kept per profile (look x granularity x
 * event); the flame graph of every page load asks one, so it is weighed
 * once (a pass over all samples, 30-60 ms on 1M samples) instead of per request. */
#define SERVE_WEIGHTS_CACHE 4
/* Policy: the zone pairing /api/zones answers from (analysis/zones.h, at
 * most 32 bytes a probe record: about the capture's own probe table) is
 * kept per profile when it takes at most this; a larger one is made per
 * request and freed with it. */
#define SERVE_ZONES_CACHE_BYTES (64u << 20)

struct serve_cached_tree {
	uint32_t look, granularity, event;
	bool per_thread, incomplete;
	struct analysis_tree *tree; /* owned by the profile; read-only once here */
};

struct serve_cached_weights {
	uint32_t look, granularity, event;
	bool incomplete;
	struct analysis_weights w; /* owned by the profile; read-only once here */
};

struct serve_profile {
	char name[256];		/* the file's basename, for titles */
	int refs;		/* serve_profile__get/put (atomic); 1 when new */
	uint32_t segments;	/* segments merged (a DIR), 0 for a file */
	struct capture *capture;
	struct analysis_look *looks[SERVE_NLOOKS]; /* [SERVE_LOOK_LOGICAL] is NULL */
	const struct capture *views[SERVE_NLOOKS];
	/* Keys per look and granularity: [look][SERVE_GRAN_FUNCTION] built at
	 * load, the others on first use (guarded by lock; never freed before
	 * the profile, so a pointer handed out stays valid). */
	struct analysis_names *names[SERVE_NLOOKS][SERVE_GRAN_COUNT];
	uint64_t origin_ns; /* earliest sample or interval time: API times count from it */
	uint64_t last_ns;   /* latest sample time or interval end */
	uint64_t hash;	    /* of the capture's tables: part of every ETag */
	pthread_mutex_t lock; /* guards names (but [..][FUNCTION]), trees, ntrees and shapes */
	struct analysis_shape *shapes[SERVE_NLOOKS][SERVE_GRAN_COUNT]; /* built on first use */
	struct serve_cached_tree trees[SERVE_TREE_CACHE];
	uint32_t ntrees;
	struct serve_cached_weights weights[SERVE_WEIGHTS_CACHE];
	uint32_t nweights;
	/* The logical look's summary of its default event (/api/info without
	 * event=), made once by serve_profile__warm; valid when has_summary. */
	struct analysis_summary summary;
	uint32_t summary_event;
	bool has_summary;
	/* The pairing of capture's probe records (every look's: looks borrow
	 * them), made on first use under lock when within zones_budget. */
	struct analysis_zones *zones;
	size_t zones_budget;	/* SERVE_ZONES_CACHE_BYTES (a test lowers it) */
	uint64_t zone_pairings; /* pairings made (under lock) */
};

/*
 * The zone pairing of p's capture: the profile's (read-only; *mine stays
 * zeroed), paired once, or when larger than p->zones_budget paired into
 * *mine for this caller.  Either way the caller releases *mine.  Returns
 * NULL with *err -ENOMEM on failure.
 */
const struct analysis_zones *serve_profile__zones(struct serve_profile *p,
						  struct analysis_zones *mine, int *err);

/*
 * The keys of look's view at granularity gran (enum serve_granularity),
 * built on first use and kept for the profile's life.  Returns NULL and
 * sets errno (ENOMEM).
 */
/* The analysis_granularity of gran (enum serve_granularity). */
enum analysis_granularity serve__granularity(uint32_t gran);

const struct analysis_names *serve_profile__names(struct serve_profile *p, uint32_t look,
						  uint32_t gran);

/*
 * The tree shape of look's view at gran (analysis_shape), built on first
 * use and kept.  Returns NULL and sets errno (ENOMEM).
 */
const struct analysis_shape *serve_profile__shape(struct serve_profile *p, uint32_t look,
						  uint32_t gran);

/*
 * The call tree of q over look's view at gran.  An unfiltered q (all
 * threads, no time bounds, no filter) is answered from the profile's
 * cache, building it once (*owned false: do not free it); any other is
 * built for the caller (*owned true).  Returns NULL and sets errno
 * (EINVAL, ENOMEM).
 */
struct analysis_tree *serve_profile__tree(struct serve_profile *p, uint32_t look, uint32_t gran,
					  const struct analysis_query *q, bool *owned);

/*
 * The weights of q on look's shape at gran (analysis_shape__weigh).  An
 * unfiltered q (as serve_profile__tree says) is answered from the
 * profile's cache, weighing it once: the result points there (read-only,
 * the profile's) and *mine stays zeroed.  Any other is weighed into *mine
 * and the result points to it.  Either way the caller releases *mine.
 * Returns NULL with *err set: -EINVAL (a bad query) or -ENOMEM.
 */
const struct analysis_weights *serve_profile__weights(struct serve_profile *p, uint32_t look,
						      uint32_t gran,
						      const struct analysis_query *q,
						      struct analysis_weights *mine, int *err);

/*
 * A profile over c, which it takes over (freed with it, or at once on
 * failure); name is shown in titles (its basename).  Returns 0 or -ENOMEM.
 */
int serve_profile__new(struct capture *c, const char *name, struct serve_profile **out);
/* Open path (a capture file, or a segment directory read whole) and build
 * its profile.  Returns 0, or -errno with a message in
 * err naming the file. */
int serve_profile__open(const char *path, struct serve_profile **out, char *err, size_t errlen);
/* Accepts NULL. */
void serve_profile__free(struct serve_profile *p);
/* Another reference to p (a request in flight); put frees at the last one.
 * put accepts NULL. */
struct serve_profile *serve_profile__get(struct serve_profile *p);
void serve_profile__put(struct serve_profile *p);
/* Build what the first pages ask for (the default event's tree, shape,
 * weights and summary, logical look, function granularity), so the first
 * request is not slow. */
void serve_profile__warm(struct serve_profile *p);

/*
 * What one request answers from.  For a segment directory the served
 * profile is replaced when segments come or go (live.c), so a request
 * takes a reference to the current one (serve_live__profile) and answers
 * everything, its ETag included, from that one.
 */
struct serve_app {
	struct serve_profile *profile; /* the capture served */
	struct serve_profile *base;    /* --diff: the base of /api/diff, or NULL */
	bool live;		       /* a segment directory: answers may change */
	const char *source_dir;	       /* --source-dir, or NULL */
};

/*
 * A segment directory served live: its profile, reloaded by
 * serve_live__rescan when the set of complete segments changes.
 * path is borrowed.  current and reloads are guarded by lock; signature
 * is the main thread's (the only one that rescans).
 */
struct serve_live {
	const char *path;
	pthread_mutex_t lock;
	struct serve_profile *current; /* one reference held here */
	uint64_t signature;	       /* of the segment names current was read from */
	uint32_t reloads;	       /* profiles replaced since start */
};

/*
 * Open path (a capture file or a segment directory) into l.  Returns 0 or
 * -errno with a message in err naming the file.
 */
int serve_live__open(struct serve_live *l, const char *path, char *err, size_t errlen);
/*
 * A segment directory with no complete segment yet (record --continuous
 * started moments ago: its first segment is published when it closes):
 * say so on stderr once and wait, looking every SERVE_FIRST_SEGMENT_MS,
 * until one is there or a signal of stop arrives (no other bound: the
 * user waits for a recording they started, and Ctrl-C ends it).  A path
 * that does not exist yet is waited for first, the same way, when record
 * --continuous could make it: not named like a capture file (*.msc: a
 * typo gets its error at once) and in a directory that exists.  Returns
 * 0 at once for a file, a directory with segments or a path that cannot
 * appear (the open reports it), 0 once a segment appears, 1 when a signal
 * of stop (blocked by the caller) came first, or -errno (the directory
 * cannot be listed).
 */
int serve_live__wait_first(const char *path, const sigset_t *stop);
/* A reference to the current profile (serve_profile__put it). */
struct serve_profile *serve_live__profile(struct serve_live *l);
/*
 * If l is a directory whose complete segments differ from those current
 * was read from, read them again and make that the current profile
 * (requests in flight keep the old one until they put it).  Returns 1 when
 * replaced, 0 when unchanged, or -errno (the old profile stays; a message
 * on stderr).
 */
int serve_live__rescan(struct serve_live *l);
void serve_live__release(struct serve_live *l);

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

/* Content-Encoding gzip (gzip.c).  accepted: an Accept-Encoding header
 * (or NULL) takes gzip.  compress: a malloc'd gzip of in into *out.  etag:
 * the gzip representation's quoted tag, "tag-gz". */
bool serve_gzip__accepted(const char *accept);
int serve_gzip__compress(const void *in, size_t len, void **out, size_t *outlen);
int serve_gzip__etag(const char *etag, char *out, size_t outlen);

#endif
