/* SPDX-License-Identifier: MIT */
/*
 * The display name of a frame, one rule for every view (report, folded,
 * pprof, speedscope, Chrome trace, SVG):
 *   truncation frames: their bracketed reason, or "[truncated]";
 *   interpreted (CPython) frames: "function (file:line)", as they are keyed
 *     by (file, function, line);
 *   named frames: the demangled function name (capture/demangle.h; the
 *     capture keeps the raw name);
 *   others: "<module basename>+0x<address>" ("[kernel]", "[vdso]",
 *     "[anon]", "[unknown]" for modules without a path), or
 *     "[unknown]+0x<address>" without a module.
 */
#ifndef MS_CAPTURE_FRAME_LABEL_H
#define MS_CAPTURE_FRAME_LABEL_H

#include <stddef.h>

#include "capture/capture.h"

/* Writes frame f's display name into buf of size bytes (NUL-terminated,
 * truncated to fit; buf may be NULL when size is 0).  Returns the full
 * name's length, like snprintf. */
/* A module's display name: its path's basename, or "[kernel]", "[vdso]",
 * "[anon]", "[unknown]" by kind (module may be CAPTURE_NONE). */
const char *capture__module_label(const struct capture *c, uint32_t module);

size_t capture__frame_label(const struct capture *c, const struct capture_frame *f, char *buf,
			    size_t size);

#endif
