/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which tasks a recording keeps, beside the tgid "targets" map: shared by
 * bpf/sampler.bpf.c and bpf/offcpu.bpf.c (the collector hands the sampler's
 * "scope_cgroups" fd to the off-CPU object with bpf_map__reuse_fd, as it
 * does "targets").
 *
 *   - self_tgid (rodata): the recorder's own process, never recorded
 *     (0 when --include-self keeps it);
 *   - cgroup_filter (rodata): when set, only tasks whose cgroup v2 (the
 *     default hierarchy, wherever it is mounted) or one of its ancestors is
 *     in "scope_cgroups" (key: cgroup id, the kernfs node id, which is the
 *     inode number of the cgroup's directory; value unused).  Userspace
 *     fills the map before attaching (record --cgroup, --container).
 *     Ancestors count, so a container's sub-cgroups created while recording
 *     are in scope without userspace seeing them.
 *
 * The cgroup walk reads task->cgroups->dfl_cgrp (RCU-protected; a tp_btf
 * or perf_event program runs under RCU) and its ancestors: cgroup.ancestors[]
 * since Linux 6.2 (commit 7f203bc89eb6 "cgroup: Replace cgroup->ancestor_ids[]
 * with ->ancestors[]"), cgroup.ancestor_ids[] before it; both at most
 * SCOPE_MAX_LEVEL deep (deeper cgroups are matched on their first levels
 * and themselves only).
 *
 * The includer includes vmlinux.h, the libbpf BPF headers and
 * bpf/abi/records.h first.
 */
#ifndef MS_BPF_SCOPE_H
#define MS_BPF_SCOPE_H

#define SCOPE_CGROUPS_MAX 256 /* --cgroup/--container ids per recording (policy) */
#define SCOPE_MAX_LEVEL 16    /* ancestors checked per task */

const volatile __u32 self_tgid = 0;
const volatile __u32 cgroup_filter = 0;

/* Selected cgroups: cgroup id -> 1.  Replaced by the sampler's map in the
 * off-CPU object before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SCOPE_CGROUPS_MAX);
	__type(key, __u64);
	__type(value, __u8);
} scope_cgroups SEC(".maps");

/* Linux < 6.2 layout (CO-RE flavor). */
struct cgroup___pre62 {
	int level;
	u64 ancestor_ids[];
} __attribute__((preserve_access_index));

/* The cgroup v2 id of task t (0 if it cannot be read). */
static __always_inline __u64 scope__cgroup_id(struct task_struct *t)
{
	return BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id);
}

/* True if t's cgroup v2, or one of its first SCOPE_MAX_LEVEL ancestors, is
 * selected. */
static __always_inline bool scope__cgroup_selected(struct task_struct *t)
{
	struct cgroup *cg = BPF_CORE_READ(t, cgroups, dfl_cgrp);
	__u64 id = BPF_CORE_READ(cg, kn, id);
	int level, i;

	if (!cg)
		return false;
	if (bpf_map_lookup_elem(&scope_cgroups, &id))
		return true;
	level = BPF_CORE_READ(cg, level);
	for (i = 0; i < SCOPE_MAX_LEVEL && i < level; i++) {
		if (bpf_core_field_exists(cg->ancestors)) {
			struct cgroup *a = NULL;

			bpf_core_read(&a, sizeof(a), &cg->ancestors[i]);
			id = BPF_CORE_READ(a, kn, id);
		} else {
			struct cgroup___pre62 *old = (void *)cg;

			bpf_core_read(&id, sizeof(id), &old->ancestor_ids[i]);
		}
		if (bpf_map_lookup_elem(&scope_cgroups, &id))
			return true;
	}
	return false;
}

/* True if task t (a thread of process tgid) is in the recording's scope as
 * far as self-exclusion and the cgroup filter go (the caller checks the
 * tgid targets). */
static __always_inline bool scope__task_kept(struct task_struct *t, __u32 tgid)
{
	if (self_tgid && tgid == self_tgid)
		return false;
	if (cgroup_filter && !scope__cgroup_selected(t))
		return false;
	return true;
}

/*
 * Namespace identity of task t as its own pid namespace sees it: the tid,
 * the tgid (its group leader's number at the same level) and the
 * namespace's inode number (what /proc/PID/ns/pid links to).  Zeros when
 * they cannot be read.  include/linux/pid.h: pid->numbers[pid->level] is
 * the task's number in its innermost namespace.
 */
static __always_inline void scope__ns_ids(struct task_struct *t, __u32 *ns_tid, __u32 *ns_tgid,
					  __u32 *pidns)
{
	struct pid *tp = BPF_CORE_READ(t, thread_pid);
	struct pid *lp = BPF_CORE_READ(t, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(tp, level);
	struct upid up = {}, lup = {};

	*ns_tid = 0;
	*ns_tgid = 0;
	*pidns = 0;
	if (!tp || level > 32) /* MAX_PID_NS_LEVEL (include/linux/pid_namespace.h) */
		return;
	if (bpf_core_read(&up, sizeof(up), &tp->numbers[level]))
		return;
	*ns_tid = up.nr;
	*pidns = BPF_CORE_READ(up.ns, ns.inum);
	if (lp && BPF_CORE_READ(lp, level) == level &&
	    !bpf_core_read(&lup, sizeof(lup), &lp->numbers[level]))
		*ns_tgid = lup.nr;
}

#endif
