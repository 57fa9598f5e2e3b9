// SPDX-License-Identifier: MIT
/*
 * microscope convert: read a capture, pprof or folded file and write it in
 * another format.  An adapter: each output format is one row of
 * convert_formats[] naming its --to value, the output extensions that select
 * it, and a writer calling capture/formats/ or analysis/; each input format
 * one row of convert_inputs[] with an importer that fills a capture_builder,
 * which is sealed and reopened through the capture validator.
 *
 * A file output is published by file_out (capture/file_io.h): written to a
 * 0600 OUT.tmp.XXXXXX in OUT's directory, fsync'd, renamed over OUT; a
 * symlink at OUT is refused; a failed or interrupted conversion leaves no
 * OUT and no temporary.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/format.h"
#include "capture/limits.h"
#include "capture/formats/formats.h"
#include "cli_util.h"
#include "commands.h"
#include "input.h"
#include "scope_options.h"
#include "diff.h"

/* What a writer gets: the open capture and the query the options built. */
struct convert_input {
	const char *path; /* the capture's path, for messages */
	const struct capture *capture;
	struct analysis_query query; /* event chosen, per_thread from --threads */
	const void *bytes;	     /* the capture file's bytes */
	size_t len;
	struct formats_note *note; /* what the conversion lost, for the caller to print */
	bool event_chosen;	   /* --event or --weight named the event */
};

/*
 * A writer puts the whole output on out and returns 0, or -errno (it need
 * not check out's write errors: the caller flushes and checks).  It prints
 * no message; the caller names the file and strerror(-err).
 */
typedef int (*convert_write_fn)(const struct convert_input *in, FILE *out);

struct convert_format {
	const char *name;	   /* --to value */
	const char *extensions[4]; /* output suffixes that select it, NULL-terminated */
	const char *description;   /* for --help */
	convert_write_fn write;
};

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
		formats_note__add(in->note, "wall: off-CPU ns plus %s samples x %llu ns (their "
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
static bool convert_event_has_intervals(const struct capture *c, uint32_t event)
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
	for (i = 0; i < c->nframes && !lines; i++)
		lines = c->frames[i].line || c->frames[i].file;
	if (times || lines || (threads && !in->query.per_thread))
		formats_note__add(in->note, "folded keeps no %s%s%s",
				  times ? "sample times, " : "", lines ? "source lines, " : "",
				  threads && !in->query.per_thread ? "threads (--threads keeps them), "
								  : "");
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
	names = analysis_names__new(in->capture);
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
		err = -EIO;
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
		err = -EIO;
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
int convert__write_svg(const struct capture *c, const struct analysis_query *q, const char *title,
		       FILE *out)
{
	struct analysis_names *names = NULL;
	struct analysis_tree *tree = NULL;
	char *text = NULL;
	size_t len = 0;
	int err;

	names = analysis_names__new(c);
	if (!names) {
		err = -errno;
		goto cleanup;
	}
	tree = analysis_tree__new(names, q);
	if (!tree) {
		err = -errno;
		goto cleanup;
	}
	err = analysis_tree__flamegraph_svg(tree, title,
					    capture__string(c, c->events[q->event].unit), &text,
					    &len);
	if (!err && len && fwrite(text, 1, len, out) != len)
		err = -EIO;
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
	err = convert__write_svg(in->capture, &in->query, title, out);
	if (!err)
		convert_note_other_events(in, "drawn");
	return err;
}

/* The capture itself (an import sealed, or the input copied). */
static int convert_capture(const struct convert_input *in, FILE *out)
{
	if (in->len && fwrite(in->bytes, 1, in->len, out) != in->len)
		return -EIO;
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
			m ? capture__string(c, m->path) : "", m ? capture__string(c, m->build_id) : "",
			(unsigned long long)f->address, flags, capture__string(c, f->function),
			capture__string(c, f->file), f->line);
	}
	return 0;
}

