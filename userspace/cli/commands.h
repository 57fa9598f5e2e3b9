/* SPDX-License-Identifier: MIT */
/*
 * Subcommand entry points.  Each parses its own options from argv (argv[0]
 * is the subcommand name) and returns the process exit status:
 * 0 success, 1 runtime failure (message on stderr naming the file and the
 * reason), 2 usage error.  `record` returns the recorded command's status
 * (128+N if it was killed by signal N) and 127 if it could not be run.
 */
#ifndef MS_CLI_COMMANDS_H
#define MS_CLI_COMMANDS_H

#include <stdio.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_symbolize(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);

struct capture;
struct analysis_query;
/*
 * Write the flame graph SVG of q's samples of c, frames keyed at
 * granularity (enum analysis_granularity), to out (convert --to svg and
 * report --svg share it).  Returns 0 or -errno.
 */
int convert__write_svg(const struct capture *c, const struct analysis_query *q,
		       unsigned int granularity, const char *title, FILE *out);

#endif
