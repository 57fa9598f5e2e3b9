// SPDX-License-Identifier: MIT
/*
 * microscope convert: write a capture in another format.  An adapter: each
 * format is one row of convert_formats[] naming its --to value, the output
 * extensions that select it, and a writer; adding pprof or Chrome trace is
 * one more row whose writer calls capture/formats/ (or analysis/).
 *
 * A file output is published atomically: written to OUT.tmp.PID in OUT's
 * directory, fsync'd, renamed over OUT; a failed conversion leaves no OUT.
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
#include "commands.h"

/* What a writer gets: the open capture and the query the options built. */
struct convert_input {
	const char *path; /* the capture's path, for messages */
	const struct capture *capture;
	struct analysis_query query; /* event chosen, per_thread from --threads */
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

/* Folded stacks (flamegraph.pl, inferno, speedscope): see analysis_tree__folded. */
static int convert_folded(const struct convert_input *in, FILE *out)
{
	struct analysis_names *names = NULL;
	struct analysis_tree *tree = NULL;
	char *text = NULL;
	size_t len = 0;
	int err;

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
	if (len && fwrite(text, 1, len, out) != len)
		err = -EIO;
cleanup:
	free(text);
	analysis_tree__free(tree);
	analysis_names__free(names);
	return err;
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

static const struct convert_format convert_formats[] = {
	{
		.name = "folded",
		.extensions = { ".folded", ".txt", NULL },
		.description = "folded stacks, one \"root;...;leaf weight\" line per stack",
		.write = convert_folded,
	},
	{
		.name = "frames",
		.extensions = { ".frames.tsv", NULL },
		.description = "the frames table: id, module, build ID, address, flags, function, "
			       "file, line (tab-separated)",
		.write = convert_frames,
	},
};

#define CONVERT_NFORMATS (sizeof(convert_formats) / sizeof(convert_formats[0]))

static void convert_print_usage(FILE *f)
{
	size_t i, j;

	fputs("usage: microscope convert FILE [--to FORMAT] [-o OUT] [--threads] [--event NAME]\n"
	      "\n"
	      "Write the capture FILE in another format, to OUT or stdout (OUT absent or\n"
	      "'-').  Without --to the format follows OUT's extension; on stdout it is\n"
	      "folded.  A file OUT is replaced atomically.\n"
	      "\n"
	      "options:\n"
	      "  --to FORMAT       output format (below)\n"
	      "  -o, --output OUT  output file, '-' for stdout\n"
	      "  --threads         put a \"comm-tid\" root frame above each stack\n"
	      "  --event NAME      the event to convert (default: the first with samples)\n"
	      "  -h, --help        show this help\n"
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
	fputs("\nusage: microscope convert FILE [--to FORMAT] [-o OUT] [--threads] [--event NAME]\n"
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


/* Run fmt's writer into out_path atomically; message on stderr on failure. */
static int convert_to_file(const struct convert_format *fmt, const struct convert_input *in,
			   const char *out_path)
{
	char *tmp = NULL, *resolved = NULL;
	FILE *f = NULL;
	int fd = -1, err;
	struct stat st;

	/* A device or FIFO (-o /dev/null) is written through, never replaced;
	 * a symlink's target is replaced, not the link. */
	if (!stat(out_path, &st)) {
		if (!S_ISREG(st.st_mode)) {
			f = fopen(out_path, "w");
			if (!f) {
				err = -errno;
				goto cleanup;
			}
			err = fmt->write(in, f);
			if (!err && (fflush(f) || ferror(f)))
				err = errno ? -errno : -EIO;
			goto cleanup;
		}
		resolved = realpath(out_path, NULL);
		if (resolved)
			out_path = resolved;
	}
	if (asprintf(&tmp, "%s.tmp.%ld", out_path, (long)getpid()) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		tmp = NULL; /* not ours: do not unlink */
		goto cleanup;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		goto cleanup;
	}
	fd = -1;
	err = fmt->write(in, f);
	if (err)
		goto cleanup;
	if (fflush(f) || ferror(f) || fsync(fileno(f))) {
		err = errno ? -errno : -EIO;
		goto cleanup;
	}
	err = fclose(f) ? -errno : 0;
	f = NULL;
	if (err)
		goto cleanup;
	if (rename(tmp, out_path)) {
		err = -errno;
		goto cleanup;
	}
	free(tmp);
	tmp = NULL;
	err = file__fsync_parent(out_path);
cleanup:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (tmp) {
		unlink(tmp);
		free(tmp);
	}
	if (err)
		fprintf(stderr, "microscope convert: %s: %s\n", out_path, strerror(-err));
	free(resolved);
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

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 'T' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads", no_argument, NULL, 't' },
		{ "event", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct convert_format *fmt = NULL;
	const char *to = NULL, *out = NULL, *event_name = NULL, *path;
	struct convert_input in = { 0 };
	struct capture *c = NULL;
	bool threads = false;
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
		case 'o':
			out = optarg;
			break;
		case 't':
			threads = true;
			break;
		case 'e':
			event_name = optarg;
			break;
		case 'h':
			convert_print_usage(stdout);
			return 0;
		case ':':
			return convert_usage_error("option '%s' needs a value", argv[optind - 1]);
		default: {
			/* optopt names a bad short option; for a long one it is 0. */
			char shortopt[3] = { '-', (char)optopt, '\0' };

			return convert_usage_error("unknown option '%s'",
						  optopt ? shortopt : argv[optind - 1]);
		}
		}
	}
	if (optind != argc - 1)
		return convert_usage_error(optind < argc ? "one capture FILE, got '%s' too"
							 : "missing capture FILE%s",
					   optind < argc ? argv[argc - 1] : "");
	path = argv[optind];
	if (out && !strcmp(out, "-"))
		out = NULL;
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

	rc = capture__open(path, &c, err, sizeof(err));
	if (rc) {
		if (err[0])
			fprintf(stderr, "microscope convert: %s\n", err);
		else
			fprintf(stderr, "microscope convert: %s: %s\n", path, strerror(-rc));
		goto cleanup;
	}
	if (event_name) {
		if (analysis__find_event(c, event_name, &event)) {
			fprintf(stderr, "microscope convert: %s: no event '%s'\n", path,
				event_name);
			goto cleanup;
		}
	} else {
		event = analysis__default_event(c);
		if (event == CAPTURE_NONE) {
			fprintf(stderr, "microscope convert: %s: the capture has no events\n", path);
			goto cleanup;
		}
	}
	in.path = path;
	in.capture = c;
	analysis_query__init(&in.query, event);
	in.query.per_thread = threads;

	rc = out ? convert_to_file(fmt, &in, out) : convert_to_stdout(fmt, &in);
	if (!rc)
		status = 0;
cleanup:
	capture__free(c);
	return status;
}
