/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel DWARF unwinder of the sampler (bpf/abi/kunwind.h has the
 * tables and the record part).  Per frame (one bpf_loop iteration): the
 * process's mapping holding the pc (a cached range, else a binary search of
 * its ku_procs entry), the module's row (this CPU's hint for the address,
 * checked against ku_starts, else a binary search of ku_starts), then one
 * step with the compact row: CFA = rsp/rbp/rbx/r12-r15 + offset, the return
 * address read at CFA + offset, the other registers' rules applied lazily
 * (a register saved at an address is read only when a CFA needs it or when
 * the kernel hands over to userspace).  Stack words come from a chunk of
 * up to KU_CHUNK bytes read at once (ku__read).
 * bench/bpf_cost.py measures the sampler's run time per sample.
 *
 * The steps, checks and their order are userspace/unwind/unwind.c's
 * (unwind_loop) for compact rows, so where the kernel goes on it finds what
 * userspace would: every read is confined to the bytes the stack copy
 * would hold, [sp, sp + stack_copy_bytes), the row is looked up at pc for
 * the first frame and at pc - 1 after, the CFA must grow.  Anything else
 * (no table yet, a full/expression row, a signal frame, a failed read, the
 * depth bound) stops the kernel *before* stepping that frame: it hands
 * userspace the frame's registers, and userspace redoes that step with its
 * own unwinder over a stack copy taken from the frame's sp.
 *
 * The includer defines stack_copy_bytes and includes vmlinux.h, the libbpf
 * headers and bpf/abi/records.h first.
 */
#ifndef MS_BPF_KUNWIND_H
#define MS_BPF_KUNWIND_H

#include "bpf/abi/kunwind.h"

/* Settings (rodata): 0 off, MS_KU_MODE_ON or MS_KU_MODE_VERIFY. */
const volatile __u32 kunwind_mode = 0;
/* A sample that stopped for want of tables (NO_PROC, NO_MAPPING, NO_ROWS)
 * wakes the reader once this long passed since the last such wakeup (0:
 * never), so that userspace writes them while the process starts rather
 * than a drain interval later (sample__wake). */
const volatile __u64 ku_wake_ns = 0;
/* Key of the address-space cookie (ku__cookie), random per recording. */
const volatile __u64 ku_cookie_key = 0;
/* --call-graph auto: a sample the kernel unwound no frame of also carries
 * the frame-pointer chain (MS_SAMPLE_F_KU_FP_CHAIN). */
const volatile __u32 ku_fp_chain = 0;


#ifdef MS_BPF_SECTIONS
/* A build flag (bpf/sampler.bpf.c's section_ns, bench/bpf_sections.py):
 * per CPU, 0 frames stepped, 1 chunk refills, 2 mapping searches, 3 row
 * searches, 5 bytes refilled, 6 unwinds, 7 ns in the frame loop. */
__u64 ku_count[64][8];
#define KU_COUNT(i, v) (ku_count[bpf_get_smp_processor_id() & 63][(i) & 7] += (v))
#else
#define KU_COUNT(i, v) do { } while (0)
#endif

/* Lazy register states (struct ku_state.mode). */
#define KU_UNDEF 0 /* not recoverable */
#define KU_VAL 1   /* val[] holds it */
#define KU_AT 2	   /* saved at addr[], not read yet */

/* Row hints per CPU (struct ku_state), a power of 2. */
#define KU_HINTS 64
/* Stack bytes read at once (ku__read), a power of 2. */
#define KU_CHUNK 512

/* The registers' lazy state: restored as a whole by a rollback. */
struct ku_regs {
	__u64 val[MS_KU_SLOTS];
	__u64 addr[MS_KU_SLOTS];
	__u8 mode[MS_KU_SLOTS];
};

