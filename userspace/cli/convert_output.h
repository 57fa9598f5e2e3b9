/* SPDX-License-Identifier: MIT */
/*
 * What `microscope convert` writes: one row per output format, naming its
 * --to value, the output extensions that select it and its writer.
 */
#ifndef MS_CLI_CONVERT_OUTPUT_H
#define MS_CLI_CONVERT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/formats/formats.h"

/* What a writer gets: the open capture and the query the options built. */
struct convert_input {
	const char *path; /* the capture's path, for messages */
	const struct capture *capture;
	struct analysis_query query; /* event chosen, per_thread from --threads */
	const void *bytes;	     /* the capture file's bytes */
	size_t len;
	struct formats_note *note; /* what the conversion lost, for the caller to print */
	bool event_chosen;	   /* --event or --weight named the event */
	/* --granularity: how folded and svg key frames (default FRAME, as recorded) */
	enum analysis_granularity granularity;
};

/*
 * A writer puts the whole output on out and returns 0, or -errno (it need
 * not check out's write errors: the caller flushes and checks).  It prints
 * no message; the caller names the file and strerror(-err).
 */
typedef int (*convert_write_fn)(const struct convert_input *in, FILE *out);

struct convert_format {
	const char *name;	   /* --to value */
	const char *extensions[4]; /* output suffixes that select it, NULL-terminated */
	const char *description;   /* for --help */
	convert_write_fn write;
};

/* Whether event has any interval rows (off-CPU). */
bool convert_output__event_has_intervals(const struct capture *c, uint32_t event);

/* The writer that copies in->bytes as they are (a capture to a capture). */
int convert_output__bytes(const struct convert_input *in, FILE *out);

/* The format whose --to value is name, or NULL. */
const struct convert_format *convert_output__by_name(const char *name);

/* The first format one of whose extensions ends path, or NULL. */
const struct convert_format *convert_output__by_extension(const char *path);

/* The i-th format (0 is the default, folded), or NULL past the last. */
const struct convert_format *convert_output__at(size_t i);

#endif
