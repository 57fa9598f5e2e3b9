// SPDX-License-Identifier: MIT
/*
 * The budget controller (budget.h): observations in, a decision out.  No
 * clock, no I/O, no global state; floating point only in operations whose
 * IEEE results are exact functions of their inputs, so a replayed sequence
 * gives the same decisions bit for bit.
 */
#include <math.h>
#include <string.h>

#include "budget.h"

void budget_config__default(struct budget_config *cfg, double pct, uint32_t freq_hz)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->budget_frac = pct / 100.0;
	cfg->max_factor = freq_hz ? freq_hz : 1;
	cfg->perf_ns_per_sample = MS_BUDGET_PERF_NS_PER_SAMPLE;
	cfg->min_interval_ns = MS_BUDGET_INTERVAL_NS / 2;
	cfg->warmup_ns = 2 * MS_BUDGET_INTERVAL_NS;
	cfg->target_frac = 0.7;
	cfg->low_frac = 0.5;
	cfg->raise_after = 3;
	cfg->lower_after = 2;
	cfg->max_raise_step = 4;
	cfg->max_lower_step = 16;
	cfg->settle_intervals = 1;
	cfg->mean_window = 8;
}

void budget__init(struct budget *b, const struct budget_config *cfg)
{
	memset(b, 0, sizeof(*b));
	b->cfg = *cfg;
	if (!b->cfg.max_factor)
		b->cfg.max_factor = 1;
	if (!b->cfg.max_raise_step)
		b->cfg.max_raise_step = 2;
	if (!b->cfg.max_lower_step)
		b->cfg.max_lower_step = 2;
	if (!b->cfg.lower_after)
		b->cfg.lower_after = 1;
	if (b->cfg.mean_window > BUDGET_WINDOW_MAX)
		b->cfg.mean_window = BUDGET_WINDOW_MAX;
	b->factor = 1;
	b->peak_factor = 1;
}

const char *budget__action_name(uint32_t action)
{
	switch (action) {
	case BUDGET_HOLD:
		return "hold";
	case BUDGET_LOWER:
		return "lower";
	case BUDGET_RAISE:
		return "raise";
	case BUDGET_SKIP:
		return "skip";
	}
	return "unknown";
}

static uint32_t clamp_factor(const struct budget *b, double f)
{
	if (!(f >= 1.0)) /* also NaN */
		return 1;
	if (f >= (double)b->cfg.max_factor)
		return b->cfg.max_factor;
	return (uint32_t)f;
}

/* The factor predicted to bring share (measured at the current factor) to
 * target_frac of the budget, assuming cost proportional to the sample rate. */
static uint32_t predicted_factor(const struct budget *b, double share)
{
	double target = b->cfg.target_frac * b->cfg.budget_frac;

	if (target <= 0)
		return b->cfg.max_factor;
	return clamp_factor(b, ceil((double)b->factor * share / target));
}

/* Add an interval to the window; the window's mean share once it is full,
 * else a negative value. */
static double window_mean(struct budget *b, uint64_t cost_ns, uint64_t interval_ns)
{
	uint64_t cost = 0, time = 0;
	uint32_t n = b->cfg.mean_window;

	if (!n)
		return -1.0;
	b->win_cost_ns[b->win_next] = cost_ns;
	b->win_interval_ns[b->win_next] = interval_ns;
	b->win_next = (b->win_next + 1) % n;
	if (b->win_n < n)
		b->win_n++;
	if (b->win_n < n)
		return -1.0;
	for (uint32_t i = 0; i < n; i++) {
		cost += b->win_cost_ns[i];
		time += b->win_interval_ns[i];
	}
	return time ? (double)cost / (double)time : -1.0;
}

struct budget_decision budget__step(struct budget *b, const struct budget_obs *o)
{
	struct budget_decision d = { .action = BUDGET_SKIP, .factor = b->factor };
	const struct budget_obs *l = &b->last;
	uint64_t runs;

	if (!b->have_last)
		b->start_ns = o->time_ns;
	if (!b->have_last || o->time_ns < l->time_ns || o->recorder_cpu_ns < l->recorder_cpu_ns ||
	    o->bpf_run_ns < l->bpf_run_ns || o->sampler_runs < l->sampler_runs ||
	    o->time_ns - b->start_ns <= b->cfg.warmup_ns) {
		b->last = *o;
		b->have_last = true;
		b->over_intervals = 0;
		return d;
	}
	d.interval_ns = o->time_ns - l->time_ns;
	if (d.interval_ns < b->cfg.min_interval_ns || !d.interval_ns)
		return d;
	if (b->settling) {
		b->settling--;
		b->last = *o;
		return d;
	}
	runs = o->sampler_runs - l->sampler_runs;
	d.cost_ns = (o->recorder_cpu_ns - l->recorder_cpu_ns) + (o->bpf_run_ns - l->bpf_run_ns) +
		    runs * b->cfg.perf_ns_per_sample;
	d.share = (double)d.cost_ns / (double)d.interval_ns;
	b->last = *o;
	double mean = window_mean(b, d.cost_ns, d.interval_ns);

	d.action = BUDGET_HOLD;
	if (d.share <= b->cfg.budget_frac && mean > b->cfg.budget_frac) {
		uint32_t f = predicted_factor(b, mean);
		uint64_t ceiling = (uint64_t)b->factor * b->cfg.max_lower_step;

		if (f > ceiling)
			f = (uint32_t)ceiling;
		if (f > b->factor) {
			d.action = BUDGET_LOWER;
			d.factor = f;
		}
	} else if (d.share > b->cfg.budget_frac) {
		b->room_intervals = 0;
		if (!b->over_intervals++ || d.share < b->over_share)
			b->over_share = d.share;
		if (b->over_intervals >= b->cfg.lower_after) {
			uint32_t f = predicted_factor(b, b->over_share);
			uint64_t ceiling = (uint64_t)b->factor * b->cfg.max_lower_step;

			if (f > ceiling)
				f = (uint32_t)ceiling; /* f <= max_factor <= UINT32_MAX */
			if (f > b->factor) {
				d.action = BUDGET_LOWER;
				d.factor = f;
			}
		}
	} else if (d.share < b->cfg.low_frac * b->cfg.budget_frac) {
		if (++b->room_intervals >= b->cfg.raise_after && b->factor > 1) {
			uint32_t f = predicted_factor(b, d.share);
			uint32_t floor_f = (b->factor + b->cfg.max_raise_step - 1) /
					   b->cfg.max_raise_step;

			if (f < floor_f)
				f = floor_f;
			if (f < b->factor) {
				d.action = BUDGET_RAISE;
				d.factor = f;
				b->room_intervals = 0;
			}
		}
	} else {
		b->room_intervals = 0;
	}
	if (d.share <= b->cfg.budget_frac)
		b->over_intervals = 0;
	if (d.action == BUDGET_LOWER)
		b->lowered++;
	else if (d.action == BUDGET_RAISE)
		b->raised++;
	if (d.action == BUDGET_LOWER || d.action == BUDGET_RAISE) {
		b->settling = b->cfg.settle_intervals;
		b->over_intervals = 0;
		b->win_n = 0; /* the window holds one factor's intervals */
		b->win_next = 0;
	}
	b->factor = d.factor;
	if (b->factor > b->peak_factor)
		b->peak_factor = b->factor;
	return d;
}
