// SPDX-License-Identifier: GPL-2.0
/*
 * The CPU sampler: runs on every overflow of the per-CPU sampling perf event
 * (cpu-clock or cycles), keeps the tasks being recorded, and writes one
 * struct ms_sample (bpf/abi/records.h) per sample into the "samples" BPF ring
 * buffer: time, pid/tid, CPU, period, kernel and user callchains, the
 * thread's user registers and, when stack_copy_bytes is set, a copy of the
 * user stack from the user sp upward for unwinding with CFI in userspace.
 *
 * Filtering happens here, in the kernel: either every task but the idle
 * tasks (system_wide, set through rodata), or tasks whose tgid is in the
 * "targets" hash map.  Userspace adds the recorded processes; processes they
 * fork join in handle_fork; a process leaves when its last thread exits, so
 * the map stays small and a recycled pid is not recorded by mistake.  On top
 * of that, bpf/scope.bpf.h drops the recorder's own process and, with
 * --cgroup/--container, tasks outside the selected cgroups.
 *
 * The stack copy never reads past the end of the VMA that holds sp: its end
 * comes from bpf_find_vma (Linux 5.17).  That helper only try-locks the mmap
 * lock and, with interrupts off, defers the unlock to a per-CPU irq_work, so
 * it fails with -EBUSY now and then; the copy then reads page by page and
 * stops at the first page that cannot be read.  bpf_probe_read_user is
 * all-or-nothing (it zero-fills and fails if any byte faults; it never
 * sleeps, so a page that is not resident faults too), so a failed
 * one-shot read is retried page by page to keep what precedes the fault.
 * bpf_find_vma costs about 7.5 us a call here, so the VMA it found is kept
 * per CPU and thread (vma_cache; struct sc_vma_cache says why that is safe).
 *
 * Every loss is counted in the per-CPU "ms_stats" map (struct ms_stats).
 * GPL because bpf_get_stack, bpf_task_pt_regs and bpf_find_vma are GPL-only
 * helpers.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/abi/records.h"

#include "bpf/uapi_defs.bpf.h"

#define STACK_BYTES (MS_MAX_STACK_DEPTH * sizeof(__u64))
#define TARGETS_MAX 16384

/* Settings, written by userspace through skel->rodata before load. */
const volatile __u32 system_wide = 0;
/* Wake the reader only once this many bytes wait in the ring (0: always). */
const volatile __u64 wakeup_bytes = 0;
/* Also wake it for a sample with Python frames once this long passed since
 * the last such wakeup (0: never): its code objects are named from the live
 * process, so they must not wait in the ring for long (sample__wake). */
const volatile __u64 py_wake_ns = 0;
/* User stack bytes to copy per sample: 0 (off), or a multiple of 8 up to
 * MS_STACK_COPY_MAX. */
const volatile __u32 stack_copy_bytes = 0;
/* Under ring pressure a sample's copy is cut to this many bytes, or
 * skipped (stack_copy__pressure_want); 0: never (the copy is all or the
 * sample is lost).  ring_bytes: the "samples" ring's size. */
const volatile __u32 pressure_copy_bytes = 0;
const volatile __u64 ring_bytes = 0;
/* bpf_find_vma exists (Linux 5.17+); the collector probes it before load.
 * Without it the verifier never sees the call (a constant-false branch is
 * dead code) and stacks are bounded by reading page by page. */
const volatile __u32 have_find_vma = 1;

#include "bpf/stack_copy.bpf.h"
#include "bpf/scope.bpf.h"
#include "bpf/kunwind.bpf.h"

/* -a with Python frames: a process whose comm starts with "python" after an
 * exec joins "targets", the map the CPython tracker
 * (userspace/runtimes/py_procs.c) walks to find interpreters; system-wide
 * sampling does not filter on it.  Set by the collector. */
const volatile __u32 python_exec_targets = 0;

/* Samples dropped because the CPU had no scratch slot (userspace sizes the
 * scratch map to the possible CPUs, so this stays 0).  Not in ms_stats,
 * which has no free slot; the collector reports it as "bpf.lost_no_scratch". */
