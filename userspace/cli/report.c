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
#include <unistd.h>

#include "analysis/analysis.h"
#include "analysis/budget.h"
#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/text.h"
#include "commands.h"

#define REPORT_DEFAULT_LIMIT	   20
#define REPORT_DEFAULT_MIN_PERCENT 0.5
#define REPORT_INDENT_MAX	   32 /* deeper tree levels stop indenting and print "[+N]" */

static const char report_usage[] =
	"usage: microscope report FILE [--sort self|total] [--limit N] [--threads]\n"
	"                         [--min-percent P] [--event NAME] [--off-cpu | --wall]\n"
	"                         [--svg OUT] [--look logical|native|python]\n"
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
	"  --off-cpu           off-CPU time instead of CPU samples (record --off-cpu):\n"
	"                      totals by state and cause, the call tree and functions\n"
	"                      weighted by off-CPU ms, the longest intervals with their\n"
	"                      waker, and the intervals cut by the recording's edges,\n"
	"                      listed apart and never added to the totals\n"
	"  --wall              per thread: on-CPU time estimated from samples (samples x\n"
	"                      sample period) beside measured off-CPU time\n"
	"  --svg OUT           also write the flame graph SVG of the same samples to OUT\n"
	"                      (as 'microscope convert FILE -o OUT.svg')\n"
	"  --look LOOK         how stacks with Python frames are seen: logical (default;\n"
	"                      Python frames spliced into native stacks), native\n"
	"                      (Python frames dropped) or python (from the outermost\n"
	"                      Python frame in, interpreter frames hidden)\n"
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
	bool off_cpu; /* --off-cpu */
	bool wall;    /* --wall */
	const char *svg; /* --svg OUT, or NULL */
	enum analysis_look_kind look;
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

/* The budget line: whether record --budget lowered the sampling duty, by how
 * much, and the cost the recorder measured. */
static void print_budget(const struct capture *c)
{
	struct analysis_budget b;

	if (analysis_budget__init(&b, c) || !b.present)
		return;
	printf("  budget     %g%% of one CPU: ", b.pct);
	if (b.peak_factor > 1)
		printf("duty lowered %u time%s, to 1/%u of the requested rate at most (1/%u at "
		       "the end); %" PRIu64 " samples stand for %" PRIu64 "\n",
		       b.lowered, b.lowered == 1 ? "" : "s", b.peak_factor, b.final_factor,
		       b.samples, b.weight);
	else
		printf("duty never lowered\n");
	/* The whole-run average includes start-up at the full rate (BPF load, first
	 * symbolization): the steady figure is what the controller held. */
	if (b.steady_observed_ns) {
		char d[32];

		format_duration(b.steady_observed_ns, d, sizeof(d));
		printf("  own cost   %.2f%% of one CPU held in steady state (the last %s, after "
		       "start-up%s; recorder %.2f%%, BPF %.2f%%, perf estimate %.2f%%)\n",
		       100.0 * (double)(b.steady_recorder_cpu_ns + b.steady_bpf_run_ns +
					b.steady_perf_estimate_ns) /
			       (double)b.steady_observed_ns,
		       d, b.changes ? " and the last duty change" : "",
		       100.0 * (double)b.steady_recorder_cpu_ns / (double)b.steady_observed_ns,
		       100.0 * (double)b.steady_bpf_run_ns / (double)b.steady_observed_ns,
		       100.0 * (double)b.steady_perf_estimate_ns / (double)b.steady_observed_ns);
	}
	if (b.observed_ns)
		printf("  %s %.2f%% of one CPU averaged over the whole recording, start-up at the "
		       "full rate included%s (recorder %.2f%%, BPF %.2f%%, perf estimate %.2f%%)\n",
		       b.steady_observed_ns ? "          " : "own cost  ",
		       100.0 * (double)(b.recorder_cpu_ns + b.bpf_run_ns + b.perf_estimate_ns) /
			       (double)b.observed_ns,
		       b.steady_observed_ns ? "" : "; no steady-state figure: the recording "
						   "ended within start-up or a duty change",
		       100.0 * (double)b.recorder_cpu_ns / (double)b.observed_ns,
		       100.0 * (double)b.bpf_run_ns / (double)b.observed_ns,
		       100.0 * (double)b.perf_estimate_ns / (double)b.observed_ns);
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
	/* An import (folded, pprof) has no threads and no recording. */
	const char *src = capture__meta(c, "source.format");
	bool threadless = true;

	for (i = 0; i < c->nsamples && threadless; i++)
		threadless = c->samples[i].thread == CAPTURE_NONE;
	if (src && threadless)
		printf(" from a %s import (no threads)\n", src);
	else
		printf(" from %" PRIu32 " thread%s\n", s->threads, s->threads == 1 ? "" : "s");
	format_duration(s->duration_ns, buf, sizeof(buf));
	if (src && s->duration_from_meta)
		printf("  duration   %s (the %s profile's duration%s)\n", buf, src,
		       !strcmp(src, "pprof") ? "_nanos" : "");
	else if (src && threadless && !s->duration_ns)
		printf("  duration   none (an imported %s profile has no sample times)\n", src);
	else
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
	print_budget(c);
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
		       s->truncated == 1 ? "" : "s", percent(s->truncated, s->weight));
		for (i = 0; i < s->ntruncations; i++)
			printf("%s %s %" PRIu64, i ? "," : "", key_name(r, s->truncations[i].id),
			       s->truncations[i].value);
		printf("\n");
	}
	if (s->empty_stacks)
		printf("  no stack   %" PRIu64 " sample%s (%.1f%%)\n", s->empty_stacks,
		       s->empty_stacks == 1 ? "" : "s", percent(s->empty_stacks, s->weight));
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

