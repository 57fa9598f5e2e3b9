// SPDX-License-Identifier: MIT
/*
 * Keeping a long recording's state bounded (processor__compact): at each
 * segment or window slice the recorder has moved the samples out of the
 * builder (capture_builder__take), and the processor then
 *
 *   - releases the processes that exited and the threads that exited or
 *     that a later thread of the same tid replaced: their mappings, JIT
 *     state, CPython code objects and table slots (their rows live on in
 *     the segments already cut, which are self-contained);
 *   - frees the modules no live process maps any more (compiled CFI,
 *     symbols and debug data: a build machine makes new binaries all day);
 *   - forgets every cache of builder rows that can be made again on
 *     demand: frames of each module and address, inline chains, anonymous
 *     and JIT frames, marker frames, Python frames and roles, cgroup rows;
 *   - rebuilds the builder with only the rows still needed
 *     (capture_builder__compact): those of the samples not cut yet, and
 *     the rows it still holds ids of (live processes and threads, modules,
 *     events, cgroup paths), rewriting those ids.
 *
 * So what the recorder holds follows the live processes and one segment
 * of distinct frames and stacks, never the length of the run.  Frames are
 * symbolized again the first time a later segment needs them (the
 * symbolizer keeps its per-module tables, so that costs a lookup).
 */
#include <stdlib.h>
#include <string.h>

#include "capture/merge.h"
#include "internal.h"

/* Every builder id the processor holds after its caches were forgotten. */
static void processor__refs(void *owner, capture_ref_fn ref, void *ctx)
{
	struct processor *p = owner;

	for (uint32_t i = 0; i < p->nprocs; i++)
		ref(ctx, CAPTURE_TABLE_PROCESSES, &p->procs[i].row);
	for (uint32_t i = 0; i < p->nthreads; i++)
		ref(ctx, CAPTURE_TABLE_THREADS, &p->threads[i].row);
	for (uint32_t i = 0; i < p->nmodules; i++)
		ref(ctx, CAPTURE_TABLE_MODULES, &p->modules[i].row);
	ref(ctx, CAPTURE_TABLE_EVENTS, &p->event_row);
	ref(ctx, CAPTURE_TABLE_EVENTS, &p->offcpu_event_row);
	for (uint32_t i = 0; i < p->nprobe_sites; i++) {
		ref(ctx, CAPTURE_TABLE_STRINGS, &p->probe_sites[i].name);
		ref(ctx, CAPTURE_TABLE_PROBE_SITES, &p->probe_sites[i].row);
		ref(ctx, CAPTURE_TABLE_PROCESSES, &p->probe_sites[i].proc_row);
	}
	attribution__refs(p->attribution, ref, ctx);
}

static void rows__forget(uint32_t *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		rows[i] = CAPTURE_NONE;
}

/* Forget every cached frame or cgroup row: made again on demand. */
static void processor__forget_rows(struct processor *p)
{
	for (uint32_t i = 0; i < p->nmodules; i++) {
		u64map__release(&p->modules[i].frames[0]);
		u64map__release(&p->modules[i].frames[1]);
		p->modules[i].unreadable_mark = CAPTURE_NONE;
	}
	free(p->chain_rows);
	p->chain_rows = NULL;
	p->nchain_rows = p->chain_rows_cap = 0;
	u64map__release(&p->anon_frames);
	u64map__release(&p->py_frames);
	u64map__release(&p->frame_role);
	rows__forget(p->truncation_frames, sizeof(p->truncation_frames) / sizeof(uint32_t));
	rows__forget(p->trunc_rows, sizeof(p->trunc_rows) / sizeof(uint32_t));
	rows__forget(p->py_marks, sizeof(p->py_marks) / sizeof(uint32_t));
	rows__forget(p->offcpu_marks, sizeof(p->offcpu_marks) / sizeof(uint32_t));
	for (uint32_t i = 0; i < p->nprocs; i++)
		jit__forget_rows(&p->procs[i]);
	attribution__forget_rows(p->attribution);
}

