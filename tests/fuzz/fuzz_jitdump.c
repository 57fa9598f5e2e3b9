// SPDX-License-Identifier: MIT
/*
 * The jitdump parser (userspace/runtimes/jitdump.h) on arbitrary bytes, fed
 * as the reader feeds it: the file growing by pieces (the first byte picks
 * the piece size; its low bit whether the header's pid is checked), each
 * parse going on from where the last stopped, a commit after each.
 * Invariants: live functions sorted and disjoint, within jit_policy.h's
 * bounds, source lines inside the line table and sorted.  Then the same
 * bytes as a history (every load staged, none committed; jitdump__history
 * reads a file the same way) and lookups at each load's start over time
 * windows around its load time: a load returned covers the address and was
 * made at or before the window's start.
 */
#include <string.h>

#include "fuzz.h"
#include "userspace/runtimes/jit_funcs.h"
#include "userspace/runtimes/jit_policy.h"
#include "userspace/runtimes/jitdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jitdump d;
	struct jit_funcs f;
	size_t piece, have = 0;
	uint32_t pid;
	uint64_t now = 1;

	if (!size)
		return 0;
	piece = (size_t)data[0] * 13 + 1;
	pid = data[0] & 1 ? 42 : 0;
	data++;
	size--;
	jitdump__init(&d);
	jit_funcs__init(&f);
	while (have < size) {
		ssize_t used;

		have = have + piece < size ? have + piece : size;
		used = jitdump__parse(&d, &f, data + d.offset, have - d.offset, pid, now++);
		if (used < 0)
			break;
		FUZZ_INVARIANT(d.offset <= have, "consumed past the end");
		if (jit_funcs__commit(&f) < 0)
			break;
	}
	FUZZ_INVARIANT(f.n <= JIT_FUNCS_MAX && f.names_len <= JIT_NAMES_MAX &&
			       f.nline_tab <= JIT_LINES_MAX,
		       "bounds");
	for (uint32_t i = 0; i < f.n; i++) {
		const struct jit_fn *fn = &f.fns[i];

		FUZZ_INVARIANT(fn->start < fn->end && fn->end - fn->start <= JIT_FUNC_SIZE_MAX,
			       "function %u: bad range", i);
		FUZZ_INVARIANT(!i || f.fns[i - 1].end <= fn->start, "functions %u overlap", i);
		FUZZ_INVARIANT(fn->nlines <= f.nline_tab && fn->lines <= f.nline_tab - fn->nlines,
			       "function %u: lines out of range", i);
		for (uint32_t k = 1; k < fn->nlines; k++)
			FUZZ_INVARIANT(f.line_tab[fn->lines + k - 1].addr <=
					       f.line_tab[fn->lines + k].addr,
				       "function %u: lines out of order", i);
		uint32_t line;
		const char *file;

		if (!jit_funcs__line(&f, fn, fn->end - 1, &line, &file))
			FUZZ_INVARIANT(file >= f.names && file < f.names + f.names_len, "file");
	}
	jitdump__release(&d);
	jit_funcs__release(&f);

	struct jit_history x;

	jitdump__init(&d);
	jit_funcs__init(&f);
	if (jitdump__parse(&d, &f, data, size, pid, 1) >= 0 && !jit_history__init(&x, &f)) {
		for (uint32_t i = 0; i < f.nstaged && i < 256; i++) {
			const struct jit_fn *want = &f.staged[i], *got;

			for (int w = 0; w < 3; w++) {
				uint64_t first = want->since_ns + (uint64_t)w - 1, last = first + w * 1000;

				got = jit_history__find(&x, want->start, first, last);
				FUZZ_INVARIANT(!got || (got->start <= want->start &&
							want->start < got->end &&
							got->since_ns <= first),
					       "history lookup %u: a load not covering it then", i);
			}
		}
		jit_history__release(&x);
	}
	jitdump__release(&d);
	jit_funcs__release(&f);
	return 0;
}