struct ku_state {
	__u64 pcs[MS_KU_MAX_FRAMES + 1]; /* + 1: the index mask's room */
	struct ku_regs r;
	__u64 pc, prev_cfa, sp0, win_end;
	__u64 map_start, map_end, map_bias;
	__u32 map_module;
	__u32 map2_module; /* the mapping used before it (ku__find_map) */
	__u64 map2_start, map2_end, map2_bias;
	__u32 n, tgid, module, cookie;
	__u8 status, cause;
	__u8 resumed; /* stopped by ku__stop_resume (ku__handover) */
	__u32 forget; /* ku__forget's slot */
	__u8 activation;  /* look the row up at pc, not pc - 1 */
	__u8 prev_signal; /* the frame below was a signal frame */
	__u32 sig_n;	  /* n after the last signal frame's step (0: none) */
	/* The state before that step: where the kernel hands over if it
	 * cannot step the interrupted frame (registers outside the slots,
	 * which userspace would have from the signal frame, are not kept). */
	struct ku_regs sig_r;
	__u64 sig_pc, sig_prev_cfa;
	__u8 sig_activation, sig_prev_signal, pad[6];
	/* The stack bytes [chunk_lo, chunk_lo + chunk_len) (ku__read) */
	__u64 chunk_lo;
	__u32 chunk_len, chunk_pad;
	__u8 chunk[KU_CHUNK + 8];
	/* Row hints, kept across samples: the row last found at a lookup
	 * address (ku__step checks it before use) */
	__u64 hint_pc[KU_HINTS];
	__u32 hint_row[KU_HINTS];
	struct ms_kunwind ku; /* the hand-over state ku__unwind made */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ku_state);
} ku_state SEC(".maps");

/* Sizes set by userspace before load (userspace/collector/collector.c).
 * The row arrays are mmapable: userspace writes a module's rows as one copy
 * into a window of the map (userspace/processor/kunwind_maps.c), not one
 * element update each; a lookup costs the same. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct ms_ku_row);
} ku_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);
} ku_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ms_ku_module);
} ku_modules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* set by userspace (MS_KU_PROCS_MAX) */
	__type(key, __u32);
	__type(value, struct ms_ku_proc);
} ku_procs SEC(".maps");

/* When a sample that wanted tables last woke the reader. */
__u64 ku_woken_ns = 0;

/* The key of ku_state, in read-only memory: a key on the stack is a 4-byte
 * store into an 8-byte slot, which the verifier's liveness does not count
 * as overwriting it, so the slot's older content (the stack copy's flags)
 * stayed live up to sample__wake and the CPython walk before it was
 * verified once per content. */
const volatile __u32 ku_state_key = 0;

static __always_inline struct ku_state *ku__state(void)
{
	return bpf_map_lookup_elem(&ku_state, (const void *)&ku_state_key);
}

/* The last unwind on this CPU stopped before its first step. */
static __always_inline bool ku__stopped_at_first(void)
{
	struct ku_state *st = ku__state();

	return st && st->ku.status == MS_KU_RESUME && st->n == 1;
}

/* The last unwind on this CPU stopped for want of tables (ku_wake_ns). */
static __always_inline bool ku__wants_tables(void)
{
	struct ku_state *st = ku__state();

	return st && st->ku.status == MS_KU_RESUME &&
	       (st->ku.cause == MS_KU_STOP_NO_PROC || st->ku.cause == MS_KU_STOP_NO_MAPPING ||
		st->ku.cause == MS_KU_STOP_NO_ROWS);
}

/*
 * v as the verifier sees a value read back from memory: unknown, so neither
 * kept precise back to the constants or ranges each path gave it (an index
 * is precise: states that differ in it are not pruned) nor a reason to
 * walk the rest of the frame once per value (ku__slot's seven slots, the
 * mapping search's midpoints).
 */
static __always_inline __u32 ku__forget(struct ku_state *st, __u32 v)
{
	st->forget = v;
	return *(volatile __u32 *)&st->forget;
}

