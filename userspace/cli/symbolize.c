// SPDX-License-Identifier: MIT
/*
 * microscope symbolize IN -o OUT [--debug-dir DIR]... [--debuginfod URL]...
 * An adapter: opens IN, sets up a symbolizer with the user's debug places,
 * runs capture__symbolize (userspace/deferred/) and publishes OUT.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "capture/capture.h"
#include "capture/output_check.h"
#include "commands.h"
#include "input.h"
#include "userspace/deferred/symbolize.h"
#include "userspace/symbols/symbols.h"

static const char symbolize_usage[] =
	"usage: microscope symbolize IN|DIR -o OUT [--debug-dir DIR]... [--debuginfod URL]...\n"
	"\n"
	"Add function names, source lines and inline frames to a capture recorded with\n"
	"--symbolize deferred (or to any frames a capture left unsymbolized).  Each\n"
	"module's identity is proved by its build ID: the file at the recorded path is\n"
	"used only if its build ID matches, else a debug file with that build ID.\n"
	"\n"
	"  -o, --output OUT     the symbolized capture (written atomically)\n"
	"      --debug-dir DIR  look in DIR: DIR/.build-id/xx/rest.debug and\n"
	"                       .gnu_debuglink names; repeatable, searched in order\n"
	"                       before /usr/lib/debug\n"
	"      --debuginfod URL ask this debuginfod server (repeatable; added to\n"
	"                       DEBUGINFOD_URLS, which is used too; libdebuginfod's\n"
	"                       cache applies)\n"
	"      --since WHEN, --until WHEN\n"
	"                       IN a segment directory (record --continuous): only\n"
	"                       the segments and samples in [WHEN, WHEN): -10m (ago),\n"
	"                       2026-12-02T14:00[:SS]Z or 14:00 (UTC), @SECONDS\n"
	"  -q, --quiet          no summary line\n"
	"  -h, --help           this text\n"
	"\n"
	"Modules that cannot be symbolized are listed on stderr and recorded in OUT\n"
	"(meta symbolize.failure.N); their frames show as module+0xADDRESS.\n"
	"Exit status: 0 when OUT was written (even with failed modules), 1 on an\n"
	"unreadable IN or unwritable OUT, 2 for a usage error.\n";

enum { OPT_DEBUG_DIR = 0x4444, OPT_DEBUGINFOD = 0x4446, OPT_SINCE = 0x5353, OPT_UNTIL = 0x5555 };

/* Appends url to DEBUGINFOD_URLS (space-separated, libdebuginfod's syntax). */
static int add_debuginfod_url(const char *url)
{
	const char *old = getenv("DEBUGINFOD_URLS");
	size_t n = strlen(url) + (old ? strlen(old) : 0) + 2;
	char *v = malloc(n);
	int err;

	if (!v)
		return -ENOMEM;
	snprintf(v, n, "%s%s%s", url, old && old[0] ? " " : "", old ? old : "");
	err = setenv("DEBUGINFOD_URLS", v, 1) ? -errno : 0;
	free(v);
	return err;
}

int cmd_symbolize(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "debuginfod", required_argument, NULL, OPT_DEBUGINFOD },
		{ "quiet", no_argument, NULL, 'q' },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cli_input_range range = CLI_INPUT_ALL;
	struct capture_builder *b = NULL;
	struct symbolizer *sym = NULL;
	struct capture *c = NULL;
	struct symbolize_stats st;
	const char *out = NULL, *in;
	bool quiet = false, debuginfod = false;
	char msg[1024];
	int opt, err, status = 1;

	sym = symbolizer__new();
	if (!sym) {
		fprintf(stderr, "microscope symbolize: out of memory\n");
		return 1;
	}
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		struct stat sb;

		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case OPT_DEBUG_DIR:
			if (stat(optarg, &sb) || !S_ISDIR(sb.st_mode)) {
				fprintf(stderr, "microscope symbolize: --debug-dir %s: not a directory\n",
					optarg);
				status = 2;
				goto cleanup;
			}
			if (symbolizer__add_debug_dir(sym, optarg))
				goto nomem;
			break;
		case OPT_DEBUGINFOD:
			if (add_debuginfod_url(optarg))
				goto nomem;
			debuginfod = true;
			break;
		case 'q':
			quiet = true;
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (cli_input__set_range(&range, opt == OPT_SINCE, optarg)) {
				fprintf(stderr, "microscope symbolize: bad time '%s' (-10m, "
						"2026-12-02T14:00Z, 14:00, @SECONDS)\n",
					optarg);
				status = 2;
				goto cleanup;
			}
			break;
		case 'h':
			fputs(symbolize_usage, stdout);
			status = 0;
			goto cleanup;
		default:
			fputs(symbolize_usage, stderr);
			status = 2;
			goto cleanup;
		}
	}
	if (optind + 1 != argc || !out) {
		fprintf(stderr, "microscope symbolize: give one input capture and -o OUT\n\n%s",
			symbolize_usage);
		status = 2;
		goto cleanup;
	}
	in = argv[optind];
	/* Before the work, not after it. */
	if (capture__check_output(out, msg, sizeof(msg))) {
		fprintf(stderr, "microscope symbolize: %s\n", msg);
		status = 2;
		goto cleanup;
	}
	/* DEBUGINFOD_URLS alone enables it too (libdebuginfod's convention). */
	if (symbolizer__enable_debuginfod(sym) && debuginfod) {
		fprintf(stderr, "microscope symbolize: --debuginfod: no usable URL\n");
		status = 2;
		goto cleanup;
	}
	err = cli_input__open_range("symbolize", in, range, &c, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "microscope symbolize: %s\n", msg[0] ? msg : strerror(-err));
		if (err == -EDOM) /* a range for a file: a usage error */
			status = 2;
		goto cleanup;
	}
	b = capture_builder__new();
	if (!b)
		goto nomem;
	err = capture__symbolize(c, sym, b, &st, stderr);
	if (err)
		goto nomem;
	err = capture_builder__write(b, out);
	if (err) {
		const char *why = capture_builder__error(b);

		/* why starts with the path already */
		fprintf(stderr, "microscope symbolize: cannot write %s\n",
			why && why[0] ? why : strerror(-err));
		goto cleanup;
	}
	if (!quiet)
		fprintf(stderr,
			"[ microscope symbolize: %u modules symbolized, %u failed; %llu frames "
			"named, %llu still unsymbolized%s; wrote %s ]\n",
			st.modules_symbolized, st.modules_failed,
			(unsigned long long)st.frames_symbolized,
			(unsigned long long)st.frames_unsymbolized,
			symbolizer__debuginfod_fetched(sym) ? " (debuginfod used)" : "", out);
	status = 0;
	goto cleanup;
nomem:
	fprintf(stderr, "microscope symbolize: out of memory\n");
cleanup:
	capture_builder__free(b);
	capture__free(c);
	symbolizer__free(sym);
	return status;
}
