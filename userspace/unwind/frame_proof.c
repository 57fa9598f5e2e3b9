// SPDX-License-Identifier: MIT
/*
 * Frames proved from code (frame_proof.h).  Decoding is capstone's
 * (cs_disasm_iter with detail: operands and the registers each instruction
 * writes, cs_regs_access); this file only tracks what rsp and rbp hold.
 * State: CFA = (cfa_bp ? rbp : rsp) + cfa_off; the caller's rbp is saved
 * at CFA + bp_off once a "push rbp" saved it.
 *
 * capstone is opened with dlopen at the first proof, not linked: its
 * relocated tables are 3 MiB of RSS, which every recording without JIT
 * code (and every other command) would carry (docs/recorder-memory.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include <capstone/capstone.h>

#include "frame_proof.h"

/* capstone's entry points, resolved once (all or none). */
static struct {
	__typeof__(cs_open) *open;
	__typeof__(cs_option) *option;
	__typeof__(cs_malloc) *malloc;
	__typeof__(cs_disasm_iter) *disasm_iter;
	__typeof__(cs_regs_access) *regs_access;
	__typeof__(cs_free) *free;
	__typeof__(cs_close) *close;
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;

static void capstone__load(void)
{
	void *h = dlopen("libcapstone.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		h = dlopen("libcapstone.so", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return;
	cs.option = (__typeof__(cs.option))dlsym(h, "cs_option");
	cs.malloc = (__typeof__(cs.malloc))dlsym(h, "cs_malloc");
	cs.disasm_iter = (__typeof__(cs.disasm_iter))dlsym(h, "cs_disasm_iter");
	cs.regs_access = (__typeof__(cs.regs_access))dlsym(h, "cs_regs_access");
	cs.free = (__typeof__(cs.free))dlsym(h, "cs_free");
	cs.close = (__typeof__(cs.close))dlsym(h, "cs_close");
	if (cs.option && cs.malloc && cs.disasm_iter && cs.regs_access && cs.free && cs.close)
		cs.open = (__typeof__(cs.open))dlsym(h, "cs_open"); /* last: the flag */
}

struct proof_state {
	int32_t cfa_off;
	int32_t bp_off;
	bool cfa_bp;
	bool bp_saved;
};

static bool is_reg(const cs_x86_op *op, x86_reg reg)
{
	return op->type == X86_OP_REG && op->reg == reg;
}

static bool writes(csh h, const cs_insn *insn, x86_reg reg)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;

	if (cs.regs_access(h, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return true; /* unknown: assume the worst */
	for (uint8_t i = 0; i < nwr; i++)
		if (wr[i] == reg)
			return true;
	return false;
}

static bool ends_proof(const cs_insn *insn)
{
	for (uint8_t i = 0; i < insn->detail->groups_count; i++)
		switch (insn->detail->groups[i]) {
		case CS_GRP_JUMP:
		case CS_GRP_CALL:
		case CS_GRP_RET:
		case CS_GRP_IRET:
		case CS_GRP_INT:
			return true;
		}
	return insn->id == X86_INS_HLT || insn->id == X86_INS_UD2;
}

/*
 * Apply insn to s.  Returns false when its effect on rsp or rbp is not one
 * the proof follows (the proof then ends before it).
 */
static bool step(csh h, const cs_insn *insn, struct proof_state *s)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;

	switch (insn->id) {
	case X86_INS_PUSH:
		if (x->op_count != 1 || op[0].size != 8)
			return false;
		if (!s->cfa_bp)
			s->cfa_off += 8;
		if (is_reg(&op[0], X86_REG_RBP) && !s->bp_saved && !s->cfa_bp) {
			s->bp_saved = true;
			s->bp_off = -s->cfa_off;
		}
		return true;
	case X86_INS_POP:
		if (x->op_count != 1 || op[0].size != 8 || s->cfa_bp)
			return false;
		if (is_reg(&op[0], X86_REG_RSP))
			return false;
		if (is_reg(&op[0], X86_REG_RBP)) {
			/* Only the saved caller's rbp may be popped into rbp. */
			if (!s->bp_saved || s->bp_off != -s->cfa_off)
				return false;
			s->bp_saved = false;
		}
		s->cfa_off -= 8;
		return s->cfa_off >= 8;
	case X86_INS_SUB:
	case X86_INS_ADD:
		if (x->op_count == 2 && is_reg(&op[0], X86_REG_RSP)) {
			if (op[1].type != X86_OP_IMM || op[1].imm % 8 || op[1].imm > 1 << 20 ||
			    op[1].imm < -(1 << 20))
				return false;
			if (!s->cfa_bp)
				s->cfa_off += (int32_t)(insn->id == X86_INS_SUB ? op[1].imm : -op[1].imm);
			return s->cfa_off >= 8;
		}
		break;
	case X86_INS_MOV:
		if (x->op_count == 2 && is_reg(&op[0], X86_REG_RBP) && is_reg(&op[1], X86_REG_RSP)) {
			if (s->cfa_bp)
				return false;
			s->cfa_bp = true; /* rbp = rsp: CFA = rbp + the same offset */
			return true;
		}
		if (x->op_count == 2 && is_reg(&op[0], X86_REG_RSP) && is_reg(&op[1], X86_REG_RBP)) {
			if (!s->cfa_bp)
				return false;
			s->cfa_bp = false; /* rsp = rbp */
			return true;
		}
		break;
	default:
		break;
	}
	/* Anything else must leave the frame's registers alone, except rsp
	 * while the CFA is rbp-based and rbp once it is saved. */
	if (writes(h, insn, X86_REG_RSP) && !s->cfa_bp)
		return false;
	if (writes(h, insn, X86_REG_RBP) && (s->cfa_bp || !s->bp_saved))
		return false;
	return true;
}

int frame_proof__prove(const uint8_t *code, size_t len, uint64_t addr, uint64_t end_max,
		       struct unwind_proof_row *rows, size_t max)
{
	struct proof_state s = {.cfa_off = 8};
	const uint8_t *p = code;
	uint64_t at = addr;
	size_t left = len, n = 0;
	cs_insn *insn = NULL;
	csh h;
	int err = 0;

	pthread_once(&cs_once, capstone__load);
	if (!cs.open || cs.open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK)
		return -EINVAL;
	if (cs.option(h, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
		err = -EINVAL;
		goto cleanup;
	}
	insn = cs.malloc(h);
	if (!insn) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int i = 0; i < FRAME_PROOF_MAX_INSNS && cs.disasm_iter(h, &p, &left, &at, insn); i++) {
		struct proof_state next = s;
		uint64_t start = insn->address, end = insn->address + insn->size;
		bool last = ends_proof(insn);

		if (end > end_max)
			break;
		if (!last && !step(h, insn, &next))
			break;
		/* The state at this instruction: extend the previous row or add one. */
		struct unwind_proof_row row = {
			.start = start,
			.end = end,
			.cfa_off = s.cfa_off,
			.bp_off = s.bp_saved ? s.bp_off : 0,
			.cfa_bp = s.cfa_bp,
			.bp_saved = s.bp_saved,
		};
		if (n && rows[n - 1].end == start && rows[n - 1].cfa_off == row.cfa_off &&
		    rows[n - 1].bp_off == row.bp_off && rows[n - 1].cfa_bp == row.cfa_bp &&
		    rows[n - 1].bp_saved == row.bp_saved) {
			rows[n - 1].end = end;
		} else {
			if (n == max)
				break;
			rows[n++] = row;
		}
		s = next;
		if (last)
			break;
	}
	err = (int)n;
cleanup:
	if (insn)
		cs.free(insn, 1);
	cs.close(&h);
	return err;
}
