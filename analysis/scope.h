/* SPDX-License-Identifier: MIT */
/*
 * Scopes: which samples a view keeps (filters by process, thread, comm,
 * module, container, cgroup), per-process roots for host-wide captures, and
 * the top-level split of a capture by process, thread, container or module
 * (report --by).
 *
 * A scope is a derived view of the capture, like a look (look.c): the same
 * modules, threads, processes and events (borrowed); samples, off-CPU
 * intervals, probe records and the sample_cgroups column copied and
 * filtered in their order; with process roots, new frames ("comm [pid]",
 * appended after the capture's own, their names appended to the strings)
 * and new stack rows
 * (interned in creation order, parents first).  Every analysis, converter
 * and exporter runs on the view unchanged.  Pure and deterministic.
 *
 * Filter rules.  Each term names a field and a value; a term written with a
 * leading '!' excludes.  A sample is kept when, for every field that has
 * including terms, it matches one of them, and it matches no excluding
 * term.  Matching:
 *   pid, tid   the thread's process pid / thread id as the initial pid
 *              namespace sees them (decimal);
 *   comm       the thread's or its process's comm, exactly;
 *   module     a frame of the sample's stack is in a module whose path or
 *              base name equals the value;
 *   container  the sample's cgroup belongs to a container whose id or name
 *              equals the value, or whose id starts with it (4 or more hex
 *              digits, docker's short ids);
 *   cgroup     the sample's cgroup path is the value or below it.
 * Off-CPU intervals are kept by the same rules, with the cgroup of their
 * thread's latest sample.  Probe records (zone begins and ends, marks) are
 * kept by the same rules as intervals, but have no stack: module terms do
 * not judge them.  Every rule is a property of the record's thread, so a
 * thread's zones are kept or left whole, never one end without the other.
 */
#ifndef MS_ANALYSIS_SCOPE_H
#define MS_ANALYSIS_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

struct analysis_query; /* analysis.h */

enum analysis_field {
	ANALYSIS_FIELD_PID = 0,
	ANALYSIS_FIELD_TID = 1,
	ANALYSIS_FIELD_COMM = 2,
	ANALYSIS_FIELD_MODULE = 3,
	ANALYSIS_FIELD_CONTAINER = 4,
	ANALYSIS_FIELD_CGROUP = 5,
	ANALYSIS_FIELD_COUNT
};

struct analysis_term {
	uint32_t field;	   /* ANALYSIS_FIELD_* */
	bool exclude;	   /* written with a leading '!' */
	uint32_t number;   /* PID, TID */
	const char *value; /* borrowed: the text after '!' */
};

/* Filter terms; zero-initialize, add, release. */
struct analysis_scope_filter {
	struct analysis_term *terms;
	uint32_t nterms, cap;
};

/*
 * Add the term "[!]value" for field (arg is borrowed and must outlive the
 * filter).  Returns 0, -EINVAL (empty value; a pid or tid that is not a
 * decimal number below 2^32), -ENOMEM.
 */
int analysis_scope_filter__add(struct analysis_scope_filter *f, enum analysis_field field, const char *arg);
/* Accepts a zeroed filter. */
void analysis_scope_filter__release(struct analysis_scope_filter *f);

/* "pid", "tid", "comm", "module", "container", "cgroup"; "?" out of range. */
const char *analysis__field_name(uint32_t field);

struct analysis_scope;

/*
 * The view of c (which must outlive it) keeping the samples and intervals
 * f keeps (f may be NULL or empty: all), with one root frame per process
 * above every stack of its samples when process_roots is set (named
 * "comm [pid]", comm "[unknown]" if empty; samples without a thread stay
 * unrooted).  Returns 0 or -ENOMEM; *out is NULL on failure.
 */
int analysis_scope__new(const struct capture *c, const struct analysis_scope_filter *f,
			bool process_roots, struct analysis_scope **out);
const struct capture *analysis_scope__capture(const struct analysis_scope *s);
/* Accepts NULL. */
void analysis_scope__free(struct analysis_scope *s);

/* ---- the top-level split (report --by) ------------------------------------- */

enum analysis_by {
	ANALYSIS_BY_PROCESS = 0,   /* "comm [pid]", "comm [pid, ns NSPID]" in another pid ns */
	ANALYSIS_BY_THREAD = 1,	   /* "comm [pid/tid]", "comm [pid/tid, ns NSPID/NSTID]" */
	ANALYSIS_BY_CONTAINER = 2, /* "name (runtime)", or "[host]" outside containers,
				    * "[unknown]" for samples without a cgroup */
	ANALYSIS_BY_MODULE = 3,	   /* the innermost frame's module base name, "[kernel]",
				    * "[unknown]" */
};

/* "process", "thread", "container", "module" into *by: 0 or -EINVAL. */
int analysis_by__parse(const char *name, enum analysis_by *by);

struct analysis_group {
	char *name;	  /* owned by the groups */
	uint64_t weight;  /* in the event's unit */
	uint64_t samples; /* samples or intervals */
};

struct analysis_groups {
	struct analysis_group *rows; /* by weight descending, then name */
	uint32_t nrows;
	uint64_t total; /* weight of all samples q selects */
};

/*
 * Split the samples and off-CPU intervals q selects in c (its event, thread,
 * time window, stack filter and selection: what the tree and the table of
 * the same q count; an interval by its start, its clipped part counted, and
 * under "[unknown]" by container: intervals carry no cgroup) by by.  Returns 0, -EINVAL (q fails analysis_query__check), -ENOMEM (g
 * released).
 */
int analysis_groups__init(struct analysis_groups *g, const struct capture *c,
			  const struct analysis_query *q, enum analysis_by by);
/* Accepts a zeroed or released value. */
void analysis_groups__release(struct analysis_groups *g);

/*
 * The container sample i ran in: its name or id, ids of more than 12 hex
 * digits shortened to 12 as docker shows them, written to buf
 * (NUL-terminated, truncated), and its runtime ("" if unknown) to *runtime
 * (may be NULL).  Returns false (buf "") when the sample ran outside any
 * container or has no cgroup.
 */
bool analysis__sample_container(const struct capture *c, uint32_t i, char *buf, size_t size,
				const char **runtime);

#endif
