/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harnesses (tests/fuzz/fuzz_<target>.c, seed corpora in
 * tests/fuzz/<target>/).  `make fuzz` links each with -fsanitize=fuzzer and
 * runs it for FUZZ_SECONDS; `make check` links each with driver.c instead
 * (a plain main that feeds every corpus file once) under ASan/UBSan.
 * A harness must never fail on malformed input; it aborts only when an
 * invariant of ours breaks (an accepted import that the validator rejects).
 */
#ifndef MS_TESTS_FUZZ_H
#define MS_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_INVARIANT(cond, ...)                                                                  \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "fuzz invariant broken: " __VA_ARGS__);                    \
			fputc('\n', stderr);                                                       \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif
