/* SPDX-License-Identifier: MIT */
/*
 * Zone pairing: the one rule by which every reader of a capture's probe
 * records (analysis/zones.c, the Chrome trace and speedscope exports) sees
 * zones, so that a zone is the same zone in report --zones, serve and every
 * export.
 *
 * Records are taken per thread in time order (ties by row).  An end closes
 * the latest begin of its site on its thread still open; zones need not
 * nest (zones of different sites may cross).  An end with none open is
 * unmatched; a begin still open after its thread's last record is
 * unmatched (the recording ended, or its end was lost).  A record flagged
 * CAPTURE_PROBE_F_AFTER_DROP (the program dropped some of its thread's
 * records just before it) first forgets the thread's open begins, which
 * are broken, and is broken itself when it is an end: a dropped end never
 * lets a later end stretch a zone.  Marks are marks.
 */
#ifndef MS_CAPTURE_PROBE_PAIRS_H
#define MS_CAPTURE_PROBE_PAIRS_H

#include <stdint.h>

#include "capture/capture.h"

enum capture_pair_state {
	CAPTURE_PAIR_MARK = 0,	    /* a mark record */
	CAPTURE_PAIR_ZONE = 1,	    /* a begin or end of a paired zone: mate is the other */
	CAPTURE_PAIR_UNMATCHED = 2, /* a begin never ended, an end with no begin open */
	CAPTURE_PAIR_BROKEN = 3,    /* left unpaired by the thread's dropped records */
};

struct capture_probe_pairs {
	uint32_t n;	/* c->nprobe_records */
	uint32_t *order; /* [n] record rows by (thread, time, row) */
	uint32_t *mate;	 /* [n] by row: a paired record's other end, else CAPTURE_NONE */
	uint32_t *depth; /* [n] by row: for a begin, the thread's begins open before it */
	uint8_t *state;	 /* [n] by row: enum capture_pair_state */
};

/* Pair the probe records of c.  Returns 0 or -ENOMEM (pp then holds nothing). */
int capture_probe_pairs__init(struct capture_probe_pairs *pp, const struct capture *c);
/* Accepts a zeroed or released pp. */
void capture_probe_pairs__release(struct capture_probe_pairs *pp);

#endif
