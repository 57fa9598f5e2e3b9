// SPDX-License-Identifier: MIT
/*
 * Parsing of /api/ queries (query.h).  Every value is checked for length,
 * syntax and range before it is stored; numbers are decimal only, with no
 * sign, spaces or trailing bytes, so "1e9", "-1" and "12abc" are refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"

static const char *const endpoint_names[SERVE_EP_COUNT] = {
	[SERVE_EP_INFO] = "info",	    [SERVE_EP_THREADS] = "threads",
	[SERVE_EP_FLAMEGRAPH] = "flamegraph", [SERVE_EP_CALLTREE] = "calltree",
	[SERVE_EP_FLAT] = "flat",	    [SERVE_EP_LANES] = "lanes",
	[SERVE_EP_INTERVALS] = "intervals", [SERVE_EP_OFFCPU] = "offcpu",
	[SERVE_EP_DIFF] = "diff",	    [SERVE_EP_GROUPS] = "groups",
	[SERVE_EP_SOURCE] = "source",	    [SERVE_EP_ZONES] = "zones",
};

static const char *const param_names[SERVE_P_COUNT] = {
	[SERVE_P_EVENT] = "event",	 [SERVE_P_THREAD] = "thread",
	[SERVE_P_PROCESS] = "process",	 [SERVE_P_MODULE] = "module",
	[SERVE_P_FOCUS] = "focus",	 [SERVE_P_IGNORE] = "ignore",
	[SERVE_P_START] = "start",	 [SERVE_P_END] = "end",
	[SERVE_P_LOOK] = "look",	 [SERVE_P_GRANULARITY] = "granularity",
	[SERVE_P_THREADS] = "threads",	 [SERVE_P_INCOMPLETE] = "incomplete",
	[SERVE_P_MIN_SHARE] = "min_share", [SERVE_P_MAX_NODES] = "max_nodes",
	[SERVE_P_NODE] = "node",	 [SERVE_P_OFFSET] = "offset",
	[SERVE_P_LIMIT] = "limit",	 [SERVE_P_SORT] = "sort",
	[SERVE_P_BUCKETS] = "buckets",	 [SERVE_P_BY] = "by",
	[SERVE_P_MIN_NS] = "min_ns",	 [SERVE_P_LABEL] = "label",
	[SERVE_P_FUNCTION] = "function", [SERVE_P_BASE_START] = "base_start",
	[SERVE_P_BASE_END] = "base_end", [SERVE_P_FILE] = "file",
};

#define P(x) (1u << SERVE_P_##x)
/* The filters every aggregating endpoint takes. */
#define FILTERS                                                                            \
	(P(EVENT) | P(THREAD) | P(PROCESS) | P(MODULE) | P(FOCUS) | P(IGNORE) | P(START) | \
	 P(END) | P(LOOK) | P(GRANULARITY) | P(INCOMPLETE) | P(LABEL))

static const uint32_t endpoint_params[SERVE_EP_COUNT] = {
	[SERVE_EP_INFO] = P(EVENT),
	[SERVE_EP_THREADS] = P(OFFSET) | P(LIMIT),
	[SERVE_EP_FLAMEGRAPH] = FILTERS | P(THREADS) | P(MIN_SHARE) | P(MAX_NODES),
	[SERVE_EP_CALLTREE] = FILTERS | P(THREADS) | P(NODE) | P(OFFSET) | P(LIMIT),
	[SERVE_EP_FLAT] = FILTERS | P(SORT) | P(OFFSET) | P(LIMIT),
	[SERVE_EP_LANES] = P(THREAD) | P(PROCESS) | P(START) | P(END) | P(BUCKETS) | P(OFFSET) |
			   P(LIMIT) | P(LABEL),
	[SERVE_EP_INTERVALS] = P(THREAD) | P(PROCESS) | P(START) | P(END) | P(INCOMPLETE) |
			       P(MIN_NS) | P(OFFSET) | P(LIMIT) | P(LABEL),
	[SERVE_EP_OFFCPU] = FILTERS | P(BY) | P(OFFSET) | P(LIMIT),
	[SERVE_EP_DIFF] = FILTERS | P(BASE_START) | P(BASE_END) | P(OFFSET) | P(LIMIT),
	[SERVE_EP_GROUPS] = FILTERS | P(BY) | P(OFFSET) | P(LIMIT),
	[SERVE_EP_SOURCE] = (FILTERS & ~P(GRANULARITY)) | P(FUNCTION) | P(FILE),
	[SERVE_EP_ZONES] = P(THREAD) | P(PROCESS) | P(START) | P(END) | P(OFFSET) | P(LIMIT) |
			   P(LABEL),
};

