// SPDX-License-Identifier: MIT
/* record --continuous and record --window (record_rolling.h). */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture/capture.h"
#include "capture/merge.h"
#include "capture/segment_writer.h"
#include "record_counters.h"
#include "record_export.h"
#include "record_rolling.h"

/* Window slices: at most this long (ns), and a tenth of the window when shorter. */
#define WINDOW_SLICE_MAX_NS 1000000000ull
/* A snapshot waits at most this long (ns) for processing to reach its time. */
#define WINDOW_SNAPSHOT_WAIT_NS 5000000000ull

struct window_slice {
	struct capture_builder *b;
	uint64_t last_ns; /* latest sample or interval end in it */
};

struct record_rolling {
	const struct record_options *o;
	uint64_t period_ns;   /* segment or slice length */
	uint64_t cut_ns;      /* start of what is being collected now; 0 before the first tick */
	uint64_t lag_ns;      /* records this far behind a tick may still be held */
	uint64_t end_ns;      /* where --duration ends sampling (0: no --duration) */
	/* continuous */
	struct segment_writer *segments;
	struct record_export *exporter;
	struct record_counters *counters; /* per-segment deltas, or NULL */
	uint64_t next_mark_ns;		  /* the next grid boundary to mark counters at */
	uint64_t failing_since;		  /* segments dropped when this write streak began */
	bool failing;			  /* the last segment could not be written */
	/* window: slices oldest first */
	struct window_slice *slices;
	size_t nslices, cap;
	uint64_t snap_ns; /* a snapshot asked for then, waiting for processing; 0: none */
};

static uint64_t realtime_offset_ns(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((uint64_t)r.tv_sec - (uint64_t)m.tv_sec) * 1000000000u + (uint64_t)r.tv_nsec -
	       (uint64_t)m.tv_nsec;
}

int record_rolling__open(const struct record_options *o, uint64_t release_lag_ns,
			 struct record_rolling **out)
{
	struct record_rolling *r;
	struct segment_policy policy = {
		.retain_ns = o->retain_ns,
		.retain_bytes = o->retain_bytes,
	};
	char why[512];
	int err;

	*out = NULL;
	if (!o->continuous && !o->window_ns)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r) {
		fprintf(stderr, "microscope record: %s\n", strerror(ENOMEM));
		return -ENOMEM;
	}
	r->o = o;
	r->lag_ns = release_lag_ns;
	if (o->continuous) {
		r->period_ns = o->segment_ns;
		if (o->export_fmt) {
			err = record_export__new(o->export_fmt, &r->exporter);
			if (err) {
				fprintf(stderr, "microscope record: --export %s: %s\n",
					o->export_fmt, strerror(-err));
				goto cleanup;
			}
			policy.published = record_export__segment;
			policy.ctx = r->exporter;
		}
		err = segment_writer__open(o->continuous, &policy, &r->segments, why, sizeof(why));
		if (err) {
			fprintf(stderr, "microscope record: --continuous %s\n", why);
			goto cleanup;
		}
	} else {
		r->period_ns = o->window_ns / 10 < WINDOW_SLICE_MAX_NS ? o->window_ns / 10
								       : WINDOW_SLICE_MAX_NS;
	}
	*out = r;
	return 0;
cleanup:
	record_rolling__free(r);
	return err;
}

/* Move b's rows into a new slice; drop slices that left the window. */
static int window__cut(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns)
{
	struct window_slice *s;
	uint64_t ref = r->snap_ns && r->snap_ns < now_ns ? r->snap_ns : now_ns; /* keep its window */
	uint64_t first, last, horizon = ref > r->o->window_ns ? ref - r->o->window_ns : 0;
	size_t drop = 0;
	int err;

	if (capture_builder__time_range(b, &first, &last)) {
		if (r->nslices == r->cap) {
			size_t cap = r->cap ? r->cap * 2 : 16;
			struct window_slice *v = reallocarray(r->slices, cap, sizeof(*v));

			if (!v)
				return -ENOMEM;
			r->slices = v;
			r->cap = cap;
		}
		s = &r->slices[r->nslices];
		s->b = capture_builder__new();
		if (!s->b)
			return -ENOMEM;
		err = capture_builder__take(b, s->b, UINT64_MAX);
		if (err) {
			capture_builder__free(s->b);
			return err;
		}
		s->last_ns = last;
		r->nslices++;
	}
	while (drop < r->nslices && r->slices[drop].last_ns < horizon)
		capture_builder__free(r->slices[drop++].b);
	memmove(r->slices, r->slices + drop, (r->nslices - drop) * sizeof(*r->slices));
	r->nslices -= drop;
	return 0;
}

