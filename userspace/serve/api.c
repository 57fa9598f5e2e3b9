// SPDX-License-Identifier: MIT
/*
 * The /api/ answerer: resolves a typed query over a loaded profile and
 * renders analysis/ results as JSON (schemas in docs/api.md).  This file:
 * dispatch, the shared resolution of filters, /api/info and /api/threads.
 * Nothing here aggregates rows itself; it selects, pages and formats.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

int api__fail(struct api_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, ctx->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

json_t *api__u64(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

const char *api__key_kind(uint32_t kind)
{
	switch (kind) {
	case ANALYSIS_KEY_FUNCTION:
		return "function";
	case ANALYSIS_KEY_KERNEL:
		return "kernel";
	case ANALYSIS_KEY_TRUNCATION:
		return "truncation";
	case ANALYSIS_KEY_THREAD:
		return "thread";
	case ANALYSIS_KEY_INLINE:
		return "inline";
	}
	return "?";
}

int api__set(json_t *obj, const char *key, json_t *value)
{
	if (!value)
		return -ENOMEM;
	return json_object_set_new(obj, key, value) ? -ENOMEM : 0;
}

json_t *api__thread(const struct capture *c, uint32_t thread)
{
	const struct capture_thread *t;
	const struct capture_process *pr;

	if (thread == CAPTURE_NONE || thread >= c->nthreads)
		return json_null();
	t = &c->threads[thread];
	pr = &c->processes[t->process];
	return json_pack("{s:I,s:I,s:s,s:I,s:I,s:s}", "id", (json_int_t)thread, "tid",
			 (json_int_t)t->tid, "comm", capture__string(c, t->comm), "process",
			 (json_int_t)t->process, "pid", (json_int_t)pr->pid, "process_comm",
			 capture__string(c, pr->comm));
}

/* The intervals' event: the first interval's (one off-CPU event per capture). */
static int offcpu_event(const struct capture *c, uint32_t *event)
{
	if (!c->nintervals)
		return -ENOENT;
	*event = c->intervals[0].event;
	return 0;
}

/* "^name$" with every POSIX ERE metacharacter of name escaped, into buf. */
static const char *exact_pattern(const char *name, char *buf, size_t size)
{
	size_t n = 0;

	buf[n++] = '^';
	for (; *name && n + 4 < size; name++) {
		if (strchr(".[]{}()\\*+?^$|", *name))
			buf[n++] = '\\';
		buf[n++] = *name;
	}
	buf[n++] = '$';
	buf[n] = '\0';
	return buf;
}

/*
 * label=FIELD:[!]VALUE,...: the scope (analysis/scope.h) of the look's
 * capture that keeps what the terms say, and keys over it; every query of
 * the request then runs on that view.  The syntax was checked by the parser.
 */
static int label_scope(struct api_ctx *ctx)
{
	struct analysis_key_options o = {
		.granularity = serve__granularity(ctx->sq->granularity),
	};
	char *term, *next, *colon;
	uint32_t f;
	int rc;

	snprintf(ctx->label, sizeof(ctx->label), "%s", ctx->sq->label);
	for (term = ctx->label; term; term = next) {
		next = strchr(term, ',');
		if (next)
			*next++ = '\0';
		colon = strchr(term, ':');
		if (!colon)
			return api__fail(ctx, "label: '%.64s' is not FIELD:VALUE", term);
		*colon = '\0';
		for (f = 0; f < ANALYSIS_FIELD_COUNT; f++)
			if (!strcmp(term, analysis__field_name(f)))
				break;
		if (f == ANALYSIS_FIELD_COUNT)
			return api__fail(ctx, "label: '%.32s' is not a field", term);
		rc = analysis_scope_filter__add(&ctx->terms, f, colon + 1);
		if (rc)
			return rc == -EINVAL ? api__fail(ctx, "label: %s:'%.64s' is not a valid value",
							 term, colon + 1)
					     : rc;
	}
	rc = analysis_scope__new(ctx->c, &ctx->terms, false, &ctx->scope);
	if (rc)
		return rc;
	ctx->c = analysis_scope__capture(ctx->scope);
	ctx->scope_names = analysis_names__new_opts(ctx->c, &o);
	if (!ctx->scope_names)
		return -ENOMEM;
	ctx->names = ctx->scope_names;
	return 0;
}

