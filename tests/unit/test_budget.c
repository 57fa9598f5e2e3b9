// SPDX-License-Identifier: MIT
/*
 * The budget controller (userspace/budget/budget.h) is a pure function of
 * its observations: these tests feed recorded observation sequences and
 * check every decision exactly, and that replaying a sequence gives the same
 * decisions.  Also the meta budget.duty_changes parser (capture/duty.h).
 *
 * The sequences use the default configuration for --budget 1 at 4999 Hz:
 * budget 1 % (10 ms of CPU per second), target 0.7 %, room below 0.5 %,
 * warm-up 2 s, perf estimate MS_BUDGET_PERF_NS_PER_SAMPLE per sampler run.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture/capture.h"
#include "capture/duty.h"
#include "userspace/budget/budget.h"

#define S 1000000000ull
#define MS 1000000ull

/* cost_ms of recorder CPU and runs sampler runs during the second ending at t s. */
struct step {
	uint64_t t_s;
	uint64_t cpu_ms;
	uint64_t runs;
	uint32_t action;
	uint32_t factor;
};

static void config(struct budget_config *cfg)
{
	budget_config__default(cfg, 1.0, 4999);
	cfg->perf_ns_per_sample = 0; /* keep the arithmetic of the sequences obvious */
}

/* Feed steps (costs per interval, accumulated into cumulative observations)
 * and check each decision; returns the decisions' factors in out. */
static void replay(const struct budget_config *cfg, const struct step *steps, size_t n,
		   uint32_t *out)
{
	struct budget b;
	struct budget_obs o = { 0 };

	budget__init(&b, cfg);
	for (size_t i = 0; i < n; i++) {
		struct budget_decision d;

		o.time_ns = steps[i].t_s * S;
		o.recorder_cpu_ns += steps[i].cpu_ms * MS;
		o.sampler_runs += steps[i].runs;
		d = budget__step(&b, &o);
		if (d.action != steps[i].action || d.factor != steps[i].factor)
			fail_msg("step %zu (t=%llu s): got %s %u, want %s %u", i,
				 (unsigned long long)steps[i].t_s, budget__action_name(d.action),
				 d.factor, budget__action_name(steps[i].action), steps[i].factor);
		if (out)
			out[i] = d.factor;
	}
}

/* Start-up is not judged; then one interval over the budget holds (it may
 * be one-time work), the second lowers, by the 16x step cap; the next
 * interval settles; 6.2 % then 7 % lower to ceil(16 * 6.2 / 0.7) = 142 (the
 * smaller share of the two); then 0.6 % .. 0.9 % holds. */
static const struct step lowering[] = {
	{ 0, 0, 0, BUDGET_SKIP, 1 },	      /* first observation */
	{ 1, 900, 10000, BUDGET_SKIP, 1 },    /* warm-up */
	{ 2, 900, 10000, BUDGET_SKIP, 1 },    /* warm-up ends: reference */
	{ 3, 1000, 10000, BUDGET_HOLD, 1 },   /* 100 %: one interval over */
	{ 4, 800, 10000, BUDGET_LOWER, 16 },  /* 80 %: wants 115, capped at 16x */
	{ 5, 400, 625, BUDGET_SKIP, 16 },     /* settling */
	{ 6, 62, 625, BUDGET_HOLD, 16 },      /* 6.2 %: one interval over */
	{ 7, 70, 625, BUDGET_LOWER, 142 },    /* 7 %: ceil(16 * 6.2 / 0.7) = ceil(141.7) */
	{ 8, 7, 112, BUDGET_SKIP, 142 },      /* settling */
	{ 9, 7, 112, BUDGET_HOLD, 142 },      /* 0.7 %: inside the band */
	{ 10, 9, 112, BUDGET_HOLD, 142 },     /* 0.9 % */
	{ 11, 6, 112, BUDGET_HOLD, 142 },     /* 0.6 % */
};

static void test_lowering_sequence(void **state)
{
	struct budget_config cfg;

	(void)state;
	config(&cfg);
	replay(&cfg, lowering, sizeof(lowering) / sizeof(lowering[0]), NULL);
}

/* Room for raise_after (3) intervals raises, by at most 4x; one interval in
 * the band resets the count. */
