/* SPDX-License-Identifier: MIT */
/*
 * The unwind loop and the DWARF expression evaluator, over a sample's
 * registers and copied stack bytes only.
 *
 * Semantics follow libdwfl's unwinder (frame_unwind.c), which is the
 * reference the tests compare with:
 *  - the row of a frame is looked up at its pc, minus 1 unless the frame is
 *    the first one or the frame below it was a signal frame;
 *  - a return address rule "undefined", or a return address of 0, ends the
 *    stack as complete;
 *  - a register whose rule cannot be evaluated is left unknown in the caller
 *    (failing only if a later rule needs it);
 *  - expression rules as dwarf_frame_register() gives them: a leading
 *    DW_OP_call_frame_cfa pushes the CFA and makes the result a location
 *    (read from the stack), DW_OP_stack_value makes it a value.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/unwind/unwind_internal.h"

/* DWARF expression limits (a real CFI expression uses a handful). */
#define EXPR_STACK_MAX 64
#define EXPR_STEPS_MAX 4096
/* find() answers kept during one unwind (a stack alternates between a few modules). */
#define MAP_CACHE 4

static const char *const reason_names[] = {
#define UNWIND_REASON_TEXT(name, text) [name] = text,
    UNWIND_REASONS(UNWIND_REASON_TEXT)
#undef UNWIND_REASON_TEXT
};

const char *unwind_reason__name(enum unwind_reason r)
{
	if ((unsigned)r >= UNWIND_REASON__COUNT)
		return "[?]";
	return reason_names[r];
}

/* The copied bytes: runtime addresses [lo, lo + len). */
struct reader {
	const uint8_t *bytes;
	uint64_t lo;
	uint64_t len;
};

/* 0, or the reason a read of size bytes at addr is impossible. */
static inline int read_mem(const struct reader *rd, uint64_t addr, unsigned size, uint64_t *out)
{
	uint64_t off = addr - rd->lo;
	if (addr >= rd->lo && rd->len >= size && off <= rd->len - size) {
		uint64_t v = 0;
		memcpy(&v, rd->bytes + off, size);
		*out = v;
		return 0;
	}
	return addr < rd->lo ? UNWIND_CFA_OUT_OF_RANGE : UNWIND_STACK_EXHAUSTED;
}

/* Registers of one frame: DWARF numbering, valid bit per register. */
struct regs {
	uint64_t r[UNWIND_NREGS];
	uint32_t valid;
};

static int cmp_op_offset(const void *key, const void *elem)
{
	uint64_t k = *(const uint64_t *)key;
	const Dwarf_Op *op = elem;
	return (k > op->offset) - (k < op->offset);
}

/*
 * Evaluates a DWARF expression (DWARF 5 section 2.5, the CFI subset and the
 * operations libdwfl's expr_eval accepts).  cfa: the CFA when the expression
 * may use DW_OP_call_frame_cfa (register rules), NULL for the CFA's own rule.
 * Returns 0 with *result, or an enum unwind_reason.
 */
