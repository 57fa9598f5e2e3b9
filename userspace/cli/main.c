// SPDX-License-Identifier: MIT
/* microscope: dispatch to a subcommand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/limits.h"
#include "cli_util.h"
#include "commands.h"

static const char *const commands[] = { "record",    "report", "convert", "symbolize",
					 "snapshot",  "serve",  "help" };

static const char usage[] =
	"usage: microscope [--max-memory SIZE] <command> [options]\n"
	"\n"
	"commands:\n"
	"  record    record a command, processes (-p) or the whole system (-a)\n"
	"  report    summary, call tree and self/total table of a capture\n"
	"  convert   write a capture in another format (pprof, speedscope, Chrome\n"
	"            trace, SVG flame graph, folded stacks), or import pprof/folded\n"
	"  symbolize add names, lines and inline frames to a deferred capture\n"
	"  serve     browse a capture in a web browser (flame graph, timeline, diff)\n"
	"  snapshot  make a `record --window` write its current window\n"
	"\n"
	"Run 'microscope <command> --help' for a command's options.\n"
	"\n"
	"--max-memory SIZE (before the command, or among the options of report,\n"
	"convert and symbolize; also $MICROSCOPE_MAX_MEMORY) bounds what reading\n"
	"and importing untrusted files may allocate: SIZE in bytes, K, M, G or T\n"
	"(default: a quarter of physical RAM, and for one input at most 256 x its\n"
	"bytes + 64 MiB, 16 x for folded and perf script text).  A file that\n"
	"would need more is refused with an error naming the limit\n"
	"(docs/capture-format.md, Limits).\n";

/* Apply a --max-memory value; 0 or 2 (usage error, message printed). */
static int set_max_memory(const char *value)
{
	uint64_t bytes;

	if (capture_limits__parse_size(value, &bytes)) {
		fprintf(stderr, "microscope: --max-memory takes a size such as 512M or 2G, "
				"not '%s'\n", value);
		return 2;
	}
	capture_limits__set_max_memory(bytes);
	return 0;
}

/*
 * Take "--max-memory SIZE" / "--max-memory=SIZE" out of argv[first..argc)
 * up to a "--" (record's command line is never touched: it starts at the
 * first non-option, and record only gets the option before its name).
 * Returns 0 or 2.
 */
static int strip_max_memory(int *argc, char **argv, int first)
{
	int i = first, j, rc;

	while (i < *argc && strcmp(argv[i], "--")) {
		const char *v = NULL;
		int n = 0;

		if (!strcmp(argv[i], "--max-memory")) {
			if (i + 1 >= *argc) {
				fputs("microscope: --max-memory needs a value\n", stderr);
				return 2;
			}
			v = argv[i + 1];
			n = 2;
		} else if (!strncmp(argv[i], "--max-memory=", 13)) {
			v = argv[i] + 13;
			n = 1;
		}
		if (!n) {
			i++;
			continue;
		}
		rc = set_max_memory(v);
		if (rc)
			return rc;
		for (j = i; j + n <= *argc; j++)
			argv[j] = argv[j + n];
		*argc -= n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *env = getenv("MICROSCOPE_MAX_MEMORY");

	if (env && *env && set_max_memory(env))
		return 2;
	while (argc >= 3 && (!strcmp(argv[1], "--max-memory") ||
			     !strncmp(argv[1], "--max-memory=", 13))) {
		int n = argv[1][12] == '=' ? 1 : 2;

		if (set_max_memory(n == 1 ? argv[1] + 13 : argv[2]))
			return 2;
		argv[n] = argv[0];
		argv += n;
		argc -= n;
	}
	if (argc >= 2 && (!strcmp(argv[1], "report") || !strcmp(argv[1], "convert") ||
			  !strcmp(argv[1], "symbolize")) &&
	    strip_max_memory(&argc, argv, 2))
		return 2;
	if (argc < 2) {
		fputs("usage: microscope record|report|convert|symbolize|snapshot|serve [options]\n"
		      "Run 'microscope --help' for the commands.\n",
		      stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("microscope 0.1");
		return 0;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "convert"))
		return cmd_convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "symbolize"))
		return cmd_symbolize(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return cmd_serve(argc - 1, argv + 1);
	if (!strcmp(argv[1], "snapshot"))
		return cmd_snapshot(argc - 1, argv + 1);
	{
		const char *hint = cli__closest(argv[1], commands,
						sizeof(commands) / sizeof(commands[0]));

		if (argv[1][0] == '-')
			fprintf(stderr, "microscope: unknown option '%s'; options follow a command\n",
				argv[1]);
		else if (hint)
			fprintf(stderr, "microscope: unknown command '%s' (did you mean '%s'?)\n",
				argv[1], hint);
		else
			fprintf(stderr, "microscope: unknown command '%s'\n", argv[1]);
		fputs("usage: microscope record|report|convert|symbolize|snapshot|serve [options]\n"
		      "Run 'microscope --help' for the commands.\n",
		      stderr);
	}
	return 2;
}
