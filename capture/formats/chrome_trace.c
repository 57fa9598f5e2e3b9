// SPDX-License-Identifier: MIT
/*
 * Chrome trace event JSON exporter.  Per thread, samples in time order
 * become nested B/E slices: the slices a sample shares with the previous
 * one (same labels from the root down) stay open, the rest close and open
 * at the sample's time.  Because every thread's events are written in one
 * time-ordered sequence that only ever closes the innermost open slice,
 * slices nest by construction.
 *
 * Slices are bounded (capture/limits.h, CAPTURE_LIMIT_EXPORT_K events per
 * row): a deep stack alternating with another would otherwise be reopened
 * in full after every sample (a 36 KB capture of a 10k-deep stack made
 * 2 GB).  Every sample is also written in the format's compact form, once
 * each: "stackFrames" (one entry per stack row, named by its frame's label,
 * with its parent) and "samples" (ts, pid, tid, weight and the "sf" of its
 * leaf), so nothing is lost when slices stop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"
#include "capture/limits.h"

struct trace_thread {
	FILE *out;
	uint64_t events_left; /* B/E events the budget still allows */
	uint64_t pid, tid;
	const char **open; /* labels of the open slices, outermost first */
	uint32_t nopen;
	uint64_t t0;
	bool first_event;
};

