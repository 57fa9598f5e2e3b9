/* SPDX-License-Identifier: MIT */
/*
 * record --cgroup PATH and --container ID|NAME: resolved to cgroup v2 ids in
 * record_options.cgroup_ids before anything is attached (the sampler and the
 * off-CPU programs then keep only tasks of those cgroups and their
 * sub-cgroups, bpf/scope.bpf.h), then followed while recording: a
 * container restarted (its cgroup removed and made again, with a new id)
 * rejoins the scope (record_scope__follow).
 *
 * A struct record_scope owns the container cgroups in scope (path, id, the
 * --container argument that selected them); the caller owns the kernel's
 * set and changes it through the set callback.
 */
#ifndef MS_CLI_RECORD_SCOPE_H
#define MS_CLI_RECORD_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../options/record_options.h"

/* How often record_scope__follow looks at the container cgroups (ns). */
#define RECORD_SCOPE_FOLLOW_NS 1000000000ull

/* Environment: a directory standing for "/" when reading the container
 * runtimes' state files (docker and podman names), for tests. */
#define RECORD_SCOPE_STATE_ROOT_ENV "MICROSCOPE_CONTAINER_STATE_ROOT"

struct record_scope;

struct record_scope_stats {
	uint64_t left;	   /* container cgroups that went away (removed or replaced) */
	uint64_t rejoined; /* cgroups of restarted containers that joined the scope */
	uint64_t rescans;  /* /proc scans for a container with no cgroup in scope */
	uint64_t cpu_ns;   /* CPU time record_scope__follow took */
};

/*
 * Container lookups through proc_root/PID/cgroup, with docker and podman
 * names from the state files under state_root (NULL: names from the
 * cgroups only).  Both strings are borrowed for the object's life.
 * Returns NULL with errno set.
 */
struct record_scope *record_scope__new(const char *proc_root, const char *state_root);
void record_scope__free(struct record_scope *sc);

/* The state root record uses: $RECORD_SCOPE_STATE_ROOT_ENV, else "" (the host's). */
const char *record_scope__state_root(void);

/*
 * Resolve cgroups[ncg] (paths inside the v2 tree, absolute or relative to
 * its root) and containers[nct] (ids, short ids or names) into
 * o->cgroup_ids, using the v2 mount named in mountinfo; the containers'
 * cgroups are remembered in sc for record_scope__follow (containers[] is
 * borrowed).  desc (desclen bytes) gets the selected cgroup paths,
 * comma-separated, for the capture's meta.  Returns 0, or -errno with a
 * message for the user in err: -ENOENT (v1-only host, missing cgroup, no
 * matching container: err lists the running ones), -EACCES, -EXDEV
 * (outside the v2 tree), -E2BIG (more than MS_MAX_CGROUPS).
 */
int record_scope__resolve(struct record_scope *sc, struct record_options *o,
			  const char *mountinfo, const char *const *cgroups, size_t ncg,
			  const char *const *containers, size_t nct, char *desc, size_t desclen,
			  char *err, size_t errlen);

/* Adds (in true) or removes (in false) cgroup id in the kernel's scope set.
 * Returns 0 or -errno. */
typedef int (*record_scope_set_fn)(void *ctx, uint64_t id, bool in);

/*
 * Follow the --container selections, at most once per
 * RECORD_SCOPE_FOLLOW_NS (now_ns: CLOCK_MONOTONIC): each container cgroup
 * in scope whose directory is gone or is another cgroup now (another id)
 * leaves the scope (set(id, false)); a --container argument left with no
 * cgroup in scope is resolved again (a scan of proc_root), and each
 * container cgroup it finds joins the scope (set(id, true)) and is counted
 * as rejoined.  Each change is said on log (may be NULL).  Returns how many
 * cgroups joined, or -errno of set.
 */
int record_scope__follow(struct record_scope *sc, uint64_t now_ns, record_scope_set_fn set,
			 void *ctx, FILE *log);

void record_scope__stats(const struct record_scope *sc, struct record_scope_stats *st);

#endif
