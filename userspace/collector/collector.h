/* SPDX-License-Identifier: MIT */
/*
 * The collector owns the BPF objects, perf file descriptors and rings of a
 * recording.  It drains rings and frames what it reads as stream chunks
 * (stream.h) for a sink; it never decodes records beyond their size field.
 *
 * Events, all with attr.use_clockid = 1, clockid = CLOCK_MONOTONIC:
 *   - per CPU, a sampling event (cpu-clock, or cycles falling back to
 *     cpu-clock) at freq_hz running bpf/sampler.bpf.c, which filters tasks in
 *     the kernel (system-wide, or tgid in the target map; children join the
 *     map at sched_process_fork in the kernel) and writes struct ms_sample
 *     records into one BPF ring buffer;
 *   - per CPU, a dummy event with mmap2 (maj/min/ino, never attr.build_id,
 *     which breaks other perf users), comm, comm_exec, task,
 *     sample_id_all (TID|TIME|CPU) whose perf mmap ring carries MMAP2, COMM,
 *     FORK, EXIT and LOST records.
 * At start it synthesizes COMM, FORK and MMAP2 records for each target from
 * /proc/PID/{comm,task,maps} (source MS_SOURCE_SNAPSHOT).
 *
 * Lifetime: everything the collector creates (programs, links, perf fds,
 * maps) is released by collector__free(), and on process death by the
 * kernel since nothing is pinned.
 */
#ifndef MS_COLLECTOR_H
#define MS_COLLECTOR_H

#include <stdint.h>
#include <sys/types.h>

#include "../options/record_options.h"
#include "../stream/stream.h"

struct collector;

/*
 * Load and verify the BPF programs (not attached yet).  On failure returns
 * NULL and writes a message to err naming what is missing (e.g. "BPF
 * programs need CAP_BPF and CAP_PERFMON (run as root)", "perf_event_open:
 * kernel.perf_event_paranoid=4 forbids ...").
 */
struct collector *collector__new(const struct record_options *o, stream_sink_fn sink, void *ctx,
				 char *err, size_t errlen);

/* Add a process (tgid) to the in-kernel target filter before or after
 * start.  Returns 0 or -errno. */
int collector__add_target(struct collector *c, pid_t pid);

/* -a: look for the probes SDK (collector/probes.h) in process pid too, from
 * the next drain round (record -a finds such processes by their mapping
 * of libmicroscope_probes).  Returns 0, -ENOSPC (too many processes,
 * counted) or -EINVAL before start. */
int collector__probe_process(struct collector *c, pid_t pid);
/* -a: is the probes SDK looked for in pid (collector__probe_process)?
 * Reads only: callable from the sink.  False for a NULL c. */
bool collector__probes_has(const struct collector *c, pid_t pid);
/* -a: pid was forked by ppid without exec (its fork record): looked in
 * too when ppid is, at the parent's control-block address (probes.h).
 * Returns 0, -ENOENT (ppid not looked in), -ENOSPC or -EINVAL. */
int collector__probe_fork(struct collector *c, pid_t ppid, pid_t pid);

/* Does the ELF file at path define the probes SDK's control block (a
 * program linking libmicroscope_probes.a)?  One read of its symbol tables,
 * no cache (record_probes.c keeps one by file identity).  Returns 1, 0, or
 * -errno (-ENOENT: no such file). */
int collector__file_has_probes(const char *path);

/* Open the perf events, attach the programs, emit META chunks and the /proc
 * snapshot of every target added so far.  Returns 0 or -errno (err set). */
int collector__start(struct collector *c, char *err, size_t errlen);

/* One drain round: wait up to timeout_ms for data, then emit a ROUND chunk
 * (time taken before draining) and every record available in every ring.
 * Returns the number of records emitted, or -errno (sink errors pass
 * through).  EINTR while waiting is not an error (returns 0). */
int collector__poll(struct collector *c, int timeout_ms);

/* Let fd's readiness end one wait of collector__poll (EPOLLONESHOT: once;
 * a pidfd becomes readable when its process exits).  fd stays the caller's;
 * closing it takes it out of the wait.  Returns 0 or -errno. */
int collector__wake_on(struct collector *c, int fd);

/* Detach sampling, drain what is left, emit COUNTER chunks (BPF stats map
 * sums, perf LOST totals) and END.  Returns 0 or -errno. */
int collector__stop(struct collector *c);

/*
 * Stop sampling at once without tearing down: disables the sampling events
 * and remembers the time, which collector__stop then stamps on END (the
 * recording window's end).  Async-signal-safe; idempotent; no-op before
 * start or after stop.
 */
void collector__halt_sampling(struct collector *c);

/* CLOCK_MONOTONIC ns when collector__halt_sampling halted sampling, or 0. */
uint64_t collector__halted_at(const struct collector *c);

