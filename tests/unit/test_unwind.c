// SPDX-License-Identifier: MIT
/*
 * userspace/unwind: compiled CFI tables and the copied-bytes unwinder, with
 * libdw as the reference.
 *
 *  1. table_vs_libdw: at many PCs of libc.so.6, python3.11, ld.so and this
 *     binary, the compiled row's rules equal dwarf_cfi_addrframe's answer
 *     (.eh_frame, then .debug_frame where .eh_frame has none).
 *  2. samples_vs_libdw: real samples of this process (SIGPROF while a
 *     frame-pointer-less call chain sorts with a CPU-burning comparator;
 *     each signal gives the interrupted context and the handler's own
 *     context, which unwinds through __restore_rt).  Each is unwound by us
 *     and by libdwfl's unwinder over the same copied bytes; the pc lists and
 *     activation flags must be identical and reach main.
 *  3. truncation / garbage / loop / limits / PLT expression: typed endings.
 *  4. speed: frames/s, ours and libdw's, printed only.
 *
 * Built without frame pointers where it matters: the call chain uses
 * optimize("omit-frame-pointer"), so `make check` (-fno-omit-frame-pointer)
 * keeps the property.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/abi/kunwind.h"
#include "userspace/unwind/unwind.h"
#include "userspace/unwind/unwind_internal.h"

/* The in-kernel unwinder reads the compact rows as they are
 * (unwind_module__table): same layout, same flag and rule values. */
_Static_assert(sizeof(struct unwind_row) == sizeof(struct ms_ku_row), "row size");
_Static_assert(__builtin_offsetof(struct unwind_row, cfa_reg) ==
		   __builtin_offsetof(struct ms_ku_row, cfa_reg) &&
		   __builtin_offsetof(struct unwind_row, flags) ==
		       __builtin_offsetof(struct ms_ku_row, flags) &&
		   __builtin_offsetof(struct unwind_row, kinds) ==
		       __builtin_offsetof(struct ms_ku_row, kinds) &&
		   __builtin_offsetof(struct unwind_row, off8) ==
		       __builtin_offsetof(struct ms_ku_row, off8),
	       "row fields");
_Static_assert(UNWIND_ROW_NONE == MS_KU_ROW_NONE && UNWIND_ROW_FULL == MS_KU_ROW_FULL &&
		   UNWIND_ROW_SIGNAL == MS_KU_ROW_SIGNAL,
	       "row flags");
_Static_assert(UNWIND_RULE_UNDEF == MS_KU_RULE_UNDEF && UNWIND_RULE_SAME == MS_KU_RULE_SAME &&
		   UNWIND_RULE_OFFSET == MS_KU_RULE_OFFSET &&
		   UNWIND_RULE_VAL_OFFSET == MS_KU_RULE_VAL_OFFSET,
	       "rule kinds");

#define LIBC_PATH   "/lib/x86_64-linux-gnu/libc.so.6"
#define PYTHON_PATH "/usr/bin/python3.11"
#define LDSO_PATH   "/lib64/ld-linux-x86-64.so.2"

#define STACK_COPY  (16 * 1024) /* bytes per sample, the recorder's default */
#define MAX_SAMPLES 64
#define MAX_FRAMES  256

/* ------------------------------------------------------------------------ */
/* Assembly helpers: capture registers and copy stack without instrumentation */

/*
 * size_t test_unwind_capture(struct unwind_regs *regs, uint8_t *dst,
 *                            size_t max, uint64_t stack_end)
 * Records the caller's registers as they are right after the call returns
 * (ip = return address, sp = caller's sp) and copies min(max, stack_end - sp)
 * bytes from sp into dst; returns the length copied.
 *
 * void test_unwind_copy(void *dst, const void *src, size_t len): rep movsb,
 * so ASan does not check the source (stack redzones).
 *
 * uint64_t test_unwind_df_call(uint64_t (*fn)(uint64_t), uint64_t arg):
 * returns fn(arg) + 1; its CFI is in a hand-written .debug_frame only (no
 * .eh_frame FDE), so unwinding through it exercises the .debug_frame path.
 *
 * test_unwind_nocfi: a few bytes of code without any CFI.
 */
__asm__(".text\n"
	".p2align 4\n"
	".globl test_unwind_capture\n"
	".type test_unwind_capture,@function\n"
	"test_unwind_capture:\n"
	".cfi_startproc\n"
	"	movq (%rsp), %rax\n"
	"	movq %rax, 0(%rdi)\n"
	"	leaq 8(%rsp), %rax\n"
	"	movq %rax, 8(%rdi)\n"
	"	movq %rbp, 16(%rdi)\n"
	"	movq %rbx, 24(%rdi)\n"
	"	movq %r12, 32(%rdi)\n"
	"	movq %r13, 40(%rdi)\n"
	"	movq %r14, 48(%rdi)\n"
	"	movq %r15, 56(%rdi)\n"
	"	movq %rcx, %r8\n"
	"	subq %rax, %r8\n"
	"	cmpq %r8, %rdx\n"
	"	cmovaq %r8, %rdx\n"
	"	movq %rdx, %rcx\n"
	"	movq %rsi, %rdi\n"
	"	movq %rax, %rsi\n"
	"	movq %rdx, %rax\n"
	"	rep movsb\n"
	"	ret\n"
	".cfi_endproc\n"
	".size test_unwind_capture, .-test_unwind_capture\n"
	"\n"
	".p2align 4\n"
	".globl test_unwind_copy\n"
	".type test_unwind_copy,@function\n"
	"test_unwind_copy:\n"
	".cfi_startproc\n"
	"	movq %rdx, %rcx\n"
	"	rep movsb\n"
	"	ret\n"
	".cfi_endproc\n"
	".size test_unwind_copy, .-test_unwind_copy\n"
	"\n"
	".p2align 4\n"
	".globl test_unwind_df_call\n"
	".type test_unwind_df_call,@function\n"
	"test_unwind_df_call:\n"
	"	pushq %rbx\n"	   /* 0: 1 byte */
	"	subq $16, %rsp\n"  /* 1: 4 bytes */
	"	movq %rdi, %rbx\n" /* 5: 3 bytes */
	"	movq %rsi, %rdi\n" /* 8: 3 bytes */
	"	call *%rbx\n"	   /* 11: 2 bytes */
	"	addq $1, %rax\n"   /* 13: 4 bytes */
	"	addq $16, %rsp\n"  /* 17: 4 bytes */
	"	popq %rbx\n"	   /* 21: 1 byte */
	"	ret\n"		   /* 22: 1 byte */
	".Ldf_func_end:\n"
	".size test_unwind_df_call, .-test_unwind_df_call\n"
	"\n"
	".p2align 4\n"
	".globl test_unwind_nocfi\n"
	".type test_unwind_nocfi,@function\n"
	"test_unwind_nocfi:\n"
	"	nop\n"
	"	nop\n"
	"	ret\n"
	".size test_unwind_nocfi, .-test_unwind_nocfi\n"
	"\n"
	/* DWARF 5 section 6.4.1 CIE and FDE, 32-bit DWARF, version 1. */
	".pushsection .debug_frame,\"\",@progbits\n"
	".Ldf_cie:\n"
	"	.long .Ldf_cie_end - .Ldf_cie_start\n"
	".Ldf_cie_start:\n"
	"	.long 0xffffffff\n" /* CIE id */
	"	.byte 1\n"	    /* version */
	"	.asciz \"\"\n"	    /* augmentation */
	"	.uleb128 1\n"	    /* code alignment */
	"	.sleb128 -8\n"	    /* data alignment */
	"	.byte 16\n"	    /* return address column: rip */
	"	.byte 0x0c, 7, 8\n" /* DW_CFA_def_cfa rsp, 8 */
	"	.byte 0x90, 1\n"    /* DW_CFA_offset rip, CFA-8 */
	"	.balign 8, 0\n"
	".Ldf_cie_end:\n"
	"	.long .Ldf_fde_end - .Ldf_fde_start\n"
	".Ldf_fde_start:\n"
	"	.long .Ldf_cie\n"
	"	.quad test_unwind_df_call\n"
	"	.quad .Ldf_func_end - test_unwind_df_call\n"
	"	.byte 0x41\n"	  /* advance 1 */
	"	.byte 0x0e, 16\n" /* DW_CFA_def_cfa_offset 16 */
	"	.byte 0x83, 2\n"  /* DW_CFA_offset rbx, CFA-16 */
	"	.byte 0x44\n"	  /* advance 4 */
	"	.byte 0x0e, 32\n" /* DW_CFA_def_cfa_offset 32 */
	"	.byte 0x50\n"	  /* advance 16 (to the pop) */
	"	.byte 0x0e, 16\n" /* DW_CFA_def_cfa_offset 16 */
	"	.byte 0x41\n"	  /* advance 1 (to the ret) */
	"	.byte 0x0e, 8\n"  /* DW_CFA_def_cfa_offset 8 */
	"	.byte 0xc3\n"	  /* DW_CFA_restore rbx */
	"	.balign 8, 0\n"
	".Ldf_fde_end:\n"
	".popsection\n");