/* ---- off-CPU and wall views ------------------------------------------------ */

static uint64_t counter_or_zero(const struct capture *c, const char *name)
{
	return capture__counter(c, name);
}

/* One line under the CPU summary when the capture also has intervals. */
static void print_offcpu_note(const struct report *r)
{
	if (!r->c->nintervals)
		return;
	printf("  off-cpu    %" PRIu32 " interval%s recorded; see --off-cpu and --wall\n",
	       r->c->nintervals, r->c->nintervals == 1 ? "" : "s");
}

static const char *thread_comm(const struct capture *c, uint32_t thread)
{
	const char *s = capture__string(c, c->threads[thread].comm);

	return *s ? s : "[unknown]";
}

static int print_offcpu_summary(const struct report *r)
{
	const struct capture *c = r->c;
	struct analysis_offcpu o;
	const char *cmd = capture__meta(c, "command"), *min = capture__meta(c, "off_cpu_min_ns");
	char buf[64];
	uint32_t i;
	bool first;

	if (analysis_offcpu__init(&o, c, CAPTURE_NONE))
		return -ENOMEM;
	printf("microscope report: %s (off-CPU)\n", r->opt->path);
	if (cmd)
		printf("  command    %s\n", cmd);
	printf("  event      off-cpu (unit nanoseconds, shown as ms)\n");
	format_duration(o.complete_ns, buf, sizeof(buf));
	printf("  complete   %" PRIu32 " interval%s, %s off-CPU\n", o.ncomplete,
	       o.ncomplete == 1 ? "" : "s", buf);
	format_duration(o.incomplete_ns, buf, sizeof(buf));
	printf("  incomplete %" PRIu32 " interval%s cut by the recording's start or stop, %s "
	       "inside it (listed apart, not in any total)\n",
	       o.nincomplete, o.nincomplete == 1 ? "" : "s", buf);
	if (counter_or_zero(c, "offcpu.missed_switch_in"))
		printf("  unseen in  %" PRIu64 " switch-in%s the kernel did not report "
		       "(offcpu.missed_switch_in): kept among the incomplete, end unknown\n",
		       counter_or_zero(c, "offcpu.missed_switch_in"),
		       counter_or_zero(c, "offcpu.missed_switch_in") == 1 ? "" : "s");
	if (min) {
		format_duration(counter_or_zero(c, "offcpu.filtered_ns"), buf, sizeof(buf));
		printf("  threshold  --off-cpu-min %.0f us: %" PRIu64
		       " shorter intervals (%s) counted, not kept\n",
		       strtod(min, NULL) / 1e3, counter_or_zero(c, "offcpu.filtered"), buf);
	}
	printf("  lost       %" PRIu64 " (offcpu.ringbuf_full %" PRIu64 ", offcpu.map_full %" PRIu64
	       ")\n",
	       counter_or_zero(c, "offcpu.ringbuf_full") + counter_or_zero(c, "offcpu.map_full"),
	       counter_or_zero(c, "offcpu.ringbuf_full"), counter_or_zero(c, "offcpu.map_full"));
	printf("  by state  ");
	for (i = 0, first = true; i < CAPTURE_OFFCPU_STATE_COUNT; i++) {
		if (!o.state_count[i])
			continue;
		printf("%s %s %.1f ms (%" PRIu32 ")", first ? "" : ",", analysis__offcpu_state_name(i),
		       o.state_ns[i] / 1e6, o.state_count[i]);
		first = false;
	}
	printf("%s\n  by cause  ", first ? " -" : "");
	for (i = 0, first = true; i < CAPTURE_OFFCPU_CAUSE_COUNT; i++) {
		if (!o.cause_count[i])
			continue;
		printf("%s %s %.1f ms (%" PRIu32 ")", first ? "" : ",",
		       i == CAPTURE_OFFCPU_CAUSE_NONE ? "no wakeup" : analysis__offcpu_cause_name(i),
		       o.cause_ns[i] / 1e6, o.cause_count[i]);
		first = false;
	}
	printf("%s\n", first ? " -" : "");
	analysis_offcpu__release(&o);
	return 0;
}