/*
 * Publish the next segment [start, end).  A segment that cannot be written
 * (a full disk) is dropped and counted by the writer (segment_writer.h)
 * and recording goes on: one warning when a streak of failures begins, one
 * when segments are written again.  Returns 0 (written or dropped) or
 * -errno of another failure (message printed).
 */
static int rolling__publish(struct record_rolling *r, struct capture_builder *b, uint64_t start,
			    uint64_t end)
{
	uint64_t segs, samples;
	char why[512];
	int err;

	if (r->counters && end != UINT64_MAX)
		record_counters__apply(r->counters, end);
	err = segment_writer__publish(r->segments, b, start, end, why, sizeof(why));
	if (err && (!segment_writer__write_failed(r->segments, &segs, &samples) ||
		    end == UINT64_MAX)) { /* the last one: nothing after it */
		fprintf(stderr, "microscope record: segment: %s\n", why);
		return err;
	}
	if (err && !r->failing) {
		fprintf(stderr,
			"microscope record: warning: segment not written, its samples dropped "
			"(counted: segment.write_errors, segment.samples_lost); recording goes "
			"on and the next segments are tried: %s\n",
			why);
		r->failing = true;
		r->failing_since = segs - 1;
	} else if (!err && r->failing) {
		segment_writer__write_failed(r->segments, &segs, &samples);
		fprintf(stderr,
			"microscope record: segments written again to %s after %" PRIu64
			" could not be\n",
			r->o->continuous, segs - r->failing_since);
		r->failing = false;
	}
	return 0;
}

/* Where a cut at now_ns would end, and whether one is due. */
static bool rolling__due(const struct record_rolling *r, uint64_t now_ns, uint64_t released_ns,
			 uint64_t *until)
{
	*until = now_ns;
	if (r->segments) { /* a segment ends where every record of it was released */
		*until = now_ns > r->lag_ns ? now_ns - r->lag_ns : 0;
		if (released_ns < *until)
			*until = released_ns;
	}
	return r->cut_ns && *until >= r->cut_ns && *until - r->cut_ns >= r->period_ns;
}

void record_rolling__set_counters(struct record_rolling *r, struct record_counters *l)
{
	if (r && r->segments)
		r->counters = l;
}

bool record_rolling__mark_due(struct record_rolling *r, uint64_t now_ns, uint64_t *at_ns)
{
	if (!r || !r->counters || !r->cut_ns)
		return false;
	if (!r->next_mark_ns)
		r->next_mark_ns = r->cut_ns + r->period_ns;
	if (now_ns < r->next_mark_ns)
		return false;
	/* the last boundary passed (rounds late by more than a segment mark once) */
	*at_ns = r->next_mark_ns + (now_ns - r->next_mark_ns) / r->period_ns * r->period_ns;
	r->next_mark_ns = *at_ns + r->period_ns;
	return true;
}

bool record_rolling__due(const struct record_rolling *r, uint64_t now_ns, uint64_t released_ns)
{
	uint64_t until;

	return r && rolling__due(r, now_ns, released_ns, &until);
}

void record_rolling__begin(struct record_rolling *r, uint64_t now_ns, uint64_t duration_ns)
{
	if (r && !r->cut_ns) {
		r->cut_ns = now_ns;
		r->end_ns = duration_ns ? now_ns + duration_ns : 0;
	}
}

/*
 * The grid cell that reaches the --duration end is the recording's last:
 * sampling halts a moment after that end (the timer's signal, then the
 * halt), and those samples join it rather than open a cell of their own
 * (-d 3 --segment 1s is 3 segments, not a 4th of half a millisecond).
 */
static bool rolling__last_cell(const struct record_rolling *r, uint64_t start)
{
	return r->end_ns && start + r->period_ns >= r->end_ns;
}

static int window__pending(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns,
			   uint64_t released_ns);

int record_rolling__tick(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns,
			 uint64_t released_ns)
{
	uint64_t until;
	int err;

	if (!r)
		return 0;
	/* The first segment starts with the recording, not a lag before it:
	 * a segment of nothing but start-up lag would be near-empty. */
	if (!r->cut_ns)
		r->cut_ns = now_ns;
	if (!r->segments) {
		err = window__pending(r, b, now_ns, released_ns);
		if (err)
			return err;
	}
	if (!rolling__due(r, now_ns, released_ns, &until))
		return 0;
	if (r->segments && rolling__last_cell(r, r->cut_ns))
		return 0; /* record_rolling__finish publishes it */
	if (r->segments) {
		/* On the --segment grid, not at the tick: every segment is
		 * exactly --segment long however late the round came, and is
		 * cut only once processing has released every record before
		 * its end (a lagging processor delays the cut, never moves
		 * its records into the next segment). */
		until = r->cut_ns + r->period_ns;
		err = rolling__publish(r, b, r->cut_ns, until);
		if (err)
			return err;
	} else {
		err = window__cut(r, b, now_ns);
		if (err) {
			fprintf(stderr, "microscope record: window: %s\n", strerror(-err));
			return err;
		}
	}
	r->cut_ns = until;
	return 1;
}

