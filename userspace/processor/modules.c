// SPDX-License-Identifier: MIT
/*
 * The modules of a recording's stacks (stacks.c makes the frames): one
 * capture module row per symbolizer module (build ID or content hash,
 * deferred or record-time symbolization), its DWARF problem stated once,
 * and its compiled CFI, opened on first need for the user-stack unwinder
 * (stacks__unwind_find).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "internal.h"

static char *hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
	return out;
}

uint32_t stacks__module_for_sym(struct processor *p, struct sym_module *sym, uint32_t kind,
				const char *path)
{
	uint64_t *idx = u64map__get(&p->sym_to_module, (uint64_t)(uintptr_t)sym);
	char bid_hex[2 * 64 + 1] = "";
	size_t bid_len;
	const uint8_t *bid;

	if (idx)
		return *idx;
	if (array__reserve((void **)&p->modules, &p->modules_cap, p->nmodules + 1,
			   sizeof(*p->modules)))
		return CAPTURE_NONE;
	bid = sym_module__build_id(sym, &bid_len);
	if (bid && bid_len <= 64)
		hex(bid, bid_len, bid_hex);
	else if (kind == CAPTURE_MODULE_KERNEL)
		snprintf(bid_hex, sizeof(bid_hex), "%s", symbolizer__kernel_build_id(p->sym));
	struct capture_module row = {
	    .path = capture_builder__string(p->b, path ? path : sym_module__path(sym)),
	    .build_id = capture_builder__string(p->b, bid_hex),
	    .kind = kind,
	    .flags = sym_module__error(sym) ? 0 : CAPTURE_MODULE_F_SYMBOLIZED,
	    .size = sym_module__size(sym),
	    .content_hash = bid_hex[0] ? 0 : sym_module__content_hash(sym),
	};
	if (row.content_hash)
		row.flags |= CAPTURE_MODULE_F_CONTENT_HASH;
	struct module_state *ms = &p->modules[p->nmodules];

	memset(ms, 0, sizeof(*ms));
	ms->unreadable_mark = CAPTURE_NONE;
	ms->sym = sym;
	ms->kind = kind;
	ms->row = capture_builder__add_module(p->b, &row);
	if (sym_module__error(sym))
		processor__problem(p, MS_PROBLEM_MODULE_UNREADABLE);
	/* Deferred: only a file proved by its build ID waits for `symbolize`
	 * (stacks__module_findable may still take that back), and never the
	 * CPython interpreter while Python frames are walked: its activations
	 * place interpreted frames by name now (python__splice). */
	ms->deferred = p->symbolize_deferred && kind == CAPTURE_MODULE_FILE && bid_hex[0] &&
		       !(p->py && python__module_has_eval(sym));
	if (p->symbolize_deferred && !ms->deferred) {
		struct capture_module *mrow = capture_builder__module(p->b, ms->row);

		if (mrow)
			mrow->flags |= CAPTURE_MODULE_F_RECORD_TIME;
	}
	if (ms->deferred) {
		struct capture_module *mrow = capture_builder__module(p->b, ms->row);

		if (mrow)
			mrow->flags &= ~CAPTURE_MODULE_F_SYMBOLIZED;
	}
	if (u64map__put(&p->sym_to_module, (uint64_t)(uintptr_t)sym, p->nmodules))
		return CAPTURE_NONE;
	return p->nmodules++;
}

/* Records the module's DWARF problem (once per module) as a counted problem
 * and meta "symbols.problem.ID" = "PATH (BUILD_ID): TEXT" (ID: the build ID's
 * first 16 hex digits, or a hash of the path). */
void stacks__module_check_dwarf(struct processor *p, struct module_state *ms)
{
	const struct capture_module *row;
	const char *why;
	char key[48], val[1024];
	size_t bid_len;
	const uint8_t *bid;
	char hexid[2 * 64 + 1] = "";

	if (ms->dwarf_checked)
		return;
	ms->dwarf_checked = true;
	why = sym_module__dwarf_error(ms->sym);
	if (!why)
		return;
	processor__problem(p, MS_PROBLEM_MODULE_DEBUG_PARTIAL);
	row = capture_builder__module(p->b, ms->row);
	bid = sym_module__build_id(ms->sym, &bid_len);
	if (bid && bid_len <= 64)
		hex(bid, bid_len, hexid);
	(void)row;
	/* Keyed by the module, not by a count: a long recording that frees and
	 * loads a module again (processor__compact) states its problem once. */
	if (hexid[0]) {
		snprintf(key, sizeof(key), "symbols.problem.%.16s", hexid);
	} else {
		uint64_t h = 1469598103934665603ull; /* FNV-1a 64 of the path */

		for (const char *c = sym_module__path(ms->sym); c && *c; c++)
			h = (h ^ (uint8_t)*c) * 1099511628211ull;
		snprintf(key, sizeof(key), "symbols.problem.%016" PRIx64, h);
	}
	p->nmodule_problems++;
	snprintf(val, sizeof(val), "%s (%s): %s", sym_module__path(ms->sym),
		 hexid[0] ? hexid : "no build ID", why);
	capture_builder__set_meta(p->b, key, val);
}

