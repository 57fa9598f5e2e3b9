/* SPDX-License-Identifier: MIT */
/*
 * Records shared by the BPF programs and userspace.
 *
 * Every record written to a BPF ring buffer starts with struct ms_rec_header:
 * a type tag, then the record's total size in bytes (header included).  All
 * fields are fixed width; there are no enums, bools, longs or pointers, and
 * every layout is pinned by _Static_assert so that a change is a compile
 * error on both sides.  Userspace treats every record as untrusted: it checks
 * size, alignment and every length field before it reads anything else.
 *
 * Time is CLOCK_MONOTONIC in nanoseconds (bpf_ktime_get_ns()), the same clock
 * every perf event of a recording uses (attr.use_clockid, CLOCK_MONOTONIC).
 * pid/tid are as the initial pid namespace sees them (bpf_get_current_pid_tgid).
 */
#ifndef MS_ABI_RECORDS_H
#define MS_ABI_RECORDS_H

#ifdef __BPF__
/* vmlinux.h provides __u8.. __u64 */
#else
#include <linux/types.h>
#endif

/*
 * 2: ms_sample carries the cgroup id and namespace ids (issue 15).
 * 3: an ms_offcpu record may carry the thread's CPython frames at switch-out
 *    (MS_OFFCPU_F_PYTHON, struct ms_offcpu_py; issue 21).
 * 4: MS_SAMPLE_F_KUNWIND samples carry a struct ms_kunwind (kunwind.h;
 *    issue 16).
 * 5: struct ms_probe and struct ms_probe_site, read by the collector from
 *    the probes SDK's ring in a target (collector/probes.c; issue 20).
 * 6: ms_probe.kind may carry MS_PROBE_F_AFTER_DROP.
 * Every older record reads the same under a newer ABI (the flags are never
 * set in them), so a build replays raw streams of ABI MS_ABI_VERSION_MIN
 * and later; an older build refuses a newer ABI rather than count its
 * records as bad.
 */
#define MS_ABI_VERSION 6
#define MS_ABI_VERSION_MIN 2

/* Record type tags (ms_rec_header.type). */
#define MS_REC_SAMPLE 1

/* Architecture tags (ms_sample.arch). */
#define MS_ARCH_X86_64 1

/* Kernel limit for one callchain (PERF_MAX_STACK_DEPTH, include/uapi/linux/perf_event.h). */
#define MS_MAX_STACK_DEPTH 127

/* ms_sample.flags */
#define MS_SAMPLE_F_KERNEL_MODE (1u << 0) /* the interrupt hit kernel mode */
#define MS_SAMPLE_F_USER_REGS (1u << 1)   /* regs holds the thread's user registers */
#define MS_SAMPLE_F_KSTACK_ERR (1u << 2)  /* bpf_get_stack(kernel) failed */
#define MS_SAMPLE_F_USTACK_ERR (1u << 3)  /* bpf_get_stack(user) failed */
#define MS_SAMPLE_F_KTHREAD (1u << 4)     /* task has no user address space */
/*
 * Stack copy outcome (set only when a copy was attempted):
 * STACK_END: the VMA holding regs.sp ends less than the configured stack
 *   size above sp; the copy was bounded by that end.
 * STACK_FAULT: the copy stopped before its bound at a page that could not be
 *   read (never touched, e.g. the random gap below the main thread's
 *   argument strings, or swapped out), or sp is not mapped at all;
 *   stack_copy_len bytes (maybe 0) before that page are valid.
 * STACK_NO_VMA: the VMA could not be looked up (mmap lock contended); the copy
 *   was bounded by reading page by page instead, so it may run past the
 *   stack's end into an adjacent readable mapping.
 * STACK_END without STACK_FAULT: every byte from sp to the stack's end is in
 * the copy, so an unwinder that runs out of bytes has reached the top.
 */
#define MS_SAMPLE_F_STACK_END (1u << 5)
#define MS_SAMPLE_F_STACK_FAULT (1u << 6)
#define MS_SAMPLE_F_STACK_NO_VMA (1u << 7)
/*
 * EXEC_REPLACED: the thread was inside execve/execveat (the user registers'
 * orig_ax) past the point of no return: the stack copy found nothing at the
 * saved user sp because the old address space is gone, and the saved user
 * registers still describe the old program until the kernel starts the new
 * one (start_thread at the end of load_elf_binary).  The sample has no user
 * part: its kernel stack is the whole, complete stack.
 */