static void print_interval(const struct report *r, uint32_t id, char *path, size_t size)
{
	const struct capture *c = r->c;
	const struct capture_interval *v = &c->intervals[id];

	printf("  interval tid=%" PRIu32 " comm=%s start_ns=%" PRIu64 " end_ns=%" PRIu64
	       " ns=%" PRIu64 " start=%s end=%s state=%s cause=%s waker_tid=",
	       c->threads[v->thread].tid, thread_comm(c, v->thread), v->start_ns, v->end_ns,
	       v->weight, v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN ? "unknown" : "known",
	       v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN ? "unknown" : "known",
	       analysis__offcpu_state_name(v->state), analysis__offcpu_cause_name(v->cause));
	if (v->waker_thread != CAPTURE_NONE)
		printf("%" PRIu32 " waker_comm=%s\n", c->threads[v->waker_thread].tid,
		       thread_comm(c, v->waker_thread));
	else
		printf("-\n");
	analysis__stack_path(r->names, v->stack, path, size);
	printf("    stack  %s\n", *path ? path : "[empty stack]");
	if (v->waker_stack != CAPTURE_NONE) {
		analysis__stack_path(r->names, v->waker_stack, path, size);
		printf("    waker  %s\n", path);
	}
}

static int print_offcpu_intervals(const struct report *r)
{
	struct analysis_offcpu o;
	size_t size = 1 << 16;
	char *path = malloc(size);
	uint32_t i, n;

	if (!path || analysis_offcpu__init(&o, r->c, CAPTURE_NONE)) {
		free(path);
		return -ENOMEM;
	}
	n = o.ncomplete < r->opt->limit ? o.ncomplete : r->opt->limit;
	printf("\ncomplete intervals (longest first; top %" PRIu32 " of %" PRIu32 ")\n", n,
	       o.ncomplete);
	for (i = 0; i < n; i++)
		print_interval(r, o.complete[i], path, size);
	printf("\nincomplete intervals (start or end outside the recording: bounds are the "
	       "recording's edges; %" PRIu32 ")\n",
	       o.nincomplete);
	for (i = 0; i < o.nincomplete; i++)
		print_interval(r, o.incomplete[i], path, size);
	analysis_offcpu__release(&o);
	free(path);
	return 0;
}

