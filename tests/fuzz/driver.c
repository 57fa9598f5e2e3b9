// SPDX-License-Identifier: MIT
/*
 * Corpus replay without libFuzzer: feed every file named on the command
 * line (directories: every regular file in them) to LLVMFuzzerTestOneInput
 * once.  Built by `make check` under ASan/UBSan.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return 1;
	}
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: read failed\n", path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int i, n = 0, bad = 0;

	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode)) {
			struct dirent **names;
			int k, m = scandir(argv[i], &names, NULL, alphasort);

			for (k = 0; k < m; k++) {
				char *p = NULL;

				if (names[k]->d_name[0] != '.' &&
				    asprintf(&p, "%s/%s", argv[i], names[k]->d_name) > 0 &&
				    !stat(p, &st) && S_ISREG(st.st_mode)) {
					bad |= run_file(p);
					n++;
				}
				free(p);
				free(names[k]);
			}
			free(names);
		} else {
			bad |= run_file(argv[i]);
			n++;
		}
	}
	printf("%s: %d inputs replayed\n", argv[0], n);
	return bad || !n;
}
