/* SPDX-License-Identifier: MIT */
/*
 * The CPU budget controller (record --budget PCT).
 *
 * microscope's own cost is the recorder process's CPU time (all its threads),
 * the run time of its BPF programs (the kernel's BPF stats, enabled through a
 * BPF_ENABLE_STATS file descriptor held for the recording), and perf's own
 * per-sample work around the BPF program (the cpu-clock hrtimer handler,
 * overflow handling), which no counter reports and which is estimated as
 * perf_ns_per_sample times the number of sampler runs.
 *
 * The controller keeps that cost's share of one CPU under the budget by
 * changing the sampling duty: the period of every per-CPU sampling event is
 * base_period * factor (factor 1 = the requested rate), so each sample then
 * stands for factor samples at the requested rate (its capture weight).
 *
 * It is a pure function of its observations: budget__step() takes one
 * struct budget_obs (cumulative counters and the time they were read) and
 * returns a decision; it reads no clock and does no I/O, so the same
 * sequence of observations always gives the same decisions (unit tests
 * replay recorded sequences).  budget_monitor (monitor.c) does the reading.
 *
 * Steady state, not one-time work: the first warmup_ns (BPF load, the first
 * symbolization of every module) are not judged, and after them the factor
 * goes up only when lower_after consecutive intervals exceed the budget, to
 * the factor predicted from the smallest of their shares, so one interval of
 * one-time work (a module's DWARF and CFI read when a process loads it, an
 * exec) does not lower the rate and skew the reweighted shares.
 *
 * A cost that alternates over and under the budget (one interval heavy, the
 * next light) never has lower_after intervals over it in a row, yet its mean
 * is over: so the factor also goes up once the mean share of the last
 * mean_window intervals at one factor exceeds the budget, to the factor
 * predicted to bring that mean to target_frac.
 *
 * Hysteresis: the factor goes up once lower_after consecutive intervals'
 * shares exceed the budget, to the factor predicted to bring the smallest of
 * them to target_frac of the budget (cost taken as proportional to the
 * sample rate), by at most max_lower_step at a time; it comes down only after raise_after consecutive intervals below
 * low_frac of the budget, to the factor predicted to reach target_frac, and
 * by at most max_raise_step at a time.  Between low and high the factor holds,
 * so a cost that is not exactly proportional to the rate cannot make it
 * oscillate.  The settle_intervals after a change are not judged: the
 * recorder is still processing samples taken at the old rate, and judging
 * that lagging cost against the new rate would overshoot.
 */
#ifndef MS_BUDGET_H
#define MS_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

/*
 * perf's own cost per cpu-clock sample outside the BPF program, ns: the
 * mean time of perf_swevent_hrtimer minus the BPF program's run time,
 * measured with bpftrace kprobe/kretprobe on this project's test VM
 * (docs/budget.md, "The per-sample constant"), rounded up; plus the
 * interrupt entry/exit it cannot see.
 */
#define MS_BUDGET_PERF_NS_PER_SAMPLE 40000

/* Time between controller steps while recording (ns; budget_monitor). */
#define MS_BUDGET_INTERVAL_NS 1000000000ull

struct budget_config {
	double budget_frac;	     /* share of one CPU, e.g. 0.01 for --budget 1; > 0 */
	uint32_t max_factor;	     /* largest period multiplier, >= 1 */
	uint64_t perf_ns_per_sample; /* estimated perf cost per sampler run (ns) */
	uint64_t min_interval_ns;    /* observations closer than this are not judged */
	uint64_t warmup_ns;	     /* start-up not judged: from the first observation (2 s) */
	double target_frac;	     /* aim at this fraction of the budget (0.7) */
	double low_frac;	     /* below this fraction an interval counts as room (0.5) */
	uint32_t raise_after;	     /* consecutive room intervals before raising (3) */
	uint32_t lower_after;	     /* consecutive intervals over the budget before lowering
					(2): one interval of one-time work is not steady cost */
	uint32_t max_raise_step;     /* raise divides the factor by at most this (4) */
	uint32_t max_lower_step;     /* lower multiplies the factor by at most this (16) */
	uint32_t settle_intervals;   /* intervals not judged after a change (1): the recorder
					still works off samples taken at the old rate */
	uint32_t mean_window;	     /* also lower when the mean share of this many intervals
					at one factor is over the budget (8; at most
					BUDGET_WINDOW_MAX, 0 = off): a cost that alternates
					over and under it never has lower_after in a row */
};

#define BUDGET_WINDOW_MAX 16

/* One observation: cumulative values since the recording started. */
struct budget_obs {
	uint64_t time_ns;	  /* CLOCK_MONOTONIC when read */
	uint64_t recorder_cpu_ns; /* the recorder process's CPU time, all threads */
	uint64_t bpf_run_ns;	  /* sum of run_time_ns over the recorder's BPF programs */
	uint64_t sampler_runs;	  /* run_cnt of the sampling program (perf samples taken) */
};

#define BUDGET_HOLD 0  /* factor unchanged */
#define BUDGET_LOWER 1 /* duty lowered: factor went up */
#define BUDGET_RAISE 2 /* duty raised: factor went down */
#define BUDGET_SKIP 3  /* observation not judged (first, too soon, or counters went back) */

struct budget_decision {
	uint32_t action;     /* BUDGET_* */
	uint32_t factor;     /* the factor to apply from now on */
	double share;	     /* the interval's cost as a share of one CPU (0 for SKIP) */
	uint64_t cost_ns;    /* the interval's cost: CPU + BPF + perf estimate */
	uint64_t interval_ns;
};

struct budget {
	struct budget_config cfg;
	struct budget_obs last;
	bool have_last;
	uint64_t start_ns; /* time of the first observation */
	uint32_t factor;
	uint32_t room_intervals; /* consecutive intervals below low_frac */
	uint32_t over_intervals; /* consecutive intervals over the budget */
	double over_share;	 /* the smallest share of those intervals */
	uint32_t settling;	 /* intervals left to skip after a change */
	/* The last judged intervals at this factor (a ring of mean_window). */
	uint64_t win_cost_ns[BUDGET_WINDOW_MAX], win_interval_ns[BUDGET_WINDOW_MAX];
	uint32_t win_n, win_next;
	/* Statistics for the capture. */
	uint32_t lowered, raised;
	uint32_t peak_factor;
};

/*
 * Fill cfg with the defaults above for a budget of pct percent of one CPU
 * (0 < pct <= 100) and a requested rate of freq_hz: max_factor keeps at
 * least 1 sample per second per CPU (freq_hz, at least 1).
 */
void budget_config__default(struct budget_config *cfg, double pct, uint32_t freq_hz);

/* Start at factor 1 with no observation.  cfg is copied. */
void budget__init(struct budget *b, const struct budget_config *cfg);

/*
 * Judge one observation (cumulative counters, see struct budget_obs) against
 * the previous judged one and return the decision.  Deterministic: depends
 * only on cfg and the observations passed so far.  These give BUDGET_SKIP:
 * the first observation; those up to warmup_ns after it (start-up: BPF
 * load, the first symbolization of every module; each becomes the new
 * reference, so the first judged interval starts when warm-up ends); the
 * settle_intervals after a change (each becomes the reference); one less
 * than min_interval_ns after the reference (ignored); one whose counters
 * went backwards (becomes the reference).
 */
struct budget_decision budget__step(struct budget *b, const struct budget_obs *obs);

/* "hold", "lower", "raise", "skip". */
const char *budget__action_name(uint32_t action);

#endif
