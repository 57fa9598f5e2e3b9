// SPDX-License-Identifier: MIT
/* microscope: dispatch to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "commands.h"

static const char *const commands[] = { "record", "report", "convert", "symbolize", "help" };

static const char usage[] =
	"usage: microscope <command> [options]\n"
	"\n"
	"commands:\n"
	"  record    record a command, processes (-p) or the whole system (-a)\n"
	"  report    summary, call tree and self/total table of a capture\n"
	"  convert   write a capture in another format (pprof, speedscope, Chrome\n"
	"            trace, SVG flame graph, folded stacks), or import pprof/folded\n"
	"  symbolize add names, lines and inline frames to a deferred capture\n"
	"\n"
	"Run 'microscope <command> --help' for a command's options.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: microscope record|report|convert|symbolize [options]\n"
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
		fputs("usage: microscope record|report|convert|symbolize [options]\n"
		      "Run 'microscope --help' for the commands.\n",
		      stderr);
	}
	return 2;
}
