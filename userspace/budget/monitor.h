/* SPDX-License-Identifier: MIT */
/*
 * The budget monitor: the I/O half of record --budget.  It holds the
 * BPF_ENABLE_STATS file descriptor for the recording (so the kernel counts
 * run_time_ns/run_cnt of BPF programs without the global
 * kernel.bpf_stats_enabled sysctl), reads the observations the controller
 * (budget.h) judges once per MS_BUDGET_INTERVAL_NS, and applies its decisions
 * through the recorder's set_duty (struct budget_recorder; the CLI wires in
 * collector__set_duty, so the budget layer never includes the collector).
 * Owns nothing else.
 */
#ifndef MS_BUDGET_MONITOR_H
#define MS_BUDGET_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "../stream/meta.h"
#include "../stream/stream.h"
#include "budget.h"

struct budget_monitor;

/*
 * What the monitor reads from and steers in the recorder, borrowed for each
 * call: bpf_stats returns the cumulative BPF run time (ns) and sampler runs
 * (as collector__bpf_stats), set_duty makes the sampling period factor
 * times the requested one (as collector__set_duty).  Both return 0 or -errno.
 */
struct budget_recorder {
	int (*bpf_stats)(void *ctx, uint64_t *run_ns, uint64_t *sampler_runs);
	int (*set_duty)(void *ctx, uint32_t factor);
	void *ctx;
};

/*
 * Enable BPF run-time stats (bpf_enable_stats(BPF_STATS_RUN_TIME), Linux
 * 5.8; needs CAP_SYS_ADMIN) and set up a controller for pct percent of one
 * CPU (0 < pct <= 100) at the requested rate freq_hz.  If the stats cannot
 * be enabled the monitor works without BPF run time (budget_monitor__note
 * says why; meta budget.bpf_stats records it).  Returns NULL with errno set
 * and a message in err only when out of memory.
 */
struct budget_monitor *budget_monitor__new(double pct, uint32_t freq_hz, char *err,
					   size_t errlen);

/* Why BPF run time is not counted, or NULL when it is. */
const char *budget_monitor__note(const struct budget_monitor *m);

/* META chunks describing the budget (budget.pct, budget.perf_ns_per_sample...)
 * to sink; call before recording starts.  Returns 0 or the sink's error. */
int budget_monitor__emit_meta(struct budget_monitor *m, stream_sink_fn sink, void *ctx);

/*
 * Call often while recording (each drain round).  At most once per
 * MS_BUDGET_INTERVAL_NS it reads the observation, steps the controller and
 * applies a changed factor with r->set_duty.  Returns 0 or -errno.
 */
int budget_monitor__tick(struct budget_monitor *m, const struct budget_recorder *r);

/*
 * Take the last observation (before collector__stop) and emit the totals as
 * COUNTER chunks to sink: budget.recorder_cpu_ns, budget.bpf_run_time_ns,
 * budget.sampler_runs, budget.perf_estimate_ns, budget.lowered,
 * budget.raised, budget.peak_factor, budget.final_factor, budget.steps.
 * Returns 0 or -errno.
 */
int budget_monitor__finish(struct budget_monitor *m, const struct budget_recorder *r,
			   stream_sink_fn sink, void *ctx);

/*
 * The totals that add up over time (budget.recorder_cpu_ns,
 * .bpf_run_time_ns, .sampler_runs, .perf_estimate_ns, .observed_ns,
 * .lowered, .raised, .steps) as they stand now, as COUNTER chunks to sink,
 * without taking the last observation: a continuous recording's
 * per-segment deltas (cli/record_counters.h).  The figures that do not add
 * up (peak and final factor, the steady span) are budget_monitor__finish's
 * only.  Nothing before the first observation.  Returns 0 or -errno.
 */
int budget_monitor__counters(struct budget_monitor *m, const struct budget_recorder *r,
			     stream_sink_fn sink, void *ctx);

/* Close the stats fd and free.  Accepts NULL. */
void budget_monitor__free(struct budget_monitor *m);

#endif
