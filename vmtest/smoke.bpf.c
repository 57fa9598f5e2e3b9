// SPDX-License-Identifier: GPL-2.0
/*
 * vmtest smoke object: loaded (never attached) by vmtest/guest-smoke.sh on
 * every kernel of the matrix to prove the verifier accepts the program types
 * microscope uses. task_struct->tgid is a CO-RE relocation resolved against
 * the running kernel's BTF; tp_btf/sched_switch needs that attach point in it.
 * Plain UAPI headers, no vmlinux.h, so it builds without a host BTF dump:
 *   clang -g -O2 -target bpf -I/usr/include/x86_64-linux-gnu -c smoke.bpf.c
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task_struct { int tgid; } __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("perf_event")
int smoke_sample(void *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &key);

	if (v)
		*v += (__u64)BPF_CORE_READ(task, tgid) | 1;
	return 0;
}

SEC("tp_btf/sched_switch")
int smoke_switch(__u64 *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &key);

	if (v)
		*v += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
