/* SPDX-License-Identifier: MIT */
/*
 * The collector's off-CPU part (private to userspace/collector/): owns the
 * bpf/offcpu.bpf.c skeleton, its links and its pending-slot map; the
 * collector owns the ring buffer reader it adds the "offcpu_events" ring to.
 *
 * Edges (docs/off-cpu.md): after attaching, offcpu__snapshot() opens a
 * slot with MS_OFFCPU_F_START_UNKNOWN for every recorded thread that
 * /proc/PID/task/TID/stat shows asleep (S, D, T/t, I), unless the thread
 * already has a slot (it has switched since the attach).  At stop,
 * offcpu__sweep() turns every slot still open into a record with
 * MS_OFFCPU_F_END_UNKNOWN ending at the stop time, and every slot still
 * waiting for its stack copy into a record without one.
 */
#ifndef MS_COLLECTOR_OFFCPU_H
#define MS_COLLECTOR_OFFCPU_H

#include <stdbool.h>
#include <sys/types.h>

#include <linux/types.h>

#include "../options/record_options.h"

struct offcpu;

/* Emits one BPF record (struct ms_offcpu ...) as a MS_CHUNK_BPF chunk. */
typedef int (*offcpu_emit_fn)(void *ctx, const void *rec, size_t len);
/* Emits one "name=value" COUNTER chunk. */
typedef int (*offcpu_counter_fn)(void *ctx, const char *name, __u64 value);

/* Maps of the sampler (bpf/sampler.bpf.c) the off-CPU program shares. */
struct offcpu_shared_maps {
	int targets;	 /* "targets": the tgid filter */
	int scope;	 /* "scope_cgroups" (bpf/scope.bpf.h) */
	int py_procs;	 /* "py_procs", "py_threads", "py_exits" (bpf/python.bpf.h): */
	int py_threads;	 /* the CPython walk at switch-out reads the layouts and */
	int py_exits;	 /* thread states userspace keeps for the sampler */
};

/*
 * Open and load bpf/offcpu.bpf.c sharing the sampler's maps (through
 * bpf_map__reuse_fd).  ring_bytes: the events ring (power of two);
 * nr_possible: possible CPUs (scratch map size).  Returns NULL with errno
 * set and err naming the step on failure.
 */
struct offcpu *offcpu__new(const struct record_options *o, const struct offcpu_shared_maps *maps,
			   __u32 ring_bytes, int nr_possible, bool have_find_vma, char *err,
			   size_t errlen);

/* The events ring's map fd (for ring_buffer__add and epoll). */
int offcpu__ring_fd(const struct offcpu *oc);

/* Attach sched_switch, sched_waking, sched_process_exit and (with stack
 * copies) sys_exit.  Returns 0 or -errno (err set). */
int offcpu__attach(struct offcpu *oc, char *err, size_t errlen);

/*
 * Open START_UNKNOWN slots for the sleeping threads of pids[0..n) (all of
 * /proc when system_wide), starting at now_ns (CLOCK_MONOTONIC, taken after
 * the attach).  Returns 0 or -errno; vanished threads are skipped.
 */
int offcpu__snapshot(struct offcpu *oc, const pid_t *pids, size_t n, bool system_wide,
		     __u64 now_ns);

/* Detach the programs (idempotent). */
void offcpu__detach(struct offcpu *oc);

/* After offcpu__detach: emit the records of slots still open (end
 * stop_ns, END_UNKNOWN) or waiting for a copy, in tid order.  Returns 0 or
 * the emitter's -errno. */
int offcpu__sweep(struct offcpu *oc, __u64 stop_ns, offcpu_emit_fn emit, void *ctx);

/* Emit the summed per-CPU counters (MS_OFFCPU_STATS_NAMES) and the sweep
 * and snapshot counts.  Returns 0 or -errno. */
int offcpu__counters(struct offcpu *oc, offcpu_counter_fn counter, void *ctx);

/* Cumulative run time in ns of the off-CPU programs while BPF stats are
 * enabled (0 otherwise; 0 for NULL).  Returns 0 or -errno. */
int offcpu__bpf_run_ns(struct offcpu *oc, __u64 *run_ns);

/* Accepts NULL. */
void offcpu__free(struct offcpu *oc);

#endif