/*
 * Refill this CPU's chunk from addr up to KU_CHUNK bytes, not past the
 * window or addr's page (a page after it may not be mapped; addr's must
 * be).  A global subprogram: verified once, whatever state each of the
 * reads in ku__step that calls it is in (as a static one, 2.2k of the
 * verified instructions).  0, or -1: not refilled.
 */
__noinline int ku__chunk_fill(__u64 addr)
{
	struct ku_state *st = ku__state();
	__u64 len = KU_CHUNK, page_left, win_left;

	if (!st)
		return -1;
	page_left = PAGE_BYTES - (addr & (PAGE_BYTES - 1));
	win_left = st->win_end - addr;
	if (len > page_left)
		len = page_left;
	if (len > win_left)
		len = win_left;
	barrier_var(len); /* keep the bound below: clang proves it */
	if (len < 8 || len > KU_CHUNK)
		return -1;
	KU_COUNT(1, 1);
	KU_COUNT(5, len);
	if (bpf_probe_read_user(st->chunk, len, (const void *)addr)) {
		st->chunk_len = 0;
		return -1;
	}
	st->chunk_lo = addr;
	st->chunk_len = len;
	return 0;
}

/*
 * 8 bytes at addr, only inside the copy window (as userspace's reader).
 * Reads go up the stack (each frame's above the last), so one helper call
 * reads a chunk and the next frames' words come from it: bench/work's 26
 * frames cost ~3 reads, not 52.  The bytes are the same, the task being
 * stopped in this interrupt.
 */
static __always_inline int ku__read(struct ku_state *st, __u64 addr, __u64 *out)
{
	__u64 off;

	if (addr < st->sp0 || addr + 8 > st->win_end || addr + 8 < addr)
		return -1;
	off = addr - st->chunk_lo;
	if (addr < st->chunk_lo || off + 8 > st->chunk_len) {
		if (ku__chunk_fill(addr))
			return bpf_probe_read_user(out, 8, (const void *)addr) ? -1 : 0;
		off = 0;
	}
	barrier_var(off);
	off &= KU_CHUNK - 1;
	*out = *(__u64 *)(st->chunk + off);
	return 0;
}

/* The value of slot i (1..7), reading it if saved; -1 if not recoverable. */
static __always_inline int ku__reg(struct ku_state *st, __u32 i, __u64 *out)
{
	/* A mask, not a compare: 6.1's verifier loses a compare's bound
	 * through ku__slot()'s switch arithmetic. */
	barrier_var(i);
	i &= MS_KU_SLOTS - 1;
	if (st->r.mode[i] == KU_AT) {
		if (ku__read(st, st->r.addr[i], &st->r.val[i])) {
			st->r.mode[i] = KU_UNDEF;
			return -1;
		}
		st->r.mode[i] = KU_VAL;
	}
	if (st->r.mode[i] != KU_VAL)
		return -1;
	*out = st->r.val[i];
	return 0;
}

/* Slot of a DWARF register (x86-64 psABI numbering), or -1. */
static __always_inline int ku__slot(__u32 reg)
{
	switch (reg) {
	case 16:
		return 0;
	case 7:
		return 1;
	case 6:
		return 2;
	case 3:
		return 3;
	case 12 ... 15:
		return (int)reg - 8;
	default:
		return -1;
	}
}

static __always_inline long ku__stop(struct ku_state *st, __u8 status, __u8 cause)
{
	st->status = status;
	st->cause = cause;
	return 1;
}

/*
 * Cache the process's mapping holding addr in this CPU's ku_state; 0, or
 * -1 with st->cause set.  The mapping used before the current one is kept
 * too: a stack goes from a program into libc and back (bench/work's 22
 * frames: 3 searches, the third for the first mapping again).  A global
 * subprogram, as ku__search: the verifier goes through its loop once, not
 * once per state of ku__step that calls it.
 */
