/* SPDX-License-Identifier: MIT */
/*
 * Private to userspace/serve: helpers shared by api.c (dispatch, info,
 * threads) and api_views.c (trees, tables, lanes, intervals, off-CPU,
 * diff).  Everything builds jansson values; a NULL from jansson is ENOMEM.
 */
#ifndef MS_SERVE_API_H
#define MS_SERVE_API_H

#include <jansson.h>

#include "analysis/scope.h"
#include "internal.h"

/* One request's resolved analysis inputs: view, names, query, filter. */
struct api_ctx {
	struct serve_profile *p;
	const struct serve_query *sq;
	const struct capture *c;	    /* the look's view */
	const struct analysis_names *names; /* of c */
	struct analysis_query q;
	struct analysis_filter *filter; /* focus/ignore, owned, or NULL */
	struct analysis_select *select; /* process/module, owned, or NULL */
	/* label=: the view of the look's capture its terms keep (owned), keys
	 * over it (owned), and the terms' text the filter borrows. */
	struct analysis_scope *scope;
	struct analysis_names *scope_names;
	struct analysis_scope_filter terms;
	char label[SERVE_MAX_VALUE + 1];
	const char *source_dir; /* the app's --source-dir, or NULL */
	char *err;
	size_t errlen;
};

/* -EINVAL with a message in ctx->err. */
int api__fail(struct api_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Resolve sq over p into ctx: the look's view and names, the event (sq's,
 * or offcpu ? the intervals' event : the default one), thread, time range
 * and filter.  Returns 0, -EINVAL (message in ctx->err) or -ENOMEM.
 */
int api_ctx__init(struct api_ctx *ctx, struct serve_profile *p, const struct serve_query *sq,
		  bool offcpu, char *err, size_t errlen);
void api_ctx__release(struct api_ctx *ctx);

/* u64 as a JSON integer, clamped to INT64_MAX (weights are saturating sums). */
json_t *api__u64(uint64_t v);
/* "function", "kernel", "truncation", "thread", "inline" */
const char *api__key_kind(uint32_t kind);
/* json_object_set_new that reports failure (-ENOMEM) when value is NULL. */
int api__set(json_t *obj, const char *key, json_t *value);
/* "event", "unit" and "total" of an aggregate answer (docs/api.md "head"). */
int api__head(struct api_ctx *ctx, json_t *out, uint64_t total);
/* A thread's {"id","tid","comm","pid"}. */
json_t *api__thread(const struct capture *c, uint32_t thread);

int api__flamegraph(struct api_ctx *ctx, json_t *out);
int api__calltree(struct api_ctx *ctx, json_t *out);
int api__flat(struct api_ctx *ctx, json_t *out);
int api__lanes(struct api_ctx *ctx, json_t *out);
int api__intervals(struct api_ctx *ctx, json_t *out);
int api__offcpu(struct api_ctx *ctx, json_t *out);
int api__diff(struct api_ctx *ctx, struct serve_profile *base, json_t *out);
int api__groups(struct api_ctx *ctx, json_t *out);
int api__source(struct api_ctx *ctx, json_t *out);
/* api_zones.c */
int api__zones(struct api_ctx *ctx, json_t *out);

#endif
