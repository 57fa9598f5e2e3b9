/* SPDX-License-Identifier: MIT */
/*
 * Unit tests that feed the processor synthetic samples at this test
 * binary's own functions: the executable mapping that holds a function,
 * read from /proc/self/maps (include after cmocka.h).
 */
#ifndef MS_TESTS_SELF_MAPS_H
#define MS_TESTS_SELF_MAPS_H

#include <stdint.h>
#include <stdio.h>

struct exe_map {
	uint64_t start, end, pgoff;
	char path[512];
};

/* The executable mapping of this test binary that contains fn. */
static inline void find_map(void *fn, struct exe_map *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[1024];
	uint64_t a = (uint64_t)(uintptr_t)fn;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], path[512] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &s, &e, perms, &off, path) < 4)
			continue;
		if (a >= s && a < e) {
			m->start = s;
			m->end = e;
			m->pgoff = off;
			snprintf(m->path, sizeof(m->path), "%s", path);
			fclose(f);
			return;
		}
	}
	fclose(f);
	fail_msg("no mapping for function");
}

#endif
