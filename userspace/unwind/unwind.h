/* SPDX-License-Identifier: MIT */
/*
 * DWARF CFI unwinding of user stacks from copied bytes (x86-64).
 *
 * Two objects:
 *
 *  - struct unwind_module: the call frame information (CFI) of one ELF file,
 *    compiled once into a compact table sorted by address (one row per
 *    address range, holding the rule for the CFA and for every register).
 *    Sources: .eh_frame of the file (libdw dwarf_getcfi_elf) and, for
 *    addresses .eh_frame does not cover, .debug_frame of the file itself or
 *    of its separate debug file found by build ID under
 *    /usr/lib/debug/.build-id/ (libdw dwarf_getcfi).  That is the order
 *    libdwfl's own unwinder uses.  The rules are libdw's answers
 *    (dwarf_cfi_addrframe, dwarf_frame_cfa, dwarf_frame_register), so CIE
 *    initial instructions, remember/restore_state and the ABI's default rules
 *    are applied as libdw applies them, with one correction: libdw 0.188's
 *    x86-64 defaults swap rax and rbx (unwind_module.c says how it is probed
 *    and corrected).  A module is immutable after
 *    unwind_module__open*() returns: any number of threads may unwind with it
 *    at once.  The caller (the processor) caches modules by build ID and opens
 *    one lazily, the first time a sample needs it.
 *
 *  - unwind__stack(): one unwind of one sample.  It reads only the sample's
 *    registers and its copied stack bytes, never process memory, allocates
 *    nothing (its scratch is on the C stack, about 1 KiB), and ends every
 *    stack with a typed reason (enum unwind_reason).
 *
 * Rows are of two kinds.  A compact row (16 bytes) holds CFA = register +
 * offset and, for rip (the return address), rsp, rbp, rbx and r12-r15, one of
 * same value / undefined / offset(N) / val_offset(N); every other register
 * is undefined (the x86-64 psABI default for caller-saved registers).  Rows
 * that do not fit (CFA given as a DWARF expression, as in PLT entries and
 * stack realignment; DW_CFA_expression / val_expression / register rules, as
 * in glibc's __restore_rt signal trampoline) keep libdw's complete answer for
 * that row: the rule of all 17 DWARF registers with their DWARF expressions
 * copied verbatim, evaluated at unwind time by a DWARF expression evaluator
 * over the sample's registers and copied bytes (DWARF 5 section 2.5).  No
 * row is ever guessed; an address without CFI ends the unwind with
 * UNWIND_NO_CFI, unless the finder marks its mapping fp_step (struct
 * unwind_map): code known to come without CFI (a JIT's: V8 keeps rbp
 * frame pointers), stepped by the frame-pointer rule and checked (see
 * unwind__stack_ex), as libdwfl and perf's chain walk would.
 *
 * Registers use DWARF numbering (x86-64 psABI, figure 3.36): 0 rax, 1 rdx,
 * 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 rip (the return
 * address column).
 */
#ifndef MS_UNWIND_H
#define MS_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct unwind_module;

/*
 * Open an ELF file and compile its CFI (.eh_frame, then .debug_frame of the
 * file or of /usr/lib/debug/.build-id/xx/rest.debug for the gaps).
 * The file is read and closed before returning; nothing of it is kept open.
 * A file without any CFI gives a module with no rows (every lookup then ends
 * the unwind with UNWIND_NO_CFI), so callers can cache it like any other.
 * Returns a module owned by the caller (unwind_module__free), or NULL with
 * errno: the open(2) errors, ENOEXEC (not an ELF file or malformed),
 * ENOTSUP (not ELFCLASS64 x86-64), EFBIG (its code spans 4 GiB or more),
 * ENOMEM.
 */
struct unwind_module *unwind_module__open(const char *path);

/*
 * Same, for an ELF file already open (e.g. the descriptor a symbolizer
 * verified by build ID, read through /proc/PID/map_files).  fd is read
 * during the call only and stays the caller's (not closed, offset unused:
 * libelf reads with pread/mmap).  Errors as unwind_module__open, EBADF for
 * a bad descriptor.
 */
struct unwind_module *unwind_module__open_fd(int fd);

/*
 * Same, for an ELF image in memory (the vdso: read it from the target's
 * [vdso] mapping, or this process's own via getauxval(AT_SYSINFO_EHDR)).
 * Only .eh_frame of the image is used.  image is read during the call only.
 */