__u64 scratch_missing = 0;

/* Samples whose copy ring pressure cut or skipped (MS_SAMPLE_F_COPY_CUT,
 * _SKIPPED), whether or not they then fit: "bpf.degraded_copy_cut",
 * "bpf.degraded_copy_skipped".  Not in ms_stats, as scratch_missing. */
__u64 degraded_copy_cut = 0;
__u64 degraded_copy_skipped = 0;

/* Bumped at every change of "targets" (here and by the collector through
 * the mmap'd .bss), so the CPython tracker walks the map only after one. */
__u64 targets_gen = 0;

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

/*
 * One sample under construction per CPU: a header, two full callchains, a
 * full stack copy, and one page of slack so that the verifier can bound the
 * page-by-page copy (a write of up to a page at an offset it only knows to be
 * below MS_SAMPLE_MAX_SIZE).  Too big for a per-CPU array (values are at most
 * 32 KiB, PCPU_MIN_UNIT_SIZE), so a plain array indexed by CPU id;
 * userspace sets max_entries to the number of possible CPUs before load.
 * perf_event programs do not nest on a CPU (bpf_prog_active), so one slot
 * per CPU suffices.
 */
struct sample_scratch {
	__u8 bytes[MS_SAMPLE_MAX_SIZE + PAGE_BYTES];
};
_Static_assert(sizeof(struct sample_scratch) ==
		   sizeof(struct ms_sample) + 2 * STACK_BYTES + MS_KUNWIND_BYTES +
			   MS_STACK_COPY_MAX + MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES + PAGE_BYTES,
	       "scratch holds a header, two full callchains, the in-kernel unwind's state, a full "
	       "copy, a full Python walk and a page of slack");
_Static_assert(sizeof(struct sample_scratch) % 8 == 0, "scratch is 8-aligned");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* set to the possible CPUs by userspace */
	__type(key, __u32);
	__type(value, struct sample_scratch);
} scratch SEC(".maps");

/* the walk writes after the stack copy of the scratch sample */
#define PY_OUT_LIMIT MS_SAMPLE_MAX_SIZE
#include "python.bpf.h"

/* Slot 0: handle_sample_py, once loaded (empty until a CPython is found). */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} py_walker SEC(".maps");

static __always_inline struct ms_stats *stats__get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ms_stats, &zero);
}

static __always_inline bool task__is_recorded(struct task_struct *task, __u32 tgid)
{
	if (!scope__task_kept(task, tgid))
		return false;
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

/*
 * *v, at most max, as the verifier sees a value read back from memory: one
 * range whatever path computed it.  The code after it (the stack copy, the
 * CPython walk: subprograms the verifier goes through once per caller state
 * it cannot prune) is then verified once, not once per range of v each path
 * left (kernel or user mode, a callchain cut or not, a stack copied or not):
 * the default sampler's 530k verified instructions became 201k (record's
 * start-up CPU 0.88 -> 0.32 s on the 2-vCPU VM, kernel 6.18).  slot is
 * scratch memory of the sample (hdr.size, written last); the value is
 * unchanged.  False (never: max bounds *v already) when the value read back
 * is over max; the caller drops the sample then.  Not a clamp: "v > max ?
 * max : v" leaves two states, max itself and [0, max - 1], neither within
 * the other, and the subprograms after it were verified once for each
 * (dropping instead: default 390k -> 265k, dwarf 193k -> 101k).
 */
static __always_inline bool verifier__one_range(__u32 *slot, __u32 *v, __u32 max)
{
	__u32 r;

	*slot = *v;
	r = *(volatile __u32 *)slot;
	if (r > max)
		return false;
	*v = r;
	return true;
}

/* Per CPU, the stack VMAs the last copies found, one slot per tid & 7
 * (struct sc_vma_cache: bpf_find_vma's cost, once per thread and stack). */
#define VMA_CACHE_SLOTS 8

struct vma_cache {
	struct sc_vma_cache e[VMA_CACHE_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct vma_cache);
} vma_cache SEC(".maps");

/* The key of the per-CPU caches (vma_cache, ns_cache), in read-only
 * memory, as ku_state_key (bpf/kunwind.bpf.h says why). */
const volatile __u32 cache_key = 0;

/*
 * Per CPU, the namespace ids of the task sampled last (scope__ns_ids: about
 * nine kernel reads, a helper call each).  A task's ids are fixed from its
 * creation but for exec from a thread that is not the leader, which gives
 * the thread the leader's pid (exchange_tids): its pid_tgid changes with
 * them, and the key holds both the task's address and its pid_tgid.
 */
struct ns_cache {
	__u64 task, pid_tgid;
	__u32 ns_tid, ns_pid, pidns, reserved;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ns_cache);
} ns_cache SEC(".maps");