/* Order matters for extensions: the first row whose suffix matches wins. */
static const struct convert_format convert_formats[] = {
	{
		.name = "folded",
		.extensions = { ".folded", ".txt", NULL },
		.description = "folded stacks, one \"root;...;leaf weight\" line per stack",
		.write = convert_folded,
	},
	{
		.name = "pprof",
		.extensions = { ".pb.gz", ".pprof", ".pb", NULL },
		.description = "gzip'd pprof protobuf (go tool pprof)",
		.write = convert_pprof,
	},
	{
		.name = "speedscope",
		.extensions = { ".speedscope.json", NULL },
		.description = "speedscope JSON, a sampled profile per thread",
		.write = convert_speedscope,
	},
	{
		.name = "chrome",
		.extensions = { ".trace.json", ".json", NULL },
		.description = "Chrome trace event JSON (Perfetto, chrome://tracing, speedscope)",
		.write = convert_chrome,
	},
	{
		.name = "svg",
		.extensions = { ".svg", NULL },
		.description = "flame graph SVG with hover details and search",
		.write = convert_svg,
	},
	{
		.name = "capture",
		.extensions = { ".msc", NULL },
		.description = "microscope capture (e.g. of an imported profile)",
		.write = convert_capture,
	},
	{
		.name = "frames",
		.extensions = { ".frames.tsv", NULL },
		.description = "the frames table: id, module, build ID, address, flags, function, "
			       "file, line (tab-separated)",
		.write = convert_frames,
	},
};

/*
 * An importer fills b from the input's bytes; on -EBADMSG err says why.
 * NULL for the capture format, which is opened directly.
 */
typedef int (*convert_import_fn)(const void *buf, size_t len, struct capture_builder *b,
				 struct formats_note *note, char *err, size_t errlen);

static int convert_import_folded(const void *buf, size_t len, struct capture_builder *b,
				 struct formats_note *note, char *err, size_t errlen)
{
	return folded__import(buf, len, b, note, err, errlen);
}

struct convert_input_format {
	const char *name; /* --from value */
	const char *extensions[4];
	convert_import_fn import;
};

static const struct convert_input_format convert_inputs[] = {
	{ .name = "capture", .extensions = { ".msc", NULL }, .import = NULL },
	{ .name = "pprof", .extensions = { ".pb.gz", ".pprof", ".pb", NULL },
	  .import = pprof__import },
	{ .name = "folded", .extensions = { ".folded", NULL }, .import = convert_import_folded },
	{ .name = "perf-script", .extensions = { ".perf-script", ".script", ".perf", NULL },
	  .import = perf_script__import },
};

#define CONVERT_INPUT_FOLDED (&convert_inputs[2])
#define CONVERT_INPUT_PERF_SCRIPT (&convert_inputs[3])

#define CONVERT_NINPUTS (sizeof(convert_inputs) / sizeof(convert_inputs[0]))

static bool has_suffix(const char *path, const char *ext)
{
	size_t lp = strlen(path), le = strlen(ext);

	return lp > le && !strcasecmp(path + lp - le, ext);
}

/* --from name, else the extension, else the content (capture magic, gzip, text). */
static const struct convert_input_format *input_format(const char *from, const char *path,
						       const void *buf, size_t len)
{
	size_t i, j;

	for (i = 0; i < CONVERT_NINPUTS; i++) {
		if (from) {
			if (!strcmp(from, convert_inputs[i].name))
				return &convert_inputs[i];
			continue;
		}
		for (j = 0; convert_inputs[i].extensions[j]; j++)
			if (has_suffix(path, convert_inputs[i].extensions[j]))
				return &convert_inputs[i];
	}
	if (from)
		return NULL;
	if (len >= CAPTURE_MAGIC_LEN && !memcmp(buf, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN))
		return &convert_inputs[0];
	if (len >= 2 && ((const unsigned char *)buf)[0] == 0x1f &&
	    ((const unsigned char *)buf)[1] == 0x8b)
		return &convert_inputs[1];
	/* Text: perf script output by its sample headers, else folded stacks
	 * (a .txt file can be either). */
	if (perf_script__detect(buf, len))
		return CONVERT_INPUT_PERF_SCRIPT;
	return CONVERT_INPUT_FOLDED;
}

/*
 * Read the input (path, or stdin for "-") into *buf (malloc'd) and choose
 * its format.  A regular file's first bytes are checked before the rest is
 * read: a capture's header, the NUL byte binary data has where folded text
 * has none, the field number 0 no protobuf message starts with.  Every
 * read is bounded by the memory limit (capture/limits.h).  Returns 0, or
 * -errno after printing why.
 */
