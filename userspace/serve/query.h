/* SPDX-License-Identifier: MIT */
/*
 * The typed query of `microscope serve`: one endpoint of /api/ and its
 * parameters, parsed from untrusted key=value pairs (the URL's query
 * string, already percent-decoded by the HTTP library) into fixed-size
 * fields.  Nothing here allocates: a query is a plain value, and parsing
 * is pure so tests/fuzz/fuzz_serve_query.c can drive it.
 *
 * Every request's keys and values are documented in docs/api.md, which
 * must stay in step with serve_query__set() and the SERVE_* limits below
 * (the limits are policy: they bound every response).
 */
#ifndef MS_SERVE_QUERY_H
#define MS_SERVE_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- limits (policy: every response is bounded by these) ---------------- */
#define SERVE_MAX_VALUE 512	     /* bytes of one parameter value */
#define SERVE_MAX_PARAMS 24	     /* parameters of one request */
#define SERVE_MAX_NODES 20000	     /* flame graph nodes in one response */
#define SERVE_DEFAULT_NODES 4000
#define SERVE_DEFAULT_MIN_SHARE 0.05 /* percent of the total: smaller nodes are pruned */
#define SERVE_MAX_LIMIT 1000	     /* rows of a page (flat, calltree, threads, offcpu, diff) */
#define SERVE_DEFAULT_LIMIT 200
#define SERVE_MAX_INTERVALS 5000     /* off-CPU intervals in one page */
#define SERVE_MAX_BUCKETS 2000	     /* lane buckets */
#define SERVE_DEFAULT_BUCKETS 400
#define SERVE_MAX_LANES 256	     /* lanes in one page */
#define SERVE_DEFAULT_LANES 64
#define SERVE_MAX_SOURCE_BYTES (4 << 20) /* a source file larger is not shown */
#define SERVE_MAX_SOURCE_LINES 2000	/* lines of text of one file in a response */
#define SERVE_SOURCE_CONTEXT 8		/* lines shown around the sampled ones */
#define SERVE_MAX_SOURCE_FILES 16	/* files of one function in a response */

enum serve_endpoint {
	SERVE_EP_INFO = 0,    /* /api/info: the capture, its events, counts, summary */
	SERVE_EP_THREADS,     /* /api/threads: threads and processes, paged */
	SERVE_EP_FLAMEGRAPH,  /* /api/flamegraph: the call tree pruned by min_share */
	SERVE_EP_CALLTREE,    /* /api/calltree: the children of one node, paged */
	SERVE_EP_FLAT,	      /* /api/flat: self/total per function, paged */
	SERVE_EP_LANES,	      /* /api/lanes: per-thread density and off-CPU ns per bucket */
	SERVE_EP_INTERVALS,   /* /api/intervals: off-CPU intervals with wakers, paged */
	SERVE_EP_OFFCPU,      /* /api/offcpu: off-CPU time by state, function or waker */
	SERVE_EP_DIFF,	      /* /api/diff: flat diff against the --diff capture */
	SERVE_EP_GROUPS,      /* /api/groups: weight per process, thread, container or module */
	SERVE_EP_SOURCE,      /* /api/source: per-line costs of a function, with its source text */
	SERVE_EP_ZONES,	      /* /api/zones: probe zone statistics per site, zones paged */
	SERVE_EP_COUNT,
};

enum serve_sort { SERVE_SORT_SELF = 0, SERVE_SORT_TOTAL = 1 };
enum serve_by { SERVE_BY_STATE = 0, SERVE_BY_FUNCTION = 1, SERVE_BY_WAKER = 2 };
/* /api/groups?by=: analysis_by's values. */
enum serve_group_by {
	SERVE_GROUP_PROCESS = 0,
	SERVE_GROUP_THREAD = 1,
	SERVE_GROUP_CONTAINER = 2,
	SERVE_GROUP_MODULE = 3,
};
#define SERVE_MAX_LABEL_TERMS 8 /* terms of one label= filter */
enum serve_look { SERVE_LOOK_LOGICAL = 0, SERVE_LOOK_NATIVE = 1, SERVE_LOOK_PYTHON = 2 };
/* What a key stands for (analysis_granularity; report --granularity). */
enum serve_granularity {
	SERVE_GRAN_FUNCTION = 0, /* default, as report */
	SERVE_GRAN_LINE = 1,
	SERVE_GRAN_ADDRESS = 2,
	SERVE_GRAN_FRAME = 3, /* as recorded: the exporters' labels */
	SERVE_GRAN_MODULE = 4, /* one key per module, runs of a module collapsed */
	SERVE_GRAN_COUNT,
};

