// SPDX-License-Identifier: MIT
/*
 * The perf map parser (userspace/runtimes/perf_map.h) on arbitrary bytes, fed
 * as the reader feeds it: in pieces (the first byte picks the piece size),
 * each read going on from where the last stopped, a commit after each, and a
 * mapping over part of the range now and then.  Invariants: live functions
 * sorted and disjoint, every bound of jit_policy.h held, every consumed byte
 * accounted for.
 */
#include <string.h>

#include "fuzz.h"
#include "userspace/runtimes/jit_funcs.h"
#include "userspace/runtimes/jit_policy.h"
#include "userspace/runtimes/perf_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_map m;
	struct jit_funcs f;
	size_t piece, pos = 0, have;
	uint64_t now = 1;

	if (!size)
		return 0;
	piece = (size_t)data[0] * 7 + 1;
	data++;
	size--;
	perf_map__init(&m);
	jit_funcs__init(&f);
	/* have: bytes the "file" has so far (the writer appends piece by piece). */
	for (have = 0; have < size || pos < have;) {
		ssize_t used;

		have = have + piece < size ? have + piece : size;
		used = perf_map__parse(&m, &f, (const char *)data + pos, have - pos, now);
		if (used < 0)
			break;
		pos += (size_t)used;
		FUZZ_INVARIANT(pos <= have && m.offset == pos, "consumed %zu of %zu", pos, have);
		if (jit_funcs__commit(&f) < 0)
			break;
		if (now % 3 == 0 && f.n)
			jit_funcs__map(&f, f.fns[f.n / 2].start, f.fns[f.n / 2].end + 1, now + 1);
		now += 2;
		if (have == size && (size_t)used == 0)
			break;
	}
	FUZZ_INVARIANT(f.n <= JIT_FUNCS_MAX && f.names_len <= JIT_NAMES_MAX, "bounds");
	for (uint32_t i = 0; i < f.n; i++) {
		const struct jit_fn *fn = &f.fns[i];

		FUZZ_INVARIANT(fn->start < fn->end && fn->end - fn->start <= JIT_FUNC_SIZE_MAX,
			       "function %u: bad range", i);
		FUZZ_INVARIANT(!i || f.fns[i - 1].end <= fn->start, "functions %u overlap", i);
		FUZZ_INVARIANT(fn->name < f.names_len, "function %u: name out of range", i);
		const struct jit_fn *found = jit_funcs__find(&f, fn->start, 0);

		FUZZ_INVARIANT((fn->flags & JIT_FN_ENDED) ? !found : found == fn, "lookup %u", i);
	}
	jit_funcs__release(&f);
	return 0;
}
