// SPDX-License-Identifier: MIT
/*
 * microscope report: a capture's summary, top-down call tree and flat
 * self/total table on stdout.  An adapter: the numbers come from analysis/,
 * this file only parses options and lays text out.  The output is a function
 * of the capture and the options alone.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "commands.h"

#define REPORT_DEFAULT_LIMIT	   20
#define REPORT_DEFAULT_MIN_PERCENT 0.5
#define REPORT_INDENT_MAX	   32 /* deeper tree levels stop indenting and print "[+N]" */

static const char report_usage[] =
	"usage: microscope report FILE [--sort self|total] [--limit N] [--threads]\n"
	"                         [--min-percent P] [--event NAME]\n"
	"\n"
	"Print a capture's summary, its top-down call tree and its functions by\n"
	"self or total cost.\n"
	"\n"
	"options:\n"
	"  --sort self|total   order of the function table (default self)\n"
	"  --limit N           rows of the function table, and children shown per\n"
	"                      call tree node (default 20)\n"
	"  --min-percent P     hide call tree nodes below P% of the total (default 0.5)\n"
	"  --threads           one call tree root per thread (\"comm-tid\")\n"
	"  --event NAME        the event to report (default: the first with samples)\n"
	"  -h, --help          show this help\n"
	"\n"
	"Kernel functions are marked \" [k]\".  Percentages are of the event's total\n"
	"weight.  The call tree hides children under --min-percent and beyond\n"
	"--limit behind one \"… N more\" line.\n";

struct report_options {
	const char *path;
	enum analysis_sort sort;
	uint32_t limit;
	double min_percent;
	bool threads;
	const char *event;
};

struct report {
	const struct report_options *opt;
	const struct capture *c;
	const struct analysis_names *names;
	const char *unit;
	bool ns; /* weights are nanoseconds: shown as milliseconds */
	uint64_t total;
	int wwidth; /* width of a weight column */
};

static int report_usage_error(const char *fmt, const char *arg)
{
	fputs("microscope report: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nusage: microscope report FILE [--sort self|total] [--limit N] [--threads]\n"
	      "                         [--min-percent P] [--event NAME]\n"
	      "Run 'microscope report --help' for details.\n",
	      stderr);
	return 2;
}

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A weight as the report shows it: an integer, or milliseconds for ns. */
static void format_weight(const struct report *r, uint64_t w, char *buf, size_t size)
{
	if (r->ns)
		snprintf(buf, size, "%.1f", (double)w / 1e6);
	else
		snprintf(buf, size, "%" PRIu64, w);
}

static void format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns >= 1000000000ull)
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, size, "%.3f ms", (double)ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, size, "%.3f us", (double)ns / 1e3);
	else
		snprintf(buf, size, "%" PRIu64 " ns", ns);
}

static const char *key_name(const struct report *r, uint32_t key)
{
	return r->names->keys[key].name;
}

static const char *key_mark(const struct report *r, uint32_t key)
{
	if (r->names->keys[key].kind == ANALYSIS_KEY_INLINE)
		return " [i]";
	return r->names->keys[key].kind == ANALYSIS_KEY_KERNEL ? " [k]" : "";
}

/* "name 5, name 3" for counters; stdout. */
static void print_counters(const struct report *r, const struct analysis_count *rows, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		printf("%s%s %" PRIu64, i ? ", " : "",
		       capture__string(r->c, r->c->counters[rows[i].id].name), rows[i].value);
}

/* Symbolization: mode, per-module debug-info problems (meta
 * symbols.problem.N) and deferred-symbolization failures
 * (symbolize.failure.N), one line each. */
static void print_symbol_notes(const struct capture *c)
{
	const char *mode = capture__meta(c, "symbolize");
	uint32_t i;

	if (mode && strcmp(mode, "immediate"))
		printf("  symbols    %s%s\n", mode,
		       capture__meta(c, "symbolize.later") ? ", then microscope symbolize" : "");
	for (i = 0; i < c->nmeta; i++) {
		const char *k = capture__string(c, c->meta[i].key);

		if (!strncmp(k, "symbols.problem.", 16))
			printf("  debug info %s\n", capture__string(c, c->meta[i].value));
		else if (!strncmp(k, "symbolize.failure.", 18))
			printf("  unsymbolized %s\n", capture__string(c, c->meta[i].value));
	}
}

