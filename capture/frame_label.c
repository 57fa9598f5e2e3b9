// SPDX-License-Identifier: MIT
/* Display names of frames, shared by analysis/ and the exporters (frame_label.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture/demangle.h"
#include "capture/frame_label.h"

static const char *module_fallback(uint32_t kind)
{
	switch (kind) {
	case CAPTURE_MODULE_KERNEL:
		return "[kernel]";
	case CAPTURE_MODULE_VDSO:
		return "[vdso]";
	case CAPTURE_MODULE_ANON:
		return "[anon]";
	default:
		return "[unknown]";
	}
}

const char *capture__module_label(const struct capture *c, uint32_t module)
{
	const char *path, *slash;

	if (module == CAPTURE_NONE)
		return "[unknown]";
	path = capture__string(c, c->modules[module].path);
	slash = strrchr(path, '/');
	if (slash && slash[1])
		return slash + 1;
	return path[0] ? path : module_fallback(c->modules[module].kind);
}

size_t capture__frame_label(const struct capture *c, const struct capture_frame *f, char *buf,
			    size_t size)
{
	const char *fn = capture__string(c, f->function);
	const char *mod;
	int n;

	if (f->flags & CAPTURE_FRAME_F_TRUNCATION)
		n = snprintf(buf, size, "%s", fn[0] ? fn : "[truncated]");
	else if (f->flags & CAPTURE_FRAME_F_INTERPRETED)
		/* keyed by (file, function, line): "inner (/src/app.py:17)" */
		n = snprintf(buf, size, "%s (%s:%u)", fn[0] ? fn : "[unknown]",
			     capture__string(c, f->file), f->line);
	else if (fn[0])
		n = (int)capture__demangle(fn, buf, size); /* raw name kept in the capture */
	else {
		mod = capture__module_label(c, f->module);
		n = snprintf(buf, size, "%s+0x%" PRIx64, mod, f->address);
	}
	return n < 0 ? 0 : (size_t)n;
}
