/* SPDX-License-Identifier: MIT */
/*
 * Run statistics of a BPF object's programs, from struct bpf_prog_info
 * (include/uapi/linux/bpf.h: run_time_ns, run_cnt).  The kernel counts them
 * only while BPF stats are enabled (budget/monitor.c holds the
 * BPF_ENABLE_STATS fd); otherwise they stay 0.
 */
#ifndef MS_PROG_STATS_H
#define MS_PROG_STATS_H

#include <stdint.h>

struct bpf_object;
struct bpf_program;

/*
 * Adds the run time in ns of every loaded program of obj to *run_ns, and the
 * run count of counted (if not NULL) to *run_cnt.  Programs that are not
 * loaded (autoload off) are skipped.  Returns 0 or -errno of the info query.
 */
int prog_stats__add(struct bpf_object *obj, const struct bpf_program *counted, uint64_t *run_ns,
		    uint64_t *run_cnt);

#endif
