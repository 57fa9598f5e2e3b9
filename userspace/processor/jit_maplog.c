// SPDX-License-Identifier: MIT
/*
 * The record of executable anonymous mappings as they are drained (not as
 * they are processed): when a perf map or GDB JIT read finds a function
 * that replaced another between two reads, the mappings the process made
 * over its range in that window say when (runtimes/jit_funcs.h, "Time").
 * Processing may lag the drain by seconds, so the mappings a read needs are
 * often not processed yet; they are drained already, unless the read came
 * within one drain round of them (then the window stays unnamed).
 *
 * A ring of JIT_MAPLOG_MAX entries for all processes: an entry written
 * over raises the floor, and a window reaching below the floor is not
 * known (-1), so a lost entry leaves samples unnamed, never misnamed.
 */
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

/* Mappings remembered, all processes together (24 bytes each). */
#define JIT_MAPLOG_MAX (1u << 14)

struct jit_maplog_entry {
	uint64_t start, end, time;
	uint32_t pid, reserved;
};

/* Anonymous memory, as perf names it ("//anon", "[anon:NAME]", empty), or
 * a memfd a JIT maps its code from. */
static bool anonymous(const char *name)
{
	return name[0] != '/' || !strncmp(name, "//anon", 6) || !strncmp(name, "/memfd:", 7);
}

void jit__drained(struct processor *p, const void *rec, uint32_t len)
{
	struct perf_event_header h;
	struct perf_mmap2 r;
	struct jit_maplog_entry *e;
	uint32_t k;

	if (!p->read_processes || len < sizeof(h) || p->jit_maplog_floor == UINT64_MAX)
		return;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_MMAP2 || perf_rec__parse_mmap2(&p->sideband_id, rec, len, &r) ||
	    !(r.f.prot & PROT_EXEC) || !r.f.len || r.f.addr + r.f.len < r.f.addr ||
	    !anonymous(r.filename))
		return;
	/* Read its files at the round (jit__round); a full list waits for the
	 * periodic reads. */
	for (k = 0; k < p->njit_wanted && p->jit_wanted[k] != r.f.pid; k++)
		;
	if (k == p->njit_wanted && k < sizeof(p->jit_wanted) / sizeof(p->jit_wanted[0]))
		p->jit_wanted[p->njit_wanted++] = r.f.pid;
	if (!p->jit_maplog) {
		p->jit_maplog = calloc(JIT_MAPLOG_MAX, sizeof(*p->jit_maplog));
		if (!p->jit_maplog) {
			p->jit_maplog_floor = UINT64_MAX; /* no record: windows stay unnamed */
			return;
		}
	}
	e = &p->jit_maplog[p->jit_maplog_n % JIT_MAPLOG_MAX];
	if (p->jit_maplog_n >= JIT_MAPLOG_MAX && e->time > p->jit_maplog_floor)
		p->jit_maplog_floor = e->time;
	*e = (struct jit_maplog_entry){
		.start = r.f.addr, .end = r.f.addr + r.f.len, .time = r.id.time, .pid = r.f.pid,
	};
	p->jit_maplog_n++;
}

int jit__mappings(struct processor *p, uint32_t pid, uint64_t start, uint64_t end,
		  uint64_t after, uint64_t upto, uint64_t *times, uint32_t max)
{
	uint64_t n = p->jit_maplog_n < JIT_MAPLOG_MAX ? p->jit_maplog_n : JIT_MAPLOG_MAX;
	int count = 0;

	if (after < p->jit_maplog_floor)
		return -1;
	for (uint64_t i = 0; i < n && max; i++) {
		const struct jit_maplog_entry *e = &p->jit_maplog[i];
		uint32_t k = (uint32_t)count < max ? (uint32_t)count : max - 1;

		if (e->pid != pid || e->start >= end || e->end <= start || e->time <= after ||
		    e->time > upto)
			continue;
		count++;
		if ((uint32_t)count > max && e->time >= times[max - 1])
			continue; /* only the earliest max are kept */
		for (; k > 0 && times[k - 1] > e->time; k--)
			times[k] = times[k - 1];
		times[k] = e->time;
	}
	return count;
}
