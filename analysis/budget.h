/* SPDX-License-Identifier: MIT */
/*
 * What the CPU budget (record --budget) did to a recording: read from the
 * capture's meta (budget.pct, budget.duty_changes) and counters
 * (budget.recorder_cpu_ns, budget.bpf_run_time_ns, budget.perf_estimate_ns,
 * budget.observed_ns).  Pure: no clock, no I/O.
 */
#ifndef MS_ANALYSIS_BUDGET_H
#define MS_ANALYSIS_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"

struct analysis_budget {
	bool present;		/* the recording had a budget (meta budget.pct) */
	double pct;		/* percent of one CPU */
	uint32_t changes;	/* duty changes */
	uint32_t lowered;	/* changes that lengthened the period */
	uint32_t peak_factor;	/* largest period multiplier in force (1 = never lowered) */
	uint32_t final_factor;	/* multiplier in force at the end */
	uint64_t first_lowered_ns; /* first lowering, ns after meta start_time_ns (0 if unknown) */
	uint64_t samples;	/* samples taken */
	uint64_t weight;	/* the samples at the requested rate they stand for (sum of weights) */
	/* Cost the recorder measured while sampling (ns), and over how long. */
	uint64_t recorder_cpu_ns, bpf_run_ns, perf_estimate_ns, observed_ns;
	/*
	 * The same over the steady state (counters budget.steady_*): the
	 * longest span one duty was held after warm-up and after the change
	 * before it settled; the last span (to the end) unless a later change
	 * closed a longer one (steady_closed: a change near the end).
	 * steady_observed_ns 0 if the recording never got there (shorter than
	 * warm-up).
	 */
	uint64_t steady_recorder_cpu_ns, steady_bpf_run_ns, steady_perf_estimate_ns;
	uint64_t steady_observed_ns;
	bool steady_closed;
	/* Start-up the controller does not judge (counter budget.warmup_ns;
	 * 0 in captures made before it was recorded). */
	uint64_t warmup_ns;
	/* How long the cost must stay over the budget in steady state before
	 * the duty is lowered (counter budget.lower_after_ns; 0 in older
	 * captures). */
	uint64_t lower_after_ns;
};

/*
 * Fill b from c.  A capture without a budget gives present = false.
 * Returns 0, or -EBADMSG if budget.duty_changes is malformed (the reader
 * rejects such files, so only a capture built in memory can have one).
 */
int analysis_budget__init(struct analysis_budget *b, const struct capture *c);

#endif
