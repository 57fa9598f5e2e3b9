// SPDX-License-Identifier: MIT
/*
 * The budget monitor (monitor.h): clocks, BPF stats and the period ioctl
 * around the pure controller.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "monitor.h"

struct budget_monitor {
	struct budget ctl;
	double pct;
	int stats_fd; /* BPF_ENABLE_STATS: run-time stats count while it is open; -1 if refused */
	char stats_note[160];
	uint64_t next_ns;
	uint32_t steps;
	struct budget_obs first, last;
	bool have_first;
	/* Steady state: the observation after warm-up and after the last duty change settled. */
	struct budget_obs steady;
	bool have_steady;
	/* The longest steady span a later duty change closed ([held_from, held_to]):
	 * reported when the last one is shorter (a change near the end). */
	struct budget_obs held_from, held_to;
	bool have_held;
};

static uint64_t span_ns(const struct budget_obs *from, const struct budget_obs *to)
{
	return to->time_ns > from->time_ns ? to->time_ns - from->time_ns : 0;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const char *budget_monitor__note(const struct budget_monitor *m)
{
	return m->stats_fd >= 0 ? NULL : m->stats_note;
}

struct budget_monitor *budget_monitor__new(double pct, uint32_t freq_hz, char *err,
					   size_t errlen)
{
	struct budget_monitor *m = calloc(1, sizeof(*m));
	struct budget_config cfg;
	int fd;

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0) {
		/* BPF_ENABLE_STATS needs CAP_SYS_ADMIN (kernel/bpf/syscall.c,
		 * bpf_enable_runtime_stats); without it the budget still counts the
		 * recorder's CPU and the perf estimate, and says so. */
		snprintf(m->stats_note, sizeof(m->stats_note),
			 "no (BPF_ENABLE_STATS: %s; it needs CAP_SYS_ADMIN): BPF run time not "
			 "counted",
			 strerror(errno));
	}
	m->stats_fd = fd;
	m->pct = pct;
	budget_config__default(&cfg, pct, freq_hz);
	budget__init(&m->ctl, &cfg);
	return m;
}

