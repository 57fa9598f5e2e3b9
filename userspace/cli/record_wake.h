/* SPDX-License-Identifier: MIT */
/*
 * When record's drain loop wakes (record_session.c calls these).  It sleeps
 * in collector__poll until a ring holds a quarter of its size or the
 * sampler asks for it (a change of the recorded processes or of a CPython
 * process's threads, Python samples every record_options.py_wake_ms:
 * bpf/sampler.bpf.c sample__wake), until a recorded command or -p process
 * ends (its pidfd is in the same wait), until the CPython tracker's next
 * due poll (py_tracker__due), a signal (stop, --duration's alarm, SIGUSR1),
 * or at the latest record_options.drain_wait_ms: one timeout for all of
 * them.  The budget monitor, segment cuts and the tracker's slow work (the
 * full thread-map refresh each second) ride on those wakeups.
 */
#ifndef MS_CLI_RECORD_WAKE_H
#define MS_CLI_RECORD_WAKE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../collector/collector.h"
#include "../options/record_options.h"
#include "../runtimes/py_procs.h"

/* The drain loop's longest sleep unless drain_wait_ms says otherwise, with
 * a CPython tracker and without (ms), and with a process whose end no pidfd
 * tells (no pidfd_open before Linux 5.3): waitpid/kill are polled. */
#define RECORD_WAIT_PY_MS 20
#define RECORD_WAIT_MS 100
#define RECORD_WAIT_UNWATCHED_MS 100

/* Processes whose end a pidfd tells (one file descriptor each); the end of
 * any more is polled (RECORD_WAIT_UNWATCHED_MS), so that -p's thousands of
 * targets do not take the recorder's descriptors. */
#define RECORD_WATCH_MAX 64

struct record_wake {
	int fds[RECORD_WATCH_MAX + 1]; /* pidfds in the collector's wait */
	size_t nfds;
	bool unwatched; /* a process's end is told by no pidfd */
	uint32_t wait_ms; /* the longest sleep */
};

/* The longest sleep for o (with a CPython tracker or not). */
void record_wake__init(struct record_wake *w, const struct record_options *o, bool python);

/* Wake the loop when process pid ends (a pidfd in c's wait); without a
 * pidfd the loop polls at most every RECORD_WAIT_UNWATCHED_MS. */
void record_wake__watch(struct record_wake *w, struct collector *c, pid_t pid);

/*
 * How long (ms) the next collector__poll may wait at now_ns (CLOCK_MONOTONIC):
 * 0 when records wait behind processing (behind); otherwise until py's next
 * due poll (py may be NULL), at most the longest sleep, at most
 * status_ms when a live status line is drawn (0: none).
 */
int record_wake__wait_ms(const struct record_wake *w, bool behind, const struct py_tracker *py,
			 uint32_t status_ms, uint64_t now_ns);

/* Close the pidfds. */
void record_wake__release(struct record_wake *w);

#endif
