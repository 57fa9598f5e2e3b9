// SPDX-License-Identifier: MIT
/*
 * Chrome trace event JSON exporter.  Per thread, samples in time order
 * become nested B/E slices: the slices a sample shares with the previous
 * one (same labels from the root down) stay open, the rest close and open
 * at the sample's time.  Because every thread's events are written in one
 * time-ordered sequence that only ever closes the innermost open slice,
 * slices nest by construction.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"

struct trace_thread {
	FILE *out;
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

static void trace_event(struct trace_thread *t, char ph, const char *name, uint64_t ns)
{
	fputs(t->first_event ? "\n" : ",\n", t->out);
	t->first_event = false;
	fprintf(t->out, "{\"ph\":\"%c\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"ts\":", ph,
		t->pid, t->tid);
	put_ts(t->out, ns - t->t0);
	fputs(",\"name\":", t->out);
	formats__json_string(t->out, name);
	fputc('}', t->out);
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

int chrome_trace__export(const struct capture *c, uint32_t event, FILE *out,
			 struct formats_note *note)
{
	struct trace_thread t = { .out = out, .first_event = true };
	char **labels = NULL, **markers = NULL;
	uint32_t *order = NULL, *path_frames = NULL, i, maxdepth = 1, s;
	const char **path = NULL;
	bool *seen_proc = NULL, *seen_thread = NULL, timed = false, any_unknown = false;
	uint64_t cursor = 0, tmin = UINT64_MAX;
	int err;

	err = formats__labels_new(c, &labels);
	if (err)
		goto cleanup;
	err = formats__samples_by_thread(c, &order);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	markers = calloc((size_t)c->nevents + 1, sizeof(*markers));
	seen_proc = calloc((size_t)c->nprocesses + 1, 1);
	seen_thread = calloc((size_t)c->nthreads + 1, 1);
	if (!markers || !seen_proc || !seen_thread)
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
	}
	path = calloc(maxdepth, sizeof(*path));
	path_frames = calloc(maxdepth, sizeof(*path_frames));
	t.open = calloc(maxdepth, sizeof(*t.open));
	if (!path || !path_frames || !t.open)
		goto cleanup;
	t.t0 = timed ? tmin : 0;

	fputs("{\"traceEvents\":[", out);
	{
		bool first = true;

		for (i = 0; i < c->nsamples; i++) {
			uint32_t th = c->samples[order[i]].thread;
			char name[300];

			if (th == CAPTURE_NONE) {
				if (i == 0 || c->samples[order[i - 1]].thread != th) {
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

	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *smp = &c->samples[order[i]];
		const struct capture_sample *next =
			i + 1 < c->nsamples ? &c->samples[order[i + 1]] : NULL;
		uint64_t dur = formats__sample_ns(&c->events[smp->event], c, smp), start, end;
		uint32_t n = 0, d, common;

		if (smp->thread == CAPTURE_NONE) {
			t.pid = 0;
			t.tid = 0;
		} else {
			t.pid = c->processes[c->threads[smp->thread].process].pid;
			t.tid = c->threads[smp->thread].tid;
		}
		/* the root-first path of labels */
		for (s = smp->stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			path_frames[n++] = c->stacks[s].frame;
		for (d = 0; d < n; d++)
			path[d] = labels[path_frames[n - 1 - d]];
		if (!n)
			path[n++] = "[empty stack]";
		if (smp->event != event)
			path[n++] = markers[smp->event];

		if (timed) {
			start = smp->time_ns ? smp->time_ns : t.t0;
			if (!dur) {
				any_unknown = true;
				/* unknown duration: until the thread's next sample, or 1 µs */
				dur = next && next->thread == smp->thread && next->time_ns > start
					      ? next->time_ns - start
					      : 1000;
			}
		} else {
			/* no times at all (imported data): laid end to end */
			start = cursor;
			if (!dur)
				dur = smp->weight * 1000;
		}
		if (__builtin_add_overflow(start, dur, &end))
			end = UINT64_MAX;
		for (common = 0; common < t.nopen && common < n; common++)
			if (strcmp(t.open[common], path[common]))
				break;
		close_to(&t, common, start);
		for (d = common; d < n; d++) {
			t.open[t.nopen++] = path[d];
			trace_event(&t, 'B', path[d], start);
		}
		cursor = end;
		/* close what the next sample of this thread will not continue */
		if (!next || next->thread != smp->thread || (timed && next->time_ns > end))
			close_to(&t, 0, end);
		else if (timed && next->time_ns < end)
			cursor = next->time_ns;
	}
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":\"microscope\"}}\n", out);
	if (!timed && c->nsamples)
		formats_note__add(note, "the capture has no sample times: samples laid end to "
				  "end, 1 us per unit of weight");
	else if (any_unknown)
		formats_note__add(note, "samples of unknown duration last until the thread's next "
				  "sample");
	err = 0;
cleanup:
	formats__labels_free(labels, c->nframes);
	if (markers)
		for (i = 0; i < c->nevents; i++)
			free(markers[i]);
	free(markers);
	free(order);
	free(path);
	free(path_frames);
	free(t.open);
	free(seen_proc);
	free(seen_thread);
	return err;
}
