// SPDX-License-Identifier: MIT
/* record --cgroup / --container resolution (record_scope.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "../cgroups/cgroups.h"
#include "record_scope.h"

#define MATCHES_MAX 16 /* cgroups one --container may select */

/* Add id (path rel) unless present.  Returns 0 or -E2BIG. */
static int scope__add(struct record_options *o, uint64_t id, const char *rel, char *desc,
		      size_t desclen)
{
	size_t used = strlen(desc);

	for (size_t i = 0; i < o->ncgroup_ids; i++)
		if (o->cgroup_ids[i] == id)
			return 0;
	if (o->ncgroup_ids == MS_MAX_CGROUPS)
		return -E2BIG;
	o->cgroup_ids[o->ncgroup_ids++] = id;
	if (used < desclen)
		snprintf(desc + used, desclen - used, "%s%s", used ? "," : "", rel);
	return 0;
}

int record_scope__resolve(struct record_options *o, const char *mountinfo, const char *proc_root,
			  const char *const *cgroups, size_t ncg, const char *const *containers,
			  size_t nct, char *desc, size_t desclen, char *err, size_t errlen)
{
	static char matches[MATCHES_MAX][CGROUP_PATH_MAX];
	char root[PATH_MAX], rel[CGROUP_PATH_MAX];
	const char *runtimes[MATCHES_MAX];
	uint64_t id;
	int ret;

	if (desclen)
		desc[0] = '\0';
	if (!ncg && !nct)
		return 0;
	ret = cgroup_root__find(mountinfo, root, sizeof(root));
	if (ret == -ENOENT) {
		snprintf(err, errlen,
			 "%s needs the cgroup v2 hierarchy, and this host mounts only cgroup v1 "
			 "(no cgroup2 file system in %s)",
			 ncg ? "--cgroup" : "--container", mountinfo);
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "cannot find the cgroup v2 mount in %s: %s", mountinfo,
			 strerror(-ret));
		return ret;
	}
	for (size_t i = 0; i < ncg; i++) {
		ret = cgroup__resolve(root, cgroups[i], rel, sizeof(rel), &id);
		if (ret == -ENOENT || ret == -ENOTDIR)
			snprintf(err, errlen, "--cgroup %s: no such cgroup in the v2 hierarchy at %s",
				 cgroups[i], root);
		else if (ret == -EXDEV)
			snprintf(err, errlen,
				 "--cgroup %s: not in the cgroup v2 hierarchy (mounted at %s; "
				 "cgroup v1 hierarchies cannot be filtered on)",
				 cgroups[i], root);
		else if (ret)
			snprintf(err, errlen, "--cgroup %s: cannot read it: %s", cgroups[i],
				 strerror(-ret));
		if (!ret)
			ret = scope__add(o, id, rel, desc, desclen);
		if (ret == -E2BIG)
			snprintf(err, errlen, "more than %d cgroups selected", MS_MAX_CGROUPS);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < nct; i++) {
		int n = cgroup_containers__find(proc_root, containers[i], matches, runtimes,
						MATCHES_MAX);

		if (n < 0) {
			snprintf(err, errlen, "--container %s: cannot read %s: %s", containers[i],
				 proc_root, strerror(-n));
			return n;
		}
		if (!n) {
			snprintf(err, errlen,
				 "--container %s: no running container matches (by id, short id or "
				 "name, among the cgroups of the processes in %s: docker, "
				 "containerd, cri-o, podman, systemd-nspawn and lxc names)",
				 containers[i], proc_root);
			return -ENOENT;
		}
		if (n > MATCHES_MAX) {
			snprintf(err, errlen, "--container %s matches %d containers; give more of its id",
				 containers[i], n);
			return -E2BIG;
		}
		for (int k = 0; k < n; k++) {
			char abs[PATH_MAX + CGROUP_PATH_MAX];

			snprintf(abs, sizeof(abs), "%s%s", root, matches[k]);
			ret = cgroup__id(abs, &id);
			if (ret) {
				snprintf(err, errlen, "--container %s: cgroup %s: %s", containers[i],
					 abs, strerror(-ret));
				return ret;
			}
			ret = scope__add(o, id, matches[k], desc, desclen);
			if (ret) {
				snprintf(err, errlen, "more than %d cgroups selected", MS_MAX_CGROUPS);
				return ret;
			}
		}
	}
	return 0;
}