size_t test_unwind_capture(struct unwind_regs *regs, uint8_t *dst, size_t max, uint64_t stack_end);
void test_unwind_copy(void *dst, const void *src, size_t len);
uint64_t test_unwind_df_call(uint64_t (*fn)(uint64_t), uint64_t arg);
void test_unwind_nocfi(void);

/* ------------------------------------------------------------------------ */
/* This process's mappings, as the processor would give them */

struct tmap {
	uint64_t start, end, bias;
	struct unwind_module *module;
	char path[PATH_MAX];
};

struct tmodule {
	char path[PATH_MAX];
	struct unwind_module *module;
};

static struct {
	struct tmap maps[256];
	size_t nmaps;
	struct tmodule modules[128];
	size_t nmodules;
	uint64_t stack_lo, stack_end; /* [stack] */
	uint64_t vdso_start, vdso_end;
	Dwfl *dwfl;
	size_t find_calls;
} proc;

/* Load bias of a mapping from file offset pgoff: start - vaddr(pgoff). */
static bool mapping_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		uint64_t page_off = ph.p_offset & ~(uint64_t)0xfff;
		if (pgoff >= page_off && pgoff < ph.p_offset + ph.p_filesz) {
			*bias = start - pgoff - (ph.p_vaddr - ph.p_offset);
			return true;
		}
	}
	return false;
}

static struct unwind_module *module_for(const char *path)
{
	for (size_t i = 0; i < proc.nmodules; i++)
		if (strcmp(proc.modules[i].path, path) == 0)
			return proc.modules[i].module;
	if (proc.nmodules == sizeof(proc.modules) / sizeof(proc.modules[0]))
		return NULL;
	struct tmodule *t = &proc.modules[proc.nmodules++];
	snprintf(t->path, sizeof(t->path), "%s", path);
	if (strcmp(path, "[vdso]") == 0)
		t->module = unwind_module__open_image((const void *)(uintptr_t)proc.vdso_start,
						      proc.vdso_end - proc.vdso_start);
	else
		t->module = unwind_module__open(path);
	return t->module;
}

static void load_maps(void)
{
	char line[PATH_MAX + 128];
	FILE *f = fopen("/proc/self/maps", "re");
	assert_non_null(f);
	proc.nmaps = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		char perms[8];
		int path_at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &pgoff,
			   &path_at) < 4)
			continue;
		char *path = path_at ? line + path_at : line + strlen(line);
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(path, "[stack]") == 0) {
			proc.stack_lo = start;
			proc.stack_end = end;
		}
		if (strcmp(path, "[vdso]") == 0) {
			proc.vdso_start = start;
			proc.vdso_end = end;
		}
		if (perms[2] != 'x' || (path[0] != '/' && strcmp(path, "[vdso]") != 0))
			continue;
		if (proc.nmaps == sizeof(proc.maps) / sizeof(proc.maps[0]))
			break;
		struct tmap *m = &proc.maps[proc.nmaps];
		m->start = start;
		m->end = end;
		snprintf(m->path, sizeof(m->path), "%s", path);
		Elf *elf;
		int fd = -1;
		if (path[0] == '[') {
			elf = elf_memory((char *)(uintptr_t)start, end - start);
		} else {
			fd = open(path, O_RDONLY | O_CLOEXEC);
			elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
		}
		bool ok = elf && mapping_bias(elf, start, pgoff, &m->bias);
		elf_end(elf);
		if (fd >= 0)
			close(fd);
		if (!ok)
			continue;
		m->module = module_for(path);
		if (m->module)
			proc.nmaps++;
	}
	fclose(f);
}

static bool find_map(void *ctx, uint64_t pc, struct unwind_map *out)
{
	proc.find_calls++;
	for (size_t i = 0; i < proc.nmaps; i++) {
		const struct tmap *m = &proc.maps[i];
		if (pc >= m->start && pc < m->end) {
			out->module = m->module;
			out->bias = m->bias;
			out->start = m->start;
			out->end = m->end;
			return true;
		}
	}
	return false;
}

static const struct tmap *map_of_path(const char *suffix)
{
	size_t ls = strlen(suffix);
	for (size_t i = 0; i < proc.nmaps; i++) {
		size_t lp = strlen(proc.maps[i].path);
		if (lp >= ls && strcmp(proc.maps[i].path + lp - ls, suffix) == 0)
			return &proc.maps[i];
	}
	return NULL;
}

static const struct tmap *map_of_pc(uint64_t pc)
{
	for (size_t i = 0; i < proc.nmaps; i++)
		if (pc >= proc.maps[i].start && pc < proc.maps[i].end)
			return &proc.maps[i];
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* libdwfl's unwinder over the same copied bytes */

struct ref_sample {
	const struct unwind_regs *regs;
	const uint8_t *stack;
	size_t len;
	uint64_t pcs[MAX_FRAMES];
	bool activation[MAX_FRAMES];
	size_t n;
	size_t max;
};

static struct ref_sample *ref_cur;

static pid_t ref_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return (pid_t)syscall(SYS_gettid);
}

static bool ref_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

/* Serves only the copied bytes; fails outside them. */
static bool ref_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct ref_sample *s = ref_cur;
	uint64_t off = addr - s->regs->sp;
	if (addr < s->regs->sp || s->len < 8 || off > s->len - 8)
		return false;
	memcpy(result, s->stack + off, 8);
	return true;
}

