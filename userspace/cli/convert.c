// SPDX-License-Identifier: MIT
/*
 * microscope convert: read a capture, pprof or folded file and write it in
 * another format.  An adapter: each output format is one row of
 * convert_formats[] (convert_output.c) naming its --to value, the output
 * extensions that select it, and a writer calling capture/formats/ or
 * analysis/; each input format one row of convert_inputs[]
 * (convert_input.c) with an importer that fills a capture_builder, which
 * is sealed and reopened through the capture validator.
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
#include "capture/no_event.h"
#include "capture/output_check.h"
#include "capture/format.h"
#include "capture/limits.h"
#include "capture/formats/formats.h"
#include "cli_util.h"
#include "commands.h"
#include "input.h"
#include "scope_options.h"
#include "convert_input.h"
#include "convert_output.h"
#include "diff.h"


static void convert_print_usage(FILE *f)
{
	const struct convert_format *fmt;
	size_t i, j;

	fputs("usage: microscope convert FILE [--to FORMAT] [--from FORMAT] [-o OUT] [--threads]\n"
	      "                          [--event NAME] [--look LOOK] [--weight W] [--complete-only]\n"
	      "                          [--pid PID] [--tid TID] [--comm NAME] [--module NAME]\n"
	      "                          [--container ID|NAME] [--cgroup PATH] [--granularity G]\n"
	      "       microscope convert --diff BASE NEW [-o OUT.svg] [--event NAME] [--look LOOK]\n"
	      "                          [--granularity G] [--since T] [--until T]\n"
	      "                          [--base-since T] [--base-until T]\n"
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
	      "                    folded (.folded), perf-script (`perf script` output,\n"
	      "                    plain or any -F fields, with or without callchains:\n"
	      "                    .perf-script, .script, .perf; other text is told\n"
	      "                    from folded stacks by its sample headers and\n"
	      "                    callchain lines); speedscope, Chrome trace and SVG\n"
	      "                    are output formats only, refused as input\n"
	      "  -o, --output OUT  output file, '-' for stdout\n"
	      "  --threads         put a \"comm-tid\" root frame above each stack\n"
	      "  --look LOOK       logical (default), native (Python frames dropped) or python\n"
	      "                    (from the outermost Python frame in, interpreter hidden);\n"
	      "                    applies before any format\n"
	      "  --granularity G   what a frame of folded and svg is: frame (default, as\n"
	      "                    recorded), function, line, address or module (one frame\n"
	      "                    per binary or library, \"[kernel]\", a Python file; a run\n"
	      "                    of one module is one frame: app;libc.so.6;[kernel]);\n"
	      "                    as report --granularity\n"
	      "  --event NAME      the event to convert (default: the first with samples);\n"
	      "                    NAME#N: the Nth event of that name (a directory of\n"
	      "                    recordings at different rates)\n"
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
	      "                    2026-12-02T14:00[:SS]Z or 14:00 (UTC), @SECONDS; with\n"
	      "                    --diff, NEW's part, also as a time from its start\n"
	      "                    (1.5, 200ms: as report --since)\n"
	      "  --base-since T, --base-until T\n"
	      "                    with --diff: BASE's part, as --since/--until take it\n"
	      "                    (each side's times from its own start; whole by default)\n"
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
	for (i = 0; (fmt = convert_output__at(i)); i++) {
		fprintf(f, "  %-10s %s (", fmt->name, fmt->description);
		for (j = 0; fmt->extensions[j]; j++)
			fprintf(f, "%s%s", j ? ", " : "", fmt->extensions[j]);
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

/* -o OUT checked before any input is read (capture/output_check.h): 0, or
 * -errno with the reason printed. */
static int convert_check_output(const char *out)
{
	char msg[600];
	int err = capture__check_output(out, msg, sizeof(msg));

	if (err)
		fprintf(stderr, "microscope convert: %s\n", msg);
	return err;
}

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
			const char *event, enum analysis_look_kind look,
			enum analysis_granularity granularity, const char *const when[4])
{
	/* The graph is made first (its errors are its own), then written as the
	 * bytes of a file, atomically like every output. */
	static const struct convert_format svg_bytes = {
		.name = "svg",
		.extensions = { ".svg", NULL },
		.description = "differential flame graph SVG",
		.write = convert_output__bytes,
	};
	struct cli_diff_options d = {
		.cmd = "convert",
		.event = event,
		.look = look,
		.keys = { .granularity = granularity },
	};
	struct convert_input in = { 0 };
	char *text = NULL;
	size_t len = 0;
	int status;

