// SPDX-License-Identifier: MIT
/*
 * Samples: validate a struct ms_sample (bpf/abi/records.h), turn its kernel
 * and user return addresses into capture frames through the mapping active
 * at the sample's time, symbolize immediately (cached per module and
 * address), and append the stack and the sample.
 *
 * Return addresses other than the innermost one point after a call; their
 * name is looked up at address - 1 so a call that ends a function names the
 * caller, not the next function.  The frame keeps the real address.
 *
 * User stacks (meta "call_graph"):
 *   fp     the kernel's frame-pointer callchain as it is;
 *   dwarf  the CFI unwind over the sample's copied stack bytes
 *          (userspace/unwind/), ending with a bracketed reason frame unless
 *          it reached the outermost frame; the frame-pointer chain only when
 *          the sample has no copy;
 *   auto   (default) as dwarf, except that when CFI cannot take even the
 *          first step (JIT code, a module without CFI) the whole
 *          frame-pointer chain is used instead.  The two are never spliced:
 *          no frame-pointer frames are appended after an unproven step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const truncation_names[] = {
	[MS_TRUNC_USER_DEPTH] = "[user stack depth limit]",
	[MS_TRUNC_USER_UNAVAILABLE] = "[user stack unavailable]",
	[MS_TRUNC_NO_STACK_COPY] = "[no stack copy]",
	[MS_TRUNC_FP_LEFT_CODE] = "[frame pointer chain left mapped code]",
	[MS_TRUNC_FP_NOT_KEPT] = "[frame without frame pointer]",
};
_Static_assert(sizeof(truncation_names) / sizeof(truncation_names[0]) ==
		   sizeof(((struct processor *)0)->truncation_frames) / sizeof(uint32_t),
	       "one truncation frame slot per name");

/*
 * Appends the frame rows of one address of a module (ELF address for
 * files, runtime for the kernel) to out[*n], outermost first: the
 * out-of-line function, then each inlined call (CAPTURE_FRAME_F_INLINE).
 * Cached per (module, address, is_return).  Returns 0 or -ENOMEM.
 */
static int module_frames(struct processor *p, uint32_t module, uint64_t addr, bool is_return,
			 uint32_t *out, uint32_t *n, uint32_t cap)
{
	struct module_state *ms = &p->modules[module];
	struct sym_frame chain[MS_MAX_INLINE_DEPTH];
	uint64_t *cached = u64map__get(&ms->frames[is_return], addr + 1);
	uint32_t base = ms->kind == CAPTURE_MODULE_KERNEL ? CAPTURE_FRAME_F_KERNEL : 0;
	uint64_t packed;
	size_t depth = 0, i;

	if (is_return)
		base |= CAPTURE_FRAME_F_RETURN;
	if (!cached) {
		uint32_t off = p->nchain_rows;

		if (!ms->deferred) {
			depth = sym_module__frames(ms->sym, is_return && addr ? addr - 1 : addr, chain,
						   MS_MAX_INLINE_DEPTH);
			if (ms->kind == CAPTURE_MODULE_FILE)
				stacks__module_check_dwarf(p, ms);
		}
		if (array__reserve((void **)&p->chain_rows, &p->chain_rows_cap,
				   p->nchain_rows + (depth ? depth : 1), sizeof(*p->chain_rows)))
			return -ENOMEM;
		if (!depth || !chain[depth - 1].function) {
			struct capture_frame row = {
			    .module = ms->row,
			    .flags = base | CAPTURE_FRAME_F_UNSYMBOLIZED,
			    .address = addr,
			};
			if (!ms->deferred)
				processor__problem(p, MS_PROBLEM_FRAME_NO_SYMBOL);
			p->chain_rows[p->nchain_rows++] = capture_builder__add_frame(p->b, &row);
		} else {
			/* The interpreter's own functions (python look), with the
			 * code they inline: flagged by the out-of-line name. */
			const char *outer = chain[depth - 1].function;
			uint32_t role_flags = ms->kind == CAPTURE_MODULE_KERNEL
						      ? 0
						      : python__native_flags(outer);

			for (i = depth; i-- > 0;) {
				struct capture_frame row = {
				    .module = ms->row,
				    .flags = base | role_flags |
					     (chain[i].inlined ? CAPTURE_FRAME_F_INLINE : 0),
				    .address = addr,
				    .function = capture_builder__string(
					p->b, chain[i].function ? chain[i].function : ""),
				    .file = capture_builder__string(p->b,
								    chain[i].file ? chain[i].file : ""),
				    .line = chain[i].line,
				};
				if (!chain[i].function)
					row.flags |= CAPTURE_FRAME_F_UNSYMBOLIZED;
				uint32_t id = capture_builder__add_frame(p->b, &row);

				/* Only the out-of-line activation of the evaluation
				 * loop runs a Python segment (python__splice). */
				if (id != CAPTURE_NONE && (row.flags & CAPTURE_FRAME_F_INTERPRETER) &&
				    u64map__put(&p->frame_role, (uint64_t)id + 1,
						i == depth - 1 &&
							!strcmp(outer, "_PyEval_EvalFrameDefault")
						    ? 1
						    : 2))
					return -ENOMEM;
				p->chain_rows[p->nchain_rows++] = id;
			}
		}
		packed = (uint64_t)off << 8 | (p->nchain_rows - off);
		if (u64map__put(&ms->frames[is_return], addr + 1, packed))
			return -ENOMEM;
		cached = &packed;
	}
	for (i = 0; i < (*cached & 0xff); i++) {
		uint32_t id = p->chain_rows[(*cached >> 8) + i];

		if (id == CAPTURE_NONE)
			return -ENOMEM; /* the builder could not add the row */
		if (*n < cap)
			out[(*n)++] = id;
	}
	return 0;
}

/* Frame row for a user address outside any file-backed mapping. */
static uint32_t anon_frame(struct processor *p, uint64_t addr)
{
	uint64_t *cached = u64map__get(&p->anon_frames, addr + 1);

	if (cached)
		return *cached;
	struct capture_frame row = {
		.module = CAPTURE_NONE,
		.flags = CAPTURE_FRAME_F_UNSYMBOLIZED,
		.address = addr,
	};
	uint32_t id = capture_builder__add_frame(p->b, &row);

	if (id != CAPTURE_NONE && u64map__put(&p->anon_frames, addr + 1, id))
		return CAPTURE_NONE;
	return id;
}

/* The frame row marking why a stack ends, made once per name in *slot. */
static uint32_t mark_frame(struct processor *p, uint32_t *slot, const char *name)
{
	if (*slot == CAPTURE_NONE) {
		struct capture_frame row = {
			.module = CAPTURE_NONE,
			.flags = CAPTURE_FRAME_F_TRUNCATION,
			.function = capture_builder__string(p->b, name),
		};
		*slot = capture_builder__add_frame(p->b, &row);
	}
	return *slot;
}

static uint32_t truncation_frame(struct processor *p, int reason)
{
	return mark_frame(p, &p->truncation_frames[reason], truncation_names[reason]);
}

#define STACK_CAP (sizeof(p->stack_scratch) / sizeof(p->stack_scratch[0]))

/* Append frame row id to out[*n] (dropped beyond STACK_CAP).  A row the
 * builder could not add (CAPTURE_NONE) is -ENOMEM, never an entry. */
static int push(struct processor *p, uint32_t id, uint32_t *out, uint32_t *n)
{
	if (id == CAPTURE_NONE)
		return -ENOMEM;
	if (*n < STACK_CAP)
		out[(*n)++] = id;
	return 0;
}

/*
 * Before the first frame of a run of frames from a module whose symbols
 * could not be loaded (sym_module__error), one frame that says so:
 * "[MODULE: no symbols: REASON]" (made once per module).  Its frames keep
 * their addresses, unnamed; the module is counted (module_unreadable).
 */
static int unreadable_mark(struct processor *p, uint32_t module, uint32_t *out, uint32_t *n)
{
	struct module_state *ms = &p->modules[module];
	const char *why = ms->deferred ? NULL : sym_module__error(ms->sym);

	if (!why || p->stack_run_module == module) {
		p->stack_run_module = module;
		return 0;
	}
	p->stack_run_module = module;
	if (ms->unreadable_mark == CAPTURE_NONE) {
		const char *path = sym_module__path(ms->sym), *slash = strrchr(path, '/');
		const char *base = slash && slash[1] ? slash + 1 : path;
		size_t blen = strlen(base);
		char name[512];
		/* named, so not UNSYMBOLIZED: `microscope symbolize` leaves it be */
		struct capture_frame row = {
			.module = ms->row,
			.flags = ms->kind == CAPTURE_MODULE_KERNEL ? CAPTURE_FRAME_F_KERNEL : 0,
		};

		if (blen >= 2 && base[0] == '[' && base[blen - 1] == ']') {
			base++; /* "[kernel.kallsyms]" -> "[kernel.kallsyms: no symbols: ...]" */
			blen -= 2;
		}
		snprintf(name, sizeof(name), "[%.*s: no symbols: %s]", (int)blen, base, why);
		row.function = capture_builder__string(p->b, name);
		ms->unreadable_mark = capture_builder__add_frame(p->b, &row);
	}
	return push(p, ms->unreadable_mark, out, n);
}