#define MS_SAMPLE_F_EXEC_REPLACED (1u << 8)
/* x86-64 syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
/*
 * KUNWIND: the kernel unwound the user stack from CFI (bpf/abi/kunwind.h):
 * the user callchain holds the pcs it found, a struct ms_kunwind
 * (MS_KUNWIND_BYTES) follows the callchains, and the stack copy starts at
 * its copy_sp instead of regs.sp.
 */
#define MS_SAMPLE_F_KUNWIND (1u << 9)
/*
 * KU_FP_CHAIN (with KUNWIND, --call-graph auto): the kernel unwound no frame
 * past the interrupted one (status MS_KU_RESUME), so the user callchain is
 * the frame-pointer chain (entry 0 the interrupted ip, as the kernel's
 * single pc): auto's fallback where CFI finds no caller (JIT code).
 */
#define MS_SAMPLE_F_KU_FP_CHAIN (1u << 10)
/*
 * COPY_CUT, COPY_SKIPPED: the sampler's ring was past half (three quarters)
 * full when the sample was taken, so its stack copy was cut to the
 * sampler's pressure_copy_bytes (skipped: no copy, the callchain only)
 * rather than the sample lost whole (bpf/stack_copy.bpf.h
 * stack_copy__pressure_want).  The copy is shorter than stack_copy_bytes
 * for that reason, not because the stack ended; userspace counts them
 * ("degraded.*") and finishes the stack from the frame-pointer chain where
 * the copy ran out.
 */
#define MS_SAMPLE_F_COPY_CUT (1u << 11)
#define MS_SAMPLE_F_COPY_SKIPPED (1u << 12)
#define MS_KUNWIND_BYTES 88
#define MS_NR_EXECVE_X86_64 59
#define MS_NR_EXECVEAT_X86_64 322

/* Largest user stack copy the sampler makes (bytes; --stack-size maximum). */
#define MS_STACK_COPY_MAX 65536

struct ms_rec_header {
	__u32 type;
	__u32 size; /* bytes, including this header; multiple of 8 */
};

/*
 * x86-64 user registers as in struct pt_regs (arch/x86/include/asm/ptrace.h):
 * what a CFI unwinder needs to start (ip, sp, bp and the callee-saved set).
 */
struct ms_regs_x86_64 {
	__u64 ip;
	__u64 sp;
	__u64 bp;
	__u64 bx;
	__u64 r12;
	__u64 r13;
	__u64 r14;
	__u64 r15;
};

/*
 * One CPU sample, written by bpf/sampler.bpf.c.  Followed by
 * kstack_len kernel return addresses, then ustack_len user return addresses
 * (each __u64, innermost first, as bpf_get_stack() returns them), then
 * stack_copy_len bytes of user stack copied from regs.sp upward (the bytes at
 * addresses regs.sp .. regs.sp + stack_copy_len - 1, in address order),
 * padded to a multiple of 8, then py_len struct ms_py_frame entries
 * (bpf/abi/python.h; innermost first) when the thread runs CPython.  hdr.size
 * is sizeof(struct ms_sample) + 8 * (kstack_len + ustack_len) +
 * stack_copy_len rounded up to 8 + py_len * sizeof(struct ms_py_frame).
 *
 * The copy is made only when the recording asked for one (META stack_size
 * > 0) and MS_SAMPLE_F_USER_REGS is set; it never extends past the end of
 * the VMA that holds regs.sp unless MS_SAMPLE_F_STACK_NO_VMA says so, and is
 * at most MS_STACK_COPY_MAX bytes.  The sampler writes multiples of 8.
 */