int api_ctx__init(struct api_ctx *ctx, struct serve_profile *p, const struct serve_query *sq,
		  bool offcpu, char *err, size_t errlen)
{
	struct analysis_filter_spec spec;
	uint32_t event;
	int rc;

	memset(ctx, 0, sizeof(*ctx));
	ctx->p = p;
	ctx->sq = sq;
	ctx->err = err;
	ctx->errlen = errlen;
	ctx->c = p->views[sq->look];
	ctx->names = serve_profile__names(p, sq->look, sq->granularity);
	if (!ctx->names)
		return -ENOMEM;
	if (sq->event[0]) {
		int rc = analysis__find_event(ctx->c, sq->event, &event);

		if (rc == -ENOTUNIQ)
			return api__fail(ctx, "event: several events of %s are named '%.64s': "
					 "choose one as '%.64s#N' (/api/info lists them)",
					 p->name, sq->event, sq->event);
		if (rc)
			return api__fail(ctx, "event: '%.64s' is not an event of %s", sq->event,
					 p->name);
	} else if (offcpu) {
		if (offcpu_event(ctx->c, &event))
			return api__fail(ctx, "%s has no off-CPU intervals (record --off-cpu)",
					 p->name);
	} else {
		event = analysis__default_event(ctx->c);
		if (event == CAPTURE_NONE)
			return api__fail(ctx, "%s has no events", p->name);
	}
	analysis_query__init(&ctx->q, event);
	/* The event is the capture's default even when the labels keep none of its samples. */
	if (sq->label[0]) {
		rc = label_scope(ctx);
		if (rc)
			return rc;
	}
	if (sq->thread != UINT32_MAX) {
		if (sq->thread >= ctx->c->nthreads)
			return api__fail(ctx, "thread: %u is not a thread id (0 to %u)",
					 sq->thread, ctx->c->nthreads - 1);
		ctx->q.thread = sq->thread;
	}
	if (sq->process != UINT32_MAX && sq->process >= ctx->c->nprocesses)
		return api__fail(ctx, "process: %u is not a process id (0 to %u)", sq->process,
				 ctx->c->nprocesses - 1);
	ctx->q.per_thread = sq->per_thread;
	ctx->q.complete_only = !sq->incomplete;
	if (__builtin_add_overflow(p->origin_ns, sq->start_ns, &ctx->q.start_ns))
		return api__fail(ctx, "start: out of range");
	if (sq->end_ns && __builtin_add_overflow(p->origin_ns, sq->end_ns, &ctx->q.end_ns))
		return api__fail(ctx, "end: out of range");
	if (sq->process != UINT32_MAX || sq->module[0]) {
		struct analysis_select_spec sel;

		analysis_select_spec__init(&sel);
		sel.process = sq->process == UINT32_MAX ? CAPTURE_NONE : sq->process;
		sel.module = sq->module[0] ? sq->module : NULL;
		rc = analysis_select__new(ctx->c, &sel, &ctx->select);
		if (rc)
			return rc == -EINVAL ? api__fail(ctx, "process: out of range") : rc;
		ctx->q.select = ctx->select;
	}
	if (sq->focus[0] || sq->ignore[0]) {
		char focus[2 * SERVE_MAX_VALUE + 3], ignore[2 * SERVE_MAX_VALUE + 3];
		char why[256];

		/* The API names functions exactly; analysis_filter takes patterns. */
		memset(&spec, 0, sizeof(spec));
		spec.focus = sq->focus[0] ? exact_pattern(sq->focus, focus, sizeof(focus)) : NULL;
		spec.ignore = sq->ignore[0] ? exact_pattern(sq->ignore, ignore, sizeof(ignore)) : NULL;
		rc = analysis_filter__new(ctx->c, &spec, &ctx->filter, why, sizeof(why));
		if (rc)
			return rc == -EINVAL ? api__fail(ctx, "%s", why) : rc;
		ctx->q.filter = ctx->filter;
	}
	return 0;
}

void api_ctx__release(struct api_ctx *ctx)
{
	analysis_filter__free(ctx->filter);
	analysis_select__free(ctx->select);
	analysis_names__free(ctx->scope_names);
	analysis_scope__free(ctx->scope);
	analysis_scope_filter__release(&ctx->terms);
	ctx->filter = NULL;
	ctx->select = NULL;
	ctx->scope_names = NULL;
	ctx->scope = NULL;
}