static int read_input(const char *path, const char *from, void **buf, size_t *len,
		      const struct convert_input_format **ifmt)
{
	unsigned char head[4096];
	char msg[600] = "";
	size_t got = 0;
	int err, consumed;

	*buf = NULL;
	*len = 0;
	consumed = file__read_head(path, head, sizeof(head), &got);
	err = consumed < 0 ? consumed : 0;
	if (!err) {
		const unsigned char *nul = memchr(head, '\0', got);

		*ifmt = input_format(from, path, head, got);
		if (!(*ifmt)->import) {
			err = capture__check_header(head, got, path, msg, sizeof(msg));
		} else if ((*ifmt)->import == convert_import_folded && nul) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg),
				 "%s: not a capture, pprof or folded file (binary data: a NUL "
				 "byte at offset %zu)",
				 path, (size_t)(nul - head));
		} else if ((*ifmt)->import == pprof__import && got &&
			   !(got >= 2 && head[0] == 0x1f && head[1] == 0x8b) && head[0] < 8) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg),
				 "%s: pprof: not a pprof profile: byte 0 is 0x%02x (protobuf "
				 "field number 0 does not exist)",
				 path, head[0]);
		}
	} else if (err == -ESPIPE) {
		err = 0; /* stdin or a pipe: read with the bound, then sniff */
	} else {
		snprintf(msg, sizeof(msg), "%s: %s", path, strerror(-err));
	}
	if (!err)
		err = file__read_bounded(path, capture_limits__max_memory(),
					 consumed > 0 ? head : NULL, consumed > 0 ? got : 0, buf,
					 len, msg, sizeof(msg));
	/* the first bytes only decided early refusals: the whole input decides
	 * the format (perf script's header comments may run past them) */
	if (!err)
		*ifmt = input_format(from, path, *buf, *len);
	if (err)
		fprintf(stderr, "microscope convert: %s\n", msg);
	return err;
}

#define CONVERT_NFORMATS (sizeof(convert_formats) / sizeof(convert_formats[0]))

static void convert_print_usage(FILE *f)
{
	size_t i, j;

	fputs("usage: microscope convert FILE [--to FORMAT] [--from FORMAT] [-o OUT] [--threads]\n"
	      "                          [--event NAME] [--look LOOK] [--weight W] [--complete-only]\n"
	      "                          [--pid PID] [--tid TID] [--comm NAME] [--module NAME]\n"
	      "                          [--container ID|NAME] [--cgroup PATH]\n"
	      "       microscope convert --diff BASE NEW [-o OUT.svg] [--event NAME] [--look LOOK]\n"
	      "\n"
	      "Read FILE (a capture, pprof or folded stacks; '-' for stdin; default\n"
	      "microscope.msc) and write it in\n"
	      "another format, to OUT or stdout (OUT absent or '-').  Without --to the\n"
	      "format follows OUT's extension; on stdout it is folded.  Without --from the\n"
	      "input format follows FILE's extension, else its content.  Imported profiles\n"
	      "pass the same validator as recordings.  What a conversion loses is printed\n"
	      "as one 'note:' line on stderr (docs/formats.md).  A file OUT is replaced\n"
	      "atomically.\n"
	      "\n"
	      "options:\n"
	      "  --to FORMAT       output format (below)\n"
	      "  --from FORMAT     input format: capture (.msc), pprof (.pb.gz, .pprof, .pb),\n"
	      "                    folded (.folded), perf-script (`perf script` output:\n"
	      "                    .perf-script, .script, .perf; other text is told\n"
	      "                    from folded stacks by its sample headers)\n"
	      "  -o, --output OUT  output file, '-' for stdout\n"
	      "  --threads         put a \"comm-tid\" root frame above each stack\n"
	      "  --look LOOK       logical (default), native (Python frames dropped) or python\n"
	      "                    (from the outermost Python frame in, interpreter hidden);\n"
	      "                    applies before any format\n"
	      "  --event NAME      the event to convert (default: the first with samples)\n"
	      "  --weight W        samples (CPU samples, the default), off-cpu-ns (off-CPU\n"
	      "                    intervals weighted by nanoseconds; needs record --off-cpu)\n"
	      "                    or wall (both in one tree, in ns: each CPU sample\n"
	      "                    weighs its period, an estimate; folded and svg)\n"
	      "  --diff BASE NEW   a differential flame graph (SVG): NEW's boxes colored by\n"
	      "                    the change of their share against BASE, red grew, blue\n"
	      "                    shrank\n"
	      "  --complete-only   with off-cpu-ns, leave out the intervals cut by the\n"
	      "                    recording's start or stop; by default they count their\n"
	      "                    part inside the window, under a leaf [clipped by the\n"
	      "                    recording window] (pprof: label clipped); folded and\n"
	      "                    svg only (pprof counts them labelled, speedscope\n"
	      "                    carries complete intervals, chrome draws all of them)\n"
	      "  --incomplete      accepted for old scripts: clipped intervals are counted\n"
	      "                    by default now\n"
	      "  --since WHEN, --until WHEN\n"
	      "                    FILE a segment directory (record --continuous): only\n"
	      "                    the segments and samples in [WHEN, WHEN): -10m (ago),\n"
	      "                    2026-12-02T14:00[:SS]Z or 14:00 (UTC), @SECONDS\n"
	      "  --pid PID, --tid TID, --comm NAME, --module NAME, --container ID|NAME,\n"
	      "  --cgroup PATH     keep only matching samples (repeatable; '!VALUE'\n"
	      "                    excludes; as in report)\n"
	      "  -h, --help        show this help\n"
	      "\n"
	      "A directory FILE written by record --continuous is read as one capture: its\n"
	      "valid segments merged; a segment being written, damaged or deleted while\n"
	      "read is noted on stderr and left out.\n"
	      "\n"
	      "formats:\n",
	      f);
	for (i = 0; i < CONVERT_NFORMATS; i++) {
		fprintf(f, "  %-10s %s (", convert_formats[i].name, convert_formats[i].description);
		for (j = 0; convert_formats[i].extensions[j]; j++)
			fprintf(f, "%s%s", j ? ", " : "", convert_formats[i].extensions[j]);
		fputs(")\n", f);
	}
}