static bool ref_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_regs *r = ref_cur->regs;
	Dwarf_Word v;
	const struct {
		int reg;
		uint64_t val;
	} set[] = {{3, r->bx},	 {6, r->bp},   {7, r->sp},   {12, r->r12},
		   {13, r->r13}, {14, r->r14}, {15, r->r15}, {16, r->ip}};
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		v = set[i].val;
		if (!dwfl_thread_state_registers(thread, set[i].reg, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks ref_thread_callbacks = {
    .next_thread = ref_next_thread,
    .get_thread = ref_get_thread,
    .memory_read = ref_memory_read,
    .set_initial_registers = ref_set_initial_registers,
};

static int ref_frame(Dwfl_Frame *state, void *arg)
{
	struct ref_sample *s = arg;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	if (s->n == s->max)
		return DWARF_CB_ABORT;
	s->pcs[s->n] = pc;
	s->activation[s->n] = act;
	s->n++;
	return DWARF_CB_OK;
}

static void ref_setup(void)
{
	static const Dwfl_Callbacks callbacks = {
	    .find_elf = dwfl_linux_proc_find_elf,
	    .find_debuginfo = dwfl_standard_find_debuginfo,
	};
	proc.dwfl = dwfl_begin(&callbacks);
	assert_non_null(proc.dwfl);
	assert_int_equal(dwfl_linux_proc_report(proc.dwfl, getpid()), 0);
	assert_int_equal(dwfl_report_end(proc.dwfl, NULL, NULL), 0);
	static struct ref_sample dummy;
	assert_true(dwfl_attach_state(proc.dwfl, NULL, getpid(), &ref_thread_callbacks, &dummy));
}

static void ref_unwind(struct ref_sample *s, const struct unwind_regs *regs, const uint8_t *stack,
		       size_t len, size_t max)
{
	s->regs = regs;
	s->stack = stack;
	s->len = len;
	s->n = 0;
	s->max = max;
	ref_cur = s;
	dwfl_getthread_frames(proc.dwfl, (pid_t)syscall(SYS_gettid), ref_frame, s);
}

static const char *sym_name(uint64_t pc, bool activation)
{
	uint64_t a = activation ? pc : pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(proc.dwfl, a);
	const char *name = mod ? dwfl_module_addrname(mod, a) : NULL;
	return name ? name : "??";
}

static void print_stack(const char *who, const uint64_t *pcs, const uint8_t *flags, const bool *act,
			size_t n)
{
	fprintf(stderr, "  %s (%zu frames):\n", who, n);
	for (size_t i = 0; i < n; i++) {
		bool a = flags ? (flags[i] & UNWIND_FRAME_ACTIVATION) : act[i];
		fprintf(stderr, "    #%-3zu %#" PRIx64 "%s %s\n", i, pcs[i], a ? "*" : " ",
			sym_name(pcs[i], a));
	}
}

/* ------------------------------------------------------------------------ */
/* Group setup */

static int setup(void **state)
{
	elf_version(EV_CURRENT);
	load_maps();
	if (proc.stack_end == 0 || proc.nmaps == 0)
		return -1;
	ref_setup();
	return 0;
}

static int teardown(void **state)
{
	for (size_t i = 0; i < proc.nmodules; i++)
		unwind_module__free(proc.modules[i].module);
	proc.nmodules = 0;
	proc.nmaps = 0;
	if (proc.dwfl)
		dwfl_end(proc.dwfl);
	proc.dwfl = NULL;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* 1. Compiled table vs dwarf_cfi_addrframe */

struct oracle {
	int fd;
	Elf *elf;
	Dwarf_CFI *eh;
	Dwarf *dbg;
	Dwarf_CFI *debug_frame; /* owned by dbg */
	Dwarf_Op ops[2][4096];	/* copies of expression rules, per side */
};

static void oracle_open(struct oracle *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	o->fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(o->fd >= 0);
	o->elf = elf_begin(o->fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(o->elf);
	o->eh = dwarf_getcfi_elf(o->elf);
	o->dbg = dwarf_begin_elf(o->elf, DWARF_C_READ, NULL);
	if (o->dbg)
		o->debug_frame = dwarf_getcfi(o->dbg);
}

static void oracle_close(struct oracle *o)
{
	if (o->eh)
		dwarf_cfi_end(o->eh);
	if (o->dbg)
		dwarf_end(o->dbg);
	elf_end(o->elf);
	close(o->fd);
}

/* libdw's rule for one register, in our semantic form. */
static void oracle_rule(Dwarf_Op *ops, size_t nops, int rc, bool cfa, struct unwind_rule *r,
			const Dwarf_Op **rops)
{
	memset(r, 0, sizeof(*r));
	*rops = NULL;
	if (cfa) {
		if (rc != 0 || nops == 0) {
			r->kind = UNWIND_CFA_INVALID;
		} else if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < 17) {
			r->kind = UNWIND_CFA_REG_OFFSET;
			r->reg = (uint8_t)ops[0].number;
			r->off = (int64_t)ops[0].number2;
		} else {
			r->kind = UNWIND_CFA_EXPR;
			r->nops = (uint16_t)nops;
			*rops = ops;
		}
		return;
	}
	if (rc != 0) {
		r->kind = UNWIND_RULE_INVALID;
	} else if (nops == 0) {
		r->kind = ops == NULL ? UNWIND_RULE_SAME : UNWIND_RULE_UNDEF;
	} else if (ops[0].atom == DW_OP_call_frame_cfa &&
		   (nops == 1 || (nops == 2 && ops[1].atom == DW_OP_plus_uconst))) {
		r->kind = UNWIND_RULE_OFFSET;
		r->off = nops == 2 ? (int64_t)ops[1].number : 0;
	} else if (ops[0].atom == DW_OP_call_frame_cfa && nops >= 2 &&
		   ops[nops - 1].atom == DW_OP_stack_value &&
		   (nops == 2 || (nops == 3 && ops[1].atom == DW_OP_plus_uconst))) {
		r->kind = UNWIND_RULE_VAL_OFFSET;
		r->off = nops == 3 ? (int64_t)ops[1].number : 0;
	} else if (nops == 1 && ops[0].atom == DW_OP_regx) {
		r->kind = UNWIND_RULE_REGISTER;
		r->reg = (uint8_t)ops[0].number;
	} else {
		r->kind = UNWIND_RULE_EXPR;
		r->nops = (uint16_t)nops;
		*rops = ops;
	}
}

static bool ops_equal(const Dwarf_Op *a, const Dwarf_Op *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].atom != b[i].atom || a[i].number != b[i].number ||
		    a[i].number2 != b[i].number2 || a[i].offset != b[i].offset)
			return false;
	return true;
}

static bool rule_equal(const struct unwind_rule *mine, const Dwarf_Op *mine_ops,
		       const struct unwind_rule *ref, const Dwarf_Op *ref_ops, bool cfa)
{
	if (mine->kind != ref->kind)
		return false;
	bool expr = cfa ? mine->kind == UNWIND_CFA_EXPR : mine->kind == UNWIND_RULE_EXPR;
	bool reg = cfa ? mine->kind == UNWIND_CFA_REG_OFFSET : mine->kind == UNWIND_RULE_REGISTER;
	bool off = cfa ? mine->kind == UNWIND_CFA_REG_OFFSET
		       : (mine->kind == UNWIND_RULE_OFFSET || mine->kind == UNWIND_RULE_VAL_OFFSET);
	if (reg && mine->reg != ref->reg)
		return false;
	if (off && mine->off != ref->off)
		return false;
	if (expr &&
	    (mine->nops != ref->nops || !ops_equal(mine_ops + mine->op, ref_ops, ref->nops)))
		return false;
	return true;
}

struct table_stats {
	size_t pcs, with_cfi, full, expr_cfa, signal, debug_frame;
};

/* Compares our row at vaddr with libdw's; returns false (after printing) on a mismatch. */
static bool compare_at(struct oracle *o, const struct unwind_module *m, uint64_t vaddr,
		       struct table_stats *ts, uint64_t *row_start, uint64_t *row_end)
{
	Dwarf_Frame *f = NULL;
	bool from_debug = false;
	int rc = o->eh ? dwarf_cfi_addrframe(o->eh, vaddr, &f) : -1;
	if (rc != 0 && o->debug_frame) {
		rc = dwarf_cfi_addrframe(o->debug_frame, vaddr, &f);
		from_debug = rc == 0;
	}
	struct unwind_rules mine;
	bool have = unwind_module__rules_at(m, vaddr, &mine);
	ts->pcs++;
	*row_start = *row_end = 0;
	if (rc != 0) {
		if (have) {
			fprintf(stderr, "%#" PRIx64 ": libdw has no CFI, we have a row\n", vaddr);
			return false;
		}
		return true;
	}
	bool ok = true;
	Dwarf_Addr rs, re;
	bool signal;
	int ra = dwarf_frame_info(f, &rs, &re, &signal);
	*row_start = rs;
	*row_end = re;
	if (!have) {
		fprintf(stderr,
			"%#" PRIx64 ": libdw has a row [%#" PRIx64 ", %#" PRIx64 "), we none\n",
			vaddr, rs, re);
		free(f);
		return false;
	}
	ts->with_cfi++;
	ts->full += mine.full;
	ts->signal += mine.signal;
	ts->debug_frame += mine.debug_frame;
	if (mine.signal != signal || mine.ra_reg != ra || mine.debug_frame != from_debug ||
	    vaddr < mine.start || vaddr >= mine.end) {
		fprintf(stderr,
			"%#" PRIx64 ": signal %d/%d ra %d/%d debug_frame %d/%d row [%#" PRIx64
			", %#" PRIx64 ")\n",
			vaddr, mine.signal, signal, mine.ra_reg, ra, mine.debug_frame, from_debug,
			mine.start, mine.end);
		ok = false;
	}
	Dwarf_Op *ops, mem[3];
	size_t nops;
	struct unwind_rule ref;
	const Dwarf_Op *ref_ops;
	rc = dwarf_frame_cfa(f, &ops, &nops);
	oracle_rule(ops, nops, rc, true, &ref, &ref_ops);
	ts->expr_cfa += ref.kind == UNWIND_CFA_EXPR;
	if (!rule_equal(&mine.cfa, mine.ops, &ref, ref_ops, true)) {
		fprintf(stderr,
			"%#" PRIx64 ": CFA rule kind %d/%d reg %d/%d off %" PRId64 "/%" PRId64 "\n",
			vaddr, mine.cfa.kind, ref.kind, mine.cfa.reg, ref.reg, mine.cfa.off,
			ref.off);
		ok = false;
	}
	for (int reg = 0; reg < UNWIND_NREGS; reg++) {
		rc = dwarf_frame_register(f, reg, mem, &ops, &nops);
		oracle_rule(ops, nops, rc, false, &ref, &ref_ops);
		/* The documented correction of libdw's x86-64 ABI defaults (unwind_module.c). */
		if (unwind__libdw_abi_slip()) {
			if (reg == 0 && ref.kind == UNWIND_RULE_SAME)
				ref.kind = UNWIND_RULE_UNDEF;
			if (reg == UNWIND_REG_BX && ref.kind == UNWIND_RULE_UNDEF)
				ref.kind = UNWIND_RULE_SAME;
		}
		if (!rule_equal(&mine.regs[reg], mine.ops, &ref, ref_ops, false)) {
			fprintf(stderr,
				"%#" PRIx64 ": r%d rule kind %d/%d reg %d/%d off %" PRId64
				"/%" PRId64 "\n",
				vaddr, reg, mine.regs[reg].kind, ref.kind, mine.regs[reg].reg,
				ref.reg, mine.regs[reg].off, ref.off);
			ok = false;
		}
	}
	free(f);
	return ok;
}

/* FDE initial locations from .eh_frame_hdr's binary search table (GNU ld's encodings). */
static size_t eh_frame_hdr_starts(Elf *elf, uint64_t **out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	*out = NULL;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".eh_frame_hdr") != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		const uint8_t *p = d->d_buf;
		if (d->d_size < 12 || p[0] != 1 || p[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
		    p[2] != DW_EH_PE_udata4 || p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			return 0;
		uint32_t count;
		memcpy(&count, p + 8, 4);
		if (12 + (size_t)count * 8 > d->d_size)
			return 0;
		*out = calloc(count, sizeof(**out));
		for (uint32_t i = 0; i < count; i++) {
			int32_t loc;
			memcpy(&loc, p + 12 + (size_t)i * 8, 4);
			(*out)[i] = sh.sh_addr + (uint64_t)(int64_t)loc;
		}
		return count;
	}
	return 0;
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Every FDE's start, start+1, middle, end-1; each answered row's first, last
 * and next byte; and random PCs over the FDEs' span. */
static void compare_module(const char *path, const uint64_t *extra, size_t nextra,
			   struct table_stats *total)
{
	struct unwind_module *m = unwind_module__open(path);
	assert_non_null(m);
	struct oracle *o = malloc(sizeof(*o));
	assert_non_null(o);
	oracle_open(o, path);
	uint64_t *starts;
	size_t n = eh_frame_hdr_starts(o->elf, &starts);
	assert_true(n > 0);
	struct table_stats ts = {0};
	size_t bad = 0;
	uint64_t rs, re, ignored_s, ignored_e;
	for (size_t i = 0; i < n && bad < 10; i++) {
		uint64_t next = i + 1 < n ? starts[i + 1] : starts[i] + 64;
		uint64_t probes[4] = {starts[i], starts[i] + 1, starts[i] + (next - starts[i]) / 2,
				      next - 1};
		for (int k = 0; k < 4; k++) {
			if (!compare_at(o, m, probes[k], &ts, &rs, &re)) {
				bad++;
				continue;
			}
			if (re > rs) {
				bad += !compare_at(o, m, rs, &ts, &ignored_s, &ignored_e);
				bad += !compare_at(o, m, re - 1, &ts, &ignored_s, &ignored_e);
				bad += !compare_at(o, m, re, &ts, &ignored_s, &ignored_e);
			}
		}
	}
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint64_t lo = starts[0], span = starts[n - 1] + 4096 - lo;
	for (int i = 0; i < 20000 && bad < 10; i++)
		bad += !compare_at(o, m, lo + xorshift(&seed) % span, &ts, &rs, &re);
	for (size_t i = 0; i < nextra && bad < 10; i++)
		bad += !compare_at(o, m, extra[i], &ts, &rs, &re);

	struct unwind_module_stats st;
	unwind_module__stats(m, &st);
	printf("  table %-40s %7zu PCs compared (%zu with CFI, %zu full rows, %zu CFA expressions, "
	       "%zu signal, %zu .debug_frame); %zu FDEs, %zu rows (%zu full), %zu KiB\n",
	       path, ts.pcs, ts.with_cfi, ts.full, ts.expr_cfa, ts.signal, ts.debug_frame, st.fdes,
	       st.rows, st.full_rows, st.bytes / 1024);
	total->pcs += ts.pcs;
	total->with_cfi += ts.with_cfi;
	total->full += ts.full;
	total->expr_cfa += ts.expr_cfa;
	total->signal += ts.signal;
	total->debug_frame += ts.debug_frame;
	free(starts);
	oracle_close(o);
	free(o);
	unwind_module__free(m);
	assert_int_equal(bad, 0);
}

static void test_table_vs_libdw(void **state)
{
	struct table_stats total = {0};
	char self[PATH_MAX];
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(l > 0);
	self[l] = '\0';

	/* This binary: its .debug_frame-only function, byte by byte. */
	const struct tmap *me = map_of_pc((uint64_t)(uintptr_t)test_unwind_df_call);
	assert_non_null(me);
	uint64_t extra[32];
	for (int i = 0; i < 32; i++)
		extra[i] = (uint64_t)(uintptr_t)test_unwind_df_call - me->bias + (uint64_t)i;

	compare_module(LIBC_PATH, NULL, 0, &total);
	compare_module(PYTHON_PATH, NULL, 0, &total);
	compare_module(LDSO_PATH, NULL, 0, &total);
	compare_module(self, extra, 32, &total);
	printf("  table total: %zu PCs compared, %zu with CFI, %zu in full rows, %zu CFA "
	       "expressions, %zu signal-frame rows, %zu .debug_frame rows\n",
	       total.pcs, total.with_cfi, total.full, total.expr_cfa, total.signal,
	       total.debug_frame);
	assert_true(total.pcs > 10000);
	assert_true(total.expr_cfa > 0);    /* PLT entries */
	assert_true(total.signal > 0);	    /* __restore_rt */
	assert_true(total.debug_frame > 0); /* test_unwind_df_call */
}

/* A value that is easy to get wrong: rbx is callee-saved, so a libc function
 * that never saves it leaves the caller's rbx in place ("same value"), and
 * rax is not.  Whatever libdw's default says. */
static void test_abi_defaults(void **state)
{
	const struct tmap *libc = map_of_path("/libc.so.6");
	assert_non_null(libc);
	/* getpid: a leaf that saves nothing. */
	uint64_t vaddr = (uint64_t)(uintptr_t)getpid - libc->bias;
	struct unwind_rules r;
	assert_true(unwind_module__rules_at(libc->module, vaddr, &r));
	assert_int_equal(r.cfa.kind, UNWIND_CFA_REG_OFFSET);
	assert_int_equal(r.cfa.reg, UNWIND_REG_SP);
	assert_int_equal(r.cfa.off, 8);
	assert_int_equal(r.regs[UNWIND_REG_RA].kind, UNWIND_RULE_OFFSET);
	assert_int_equal(r.regs[UNWIND_REG_RA].off, -8);
	assert_int_equal(r.regs[UNWIND_REG_SP].kind, UNWIND_RULE_VAL_OFFSET);
	assert_int_equal(r.regs[UNWIND_REG_SP].off, 0);
	assert_int_equal(r.regs[UNWIND_REG_BX].kind, UNWIND_RULE_SAME);
	assert_int_equal(r.regs[UNWIND_REG_BP].kind, UNWIND_RULE_SAME);
	assert_int_equal(r.regs[12].kind, UNWIND_RULE_SAME);
	assert_int_equal(r.regs[0].kind, UNWIND_RULE_UNDEF);
	assert_int_equal(r.regs[10].kind, UNWIND_RULE_UNDEF);
	assert_false(r.full);
	printf("  libdw x86-64 ABI default slip (rax/rbx) %s\n",
	       unwind__libdw_abi_slip() ? "present: corrected" : "absent");
}

/* ------------------------------------------------------------------------ */
/* 2. Real samples of this process vs libdwfl's unwinder */

enum sample_kind { SAMPLE_INTERRUPTED, SAMPLE_HANDLER };

struct sample {
	struct unwind_regs regs;
	size_t len;
	enum sample_kind kind;
	uint8_t bytes[STACK_COPY];
};

static struct sample samples[MAX_SAMPLES];
static volatile sig_atomic_t nsamples;
static volatile uint64_t burn_sink;

static void prof_handler(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	const greg_t *g = uc->uc_mcontext.gregs;
	if (nsamples + 2 > MAX_SAMPLES)
		return;
	uint64_t sp = (uint64_t)g[REG_RSP];
	if (sp < proc.stack_lo || sp >= proc.stack_end)
		return;
	struct sample *s = &samples[nsamples];
	s->kind = SAMPLE_INTERRUPTED;
	s->regs = (struct unwind_regs){
	    .ip = (uint64_t)g[REG_RIP],
	    .sp = sp,
	    .bp = (uint64_t)g[REG_RBP],
	    .bx = (uint64_t)g[REG_RBX],
	    .r12 = (uint64_t)g[REG_R12],
	    .r13 = (uint64_t)g[REG_R13],
	    .r14 = (uint64_t)g[REG_R14],
	    .r15 = (uint64_t)g[REG_R15],
	};
	s->len = proc.stack_end - sp < STACK_COPY ? proc.stack_end - sp : STACK_COPY;
	test_unwind_copy(s->bytes, (const void *)(uintptr_t)sp, s->len);
	s = &samples[nsamples + 1];
	s->kind = SAMPLE_HANDLER;
	s->len = test_unwind_capture(&s->regs, s->bytes, STACK_COPY, proc.stack_end);
	nsamples += 2;
}

#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))

static NOFP int cmp_burn(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	for (int i = 0; i < 300; i++)
		burn_sink += (uint64_t)i;
	return (x > y) - (x < y);
}

static uint64_t sort_buf[4096];

static NOFP uint64_t level_c(uint64_t seed, volatile uint64_t *scratch)
{
	for (size_t i = 0; i < sizeof(sort_buf) / sizeof(sort_buf[0]); i++)
		sort_buf[i] = xorshift(&seed);
	qsort(sort_buf, sizeof(sort_buf) / sizeof(sort_buf[0]), sizeof(sort_buf[0]), cmp_burn);
	scratch[0] = sort_buf[0];
	return sort_buf[1] + 1;
}

/* Stack arguments + an over-aligned local + alloca: GCC realigns the stack
 * with a DRAP register, described by DW_CFA_def_cfa_expression
 * (DW_OP_breg6 -N; DW_OP_deref) and DW_CFA_expression rules. */
static NOFP uint64_t realign_drap(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e,
				  uint64_t f, uint64_t g, uint64_t h)
{
	volatile uint64_t buf[8] __attribute__((aligned(64)));
	volatile uint64_t *p = __builtin_alloca((a & 255) + 8);
	p[0] = h;
	buf[0] = g;
	uint64_t r = level_c(a + b + c + d + e + f, buf);
	return r + p[0] + buf[0];
}

static NOFP uint64_t level_b(uint64_t x)
{
	uint64_t r = realign_drap(x, 1, 2, 3, 4, 5, 6, 7);
	return r ^ (x << 1);
}

static NOFP uint64_t level_a(uint64_t x)
{
	uint64_t r = test_unwind_df_call(level_b, x);
	return r * 3 + 1;
}

/* Sorts until enough signals have landed (bounded). */
static NOFP void collect_samples(void)
{
	struct sigaction sa = {.sa_sigaction = prof_handler, .sa_flags = SA_SIGINFO | SA_RESTART};
	struct sigaction old;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGPROF, &sa, &old), 0);
	struct itimerval it = {.it_interval = {0, 2000}, .it_value = {0, 2000}};
	assert_int_equal(setitimer(ITIMER_PROF, &it, NULL), 0);
	uint64_t acc = 0;
	for (int round = 0; round < 400 && nsamples < MAX_SAMPLES - 1; round++)
		acc += level_a((uint64_t)round * 7919 + 1);
	struct itimerval off = {0};
	setitimer(ITIMER_PROF, &off, NULL);
	sigaction(SIGPROF, &old, NULL);
	burn_sink += acc;
}