struct unwind_module *unwind_module__open_image(const void *image, size_t size);

/*
 * A frame layout proved from code (frame_proof.h), for code no CFI
 * describes: over [start, end) (runtime addresses), CFA = rsp + cfa_off (or
 * rbp + cfa_off when cfa_bp), the return address at CFA - 8, the caller's
 * rsp = CFA, the caller's rbp saved at CFA + bp_off when bp_saved (else
 * unchanged); rbx and r12-r15 unknown.
 */
struct unwind_proof_row {
	uint64_t start, end;
	int32_t cfa_off;
	int32_t bp_off;
	uint8_t cfa_bp;
	uint8_t bp_saved;
	uint8_t reserved[6];
};

/*
 * A module from n proved rows (sorted by start, disjoint; n may be 0: a
 * module with no CFI, so an unwind reaching it ends with UNWIND_NO_CFI).
 * Addresses are runtime addresses (bias 0).  NULL with errno EINVAL (rows
 * unsorted, a span of 4 GiB or more, an offset that does not fit) or
 * ENOMEM.
 */
struct unwind_module *unwind_module__from_proof(const struct unwind_proof_row *rows, size_t n);

/*
 * The compiled table, read-only, as the sampler's in-kernel unwinder loads
 * it: nrows rows (the last a sentinel) of UNWIND_ROW_BYTES bytes each, row i
 * covering ELF vaddrs [base + starts[i], base + starts[i + 1]).  A row's
 * bytes are laid out as bpf/abi/kunwind.h's struct ms_ku_row (cfa_off,
 * cfa_reg, flags, kinds, off8[8]; flag and rule values alike), which
 * userspace/processor/kunwind_maps.c and tests/unit/test_unwind.c check.
 * starts is borrowed from m; the rows, kept as indexes into the module's
 * distinct rows, are written out by unwind_module__rows().
 */
#define UNWIND_ROW_BYTES 16
struct unwind_table_view {
	uint64_t base;
	uint32_t nrows; /* 0: no CFI at all */
	const uint32_t *starts;
};
void unwind_module__table(const struct unwind_module *m, struct unwind_table_view *out);
/* Rows [first, first + n) of m's table into out (n * UNWIND_ROW_BYTES). */
void unwind_module__rows(const struct unwind_module *m, uint32_t first, uint32_t n, void *out);

/*
 * Row i (< nrows) of m as the sampler's in-kernel unwinder takes it, into
 * out (UNWIND_ROW_BYTES): a compact row as it is; a full row of one of the
 * two shapes the kernel steps rewritten (flag FULL cleared, UNWIND_KROW_*
 * set, fields as bpf/abi/kunwind.h's MS_KU_ROW_PLT / _SIGFRAME say); any
 * other full row as it is (the kernel stops there).  The shapes:
 *  - UNWIND_KROW_PLT: the CFA is binutils' lazy-PLT expression
 *    (DW_OP_breg7 N; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_litT;
 *    DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus), written as cfa_off = N,
 *    cfa_reg = T, and every register's rule fits a compact row;
 *  - UNWIND_KROW_SIGFRAME: the CFA is DW_OP_breg7 N; DW_OP_deref (cfa_off
 *    = N) and each slot's rule is undefined, same value, or saved at
 *    DW_OP_breg7 M (off8 = M / 8, relative to rsp, not to the CFA), the
 *    return address saved (glibc's __restore_rt: the ucontext at rsp).
 */
#define UNWIND_KROW_PLT 0x10
#define UNWIND_KROW_SIGFRAME 0x20
void unwind_module__kernel_row(const struct unwind_module *m, uint32_t i, void *out);

/* Frees the module and its tables.  Accepts NULL. */
void unwind_module__free(struct unwind_module *m);

/* Counts describing a module (for reports and tests). */
struct unwind_module_stats {
	size_t fdes;		 /* FDEs read (.eh_frame + .debug_frame) */
	size_t rows;		 /* table rows, gaps without CFI included */
	size_t full_rows;	 /* rows kept as libdw's full answer (slow path) */
	size_t debug_frame_rows; /* rows that came from .debug_frame */
	size_t bytes;		 /* memory held by the tables, bytes */
};
void unwind_module__stats(const struct unwind_module *m, struct unwind_module_stats *st);

/*
 * x86-64 user registers at interrupt time, as the sampler records them
 * (bpf/abi/records.h struct ms_regs_x86_64: same fields, same order).
 */
