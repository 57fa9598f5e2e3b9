// SPDX-License-Identifier: MIT
/* record -a: processes mapping the probes SDK (record_probes.h). */
#include <errno.h>
#include <string.h>

#include "record_probes.h"

void record_probes__init(struct record_probes *rp)
{
	memset(rp, 0, sizeof(*rp));
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &rp->sideband);
}

void record_probes__chunk(struct record_probes *rp, const struct ms_chunk *c, const void *payload)
{
	struct perf_mmap2 r;
	const char *base;

	if (c->kind != MS_CHUNK_PERF || c->len < 8 ||
	    ((const uint32_t *)payload)[0] != PERF_RECORD_MMAP2 ||
	    perf_rec__parse_mmap2(&rp->sideband, payload, c->len, &r) || !r.filename_len)
		return;
	base = memrchr(r.filename, '/', r.filename_len);
	base = base ? base + 1 : r.filename;
	if (!memmem(base, r.filename_len - (size_t)(base - r.filename), "microscope_probes", 17))
		return;
	for (uint32_t i = 0; i < rp->npending; i++)
		if (rp->pending[i] == (pid_t)r.f.pid)
			return;
	if (rp->npending == RECORD_PROBES_PENDING) {
		rp->dropped++;
		return;
	}
	rp->pending[rp->npending++] = (pid_t)r.f.pid;
}

int record_probes__flush(struct record_probes *rp, struct collector *col)
{
	int err = 0;

	for (uint32_t i = 0; i < rp->npending; i++) {
		err = collector__probe_process(col, rp->pending[i]);
		if (err == -ENOSPC)
			err = 0; /* counted by the collector (probes.procs_full) */
		if (err)
			break;
	}
	rp->npending = 0;
	return err;
}