static int report_wall(const struct report_options *opt, const struct capture *c)
{
	struct analysis_wall w;
	char pbuf[32];
	uint32_t i;

	if (analysis_wall__init(&w, c)) {
		fprintf(stderr, "microscope report: %s: out of memory\n", opt->path);
		return 1;
	}
	printf("microscope report: %s (wall view)\n", opt->path);
	if (capture__meta(c, "command"))
		printf("  command    %s\n", capture__meta(c, "command"));
	if (w.period_known)
		snprintf(pbuf, sizeof(pbuf), "%.3f ms", w.period_ns / 1e6);
	if (w.cpu_event == CAPTURE_NONE)
		printf("  on-CPU     no CPU samples: on-CPU ms is 0\n");
	else if (w.period_known)
		printf("  on-CPU     estimated: CPU samples x %s per sample (the %s event's period)\n",
		       pbuf, capture__string(c, c->events[w.cpu_event].name));
	else
		printf("  on-CPU     not estimated: the %s event's samples have no known period "
		       "in ns (on-CPU ms is 0)\n",
		       capture__string(c, c->events[w.cpu_event].name));
	if (w.offcpu_event == CAPTURE_NONE)
		printf("  off-CPU    not recorded (record with --off-cpu)\n");
	else
		printf("  off-CPU    measured: complete intervals, by state in runnable..other\n"
		       "             (they add up to off-CPU ms); intervals cut by the recording's "
		       "edges only in the last column\n");
	printf("\n  %-24s %10s %12s %12s %10s %10s %10s %10s %10s %16s\n", "thread", "samples",
	       "on-CPU ms", "off-CPU ms", "runnable", "sleep", "disk", "stopped", "other",
	       "incomplete ms (n)");
	for (i = 0; i < w.nrows; i++) {
		const struct analysis_wall_row *row = &w.rows[i];
		char name[64], inc[32];

		snprintf(name, sizeof(name), "%s-%" PRIu32, thread_comm(c, row->thread),
			 c->threads[row->thread].tid);
		snprintf(inc, sizeof(inc), "%.1f (%" PRIu32 ")", row->incomplete_ns / 1e6,
			 row->incomplete);
		printf("  %-24s %10" PRIu64 " %12.1f %12.1f %10.1f %10.1f %10.1f %10.1f %10.1f "
		       "%16s\n",
		       name, row->samples, row->on_cpu_ns / 1e6, row->off_cpu_ns / 1e6,
		       row->state_ns[CAPTURE_OFFCPU_STATE_RUNNABLE] / 1e6,
		       row->state_ns[CAPTURE_OFFCPU_STATE_SLEEP] / 1e6,
		       row->state_ns[CAPTURE_OFFCPU_STATE_DISK] / 1e6,
		       row->state_ns[CAPTURE_OFFCPU_STATE_STOPPED] / 1e6,
		       row->state_ns[CAPTURE_OFFCPU_STATE_OTHER] / 1e6, inc);
	}
	printf("\n  (runnable + sleep + disk + stopped + other = off-CPU ms: complete intervals "
	       "only, as report --off-cpu;\n   incomplete intervals are only in the last column)\n");
	analysis_wall__release(&w);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "microscope report: writing the report: %s\n", strerror(errno));
		return 1;
	}
	return 0;
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
		{ "off-cpu", no_argument, NULL, 'O' },
		{ "wall", no_argument, NULL, 'W' },
		{ "svg", required_argument, NULL, 'g' },
		{ "look", required_argument, NULL, 'L' },
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
		case 'O':
			o->off_cpu = true;
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
	if (o->off_cpu + o->wall + !!o->event > 1)
		return report_usage_error("choose one of --off-cpu, --wall and --event%s", "");
	return -1; /* go on */
}

