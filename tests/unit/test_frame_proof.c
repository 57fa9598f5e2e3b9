// SPDX-License-Identifier: MIT
/*
 * Frames proved from code (userspace/unwind/frame_proof.h): the layouts
 * proved for CPython 3.12's perf trampoline (no frame pointer), a
 * frame-pointer prologue, and code that moves rsp in a way the proof does
 * not follow; then unwinds over a copied stack through a proved module, and
 * into a module with nothing proved (no CFI); and frame-pointer steps
 * through code without CFI where the mapping allows them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "userspace/unwind/frame_proof.h"
#include "userspace/unwind/unwind.h"

/* Python/asm_trampoline.S (3.12, 3.13): sub $8,%rsp; call *%rcx; add $8,%rsp; ret */
static const uint8_t trampoline[] = { 0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				      0x48, 0x83, 0xc4, 0x08, 0xc3, 0xcc };

static void check_row(const struct unwind_proof_row *r, uint64_t start, uint64_t end, bool bp,
		      int32_t cfa_off, bool bp_saved, int32_t bp_off)
{
	assert_int_equal(r->start, start);
	assert_int_equal(r->end, end);
	assert_int_equal(r->cfa_bp, bp);
	assert_int_equal(r->cfa_off, cfa_off);
	assert_int_equal(r->bp_saved, bp_saved);
	if (bp_saved)
		assert_int_equal(r->bp_off, bp_off);
}

static void test_trampoline(void **state)
{
	struct unwind_proof_row rows[16];
	int n = frame_proof__prove(trampoline, sizeof(trampoline), 0x1000,
				   0x1000 + sizeof(trampoline), rows, 16);

	/* sub: CFA rsp+8 (the caller's call); call: rsp+16, and nothing past
	 * it: the callee may return with another frame (V8's Sparkplug code,
	 * below), so the add and ret it returns to are not proved. */
	assert_int_equal(n, 2);
	check_row(&rows[0], 0x1000, 0x1004, false, 8, false, 0);
	check_row(&rows[1], 0x1004, 0x1006, false, 16, false, 0);
	/* The function's end bounds the proof. */
	assert_int_equal(frame_proof__prove(trampoline, sizeof(trampoline), 0x1000, 0x1006, rows, 16),
			 2);
	assert_int_equal(rows[1].end, 0x1006);
}

static void test_frame_pointer_prologue(void **state)
{
	/* push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret */
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xff, 0xcf,
					0x75, 0xfb, 0x5d, 0xc3 };
	struct unwind_proof_row rows[16];
	int n = frame_proof__prove(code, sizeof(code), 0x2000, 0x2000 + sizeof(code), rows, 16);

	/* Proved up to and including the jump; pop and ret lie past it. */
	assert_int_equal(n, 3);
	check_row(&rows[0], 0x2000, 0x2001, false, 8, false, 0);
	check_row(&rows[1], 0x2001, 0x2004, false, 16, true, -16);
	check_row(&rows[2], 0x2004, 0x2009, true, 16, true, -16);
}

static void test_unfollowed_rsp(void **state)
{
	/* push %rbx; mov %rax,%rsp; ret: the proof stops before the mov. */
	static const uint8_t code[] = { 0x53, 0x48, 0x89, 0xc4, 0xc3 };
	struct unwind_proof_row rows[16];

	assert_int_equal(frame_proof__prove(code, sizeof(code), 0x3000, 0x3005, rows, 16), 1);
	check_row(&rows[0], 0x3000, 0x3001, false, 8, false, 0);
	/* Garbage decodes to nothing provable beyond what it reaches. */
	static const uint8_t junk[] = { 0x0f, 0x0b }; /* ud2 */
	assert_int_equal(frame_proof__prove(junk, sizeof(junk), 0x4000, 0x4002, rows, 16), 1);
	assert_int_equal(frame_proof__prove(junk, 0, 0x4000, 0x4002, rows, 16), 0);
}

struct find_ctx {
	struct unwind_module *proved, *empty;
};

/* The trampoline at 0x1000 (proved); a JIT function at 0x9000 with nothing
 * proved; everything else in no mapping. */