struct ms_sample {
	struct ms_rec_header hdr; /* type = MS_REC_SAMPLE */
	__u64 time_ns;		  /* CLOCK_MONOTONIC */
	__u32 pid;		  /* tgid */
	__u32 tid;
	__u32 cpu;
	__u32 flags;		  /* MS_SAMPLE_F_* */
	__u64 period;		  /* sample period of the perf event (ns for cpu-clock) */
	__u32 arch;		  /* MS_ARCH_* ; selects the layout of regs */
	__u16 kstack_len;	  /* entries, <= MS_MAX_STACK_DEPTH */
	__u16 ustack_len;	  /* entries, <= MS_MAX_STACK_DEPTH */
	__u32 stack_copy_len;	  /* bytes of user stack after the ips */
	__u16 py_len;		  /* struct ms_py_frame entries after the stack copy */
	__u16 py_status;	  /* MS_PY_* (bpf/abi/python.h): how the Python walk went */
	struct ms_regs_x86_64 regs; /* user registers; valid if MS_SAMPLE_F_USER_REGS */
	/* The task's cgroup v2 id (kernfs node id = the inode number of its
	 * directory in the v2 hierarchy; bpf/scope.bpf.h), 0 if unreadable. */
	__u64 cgroup_id;
	/* The task as its own (innermost) pid namespace sees it: tid, tgid and
	 * the namespace's inode number (/proc/PID/ns/pid); 0 if unreadable.
	 * Equal to tid/pid in the initial namespace. */
	__u32 ns_tid;
	__u32 ns_pid;
	__u32 pidns;
	__u32 reserved; /* 0 */
	__u64 ips[];
};

_Static_assert(sizeof(struct ms_rec_header) == 8, "ms_rec_header size");
_Static_assert(sizeof(struct ms_regs_x86_64) == 64, "ms_regs_x86_64 size");
_Static_assert(sizeof(struct ms_sample) == 144, "ms_sample size");
_Static_assert(__builtin_offsetof(struct ms_sample, time_ns) == 8, "ms_sample.time_ns offset");
_Static_assert(__builtin_offsetof(struct ms_sample, regs) == 56, "ms_sample.regs offset");
_Static_assert(__builtin_offsetof(struct ms_sample, cgroup_id) == 120, "ms_sample.cgroup_id offset");
_Static_assert(__builtin_offsetof(struct ms_sample, ns_tid) == 128, "ms_sample.ns_tid offset");
_Static_assert(__builtin_offsetof(struct ms_sample, ips) == 144, "ms_sample.ips offset");

/* Largest Python walk in one sample (frames; bpf/python.bpf.h). */
#define MS_PY_MAX_FRAMES 128
/* Bytes of one struct ms_py_frame (bpf/abi/python.h). */
#define MS_PY_FRAME_BYTES 24

/* Largest sample record the sampler writes: two full callchains, the
 * in-kernel unwind's state, a full stack copy and a full Python walk (bytes;
 * 70872).  A larger hdr.size is malformed. */
#define MS_SAMPLE_MAX_SIZE                                                                         \
	(sizeof(struct ms_sample) + 2 * MS_MAX_STACK_DEPTH * 8 + MS_KUNWIND_BYTES +                 \
	 MS_STACK_COPY_MAX + MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES)
_Static_assert(MS_SAMPLE_MAX_SIZE % 8 == 0, "MS_SAMPLE_MAX_SIZE is a multiple of 8");

/*
 * Per-CPU drop/failure counters, in the BPF array map "ms_stats" (one
 * struct ms_stats per CPU).  Userspace sums them at stop and stores each in
 * the capture's counters table under the name given in MS_STATS_NAMES.
 */
struct ms_stats {
	__u64 samples_seen;	   /* sampler invocations for a recorded task */
	__u64 ringbuf_full;	   /* bpf_ringbuf_output failed: sample lost */
	__u64 kstack_err;	   /* bpf_get_stack(kernel) returned an error */
	__u64 ustack_err;	   /* bpf_get_stack(user) returned an error */
	__u64 filter_full;	   /* target map full: a forked child could not be added */
	__u64 stack_copy_err;	   /* stack copy attempted, no byte copied (sp unmapped/unreadable;
				      not counted for MS_SAMPLE_F_EXEC_REPLACED samples) */
	__u64 stack_copy_short;	   /* copied 0 < n < stack_size: the stack ended (VMA end or an
				      unreadable page, see MS_SAMPLE_F_STACK_*); normal */
	__u64 stack_vma_busy;	   /* VMA lookup failed: copy bounded by page reads (..._NO_VMA) */
	__u64 py_walks;		   /* samples whose CPython walk ran (a CPython process) */
	__u64 py_walk_ns;	   /* their walks' summed time (bpf_ktime_get_ns), for the bench */
};
_Static_assert(sizeof(struct ms_stats) == 80, "ms_stats size");

