// SPDX-License-Identifier: MIT
/*
 * microscope report: a capture's summary, top-down call tree and flat
 * self/total table on stdout.  An adapter: the numbers come from analysis/,
 * this file lays text out (report_options.c parses the options).  The
 * output is a function of the capture and the options alone.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "analysis/budget.h"
#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/no_event.h"
#include "capture/text.h"
#include "cli_util.h"
#include "commands.h"
#include "diff.h"
#include "input.h"
#include "report.h"
#include "report_timeline.h"

#define REPORT_INDENT_MAX	   32 /* deeper tree levels stop indenting and print "[+N]" */
/* The printed call tree stops at this depth (a crafted 1M-deep stack would be
 * 1M lines, 100 MB of text); the flame graph draws 4096 levels. */
#define REPORT_TREE_MAX_DEPTH 1024

double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A weight as the report shows it: an integer, or milliseconds for ns. */
void format_weight(const struct report *r, uint64_t w, char *buf, size_t size)
{
	if (r->ns)
		snprintf(buf, size, "%.1f", (double)w / 1e6);
	else
		snprintf(buf, size, "%" PRIu64, w);
}

void format_duration(uint64_t ns, char *buf, size_t size)
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

const char *key_name(const struct report *r, uint32_t key)
{
	return r->names->keys[key].name;
}

const char *key_mark(const struct report *r, uint32_t key)
{
	if (r->names->keys[key].kind == ANALYSIS_KEY_INLINE)
		return " [i]";
	return r->names->keys[key].kind == ANALYSIS_KEY_KERNEL ? " [k]" : "";
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
	uint32_t cut_deep = 0;
	int err = 0;

	printf("\ncall tree (%s; under %g%% hidden, at most %" PRIu32 " children each)\n",
	       r->ns ? "ms" : r->unit, r->opt->min_percent, r->opt->limit);
	if (!r->total) {
		printf("  (no samples)\n");
		return 0;
	}
	printf("  %6s  %6s  %*s  %s\n", "total%", "self%", r->wwidth, "total",
	       r->opt->granularity == ANALYSIS_GRANULARITY_MODULE ? "module" : "function");
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
		if (c->depth >= REPORT_TREE_MAX_DEPTH) {
			cut_deep++;
			continue;
		}
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
	if (cut_deep)
		printf("  (%" PRIu32 " subtree%s below depth %u not shown: see the flame graph, "
		       "--svg)\n",
		       cut_deep, cut_deep == 1 ? "" : "s", REPORT_TREE_MAX_DEPTH);
cleanup:
	free(st);
	return err;
}

static void print_flat(const struct report *tr, const struct analysis_flat *f)
{
	struct report flat_report = *tr, *r = &flat_report;
	uint32_t i, n = f->nrows < r->opt->limit ? f->nrows : r->opt->limit;
	char sbuf[32], tbuf[32];
	const char *what = r->opt->granularity == ANALYSIS_GRANULARITY_MODULE ? "module" : "function";

	r->names = f->names; /* the table's keys may fold inlined calls */
	printf("\n%ss by %s (%s; top %" PRIu32 " of %" PRIu32 ")\n", what,
	       r->opt->sort == ANALYSIS_SORT_SELF ? "self" : "total", r->ns ? "ms" : r->unit, n,
	       f->nrows);
	printf("  %6s  %*s  %6s  %*s  %s\n", "self%", r->wwidth, "self", "total%", r->wwidth,
	       "total", what);
	for (i = 0; i < n; i++) {
		const struct analysis_flat_row *row = &f->rows[i];

		format_weight(r, row->self, sbuf, sizeof(sbuf));
		format_weight(r, row->total, tbuf, sizeof(tbuf));
		printf("  %5.1f%%  %*s  %5.1f%%  %*s  %s%s\n", percent(row->self, r->total),
		       r->wwidth, sbuf, percent(row->total, r->total), r->wwidth, tbuf,
		       key_name(r, row->key), key_mark(r, row->key));
	}
}

/* --by: the split, largest first, with shares of the selected total: at most
 * --limit rows, and with --min-percent none under it. */