static bool find(void *vctx, uint64_t pc, struct unwind_map *map)
{
	struct find_ctx *ctx = vctx;

	if (pc >= 0x1000 && pc < 0x100c) {
		*map = (struct unwind_map){ .module = ctx->proved, .start = 0x1000, .end = 0x100c };
		return true;
	}
	if (pc >= 0x9000 && pc < 0x9100) {
		*map = (struct unwind_map){ .module = ctx->empty, .start = 0x9000, .end = 0x9100 };
		return true;
	}
	return false;
}

static void test_unwind_through_proof(void **state)
{
	struct unwind_proof_row rows[16];
	int n = frame_proof__prove(trampoline, sizeof(trampoline), 0x1000,
				   0x1000 + sizeof(trampoline), rows, 16);
	struct find_ctx ctx = {
		.proved = unwind_module__from_proof(rows, (size_t)n),
		.empty = unwind_module__from_proof(NULL, 0),
	};
	uint64_t stack[4] = { 0xdead, 0x9010, 0, 0 }; /* pad of the sub, return address */
	struct unwind_regs regs = { .ip = 0x1004, .sp = 0x7ff000, .bp = 0x1234 };
	enum unwind_reason why;
	uint64_t pcs[8];
	size_t depth;

	assert_non_null(ctx.proved);
	assert_non_null(ctx.empty);
	/* In the trampoline at its call: CFA = rsp + 16, return address 0x9010,
	 * whose function has nothing proved: the unwind ends there, no CFI. */
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find, &ctx, pcs, 8, &why);
	assert_int_equal(depth, 2);
	assert_int_equal(pcs[0], 0x1004);
	assert_int_equal(pcs[1], 0x9010);
	assert_int_equal(why, UNWIND_NO_CFI);
	/* Rows out of order are refused. */
	struct unwind_proof_row bad[2] = { rows[1], rows[0] };

	assert_null(unwind_module__from_proof(bad, 2));
	unwind_module__free(ctx.proved);
	unwind_module__free(ctx.empty);
}

struct fp_ctx {
	struct unwind_module *proved, *empty;
	bool fp_step;
};

/* The trampoline at 0x1000 (proved); a JIT function at 0x9000 with nothing
 * proved; anonymous code at 0xa000 with no module; all but the trampoline
 * marked fp_step when ctx->fp_step. */
static bool find_fp(void *vctx, uint64_t pc, struct unwind_map *map)
{
	struct fp_ctx *ctx = vctx;

	if (pc >= 0x1000 && pc < 0x100c) {
		*map = (struct unwind_map){ .module = ctx->proved, .start = 0x1000, .end = 0x100c };
		return true;
	}
	if (pc >= 0x9000 && pc < 0x9100) {
		*map = (struct unwind_map){ .module = ctx->empty, .start = 0x9000, .end = 0x9100,
					    .fp_step = ctx->fp_step };
		return true;
	}
	if (pc >= 0xa000 && pc < 0xa100) {
		*map = (struct unwind_map){ .start = 0xa000, .end = 0xa100,
					    .fp_step = ctx->fp_step };
		return true;
	}
	return false;
}

/*
 * Frame-pointer steps through code without CFI (a JIT function, then
 * anonymous code), back into CFI (the proved trampoline), which returns to
 * 0: three frames, the two callers found by frame-pointer steps; and each
 * check that refuses a step.
 */
