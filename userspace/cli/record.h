/* SPDX-License-Identifier: MIT */
/*
 * `microscope record`, private to userspace/cli/.  record.c parses the
 * command line into one struct record_options and validates it
 * (record_options__check plus what depends on the machine: the kernel's
 * sample-rate limit, the output file, --save-raw); record_session.c runs a
 * validated value: wiring (processor, raw stream, collector, budget, CPython
 * tracker, targets), the drain loop and teardown.
 *
 * Messages go to stderr as "microscope record: STEP: REASON", STEP naming
 * what was being done ("attaching to pid 123", "loading the sampler").
 */
#ifndef MS_CLI_RECORD_H
#define MS_CLI_RECORD_H

#include "../options/record_options.h"

/*
 * Record live as o says (a command in o->argv, o->pids, or o->system_wide).
 * record_command is the whole command line as typed (META record_command).
 * Returns the exit status of `record` (commands.h): the command's status,
 * 127 if it could not be run, 0 for -p/-a, 1 if recording failed.
 * scope (record_scope.h; may be NULL) follows the --container selections
 * while recording; borrowed.
 */
struct record_scope;
int record_session__run(const struct record_options *o, const char *record_command,
			struct record_scope *scope);

/* Process the raw stream o->replay into o->output.  Returns 0 or 1. */
int record_session__replay(const struct record_options *o);

#endif