static void print_summary(const struct report *r, const struct analysis_summary *s,
			  uint32_t event)
{
	const struct capture *c = r->c;
	const struct capture_event *ev = &c->events[event];
	const char *cmd = capture__meta(c, "command");
	const char *freq = capture__meta(c, "freq_hz");
	uint64_t *per_event = calloc((size_t)c->nevents + 1, sizeof(*per_event));
	char buf[64], wbuf[32];
	uint32_t i, others = 0;

	printf("microscope report: %s\n", r->opt->path);
	if (cmd)
		printf("  command    %s\n", cmd);
	printf("  event      %s (unit %s", capture__string(c, ev->name), r->unit);
	if (ev->period)
		printf(", period %" PRIu64, ev->period);
	printf(")\n");
	if (per_event) {
		for (i = 0; i < c->nsamples; i++)
			per_event[c->samples[i].event]++;
		for (i = 0; i < c->nevents; i++) {
			if (i == event || !per_event[i])
				continue;
			printf("%s%s (%" PRIu64 " sample%s)", others++ ? ", " : "  other      ",
			       capture__string(c, c->events[i].name), per_event[i],
			       per_event[i] == 1 ? "" : "s");
		}
		if (others)
			printf("; choose with --event\n");
		free(per_event);
	}
	printf("  samples    %" PRIu64, s->samples);
	if (r->ns || strcmp(r->unit, "samples") || s->weight != s->samples) {
		format_weight(r, s->weight, wbuf, sizeof(wbuf));
		printf(" (weight %s %s)", wbuf, r->ns ? "ms" : r->unit);
	}
	printf(" from %" PRIu32 " thread%s\n", s->threads, s->threads == 1 ? "" : "s");
	format_duration(s->duration_ns, buf, sizeof(buf));
	printf("  duration   %s (%s)\n", buf,
	       s->duration_from_meta ? "recording" : "first to last sample");
	if (s->rate_hz > 0) {
		printf("  rate       %.1f samples per thread-second", s->rate_hz);
		if (freq)
			printf(" (requested %s Hz)", freq);
		printf("\n");
	}
	if (capture__meta(r->c, "call_graph")) {
		const char *size = capture__meta(r->c, "stack_size");

		printf("  stacks     %s", capture__meta(r->c, "call_graph"));
		const char *preset = capture__meta(r->c, "preset");

		if (size && strcmp(size, "0"))
			printf(", %s-byte user stack copies", size);
		if (preset)
			printf(" (preset %s)", preset);
		printf("\n");
	}
	printf("  lost       %" PRIu64, s->lost);
	if (s->nlost_counters) {
		printf(" (");
		print_counters(r, s->lost_counters, s->nlost_counters);
		printf(")");
	}
	printf("\n");
	printf("  problems   %" PRIu64, s->problems);
	if (s->nproblem_counters) {
		printf(" (");
		print_counters(r, s->problem_counters, s->nproblem_counters);
		printf(")");
	}
	printf("\n");
	if (s->truncated) {
		printf("  truncated  %" PRIu64 " sample%s (%.1f%%):", s->truncated,
		       s->truncated == 1 ? "" : "s", percent(s->truncated, s->samples));
		for (i = 0; i < s->ntruncations; i++)
			printf("%s %s %" PRIu64, i ? "," : "", key_name(r, s->truncations[i].id),
			       s->truncations[i].value);
		printf("\n");
	}
	if (s->empty_stacks)
		printf("  no stack   %" PRIu64 " sample%s (%.1f%%)\n", s->empty_stacks,
		       s->empty_stacks == 1 ? "" : "s", percent(s->empty_stacks, s->samples));
	print_symbol_notes(r->c);
}

static void print_indent(uint32_t depth)
{
	uint32_t level = depth - 1;

	if (level > REPORT_INDENT_MAX) {
		printf("%*s[+%" PRIu32 "] ", REPORT_INDENT_MAX * 2, "", level - REPORT_INDENT_MAX);
		return;
	}
	printf("%*s", (int)(level * 2), "");
}

static void print_node(const struct report *r, const struct analysis_node *n)
{
	char wbuf[32];

	format_weight(r, n->total, wbuf, sizeof(wbuf));
	printf("  %5.1f%%  %5.1f%%  %*s  ", percent(n->total, r->total), percent(n->self, r->total),
	       r->wwidth, wbuf);
	print_indent(n->depth);
	printf("%s%s\n", key_name(r, n->key), key_mark(r, n->key));
}

