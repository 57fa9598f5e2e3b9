// SPDX-License-Identifier: MIT
/*
 * Row validation of an opened capture (capture__validate): every string
 * and cross-table reference in range, names unique where the format says
 * so, META values that have a syntax parsed.  capture/reader.c calls it
 * after framing and decompression, before a caller sees the capture; the
 * writer calls it before writing.  Messages name the table and the row.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/duty.h"
#include "capture/format.h"
#include "capture/limits.h"
#include "capture/message.h"

struct check {
	const struct capture *c;
	const char *name;
	char *err;
	size_t errlen;
};

#define ROW_FAIL(k, table, row, fmt, ...)                                                          \
	capture_msg__fail((k)->err, (k)->errlen, (k)->name, -EBADMSG, "table '%s' row %u: " fmt,   \
			  capture_table_info[table].name, (unsigned)(row), ##__VA_ARGS__)

/* id must index a table of n rows (or be CAPTURE_NONE when none_ok). */
static bool in_range(uint32_t id, uint32_t n, bool none_ok)
{
	return id < n || (none_ok && id == CAPTURE_NONE);
}

static int check_string(const struct check *k, int table, uint32_t row, const char *field,
			uint32_t id)
{
	if (id < k->c->nstrings)
		return 0;
	return ROW_FAIL(k, table, row, "%s string %u out of range (%u strings)", field, id,
			k->c->nstrings);
}

static int check_ref(const struct check *k, int table, uint32_t row, const char *field, uint32_t id,
		     int target, uint32_t n, bool none_ok)
{
	if (in_range(id, n, none_ok))
		return 0;
	if (id == CAPTURE_NONE)
		return ROW_FAIL(k, table, row, "%s is none but must name a row of '%s'", field,
				capture_table_info[target].name);
	return ROW_FAIL(k, table, row, "%s %u out of range ('%s' has %u rows)", field, id,
			capture_table_info[target].name, n);
}

static int check_strings(const struct check *k)
{
	const struct capture *c = k->c;
	const uint32_t *off = c->string_offsets;
	uint32_t i;

	if (c->nstrings < 1 || off[0] != 0)
		return capture_msg__fail(k->err, k->errlen, k->name, -EBADMSG,
					 "table 'strings': string 0 must start at offset 0");
	for (i = 0; i < c->nstrings; i++) {
		uint32_t start = off[i], end = off[i + 1];

		/* off[nstrings] is the stored byte count (checked by the caller) */
		if (end <= start || end > off[c->nstrings])
			return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, i,
					"end offset %u not in (%u, %u]", end, start,
					off[c->nstrings]);
		if (c->string_data[end - 1] != '\0')
			return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, i, "not NUL-terminated");
		if (memchr(c->string_data + start, '\0', end - 1 - start))
			return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, i, "embedded NUL byte");
	}
	if (off[1] != 1)
		return ROW_FAIL(k, CAPTURE_TABLE_STRINGS, 0, "string 0 must be \"\"");
	return 0;
}

struct by_name {
	const struct capture *c;
	const void *rows;
	size_t row_size;
};

static const char *row_name(const struct by_name *t, uint32_t row)
{
	uint32_t id;

	/* the key is the first u32 of a counter and of a meta row */
	memcpy(&id, (const char *)t->rows + (size_t)row * t->row_size, sizeof(id));
	return t->c->string_data + t->c->string_offsets[id];
}

static int by_name_cmp(const void *a, const void *b, void *ctx)
{
	uint32_t ra = *(const uint32_t *)a, rb = *(const uint32_t *)b;
	int d = strcmp(row_name(ctx, ra), row_name(ctx, rb));

	return d ? d : (ra > rb) - (ra < rb);
}

/* Names (compared as strings, not ids) must be unique among n rows. */
static int check_unique(const struct check *k, int table, const void *rows, size_t row_size,
			uint32_t n, const char *field)
{
	struct by_name t = {k->c, rows, row_size};
	uint32_t *order, i;
	int err = 0;
	char buf[52];

	if (n < 2)
		return 0;
	order = malloc((size_t)n * sizeof(*order));
	if (!order)
		return capture_msg__fail(k->err, k->errlen, k->name, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), by_name_cmp, &t);
	for (i = 1; i < n; i++) {
		if (strcmp(row_name(&t, order[i - 1]), row_name(&t, order[i])))
			continue;
		err = ROW_FAIL(k, table, order[i], "%s '%s' repeats row %u", field,
			       capture_msg__printable(row_name(&t, order[i]), buf), order[i - 1]);
		break;
	}
	free(order);
	return err;
}