static int convert_usage_error(const char *fmt, const char *arg)
{
	fputs("microscope convert: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs("\nusage: microscope convert FILE [--to FORMAT] [--from FORMAT] [-o OUT] [--threads] "
	      "[--event NAME]\n"
	      "                          [--look LOOK] [--weight W] [--complete-only]\n"
	      "Run 'microscope convert --help' for details.\n",
	      stderr);
	return 2;
}

static const struct convert_format *format_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < CONVERT_NFORMATS; i++)
		if (!strcmp(convert_formats[i].name, name))
			return &convert_formats[i];
	return NULL;
}

static const struct convert_format *format_by_extension(const char *path)
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
static int convert_to_file(const struct convert_format *fmt, const struct convert_input *in,
			   const char *out_path)
{
	struct file_out o;
	char msg[600] = "";
	FILE *f = NULL;
	int err;

	err = file_out__open(&o, out_path, msg, sizeof(msg));
	if (err)
		goto cleanup;
	f = file_out__stream(&o);
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	err = fmt->write(in, f);
	if (!err && (fflush(f) || ferror(f)))
		err = errno ? -errno : -EIO;
	if (fclose(f) && !err)
		err = -errno;
	f = NULL;
	if (err)
		goto cleanup;
	err = file_out__commit(&o, msg, sizeof(msg));
cleanup:
	if (f)
		fclose(f);
	file_out__abort(&o);
	if (err && msg[0])
		fprintf(stderr, "microscope convert: %s\n", msg);
	else if (err)
		fprintf(stderr, "microscope convert: %s: %s\n", out_path, strerror(-err));
	return err;
}

static int convert_to_stdout(const struct convert_format *fmt, const struct convert_input *in)
{
	int err = fmt->write(in, stdout);

	if (!err && (fflush(stdout) || ferror(stdout)))
		err = errno ? -errno : -EIO;
	if (err)
		fprintf(stderr, "microscope convert: writing to stdout: %s\n", strerror(-err));
	return err;
}

/*
 * --weight wall: CPU samples (x their period in ns) and off-CPU intervals
 * in one tree, for folded and svg.  The CPU event is the lowest-id other
 * event with samples in "samples" and a known period.
 */
