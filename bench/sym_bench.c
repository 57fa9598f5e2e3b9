// SPDX-License-Identifier: MIT
/*
 * sym_bench: symbolization throughput of userspace/symbols on one module.
 *
 *   sym_bench --list MODULE N      print N fixed addresses (hex, one a line):
 *                                  spread evenly over the module's function
 *                                  symbols, each at start + (size / 3)
 *   sym_bench --time MODULE FILE   symbolize FILE's addresses: cold (new
 *                                  symbolizer: load ELF, find debug file,
 *                                  index DWARF, then every address) and warm
 *                                  (the same addresses again); prints JSON
 *
 * Used by bench/symbols.py, which runs eu-addr2line and addr2line -i on the
 * same addresses.  Numbers are reported, never asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "userspace/symbols/symbols.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int list(const char *path, size_t want)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m = symbolizer__file(s, 0, path, path, NULL, 0);
	size_t n = sym_module__symbol_count(m), i, step;

	if (!m || !n) {
		fprintf(stderr, "sym_bench: %s: no symbols (%s)\n", path,
			m && sym_module__error(m) ? sym_module__error(m) : "none");
		return 1;
	}
	step = n > want ? n / want : 1;
	for (i = 0; i < n && want; i += step, want--) {
		uint64_t start, end;

		sym_module__symbol(m, i, &start, &end);
		printf("0x%llx\n", (unsigned long long)(start + (end - start) / 3));
	}
	symbolizer__free(s);
	return 0;
}

static size_t pass(struct sym_module *m, const uint64_t *addrs, size_t n, size_t *lines,
		   size_t *inlined)
{
	struct sym_frame f[16];
	size_t named = 0;

	*lines = *inlined = 0;
	for (size_t i = 0; i < n; i++) {
		size_t d = sym_module__frames(m, addrs[i], f, 16);

		if (d && f[d - 1].function)
			named++;
		if (d && f[0].line)
			(*lines)++;
		if (d > 1)
			*inlined += d - 1;
	}
	return named;
}

static int timed(const char *path, const char *file)
{
	FILE *in = fopen(file, "r");
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0, named, lines, inl;
	unsigned long long a;
	double t0, t1, t2;
	struct symbolizer *s;
	struct sym_module *m;

	if (!in) {
		perror(file);
		return 1;
	}
	while (fscanf(in, "%llx", &a) == 1) {
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			addrs = realloc(addrs, cap * sizeof(*addrs));
			if (!addrs)
				return 1;
		}
		addrs[n++] = a;
	}
	fclose(in);
	t0 = now();
	s = symbolizer__new();
	m = symbolizer__file(s, 0, path, path, NULL, 0);
	named = pass(m, addrs, n, &lines, &inl);
	t1 = now();
	pass(m, addrs, n, &lines, &inl);
	t2 = now();
	printf("{\"module\": \"%s\", \"addresses\": %zu, \"named\": %zu, \"with_line\": %zu, "
	       "\"inline_frames\": %zu, \"cold_s\": %.6f, \"warm_s\": %.6f, \"debug_file\": \"%s\"}\n",
	       path, n, named, lines, inl, t1 - t0, t2 - t1,
	       sym_module__debug_path(m) ? sym_module__debug_path(m) : "");
	symbolizer__free(s);
	free(addrs);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--list"))
		return list(argv[2], (size_t)atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "--time"))
		return timed(argv[2], argv[3]);
	fprintf(stderr, "usage: sym_bench --list MODULE N | --time MODULE ADDRESS_FILE\n");
	return 2;
}
