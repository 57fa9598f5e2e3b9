/* SPDX-License-Identifier: MIT */
/*
 * Private to `microscope report` (report.c, report_options.c, report_offcpu.c,
 * report_summary.c): the parsed options, the state the printers share, and
 * the helpers they use.
 */
#ifndef MS_CLI_REPORT_H
#define MS_CLI_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "diff.h"
#include "scope_options.h"

struct report_options {
	const char *path;
	enum analysis_sort sort;
	uint32_t limit;
	double min_percent;
	bool min_percent_set; /* given: --diff hides rows under it in both sides too */
	bool threads;
	const char *event;
	bool off_cpu; /* --off-cpu */
	bool wall;    /* --wall */
	bool zones;   /* --zones */
	const char *svg; /* --svg OUT, or NULL */
	enum analysis_look_kind look;
	enum analysis_granularity granularity; /* --granularity, default function */
	bool granularity_set; /* --granularity given: --svg draws its keys, else frames */
	int inline_mode; /* REPORT_INLINE_* */
	const char *diff_base; /* --diff BASE NEW: path is NEW */
	struct cli_diff_window base_window; /* --base-since/--base-until (--diff only) */
	struct analysis_filter_spec filter; /* --focus, --ignore, --hide */
	uint64_t since_ns, until_ns; /* --since/--until, from the recording's start; 0 unset */
	bool since_set, until_set;
	/* --since/--until WHEN as a wall-clock time or "-10m" ago: segments of a
	 * directory (record --continuous), CLOCK_REALTIME ns; 0 / UINT64_MAX unset */
	uint64_t since_real_ns, until_real_ns;
	bool raw_times; /* --raw-times: intervals as key=value, absolute ns */
	uint32_t timeline; /* --timeline[=BUCKETS]: columns, 0 for no timeline */
	struct scope_options scope; /* --pid .. --cgroup filters, --merge */
	bool by_set;		    /* --by */
	enum analysis_by by;
};

/* --inline: folded into their function in the table and shown in the tree
 * by default; "show" or "fold" applies to both. */
enum { REPORT_INLINE_DEFAULT = 0, REPORT_INLINE_SHOW = 1, REPORT_INLINE_FOLD = 2 };

struct report {
	const struct report_options *opt;
	const struct capture *c;
	const struct analysis_names *names;
	const char *unit;
	bool ns; /* weights are nanoseconds: shown as milliseconds */
	uint64_t total;
	int wwidth; /* width of a weight column */
	uint64_t start_ns; /* the recording's start (analysis__start_ns) */
	const struct analysis_query *query;
};

/* ---- report_options.c ---- */
/* argv into o: -1 to go on, else the exit status (0 after --help, 2 for a
 * usage error, with its message on stderr). */
int report_options__parse(int argc, char **argv, struct report_options *o);

/* Shares in percent; 0 for an empty whole. */
double percent(uint64_t part, uint64_t whole);
/* A weight as the report shows it: an integer, or milliseconds for ns. */
void format_weight(const struct report *r, uint64_t w, char *buf, size_t size);
/* "1.234 s", "12.345 ms", "3.000 us" or "12 ns". */
void format_duration(uint64_t ns, char *buf, size_t size);
/* A key's display name and its mark (" [k]", " [i]" or ""). */
const char *key_name(const struct report *r, uint32_t key);
const char *key_mark(const struct report *r, uint32_t key);

/* ---- report_summary.c ---- */
/* The summary block of q's samples of event (stdout). */
void print_summary(const struct report *r, const struct analysis_summary *s, uint32_t event);

/* ---- report_offcpu.c: --off-cpu and --wall ---- */
const char *thread_comm(const struct capture *c, uint32_t thread);
/* One line under the CPU summary when the capture also has intervals. */
void print_offcpu_note(const struct report *r);
/* The --off-cpu summary, grouped tables and interval lists; 0 or -ENOMEM. */
int print_offcpu_summary(const struct report *r);
int print_offcpu_tables(const struct report *r);
int print_offcpu_intervals(const struct report *r);
/* report --wall; returns the exit status. */
int report_wall(const struct report_options *opt, const struct capture *c);
/* --zones (report_zones.c): the capture's zone statistics.  Returns the
 * exit status. */
int report_zones(const struct report_options *opt, const struct capture *c);

#endif
