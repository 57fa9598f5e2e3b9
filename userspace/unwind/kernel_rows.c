// SPDX-License-Identifier: MIT
/*
 * The rows the sampler's in-kernel unwinder takes (unwind.h,
 * unwind_module__kernel_row): compact rows as they are, and the two full-row
 * shapes it steps itself rewritten into 16 bytes.  A full row is rewritten
 * only when the kernel's step computes exactly what step_full()
 * (unwind.c) computes for the registers it keeps; anything else stays a
 * full row and the kernel hands that frame over to userspace.
 */
#include <dwarf.h>
#include <string.h>

#include "unwind_internal.h"

_Static_assert(!(UNWIND_KROW_PLT &
		 (UNWIND_ROW_NONE | UNWIND_ROW_FULL | UNWIND_ROW_SIGNAL | UNWIND_ROW_DEBUG_FRAME)),
	       "kernel row flags are free row flags");
_Static_assert(!(UNWIND_KROW_SIGFRAME & (UNWIND_ROW_NONE | UNWIND_ROW_FULL | UNWIND_ROW_SIGNAL |
					 UNWIND_ROW_DEBUG_FRAME | UNWIND_KROW_PLT)),
	       "kernel row flags are free row flags");

/* ops of an EXPR rule or CFA, or NULL when it has not n of them. */
static const Dwarf_Op *expr_ops(const struct unwind_module *m, const struct unwind_rule *r,
				size_t n)
{
	if (r->nops != n || r->op > m->nops || m->nops - r->op < n)
		return NULL;
	return m->ops + r->op;
}

/* binutils' lazy PLT: CFA = rsp + N + ((rip & 15) >= T) << 3. */
static bool plt_row(const struct unwind_module *m, const struct unwind_full *f,
		    struct unwind_row *row)
{
	const Dwarf_Op *o = expr_ops(m, &f->cfa, 9);
	int64_t n;

	if (!o || f->cfa.kind != UNWIND_CFA_EXPR || f->ra_reg != UNWIND_REG_RA)
		return false;
	n = (int64_t)o[0].number;
	if (o[0].atom != DW_OP_breg7 || n < INT32_MIN || n > INT32_MAX ||
	    o[1].atom != DW_OP_breg16 || o[1].number != 0 || o[2].atom != DW_OP_lit15 ||
	    o[3].atom != DW_OP_and || o[4].atom < DW_OP_lit0 || o[4].atom > DW_OP_lit15 ||
	    o[5].atom != DW_OP_ge || o[6].atom != DW_OP_lit3 || o[7].atom != DW_OP_shl ||
	    o[8].atom != DW_OP_plus)
		return false;
	if (!unwind_full__compact_slots(f, row) || (row->kinds & 3) != UNWIND_RULE_OFFSET)
		return false;
	row->cfa_off = (int32_t)n;
	row->cfa_reg = (uint8_t)(o[4].atom - DW_OP_lit0);
	row->flags |= UNWIND_KROW_PLT;
	return true;
}

/* A signal trampoline: CFA = *(rsp + N), slots saved at rsp + M. */
static bool sigframe_row(const struct unwind_module *m, const struct unwind_full *f,
			 struct unwind_row *row)
{
	const Dwarf_Op *o = expr_ops(m, &f->cfa, 2);
	int64_t n;

	if (!o || f->cfa.kind != UNWIND_CFA_EXPR || f->ra_reg != UNWIND_REG_RA)
		return false;
	n = (int64_t)o[0].number;
	if (o[0].atom != DW_OP_breg7 || n < INT32_MIN || n > INT32_MAX || o[1].atom != DW_OP_deref)
		return false;
	for (int i = 0; i < UNWIND_SLOTS; i++) {
		const struct unwind_rule *r = &f->regs[unwind_slot_reg[i]];
		const Dwarf_Op *e;

		switch (r->kind) {
		case UNWIND_RULE_UNDEF:
		case UNWIND_RULE_SAME:
			row->kinds |= (uint16_t)(r->kind << (2 * i));
			break;
		case UNWIND_RULE_EXPR:
			/* libdw's form of DW_CFA_expression: the CFA pushed first */
			e = expr_ops(m, r, 2);
			if (!e || e[0].atom != DW_OP_call_frame_cfa || e[1].atom != DW_OP_breg7 ||
			    !unwind_fits_off8((int64_t)e[1].number))
				return false;
			row->off8[i] = (int8_t)((int64_t)e[1].number / 8);
			row->kinds |= (uint16_t)(UNWIND_RULE_OFFSET << (2 * i));
			break;
		default:
			return false;
		}
	}
	if ((row->kinds & 3) != UNWIND_RULE_OFFSET)
		return false;
	row->cfa_off = (int32_t)n;
	row->cfa_reg = UNWIND_REG_SP;
	row->flags |= UNWIND_KROW_SIGFRAME;
	return true;
}

void unwind_module__kernel_row(const struct unwind_module *m, uint32_t i, void *out)
{
	const struct unwind_row *src = unwind_module__row_i(m, i);
	struct unwind_row row;
	const struct unwind_full *f;

	memcpy(out, src, sizeof(row));
	if (!(src->flags & UNWIND_ROW_FULL) || src->cfa_off < 0 || (size_t)src->cfa_off >= m->nfull)
		return;
	f = &m->full[src->cfa_off];
	memset(&row, 0, sizeof(row));
	row.flags = src->flags & ~UNWIND_ROW_FULL;
	if (plt_row(m, f, &row)) {
		memcpy(out, &row, sizeof(row));
		return;
	}
	memset(&row, 0, sizeof(row));
	row.flags = src->flags & ~UNWIND_ROW_FULL;
	if (sigframe_row(m, f, &row))
		memcpy(out, &row, sizeof(row));
}
