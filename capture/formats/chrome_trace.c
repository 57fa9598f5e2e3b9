// SPDX-License-Identifier: MIT
/*
 * Chrome trace event JSON exporter, compact: about 100-150 bytes per sample
 * or off-CPU interval whatever the stack depth.
 *
 * Layout (trace_layout): every sample and off-CPU interval of a thread gets
 * a drawn span [start, end) in ns.  An interval keeps its real bounds; a
 * sample starts at its time and lasts its duration (weight x period), cut at
 * the thread's next item, trimmed or dropped where it would overlap an
 * interval (the rest drawn after the interval, trace_resume); a sample
 * that starts within 1/TRACE_JITTER_DIV of the previous sample's length of
 * that one's end (timer jitter, either way) starts at its end, so a run of
 * samples is drawn without slivers or overlaps and every span keeps its
 * length.
 *
 * Two views of the same spans, in integer µs from t0 (one floor for every
 * boundary, so nesting survives the rounding and µs values are exact in a
 * double):
 *
 * - "samples" + "stackFrames", the format's compact form, read by
 *   speedscope: one entry per span at its start ("sf" its leaf: a stack row,
 *   an off-CPU leaf "off-CPU: <state> (woken by ...)", one per distinct
 *   stack and name, or an event marker "[<event>]") and one entry without
 *   "sf" where a span ends before the next starts.  speedscope weighs an
 *   entry by the time to the next one, so each function's total is the sum
 *   of its spans and gaps stay blank.
 *
 * - "traceEvents", read by Perfetto (which skips "samples" and
 *   "stackFrames", json_trace_tokenizer.cc): "M" names, "X" slices per
 *   thread, a frame's slice spanning the consecutive items that have it at
 *   the same depth from the root, across gaps of up to TRACE_BRIDGE_NS (it
 *   was on the stack) and across off-CPU intervals whose stack holds it
 *   (all of them across a preemption in the sampled code, preempted_in);
 *   and per interval one "T" thread-state event (Perfetto's thread_state
 *   table: state code, exact ns bounds, cpu, blocked function).  Slices are
 *   written parents first (trace_walk runs twice: once to learn where each
 *   slice ends, once to write it), at most TRACE_MAX_DEPTH deep.  They are
 *   bounded (capture/limits.h, CAPTURE_LIMIT_EXPORT_K events per row): past
 *   the limit they stop, said in a note; the samples still hold everything.
 *   Probe records (zones, marks; format 1.3) follow as they were written:
 *   a zone begin or end as a nestable async event ("b"/"e", cat "zone",
 *   name the site, id the site and thread), so an end closes the latest
 *   begin of its site on its thread as analysis/zones.c pairs them and
 *   crossing zones of different sites stay apart; a mark as an instant
 *   event ("i", cat "mark", args value).  Only zones paired as
 *   analysis/zones.c pairs them are written: an unmatched begin or end (and
 *   those a thread's dropped records broke, CAPTURE_PROBE_F_AFTER_DROP)
 *   is left out and counted in a note, so a viewer never stretches one to
 *   the end of the trace.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/file_io.h"
#include "capture/formats/chrome_trace.h"
#include "capture/formats/formats.h"
#include "capture/limits.h"
#include "capture/probe_pairs.h"

/* Perfetto's thread-state codes (ui/src/components/sql_utils/thread_state.ts:
 * "R" runnable, "+" preempted, "S" sleeping, "D" uninterruptible, "T"
 * stopped; an unknown one-letter code is shown as it is). */
static const char *const state_codes[CAPTURE_OFFCPU_STATE_COUNT] = {
	[CAPTURE_OFFCPU_STATE_RUNNABLE] = "R+",
	[CAPTURE_OFFCPU_STATE_SLEEP] = "S",
	[CAPTURE_OFFCPU_STATE_DISK] = "D",
	[CAPTURE_OFFCPU_STATE_STOPPED] = "T",
	[CAPTURE_OFFCPU_STATE_OTHER] = "?",
};

static uint64_t trace_us(const struct trace *t, uint64_t ns)
{
	return ns > t->t0 ? (ns - t->t0) / 1000 : 0;
}

