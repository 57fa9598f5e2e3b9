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
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"
#include "capture/limits.h"

/* A sample within 1/TRACE_JITTER_DIV of the previous one's length of its end
 * (timer jitter, a delayed sample; either way) starts where it ends. */
#define TRACE_JITTER_DIV 2u
/* Frames shared by consecutive items of a thread stay one slice across a gap
 * up to this long. */
#define TRACE_BRIDGE_NS 100000000ull
/* Perfetto drops a slice nested this deep, with an error
 * (src/trace_processor/importers/common/slice_tracker.h kMaxDepth,
 * stat slice_max_depth_exceeded): deeper frames get no slice. */
#define TRACE_MAX_DEPTH 512u

#define EDGE_FLAGS (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)

static const char *const state_words[CAPTURE_OFFCPU_STATE_COUNT] = {
	[CAPTURE_OFFCPU_STATE_RUNNABLE] = "runnable (preempted)",
	[CAPTURE_OFFCPU_STATE_SLEEP] = "sleep",
	[CAPTURE_OFFCPU_STATE_DISK] = "disk wait (D)",
	[CAPTURE_OFFCPU_STATE_STOPPED] = "stopped (T)",
	[CAPTURE_OFFCPU_STATE_OTHER] = "other",
};

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
	bool cont;	 /* the rest of a sample, after the preemption that cut it */
	bool resumes;	 /* a preemption in the code of the sample before it */
	uint64_t rest;	 /* ns of the sample cut off by a preemption, to carry */
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

/* An off-CPU leaf of "stackFrames": one per distinct (stack, name). */
struct trace_leaf {
	uint32_t stack;
	uint32_t interval; /* the first interval with it (its name) */
};

