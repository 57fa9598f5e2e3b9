// SPDX-License-Identifier: MIT
/* The capture reader/validator, then analysis and every exporter on what it accepts. */
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/formats/formats.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capture *c = NULL;
	struct analysis_names *n = NULL;
	struct analysis_tree *t = NULL;
	struct formats_note note = { "" };
	struct analysis_query q;
	char err[256], *text = NULL;
	void *buf = NULL;
	size_t len = 0;
	FILE *null;
	uint32_t ev;

	if (capture__open_mem(data, size, "fuzz", &c, err, sizeof(err)))
		return 0;
	ev = analysis__default_event(c);
	if (!pprof__export(c, &buf, &len, &note))
		free(buf);
	if (ev != CAPTURE_NONE) {
		null = fopen("/dev/null", "w");
		if (null) {
			chrome_trace__export(c, ev, null, &note);
			speedscope__export(c, ev, null, &note);
			fclose(null);
		}
		n = analysis_names__new(c);
		analysis_query__init(&q, ev);
		t = n ? analysis_tree__new(n, &q) : NULL;
		if (t && !analysis_tree__folded(t, &text, &len))
			free(text);
		if (t && !analysis_tree__flamegraph_svg(t, "fuzz", "samples", &text, &len))
			free(text);
	}
	analysis_tree__free(t);
	analysis_names__free(n);
	capture__free(c);
	return 0;
}