static const struct step raising[] = {
	{ 0, 0, 0, BUDGET_SKIP, 1 },
	{ 2, 0, 0, BUDGET_SKIP, 1 },
	{ 3, 500, 10000, BUDGET_HOLD, 1 },   /* 50 %: one interval over */
	{ 4, 500, 10000, BUDGET_LOWER, 16 }, /* 50 % again: capped at 16x */
	{ 5, 50, 625, BUDGET_SKIP, 16 },
	{ 6, 100, 625, BUDGET_HOLD, 16 },    /* 10 %: one interval over */
	{ 7, 100, 625, BUDGET_LOWER, 229 },  /* 10 %: ceil(16 * 10 / 0.7) = 229 */
	{ 8, 1, 44, BUDGET_SKIP, 229 },
	{ 9, 1, 44, BUDGET_HOLD, 229 },	     /* 0.1 %: room 1 */
	{ 10, 1, 44, BUDGET_HOLD, 229 },     /* room 2 */
	{ 11, 6, 44, BUDGET_HOLD, 229 },     /* 0.6 %: in the band, count reset */
	{ 12, 1, 44, BUDGET_HOLD, 229 },     /* room 1 */
	{ 13, 1, 44, BUDGET_HOLD, 229 },     /* room 2 */
	{ 14, 1, 44, BUDGET_RAISE, 58 },     /* room 3: wants 33, at most /4: ceil(229/4) = 58 */
	{ 15, 3, 173, BUDGET_SKIP, 58 },
	{ 16, 4, 173, BUDGET_HOLD, 58 },     /* 0.4 %: room 1 */
	{ 17, 4, 173, BUDGET_HOLD, 58 },
	{ 18, 4, 173, BUDGET_RAISE, 34 },    /* ceil(58 * 0.4 / 0.7) = 34 */
};

static void test_raising_needs_consecutive_room(void **state)
{
	struct budget_config cfg;

	(void)state;
	config(&cfg);
	replay(&cfg, raising, sizeof(raising) / sizeof(raising[0]), NULL);
}

/* A cost around the budget never oscillates: between 0.5 % and 1 % holds. */
static void test_band_holds(void **state)
{
	static const uint64_t cost_ms[] = { 9, 5, 10, 6, 8, 5, 7, 10, 5, 9 };
	struct budget_config cfg;
	struct budget b;
	struct budget_obs o = { 0 };

	(void)state;
	config(&cfg);
	budget__init(&b, &cfg);
	budget__step(&b, &o);
	o.time_ns = 2 * S;
	budget__step(&b, &o);
	for (size_t i = 0; i < sizeof(cost_ms) / sizeof(cost_ms[0]); i++) {
		struct budget_decision d;

		o.time_ns += S;
		o.recorder_cpu_ns += cost_ms[i] * MS;
		d = budget__step(&b, &o);
		assert_int_equal(d.action, BUDGET_HOLD);
		assert_int_equal(d.factor, 1);
	}
	assert_int_equal(b.lowered + b.raised, 0);
}

/* The same sequence gives the same decisions, also after another run. */
static void test_deterministic(void **state)
{
	size_t n = sizeof(raising) / sizeof(raising[0]);
	uint32_t a[32], b[32];
	struct budget_config cfg;

	(void)state;
	config(&cfg);
	replay(&cfg, raising, n, a);
	replay(&cfg, lowering, sizeof(lowering) / sizeof(lowering[0]), NULL);
	replay(&cfg, raising, n, b);
	assert_memory_equal(a, b, n * sizeof(a[0]));
}

/* perf's per-sample estimate counts: 10,000 runs x 40 us = 40 % of a CPU. */
static void test_perf_estimate(void **state)
{
	struct budget_config cfg;
	struct budget b;
	struct budget_obs o = { 0 };
	struct budget_decision d;

	(void)state;
	budget_config__default(&cfg, 1.0, 4999);
	assert_int_equal(cfg.perf_ns_per_sample, MS_BUDGET_PERF_NS_PER_SAMPLE);
	budget__init(&b, &cfg);
	budget__step(&b, &o);
	o.time_ns = 2 * S;
	budget__step(&b, &o);
	o.time_ns = 3 * S;
	o.sampler_runs = 10000;
	d = budget__step(&b, &o);
	assert_int_equal(d.cost_ns, 10000 * MS_BUDGET_PERF_NS_PER_SAMPLE);
	assert_int_equal(d.action, BUDGET_HOLD); /* one interval over */
	o.time_ns = 4 * S;
	o.sampler_runs = 20000;
	d = budget__step(&b, &o);
	assert_int_equal(d.action, BUDGET_LOWER);
	assert_int_equal(d.factor, 16);
}

