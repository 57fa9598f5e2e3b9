/* SPDX-License-Identifier: MIT */
/*
 * record --cgroup PATH and --container ID|NAME: resolved to cgroup v2 ids in
 * record_options.cgroup_ids before anything is attached (the sampler and the
 * off-CPU programs then keep only tasks of those cgroups and their
 * sub-cgroups, bpf/scope.bpf.h).
 */
#ifndef MS_CLI_RECORD_SCOPE_H
#define MS_CLI_RECORD_SCOPE_H

#include <stddef.h>

#include "../options/record_options.h"

/*
 * Resolve cgroups[ncg] (paths inside the v2 tree, absolute or relative to
 * its root) and containers[nct] (ids, short ids or machine names, found
 * through proc_root/PID/cgroup) into o->cgroup_ids, using the v2 mount
 * named in mountinfo.  desc (desclen bytes) gets the selected cgroup paths,
 * comma-separated, for the capture's meta.  Returns 0, or -errno with a
 * message for the user in err: -ENOENT (v1-only host, missing cgroup, no
 * matching container), -EACCES, -EXDEV (outside the v2 tree), -E2BIG (more
 * than MS_MAX_CGROUPS).
 */
int record_scope__resolve(struct record_options *o, const char *mountinfo, const char *proc_root,
			  const char *const *cgroups, size_t ncg, const char *const *containers,
			  size_t nct, char *desc, size_t desclen, char *err, size_t errlen);

#endif