static __noinline void sample__ns_ids(struct ms_sample *s, struct task_struct *task,
				      __u64 pid_tgid)
{
	struct ns_cache *c = bpf_map_lookup_elem(&ns_cache, (const void *)&cache_key);
	__u64 key = bpf_get_current_task(); /* the address as a number */

	if (c && key && c->task == key && c->pid_tgid == pid_tgid) {
		s->ns_tid = c->ns_tid;
		s->ns_pid = c->ns_pid;
		s->pidns = c->pidns;
		return;
	}
	scope__ns_ids(task, &s->ns_tid, &s->ns_pid, &s->pidns);
	if (!c)
		return;
	c->task = key;
	c->pid_tgid = pid_tgid;
	c->ns_tid = s->ns_tid;
	c->ns_pid = s->ns_pid;
	c->pidns = s->pidns;
}

/*
 * Copy the user stack of the current task from sp upward into dst: stack_copy_bytes
 * bytes, or fewer where the VMA holding sp ends or a page cannot be read
 * (perf's user stack dump stops at a fault the same way, its dyn_size).
 * Unreadable pages inside the stack VMA are normal: the main thread's stack
 * has a random gap of up to 8 KiB of never-touched pages below its argument
 * strings (arch_align_stack(), arch/x86/kernel/process.c), and nothing of
 * the call stack lies above it.  Sets MS_SAMPLE_F_STACK_* in *flags and
 * counts in stats.  Returns the bytes copied, a multiple of 8, at most
 * stack_copy_bytes.  dst has room for MS_STACK_COPY_MAX + PAGE_BYTES bytes.
 */
static __always_inline __u32 stack__copy(__u8 *dst, __u32 tid, __u64 sp, __u32 want,
					 __u32 *flags, struct ms_stats *stats)
{
	struct vma_cache *cache = bpf_map_lookup_elem(&vma_cache, (const void *)&cache_key);
	__u32 out = 0, copy;

	if (want > MS_STACK_COPY_MAX)
		want = MS_STACK_COPY_MAX;
	copy = stack_copy__user(dst, sp, want, &out,
				cache ? &cache->e[tid & (VMA_CACHE_SLOTS - 1)] : NULL);

	if (out & SC_NO_VMA) { /* no VMA bound: read pages until one faulted */
		*flags |= MS_SAMPLE_F_STACK_NO_VMA;
		stats->stack_vma_busy++;
	}
	if (out & SC_END)
		*flags |= MS_SAMPLE_F_STACK_END;
	if (out & SC_FAULT) /* a page in [sp, sp + len) faulted: kept what precedes it */
		*flags |= MS_SAMPLE_F_STACK_FAULT;
	if (!copy && !(*flags & MS_SAMPLE_F_EXEC_REPLACED)) /* in execve: expected, no error */
		stats->stack_copy_err++;
	else if (copy < want)
		stats->stack_copy_short++;
	return copy;
}

/* targets_gen + py_threads_gen at the last wakeup for a change of either,
 * and when a Python sample last woke the reader (sample__wake). */
__u64 woken_gen = 0;
__u64 py_woken_ns = 0;