static int expr_eval(const Dwarf_Op *ops, size_t nops, const struct regs *st,
		     const struct reader *rd, uint64_t bias, const uint64_t *cfa, uint64_t *result)
{
	uint64_t stack[EXPR_STACK_MAX];
	size_t sp = 0, steps = 0;
	bool is_location = false;
	uint64_t a, b;
	int err;

#define NEED(n)                                                                                    \
	do {                                                                                       \
		if (sp < (n))                                                                      \
			return UNWIND_BAD_CFI;                                                     \
	} while (0)
#define PUSH(v)                                                                                    \
	do {                                                                                       \
		if (sp >= EXPR_STACK_MAX)                                                          \
			return UNWIND_BAD_CFI;                                                     \
		uint64_t v_ = (v);                                                                 \
		stack[sp++] = v_;                                                                  \
	} while (0)
#define REG(n, out)                                                                                \
	do {                                                                                       \
		uint64_t reg_ = (n);                                                               \
		if (reg_ >= UNWIND_NREGS || !(st->valid & (1u << reg_)))                           \
			return UNWIND_REG_UNRECOVERABLE;                                           \
		(out) = st->r[reg_];                                                               \
	} while (0)

	if (nops == 0)
		return UNWIND_BAD_CFI;
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		if (++steps > EXPR_STEPS_MAX)
			return UNWIND_BAD_CFI;
		switch (op->atom) {
		case DW_OP_lit0 ... DW_OP_lit31:
			PUSH((uint64_t)(op->atom - DW_OP_lit0));
			break;
		case DW_OP_addr:
			PUSH(op->number + bias);
			break;
		case DW_OP_const1u:
		case DW_OP_const1s:
		case DW_OP_const2u:
		case DW_OP_const2s:
		case DW_OP_const4u:
		case DW_OP_const4s:
		case DW_OP_const8u:
		case DW_OP_const8s:
		case DW_OP_constu:
		case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_reg0 ... DW_OP_reg31:
			REG(op->atom - DW_OP_reg0, a);
			PUSH(a);
			break;
		case DW_OP_regx:
			REG(op->number, a);
			PUSH(a);
			break;
		case DW_OP_breg0 ... DW_OP_breg31:
			REG(op->atom - DW_OP_breg0, a);
			PUSH(a + op->number);
			break;
		case DW_OP_bregx:
			REG(op->number, a);
			PUSH(a + op->number2);
			break;
		case DW_OP_dup:
			NEED(1);
			PUSH(stack[sp - 1]);
			break;
		case DW_OP_drop:
			NEED(1);
			sp--;
			break;
		case DW_OP_pick:
			if (op->number >= sp)
				return UNWIND_BAD_CFI;
			PUSH(stack[sp - 1 - op->number]);
			break;
		case DW_OP_over:
			NEED(2);
			PUSH(stack[sp - 2]);
			break;
		case DW_OP_swap:
			NEED(2);
			a = stack[sp - 1];
			stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = a;
			break;
		case DW_OP_rot:
			NEED(3);
			a = stack[sp - 1];
			stack[sp - 1] = stack[sp - 2];
			stack[sp - 2] = stack[sp - 3];
			stack[sp - 3] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			err = read_mem(rd, stack[sp - 1], 8, &stack[sp - 1]);
			if (err)
				return err;
			break;
		case DW_OP_deref_size:
			NEED(1);
			if (op->number == 0 || op->number > 8)
				return UNWIND_BAD_CFI;
			err = read_mem(rd, stack[sp - 1], (unsigned)op->number, &stack[sp - 1]);
			if (err)
				return err;
			break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)stack[sp - 1] < 0)
				stack[sp - 1] = -stack[sp - 1];
			break;
		case DW_OP_neg:
			NEED(1);
			stack[sp - 1] = -stack[sp - 1];
			break;
		case DW_OP_not:
			NEED(1);
			stack[sp - 1] = ~stack[sp - 1];
			break;
		case DW_OP_plus_uconst:
			NEED(1);
			stack[sp - 1] += op->number;
			break;
		case DW_OP_and:
		case DW_OP_div:
		case DW_OP_minus:
		case DW_OP_mod:
		case DW_OP_mul:
		case DW_OP_or:
		case DW_OP_plus:
		case DW_OP_shl:
		case DW_OP_shr:
		case DW_OP_shra:
		case DW_OP_xor:
		case DW_OP_le:
		case DW_OP_ge:
		case DW_OP_eq:
		case DW_OP_lt:
		case DW_OP_gt:
		case DW_OP_ne: {
			NEED(2);
			b = stack[--sp];
			a = stack[sp - 1];
			int64_t sa = (int64_t)a, sb = (int64_t)b;
			uint64_t v;
			switch (op->atom) {
			case DW_OP_and:
				v = a & b;
				break;
			case DW_OP_div:
				if (b == 0)
					return UNWIND_BAD_CFI;
				v = (sb == -1) ? -a : (uint64_t)(sa / sb);
				break;
			case DW_OP_minus:
				v = a - b;
				break;
			case DW_OP_mod:
				if (b == 0)
					return UNWIND_BAD_CFI;
				v = a % b;
				break;
			case DW_OP_mul:
				v = a * b;
				break;
			case DW_OP_or:
				v = a | b;
				break;
			case DW_OP_plus:
				v = a + b;
				break;
			case DW_OP_shl:
				v = b >= 64 ? 0 : a << b;
				break;
			case DW_OP_shr:
				v = b >= 64 ? 0 : a >> b;
				break;
			case DW_OP_shra:
				v = b >= 64 ? (sa < 0 ? ~0ull : 0) : (uint64_t)(sa >> b);
				break;
			case DW_OP_xor:
				v = a ^ b;
				break;
			case DW_OP_le:
				v = sa <= sb;
				break;
			case DW_OP_ge:
				v = sa >= sb;
				break;
			case DW_OP_eq:
				v = sa == sb;
				break;
			case DW_OP_lt:
				v = sa < sb;
				break;
			case DW_OP_gt:
				v = sa > sb;
				break;
			default:
				v = sa != sb;
				break;
			}
			stack[sp - 1] = v;
			break;
		}
		case DW_OP_bra:
			NEED(1);
			if (stack[--sp] == 0)
				break;
			/* fallthrough */
		case DW_OP_skip: {
			uint64_t target =
			    op->offset + 1 + 2 + (uint64_t)(int64_t)(int16_t)op->number;
			const Dwarf_Op *found =
			    bsearch(&target, ops, nops, sizeof(*ops), cmp_op_offset);
			if (!found)
				return UNWIND_BAD_CFI;
			i = (size_t)(found - ops) - 1;
			break;
		}
		case DW_OP_nop:
			break;
		case DW_OP_call_frame_cfa:
			if (!cfa)
				return UNWIND_BAD_CFI;
			PUSH(*cfa);
			is_location = true;
			break;
		case DW_OP_stack_value:
			is_location = false;
			break;
		default:
			return UNWIND_BAD_CFI;
		}
	}
	NEED(1);
	*result = stack[sp - 1];
	if (is_location)
		return read_mem(rd, *result, 8, result);
	return 0;