static void trace_ids(const struct trace *t, uint32_t thread, uint64_t *pid, uint64_t *tid)
{
	const struct capture *c = t->c;

	*pid = 0;
	*tid = 0;
	if (thread != CAPTURE_NONE) {
		*pid = c->processes[c->threads[thread].process].pid;
		*tid = c->threads[thread].tid;
	}
}

/* The root-first labels of item k into t->path; returns their count. */
static uint32_t trace_path(struct trace *t, size_t k)
{
	const struct capture *c = t->c;
	const struct trace_item *it = &t->items[k];
	const struct capture_interval *v = it->interval ? &c->intervals[it->id] : NULL;
	uint32_t stack = v ? v->stack : c->samples[it->id].stack, n = 0, d, s;

	for (s = stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
		t->path_frames[n++] = c->stacks[s].frame;
	for (d = 0; d < n; d++)
		t->path[d] = t->labels[t->path_frames[n - 1 - d]];
	if (!n)
		t->path[n++] = "[empty stack]";
	if (v)
		t->path[n++] = t->ivnames[it->id];
	else if (c->samples[it->id].event != t->event)
		t->path[n++] = t->markers[c->samples[it->id].event];
	return n;
}

/* ns as µs with up to three decimals ("12", "12.5", "12.345"): exact in a
 * double below 2^53 ns, read back exactly by Perfetto (llround(v * 1000),
 * json_trace_tokenizer.cc CoerceToTs). */
static void put_us(FILE *out, uint64_t ns)
{
	uint64_t frac = ns % 1000;
	int digits = 3;

	fprintf(out, "%" PRIu64, ns / 1000);
	if (!frac)
		return;
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	fprintf(out, ".%0*" PRIu64, digits, frac);
}

/* ",\"args\":{" before the first arg, "," before the others. */
static const char *arg_sep(bool *any)
{
	const char *sep = *any ? "," : ",\"args\":{";

	*any = true;
	return sep;
}

/*
 * An off-CPU interval as a Perfetto thread-state event ("ph":"T",
 * json_trace_parser.cc): name its state code, ts/dur its drawn bounds in
 * exact ns (µs with decimals from t0), args cpu (the CPU it came back on),
 * blocked_function (its innermost user frame; not for a preemption), edge
 * and clamp flags.
 * Other viewers ignore the phase; its stack, waker and state are also its
 * leaf in "stackFrames".
 */
static void trace_state(struct trace *t, const struct trace_item *it, uint64_t pid,
			uint64_t tid)
{
	const struct capture_interval *v = &t->c->intervals[it->id];
	/* a preempted thread blocked nowhere: its frames are the slices */
	uint32_t f = v->state == CAPTURE_OFFCPU_STATE_RUNNABLE ? CAPTURE_NONE
							       : trace__blocking_frame(t->c, v->stack);
	bool any = false;
	FILE *out = t->out;

	fprintf(out, "%s\n{\"ph\":\"T\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":",
		t->first_event ? "" : ",", pid, tid);
	t->first_event = false;
	put_us(out, it->start - t->t0);
	fputs(",\"dur\":", out);
	put_us(out, it->end - it->start);
	fprintf(out, ",\"name\":\"%s\"",
		v->state < CAPTURE_OFFCPU_STATE_COUNT ? state_codes[v->state] : "?");
	if (v->cpu != CAPTURE_NONE)
		fprintf(out, "%s\"cpu\":%" PRIu32, arg_sep(&any), v->cpu);
	if (f != CAPTURE_NONE) {
		fprintf(out, "%s\"blocked_function\":", arg_sep(&any));
		formats__json_string(out, t->labels[f]);
	}
	if (v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN)
		fprintf(out, "%s\"start_unknown\":1", arg_sep(&any));
	if (v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN)
		fprintf(out, "%s\"end_unknown\":1", arg_sep(&any));
	if (it->clamped)
		fprintf(out, "%s\"clamped\":1", arg_sep(&any));
	fputs(any ? "}}" : "}", out);
}

static void trace_close_to(struct trace *t, uint32_t depth, uint64_t ns, bool write)
{
	while (t->nopen > depth) {
		t->nopen--;
		if (!write)
			t->ends[t->open_slice[t->nopen]] = ns;
	}
}

/*
 * One pass over the items opening and closing slices.  The first (write
 * false) records each slice's end in t->ends; the second, taking the same
 * decisions, writes each slice as an "X" event when it opens.
 */
static int trace_walk(struct trace *t, bool write)
{
	uint64_t left = t->budget;
	size_t k;

	t->nopen = 0;
	t->nslices = 0;
	for (k = 0; k < t->nitems; k++) {
		const struct trace_item *it = &t->items[k];
		const struct trace_item *prev = k && t->items[k - 1].thread == it->thread
							? &t->items[k - 1] : NULL;
		/* an interval's leaf is no slice (its "T" event stands for it) */
		uint32_t n = trace_path(t, k) - it->interval, common = 0, d;
		uint64_t pid, tid;

		if (it->interval && it->resumes) {
			/* preempted in the sampled code: its stack is the
			 * sample's, every slice stays open across it */
			if (write) {
				trace_ids(t, it->thread, &pid, &tid);
				trace_state(t, it, pid, tid);
			}
			continue;
		}
		if (prev && (it->start <= prev->end || it->start - prev->end <= TRACE_BRIDGE_NS)) {
			while (common < t->nopen && common < n &&
			       !strcmp(t->open[common], t->path[common]))
				common++;
		}
		trace_close_to(t, common, k ? t->items[k - 1].end : 0, write);
		if (it->interval) {
			/* the frames it shares with the open slices stay open
			 * across it (they were on the stack); it opens none */
			if (write) {
				trace_ids(t, it->thread, &pid, &tid);
				trace_state(t, it, pid, tid);
			}
			continue;
		}
		if (n - common > left) {
			trace_close_to(t, 0, k ? t->items[k - 1].end : 0, write);
			t->cut_item = k;
			return 0;
		}
		left -= n - common;
		trace_ids(t, it->thread, &pid, &tid);
		for (d = common; d < n; d++) {
			size_t idx = t->nslices++;

			if (!write) {
				if (idx == t->slices_cap) {
					size_t cap = t->slices_cap ? 2 * t->slices_cap : 4096;
					uint64_t *ends = realloc(t->ends, cap * sizeof(*ends));

					if (!ends)
						return -ENOMEM;
					t->ends = ends;
					t->slices_cap = cap;
				}
				t->ends[idx] = it->end;
			} else {
				uint64_t ts = trace_us(t, it->start), te = trace_us(t, t->ends[idx]);

				/* a slice under 1 µs is dropped, and so are all it
				 * holds; so is one deeper than Perfetto keeps */
				if (te > ts && d >= TRACE_MAX_DEPTH)
					t->too_deep++;
				else if (te > ts) {
					fprintf(t->out, "%s\n{\"ph\":\"X\",\"pid\":%" PRIu64 ",\"tid\":%"
						PRIu64 ",\"ts\":%" PRIu64 ",\"dur\":%" PRIu64 ",\"name\":",
						t->first_event ? "" : ",", pid, tid, ts, te - ts);
					t->first_event = false;
					formats__json_string(t->out, t->path[d]);
					fputc('}', t->out);
				}
			}
			t->open[t->nopen] = t->path[d];
			t->open_slice[t->nopen++] = idx;
		}
	}
	trace_close_to(t, 0, t->nitems ? t->items[t->nitems - 1].end : 0, write);
	return 0;
}

static void metadata(FILE *out, bool *first, const char *what, uint64_t pid, uint64_t tid,
		     const char *name)
{
	fputs(*first ? "\n" : ",\n", out);
	*first = false;
	fprintf(out, "{\"ph\":\"M\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"name\":\"%s\","
		     "\"args\":{\"name\":",
		pid, tid, what);
	formats__json_string(out, name);
	fputs("}}", out);
}

/* "M" events naming each process and thread that has items. */
static int trace_metadata(struct trace *t)
{
	const struct capture *c = t->c;
	bool *seen_proc = calloc((size_t)c->nprocesses + 1, 1);
	bool *seen_thread = calloc((size_t)c->nthreads + 1, 1);
	char name[300];
	size_t k;

	if (!seen_proc || !seen_thread) {
		free(seen_proc);
		free(seen_thread);
		return -ENOMEM;
	}
	t->first_event = true;
	for (k = 0; k < t->nitems; k++) {
		uint32_t th = t->items[k].thread;

		if (th == CAPTURE_NONE) {
			if (k == 0 || t->items[k - 1].thread != th) {
				metadata(t->out, &t->first_event, "process_name", 0, 0, "[no process]");
				metadata(t->out, &t->first_event, "thread_name", 0, 0, "[no thread]");
			}
			continue;
		}
		if (!seen_proc[c->threads[th].process]) {
			const struct capture_process *pr = &c->processes[c->threads[th].process];
			const char *comm = capture__string(c, pr->comm);

			seen_proc[c->threads[th].process] = true;
			snprintf(name, sizeof(name), "%s (%" PRIu32 ")", comm[0] ? comm : "[unknown]",
				 pr->pid);
			metadata(t->out, &t->first_event, "process_name", pr->pid, pr->pid, name);
		}
		if (!seen_thread[th]) {
			seen_thread[th] = true;
			formats__thread_label(c, th, name, sizeof(name));
			metadata(t->out, &t->first_event, "thread_name",
				 c->processes[c->threads[th].process].pid, c->threads[th].tid, name);
		}
	}
	free(seen_proc);
	free(seen_thread);
	return 0;
}

/*
 * Stack frame ids: stack row s is s + 1; then "[empty stack]", then one
 * leaf per marker sample and one per distinct off-CPU leaf (parent its
 * stack).
 */
static uint64_t sf_empty(const struct trace *t)
{
	return (uint64_t)t->c->nstacks + 1;
}

static uint64_t sf_leaf(const struct trace *t, const struct trace_item *it)
{
	const struct capture *c = t->c;
	uint32_t stack;

	if (it->interval)
		return sf_empty(t) + 1 + c->nsamples + t->ivleaf[it->id];
	if (c->samples[it->id].event != t->event)
		return sf_empty(t) + 1 + it->id;
	stack = c->samples[it->id].stack;
	return stack == CAPTURE_NONE ? sf_empty(t) : (uint64_t)stack + 1;
}

static void sf_entry(FILE *out, bool *first, uint64_t id, const char *name, uint64_t parent)
{
	fprintf(out, "%s\n\"%" PRIu64 "\":{\"name\":", *first ? "" : ",", id);
	*first = false;
	formats__json_string(out, name);
	if (parent)
		fprintf(out, ",\"parent\":%" PRIu64, parent);
	fputc('}', out);
}

/* "stackFrames" (the rows the items use) and "samples" (module comment). */
static int trace_compact(struct trace *t)
{
	const struct capture *c = t->c;
	bool *used = calloc((size_t)c->nstacks + 1, 1), first = true, empty = false;
	FILE *out = t->out;
	size_t k;
	uint32_t s, i;

	if (!used)
		return -ENOMEM;
	fputs("\"stackFrames\":{", out);
	for (k = 0; k < t->nitems; k++) {
		const struct trace_item *it = &t->items[k];
		uint32_t stack = it->interval ? c->intervals[it->id].stack
					      : c->samples[it->id].stack;
		uint64_t parent = stack == CAPTURE_NONE ? sf_empty(t) : (uint64_t)stack + 1;

		if (stack == CAPTURE_NONE)
			empty = true;
		for (s = stack; s != CAPTURE_NONE && !used[s]; s = c->stacks[s].parent)
			used[s] = true;
		if (!it->interval && c->samples[it->id].event != t->event)
			sf_entry(out, &first, sf_leaf(t, it), t->markers[c->samples[it->id].event],
				 parent);
	}
	for (i = 0; i < t->nleaves; i++) {
		const struct trace_leaf *lf = &t->leaves[i];

		sf_entry(out, &first, sf_empty(t) + 1 + c->nsamples + i,
			 t->ivnames[lf->interval],
			 lf->stack == CAPTURE_NONE ? sf_empty(t) : lf->stack + 1ull);
	}
	if (empty)
		sf_entry(out, &first, sf_empty(t), "[empty stack]", 0);
	for (s = 0; s < c->nstacks; s++)
		if (used[s])
			sf_entry(out, &first, (uint64_t)s + 1, t->labels[c->stacks[s].frame],
				 c->stacks[s].parent == CAPTURE_NONE ? 0 : c->stacks[s].parent + 1ull);
	free(used);
	fputs("\n},\"samples\":[", out);
	for (k = 0; k < t->nitems; k++) {
		const struct trace_item *it = &t->items[k];
		const struct trace_item *next = k + 1 < t->nitems && t->items[k + 1].thread ==
							 it->thread ? &t->items[k + 1] : NULL;
		uint64_t pid, tid;

		trace_ids(t, it->thread, &pid, &tid);
		fprintf(out, "%s\n{\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":%" PRIu64
			",\"sf\":%" PRIu64 "}", k ? "," : "", pid, tid, trace_us(t, it->start),
			sf_leaf(t, it));
		/* a gap (or the thread's end): an entry without a stack */
		if (!next || trace_us(t, next->start) > trace_us(t, it->end))
			fprintf(out, ",\n{\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":%" PRIu64 "}",
				pid, tid, trace_us(t, it->end));
	}
	fputs("\n],", out);
	return ferror(out) ? file__stream_error() : 0;
}

