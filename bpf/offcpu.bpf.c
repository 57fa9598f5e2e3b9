// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU intervals, paired in the kernel (docs/off-cpu.md).
 *
 * sched_switch (tp_btf) runs in the context of the task leaving the CPU
 * (current == prev).  For a recorded thread it fills the thread's slot in
 * the "offcpu_pending" hash map (key: tid): switch-out time, prev_state,
 * kernel stack, user frame-pointer chain and user registers, all cheap.
 * When the same thread is switched back in, the slot is closed: intervals
 * shorter than min_ns are counted (number and ns) and dropped here; the
 * others are written to the "offcpu_events" ring as one struct ms_offcpu
 * (bpf/abi/records.h), straight from the slot.
 *
 * sched_waking runs in the waker's context (sched_wakeup may run on the
 * target CPU from an IPI, where current is not the waker).  For an open
 * slot it records the waking context: current's tgid and tid, the kernel
 * stack (which shows an interrupt: the processor classifies a wakeup whose
 * kernel stack passes an irq entry or softirq frame as an interrupt cause,
 * e.g. hrtimer_wakeup under the APIC timer interrupt) and the user FP
 * chain.
 *
 * CPython: for a thread of a process in the sampler's "py_procs" map, the
 * switch-out also walks the interpreter's frames with the sampler's walker
 * (bpf/python.bpf.h, its maps shared) into the slot; the record then ends
 * with them (MS_OFFCPU_F_PYTHON, struct ms_offcpu_py), so a wait shows the
 * Python function that called time.sleep.
 *
 * DWARF stacks: when stack_copy_bytes is set, an interval that passed the
 * threshold is not written at switch-in; it moves to "offcpu_copywait" and
 * waits there for the thread's next syscall exit (tp_btf sys_exit, in the thread's own context,
 * where its user stack and callee-saved registers are still those of the
 * switch-out), copies the user stack from the switch-out sp, and writes the
 * record then.  If another interval of the thread needs the place first (no
 * syscall exit in between), or the thread exits, the record is written
 * without a copy (MS_OFFCPU_F_NO_COPY_CHANCE); a preemption in between does
 * not cost the copy.
 *
 * Filtering: the recorded processes are the sampler's "targets" map (tgid
 * -> 1), shared through bpf_map__reuse_fd by the collector, so the fork and
 * exit tracking of bpf/sampler.bpf.c keeps both programs in step; the
 * recorder itself and tasks outside --cgroup/--container are dropped by
 * bpf/scope.bpf.h (its "scope_cgroups" map shared the same way).  Slots
 * are created on a thread's first switch and deleted at its exit; a full
 * map is counted (map_full), never silent.  Userspace inserts slots for
 * threads already asleep at start (MS_OFFCPU_F_START_UNKNOWN) and sweeps
 * open slots at stop (MS_OFFCPU_F_END_UNKNOWN).
 *
 * GPL for bpf_get_stack, bpf_task_pt_regs and bpf_find_vma.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpf/abi/records.h"

#include "bpf/uapi_defs.bpf.h"

#define STACK_BYTES (MS_MAX_STACK_DEPTH * sizeof(__u64))
#define TARGETS_MAX 16384 /* as bpf/sampler.bpf.c: the fd is shared */

/* include/linux/sched.h */
#define PF_EXITING 0x00000004
#define TASK_INTERRUPTIBLE 0x0001
#define TASK_UNINTERRUPTIBLE 0x0002
#define TASK_STOPPED_TRACED 0x000c /* __TASK_STOPPED | __TASK_TRACED */

/* Settings, through skel->rodata before load. */
const volatile __u32 system_wide = 0;
const volatile __u64 min_ns = 0;	   /* --off-cpu-min in ns */
const volatile __u32 stack_copy_bytes = 0; /* 0: no copies (fp) */
const volatile __u32 have_find_vma = 1;
const volatile __u64 wakeup_bytes = 0;