__noinline int ku__find_map(__u64 addr)
{
	struct ku_state *st = ku__state();
	struct ms_ku_proc *pr;
	__u32 lo = 0, hi, mid, module;
	__u64 start, end, bias;
	int k;

	if (!st)
		return -1;
	if (addr - st->map2_start < st->map2_end - st->map2_start) {
		start = st->map2_start;
		end = st->map2_end;
		bias = st->map2_bias;
		module = st->map2_module;
		goto found;
	}
	KU_COUNT(2, 1);
	pr = bpf_map_lookup_elem(&ku_procs, &st->tgid);
	if (!pr || pr->mm_cookie != st->cookie) {
		st->cause = MS_KU_STOP_NO_PROC;
		st->module = st->cookie;
		return -1;
	}
	hi = pr->n < MS_KU_PROC_MAPS ? pr->n : MS_KU_PROC_MAPS;
	for (k = 0; k < 9 && lo < hi; k++) {
		mid = ku__forget(st, (lo + hi) / 2) & (MS_KU_PROC_MAPS - 1);
		struct ms_ku_mapping *m = &pr->maps[mid];

		if (addr < m->start) {
			hi = mid;
		} else if (addr >= m->end) {
			lo = mid + 1;
		} else {
			start = m->start;
			end = m->end;
			bias = m->bias;
			module = m->module;
			goto found;
		}
	}
	st->cause = MS_KU_STOP_NO_MAPPING;
	st->module = st->cookie;
	return -1;
found:
	st->map2_start = st->map_start;
	st->map2_end = st->map_end;
	st->map2_bias = st->map_bias;
	st->map2_module = st->map_module;
	st->map_start = start;
	st->map_end = end;
	st->map_bias = bias;
	st->map_module = module;
	return 0;
}

/* The address space's cookie: a keyed mix of the mm's address (no kernel
 * address reaches userspace), never 0. */
static __always_inline __u32 ku__cookie(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	/* read as a number: the verifier forbids arithmetic on the pointer */
	__u64 x = (__u64)BPF_CORE_READ(task, mm) ^ ku_cookie_key;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return (__u32)x | 1;
}

/* Stop before stepping the current frame (ku__handover, after the loop,
 * moves the hand-over to a signal frame's state where it applies). */
static __always_inline long ku__stop_resume(struct ku_state *st, __u8 cause)
{
	st->resumed = 1;
	return ku__stop(st, MS_KU_RESUME, cause);
}

/* At the frame a signal frame returned to, hand over at the signal frame
 * instead: userspace redoes its step, which also restores the registers the
 * slots do not hold.  Once after the loop, not at each of ku__step's stops
 * (its register copy, inlined at each, was 2.4k verified instructions). */
static __always_inline void ku__handover(struct ku_state *st)
{
	if (st->resumed && st->sig_n && st->n == st->sig_n) {
		st->r = st->sig_r;
		st->pc = st->sig_pc;
		st->prev_cfa = st->sig_prev_cfa;
		st->activation = st->sig_activation;
		st->prev_signal = st->sig_prev_signal;
		st->n = st->sig_n - 1;
	}
}

/*
 * The hint h is the row at off of mod: hint_row[h] was found at lookup
 * before and is the row holding off now, starts[lo] <= off < starts[lo + 1]
 * within the module's rows (what the search would find).  Inline: the
 * search after a miss is a global subprogram (ku__search), so the ways of
 * missing no longer multiply its verification, and a call per frame on top
 * of ku__frame's cost bench/work ~0.1 us a sample (bench/bpf_sections.py).
 */
static __always_inline bool ku__hinted(struct ku_state *st, __u32 h, __u64 lookup, __u64 off,
				       struct ms_ku_module *mod)
{
	__u32 lo, hi, *start, *end;