#define MS_STATS_NAMES                                                                             \
	"bpf.samples_seen", "bpf.ringbuf_full", "bpf.kstack_err", "bpf.ustack_err",                \
		"bpf.filter_full", "bpf.stack_copy_err", "bpf.stack_copy_short",                   \
		"bpf.stack_vma_busy", "bpf.py_walks", "bpf.py_walk_ns"
#define MS_STATS_COUNT 10

/* ---- off-CPU intervals (bpf/offcpu.bpf.c) ------------------------------- */

#define MS_REC_OFFCPU 2

/* ms_offcpu.flags */
#define MS_OFFCPU_F_USER_REGS (1u << 0)	    /* regs holds the thread's user registers */
#define MS_OFFCPU_F_KSTACK_ERR (1u << 1)    /* bpf_get_stack(kernel) failed at switch-out */
#define MS_OFFCPU_F_USTACK_ERR (1u << 2)    /* bpf_get_stack(user) failed at switch-out */
#define MS_OFFCPU_F_KTHREAD (1u << 3)	    /* the thread has no user address space */
/* The thread was already off-CPU when recording began (from the /proc
 * snapshot): start_ns is when tracking began, the real start is earlier. */
#define MS_OFFCPU_F_START_UNKNOWN (1u << 4)
/* The thread was still off-CPU when recording stopped (swept from the
 * pending map): end_ns is when tracking stopped, the real end is later. */
#define MS_OFFCPU_F_END_UNKNOWN (1u << 5)
#define MS_OFFCPU_F_WAKER_STACK_ERR (1u << 6) /* a waker's bpf_get_stack failed */
/* Stack copy made at the thread's first syscall exit after the switch-in
 * (its user stack and registers are those of the switch-out); the copy
 * outcome bits mean what MS_SAMPLE_F_STACK_* mean. */
#define MS_OFFCPU_F_STACK_COPY (1u << 7)
#define MS_OFFCPU_F_STACK_END (1u << 8)
#define MS_OFFCPU_F_STACK_FAULT (1u << 9)
#define MS_OFFCPU_F_STACK_NO_VMA (1u << 10)
/* A copy was wanted but none could be made: the thread left the CPU outside
 * a system call (preempted in user mode, a page fault), so its user stack
 * moved on as soon as it ran; or another interval of it needed the copy
 * first, it exited, or recording stopped before its syscall exit.  Only the
 * frame-pointer chain. */
#define MS_OFFCPU_F_NO_COPY_CHANCE (1u << 11)
/* ABI 3: a struct ms_offcpu_py and its CPython frames end the record (the
 * thread's process runs CPython and was walked at switch-out). */
#define MS_OFFCPU_F_PYTHON (1u << 12)

/*
 * ms_offcpu.state: the thread's state at switch-out, from sched_switch's
 * prev_state (TASK_* in include/linux/sched.h), or from
 * /proc/PID/task/TID/stat for snapshot intervals.
 */
#define MS_OFFCPU_STATE_RUNNABLE 0 /* TASK_RUNNING: preempted or yielded */
#define MS_OFFCPU_STATE_SLEEP 1	   /* TASK_INTERRUPTIBLE ("S") */
#define MS_OFFCPU_STATE_DISK 2	   /* TASK_UNINTERRUPTIBLE ("D", also TASK_IDLE) */
#define MS_OFFCPU_STATE_STOPPED 3  /* __TASK_STOPPED / __TASK_TRACED ("T", "t") */
#define MS_OFFCPU_STATE_OTHER 4	   /* parked, or a state this build does not know */
#define MS_OFFCPU_STATE_COUNT 5

/* ms_offcpu.cause: what made the thread runnable again. */
#define MS_OFFCPU_CAUSE_NONE 0	  /* no wakeup seen (runnable intervals; unknown start) */
/* sched_waking seen: waker_pid/tid are current's, the waker stacks current's
 * stacks.  The BPF program writes only NONE or TASK; the processor turns TASK
 * into HARDIRQ/SOFTIRQ when the waker kernel stack passes an interrupt
 * entry (the interrupted task is then not the waker). */
