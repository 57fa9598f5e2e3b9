// SPDX-License-Identifier: MIT
/* When record's drain loop wakes (record_wake.h). */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record_wake.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

void record_wake__init(struct record_wake *w, const struct record_options *o, bool python)
{
	w->nfds = 0;
	w->unwatched = false;
	w->wait_ms = o->drain_wait_ms ? o->drain_wait_ms
		     : python	      ? RECORD_WAIT_PY_MS
				      : RECORD_WAIT_MS;
}

void record_wake__watch(struct record_wake *w, struct collector *c, pid_t pid)
{
	int fd = -1;

	if (w->nfds < sizeof(w->fds) / sizeof(w->fds[0]))
		fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0 && collector__wake_on(c, fd)) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		w->unwatched = true;
		return;
	}
	w->fds[w->nfds++] = fd;
}

int record_wake__wait_ms(const struct record_wake *w, bool behind, const struct py_tracker *py,
			 uint32_t status_ms, uint64_t now_ns)
{
	uint64_t ms = w->wait_ms, due;

	if (behind)
		return 0;
	if (w->unwatched && ms > RECORD_WAIT_UNWATCHED_MS)
		ms = RECORD_WAIT_UNWATCHED_MS;
	if (status_ms && ms > status_ms)
		ms = status_ms;
	due = py_tracker__due(py);
	if (due <= now_ns)
		return 0;
	/* rounded up: a wakeup just before the due time would find nothing
	 * due and sleep again */
	if (due != UINT64_MAX && (due - now_ns + 999999) / 1000000 < ms)
		ms = (due - now_ns + 999999) / 1000000;
	return (int)ms;
}

void record_wake__release(struct record_wake *w)
{
	for (size_t i = 0; i < w->nfds; i++)
		close(w->fds[i]);
	w->nfds = 0;
}
