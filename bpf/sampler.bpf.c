// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU sampler: runs on every overflow of the per-CPU sampling perf event
 * (cpu-clock or cycles), keeps the tasks being recorded, and writes one
 * struct ms_sample (bpf/abi/records.h) per sample into the "samples" BPF ring
 * buffer: time, pid/tid, CPU, period, kernel and user callchains and the
 * thread's user registers.
 *
 * Filtering happens here, in the kernel: either every task but the idle
 * tasks (system_wide, set through rodata), or tasks whose tgid is in the
 * "targets" hash map.  Userspace adds the recorded processes; processes they
 * fork join in handle_fork; a process leaves when its last thread exits, so
 * the map stays small and a recycled pid is not recorded by mistake.
 *
 * Every loss is counted in the per-CPU "ms_stats" map (struct ms_stats).
 * GPL because bpf_get_stack and bpf_task_pt_regs are GPL-only helpers.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/abi/records.h"

/* BPF_F_USER_STACK and friends are #defines in uapi bpf.h, not in BTF. */
#ifndef BPF_F_USER_STACK
#define BPF_F_USER_STACK (1ULL << 8)
#endif
#ifndef BPF_RB_NO_WAKEUP
#define BPF_RB_NO_WAKEUP    (1ULL << 0)
#define BPF_RB_FORCE_WAKEUP (1ULL << 1)
#endif
#ifndef BPF_RB_AVAIL_DATA
#define BPF_RB_AVAIL_DATA 0
#endif
#ifndef BPF_NOEXIST
#define BPF_NOEXIST 1
#endif
#ifndef EEXIST
#define EEXIST 17
#endif

#define STACK_BYTES (MS_MAX_STACK_DEPTH * sizeof(__u64))
#define TARGETS_MAX 16384

/* Settings, written by userspace through skel->rodata before load. */
const volatile __u32 system_wide = 0;
/* Wake the reader only once this many bytes wait in the ring (0: always). */
const volatile __u64 wakeup_bytes = 0;

/* Recorded processes: tgid -> 1. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TARGETS_MAX);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* Sample records; userspace sets the size (bytes) before load. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} samples SEC(".maps");

/* Loss and failure counters, one struct ms_stats per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ms_stats);
} ms_stats SEC(".maps");

/* One sample under construction per CPU (the program does not nest). */
struct sample_scratch {
	__u8 bytes[MS_SAMPLE_MAX_SIZE];
};
_Static_assert(sizeof(struct sample_scratch) == sizeof(struct ms_sample) + 2 * STACK_BYTES,
	       "scratch holds a header and two full callchains");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_scratch);
} scratch SEC(".maps");

static __always_inline struct ms_stats *stats__get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ms_stats, &zero);
}

static __always_inline bool task__is_recorded(__u32 tgid)
{
	if (system_wide)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/*
 * The registers in the perf_event context as the uapi lays them out
 * (bpf_user_pt_regs_t is the uapi struct pt_regs on x86-64,
 * arch/x86/include/uapi/asm/ptrace.h): all unsigned long.  A fixed ABI, so
 * no CO-RE relocation; the verifier only allows 8-byte loads at constant
 * offsets from the context, which the kernel's struct (u16 cs) would break.
 */
struct uapi_x86_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};

/* x86: the interrupted context was kernel mode when CPL (cs & 3) is 0. */
static __always_inline bool ctx__kernel_mode(struct bpf_perf_event_data *ctx)
{
	const struct uapi_x86_regs *regs = (const void *)ctx;

	return (regs->cs & 3) == 0;
}

SEC("perf_event")
int handle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct task_struct *task;
	struct ms_stats *stats;
	struct ms_sample *s;
	struct pt_regs *uregs;
	__u32 zero = 0, k = 0, u = 0, size;
	long n;

	if (tid == 0) /* the idle task of this CPU */
		return 0;
	if (!task__is_recorded(tgid))
		return 0;
	stats = stats__get();
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!stats || !s)
		return 0;
	stats->samples_seen++;

	s->time_ns = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = tid;
	s->cpu = bpf_get_smp_processor_id();
	s->flags = 0;
	s->period = ctx->sample_period;
	s->arch = MS_ARCH_X86_64;
	s->stack_copy_len = 0;
	s->reserved = 0;

	task = bpf_get_current_task_btf();
	if (!task->mm)
		s->flags |= MS_SAMPLE_F_KTHREAD;

	/* Kernel callchain: only when the interrupt hit the kernel. */
	if (ctx__kernel_mode(ctx)) {
		s->flags |= MS_SAMPLE_F_KERNEL_MODE;
		n = bpf_get_stack(ctx, s->ips, STACK_BYTES, 0);
		if (n < 0) {
			s->flags |= MS_SAMPLE_F_KSTACK_ERR;
			stats->kstack_err++;
			n = 0;
		}
		k = (__u32)n / sizeof(__u64);
		if (k > MS_MAX_STACK_DEPTH)
			k = MS_MAX_STACK_DEPTH;
	}

	/*
	 * User callchain and registers.  From kernel mode, bpf_get_stack()
	 * walks from the task's saved user registers (task_pt_regs), the same
	 * ones bpf_task_pt_regs() returns.
	 */
	__builtin_memset(&s->regs, 0, sizeof(s->regs));
	if (!(s->flags & MS_SAMPLE_F_KTHREAD)) {
		n = bpf_get_stack(ctx, &s->ips[k], STACK_BYTES, BPF_F_USER_STACK);
		if (n < 0) {
			s->flags |= MS_SAMPLE_F_USTACK_ERR;
			stats->ustack_err++;
			n = 0;
		}
		u = (__u32)n / sizeof(__u64);
		if (u > MS_MAX_STACK_DEPTH)
			u = MS_MAX_STACK_DEPTH;

		/* A BTF pointer: direct (CO-RE relocated, fault-safe) loads,
		 * no helper call per register. */
		uregs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (uregs) {
			s->regs.ip = uregs->ip;
			s->regs.sp = uregs->sp;
			s->regs.bp = uregs->bp;
			s->regs.bx = uregs->bx;
			s->regs.r12 = uregs->r12;
			s->regs.r13 = uregs->r13;
			s->regs.r14 = uregs->r14;
			s->regs.r15 = uregs->r15;
			s->flags |= MS_SAMPLE_F_USER_REGS;
		}
	}
	s->kstack_len = k;
	s->ustack_len = u;

	size = sizeof(struct ms_sample) + (k + u) * sizeof(__u64);
	if (size > sizeof(struct sample_scratch)) /* cannot happen; bounds the verifier */
		size = sizeof(struct sample_scratch);
	s->hdr.type = MS_REC_SAMPLE;
	s->hdr.size = size;

	__u64 flags = BPF_RB_NO_WAKEUP;
	if (!wakeup_bytes || bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&samples, s, size, flags))
		stats->ringbuf_full++;
	return 0;
}

/* A recorded process forked: the child process is recorded too.  Threads
 * share the parent's tgid and are covered already. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	struct ms_stats *stats;
	__u8 one = 1;
	long err;

	if (system_wide || ptgid == ctgid)
		return 0;
	if (!bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	err = bpf_map_update_elem(&targets, &ctgid, &one, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		stats = stats__get();
		if (stats)
			__sync_fetch_and_add(&stats->filter_full, 1);
	}
	return 0;
}

/* The last thread of a process exits: forget its tgid (signal->live reached
 * 0 before this tracepoint in do_exit(), kernel/exit.c). */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	__u32 tgid;

	if (system_wide)
		return 0;
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = BPF_CORE_READ(p, tgid);
	bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