/*
 * Change the sampling duty while recording: every per-CPU sampling event's
 * period becomes factor times the requested one (factor 1 = -F as given)
 * through PERF_EVENT_IOC_PERIOD, and an MS_CHUNK_DUTY chunk stamped with the
 * time just before the change goes to the sink.  Returns 0, -EINVAL (not
 * recording, factor 0) or -errno of the ioctl.
 */
int collector__set_duty(struct collector *c, uint32_t factor);

/*
 * Cumulative run time (ns) of all the recording's BPF programs, and the run
 * count of the sampling program (= perf samples taken), from the kernel's BPF
 * stats.  They count only while BPF stats are enabled (bpf_enable_stats(),
 * budget/monitor.c holds the fd); otherwise both stay 0.  Returns 0 or -errno.
 */
int collector__bpf_stats(struct collector *c, uint64_t *run_ns, uint64_t *sampler_runs);

/* The fd of the sampler's BPF map called name ("targets", "py_procs",
 * "py_threads"), owned by the collector; -ENOENT if there is none (or before
 * collector__new succeeded). */
int collector__map_fd(struct collector *c, const char *name);

/*
 * Add (in true) or remove (in false) cgroup v2 id in the sampler's scope
 * set (bpf/scope.bpf.h "scope_cgroups", shared with the off-CPU programs)
 * while recording: record --container following a restarted container.
 * Only meaningful when the recording was started with a cgroup scope.
 * Returns 0, -ENOENT (not loaded, or removing an id not in the set),
 * -E2BIG (the set is full) or another -errno of the map update.
 */
int collector__scope_set(struct collector *c, uint64_t id, bool in);

/*
 * Loads the sampler's CPython walk (handle_sample_py, bpf/sampler.bpf.c),
 * which the sampler's load leaves out: until it is loaded no sample gets
 * Python frames.  Call before the first CPython process enters "py_procs".
 * Costs a second CO-RE load of the sampler object (vmlinux BTF, the walk's
 * verification: 30-50 ms of CPU), once.  Returns 0 (also when loaded
 * already) or -errno.
 */
int collector__load_python_walk(struct collector *c);

/* The sampler unwinds user stacks in the kernel (--call-graph dwarf-kernel,
 * or auto where the kernel loaded the unwinder): its tables are to be fed. */
bool collector__kunwind(const struct collector *c);

/* A counter that changes whenever the "targets" map changes (a target added
 * here, a child joining at fork, a CPython exec under -a, an exit), read
 * from the sampler's mmap'd .bss without a system call; valid until
 * collector__free.  NULL when the kernel cannot map it. */
const volatile uint64_t *collector__targets_gen(const struct collector *c);

/* Likewise a counter that changes whenever a thread of a process in
 * "py_procs" starts or exits. */
const volatile uint64_t *collector__py_threads_gen(const struct collector *c);

/* The counter the CPython tracker changes after each change to
 * "py_threads" (0 until one does: the walker remembers no thread state
 * across samples); in the same .bss. */
volatile uint64_t *collector__py_threads_written(const struct collector *c);

/* The counters collector__stop emits (BPF stats, ring losses, record
 * counts, off-CPU and probe rings), as they stand now -- totals since
 * start -- as COUNTER chunks to sink instead of the recording's sink (a
 * continuous recording's per-segment deltas, cli/record_counters.h).
 * Returns 0 or -errno. */
int collector__counters(struct collector *c, stream_sink_fn sink, void *ctx);

/* Samples the kernel reported lost so far (PERF_RECORD_LOST counts, the
 * rings' drops), for a live status line; 0 for NULL. */
uint64_t collector__lost(const struct collector *c);
/* Release everything.  Accepts NULL. */
void collector__free(struct collector *c);

/*
 * Launching a command behind a gate.  launcher__spawn forks a child that
 * waits until launcher__release, then execvp's argv.  If exec fails the
 * child exits 127 after reporting errno through a CLOEXEC pipe, and
 * launcher__release returns -errno (ENOENT for a missing command).
 */
struct launcher {
	pid_t pid;
	int gate_fd;  /* write end: release */
	int error_fd; /* read end: exec errno */
};
int launcher__spawn(struct launcher *l, char **argv);
/* The same with one more NAME=VALUE in the command's environment (assign
 * must outlive the call; NULL: none). */
int launcher__spawn_env(struct launcher *l, char **argv, const char *assign);
/* MICROSCOPE_PROBES_RECORDER=PID:START[:SELECT] naming this recorder
 * (docs/probes.md): the probes SDK in a command started with it writes
 * from its start-up, every site or (select: record --probes, NULL for
 * none) the sites it selects.  Returns 0 or -errno (-ENOSPC: size). */
int launcher__probes_env(char *buf, size_t size, const char *select);
int launcher__release(struct launcher *l);

#endif