#define MS_OFFCPU_CAUSE_TASK 1
#define MS_OFFCPU_CAUSE_HARDIRQ 2 /* woken in hard interrupt context (timer, device IRQ) */
#define MS_OFFCPU_CAUSE_SOFTIRQ 3 /* woken while serving a softirq */
#define MS_OFFCPU_CAUSE_NMI 4	  /* reserved */
#define MS_OFFCPU_CAUSE_COUNT 5

/*
 * One off-CPU interval, paired in the kernel: switch-out at start_ns,
 * switch-in at end_ns (time_ns == end_ns; the field every BPF record has at
 * offset 8, used for ordering).  Followed by kstack_len kernel and
 * ustack_len user return addresses of the thread at switch-out (innermost
 * first), then waker_kstack_len kernel and waker_ustack_len user return
 * addresses of the waker at sched_waking (for CAUSE_TASK; for an interrupt
 * cause only the kernel stack of the interrupt), then stack_copy_len bytes
 * of the thread's user stack from regs.sp upward, then, with
 * MS_OFFCPU_F_PYTHON, a struct ms_offcpu_py and its py_len struct
 * ms_py_frame (bpf/abi/python.h; innermost first): the thread's CPython
 * frames at switch-out, walked as the sampler walks them.  hdr.size is
 * sizeof(struct ms_offcpu) + 8 * (sum of the four lengths) +
 * stack_copy_len (a multiple of 8) + (with MS_OFFCPU_F_PYTHON)
 * sizeof(struct ms_offcpu_py) + py_len * MS_PY_FRAME_BYTES.
 * bpf/abi/offcpu_parts.h locates the parts.
 */
struct ms_offcpu {
	struct ms_rec_header hdr; /* type = MS_REC_OFFCPU */
	__u64 time_ns;		  /* == end_ns (CLOCK_MONOTONIC) */
	__u64 start_ns;		  /* switch-out (CLOCK_MONOTONIC) */
	__u32 pid;		  /* tgid */
	__u32 tid;
	__u32 cpu; /* CPU it was switched in on */
	__u32 flags; /* MS_OFFCPU_F_* */
	__u32 state; /* MS_OFFCPU_STATE_* */
	__u32 cause; /* MS_OFFCPU_CAUSE_* */
	__u32 waker_pid; /* CAUSE_TASK: the waker's tgid and tid; else 0 */
	__u32 waker_tid;
	__u16 kstack_len; /* entries, <= MS_MAX_STACK_DEPTH each */
	__u16 ustack_len;
	__u16 waker_kstack_len;
	__u16 waker_ustack_len;
	__u32 arch;	      /* MS_ARCH_* */
	__u32 stack_copy_len; /* bytes */
	struct ms_regs_x86_64 regs; /* valid if MS_OFFCPU_F_USER_REGS */
	/* the return addresses follow (no flexible member, so that
	 * struct ms_offcpu_slot can embed the record) */
};
_Static_assert(sizeof(struct ms_offcpu) == 136, "ms_offcpu size");
_Static_assert(__builtin_offsetof(struct ms_offcpu, time_ns) == 8, "ms_offcpu.time_ns offset");
_Static_assert(__builtin_offsetof(struct ms_offcpu, regs) == 72, "ms_offcpu.regs offset");

/* The CPython part of an interval (MS_OFFCPU_F_PYTHON), after the copy. */
struct ms_offcpu_py {
	__u16 py_len;	 /* struct ms_py_frame entries that follow, <= MS_PY_MAX_FRAMES */
	__u16 py_status; /* MS_PY_* (bpf/abi/python.h): how the walk went */
	__u32 reserved;	 /* 0 */
};
_Static_assert(sizeof(struct ms_offcpu_py) == 8, "ms_offcpu_py size");

#define MS_OFFCPU_MAX_IPS (4 * MS_MAX_STACK_DEPTH)
/* Bytes of the largest CPython part (header and a full walk). */
#define MS_OFFCPU_PY_MAX_BYTES (sizeof(struct ms_offcpu_py) + MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES)
/* Largest interval record (bytes): four full callchains, a full copy and a
 * full CPython walk. */