/* --svg: the flame graph, published by file_out (capture/file_io.h). */
static int report_write_svg(const struct capture *c, const struct analysis_query *q,
			    const struct report_options *o)
{
	const char *cmd = capture__meta(c, "command");
	char title[300], msg[600] = "";
	struct file_out out;
	FILE *f = NULL;
	int err;

	snprintf(title, sizeof(title), "Flame graph: %s (%s)", cmd ? cmd : o->path,
		 capture__string(c, c->events[q->event].name));
	err = file_out__open(&out, o->svg, msg, sizeof(msg));
	if (err)
		goto cleanup;
	f = file_out__stream(&out);
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	err = convert__write_svg(c, q, title, f);
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
	int status;

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
	if (fclose(safe_out) && !status)
		status = 1;
	fclose(safe_err);
	return status;
}

static int report_run(int argc, char **argv)
{
	struct report_options opt = { 0 };
	struct analysis_summary sum = { 0 };
	struct analysis_names *names = NULL;
	struct analysis_tree *tree = NULL;
	struct analysis_flat *flat = NULL;
	struct capture *c = NULL;
	struct analysis_look *look = NULL;
	const struct capture *view;
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
	if (opt.wall) {
		status = report_wall(&opt, c);
		goto cleanup;
	}
	if (opt.off_cpu && analysis__find_event(c, "off-cpu", &event)) {
		fprintf(stderr,
			"microscope report: %s: no off-CPU intervals (record with --off-cpu)\n",
			opt.path);
		goto cleanup;
	}
	if (opt.off_cpu) {
		/* event set above */
	} else if (opt.event) {
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
		/* No CPU samples, only off-CPU intervals: show the event that has data. */
		if (!c->nsamples && c->nintervals && !analysis__find_event(c, "off-cpu", &event)) {
			fprintf(stderr, "microscope report: note: %s: no CPU samples; showing the "
				"off-CPU intervals (as --off-cpu)\n", opt.path);
			opt.off_cpu = true;
		}
	}

	analysis_query__init(&q, event);
	q.per_thread = opt.threads;
	/* The query is valid (event from the capture), so failures are ENOMEM. */
	oom = true;
	view = c;
	if (opt.look != ANALYSIS_LOOK_LOGICAL) {
		if (analysis_look__new(c, opt.look, &look))
			goto cleanup;
		view = analysis_look__capture(look);
	}
	names = analysis_names__new(view);
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

	r.c = view;
	r.names = names;
	r.unit = capture__string(c, c->events[event].unit);
	r.ns = !strcmp(r.unit, "nanoseconds");
	r.total = tree->nodes[0].total;
	format_weight(&r, r.total, wbuf, sizeof(wbuf));
	r.wwidth = (int)strlen(wbuf) > 5 ? (int)strlen(wbuf) : 5;

	if (opt.off_cpu) {
		if (print_offcpu_summary(&r))
			goto cleanup;
	} else {
		print_summary(&r, &sum, event);
		print_offcpu_note(&r);
	}
	if (print_tree(&r, tree))
		goto cleanup;
	oom = false;
	print_flat(&r, flat);
	if (opt.off_cpu && print_offcpu_intervals(&r)) {
		oom = true;
		goto cleanup;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "microscope report: writing the report: %s\n", strerror(errno));
		goto cleanup;
	}
	if (opt.svg && report_write_svg(c, &q, &opt))
		goto cleanup;
	status = 0;
cleanup:
	if (oom)
		fprintf(stderr, "microscope report: %s: out of memory\n", opt.path);
	analysis_flat__free(flat);
	analysis_tree__free(tree);
	analysis_summary__release(&sum);
	analysis_names__free(names);
	analysis_look__free(look);
	capture__free(c);
	return status;
}
