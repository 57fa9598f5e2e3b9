// SPDX-License-Identifier: MIT
/*
 * report --off-cpu and --wall: the off-CPU summary, the tables by blocking
 * function, waker and state, the interval lists (from the recording's
 * start, or key=value absolute ns with --raw-times), and the per-thread
 * wall table.  Numbers from analysis/offcpu*.c; layout only here.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "report.h"

static uint64_t counter_or_zero(const struct capture *c, const char *name)
{
	return capture__counter(c, name);
}

/* One line under the CPU summary when the capture also has intervals. */
void print_offcpu_note(const struct report *r)
{
	if (!r->c->nintervals)
		return;
	printf("  off-cpu    %" PRIu32 " interval%s recorded; see --off-cpu and --wall\n",
	       r->c->nintervals, r->c->nintervals == 1 ? "" : "s");
}

const char *thread_comm(const struct capture *c, uint32_t thread)
{
	const char *s = capture__string(c, c->threads[thread].comm);

	return *s ? s : "[unknown]";
}

int print_offcpu_summary(const struct report *r)
{
	const struct capture *c = r->c;
	struct analysis_offcpu o;
	const char *cmd = capture__meta(c, "command"), *min = capture__meta(c, "off_cpu_min_ns");
	char buf[64];
	uint32_t i;
	bool first;

	if (analysis_offcpu__init_query(&o, c, r->query))
		return -ENOMEM;
	printf("microscope report: %s (off-CPU)\n", r->opt->path);
	if (cmd)
		printf("  command    %s\n", cmd);
	printf("  event      off-cpu (unit nanoseconds, shown as ms)\n");
	format_duration(o.complete_ns, buf, sizeof(buf));
	printf("  complete   %" PRIu32 " interval%s, %s off-CPU\n", o.ncomplete,
	       o.ncomplete == 1 ? "" : "s", buf);
	format_duration(o.incomplete_ns, buf, sizeof(buf));
	printf("  clipped    %" PRIu32 " interval%s cut by the recording's start or stop, %s "
	       "inside it (counted in the tables and trees under [clipped by the recording "
	       "window])\n",
	       o.nincomplete, o.nincomplete == 1 ? "" : "s", buf);
	format_duration(o.complete_ns + o.incomplete_ns, buf, sizeof(buf));
	printf("  total      %s off-CPU inside the recording (complete + clipped)\n", buf);
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
	printf("  by state   (complete intervals)");
	for (i = 0, first = true; i < CAPTURE_OFFCPU_STATE_COUNT; i++) {
		if (!o.state_count[i])
			continue;
		printf("%s %s %.1f ms (%" PRIu32 ")", first ? "" : ",", analysis__offcpu_state_name(i),
		       o.state_ns[i] / 1e6, o.state_count[i]);
		first = false;
	}
	printf("%s\n  by cause   (complete intervals)", first ? " -" : "");
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

/* "+1.2346 s" from the recording's start (analysis__start_ns). */
static void format_offset(uint64_t t, uint64_t start, char *buf, size_t size)
{
	snprintf(buf, size, "%s%.4f s", t >= start ? "+" : "-",
		 (double)(t >= start ? t - start : start - t) / 1e9);
}

/* One interval in human units: when (from the recording's start), how
 * long, whose, why it waited and who woke it. */
static void print_interval_human(const struct report *r, const struct capture_interval *v,
				 uint64_t start)
{
	const struct capture *c = r->c;
	char at[32], len[32];

	format_offset(v->start_ns, start, at, sizeof(at));
	format_duration(v->weight, len, sizeof(len));
	printf("  %-12s %s%-11s %s-%" PRIu32 "  %s", at,
	       v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN ? ">=" : "", len,
	       thread_comm(c, v->thread), c->threads[v->thread].tid,
	       analysis__offcpu_state_name(v->state));
	if (v->waker_thread != CAPTURE_NONE)
		printf(", woken by %s-%" PRIu32, thread_comm(c, v->waker_thread),
		       c->threads[v->waker_thread].tid);
	else if (v->cause != CAPTURE_OFFCPU_CAUSE_NONE)
		printf(", woken from %s", analysis__offcpu_cause_name(v->cause));
	if (v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN)
		printf(" (began before the recording)");
	if (v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN)
		printf(" (still off-CPU at the end)");
	if (v->flags & (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN))
		printf(" [clipped]");
	printf("\n");
}

/* One off-CPU grouping as a table: ms, share, intervals, name. */
static int print_offcpu_table(const struct report *r, enum analysis_offcpu_by by,
			      const char *title)
{
	const struct capture *c = r->c;
	struct analysis_offcpu_table t;
	uint32_t i, n;

	if (analysis_offcpu_table__init(&t, r->names, r->query, by))
		return -ENOMEM;
	n = t.nrows < r->opt->limit ? t.nrows : r->opt->limit;
	printf("\noff-CPU by %s (top %" PRIu32 " of %" PRIu32 ")\n", title, n, t.nrows);
	printf("  %10s  %6s  %9s  %s\n", "ms", "share", "intervals", title);
	for (i = 0; i < n; i++) {
		const struct analysis_offcpu_group *g = &t.rows[i];
		char name[128];

		if (g->id == CAPTURE_NONE)
			snprintf(name, sizeof(name), "%s",
				 by == ANALYSIS_OFFCPU_BY_BLOCKER		 ? "[no frame]"
				 : g->cause == CAPTURE_OFFCPU_CAUSE_HARDIRQ ? "[hard interrupt]"
				 : g->cause == CAPTURE_OFFCPU_CAUSE_SOFTIRQ ? "[softirq]"
									     : "[no waker seen]");
		else if (by == ANALYSIS_OFFCPU_BY_WAKER_THREAD)
			snprintf(name, sizeof(name), "%s-%" PRIu32, thread_comm(c, g->id),
				 c->threads[g->id].tid);
		else if (by == ANALYSIS_OFFCPU_BY_STATE)
			snprintf(name, sizeof(name), "%s", analysis__offcpu_state_name(g->id));
		else
			snprintf(name, sizeof(name), "%s%s", key_name(r, g->id), key_mark(r, g->id));
		printf("  %10.1f  %5.1f%%  %9" PRIu32 "  %s", g->ns / 1e6,
		       percent(g->ns, t.total_ns), g->count, name);
		if (g->clipped_ns)
			printf("  (%.1f ms clipped by the recording window)", g->clipped_ns / 1e6);
		printf("\n");
	}
	analysis_offcpu_table__release(&t);
	return 0;
}

int print_offcpu_tables(const struct report *r)
{
	if (print_offcpu_table(r, ANALYSIS_OFFCPU_BY_BLOCKER, "blocking function") ||
	    print_offcpu_table(r, ANALYSIS_OFFCPU_BY_WAKER_THREAD, "waker thread") ||
	    print_offcpu_table(r, ANALYSIS_OFFCPU_BY_WAKER_FUNCTION, "waker function") ||
	    print_offcpu_table(r, ANALYSIS_OFFCPU_BY_STATE, "state"))
		return -ENOMEM;
	return 0;
}

static void print_interval(const struct report *r, uint32_t id, char *path, size_t size)
{
	const struct capture *c = r->c;
	const struct capture_interval *v = &c->intervals[id];

	if (!r->opt->raw_times) {
		print_interval_human(r, v, r->start_ns);
		goto stacks;
	}
	printf("  interval tid=%" PRIu32 " comm=%s start_ns=%" PRIu64 " end_ns=%" PRIu64
	       " ns=%" PRIu64 " start=%s end=%s clipped=%s state=%s cause=%s waker_tid=",
	       c->threads[v->thread].tid, thread_comm(c, v->thread), v->start_ns, v->end_ns,
	       v->weight, v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN ? "unknown" : "known",
	       v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN ? "unknown" : "known",
	       v->flags & (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)
		       ? "yes" : "no",
	       analysis__offcpu_state_name(v->state), analysis__offcpu_cause_name(v->cause));
	if (v->waker_thread != CAPTURE_NONE)
		printf("%" PRIu32 " waker_comm=%s\n", c->threads[v->waker_thread].tid,
		       thread_comm(c, v->waker_thread));
	else
		printf("-\n");
stacks:
	analysis__stack_path(r->names, v->stack, path, size);
	printf("    stack  %s\n", *path ? path : "[empty stack]");
	if (v->waker_stack != CAPTURE_NONE) {
		analysis__stack_path(r->names, v->waker_stack, path, size);
		printf("    waker  %s\n", path);
	}
}

int print_offcpu_intervals(const struct report *r)
{
	struct analysis_offcpu o;
	size_t size = 1 << 16;
	char *path = malloc(size);
	uint32_t i, n;

	if (!path || analysis_offcpu__init_query(&o, r->c, r->query)) {
		free(path);
		return -ENOMEM;
	}
	n = o.ncomplete < r->opt->limit ? o.ncomplete : r->opt->limit;
	printf("\ncomplete intervals (longest first; top %" PRIu32 " of %" PRIu32 ")\n", n,
	       o.ncomplete);
	if (!r->opt->raw_times)
		printf("  %-12s %-13s %s\n", "from start", "off-CPU", "thread, state, waker "
		       "(--raw-times: absolute ns)");
	for (i = 0; i < n; i++)
		print_interval(r, o.complete[i], path, size);
	printf("\nincomplete intervals (clipped: start or end outside the recording, bounds "
	       "are the recording's edges and off-CPU is the part inside it; %" PRIu32 ")\n",
	       o.nincomplete);
	for (i = 0; i < o.nincomplete; i++)
		print_interval(r, o.incomplete[i], path, size);
	analysis_offcpu__release(&o);
	free(path);
	return 0;
}

/* What the wall table's on-CPU and off-CPU columns stand for in the
 * selection c of the capture whole (whose events say what was recorded). */
static void print_wall_basis(const struct capture *whole, const struct capture *c,
			     const struct analysis_wall *w)
{
	if (!w->nrows && (whole->nsamples || whole->nintervals)) {
		printf("  selection  no thread has samples or off-CPU intervals in it\n");
		return;
	}
	if (w->cpu_event == CAPTURE_NONE)
		printf("  on-CPU     no CPU samples%s: on-CPU ms is 0\n",
		       whole->nsamples ? " in the selection" : "");
	else if (w->period_known)
		printf("  on-CPU     estimated: CPU samples x %.3f ms per sample (the %s event's "
		       "period)\n",
		       w->period_ns / 1e6, capture__string(c, c->events[w->cpu_event].name));
	else
		printf("  on-CPU     not estimated: the %s event's samples have no known period "
		       "in ns (on-CPU ms is 0)\n",
		       capture__string(c, c->events[w->cpu_event].name));
	if (!whole->nintervals)
		printf("  off-CPU    not recorded (record with --off-cpu)\n");
	else if (w->offcpu_event == CAPTURE_NONE)
		printf("  off-CPU    no intervals in the selection\n");
	else
		printf("  off-CPU    measured: complete intervals, by state in runnable..other\n"
		       "             (they add up to off-CPU ms); intervals cut by the recording's "
		       "edges only in the last column\n");
}

/* --wall over the threads the scope keeps and the --since/--until window
 * (samples by time, intervals by start, as the other views select them). */
int report_wall(const struct report_options *opt, const struct capture *capture)
{
	struct analysis_scope *scope = NULL;
	const struct capture *c = capture;
	struct analysis_wall w = { 0 };
	uint64_t start;
	char pbuf[32];
	uint32_t i;
	int status = 1;

	if (scope_options__view(&opt->scope, capture, false, &scope))
		goto oom;
	if (scope)
		c = analysis_scope__capture(scope);
	start = analysis__start_ns(c); /* the other views' origin (report.c) */
	if (analysis_wall__init_window(&w, c, opt->since_set ? start + opt->since_ns : 0,
				       opt->until_set ? start + opt->until_ns : 0))
		goto oom;
	printf("microscope report: %s (wall view)\n", opt->path);
	if (capture__meta(c, "command"))
		printf("  command    %s\n", capture__meta(c, "command"));
	if (opt->since_set || opt->until_set) {
		snprintf(pbuf, sizeof(pbuf), "%.3f s", opt->until_ns / 1e9);
		printf("  window     %.3f s to %s from the recording's start: samples taken and "
		       "intervals begun in it\n",
		       opt->since_set ? opt->since_ns / 1e9 : 0.0, opt->until_set ? pbuf : "its end");
	}
	if (scope)
		printf("  scope      the threads the scope options keep\n");
	if (!w.nrows && (capture->nsamples || capture->nintervals))
		fprintf(stderr, "microscope report: none of the capture's samples and off-CPU "
				"intervals is selected: check the scope (--pid, --tid, --comm, "
				"--container, --cgroup) and --since/--until\n");
	print_wall_basis(capture, c, &w);
	printf("\n  %-24s %10s %12s %12s %10s %10s %10s %10s %10s %16s\n", "thread", "samples",
	       "on-CPU ms", "off-CPU ms", "runnable", "sleep", "disk", "stopped", "other",
	       "incomplete ms (n)");
	for (i = 0; i < w.nrows; i++) {
		const struct analysis_wall_row *row = &w.rows[i];
		char name[64], inc[32];

		snprintf(name, sizeof(name), "%s-%" PRIu32, thread_comm(c, row->thread),
			 c->threads[row->thread].tid);
		if (w.offcpu_event == CAPTURE_NONE) {
			/* no intervals: the thread's off-CPU time is unknown, not 0 */
			printf("  %-24s %10" PRIu64 " %12.1f %12s %10s %10s %10s %10s %10s %16s\n",
			       name, row->samples, row->on_cpu_ns / 1e6, "not recorded", "-", "-",
			       "-", "-", "-", "-");
			continue;
		}
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
	if (w.offcpu_event == CAPTURE_NONE)
		printf("\n  (off-CPU time was not recorded: record with --off-cpu to measure it)\n");
	else
		printf("\n  (runnable + sleep + disk + stopped + other = off-CPU ms: complete "
		       "intervals only, as report --off-cpu;\n   incomplete intervals are only in "
		       "the last column)\n");
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "microscope report: writing the report: %s\n", strerror(errno));
		goto cleanup;
	}
	status = 0;
	goto cleanup;
oom:
	fprintf(stderr, "microscope report: %s: out of memory\n", opt->path);
cleanup:
	analysis_wall__release(&w);
	analysis_scope__free(scope);
	return status;
}

