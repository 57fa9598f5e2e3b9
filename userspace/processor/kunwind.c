/* SPDX-License-Identifier: MIT */
/*
 * Samples the sampler unwound in the kernel (--call-graph dwarf-kernel,
 * bpf/kunwind.bpf.h): their pcs, then userspace's own unwinder from where
 * the kernel stopped, over the stack copied from there, so the frames are
 * those the copy path would have found.  With --verify-unwind each sample
 * also carries the whole copy, and both unwinds are compared.
 *
 * Tables are loaded lazily, as samples ask: a sample that stopped for want
 * of its process's mappings (NO_PROC, NO_MAPPING) has them written when
 * they changed since they were last written; one that stopped at a module
 * without rows (NO_ROWS) has that module's compiled CFI loaded (once).
 * Rows are loaded as the sample is drained; mappings in time order (-a),
 * or, in a targeted recording (-p, -- CMD), as the sample is drained too,
 * from the process's live maps, with the rows of every module mapped
 * (kunwind_live.c: a start-up's tables arrive within ms of its first
 * sample instead of behind the ordered processing).
 */
#include <string.h>

#include "internal.h"
#include "../stream/memory_policy.h"

static const char *const ku_stop_names[] = {
#define KU_STOP_NAME(id, name) "kunwind.stop." name,
	MS_KU_STOPS(KU_STOP_NAME)
#undef KU_STOP_NAME
};

bool kunwind__table_mapping(const struct processor *p, uint32_t module, uint64_t start,
			    uint64_t end, uint64_t pgoff, struct ms_ku_mapping *out)
{
	const struct module_state *ms;
	uint64_t vaddr;

	if (module == CAPTURE_NONE || module >= p->nmodules)
		return false;
	ms = &p->modules[module];
	if ((ms->kind != CAPTURE_MODULE_FILE && ms->kind != CAPTURE_MODULE_VDSO) ||
	    !sym_module__to_vaddr(ms->sym, pgoff, &vaddr))
		return false;
	*out = (struct ms_ku_mapping){
		.start = start, .end = end, .bias = start - vaddr, .module = module,
	};
	return true;
}

/* The process's executable file mappings, as the kernel's table wants them. */
static void tell_mappings(struct processor *p, struct proc_state *ps)
{
	struct ms_ku_mapping maps[MS_KU_PROC_MAPS];
	uint32_t n = 0;

	if ((ps->ku_told && ps->ku_gen == ps->maps_gen) || !ps->ku_cookie ||
	    kunwind__live_owns(p, ps->pid))
		return;
	for (uint32_t i = 0; i < ps->nmaps && n < MS_KU_PROC_MAPS; i++) {
		const struct proc_mapping *m = &ps->maps[i];

		n += kunwind__table_mapping(p, m->module, m->start, m->end, m->pgoff, &maps[n]);
	}
	if (kunwind_maps__set_proc(p->kunwind, ps->pid, ps->ku_cookie, maps, n))
		p->ku_load_errors++;
	ps->ku_told = true;
	ps->ku_gen = ps->maps_gen;
}

void kunwind__load_module(struct processor *p, uint32_t module, uint64_t want)
{
	int err;

	if (module >= p->nmodules || kunwind_maps__tried(p->kunwind, module))
		return;
	err = kunwind_maps__load_module(p->kunwind, module,
					stacks__module_cfi(p, &p->modules[module]), want);
	if (err && err != -ENOSPC)
		p->ku_load_errors++;
}

/*
 * Give the kernel what this sample lacked: the process's mappings, and the
 * rows of every module of its stack (unwind_pcs[0..depth), so that the
 * next samples of the same code need no further round trip).
 */
static void feed(struct processor *p, struct proc_state *ps, const struct ms_kunwind *ku,
		 size_t depth)
{
	if (!p->kunwind)
		return;
	switch (ku->cause) {
	case MS_KU_STOP_NO_PROC:
	case MS_KU_STOP_NO_MAPPING:
		/* in time order: ps's maps are those of the sample's address space */
		if (ps->ku_cookie != ku->module)
			ps->ku_told = false;
		ps->ku_cookie = ku->module;
		tell_mappings(p, ps);
		/* fallthrough */
	case MS_KU_STOP_NO_ROWS:
		if (ku->cause == MS_KU_STOP_NO_ROWS)
			kunwind__load_module(p, ku->module, KUNWIND_WANT_NONE);
		/* A module larger than the rows left gets the window around
		 * the first of its pcs here (ELF vaddrs: return addresses
		 * less one, as the lookup). */
		for (size_t i = 0; i < depth; i++) {
			uint64_t pc = p->unwind_pcs[i] - (i && !(p->unwind_flags[i] &
								 UNWIND_FRAME_ACTIVATION));
			const struct proc_mapping *m = tasks__find_mapping(ps, pc);
			uint64_t want = KUNWIND_WANT_NONE;

			if (!m || m->module == CAPTURE_NONE || m->module >= p->nmodules)
				continue;
			if (!p->modules[m->module].sym ||
			    !sym_module__to_vaddr(p->modules[m->module].sym,
						  pc - m->start + m->pgoff, &want))
				want = KUNWIND_WANT_NONE;
			kunwind__load_module(p, m->module, want);
		}
		break;
	default:
		break;
	}
}