#undef NEED
#undef PUSH
#undef REG
}

/*
 * One step with a full row: CFA and every register from libdw's rules.
 * Returns 0 with *cfa, *pc and the caller's registers in *st; or a reason
 * (never 0), or -1 when the return address rule is undefined (outermost).
 */
static int step_full(const struct unwind_module *m, const struct unwind_full *f, struct regs *st,
		     const struct reader *rd, uint64_t bias, uint64_t *cfa_out, uint64_t *pc_out)
{
	uint64_t cfa;
	int err;
	if (f->ra_reg >= UNWIND_NREGS)
		return UNWIND_BAD_CFI;
	if (f->regs[f->ra_reg].kind == UNWIND_RULE_UNDEF)
		return -1;
	switch (f->cfa.kind) {
	case UNWIND_CFA_REG_OFFSET:
		if (!(st->valid & (1u << f->cfa.reg)))
			return UNWIND_REG_UNRECOVERABLE;
		cfa = st->r[f->cfa.reg] + (uint64_t)f->cfa.off;
		break;
	case UNWIND_CFA_EXPR:
		err = expr_eval(m->ops + f->cfa.op, f->cfa.nops, st, rd, bias, NULL, &cfa);
		if (err)
			return err;
		break;
	default:
		return UNWIND_BAD_CFI;
	}

	struct regs out = {.valid = 0};
	int ra_err = UNWIND_REG_UNRECOVERABLE;
	for (int reg = 0; reg < UNWIND_NREGS; reg++) {
		const struct unwind_rule *r = &f->regs[reg];
		uint64_t v = 0;
		err = 0;
		switch (r->kind) {
		case UNWIND_RULE_UNDEF:
			continue;
		case UNWIND_RULE_SAME:
			if (!(st->valid & (1u << reg)))
				continue;
			v = st->r[reg];
			break;
		case UNWIND_RULE_OFFSET:
			err = read_mem(rd, cfa + (uint64_t)r->off, 8, &v);
			break;
		case UNWIND_RULE_VAL_OFFSET:
			v = cfa + (uint64_t)r->off;
			break;
		case UNWIND_RULE_REGISTER:
			if (!(st->valid & (1u << r->reg)))
				err = UNWIND_REG_UNRECOVERABLE;
			else
				v = st->r[r->reg];
			break;
		case UNWIND_RULE_EXPR:
			err = expr_eval(m->ops + r->op, r->nops, st, rd, bias, &cfa, &v);
			break;
		default:
			err = UNWIND_BAD_CFI;
			break;
		}
		if (err) {
			if (reg == f->ra_reg)
				ra_err = err;
			continue;
		}
		out.r[reg] = v;
		out.valid |= 1u << reg;
	}
	if (!(out.valid & (1u << f->ra_reg)))
		return ra_err;
	*st = out;
	*cfa_out = cfa;
	*pc_out = out.r[f->ra_reg];
	return 0;
}