	if (nfiles != 2)
		return convert_usage_error("--diff takes two captures, BASE and NEW%s", "");
	/* when: --since, --until (NEW), --base-since, --base-until (BASE) */
	for (int i = 0; i < 4; i++) {
		struct cli_diff_window *w = i < 2 ? &d.new_window : &d.base_window;

		if (when[i] && cli_diff_window__set(w, !(i & 1), when[i]))
			return convert_usage_error("bad time '%s' (1.5, 200ms from the start; "
						   "-10m, 2026-12-02T14:00Z, 14:00, @SECONDS)",
						   when[i]);
	}
	if (cli_diff_window__check(&d.new_window) || cli_diff_window__check(&d.base_window))
		return convert_usage_error("--until must be after --since%s", "");
	if ((to && strcmp(to, "svg")) || (!to && out && !convert_input__has_suffix(out, ".svg")))
		return convert_usage_error("--diff writes a differential flame graph: svg only, "
					   "not '%s'", to ? to : out);
	if (out && convert_check_output(out))
		return 2;
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
		{ "base-since", required_argument, NULL, 'b' },
		{ "base-until", required_argument, NULL, 'u' },
		SCOPE_LONGOPTS,
		{ "diff", no_argument, NULL, 'D' },
		{ "granularity", required_argument, NULL, 'G' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_input_range range = CLI_INPUT_ALL;
	/* --since, --until, --base-since, --base-until: read once --diff is known */
	const char *when[4] = { NULL, NULL, NULL, NULL };
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
	enum analysis_granularity granularity = ANALYSIS_GRANULARITY_FRAME;
	bool granularity_set = false;
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
			if (!convert_input__format(from, "", NULL, 0))
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
			when[0] = optarg;
			break;
		case 'U':
			when[1] = optarg;
			break;
		case 'b':
			when[2] = optarg;
			break;
		case 'u':
			when[3] = optarg;
			break;
		case 'D':
			diff = true;
			break;
		case 'G':
			if (!strcmp(optarg, "frame"))
				granularity = ANALYSIS_GRANULARITY_FRAME;
			else if (analysis_granularity__parse(optarg, &granularity))
				return convert_usage_error("--granularity takes frame, function, line, "
							   "address or module, not '%s'", optarg);
			granularity_set = true;
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
		return convert_diff(argc - optind, argv + optind, to, out, event_name, look_kind,
				    granularity, when);
	}
	if (when[2] || when[3])
		return convert_usage_error("--base-since and --base-until narrow a --diff's BASE%s",
					   "");
	for (int i = 0; i < 2; i++)
		if (when[i] && cli_input__set_range(&range, i == 0, when[i]))
			return convert_usage_error("bad time '%s' (-10m, 2026-12-02T14:00Z, "
						   "14:00, @SECONDS)",
						   when[i]);
	if (range.until_ns <= range.since_ns)
		return convert_usage_error("--until must be after --since%s", "");
	if (optind < argc - 1)
		return convert_usage_error("one capture FILE, got '%s' too", argv[argc - 1]);
	/* No FILE: what `record` writes by default. */
	path = optind < argc ? argv[optind] : CLI_DEFAULT_CAPTURE;
	if (to) {
		fmt = convert_output__by_name(to);
		if (!fmt)
			return convert_usage_error("unknown format '%s' (see --help)", to);
	} else if (out) {
		fmt = convert_output__by_extension(out);
		if (!fmt)
			return convert_usage_error("cannot tell the format from '%s'; use --to",
						   out);
	} else {
		fmt = convert_output__at(0);
	}
	/* Keys are what folded and svg draw; the others carry frames as they are. */
	if (granularity_set && strcmp(fmt->name, "folded") && strcmp(fmt->name, "svg")) {
		scope_options__release(&scope);
		return convert_usage_error("--granularity applies to folded and svg, not %s",
					   fmt->name);
	}

	/* Before the work, as record and symbolize do: a usage error. */
	if (out && convert_check_output(out)) {
		scope_options__release(&scope);
		return 2;
	}
	rc = cli_input__read_dir_range("convert", path, range, &bytes, &nbytes, err, sizeof(err));
	if (rc == -ENOTDIR) {
		rc = convert_input__read(path, from, &bytes, &nbytes, &ifmt);
	} else if (rc) {
		if (err[0])
			fprintf(stderr, "microscope convert: %s\n", err);
		else
			fprintf(stderr, "microscope convert: %s: %s\n", path, strerror(-rc));
		if (rc == -EDOM) /* a range for a file */
			status = 2;
	} else {
		ifmt = convert_input__format(from, path, bytes, nbytes);
	}
	if (rc)
		goto cleanup;
	/* Folded text holds no NUL byte: binary input (an ELF) is not ours.  perf
	 * script text skips a damaged line and tells binary data itself. */
	if (ifmt->text && ifmt->import != perf_script__import && memchr(bytes, '\0', nbytes)) {
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
	/* No sample taken: exports are empty, not errors (no_event.h); a
	 * capture output still copies the bytes read. */
	rc = capture__ensure_event(&c, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "microscope convert: %s: %s\n", path, err);
		goto cleanup;
	}
	if (import_note.text[0])
		fprintf(stderr, "microscope convert: note: %s: %s\n", path, import_note.text);
	if (event_name) {
		if (cli_input__find_event("convert", path, c, event_name, &event)) {
			status = 2; /* an --event the input has not: an argument error */
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
	in.granularity = granularity;
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
				   !convert_output__event_has_intervals(c, in.query.event)))
		formats_note__add(&export_note, "--complete-only ignored: event %s has no off-CPU "
				  "intervals (use --weight off-cpu-ns)",
				  in.query.event == CAPTURE_NONE ? "(none)"
				  : capture__string(c, c->events[in.query.event].name));
	/* folded and svg sum stacks: no time ranges for zones */
	if (c->nprobe_records && (!strcmp(fmt->name, "folded") || !strcmp(fmt->name, "svg")))
		formats_note__add(&export_note, "%u probe records (zones, marks) not carried "
				  "(convert to chrome keeps them)", c->nprobe_records);
	if (!c->nsamples && !c->nintervals && strcmp(fmt->name, "capture"))
		formats_note__add(&export_note, "%s has no samples: the output is empty "
				  "(`microscope report %s` shows the recording's counters)",
				  path, path);
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