int capture__validate(const struct capture *c, const char *name, char *err, size_t errlen)
{
	const struct check k = {c, name, err, errlen};
	uint32_t i;
	int e;

	e = check_strings(&k);
	if (e)
		return e;

	for (i = 0; i < c->nmodules; i++) {
		const struct capture_module *m = &c->modules[i];

		if ((e = check_string(&k, CAPTURE_TABLE_MODULES, i, "path", m->path)) ||
		    (e = check_string(&k, CAPTURE_TABLE_MODULES, i, "build_id", m->build_id)))
			return e;
		if (m->kind < CAPTURE_MODULE_FILE || m->kind > CAPTURE_MODULE_KIND_MAX)
			return ROW_FAIL(&k, CAPTURE_TABLE_MODULES, i, "unknown kind %u", m->kind);
	}
	for (i = 0; i < c->nprocesses; i++) {
		const struct capture_process *p = &c->processes[i];

		if ((e = check_string(&k, CAPTURE_TABLE_PROCESSES, i, "comm", p->comm)) ||
		    (e = check_string(&k, CAPTURE_TABLE_PROCESSES, i, "exe", p->exe)))
			return e;
	}
	for (i = 0; i < c->nthreads; i++) {
		const struct capture_thread *t = &c->threads[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_THREADS, i, "process", t->process,
				   CAPTURE_TABLE_PROCESSES, c->nprocesses, false)) ||
		    (e = check_string(&k, CAPTURE_TABLE_THREADS, i, "comm", t->comm)))
			return e;
	}
	for (i = 0; i < c->nmappings; i++) {
		const struct capture_mapping *m = &c->mappings[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_MAPPINGS, i, "process", m->process,
				   CAPTURE_TABLE_PROCESSES, c->nprocesses, false)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_MAPPINGS, i, "module", m->module,
				   CAPTURE_TABLE_MODULES, c->nmodules, false)))
			return e;
		if (m->start >= m->end)
			return ROW_FAIL(&k, CAPTURE_TABLE_MAPPINGS, i,
					"start 0x%llx not below end 0x%llx",
					(unsigned long long)m->start, (unsigned long long)m->end);
	}
	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *f = &c->frames[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_FRAMES, i, "module", f->module,
				   CAPTURE_TABLE_MODULES, c->nmodules, true)) ||
		    (e = check_string(&k, CAPTURE_TABLE_FRAMES, i, "function", f->function)) ||
		    (e = check_string(&k, CAPTURE_TABLE_FRAMES, i, "file", f->file)))
			return e;
	}
	for (i = 0; i < c->nstacks; i++) {
		const struct capture_stack *s = &c->stacks[i];

		if (s->parent != CAPTURE_NONE && s->parent >= i)
			return ROW_FAIL(&k, CAPTURE_TABLE_STACKS, i,
					"parent %u out of range (%u rows before it)", s->parent, i);
		if ((e = check_ref(&k, CAPTURE_TABLE_STACKS, i, "frame", s->frame,
				   CAPTURE_TABLE_FRAMES, c->nframes, false)))
			return e;
	}
	for (i = 0; i < c->nevents; i++) {
		const struct capture_event *ev = &c->events[i];

		if ((e = check_string(&k, CAPTURE_TABLE_EVENTS, i, "name", ev->name)) ||
		    (e = check_string(&k, CAPTURE_TABLE_EVENTS, i, "unit", ev->unit)))
			return e;
	}
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_SAMPLES, i, "thread", s->thread,
				   CAPTURE_TABLE_THREADS, c->nthreads, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_SAMPLES, i, "stack", s->stack,
				   CAPTURE_TABLE_STACKS, c->nstacks, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_SAMPLES, i, "event", s->event,
				   CAPTURE_TABLE_EVENTS, c->nevents, false)))
			return e;
	}
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "thread", v->thread,
				   CAPTURE_TABLE_THREADS, c->nthreads, false)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "event", v->event,
				   CAPTURE_TABLE_EVENTS, c->nevents, false)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "stack", v->stack,
				   CAPTURE_TABLE_STACKS, c->nstacks, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "waker_thread", v->waker_thread,
				   CAPTURE_TABLE_THREADS, c->nthreads, true)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_INTERVALS, i, "waker_stack", v->waker_stack,
				   CAPTURE_TABLE_STACKS, c->nstacks, true)))
			return e;
		if (v->start_ns > v->end_ns || v->weight != v->end_ns - v->start_ns)
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i,
					"start %llu, end %llu and weight %llu disagree",
					(unsigned long long)v->start_ns,
					(unsigned long long)v->end_ns,
					(unsigned long long)v->weight);
		/* unknown flag bits and reserved are ignored (compatibility policy) */
		if (v->state >= CAPTURE_OFFCPU_STATE_COUNT ||
		    v->cause >= CAPTURE_OFFCPU_CAUSE_COUNT)
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i,
					"unknown state %u or cause %u", v->state, v->cause);
		if (v->cause != CAPTURE_OFFCPU_CAUSE_TASK && v->waker_thread != CAPTURE_NONE)
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i,
					"waker thread %u without a task cause", v->waker_thread);
		if (strcmp(capture__string(c, c->events[v->event].unit), "nanoseconds"))
			return ROW_FAIL(&k, CAPTURE_TABLE_INTERVALS, i,
					"event %u has unit '%s', not nanoseconds", v->event,
					capture__string(c, c->events[v->event].unit));
	}
	for (i = 0; i < c->ncgroups; i++) {
		const struct capture_cgroup *g = &c->cgroups[i];

		if ((e = check_string(&k, CAPTURE_TABLE_CGROUPS, i, "path", g->path)) ||
		    (e = check_string(&k, CAPTURE_TABLE_CGROUPS, i, "container", g->container)) ||
		    (e = check_string(&k, CAPTURE_TABLE_CGROUPS, i, "runtime", g->runtime)))
			return e;
	}
	if (c->nsample_cgroups && c->nsample_cgroups != c->nsamples)
		return ROW_FAIL(&k, CAPTURE_TABLE_SAMPLE_CGROUPS, 0,
				"%u rows for %u samples (must be 0 or equal)", c->nsample_cgroups,
				c->nsamples);
	for (i = 0; i < c->nsample_cgroups; i++)
		if ((e = check_ref(&k, CAPTURE_TABLE_SAMPLE_CGROUPS, i, "cgroup",
				   c->sample_cgroups[i], CAPTURE_TABLE_CGROUPS, c->ncgroups, true)))
			return e;
	for (i = 0; i < c->nprobe_sites; i++) {
		const struct capture_probe_site *ps = &c->probe_sites[i];

		if ((e = check_string(&k, CAPTURE_TABLE_PROBE_SITES, i, "name", ps->name)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_PROBE_SITES, i, "process", ps->process,
				   CAPTURE_TABLE_PROCESSES, c->nprocesses, false)))
			return e;
	}
	for (i = 0; i < c->nprobe_records; i++) {
		const struct capture_probe_record *r = &c->probe_records[i];

		if ((e = check_ref(&k, CAPTURE_TABLE_PROBE_RECORDS, i, "site", r->site,
				   CAPTURE_TABLE_PROBE_SITES, c->nprobe_sites, false)) ||
		    (e = check_ref(&k, CAPTURE_TABLE_PROBE_RECORDS, i, "thread", r->thread,
				   CAPTURE_TABLE_THREADS, c->nthreads, false)))
			return e;
		if (r->kind < CAPTURE_PROBE_ZONE_BEGIN || r->kind > CAPTURE_PROBE_KIND_MAX)
			return ROW_FAIL(&k, CAPTURE_TABLE_PROBE_RECORDS, i, "unknown kind %u",
					r->kind);
		if (r->flags & ~CAPTURE_PROBE_F_ALL)
			return ROW_FAIL(&k, CAPTURE_TABLE_PROBE_RECORDS, i, "unknown flags %#x",
					r->flags);
		if (c->threads[r->thread].process != c->probe_sites[r->site].process)
			return ROW_FAIL(&k, CAPTURE_TABLE_PROBE_RECORDS, i,
					"thread %u is of process %u, site %u of process %u",
					r->thread, c->threads[r->thread].process, r->site,
					c->probe_sites[r->site].process);
	}
	for (i = 0; i < c->ncounters; i++)
		if ((e = check_string(&k, CAPTURE_TABLE_COUNTERS, i, "name", c->counters[i].name)))
			return e;
	for (i = 0; i < c->nmeta; i++)
		if ((e = check_string(&k, CAPTURE_TABLE_META, i, "key", c->meta[i].key)) ||
		    (e = check_string(&k, CAPTURE_TABLE_META, i, "value", c->meta[i].value)))
			return e;
	e = check_unique(&k, CAPTURE_TABLE_COUNTERS, c->counters, sizeof(*c->counters),
			 c->ncounters, "name");
	if (!e)
		e = check_unique(&k, CAPTURE_TABLE_META, c->meta, sizeof(*c->meta), c->nmeta,
				 "key");
	for (i = 0; !e && i < c->nmeta; i++) {
		char why[96];

		/* Sampling duty changes (record --budget) must be a well-formed list. */
		if (strcmp(capture__string(c, c->meta[i].key), CAPTURE_META_DUTY_CHANGES))
			continue;
		if (capture_duty__parse(capture__string(c, c->meta[i].value), NULL, 0, why,
					sizeof(why)) < 0)
			e = ROW_FAIL(&k, CAPTURE_TABLE_META, i, "%s: %s", CAPTURE_META_DUTY_CHANGES,
				     why);
	}
	return e;
}