#include "bpf/stack_copy.bpf.h"
#include "bpf/scope.bpf.h"
/* the walk writes into the slot's py_frames */
#define PY_OUT_LIMIT ((MS_PY_MAX_FRAMES - 1) * MS_PY_FRAME_BYTES)
#include "bpf/python.bpf.h"


/* Recorded processes: tgid -> 1.  Replaced by the sampler's map before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TARGETS_MAX);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

/* One slot per tracked thread (tid); userspace may resize before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct ms_offcpu_slot);
} offcpu_pending SEC(".maps");

/* Intervals back on CPU that wait for their stack copy (key: tid): apart
 * from offcpu_pending, so that a preemption before the syscall exit can
 * open the thread's next interval without losing the copy. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct ms_offcpu_slot);
} offcpu_copywait SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} offcpu_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ms_offcpu_stats);
} offcpu_stats SEC(".maps");

/* A zeroed slot to create map entries from (never written). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ms_offcpu_slot);
} slot_zero SEC(".maps");

/* A record with its stack copy, built at sys_exit: one per CPU (indexed by
 * CPU id; userspace sets max_entries to the possible CPUs), too big for a
 * per-CPU array value.  tp_btf programs do not nest on a CPU. */
struct copy_scratch {
	__u8 bytes[MS_OFFCPU_MAX_SIZE + PAGE_BYTES];
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct copy_scratch);
} copy_scratch SEC(".maps");

/* 1 while this CPU's copy_scratch is in use: sched_waking can fire from an
 * interrupt on top of the sys_exit program's copy; the waker copy is then
 * skipped (the waker keeps its frame-pointer chain), never mixed in. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scratch_busy SEC(".maps");

static __always_inline struct ms_offcpu_stats *stats__get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&offcpu_stats, &zero);
}

static __always_inline bool task__is_recorded(struct task_struct *t)
{
	__u32 tgid = t->tgid;

	if (!scope__task_kept(t, tgid))
		return false;
	if (system_wide)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline __u32 state__of(unsigned int s)
{
	if (s & TASK_UNINTERRUPTIBLE)
		return MS_OFFCPU_STATE_DISK;
	if (s & TASK_INTERRUPTIBLE)
		return MS_OFFCPU_STATE_SLEEP;
	if (s & TASK_STOPPED_TRACED)
		return MS_OFFCPU_STATE_STOPPED;
	if (!(s & 0xff))
		return MS_OFFCPU_STATE_RUNNABLE;
	return MS_OFFCPU_STATE_OTHER;
}

static __always_inline __u32 slot__ips(const struct ms_offcpu_slot *s)
{
	__u32 n = (__u32)s->rec.kstack_len + s->rec.ustack_len + s->rec.waker_kstack_len +
		  s->rec.waker_ustack_len;

	return n > MS_OFFCPU_MAX_IPS ? MS_OFFCPU_MAX_IPS : n;
}

/* The thread's slot, created (zeroed, phase CLOSED) if it has none. */
static __always_inline struct ms_offcpu_slot *slot__get(__u32 tid, struct ms_offcpu_stats *st)
{
	struct ms_offcpu_slot *s = bpf_map_lookup_elem(&offcpu_pending, &tid);
	__u32 zero = 0;
	void *z;
	long err;

	if (s)
		return s;
	z = bpf_map_lookup_elem(&slot_zero, &zero);
	if (!z)
		return NULL;
	err = bpf_map_update_elem(&offcpu_pending, &tid, z, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		st->map_full++;
		return NULL;
	}
	return bpf_map_lookup_elem(&offcpu_pending, &tid);
}

/* Bytes of the slot's CPython part as the record carries it (0 without). */
static __always_inline __u32 slot__py_bytes(const struct ms_offcpu_slot *s)
{
	__u32 n = s->py.py_len;

	if (!(s->rec.flags & MS_OFFCPU_F_PYTHON))
		return 0;
	if (n > MS_PY_MAX_FRAMES)
		n = MS_PY_MAX_FRAMES;
	return sizeof(struct ms_offcpu_py) + n * MS_PY_FRAME_BYTES;
}