/* Mappings seen in one unwind, most recent at maps[last]; an empty range
 * [0, 0) matches nothing. */
struct map_cache {
	struct unwind_map maps[MAP_CACHE];
	unsigned nmaps, last;
};

/* The mapping of at, from the cache or find; NULL when find knows none (or
 * gives neither a module nor fp_step). */
static const struct unwind_map *map_cache__find(struct map_cache *c, uint64_t at,
						unwind_find_fn find, void *ctx)
{
	const struct unwind_map *map = &c->maps[c->last];
	struct unwind_map m = {0};

	if (at - map->start < map->end - map->start)
		return map;
	for (unsigned i = 0; i < c->nmaps; i++) {
		if (at - c->maps[i].start < c->maps[i].end - c->maps[i].start) {
			c->last = i;
			return &c->maps[i];
		}
	}
	if (!find(ctx, at, &m) || (!m.module && !m.fp_step))
		return NULL;
	if (m.end <= m.start || at - m.start >= m.end - m.start) {
		m.start = at;
		m.end = at + 1;
	}
	c->last = c->nmaps < MAP_CACHE ? c->nmaps++ : (c->last + 1) % MAP_CACHE;
	c->maps[c->last] = m;
	return &c->maps[c->last];
}

/*
 * One frame-pointer step (unwind__stack_ex says when it is taken): 0 with
 * *cfa, *pc and the caller's rbp, rsp and return address in *st, or the
 * reason to stop with (fail: the frame's reason without the step).
 */
static int step_fp(struct regs *st, const struct reader *rd, int fail, uint64_t *cfa, uint64_t *pc)
{
	uint64_t bp, sp, nbp, ra;

	if (!(st->valid & (1u << UNWIND_REG_BP)))
		return fail;
	bp = st->r[UNWIND_REG_BP];
	sp = (st->valid & (1u << UNWIND_REG_SP)) ? st->r[UNWIND_REG_SP] : rd->lo;
	if ((bp & 7) || bp < sp || bp < rd->lo || bp > UINT64_MAX - 16)
		return fail;
	if (read_mem(rd, bp, 8, &nbp) || read_mem(rd, bp + 8, 8, &ra))
		return UNWIND_STACK_EXHAUSTED;
	st->r[UNWIND_REG_BP] = nbp;
	st->r[UNWIND_REG_SP] = bp + 16;
	st->r[UNWIND_REG_RA] = ra;
	st->valid = (1u << UNWIND_REG_BP) | (1u << UNWIND_REG_SP) | (1u << UNWIND_REG_RA);
	*cfa = bp + 16;
	*pc = ra;
	return 0;
}

