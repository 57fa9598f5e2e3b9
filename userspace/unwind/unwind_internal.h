/* SPDX-License-Identifier: MIT */
/*
 * Private to userspace/unwind/ (and tests/unit/test_unwind*.c): the compiled
 * CFI table and its rules.
 *
 * Table shape (struct unwind_module): rows sorted by start address, adjacent
 * and non-overlapping; row i covers ELF virtual addresses
 * [base + starts[i], base + starts[i + 1]); the last row is a sentinel
 * without CFI that only ends the range.  Gaps between FDEs are rows flagged
 * UNWIND_ROW_NONE.  page_first[] narrows a lookup to a few rows: for page p
 * (addresses base + [p << page_shift, (p + 1) << page_shift)), the row holding
 * an address is between page_first[p] and page_first[p + 1], both included.
 *
 * A compact row (struct unwind_row, 16 bytes) covers the common case; a row
 * flagged UNWIND_ROW_FULL instead points at a struct unwind_full holding
 * libdw's complete answer for that row (all 17 registers, DWARF expressions
 * copied verbatim into the module's ops array, in libdw's form: register
 * expression rules start with DW_OP_call_frame_cfa and val_expression rules
 * end with DW_OP_stack_value, as dwarf_frame_register() gives them).
 *
 * Everything here is written once by unwind_module.c while opening and read-only
 * afterwards.
 */
#ifndef MS_UNWIND_INTERNAL_H
#define MS_UNWIND_INTERNAL_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/unwind/unwind.h"

/* DWARF registers of x86-64 the unwinder tracks (ebl_frame_nregs of libdw). */
#define UNWIND_NREGS  17
#define UNWIND_REG_BX 3
#define UNWIND_REG_BP 6
#define UNWIND_REG_SP 7
#define UNWIND_REG_RA 16 /* rip: the return address column of x86-64 CIEs */

/* Register rules.  The first four are the ones a compact row can hold (2 bits). */
enum unwind_rule_kind {
	UNWIND_RULE_UNDEF = 0,	    /* value not recoverable (undefined) */
	UNWIND_RULE_SAME = 1,	    /* caller's value = this frame's value */
	UNWIND_RULE_OFFSET = 2,	    /* saved at address CFA + off */
	UNWIND_RULE_VAL_OFFSET = 3, /* value = CFA + off */
	UNWIND_RULE_REGISTER = 4,   /* value = this frame's register reg */
	UNWIND_RULE_EXPR = 5,	    /* DWARF expression ops[op .. op + nops) */
	UNWIND_RULE_INVALID = 6,    /* libdw could not give a rule: not recoverable */
};

/* CFA rules. */
enum unwind_cfa_kind {
	UNWIND_CFA_REG_OFFSET = 0, /* CFA = register reg + off */
	UNWIND_CFA_EXPR = 1,	   /* CFA = value of DWARF expression ops[op .. op + nops) */
	UNWIND_CFA_INVALID = 2,	   /* no usable CFA rule */
};

struct unwind_rule {
	uint8_t kind; /* enum unwind_rule_kind, or enum unwind_cfa_kind for a CFA */
	uint8_t reg;  /* REGISTER / CFA_REG_OFFSET: the DWARF register */
	uint16_t nops;
	uint32_t op; /* EXPR: first op in unwind_module.ops */
	int64_t off; /* OFFSET, VAL_OFFSET, CFA_REG_OFFSET: bytes */
};

/* libdw's full answer for one row. */
struct unwind_full {
	struct unwind_rule cfa;
	struct unwind_rule regs[UNWIND_NREGS];
	uint8_t ra_reg; /* return address column; 0xff if libdw gave none */
};

/* Compact-row register slots: slot i holds the rule of unwind_slot_reg[i]. */
#define UNWIND_SLOTS 8
extern const uint8_t unwind_slot_reg[UNWIND_SLOTS]; /* rip, rsp, rbp, rbx, r12..r15 */

#define UNWIND_ROW_NONE	       0x1 /* no CFI for these addresses */
#define UNWIND_ROW_FULL	       0x2 /* rules in unwind_module.full[cfa_off] */
#define UNWIND_ROW_SIGNAL      0x4 /* the FDE's CIE has augmentation 'S' */
#define UNWIND_ROW_DEBUG_FRAME 0x8 /* from .debug_frame (informational) */

struct unwind_row {
	int32_t cfa_off; /* compact: CFA = reg[cfa_reg] + cfa_off; FULL: index in full[] */
	uint8_t cfa_reg; /* compact: DWARF register <= 16 */
	uint8_t flags;	 /* UNWIND_ROW_* */
	uint16_t kinds;	 /* compact: enum unwind_rule_kind (0..3) of slot i at bits 2i..2i+1 */
	int8_t off8[UNWIND_SLOTS]; /* compact: OFFSET / VAL_OFFSET offset of slot i, bytes / 8 */
};
_Static_assert(sizeof(struct unwind_row) == 16, "unwind_row size");

