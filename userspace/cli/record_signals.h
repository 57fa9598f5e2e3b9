/* SPDX-License-Identifier: MIT */
/*
 * The signals of a recording (record_session.c calls these): SIGINT,
 * SIGTERM and --duration's SIGALRM stop it, SIGUSR1 asks for a --window
 * snapshot.  The handlers are installed before anything is set up, so a
 * stop during start-up (BPF load, snapshots: a second or two on a loaded
 * host) is kept and recording stops as soon as it starts, rather than the
 * signal killing the recorder or (SIGINT ignored, as in a shell's
 * background job) being lost.
 */
#ifndef MS_CLI_RECORD_SIGNALS_H
#define MS_CLI_RECORD_SIGNALS_H

#include <stdbool.h>

#include "../collector/collector.h"

/* Install the handlers.  Returns 0 or -errno. */
int record_signals__install(void);

/* The stop signal received so far, 0 if none. */
int record_signals__stop(void);

/* Whether a snapshot was asked for since the last call (clears the request). */
bool record_signals__take_snapshot(void);

/* The collector whose sampling a stop signal halts at once
 * (collector__halt_sampling is async-signal-safe), or NULL for none. */
void record_signals__halt(struct collector *c);

#endif