	if (!st || !mod)
		return false;
	h &= KU_HINTS - 1;
	lo = st->hint_row[h];
	hi = lo + 1;
	if (st->hint_pc[h] != lookup || lo < mod->first || hi >= mod->first + mod->nrows)
		return false;
	start = bpf_map_lookup_elem(&ku_starts, &lo);
	end = bpf_map_lookup_elem(&ku_starts, &hi);
	return start && end && *start <= off && off < *end;
}

/*
 * The row of the module whose rows are [first, last) holding off, found by a
 * binary search of ku_starts (starts[last] is the sentinel that ends the
 * last row), or (__u32)-1.  A global subprogram: the verifier goes through
 * its loop once, not once per caller state (as static code, its 24 bounded
 * iterations were verified for each of ku__step's states reaching it).
 */
__noinline __u32 ku__search(__u32 lo, __u32 hi, __u64 off)
{
	__u32 mid, *start;
	int k;

	KU_COUNT(3, 1);
	start = bpf_map_lookup_elem(&ku_starts, &hi);
	if (!start || off >= *start)
		return (__u32)-1;
	/* starts[lo] <= off < starts[hi].  Unrolled, with no exit (a step
	 * once hi - lo is 1 looks at lo and keeps it): straight code is
	 * verified once, a loop once per value of its counter. */
#pragma unroll
	for (k = 0; k < MS_KU_SEARCH_STEPS; k++) {
		mid = lo + (hi - lo) / 2;
		start = bpf_map_lookup_elem(&ku_starts, &mid);
		if (start && *start <= off) /* (mid < hi: start is never NULL) */
			lo = mid;
		else
			hi = mid;
	}
	return hi - lo > 1 ? (__u32)-1 : lo;
}

/*
 * One frame: 1 to stop (status set), else 0.  A global subprogram that
 * ku__step, the bpf_loop callback, calls: since Linux 6.8 the verifier goes
 * through a callback as through a loop body, where two states are the same
 * only if even their dead registers and stack slots are, so each way the
 * checks below left a spilled value was verified on its own (ku__step's
 * body 5.1k of 12.9k verified instructions); a global subprogram is
 * verified once, by itself.
 */