struct unwind_module {
	uint64_t base;		  /* ELF vaddr of row 0 */
	uint32_t nrows;		  /* including the final sentinel row; 0 = no CFI at all */
	uint32_t page_shift;	  /* log2 of bytes per page_first[] entry */
	uint32_t npages;	  /* page_first[] has npages + 1 entries */
	uint32_t *starts;	  /* [nrows] vaddr - base, strictly ascending */
	/* Row i is palette[idx16[i]] (idx32 when the palette outgrows 16 bits):
	 * a module's rows are a few hundred distinct rules repeated (libLLVM:
	 * 987 in 950k rows), so a row takes 6 bytes, not 20. */
	struct unwind_row *palette; /* [npalette] distinct rows */
	uint32_t npalette;
	uint16_t *idx16;	  /* [nrows], or NULL */
	uint32_t *idx32;	  /* [nrows] when idx16 is NULL */
	uint32_t *page_first;	  /* [npages + 1] */
	struct unwind_full *full; /* [nfull] */
	size_t nfull;
	Dwarf_Op *ops; /* [nops] */
	size_t nops;
	/* Entry code without CFI: ELF vaddrs [entry_lo, entry_hi) from the ELF
	 * header's e_entry up to the next CFI row, at most UNWIND_ENTRY_SPAN
	 * bytes (ld.so's _start, RTLD_START in glibc's dl-machine.h, has no
	 * FDE).  The process starts there on the kernel's initial stack, so a
	 * frame whose pc lies in it is the outermost.  Empty (0, 0) when e_entry
	 * is 0, covered by CFI (which then decides), or for in-memory images. */
	uint64_t entry_lo, entry_hi;
	struct unwind_module_stats stats;
};

/* Longest entry code without CFI taken as the outermost frame (bytes):
 * glibc's x86-64 RTLD_START is 8 bytes before _dl_start_user. */
#define UNWIND_ENTRY_SPAN 64

/* True when ELF vaddr lies in m's entry code (see entry_lo). */
static inline bool unwind_module__is_entry(const struct unwind_module *m, uint64_t vaddr)
{
	return vaddr - m->entry_lo < m->entry_hi - m->entry_lo;
}

/* An offset that a compact row's off8 holds. */
static inline bool unwind_fits_off8(int64_t off)
{
	return off % 8 == 0 && off / 8 >= INT8_MIN && off / 8 <= INT8_MAX;
}

/*
 * The slots' rules of f into row (kinds, off8, CFA-relative), when every
 * rule fits a compact row and no other register has a rule: the compact
 * form's register part, for the table (unwind_module.c) and the kernel's
 * rows (kernel_rows.c).  Leaves the CFA fields alone.
 */
bool unwind_full__compact_slots(const struct unwind_full *f, struct unwind_row *row);

/* Row i of m's table. */
static inline const struct unwind_row *unwind_module__row_i(const struct unwind_module *m,
							    uint32_t i)
{
	return &m->palette[m->idx16 ? m->idx16[i] : m->idx32[i]];
}

/* Index of the row holding ELF vaddr, or UINT32_MAX when no row does. */
static inline uint32_t unwind_module__row_index(const struct unwind_module *m, uint64_t vaddr)
{
	uint64_t off = vaddr - m->base;
	if (vaddr < m->base || m->nrows == 0 || off >= m->starts[m->nrows - 1])
		return UINT32_MAX;
	uint32_t lo = m->page_first[off >> m->page_shift];
	uint32_t hi = m->page_first[(off >> m->page_shift) + 1];
	while (lo < hi) {
		uint32_t mid = (lo + hi + 1) / 2;
		if (m->starts[mid] <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Row holding ELF vaddr, or NULL when the module has no CFI there. */
static inline const struct unwind_row *unwind_module__row(const struct unwind_module *m,
							  uint64_t vaddr)
{
	uint32_t i = unwind_module__row_index(m, vaddr);
	if (i == UINT32_MAX)
		return NULL;
	const struct unwind_row *row = unwind_module__row_i(m, i);
	return (row->flags & UNWIND_ROW_NONE) ? NULL : row;
}

/*
 * True when libdw's x86-64 ABI default rules have rax and rbx swapped (see
 * libdw_abi.c); compiled rows then use the psABI's defaults for those two.
 * Probed once per process; thread-safe.
 */
bool unwind__libdw_abi_slip(void);

/* Every rule of the row at vaddr, decoded to the full form (tests, debugging). */
struct unwind_rules {
	uint64_t start, end; /* ELF vaddrs of the row */
	bool signal;
	bool debug_frame;
	bool full; /* the row is a full (slow-path) row */
	uint8_t ra_reg;
	struct unwind_rule cfa;
	struct unwind_rule regs[UNWIND_NREGS];
	const Dwarf_Op *ops; /* the module's ops array, for EXPR rules */
};
/* Returns false when the module has no CFI at vaddr. */
bool unwind_module__rules_at(const struct unwind_module *m, uint64_t vaddr,
			     struct unwind_rules *out);

#endif /* MS_UNWIND_INTERNAL_H */