/*
 * The ring's wakeup flag for a sample (npy: its Python frames; kunwound:
 * the in-kernel unwinder ran, its state in ku_state).  The reader
 * sleeps until one of these needs it: wakeup_bytes wait in the ring; the
 * recorded processes or a CPython process's threads changed since the last
 * wakeup (the CPython tracker detects the new process or refreshes the
 * thread map: woken by the first sample after the change, not by a timer);
 * a sample with Python frames arrives py_wake_ns after the last such
 * wakeup; or one that wants tables ku_wake_ns after the last such wakeup.
 * Racing CPUs may wake it twice for one change, never less.
 */
static __always_inline __u64 sample__wake(__u32 npy, bool kunwound)
{
	__u64 gen = targets_gen + py_threads_gen, now;

	if (!wakeup_bytes || bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	if (gen != woken_gen) {
		woken_gen = gen;
		return BPF_RB_FORCE_WAKEUP;
	}
	if (npy && py_wake_ns) {
		now = bpf_ktime_get_ns();
		if (now - py_woken_ns >= py_wake_ns) {
			py_woken_ns = now;
			return BPF_RB_FORCE_WAKEUP;
		}
	}
	if (kunwound && ku_wake_ns && ku__wants_tables()) {
		now = bpf_ktime_get_ns();
		if (now - ku_woken_ns >= ku_wake_ns) {
			ku_woken_ns = now;
			return BPF_RB_FORCE_WAKEUP;
		}
	}
	return BPF_RB_NO_WAKEUP;
}

#ifdef MS_BPF_SECTIONS
/*
 * A build flag (make BPF_CFLAGS=-DMS_BPF_SECTIONS; bench/bpf_sections.py):
 * the run time of handle_sample's sections, ns summed per CPU over the
 * recorded tasks' samples (bpf_ktime_get_ns at each boundary; section 0
 * is two readings back to back, the cost of one boundary).  Never in a
 * normal build.
 */
#define MS_SECTIONS 8
__u64 section_ns[64][MS_SECTIONS];
__u64 section_runs[64];
#define SECTION(i)                                                                         \
	do {                                                                               \
		__u64 t_ = bpf_ktime_get_ns();                                             \
		section_ns[cpu & 63][(i) & (MS_SECTIONS - 1)] += t_ - t_prev;              \
		t_prev = t_;                                                               \
	} while (0)
#else
#define SECTION(i) do { } while (0)
#endif

SEC("perf_event")
int handle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;
	struct task_struct *task;
	struct ms_stats *stats;
	struct ms_sample *s;
	struct pt_regs *uregs = NULL;
	__u32 cpu, k = 0, u = 0, copy = 0, size, off, want;
	bool kunwound = false;
	__u64 copy_sp, wake;
	long n;
#ifdef MS_BPF_SECTIONS
	__u64 t_prev = bpf_ktime_get_ns();
#endif

	if (tid == 0) /* the idle task of this CPU */
		return 0;
	task = bpf_get_current_task_btf();
	if (!task__is_recorded(task, tgid))
		return 0;
	stats = stats__get();
	if (!stats)
		return 0;
	stats->samples_seen++;
	cpu = bpf_get_smp_processor_id();
	s = bpf_map_lookup_elem(&scratch, &cpu);
	if (!s) {
		__sync_fetch_and_add(&scratch_missing, 1);
		return 0;
	}
#ifdef MS_BPF_SECTIONS
	section_runs[cpu & 63]++;
	SECTION(1); /* the filter and the lookups */
	SECTION(0);
#endif

	s->time_ns = bpf_ktime_get_ns();
	s->pid = tgid;
	s->tid = tid;
	s->cpu = cpu;
	s->flags = 0;
	s->period = ctx->sample_period;
	s->arch = MS_ARCH_X86_64;
	s->stack_copy_len = 0;
	s->py_len = 0;
	s->py_status = MS_PY_NONE;
	s->cgroup_id = bpf_get_current_cgroup_id();
	sample__ns_ids(s, task, pid_tgid);
	s->reserved = 0;

	if (!task->mm)
		s->flags |= MS_SAMPLE_F_KTHREAD;
	SECTION(2); /* the header, ns ids */

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
	SECTION(3); /* the kernel callchain */
	/* One range (0 from user mode, else up to the depth): the in-kernel
	 * unwinder, which writes from &s->ips[k], is verified once. */
	if (!verifier__one_range(&s->hdr.size, &k, MS_MAX_STACK_DEPTH))
		return 0;

	/*
	 * User callchain and registers.  From kernel mode, bpf_get_stack()
	 * walks from the task's saved user registers (task_pt_regs), the same
	 * ones bpf_task_pt_regs() returns.
	 */
	__builtin_memset(&s->regs, 0, sizeof(s->regs));
	if (!(s->flags & MS_SAMPLE_F_KTHREAD) && kunwind_mode) {
		uregs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (uregs) {
			kunwound = true;
			user_regs__copy(&s->regs, uregs);
			s->flags |= MS_SAMPLE_F_USER_REGS | MS_SAMPLE_F_KUNWIND;
			u = ku__unwind(&s->regs, tgid, &s->ips[k]);
			if (u > MS_KU_MAX_FRAMES) /* cannot happen; bounds the verifier */
				u = MS_KU_MAX_FRAMES;
			if (!u) { /* no state: nothing unwound, no hand-over */
				s->flags &= ~MS_SAMPLE_F_KUNWIND;
				kunwound = false;
			} else if (ku_fp_chain && u == 1 && ku__stopped_at_first()) {
				n = bpf_get_stack(ctx, &s->ips[k], STACK_BYTES, BPF_F_USER_STACK);
				if (n > (long)sizeof(__u64)) {
					u = (__u32)n / sizeof(__u64);
					if (u > MS_MAX_STACK_DEPTH) /* cannot happen */
						u = MS_MAX_STACK_DEPTH;
					s->flags |= MS_SAMPLE_F_KU_FP_CHAIN;
				}
			}
		}
	} else if (!(s->flags & MS_SAMPLE_F_KTHREAD)) {
		n = bpf_get_stack(ctx, &s->ips[k], STACK_BYTES, BPF_F_USER_STACK);
		if (n < 0) {
			s->flags |= MS_SAMPLE_F_USTACK_ERR;
			stats->ustack_err++;
			n = 0;
		}
		u = (__u32)n / sizeof(__u64);
		if (u > MS_MAX_STACK_DEPTH)
			u = MS_MAX_STACK_DEPTH;

		uregs = (struct pt_regs *)bpf_task_pt_regs(task);
		if (uregs) {
			user_regs__copy(&s->regs, uregs);
			s->flags |= MS_SAMPLE_F_USER_REGS;
		}
	}
	s->kstack_len = k;
	s->ustack_len = u;
	SECTION(4); /* the user callchain: in-kernel unwind or frame pointers */

	off = sizeof(struct ms_sample) + (k + u) * sizeof(__u64);
	if (off > sizeof(struct ms_sample) + 2 * STACK_BYTES) /* cannot happen; bounds the verifier */
		off = sizeof(struct ms_sample) + 2 * STACK_BYTES;
	copy_sp = s->regs.sp;
	want = stack_copy_bytes;
	/* kunwound, not s->flags: a flag read back from memory is unknown to
	 * the verifier, which then walks the rest (the CPython walk) once per
	 * value of off; without kunwind_mode the branch is dead code (a 64 KiB
	 * --stack-size went over the 1M-instruction limit). */
	if (kunwound) {
		/* The hand-over state follows the pcs found; the copy starts where
		 * the kernel stopped (userspace reads no further than the whole
		 * copy would have reached: a constant size keeps the verifier's
		 * states few). */
		struct ku_state *st = ku__state();

		if (!st) /* cannot happen: ku__unwind found it */
			return 0;
		__builtin_memcpy((__u8 *)s + off, &st->ku, sizeof(st->ku));
		off += sizeof(struct ms_kunwind);
		copy_sp = st->ku.copy_sp;
		if (st->ku.status != MS_KU_RESUME && kunwind_mode != MS_KU_MODE_VERIFY)
			copy_sp = 0; /* done: nothing to copy */
		/* Only the rest of the window: userspace reads nothing past
		 * sp + stack_copy_bytes (a deep stack that stopped at the window
		 * copied 16 KiB for the few bytes left: 1.7 us a sample
		 * of bench/bpf_cost.py deepstack at 4999 Hz) */
		else if (kunwind_mode != MS_KU_MODE_VERIFY && copy_sp > s->regs.sp &&
			 copy_sp - s->regs.sp < want)
			want = (want - (__u32)(copy_sp - s->regs.sp) + 7) & ~7u;

	}
	if (!verifier__one_range(&s->hdr.size, &off,
				 sizeof(struct ms_sample) + 2 * STACK_BYTES + sizeof(struct ms_kunwind)))
		return 0;
	/* In execve past the point of no return the saved user registers are
	 * the old program's and its stack is gone (records.h): flagged if
	 * nothing is copied.  Decided before the copy, so that uregs is dead
	 * there (the copy was verified once with it NULL, once not). */
	if (uregs && stack_copy_bytes && (s->flags & MS_SAMPLE_F_KERNEL_MODE) &&
	    (uregs->orig_ax == MS_NR_EXECVE_X86_64 || uregs->orig_ax == MS_NR_EXECVEAT_X86_64))
		s->flags |= MS_SAMPLE_F_EXEC_REPLACED;
	if (want && pressure_copy_bytes && (s->flags & MS_SAMPLE_F_USER_REGS) && copy_sp) {
		want = stack_copy__pressure_want(bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA),
						 ring_bytes, pressure_copy_bytes, want, &s->flags);
		if (s->flags & MS_SAMPLE_F_COPY_SKIPPED)
			__sync_fetch_and_add(&degraded_copy_skipped, 1);
		else if (s->flags & MS_SAMPLE_F_COPY_CUT)
			__sync_fetch_and_add(&degraded_copy_cut, 1);
	}
	if (want && (s->flags & MS_SAMPLE_F_USER_REGS) && copy_sp)
		copy = stack__copy((__u8 *)s + off, tid, copy_sp, want, &s->flags, stats);
	if (copy)
		s->flags &= ~MS_SAMPLE_F_EXEC_REPLACED;
	if (copy > MS_STACK_COPY_MAX) /* cannot happen; bounds the verifier */
		copy = MS_STACK_COPY_MAX;
	s->stack_copy_len = copy;
	SECTION(5); /* the hand-over state and the stack copy */

	size = off + copy; /* both multiples of 8 */
	/* (without this bound as well, a 64 KiB copy verified in 797k, not 422k) */
	if (size > MS_SAMPLE_MAX_SIZE - MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES) /* cannot happen */
		size = MS_SAMPLE_MAX_SIZE - MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES;
	if (!verifier__one_range(&s->hdr.size, &size,
				 MS_SAMPLE_MAX_SIZE - MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES))
		return 0;
	s->hdr.type = MS_REC_SAMPLE;
	s->hdr.size = size;
	/* The CPython walk and the output, in handle_sample_py once a CPython
	 * process was found; until then the slot is empty, the call falls
	 * through and the sample goes out without Python frames. */
	if (!(s->flags & MS_SAMPLE_F_KTHREAD))
		bpf_tail_call(ctx, &py_walker, 0);
	SECTION(6); /* an empty tail call */
	wake = sample__wake(0, (s->flags & MS_SAMPLE_F_KUNWIND) != 0);
	if (bpf_ringbuf_output(&samples, s, size, wake))
		stats->ringbuf_full++;
	SECTION(7); /* the wakeup decision and the ring output */
	return 0;
}