void kunwind__mapped(struct processor *p, struct proc_state *ps, const struct proc_mapping *m)
{
	const struct module_state *ms;

	if (!p->kunwind || !ps->ku_told || m->module >= p->nmodules)
		return;
	ms = &p->modules[m->module];
	if (ms->kind == CAPTURE_MODULE_FILE || ms->kind == CAPTURE_MODULE_VDSO)
		tell_mappings(p, ps);
}

/*
 * A BPF record just drained (untrusted): a sample that stopped for want of
 * a module's rows has them loaded now rather than when the ordered record
 * is processed a round later, so the samples that follow find them.  Rows
 * depend on the module only.  The mappings, which depend on the sample's
 * time, are told in time order by feed, except in a targeted recording,
 * where the process's live maps (newer than any the ordered path has) are
 * written now (kunwind_live.c).
 */
void kunwind__drained(struct processor *p, const void *rec, uint32_t len)
{
	const struct ms_rec_header *h = rec;
	struct ms_sample_parts parts;

	if (!p->kunwind || len < sizeof(*h) || ((uintptr_t)rec & 7) || h->type != MS_REC_SAMPLE ||
	    ms_sample__parts(rec, len, &parts) || !parts.ku)
		return;
	if (parts.ku->status != MS_KU_RESUME)
		return;
	if (parts.ku->cause == MS_KU_STOP_NO_ROWS)
		kunwind__load_module(p, parts.ku->module, KUNWIND_WANT_NONE);
	else if (p->ku_eager && (parts.ku->cause == MS_KU_STOP_NO_PROC ||
				 parts.ku->cause == MS_KU_STOP_NO_MAPPING))
		kunwind__live_drained(p, rec, &parts);
}

/*
 * The copy path's unwind of the sample (verify_pcs, *vdepth, *vreason);
 * true when it equals the spliced one in unwind_pcs.
 */
static bool same_as_copy_path(struct processor *p, struct proc_state *ps,
			      const struct ms_sample *s, const struct ms_sample_parts *parts,
			      size_t depth, enum unwind_reason reason, size_t *vdepth,
			      enum unwind_reason *vreason)
{
	struct stacks_unwind_ctx ctx = {.p = p, .ps = ps};
	struct unwind_regs regs;

	memcpy(&regs, &s->regs, sizeof(regs));
	*vdepth = unwind__stack_ex(&regs, parts->stack_copy, parts->copy_len, stacks__unwind_find,
				   &ctx, p->verify_pcs, p->verify_flags, MS_UNWIND_MAX_DEPTH,
				   vreason);
	return *vdepth == depth && *vreason == reason &&
	       !memcmp(p->verify_pcs, p->unwind_pcs, depth * sizeof(p->unwind_pcs[0])) &&
	       !memcmp(p->verify_flags, p->unwind_flags, depth);
}

/*
 * A sample whose copy ring pressure cut (MS_SAMPLE_F_COPY_CUT) and whose
 * CFI unwind ran out of copied bytes at p->unwind_pcs[depth - 1]: where the
 * frame-pointer chain the sample carries (KU_FP_CHAIN, uips[1..nu)) holds
 * that same return address, the chain's callers after it finish the stack,
 * up to the first outside every mapping (as fp_chain_real).  A frame
 * without a frame pointer between the two is skipped by the chain, so a
 * match is a frame both walks reached.  Returns the new depth; *reason:
 * where the chain ended.
 */
static size_t degraded_splice(struct processor *p, struct proc_state *ps,
			      const struct ms_sample_parts *parts, size_t depth,
			      enum unwind_reason *reason)
{
	uint64_t last = p->unwind_pcs[depth - 1];
	size_t j, from = depth;