int serve_query__endpoint(const char *path, enum serve_endpoint *ep)
{
	uint32_t i;

	if (strncmp(path, "/api/", 5))
		return -ENOENT;
	for (i = 0; i < SERVE_EP_COUNT; i++) {
		if (!strcmp(path + 5, endpoint_names[i])) {
			*ep = i;
			return 0;
		}
	}
	return -ENOENT;
}

const char *serve_query__endpoint_name(enum serve_endpoint ep)
{
	return (unsigned)ep < SERVE_EP_COUNT ? endpoint_names[ep] : "?";
}

void serve_query__init(struct serve_query *q, enum serve_endpoint ep)
{
	memset(q, 0, sizeof(*q));
	q->endpoint = ep;
	q->thread = UINT32_MAX;
	q->process = UINT32_MAX;
	q->min_share = SERVE_DEFAULT_MIN_SHARE;
	q->max_nodes = SERVE_DEFAULT_NODES;
	q->limit = ep == SERVE_EP_INTERVALS || ep == SERVE_EP_ZONES ? SERVE_MAX_INTERVALS
		   : ep == SERVE_EP_LANES   ? SERVE_DEFAULT_LANES
					    : SERVE_DEFAULT_LIMIT;
	q->buckets = SERVE_DEFAULT_BUCKETS;
	q->sort = SERVE_SORT_SELF;
	q->by = SERVE_BY_STATE;
	q->look = SERVE_LOOK_LOGICAL;
	/* As report: clipped off-CPU intervals count (marked) unless incomplete=0. */
	q->incomplete = true;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A decimal u64 in [0, max]: digits only, at most 20 of them. */
static int parse_u64(const char *v, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;
	const char *p;

	if (!*v || strlen(v) > 20)
		return -EINVAL;
	for (p = v; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (__builtin_mul_overflow(x, 10, &x) || __builtin_add_overflow(x, *p - '0', &x))
			return -EINVAL;
	}
	if (x > max)
		return -EINVAL;
	*out = x;
	return 0;
}

/* A percentage: digits with at most one '.', in [0, 100]. */
static int parse_percent(const char *v, double *out)
{
	const char *p;
	int dots = 0;
	char *end;
	double x;

	if (!*v || strlen(v) > 24)
		return -EINVAL;
	for (p = v; *p; p++) {
		if (*p == '.')
			dots++;
		else if (*p < '0' || *p > '9')
			return -EINVAL;
	}
	if (dots > 1 || !strcmp(v, "."))
		return -EINVAL;
	x = strtod(v, &end);
	if (*end || !isfinite(x) || x < 0 || x > 100)
		return -EINVAL;
	*out = x;
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "true"))
		*out = true;
	else if (!strcmp(v, "0") || !strcmp(v, "false"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* Copy a text value; names may hold any byte but NUL (the decoder stops there). */
static void set_text(char *dst, const char *v)
{
	size_t n = strlen(v);

	memcpy(dst, v, n + 1);
}

static const char *const label_fields[] = { "pid", "tid", "comm", "module", "container",
					    "cgroup" };

/* label=FIELD:[!]VALUE[,...]: known fields, non-empty values, at most
 * SERVE_MAX_LABEL_TERMS terms. */
static int check_label(const char *v, char *err, size_t errlen)
{
	const char *term = v, *colon, *end;
	unsigned n = 0, i;

	for (;;) {
		end = strchr(term, ',');
		if (!end)
			end = term + strlen(term);
		colon = memchr(term, ':', (size_t)(end - term));
		if (!colon)
			return fail(err, errlen, "label: '%.*s' is not FIELD:VALUE",
				    (int)(end - term > 64 ? 64 : end - term), term);
		for (i = 0; i < sizeof(label_fields) / sizeof(label_fields[0]); i++)
			if (strlen(label_fields[i]) == (size_t)(colon - term) &&
			    !memcmp(term, label_fields[i], (size_t)(colon - term)))
				break;
		if (i == sizeof(label_fields) / sizeof(label_fields[0]))
			return fail(err, errlen,
				    "label: '%.*s' is not pid, tid, comm, module, container or cgroup",
				    (int)(colon - term > 32 ? 32 : colon - term), term);
		if (end - colon < 2 || (colon[1] == '!' && end - colon < 3))
			return fail(err, errlen, "label: %.*s has no value",
				    (int)(colon - term), term);
		if (++n > SERVE_MAX_LABEL_TERMS)
			return fail(err, errlen, "label: more than %d terms",
				    SERVE_MAX_LABEL_TERMS);
		if (!*end)
			return 0;
		term = end + 1;
	}
}

int serve_query__set(struct serve_query *q, const char *key, const char *value, char *err,
		     size_t errlen)
{
	uint64_t u;
	int p, i;

	if (!key)
		return fail(err, errlen, "a parameter without a name");
	for (p = -1, i = 0; i < SERVE_P_COUNT; i++) {
		if (!strcmp(key, param_names[i])) {
			p = i;
			break;
		}
	}
	if (p < 0)
		return fail(err, errlen, "unknown parameter '%.64s'", key);
	if (!(endpoint_params[q->endpoint] & (1u << p)))
		return fail(err, errlen, "parameter '%s' does not apply to /api/%s", key,
			    endpoint_names[q->endpoint]);
	if (q->set & (1u << p))
		return fail(err, errlen, "parameter '%s' given twice", key);
	if (!value)
		return fail(err, errlen, "parameter '%s' has no value ('%s=...')", key, key);
	if (strlen(value) > SERVE_MAX_VALUE)
		return fail(err, errlen, "parameter '%s': value longer than %d bytes", key,
			    SERVE_MAX_VALUE);
	q->set |= 1u << p;

	switch (p) {
	case SERVE_P_EVENT:
		if (!*value)
			return fail(err, errlen, "event: empty name");
		set_text(q->event, value);
		return 0;
	case SERVE_P_MODULE:
		set_text(q->module, value);
		return 0;
	case SERVE_P_FUNCTION:
		if (!*value)
			return fail(err, errlen, "function: empty name");
		set_text(q->function, value);
		return 0;
	case SERVE_P_FILE:
		set_text(q->file, value);
		return 0;
	case SERVE_P_LABEL:
		if (check_label(value, err, errlen))
			return -EINVAL;
		set_text(q->label, value);
		return 0;
	case SERVE_P_FOCUS:
		set_text(q->focus, value);
		return 0;
	case SERVE_P_IGNORE:
		set_text(q->ignore, value);
		return 0;
	case SERVE_P_THREAD:
	case SERVE_P_PROCESS:
	case SERVE_P_NODE:
		if (parse_u64(value, UINT32_MAX - 1, &u))
			return fail(err, errlen, "%s: '%.32s' is not a row id (0 to %u)", key, value,
				    UINT32_MAX - 1);
		if (p == SERVE_P_THREAD)
			q->thread = (uint32_t)u;
		else if (p == SERVE_P_PROCESS)
			q->process = (uint32_t)u;
		else
			q->node = (uint32_t)u;
		return 0;
	case SERVE_P_START:
	case SERVE_P_END:
	case SERVE_P_BASE_START:
	case SERVE_P_BASE_END:
	case SERVE_P_MIN_NS:
		if (parse_u64(value, UINT64_MAX, &u))
			return fail(err, errlen, "%s: '%.32s' is not a time in ns", key, value);
		if (p == SERVE_P_START)
			q->start_ns = u;
		else if (p == SERVE_P_END)
			q->end_ns = u;
		else if (p == SERVE_P_BASE_START)
			q->base_start_ns = u;
		else if (p == SERVE_P_BASE_END)
			q->base_end_ns = u;
		else
			q->min_ns = u;
		return 0;
	case SERVE_P_LOOK:
		if (!strcmp(value, "logical"))
			q->look = SERVE_LOOK_LOGICAL;
		else if (!strcmp(value, "native"))
			q->look = SERVE_LOOK_NATIVE;
		else if (!strcmp(value, "python"))
			q->look = SERVE_LOOK_PYTHON;
		else
			return fail(err, errlen, "look: '%.32s' is not logical, native or python",
				    value);
		return 0;
	case SERVE_P_GRANULARITY:
		if (!strcmp(value, "function"))
			q->granularity = SERVE_GRAN_FUNCTION;
		else if (!strcmp(value, "line"))
			q->granularity = SERVE_GRAN_LINE;
		else if (!strcmp(value, "address"))
			q->granularity = SERVE_GRAN_ADDRESS;
		else if (!strcmp(value, "frame"))
			q->granularity = SERVE_GRAN_FRAME;
		else if (!strcmp(value, "module"))
			q->granularity = SERVE_GRAN_MODULE;
		else
			return fail(err, errlen,
				    "granularity: '%.32s' is not function, line, address, frame or "
				    "module",
				    value);
		return 0;
	case SERVE_P_THREADS:
		if (parse_bool(value, &q->per_thread))
			return fail(err, errlen, "threads: '%.32s' is not 0 or 1", value);
		return 0;
	case SERVE_P_INCOMPLETE:
		if (parse_bool(value, &q->incomplete))
			return fail(err, errlen, "incomplete: '%.32s' is not 0 or 1", value);
		return 0;
	case SERVE_P_MIN_SHARE:
		if (parse_percent(value, &q->min_share))
			return fail(err, errlen, "min_share: '%.32s' is not a percentage 0 to 100",
				    value);
		return 0;
	case SERVE_P_MAX_NODES:
		if (parse_u64(value, SERVE_MAX_NODES, &u) || !u)
			return fail(err, errlen, "max_nodes: '%.32s' is not 1 to %d", value,
				    SERVE_MAX_NODES);
		q->max_nodes = (uint32_t)u;
		return 0;
	case SERVE_P_OFFSET:
		if (parse_u64(value, UINT32_MAX - 1, &u))
			return fail(err, errlen, "offset: '%.32s' is not a row count", value);
		q->offset = (uint32_t)u;
		return 0;
	case SERVE_P_LIMIT: {
		uint32_t max = q->endpoint == SERVE_EP_INTERVALS || q->endpoint == SERVE_EP_ZONES
				       ? SERVE_MAX_INTERVALS
			       : q->endpoint == SERVE_EP_LANES	 ? SERVE_MAX_LANES
								 : SERVE_MAX_LIMIT;

		if (parse_u64(value, max, &u) || !u)
			return fail(err, errlen, "limit: '%.32s' is not 1 to %u", value, max);
		q->limit = (uint32_t)u;
		return 0;
	}
	case SERVE_P_SORT:
		if (!strcmp(value, "self"))
			q->sort = SERVE_SORT_SELF;
		else if (!strcmp(value, "total"))
			q->sort = SERVE_SORT_TOTAL;
		else
			return fail(err, errlen, "sort: '%.32s' is not self or total", value);
		return 0;
	case SERVE_P_BUCKETS:
		if (parse_u64(value, SERVE_MAX_BUCKETS, &u) || !u)
			return fail(err, errlen, "buckets: '%.32s' is not 1 to %d", value,
				    SERVE_MAX_BUCKETS);
		q->buckets = (uint32_t)u;
		return 0;
	case SERVE_P_BY:
		if (q->endpoint == SERVE_EP_GROUPS) {
			if (!strcmp(value, "process"))
				q->group_by = SERVE_GROUP_PROCESS;
			else if (!strcmp(value, "thread"))
				q->group_by = SERVE_GROUP_THREAD;
			else if (!strcmp(value, "container"))
				q->group_by = SERVE_GROUP_CONTAINER;
			else if (!strcmp(value, "module"))
				q->group_by = SERVE_GROUP_MODULE;
			else
				return fail(err, errlen,
					    "by: '%.32s' is not process, thread, container or module",
					    value);
			return 0;
		}
		if (!strcmp(value, "state"))
			q->by = SERVE_BY_STATE;
		else if (!strcmp(value, "function"))
			q->by = SERVE_BY_FUNCTION;
		else if (!strcmp(value, "waker"))
			q->by = SERVE_BY_WAKER;
		else
			return fail(err, errlen, "by: '%.32s' is not state, function or waker",
				    value);
		return 0;
	}
	return fail(err, errlen, "parameter '%s' is not handled", key);
}

int serve_query__finish(struct serve_query *q, char *err, size_t errlen)
{
	if (q->endpoint == SERVE_EP_SOURCE && !q->function[0])
		return fail(err, errlen, "/api/source needs function=NAME");
	if (q->end_ns && q->end_ns <= q->start_ns)
		return fail(err, errlen, "end (%" PRIu64 ") must be after start (%" PRIu64 ")",
			    q->end_ns, q->start_ns);
	if ((q->set & P(END)) && !q->end_ns)
		return fail(err, errlen, "end: 0 is not a time after start");
	if (q->base_end_ns && q->base_end_ns <= q->base_start_ns)
		return fail(err, errlen,
			    "base_end (%" PRIu64 ") must be after base_start (%" PRIu64 ")",
			    q->base_end_ns, q->base_start_ns);
	if ((q->set & P(BASE_END)) && !q->base_end_ns)
		return fail(err, errlen, "base_end: 0 is not a time after base_start");
	return 0;
}

size_t serve_query__canonical(const struct serve_query *q, char *buf, size_t size)
{
	/* Text fields are last and length-prefixed, so no value can forge another field. */
	return (size_t)snprintf(
		buf, size,
		"%s|%u|%u|%" PRIu64 "|%" PRIu64 "|%" PRIu64 "|%" PRIu64
		"|%d|%d|%d|%d|%.17g|%u|%u|%u|%u|%d|%u|%d|%" PRIu64
		"|%d|%zu:%s|%zu:%s|%zu:%s|%zu:%s|%zu:%s|%zu:%s|%d:%zu:%s",
		serve_query__endpoint_name(q->endpoint), q->thread, q->process, q->start_ns,
		q->end_ns, q->base_start_ns, q->base_end_ns, q->look, q->granularity, q->per_thread, q->incomplete, q->min_share, q->max_nodes,
		q->node, q->offset, q->limit, q->sort, q->buckets, q->by, q->min_ns, q->group_by,
		strlen(q->event), q->event, strlen(q->module), q->module, strlen(q->focus),
		q->focus, strlen(q->ignore), q->ignore, strlen(q->label), q->label, strlen(q->function),
		q->function, !!(q->set & P(FILE)), strlen(q->file), q->file);
}
