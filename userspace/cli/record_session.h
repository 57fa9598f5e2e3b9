/* SPDX-License-Identifier: MIT */
/*
 * Private to record_session.c and record_wire.c: one recording's state and
 * the steps record_wire.c gives record_session.c (wiring a live recording,
 * the sink every chunk goes through, reporting a failed step).
 */
#ifndef MS_CLI_RECORD_SESSION_H
#define MS_CLI_RECORD_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "../../capture/capture.h"
#include "../collector/collector.h"
#include "../options/record_options.h"
#include "../stream/meta.h"
#include "record_probes.h"
#include "record_python.h"
#include "record_status.h"
#include "record_wake.h"

/* Live processing: at most this much per drain round (ns), at most this far
 * behind the newest record (ns) (processor__set_round_budget). */
#define SESSION_ROUND_BUDGET_NS 5000000ull
#define SESSION_MAX_LAG_NS	2000000000ull

struct record_session {
	const struct record_options *o;
	struct capture_builder *b;
	struct symbolizer *sym;
	struct processor *proc;
	struct stream_writer *raw; /* --save-raw, or NULL */
	struct collector *col;
	struct budget_monitor *budget; /* --budget, or NULL */
	struct py_tracker *py;	       /* NULL unless CPython frames are walked */
	struct kunwind_maps *ku;       /* --call-graph dwarf-kernel, or NULL */
	uint64_t py_scan_ns;	       /* -a: CPU time of the start-up scan for CPython */
	bool py_preloaded;	       /* the CPython walk was loaded before the command ran */
	struct record_python pyw;      /* -a: which processes run CPython */
	struct record_probes probes;   /* -a: which processes map the probes SDK */
	/* MICROSCOPE_PROBES_RECORDER=PID:START[:--probes] for the command */
	char probes_env[64 + MS_MAX_PROBE_PREFIXES * (MS_MAX_PROBE_PREFIX + 1)];
	struct record_rolling *roll; /* --continuous or --window, or NULL */
	struct record_counters *deltas; /* --continuous: per-segment counters, or NULL */
	struct launcher launch;	     /* the command (pid -1 when there is none) */
	bool child_done;	     /* the command was waited for */
	double t_end;		     /* CLOCK_MONOTONIC s when --duration ends, or 0 */
	double t_halt;		     /* CLOCK_MONOTONIC s when sampling was halted, or 0 */
	int status;		     /* exit status so far */
	struct record_status live;   /* the status line on a TTY */
	struct record_wake wake;     /* when the drain loop wakes */
	struct record_scope *scope;  /* --container following, or NULL (borrowed) */
	bool scope_failed;	     /* following stopped after a failure (said) */
};

/* "microscope record: STEP: strerror(-err)" on stderr; STEP from fmt. */
void record_session__step_failed(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* A stream_sink_fn: the raw stream writer (when saving), then the processor. */
int record_session__sink(void *ctx, const struct ms_chunk *c, const void *payload);
/* One typed META pair (stream/meta.h) through the sink.  Returns 0 or
 * -errno (the step that failed is reported). */
int record_session__emit_meta(struct record_session *s, enum ms_meta_id id, const char *value);
/* Builder, symbolizer (with the --debug-dir directories) and processor.
 * 0 or -errno (reported). */
int record_session__open_processor(struct record_session *s);
/* Everything a live recording needs, up to (not including) sampling.
 * 0 or -errno (reported). */
int record_session__wire(struct record_session *s, const char *record_command);

#endif