static void put_ts(FILE *out, uint64_t ns)
{
	fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static void trace_args(struct trace_thread *t, const struct capture *c,
		       const struct capture_interval *v, bool clamped);

/* One B/E event; v (B of an interval's leaf only) adds its fields as args. */
static void trace_event_iv(struct trace_thread *t, char ph, const char *name, uint64_t ns,
			   const struct capture *c, const struct capture_interval *v, bool clamped)
{
	if (t->events_left)
		t->events_left--;
	fputs(t->first_event ? "\n" : ",\n", t->out);
	t->first_event = false;
	fprintf(t->out, "{\"ph\":\"%c\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":", ph,
		t->pid, t->tid);
	put_ts(t->out, ns - t->t0);
	fputs(",\"name\":", t->out);
	formats__json_string(t->out, name);
	if (v)
		trace_args(t, c, v, clamped);
	fputc('}', t->out);
}

static void trace_event(struct trace_thread *t, char ph, const char *name, uint64_t ns)
{
	trace_event_iv(t, ph, name, ns, NULL, NULL, false);
}

static void close_to(struct trace_thread *t, uint32_t depth, uint64_t ns)
{
	while (t->nopen > depth) {
		t->nopen--;
		trace_event(t, 'E', t->open[t->nopen], ns);
	}
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

#define EDGE_FLAGS (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)

static const char *const state_words[CAPTURE_OFFCPU_STATE_COUNT] = {
	[CAPTURE_OFFCPU_STATE_RUNNABLE] = "runnable (preempted)",
	[CAPTURE_OFFCPU_STATE_SLEEP] = "sleep",
	[CAPTURE_OFFCPU_STATE_DISK] = "disk wait (D)",
	[CAPTURE_OFFCPU_STATE_STOPPED] = "stopped (T)",
	[CAPTURE_OFFCPU_STATE_OTHER] = "other",
};

static const char *const cause_words[CAPTURE_OFFCPU_CAUSE_COUNT] = {
	[CAPTURE_OFFCPU_CAUSE_NONE] = "none",
	[CAPTURE_OFFCPU_CAUSE_TASK] = "task",
	[CAPTURE_OFFCPU_CAUSE_HARDIRQ] = "hardirq",
	[CAPTURE_OFFCPU_CAUSE_SOFTIRQ] = "softirq",
	[CAPTURE_OFFCPU_CAUSE_NMI] = "nmi",
};

static const char *state_word(uint32_t state)
{
	return state < CAPTURE_OFFCPU_STATE_COUNT ? state_words[state] : "?";
}

static const char *cause_word(uint32_t cause)
{
	return cause < CAPTURE_OFFCPU_CAUSE_COUNT ? cause_words[cause] : "?";
}

static void trace_args(struct trace_thread *t, const struct capture *c,
		       const struct capture_interval *v, bool clamped)
{
	char waker[300];

	fprintf(t->out, ",\"args\":{\"start_ns\":%" PRIu64 ",\"end_ns\":%" PRIu64
		",\"ns\":%" PRIu64 ",\"state\":\"%s\",\"cause\":\"%s\"",
		v->start_ns, v->end_ns, v->weight, state_word(v->state), cause_word(v->cause));
	if (v->waker_thread != CAPTURE_NONE) {
		formats__thread_label(c, v->waker_thread, waker, sizeof(waker));
		fputs(",\"waker\":", t->out);
		formats__json_string(t->out, waker);
	}
	if (v->cpu != CAPTURE_NONE)
		fprintf(t->out, ",\"cpu\":%" PRIu32, v->cpu);
	if (v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN)
		fputs(",\"start_unknown\":true", t->out);
	if (v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN)
		fputs(",\"end_unknown\":true", t->out);
	if (clamped)
		fputs(",\"clamped\":true", t->out);
	fputc('}', t->out);
}

/* "off-CPU: sleep (woken by comm-tid) [start unknown]": malloc'd or NULL. */
static char *interval_name(const struct capture *c, const struct capture_interval *v)
{
	char by[340] = "", waker[300];
	const char *edge = "";
	char *name;

	if (v->cause == CAPTURE_OFFCPU_CAUSE_TASK && v->waker_thread != CAPTURE_NONE) {
		formats__thread_label(c, v->waker_thread, waker, sizeof(waker));
		snprintf(by, sizeof(by), " (woken by %s)", waker);
	} else if (v->cause == CAPTURE_OFFCPU_CAUSE_TASK) {
		snprintf(by, sizeof(by), " (woken by a task)");
	} else if (v->cause != CAPTURE_OFFCPU_CAUSE_NONE) {
		snprintf(by, sizeof(by), " (woken by %s)", cause_word(v->cause));
	}
	if ((v->flags & EDGE_FLAGS) == EDGE_FLAGS)
		edge = " [start and end unknown]";
	else if (v->flags & CAPTURE_INTERVAL_F_START_UNKNOWN)
		edge = " [start unknown]";
	else if (v->flags & CAPTURE_INTERVAL_F_END_UNKNOWN)
		edge = " [end unknown]";
	if (asprintf(&name, "off-CPU: %s%s%s", state_word(v->state), by, edge) < 0)
		return NULL;
	return name;
}

/* A sample or an interval of one thread, with the span it is drawn over. */
struct trace_item {
	uint64_t key;	 /* sort key: sample time_ns or interval start_ns */
	uint64_t start, end;
	uint32_t thread; /* CAPTURE_NONE sorts last */
	uint32_t id;	 /* sample or interval id */
	bool interval;
	bool clamped;	 /* an interval moved to start after an overlapping one */
};

static int item_cmp(const void *pa, const void *pb)
{
	const struct trace_item *x = pa, *y = pb;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->interval != y->interval)
		return x->interval ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The compact form: "stackFrames" ({"<stack id + 1>": {"name", "parent"}},
 * one per stack row, "category" the module kind) and "samples" (one per
 * sample: ts in us from t0, pid, tid, cpu, weight, event name, "sf" the
 * leaf's stack id + 1; an empty stack has no "sf").  Output O(rows).
 */
static int trace_compact(const struct capture *c, uint32_t event, FILE *out,
			 const struct trace_thread *t, char **labels, char **markers)
{
	uint32_t i;

	fputs("\"stackFrames\":{", out);
	for (i = 0; i < c->nstacks; i++) {
		const struct capture_stack *st = &c->stacks[i];

		fprintf(out, "%s\n\"%" PRIu32 "\":{\"category\":\"%s\",\"name\":", i ? "," : "",
			i + 1,
			c->frames[st->frame].flags & CAPTURE_FRAME_F_KERNEL ? "kernel" : "user");
		formats__json_string(out, labels[st->frame]);
		if (st->parent != CAPTURE_NONE)
			fprintf(out, ",\"parent\":\"%" PRIu32 "\"", st->parent + 1);
		fputc('}', out);
	}
	fputs("\n},\"samples\":[", out);
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *smp = &c->samples[i];
		uint64_t pid = 0, tid = 0;

		if (smp->thread != CAPTURE_NONE) {
			pid = c->processes[c->threads[smp->thread].process].pid;
			tid = c->threads[smp->thread].tid;
		}
		fprintf(out, "%s\n{\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":", i ? "," : "",
			pid, tid);
		put_ts(out, smp->time_ns > t->t0 ? smp->time_ns - t->t0 : 0);
		if (smp->cpu != CAPTURE_NONE)
			fprintf(out, ",\"cpu\":%" PRIu32, smp->cpu);
		fprintf(out, ",\"weight\":%" PRIu64 ",\"name\":", smp->weight);
		formats__json_string(out, smp->event == event ? capture__string(
						  c, c->events[event].name) : markers[smp->event]);
		if (smp->stack != CAPTURE_NONE)
			fprintf(out, ",\"sf\":\"%" PRIu32 "\"", smp->stack + 1);
		fputc('}', out);
	}
	fputs("\n],", out);
	return ferror(out) ? -EIO : 0;
}

int chrome_trace__export(const struct capture *c, uint32_t event, FILE *out,
			 struct formats_note *note)
{
	struct trace_thread t = { .out = out, .first_event = true };
	char **labels = NULL, **markers = NULL, **ivnames = NULL;
	uint32_t *path_frames = NULL, i, maxdepth = 1, s;
	struct trace_item *items = NULL;
	size_t nitems = 0, k, kept;
	const char **path = NULL;
	bool *seen_proc = NULL, *seen_thread = NULL, timed = false, any_unknown = false;
	uint64_t cursor = 0, tmin = UINT64_MAX, hard_end = 0, trimmed = 0, dropped = 0;
	uint64_t edge_ivs = 0, clamped_ivs = 0, slices_cut_ns = 0, budget;
	size_t slices_cut_item = SIZE_MAX;
	int err;

	err = formats__labels_new(c, &labels);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	markers = calloc((size_t)c->nevents + 1, sizeof(*markers));
	ivnames = calloc((size_t)c->nintervals + 1, sizeof(*ivnames));
	seen_proc = calloc((size_t)c->nprocesses + 1, 1);
	seen_thread = calloc((size_t)c->nthreads + 1, 1);
	items = calloc((size_t)c->nsamples + c->nintervals + 1, sizeof(*items));
	if (!markers || !ivnames || !seen_proc || !seen_thread || !items)
		goto cleanup;
	for (i = 0; i < c->nevents; i++)
		if (i != event && asprintf(&markers[i], "[%s]",
					   capture__string(c, c->events[i].name)) < 0) {
			markers[i] = NULL;
			goto cleanup;
		}
	/* the deepest stack bounds the path buffers */
	for (i = 0; i < c->nsamples; i++) {
		uint32_t d = 2;

		for (s = c->samples[i].stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > maxdepth)
			maxdepth = d;
		if (c->samples[i].time_ns) {
			timed = true;
			if (c->samples[i].time_ns < tmin)
				tmin = c->samples[i].time_ns;
		}
		items[nitems++] = (struct trace_item){ .key = c->samples[i].time_ns,
						       .thread = c->samples[i].thread, .id = i };
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint32_t d = 2;

		for (s = v->stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > maxdepth)
			maxdepth = d;
		timed = true;
		if (v->start_ns < tmin)
			tmin = v->start_ns;
		ivnames[i] = interval_name(c, v);
		if (!ivnames[i])
			goto cleanup;
		if (v->flags & EDGE_FLAGS)
			edge_ivs++;
		items[nitems++] = (struct trace_item){ .key = v->start_ns, .thread = v->thread,
						       .id = i, .interval = true };
	}
	qsort(items, nitems, sizeof(*items), item_cmp);
	path = calloc(maxdepth, sizeof(*path));
	path_frames = calloc(maxdepth, sizeof(*path_frames));
	t.open = calloc(maxdepth, sizeof(*t.open));
	if (!path || !path_frames || !t.open)
		goto cleanup;
	t.t0 = timed ? tmin : 0;
	budget = ((uint64_t)c->nsamples + c->nintervals + c->nstacks) * CAPTURE_LIMIT_EXPORT_K +
		 CAPTURE_LIMIT_EXPORT_SLACK;
	t.events_left = budget;

	/*
	 * Spans.  A sample covers [time, time + duration) (until the thread's
	 * next item when its duration is unknown); without any times, items are
	 * laid end to end.  An interval keeps its real bounds; samples that
	 * would overlap the thread's last interval start at its end or are
	 * dropped (the next item's start cuts one that runs into an interval).
	 */
	for (k = 0, kept = 0; k < nitems; k++) {
		struct trace_item *it = &items[k];
		const struct trace_item *next = k + 1 < nitems ? &items[k + 1] : NULL;

		if (k == 0 || items[k - 1].thread != it->thread)
			hard_end = 0;
		if (it->interval) {
			const struct capture_interval *v = &c->intervals[it->id];

			it->start = v->start_ns;
			it->end = v->end_ns;
			if (it->start < hard_end) {
				/* overlapping intervals of one thread (not from a recorder) */
				it->start = hard_end;
				if (it->end < it->start)
					it->end = it->start;
				it->clamped = true;
				clamped_ivs++;
			}
			hard_end = it->end;
		} else {
			const struct capture_sample *smp = &c->samples[it->id];
			uint64_t dur = formats__sample_ns(&c->events[smp->event], c, smp);

			if (timed) {
				it->start = smp->time_ns ? smp->time_ns : t.t0;
				if (!dur) {
					any_unknown = true;
					/* unknown duration: until the thread's next item, or 1 µs */
					dur = next && next->thread == it->thread && next->key > it->start
						      ? next->key - it->start
						      : 1000;
				}
			} else {
				/* no times at all (imported data): laid end to end */
				it->start = cursor;
				if (!dur)
					dur = smp->weight * 1000;
			}
			if (__builtin_add_overflow(it->start, dur, &it->end))
				it->end = UINT64_MAX;
			cursor = it->end;
			if (timed && it->start < hard_end) {
				if (it->end <= hard_end) {
					dropped++;
					continue;
				}
				it->start = hard_end;
				trimmed++;
			}
		}
		items[kept++] = *it;
	}
	nitems = kept;

	fputs("{\"traceEvents\":[", out);
	{
		bool first = true;

		for (k = 0; k < nitems; k++) {
			uint32_t th = items[k].thread;
			char name[300];

			if (th == CAPTURE_NONE) {
				if (k == 0 || items[k - 1].thread != th) {
					metadata(out, &first, "process_name", 0, 0, "[no process]");
					metadata(out, &first, "thread_name", 0, 0, "[no thread]");
				}
				continue;
			}
			if (!seen_proc[c->threads[th].process]) {
				const struct capture_process *pr =
					&c->processes[c->threads[th].process];
				const char *comm = capture__string(c, pr->comm);

				seen_proc[c->threads[th].process] = true;
				snprintf(name, sizeof(name), "%s (%" PRIu32 ")",
					 comm[0] ? comm : "[unknown]", pr->pid);
				metadata(out, &first, "process_name", pr->pid, pr->pid, name);
			}
			if (!seen_thread[th]) {
				seen_thread[th] = true;
				formats__thread_label(c, th, name, sizeof(name));
				metadata(out, &first,
					 "thread_name", c->processes[c->threads[th].process].pid,
					 c->threads[th].tid, name);
			}
		}
		t.first_event = first;
	}

	for (k = 0; k < nitems; k++) {
		const struct trace_item *it = &items[k];
		const struct trace_item *next = k + 1 < nitems ? &items[k + 1] : NULL;
		const struct capture_interval *v = it->interval ? &c->intervals[it->id] : NULL;
		uint32_t stack = v ? v->stack : c->samples[it->id].stack;
		uint32_t n = 0, d, common;

		if (it->thread == CAPTURE_NONE) {
			t.pid = 0;
			t.tid = 0;
		} else {
			t.pid = c->processes[c->threads[it->thread].process].pid;
			t.tid = c->threads[it->thread].tid;
		}
		/* the root-first path of labels */
		for (s = stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			path_frames[n++] = c->stacks[s].frame;
		for (d = 0; d < n; d++)
			path[d] = labels[path_frames[n - 1 - d]];
		if (!n)
			path[n++] = "[empty stack]";
		if (v)
			path[n++] = ivnames[it->id];
		else if (c->samples[it->id].event != event)
			path[n++] = markers[c->samples[it->id].event];

		common = 0;
		/* an interval's leaf is its own slice, never continued */
		while (common < t.nopen && common < n && !strcmp(t.open[common], path[common]) &&
		       strncmp(path[common], "off-CPU: ", 9))
			common++;
		/* this item's events (closing all later included) must fit the budget */
		if ((uint64_t)(t.nopen - common) + 2 * (uint64_t)(n - common) + common >
		    t.events_left) {
			close_to(&t, 0, it->start);
			if (!slices_cut_ns) {
				slices_cut_ns = it->start;
				slices_cut_item = k;
			}
			break;
		}
		close_to(&t, common, it->start);
		for (d = common; d < n; d++) {
			t.open[t.nopen++] = path[d];
			trace_event_iv(&t, 'B', path[d], it->start, c, v && d + 1 == n ? v : NULL,
				       it->clamped);
		}
		/* close what the next item of this thread will not continue */
		if (!next || next->thread != it->thread || next->start > it->end)
			close_to(&t, 0, it->end);
		else if (v)
			close_to(&t, n - 1, it->end); /* the interval ends before the next item */
	}
	fputs("\n],", out);
	err = trace_compact(c, event, out, &t, labels, markers);
	if (err)
		goto cleanup;
	fputs("\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"microscope\"", out);
	fprintf(out, ",\"t0_ns\":%" PRIu64 "}}\n", t.t0);
	if (!timed && c->nsamples)
		formats_note__add(note, "the capture has no sample times: samples laid end to "
				  "end, 1 us per unit of weight");
	else if (any_unknown)
		formats_note__add(note, "samples of unknown duration last until the thread's next "
				  "sample");
	if (c->nintervals)
		formats_note__add(note, "%u off-CPU intervals drawn as slices (state, cause, waker "
				  "in args; waker stacks not carried)", c->nintervals);
	if (edge_ivs)
		formats_note__add(note, "%" PRIu64 " intervals cut by the recording's edges drawn "
				  "clamped to them (args start_unknown/end_unknown)", edge_ivs);
	if (trimmed || dropped)
		formats_note__add(note, "%" PRIu64 " samples trimmed and %" PRIu64 " dropped where "
				  "they overlapped off-CPU intervals", trimmed, dropped);
	if (clamped_ivs)
		formats_note__add(note, "%" PRIu64 " overlapping intervals clamped (args clamped)",
				  clamped_ivs);
	if (slices_cut_item < nitems)
		formats_note__add(note, "slices stop at ts %" PRIu64 " ns (item %zu of %zu): the "
				  "output limit of %u events per row (capture/limits.h); every "
				  "sample is in \"samples\"/\"stackFrames\"",
				  slices_cut_ns - t.t0, slices_cut_item, nitems,
				  CAPTURE_LIMIT_EXPORT_K);
	err = 0;
cleanup:
	formats__labels_free(labels, c->nframes);
	if (markers)
		for (i = 0; i < c->nevents; i++)
			free(markers[i]);
	free(markers);
	if (ivnames)
		for (i = 0; i < c->nintervals; i++)
			free(ivnames[i]);
	free(ivnames);
	free(items);
	free(path);
	free(path_frames);
	free(t.open);
	free(seen_proc);
	free(seen_thread);
	return err;
}
