// SPDX-License-Identifier: MIT
/* The folded importer: whatever it accepts must pass the capture validator. */
#include <string.h>

#include "capture/capture.h"
#include "capture/formats/formats.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
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
	rc = folded__import(data, size, b, &note, err, sizeof(err));
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