/*
 * One-time work after warm-up (a module's DWARF and CFI read when a process
 * loads it): single intervals at 30 % among intervals at 0.6 % do not lower
 * the duty as long as they do not come twice in a row (two in a row do) or
 * so often that the mean of mean_window (8) intervals is over the budget
 * (test_mean_over_budget_lowers).
 */
static const struct step spikes[] = {
	{ 0, 0, 0, BUDGET_SKIP, 1 },
	{ 2, 0, 0, BUDGET_SKIP, 1 },
	{ 3, 6, 0, BUDGET_HOLD, 1 },	/* 0.6 % */
	{ 4, 300, 0, BUDGET_HOLD, 1 },	/* 30 %: one-time work */
	{ 5, 6, 0, BUDGET_HOLD, 1 },
	{ 6, 300, 0, BUDGET_HOLD, 1 },	/* again, alone */
	{ 7, 6, 0, BUDGET_HOLD, 1 },
	{ 8, 300, 0, BUDGET_HOLD, 1 },	/* 30 % ... */
	{ 9, 20, 0, BUDGET_LOWER, 3 },	/* ... then 2 %: two in a row lower, from the
					 * smaller share: ceil(1 * 2 / 0.7) = 3 */
};

static void test_one_time_work_does_not_lower(void **state)
{
	struct budget_config cfg;

	(void)state;
	config(&cfg);
	replay(&cfg, spikes, sizeof(spikes) / sizeof(spikes[0]), NULL);
}

/*
 * A cost that alternates over and under the budget (0.6 %, then 1.8 %: a
 * mean of 1.2 %) never has two intervals over it in a row, so only the mean
 * of the last 8 intervals at one factor lowers it: after the eighth, to
 * ceil(1 * 1.2 / 0.7) = 2; the next interval settles, and at the new factor
 * the window starts again (0.3 % / 0.9 % holds).  A steady 0.9 % never
 * lowers.
 */
static const struct step alternating[] = {
	{ 0, 0, 0, BUDGET_SKIP, 1 },   { 2, 0, 0, BUDGET_SKIP, 1 },
	{ 3, 6, 0, BUDGET_HOLD, 1 },   { 4, 18, 0, BUDGET_HOLD, 1 },
	{ 5, 6, 0, BUDGET_HOLD, 1 },   { 6, 18, 0, BUDGET_HOLD, 1 },
	{ 7, 6, 0, BUDGET_HOLD, 1 },   { 8, 18, 0, BUDGET_HOLD, 1 },
	{ 9, 6, 0, BUDGET_HOLD, 1 },   { 10, 18, 0, BUDGET_HOLD, 1 }, /* mean 1.2 %, now over */
	{ 11, 6, 0, BUDGET_LOWER, 2 }, /* the first interval under it lowers */
	{ 12, 3, 0, BUDGET_SKIP, 2 },  { 13, 3, 0, BUDGET_HOLD, 2 },
	{ 14, 9, 0, BUDGET_HOLD, 2 },  { 15, 3, 0, BUDGET_HOLD, 2 },
	{ 16, 9, 0, BUDGET_HOLD, 2 },  { 17, 3, 0, BUDGET_HOLD, 2 },
	{ 18, 9, 0, BUDGET_HOLD, 2 },  { 19, 3, 0, BUDGET_HOLD, 2 },
	{ 20, 9, 0, BUDGET_HOLD, 2 },  { 21, 3, 0, BUDGET_HOLD, 2 },
};

static void test_mean_over_budget_lowers(void **state)
{
	struct budget_config cfg;
	struct step steady[20];

	(void)state;
	config(&cfg);
	replay(&cfg, alternating, sizeof(alternating) / sizeof(alternating[0]), NULL);
	for (size_t i = 0; i < 20; i++)
		steady[i] = (struct step){ i ? i + 1 : 0, i > 1 ? 9 : 0, 0,
					   i > 1 ? BUDGET_HOLD : BUDGET_SKIP, 1 };
	replay(&cfg, steady, 20, NULL);
	cfg.mean_window = 0; /* off: the alternating cost is never lowered */
	for (size_t i = 0; i < 10; i++) {
		steady[i] = alternating[i];
		steady[i].action = i > 1 ? BUDGET_HOLD : BUDGET_SKIP;
	}
	steady[10] = alternating[10];
	steady[10].action = BUDGET_HOLD;
	steady[10].factor = 1;
	replay(&cfg, steady, 11, NULL);
}