/* py_namer__retain: a code object of a process that exited is not needed
 * again (its samples were all released before its EXIT record). */
static bool pid__not_exited(void *ctx, pid_t pid)
{
	struct processor *p = ctx;
	uint64_t *idx = u64map__get(&p->pid_to_proc, (uint64_t)(uint32_t)pid + 1);

	return !idx || !p->procs[*idx].exited;
}

/* Free the modules no live process maps (the kernel's stays): their
 * compiled CFI and, in the symbolizer, their symbols and debug data.
 * Returns 0 or -ENOMEM (nothing dropped). */
static int processor__drop_modules(struct processor *p)
{
	uint32_t *to = malloc((p->nmodules ? p->nmodules : 1) * sizeof(*to));
	struct u64map syms = { 0 };
	uint32_t n = 0;
	int err = 0;

	if (!to)
		return -ENOMEM;
	for (uint32_t i = 0; i < p->nmodules; i++)
		to[i] = CAPTURE_NONE;
	for (uint32_t i = 0; i < p->nprocs; i++)
		for (uint32_t j = 0; j < p->procs[i].nmaps; j++)
			if (p->procs[i].maps[j].module < p->nmodules)
				to[p->procs[i].maps[j].module] = 0;
	if (p->kernel_module < p->nmodules)
		to[p->kernel_module] = 0;
	for (uint32_t i = 0; i < p->nmodules; i++) {
		if (to[i] == CAPTURE_NONE)
			continue;
		to[i] = n++;
		if (u64map__put(&syms, (uint64_t)(uintptr_t)p->modules[i].sym, to[i])) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	/* Nothing can fail from here on (a module the symbolizer cannot
	 * forget for want of memory stays there until the end). */
	n = 0;
	for (uint32_t i = 0; i < p->nmodules; i++) {
		struct module_state *ms = &p->modules[i];

		if (to[i] != CAPTURE_NONE) {
			p->modules[n++] = *ms;
			continue;
		}
		stacks__module_cfi_free(p, ms);
		u64map__release(&ms->frames[0]);
		u64map__release(&ms->frames[1]);
		(void)symbolizer__forget(p->sym, ms->sym);
	}
	p->nmodules = n;
	for (uint32_t i = 0; i < p->nprocs; i++)
		for (uint32_t j = 0; j < p->procs[i].nmaps; j++) {
			struct proc_mapping *m = &p->procs[i].maps[j];

			m->module = m->module == CAPTURE_NONE ? CAPTURE_NONE : to[m->module];
		}
	if (p->kernel_module != CAPTURE_NONE)
		p->kernel_module = to[p->kernel_module];
	p->stack_run_module = CAPTURE_NONE;
	u64map__release(&p->sym_to_module);
	p->sym_to_module = syms;
	syms = (struct u64map){ 0 };
cleanup:
	u64map__release(&syms);
	free(to);
	return err;
}

int processor__compact(struct processor *p)
{
	int err;

	py_namer__retain(p->py_namer, pid__not_exited, p);
	err = tasks__drop_exited(p);
	if (!err)
		err = processor__drop_modules(p);

	if (err)
		return err;
	processor__forget_rows(p);
	return capture_builder__compact(p->b, processor__refs, p);
}

void processor__state(const struct processor *p, struct processor_state *out)
{
	struct capture v;

	memset(out, 0, sizeof(*out));
	out->processes = p->nprocs;
	out->threads = p->nthreads;
	out->modules = p->nmodules;
	for (uint32_t i = 0; i < p->nprocs; i++)
		out->mappings += p->procs[i].nmaps;
	capture_builder__view(p->b, &v);
	out->rows = (uint64_t)v.nstrings + v.nmodules + v.nprocesses + v.nthreads + v.nmappings +
		    v.nframes + v.nstacks + v.ncgroups;
}
