// SPDX-License-Identifier: MIT
/*
 * report's summary block: command, event, samples, duration, the rate (and
 * how much of a shortfall is the target off-CPU rather than loss), stacks,
 * budget and own cost, lost and problem counters, truncations, symbol
 * notes.  Numbers from analysis_summary and analysis_budget.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/abi/kunwind.h"
#include "analysis/budget.h"
#include "capture/capture.h"
#include "report.h"

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
	/* Over budget, but never judged: the run ended within warm-up (or
	 * before the first interval after it), so "never lowered" is not the
	 * controller's verdict. */
	if (!b.lowered && !b.steady_observed_ns && b.observed_ns &&
	    100.0 * (double)(b.recorder_cpu_ns + b.bpf_run_ns + b.perf_estimate_ns) /
			    (double)b.observed_ns >
		    b.pct) {
		char d[32], w[32];

		format_duration(b.observed_ns, d, sizeof(d));
		if (b.warmup_ns)
			format_duration(b.warmup_ns, w, sizeof(w));
		printf("             exceeded, but the recording ended (after %s of sampling) "
		       "before the budget could act: it judges its cost from the first interval "
		       "after a%s%s warm-up\n",
		       d, b.warmup_ns ? " " : "", b.warmup_ns ? w : "");
	}
	/* Over budget in steady state, but for less time than the controller
	 * waits before lowering (a short --preset production run). */
	if (!b.lowered && b.steady_observed_ns && b.lower_after_ns &&
	    b.steady_observed_ns < b.lower_after_ns &&
	    100.0 * (double)(b.steady_recorder_cpu_ns + b.steady_bpf_run_ns +
			     b.steady_perf_estimate_ns) /
			    (double)b.steady_observed_ns >
		    b.pct) {
		char d[32], w[32];

		format_duration(b.steady_observed_ns, d, sizeof(d));
		format_duration(b.lower_after_ns, w, sizeof(w));
		printf("             exceeded in steady state, but the recording ended (after %s of "
		       "it) before the budget could act: it lowers the duty after %s over the "
		       "budget\n",
		       d, w);
	}
	/* The whole-run average includes start-up at the full rate (BPF load, first
	 * symbolization): the steady figure is what the controller held. */
	if (b.steady_observed_ns) {
		char d[32];

		format_duration(b.steady_observed_ns, d, sizeof(d));
		printf("  own cost   %.2f%% of one CPU held in steady state (%s %s, after "
		       "start-up%s; recorder %.2f%%, BPF %.2f%%, perf estimate %.2f%%)\n",
		       100.0 * (double)(b.steady_recorder_cpu_ns + b.steady_bpf_run_ns +
					b.steady_perf_estimate_ns) /
			       (double)b.steady_observed_ns,
		       b.steady_closed ? "the longest span at one duty," : "the last", d,
		       b.steady_closed ? " before a late duty change"
				       : (b.changes ? " and the last duty change" : ""),
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

/*
 * The rate line, and what a rate under the requested one means: with no
 * sample lost, the target was simply off-CPU the rest of its threads'
 * time; lost samples are named apart, never blended in.
 */
static void print_rate(const struct capture *c, const struct analysis_summary *s,
		       const char *freq)
{
	struct analysis_budget b;
	double req = freq ? strtod(freq, NULL) : 0, on;
	bool lowered = !analysis_budget__init(&b, c) && b.present && b.peak_factor > 1;

	printf("  rate       %.1f samples per thread-second", s->rate_hz);
	if (freq)
		printf(" (requested %s Hz)", freq);
	printf("\n");
	if (req <= 0 || lowered)
		return;
	on = 100.0 * s->rate_hz / req;
	if (on > 100.0)
		on = 100.0;
	printf("             target on-CPU %.0f%% of its threads' time, off-CPU %.0f%% (waiting, "
	       "or runnable behind other work); ",
	       on, 100.0 - on);
	if (s->lost)
		printf("samples lost: %" PRIu64 " (see 'lost'), part of the gap\n", s->lost);
	else
		printf("samples lost: none\n");
}

/* Share of frame-pointer walks cut at their innermost frame above which
 * report says the code has no frame pointers (percent). */
#define REPORT_FP_LESS_WARN_PCT 50.0

/*
 * One line when a --call-graph fp recording ran code without frame pointers:
 * most walks were cut at their innermost frame (processor counter
 * unwind.fp_not_kept_leaf), so most stacks hold one user frame.
 */
static void print_fp_warning(const struct report *r, const struct analysis_summary *s)
{
	const char *cg = capture__meta(r->c, "call_graph");
	uint64_t cut = capture__counter(r->c, "unwind.fp_not_kept_leaf");

	if (!cg || strncmp(cg, "fp", 2) || !s->samples ||
	    percent(cut, s->samples) < REPORT_FP_LESS_WARN_PCT)
		return;
	printf("  warning    %.0f%% of the stacks start in code without frame pointers, where "
	       "--call-graph fp cannot find callers: record with --call-graph auto or dwarf\n",
	       percent(cut < s->samples ? cut : s->samples, s->samples));
}

/*
 * --call-graph dwarf-kernel: how much the kernel unwound (processor
 * counters kunwind.*): samples it unwound whole, the frames on each side,
 * where it stopped, and --verify-unwind's comparison.
 */
static void print_kunwind(const struct report *r)
{
	static const char *const stops[] = {
#define KU_STOP_COUNTER(id, name) "kunwind.stop." name,
		MS_KU_STOPS(KU_STOP_COUNTER)
#undef KU_STOP_COUNTER
	};
	uint64_t done = capture__counter(r->c, "kunwind.done");
	uint64_t resumed = capture__counter(r->c, "kunwind.resumed");
	uint64_t kf = capture__counter(r->c, "kunwind.frames.kernel");
	uint64_t uf = capture__counter(r->c, "kunwind.frames.user");
	const char *sep = "; stops: ";
	uint64_t partial, full;

	if (!done && !resumed)
		return;
	printf("  kunwind    %" PRIu64 " of %" PRIu64 " user stacks unwound whole in the kernel "
	       "(%.1f%%), frames %.1f%% in the kernel",
	       done, done + resumed, percent(done, done + resumed), percent(kf, kf + uf));
	for (size_t i = 1; i < sizeof(stops) / sizeof(stops[0]); i++) {
		uint64_t v = capture__counter(r->c, stops[i]);

		if (v) {
			printf("%s%s %" PRIu64, sep, stops[i] + strlen("kunwind.stop."), v);
			sep = ", ";
		}
	}
	printf("\n");
	partial = capture__counter(r->c, "kunwind.modules_partial");
	full = capture__counter(r->c, "kunwind.modules_full");
	if (partial || full)
		printf("  ku rows    the kernel's row table filled at %" PRIu64 " rows: %" PRIu64
		       " modules loaded as the window of their rows around a sampled address (%" PRIu64
		       " rows left out), %" PRIu64 " not loaded; outside them the kernel stops "
		       "(no_row, no_rows) and userspace unwinds on\n",
		       capture__counter(r->c, "kunwind.rows"), partial,
		       capture__counter(r->c, "kunwind.rows_left_out"), full);
	if (capture__meta(r->c, "verify_unwind"))
		printf("  verified   %" PRIu64 " stacks against the copy path: %" PRIu64
		       " differ\n",
		       capture__counter(r->c, "kunwind.verified"),
		       capture__counter(r->c, "processor.kunwind_mismatch"));
}

/* A continuous recording's segment: what the recorder held as it began
 * (meta recorder.*, record_session.c), so a long run's growth shows. */
static void print_recorder_state(const struct capture *c)
{
	const char *rows = capture__meta(c, "recorder.rows");
	const char *procs = capture__meta(c, "recorder.processes");
	const char *threads = capture__meta(c, "recorder.threads");
	const char *maps = capture__meta(c, "recorder.mappings");
	const char *rss = capture__meta(c, "recorder.rss_kib");
	const char *mods = capture__meta(c, "recorder.modules");
	const char *heap = capture__meta(c, "recorder.heap_kib");

	if (!rows || !procs || !threads || !maps || !rss)
		return;
	printf("  recorder   %s processes, %s threads, %s mappings, %s modules, %s rows held, "
	       "RSS %s KiB, heap %s KiB (as the segment began)\n",
	       procs, threads, maps, mods ? mods : "?", rows, rss, heap ? heap : "?");
}

/* A decimal meta value of c, or 0. */
static uint64_t meta_u64(const struct capture *c, const char *key)
{
	const char *v = capture__meta(c, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

/* A --window snapshot written while processing lagged (record_rolling.h):
 * its end holds no samples because they were not processed yet, not
 * because the target was idle. */
static void print_window_behind(const struct capture *c)
{
	uint64_t behind = meta_u64(c, "window.behind_ns");
	uint64_t len = meta_u64(c, "duration_ns");

	if (behind)
		printf("  behind     the recorder's processing was %.3f s behind the snapshot: the "
		       "window's last %.3f s hold no samples yet (not an idle target)\n",
		       behind / 1e9, (len && len < behind ? len : behind) / 1e9);
}

/* How far the live recorder fell behind its rings (processor.lag_*_ms):
 * shown once it is large enough for a reader to notice the delay. */
/* Samples kept with a shorter stack copy because the sampler's ring, or
 * the recorder's held records, were filling (bpf/abi/records.h
 * MS_SAMPLE_F_COPY_CUT, _SKIPPED): their stacks may end early, under
 * [stack copy exhausted] or [no stack copy]. */
static void print_degraded(const struct capture *c, const struct analysis_summary *s)
{
	uint64_t cut = capture__counter(c, "degraded.copy_cut");
	uint64_t skipped = capture__counter(c, "degraded.copy_skipped");

	if (!cut && !skipped)
		return;
	printf("  degraded   %" PRIu64 " sample%s (%.1f%%) kept with a shorter stack copy while "
	       "the recorder was behind (copy_cut %" PRIu64 ", copy_skipped %" PRIu64 ")",
	       cut + skipped, cut + skipped == 1 ? "" : "s", percent(cut + skipped, s->samples),
	       cut, skipped);
	if (capture__counter(c, "degraded.held_cut"))
		printf("; %" PRIu64 " of them cut by the recorder, its held records past half "
		       "their budget", capture__counter(c, "degraded.held_cut"));
	if (capture__counter(c, "degraded.fp_spliced"))
		printf("; %" PRIu64 " finished from the frame-pointer chain",
		       capture__counter(c, "degraded.fp_spliced"));
	printf("\n");
}

static void print_lag(const struct capture *c)
{
	uint64_t max = capture__counter(c, "processor.lag_max_ms");

	if (max < 1000) /* below a second: a drain round's ordinary lateness */
		return;
	printf("  lag        the recorder fell up to %" PRIu64 " ms behind its rings (mean %" PRIu64
	       " ms a drain round): late processing, counted apart from losses\n",
	       max, capture__counter(c, "processor.lag_mean_ms"));
}


/*
 * The recorder's counters and budget figures are the whole recording's: say
 * so when the samples shown are less of it -- a directory whose counters
 * (written at stop) cover segments that retention deleted or --since/--until
 * left out (segment_dir.c: segments.counters_span_ns, .counters_read_ns),
 * or a selection (--pid and the other scope options, --since/--until,
 * --focus/--ignore) within the capture.
 */
static void print_counter_scope(const struct report *r)
{
	const struct capture *c = r->c;
	uint64_t whole = meta_u64(c, "segments.counters_span_ns");
	uint64_t read = meta_u64(c, "segments.counters_read_ns");
	bool dir = whole && read < whole - whole / 1000; /* under 99.9 % of it */
	const char *seg;
	bool scoped = r->opt->scope.filter.nterms ||
		      (r->query && (r->query->start_ns || r->query->end_ns || r->query->filter));
	char a[32], b[32];

	if (!dir && !scoped)
		return;
	/* a directory whose segments carry their own spans' losses, problems and
	 * budget totals (segment_dir.h, segments.counters) */
	if (dir && !scoped && (seg = capture__meta(c, "segments.counters")) &&
	    !strcmp(seg, "segment"))
		printf("  counters   the lost, problems and budget totals are the segments "
		       "read; the kunwind, lag, own cost in steady state and peak lines are the "
		       "whole recording's");
	else
		printf("  counters   the kunwind, budget, own cost, lost and problems lines are the "
		       "whole recording's");
	if (dir) {
		format_duration(whole, a, sizeof(a));
		format_duration(read, b, sizeof(b));
		printf(" (%s from its start), the samples those of the segments read (%s of it; "
		       "the others deleted by retention or outside --since/--until)",
		       a, b);
	}
	if (scoped)
		printf("%s not only the samples selected (scope options, --since/--until, "
		       "--focus/--ignore)",
		       dir ? ";" : ",");
	printf("\n");
}

/* record --container following a restarted container (counters scope.*,
 * userspace/cli/record_scope.c): the samples between a container's stop
 * and its new cgroup joining are not in the capture. */
static void print_container_follow(const struct capture *c)
{
	uint64_t left = capture__counter(c, "scope.container_left");
	uint64_t rejoined = capture__counter(c, "scope.container_rejoined");

	if (!left && !rejoined)
		return;
	printf("  containers %" PRIu64 " container cgroup%s of --container left the scope "
	       "(stopped or restarted), %" PRIu64 " new one%s rejoined it (a restarted "
	       "container, recorded from when it was seen: within about 1 s)\n",
	       left, left == 1 ? "" : "s", rejoined, rejoined == 1 ? "" : "s");
}

void print_summary(const struct report *r, const struct analysis_summary *s, uint32_t event)
{
	const struct capture *c = r->c;
	const struct capture_event *ev = &c->events[event];
	const char *cmd = capture__meta(c, "command");
	const char *freq = capture__meta(c, "freq_hz");
	uint64_t *per_event = calloc((size_t)c->nevents + 1, sizeof(*per_event));
	char buf[64], wbuf[32], label[256];
	uint32_t i, others = 0;

	/* a directory of recordings at different rates: the event's own
	 * (segment_dir.h, event.N.freq_hz) */
	snprintf(buf, sizeof(buf), "event.%" PRIu32 ".freq_hz", event);
	if (capture__meta(c, buf))
		freq = capture__meta(c, buf);
	printf("microscope report: %s\n", r->opt->path);
	if (cmd)
		printf("  command    %s\n", cmd);
	analysis__event_label(c, event, label, sizeof(label));
	printf("  event      %s (unit %s", label, r->unit);
	if (ev->period)
		printf(", period %" PRIu64, ev->period);
	printf(")\n");
	if (per_event) {
		for (i = 0; i < c->nsamples; i++)
			per_event[c->samples[i].event]++;
		for (i = 0; i < c->nevents; i++) {
			if (i == event || !per_event[i])
				continue;
			analysis__event_label(c, i, label, sizeof(label));
			printf("%s%s (%" PRIu64 " sample%s)", others++ ? ", " : "  other      ", label,
			       per_event[i],
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
	if (r->query && (r->query->start_ns || r->query->end_ns)) {
		/* --since/--until from the start: the window, within the recording */
		uint64_t lo = r->query->start_ns > r->start_ns ? r->query->start_ns : r->start_ns;
		uint64_t end = s->duration_from_meta ? r->start_ns + s->duration_ns : s->last_ns + 1;
		uint64_t hi = r->query->end_ns && r->query->end_ns < end ? r->query->end_ns : end;
		char win[64];

		format_duration(hi > lo ? hi - lo : 0, win, sizeof(win));
		printf("  duration   %s (--since/--until, of %s %s)\n", win, buf,
		       s->duration_from_meta ? "recording" : "from first to last sample");
	} else if (src && s->duration_from_meta)
		printf("  duration   %s (the %s profile's duration%s)\n", buf, src,
		       !strcmp(src, "pprof") ? "_nanos" : "");
	else if (src && threadless && !s->duration_ns)
		printf("  duration   none (an imported %s profile has no sample times)\n", src);
	else
		printf("  duration   %s (%s%s)\n", buf,
		       s->duration_from_meta ? "recording" : "first to last sample",
		       r->opt->since_real_ns || r->opt->until_real_ns != UINT64_MAX
			       ? ", the part --since/--until selected"
			       : "");
	print_recorder_state(c);
	if (s->rate_hz > 0)
		print_rate(c, s, freq);
	if (capture__meta(r->c, "call_graph")) {
		const char *size = capture__meta(r->c, "stack_size");

		const char *ku = capture__meta(r->c, "call_graph.kernel_unwind");
		const char *cg = capture__meta(r->c, "call_graph");

		printf("  stacks     %s", cg);
		if (ku && !strcmp(cg, "auto") && !strcmp(ku, "yes"))
			printf(" (unwound in the kernel)");
		else if (ku && !strcmp(cg, "auto"))
			printf(" (stacks copied: the in-kernel unwinder was refused: %s)", ku);
		const char *preset = capture__meta(r->c, "preset");

		if (size && strcmp(size, "0"))
			printf(", %s-byte user stack copies", size);
		if (preset)
			printf(" (preset %s)", preset);
		printf("\n");
	}
	print_counter_scope(r);
	print_container_follow(c);
	print_kunwind(r);
	if (capture__counter(c, "unwind.fp_step_samples"))
		printf("  fp steps   %" PRIu64 " stack%s stepped by frame pointers through code "
		       "without CFI (JIT code): %" PRIu64 " step%s\n",
		       capture__counter(c, "unwind.fp_step_samples"),
		       capture__counter(c, "unwind.fp_step_samples") == 1 ? "" : "s",
		       capture__counter(c, "unwind.fp_steps"),
		       capture__counter(c, "unwind.fp_steps") == 1 ? "" : "s");
	print_budget(c);
	printf("  lost       %" PRIu64, s->lost);
	if (s->nlost_counters) {
		printf(" (");
		print_counters(r, s->lost_counters, s->nlost_counters);
		printf(")");
	}
	printf("\n");
	print_degraded(c, s);
	print_lag(c);
	print_window_behind(c);
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
	print_fp_warning(r, s);
	if (s->empty_stacks)
		printf("  no stack   %" PRIu64 " sample%s (%.1f%%)\n", s->empty_stacks,
		       s->empty_stacks == 1 ? "" : "s", percent(s->empty_stacks, s->weight));
	print_symbol_notes(r->c);
	if (capture__counter(c, "processor.frame_no_symbol"))
		printf("  no symbol  %" PRIu64 " frame%s in code no symbol covers (a stripped "
		       "binary?): one row per module as \"libfoo.so+?\"; --granularity address "
		       "splits them\n",
		       capture__counter(c, "processor.frame_no_symbol"),
		       capture__counter(c, "processor.frame_no_symbol") == 1 ? "" : "s");
}
