// SPDX-License-Identifier: MIT
/*
 * speedscope JSON exporter (https://www.speedscope.app/file-format-schema.json):
 * shared frames keyed by label, one "sampled" profile per thread, and one
 * "evented" profile per thread with probe zones.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"
#include "capture/formats/keymap.h"
#include "capture/probe_pairs.h"

#define EDGE_FLAGS (CAPTURE_INTERVAL_F_START_UNKNOWN | CAPTURE_INTERVAL_F_END_UNKNOWN)

static int interval_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct capture *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_interval *x = &c->intervals[a], *y = &c->intervals[b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* One stack, root first, as shared frame indexes ("[a,b,c]"). */
static void put_stack(FILE *out, const struct capture *c, uint32_t stack,
		      const uint32_t *frame_index, uint32_t empty_index, uint32_t *path, bool first)
{
	uint32_t n = 0, s, d;

	for (s = stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
		path[n++] = frame_index[c->stacks[s].frame];
	if (!n)
		path[n++] = empty_index;
	fputs(first ? "[" : ",[", out);
	for (d = n; d-- > 0;)
		fprintf(out, d + 1 == n ? "%" PRIu32 : ",%" PRIu32, path[d]);
	fputc(']', out);
}

/*
 * Per thread, one "sampled" profile "<comm-tid> off-CPU" of its complete
 * off-CPU intervals (the rule of report --off-cpu): one sample per interval
 * (its stack), in start order, weight = its nanoseconds.  ivs[niv]: complete
 * interval ids sorted by (thread, start).  Updates *nprofiles, *first.
 */
static void offcpu_profiles(FILE *out, const struct capture *c, const uint32_t *ivs, uint32_t niv,
			    const uint32_t *frame_index, uint32_t empty_index, uint32_t *path,
			    bool *first, uint32_t *nprofiles, uint32_t *active, uint64_t *best,
			    bool pick_active)
{
	uint32_t i, j, end;

	for (i = 0; i < niv; i = end) {
		uint32_t th = c->intervals[ivs[i]].thread;
		uint64_t total = 0;
		char name[320];

		for (end = i; end < niv && c->intervals[ivs[end]].thread == th; end++)
			total += c->intervals[ivs[end]].weight;
		formats__thread_label(c, th, name, sizeof(name) - 9);
		strcat(name, " off-CPU");
		fputs(*first ? "\n{\"type\":\"sampled\",\"name\":" : ",\n{\"type\":\"sampled\",\"name\":",
		      out);
		*first = false;
		formats__json_string(out, name);
		fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%" PRIu64
			     ",\n\"samples\":[",
			total);
		for (j = i; j < end; j++)
			put_stack(out, c, c->intervals[ivs[j]].stack, frame_index, empty_index, path,
				  j == i);
		fputs("],\n\"weights\":[", out);
		for (j = i; j < end; j++)
			fprintf(out, j == i ? "%" PRIu64 : ",%" PRIu64, c->intervals[ivs[j]].weight);
		fputs("]}", out);
		if (pick_active && total > *best) {
			*best = total;
			*active = *nprofiles;
		}
		(*nprofiles)++;
	}
}

/* Remove open[k] of open[n]. */
static void stack__remove(uint32_t *open, uint32_t n, uint32_t k)
{
	memmove(&open[k], &open[k + 1], (n - k - 1) * sizeof(*open));
}

/* The latest of open[n] of site, or n when none. */
static uint32_t stack__find(const struct capture *c, const uint32_t *open, uint32_t n, uint32_t site)
{
	for (uint32_t k = n; k-- > 0;)
		if (c->probe_records[open[k]].site == site)
			return k;
	return n;
}

static void zone_event(FILE *out, char type, uint32_t frame, uint64_t at, bool *first)
{
	fprintf(out, "%s{\"type\":\"%c\",\"frame\":%" PRIu32 ",\"at\":%" PRIu64 "}",
		*first ? "" : ",", type, frame, at);
	*first = false;
}