static void test_unwind_fp_step(void **state)
{
	struct unwind_proof_row rows[16];
	int n = frame_proof__prove(trampoline, sizeof(trampoline), 0x1000,
				   0x1000 + sizeof(trampoline), rows, 16);
	struct fp_ctx ctx = {
		.proved = unwind_module__from_proof(rows, (size_t)n),
		.empty = unwind_module__from_proof(NULL, 0),
		.fp_step = true,
	};
	const uint64_t S = 0x7ff000;
	uint64_t stack[16] = { 0 };
	struct unwind_regs regs = { .ip = 0x9010, .sp = S, .bp = S + 0x10 };
	enum unwind_reason why;
	uint8_t flags[8];
	uint64_t pcs[8];
	size_t depth;

	(void)state;
	assert_non_null(ctx.proved);
	assert_non_null(ctx.empty);
	stack[2] = S + 0x30; /* the JIT function's saved rbp */
	stack[3] = 0xa020;   /* its return address, in anonymous code */
	stack[6] = S + 0x50; /* the anonymous code's saved rbp */
	stack[7] = 0x1006;   /* its return address: after the trampoline's call */
	stack[9] = 0;	     /* the trampoline's return address (CFA = rsp + 16) */
	depth = unwind__stack_ex(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs,
				 flags, 8, &why);
	assert_int_equal(why, UNWIND_END_OUTERMOST);
	assert_int_equal(depth, 3);
	assert_int_equal(pcs[1], 0xa020);
	assert_int_equal(pcs[2], 0x1006);
	assert_int_equal(flags[0], UNWIND_FRAME_ACTIVATION);
	assert_int_equal(flags[1], UNWIND_FRAME_FP);
	assert_int_equal(flags[2], UNWIND_FRAME_FP);

	/* Not marked fp_step: the unwind ends at the JIT function, as before. */
	ctx.fp_step = false;
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs, 8,
			      &why);
	assert_int_equal(depth, 1);
	assert_int_equal(why, UNWIND_NO_CFI);
	ctx.fp_step = true;

	/* rbp below rsp: not this frame's frame pointer. */
	regs.bp = S - 0x10;
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs, 8,
			      &why);
	assert_int_equal(depth, 1);
	assert_int_equal(why, UNWIND_NO_CFI);
	/* Misaligned. */
	regs.bp = S + 0x14;
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs, 8,
			      &why);
	assert_int_equal(depth, 1);
	assert_int_equal(why, UNWIND_NO_CFI);
	/* The slots past the copy's end. */
	regs.bp = S + 0x78;
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs, 8,
			      &why);
	assert_int_equal(depth, 1);
	assert_int_equal(why, UNWIND_STACK_EXHAUSTED);
	regs.bp = S + 0x10;

	/* A return address in no mapping: not taken. */
	stack[3] = 0x50;
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs, 8,
			      &why);
	assert_int_equal(depth, 1);
	assert_int_equal(why, UNWIND_NO_CFI);
	/* A return address of 0: no ending found by a frame pointer. */
	stack[3] = 0;
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs, 8,
			      &why);
	assert_int_equal(depth, 1);
	assert_int_equal(why, UNWIND_NO_CFI);
	stack[3] = 0xa020;

	/* A saved rbp pointing back at itself: the next frame's rbp lies
	 * below its rsp, so the anonymous code's step is refused. */
	stack[2] = S + 0x10;
	depth = unwind__stack(&regs, (const uint8_t *)stack, sizeof(stack), find_fp, &ctx, pcs, 8,
			      &why);
	assert_int_equal(depth, 2);
	assert_int_equal(why, UNWIND_NO_MODULE);
	unwind_module__free(ctx.proved);
	unwind_module__free(ctx.empty);
}

/*
 * Node 20's Sparkplug (baseline) code of `function mid(n) { return leaf(n)
 * + 1; }` as node --always-sparkplug made it: its first call is V8's
 * BaselineOutOfLinePrologue, which builds the function's rbp frame (saved
 * rbp, context, function, argument count, bytecode array, ... under the
 * return address it moves down), so nothing after that call is proved and
 * a frame returning into the body (after the call of leaf at +0x34) is
 * stepped by its frame pointer.  When calls returned "to the same frame",
 * the proof read the frame's slots (tagged heap pointers) as mid's return
 * address.
 */