/* This kernel's vdso image, as mapped in our own process. */
static struct unwind_module *open_vdso_cfi(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	struct unwind_module *m = NULL;

	if (!base || !f) {
		if (f)
			fclose(f);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;

		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && s == base && strstr(line, "[vdso]")) {
			m = unwind_module__open_image((const void *)base, e - s);
			break;
		}
	}
	fclose(f);
	return m;
}

/*
 * The module's compiled CFI, opened on first need (NULL if it has none).
 * Read from the file the symbols were read from and verified by build ID
 * (sym_module__open_file: the /proc/PID/map_files descriptor for deleted,
 * replaced, memfd and other-namespace files), never from whatever its path
 * holds now.
 */
struct unwind_module *stacks__module_cfi(struct processor *p, struct module_state *ms)
{
	struct unwind_module_stats st;
	int fd;

	if (ms->cfi_tried)
		return ms->cfi;
	ms->cfi_tried = true;
	if (ms->kind == CAPTURE_MODULE_VDSO) {
		ms->cfi = open_vdso_cfi();
	} else if (ms->kind == CAPTURE_MODULE_FILE) {
		fd = sym_module__open_file(ms->sym);
		if (fd >= 0) {
			ms->cfi = unwind_module__open_fd(fd);
			close(fd);
		}
	}
	if (!ms->cfi) {
		processor__problem(p, MS_PROBLEM_MODULE_NO_CFI);
		return NULL;
	}
	unwind_module__stats(ms->cfi, &st);
	p->cfi_bytes += st.bytes;
	if (p->cfi_bytes > p->cfi_peak)
		p->cfi_peak = p->cfi_bytes;
	return ms->cfi;
}

void stacks__module_cfi_free(struct processor *p, struct module_state *ms)
{
	struct unwind_module_stats st;

	if (ms->cfi) {
		unwind_module__stats(ms->cfi, &st);
		p->cfi_bytes -= st.bytes < p->cfi_bytes ? st.bytes : p->cfi_bytes;
	}
	unwind_module__free(ms->cfi);
	ms->cfi = NULL;
}

bool stacks__unwind_find(void *vctx, uint64_t pc, struct unwind_map *map)
{
	struct stacks_unwind_ctx *ctx = vctx;
	const struct proc_mapping *m = tasks__find_mapping(ctx->ps, pc);
	struct module_state *ms;
	uint64_t vaddr;

	/* Code without CFI (JIT code, V8's builtins in node's text) is
	 * stepped by the frame-pointer rule: fp_step everywhere. */
	if (!m)
		return false;
	map->fp_step = true;
	if (m->module == CAPTURE_NONE) {
		if (jit__unwind_find(ctx->p, ctx->ps, pc, map))
			return true;
		/* Anonymous code no function names: only this pc, so a function
		 * named later in the mapping gets its proof. */
		map->module = NULL;
		map->bias = 0;
		map->start = pc;
		map->end = pc + 1;
		return true;
	}
	ms = &ctx->p->modules[m->module];
	map->module = stacks__module_cfi(ctx->p, ms);
	map->bias = 0;
	if (map->module) {
		sym_module__to_vaddr(ms->sym, pc - m->start + m->pgoff, &vaddr);
		map->bias = pc - vaddr;
	}
	map->start = m->start;
	map->end = m->end;
	return true;
}

void stacks__module_findable(struct processor *p, uint32_t module, bool findable_later)
{
	struct module_state *ms = &p->modules[module];
	struct capture_module *mrow;

	if (!ms->deferred || findable_later)
		return;
	/* Frames made before this mapping was seen stay deferred; from now on
	 * the module is symbolized while recording. */
	ms->deferred = false;
	mrow = capture_builder__module(p->b, ms->row);
	if (mrow) {
		mrow->flags |= CAPTURE_MODULE_F_RECORD_TIME;
		if (!sym_module__error(ms->sym))
			mrow->flags |= CAPTURE_MODULE_F_SYMBOLIZED;
	}
}
