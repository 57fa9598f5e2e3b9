/* SPDX-License-Identifier: MIT */
/*
 * The collector's probe rings (private to userspace/collector/): finds the
 * probes SDK's control block (sdk/c/microscope_probes.h) in recorded
 * processes, switches writing on, and each drain round reads the ring's
 * new slots and the newly defined sites into MS_REC_PROBE /
 * MS_REC_PROBE_SITE records (bpf/abi/records.h).
 *
 * A process is found by the symbol microscope_probes_control in the ELF
 * symbol table (.dynsym, else .symtab) of its executable or of a mapped
 * module named *microscope_probes*, opened through /proc/PID/map_files
 * (any mount namespace).  A process without it is looked at again every
 * MS_PROBE_RETRY_NS (a library loaded later, Python's ctypes).  Target
 * memory is read and written only with process_vm_readv/writev; all of it
 * is untrusted: a control block of another magic, ABI or size, or a ring
 * or site table beyond the policy limits (stream/memory_policy.h), is
 * counted (probes.bad_control) and the process left alone; a malformed
 * site is counted (probes.bad_site).  A slot still being written is read
 * at a later round; one left unfinished for MS_PROBE_STALL_NS (its writer
 * died) is skipped, counted (probes.torn).  Nothing here allocates per record.  Sites not selected
 * (record --probes) are counted (probes.sites_not_selected).
 */
#ifndef MS_COLLECTOR_PROBES_H
#define MS_COLLECTOR_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct probe_rings;

/* Emits one record (struct ms_probe / ms_probe_site) as an MS_CHUNK_BPF
 * chunk of source MS_SOURCE_PROBES; one "name=value" COUNTER chunk. */
typedef int (*probe_emit_fn)(void *ctx, const void *rec, size_t len);
typedef int (*probe_counter_fn)(void *ctx, const char *name, uint64_t value);

/*
 * targets_fd: the sampler's "targets" map (borrowed; tgid keys).  select:
 * NULL to record every site (the SDK is told ALL, so a site defined later
 * is recorded from its first record), or comma-separated name prefixes
 * (record --probes, checked by the option parser): each site whose name
 * starts with one has its own on word set as it is read, and only those
 * are named and read.  NULL and errno on failure.
 */
struct probe_rings *probe_rings__new(int targets_fd, const char *select);

/* Look in process pid too (besides "targets"; a targets_fd of -1 looks
 * only in the processes added here).  0, or -ENOSPC when
 * MS_PROBE_PROCS_MAX are known (counted, probes.procs_full). */
int probe_rings__add_pid(struct probe_rings *pr, uint32_t pid, uint64_t now_ns);

/* Is pid looked in (added, searched or read, not finished)? */
bool probe_rings__has(const struct probe_rings *pr, uint32_t pid);

/*
 * Process pid, forked by ppid without exec (record -a learns it from the
 * fork record): when ppid is looked in, look in pid too from the next
 * round, at the parent's control-block address when the parent's is
 * known (the child has the same mappings; its copied control block must
 * name the parent's ring and site table, else it is searched for as any
 * process).  0, -ENOENT (ppid not looked in: nothing done) or -ENOSPC
 * (counted, probes.procs_full).
 */
int probe_rings__add_child(struct probe_rings *pr, uint32_t ppid, uint32_t pid, uint64_t now_ns);

/*
 * One drain round at now_ns (CLOCK_MONOTONIC): look for the SDK in targets
 * not known yet (at most every MS_PROBE_RETRY_NS), then for every process
 * holding it: new sites, new records, then tail, heartbeat and enable
 * written back.  Returns the records emitted or the emitter's -errno.
 */
int probe_rings__drain(struct probe_rings *pr, uint64_t now_ns, probe_emit_fn emit, void *ctx);

/* A last drain, then writing switched off in every process (enable = 0).
 * Returns 0 or the emitter's -errno.  Later drains do nothing. */
int probe_rings__stop(struct probe_rings *pr, uint64_t now_ns, probe_emit_fn emit, void *ctx);

/* probes.* counters (processes, records, dropped, timeouts, bad_control,
 * bad_site, torn, procs_full; forks: children read at their parent's
 * control-block address). */
int probe_rings__counters(const struct probe_rings *pr, probe_counter_fn counter, void *ctx);

/* Accepts NULL. */
void probe_rings__free(struct probe_rings *pr);

/* 1 when the ELF file at path defines the control block symbol, 0 when
 * not, -errno when it cannot be opened. */
int probes__file_has_control(const char *path);

#endif