/* "20261202T142300.123Z" for CLOCK_MONOTONIC ns. */
static void utc_text(char *buf, size_t len, uint64_t mono_ns, uint64_t offset_ns)
{
	uint64_t real = mono_ns + offset_ns;
	time_t t = (time_t)(real / 1000000000u);
	struct tm tm;

	gmtime_r(&t, &tm);
	snprintf(buf, len, "%04d%02d%02dT%02d%02d%02d.%03uZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(real / 1000000u % 1000u));
}

/* The last window of samples (up to now_ns) merged into a new builder and
 * written to path (NULL: window-START-END.msc beside -o). */
static int window__write(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns,
			 const char *path, uint64_t total_samples, uint64_t behind_ns)
{
	uint64_t since = now_ns > r->o->window_ns ? now_ns - r->o->window_ns : 0;
	uint64_t off = realtime_offset_ns();
	struct capture_builder *w = NULL;
	char *copy = NULL, *name = NULL, from[40], to[40], buf[32];
	int err;

	err = window__cut(r, b, now_ns); /* what the processor released up to now */
	if (err)
		goto cleanup;
	w = capture_builder__new();
	if (!w) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < r->nslices && !err; i++)
		err = capture_builder__merge_builder(w, r->slices[i].b, since, now_ns + 1);
	if (err)
		goto cleanup;
	snprintf(buf, sizeof(buf), "%" PRIu64, since);
	capture_builder__set_meta(w, "window.start_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns);
	capture_builder__set_meta(w, "window.end_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, now_ns - since);
	capture_builder__set_meta(w, "duration_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRIu32, capture_builder__sample_count(w));
	capture_builder__set_meta(w, "samples", buf);
	if (total_samples) {
		snprintf(buf, sizeof(buf), "%" PRIu64, total_samples);
		capture_builder__set_meta(w, "window.samples_total", buf);
	}
	if (behind_ns) {
		snprintf(buf, sizeof(buf), "%" PRIu64, behind_ns);
		capture_builder__set_meta(w, "window.behind_ns", buf);
	}
	if (!path) {
		copy = strdup(r->o->output);
		utc_text(from, sizeof(from), since, off);
		utc_text(to, sizeof(to), now_ns, off);
		if (!copy || asprintf(&name, "%s/window-%s-%s.msc", dirname(copy), from, to) < 0) {
			name = NULL;
			err = -ENOMEM;
			goto cleanup;
		}
		path = name;
	}
	err = capture_builder__write(w, path);
	if (err) {
		fprintf(stderr, "microscope record: window: cannot write %s\n",
			capture_builder__error(w));
		goto cleanup;
	}
	if (behind_ns)
		fprintf(stderr,
			"microscope record: warning: window %s written with processing %.1f s "
			"behind the snapshot: its last %.1f s hold no samples yet (meta "
			"window.behind_ns)\n",
			path, behind_ns / 1e9,
			(behind_ns < r->o->window_ns ? behind_ns : r->o->window_ns) / 1e9);
	if (!r->o->quiet && total_samples)
		fprintf(stderr,
			"[ microscope: window of %" PRIu32 " samples written to %s (%" PRIu64
			" recorded in all) ]\n",
			capture_builder__sample_count(w), path, total_samples);
	else if (!r->o->quiet)
		fprintf(stderr, "[ microscope: window of %" PRIu32 " samples written to %s ]\n",
			capture_builder__sample_count(w), path);
cleanup:
	if (err == -ENOMEM)
		fprintf(stderr, "microscope record: window: %s\n", strerror(ENOMEM));
	capture_builder__free(w);
	free(copy);
	free(name);
	return err;
}

/* A snapshot waiting for processing: written once processing reached its
 * time (released_ns), or after WINDOW_SNAPSHOT_WAIT_NS saying how far
 * behind it still was. */
static int window__pending(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns,
			   uint64_t released_ns)
{
	uint64_t at = r->snap_ns;

	if (!at || (released_ns < at && now_ns - at < WINDOW_SNAPSHOT_WAIT_NS))
		return 0;
	r->snap_ns = 0;
	return window__write(r, b, at, NULL, 0, released_ns < at ? at - released_ns : 0);
}

int record_rolling__snapshot(struct record_rolling *r, struct capture_builder *b,
			     uint64_t now_ns, uint64_t released_ns)
{
	if (!r || !r->o->window_ns)
		return 0;
	if (!r->snap_ns) /* one at a time: a second ask joins the waiting one */
		r->snap_ns = now_ns;
	return window__pending(r, b, now_ns, released_ns);
}

int record_rolling__finish(struct record_rolling *r, struct capture_builder *b, uint64_t now_ns,
			   uint64_t total_samples)
{
	uint64_t start = r->cut_ns, first, last, segs, dropped;
	struct capture_builder *held = NULL;
	char why[512];
	int err;

	if (!r->segments) {
		/* a snapshot still waiting: everything is processed now */
		err = window__pending(r, b, now_ns, UINT64_MAX);
		if (!err)
			err = window__write(r, b, now_ns, r->o->output, total_samples, 0);
		return err;
	}
	if (!start)
		start = capture_builder__time_range(b, &first, &last) ? first : now_ns;
	/* What the release lag held back (up to a segment and the lag) is cut
	 * at the same --segment boundaries as the ticks would have cut it, so
	 * no segment is longer than --segment; the last one ends at its last
	 * sample. */
	/* The final counters (the whole recording's; less what earlier
	 * segments carried when they are deltas, record_counters.h) go with
	 * the last segment, which retention keeps longest; the first of these
	 * would be deleted before the ones after it. */
	held = capture_builder__new();
	if (!held || capture_builder__move_counters(b, held)) {
		err = -ENOMEM;
		snprintf(why, sizeof(why), "%s: holding the counters: %s", r->o->continuous,
			 strerror(ENOMEM));
		goto failed;
	}
	while (capture_builder__time_range(b, &first, &last) && last >= start &&
	       last - start >= r->period_ns && !rolling__last_cell(r, start)) {
		err = rolling__publish(r, b, start, start + r->period_ns);
		if (err) {
			capture_builder__free(held);
			return err;
		}
		start += r->period_ns;
	}
	if (capture_builder__move_counters(held, b)) {
		err = -ENOMEM;
		snprintf(why, sizeof(why), "%s: the counters: %s", r->o->continuous,
			 strerror(ENOMEM));
		goto failed;
	}
	/* the final totals, less what the segments before carried */
	if (r->counters && record_counters__settle(r->counters)) {
		err = -ENOMEM;
		snprintf(why, sizeof(why), "%s: the last segment's counters: %s",
			 r->o->continuous, strerror(ENOMEM));
		goto failed;
	}
	/* A recording stopped before its first sample (SIGINT at start-up, an
	 * idle target) publishes no segment: an empty one would be read as a
	 * profile of nothing. */
	if (!segment_writer__published(r->segments) && !capture_builder__time_range(b, &first, &last)) {
		if (!r->o->quiet)
			fprintf(stderr, "[ microscope: no samples: no segment written to %s ]\n",
				r->o->continuous);
		capture_builder__free(held);
		return 0;
	}
	err = rolling__publish(r, b, start, UINT64_MAX);
	capture_builder__free(held);
	if (err)
		return err;
	segment_writer__write_failed(r->segments, &segs, &dropped);
	if (!r->o->quiet)
		fprintf(stderr,
			"[ microscope: %" PRIu64 " sample%s in %" PRIu64 " segment%s written to %s"
			" (%" PRIu64 " deleted by retention) ]\n",
			total_samples - dropped, total_samples - dropped == 1 ? "" : "s",
			segment_writer__published(r->segments),
			segment_writer__published(r->segments) == 1 ? "" : "s", r->o->continuous,
			segment_writer__deleted(r->segments));
	if (segs)
		fprintf(stderr,
			"microscope record: warning: %" PRIu64 " segment%s could not be written: "
			"%" PRIu64 " sample%s dropped with them\n",
			segs, segs == 1 ? "" : "s", dropped, dropped == 1 ? "" : "s");
	return 0;
failed:
	capture_builder__free(held);
	fprintf(stderr, "microscope record: segment: %s\n", why);
	return err;
}

void record_rolling__free(struct record_rolling *r)
{
	if (!r)
		return;
	segment_writer__free(r->segments);
	record_export__free(r->exporter);
	for (size_t i = 0; i < r->nslices; i++)
		capture_builder__free(r->slices[i].b);
	free(r->slices);
	free(r);
}