static void trace_notes(const struct trace *t, struct formats_note *note)
{
	const struct capture *c = t->c;

	if (!t->timed && c->nsamples)
		formats_note__add(note, "the capture has no sample times: samples laid end to "
				  "end, 1 us per unit of weight");
	else if (t->any_unknown)
		formats_note__add(note, "samples of unknown duration last until the thread's next "
				  "sample");
	if (c->nprobe_records)
		formats_note__add(note, "%" PRIu64 " probe records as zone (async b/e) and mark "
				  "(instant) events", (uint64_t)c->nprobe_records - t->probes_left);
	if (t->probes_left)
		formats_note__add(note, "%" PRIu64 " unmatched zone begins and ends left out (never "
				  "stretched to the trace's end)", t->probes_left);
	if (c->nintervals)
		formats_note__add(note, "%u off-CPU intervals drawn at their bounds (thread-state "
				  "events; waker stacks not carried)", c->nintervals);
	if (t->edge_ivs)
		formats_note__add(note, "%" PRIu64 " intervals cut by the recording's edges drawn "
				  "clamped to them (args start_unknown/end_unknown)", t->edge_ivs);
	if (t->trimmed || t->dropped)
		formats_note__add(note, "%" PRIu64 " samples trimmed and %" PRIu64 " dropped where "
				  "they overlapped off-CPU intervals", t->trimmed, t->dropped);
	if (t->continued)
		formats_note__add(note, "%" PRIu64 " samples cut by an off-CPU interval drawn on "
				  "after it", t->continued);
	if (t->cut_short)
		formats_note__add(note, "%" PRIu64 " samples cut short by their thread's next "
				  "sample or interval", t->cut_short);
	if (t->clamped_ivs)
		formats_note__add(note, "%" PRIu64 " overlapping intervals clamped (args clamped)",
				  t->clamped_ivs);
	if (t->too_deep)
		formats_note__add(note, "%" PRIu64 " slices deeper than %u frames not written "
				  "(Perfetto's limit); their samples are whole in \"samples\"",
				  t->too_deep, TRACE_MAX_DEPTH);
	if (t->cut_item < t->nitems)
		formats_note__add(note, "slices stop at ts %" PRIu64 " us (item %zu of %zu): the "
				  "output limit of %u events per row (capture/limits.h); every "
				  "sample is in \"samples\"/\"stackFrames\"",
				  trace_us(t, t->items[t->cut_item].start), t->cut_item, t->nitems,
				  CAPTURE_LIMIT_EXPORT_K);
}