static bool has_name(const char *name, const char *want) { return strstr(name, want) != NULL; }

static size_t deepest_sample;

static void test_samples_vs_libdw(void **state)
{
	collect_samples();
	printf("  captured %d samples (%d signals)\n", (int)nsamples, (int)nsamples / 2);
	assert_true(nsamples >= 8);

	static struct ref_sample ref;
	uint64_t pcs[MAX_FRAMES];
	uint8_t flags[MAX_FRAMES];
	size_t frames = 0, mismatches = 0, in_cmp = 0, through_signal = 0, through_drap = 0;
	size_t through_debug_frame = 0, deepest = 0;
	for (int i = 0; i < nsamples; i++) {
		const struct sample *s = &samples[i];
		enum unwind_reason why;
		size_t n = unwind__stack_ex(&s->regs, s->bytes, s->len, find_map, NULL, pcs, flags,
					    MAX_FRAMES, &why);
		ref_unwind(&ref, &s->regs, s->bytes, s->len, MAX_FRAMES);
		frames += n;
		bool same = n == ref.n;
		for (size_t k = 0; same && k < n; k++)
			same = pcs[k] == ref.pcs[k] &&
			       ((flags[k] & UNWIND_FRAME_ACTIVATION) != 0) == ref.activation[k];
		bool main_found = false, cmp_chain = false, sig = false, drap = false;
		bool debug_frame = false;
		for (size_t k = 0; k < n; k++) {
			bool act = flags[k] & UNWIND_FRAME_ACTIVATION;
			const char *name = sym_name(pcs[k], act);
			main_found |= strcmp(name, "main") == 0;
			sig |= (flags[k] & UNWIND_FRAME_SIGNAL) != 0;
			drap |= has_name(name, "realign_drap");
			debug_frame |= has_name(name, "test_unwind_df_call");
			/* cmp_burn <- msort_with_tmp ... <- qsort_r ... <- level_c */
			if (has_name(name, "cmp_burn") && k + 1 < n &&
			    has_name(sym_name(pcs[k + 1], false), "msort_with_tmp")) {
				size_t j = k + 1;
				while (j < n && has_name(sym_name(pcs[j], false), "msort_with_tmp"))
					j++;
				bool q = false;
				for (; j < n && !has_name(sym_name(pcs[j], false), "level_c"); j++)
					q |= has_name(sym_name(pcs[j], false), "qsort_r");
				cmp_chain = q && j < n;
			}
		}
		in_cmp += cmp_chain;
		through_drap += drap;
		through_debug_frame += debug_frame;
		through_signal += sig;
		if (!same || !main_found || why != UNWIND_END_OUTERMOST ||
		    (s->kind == SAMPLE_HANDLER && !sig)) {
			mismatches++;
			fprintf(stderr,
				"sample %d (%s): %s, main %s, ends with %s, signal frame %s\n", i,
				s->kind == SAMPLE_HANDLER ? "handler" : "interrupted",
				same ? "same as libdw" : "DIFFERS from libdw",
				main_found ? "found" : "NOT found", unwind_reason__name(why),
				sig ? "seen" : "not seen");
			print_stack("ours", pcs, flags, NULL, n);
			print_stack("libdw", ref.pcs, NULL, ref.activation, ref.n);
		}
		if (n > deepest) {
			deepest = n;
			deepest_sample = (size_t)i;
		}
	}
	printf(
	    "  %d samples compared with libdw, %zu frames, %zu mismatches; %zu show "
	    "cmp_burn <- msort_with_tmp <- qsort_r <- level_c, %zu unwind through a signal frame, "
	    "%zu through realign_drap, %zu through the .debug_frame function; deepest %zu frames\n",
	    (int)nsamples, frames, mismatches, in_cmp, through_signal, through_drap,
	    through_debug_frame, deepest);
	assert_int_equal(mismatches, 0);
	assert_true(in_cmp > 0);
	assert_true(through_signal >= (size_t)nsamples / 2);
	/* Nearly every signal lands below both (the chain does all the work). */
	assert_true(through_drap * 10 >= (size_t)nsamples * 9);
	assert_true(through_debug_frame * 10 >= (size_t)nsamples * 9);
}