struct trace {
	const struct capture *c;
	uint32_t event;
	FILE *out;
	char **labels, **markers, **ivnames;
	uint32_t *ivleaf;	  /* per interval: its index in leaves */
	struct trace_leaf *leaves; /* distinct off-CPU leaves */
	uint32_t nleaves;
	struct trace_item *items;
	size_t nitems;
	uint64_t t0;
	bool timed, any_unknown;
	uint64_t trimmed, dropped, cut_short, clamped_ivs, edge_ivs, too_deep, continued;
	/* the walk */
	const char **path;
	uint32_t *path_frames, maxdepth;
	const char **open;  /* labels of the open slices, outermost first */
	size_t *open_slice; /* their index in ends[] */
	uint32_t nopen;
	uint64_t *ends; /* per slice, in opening order: its end (ns) */
	size_t nslices, slices_cap;
	uint64_t budget;
	size_t cut_item; /* the item where slices stopped, or SIZE_MAX */
	bool first_event;
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

/* The innermost frame of stack that is neither kernel code nor a
 * truncation marker, or CAPTURE_NONE. */
static uint32_t blocking_frame(const struct capture *c, uint32_t stack)
{
	for (; stack != CAPTURE_NONE; stack = c->stacks[stack].parent) {
		uint32_t f = c->stacks[stack].frame;

		if (!(c->frames[f].flags & (CAPTURE_FRAME_F_KERNEL | CAPTURE_FRAME_F_TRUNCATION)))
			return f;
	}
	return CAPTURE_NONE;
}

/*
 * Whether v is a preemption in the code of the sample stack s: their
 * innermost user frames have the same label.  (A preemption's stack is
 * often only that frame under kernel ones, "[no stack copy]" above it, so
 * the thread is taken to resume the sampled code, its stack the sample's.)
 */
static bool preempted_in(const struct trace *t, const struct capture_interval *v, uint32_t s)
{
	uint32_t fs = blocking_frame(t->c, s), fv = blocking_frame(t->c, v->stack);

	return v->state == CAPTURE_OFFCPU_STATE_RUNNABLE && fs != CAPTURE_NONE &&
	       fv != CAPTURE_NONE && (fs == fv || !strcmp(t->labels[fs], t->labels[fv]));
}

/* Collect the items, sort them per thread and time, and draw their spans. */
static int trace_layout(struct trace *t)
{
	const struct capture *c = t->c;
	uint64_t tmin = UINT64_MAX, hard_end = 0, cursor = 0, *ivnext;
	size_t k, kept;
	uint32_t i, s;

	t->items = calloc((size_t)c->nsamples + c->nintervals + 1, sizeof(*t->items));
	if (!t->items)
		return -ENOMEM;
	t->maxdepth = 2;
	for (i = 0; i < c->nsamples; i++) {
		uint32_t d = 2;

		for (s = c->samples[i].stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > t->maxdepth)
			t->maxdepth = d;
		if (c->samples[i].time_ns) {
			t->timed = true;
			if (c->samples[i].time_ns < tmin)
				tmin = c->samples[i].time_ns;
		}
		t->items[t->nitems++] = (struct trace_item){
			.key = c->samples[i].time_ns, .thread = c->samples[i].thread, .id = i };
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint32_t d = 2;

		for (s = v->stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > t->maxdepth)
			t->maxdepth = d;
		t->timed = true;
		if (v->start_ns < tmin)
			tmin = v->start_ns;
		t->ivnames[i] = interval_name(c, v);
		if (!t->ivnames[i])
			return -ENOMEM;
		if (v->flags & EDGE_FLAGS)
			t->edge_ivs++;
		t->items[t->nitems++] = (struct trace_item){
			.key = v->start_ns, .thread = v->thread, .id = i, .interval = true };
	}
	qsort(t->items, t->nitems, sizeof(*t->items), item_cmp);
	t->t0 = t->timed ? tmin : 0;
	/* per item, the start of its thread's next interval: no sample span,
	 * moved or not, reaches past it */
	ivnext = calloc(t->nitems + 1, sizeof(*ivnext));
	if (!ivnext)
		return -ENOMEM;
	for (k = t->nitems; k-- > 0;) {
		const struct trace_item *n1 = k + 1 < t->nitems ? &t->items[k + 1] : NULL;

		ivnext[k] = !n1 || n1->thread != t->items[k].thread ? UINT64_MAX
			    : n1->interval ? n1->key : ivnext[k + 1];
	}

	for (k = 0, kept = 0; k < t->nitems; k++) {
		struct trace_item *it = &t->items[k];
		const struct trace_item *next = k + 1 < t->nitems ? &t->items[k + 1] : NULL;
		struct trace_item *prev = kept && t->items[kept - 1].thread == it->thread
						  ? &t->items[kept - 1] : NULL;

		if (next && next->thread != it->thread)
			next = NULL;
		if (!prev)
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
				t->clamped_ivs++;
			}
			hard_end = it->end;
			it->resumes = prev && !prev->interval &&
				      preempted_in(t, v, c->samples[prev->id].stack);
		} else {
			const struct capture_sample *smp = &c->samples[it->id];
			uint64_t dur = formats__sample_ns(&c->events[smp->event], c, smp);

			if (t->timed) {
				it->start = smp->time_ns ? smp->time_ns : t->t0;
				if (!dur) {
					t->any_unknown = true;
					/* unknown duration: until the thread's next item, or 1 µs */
					dur = next && next->key > it->start ? next->key - it->start : 1000;
				}
			} else {
				/* no times at all (imported data): laid end to end */
				it->start = cursor;
				if (!dur)
					dur = smp->weight * 1000;
			}
			/* timer jitter: within 1/TRACE_JITTER_DIV of the previous
			 * sample's length of its end, start at its end */
			if (t->timed && prev && !prev->interval) {
				uint64_t tol = (prev->end - prev->start) / TRACE_JITTER_DIV;

				if (it->start >= prev->end - tol && it->start <= prev->end + tol)
					it->start = prev->end;
			}
			if (__builtin_add_overflow(it->start, dur, &it->end))
				it->end = UINT64_MAX;
			cursor = it->end;
			/* not for a next sample that will start at this one's end */
			if (t->timed && next && next->key < it->end &&
			    (next->interval || next->key < it->end - dur / TRACE_JITTER_DIV)) {
				uint64_t to = next->key > it->start ? next->key : it->start;

				/* the rest of its period is drawn after the
				 * interval (trace_resume) */
				if (next->interval)
					it->rest = it->end - to;
				else
					t->cut_short++;
				it->end = to;
			}
			if (t->timed && it->end > ivnext[k]) {
				if (it->start > ivnext[k])
					it->start = ivnext[k];
				if (it->end != ivnext[k])
					t->cut_short++;
				it->end = ivnext[k];
			}
			if (t->timed && it->start < hard_end) {
				if (it->end <= hard_end) {
					t->dropped++;
					continue;
				}
				it->start = hard_end;
				t->trimmed++;
			}
		}
		t->items[kept++] = *it;
	}
	t->nitems = kept;
	free(ivnext);
	return 0;
}

