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
