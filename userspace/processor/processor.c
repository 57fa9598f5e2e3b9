// SPDX-License-Identifier: MIT
/*
 * Processor intake: validate chunk framing, hold records until the drain
 * round watermark passes them, release them in time order, dispatch.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "../stream/memory_policy.h"

static const char *const problem_names[] = {
#define MS_PROBLEM_NAME(id, name, text) "processor." name,
	MS_PROBLEMS(MS_PROBLEM_NAME)
#undef MS_PROBLEM_NAME
};

struct processor *processor__new(struct capture_builder *b, struct symbolizer *s)
{
	struct processor *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->b = b;
	p->sym = s;
	if (s)
		symbolizer__set_dwarf_budget(s, MS_SYMBOLS_DWARF_BYTES_MAX);
	p->kernel_module = CAPTURE_NONE;
	/* streams from before META perf.sample_type used this one */
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &p->sideband_id);
	p->event_row = CAPTURE_NONE;
	snprintf(p->event_name, sizeof(p->event_name), "cpu-clock");
	p->duty_factor = 1;
	p->offcpu_event_row = CAPTURE_NONE;
	for (size_t i = 0; i < sizeof(p->offcpu_marks) / sizeof(p->offcpu_marks[0]); i++)
		p->offcpu_marks[i] = CAPTURE_NONE;
	for (size_t i = 0; i < sizeof(p->truncation_frames) / sizeof(p->truncation_frames[0]); i++)
		p->truncation_frames[i] = CAPTURE_NONE;
	for (size_t i = 0; i < UNWIND_REASON__COUNT; i++)
		p->trunc_rows[i] = CAPTURE_NONE;
	p->py_tail = CAPTURE_NONE;
	for (size_t i = 0; i < sizeof(p->py_marks) / sizeof(p->py_marks[0]); i++)
		p->py_marks[i] = CAPTURE_NONE;
	return p;
}

void processor__set_python(struct processor *p, const struct py_tracker *tracker)
{
	p->py = tracker;
}

void processor__set_kunwind(struct processor *p, struct kunwind_maps *km, bool eager)
{
	p->kunwind = km;
	p->ku_eager = eager;
}

void processor__kunwind_prepare(struct processor *p, uint32_t pid)
{
	kunwind__live_prepare(p, pid);
}

void processor__kunwind_prepare_command(struct processor *p, const char *path)
{
	kunwind__live_prepare_command(p, path);
}

void processor__free(struct processor *p)
{
	if (!p)
		return;
	tasks__release(p);
	kunwind__live_release(p);
	stacks__release(p);
	python__release(p);
	attribution__free(p->attribution);
	pins__free(p->pins);
	offcpu__release(p);
	probes__release(p);
	free(p->held);
	free(p->held_tmp);
	free(p->held_bytes);
	free(p->held_cut_buf);
	free(p->jit_maplog);
	free(p->duty_changes);
	free(p);
}

uint64_t processor__samples(const struct processor *p)
{
	return p->samples;
}

/* The record's own time, or 0 if it has none we can read. */
static uint64_t record_time(const struct processor *p, uint32_t kind, const uint8_t *rec,
			    uint32_t len)
{
	struct perf_sample_id id;
	uint64_t t = 0;

	if (kind == MS_CHUNK_BPF) {
		/* every BPF record has its time at offset 8, whatever its size
		 * (an interval without stacks is smaller than a sample):
		 * bpf/abi/records.h asserts it of each record kind */
		if (len >= 16)
			memcpy(&t, rec + 8, sizeof(t));
		return t;
	}
	/* perf: the sample_id trailer of the side-band sample_type */
	perf_sample_id__read(&p->sideband_id, rec, len, &id);
	return id.time;
}