static int leaf_cmp(const void *pa, const void *pb, void *arg)
{
	const struct trace *t = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_interval *x = &t->c->intervals[a], *y = &t->c->intervals[b];
	int d;

	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	d = strcmp(t->ivnames[a], t->ivnames[b]);
	return d ? d : (a > b) - (a < b);
}

/*
 * Intern the off-CPU leaves: intervals with the same stack and the same
 * name (state, waker, edges) share one "stackFrames" entry, so an interval
 * costs its "samples" entry and its "T" event, not a frame of its own.
 */
static int trace_leaves(struct trace *t)
{
	const struct capture *c = t->c;
	uint32_t *order, i, prev = CAPTURE_NONE;

	if (!c->nintervals)
		return 0;
	order = calloc(c->nintervals, sizeof(*order));
	t->ivleaf = calloc(c->nintervals, sizeof(*t->ivleaf));
	t->leaves = calloc(c->nintervals, sizeof(*t->leaves));
	if (!order || !t->ivleaf || !t->leaves) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < c->nintervals; i++)
		order[i] = i;
	qsort_r(order, c->nintervals, sizeof(*order), leaf_cmp, t);
	for (i = 0; i < c->nintervals; i++) {
		uint32_t v = order[i];

		if (prev == CAPTURE_NONE || c->intervals[v].stack != c->intervals[prev].stack ||
		    strcmp(t->ivnames[v], t->ivnames[prev]))
			t->leaves[t->nleaves++] = (struct trace_leaf){
				.stack = c->intervals[v].stack, .interval = v };
		t->ivleaf[v] = t->nleaves - 1;
		prev = v;
	}
	free(order);
	return 0;
}

/*
 * A sample cut by an off-CPU interval keeps its length: the rest of its
 * period is one more item of the same sample from the interval's end, cut
 * at the thread's next item (its span is a drawing of the CPU time it
 * stands for, so each function keeps its samples x period), unless the
 * interval's end is unknown.  Items are reallocated.
 */
static int trace_resume(struct trace *t)
{
	struct trace_item *items;
	size_t k, n = 0, extra = 0;

	for (k = 0; k < t->nitems; k++)
		extra += t->items[k].rest != 0;
	if (!extra)
		return 0;
	items = calloc(t->nitems + extra, sizeof(*items));
	if (!items)
		return -ENOMEM;
	for (k = 0; k < t->nitems; k++) {
		const struct trace_item *it = &t->items[k], *iv, *nx;
		uint64_t start, end;

		items[n++] = *it;
		if (!it->rest)
			continue;
		iv = k + 1 < t->nitems ? &t->items[k + 1] : NULL;
		/* not past an interval cut by the recording's end */
		if (!iv || !iv->interval || iv->thread != it->thread ||
		    (t->c->intervals[iv->id].flags & CAPTURE_INTERVAL_F_END_UNKNOWN)) {
			t->cut_short++;
			continue;
		}
		nx = k + 2 < t->nitems && t->items[k + 2].thread == it->thread ? &t->items[k + 2]
									      : NULL;
		start = iv->end;
		if (__builtin_add_overflow(start, it->rest, &end))
			end = UINT64_MAX;
		if (nx && end > nx->start)
			end = nx->start > start ? nx->start : start;
		if (end - start < it->rest)
			t->cut_short++;
		if (end == start)
			continue;
		items[n++] = *iv;
		items[n++] = (struct trace_item){ .key = start, .start = start, .end = end,
						  .thread = it->thread, .id = it->id, .cont = true };
		t->continued++;
		k++;
	}
	free(t->items);
	t->items = items;
	t->nitems = n;
	return 0;
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
							       : blocking_frame(t->c, v->stack);
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
	return ferror(out) ? -EIO : 0;
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
	err = trace_layout(&t);
	if (err)
		goto cleanup;
	err = trace_resume(&t);
	if (err)
		goto cleanup;
	err = trace_leaves(&t);
	if (err)
		goto cleanup;
	err = -ENOMEM;
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
	fputs("\n],", out);
	err = trace_compact(&t);
	if (err)
		goto cleanup;
	fprintf(out, "\"otherData\":{\"exporter\":\"microscope\","
		     "\"t0_ns\":%" PRIu64 "}}\n", t.t0);
	trace_notes(&t, note);
	err = ferror(out) ? -EIO : 0;
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
	return err;
}