static int convert_wall_query(const struct capture *c, struct analysis_query *q,
			      const char *path)
{
	uint32_t i, ev = CAPTURE_NONE;

	for (i = 0; i < c->nsamples; i++) {
		const struct capture_event *e = &c->events[c->samples[i].event];

		if (c->samples[i].event != q->event && c->samples[i].event < ev && e->period &&
		    !strcmp(capture__string(c, e->unit), "samples"))
			ev = c->samples[i].event;
	}
	if (ev == CAPTURE_NONE) {
		fprintf(stderr, "microscope convert: %s: --weight wall needs CPU samples with a "
			"known period beside the off-CPU intervals\n", path);
		return -EINVAL;
	}
	q->wall = true;
	q->wall_event = ev;
	return 0;
}

/* convert --diff BASE NEW [-o OUT.svg]: only the differential flame graph. */
static int convert_diff(int nfiles, char **files, const char *to, const char *out,
			const char *event, enum analysis_look_kind look)
{
	/* The graph is made first (its errors are its own), then written as the
	 * bytes of a file, atomically like every output. */
	static const struct convert_format svg_bytes = {
		.name = "svg",
		.extensions = { ".svg", NULL },
		.description = "differential flame graph SVG",
		.write = convert_capture,
	};
	struct cli_diff_options d = {
		.event = event,
		.look = look,
		.keys = { .granularity = ANALYSIS_GRANULARITY_FRAME },
	};
	struct convert_input in = { 0 };
	char *text = NULL;
	size_t len = 0;
	int status;

	if (nfiles != 2)
		return convert_usage_error("--diff takes two captures, BASE and NEW%s", "");
	if ((to && strcmp(to, "svg")) || (!to && out && !has_suffix(out, ".svg")))
		return convert_usage_error("--diff writes a differential flame graph: svg only, "
					   "not '%s'", to ? to : out);
	d.base = files[0];
	d.new_ = files[1];
	status = cli_diff__svg(&d, &text, &len);
	if (status)
		return status;
	in.bytes = text;
	in.len = len;
	status = (out ? convert_to_file(&svg_bytes, &in, out) : convert_to_stdout(&svg_bytes, &in))
			 ? 1
			 : 0;
	free(text);
	return status;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 'T' },
		{ "from", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads", no_argument, NULL, 't' },
		{ "event", required_argument, NULL, 'e' },
		{ "weight", required_argument, NULL, 'W' },
		{ "incomplete", no_argument, NULL, 'I' },
		{ "complete-only", no_argument, NULL, 'C' },
		{ "look", required_argument, NULL, 'L' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		SCOPE_LONGOPTS,
		{ "diff", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_input_range range = CLI_INPUT_ALL;
	const struct convert_format *fmt = NULL;
	bool diff = false, wall = false;
	const char *to = NULL, *from = NULL, *out = NULL, *event_name = NULL, *path;
	const struct convert_input_format *ifmt = NULL;
	struct convert_input in = { 0 };
	struct formats_note import_note = { "" }, export_note = { "" };
	struct capture_builder *b = NULL;
	struct capture *c = NULL;
	void *bytes = NULL, *sealed = NULL;
	size_t nbytes = 0, nsealed = 0;
	bool threads = false, incomplete = false, complete_only = false;
	struct analysis_look *look = NULL;
	enum analysis_look_kind look_kind = ANALYSIS_LOOK_LOGICAL;
	struct scope_options scope = { 0 };
	struct analysis_scope *view = NULL;
	uint32_t event;
	char err[512] = "";
	int ch, rc, status = 1;

	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'T':
			to = optarg;
			break;
		case 'F':
			from = optarg;
			if (!input_format(from, "", NULL, 0))
				return convert_usage_error("unknown input format '%s' (capture, pprof, "
							   "folded, perf-script)", from);
			break;
		case 'o':
			out = optarg;
			break;
		case 't':
			threads = true;
			break;
		case 'e':
			event_name = optarg;
			break;
		case 'W':
			if (!strcmp(optarg, "off-cpu-ns") || !strcmp(optarg, "wall"))
				event_name = "off-cpu";
			else if (strcmp(optarg, "samples"))
				return convert_usage_error(
				    "--weight takes samples, off-cpu-ns or wall, not '%s'", optarg);
			wall = !strcmp(optarg, "wall");
			break;
		case 'I':
			incomplete = true;
			break;
		case 'C':
			complete_only = true;
			break;
		case 'L':
			if (analysis_look__parse(optarg, &look_kind))
				return convert_usage_error(
					"--look takes logical, native or python, not '%s'", optarg);
			break;
		case 'S':
		case 'U':
			if (cli_input__set_range(&range, ch == 'S', optarg))
				return convert_usage_error("bad time '%s' (-10m, 2026-12-02T14:00Z, "
							   "14:00, @SECONDS)",
							   optarg);
			break;
		case 'D':
			diff = true;
			break;
		case 'h':
			convert_print_usage(stdout);
			return 0;
		case ':':
			return convert_usage_error("option '%s' needs a value", argv[optind - 1]);
		default: {
			int handled = scope_options__handle(&scope, ch, optarg, "convert");

			if (handled < 0) {
				scope_options__release(&scope);
				return handled == -EINVAL ? 2 : 1;
			}
			if (handled)
				break;
			/* optopt names a bad short option; for a long one it is 0. */
			char shortopt[3] = { '-', (char)optopt, '\0' }, hint[80], msg[160];

			scope_options__release(&scope);
			cli__option_hint(argv[optind - 1], longopts, hint, sizeof(hint));
			snprintf(msg, sizeof(msg), "unknown option '%%s'%s", hint);
			return convert_usage_error(msg, optopt ? shortopt : argv[optind - 1]);
		}
		}
	}
	if (out && !strcmp(out, "-"))
		out = NULL;
	if (diff) {
		scope_options__release(&scope);
		return convert_diff(argc - optind, argv + optind, to, out, event_name, look_kind);
	}
	if (optind < argc - 1)
		return convert_usage_error("one capture FILE, got '%s' too", argv[argc - 1]);
	/* No FILE: what `record` writes by default. */
	path = optind < argc ? argv[optind] : CLI_DEFAULT_CAPTURE;
	if (to) {
		fmt = format_by_name(to);
		if (!fmt)
			return convert_usage_error("unknown format '%s' (see --help)", to);
	} else if (out) {
		fmt = format_by_extension(out);
		if (!fmt)
			return convert_usage_error("cannot tell the format from '%s'; use --to",
						   out);
	} else {
		fmt = &convert_formats[0];
	}

	rc = cli_input__read_dir_range("convert", path, range, &bytes, &nbytes, err, sizeof(err));
	if (rc == -ENOTDIR) {
		rc = read_input(path, from, &bytes, &nbytes, &ifmt);
	} else if (rc) {
		if (err[0])
			fprintf(stderr, "microscope convert: %s\n", err);
		else
			fprintf(stderr, "microscope convert: %s: %s\n", path, strerror(-rc));
	} else {
		ifmt = input_format(from, path, bytes, nbytes);
	}
	if (rc)
		goto cleanup;
	/* Text formats hold no NUL byte: binary input (an ELF, perf.data) is not ours. */
	if ((ifmt->import == convert_import_folded || ifmt->import == perf_script__import) &&
	    memchr(bytes, '\0', nbytes)) {
		fprintf(stderr,
			"microscope convert: %s: not a capture, pprof or folded file (binary data: "
			"a NUL byte at offset %zu)\n",
			path, (size_t)((const char *)memchr(bytes, '\0', nbytes) - (const char *)bytes));
		goto cleanup;
	}
	if (ifmt->import) {
		b = capture_builder__new();
		if (!b) {
			fprintf(stderr, "microscope convert: %s: %s\n", path, strerror(errno));
			goto cleanup;
		}
		rc = ifmt->import(bytes, nbytes, b, &import_note, err, sizeof(err));
		if (!rc)
			rc = capture_builder__serialize(b, &sealed, &nsealed);
		if (rc) {
			const char *why = (rc == -EBADMSG || rc == -EFBIG) && err[0] ? err
					  : capture_builder__error(b)[0] ? capture_builder__error(b)
									  : strerror(-rc);

			fprintf(stderr, "microscope convert: %s: %s: %s\n", path, ifmt->name, why);
			goto cleanup;
		}
		free(bytes);
		bytes = sealed;
		nbytes = nsealed;
		sealed = NULL;
	}
	rc = capture__open_mem(bytes, nbytes, path, &c, err, sizeof(err));
	if (rc) {
		if (err[0])
			fprintf(stderr, "microscope convert: %s\n", err);
		else
			fprintf(stderr, "microscope convert: %s: %s\n", path, strerror(-rc));
		goto cleanup;
	}
	if (import_note.text[0])
		fprintf(stderr, "microscope convert: note: %s: %s\n", path, import_note.text);
	if (event_name) {
		if (analysis__find_event(c, event_name, &event)) {
			fprintf(stderr, "microscope convert: %s: no event '%s'%s\n", path,
				event_name,
				strcmp(event_name, "off-cpu") ? ""
							       : " (record with --off-cpu)");
			goto cleanup;
		}
	} else {
		event = analysis__default_event(c);
	}
	in.path = path;
	in.capture = c;
	in.bytes = bytes;
	in.len = nbytes;
	in.note = &export_note;
	in.event_chosen = event_name != NULL;
	/* The look applies before any format: every writer sees the view. */
	if (look_kind != ANALYSIS_LOOK_LOGICAL) {
		if (analysis_look__new(c, look_kind, &look)) {
			fprintf(stderr, "microscope convert: %s: out of memory\n", path);
			goto cleanup;
		}
		in.capture = analysis_look__capture(look);
	}
	/* Filters too (never process roots: pprof carries pid labels, speedscope
	 * one profile per thread). */
	if (scope.filter.nterms) {
		if (analysis_scope__new(in.capture, &scope.filter, false, &view)) {
			fprintf(stderr, "microscope convert: %s: out of memory\n", path);
			goto cleanup;
		}
		in.capture = analysis_scope__capture(view);
		if (!strcmp(fmt->name, "capture"))
			formats_note__add(&export_note, "filters ignored: capture copies the "
					  "capture's tables as they are");
	}
	analysis_query__init(&in.query, event);
	in.query.per_thread = threads;
	in.query.complete_only = complete_only;
	if (wall && convert_wall_query(c, &in.query, path))
		goto cleanup;

	if (incomplete && complete_only) {
		fprintf(stderr, "microscope convert: --incomplete and --complete-only "
			"contradict each other\n");
		goto cleanup;
	}
	if (incomplete)
		formats_note__add(&export_note, "--incomplete is the default now: intervals cut "
				  "by the recording's edges count their part inside it, marked "
				  "clipped (--complete-only leaves them out)");
	/* --complete-only changes folded and svg only (see --help): say so, never ignore it */
	if (complete_only && strcmp(fmt->name, "folded") && strcmp(fmt->name, "svg"))
		formats_note__add(&export_note,
				  "--complete-only ignored: %s %s", fmt->name,
				  !strcmp(fmt->name, "chrome") ? "draws every interval anyway"
				  : !strcmp(fmt->name, "capture") || !strcmp(fmt->name, "frames")
					  ? "copies the capture's tables as they are"
				  : !strcmp(fmt->name, "pprof")
					  ? "counts clipped intervals in samples labelled clipped"
					  : "carries complete off-CPU intervals only");
	else if (complete_only && (!c->nintervals || in.query.event == CAPTURE_NONE ||
				   !convert_event_has_intervals(c, in.query.event)))
		formats_note__add(&export_note, "--complete-only ignored: event %s has no off-CPU "
				  "intervals (use --weight off-cpu-ns)",
				  in.query.event == CAPTURE_NONE ? "(none)"
				  : capture__string(c, c->events[in.query.event].name));
	rc = out ? convert_to_file(fmt, &in, out) : convert_to_stdout(fmt, &in);
	if (!rc) {
		status = 0;
		if (export_note.text[0])
			fprintf(stderr, "microscope convert: note: %s: %s\n", fmt->name,
				export_note.text);
	}
cleanup:
	analysis_scope__free(view);
	scope_options__release(&scope);
	analysis_look__free(look);
	capture__free(c);
	capture_builder__free(b);
	free(bytes);
	free(sealed);
	return status;
}
