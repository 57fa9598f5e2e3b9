/* SPDX-License-Identifier: MIT */
/*
 * The importer harnesses' one body (fuzz_folded_import.c,
 * fuzz_pprof_import.c): whatever an importer accepts must seal, pass the
 * capture validator and export again without failing.
 */
#ifndef MS_TESTS_FUZZ_IMPORT_H
#define MS_TESTS_FUZZ_IMPORT_H

#include <string.h>

#include "capture/capture.h"
#include "capture/formats/formats.h"
#include "fuzz.h"

typedef int (*fuzz_importer)(const void *buf, size_t len, struct capture_builder *b,
			     struct formats_note *note, char *err, size_t errlen);

static inline int fuzz__import(fuzz_importer import, const uint8_t *data, size_t size)
{
	struct capture_builder *b = capture_builder__new();
	struct formats_note note = { "" };
	struct capture *c = NULL;
	char err[256] = "";
	void *buf = NULL, *out = NULL;
	size_t len = 0, out_len = 0;
	int rc;

	if (!b)
		return 0;
	rc = import(data, size, b, &note, err, sizeof(err));
	if (!rc) {
		rc = capture_builder__serialize(b, &buf, &len);
		FUZZ_INVARIANT(!rc, "an accepted import does not seal: %s",
			       capture_builder__error(b));
		rc = capture__open_mem(buf, len, "fuzz", &c, err, sizeof(err));
		FUZZ_INVARIANT(!rc, "an accepted import fails validation: %s", err);
		if (!pprof__export(c, &out, &out_len, &note))
			free(out);
	}
	capture__free(c);
	free(buf);
	capture_builder__free(b);
	return 0;
}

#endif
