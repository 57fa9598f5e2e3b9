// SPDX-License-Identifier: MIT
/*
 * An object registered through the GDB JIT interface
 * (userspace/runtimes/gdb_jit.h, gdb_jit__stage_symbols) on arbitrary
 * bytes: the process hands us any image.  Its function symbols are staged
 * and committed; invariants: live functions sorted, disjoint, within
 * jit_policy.h's bounds and all of object 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "userspace/runtimes/gdb_jit.h"
#include "userspace/runtimes/jit_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jit_funcs f;
	/* libelf reads the image in place: give it its own aligned copy. */
	uint8_t *image = malloc(size ? size : 1);

	if (!image)
		return 0;
	memcpy(image, data, size);
	jit_funcs__init(&f);
	if (gdb_jit__stage_symbols(&f, image, size, 0, 1) != -ENOMEM)
		jit_funcs__commit(&f);
	FUZZ_INVARIANT(f.n <= JIT_FUNCS_MAX && f.names_len <= JIT_NAMES_MAX, "bounds");
	for (uint32_t i = 0; i < f.n; i++) {
		FUZZ_INVARIANT(f.fns[i].start < f.fns[i].end, "function %u: bad range", i);
		FUZZ_INVARIANT(!i || f.fns[i - 1].end <= f.fns[i].start, "functions %u overlap", i);
		FUZZ_INVARIANT((f.fns[i].flags & JIT_FN_GDB) && f.fns[i].object == 0, "object %u", i);
	}
	jit_funcs__release(&f);
	free(image);
	return 0;
}
