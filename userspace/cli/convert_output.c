// SPDX-License-Identifier: MIT
/*
 * The outputs of `microscope convert` (see convert_output.h): each writer
 * calls capture/formats/ or analysis/ and notes on in->note what its
 * format cannot hold (other events, clipped intervals, lost samples).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/format.h"
#include "capture/formats/formats.h"
#include "commands.h"
#include "convert_output.h"

/* The events other than the query's that have samples: what one-event formats drop. */
static uint32_t convert_other_events(const struct capture *c, uint32_t event)
{
	uint32_t i, n = 0;
	bool *has = calloc((size_t)c->nevents + 1, 1);

	if (!has)
		return 0;
	for (i = 0; i < c->nsamples; i++)
		has[c->samples[i].event] = true;
	for (i = 0; i < c->nevents; i++)
		n += i != event && has[i];
	free(has);
	return n;
}

/*
 * Note the events a one-event format dropped: their names, and how to get
 * them (another --event) unless the user already chose one.
 */
static void convert_note_other_events(const struct convert_input *in, const char *verb)
{
	const struct capture *c = in->capture;
	uint32_t i, others = convert_other_events(c, in->query.event);
	char names[160] = "";
	size_t used = 0;
	bool *has;

	if (in->query.wall) {
		formats_note__add(in->note,
				  "wall: off-CPU ns plus %s samples x %llu ns (their "
				  "period: an estimate of on-CPU time)",
				  capture__string(c, c->events[in->query.wall_event].name),
				  (unsigned long long)c->events[in->query.wall_event].period);
		return;
	}
	if (!others)
		return;
	has = calloc((size_t)c->nevents + 1, 1);
	if (!has)
		return;
	for (i = 0; i < c->nsamples; i++)
		has[c->samples[i].event] = true;
	for (i = 0; i < c->nevents && used < sizeof(names); i++)
		if (i != in->query.event && has[i])
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 used ? ", " : "",
						 capture__string(c, c->events[i].name));
	free(has);
	if (in->event_chosen)
		formats_note__add(in->note, "only event %s %s (one event per file; %s also has %s)",
				  capture__string(c, c->events[in->query.event].name), verb,
				  in->path, names);
	else
		formats_note__add(in->note, "%u other event%s not %s (%s; use --event)", others,
				  others == 1 ? "" : "s", verb, names);
}

/* Whether event has any interval rows (off-CPU). */
bool convert_output__event_has_intervals(const struct capture *c, uint32_t event)
{
	uint32_t i;

	for (i = 0; i < c->nintervals; i++)
		if (c->intervals[i].event == event)
			return true;
	return false;
}

/* Folded stacks carry one event, names and weights only. */
static void convert_note_folded_losses(const struct convert_input *in)
{
	const struct capture *c = in->capture;
	bool times = false, lines = false, threads = false;
	uint32_t i;

	for (i = 0; i < c->nsamples && !times; i++)
		times = c->samples[i].time_ns != 0;
	for (i = 0; i < c->nsamples && !threads; i++)
		threads = c->samples[i].thread != CAPTURE_NONE;
	/* an interpreted frame's name holds its line ("f (app.py:3)", as
	 * py-spy's), unless --granularity function drops it */
	for (i = 0; i < c->nframes && !lines; i++)
		lines = (c->frames[i].line || c->frames[i].file) &&
			!(c->frames[i].flags & CAPTURE_FRAME_F_INTERPRETED);
	if (times || lines || (threads && !in->query.per_thread))
		formats_note__add(
		    in->note, "folded keeps no %s%s%s", times ? "sample times, " : "",
		    lines ? "native source lines, " : "",
		    threads && !in->query.per_thread ? "threads (--threads keeps them), " : "");
	convert_note_other_events(in, "exported");
	/* drop the last ", " of the first part */
	{
		char *p = strstr(in->note->text, ", ;");

		if (p)
			memmove(p, p + 2, strlen(p + 2) + 1);
		p = in->note->text + strlen(in->note->text);
		if (p - in->note->text >= 2 && !strcmp(p - 2, ", "))
			p[-2] = '\0';
	}
}