#define MS_OFFCPU_MAX_SIZE                                                                         \
	(sizeof(struct ms_offcpu) + MS_OFFCPU_MAX_IPS * 8 + MS_STACK_COPY_MAX + MS_OFFCPU_PY_MAX_BYTES)

/*
 * The waker's user stack for an interval, taken with the recording's
 * call-graph policy (stack_copy_bytes set: auto/dwarf).  Written by
 * sched_waking in the waker's context, while the waker is inside the system
 * call that woke the thread (its user stack and syscall-entry registers are
 * intact): regs are the waker's user registers, followed by stack_copy_len
 * bytes of its user stack from regs.sp upward.  The processor pairs it with
 * the interval record of (tid, start_ns), which comes later in time order
 * (its time_ns is the switch-in).  hdr.size is sizeof + stack_copy_len.
 * flags: MS_OFFCPU_F_STACK_END / _FAULT / _NO_VMA as for the interval copy.
 */
#define MS_REC_OFFCPU_WAKER 3

struct ms_offcpu_waker {
	struct ms_rec_header hdr; /* type = MS_REC_OFFCPU_WAKER */
	__u64 time_ns;		  /* sched_waking (CLOCK_MONOTONIC) */
	__u64 start_ns;		  /* the woken interval's switch-out: pairs the two */
	__u32 tid;		  /* the woken thread */
	__u32 waker_pid;	  /* tgid */
	__u32 waker_tid;
	__u32 flags; /* MS_OFFCPU_F_STACK_END | _FAULT | _NO_VMA */
	__u32 arch;  /* MS_ARCH_* */
	__u32 stack_copy_len; /* bytes, a multiple of 8 */
	struct ms_regs_x86_64 regs; /* the waker's user registers */
	/* stack_copy_len bytes follow */
};
_Static_assert(__builtin_offsetof(struct ms_offcpu_waker, time_ns) == 8, "waker time_ns offset");
_Static_assert(__builtin_offsetof(struct ms_offcpu_waker, regs) == 48, "waker regs offset");
_Static_assert(sizeof(struct ms_offcpu_waker) % 8 == 0, "ms_offcpu_waker size");

/* ms_offcpu_slot.phase */
#define MS_OFFCPU_PHASE_CLOSED 0 /* on CPU, or nothing pending */
#define MS_OFFCPU_PHASE_OPEN 1	 /* switched out at rec.start_ns, not back yet */
#define MS_OFFCPU_PHASE_COPY 2	 /* back at rec.end_ns; waits for its stack copy */

/*
 * The value of the BPF hash map "offcpu_pending" (key: tid, __u32): one
 * record under construction per tracked thread.  Userspace writes snapshot
 * entries (phase OPEN, MS_OFFCPU_F_START_UNKNOWN) at start and reads the map
 * at stop to sweep intervals still open.
 */
struct ms_offcpu_slot {
	__u32 phase; /* MS_OFFCPU_PHASE_* */
	__u32 reserved; /* BPF-private: 1 if switched out inside a system call */
	struct ms_offcpu rec;
	__u64 ips[MS_OFFCPU_MAX_IPS];
	/* valid with MS_OFFCPU_F_PYTHON in rec.flags: the CPython part as the
	 * record carries it (py.py_len frames in py_frames, innermost first) */
	struct ms_offcpu_py py;
	__u8 py_frames[MS_PY_MAX_FRAMES * MS_PY_FRAME_BYTES];
};
_Static_assert(sizeof(struct ms_offcpu_slot) ==
		       8 + 136 + MS_OFFCPU_MAX_IPS * 8 + MS_OFFCPU_PY_MAX_BYTES,
	       "slot size");
_Static_assert(__builtin_offsetof(struct ms_offcpu_slot, py_frames) ==
		       __builtin_offsetof(struct ms_offcpu_slot, py) + sizeof(struct ms_offcpu_py),
	       "the CPython part is contiguous in the slot");

