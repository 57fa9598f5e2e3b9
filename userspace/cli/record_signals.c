// SPDX-License-Identifier: MIT
/* The signals of a recording (record_signals.h). */
#include <errno.h>
#include <signal.h>

#include "record_signals.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t snapshot_requested; /* SIGUSR1 (--window) */
static struct collector *volatile halt_col;

static void on_signal(int sig)
{
	stop_signal = sig;
	collector__halt_sampling(halt_col);
}

static void on_snapshot(int sig)
{
	(void)sig;
	snapshot_requested = 1;
}

int record_signals__install(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction snap = { .sa_handler = on_snapshot, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigemptyset(&snap.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL) ||
	    sigaction(SIGALRM, &sa, NULL) || sigaction(SIGUSR1, &snap, NULL))
		return -errno;
	return 0;
}

int record_signals__stop(void)
{
	return stop_signal;
}

bool record_signals__take_snapshot(void)
{
	if (!snapshot_requested)
		return false;
	snapshot_requested = 0;
	return true;
}

void record_signals__halt(struct collector *c)
{
	halt_col = c;
}
