// SPDX-License-Identifier: MIT
/* record's live status line (record_status.h). */
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "record_status.h"

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* This process's CPU time (user + system), in s: the recorder's own cost. */
static double own_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void record_status__init(struct record_status *st, bool enabled)
{
	st->on = enabled && isatty(STDERR_FILENO);
	st->drawn = false;
	st->t0 = mono_s();
	st->next = st->t0 + RECORD_STATUS_PERIOD_MS / 1000.0;
	st->cpu0 = own_cpu_s();
}

void record_status__tick(struct record_status *st, uint64_t samples, uint64_t lost)
{
	double now, wall;

	if (!st->on)
		return;
	now = mono_s();
	if (now < st->next)
		return;
	st->next = now + RECORD_STATUS_PERIOD_MS / 1000.0;
	wall = now - st->t0;
	fprintf(stderr, "\r\033[K[ microscope: %.1f s, %llu samples, %llu lost, own CPU %.1f%% ]",
		wall, (unsigned long long)samples, (unsigned long long)lost,
		wall > 0 ? 100.0 * (own_cpu_s() - st->cpu0) / wall : 0.0);
	fflush(stderr);
	st->drawn = true;
}

void record_status__finish(struct record_status *st)
{
	if (!st->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	st->drawn = false;
}
