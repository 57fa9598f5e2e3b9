/* SPDX-License-Identifier: MIT */
/*
 * RecordOptions: the one value `microscope record` builds from its preset
 * and command-line overrides before recording begins.  Every layer of the
 * recorder reads its settings from here; the capture stores them as meta.
 */
#ifndef MS_RECORD_OPTIONS_H
#define MS_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MS_DEFAULT_FREQ_HZ 999
#define MS_DEFAULT_OUTPUT "microscope.msc"
#define MS_MAX_PIDS 64

/* record_options.event */
#define MS_EVENT_CPU_CLOCK 0 /* PERF_COUNT_SW_CPU_CLOCK */
#define MS_EVENT_CYCLES 1    /* PERF_COUNT_HW_CPU_CYCLES, falls back to cpu-clock */

struct record_options {
	uint32_t freq_hz;      /* samples per second per CPU, 1..100000 */
	uint32_t event;	       /* MS_EVENT_* */
	const char *output;    /* capture path */
	const char *save_raw;  /* directory for the raw ring stream, or NULL */
	pid_t pids[MS_MAX_PIDS]; /* -p targets (tgids) */
	size_t npids;
	bool system_wide;      /* -a */
	double duration_s;     /* 0 = until the command exits / a signal */
	uint32_t ringbuf_bytes; /* BPF ring buffer size, power of two */
	uint32_t perf_pages;	/* side-band perf ring pages per CPU, power of two */
	char **argv;	       /* command to launch, NULL-terminated, or NULL */
	bool quiet;
};

/* Fill defaults (999 Hz, cpu-clock, microscope.msc, 16 MiB ring, 64 pages). */
void record_options__init(struct record_options *o);

#endif