struct unwind_regs {
	uint64_t ip, sp, bp, bx, r12, r13, r14, r15;
};
_Static_assert(sizeof(struct unwind_regs) == 64, "unwind_regs matches ms_regs_x86_64");

/*
 * What the processor says about a pc: the module whose CFI covers it and the
 * load bias (runtime address - ELF virtual address), from the mapping that was
 * active at the sample's time.  start/end bound the runtime range [start, end)
 * for which the same answer holds (the mapping's range); the unwinder reuses
 * the answer for further pcs inside it without calling again.  Set
 * start = pc, end = pc + 1 when unsure.  For the vdso, module is the vdso's
 * image (unwind_module__open_image) and bias the runtime start of the
 * mapping minus the image's first PT_LOAD p_vaddr.
 */
struct unwind_map {
	struct unwind_module *module; /* borrowed; must outlive the call; NULL: no CFI */
	uint64_t bias;
	uint64_t start, end;
	/* Where the module has no row for pc (or there is no module): step the
	 * frame by the frame-pointer rule instead of ending the unwind.  For
	 * code that has no CFI but keeps frame pointers (JIT code, V8's
	 * builtins embedded in node's text). */
	bool fp_step;
};

/* Returns false when pc is in no known mapping; the unwind then ends with
 * UNWIND_NO_MODULE (as it does when map->module is left NULL and fp_step
 * false). */
typedef bool (*unwind_find_fn)(void *ctx, uint64_t pc, struct unwind_map *map);

/*
 * Why an unwind stopped: enum and the bracketed root-frame text shown in
 * reports and folded output, from one table.  UNWIND_END_OUTERMOST is the
 * only complete ending: the CFI marks the frame as the outermost (return
 * address rule "undefined", as in _start, clone3 and start_thread), the pc
 * is in the module's entry code that has no CFI (ld.so's _start: the ELF
 * header's e_entry up to the next FDE, 64 bytes at most), or the return
 * address is 0.
 */
#define UNWIND_REASONS(X)                                                                          \
	X(UNWIND_END_OUTERMOST, "[outermost frame]")                                               \
	X(UNWIND_NO_MODULE, "[pc outside known mappings]")                                         \
	X(UNWIND_NO_CFI, "[no CFI for pc]")                                                        \
	X(UNWIND_REG_UNRECOVERABLE, "[register not recoverable]")                                  \
	X(UNWIND_STACK_EXHAUSTED, "[stack copy exhausted]")                                        \
	X(UNWIND_CFA_OUT_OF_RANGE, "[address below copied stack]")                                 \
	X(UNWIND_LOOP, "[unwind loop]")                                                            \
	X(UNWIND_DEPTH_LIMIT, "[depth limit]")                                                     \
	X(UNWIND_BAD_CFI, "[unusable CFI]")

enum unwind_reason {
#define UNWIND_REASON_ENUM(name, text) name,
	UNWIND_REASONS(UNWIND_REASON_ENUM)
#undef UNWIND_REASON_ENUM
	    UNWIND_REASON__COUNT
};

/* What a module's CFI says about the frame pointer at an address. */
enum unwind_fp_state {
	UNWIND_FP_UNKNOWN = 0, /* no CFI there */
	UNWIND_FP_KEPT,	       /* CFA = rbp + offset: rbp holds this frame's frame pointer */
	UNWIND_FP_NOT_KEPT,    /* CFA from rsp or an expression: a function without a
				* frame pointer, or its prologue / epilogue, where rbp
				* still holds the caller's */
};

/*
 * Whether the function at ELF virtual address vaddr of m has its frame
 * pointer set up there (x86-64: the row's CFA rule is rbp-based), for
 * checking a frame-pointer chain: where it is not, the chain's next entry
 * (read through rbp) belongs to the caller's caller, not to the caller.
 * Look up at the pc for the interrupted frame, at the return address - 1
 * for callers.  One table lookup; never fails.
 */
enum unwind_fp_state unwind_module__fp_state(const struct unwind_module *m, uint64_t vaddr);

/* Static text of a reason, e.g. "[stack copy exhausted]"; "[?]" if out of range. */
const char *unwind_reason__name(enum unwind_reason r);

