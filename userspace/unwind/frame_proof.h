/* SPDX-License-Identifier: MIT */
/*
 * Frames proved from code (x86-64), for code no call-frame information
 * describes: functions a JIT compiler named in a perf map or jitdump file.
 *
 * The proof decodes the code with capstone from the function's entry and
 * follows the instructions that fall through from it, as call-frame
 * information takes a frame to be a function of the instruction: the frame
 * on entry is the caller's call (CFA = rsp + 8, return address at CFA - 8);
 * push, pop, add/sub of rsp by a constant, "mov rbp, rsp" and
 * "mov rsp, rbp" move it.  It proves the state at each instruction it
 * reaches, up to and including the first jump, call or return (nothing past
 * one is proved: a jump's targets are not followed, and a callee need not
 * give the frame back as it found it: V8's Sparkplug code calls the builtin
 * BaselineOutOfLinePrologue first, which pops its return address, pushes
 * rbp, sets it, pushes the frame's slots and pushes the return address back:
 * the code after that call runs in an rbp frame deeper than its entry's, and
 * a proof carried past the call read the frame's slots as return
 * addresses), and stops
 * before an instruction that changes rsp or rbp any other way.  An
 * address the proof does not reach has no row, so an unwind reaching it
 * ends with UNWIND_NO_CFI: nothing is assumed, not even a frame pointer
 * (CPython 3.12's trampolines keep none).
 */
#ifndef MS_FRAME_PROOF_H
#define MS_FRAME_PROOF_H

#include <stddef.h>
#include <stdint.h>

#include "unwind.h"

/* Instructions followed from an entry at most. */
#define FRAME_PROOF_MAX_INSNS 64

/* Bytes of code a proof needs at most (FRAME_PROOF_MAX_INSNS of at most 15
 * bytes each would be more; entry sequences are short). */
#define FRAME_PROOF_CODE_MAX 512

/*
 * Prove the frames of the code at runtime address addr, of which len bytes
 * are in code (the function's first bytes; len <= FRAME_PROOF_CODE_MAX is
 * enough).  Writes at most max rows (each row one run of instructions with
 * one layout, sorted, ending at end_max at the latest: the function's end).
 * Returns the number of rows (0: nothing proved), or -ENOMEM / -EINVAL
 * (capstone unusable).
 */
int frame_proof__prove(const uint8_t *code, size_t len, uint64_t addr, uint64_t end_max,
		       struct unwind_proof_row *rows, size_t max);

#endif