/*
 * The end of handle_sample for a sample of a user thread once a CPython
 * process is recorded: the CPython walk (bpf/python.bpf.h) appends its
 * frames to the sample in this CPU's scratch slot (its size in hdr.size),
 * then the sample goes out.  Not loaded with the sampler (autoload off): the
 * walk is most of the sampler's verifier cost (13k of the 15k instructions
 * verified with --call-graph fp, 14 of 40 ms of system CPU at every start),
 * paid only by a recording that meets CPython.  The collector loads it from
 * a second open of this object whose maps are the first's
 * (collector__load_python_walk) and puts it in py_walker.
 */
SEC("?perf_event") /* "?": not loaded with the object */
int handle_sample_py(struct bpf_perf_event_data *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 cpu = bpf_get_smp_processor_id(), size, walk, npy;
	struct ms_stats *stats = stats__get();
	struct ms_sample *s;
	__u64 t0, wake;

	if (!stats)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &cpu);
	if (!s) {
		__sync_fetch_and_add(&scratch_missing, 1);
		return 0;
	}
	size = s->hdr.size;
	if (size > MS_SAMPLE_MAX_SIZE - MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES) /* cannot happen */
		return 0;
	t0 = bpf_ktime_get_ns();
	walk = py__walk((__u8 *)s, size, task);
	npy = walk & 0xffff;
	if (walk) {
		stats->py_walks++;
		stats->py_walk_ns += bpf_ktime_get_ns() - t0;
	}
	if (npy > MS_PY_MAX_FRAMES) /* cannot happen; bounds the verifier */
		npy = MS_PY_MAX_FRAMES;
	s->py_len = npy;
	s->py_status = walk >> 16;
	size += npy * MS_PY_FRAME_BYTES;
	if (size > MS_SAMPLE_MAX_SIZE) /* cannot happen; bounds the verifier */
		size = MS_SAMPLE_MAX_SIZE;
	s->hdr.size = size;

	wake = sample__wake(npy, (s->flags & MS_SAMPLE_F_KUNWIND) != 0);
	if (bpf_ringbuf_output(&samples, s, size, wake))
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

	if (ptgid == ctgid) {
		py__thread_start(ctgid);
		return 0;
	}
	if (system_wide)
		return 0;
	if (!bpf_map_lookup_elem(&targets, &ptgid))
		return 0;
	err = bpf_map_update_elem(&targets, &ctgid, &one, BPF_NOEXIST);
	if (!err)
		__sync_fetch_and_add(&targets_gen, 1);
	if (err && err != -EEXIST) {
		stats = stats__get();
		if (stats)
			__sync_fetch_and_add(&stats->filter_full, 1);
	}
	return 0;
}