static const uint8_t sparkplug_mid[] = {
	0xbb, 0x18, 0x00, 0x00, 0x00,			  /* mov ebx, 0x18 */
	0x49, 0xbc, 0xa1, 0x12, 0x2a, 0x9a, 0xc2, 0x32, 0x00, 0x00, /* movabs r12, bytecode */
	0xe8, 0xac, 0x33, 0xe0, 0x1f,			  /* call BaselineOutOfLinePrologue */
	0x50,						  /* push rax */
	0x4c, 0x8b, 0x45, 0xf8,				  /* mov r8, [rbp-8] */
	0x49, 0x8b, 0x40, 0x1f, 0x48, 0x89, 0x45, 0xd0, 0x48, 0x8b, 0x45, 0xd0,
	0xbb, 0x02, 0x01, 0x00, 0x00,
	0xff, 0x75, 0x18,				  /* push [rbp+0x18] */
	0x41, 0xff, 0xb5, 0x90, 0x01, 0x00, 0x00,	  /* push [r13+0x190] */
	0xe8, 0x07, 0x8e, 0xdf, 0x1f,			  /* call Call builtin (leaf) */
	0x48, 0xba, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x33, 0xdb,
	0xe8, 0x36, 0xfe, 0xe5, 0x1f,			  /* call Add builtin */
	0xbb, 0x02, 0x00, 0x00, 0x00,
	0x48, 0xc7, 0xc1, 0xf5, 0xff, 0xff, 0xff,
	0xe9, 0xe5, 0x35, 0xe0, 0x1f,			  /* jmp to the return builtin */
	0xcc,
};

/* leaf (JIT, nothing proved) at 0x9000, Sparkplug mid at 0x5000 (its
 * proof), anonymous code at 0xa000; all stepped by frame pointers. */
static bool find_mid(void *vctx, uint64_t pc, struct unwind_map *map)
{
	struct fp_ctx *ctx = vctx;

	if (pc >= 0x5000 && pc < 0x5000 + sizeof(sparkplug_mid)) {
		*map = (struct unwind_map){ .module = ctx->proved, .start = 0x5000,
					    .end = 0x5000 + sizeof(sparkplug_mid),
					    .fp_step = true };
		return true;
	}
	return find_fp(vctx, pc, map);
}

static void test_sparkplug_prologue(void **state)
{
	struct unwind_proof_row rows[16];
	int n = frame_proof__prove(sparkplug_mid, sizeof(sparkplug_mid), 0x5000,
				   0x5000 + sizeof(sparkplug_mid), rows, 16);
	const uint64_t S = 0x7ff000;
	uint64_t stack[16] = { 0 };
	struct unwind_regs regs = { .ip = 0x9010, .sp = S, .bp = S + 0x10 };
	struct fp_ctx ctx = { .empty = unwind_module__from_proof(NULL, 0), .fp_step = true };
	enum unwind_reason why;
	uint8_t flags[8];
	uint64_t pcs[8];
	size_t depth;

	(void)state;
	/* Up to and including the prologue's call, with the entry's frame. */
	assert_int_equal(n, 1);
	check_row(&rows[0], 0x5000, 0x5014, false, 8, false, 0);
	ctx.proved = unwind_module__from_proof(rows, (size_t)n);
	assert_non_null(ctx.proved);
	assert_non_null(ctx.empty);
	stack[2] = S + 0x50;	      /* leaf's saved rbp: mid's frame pointer */
	stack[3] = 0x5039;	      /* leaf's return address: after mid's call at +0x34 */
	stack[4] = 0x32c29a2a12a1;    /* mid's pushed arguments and slots (tagged) */
	stack[5] = 0x32c29a2a1001;
	stack[6] = 0x5023;	      /* a slot that looks like code: mid's own */
	stack[7] = 0x32c29a2a12a1;
	stack[8] = 0x32c29a2a1001;
	stack[9] = 0x32c29a2a0001;
	stack[10] = S + 0x70;	      /* mid's saved rbp */
	stack[11] = 0xa020;	      /* mid's return address, in anonymous code */
	depth = unwind__stack_ex(&regs, (const uint8_t *)stack, sizeof(stack), find_mid, &ctx, pcs,
				 flags, 8, &why);
	assert_true(depth >= 3);
	assert_int_equal(pcs[1], 0x5039);
	assert_int_equal(pcs[2], 0xa020);
	assert_int_equal(flags[2], UNWIND_FRAME_FP);
	unwind_module__free(ctx.proved);
	unwind_module__free(ctx.empty);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trampoline),
		cmocka_unit_test(test_frame_pointer_prologue),
		cmocka_unit_test(test_unfollowed_rsp),
		cmocka_unit_test(test_unwind_through_proof),
		cmocka_unit_test(test_unwind_fp_step),
		cmocka_unit_test(test_sparkplug_prologue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
