/* SPDX-License-Identifier: MIT */
/*
 * The scope options `report` and `convert` share (analysis/scope.h):
 *   --pid PID, --tid TID, --comm NAME, --module NAME, --container ID|NAME,
 *   --cgroup PATH   keep matching samples; repeatable; a leading '!' excludes
 *   --merge         one call tree for every process of a host-wide capture
 *                   (default there: one root per process, "comm [pid]")
 * Each command lists SCOPE_LONGOPTS in its getopt_long table and passes
 * every option it does not know to scope_options__handle.
 */
#ifndef MS_CLI_SCOPE_OPTIONS_H
#define MS_CLI_SCOPE_OPTIONS_H

#include <stdbool.h>

#include "analysis/scope.h"

/* getopt_long values: above any character. */
enum {
	SCOPE_OPT_PID = 0x1000,
	SCOPE_OPT_TID,
	SCOPE_OPT_COMM,
	SCOPE_OPT_MODULE,
	SCOPE_OPT_CONTAINER,
	SCOPE_OPT_CGROUP,
	SCOPE_OPT_MERGE,
};

#define SCOPE_LONGOPTS                                                                             \
	{ "pid", required_argument, NULL, SCOPE_OPT_PID },                                         \
	{ "tid", required_argument, NULL, SCOPE_OPT_TID },                                         \
	{ "comm", required_argument, NULL, SCOPE_OPT_COMM },                                       \
	{ "module", required_argument, NULL, SCOPE_OPT_MODULE },                                   \
	{ "container", required_argument, NULL, SCOPE_OPT_CONTAINER },                             \
	{ "cgroup", required_argument, NULL, SCOPE_OPT_CGROUP },                                   \
	{ "merge", no_argument, NULL, SCOPE_OPT_MERGE }

#define SCOPE_USAGE                                                                                \
	"  --pid PID, --tid TID, --comm NAME, --module NAME, --container ID|NAME,\n"               \
	"  --cgroup PATH       keep only matching samples (repeatable; several of one\n"           \
	"                      kind: any of them; '!VALUE' excludes); a container by\n"            \
	"                      id, short id or name, a cgroup with its sub-cgroups\n"              \
	"  --merge             host-wide (-a) captures: one call tree for all processes\n"         \
	"                      instead of one root per process (\"comm [pid]\")\n"

struct scope_options {
	struct analysis_scope_filter filter;
	bool merge;
};

/*
 * Handle option ch (with arg) if it is a scope option.  Returns 1 when
 * handled, 0 when ch is not a scope option, -EINVAL after printing
 * "microscope CMD: --pid takes ..." for a bad value, -ENOMEM.
 */
int scope_options__handle(struct scope_options *o, int ch, const char *arg, const char *cmd);

/*
 * The view of c the options ask for: filtered, and with one root per
 * process when c was recorded host-wide (meta mode "system-wide") unless
 * --merge or per_thread (thread roots instead).  *out is NULL when no view
 * is needed (no filter and no roots).  Returns 0 or -ENOMEM.
 */
int scope_options__view(const struct scope_options *o, const struct capture *c, bool per_thread,
			struct analysis_scope **out);

/* Accepts a zeroed value. */
void scope_options__release(struct scope_options *o);

#endif