static int emit_text(stream_sink_fn sink, void *ctx, uint32_t kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int emit_text(stream_sink_fn sink, void *ctx, uint32_t kind, const char *fmt, ...)
{
	struct ms_chunk c = { .kind = kind };
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	c.len = (uint32_t)n;
	return sink(ctx, &c, buf);
}

int budget_monitor__emit_meta(struct budget_monitor *m, stream_sink_fn sink, void *ctx)
{
	const struct budget_config *cfg = &m->ctl.cfg;
	int err;

	err = ms_meta__emit_number(sink, ctx, MS_META_BUDGET_PCT, m->pct);
	if (!err)
		err = ms_meta__emit(sink, ctx, MS_META_BUDGET_BPF_STATS,
				    m->stats_fd >= 0 ? "yes" : m->stats_note);
	if (!err)
		err = ms_meta__emit_u64(sink, ctx, MS_META_BUDGET_PERF_NS_PER_SAMPLE,
					cfg->perf_ns_per_sample);
	if (!err)
		err = ms_meta__emit_u64(sink, ctx, MS_META_BUDGET_MAX_FACTOR, cfg->max_factor);
	if (!err)
		err = ms_meta__emit_u64(sink, ctx, MS_META_BUDGET_INTERVAL_NS, MS_BUDGET_INTERVAL_NS);
	return err;
}

static int observe(const struct budget_recorder *r, struct budget_obs *o)
{
	uint64_t run_ns, runs;
	int err = r->bpf_stats(r->ctx, &run_ns, &runs);

	if (err)
		return err;
	o->time_ns = clock_ns(CLOCK_MONOTONIC);
	/* every thread of the recorder (CLOCK_PROCESS_CPUTIME_ID: user + system) */
	o->recorder_cpu_ns = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	o->bpf_run_ns = run_ns;
	o->sampler_runs = runs;
	return 0;
}

int budget_monitor__tick(struct budget_monitor *m, const struct budget_recorder *r)
{
	struct budget_decision d;
	struct budget_obs o;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	int err;

	if (m->have_first && now < m->next_ns)
		return 0;
	err = observe(r, &o);
	if (err)
		return err;
	if (!m->have_first) {
		m->first = o;
		m->have_first = true;
	}
	m->last = o;
	m->next_ns = o.time_ns + MS_BUDGET_INTERVAL_NS;
	d = budget__step(&m->ctl, &o);
	if (d.action != BUDGET_SKIP)
		m->steps++;
	if (d.action == BUDGET_LOWER || d.action == BUDGET_RAISE) {
		if (m->have_steady &&
		    (!m->have_held || span_ns(&m->steady, &o) > span_ns(&m->held_from, &m->held_to))) {
			m->held_from = m->steady;
			m->held_to = o;
			m->have_held = true;
		}
		m->have_steady = false;
	} else if (!m->have_steady && !m->ctl.settling &&
		   o.time_ns - m->first.time_ns >= m->ctl.cfg.warmup_ns) {
		m->steady = o;
		m->have_steady = true;
	}
	if (d.action == BUDGET_LOWER || d.action == BUDGET_RAISE)
		return r->set_duty(r->ctx, d.factor);
	return 0;
}

/* Totals since the monitor's first observation (sampling start) up to o:
 * what a segment's counters add up (budget_monitor__counters) and what the
 * end writes (budget_monitor__finish). */
static int monitor__emit_totals(const struct budget_monitor *m, const struct budget_obs *o,
				stream_sink_fn sink, void *ctx)
{
	const struct budget *b = &m->ctl;
	int err = 0;

#define COUNTER(name, v)                                                                           \
	do {                                                                                       \
		if (!err)                                                                          \
			err = emit_text(sink, ctx, MS_CHUNK_COUNTER, name "=%llu",                 \
					(unsigned long long)(v));                                  \
	} while (0)
	COUNTER("budget.recorder_cpu_ns", o->recorder_cpu_ns - m->first.recorder_cpu_ns);
	COUNTER("budget.bpf_run_time_ns", o->bpf_run_ns - m->first.bpf_run_ns);
	COUNTER("budget.sampler_runs", o->sampler_runs - m->first.sampler_runs);
	COUNTER("budget.perf_estimate_ns",
		(o->sampler_runs - m->first.sampler_runs) * b->cfg.perf_ns_per_sample);
	COUNTER("budget.observed_ns", o->time_ns - m->first.time_ns);
	COUNTER("budget.lowered", b->lowered);
	COUNTER("budget.raised", b->raised);
	COUNTER("budget.steps", m->steps);
#undef COUNTER
	return err;
}

int budget_monitor__finish(struct budget_monitor *m, const struct budget_recorder *r,
			   stream_sink_fn sink, void *ctx)
{
	const struct budget *b = &m->ctl;
	struct budget_obs o;
	int err = observe(r, &o);

	if (err)
		return err;
	if (!m->have_first)
		m->first = o;
	m->last = o;
#define COUNTER(name, v)                                                                           \
	do {                                                                                       \
		if (!err)                                                                          \
			err = emit_text(sink, ctx, MS_CHUNK_COUNTER, name "=%llu",                 \
					(unsigned long long)(v));                                  \
	} while (0)
	err = monitor__emit_totals(m, &o, sink, ctx);
	COUNTER("budget.peak_factor", b->peak_factor);
	COUNTER("budget.final_factor", b->factor);
	COUNTER("budget.warmup_ns", b->cfg.warmup_ns);
	/* how long over the budget, after warm-up, before the duty is lowered */
	COUNTER("budget.lower_after_ns", (uint64_t)b->cfg.lower_after * MS_BUDGET_INTERVAL_NS);
	/* The same over the longest span the controller held one duty after
	 * warm-up: the last (to the end) unless a change near the end left it
	 * shorter than one a change closed earlier (docs/budget.md). */
	const struct budget_obs *from = NULL, *to = NULL;

	if (m->have_steady && o.time_ns > m->steady.time_ns) {
		from = &m->steady;
		to = &o;
	}
	if (m->have_held && (!from || span_ns(&m->held_from, &m->held_to) > span_ns(from, to))) {
		from = &m->held_from;
		to = &m->held_to;
	}
	if (from) {
		COUNTER("budget.steady_recorder_cpu_ns", to->recorder_cpu_ns - from->recorder_cpu_ns);
		COUNTER("budget.steady_bpf_run_time_ns", to->bpf_run_ns - from->bpf_run_ns);
		COUNTER("budget.steady_perf_estimate_ns",
			(to->sampler_runs - from->sampler_runs) * b->cfg.perf_ns_per_sample);
		COUNTER("budget.steady_observed_ns", to->time_ns - from->time_ns);
		COUNTER("budget.steady_closed", to != &o);
	}
#undef COUNTER
	return err;
}

int budget_monitor__counters(struct budget_monitor *m, const struct budget_recorder *r,
			     stream_sink_fn sink, void *ctx)
{
	struct budget_obs o;
	int err;

	if (!m->have_first)
		return 0;
	err = observe(r, &o);
	if (err)
		return err;
	return monitor__emit_totals(m, &o, sink, ctx);
}

void budget_monitor__free(struct budget_monitor *m)
{
	if (!m)
		return;
	if (m->stats_fd >= 0)
		close(m->stats_fd);
	free(m);
}