/* Output head bytes of the slot's record, then its CPython part of py
 * bytes (contiguous in the slot), as one ring record.  0 or -errno. */
static __always_inline long slot__output(struct ms_offcpu_slot *s, __u32 head, __u32 py,
					 __u64 flags)
{
	struct bpf_dynptr d;
	long err;

	if (!py)
		return bpf_ringbuf_output(&offcpu_events, &s->rec, head, flags);
	/* a reservation that failed is released all the same */
	err = bpf_ringbuf_reserve_dynptr(&offcpu_events, head + py, 0, &d);
	if (!err)
		err = bpf_dynptr_write(&d, 0, &s->rec, head, 0);
	if (!err)
		err = bpf_dynptr_write(&d, head, &s->py, py, 0);
	if (err) {
		bpf_ringbuf_discard_dynptr(&d, 0);
		return err;
	}
	bpf_ringbuf_submit_dynptr(&d, flags);
	return 0;
}

/* Write the slot's record to the ring as it stands (extra flags or'ed in). */
static __always_inline void slot__emit(struct ms_offcpu_slot *s, __u32 extra,
				       struct ms_offcpu_stats *st)
{
	__u32 size = sizeof(struct ms_offcpu) + slot__ips(s) * 8, py = slot__py_bytes(s);
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (size > sizeof(struct ms_offcpu) + MS_OFFCPU_MAX_IPS * 8) /* bounds the verifier */
		size = sizeof(struct ms_offcpu) + MS_OFFCPU_MAX_IPS * 8;
	if (py > MS_OFFCPU_PY_MAX_BYTES) /* bounds the verifier */
		py = MS_OFFCPU_PY_MAX_BYTES;
	s->rec.hdr.type = MS_REC_OFFCPU;
	s->rec.hdr.size = size + py;
	s->rec.flags |= extra;
	s->rec.stack_copy_len = 0;
	if (!wakeup_bytes || bpf_ringbuf_query(&offcpu_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (slot__output(s, size, py, flags))
		st->ringbuf_full++;
	else
		st->intervals++;
	s->phase = MS_OFFCPU_PHASE_CLOSED;
}

/* The slot is still OPEN while its thread is on CPU (now): no switch-in
 * closed it, because the kernel did not run handle_switch for that switch
 * (seen under load on Linux 6.18, with no recursion miss counted).  Its end
 * is somewhere before now: write it with an unknown end bounded by now,
 * counted, rather than let the next switch-out overwrite it. */
static __always_inline void slot__missed_in(struct ms_offcpu_slot *s, __u64 now,
					    struct ms_offcpu_stats *st)
{
	st->missed_switch_in++;
	s->rec.time_ns = now;
	s->rec.cpu = bpf_get_smp_processor_id();
	slot__emit(s, MS_OFFCPU_F_END_UNKNOWN |
			      ((s->rec.flags & MS_OFFCPU_F_USER_REGS) && stack_copy_bytes ?
				       MS_OFFCPU_F_NO_COPY_CHANCE : 0),
		   st);
}

static __always_inline void switch_out(void *ctx, struct task_struct *prev, unsigned int prev_state,
				       __u64 now, struct ms_offcpu_stats *st)
{
	struct ms_offcpu_slot *s;
	struct pt_regs *uregs;
	__u32 tid = prev->pid, k = 0, u = 0, walk;
	long n;

	if (!tid || (prev->flags & PF_EXITING) || !task__is_recorded(prev))
		return;
	s = slot__get(tid, st);
	if (!s)
		return;
	st->switch_outs++;
	if (s->phase == MS_OFFCPU_PHASE_OPEN)
		slot__missed_in(s, now, st);
	s->phase = MS_OFFCPU_PHASE_CLOSED;
	s->reserved = 0; /* 1: switched out inside a system call */
	s->rec.start_ns = now;
	s->rec.time_ns = 0;
	s->rec.pid = prev->tgid;
	s->rec.tid = tid;
	s->rec.cpu = 0;
	s->rec.flags = 0;
	s->rec.state = state__of(prev_state);
	s->rec.cause = MS_OFFCPU_CAUSE_NONE;
	s->rec.waker_pid = 0;
	s->rec.waker_tid = 0;
	s->rec.waker_kstack_len = 0;
	s->rec.waker_ustack_len = 0;
	s->rec.arch = MS_ARCH_X86_64;
	s->rec.stack_copy_len = 0;

	n = bpf_get_stack(ctx, s->ips, STACK_BYTES, 0);
	if (n < 0) {
		s->rec.flags |= MS_OFFCPU_F_KSTACK_ERR;
		st->stack_err++;
		n = 0;
	}
	k = (__u32)n / 8;
	if (k > MS_MAX_STACK_DEPTH)
		k = MS_MAX_STACK_DEPTH;
	if (!prev->mm) {
		s->rec.flags |= MS_OFFCPU_F_KTHREAD;
	} else {
		n = bpf_get_stack(ctx, &s->ips[k], STACK_BYTES, BPF_F_USER_STACK);
		if (n < 0) {
			s->rec.flags |= MS_OFFCPU_F_USTACK_ERR;
			st->stack_err++;
			n = 0;
		}
		u = (__u32)n / 8;
		if (u > MS_MAX_STACK_DEPTH)
			u = MS_MAX_STACK_DEPTH;
		uregs = (struct pt_regs *)bpf_task_pt_regs(prev);
		if (uregs) {
			user_regs__copy(&s->rec.regs, uregs);
			s->rec.flags |= MS_OFFCPU_F_USER_REGS;
			/* In a system call: the user ip follows a `syscall`
			 * instruction (0f 05).  Only then is the thread's next
			 * syscall exit that same call, its user stack untouched. */
			if (stack_copy_bytes) {
				__u16 insn = 0;

				bpf_probe_read_user(&insn, sizeof(insn),
						    (const void *)(s->rec.regs.ip - 2));
				if (insn == 0x050f)
					s->reserved = 1;
			}
		}
		/* current is prev: the walker's own thread lookup applies */
		walk = py__walk(s->py_frames, 0, prev);
		if (walk) {
			s->py.py_len = walk & 0xffff;
			if (s->py.py_len > MS_PY_MAX_FRAMES) /* cannot happen */
				s->py.py_len = MS_PY_MAX_FRAMES;
			s->py.py_status = walk >> 16;
			s->py.reserved = 0;
			s->rec.flags |= MS_OFFCPU_F_PYTHON;
		}
	}
	s->rec.kstack_len = k;
	s->rec.ustack_len = u;
	s->phase = MS_OFFCPU_PHASE_OPEN;
}

static __always_inline void switch_in(struct task_struct *next, __u64 now,
				      struct ms_offcpu_stats *st)
{
	struct ms_offcpu_slot *s;
	__u32 tid = next->pid;
	__u64 dur;

	if (!tid || !task__is_recorded(next))
		return;
	/* Creating a closed slot keeps the start snapshot from opening one
	 * for a thread that has run since (userspace inserts BPF_NOEXIST). */
	s = slot__get(tid, st);
	if (!s)
		return;
	if (s->phase != MS_OFFCPU_PHASE_OPEN) {
		st->unpaired_in++;
		return;
	}
	dur = now - s->rec.start_ns;
	if (dur < min_ns && !(s->rec.flags & MS_OFFCPU_F_START_UNKNOWN)) {
		st->filtered++;
		st->filtered_ns += dur;
		s->phase = MS_OFFCPU_PHASE_CLOSED;
		return;
	}
	s->rec.time_ns = now;
	s->rec.cpu = bpf_get_smp_processor_id();
	if (stack_copy_bytes && !s->reserved && (s->rec.flags & MS_OFFCPU_F_USER_REGS)) {
		/* Preempted in user mode (or a fault): its user stack moves on
		 * as soon as it runs; no later copy can be its stack. */
		slot__emit(s, MS_OFFCPU_F_NO_COPY_CHANCE, st);
		return;
	}
	if (stack_copy_bytes && (s->rec.flags & MS_OFFCPU_F_USER_REGS) &&
	    !(s->rec.flags & MS_OFFCPU_F_START_UNKNOWN)) {
		struct ms_offcpu_slot *old = bpf_map_lookup_elem(&offcpu_copywait, &tid);

		/* An older interval still waiting: no syscall exit came between. */
		if (old)
			slot__emit(old, MS_OFFCPU_F_NO_COPY_CHANCE, st);
		s->phase = MS_OFFCPU_PHASE_COPY;
		if (!bpf_map_update_elem(&offcpu_copywait, &tid, s, 0 /* BPF_ANY */)) {
			s->phase = MS_OFFCPU_PHASE_CLOSED;
			return;
		}
		st->map_full++;
		slot__emit(s, MS_OFFCPU_F_NO_COPY_CHANCE, st);
		return;
	}
	slot__emit(s, 0, st);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	struct ms_offcpu_stats *st = stats__get();
	__u64 now = bpf_ktime_get_ns();

	if (!st)
		return 0;
	switch_out(ctx, prev, prev_state, now, st);
	switch_in(next, now, st);
	return 0;
}

/* The waker's user registers and stack copy (the recording's call-graph
 * policy) as an ms_offcpu_waker record for s's interval.  The waker is in
 * the system call that wakes s's thread: its user stack is intact. */
static __always_inline void waker__emit_copy(struct ms_offcpu_slot *s, struct task_struct *cur,
					     struct ms_offcpu_stats *st)
{
	__u32 cpu = bpf_get_smp_processor_id(), zero = 0, sc = 0, copy, size;
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct ms_offcpu_waker *w;
	struct copy_scratch *buf;
	struct pt_regs *uregs;
	__u32 *busy;

	uregs = (struct pt_regs *)bpf_task_pt_regs(cur);
	busy = bpf_map_lookup_elem(&scratch_busy, &zero);
	buf = bpf_map_lookup_elem(&copy_scratch, &cpu);
	if (!uregs || !busy || *busy || !buf)
		return;
	*busy = 1;
	w = (struct ms_offcpu_waker *)buf->bytes;
	w->time_ns = bpf_ktime_get_ns();
	w->start_ns = s->rec.start_ns;
	w->tid = s->rec.tid;
	w->waker_pid = s->rec.waker_pid;
	w->waker_tid = s->rec.waker_tid;
	w->arch = MS_ARCH_X86_64;
	user_regs__copy(&w->regs, uregs);
	copy = stack_copy__user(buf->bytes + sizeof(*w), w->regs.sp, stack_copy_bytes, &sc, NULL);
	if (copy > MS_STACK_COPY_MAX)
		copy = MS_STACK_COPY_MAX;
	w->flags = (sc & SC_END ? MS_OFFCPU_F_STACK_END : 0) |
		   (sc & SC_FAULT ? MS_OFFCPU_F_STACK_FAULT : 0) |
		   (sc & SC_NO_VMA ? MS_OFFCPU_F_STACK_NO_VMA : 0);
	w->stack_copy_len = copy;
	size = sizeof(*w) + copy;
	w->hdr.type = MS_REC_OFFCPU_WAKER;
	w->hdr.size = size;
	if (!wakeup_bytes || bpf_ringbuf_query(&offcpu_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&offcpu_events, buf->bytes, size, flags))
		st->ringbuf_full++;
	*busy = 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(handle_waking, struct task_struct *p)
{
	struct ms_offcpu_stats *st;
	struct ms_offcpu_slot *s;
	struct task_struct *cur;
	__u32 tid = p->pid, off, wk = 0, wu = 0, cause;
	__u64 pid_tgid;
	long n;

	if (!tid || !task__is_recorded(p))
		return 0;
	s = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (!s || s->phase != MS_OFFCPU_PHASE_OPEN || s->rec.cause != MS_OFFCPU_CAUSE_NONE)
		return 0;
	st = stats__get();
	if (!st)
		return 0;
	/* Whether current is the waker or an interrupt came in on top of it
	 * is decided in userspace from this kernel stack (irq entry frames):
	 * preempt_count lives in the per-CPU __preempt_count, whose address
	 * the verifier can only resolve with CONFIG_KALLSYMS_ALL. */
	cause = MS_OFFCPU_CAUSE_TASK;
	off = (__u32)s->rec.kstack_len + s->rec.ustack_len;
	if (off > 2 * MS_MAX_STACK_DEPTH) /* bounds the verifier */
		off = 2 * MS_MAX_STACK_DEPTH;
	n = bpf_get_stack(ctx, &s->ips[off], STACK_BYTES, 0);
	if (n < 0) {
		s->rec.flags |= MS_OFFCPU_F_WAKER_STACK_ERR;
		st->stack_err++;
		n = 0;
	}
	wk = (__u32)n / 8;
	if (wk > MS_MAX_STACK_DEPTH)
		wk = MS_MAX_STACK_DEPTH;
	if (cause == MS_OFFCPU_CAUSE_TASK) {
		pid_tgid = bpf_get_current_pid_tgid();
		s->rec.waker_pid = pid_tgid >> 32;
		s->rec.waker_tid = (__u32)pid_tgid;
		cur = bpf_get_current_task_btf();
		if (cur->mm) {
			n = bpf_get_stack(ctx, &s->ips[off + wk], STACK_BYTES, BPF_F_USER_STACK);
			if (n < 0) {
				s->rec.flags |= MS_OFFCPU_F_WAKER_STACK_ERR;
				st->stack_err++;
				n = 0;
			}
			wu = (__u32)n / 8;
			if (wu > MS_MAX_STACK_DEPTH)
				wu = MS_MAX_STACK_DEPTH;
		}
	}
	s->rec.waker_kstack_len = wk;
	s->rec.waker_ustack_len = wu;
	s->rec.cause = cause;
	if (stack_copy_bytes && wu)
		waker__emit_copy(s, bpf_get_current_task_btf(), st);
	return 0;
}

/* Write s's record with a copy of the current thread's user stack from the
 * switch-out sp when regs (the syscall's entry registers) are the
 * switch-out's, i.e. this is the same system call; else without a copy
 * (MS_OFFCPU_F_NO_COPY_CHANCE).  extra: flags or'ed in.  Every path writes
 * the record or counts ringbuf_full. */
static __always_inline void slot__emit_copy(struct ms_offcpu_slot *s, struct pt_regs *regs,
					    __u32 extra, struct ms_offcpu_stats *st)
{
	__u32 cpu, head, copy = 0, sc = 0, size, zero = 0, py;
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct copy_scratch *buf;
	struct ms_offcpu *r;
	__u32 *busy;

	/* The same system call: its entry registers are the switch-out's. */
	if (!s->reserved || regs->ip != s->rec.regs.ip || regs->sp != s->rec.regs.sp) {
		slot__emit(s, MS_OFFCPU_F_NO_COPY_CHANCE | extra, st);
		return;
	}
	cpu = bpf_get_smp_processor_id();
	buf = bpf_map_lookup_elem(&copy_scratch, &cpu);
	busy = bpf_map_lookup_elem(&scratch_busy, &zero);
	if (!buf || !busy || *busy) {
		slot__emit(s, MS_OFFCPU_F_NO_COPY_CHANCE | extra, st);
		return;
	}
	*busy = 1;
	head = sizeof(struct ms_offcpu) + slot__ips(s) * 8;
	if (head > sizeof(struct ms_offcpu) + MS_OFFCPU_MAX_IPS * 8)
		head = sizeof(struct ms_offcpu) + MS_OFFCPU_MAX_IPS * 8;
	if (bpf_probe_read_kernel(buf->bytes, head, &s->rec)) {
		*busy = 0;
		slot__emit(s, MS_OFFCPU_F_NO_COPY_CHANCE | extra, st);
		return;
	}
	copy = stack_copy__user(buf->bytes + head, s->rec.regs.sp, stack_copy_bytes, &sc, NULL);
	if (copy > MS_STACK_COPY_MAX)
		copy = MS_STACK_COPY_MAX;
	r = (struct ms_offcpu *)buf->bytes;
	r->flags |= extra | MS_OFFCPU_F_STACK_COPY | (sc & SC_END ? MS_OFFCPU_F_STACK_END : 0) |
		    (sc & SC_FAULT ? MS_OFFCPU_F_STACK_FAULT : 0) |
		    (sc & SC_NO_VMA ? MS_OFFCPU_F_STACK_NO_VMA : 0);
	r->stack_copy_len = copy;
	size = head + copy;
	py = slot__py_bytes(s);
	if (py > MS_OFFCPU_PY_MAX_BYTES) /* bounds the verifier */
		py = MS_OFFCPU_PY_MAX_BYTES;
	if (size > MS_OFFCPU_MAX_SIZE - MS_OFFCPU_PY_MAX_BYTES) /* cannot happen */
		size = MS_OFFCPU_MAX_SIZE - MS_OFFCPU_PY_MAX_BYTES;
	if (py && bpf_probe_read_kernel(buf->bytes + size, py, &s->py))
		r->flags &= ~MS_OFFCPU_F_PYTHON;
	else
		size += py;
	r->hdr.type = MS_REC_OFFCPU;
	r->hdr.size = size;
	if (!wakeup_bytes || bpf_ringbuf_query(&offcpu_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (bpf_ringbuf_output(&offcpu_events, buf->bytes, size, flags))
		st->ringbuf_full++;
	else
		st->intervals++;
	*busy = 0;
	s->phase = MS_OFFCPU_PHASE_CLOSED;
}

/* The thread's first syscall exit after an interval that waits for a copy;
 * also where an interval whose switch-in was missed is found (its slot is
 * still OPEN while the thread runs): written with an unknown end, and with
 * its copy when this is the call it slept in. */
SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct ms_offcpu_stats *st;
	struct ms_offcpu_slot *s;

	if (!stack_copy_bytes)
		return 0;
	s = bpf_map_lookup_elem(&offcpu_copywait, &tid);
	if (s) {
		st = stats__get();
		if (!st)
			return 0;
		slot__emit_copy(s, regs, 0, st);
		bpf_map_delete_elem(&offcpu_copywait, &tid);
	}
	s = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (s && s->phase == MS_OFFCPU_PHASE_OPEN) {
		st = stats__get();
		if (!st)
			return 0;
		st->missed_switch_in++;
		s->rec.time_ns = bpf_ktime_get_ns();
		s->rec.cpu = bpf_get_smp_processor_id();
		if (s->rec.flags & MS_OFFCPU_F_USER_REGS)
			slot__emit_copy(s, regs, MS_OFFCPU_F_END_UNKNOWN, st);
		else
			slot__emit(s, MS_OFFCPU_F_END_UNKNOWN, st);
		s->phase = MS_OFFCPU_PHASE_CLOSED;
	}
	return 0;
}

/* A thread exits: flush a record that still waits for its copy, free the slot. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_thread_exit, struct task_struct *p)
{
	struct ms_offcpu_stats *st;
	struct ms_offcpu_slot *s;
	__u32 tid = p->pid;

	s = bpf_map_lookup_elem(&offcpu_copywait, &tid);
	st = stats__get();
	if (s && st)
		slot__emit(s, MS_OFFCPU_F_NO_COPY_CHANCE, st);
	if (s)
		bpf_map_delete_elem(&offcpu_copywait, &tid);
	/* Still open while the thread exits: its switch-in was missed. */
	s = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (s && st && s->phase == MS_OFFCPU_PHASE_OPEN)
		slot__missed_in(s, bpf_ktime_get_ns(), st);
	bpf_map_delete_elem(&offcpu_pending, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