/*
 * The unwind loop from frame n - 1 (pcs[0..n) written, its registers in *st,
 * its pc in pc): see unwind__stack_ex.
 */
static size_t unwind_loop(struct regs *stp, const struct reader *rdp, uint64_t pc, bool activation,
			  bool have_prev, bool prev_signal, uint64_t prev_cfa, unwind_find_fn find,
			  void *ctx,
			  uint64_t *pcs, uint8_t *frame_flags, size_t n, size_t max,
			  enum unwind_reason *reason)
{
	struct regs st = *stp;
	const struct reader rd = *rdp;
	struct map_cache cache = {0};
	int why;

	for (;;) {
		uint64_t lookup = activation ? pc : pc - 1;
		const struct unwind_map *map = map_cache__find(&cache, lookup, find, ctx);
		const struct unwind_row *row;
		uint64_t cfa;

		if (!map) {
			why = UNWIND_NO_MODULE;
			break;
		}
		row = map->module ? unwind_module__row(map->module, lookup - map->bias) : NULL;
		if (!row && map->module &&
		    unwind_module__is_entry(map->module, lookup - map->bias)) {
			why = UNWIND_END_OUTERMOST;
			break;
		}
		if (!row) {
			int fail = map->module ? UNWIND_NO_CFI : UNWIND_NO_MODULE;

			why = fail;
			if (!map->fp_step)
				break;
			why = step_fp(&st, &rd, fail, &cfa, &pc);
			if (why)
				break;
			/* The return address must be code find knows (this
			 * lookup may reuse map's cache slot); 0 is no ending
			 * here (a thread's outermost rbp is 0, not its slot). */
			if (!pc || !map_cache__find(&cache, pc - 1, find, ctx)) {
				why = fail;
				break;
			}
			if (have_prev && (!prev_signal ? cfa <= prev_cfa : cfa == prev_cfa)) {
				why = UNWIND_LOOP;
				break;
			}
			if (n == max) {
				why = UNWIND_DEPTH_LIMIT;
				break;
			}
			pcs[n] = pc;
			if (frame_flags)
				frame_flags[n] = UNWIND_FRAME_FP;
			n++;
			have_prev = true;
			prev_cfa = cfa;
			prev_signal = false;
			activation = false;
			continue;
		}
		bool signal = (row->flags & UNWIND_ROW_SIGNAL) != 0;
		if (signal && frame_flags)
			frame_flags[n - 1] |= UNWIND_FRAME_SIGNAL | UNWIND_FRAME_ACTIVATION;

		if (row->flags & UNWIND_ROW_FULL) {
			int rc = step_full(map->module, &map->module->full[row->cfa_off], &st, &rd,
					   map->bias, &cfa, &pc);
			if (rc != 0) {
				why = rc < 0 ? UNWIND_END_OUTERMOST : rc;
				break;
			}
		} else {
			uint32_t kinds = row->kinds;
			if ((kinds & 3) == UNWIND_RULE_UNDEF) {
				why = UNWIND_END_OUTERMOST;
				break;
			}
			if (!(st.valid & (1u << row->cfa_reg))) {
				why = UNWIND_REG_UNRECOVERABLE;
				break;
			}
			cfa = st.r[row->cfa_reg] + (uint64_t)(int64_t)row->cfa_off;
			/* Rules read only the CFA and the stack, so in place is safe. */
			uint32_t valid = 0;
			int ra_err = UNWIND_REG_UNRECOVERABLE;
			for (int s = 0; s < UNWIND_SLOTS; s++, kinds >>= 2) {
				unsigned reg = unwind_slot_reg[s];
				uint64_t addr = cfa + (uint64_t)((int64_t)row->off8[s] * 8);
				switch (kinds & 3) {
				case UNWIND_RULE_UNDEF:
					break;
				case UNWIND_RULE_SAME:
					valid |= st.valid & (1u << reg);
					break;
				case UNWIND_RULE_OFFSET: {
					int err = read_mem(&rd, addr, 8, &st.r[reg]);
					if (!err)
						valid |= 1u << reg;
					else if (s == 0)
						ra_err = err;
					break;
				}
				default:
					st.r[reg] = addr;
					valid |= 1u << reg;
					break;
				}
			}
			st.valid = valid;
			if (!(valid & (1u << UNWIND_REG_RA))) {
				why = ra_err;
				break;
			}
			pc = st.r[UNWIND_REG_RA];
		}
		if (have_prev && ((!signal && !prev_signal) ? cfa <= prev_cfa : cfa == prev_cfa)) {
			why = UNWIND_LOOP;
			break;
		}
		if (pc == 0) {
			why = UNWIND_END_OUTERMOST;
			break;
		}
		if (n == max) {
			why = UNWIND_DEPTH_LIMIT;
			break;
		}
		pcs[n] = pc;
		if (frame_flags)
			frame_flags[n] = signal ? UNWIND_FRAME_ACTIVATION : 0;
		n++;
		have_prev = true;
		prev_cfa = cfa;
		prev_signal = signal;
		activation = signal;
	}
	*reason = (enum unwind_reason)why;
	return n;
}