/*
 * Per thread with paired zones, one "evented" profile "<comm-tid> zones"
 * (unit nanoseconds, times from the thread's first zone).  Pairing is
 * the capture's one rule (capture/probe_pairs.h); unpaired, unmatched and
 * broken begins and ends are left out.
 * speedscope needs frames closed in the order opened: an end under zones
 * of other sites opened after it closes those, closes its own and opens
 * them again at the same time (each such split counted in *split).
 * Frame of site s: site_frame + s.  Returns 0 or -ENOMEM.
 */
static int zone_profiles(FILE *out, const struct capture *c, uint32_t site_frame, bool *first,
			 uint32_t *nprofiles, uint64_t *nzones, uint64_t *split)
{
	uint32_t n = c->nprobe_records, *idx, *open = malloc(((size_t)n + 1) * sizeof(*open));
	struct capture_probe_pairs pp = { 0 };
	const uint8_t *state;
	int err = -ENOMEM;

	if (!open || capture_probe_pairs__init(&pp, c))
		goto cleanup;
	idx = pp.order;
	state = pp.state;
	for (uint32_t i = 0, end; i < n; i = end) {
		uint32_t th = c->probe_records[idx[i]].thread, nopen = 0, k;
		uint64_t t0 = UINT64_MAX, last = 0;
		bool first_event = true;
		char name[320];

		for (end = i; end < n && c->probe_records[idx[end]].thread == th; end++)
			;
		/* only paired begins are opened */
		for (uint32_t j = i; j < end; j++) {
			const struct capture_probe_record *r = &c->probe_records[idx[j]];

			if (state[idx[j]] != CAPTURE_PAIR_ZONE)
				continue;
			if (r->kind == CAPTURE_PROBE_ZONE_BEGIN) {
				t0 = r->time_ns < t0 ? r->time_ns : t0;
				(*nzones)++;
			} else {
				last = r->time_ns > last ? r->time_ns : last;
			}
		}
		if (t0 == UINT64_MAX)
			continue;
		formats__thread_label(c, th, name, sizeof(name) - 7);
		strcat(name, " zones");
		fputs(*first ? "\n{\"type\":\"evented\",\"name\":"
			     : ",\n{\"type\":\"evented\",\"name\":",
		      out);
		*first = false;
		formats__json_string(out, name);
		fprintf(out, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%" PRIu64
			     ",\n\"events\":[",
			last - t0);
		nopen = 0;
		for (uint32_t j = i; j < end; j++) {
			const struct capture_probe_record *r = &c->probe_records[idx[j]];
			uint64_t at = r->time_ns - t0;

			if (state[idx[j]] != CAPTURE_PAIR_ZONE)
				continue;
			if (r->kind == CAPTURE_PROBE_ZONE_BEGIN) {
				zone_event(out, 'O', site_frame + r->site, at, &first_event);
				open[nopen++] = idx[j];
				continue;
			}
			k = stack__find(c, open, nopen, r->site);
			for (uint32_t m = nopen; m-- > k + 1;) {
				zone_event(out, 'C', site_frame + c->probe_records[open[m]].site, at,
					   &first_event);
				(*split)++;
			}
			zone_event(out, 'C', site_frame + r->site, at, &first_event);
			stack__remove(open, nopen--, k);
			for (uint32_t m = k; m < nopen; m++)
				zone_event(out, 'O', site_frame + c->probe_records[open[m]].site, at,
					   &first_event);
		}
		fputs("]}", out);
		(*nprofiles)++;
	}
	err = 0;
cleanup:
	capture_probe_pairs__release(&pp);
	free(open);
	return err;
}

int speedscope__export(const struct capture *c, uint32_t event, FILE *out,
		       struct formats_note *note)
{
	char **labels = NULL;
	uint32_t *order = NULL, *frame_index = NULL, *first_frame = NULL, *path = NULL;
	uint32_t nshared = 0, empty_index = CAPTURE_NONE, i, s, maxdepth = 1, active = 0;
	uint32_t nprofiles = 0, *ivs = NULL, niv = 0, nincomplete = 0;
	struct keymap by_label = { 0 };
	bool ns_unit = true, first;
	uint64_t best = 0, nzones = 0, nsplit = 0;
	int err;