/* A sampling period change (record --budget): later samples weigh factor. */
static int duty(struct processor *p, uint64_t time, const uint8_t *rec, uint32_t len)
{
	struct ms_duty d;

	if (len != sizeof(d)) {
		processor__problem(p, MS_PROBLEM_BAD_CHUNK);
		return 0;
	}
	memcpy(&d, rec, sizeof(d));
	if (!d.factor) {
		processor__problem(p, MS_PROBLEM_BAD_CHUNK);
		return 0;
	}
	if (p->nduty_changes == p->duty_changes_cap) {
		uint32_t ncap = p->duty_changes_cap ? 2 * p->duty_changes_cap : 16;
		struct duty_change *n = realloc(p->duty_changes, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->duty_changes = n;
		p->duty_changes_cap = ncap;
	}
	p->duty_changes[p->nduty_changes++] = (struct duty_change){ time, d.factor };
	p->duty_factor = d.factor;
	return 0;
}

static int dispatch(struct processor *p, uint32_t kind, const uint8_t *rec, uint32_t len,
		    uint32_t source, uint64_t time)
{
	if (kind == MS_CHUNK_DUTY)
		return duty(p, time, rec, len);
	if (kind == MS_CHUNK_PERF)
		return tasks__perf_record(p, rec, len, source);

	struct ms_rec_header h;

	if (len < sizeof(h)) {
		processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
		return 0;
	}
	memcpy(&h, rec, sizeof(h));
	if (h.size != len) {
		processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
		return 0;
	}
	if (h.type == MS_REC_OFFCPU) {
		if (len < sizeof(struct ms_offcpu) || len % 8) {
			processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
			return 0;
		}
		return offcpu__record(p, (const struct ms_offcpu *)rec, len);
	}
	if (h.type == MS_REC_PROBE)
		return probes__record(p, rec, len);
	if (h.type == MS_REC_OFFCPU_WAKER) {
		if (len < sizeof(struct ms_offcpu_waker) || len % 8) {
			processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
			return 0;
		}
		return offcpu__waker(p, (const struct ms_offcpu_waker *)rec, len);
	}
	if (h.type != MS_REC_SAMPLE) {
		processor__problem(p, MS_PROBLEM_UNKNOWN_BPF_RECORD);
		return 0;
	}
	if (len < sizeof(struct ms_sample) || len % 8) {
		processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
		return 0;
	}
	if (processor__after_window(p, ((const struct ms_sample *)rec)->time_ns)) {
		p->after_window_samples++;
		return 0;
	}
	/* The ring gives 8-byte aligned records; held_bytes keeps 8-byte alignment. */
	return stacks__sample(p, (const struct ms_sample *)rec, len);
}

static int held_cmp(const void *a, const void *b)
{
	const struct held_record *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void processor__set_round_budget(struct processor *p, uint64_t budget_ns, uint64_t max_lag_ns)
{
	p->round_budget_ns = budget_ns;
	p->max_lag_ns = max_lag_ns;
}

void processor__set_window(struct processor *p, uint64_t window_ns)
{
	p->window_ns = window_ns;
}

void processor__set_hold_back(struct processor *p, uint64_t hold_ns)
{
	p->hold_back_ns = hold_ns;
}

/* The time before which a round releases records: the previous round's,
 * less the hold-back (processor__set_hold_back). */
static uint64_t release_limit(const struct processor *p)
{
	return p->prev_round > p->hold_back_ns ? p->prev_round - p->hold_back_ns : 0;
}

bool processor__behind(const struct processor *p)
{
	/* release() leaves held[] sorted by time */
	return p->nheld > p->held_first && p->have_round &&
	       p->held[p->held_first].time < release_limit(p);
}

uint64_t processor__released_until(const struct processor *p)
{
	uint64_t w = p->have_round ? release_limit(p) : 0;

	/* [held_first, held_sorted) is in time order, the tail after it not */
	if (p->held_first < p->held_sorted && p->held[p->held_first].time < w)
		w = p->held[p->held_first].time;
	for (size_t i = p->held_sorted > p->held_first ? p->held_sorted : p->held_first;
	     i < p->nheld; i++)
		if (p->held[i].time < w)
			w = p->held[i].time;
	return w;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Move the held records down to held[0] (released ones leave a gap at the
 * front until it outweighs the rest: amortized O(1) per record). */
static void held_shift(struct processor *p)
{
	if (!p->held_first)
		return;
	memmove(p->held, p->held + p->held_first, (p->nheld - p->held_first) * sizeof(*p->held));
	p->nheld -= p->held_first;
	p->held_sorted = p->held_sorted > p->held_first ? p->held_sorted - p->held_first : 0;
	p->held_first = 0;
}

/*
 * Put held[] in (time, seq) order: only the records that arrived since the
 * last sort are sorted, then merged into the sorted run from its end (a
 * drain round's records mostly follow the run), so a round costs what it
 * brought in, not the size of the backlog.  Returns 0 or -ENOMEM (then
 * held[] is sorted whole, in place).
 */
static int held_sort(struct processor *p)
{
	size_t first = p->held_sorted > p->held_first ? p->held_sorted : p->held_first;
	size_t ntail = p->nheld - first, i, j, k;

	if (!ntail)
		return 0;
	qsort(p->held + first, ntail, sizeof(*p->held), held_cmp);
	if (first > p->held_first && held_cmp(&p->held[first - 1], &p->held[first]) > 0) {
		if (ntail > p->held_tmp_cap) {
			struct held_record *t = realloc(p->held_tmp, ntail * sizeof(*t));

			if (!t) {
				qsort(p->held + p->held_first, p->nheld - p->held_first,
				      sizeof(*p->held), held_cmp);
				p->held_sorted = p->nheld;
				return -ENOMEM;
			}
			p->held_tmp = t;
			p->held_tmp_cap = ntail;
		}
		memcpy(p->held_tmp, p->held + first, ntail * sizeof(*p->held));
		i = first; /* prefix [held_first, i) left to place */
		j = ntail; /* tail [0, j) left to place */
		k = p->nheld;
		while (j) {
			if (i > p->held_first && held_cmp(&p->held[i - 1], &p->held_tmp[j - 1]) > 0)
				p->held[--k] = p->held[--i];
			else
				p->held[--k] = p->held_tmp[--j];
		}
	}
	p->held_sorted = p->nheld;
	return 0;
}

static int held_offset_cmp(const void *a, const void *b)
{
	const struct held_record *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Rebuild held_bytes densely in place (8-byte aligned), dropping the bytes
 * of released records: records move down in offset order, so none
 * overwrites one not yet moved; held[] is sorted back by time.  Allocates
 * nothing, so the held bytes never need twice their budget. */
static void held_compact(struct processor *p)
{
	size_t out = 0;

	held_shift(p);
	qsort(p->held, p->nheld, sizeof(*p->held), held_offset_cmp);
	for (size_t i = 0; i < p->nheld; i++) {
		if (p->held[i].offset != out)
			memmove(p->held_bytes + out, p->held_bytes + p->held[i].offset,
				p->held[i].len);
		p->held[i].offset = out;
		out += (p->held[i].len + 7) & ~7u;
	}
	qsort(p->held, p->nheld, sizeof(*p->held), held_cmp);
	p->held_sorted = p->nheld;
	p->held_len = out;
	p->held_live = out;
}

/*
 * Release held records stamped before limit (all if limit == UINT64_MAX),
 * in time order.  With a round budget (live recording) it stops early once
 * the budget is spent, except for records older than must (newest round
 * minus max_lag_ns); the rest wait for the next round.
 */
static int release(struct processor *p, uint64_t limit)
{
	size_t n, i;
	uint64_t deadline = 0, must = 0;
	int err = 0;

	if (p->nheld == p->held_first)
		return 0;
	(void)held_sort(p); /* -ENOMEM: sorted whole instead */
	n = p->held_first;
	while (n < p->nheld && (limit == UINT64_MAX || p->held[n].time < limit))
		n++;
	if (n > p->held_first &&
	    (!p->oldest_released || p->held[p->held_first].time < p->oldest_released))
		p->oldest_released = p->held[p->held_first].time;
	if (p->round_budget_ns && limit != UINT64_MAX) {
		deadline = mono_ns() + p->round_budget_ns;
		must = limit > p->max_lag_ns ? limit - p->max_lag_ns : 0;
	}
	for (i = p->held_first; i < n; i++) {
		const struct held_record *h = &p->held[i];

		if (deadline && h->time >= must && !(i & 15) && mono_ns() > deadline)
			break; /* the rest waits for the next round */
		p->last_released = h->time;
		err = dispatch(p, h->kind, p->held_bytes + h->offset, h->len, h->source, h->time);
		if (err)
			return err;
	}
	n = i;
	for (i = p->held_first; i < n; i++)
		p->held_live -= (p->held[i].len + 7) & ~7u;
	p->held_first = n;
	if (p->held_first == p->nheld) {
		p->nheld = p->held_first = p->held_sorted = 0;
		p->held_len = 0;
		p->held_live = 0;
		return 0;
	}
	if (p->held_first > (p->nheld - p->held_first))
		held_shift(p);
	/* Released records leave dead bytes behind; rebuild only once they
	 * outweigh the live ones, so a round that releases a little of a
	 * large backlog (round budget) does not copy the whole backlog. */
	if (p->held_len - p->held_live > p->held_live)
		held_compact(p);
	return 0;
}

/* How far processing runs behind the drain at a round: the round's time
 * minus the oldest record released by it or still waiting though due
 * (stamped before the previous round), 0 when none. */
static void note_lag(struct processor *p, uint64_t round_ns)
{
	uint64_t oldest = p->oldest_released, lag = 0;

	if (p->nheld > p->held_first && p->held[p->held_first].time < release_limit(p) &&
	    (!oldest || p->held[p->held_first].time < oldest))
		oldest = p->held[p->held_first].time;
	if (oldest && round_ns > oldest)
		lag = round_ns - oldest;
	p->oldest_released = 0;
	if (lag > p->lag_max_seen_ns)
		p->lag_max_seen_ns = lag;
	p->lag_sum_ns += lag;
	p->lag_rounds++;
}

uint64_t processor__lag_ns(const struct processor *p, uint64_t *mean_ns)
{
	if (mean_ns)
		*mean_ns = p->lag_rounds ? p->lag_sum_ns / p->lag_rounds : 0;
	return p->lag_max_seen_ns;
}

static int hold(struct processor *p, const struct ms_chunk *c, const void *payload)
{
	uint32_t len = c->len;
	uint64_t t;
	size_t need = (len + 7) & ~7u;

	/* processor__sink holds records of 8 bytes and more only; an empty one
	 * (payload NULL, as stream__replay hands it) must never reach memcpy,
	 * here or when release() compacts held_bytes (which stays NULL until a
	 * non-empty record arrives). */
	if (!c->len || !payload) {
		processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
		return 0;
	}
	t = c->kind == MS_CHUNK_DUTY ? c->time : record_time(p, c->kind, payload, c->len);

	/* Arrived after the watermark passed it: released with the next round,
	 * out of order, and counted. */
	if (p->have_round && t < p->last_released)
		processor__problem(p, MS_PROBLEM_LATE_RECORD);
	/* The held-record budget (stream/memory_policy.h): a sample that would
	 * exceed it is dropped whole, counted; side-band records are kept. */
	if (c->kind == MS_CHUNK_BPF && p->held_live + need > MS_HELD_BYTES_MAX / 2 &&
	    kunwind__held_cut(p, &payload, &len, MS_HELD_BYTES_MAX - p->held_live))
		need = (len + 7) & ~7u; /* kept with a shorter copy, or as it was */
	if (c->kind == MS_CHUNK_BPF && p->held_live + need > MS_HELD_BYTES_MAX) {
		processor__problem(p, MS_PROBLEM_HELD_BUDGET_FULL);
		return 0;
	}
	if (p->nheld == p->held_cap)
		held_shift(p);
	if (p->nheld == p->held_cap) {
		size_t ncap = p->held_cap ? p->held_cap * 2 : 4096;
		struct held_record *nh = realloc(p->held, ncap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		p->held = nh;
		p->held_cap = ncap;
	}
	if (p->held_len + need > p->held_bytes_cap && p->held_len > p->held_live)
		held_compact(p); /* reuse dead bytes before growing */
	if (p->held_len + need > p->held_bytes_cap) {
		size_t ncap = p->held_bytes_cap ? p->held_bytes_cap : 1 << 20;

		while (ncap < p->held_len + need)
			ncap *= 2;
		uint8_t *nb = realloc(p->held_bytes, ncap);

		if (!nb)
			return -ENOMEM;
		p->held_bytes = nb;
		p->held_bytes_cap = ncap;
	}
	memcpy(p->held_bytes + p->held_len, payload, len);
	p->held[p->nheld++] = (struct held_record){
		.time = t,
		.seq = p->seq++,
		.offset = p->held_len,
		.len = len,
		.kind = c->kind,
		.source = c->source,
	};
	p->held_len += need;
	p->held_live += need;
	if (p->held_live > p->held_peak)
		p->held_peak = p->held_live;
	return 0;
}

/* "key=value" payload (not NUL-terminated) into key/value buffers. */
static bool split_kv(const void *payload, uint32_t len, char *key, size_t keylen, char **value)
{
	const char *s = payload, *eq;
	char *buf;

	/* an empty chunk comes with payload NULL (stream__replay): memchr(NULL, ..., 0) is UB */
	if (!len || !s)
		return false;
	eq = memchr(s, '=', len);
	if (!eq || eq == s || (size_t)(eq - s) >= keylen || memchr(s, '\0', len))
		return false;
	memcpy(key, s, eq - s);
	key[eq - s] = '\0';
	buf = malloc(len - (eq - s));
	if (!buf)
		return false;
	memcpy(buf, eq + 1, len - (eq - s) - 1);
	buf[len - (eq - s) - 1] = '\0';
	*value = buf;
	return true;
}

/* A META chunk (stream/meta.h): what the processor needs from the typed
 * keys, then every pair into the capture's meta table. */
static int meta(struct processor *p, const void *payload, uint32_t len)
{
	struct ms_meta m;
	int err = ms_meta__parse(payload, len, &m);

	if (err == -ENOMEM)
		return err;
	if (err) {
		processor__problem(p, MS_PROBLEM_BAD_META);
		return 0;
	}
	switch (m.id) {
	case MS_META_MODE:
		if (!strcmp(m.value, "system-wide"))
			p->system_wide = true;
		break;
	case MS_META_STACK_SIZE:
		p->stack_copy_on = m.u64 != 0;
		p->stack_size = m.u64;
		break;
	case MS_META_SYMBOLIZE:
		if (p->symbolize_forced) {
			ms_meta__release(&m);
			return 0; /* record --replay --symbolize chose the other way */
		}
		p->symbolize_deferred = !strcmp(m.value, "deferred");
		break;
	case MS_META_CALL_GRAPH:
		/* dwarf-kernel: samples carry their own unwind state (kunwind.c);
		 * any without it are unwound as dwarf. */
		p->call_graph = !strcmp(m.value, "fp")	    ? MS_CG_FP
				: !strcmp(m.value, "dwarf") || !strcmp(m.value, "dwarf-kernel")
				    ? MS_CG_DWARF
				    : MS_CG_AUTO;
		break;
	case MS_META_VERIFY_UNWIND:
		p->verify_unwind = m.u64 != 0;
		break;
	case MS_META_PERF_SAMPLE_TYPE:
		perf_sample_id__layout(m.u64, &p->sideband_id);
		break;
	case MS_META_EVENT:
		snprintf(p->event_name, sizeof(p->event_name), "%s", m.value);
		break;
	default:
		break;
	}
	capture_builder__set_meta(p->b, m.key, m.value);
	ms_meta__release(&m);
	return 0;
}

int processor__sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	struct processor *p = ctx;
	char key[128], *value = NULL;

	if (c->len > MS_CHUNK_MAX_PAYLOAD) {
		processor__problem(p, MS_PROBLEM_BAD_CHUNK);
		return 0;
	}
	switch (c->kind) {
	case MS_CHUNK_META:
		return meta(p, payload, c->len);
	case MS_CHUNK_COUNTER: {
		char *end;
		unsigned long long v;

		if (!split_kv(payload, c->len, key, sizeof(key), &value)) {
			processor__problem(p, MS_PROBLEM_BAD_META);
			return 0;
		}
		errno = 0;
		v = strtoull(value, &end, 10);
		if (errno || *end || end == value)
			processor__problem(p, MS_PROBLEM_BAD_META);
		else
			capture_builder__add_counter(p->b, key, v);
		free(value);
		return 0;
	}
	case MS_CHUNK_DUTY:
	case MS_CHUNK_BPF:
	case MS_CHUNK_PERF:
		if (c->len < 8) {
			processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
			return 0;
		}
		if (c->kind == MS_CHUNK_BPF) {
			struct ms_rec_header h;

			/* a probe site names the records before it: taken at once */
			memcpy(&h, payload, sizeof(h));
			if (h.type == MS_REC_PROBE_SITE)
				return probes__site(p, payload, c->len);
			python__drained(p, payload, c->len); /* name code objects while they live */
			kunwind__drained(p, payload, c->len); /* rows a starting process wants */
		}
		if (c->kind == MS_CHUNK_PERF) {
			tasks__drained(p, payload, c->len); /* pin container files while they live */
			jit__drained(p, payload, c->len); /* when JIT code was remapped */
		}
		return hold(p, c, payload);
	case MS_CHUNK_ROUND: {
		int err = 0;

		/* Functions written so far are read before any record of this
		 * round is processed. */
		jit__round(p, c->time);
		kunwind__round(p); /* rows the round's drained tables want */
		if (!p->have_round)
			p->first_round = c->time;
		else
			err = release(p, release_limit(p));
		if (!err)
			note_lag(p, c->time);
		p->prev_round = c->time;
		p->have_round = true;
		return err;
	}
	case MS_CHUNK_PROCESS: {
		struct ms_process_info info;

		if (c->len != sizeof(info)) {
			processor__problem(p, MS_PROBLEM_BAD_CHUNK);
			return 0;
		}
		memcpy(&info, payload, sizeof(info));
		return tasks__process_info(p, &info);
	}
	case MS_CHUNK_END:
		p->end_time = c->time;
		if (processor__after_window(p, c->time))
			p->end_time = p->first_round + p->window_ns;
		return release(p, UINT64_MAX);
	default:
		processor__problem(p, MS_PROBLEM_BAD_CHUNK);
		return 0;
	}
}

int processor__name_late(struct processor *p)
{
	return jit__name_late(p);
}

void processor__problem_counters(const struct processor *p,
				 void (*fn)(void *ctx, const char *name, uint64_t total), void *ctx)
{
	for (int i = 0; i < MS_PROBLEM_COUNT; i++)
		if (p->problems[i])
			fn(ctx, problem_names[i], p->problems[i]);
}

int processor__finish(struct processor *p)
{
	char buf[64];
	int err = release(p, UINT64_MAX);

	if (err)
		return err;
	for (int i = 0; i < MS_PROBLEM_COUNT; i++)
		if (p->problems[i])
			capture_builder__add_counter(p->b, problem_names[i], p->problems[i]);
	jit__finish(p);
	kunwind__finish(p);
	for (int i = 0; i < UNWIND_REASON__COUNT; i++) {
		char name[96], *d;

		if (!p->unwind_reasons[i])
			continue;
		/* "[stack copy exhausted]" -> "unwind.end.stack_copy_exhausted" */
		snprintf(name, sizeof(name), "unwind.end.%s", unwind_reason__name(i) + 1);
		for (d = name; *d; d++)
			if (*d == ' ')
				*d = '_';
		if (d > name && d[-1] == ']')
			d[-1] = '\0';
		capture_builder__add_counter(p->b, name, p->unwind_reasons[i]);
	}
	{
		static const char *const py_status_names[MS_PY_STATUS_COUNT] = {
			NULL, "python.walk.ok", "python.walk.no_thread", "python.walk.ambiguous",
			"python.walk.search_bound", "python.walk.read_fault", "python.walk.depth",
			"python.walk.no_namespace",
		};

		char name[64];

		for (int i = 1; i < MS_PY_STATUS_COUNT; i++) {
			if (p->py_status[i])
				capture_builder__add_counter(p->b, py_status_names[i],
							     p->py_status[i]);
			/* "python.walk.ok" -> "python.offcpu_walk.ok" */
			snprintf(name, sizeof(name), "python.offcpu_walk.%s",
				 py_status_names[i] + strlen("python.walk."));
			if (p->offcpu_py_status[i])
				capture_builder__add_counter(p->b, name, p->offcpu_py_status[i]);
		}
	}
	if (p->lag_rounds) {
		capture_builder__add_counter(p->b, "processor.lag_max_ms",
					     p->lag_max_seen_ns / 1000000);
		capture_builder__add_counter(p->b, "processor.lag_mean_ms",
					     p->lag_sum_ns / p->lag_rounds / 1000000);
	}
	/* What the held budget and the compiled CFI took at most
	 * (stream/memory_policy.h, docs/recorder-memory.md). */
	if (p->held_peak)
		capture_builder__add_counter(p->b, "processor.held_peak_kib", p->held_peak >> 10);
	if (p->cfi_peak)
		capture_builder__add_counter(p->b, "unwind.cfi_peak_kib", p->cfi_peak >> 10);
	if (p->sym) {
		struct symbolizer_dwarf_stats ds;

		/* The DWARF budget's cost (stream/memory_policy.h). */
		symbolizer__dwarf_stats(p->sym, &ds);
		if (ds.opened) {
			capture_builder__add_counter(p->b, "symbolizer.dwarf_opened", ds.opened);
			capture_builder__add_counter(p->b, "symbolizer.dwarf_reopened", ds.reopened);
			capture_builder__add_counter(p->b, "symbolizer.dwarf_closed", ds.closed);
			capture_builder__add_counter(p->b, "symbolizer.dwarf_peak_kib", ds.peak >> 10);
		}
	}
	if (p->sym) {
		struct symbolizer_kcache_stats ks;
		struct symbolizer_debug_cache_stats dc;

		/* The kernel table's and the decompressed debug images' caches
		 * (symbols.h, docs/counters.md): written when not 0. */
		symbolizer__kcache_stats(p->sym, &ks);
		symbolizer__debug_cache_stats(p->sym, &dc);
		const struct {
			const char *name;
			uint64_t value;
		} caches[] = {
			{"symbolizer.kallsyms_cache_hit", ks.hit},
			{"symbolizer.kallsyms_cache_miss", ks.miss},
			{"symbolizer.kallsyms_cache_bad", ks.bad},
			{"symbolizer.kallsyms_cache_unusable", ks.unusable},
			{"symbolizer.kallsyms_cache_outside_bpf", ks.outside_bpf},
			{"symbolizer.kallsyms_cache_outside_other", ks.outside_other},
			{"symbolizer.kallsyms_cache_outside_unknown", ks.outside_unknown},
			{"symbolizer.debug_cache_hit", dc.hit},
			{"symbolizer.debug_cache_miss", dc.miss},
			{"symbolizer.debug_cache_bad", dc.bad},
			{"symbolizer.debug_cache_evicted", dc.evicted},
			{"symbolizer.debug_cache_unusable", dc.unusable},
		};

		for (size_t i = 0; i < sizeof(caches) / sizeof(caches[0]); i++)
			if (caches[i].value)
				capture_builder__add_counter(p->b, caches[i].name, caches[i].value);
	}
	if (p->unwind_fp_fallback)
		capture_builder__add_counter(p->b, "unwind.fp_fallback", p->unwind_fp_fallback);
	if (p->degraded_cut)
		capture_builder__add_counter(p->b, "degraded.copy_cut", p->degraded_cut);
	if (p->degraded_skipped)
		capture_builder__add_counter(p->b, "degraded.copy_skipped", p->degraded_skipped);
	if (p->degraded_held_cut)
		capture_builder__add_counter(p->b, "degraded.held_cut", p->degraded_held_cut);
	if (p->degraded_fp_spliced)
		capture_builder__add_counter(p->b, "degraded.fp_spliced", p->degraded_fp_spliced);
	if (p->unwind_fp_steps)
		capture_builder__add_counter(p->b, "unwind.fp_steps", p->unwind_fp_steps);
	if (p->unwind_fp_step_samples)
		capture_builder__add_counter(p->b, "unwind.fp_step_samples",
					     p->unwind_fp_step_samples);
	if (p->fp_not_kept)
		capture_builder__add_counter(p->b, "unwind.fp_not_kept", p->fp_not_kept);
	if (p->fp_not_kept_leaf)
		capture_builder__add_counter(p->b, "unwind.fp_not_kept_leaf", p->fp_not_kept_leaf);
	if (p->exec_replaced)
		capture_builder__add_counter(p->b, "unwind.exec_replaced", p->exec_replaced);
	if (p->after_window_samples)
		capture_builder__add_counter(p->b, "duration.samples_dropped",
					     p->after_window_samples);
	if (p->after_window_offcpu)
		capture_builder__add_counter(p->b, "duration.offcpu_dropped", p->after_window_offcpu);
	if (p->cut_offcpu)
		capture_builder__add_counter(p->b, "duration.offcpu_cut", p->cut_offcpu);
	snprintf(buf, sizeof(buf), "%" PRIu64, p->samples);
	capture_builder__set_meta(p->b, "samples", buf);
	if (p->nduty_changes) {
		/* "TIME:FACTOR,..." (docs/capture-format.md, meta budget.duty_changes) */
		size_t cap = (size_t)p->nduty_changes * 32 + 1, off = 0;
		char *list = malloc(cap);

		if (!list)
			return -ENOMEM;
		list[0] = '\0';
		for (uint32_t i = 0; i < p->nduty_changes; i++)
			off += (size_t)snprintf(list + off, cap - off, "%s%" PRIu64 ":%" PRIu32,
						i ? "," : "", p->duty_changes[i].time_ns,
						p->duty_changes[i].factor);
		capture_builder__set_meta(p->b, "budget.duty_changes", list);
		free(list);
	}
	if (p->intervals) {
		snprintf(buf, sizeof(buf), "%" PRIu64, p->intervals);
		capture_builder__set_meta(p->b, "intervals", buf);
	}
	if (p->have_round && p->end_time > p->first_round) {
		snprintf(buf, sizeof(buf), "%" PRIu64, p->end_time - p->first_round);
		capture_builder__set_meta(p->b, "duration_ns", buf);
	}
	if (p->kernel_module != CAPTURE_NONE) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, symbolizer__kaslr_offset(p->sym));
		capture_builder__set_meta(p->b, "kaslr_offset", buf);
		capture_builder__set_meta(p->b, "kernel_build_id",
					  symbolizer__kernel_build_id(p->sym));
	}
	return 0;
}

void processor__read_processes(struct processor *p, bool live)
{
	p->read_processes = live;
}

void processor__force_symbolize(struct processor *p, bool deferred)
{
	p->symbolize_forced = true;
	p->symbolize_deferred = deferred;
	capture_builder__set_meta(p->b, "symbolize", deferred ? "deferred" : "immediate");
}