/* DWARF register of each field of struct unwind_regs (ip, sp, bp, bx, r12..r15). */
static const uint8_t regs_dwarf[8] = {UNWIND_REG_RA, UNWIND_REG_SP, UNWIND_REG_BP, UNWIND_REG_BX,
				      12, 13, 14, 15};

static void regs__load(struct regs *st, const struct unwind_regs *regs, uint32_t valid)
{
	const uint64_t *f = (const uint64_t *)regs;

	memset(st, 0, sizeof(*st));
	for (int i = 0; i < 8; i++) {
		if (!(valid & (1u << i)))
			continue;
		st->r[regs_dwarf[i]] = f[i];
		st->valid |= 1u << regs_dwarf[i];
	}
}

size_t unwind__stack_ex(const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len,
			unwind_find_fn find, void *ctx, uint64_t *pcs, uint8_t *frame_flags,
			size_t max, enum unwind_reason *reason)
{
	const struct reader rd = {.bytes = stack, .lo = regs->sp, .len = stack ? stack_len : 0};
	struct regs st;

	if (max == 0) {
		*reason = UNWIND_DEPTH_LIMIT;
		return 0;
	}
	regs__load(&st, regs, 0xff);
	pcs[0] = regs->ip;
	if (frame_flags)
		frame_flags[0] = UNWIND_FRAME_ACTIVATION;
	return unwind_loop(&st, &rd, regs->ip, true, false, false, 0, find, ctx, pcs, frame_flags, 1,
			   max, reason);
}

size_t unwind__resume_ex(const struct unwind_resume *r, const uint8_t *stack, uint64_t stack_lo,
			 size_t stack_len, unwind_find_fn find, void *ctx, uint64_t *pcs,
			 uint8_t *frame_flags, size_t max, enum unwind_reason *reason)
{
	const struct reader rd = {.bytes = stack, .lo = stack_lo, .len = stack ? stack_len : 0};
	struct regs st;

	if (max == 0) {
		*reason = UNWIND_DEPTH_LIMIT;
		return 0;
	}
	regs__load(&st, &r->regs, r->valid);
	pcs[0] = r->regs.ip;
	if (frame_flags)
		frame_flags[0] = r->activation ? UNWIND_FRAME_ACTIVATION : 0;
	return unwind_loop(&st, &rd, r->regs.ip, r->activation, r->have_prev,
			   r->have_prev && r->prev_signal, r->prev_cfa, find, ctx, pcs, frame_flags, 1,
			   max, reason);
}

size_t unwind__stack(const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len,
		     unwind_find_fn find, void *ctx, uint64_t *pcs, size_t max,
		     enum unwind_reason *reason)
{
	return unwind__stack_ex(regs, stack, stack_len, find, ctx, pcs, NULL, max, reason);
}