	err = formats__labels_new(c, &labels);
	if (err)
		goto cleanup;
	err = formats__samples_by_thread(c, &order);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	frame_index = malloc(((size_t)c->nframes + 1) * sizeof(*frame_index));
	first_frame = malloc(((size_t)c->nframes + 2) * sizeof(*first_frame));
	if (!frame_index || !first_frame)
		goto cleanup;
	/* shared frames: one per distinct label, in frame order */
	for (i = 0; i < c->nframes; i++) {
		uint64_t h = keymap__hash_str(labels[i]), k;
		uint32_t v;

		for (k = 0;; k++) {
			if (!keymap__get(&by_label, h, k, &v)) {
				if (keymap__put(&by_label, h, k, nshared))
					goto cleanup;
				first_frame[nshared] = i;
				v = nshared++;
				break;
			}
			if (!strcmp(labels[first_frame[v]], labels[i]))
				break;
		}
		frame_index[i] = v;
	}
	/* complete off-CPU intervals, by thread and start */
	ivs = malloc(((size_t)c->nintervals + 1) * sizeof(*ivs));
	if (!ivs)
		goto cleanup;
	for (i = 0; i < c->nintervals; i++) {
		uint32_t d = 1;

		if (c->intervals[i].flags & EDGE_FLAGS) {
			nincomplete++;
			continue;
		}
		ivs[niv++] = i;
		for (s = c->intervals[i].stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > maxdepth)
			maxdepth = d;
		if (c->intervals[i].stack == CAPTURE_NONE)
			empty_index = nshared;
	}
	qsort_r(ivs, niv, sizeof(*ivs), interval_cmp, (void *)c);
	for (i = 0; i < c->nsamples; i++) {
		uint32_t d = 1;

		if (c->samples[i].event != event)
			continue;
		for (s = c->samples[i].stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
			d++;
		if (d > maxdepth)
			maxdepth = d;
		if (c->samples[i].stack == CAPTURE_NONE)
			empty_index = nshared;
		if (!formats__sample_ns(&c->events[event], c, &c->samples[i]) &&
		    c->samples[i].weight)
			ns_unit = false;
	}
	path = malloc((size_t)maxdepth * sizeof(*path));
	if (!path)
		goto cleanup;

	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
	      "\"exporter\":\"microscope\",\"name\":",
	      out);
	{
		const char *cmd = capture__meta(c, "command");
		char name[600];

		snprintf(name, sizeof(name), "%s (%s)", cmd ? cmd : "microscope capture",
			 capture__string(c, c->events[event].name));
		formats__json_string(out, name);
	}
	fputs(",\n\"shared\":{\"frames\":[", out);
	for (i = 0; i < nshared; i++) {
		const struct capture_frame *f = &c->frames[first_frame[i]];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", out);
		formats__json_string(out, labels[first_frame[i]]);
		if (f->file) {
			fputs(",\"file\":", out);
			formats__json_string(out, capture__string(c, f->file));
			if (f->line)
				fprintf(out, ",\"line\":%" PRIu32, f->line);
		}
		fputc('}', out);
	}
	if (empty_index != CAPTURE_NONE)
		fputs(nshared ? ",\n{\"name\":\"[empty stack]\"}" : "\n{\"name\":\"[empty stack]\"}",
		      out);
	/* then one frame per probe site, named as the site */
	for (i = 0; i < c->nprobe_sites; i++) {
		fputs(nshared || empty_index != CAPTURE_NONE || i ? ",\n{\"name\":" : "\n{\"name\":",
		      out);
		formats__json_string(out, capture__string(c, c->probe_sites[i].name));
		fputc('}', out);
	}
	fputs("\n]},\n\"profiles\":[", out);

