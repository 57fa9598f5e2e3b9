// SPDX-License-Identifier: MIT
/*
 * Off-CPU intervals: validate a struct ms_offcpu (bpf/abi/records.h), build
 * the thread's stack at switch-out (with its CPython frames, spliced as in a
 * sample's stack) and the waker's stack, decide the cause, and append one
 * capture_interval (event "off-cpu", unit "nanoseconds").
 *
 * Cause.  The BPF program records the context sched_waking ran in.  When
 * the waker's kernel stack shows that the wakeup ran inside an interrupt
 * (an irq entry frame, or softirq processing, before any syscall or kernel
 * thread entry when read innermost first), the cause is HARDIRQ or SOFTIRQ,
 * the interrupted task is not the waker (waker_thread none) and only the
 * kernel stack is kept: it names the source (hrtimer_wakeup for a timer).
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "internal.h"

#define MARK_START_UNKNOWN 0
#define MARK_WAKER_UNRECORDED 1

static const char *const mark_names[] = {
	[MARK_START_UNKNOWN] = "[off-cpu before recording: stack unknown]",
	[MARK_WAKER_UNRECORDED] = "[waker process not recorded]",
};

static bool prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* CAPTURE_OFFCPU_CAUSE_* of a wakeup whose kernel stack is ips[0..n). */
static uint32_t cause_of_stack(struct processor *p, const uint64_t *ips, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const char *name = stacks__kernel_name(p, ips[i], i != 0);

		if (!name)
			continue;
		if (!strcmp(name, "handle_softirqs") || !strcmp(name, "__do_softirq") ||
		    !strcmp(name, "do_softirq") || !strcmp(name, "run_ksoftirqd"))
			return CAPTURE_OFFCPU_CAUSE_SOFTIRQ;
		if (prefix(name, "asm_sysvec_") || prefix(name, "sysvec_") ||
		    prefix(name, "__sysvec_") || !strcmp(name, "common_interrupt") ||
		    !strcmp(name, "asm_common_interrupt") || !strcmp(name, "hrtimer_interrupt") ||
		    !strcmp(name, "handle_irq_event") || prefix(name, "asm_exc_nmi"))
			return CAPTURE_OFFCPU_CAUSE_HARDIRQ;
		if (!strcmp(name, "do_syscall_64") || prefix(name, "entry_SYSCALL") ||
		    prefix(name, "ret_from_fork") || !strcmp(name, "kthread"))
			break;
	}
	return CAPTURE_OFFCPU_CAUSE_TASK;
}

/* Innermost kernel frames that belong to the tracing itself (the BPF
 * program and the tracepoint's BPF trampoline): how many to skip. */
static uint32_t tracing_frames(struct processor *p, const uint64_t *ips, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n && i < 4; i++) {
		const char *name = stacks__kernel_name(p, ips[i], i != 0);

		if (!name || !(prefix(name, "bpf_prog_") || prefix(name, "bpf_trace_run") ||
			       prefix(name, "__bpf_trace_") || prefix(name, "__traceiter_")))
			break;
	}
	return i;
}

static uint32_t offcpu_event(struct processor *p)
{
	if (p->offcpu_event_row == CAPTURE_NONE) {
		struct capture_event ev = {
			.name = capture_builder__string(p->b, "off-cpu"),
			.unit = capture_builder__string(p->b, "nanoseconds"),
			.period = 1,
		};
		p->offcpu_event_row = capture_builder__add_event(p->b, &ev);
	}
	return p->offcpu_event_row;
}

/* Policy: waker copies held at once (threads woken and not yet back on a
 * CPU); the oldest is replaced when full, its interval keeps the waker's
 * frame-pointer chain. */
#define OFFCPU_WAKER_COPIES 64

struct offcpu_waker_copy {
	uint32_t tid, waker_tid; /* tid 0: free */
	uint64_t start_ns;
	uint32_t len, flags;
	struct ms_regs_x86_64 regs;
	uint8_t *bytes; /* MS_STACK_COPY_MAX */
};