/* Appends the frames of a user address (its inline chain, outermost first).
 * Returns 0 or -ENOMEM. */
static int user_frame(struct processor *p, struct proc_state *ps, uint64_t ip, bool is_return,
		      uint32_t *out, uint32_t *n)
{
	const struct proc_mapping *m = ps ? tasks__find_mapping(ps, ip) : NULL;
	uint64_t vaddr;
	int err;

	if (!m)
		processor__problem(p, MS_PROBLEM_FRAME_NO_MAPPING);
	if (!m || m->module == CAPTURE_NONE) {
		uint32_t row;

		p->stack_run_module = CAPTURE_NONE;
		err = jit__frame(p, ps, ip, is_return, &row);
		if (err == -ENOENT)
			row = anon_frame(p, ip);
		else if (err)
			return err;
		return push(p, row, out, n);
	}
	err = unreadable_mark(p, m->module, out, n);
	if (err)
		return err;
	sym_module__to_vaddr(p->modules[m->module].sym, ip - m->start + m->pgoff, &vaddr);
	return module_frames(p, m->module, vaddr, is_return, out, n, STACK_CAP);
}

/* The kernel's module index, made on first use.  Returns 0 or -ENOMEM
 * (kallsyms that cannot be read still make a module, with its error). */
static int kernel_module(struct processor *p)
{
	struct sym_module *k;

	if (p->kernel_module != CAPTURE_NONE)
		return 0;
	k = symbolizer__kernel(p->sym);
	if (!k)
		return -ENOMEM;
	p->kernel_module = stacks__module_for_sym(p, k, CAPTURE_MODULE_KERNEL, "[kernel.kallsyms]");
	return p->kernel_module == CAPTURE_NONE ? -ENOMEM : 0;
}

static int kernel_frame(struct processor *p, uint64_t ip, bool is_return, uint32_t *out,
			uint32_t *n)
{
	int err = kernel_module(p);

	if (!err)
		err = unreadable_mark(p, p->kernel_module, out, n);
	if (!err)
		err = module_frames(p, p->kernel_module, ip, is_return, out, n, STACK_CAP);
	return err;
}

static uint32_t unwind_reason_frame(struct processor *p, enum unwind_reason r)
{
	return mark_frame(p, &p->trunc_rows[r], unwind_reason__name(r));
}

/* 1: user frames done; 0: none made (the caller falls back); -ENOMEM. */
static int dwarf_user_frames(struct processor *p, struct proc_state *ps, const void *regs_in,
			      const uint8_t *copy, uint32_t copy_len, uint32_t fp_len, uint32_t *out,
			      uint32_t *n)
{
	struct stacks_unwind_ctx ctx = { .p = p, .ps = ps };
	struct unwind_regs regs;
	enum unwind_reason reason;
	size_t depth;
	int err;

	if (p->call_graph == MS_CG_FP || !copy_len || !regs_in)
		return 0;
	memcpy(&regs, regs_in, sizeof(regs));
	depth = unwind__stack_ex(&regs, copy, copy_len, stacks__unwind_find, &ctx, p->unwind_pcs,
				 p->unwind_flags, MS_UNWIND_MAX_DEPTH, &reason);
	if (p->call_graph == MS_CG_AUTO && depth <= 1 && fp_len > 1 &&
	    reason != UNWIND_END_OUTERMOST) {
		p->unwind_fp_fallback++;
		return 0;
	}
	err = stacks__emit_unwound(p, ps, depth, reason, out, n);
	return err ? err : 1;
}

int stacks__emit_unwound(struct processor *p, struct proc_state *ps, size_t depth,
			 enum unwind_reason reason, uint32_t *out, uint32_t *n)
{
	int err;