/*
 * unwind__resume_ex from the interrupted frame itself (what userspace does
 * when the kernel's unwinder could not take a step) gives exactly
 * unwind__stack_ex's frames, flags and ending, for every sample; with only
 * the pc known (no register for a CFA) it stops at once with [register not
 * recoverable].
 */
static void test_resume_equals_stack(void **state)
{
	uint64_t a[MAX_FRAMES], b[MAX_FRAMES];
	uint8_t fa[MAX_FRAMES], fb[MAX_FRAMES];
	enum unwind_reason wa, wb;

	if (nsamples == 0)
		collect_samples();
	assert_true(nsamples > 0);
	for (int i = 0; i < nsamples; i++) {
		const struct sample *s = &samples[i];
		struct unwind_resume r = {.regs = s->regs, .valid = 0xff, .activation = true};
		size_t na = unwind__stack_ex(&s->regs, s->bytes, s->len, find_map, NULL, a, fa,
					     MAX_FRAMES, &wa);
		size_t nb = unwind__resume_ex(&r, s->bytes, s->regs.sp, s->len, find_map, NULL, b,
					      fb, MAX_FRAMES, &wb);

		assert_int_equal(na, nb);
		assert_int_equal(wa, wb);
		assert_memory_equal(a, b, na * sizeof(a[0]));
		assert_memory_equal(fa, fb, na);
		r.valid = 1; /* only ip: neither rsp nor rbp for a CFA */
		nb = unwind__resume_ex(&r, s->bytes, s->regs.sp, s->len, find_map, NULL, b, fb,
				       MAX_FRAMES, &wb);
		assert_int_equal(nb, 1);
		assert_true(wb == UNWIND_REG_UNRECOVERABLE);
	}
	printf("  %d samples: resuming at the first frame gives the same stacks\n", (int)nsamples);
}