int offcpu__waker(struct processor *p, const struct ms_offcpu_waker *r, uint32_t len)
{
	struct offcpu_waker_copy *w = NULL;
	uint32_t i;

	if (r->arch != MS_ARCH_X86_64 || r->stack_copy_len % 8 ||
	    r->stack_copy_len > MS_STACK_COPY_MAX || sizeof(*r) + (size_t)r->stack_copy_len != len ||
	    !r->tid || !r->waker_tid || r->start_ns > r->time_ns) {
		processor__problem(p, MS_PROBLEM_BAD_OFFCPU);
		return 0;
	}
	if (!p->waker_copies) {
		p->waker_copies = calloc(OFFCPU_WAKER_COPIES, sizeof(*p->waker_copies));
		if (!p->waker_copies)
			return -ENOMEM;
	}
	for (i = 0; i < p->nwaker_copies; i++)
		if (p->waker_copies[i].tid == r->tid || !p->waker_copies[i].tid) {
			w = &p->waker_copies[i];
			break;
		}
	if (!w && p->nwaker_copies < OFFCPU_WAKER_COPIES) {
		w = &p->waker_copies[p->nwaker_copies];
		w->bytes = malloc(MS_STACK_COPY_MAX);
		if (!w->bytes)
			return -ENOMEM;
		p->nwaker_copies++;
	}
	if (!w) {
		w = &p->waker_copies[p->next_waker_copy];
		p->next_waker_copy = (p->next_waker_copy + 1) % OFFCPU_WAKER_COPIES;
	}
	w->tid = r->tid;
	w->waker_tid = r->waker_tid;
	w->start_ns = r->start_ns;
	w->len = r->stack_copy_len;
	w->flags = r->flags;
	w->regs = r->regs;
	memcpy(w->bytes, r + 1, r->stack_copy_len);
	return 0;
}

/* The waker copy of r's interval, taken (freed for reuse), or NULL. */
static struct offcpu_waker_copy *waker_copy__take(struct processor *p, const struct ms_offcpu *r)
{
	uint32_t i;

	for (i = 0; i < p->nwaker_copies; i++) {
		struct offcpu_waker_copy *w = &p->waker_copies[i];

		if (w->tid == r->tid) {
			w->tid = 0;
			if (w->start_ns == r->start_ns && w->waker_tid == r->waker_tid)
				return w;
			return NULL;
		}
	}
	return NULL;
}

void offcpu__release(struct processor *p)
{
	uint32_t i;

	for (i = 0; i < p->nwaker_copies; i++)
		free(p->waker_copies[i].bytes);
	free(p->waker_copies);
	p->waker_copies = NULL;
	p->nwaker_copies = 0;
}