	p->unwind_reasons[reason]++;
	for (size_t i = 1, fp = 0; i < depth; i++) {
		if (!(p->unwind_flags[i] & UNWIND_FRAME_FP))
			continue;
		p->unwind_fp_steps++;
		p->unwind_fp_step_samples += !fp++;
	}
	if (reason != UNWIND_END_OUTERMOST) {
		err = push(p, unwind_reason_frame(p, reason), out, n);
		if (err)
			return err;
	}
	for (size_t i = depth; i-- > 0;) {
		/* The innermost frame is the interrupted pc, never a return
		 * address, even under a kernel stack (as perf). */
		bool is_return = i != 0 && !(p->unwind_flags[i] & UNWIND_FRAME_ACTIVATION);

		err = user_frame(p, ps, p->unwind_pcs[i], is_return, out, n);
		if (err)
			return err;
	}
	return 0;
}

static int dwarf_user_stack(struct processor *p, struct proc_state *ps, const struct ms_sample *s,
			     const struct ms_sample_parts *parts, uint32_t *out, uint32_t *n)
{
	if (parts->ku)
		return kunwind__user_stack(p, ps, s, parts, out, n);
	return dwarf_user_frames(p, ps, (s->flags & MS_SAMPLE_F_USER_REGS) ? &s->regs : NULL,
				 parts->stack_copy, parts->copy_len, parts->nu, out, n);
}

/*
 * Number of leading entries of a frame-pointer chain uips[0..u) (innermost
 * first, as bpf_get_stack returns it) that are real frames.  The kernel's
 * walk (perf_callchain_user) follows saved frame pointers until its depth
 * limit, so code built without frame pointers sends it through stack data:
 * the chain has left real frames at the first caller outside every
 * executable mapping, or where it ends in a run of one repeated caller
 * address (a frame pointer pointing at itself; the run's first entry is
 * kept: real recursion never reaches the outermost frame).
 * Entry 0 (the user regs' ip) is always kept; a process whose mappings are
 * unknown keeps its whole chain.
 */
static uint32_t fp_chain_real(const struct proc_state *ps, const uint64_t *uips, uint32_t u)
{
	uint32_t i, keep = u;

	if (!ps || !ps->nmaps || u < 2)
		return u;
	for (i = 1; i < u; i++) {
		if (!tasks__find_mapping(ps, uips[i])) {
			keep = i;
			break;
		}
	}
	/* A run of one address up to the cut or the chain's end.  At the
	 * kernel's depth limit such a run may be deep recursion: left alone. */
	if (keep >= 3 && keep < MS_MAX_STACK_DEPTH && uips[keep - 1] == uips[keep - 2]) {
		i = keep - 1;
		while (i > 1 && uips[i - 1] == uips[i])
			i--;
		keep = i + 1;
	}
	return keep;
}

/*
 * Number of leading entries of the frame-pointer chain uips[0..keep) whose
 * callers are proven: entry i + 1 is read through rbp, so it is frame i's
 * caller only if frame i keeps its frame pointer at that point.  The
 * module's CFI tells (unwind_module__fp_state, at the pc for entry 0, at the
 * return address - 1 for the others): a function compiled without frame
 * pointers, or one interrupted in its prologue or at its ret, leaves the
 * caller's rbp in place and the walk then skips its caller.  The chain ends
 * after such a frame (never a skipped caller), *cut set; a frame without
 * CFI or mapping is taken as it comes.
 */
static uint32_t fp_chain_proven(struct processor *p, struct proc_state *ps, const uint64_t *uips,
				uint32_t keep, bool *cut)
{
	*cut = false;
	/* A lone innermost frame is checked too: without a frame pointer
	 * the walk found nothing above it (code built without them). */
	for (uint32_t i = 0; i + 1 < keep || (i == 0 && keep == 1); i++) {
		uint64_t pc = i ? uips[i] - 1 : uips[i];
		struct stacks_unwind_ctx ctx = {.p = p, .ps = ps};
		struct unwind_map map;

		if (!ps || !stacks__unwind_find(&ctx, pc, &map) || !map.module)
			continue;
		if (unwind_module__fp_state(map.module, pc - map.bias) == UNWIND_FP_NOT_KEPT) {
			p->fp_not_kept++;
			p->fp_not_kept_leaf += i == 0;
			*cut = true;
			return i + 1;
		}
	}
	return keep;
}

/*
 * Appends the frames of a frame-pointer chain (root first): a truncation
 * mark (no stack copy, depth limit, or the chain left mapped code, counted
 * once as MS_PROBLEM_FP_LEFT_CODE), then the real frames.  The innermost
 * entry is the interrupted pc, never a return address, even under a kernel
 * stack (perf does the same); every caller entry is a return address.
 * Returns 0 or -ENOMEM.
 */
