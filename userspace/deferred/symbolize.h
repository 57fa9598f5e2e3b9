/* SPDX-License-Identifier: MIT */
/*
 * Deferred symbolization: rebuild a capture with the names, source lines and
 * inline frames its deferred modules lacked (`microscope symbolize`).
 *
 * A module is symbolized only when a file proving its build ID is found
 * (symbolizer__by_build_id: its recorded path, --debug-dir trees and
 * debuglinks, /usr/lib/debug, debuginfod); a path alone proves nothing.
 * Every module that still has unsymbolized frames afterwards is a failure,
 * recorded in the output capture (meta "symbolize.failure.N", counters
 * "symbolize.*"; docs/capture-format.md, "Deferred symbolization").
 */
#ifndef MS_DEFERRED_SYMBOLIZE_H
#define MS_DEFERRED_SYMBOLIZE_H

#include <stdint.h>
#include <stdio.h>

#include "capture/capture.h"
#include "userspace/symbols/symbols.h"

struct symbolize_stats {
	uint32_t modules_symbolized; /* modules whose identity was proved and read */
	uint32_t modules_failed;     /* modules left with unsymbolized frames */
	uint64_t frames_symbolized;  /* input frames that got a name */
	uint64_t frames_unsymbolized; /* input frames still without a name */
};

/*
 * Copies every table of in into out (an empty builder), replacing each
 * unsymbolized frame of a module found through s by its inline chain
 * (outermost first, CAPTURE_FRAME_F_INLINE on inlined calls) and
 * re-building the stacks over the new frames; samples keep their order,
 * times and weights.  Failures are written to out and, one line per module,
 * to log (may be NULL).  Returns 0 or -ENOMEM.
 */
int capture__symbolize(const struct capture *in, struct symbolizer *s, struct capture_builder *out,
		       struct symbolize_stats *stats, FILE *log);

#endif