static void print_groups(const struct report *r, const struct analysis_groups *g)
{
	static const char *const kinds[] = { "process", "thread", "container", "module" };
	double min = r->opt->min_percent_set ? r->opt->min_percent : 0;
	uint32_t shown = 0;
	uint64_t hidden = 0;
	char w[32];

	printf("\nby %s (%s; top %" PRIu32 " of %" PRIu32 ")\n", kinds[r->opt->by],
	       r->ns ? "ms" : r->unit, g->nrows < r->opt->limit ? g->nrows : r->opt->limit,
	       g->nrows);
	/* the weight (samples at the requested rate, or ms) beside the
	 * samples recorded (fewer when the budget lowered the duty) */
	printf("  %6s %*s %9s  %s\n", "share", r->wwidth, r->ns ? "ms" : r->unit, "recorded",
	       kinds[r->opt->by]);
	for (uint32_t i = 0; i < g->nrows; i++) {
		const struct analysis_group *row = &g->rows[i];
		double share = percent(row->weight, g->total);

		/* rows come largest first: past the limit or under the floor, all
		 * the rest are too */
		if (shown >= r->opt->limit || share < min) {
			hidden = hidden + row->weight < hidden ? UINT64_MAX : hidden + row->weight;
			continue;
		}
		format_weight(r, row->weight, w, sizeof(w));
		printf("  %5.1f%% %*s %9" PRIu64 "  %s\n", share, r->wwidth, w, row->samples,
		       row->name);
		shown++;
	}
	if (shown < g->nrows) {
		format_weight(r, hidden, w, sizeof(w));
		printf("  %5.1f%% %*s %9s  (%" PRIu32 " more: --limit %" PRIu32 "%s)\n",
		       percent(hidden, g->total), r->wwidth, w, "", g->nrows - shown, r->opt->limit,
		       r->opt->min_percent_set ? ", --min-percent" : "");
	}
}

/* What --svg writes: a flame graph of c's query q, or ready bytes (--diff). */
struct report_svg {
	const struct capture *c;
	const struct analysis_query *q;
	enum analysis_granularity granularity;
	const char *text;
	size_t len;
};

/* --svg: the flame graph, published by file_out (capture/file_io.h). */
static int report_write_svg(const struct report_svg *svg, const struct report_options *o)
{
	const struct capture *c = svg->c;
	const char *cmd = c ? capture__meta(c, "command") : NULL;
	char title[300], msg[600] = "";
	struct file_out out;
	FILE *f = NULL;
	int err;

	err = file_out__open(&out, o->svg, msg, sizeof(msg));
	if (err)
		goto cleanup;
	f = file_out__stream(&out);
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	if (c) {
		snprintf(title, sizeof(title), "Flame graph: %s (%s)", cmd ? cmd : o->path,
			 capture__string(c, c->events[svg->q->event].name));
		err = convert__write_svg(c, svg->q, svg->granularity, title, f);
	} else if (svg->len && fwrite(svg->text, 1, svg->len, f) != svg->len) {
		err = file__stream_error();
	}
	if (!err && (fflush(f) || ferror(f)))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	f = NULL;
	if (!err)
		err = file_out__commit(&out, msg, sizeof(msg));
cleanup:
	if (f)
		fclose(f);
	file_out__abort(&out);
	if (err && msg[0])
		fprintf(stderr, "microscope report: %s\n", msg);
	else if (err)
		fprintf(stderr, "microscope report: %s: %s\n", o->svg, strerror(-err));
	return err;
}

/* As convert -o OUT.svg: frames as recorded unless --granularity says. */
static enum analysis_granularity svg_granularity(const struct report_options *o)
{
	return o->granularity_set ? o->granularity : ANALYSIS_GRANULARITY_FRAME;
}

/* report --diff: the table, and with --svg the differential flame graph
 * (as convert --diff BASE NEW -o OUT.svg).  Returns the exit status. */
static int report_diff(struct cli_diff_options *d, const struct report_options *o)
{
	struct report_svg svg = { 0 };
	char *text = NULL;
	int status;

	status = cli_diff__report(d);
	if (status || !o->svg)
		return status;
	d->keys.granularity = svg_granularity(o);
	status = cli_diff__svg(d, &text, &svg.len);
	if (!status) {
		svg.text = text;
		status = report_write_svg(&svg, o) ? 1 : 0;
	}
	free(text);
	return status;
}