	/* one profile per thread that has samples of event */
	first = true;
	for (i = 0; i < c->nsamples;) {
		uint32_t th = c->samples[order[i]].thread, j, end = i, n;
		uint64_t total = 0, nev = 0;
		char name[300];
		bool first_sample = true;

		while (end < c->nsamples && c->samples[order[end]].thread == th)
			end++;
		for (j = i; j < end; j++) {
			const struct capture_sample *smp = &c->samples[order[j]];

			if (smp->event == event && ++nev)
				total += ns_unit ? formats__sample_ns(&c->events[event], c, smp)
						 : smp->weight;
		}
		if (!nev) {
			i = end;
			continue;
		}
		formats__thread_label(c, th, name, sizeof(name));
		fputs(first ? "\n{\"type\":\"sampled\",\"name\":" : ",\n{\"type\":\"sampled\",\"name\":",
		      out);
		first = false;
		formats__json_string(out, name);
		fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64
			     ",\n\"samples\":[",
			ns_unit ? "nanoseconds" : "none", total);
		for (j = i; j < end; j++) {
			const struct capture_sample *smp = &c->samples[order[j]];
			uint32_t d;

			if (smp->event != event)
				continue;
			n = 0;
			for (s = smp->stack; s != CAPTURE_NONE; s = c->stacks[s].parent)
				path[n++] = frame_index[c->stacks[s].frame];
			if (!n)
				path[n++] = empty_index;
			fputs(first_sample ? "[" : ",[", out);
			first_sample = false;
			for (d = n; d-- > 0;)
				fprintf(out, d + 1 == n ? "%" PRIu32 : ",%" PRIu32, path[d]);
			fputc(']', out);
		}
		fputs("],\n\"weights\":[", out);
		first_sample = true;
		for (j = i; j < end; j++) {
			const struct capture_sample *smp = &c->samples[order[j]];

			if (smp->event != event)
				continue;
			fprintf(out, first_sample ? "%" PRIu64 : ",%" PRIu64,
				ns_unit ? formats__sample_ns(&c->events[event], c, smp)
					: smp->weight);
			first_sample = false;
		}
		fputs("]}", out);
		if (total > best) {
			best = total;
			active = nprofiles;
		}
		nprofiles++;
		i = end;
	}
	/*
	 * speedscope opens on the profile with the most time: an off-CPU one
	 * competes when the on-CPU profiles are in nanoseconds too (a sleeper's
	 * waits outweigh its one start-up sample), never against bare counts.
	 */
	offcpu_profiles(out, c, ivs, niv, frame_index, empty_index, path, &first, &nprofiles,
			&active, &best, !nprofiles || ns_unit);
	err = zone_profiles(out, c, nshared + (empty_index != CAPTURE_NONE), &first, &nprofiles,
			    &nzones, &nsplit);
	if (err)
		goto cleanup;
	if (!nprofiles) /* no samples: one empty profile, which speedscope opens */
		fprintf(out, "\n{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"%s\","
			"\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}",
			ns_unit ? "nanoseconds" : "none");
	fprintf(out, "\n],\n\"activeProfileIndex\":%" PRIu32 "}\n", active);
	if (nzones)
		formats_note__add(note, "%" PRIu64 " probe zones as per-thread 'zones' evented "
				  "profiles (%" PRIu64 " splits where zones cross: speedscope nests "
				  "them); %" PRIu64 " probe records not carried (unmatched or broken "
				  "begins and ends, marks)",
				  nzones, nsplit, (uint64_t)c->nprobe_records - 2 * nzones);
	if (niv)
		formats_note__add(note, "%u off-CPU intervals as per-thread 'off-CPU' profiles "
				  "(nanoseconds): their times, state, cause and waker not carried",
				  niv);
	if (nincomplete)
		formats_note__add(note, "%u off-CPU intervals cut by the recording's edges left "
				  "out (speedscope has no clipped mark; report --off-cpu, folded "
				  "and pprof count their part inside the window)", nincomplete);
	if (!nzones && c->nprobe_records)
		formats_note__add(note, "%u probe records (zones, marks) not carried (convert to "
				  "chrome keeps them)", c->nprobe_records);
	for (i = 0; i < c->nsamples; i++)
		if (c->samples[i].event != event) {
			formats_note__add(note, "speedscope gets one event ('%s'); others not "
				  "exported (use --event)", capture__string(c, c->events[event].name));
			break;
		}
	if (!ns_unit)
		formats_note__add(note, "weights without a duration exported as plain counts");
	err = 0;
cleanup:
	formats__labels_free(labels, c->nframes);
	keymap__release(&by_label);
	free(order);
	free(frame_index);
	free(first_frame);
	free(path);
	free(ivs);
	return err;
}
