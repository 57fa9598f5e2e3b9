/* SPDX-License-Identifier: MIT */
/*
 * What `microscope convert` reads: a capture, pprof, folded stacks or perf
 * script output, chosen by --from, else the file's extension, else its
 * content; read whole within the memory limit (capture/limits.h).
 */
#ifndef MS_CLI_CONVERT_INPUT_H
#define MS_CLI_CONVERT_INPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "capture/capture.h"
#include "capture/formats/formats.h"

/*
 * An importer fills b from the input's bytes; on -EBADMSG err says why.
 * NULL for the capture format, which is opened directly.
 */
typedef int (*convert_import_fn)(const void *buf, size_t len, struct capture_builder *b,
				 struct formats_note *note, char *err, size_t errlen);

struct convert_input_format {
	const char *name; /* --from value */
	const char *extensions[4];
	convert_import_fn import;
	bool text; /* a text format: binary input (a NUL byte) is refused */
};

/* path ends with ext, compared without case, and is longer than it. */
bool convert_input__has_suffix(const char *path, const char *ext);

/* --from name (NULL if unknown), else the extension, else the content. */
const struct convert_input_format *convert_input__format(const char *from, const char *path,
							 const void *buf, size_t len);

/*
 * Read the input (path, or stdin for "-") into *buf (malloc'd) and choose
 * its format.  Returns 0, or -errno after printing why on stderr.
 */
int convert_input__read(const char *path, const char *from, void **buf, size_t *len,
			const struct convert_input_format **ifmt);

#endif