/* Per-frame flags (unwind__stack_ex), as libdwfl's dwfl_frame_pc() isactivation. */
enum {
	/* pcs[i] is not a return address, so its symbol and line are looked up
	 * at pcs[i] itself, not at pcs[i] - 1 (the call instruction): the first
	 * frame, a frame interrupted by a signal, and a signal trampoline (the
	 * kernel put its address on the stack; no call precedes it).  The CFI
	 * row of a frame is looked up at pcs[i] for the first frame and frames
	 * interrupted by a signal, at pcs[i] - 1 otherwise (glibc's
	 * __restore_rt FDE starts one byte early for that). */
	UNWIND_FRAME_ACTIVATION = 1u << 0,
	/* The frame is a signal trampoline (its FDE's CIE augmentation has 'S');
	 * the next frame is the interrupted one. */
	UNWIND_FRAME_SIGNAL = 1u << 1,
	/* The frame was found by a frame-pointer step from the one below it
	 * (no CFI there, its mapping marked fp_step). */
	UNWIND_FRAME_FP = 1u << 2,
};

/*
 * Unwind one sample over its copied stack bytes.
 *   regs:      registers at interrupt time.
 *   stack:     stack_len bytes that were at runtime addresses
 *              [regs->sp, regs->sp + stack_len); nothing outside is read.
 *   find:      maps a pc to its module (see unwind_find_fn); ctx is passed
 *              through.  Called at most once per frame, fewer when
 *              consecutive frames share a mapping.
 *   pcs:       receives up to max pcs: pcs[0] = regs->ip, then the return
 *              address of each caller, innermost first.
 *   frame_flags: NULL, or max bytes receiving UNWIND_FRAME_* per frame.
 *   reason:    receives why the unwind stopped (never NULL).
 * Returns the number of pcs written (0 only when max is 0, with
 * UNWIND_DEPTH_LIMIT).  The CFA must grow strictly from frame to frame except
 * across a signal frame, where it must only change; otherwise UNWIND_LOOP.
 * A frame-pointer step (a pc without a row in an fp_step mapping: CFA =
 * rbp + 16, return address at rbp + 8, the caller's rbp at rbp, rsp = the
 * CFA, every other register unknown) is taken only when rbp is 8-aligned,
 * at or above the frame's rsp, both slots are in the copy and the return
 * address is not 0 and in a mapping find knows; otherwise the unwind ends with the
 * reason it would have had without it (UNWIND_STACK_EXHAUSTED when the
 * slots are past the copy's end).  Its caller gets UNWIND_FRAME_FP.
 * Allocates nothing and never reads process memory.
 */
size_t unwind__stack_ex(const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len,
			unwind_find_fn find, void *ctx, uint64_t *pcs, uint8_t *frame_flags,
			size_t max, enum unwind_reason *reason);

/*
 * Where to go on from when an unwind was started elsewhere (the sampler's
 * in-kernel unwinder, bpf/abi/kunwind.h): the registers of the frame to
 * continue from, which of them are known, and what the loop knew there.
 */
struct unwind_resume {
	struct unwind_regs regs; /* regs.ip: the frame's pc */
	uint32_t valid;		 /* bit i: field i of regs is known (ip, sp, bp, bx, r12..r15) */
	bool activation;	 /* the frame is the first one or a signal frame returned to it:
				  * its row is looked up at ip */
	bool have_prev;		 /* a frame below it was unwound: prev_cfa holds its CFA */
	bool prev_signal;	 /* that frame was a signal frame (the CFA must only change) */
	uint64_t prev_cfa;
};

/*
 * unwind__stack_ex() from a resume point instead of the interrupted
 * registers: pcs[0] = r->regs.ip (the resume frame itself, with
 * frame_flags[0] = ACTIVATION if r->activation, plus SIGNAL when its row is
 * a signal frame's), then its callers.  stack holds the stack_len bytes at
 * runtime addresses [stack_lo, stack_lo + stack_len).  Same steps, checks
 * and reasons as an unwind that reached that frame itself, so splicing
 * gives the same stack.
 */
size_t unwind__resume_ex(const struct unwind_resume *r, const uint8_t *stack, uint64_t stack_lo,
			 size_t stack_len, unwind_find_fn find, void *ctx, uint64_t *pcs,
			 uint8_t *frame_flags, size_t max, enum unwind_reason *reason);

/* unwind__stack_ex() without frame flags. */
size_t unwind__stack(const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len,
		     unwind_find_fn find, void *ctx, uint64_t *pcs, size_t max,
		     enum unwind_reason *reason);

#endif /* MS_UNWIND_H */