/* Bits of serve_query.set: which parameters the request gave. */
enum serve_param {
	SERVE_P_EVENT = 0,
	SERVE_P_THREAD,
	SERVE_P_PROCESS,
	SERVE_P_MODULE,
	SERVE_P_FOCUS,
	SERVE_P_IGNORE,
	SERVE_P_START,
	SERVE_P_END,
	SERVE_P_LOOK,
	SERVE_P_GRANULARITY,
	SERVE_P_THREADS,
	SERVE_P_INCOMPLETE,
	SERVE_P_MIN_SHARE,
	SERVE_P_MAX_NODES,
	SERVE_P_NODE,
	SERVE_P_OFFSET,
	SERVE_P_LIMIT,
	SERVE_P_SORT,
	SERVE_P_BUCKETS,
	SERVE_P_BY,
	SERVE_P_MIN_NS,
	SERVE_P_LABEL,
	SERVE_P_FUNCTION,
	SERVE_P_BASE_START,
	SERVE_P_BASE_END,
	SERVE_P_FILE,
	SERVE_P_COUNT,
};

struct serve_query {
	enum serve_endpoint endpoint;
	uint32_t set;	 /* 1 << SERVE_P_* for each parameter given */
	char event[SERVE_MAX_VALUE + 1]; /* event name; "" = the default event */
	uint32_t thread;  /* thread row id, or UINT32_MAX: all */
	uint32_t process; /* process row id, or UINT32_MAX: all */
	char module[SERVE_MAX_VALUE + 1]; /* "" = all */
	char focus[SERVE_MAX_VALUE + 1];  /* "" = none */
	char ignore[SERVE_MAX_VALUE + 1]; /* "" = none */
	uint64_t start_ns; /* from the capture's origin (info.origin_ns) */
	uint64_t end_ns;   /* 0: no upper bound */
	/* /api/diff: the base's part, from the base's own origin; 0: whole */
	uint64_t base_start_ns, base_end_ns;
	enum serve_look look;
	enum serve_granularity granularity;
	bool per_thread; /* threads=1: a root per thread */
	bool incomplete; /* off-CPU intervals cut by the window count too (default; incomplete=0: not) */
	double min_share; /* percent 0..100 */
	uint32_t max_nodes;
	uint32_t node; /* calltree: whose children; 0 = the root */
	uint32_t offset, limit;
	enum serve_sort sort;
	uint32_t buckets;
	enum serve_by by;
	enum serve_group_by group_by; /* /api/groups */
	uint64_t min_ns; /* intervals: shortest listed */
	/* label=FIELD:[!]VALUE[,...]: analysis_scope filter terms (pid, tid,
	 * comm, module, container, cgroup); "" = none.  Checked here for
	 * syntax, resolved by the answerer. */
	char label[SERVE_MAX_VALUE + 1];
	char function[SERVE_MAX_VALUE + 1]; /* /api/source: the function's name, exact */
	/* /api/source: the function's file, exact (only when set has 1 << SERVE_P_FILE) */
	char file[SERVE_MAX_VALUE + 1];
};

/*
 * Map a request path to an endpoint: "/api/flat" -> SERVE_EP_FLAT.
 * Returns 0, or -ENOENT for a path that is no endpoint.
 */
int serve_query__endpoint(const char *path, enum serve_endpoint *ep);
/* "/api/<name>" of ep ("flat"), or "?" for an invalid one. */
const char *serve_query__endpoint_name(enum serve_endpoint ep);

/* Defaults for ep: every filter off, limits at their defaults. */
void serve_query__init(struct serve_query *q, enum serve_endpoint ep);

/*
 * Apply one parameter key=value (value NULL: the key had no '=').  Keys
 * that do not apply to q's endpoint, repeated keys, values out of range or
 * longer than SERVE_MAX_VALUE are errors.  Returns 0, or -EINVAL with a
 * message for the user in err (NUL-terminated, truncated to errlen).
 */
int serve_query__set(struct serve_query *q, const char *key, const char *value, char *err,
		     size_t errlen);

/*
 * Checks across parameters (start < end, ...), after the last set.
 * Returns 0 or -EINVAL with a message in err.
 */
int serve_query__finish(struct serve_query *q, char *err, size_t errlen);

/*
 * The query's canonical form: every field that affects the answer, in a
 * fixed order, so equal queries give equal strings (an ETag is its hash).
 * Returns the length snprintf would write.
 */
size_t serve_query__canonical(const struct serve_query *q, char *buf, size_t size);

#endif