/*
 * keep[i] = 1 for marks and for the begins and ends that pair
 * (capture/probe_pairs.h).  Returns the zone records left out, or -ENOMEM.
 */
static int64_t trace_pair_probes(const struct capture *c, uint8_t *keep)
{
	struct capture_probe_pairs pp;
	int64_t left = 0;

	if (capture_probe_pairs__init(&pp, c))
		return -ENOMEM;
	for (uint32_t i = 0; i < pp.n; i++) {
		keep[i] = pp.state[i] == CAPTURE_PAIR_MARK || pp.state[i] == CAPTURE_PAIR_ZONE;
		left += !keep[i];
	}
	capture_probe_pairs__release(&pp);
	return left;
}

/* Probe records as async (zones) and instant (marks) events; see the top. */
static void trace_probes(struct trace *t)
{
	const struct capture *c = t->c;
	FILE *out = t->out;

	for (uint32_t i = 0; i < c->nprobe_records; i++) {
		const struct capture_probe_record *r = &c->probe_records[i];
		const struct capture_thread *th = &c->threads[r->thread];

		if (!t->probe_keep[i])
			continue;
		static const char *const ph[] = { [CAPTURE_PROBE_ZONE_BEGIN] = "b",
						  [CAPTURE_PROBE_ZONE_END] = "e",
						  [CAPTURE_PROBE_MARK] = "i" };

		fprintf(out, "%s\n{\"ph\":\"%s\",\"cat\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32,
			t->first_event ? "" : ",", ph[r->kind],
			r->kind == CAPTURE_PROBE_MARK ? "mark" : "zone",
			c->processes[th->process].pid, th->tid);
		t->first_event = false;
		fputs(",\"ts\":", out);
		put_us(out, r->time_ns >= t->t0 ? r->time_ns - t->t0 : 0);
		fputs(",\"name\":", out);
		formats__json_string(out, capture__string(c, c->probe_sites[r->site].name));
		if (r->kind == CAPTURE_PROBE_MARK)
			fprintf(out, ",\"s\":\"t\",\"args\":{\"value\":%" PRIu64 "}}", r->value);
		else
			fprintf(out, ",\"id\":\"%" PRIu32 ".%" PRIu32 "\"}", r->site, r->thread);
	}
}