static void print_more(const struct report *r, uint32_t depth, uint32_t hidden, uint64_t weight)
{
	char wbuf[32];

	format_weight(r, weight, wbuf, sizeof(wbuf));
	printf("  %5.1f%%  %5s   %*s  ", percent(weight, r->total), "", r->wwidth, wbuf);
	print_indent(depth);
	printf("… %" PRIu32 " more\n", hidden);
}

/* Per open tree level: the next child to consider and what was hidden. */
struct tree_level {
	uint32_t node; /* whose children */
	uint32_t next; /* next child id, CAPTURE_NONE when done */
	uint32_t shown;
	uint32_t hidden;
	uint64_t hidden_weight;
	bool cut; /* a child was hidden by --limit, not by --min-percent */
};

/*
 * Pre-order over shown nodes with an explicit stack (a crafted capture may
 * nest deeper than the C stack).  Children come sorted by total, so once one
 * is below --min-percent the rest are too.  A level's hidden children get one
 * "… N more" line when --limit cut some or together they reach
 * --min-percent; otherwise they are dropped silently, like perf's.
 */
static int print_tree(const struct report *r, const struct analysis_tree *t)
{
	struct tree_level *st = NULL, *top;
	size_t depth = 0, cap = 0;
	int err = 0;

	printf("\ncall tree (%s; under %g%% hidden, at most %" PRIu32 " children each)\n",
	       r->ns ? "ms" : r->unit, r->opt->min_percent, r->opt->limit);
	if (!r->total) {
		printf("  (no samples)\n");
		return 0;
	}
	printf("  %6s  %6s  %*s  %s\n", "total%", "self%", r->wwidth, "total", "function");
	cap = 64;
	st = malloc(cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	st[depth++] = (struct tree_level){ .node = 0, .next = t->nodes[0].first_child };
	while (depth) {
		const struct analysis_node *c;

		top = &st[depth - 1];
		if (top->next == CAPTURE_NONE) {
			if (top->hidden &&
			    (top->cut || percent(top->hidden_weight, r->total) >= r->opt->min_percent))
				print_more(r, t->nodes[top->node].depth + 1, top->hidden,
					   top->hidden_weight);
			depth--;
			continue;
		}
		c = &t->nodes[top->next];
		top->next = c->next_sibling;
		if (top->shown >= r->opt->limit ||
		    percent(c->total, r->total) < r->opt->min_percent) {
			top->cut |= top->shown >= r->opt->limit;
			top->hidden++;
			top->hidden_weight += c->total;
			continue;
		}
		top->shown++;
		print_node(r, c);
		if (c->first_child == CAPTURE_NONE)
			continue;
		if (depth == cap) {
			struct tree_level *ns = realloc(st, cap * 2 * sizeof(*st));

			if (!ns) {
				err = -ENOMEM;
				goto cleanup;
			}
			st = ns;
			cap *= 2;
		}
		st[depth++] = (struct tree_level){ .node = (uint32_t)(c - t->nodes),
						   .next = c->first_child };
	}
cleanup:
	free(st);
	return err;
}

static void print_flat(const struct report *r, const struct analysis_flat *f)
{
	uint32_t i, n = f->nrows < r->opt->limit ? f->nrows : r->opt->limit;
	char sbuf[32], tbuf[32];

	printf("\nfunctions by %s (%s; top %" PRIu32 " of %" PRIu32 ")\n",
	       r->opt->sort == ANALYSIS_SORT_SELF ? "self" : "total", r->ns ? "ms" : r->unit, n,
	       f->nrows);
	printf("  %6s  %*s  %6s  %*s  %s\n", "self%", r->wwidth, "self", "total%", r->wwidth,
	       "total", "function");
	for (i = 0; i < n; i++) {
		const struct analysis_flat_row *row = &f->rows[i];

		format_weight(r, row->self, sbuf, sizeof(sbuf));
		format_weight(r, row->total, tbuf, sizeof(tbuf));
		printf("  %5.1f%%  %*s  %5.1f%%  %*s  %s%s\n", percent(row->self, r->total),
		       r->wwidth, sbuf, percent(row->total, r->total), r->wwidth, tbuf,
		       key_name(r, row->key), key_mark(r, row->key));
	}
}

/* Returns -1 to go on, else the exit status: 0 after --help, 2 for a usage error. */
static int parse_options(int argc, char **argv, struct report_options *o)
{
	static const struct option longopts[] = {
		{ "sort", required_argument, NULL, 's' },
		{ "limit", required_argument, NULL, 'l' },
		{ "min-percent", required_argument, NULL, 'm' },
		{ "threads", no_argument, NULL, 't' },
		{ "event", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int ch;

	o->sort = ANALYSIS_SORT_SELF;
	o->limit = REPORT_DEFAULT_LIMIT;
	o->min_percent = REPORT_DEFAULT_MIN_PERCENT;
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
			if (errno || end == optarg || *end || optarg[0] == '-' || v < 1 ||
			    v > UINT32_MAX)
				return report_usage_error("--limit takes a positive integer, not '%s'",
							  optarg);
			o->limit = (uint32_t)v;
			break;
		}
		case 'm':
			errno = 0;
			o->min_percent = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(o->min_percent) ||
			    o->min_percent < 0 || o->min_percent > 100)
				return report_usage_error("--min-percent takes 0 to 100, not '%s'",
							  optarg);
			break;
		case 't':
			o->threads = true;
			break;
		case 'e':
			o->event = optarg;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		case ':':
			return report_usage_error("option '%s' needs a value", argv[optind - 1]);
		default: {
			/* optopt names a bad short option; for a long one it is 0. */
			char shortopt[3] = { '-', (char)optopt, '\0' };

			return report_usage_error("unknown option '%s'",
						  optopt ? shortopt : argv[optind - 1]);
		}
		}
	}
	if (optind != argc - 1)
		return report_usage_error(optind < argc ? "one capture FILE, got '%s' too"
							: "missing capture FILE%s",
					  optind < argc ? argv[argc - 1] : "");
	o->path = argv[optind];
	return -1; /* go on */
}