static int fp_user_stack(struct processor *p, struct proc_state *ps, const uint64_t *uips,
			 uint32_t u, bool no_copy, uint32_t *out, uint32_t *n)
{
	uint32_t keep = fp_chain_real(ps, uips, u), proven;
	int err = 0;
	bool cut;

	proven = fp_chain_proven(p, ps, uips, keep, &cut);
	if (no_copy && u)
		err = push(p, truncation_frame(p, MS_TRUNC_NO_STACK_COPY), out, n);
	if (!err && cut) {
		keep = proven;
		err = push(p, truncation_frame(p, MS_TRUNC_FP_NOT_KEPT), out, n);
	} else if (!err && keep < u) {
		processor__problem(p, MS_PROBLEM_FP_LEFT_CODE);
		err = push(p, truncation_frame(p, MS_TRUNC_FP_LEFT_CODE), out, n);
	} else if (!err && !no_copy && u == MS_MAX_STACK_DEPTH) {
		err = push(p, truncation_frame(p, MS_TRUNC_USER_DEPTH), out, n);
	}
	for (uint32_t i = keep; !err && i-- > 0;)
		err = user_frame(p, ps, uips[i], i != 0, out, n);
	return err;
}

static uint32_t event_row(struct processor *p, const struct ms_sample *s)
{
	if (p->event_row == CAPTURE_NONE) {
		struct capture_event ev = {
			.name = capture_builder__string(p->b, p->event_name),
			.unit = capture_builder__string(p->b, "samples"),
			.period = s->period,
		};
		p->event_row = capture_builder__add_event(p->b, &ev);
	}
	return p->event_row;
}

int stacks__sample(struct processor *p, const struct ms_sample *s, uint32_t len)
{
	uint32_t *out = p->stack_scratch, n = 0, parent = CAPTURE_NONE;
	struct ms_sample_parts parts;
	struct thread_state *ts;
	struct proc_state *ps;
	uint32_t nuser;
	int i, err;
	bool known;

	if (ms_sample__parts(s, len, &parts) || s->py_status >= MS_PY_STATUS_COUNT ||
	    (parts.npy && s->py_status == MS_PY_NONE)) {
		processor__problem(p, MS_PROBLEM_BAD_SAMPLE);
		return 0;
	}
	p->degraded_cut += (s->flags & MS_SAMPLE_F_COPY_CUT) != 0;
	p->degraded_skipped += (s->flags & MS_SAMPLE_F_COPY_SKIPPED) != 0;
	ts = tasks__sample_thread(p, s->pid, s->tid, s->time_ns, &known);
	if (!ts)
		return -ENOMEM;
	if (!known)
		processor__problem(p, MS_PROBLEM_SAMPLE_UNKNOWN_PROCESS);
	ps = &p->procs[ts->proc];
	p->sample_time = s->time_ns;

	/* Root first: truncation mark, user frames outermost first, then kernel. */
	p->stack_run_module = CAPTURE_NONE;
	if (s->flags & MS_SAMPLE_F_EXEC_REPLACED) {
		/* no user part: the old program is gone, the new one not started */
		p->exec_replaced++;
		err = 0;
	} else if ((err = dwarf_user_stack(p, ps, s, &parts, out, &n)) > 0) {
		err = 0; /* user frames done */
	} else if (!err && (s->flags & MS_SAMPLE_F_USTACK_ERR)) {
		err = push(p, truncation_frame(p, MS_TRUNC_USER_UNAVAILABLE), out, &n);
	} else if (!err) {
		/* The frame-pointer chain; marked when it stands in for a missing
		 * stack copy or was cut at the kernel's depth limit. */
		err = fp_user_stack(p, ps, (const uint64_t *)parts.uips, parts.nu,
				    p->call_graph != MS_CG_FP && p->stack_copy_on && !parts.copy_len,
				    out, &n);
	}
	if (err)
		return err;
	nuser = n;
	p->py_status[s->py_status]++;
	bool py_splice = python__wants_splice(p, s->pid, s->py_status);

	if (py_splice) {
		struct py_walk_parts w = {
			.pid = s->pid, .status = s->py_status, .py = parts.py, .npy = parts.npy,
		};

		err = python__splice(p, &w, out, nuser, p->splice_scratch);
		if (err < 0)
			return err;
		n = (uint32_t)err;
		out = p->splice_scratch;
	}
	p->stack_run_module = CAPTURE_NONE;
	for (i = (int)parts.nk - 1; !err && i >= 0; i--)
		err = kernel_frame(p, parts.kips[i], i != 0, out, &n);
	if (err < 0)
		return err;
	if (py_splice && p->py_tail != CAPTURE_NONE)
		out[n++] = p->py_tail; /* why the interpreted frames could not be placed */

	for (uint32_t k = 0; k < n; k++)
		parent = capture_builder__add_stack(p->b, parent, out[k]);
	struct capture_sample row = {
		.time_ns = s->time_ns,
		.thread = ts->row,
		.cpu = s->cpu,
		.stack = parent,
		.event = event_row(p, s),
		/* The period in force over the event's period (record --budget). */
		.weight = p->duty_factor ? p->duty_factor : 1,
	};
	uint32_t srow = capture_builder__add_sample(p->b, &row);

	if (attribution__sample(p, ts, srow, s))
		return -ENOMEM;
	if (!p->samples)
		p->first_sample_time = s->time_ns;
	p->last_sample_time = s->time_ns;
	p->samples++;
	return 0;
}