__noinline int ku__frame(void)
{
	struct ku_state *st = ku__state();
	struct ms_ku_module *mod;
	struct ms_ku_row *row;
	__u64 lookup, vaddr, off, cfa, base, ra, rel, ra_at;
	__u32 lo, h, kinds, flags;
	int slot, s;
	bool signal;

	if (!st)
		return 1;
	lookup = st->activation ? st->pc : st->pc - 1;
	if (lookup - st->map_start >= st->map_end - st->map_start &&
	    ku__find_map(lookup))
		return ku__stop_resume(st, st->cause);
	mod = bpf_map_lookup_elem(&ku_modules, &st->map_module);
	if (!mod || mod->nrows < 2) {
		st->module = st->map_module;
		return ku__stop_resume(st, MS_KU_STOP_NO_ROWS);
	}
	vaddr = lookup - st->map_bias;
	off = vaddr - mod->base;
	if (vaddr < mod->base)
		return ku__stop_resume(st, MS_KU_STOP_NO_ROW);
	/* The hint: the row found at this address before, if it is the row
	 * at off now, starts[lo] <= off < starts[lo + 1] within the module's
	 * rows, which is what the search finds (stacks repeat their pcs: a
	 * recursion within a sample, the hot paths across samples). */
	h = (__u32)(lookup ^ (lookup >> 7) ^ (lookup >> 14)) & (KU_HINTS - 1);
	if (ku__hinted(st, h, lookup, off, mod))
		goto found;
	lo = ku__search(mod->first, mod->first + mod->nrows - 1, off);
	if (lo == (__u32)-1)
		return ku__stop_resume(st, MS_KU_STOP_NO_ROW);
	st->hint_pc[h] = lookup;
	st->hint_row[h] = lo;
found:
	lo = ku__forget(st, st->hint_row[h]); /* one state, whichever path found it */
	row = bpf_map_lookup_elem(&ku_rows, &lo);
	if (!row || (row->flags & MS_KU_ROW_NONE))
		return ku__stop_resume(st, MS_KU_STOP_NO_ROW);
	flags = row->flags;
	if (flags & MS_KU_ROW_FULL)
		return ku__stop_resume(st, MS_KU_STOP_UNSUPPORTED);
	/* As userspace: the frame is marked a signal frame before its step. */
	signal = flags & MS_KU_ROW_SIGNAL;
	if (signal)
		st->pcs[(st->n - 1) & 0x7f] |= MS_KU_PC_SIGNAL;
	kinds = row->kinds;
	if ((kinds & 3) == MS_KU_RULE_UNDEF) /* the outermost frame */
		return ku__stop(st, MS_KU_DONE, MS_KU_STOP_NONE);
	if ((kinds & 3) != MS_KU_RULE_OFFSET)
		return ku__stop_resume(st, MS_KU_STOP_UNSUPPORTED);
	slot = (flags & (MS_KU_ROW_PLT | MS_KU_ROW_SIGFRAME)) ? 1 : ku__slot(row->cfa_reg);
	if (slot <= 0)
		return ku__stop_resume(st, MS_KU_STOP_UNSUPPORTED);
	if (ku__reg(st, ku__forget(st, (__u32)slot), &base))
		return ku__stop_resume(st, MS_KU_STOP_REG);
	if (flags & MS_KU_ROW_SIGFRAME) {
		/* CFA = *(rsp + cfa_off); the slots saved from rsp */
		if (ku__read(st, base + (__u64)(__s64)row->cfa_off, &cfa))
			return ku__stop_resume(st, MS_KU_STOP_READ);
		rel = base;
	} else {
		cfa = base + (__u64)(__s64)row->cfa_off;
		if ((flags & MS_KU_ROW_PLT) && (st->pc & 15) >= row->cfa_reg)
			cfa += 8;
		rel = cfa;
	}
	ra_at = rel + (__u64)((__s64)row->off8[0] * 8);
	if (ku__read(st, ra_at, &ra))
		return ku__stop_resume(st, MS_KU_STOP_READ);
	if (st->n > 1 && ((!signal && !st->prev_signal) ? cfa <= st->prev_cfa
							: cfa == st->prev_cfa))
		return ku__stop_resume(st, MS_KU_STOP_LOOP);
	if (ra == 0)
		return ku__stop(st, MS_KU_DONE, MS_KU_STOP_NONE);
	if (st->n >= MS_KU_MAX_FRAMES)
		return ku__stop_resume(st, MS_KU_STOP_DEPTH);

	if (flags & MS_KU_ROW_SIGFRAME) { /* keep the state to hand over at */
		st->sig_r = st->r;
		st->sig_pc = st->pc;
		st->sig_prev_cfa = st->prev_cfa;
		st->sig_activation = st->activation;
		st->sig_prev_signal = st->prev_signal;
		st->sig_n = st->n + 1;
	}
	/* Commit: the caller's registers. */
	for (s = 1; s < MS_KU_SLOTS; s++) {
		__u64 at = rel + (__u64)((__s64)row->off8[s] * 8);

		switch ((kinds >> (2 * s)) & 3) {
		case MS_KU_RULE_UNDEF:
			st->r.mode[s] = KU_UNDEF;
			break;
		case MS_KU_RULE_SAME:
			break;
		case MS_KU_RULE_OFFSET:
			st->r.mode[s] = KU_AT;
			st->r.addr[s] = at;
			break;
		default:
			st->r.mode[s] = KU_VAL;
			st->r.val[s] = at;
			break;
		}
	}
	st->pcs[st->n & 0x7f] = ra;
	st->n++;
	st->pc = ra;
	st->r.val[0] = ra;
	st->r.mode[0] = KU_VAL;
	st->prev_cfa = cfa;
	st->prev_signal = signal;
	st->activation = signal;
	return 0;
}