/* Per-CPU off-CPU counters (map "offcpu_stats"), stored like ms_stats. */
struct ms_offcpu_stats {
	__u64 switch_outs;     /* switch-outs of tracked threads */
	__u64 intervals;       /* interval records written */
	__u64 filtered;	       /* intervals shorter than --off-cpu-min, not written */
	__u64 filtered_ns;     /* their summed duration (ns) */
	__u64 map_full;	       /* the pending map was full: a thread is not tracked */
	__u64 ringbuf_full;    /* bpf_ringbuf_output failed: interval lost */
	__u64 stack_err;       /* a bpf_get_stack call failed (thread's or waker's) */
	__u64 unpaired_in;     /* switch-in with nothing open (new thread, or before start) */
	/* An open interval found with its thread on CPU (a switch-out, syscall
	 * exit or exit of the thread) although no switch-in closed it: the
	 * kernel did not run our sched_switch program for that switch-in.  The
	 * interval is written with MS_OFFCPU_F_END_UNKNOWN, end = when found. */
	__u64 missed_switch_in;
};
_Static_assert(sizeof(struct ms_offcpu_stats) == 72, "ms_offcpu_stats size");

#define MS_OFFCPU_STATS_NAMES                                                                      \
	"offcpu.switch_outs", "offcpu.intervals", "offcpu.filtered", "offcpu.filtered_ns",         \
		"offcpu.map_full", "offcpu.ringbuf_full", "offcpu.stack_err", "offcpu.unpaired_in", \
		"offcpu.missed_switch_in"
#define MS_OFFCPU_STATS_COUNT 9

/*
 * Probe records (ABI 5).  Not written by BPF: the collector reads them
 * from a target's probes SDK ring (sdk/c/microscope_probes.h) with
 * process_vm_readv and hands them on as MS_CHUNK_BPF chunks of source
 * MS_SOURCE_PROBES, so they are held, ordered by time and replayed as any
 * ring record is.  time_ns sits at offset 8 as in every timed record.
 *
 * ms_probe_site: site number site of process pid is called name (NUL-
 * terminated inside the array).  The collector emits it before any record
 * of the site; time_ns is when it was read.  The processor takes it at
 * once, not in time order.
 * ms_probe: one record; kind MS_PROBE_ZONE_BEGIN/END (value 0) or MARK.
 * site, in both: the SDK's site number (low 16 bits, MS_PROBE_SITE_MASK)
 * and the generation of the control block it came from (high 16 bits: how
 * many times the collector found a control block anew in that pid, after
 * an exec or a dlclose), so sites of two images of one pid never meet.
 */
#define MS_REC_PROBE 4
#define MS_REC_PROBE_SITE 5

#define MS_PROBE_ZONE_BEGIN 1
#define MS_PROBE_ZONE_END 2
#define MS_PROBE_MARK 3
#define MS_PROBE_KIND_MASK 0xffu
/* ABI 6: the first record of its thread after the SDK dropped some of the
 * thread's records (ring full); zone pairing forgets the thread's open
 * begins there. */
#define MS_PROBE_F_AFTER_DROP (1u << 8)
#define MS_PROBE_NAME_MAX 56
#define MS_PROBE_SITE_MASK 0xffffu

struct ms_probe {
	struct ms_rec_header hdr; /* type = MS_REC_PROBE, size = sizeof */
	__u64 time_ns;		  /* CLOCK_MONOTONIC, as the SDK stamped it */
	__u64 value;
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 site; /* the SDK's site number in pid | generation << 16 */
	__u32 kind; /* MS_PROBE_* kind | MS_PROBE_F_* flags */
};

struct ms_probe_site {
	struct ms_rec_header hdr; /* type = MS_REC_PROBE_SITE, size = sizeof */
	__u64 time_ns;
	__u32 pid;
	__u32 site;
	char name[MS_PROBE_NAME_MAX];
};

_Static_assert(sizeof(struct ms_probe) == 40, "ms_probe size");
_Static_assert(__builtin_offsetof(struct ms_probe, time_ns) == 8, "ms_probe time");
_Static_assert(sizeof(struct ms_probe_site) == 80, "ms_probe_site size");
_Static_assert(__builtin_offsetof(struct ms_probe_site, time_ns) == 8, "ms_probe_site time");

#endif /* MS_ABI_RECORDS_H */
