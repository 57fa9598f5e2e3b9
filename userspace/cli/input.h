/* SPDX-License-Identifier: MIT */
/*
 * What report, convert and symbolize read: a capture file, or a segment
 * directory of a continuous recording read as one capture
 * (capture/segment_dir.h).  Segments skipped are noted on stderr, one line
 * each, prefixed with the command's name.
 */
#ifndef MS_CLI_INPUT_H
#define MS_CLI_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

/*
 * The part of a segment directory to read (--since / --until), as
 * CLOCK_REALTIME ns; since 0 and until UINT64_MAX read everything.
 */
struct cli_input_range {
	uint64_t since_ns, until_ns;
};

#define CLI_INPUT_ALL ((struct cli_input_range){ 0, UINT64_MAX })

/*
 * A --since/--until value, absolute or relative to now_ns (CLOCK_REALTIME):
 *   -DURATION             that long ago ("-10m", "-90s", "-1h"; units of
 *                         record --segment)
 *   YYYY-MM-DDTHH:MM[:SS][Z]  a UTC time (also with a space for the T)
 *   HH:MM[:SS]            that UTC time today
 *   @SECONDS              seconds since the epoch
 * Fields have exactly their digits and a real value: a calendar day of its
 * month (2026-02-30 and 2026-02-29 are -EINVAL), hours 00-23, minutes and
 * seconds 00-59; years 1970-9999.
 * Returns 0 with *ns, or -EINVAL.
 */
int cli_input__parse_when(const char *s, uint64_t now_ns, uint64_t *ns);

/* --since (since true) or --until WHEN into r, now being CLOCK_REALTIME.
 * Returns 0 or -EINVAL (r unchanged). */
int cli_input__set_range(struct cli_input_range *r, bool since, const char *when);

/* capture__open() for a file, segment_dir__open() for a directory.  cmd
 * ("report") prefixes the notes.  Same returns as capture__open(). */
int cli_input__open(const char *cmd, const char *path, struct capture **out, char *err,
		    size_t errlen);

/* For a directory, its merged capture's bytes (malloc'd) and 0; for anything
 * else -ENOTDIR and nothing else done.  Other -errno with a message in err. */
int cli_input__read_dir(const char *cmd, const char *path, void **bytes, size_t *len, char *err,
			size_t errlen);

/* Both with a range: a directory's segments and samples in it only; a file
 * with a range other than everything is refused (-EDOM with err: a usage
 * error, status 2); a directory whose segments all lie outside the range
 * gives -ERANGE with err (a window holding no data, not a damaged input). */
int cli_input__open_range(const char *cmd, const char *path, struct cli_input_range range,
			  struct capture **out, char *err, size_t errlen);
int cli_input__read_dir_range(const char *cmd, const char *path, struct cli_input_range range,
			      void **bytes, size_t *len, char *err, size_t errlen);

/*
 * --event NAME in c (analysis__find_event: "NAME" or "NAME#N").  On failure
 * prints "microscope CMD: PATH: ..." with every event c has, labelled as
 * --event takes them, with its period and sample count, and returns -ENOENT
 * (no such event) or -ENOTUNIQ (several of that name).
 */
int cli_input__find_event(const char *cmd, const char *path, const struct capture *c,
			  const char *name, uint32_t *event);

#endif
