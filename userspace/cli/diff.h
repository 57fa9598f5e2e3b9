/* SPDX-License-Identifier: MIT */
/*
 * Comparing two captures, for `report --diff BASE NEW` and
 * `convert --diff BASE NEW -o OUT.svg`: both sides opened the same way
 * (event, look, key options), checked comparable, then handed to
 * analysis_diff / analysis_tree__diff_svg.  The CLI holds no arithmetic.
 */
#ifndef MS_CLI_DIFF_H
#define MS_CLI_DIFF_H

#include <stdio.h>

#include "analysis/analysis.h"
#include "input.h"

/*
 * The part of one side compared: a directory's segments by wall-clock
 * time (range; the zero value: every segment) and samples from that
 * side's own recording start (start_ns/end_ns when *_set).  Both sides
 * are whole by default.
 */
struct cli_diff_window {
	struct cli_input_range range;
	uint64_t start_ns, end_ns;
	bool start_set, end_set;
};

/*
 * --since (since true) or --until WHEN into w: a wall-clock time, "-10m"
 * ago or @SECONDS selects a directory's segments (cli_input__set_range),
 * anything else is a time from the recording's start (1.5, 200ms; as
 * cli__parse_time_ns).  Returns 0 or -EINVAL (w unchanged).
 */
int cli_diff_window__set(struct cli_diff_window *w, bool since, const char *when);

/* -EINVAL when w's --until is not after its --since, else 0. */
int cli_diff_window__check(const struct cli_diff_window *w);

struct cli_diff_options {
	const char *cmd;	 /* "report" or "convert": its messages' prefix */
	const char *base, *new_; /* capture paths */
	const char *event;	 /* --event, or NULL: each side's default event */
	enum analysis_sort sort;
	uint32_t limit;			    /* rows printed */
	double min_percent; /* rows under this share (%) in both sides hidden; 0: none */
	enum analysis_look_kind look;
	struct analysis_key_options keys; /* the table's keys */
	const struct analysis_filter_spec *filter_spec; /* NULL: none; bound to each side */
	/* --since/--until narrow NEW, --base-since/--base-until BASE: each
	 * side's times count from its own recording's start. */
	struct cli_diff_window new_window, base_window;
};

/* Print the diff table on stdout.  Returns the exit status (0, 1; message
 * on stderr naming the file and why, e.g. the events differ). */
int cli_diff__report(const struct cli_diff_options *o);

/* The differential flame graph of NEW against BASE (inline frames shown,
 * as in every tree) in *text (malloc'd, caller frees), *len bytes.
 * Returns the exit status (0, or 1 with a message on stderr). */
int cli_diff__svg(const struct cli_diff_options *o, char **text, size_t *len);

#endif