/* ------------------------------------------------------------------------ */
/* 3. Endings */

static const struct sample *reference_sample(void)
{
	if (nsamples == 0)
		collect_samples();
	assert_true(nsamples > 0);
	return &samples[deepest_sample < (size_t)nsamples ? deepest_sample : 0];
}

/* A copy cut short keeps the frames found and ends with [stack copy exhausted]. */
static void test_truncated_copy(void **state)
{
	const struct sample *s = reference_sample();
	uint64_t full[MAX_FRAMES], pcs[MAX_FRAMES];
	enum unwind_reason why;
	size_t nfull =
	    unwind__stack(&s->regs, s->bytes, s->len, find_map, NULL, full, MAX_FRAMES, &why);
	assert_int_equal(why, UNWIND_END_OUTERMOST);
	size_t prev = 0, cuts = 0;
	for (size_t len = 0; len <= s->len; len += 8) {
		size_t n =
		    unwind__stack(&s->regs, s->bytes, len, find_map, NULL, pcs, MAX_FRAMES, &why);
		assert_true(n >= 1 && n <= nfull);
		assert_memory_equal(pcs, full, n * sizeof(pcs[0]));
		assert_true(n >= prev);
		if (n < nfull) {
			if (why != UNWIND_STACK_EXHAUSTED)
				fprintf(stderr, "len %zu: %zu frames, %s\n", len, n,
					unwind_reason__name(why));
			assert_int_equal(why, UNWIND_STACK_EXHAUSTED);
			cuts++;
		}
		prev = n;
	}
	assert_string_equal(unwind_reason__name(UNWIND_STACK_EXHAUSTED), "[stack copy exhausted]");
	printf("  %zu truncated copies, each a prefix of the %zu-frame stack ending with %s\n",
	       cuts, nfull, unwind_reason__name(UNWIND_STACK_EXHAUSTED));
}

static void test_depth_limit_and_missing(void **state)
{
	const struct sample *s = reference_sample();
	uint64_t pcs[MAX_FRAMES];
	enum unwind_reason why;
	assert_int_equal(unwind__stack(&s->regs, s->bytes, s->len, find_map, NULL, pcs, 3, &why),
			 3);
	assert_int_equal(why, UNWIND_DEPTH_LIMIT);
	assert_int_equal(unwind__stack(&s->regs, s->bytes, s->len, find_map, NULL, pcs, 0, &why),
			 0);
	assert_int_equal(why, UNWIND_DEPTH_LIMIT);

	/* No mapping. */
	struct unwind_regs r = s->regs;
	r.ip = 0x10;
	assert_int_equal(unwind__stack(&r, s->bytes, s->len, find_map, NULL, pcs, MAX_FRAMES, &why),
			 1);
	assert_int_equal(why, UNWIND_NO_MODULE);
	assert_int_equal(pcs[0], 0x10);

	/* Code without CFI. */
	r.ip = (uint64_t)(uintptr_t)test_unwind_nocfi + 1;
	assert_int_equal(unwind__stack(&r, s->bytes, s->len, find_map, NULL, pcs, MAX_FRAMES, &why),
			 1);
	assert_int_equal(why, UNWIND_NO_CFI);

	assert_string_equal(unwind_reason__name(UNWIND_REASON__COUNT), "[?]");
}

static struct unwind_module *entry_module;

static bool find_entry_map(void *ctx, uint64_t pc, struct unwind_map *out)
{
	(void)ctx;
	out->module = entry_module;
	out->bias = 0;
	out->start = pc;
	out->end = pc + 1;
	return true;
}

/*
 * ld.so's _start (RTLD_START, e_entry) has no FDE: a frame there is the
 * process's outermost (issue 21 item 7), as a pc or as the return address
 * of its call to _dl_start; code past UNWIND_ENTRY_SPAN is not.
 */
