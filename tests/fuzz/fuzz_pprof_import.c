// SPDX-License-Identifier: MIT
/* The pprof importer: whatever it accepts must pass the capture validator. */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz__import(pprof__import, data, size);
}