/* Folded stacks (flamegraph.pl, inferno, speedscope): see analysis_tree__folded. */
static int convert_folded(const struct convert_input *in, FILE *out)
{
	struct analysis_names *names = NULL;
	struct analysis_tree *tree = NULL;
	char *text = NULL;
	size_t len = 0;
	int err;

	if (in->query.event == CAPTURE_NONE) {
		fprintf(stderr, "microscope convert: %s: the capture has no events\n", in->path);
		return -EINVAL;
	}
	names = analysis_names__new_opts(in->capture, &(struct analysis_key_options){
						 .granularity = in->granularity });
	if (!names) {
		err = -errno;
		goto cleanup;
	}
	tree = analysis_tree__new(names, &in->query);
	if (!tree) {
		err = -errno;
		goto cleanup;
	}
	err = analysis_tree__folded(tree, &text, &len);
	if (err)
		goto cleanup;
	convert_note_folded_losses(in);
	if (len && fwrite(text, 1, len, out) != len)
		err = file__stream_error();
cleanup:
	free(text);
	analysis_tree__free(tree);
	analysis_names__free(names);
	return err;
}

static int convert_need_event(const struct convert_input *in)
{
	if (in->query.event != CAPTURE_NONE)
		return 0;
	fprintf(stderr, "microscope convert: %s: the capture has no events\n", in->path);
	return -EINVAL;
}

static int convert_pprof(const struct convert_input *in, FILE *out)
{
	void *buf = NULL;
	size_t len = 0;
	int err = pprof__export(in->capture, &buf, &len, in->note);

	if (!err && len && fwrite(buf, 1, len, out) != len)
		err = file__stream_error();
	free(buf);
	return err;
}

static int convert_chrome(const struct convert_input *in, FILE *out)
{
	int err = convert_need_event(in);

	return err ? err : chrome_trace__export(in->capture, in->query.event, out, in->note);
}

static int convert_speedscope(const struct convert_input *in, FILE *out)
{
	int err = convert_need_event(in);

	return err ? err : speedscope__export(in->capture, in->query.event, out, in->note);
}

/* The flame graph of the query's tree; also used by `report --svg`. */
int convert__write_svg(const struct capture *c, const struct analysis_query *q,
		       unsigned int granularity, const char *title, FILE *out)
{
	struct analysis_names *names = NULL;
	struct analysis_tree *tree = NULL;
	char *text = NULL;
	size_t len = 0;
	int err;

	names = analysis_names__new_opts(c, &(struct analysis_key_options){
					    .granularity = (enum analysis_granularity)granularity });
	if (!names) {
		err = -errno;
		goto cleanup;
	}
	tree = analysis_tree__new(names, q);
	if (!tree) {
		err = -errno;
		goto cleanup;
	}
	err = analysis_tree__flamegraph_svg(
	    tree, title, capture__string(c, c->events[q->event].unit), &text, &len);
	if (!err && len && fwrite(text, 1, len, out) != len)
		err = file__stream_error();
cleanup:
	free(text);
	analysis_tree__free(tree);
	analysis_names__free(names);
	return err;
}

static int convert_svg(const struct convert_input *in, FILE *out)
{
	const char *cmd = capture__meta(in->capture, "command");
	char title[300];
	int err = convert_need_event(in);

	if (err)
		return err;
	snprintf(title, sizeof(title), "Flame graph: %s (%s)", cmd ? cmd : in->path,
		 capture__string(in->capture, in->capture->events[in->query.event].name));
	err = convert__write_svg(in->capture, &in->query, in->granularity, title, out);
	if (!err)
		convert_note_other_events(in, "drawn");
	return err;
}

/* The capture itself (an import sealed, or the input copied). */
int convert_output__bytes(const struct convert_input *in, FILE *out)
{
	if (in->len && fwrite(in->bytes, 1, in->len, out) != in->len)
		return file__stream_error();
	return 0;
}

/*
 * The frames table, one tab-separated line per frame row in id order:
 *	id module_path build_id address(hex) flags function file line
 * flags are letters: K kernel, I inline, T truncation, U unsymbolized,
 * R return address.  Inline frames of one address follow its out-of-line
 * frame.  For scripts and tests that compare lines with addr2line.
 */