static void test_ldso_entry_is_outermost(void **state)
{
	uint64_t stack[4] = {0x1111, 0x2222, 0, 0}, pcs[8], entry;
	struct unwind_regs r = {.sp = 0x7ffc00000000};
	enum unwind_reason why;
	GElf_Ehdr eh;
	Elf *elf;
	int fd;

	(void)state;
	fd = open(LDSO_PATH, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(gelf_getehdr(elf, &eh));
	entry = eh.e_entry;
	elf_end(elf);
	close(fd);
	assert_true(entry != 0);
	entry_module = unwind_module__open(LDSO_PATH);
	assert_non_null(entry_module);
	assert_null(unwind_module__row(entry_module, entry)); /* no CFI there */

	r.ip = entry + 3; /* inside _start */
	assert_int_equal(unwind__stack(&r, (const uint8_t *)stack, sizeof(stack), find_entry_map,
				       NULL, pcs, 8, &why),
			 1);
	assert_int_equal(why, UNWIND_END_OUTERMOST);
	r.ip = entry; /* the first instruction */
	unwind__stack(&r, (const uint8_t *)stack, sizeof(stack), find_entry_map, NULL, pcs, 8, &why);
	assert_int_equal(why, UNWIND_END_OUTERMOST);
	r.ip = entry - 1; /* before it: not entry code */
	if (!unwind_module__row(entry_module, r.ip)) {
		unwind__stack(&r, (const uint8_t *)stack, sizeof(stack), find_entry_map, NULL, pcs,
			      8, &why);
		assert_int_equal(why, UNWIND_NO_CFI);
	}
	r.ip = entry + UNWIND_ENTRY_SPAN; /* past the span */
	if (!unwind_module__row(entry_module, r.ip)) {
		unwind__stack(&r, (const uint8_t *)stack, sizeof(stack), find_entry_map, NULL, pcs,
			      8, &why);
		assert_int_equal(why, UNWIND_NO_CFI);
	}
	unwind_module__free(entry_module);
	entry_module = NULL;
}

__attribute__((noinline, optimize("no-omit-frame-pointer"))) static uint64_t fp_function(uint64_t x)
{
	volatile uint64_t v = x;
	for (int i = 0; i < 3; i++)
		v += (uint64_t)level_a == 0;
	return v * 2 + 1;
}

/* A saved rbp pointing at itself: the CFA stops growing -> [unwind loop]. */
static void test_loop(void **state)
{
	const struct tmap *me = map_of_pc((uint64_t)(uintptr_t)fp_function);
	assert_non_null(me);
	uint64_t fn = (uint64_t)(uintptr_t)fp_function, pc = 0;
	struct unwind_rules r;
	for (uint64_t a = fn; a < fn + 256; a++) {
		if (unwind_module__rules_at(me->module, a - me->bias, &r) &&
		    r.cfa.kind == UNWIND_CFA_REG_OFFSET && r.cfa.reg == UNWIND_REG_BP &&
		    r.cfa.off == 16 && r.regs[UNWIND_REG_BP].kind == UNWIND_RULE_OFFSET &&
		    r.regs[UNWIND_REG_BP].off == -16 && r.end > a - me->bias + 1) {
			pc = a;
			break;
		}
	}
	assert_true(pc != 0);
	uint8_t stack[64] = {0};
	uint64_t S = 0x7ffd00001000ull, self = S + 32, ra = pc + 1;
	memcpy(stack + 32, &self, 8);
	memcpy(stack + 40, &ra, 8);
	struct unwind_regs regs = {.ip = pc, .sp = S, .bp = S + 32};
	uint64_t pcs[16];
	enum unwind_reason why;
	size_t n = unwind__stack(&regs, stack, sizeof(stack), find_map, NULL, pcs, 16, &why);
	assert_int_equal(why, UNWIND_LOOP);
	assert_int_equal(n, 2);
	assert_int_equal(pcs[1], pc + 1);
	assert_string_equal(unwind_reason__name(why), "[unwind loop]");
}

/* Garbage registers and bytes: no crash, a typed ending, bounded output. */
static void test_garbage(void **state)
{
	const struct tmap *libc = map_of_path("/libc.so.6");
	const struct tmap *me = map_of_pc((uint64_t)(uintptr_t)level_a);
	assert_non_null(libc);
	assert_non_null(me);
	static uint8_t stack[4096];
	uint64_t pcs[64], seed = 12345;
	size_t counts[UNWIND_REASON__COUNT] = {0}, frames = 0;
	const int trials = 20000;
	for (int t = 0; t < trials; t++) {
		uint64_t S = 0x7ffc00000000ull + (xorshift(&seed) & 0xffff0);
		const struct tmap *pick[] = {libc, me};
		for (size_t i = 0; i < sizeof(stack); i += 8) {
			uint64_t v, k = xorshift(&seed) % 4;
			const struct tmap *m = pick[xorshift(&seed) & 1];
			if (k == 0)
				v = m->start + xorshift(&seed) % (m->end - m->start);
			else if (k == 1)
				v = S + (xorshift(&seed) % sizeof(stack));
			else if (k == 2)
				v = xorshift(&seed);
			else
				v = 0;
			memcpy(stack + i, &v, 8);
		}
		const struct tmap *m = pick[xorshift(&seed) & 1];
		struct unwind_regs r = {
		    .ip = m->start + xorshift(&seed) % (m->end - m->start),
		    .sp = S,
		    .bp = S + xorshift(&seed) % sizeof(stack),
		    .bx = xorshift(&seed),
		    .r12 = S + 64,
		    .r13 = xorshift(&seed),
		};
		enum unwind_reason why = UNWIND_REASON__COUNT;
		size_t len = xorshift(&seed) % (sizeof(stack) + 1);
		size_t n = unwind__stack(&r, stack, len, find_map, NULL, pcs, 64, &why);
		assert_true(n >= 1 && n <= 64);
		assert_true((unsigned)why < UNWIND_REASON__COUNT);
		assert_int_equal(pcs[0], r.ip);
		counts[why]++;
		frames += n;
	}
	printf("  %d garbage stacks, %zu frames; endings:", trials, frames);
	for (int i = 0; i < UNWIND_REASON__COUNT; i++)
		if (counts[i])
			printf(" %s %zu", unwind_reason__name((enum unwind_reason)i), counts[i]);
	printf("\n");
}

/* PLT entries: CFA = rsp + 8 + ((rip & 15) >= 11 ? 8 : 0), a DWARF
 * expression; checked against the arithmetic and libdw on the same bytes. */
static void test_plt_expression(void **state)
{
	const struct tmap *libc = map_of_path("/libc.so.6");
	assert_non_null(libc);
	int fd = open(LIBC_PATH, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	GElf_Shdr plt = {0};
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".plt") == 0)
			plt = sh;
	}
	elf_end(elf);
	close(fd);
	assert_true(plt.sh_size >= 48);

	uint64_t S = 0x7ffd00002000ull;
	uint64_t ra1 = (uint64_t)(uintptr_t)level_a + 5, ra2 = (uint64_t)(uintptr_t)level_b + 7;
	uint8_t stack[64] = {0};
	memcpy(stack, &ra1, 8);
	memcpy(stack + 8, &ra2, 8);
	static struct ref_sample ref;
	size_t checked = 0;
	for (uint64_t off = 16; off < 48; off++) { /* entries 1 and 2 */
		uint64_t ip = libc->bias + plt.sh_addr + off;
		struct unwind_regs r = {.ip = ip, .sp = S};
		uint64_t pcs[4];
		enum unwind_reason why;
		size_t n = unwind__stack(&r, stack, sizeof(stack), find_map, NULL, pcs, 2, &why);
		assert_int_equal(n, 2);
		assert_int_equal(pcs[1], (ip & 15) >= 11 ? ra2 : ra1);
		ref_unwind(&ref, &r, stack, sizeof(stack), 2);
		assert_int_equal(ref.n, 2);
		assert_int_equal(ref.pcs[1], pcs[1]);
		checked++;
	}
	printf("  %zu PLT pcs: CFA expression matches rsp+8/rsp+16 and libdw\n", checked);
}