/* --timeline: lanes over the query's window (the whole recording by default). */
static int report_print_timeline(const struct report *r, const struct analysis_names *names,
				 const struct analysis_query *q)
{
	const struct capture *c = r->c;
	struct report_timeline t = {
		.names = names,
		.query = q,
		.origin_ns = r->start_ns,
		.start_ns = q->start_ns ? q->start_ns : r->start_ns,
		.buckets = r->opt->timeline,
		.max_lanes = r->opt->limit,
	};
	uint64_t last = 0;
	uint32_t i;

	for (i = 0; i < c->nsamples; i++)
		if (c->samples[i].time_ns > last)
			last = c->samples[i].time_ns;
	for (i = 0; i < c->nintervals; i++)
		if (c->intervals[i].end_ns > last)
			last = c->intervals[i].end_ns;
	t.end_ns = q->end_ns ? q->end_ns : last + 1;
	/* a window past the last sample or interval holds none */
	if (t.end_ns <= t.start_ns || last < t.start_ns) {
		printf("\ntimeline: no samples in the window\n");
		return 0;
	}
	return report_timeline__print(&t);
}

/* --focus/--ignore/--hide and --since/--until into q; message on failure. */
static int report_filters(const struct report_options *o, const struct capture *view,
			  struct analysis_query *q, struct analysis_filter **filter)
{
	uint64_t start = analysis__start_ns(view);
	char err[256];
	int rc;

	if (o->since_set)
		q->start_ns = start + o->since_ns;
	if (o->until_set)
		q->end_ns = start + o->until_ns;
	if (!o->filter.focus && !o->filter.ignore && !o->filter.hide)
		return 0;
	rc = analysis_filter__new(view, &o->filter, filter, err, sizeof(err));
	if (rc == -EINVAL)
		fprintf(stderr, "microscope report: %s\n", err);
	else if (rc)
		fprintf(stderr, "microscope report: %s: out of memory\n", o->path);
	q->filter = *filter;
	return rc;
}

static int report_run(int argc, char **argv);

/*
 * report prints names any process chose (comm via prctl, symbols, paths):
 * everything it writes goes through capture/text.h's terminal filter, so
 * an ESC or an invalid byte in a name is shown as "\x1b", never sent to
 * the terminal.
 */
int cmd_report(int argc, char **argv)
{
	FILE *out = stdout, *err = stderr, *safe_out, *safe_err;
	int status, werr;

	fflush(out);
	fflush(err);
	safe_out = text__terminal_stream(out);
	safe_err = text__terminal_stream(err);
	if (!safe_out || !safe_err) {
		if (safe_out)
			fclose(safe_out);
		if (safe_err)
			fclose(safe_err);
		fprintf(stderr, "microscope report: out of memory\n");
		return 1;
	}
	setvbuf(safe_err, NULL, _IOLBF, BUFSIZ);
	stdout = safe_out; /* glibc: the standard streams are assignable variables */
	stderr = safe_err;
	status = report_run(argc, argv);
	stdout = out;
	stderr = err;
	/* The report is written when safe_out and stdout are flushed: a full
	 * disk or /dev/full shows here for a short one. */
	werr = fclose(safe_out) ? file__stream_error() : 0;
	if (!werr && (fflush(out) || ferror(out)))
		werr = file__stream_error();
	if (werr && !status) {
		fprintf(stderr, "microscope report: writing the report to stdout: %s\n",
			strerror(-werr));
		status = 1;
	}
	fclose(safe_err);
	return status;
}

