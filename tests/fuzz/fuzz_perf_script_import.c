// SPDX-License-Identifier: MIT
/* The perf script importer: whatever it accepts must pass the capture validator. */
#include "fuzz_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz__import(perf_script__import, data, size);
}