static json_t *counts_json(const struct capture *c, const struct analysis_count *v, uint32_t n,
			   const struct analysis_names *names, bool keys)
{
	json_t *arr = json_array();
	uint32_t i;

	for (i = 0; arr && i < n; i++) {
		const char *name = keys ? names->keys[v[i].id].name
					: capture__string(c, c->counters[v[i].id].name);

		if (json_array_append_new(arr, json_pack("{s:s,s:I}", "name", name, "value",
							 (json_int_t)(v[i].value > INT64_MAX
									      ? INT64_MAX
									      : v[i].value)))) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static int api_info(struct api_ctx *ctx, const struct serve_app *app, json_t *out)
{
	const struct capture *c = ctx->c;
	struct serve_profile *p = ctx->p;
	struct analysis_summary mine = { 0 };
	const struct analysis_summary *sp = &p->summary;
	json_t *events, *meta, *sum;
	uint32_t i, off = CAPTURE_NONE;
	int err;

	/* The default event's is made once, at load (serve_profile__warm). */
	if (!p->has_summary || ctx->q.event != p->summary_event ||
	    ctx->sq->look != SERVE_LOOK_LOGICAL) {
		err = analysis_summary__init(&mine, ctx->names, &ctx->q);
		if (err)
			return err == -EINVAL ? api__fail(ctx, "bad query") : err;
		sp = &mine;
	}
	err = -ENOMEM;
	if (c->nintervals)
		off = c->intervals[0].event;
	events = json_array();
	meta = json_object();
	if (!events || !meta)
		goto cleanup_json;
	for (i = 0; i < c->nevents; i++) {
		const struct capture_event *e = &c->events[i];
		char label[256];

		/* "cpu-clock#2" where names repeat: what the event key takes */
		analysis__event_label(c, i, label, sizeof(label));
		if (json_array_append_new(
			    events, json_pack("{s:I,s:s,s:s,s:I,s:b}", "id", (json_int_t)i, "name",
					      label, "unit",
					      capture__string(c, e->unit), "period",
					      (json_int_t)(e->period > INT64_MAX ? INT64_MAX
										  : e->period),
					      "offcpu", i == off)))
			goto cleanup_json;
	}
	for (i = 0; i < c->nmeta; i++)
		if (api__set(meta, capture__string(c, c->meta[i].key),
			     json_string(capture__string(c, c->meta[i].value))))
			goto cleanup_json;
	sum = json_pack("{s:o,s:o,s:o,s:I,s:f,s:o,s:o,s:o,s:o*,s:o,s:o*,s:o,s:o*}", "samples",
			api__u64(sp->samples), "weight", api__u64(sp->weight), "duration_ns",
			api__u64(sp->duration_ns), "threads", (json_int_t)sp->threads, "rate_hz",
			sp->rate_hz, "empty_stacks", api__u64(sp->empty_stacks), "truncated",
			api__u64(sp->truncated), "lost", api__u64(sp->lost), "lost_counters",
			counts_json(c, sp->lost_counters, sp->nlost_counters, ctx->names, false),
			"problems", api__u64(sp->problems), "problem_counters",
			counts_json(c, sp->problem_counters, sp->nproblem_counters, ctx->names, false),
			"truncations", api__u64(sp->truncated), "truncation_reasons",
			counts_json(c, sp->truncations, sp->ntruncations, ctx->names, true));
	if (api__set(out, "name", json_string(p->name)) ||
	    api__set(out, "origin_ns", api__u64(p->origin_ns)) ||
	    api__set(out, "span_ns", api__u64(p->last_ns - p->origin_ns)) ||
	    api__set(out, "event", json_integer(ctx->q.event)) ||
	    api__set(out, "events", events) ||
	    api__set(out, "meta", meta) ||
	    api__set(out, "summary", sum) ||
	    api__set(out, "counts",
		     json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "samples",
			       (json_int_t)c->nsamples, "intervals", (json_int_t)c->nintervals,
			       "probe_sites", (json_int_t)c->nprobe_sites, "probe_records",
			       (json_int_t)c->nprobe_records,
			       "threads", (json_int_t)c->nthreads, "processes",
			       (json_int_t)c->nprocesses, "modules", (json_int_t)c->nmodules,
			       "stacks", (json_int_t)c->nstacks, "frames", (json_int_t)c->nframes)) ||
	    api__set(out, "diff", app->base ? json_string(app->base->name) : json_null()) ||
	    api__set(out, "diff_span_ns",
		     app->base ? api__u64(app->base->last_ns - app->base->origin_ns) : json_null()) ||
	    api__set(out, "segments", json_integer(p->segments)) ||
	    api__set(out, "live", json_boolean(app->live)) ||
	    api__set(out, "version", json_sprintf("%016" PRIx64, p->hash))) {
		events = meta = NULL; /* owned by out or freed by api__set's failure path */
		goto cleanup;
	}
	err = 0;
	goto cleanup;
cleanup_json:
	json_decref(events);
	json_decref(meta);
cleanup:
	analysis_summary__release(&mine);
	return err;
}

static int api_threads(struct api_ctx *ctx, json_t *out)
{
	const struct capture *c = ctx->c;
	const struct serve_query *sq = ctx->sq;
	json_t *arr = json_array();
	uint32_t i;

	if (api__set(out, "total", json_integer(c->nthreads)) ||
	    api__set(out, "offset", json_integer(sq->offset)) || api__set(out, "threads", arr))
		return -ENOMEM;
	for (i = sq->offset; i < c->nthreads && i - sq->offset < sq->limit; i++)
		if (json_array_append_new(arr, api__thread(c, i)))
			return -ENOMEM;
	return 0;
}

int serve_api__answer(const struct serve_app *app, const struct serve_query *q, char **body,
		      size_t *len, char *err, size_t errlen)
{
	struct api_ctx ctx;
	json_t *out = NULL;
	int rc;

	*body = NULL;
	*len = 0;
	err[0] = '\0';
	/* /api/intervals lists none of a capture without them; /api/offcpu is a 400 there. */
	rc = api_ctx__init(&ctx, app->profile, q, q->endpoint == SERVE_EP_OFFCPU, err, errlen);
	if (rc)
		goto cleanup;
	rc = -ENOMEM;
	out = json_object();
	if (!out)
		goto cleanup;
	switch (q->endpoint) {
	case SERVE_EP_INFO:
		rc = api_info(&ctx, app, out);
		break;
	case SERVE_EP_THREADS:
		rc = api_threads(&ctx, out);
		break;
	case SERVE_EP_FLAMEGRAPH:
		rc = api__flamegraph(&ctx, out);
		break;
	case SERVE_EP_CALLTREE:
		rc = api__calltree(&ctx, out);
		break;
	case SERVE_EP_FLAT:
		rc = api__flat(&ctx, out);
		break;
	case SERVE_EP_LANES:
		rc = api__lanes(&ctx, out);
		break;
	case SERVE_EP_INTERVALS:
		rc = api__intervals(&ctx, out);
		break;
	case SERVE_EP_OFFCPU:
		rc = api__offcpu(&ctx, out);
		break;
	case SERVE_EP_GROUPS:
		rc = api__groups(&ctx, out);
		break;
	case SERVE_EP_ZONES:
		rc = api__zones(&ctx, out);
		break;
	case SERVE_EP_SOURCE:
		ctx.source_dir = app->source_dir;
		rc = api__source(&ctx, out);
		break;
	case SERVE_EP_DIFF:
		if (!app->base) {
			rc = api__fail(&ctx, "no capture to diff against (serve CAPTURE --diff BASE)");
			break;
		}
		rc = api__diff(&ctx, app->base, out);
		break;
	default:
		rc = api__fail(&ctx, "unknown endpoint");
	}
	if (rc)
		goto cleanup;
	*body = json_dumps(out, JSON_COMPACT);
	if (!*body) {
		rc = -ENOMEM;
		goto cleanup;
	}
	*len = strlen(*body);
	rc = 0;
cleanup:
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "out of memory");
	json_decref(out);
	api_ctx__release(&ctx);
	return rc;
}

void serve_api__etag(const struct serve_app *app, const struct serve_query *q, char *buf,
		     size_t size)
{
	char canon[6 * SERVE_MAX_VALUE + 512];
	uint64_t h = 0xcbf29ce484222325ull;
	size_t n, i;

	n = serve_query__canonical(q, canon, sizeof(canon));
	if (n >= sizeof(canon))
		n = sizeof(canon) - 1;
	for (i = 0; i < n; i++) {
		h ^= (unsigned char)canon[i];
		h *= 0x100000001b3ull;
	}
	snprintf(buf, size, "\"%016" PRIx64 "-%016" PRIx64 "-%016" PRIx64 "\"",
		 app->profile->hash, app->base ? app->base->hash : 0, h);
}
