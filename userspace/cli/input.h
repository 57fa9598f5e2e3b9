/* SPDX-License-Identifier: MIT */
/*
 * What report, convert and symbolize read: a capture file, or a segment
 * directory of a continuous recording read as one capture
 * (capture/segment_dir.h).  Segments skipped are noted on stderr, one line
 * each, prefixed with the command's name.
 */
#ifndef MS_CLI_INPUT_H
#define MS_CLI_INPUT_H

#include <stddef.h>

#include "capture/capture.h"

/* capture__open() for a file, segment_dir__open() for a directory.  cmd
 * ("report") prefixes the notes.  Same returns as capture__open(). */
int cli_input__open(const char *cmd, const char *path, struct capture **out, char *err,
		    size_t errlen);

/* For a directory, its merged capture's bytes (malloc'd) and 0; for anything
 * else -ENOTDIR and nothing else done.  Other -errno with a message in err. */
int cli_input__read_dir(const char *cmd, const char *path, void **bytes, size_t *len, char *err,
			size_t errlen);

#endif