/* Never past max_factor; never below 1; counters going back re-reference. */
static void test_limits(void **state)
{
	struct budget_config cfg;
	struct budget b;
	struct budget_obs o = { 0 };
	struct budget_decision d;

	(void)state;
	config(&cfg);
	cfg.max_factor = 20;
	budget__init(&b, &cfg);
	budget__step(&b, &o);
	o.time_ns = 2 * S;
	budget__step(&b, &o);
	for (int i = 0; i < 6; i++) {
		o.time_ns += S;
		o.recorder_cpu_ns += S; /* 100 % every interval */
		d = budget__step(&b, &o);
		assert_true(d.factor <= 20);
	}
	assert_int_equal(b.factor, 20);
	/* a clock going back is a new reference, not a judgement */
	o.time_ns -= 5 * S;
	d = budget__step(&b, &o);
	assert_int_equal(d.action, BUDGET_SKIP);
	/* too soon after the reference: ignored */
	o.time_ns += S / 10;
	d = budget__step(&b, &o);
	assert_int_equal(d.action, BUDGET_SKIP);
	assert_int_equal(d.factor, 20);
}

static void test_duty_parse(void **state)
{
	struct capture_duty_change ch[4];
	char err[96];

	(void)state;
	assert_int_equal(capture_duty__parse("100:16,200:89,300:1", ch, 4, err, sizeof(err)), 3);
	assert_int_equal(ch[0].time_ns, 100);
	assert_int_equal(ch[0].factor, 16);
	assert_int_equal(ch[1].factor, 89);
	assert_int_equal(ch[2].time_ns, 300);
	assert_int_equal(capture_duty__parse("5:2", NULL, 0, err, sizeof(err)), 1);
	assert_int_equal(capture_duty__parse("", NULL, 0, err, sizeof(err)), -EBADMSG);
	assert_int_equal(capture_duty__parse("100:0", NULL, 0, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "entry 0: factor 0 out of range (1..4294967295)");
	assert_int_equal(capture_duty__parse("200:2,100:3", NULL, 0, err, sizeof(err)), -EBADMSG);
	assert_string_equal(err, "entry 1: time 100 before the previous entry's");
	assert_int_equal(capture_duty__parse("1:4294967296", NULL, 0, err, sizeof(err)),
			 -EBADMSG);
	assert_int_equal(capture_duty__parse("1:2,", NULL, 0, err, sizeof(err)), -EBADMSG);
	assert_int_equal(capture_duty__parse("1:2;3:4", NULL, 0, err, sizeof(err)), -EBADMSG);
	assert_int_equal(capture_duty__parse("99999999999999999999:2", NULL, 0, err, sizeof(err)),
			 -EBADMSG);
}

/* The reader's rule: a malformed budget.duty_changes rejects the capture
 * (the builder checks with the reader's rules before writing). */
static void test_reader_rejects_bad_duty_changes(void **state)
{
	struct capture_builder *b = capture_builder__new();
	struct capture *c = NULL;
	char err[256];
	void *buf = NULL;
	size_t len;

	(void)state;
	assert_non_null(b);
	capture_builder__set_meta(b, "budget.duty_changes", "100:4,200:1");
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "ok.msc", &c, err, sizeof(err)), 0);
	assert_string_equal(capture__meta(c, "budget.duty_changes"), "100:4,200:1");
	capture__free(c);
	free(buf);
	buf = NULL;
	capture_builder__set_meta(b, "budget.duty_changes", "100:4,50:0");
	assert_int_equal(capture_builder__serialize(b, &buf, &len), -EINVAL);
	assert_non_null(strstr(capture_builder__error(b), "budget.duty_changes: entry 1"));
	free(buf);
	capture_builder__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lowering_sequence),
		cmocka_unit_test(test_raising_needs_consecutive_room),
		cmocka_unit_test(test_band_holds),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_perf_estimate),
		cmocka_unit_test(test_one_time_work_does_not_lower),
		cmocka_unit_test(test_mean_over_budget_lowers),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_duty_parse),
		cmocka_unit_test(test_reader_rejects_bad_duty_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