/* -a: a CPython process started while recording joins "targets" at exec
 * (python_exec_targets); runs in the new image's context, comm already set
 * (begin_new_exec, fs/exec.c). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	char comm[16] = {};
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct ms_stats *stats;
	__u8 one = 1;

	if (kunwind_mode) /* a new address space: its mappings are told again */
		bpf_map_delete_elem(&ku_procs, &tgid);
	if (!system_wide || !python_exec_targets)
		return 0;
	bpf_get_current_comm(comm, sizeof(comm));
	if (comm[0] != 'p' || comm[1] != 'y' || comm[2] != 't' || comm[3] != 'h' ||
	    comm[4] != 'o' || comm[5] != 'n')
		return 0;
	if (bpf_map_update_elem(&targets, &tgid, &one, 0 /* BPF_ANY */)) {
		stats = stats__get();
		if (stats)
			__sync_fetch_and_add(&stats->filter_full, 1);
		return 0;
	}
	__sync_fetch_and_add(&targets_gen, 1);
	return 0;
}

/* The last thread of a process exits: forget its tgid (signal->live reached
 * 0 before this tracepoint in do_exit(), kernel/exit.c); with -a only
 * CPython processes are in the map. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *p)
{
	__u32 tgid;

	py__thread_exit(BPF_CORE_READ(p, tgid), BPF_CORE_READ(p, pid));
	if (system_wide && !python_exec_targets && !kunwind_mode)
		return 0;
	if (BPF_CORE_READ(p, signal, live.counter) != 0)
		return 0;
	tgid = BPF_CORE_READ(p, tgid);
	if (kunwind_mode)
		bpf_map_delete_elem(&ku_procs, &tgid);
	if (system_wide && !python_exec_targets)
		return 0;
	if (!bpf_map_delete_elem(&targets, &tgid))
		__sync_fetch_and_add(&targets_gen, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