/*
 * The rows the in-kernel unwinder takes (unwind_module__kernel_row) from
 * Debian's libc: compact rows byte for byte; the lazy PLT's expression rows
 * as PLT rows (CFA = rsp + 8, + 8 from pc & 15 >= 11; the return address at
 * CFA - 8); __restore_rt's signal row as a SIGFRAME row with glibc's
 * ucontext offsets (CFA = *(rsp + 160); rip, rsp, rbp, rbx, r12..r15 at
 * rsp + 168, 160, 120, 128, 72..96: gregs[] at offset 40 of struct
 * ucontext, REG_R8 = 0 .. REG_RIP = 16); every other full row unchanged.
 */
static void test_kernel_rows(void **state)
{
	static const int8_t uc_off8[8] = {21, 20, 15, 16, 9, 10, 11, 12};
	struct unwind_module *m = unwind_module__open(LIBC_PATH);
	struct unwind_table_view t;
	size_t plt = 0, sig = 0, full = 0;

	(void)state;
	assert_non_null(m);
	unwind_module__table(m, &t);
	assert_true(t.nrows > 2);
	for (uint32_t i = 0; i < t.nrows; i++) {
		struct unwind_row k, srow;
		const struct unwind_row *src = &srow;

		unwind_module__rows(m, i, 1, &srow);
		unwind_module__kernel_row(m, i, &k);
		if (!(src->flags & UNWIND_ROW_FULL)) {
			assert_memory_equal(&k, src, sizeof(k));
			continue;
		}
		if (k.flags & UNWIND_KROW_PLT) {
			assert_false(k.flags & (UNWIND_ROW_FULL | UNWIND_KROW_SIGFRAME));
			assert_int_equal(k.cfa_off, 8);
			assert_int_equal(k.cfa_reg, 11);
			assert_int_equal(k.kinds & 3, UNWIND_RULE_OFFSET);
			assert_int_equal(k.off8[0], -1);
			plt++;
		} else if (k.flags & UNWIND_KROW_SIGFRAME) {
			assert_false(k.flags & UNWIND_ROW_FULL);
			assert_true(k.flags & UNWIND_ROW_SIGNAL);
			assert_int_equal(k.cfa_off, 160);
			for (int s = 0; s < 8; s++) {
				assert_int_equal((k.kinds >> (2 * s)) & 3, UNWIND_RULE_OFFSET);
				assert_int_equal(k.off8[s], uc_off8[s]);
			}
			sig++;
		} else {
			assert_memory_equal(&k, src, sizeof(k));
			full++;
		}
	}
	printf("  libc: %zu PLT rows, %zu signal-frame rows for the kernel, %zu full rows "
	       "left\n",
	       plt, sig, full);
	assert_true(plt >= 1);
	assert_int_equal(sig, 1);
	unwind_module__free(m);
}

/* ------------------------------------------------------------------------ */
/* 4. Speed (printed, not asserted) */

/* Thread CPU time: other load on the machine does not count against us. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void test_speed(void **state)
{
	const struct sample *s = reference_sample();
	uint64_t pcs[MAX_FRAMES];
	enum unwind_reason why;
	size_t n = unwind__stack(&s->regs, s->bytes, s->len, find_map, NULL, pcs, MAX_FRAMES, &why);
	const int reps = 100000;
	size_t frames = 0;
	proc.find_calls = 0;
	double t0 = now_s();
	for (int i = 0; i < reps; i++)
		frames += unwind__stack(&s->regs, s->bytes, s->len, find_map, NULL, pcs, MAX_FRAMES,
					&why);
	double t1 = now_s();
	assert_int_equal(frames, (size_t)reps * n);

	static struct ref_sample ref;
	size_t ref_frames = 0;
	int ref_reps = 0;
	double t2 = now_s(), t3;
	do {
		ref_unwind(&ref, &s->regs, s->bytes, s->len, MAX_FRAMES);
		ref_frames += ref.n;
		ref_reps++;
		t3 = now_s();
	} while (t3 - t2 < 0.5 && ref_reps < reps);

	double ours = (double)frames / (t1 - t0), theirs = (double)ref_frames / (t3 - t2);
	printf("  speed (thread CPU time): %zu-frame sample x %d: %.1f M frames/s, %.2f M "
	       "samples/s (find called "
	       "%.1f times per sample); libdw on the same bytes x %d: %.2f M frames/s; "
	       "ratio %.0fx\n",
	       n, reps, ours / 1e6, (double)reps / (t1 - t0) / 1e6, (double)proc.find_calls / reps,
	       ref_reps, theirs / 1e6, ours / theirs);

	const char *paths[] = {LIBC_PATH, PYTHON_PATH};
	for (size_t i = 0; i < 2; i++) {
		double a = now_s();
		struct unwind_module *m = unwind_module__open(paths[i]);
		double b = now_s();
		assert_non_null(m);
		struct unwind_module_stats st;
		unwind_module__stats(m, &st);
		printf("  open+compile %s: %.0f ms, %zu rows, %zu KiB\n", paths[i], (b - a) * 1e3,
		       st.rows, st.bytes / 1024);
		unwind_module__free(m);
	}
}

static void test_open_errors(void **state)
{
	errno = 0;
	assert_null(unwind_module__open("/nonexistent/file"));
	assert_int_equal(errno, ENOENT);
	errno = 0;
	assert_null(unwind_module__open("/proc/self/status"));
	assert_int_equal(errno, ENOEXEC);
	static const char not_elf[64] = "not an ELF image";
	errno = 0;
	assert_null(unwind_module__open_image(not_elf, sizeof(not_elf)));
	assert_int_equal(errno, ENOEXEC);
	errno = 0;
	assert_null(unwind_module__open_fd(-1));
	assert_int_equal(errno, EBADF);
	/* By descriptor: the same tables as by path, and the fd stays open. */
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	struct unwind_module *by_fd = unwind_module__open_fd(fd);
	struct unwind_module *by_path = unwind_module__open("/proc/self/exe");
	assert_non_null(by_fd);
	assert_non_null(by_path);
	struct unwind_module_stats a, b;
	unwind_module__stats(by_fd, &a);
	unwind_module__stats(by_path, &b);
	assert_true(a.rows > 0);
	assert_int_equal(a.rows, b.rows);
	assert_int_equal(a.fdes, b.fdes);
	assert_int_equal(fcntl(fd, F_GETFD) >= 0, 1);
	close(fd);
	unwind_module__free(by_fd);
	unwind_module__free(by_path);
	unwind_module__free(NULL);

	/* The vdso compiles from memory and has CFI for its functions. */
	if (proc.vdso_start) {
		const struct tmap *v = map_of_path("[vdso]");
		assert_non_null(v);
		struct unwind_module_stats st;
		unwind_module__stats(v->module, &st);
		assert_true(st.fdes > 0);
		assert_true(st.rows > 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_open_errors),	   cmocka_unit_test(test_abi_defaults),
	    cmocka_unit_test(test_table_vs_libdw), cmocka_unit_test(test_samples_vs_libdw),
	    cmocka_unit_test(test_resume_equals_stack),
	    cmocka_unit_test(test_truncated_copy), cmocka_unit_test(test_depth_limit_and_missing),
	    cmocka_unit_test(test_loop),	   cmocka_unit_test(test_garbage),
	    cmocka_unit_test(test_plt_expression), cmocka_unit_test(test_speed),
	    cmocka_unit_test(test_ldso_entry_is_outermost),
	    cmocka_unit_test(test_kernel_rows),
	};
	return cmocka_run_group_tests_name("unwind", tests, setup, teardown);
}
