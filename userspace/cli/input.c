// SPDX-License-Identifier: MIT
/* Capture files and segment directories as command input (input.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/segment_dir.h"
#include "input.h"

static void note_line(void *ctx, const char *line)
{
	fprintf(stderr, "microscope %s: note: %s\n", (const char *)ctx, line);
}

int cli_input__open(const char *cmd, const char *path, struct capture **out, char *err,
		    size_t errlen)
{
	return segment_dir__open_path(path, out, err, errlen, note_line, (void *)cmd);
}

int cli_input__read_dir(const char *cmd, const char *path, void **bytes, size_t *len, char *err,
			size_t errlen)
{
	if (!segment_dir__is_dir(path))
		return -ENOTDIR;
	return segment_dir__read(path, 0, UINT64_MAX, bytes, len, err, errlen, note_line,
				 (void *)cmd);
}
