// SPDX-License-Identifier: MIT
/*
 * Probe records (bpf/abi/records.h, MS_REC_PROBE / MS_REC_PROBE_SITE; the
 * collector reads them from the probes SDK's ring) into the capture's
 * probe_sites and probe_records tables.  Sites get dense capture ids here:
 * the SDK numbers its sites per process; a site's row is made with its
 * first record, in that record's process.  Everything is checked: a record
 * of the wrong size, an unknown kind, a site never named, a name without
 * its NUL is counted (processor.bad_probe) and left out.
 */
#include <string.h>

#include "../stream/memory_policy.h"
#include "internal.h"

static uint64_t site_key(uint32_t pid, uint32_t site)
{
	return ((uint64_t)pid << 32 | site) + 1;
}

int probes__site(struct processor *p, const uint8_t *rec, uint32_t len)
{
	struct ms_probe_site s;
	uint64_t *have;
	uint32_t name;

	if (len != sizeof(s)) {
		processor__problem(p, MS_PROBLEM_BAD_PROBE);
		return 0;
	}
	memcpy(&s, rec, sizeof(s));
	if (!s.pid || (s.site & MS_PROBE_SITE_MASK) >= MS_PROBE_SITES_MAX ||
	    !memchr(s.name, '\0', sizeof(s.name))) {
		processor__problem(p, MS_PROBLEM_BAD_PROBE);
		return 0;
	}
	name = capture_builder__string(p->b, s.name);
	if (name == CAPTURE_NONE)
		return -ENOMEM;
	/* named twice (a malformed stream): the first name stays; the
	 * collector gives a control block found anew (an exec, a dlclose and
	 * dlopen) a new generation, so its sites are new keys */
	have = u64map__get(&p->probe_site_map, site_key(s.pid, s.site));
	if (have)
		return 0;
	if (p->nprobe_sites == p->probe_sites_cap) {
		uint32_t ncap = p->probe_sites_cap ? 2 * p->probe_sites_cap : 16;
		struct probe_site_state *n = realloc(p->probe_sites, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->probe_sites = n;
		p->probe_sites_cap = ncap;
	}
	p->probe_sites[p->nprobe_sites] = (struct probe_site_state){
		.pid = s.pid, .site = s.site, .name = name, .row = CAPTURE_NONE,
		.proc_row = CAPTURE_NONE,
	};
	if (u64map__put(&p->probe_site_map, site_key(s.pid, s.site), p->nprobe_sites))
		return -ENOMEM;
	p->nprobe_sites++;
	return 0;
}

int probes__record(struct processor *p, const uint8_t *rec, uint32_t len)
{
	struct capture_probe_record row = { 0 };
	struct probe_site_state *st;
	struct thread_state *ts;
	struct ms_probe r;
	uint32_t proc_row;
	uint64_t *idx;
	uint32_t kind;
	bool known;

	if (len != sizeof(r)) {
		processor__problem(p, MS_PROBLEM_BAD_PROBE);
		return 0;
	}
	memcpy(&r, rec, sizeof(r));
	idx = u64map__get(&p->probe_site_map, site_key(r.pid, r.site));
	kind = r.kind & MS_PROBE_KIND_MASK;
	if (!idx || !r.tid || kind < MS_PROBE_ZONE_BEGIN || kind > MS_PROBE_MARK ||
	    (r.kind & ~(MS_PROBE_KIND_MASK | MS_PROBE_F_AFTER_DROP))) {
		processor__problem(p, MS_PROBLEM_BAD_PROBE);
		return 0;
	}
	ts = tasks__sample_thread(p, r.pid, r.tid, r.time_ns, &known);
	if (!ts)
		return -ENOMEM;
	/* The site's row belongs to the process its records are of, as of
	 * their time (a site is read before the records it names are
	 * released, maybe before its process's exec record is): made at the
	 * first record, again for a new process of that pid. */
	st = &p->probe_sites[*idx];
	proc_row = p->procs[ts->proc].row;
	if (st->row == CAPTURE_NONE || st->proc_row != proc_row) {
		struct capture_probe_site site = { .name = st->name, .process = proc_row };

		st->row = capture_builder__add_probe_site(p->b, &site);
		if (st->row == CAPTURE_NONE)
			return -ENOMEM;
		st->proc_row = proc_row;
	}
	_Static_assert(CAPTURE_PROBE_ZONE_BEGIN == MS_PROBE_ZONE_BEGIN &&
			       CAPTURE_PROBE_ZONE_END == MS_PROBE_ZONE_END &&
			       CAPTURE_PROBE_MARK == MS_PROBE_MARK,
		       "probe kinds");
	row.time_ns = r.time_ns;
	row.value = r.value;
	row.site = st->row;
	row.thread = ts->row;
	row.kind = kind;
	row.flags = r.kind & MS_PROBE_F_AFTER_DROP ? CAPTURE_PROBE_F_AFTER_DROP : 0;
	if (capture_builder__add_probe_record(p->b, &row) == CAPTURE_NONE)
		return -ENOMEM;
	return 0;
}

void probes__release(struct processor *p)
{
	free(p->probe_sites);
	p->probe_sites = NULL;
	p->nprobe_sites = p->probe_sites_cap = 0;
	u64map__release(&p->probe_site_map);
}