static int report_run(int argc, char **argv)
{
	struct report_options opt = { 0 };
	struct analysis_summary sum = { 0 };
	struct analysis_names *names = NULL, *flat_names = NULL;
	struct analysis_key_options keys;
	struct analysis_tree *tree = NULL, *flat_tree = NULL;
	struct analysis_flat *flat = NULL;
	struct capture *c = NULL;
	struct analysis_look *look = NULL;
	struct analysis_scope *scope = NULL;
	struct analysis_groups groups = { 0 };
	struct analysis_filter *filter = NULL;
	const struct capture *view;
	struct analysis_query q;
	struct report r = { .opt = &opt };
	uint32_t event;
	char err[512] = "", wbuf[32];
	bool oom = false;
	int status, rc;

	status = report_options__parse(argc, argv, &opt);
	if (status >= 0)
		return status;
	status = 1;
	if (opt.diff_base) {
		struct cli_diff_options d = {
			.cmd = "report",
			.base = opt.diff_base,
			.new_ = opt.path,
			.event = opt.event,
			.sort = opt.sort,
			.limit = opt.limit,
			.min_percent = opt.min_percent_set ? opt.min_percent : 0,
			.look = opt.look,
			.keys = { .granularity = opt.granularity,
				  .fold_inline = opt.inline_mode != REPORT_INLINE_SHOW },
			.filter_spec = &opt.filter,
			/* --since/--until narrow NEW, --base-since/--base-until BASE */
			.new_window = { .range = { opt.since_real_ns, opt.until_real_ns },
					.start_ns = opt.since_ns,
					.end_ns = opt.until_ns,
					.start_set = opt.since_set,
					.end_set = opt.until_set },
			.base_window = opt.base_window,
		};

		return report_diff(&d, &opt);
	}

	rc = cli_input__open_range("report", opt.path,
				   (struct cli_input_range){ opt.since_real_ns, opt.until_real_ns }, &c,
				   err, sizeof(err));
	if (rc == -ERANGE) {
		/* a window holding no data: a report that selects nothing (README,
		 * "Exit status": 0, said on stderr) */
		printf("microscope report: %s\n  no samples: the time range holds no segment\n",
		       opt.path);
		fprintf(stderr, "microscope report: %s\n", err);
		status = 0;
		goto cleanup;
	}
	if (rc) {
		if (err[0])
			fprintf(stderr, "microscope report: %s\n", err);
		else
			fprintf(stderr, "microscope report: %s: %s\n", opt.path, strerror(-rc));
		if (rc == -EDOM) /* a range for a file */
			status = 2;
		if (rc == -ENOENT && !strcmp(opt.path, CLI_DEFAULT_CAPTURE))
			fprintf(stderr, "microscope report: no %s here: record "
					"one with `microscope record -- COMMAND`, or name a capture\n",
				CLI_DEFAULT_CAPTURE);
		goto cleanup;
	}
	/* No sample taken: still the header that says why (no_event.h). */
	rc = capture__ensure_event(&c, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "microscope report: %s: %s\n", opt.path, err);
		goto cleanup;
	}
	if (opt.wall) {
		status = report_wall(&opt, c);
		goto cleanup;
	}
	if (opt.zones) {
		status = report_zones(&opt, c);
		goto cleanup;
	}
	if (opt.off_cpu && analysis__find_event(c, "off-cpu", &event)) {
		/* A view of data the capture does not hold selects nothing: status
		 * 0 and a line saying so, as --zones without probes and --wall
		 * without off-CPU (README, "Exit status"). */
		printf("microscope report: %s (off-CPU)\n\nno off-CPU intervals: the capture "
		       "was recorded without --off-cpu\n",
		       opt.path);
		fprintf(stderr,
			"microscope report: %s: no off-CPU intervals (record with --off-cpu)\n",
			opt.path);
		status = 0;
		goto cleanup;
	}
	if (opt.off_cpu) {
		/* event set above */
	} else if (opt.event) {
		if (cli_input__find_event("report", opt.path, c, opt.event, &event)) {
			status = 2; /* an --event the input has not: an argument error */
			goto cleanup;
		}
	} else {
		event = analysis__default_event(c);
		if (event == CAPTURE_NONE) {
			printf("microscope report: %s\n  no events, no samples\n", opt.path);
			status = 0;
			goto cleanup;
		}
		/* No CPU samples, only off-CPU intervals: show the event that has data. */
		if (!c->nsamples && c->nintervals && !analysis__find_event(c, "off-cpu", &event)) {
			fprintf(stderr, "microscope report: note: %s: no CPU samples; showing the "
				"off-CPU intervals (as --off-cpu)\n", opt.path);
			opt.off_cpu = true;
		}
	}

	analysis_query__init(&q, event);
	q.per_thread = opt.threads;
	view = c;
	if (opt.look != ANALYSIS_LOOK_LOGICAL) {
		oom = true;
		if (analysis_look__new(c, opt.look, &look))
			goto cleanup;
		oom = false;
		view = analysis_look__capture(look);
	}
	oom = true;
	if (scope_options__view(&opt.scope, view, opt.threads, &scope))
		goto cleanup;
	oom = false;
	if (scope)
		view = analysis_scope__capture(scope);
	if (report_filters(&opt, view, &q, &filter))
		goto cleanup;
	/* The query is valid (event from the capture), so failures are ENOMEM. */
	oom = true;
	keys.granularity = opt.granularity;
	keys.fold_inline = opt.inline_mode == REPORT_INLINE_FOLD;
	names = analysis_names__new_opts(view, &keys);
	if (!names)
		goto cleanup;
	if (analysis_summary__init(&sum, names, &q))
		goto cleanup;
	tree = analysis_tree__new(names, &q);
	if (!tree)
		goto cleanup;
	if (opt.inline_mode == REPORT_INLINE_DEFAULT) {
		/* The table folds inlined calls into their function, as perf's does. */
		keys.fold_inline = true;
		flat_names = analysis_names__new_opts(view, &keys);
		flat_tree = flat_names ? analysis_tree__new(flat_names, &q) : NULL;
		if (!flat_tree)
			goto cleanup;
	}
	flat = analysis_flat__new(flat_tree ? flat_tree : tree, opt.sort);
	if (!flat)
		goto cleanup;

	r.c = view;
	r.names = names;
	r.start_ns = analysis__start_ns(view);
	r.query = &q;
	r.unit = capture__string(c, c->events[event].unit);
	r.ns = !strcmp(r.unit, "nanoseconds");
	r.total = tree->nodes[0].total;
	format_weight(&r, r.total, wbuf, sizeof(wbuf));
	r.wwidth = (int)strlen(wbuf) > 5 ? (int)strlen(wbuf) : 5;

	/* --off-cpu weighs intervals: the CPU samples are not its selection. */
	if (!opt.off_cpu && !sum.samples && c->nsamples)
		fprintf(stderr,
			"microscope report: none of the capture's %" PRIu32 " samples is selected: "
			"check --event, the scope (--pid, --tid, --comm, --module, --container, "
			"--cgroup), --since/--until and "
			"--focus/--ignore options\n",
			c->nsamples);
	if (opt.off_cpu && !r.total && c->nintervals)
		fprintf(stderr,
			"microscope report: none of the capture's %" PRIu32 " off-CPU intervals "
			"is selected: check the scope (--pid, --tid, --comm, --module, "
			"--container, --cgroup), --since/--until and --focus/--ignore options\n",
			c->nintervals);
	if (opt.off_cpu) {
		if (print_offcpu_summary(&r) || print_offcpu_tables(&r))
			goto cleanup;
	} else {
		print_summary(&r, &sum, event);
		print_offcpu_note(&r);
	}
	if (opt.by_set) {
		if (analysis_groups__init(&groups, view, &q, opt.by))
			goto cleanup;
		print_groups(&r, &groups);
		oom = false;
		goto flush;
	}
	if (opt.timeline && report_print_timeline(&r, flat_names ? flat_names : names, &q))
		goto cleanup;
	if (print_tree(&r, tree))
		goto cleanup;
	oom = false;
	print_flat(&r, flat);
	if (opt.off_cpu && print_offcpu_intervals(&r)) {
		oom = true;
		goto cleanup;
	}
flush:
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "microscope report: writing the report: %s\n", strerror(errno));
		goto cleanup;
	}
	if (opt.svg && report_write_svg(&(struct report_svg){ .c = view,
							      .q = &q,
							      .granularity = svg_granularity(&opt) },
					&opt))
		goto cleanup;
	status = 0;
cleanup:
	if (oom)
		fprintf(stderr, "microscope report: %s: out of memory\n", opt.path);
	analysis_flat__free(flat);
	analysis_tree__free(flat_tree);
	analysis_tree__free(tree);
	analysis_summary__release(&sum);
	analysis_names__free(flat_names);
	analysis_names__free(names);
	analysis_filter__free(filter);
	analysis_groups__release(&groups);
	analysis_scope__free(scope);
	analysis_look__free(look);
	scope_options__release(&opt.scope);
	capture__free(c);
	return status;
}