int cmd_report(int argc, char **argv)
{
	struct report_options opt = { 0 };
	struct analysis_summary sum = { 0 };
	struct analysis_names *names = NULL;
	struct analysis_tree *tree = NULL;
	struct analysis_flat *flat = NULL;
	struct capture *c = NULL;
	struct analysis_query q;
	struct report r = { .opt = &opt };
	uint32_t event;
	char err[512] = "", wbuf[32];
	bool oom = false;
	int status, rc;

	status = parse_options(argc, argv, &opt);
	if (status >= 0)
		return status;
	status = 1;

	rc = capture__open(opt.path, &c, err, sizeof(err));
	if (rc) {
		if (err[0])
			fprintf(stderr, "microscope report: %s\n", err);
		else
			fprintf(stderr, "microscope report: %s: %s\n", opt.path, strerror(-rc));
		goto cleanup;
	}
	if (opt.event) {
		if (analysis__find_event(c, opt.event, &event)) {
			uint32_t i;

			fprintf(stderr, "microscope report: %s: no event '%s' (events:", opt.path,
				opt.event);
			for (i = 0; i < c->nevents; i++)
				fprintf(stderr, "%s %s", i ? "," : "",
					capture__string(c, c->events[i].name));
			fprintf(stderr, "%s)\n", c->nevents ? "" : " none");
			goto cleanup;
		}
	} else {
		event = analysis__default_event(c);
		if (event == CAPTURE_NONE) {
			printf("microscope report: %s\n  no events, no samples\n", opt.path);
			status = 0;
			goto cleanup;
		}
	}

	analysis_query__init(&q, event);
	q.per_thread = opt.threads;
	/* The query is valid (event from the capture), so failures are ENOMEM. */
	oom = true;
	names = analysis_names__new(c);
	if (!names)
		goto cleanup;
	if (analysis_summary__init(&sum, names, &q))
		goto cleanup;
	tree = analysis_tree__new(names, &q);
	if (!tree)
		goto cleanup;
	flat = analysis_flat__new(tree, opt.sort);
	if (!flat)
		goto cleanup;

	r.c = c;
	r.names = names;
	r.unit = capture__string(c, c->events[event].unit);
	r.ns = !strcmp(r.unit, "nanoseconds");
	r.total = tree->nodes[0].total;
	format_weight(&r, r.total, wbuf, sizeof(wbuf));
	r.wwidth = (int)strlen(wbuf) > 5 ? (int)strlen(wbuf) : 5;

	print_summary(&r, &sum, event);
	if (print_tree(&r, tree))
		goto cleanup;
	oom = false;
	print_flat(&r, flat);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "microscope report: writing the report: %s\n", strerror(errno));
		goto cleanup;
	}
	status = 0;
cleanup:
	if (oom)
		fprintf(stderr, "microscope report: %s: out of memory\n", opt.path);
	analysis_flat__free(flat);
	analysis_tree__free(tree);
	analysis_summary__release(&sum);
	analysis_names__free(names);
	capture__free(c);
	return status;
}
