/* SPDX-License-Identifier: MIT */
/*
 * In-kernel DWARF unwinding (bpf/kunwind.bpf.h): the tables userspace loads
 * into BPF maps, and the record part the sampler writes.
 *
 * Tables (written by userspace/unwind/kunwind.c, read by the sampler):
 *   - "ku_rows" (ARRAY of struct ms_ku_row) and "ku_starts" (ARRAY of __u32,
 *     same index): the compiled CFI rows of every loaded module, one module's
 *     rows contiguous.  Row i covers ELF vaddrs [base + starts[i],
 *     base + starts[i + 1]); a module's last row is a sentinel.  The row is
 *     userspace's compact row (userspace/unwind/unwind_internal.h struct
 *     unwind_row) byte for byte.
 *   - "ku_modules" (ARRAY of struct ms_ku_module, indexed by the processor's
 *     module index): where a module's rows are; nrows 0 = not loaded.
 *   - "ku_procs" (HASH tgid -> struct ms_ku_proc): the process's executable
 *     file mappings, sorted by start, with module and load bias.  Deleted at
 *     exec and exit by the sampler, rewritten by userspace when a sample
 *     asks (MS_KU_STOP_NO_PROC, _NO_MAPPING, _NO_ROWS) and when a file is
 *     mapped after that; used only by the address space it was told for
 *     (mm_cookie).
 *
 * Record (struct ms_kunwind): with MS_SAMPLE_F_KUNWIND set, a sample's
 * ustack_len user entries are the pcs the kernel unwound (entry 0 = the
 * interrupted ip, then return addresses), followed by one struct
 * ms_kunwind, then the stack copy (from copy_sp) and the Python frames.
 * When status is MS_KU_RESUME, userspace unwinds on from the last of those
 * pcs with the registers in regs (fields valid per the valid bits) over the
 * copied bytes, exactly as its own unwinder would have from that frame
 * (userspace/unwind/unwind.h unwind__resume_ex).
 */
#ifndef MS_ABI_KUNWIND_H
#define MS_ABI_KUNWIND_H

#ifdef __BPF__
/* vmlinux.h provides __u8.. __u64 */
#else
#include <linux/types.h>
#endif

#include "records.h"

/* The sampler's rodata kunwind_mode: 0 off, ON, or VERIFY (the stack is
 * also copied whole from the interrupted sp, for --verify-unwind). */
#define MS_KU_MODE_ON 1
#define MS_KU_MODE_VERIFY 2

/* Most frames the kernel unwinds per sample (the user callchain's room). */
#define MS_KU_MAX_FRAMES MS_MAX_STACK_DEPTH
/* Executable mappings kept per process (the rest: unwound in userspace). */
#define MS_KU_PROC_MAPS 128
/* Binary search steps over one module's rows (2^24 rows). */
#define MS_KU_SEARCH_STEPS 24

/* ms_ku_row.flags: as UNWIND_ROW_* (userspace/unwind/unwind_internal.h) */
#define MS_KU_ROW_NONE 0x1
#define MS_KU_ROW_FULL 0x2   /* libdw's full answer: the kernel stops there */
#define MS_KU_ROW_SIGNAL 0x4 /* a signal frame (its CIE has 'S'): the frame it
			      * returns to was interrupted, looked up at its pc */
/*
 * Two full-row shapes the loader rewrites for the kernel (as
 * UNWIND_KROW_*, userspace/unwind/unwind.h unwind_module__kernel_row):
 *  - PLT: the lazy PLT's CFA expression (binutils' .eh_frame for .plt:
 *    DW_OP_breg7 off; DW_OP_breg16 0; lit15; and; litT; ge; lit3; shl;
 *    plus): CFA = rsp + cfa_off + ((pc & 15) >= T ? 8 : 0), with T in
 *    cfa_reg; the slots' rules as a compact row's, from the CFA.
 *  - SIGFRAME: a signal trampoline whose CFA is DW_OP_breg7 cfa_off;
 *    DW_OP_deref and whose slots are saved at rsp + off8[i] * 8 (kind
 *    OFFSET; glibc's __restore_rt: the ucontext at rsp).  The registers
 *    outside the slots it restores are not kept: where the kernel cannot
 *    step the frame it returns to, it hands over at the trampoline.
 */
#define MS_KU_ROW_PLT 0x10
#define MS_KU_ROW_SIGFRAME 0x20

/* Bit 63 of an unwound pc (user addresses never have it): the frame is a
 * signal frame (its row has MS_KU_ROW_SIGNAL), so the next is an
 * activation (looked up at its pc).  Userspace clears it. */
#define MS_KU_PC_SIGNAL (1ull << 63)