int offcpu__record(struct processor *p, const struct ms_offcpu *r, uint32_t len)
{
	struct ms_offcpu_parts parts;
	struct py_walk_parts walk;
	const uint64_t *ips;
	struct stack_parts sp = { .root_mark = CAPTURE_NONE };
	struct capture_interval row = { 0 };
	struct thread_state *ts, *wts;
	struct proc_state *ps, *wps;
	struct offcpu_waker_copy *wc;
	const uint64_t *wk;
	uint32_t skip;
	int err;
	bool known;

	if (r->arch != MS_ARCH_X86_64 || ms_offcpu__parts(r, len, &parts) ||
	    r->start_ns > r->time_ns || r->state >= MS_OFFCPU_STATE_COUNT ||
	    r->cause > MS_OFFCPU_CAUSE_TASK || !r->tid) {
		processor__problem(p, MS_PROBLEM_BAD_OFFCPU);
		return 0;
	}
	if (processor__after_window(p, r->start_ns)) {
		p->after_window_offcpu++;
		return 0;
	}
	ips = (const uint64_t *)parts.ips;
	ts = tasks__sample_thread(p, r->pid, r->tid, r->time_ns, &known);
	if (!ts)
		return -ENOMEM;
	if (!known)
		processor__problem(p, MS_PROBLEM_SAMPLE_UNKNOWN_PROCESS);
	ps = &p->procs[ts->proc];

	/* The thread's stack at switch-out. */
	skip = tracing_frames(p, ips, r->kstack_len);
	sp.kips = ips + skip;
	sp.k = r->kstack_len - skip;
	sp.k_returns = skip > 0;
	sp.uips = ips + r->kstack_len;
	sp.u = r->ustack_len;
	sp.user = !(r->flags & MS_OFFCPU_F_KTHREAD);
	sp.ustack_err = r->flags & MS_OFFCPU_F_USTACK_ERR;
	sp.copy_wanted = p->stack_copy_on && p->call_graph != MS_CG_FP;
	sp.regs = (r->flags & MS_OFFCPU_F_USER_REGS) ? &r->regs : NULL;
	sp.copy = parts.stack_copy;
	sp.copy_len = parts.copy_len;
	/* the CPython frames at switch-out, placed as in a sample */
	walk = (struct py_walk_parts){
		.pid = r->pid, .status = parts.py_status, .py = parts.py, .npy = parts.npy,
	};
	sp.py = &walk;
	if (parts.py_status != MS_PY_NONE)
		p->offcpu_py_status[parts.py_status]++;
	if ((r->flags & MS_OFFCPU_F_START_UNKNOWN) && !r->kstack_len && !r->ustack_len) {
		sp.user = false;
		sp.root_mark = stacks__marker(p, &p->offcpu_marks[MARK_START_UNKNOWN],
					      mark_names[MARK_START_UNKNOWN]);
	}
	err = stacks__build(p, ps, &sp, &row.stack);
	if (err)
		return err;

	/* The waker. */
	row.cause = r->cause;
	row.waker_thread = CAPTURE_NONE;
	row.waker_stack = CAPTURE_NONE;
	wk = ips + r->kstack_len + r->ustack_len;
	if (r->cause == MS_OFFCPU_CAUSE_TASK) {
		skip = tracing_frames(p, wk, r->waker_kstack_len);
		row.cause = cause_of_stack(p, wk + skip, r->waker_kstack_len - skip);
		memset(&sp, 0, sizeof(sp));
		sp.root_mark = CAPTURE_NONE;
		sp.kips = wk + skip;
		sp.k = r->waker_kstack_len - skip;
		sp.k_returns = skip > 0;
		wps = NULL;
		if (row.cause == CAPTURE_OFFCPU_CAUSE_TASK && r->waker_tid) {
			/* The waker may be on its exit path (it woke a joiner as
			 * it exited): the row it had, as for its own samples. */
			wps = tasks__process_at(p, r->waker_pid, r->time_ns);
			if (wps && wps->tracked) {
				bool wknown;

				wts = tasks__sample_thread(p, r->waker_pid, r->waker_tid, r->time_ns,
							   &wknown);
				if (!wts)
					return -ENOMEM;
				row.waker_thread = wts->row;
				wps = &p->procs[wts->proc];
				sp.user = r->waker_ustack_len > 0;
				sp.uips = wk + r->waker_kstack_len;
				sp.u = r->waker_ustack_len;
				/* the recording's call-graph policy: the waker's
				 * stack copy, unwound with CFI like the thread's */
				sp.copy_wanted = p->stack_copy_on && p->call_graph != MS_CG_FP &&
						 sp.user;
				wc = waker_copy__take(p, r);
				if (wc && sp.copy_wanted) {
					sp.regs = &wc->regs;
					sp.copy = wc->bytes;
					sp.copy_len = wc->len;
				}
			} else {
				/* A waker outside the recorded processes: its tid
				 * cannot name a thread row of ours; keep its
				 * kernel stack under a marker. */
				wps = NULL;
				sp.root_mark = stacks__marker(
				    p, &p->offcpu_marks[MARK_WAKER_UNRECORDED],
				    mark_names[MARK_WAKER_UNRECORDED]);
			}
		}
		err = stacks__build(p, wps, &sp, &row.waker_stack);
		if (err)
			return err;
	}

	row.start_ns = r->start_ns;
	row.end_ns = r->time_ns;
	row.weight = r->time_ns - r->start_ns;
	row.thread = ts->row;
	row.event = offcpu_event(p);
	row.cpu = (r->flags & MS_OFFCPU_F_END_UNKNOWN) ? CAPTURE_NONE : r->cpu;
	row.state = r->state; /* MS_OFFCPU_STATE_* == CAPTURE_OFFCPU_STATE_* */
	if (r->flags & MS_OFFCPU_F_START_UNKNOWN)
		row.flags |= CAPTURE_INTERVAL_F_START_UNKNOWN;
	if (r->flags & MS_OFFCPU_F_END_UNKNOWN)
		row.flags |= CAPTURE_INTERVAL_F_END_UNKNOWN;
	if (r->stack_copy_len && p->call_graph != MS_CG_FP)
		row.flags |= CAPTURE_INTERVAL_F_STACK_COPY;
	if (processor__after_window(p, row.end_ns)) {
		/* --duration: it ran on past the recording's end */
		row.end_ns = p->first_round + p->window_ns;
		row.weight = row.end_ns - row.start_ns;
		row.cpu = CAPTURE_NONE;
		row.flags |= CAPTURE_INTERVAL_F_END_UNKNOWN;
		p->cut_offcpu++;
	}
	capture_builder__add_interval(p->b, &row);
	p->intervals++;
	return 0;
}

_Static_assert(MS_OFFCPU_STATE_COUNT == CAPTURE_OFFCPU_STATE_COUNT, "states");
_Static_assert(MS_OFFCPU_STATE_DISK == CAPTURE_OFFCPU_STATE_DISK, "states");
_Static_assert(MS_OFFCPU_CAUSE_TASK == CAPTURE_OFFCPU_CAUSE_TASK, "causes");
_Static_assert(MS_OFFCPU_CAUSE_SOFTIRQ == CAPTURE_OFFCPU_CAUSE_SOFTIRQ, "causes");
