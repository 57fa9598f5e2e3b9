// SPDX-License-Identifier: MIT
/*
 * `microscope report`'s command line: its help text, and the options parsed
 * and checked into a struct report_options (report.h).  report.c runs them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/output_check.h"
#include "cli_util.h"
#include "../options/record_options.h"
#include "input.h"
#include "report.h"

#define REPORT_DEFAULT_LIMIT	   20
#define REPORT_DEFAULT_MIN_PERCENT 0.5

static const char report_usage[] =
	"usage: microscope report [FILE] [--sort self|total] [--limit N] [--threads]\n"
	"                         [--min-percent P] [--event NAME] [--off-cpu | --wall]\n"
	"                         [--svg OUT] [--look logical|native|python]\n"
	"                         [--by process|thread|container|module] [--merge]\n"
	"                         [--pid PID] [--tid TID] [--comm NAME] [--module NAME]\n"
	"                         [--container ID|NAME] [--cgroup PATH]\n"
	"                         [--granularity G] [--inline show|fold] [--focus RE]\n"
	"                         [--ignore RE] [--hide RE] [--since T] [--until T]\n"
	"                         [--base-since T] [--base-until T]\n"
	"       microscope report --diff BASE NEW [options]\n"
	"\n"
	"Print a capture's summary, its top-down call tree and its functions by\n"
	"self or total cost.  FILE defaults to microscope.msc.\n"
	"\n"
	"options:\n"
	"  --sort self|total   order of the function table (default self)\n"
	"  --limit N           rows of the function table, and children shown per\n"
	"                      call tree node (default 20)\n"
	"  --min-percent P     hide call tree nodes below P% of the total (default 0.5);\n"
	"                      with --diff, given: hide rows under P% in both sides\n"
	"  --threads           one call tree root per thread (\"comm-tid\")\n"
	"  --event NAME        the event to report (default: the first with samples);\n"
	"                      NAME#N: the Nth event of that name (a directory of\n"
	"                      recordings at different rates)\n"
	"  --off-cpu           off-CPU time instead of CPU samples (record --off-cpu):\n"
	"                      totals by state and cause, the call tree and functions\n"
	"                      weighted by off-CPU ms, the longest intervals with their\n"
	"                      waker; intervals cut by the recording's edges count\n"
	"                      their part inside it, marked [clipped by the recording\n"
	"                      window] in the tree and listed apart\n"
	"  --timeline[=N]      per-thread lanes over time (N buckets, default 72): CPU\n"
	"                      sample density, off-CPU shaded, each bucket's top\n"
	"                      function as a letter; --since/--until narrow it\n"
	"  --raw-times         with --off-cpu, list intervals as key=value with absolute\n"
	"                      CLOCK_MONOTONIC ns (for scripts) instead of times from\n"
	"                      the recording's start\n"
	"  --zones             zones the program marked with the probes SDK (sdk/c):\n"
	"                      per site count, total, min, mean, median, p99, max,\n"
	"                      begins and ends left unpaired, marks; and the probe\n"
	"                      records dropped or refused; --since/--until clip zones\n"
	"                      to the window, the scope options keep their threads'\n"
	"  --wall              per thread: on-CPU time estimated from samples (samples x\n"
	"                      sample period) beside measured off-CPU time; the scope\n"
	"                      options keep threads, --since/--until the samples taken\n"
	"                      and intervals begun in the window\n"
	"  --svg OUT           also write the flame graph SVG of the same samples to OUT\n"
	"                      (as 'microscope convert FILE -o OUT.svg'; its frames\n"
	"                      are --granularity's keys when that is given); with\n"
	"                      --diff the differential flame graph (as convert --diff)\n"
	"  --granularity G     what a row is: function (default; a Python function\n"
	"                      whatever its line, an unsymbolized module as\n"
	"                      \"libfoo.so+?\"), line (\"name (file.c:12)\"), address\n"
	"                      or module (one row per binary or library, \"[kernel]\",\n"
	"                      a Python file: which library the time goes to, like\n"
	"                      perf report --sort dso; a run of frames of one module\n"
	"                      in a stack is one frame)\n"
	"  --inline show|fold  inlined calls as frames of their own, or folded into\n"
	"                      the function they were inlined into (default: folded in\n"
	"                      the function table, shown in the call tree)\n"
	"  --focus REGEX       only samples with a frame matching REGEX (pprof's -focus)\n"
	"  --ignore REGEX      drop samples with a frame matching REGEX\n"
	"  --hide REGEX        remove frames matching REGEX from stacks (their cost goes\n"
	"                      to the caller)\n"
	"  --since T, --until T  only samples in [T1, T2) from the recording's start;\n"
	"                      for a segment directory (record --continuous) also a\n"
	"                      UTC time (2026-12-02T14:00Z, 14:00), -10m (ago) or\n"
	"                      @SECONDS: the segments and samples of that span\n"
	"                      (1.5, 1.5s, 200ms, 30us)\n"
	"  --diff BASE NEW     compare two captures: per-function share changes, largest\n"
	"                      first, '*' where a two-proportion test says significant;\n"
	"                      --since/--until narrow NEW, --base-since/--base-until\n"
	"                      BASE (each from its own recording's start; whole by\n"
	"                      default)\n"
	"  --base-since T, --base-until T  with --diff: BASE's samples in [T1, T2),\n"
	"                      as --since/--until take them\n"
	"  --look LOOK         how stacks with Python frames are seen: logical (default;\n"
	"                      Python frames spliced into native stacks), native\n"
	"                      (Python frames dropped) or python (from the outermost\n"
	"                      Python frame in, interpreter frames hidden)\n"
	"  --by KIND           the samples split by process, thread, container or module\n"
	"                      (the innermost frame's), largest first, instead of the\n"
	"                      call tree: the samples the other options select, at\n"
	"                      most --limit rows, none under --min-percent if given\n"
	SCOPE_USAGE
	"  -h, --help          show this help\n"
	"\n"
	"Kernel functions are marked \" [k]\".  Percentages are of the event's total\n"
	"weight.  The call tree hides children under --min-percent and beyond\n"
	"--limit behind one \"… N more\" line, and stops at 1024 levels.\n";

static int report_usage_error(const char *fmt, const char *arg)
{
	fputs("microscope report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nusage: microscope report [FILE] [--sort self|total] [--limit N] [--threads] ...\n"
	      "       microscope report --diff BASE NEW\n"
	      "Run 'microscope report --help' for details.\n",
	      stderr);
	return 2;
}

/* Returns -1 to go on, else the exit status: 0 after --help, 2 for a usage error. */
int report_options__parse(int argc, char **argv, struct report_options *o)
{
	static const struct option longopts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "min-percent", required_argument, NULL, 'm' },
		{ "threads", no_argument, NULL, 't' },
		{ "event", required_argument, NULL, 'e' },
		{ "off-cpu", no_argument, NULL, 'O' },
		{ "wall", no_argument, NULL, 'W' },
		{ "zones", no_argument, NULL, 'Z' },
		{ "svg", required_argument, NULL, 'g' },
		{ "look", required_argument, NULL, 'L' },
		{ "granularity", required_argument, NULL, 'G' },
		{ "inline", required_argument, NULL, 'i' },
		{ "diff", no_argument, NULL, 'D' },
		{ "focus", required_argument, NULL, 'f' },
		{ "ignore", required_argument, NULL, 'I' },
		{ "hide", required_argument, NULL, 'H' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "base-since", required_argument, NULL, 'b' },
		{ "base-until", required_argument, NULL, 'u' },
		{ "raw-times", no_argument, NULL, 'r' },
		{ "timeline", optional_argument, NULL, 'T' },
		{ "by", required_argument, NULL, 'B' },
		SCOPE_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end, why[600];
	int ch;

	o->sort = ANALYSIS_SORT_SELF;
	o->limit = REPORT_DEFAULT_LIMIT;
	o->min_percent = REPORT_DEFAULT_MIN_PERCENT;
	o->granularity = ANALYSIS_GRANULARITY_FUNCTION;
	o->until_real_ns = UINT64_MAX;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (ch) {
		case 's':
			if (!strcmp(optarg, "self"))
				o->sort = ANALYSIS_SORT_SELF;
			else if (!strcmp(optarg, "total"))
				o->sort = ANALYSIS_SORT_TOTAL;
			else
				return report_usage_error("--sort takes self or total, not '%s'",
							  optarg);
			break;
		case 'l': {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || optarg[0] < '0' || optarg[0] > '9' || *end || v < 1 ||
			    v > UINT32_MAX)
				return report_usage_error("--limit takes a positive integer, not '%s'",
							  optarg);
			o->limit = (uint32_t)v;
			break;
		}
		case 'm':
			o->min_percent_set = true;
			if (record_options__parse_decimal(optarg, &o->min_percent, &end) || *end ||
			    o->min_percent > 100)
				return report_usage_error("--min-percent takes 0 to 100, not '%s'",
							  optarg);
			break;
		case 't':
			o->threads = true;
			break;
		case 'e':
			o->event = optarg;
			break;
		case 'O':
			o->off_cpu = true;
			break;
		case 'Z':
			o->zones = true;
			break;
		case 'W':
			o->wall = true;
			break;
		case 'g':
			o->svg = optarg;
			break;
		case 'L':
			if (analysis_look__parse(optarg, &o->look))
				return report_usage_error(
					"--look takes logical, native or python, not '%s'", optarg);
			break;
		case 'G':
			if (analysis_granularity__parse(optarg, &o->granularity))
				return report_usage_error(
					"--granularity takes function, line, address or module, not '%s'",
					optarg);
			o->granularity_set = true;
			break;
		case 'i':
			if (!strcmp(optarg, "show"))
				o->inline_mode = REPORT_INLINE_SHOW;
			else if (!strcmp(optarg, "fold"))
				o->inline_mode = REPORT_INLINE_FOLD;
			else
				return report_usage_error("--inline takes show or fold, not '%s'",
							  optarg);
			break;
		case 'D':
			o->diff_base = "";
			break;
		case 'r':
			o->raw_times = true;
			break;
		case 'T': {
			unsigned long v = 72;

			if (optarg) {
				errno = 0;
				v = strtoul(optarg, &end, 10);
				if (errno || end == optarg || *end || v < 4 || v > 1000)
					return report_usage_error("--timeline takes 4 to 1000 "
								  "buckets, not '%s'", optarg);
			}
			o->timeline = (uint32_t)v;
			break;
		}
		case 'f':
			o->filter.focus = optarg;
			break;
		case 'I':
			o->filter.ignore = optarg;
			break;
		case 'H':
			o->filter.hide = optarg;
			break;
		case 'S':
		case 'U': {
			struct cli_input_range r = { o->since_real_ns, o->until_real_ns };

			/* a wall-clock time or "-10m" ago selects a directory's segments */
			if (!cli_input__set_range(&r, ch == 'S', optarg)) {
				o->since_real_ns = r.since_ns;
				o->until_real_ns = r.until_ns;
				break;
			}
			if (cli__parse_time_ns(optarg, ch == 'S' ? &o->since_ns : &o->until_ns))
				return report_usage_error("--since and --until take a time from the "
							  "recording's start (1.5, 1.5s, 200ms, 30us), "
							  "a UTC time (2026-12-02T14:00Z, 14:00) or a "
							  "time ago (-10m), not '%s'", optarg);
			*(ch == 'S' ? &o->since_set : &o->until_set) = true;
			break;
		}
		case 'b':
		case 'u':
			if (cli_diff_window__set(&o->base_window, ch == 'b', optarg))
				return report_usage_error("--base-since and --base-until take a time "
							  "from BASE's start (1.5, 200ms), a UTC "
							  "time (2026-12-02T14:00Z, 14:00) or a "
							  "time ago (-10m), not '%s'", optarg);
			break;
		case 'B':
			if (analysis_by__parse(optarg, &o->by))
				return report_usage_error(
					"--by takes process, thread, container or module, not '%s'",
					optarg);
			o->by_set = true;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		case ':':
			return report_usage_error("option '%s' needs a value", argv[optind - 1]);
		default: {
			int handled = scope_options__handle(&o->scope, ch, optarg, "report");

			if (handled == -EINVAL)
				return 2;
			if (handled < 0)
				return 1;
			if (handled)
				break;
			/* optopt names a bad short option; for a long one it is 0. */
			char shortopt[3] = { '-', (char)optopt, '\0' }, hint[80], msg[160];

			cli__option_hint(argv[optind - 1], longopts, hint, sizeof(hint));
			snprintf(msg, sizeof(msg), "unknown option '%%s'%s", hint);
			return report_usage_error(msg, optopt ? shortopt : argv[optind - 1]);
		}
		}
	}
	/* Argument errors found before any input is read are usage errors
	 * (status 2), as record's and symbolize's are. */
	if (analysis_filter__check(&o->filter, why, sizeof(why)))
		return report_usage_error("%s", why);
	if (o->svg && capture__check_output(o->svg, why, sizeof(why)))
		return report_usage_error("--svg: %s", why);
	if (!o->diff_base && (o->base_window.start_set || o->base_window.end_set ||
			      o->base_window.range.until_ns))
		return report_usage_error("--base-since and --base-until narrow a --diff's "
					  "BASE%s", "");
	if (o->diff_base) {
		if (cli_diff_window__check(&o->base_window))
			return report_usage_error("--base-until must be after --base-since%s", "");
		if (argc - optind != 2)
			return report_usage_error("--diff takes two captures, BASE and NEW%s", "");
		o->diff_base = argv[optind];
		o->path = argv[optind + 1];
		return -1;
	}
	if (optind < argc - 1)
		return report_usage_error("one capture FILE, got '%s' too", argv[argc - 1]);
	/* No FILE: what `record` writes by default. */
	o->path = optind < argc ? argv[optind] : CLI_DEFAULT_CAPTURE;
	/* the same for times from the start and for wall-clock ones (a
	 * directory's: before, 'no readable segment' with status 1) */
	if ((o->since_set && o->until_set && o->until_ns <= o->since_ns) ||
	    o->until_real_ns <= o->since_real_ns)
		return report_usage_error("--until must be after --since%s", "");
	if (o->off_cpu + o->wall + !!o->event > 1)
		return report_usage_error("choose one of --off-cpu, --wall and --event%s", "");
	return -1; /* go on */
}
