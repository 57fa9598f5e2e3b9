/* SPDX-License-Identifier: MIT */
/*
 * Small helpers every subcommand's option parsing shares: the default
 * capture name, time values, and "did you mean" suggestions for mistyped
 * commands and options.
 */
#ifndef MS_CLI_UTIL_H
#define MS_CLI_UTIL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What `record` writes and `report`/`convert` read when given no file. */
#define CLI_DEFAULT_CAPTURE "microscope.msc"

/*
 * A time span: a number with an optional unit, "s" (the default), "ms",
 * "us" or "ns" ("1.5", "1.5s", "200ms").  Returns 0 and *ns, or -EINVAL.
 */
int cli__parse_time_ns(const char *s, uint64_t *ns);

/*
 * The candidate closest to word by edit distance, if it is close enough to
 * be a typo (distance <= 2, and less than half of word's length, or word is
 * a prefix of exactly one candidate); NULL otherwise.
 */
const char *cli__closest(const char *word, const char *const *candidates, size_t n);

/*
 * For an unknown long option arg ("--lok=x" or "--lok"): the closest of
 * longopts' names as " (did you mean '--look'?)" in buf, or "" if none.
 */
void cli__option_hint(const char *arg, const struct option *longopts, char *buf, size_t size);

/*
 * Keep the capture at path (if a regular file is there) as "path.old", the
 * previous .old replaced, before a new capture is published at path (what
 * perf does with perf.data.old).  `record -f` skips it.  Returns 0 (also
 * when there is nothing to keep) or -errno.
 */
int cli__keep_previous(const char *path);

/*
 * The file execvp would run for argv0 (PATH searched as it does), as an
 * absolute path without symbolic links, in out (PATH_MAX bytes); false if
 * none.
 */
bool cli__command_file(const char *argv0, char *out);

/* Environment variables naming the kernel symbol table's and the
 * decompressed debug images' cache directories (README, "record"): "0" or
 * "off" turns that cache off. */
#define CLI_KALLSYMS_CACHE_ENV "MICROSCOPE_KALLSYMS_CACHE"
#define CLI_DEBUG_CACHE_ENV    "MICROSCOPE_DEBUG_CACHE"
/*
 * A cache directory into out (size bytes): $env when set, else
 * /var/cache/microscope for root, else $XDG_CACHE_HOME/microscope or
 * ~/.cache/microscope.  False when the cache is off or no directory is
 * known.
 */
bool cli__cache_dir(const char *env, char *out, size_t size);

#endif
