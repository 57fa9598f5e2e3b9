// SPDX-License-Identifier: MIT
/* Limits on untrusted input (limits.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "limits.h"

static uint64_t max_memory;

uint64_t capture_limits__max_memory(void)
{
	long pages, page;
	uint64_t ram;

	if (max_memory)
		return max_memory;
	pages = sysconf(_SC_PHYS_PAGES);
	page = sysconf(_SC_PAGESIZE);
	if (pages <= 0 || page <= 0)
		return CAPTURE_LIMIT_MEMORY_FLOOR;
	ram = (uint64_t)pages * (uint64_t)page / CAPTURE_LIMIT_MEMORY_FRACTION;
	return ram > CAPTURE_LIMIT_MEMORY_FLOOR ? ram : CAPTURE_LIMIT_MEMORY_FLOOR;
}

/* The input-proportional default bound, saturated. */
static uint64_t input_bound(uint64_t input_bytes, unsigned k)
{
	uint64_t bound;

	if (__builtin_mul_overflow(input_bytes, (uint64_t)k, &bound) ||
	    __builtin_add_overflow(bound, CAPTURE_LIMIT_INPUT_MEMORY_SLACK, &bound))
		return UINT64_MAX;
	return bound;
}

uint64_t capture_limits__memory_for(uint64_t input_bytes, unsigned k)
{
	uint64_t max = capture_limits__max_memory(), bound = input_bound(input_bytes, k);

	return max_memory || max <= bound ? max : bound;
}

/* The rules as messages state them: keep in step with limits.h. */
_Static_assert(CAPTURE_LIMIT_INPUT_MEMORY_K == 256 && CAPTURE_LIMIT_TEXT_MEMORY_K == 16 &&
		       CAPTURE_LIMIT_INPUT_MEMORY_SLACK == 64ull << 20,
	       "the messages of capture_limits__memory_name state these values");
#define INPUT_RULE(k)                                                                     \
	"the default " CAPTURE_LIMIT_MEMORY_NAME " for this input: " k " x its bytes + 64 MiB; " \
	"give " CAPTURE_LIMIT_MEMORY_NAME " to raise it"

const char *capture_limits__memory_name(uint64_t input_bytes, unsigned k)
{
	if (max_memory || capture_limits__max_memory() <= input_bound(input_bytes, k))
		return CAPTURE_LIMIT_MEMORY_NAME;
	return k == CAPTURE_LIMIT_TEXT_MEMORY_K ? INPUT_RULE("16") : INPUT_RULE("256");
}

void capture_limits__set_max_memory(uint64_t bytes)
{
	max_memory = bytes;
}

int capture_limits__parse_size(const char *s, uint64_t *bytes)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || !v || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}

uint64_t capture_limits__max_inflated(uint64_t stored_size)
{
	uint64_t max;

	if (__builtin_mul_overflow(stored_size, CAPTURE_LIMIT_INFLATE_RATIO, &max) ||
	    __builtin_add_overflow(max, CAPTURE_LIMIT_INFLATE_SLACK, &max) ||
	    max > CAPTURE_LIMIT_TABLE_BYTES)
		max = CAPTURE_LIMIT_TABLE_BYTES;
	return max;
}

uint64_t capture_limits__import_units(size_t len)
{
	uint64_t units;

	if (__builtin_mul_overflow((uint64_t)len, CAPTURE_LIMIT_IMPORT_K, &units) ||
	    __builtin_add_overflow(units, CAPTURE_LIMIT_IMPORT_SLACK, &units))
		units = UINT64_MAX;
	return units;
}