	for (j = 1; j < parts->nu && parts->uips[j] != last; j++)
		;
	if (j >= parts->nu)
		return depth;
	for (j++; j < parts->nu && depth < MS_UNWIND_MAX_DEPTH; j++) {
		if (!tasks__find_mapping(ps, parts->uips[j])) {
			*reason = UNWIND_NO_MODULE;
			break;
		}
		p->unwind_pcs[depth] = parts->uips[j];
		p->unwind_flags[depth++] = 0;
	}
	if (j >= parts->nu)
		*reason = parts->nu >= MS_MAX_STACK_DEPTH ? UNWIND_DEPTH_LIMIT
							   : UNWIND_END_OUTERMOST;
	p->degraded_fp_spliced += depth > from || *reason == UNWIND_END_OUTERMOST;
	return depth;
}

int kunwind__user_stack(struct processor *p, struct proc_state *ps, const struct ms_sample *s,
			const struct ms_sample_parts *parts, uint32_t *out, uint32_t *n)
{
	const struct ms_kunwind *ku = parts->ku;
	struct stacks_unwind_ctx ctx = {.p = p, .ps = ps};
	enum unwind_reason reason = UNWIND_END_OUTERMOST;
	/* KU_FP_CHAIN: the kernel's one pc, then the frame-pointer chain */
	bool fp_chain = (s->flags & MS_SAMPLE_F_KU_FP_CHAIN) != 0;
	size_t nu = fp_chain ? 1 : parts->nu, depth = nu;
	int err;

	/* ms_sample__parts checked status, cause and nu >= 1; nu <= 127.  The
	 * frame flags are the copy path's: a signal frame (MS_KU_PC_SIGNAL),
	 * and the activation it returns to. */
	memset(p->unwind_flags, 0, nu);
	p->unwind_flags[0] = UNWIND_FRAME_ACTIVATION;
	for (size_t i = 0; i < nu; i++) {
		p->unwind_pcs[i] = parts->uips[i] & ~MS_KU_PC_SIGNAL;
		if (!(parts->uips[i] & MS_KU_PC_SIGNAL))
			continue;
		p->unwind_flags[i] |= UNWIND_FRAME_SIGNAL | UNWIND_FRAME_ACTIVATION;
		if (i + 1 < nu)
			p->unwind_flags[i + 1] |= UNWIND_FRAME_ACTIVATION;
	}
	p->ku_status[ku->status]++;
	p->ku_cause[ku->cause]++;
	p->ku_kernel_frames += nu;
	if (ku->status == MS_KU_RESUME) {
		/* The sampler copies stack_size bytes from where it stopped; read
		 * no further than the whole copy from sp would have held. */
		uint64_t window = s->regs.sp + p->stack_size - parts->copy_sp;
		size_t copy_len = parts->copy_len;
		bool below_signal = nu > 1 && (parts->uips[nu - 2] & MS_KU_PC_SIGNAL);
		struct unwind_resume r = {
			.valid = ku->valid,
			.activation = nu == 1 || below_signal,
			.have_prev = nu > 1,
			.prev_signal = below_signal,
			.prev_cfa = ku->prev_cfa,
		};
		size_t more;

		memcpy(&r.regs, &ku->regs, sizeof(r.regs));
		r.regs.ip = p->unwind_pcs[nu - 1];
		if (parts->copy_sp < s->regs.sp || parts->copy_sp - s->regs.sp >= p->stack_size)
			copy_len = 0;
		else if (copy_len > window)
			copy_len = window;
		more = unwind__resume_ex(&r, parts->stack_copy, parts->copy_sp, copy_len,
					 stacks__unwind_find, &ctx, p->unwind_pcs + nu - 1,
					 p->unwind_flags + nu - 1, MS_UNWIND_MAX_DEPTH - (nu - 1),
					 &reason);
		depth = nu - 1 + (more ? more : 1);
		p->ku_user_frames += depth - nu;
		feed(p, ps, ku, depth);
		if (fp_chain && (s->flags & MS_SAMPLE_F_COPY_CUT) && depth > 1 &&
		    reason == UNWIND_STACK_EXHAUSTED)
			depth = degraded_splice(p, ps, parts, depth, &reason);
		/* auto, as stacks.c's dwarf_user_frames: where CFI found no
		 * caller, the frame-pointer chain (the caller's fallback) */
		if (fp_chain && p->call_graph == MS_CG_AUTO && depth <= 1 && parts->nu > 1 &&
		    reason != UNWIND_END_OUTERMOST) {
			p->unwind_fp_fallback++;
			return 0;
		}
	}
	/* No bytes copied (the sampler's read of the whole window failed: a
	 * thread's sp less than the copy size below its stack's end, where
	 * the kernel's own reads of the frames succeed): the copy path has
	 * nothing to unwind, so no reference; counted, the kernel's kept. */
	if (p->verify_unwind && parts->copy_sp == s->regs.sp && !parts->copy_len) {
		p->ku_verify_no_copy++;
	} else if (p->verify_unwind && parts->copy_sp == s->regs.sp) {
		size_t vdepth;
		enum unwind_reason vreason;

		p->ku_verified++;
		if (!same_as_copy_path(p, ps, s, parts, depth, reason, &vdepth, &vreason)) {
			processor__problem(p, MS_PROBLEM_KUNWIND_MISMATCH);
			/* The capture keeps the reference: the copy path's frames. */
			memcpy(p->unwind_pcs, p->verify_pcs, vdepth * sizeof(p->unwind_pcs[0]));
			memcpy(p->unwind_flags, p->verify_flags, vdepth);
			depth = vdepth;
			reason = vreason;
		}
	}
	err = stacks__emit_unwound(p, ps, depth, reason, out, n);
	return err ? err : 1;
}

bool kunwind__held_cut(struct processor *p, const void **rec, uint32_t *len, uint64_t room)
{
	const struct ms_sample *s = *rec;
	struct ms_sample_parts parts;
	struct ms_sample *out;
	size_t head, py, cut;

	/* ms_sample__parts checks the type tag (offcpu records are left
	 * alone), the alignment and every length */
	if (!p->kunwind || p->verify_unwind || *len > MS_SAMPLE_MAX_SIZE ||
	    ms_sample__parts(s, *len, &parts))
		return false;
	cut = MS_PRESSURE_COPY_BYTES;
	if (parts.copy_len <= cut)
		return false;
	head = (size_t)(parts.stack_copy - (const uint8_t *)s);
	py = (size_t)parts.npy * sizeof(struct ms_py_frame);
	if (head + cut + py > room)
		cut = 0;
	if (!p->held_cut_buf && !(p->held_cut_buf = malloc(MS_SAMPLE_MAX_SIZE)))
		return false;
	memcpy(p->held_cut_buf, s, head + cut);
	memcpy(p->held_cut_buf + head + cut, parts.py, py);
	out = (struct ms_sample *)p->held_cut_buf;
	out->stack_copy_len = (uint32_t)cut;
	out->flags |= cut ? MS_SAMPLE_F_COPY_CUT : MS_SAMPLE_F_COPY_SKIPPED;
	out->hdr.size = (uint32_t)(head + cut + py);
	*rec = out;
	*len = out->hdr.size;
	p->degraded_held_cut++;
	return true;
}

void kunwind__finish(struct processor *p)
{
	struct kunwind_stats st;

	if (p->ku_status[MS_KU_DONE])
		capture_builder__add_counter(p->b, "kunwind.done", p->ku_status[MS_KU_DONE]);
	if (p->ku_status[MS_KU_RESUME])
		capture_builder__add_counter(p->b, "kunwind.resumed", p->ku_status[MS_KU_RESUME]);
	for (int i = 1; i < MS_KU_STOP_COUNT; i++)
		if (p->ku_cause[i])
			capture_builder__add_counter(p->b, ku_stop_names[i], p->ku_cause[i]);
	if (p->ku_kernel_frames)
		capture_builder__add_counter(p->b, "kunwind.frames.kernel", p->ku_kernel_frames);
	if (p->ku_user_frames)
		capture_builder__add_counter(p->b, "kunwind.frames.user", p->ku_user_frames);
	if (p->ku_verified)
		capture_builder__add_counter(p->b, "kunwind.verified", p->ku_verified);
	if (p->ku_verify_no_copy)
		capture_builder__add_counter(p->b, "kunwind.verify_no_copy", p->ku_verify_no_copy);
	if (p->ku_live_reads)
		capture_builder__add_counter(p->b, "kunwind.live_reads", p->ku_live_reads);
	if (p->ku_load_errors)
		capture_builder__add_counter(p->b, "kunwind.load_errors", p->ku_load_errors);
	if (!p->kunwind)
		return;
	kunwind_maps__stats(p->kunwind, &st);
	capture_builder__add_counter(p->b, "kunwind.modules_loaded", st.modules_loaded);
	capture_builder__add_counter(p->b, "kunwind.rows", st.rows);
	if (st.modules_full)
		capture_builder__add_counter(p->b, "kunwind.modules_full", st.modules_full);
	if (st.modules_partial) {
		capture_builder__add_counter(p->b, "kunwind.modules_partial", st.modules_partial);
		capture_builder__add_counter(p->b, "kunwind.rows_left_out", st.rows_left_out);
	}
}