static int convert_frames(const struct convert_input *in, FILE *out)
{
	const struct capture *c = in->capture;
	uint32_t i;

	fputs("#id\tmodule\tbuild_id\taddress\tflags\tfunction\tfile\tline\n", out);
	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *f = &c->frames[i];
		const struct capture_module *m =
		    f->module == CAPTURE_NONE ? NULL : &c->modules[f->module];
		char flags[8];
		int k = 0;

		if (f->flags & CAPTURE_FRAME_F_KERNEL)
			flags[k++] = 'K';
		if (f->flags & CAPTURE_FRAME_F_INLINE)
			flags[k++] = 'I';
		if (f->flags & CAPTURE_FRAME_F_TRUNCATION)
			flags[k++] = 'T';
		if (f->flags & CAPTURE_FRAME_F_UNSYMBOLIZED)
			flags[k++] = 'U';
		if (f->flags & CAPTURE_FRAME_F_RETURN)
			flags[k++] = 'R';
		if (!k)
			flags[k++] = '-';
		flags[k] = '\0';
		fprintf(out, "%u\t%s\t%s\t0x%llx\t%s\t%s\t%s\t%u\n", i,
			m ? capture__string(c, m->path) : "",
			m ? capture__string(c, m->build_id) : "", (unsigned long long)f->address,
			flags, capture__string(c, f->function), capture__string(c, f->file),
			f->line);
	}
	return 0;
}

/* Order matters for extensions: the first row whose suffix matches wins. */
static const struct convert_format convert_formats[] = {
    {
	.name = "folded",
	.extensions = {".folded", ".txt", NULL},
	.description = "folded stacks, one \"root;...;leaf weight\" line per stack",
	.write = convert_folded,
    },
    {
	.name = "pprof",
	.extensions = {".pb.gz", ".pprof", ".pb", NULL},
	.description = "gzip'd pprof protobuf (go tool pprof)",
	.write = convert_pprof,
    },
    {
	.name = "speedscope",
	.extensions = {".speedscope.json", NULL},
	.description = "speedscope JSON, a sampled profile per thread",
	.write = convert_speedscope,
    },
    {
	.name = "chrome",
	.extensions = {".trace.json", ".json", NULL},
	.description = "Chrome trace event JSON (Perfetto, chrome://tracing, speedscope)",
	.write = convert_chrome,
    },
    {
	.name = "svg",
	.extensions = {".svg", NULL},
	.description = "flame graph SVG with hover details and search",
	.write = convert_svg,
    },
    {
	.name = "capture",
	.extensions = {".msc", NULL},
	.description = "microscope capture (e.g. of an imported profile)",
	.write = convert_output__bytes,
    },
    {
	.name = "frames",
	.extensions = {".frames.tsv", NULL},
	.description = "the frames table: id, module, build ID, address, flags, function, "
		       "file, line (tab-separated)",
	.write = convert_frames,
    },
};

#define CONVERT_NFORMATS (sizeof(convert_formats) / sizeof(convert_formats[0]))

const struct convert_format *convert_output__by_name(const char *name)
{
	size_t i;

	for (i = 0; i < CONVERT_NFORMATS; i++)
		if (!strcmp(convert_formats[i].name, name))
			return &convert_formats[i];
	return NULL;
}

const struct convert_format *convert_output__by_extension(const char *path)
{
	size_t i, j, lp = strlen(path);

	for (i = 0; i < CONVERT_NFORMATS; i++) {
		for (j = 0; convert_formats[i].extensions[j]; j++) {
			const char *ext = convert_formats[i].extensions[j];
			size_t le = strlen(ext);

			if (lp > le && !strcasecmp(path + lp - le, ext))
				return &convert_formats[i];
		}
	}
	return NULL;
}

/* Run fmt's writer into out_path, published by file_out (file_io.h); a
 * message on stderr on failure. */
const struct convert_format *convert_output__at(size_t i)
{
	return i < CONVERT_NFORMATS ? &convert_formats[i] : NULL;
}