int chrome_trace__export(const struct capture *c, uint32_t event, FILE *out,
			 struct formats_note *note)
{
	struct trace t = { .c = c, .event = event, .out = out, .cut_item = SIZE_MAX };
	uint32_t i;
	int err;

	err = formats__labels_new(c, &t.labels);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	t.markers = calloc((size_t)c->nevents + 1, sizeof(*t.markers));
	t.ivnames = calloc((size_t)c->nintervals + 1, sizeof(*t.ivnames));
	if (!t.markers || !t.ivnames)
		goto cleanup;
	for (i = 0; i < c->nevents; i++)
		if (i != event && asprintf(&t.markers[i], "[%s]",
					   capture__string(c, c->events[i].name)) < 0) {
			t.markers[i] = NULL;
			goto cleanup;
		}
	err = trace__layout(&t);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	t.probe_keep = calloc((size_t)c->nprobe_records + 1, 1);
	if (!t.probe_keep)
		goto cleanup;
	{
		int64_t left = trace_pair_probes(c, t.probe_keep);

		if (left < 0)
			goto cleanup;
		t.probes_left = (uint64_t)left;
	}
	t.path = calloc(t.maxdepth, sizeof(*t.path));
	t.path_frames = calloc(t.maxdepth, sizeof(*t.path_frames));
	t.open = calloc(t.maxdepth, sizeof(*t.open));
	t.open_slice = calloc(t.maxdepth, sizeof(*t.open_slice));
	if (!t.path || !t.path_frames || !t.open || !t.open_slice)
		goto cleanup;
	t.budget = ((uint64_t)c->nsamples + c->nintervals + c->nstacks) * CAPTURE_LIMIT_EXPORT_K +
		   CAPTURE_LIMIT_EXPORT_SLACK;

	err = trace_walk(&t, false);
	if (err)
		goto cleanup;
	fputs("{\"traceEvents\":[", out);
	err = trace_metadata(&t);
	if (err)
		goto cleanup;
	t.cut_item = SIZE_MAX;
	err = trace_walk(&t, true);
	if (err)
		goto cleanup;
	trace_probes(&t);
	fputs("\n],", out);
	err = trace_compact(&t);
	if (err)
		goto cleanup;
	fprintf(out, "\"otherData\":{\"exporter\":\"microscope\","
		     "\"t0_ns\":%" PRIu64 "}}\n", t.t0);
	trace_notes(&t, note);
	err = ferror(out) ? file__stream_error() : 0;
cleanup:
	formats__labels_free(t.labels, c->nframes);
	if (t.markers)
		for (i = 0; i < c->nevents; i++)
			free(t.markers[i]);
	free(t.markers);
	if (t.ivnames)
		for (i = 0; i < c->nintervals; i++)
			free(t.ivnames[i]);
	free(t.ivnames);
	free(t.ivleaf);
	free(t.leaves);
	free(t.items);
	free(t.path);
	free(t.path_frames);
	free(t.open);
	free(t.open_slice);
	free(t.ends);
	free(t.probe_keep);
	return err;
}