void stacks__release(struct processor *p)
{
	for (uint32_t i = 0; i < p->nmodules; i++) {
		stacks__module_cfi_free(p, &p->modules[i]);
		u64map__release(&p->modules[i].frames[0]);
		u64map__release(&p->modules[i].frames[1]);
	}
	free(p->modules);
	free(p->chain_rows);
	u64map__release(&p->sym_to_module);
	u64map__release(&p->anon_frames);
}

/* ---- stacks from parts (off-CPU intervals and their wakers) ---- */

/* As dwarf_user_stack, over explicit parts instead of a sample. */
static int dwarf_user_parts(struct processor *p, struct proc_state *ps,
			     const struct stack_parts *sp, uint32_t *out, uint32_t *n)
{
	return dwarf_user_frames(p, ps, sp->regs, sp->copy, sp->copy_len, sp->u, out, n);
}

uint32_t stacks__marker(struct processor *p, uint32_t *slot, const char *name)
{
	return mark_frame(p, slot, name);
}

const char *stacks__kernel_name(struct processor *p, uint64_t ip, bool is_return)
{
	uint64_t off;

	if (kernel_module(p))
		return NULL;
	return sym_module__lookup(p->modules[p->kernel_module].sym, is_return && ip ? ip - 1 : ip,
				  &off);
}

int stacks__build(struct processor *p, struct proc_state *ps, const struct stack_parts *sp,
		  uint32_t *stack)
{
	uint32_t *out = p->stack_scratch, n = 0, parent = CAPTURE_NONE;
	bool py_splice = false;
	int i, err = 0;

	p->stack_run_module = CAPTURE_NONE;
	if (sp->root_mark != CAPTURE_NONE)
		err = push(p, sp->root_mark, out, &n);
	if (err || !ps || !sp->user) {
		/* no user part: kernel frames only */
	} else if ((err = dwarf_user_parts(p, ps, sp, out, &n)) > 0) {
		err = 0; /* user frames done */
	} else if (!err && sp->ustack_err) {
		err = push(p, truncation_frame(p, MS_TRUNC_USER_UNAVAILABLE), out, &n);
	} else if (!err) {
		err = fp_user_stack(p, ps, sp->uips, sp->u, sp->copy_wanted && !sp->copy_len, out,
				    &n);
	}
	/* Interpreted frames, placed as in a sample's stack (stacks__sample). */
	if (!err && ps && sp->user && sp->py)
		py_splice = python__wants_splice(p, sp->py->pid, sp->py->status);
	if (py_splice) {
		err = python__splice(p, sp->py, out, n, p->splice_scratch);
		if (err < 0)
			return err;
		n = (uint32_t)err;
		out = p->splice_scratch;
		err = 0;
	}
	p->stack_run_module = CAPTURE_NONE;
	for (i = (int)sp->k - 1; !err && i >= 0; i--)
		err = kernel_frame(p, sp->kips[i], i != 0 || sp->k_returns, out, &n);
	if (err)
		return err;
	if (py_splice && p->py_tail != CAPTURE_NONE)
		out[n++] = p->py_tail; /* why the interpreted frames could not be placed */
	for (uint32_t k = 0; k < n; k++)
		parent = capture_builder__add_stack(p->b, parent, out[k]);
	*stack = parent;
	return 0;
}