/* One frame: bpf_loop callback.  Returns 1 to stop (status set). */
static long ku__step(__u32 index, void *unused)
{
	return ku__frame() ? 1 : 0;
}

/*
 * Unwind the user stack of the current task from regs (tgid's mappings).
 * Writes the pcs into pcs_out (room for MS_KU_MAX_FRAMES) and the hand-over
 * state into this CPU's ku_state ku (copy_sp: where the stack copy must
 * start).  Returns the number of pcs (>= 1), 0 when the state is missing.
 */
static __noinline __u32 ku__unwind(const struct ms_regs_x86_64 *regs, __u32 tgid, __u64 *pcs_out)
{
	struct ku_state *st = ku__state();
	struct ms_kunwind *ku;
	__u32 n, s;
	__u64 v;

	if (!st || !regs || !pcs_out)
		return 0;
	ku = &st->ku;
	st->r.val[0] = regs->ip;
	st->r.val[1] = regs->sp;
	st->r.val[2] = regs->bp;
	st->r.val[3] = regs->bx;
	st->r.val[4] = regs->r12;
	st->r.val[5] = regs->r13;
	st->r.val[6] = regs->r14;
	st->r.val[7] = regs->r15;
	for (s = 0; s < MS_KU_SLOTS; s++)
		st->r.mode[s] = KU_VAL;
	st->pcs[0] = regs->ip;
	st->pc = regs->ip;
	st->n = 1;
	st->tgid = tgid;
	st->sp0 = regs->sp;
	st->win_end = regs->sp + stack_copy_bytes;
	st->chunk_lo = st->chunk_len = 0;
	st->map_start = st->map_end = 0;
	st->map2_start = st->map2_end = 0;
	st->prev_cfa = 0;
	st->activation = 1;
	st->prev_signal = 0;
	st->sig_n = 0;
	st->module = 0;
	st->cookie = ku__cookie();
	st->status = MS_KU_RESUME;
	st->cause = MS_KU_STOP_DEPTH;
	st->resumed = 0;
#ifdef MS_BPF_SECTIONS
	__u64 t0 = bpf_ktime_get_ns();
#endif
	bpf_loop(MS_KU_MAX_FRAMES, ku__step, NULL, 0);
#ifdef MS_BPF_SECTIONS
	KU_COUNT(7, bpf_ktime_get_ns() - t0);
	KU_COUNT(0, st->n);
	KU_COUNT(6, 1);
#endif
	ku__handover(st);

	n = st->n;
	if (n > MS_KU_MAX_FRAMES || n < 1) /* cannot happen; bounds the verifier */
		n = 1;
	bpf_probe_read_kernel(pcs_out, n * sizeof(__u64), st->pcs);
	ku->status = st->status;
	ku->cause = st->cause;
	ku->module = st->module;
	ku->prev_cfa = st->prev_cfa;
	ku->reserved = 0;
	__builtin_memset(&ku->regs, 0, sizeof(ku->regs));
	ku->regs.ip = st->pc;
	/* The valid bits gathered in memory: in a register, each slot's
	 * outcome (read, unreadable, not saved) was a state of its own to the
	 * verifier, and the slots after it were verified once per combination. */
	ku->valid = 1;
	if (st->status == MS_KU_RESUME) {
		for (s = 1; s < MS_KU_SLOTS; s++) {
			if (ku__reg(st, s, &v) == 0) {
				ku->valid |= 1u << s;
				((__u64 *)&ku->regs)[s & 7] = v;
			}
		}
	}
	ku->copy_sp = regs->sp;
	if (kunwind_mode != MS_KU_MODE_VERIFY && (ku->valid & 2) && ku->regs.sp >= regs->sp &&
	    ku->regs.sp < st->win_end)
		ku->copy_sp = ku->regs.sp;
	return n;
}

#endif