/* Rule kinds of a compact row's slot (2 bits each), as enum unwind_rule_kind. */
#define MS_KU_RULE_UNDEF 0
#define MS_KU_RULE_SAME 1
#define MS_KU_RULE_OFFSET 2
#define MS_KU_RULE_VAL_OFFSET 3

/* Slots: 0 rip (return address), 1 rsp, 2 rbp, 3 rbx, 4..7 r12..r15 (the
 * order of struct ms_regs_x86_64). */
#define MS_KU_SLOTS 8

struct ms_ku_row {
	__s32 cfa_off; /* CFA = reg[cfa_reg] + cfa_off */
	__u8 cfa_reg;  /* DWARF register (7 rsp, 6 rbp, ...) */
	__u8 flags;    /* MS_KU_ROW_* */
	__u16 kinds;   /* MS_KU_RULE_* of slot i at bits 2i..2i+1 */
	__s8 off8[MS_KU_SLOTS]; /* OFFSET / VAL_OFFSET of slot i, bytes / 8 */
};
_Static_assert(sizeof(struct ms_ku_row) == 16, "ms_ku_row size");

struct ms_ku_module {
	__u64 base;  /* ELF vaddr of the module's row 0 */
	__u32 first; /* index of row 0 in ku_rows / ku_starts */
	__u32 nrows; /* rows including the sentinel; 0 = not loaded */
};
_Static_assert(sizeof(struct ms_ku_module) == 16, "ms_ku_module size");

struct ms_ku_mapping {
	__u64 start, end; /* runtime addresses [start, end) */
	__u64 bias;	  /* runtime address - ELF vaddr */
	__u32 module;	  /* index into ku_modules */
	__u32 reserved;
};
_Static_assert(sizeof(struct ms_ku_mapping) == 32, "ms_ku_mapping size");

struct ms_ku_proc {
	__u32 n;	 /* mappings used, <= MS_KU_PROC_MAPS */
	__u32 mm_cookie; /* the address space they are of (ms_kunwind.module) */
	struct ms_ku_mapping maps[MS_KU_PROC_MAPS]; /* sorted by start, disjoint */
};
_Static_assert(sizeof(struct ms_ku_proc) == 8 + 32 * MS_KU_PROC_MAPS, "ms_ku_proc size");

/* ms_kunwind.status */
#define MS_KU_DONE 1   /* the pcs are the whole stack (the outermost frame reached) */
#define MS_KU_RESUME 2 /* userspace unwinds on from the last pc */

/* ms_kunwind.cause: why the kernel stopped (counters "kunwind.stop.*"). */
#define MS_KU_STOPS(X)                                                                             \
	X(NONE, "none")                                                                            \
	X(NO_PROC, "no_proc")           /* no ku_procs entry for the process yet */                \
	X(NO_MAPPING, "no_mapping")     /* pc in no executable file mapping (JIT, vdso) */         \
	X(NO_ROWS, "no_rows")           /* the module's rows are not loaded (module set) */        \
	X(NO_ROW, "no_row")             /* no CFI row at the pc */                                 \
	X(UNSUPPORTED, "unsupported")   /* expression rule (not PLT/sigframe), other CFA reg */ \
	X(READ, "read")                 /* a read outside the copy window or a fault */            \
	X(REG, "reg")                   /* the CFA register is not recoverable */                  \
	X(LOOP, "loop")                 /* the CFA did not grow */                                 \
	X(DEPTH, "depth")               /* MS_KU_MAX_FRAMES reached */                             \
	X(NO_REGS, "no_regs")           /* no user registers */

enum ms_ku_stop {
#define MS_KU_STOP_ENUM(id, name) MS_KU_STOP_##id,
	MS_KU_STOPS(MS_KU_STOP_ENUM)
#undef MS_KU_STOP_ENUM
	MS_KU_STOP_COUNT
};

struct ms_kunwind {
	struct ms_regs_x86_64 regs; /* RESUME: registers of the last pc's frame */
	__u64 prev_cfa;		    /* RESUME with ustack_len > 1: CFA of the frame below */
	__u64 copy_sp;		    /* runtime address of the stack copy's first byte */
	__u32 module;		    /* NO_ROWS: the module whose rows are wanted; NO_PROC,
				     * NO_MAPPING: the address space's cookie (a keyed hash
				     * of the task's mm: a ku_procs entry holding another
				     * is not used, so a table told for the image before an
				     * exec never serves the one after) */
	__u8 status;		    /* MS_KU_DONE or MS_KU_RESUME */
	__u8 cause;		    /* enum ms_ku_stop */
	__u8 valid;		    /* bit i: field i of regs is known (ip, sp, bp, bx, r12..) */
	__u8 reserved;
};
_Static_assert(sizeof(struct ms_kunwind) == MS_KUNWIND_BYTES, "ms_kunwind size");
_Static_assert(MS_KU_STOP_COUNT < 256, "cause fits a byte");

#endif
