/* SPDX-License-Identifier: MIT */
/*
 * The collector's parts, private to userspace/collector: collector.c (the
 * lifetime, rings and sampling), diagnose.c (why a load or an open failed),
 * snapshot.c (targets' /proc state as synthesized records) and meta.c (the
 * recording's META and COUNTER chunks).  The one definition of struct
 * collector they share, and what each gives the others.
 */
#ifndef MS_COLLECTOR_INTERNAL_H
#define MS_COLLECTOR_INTERNAL_H

#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <bpf/libbpf.h>

#include "collector.h"
#include "../stream/perf_records.h"

struct sampler_bpf;
struct offcpu;
struct probe_rings;
struct bpf_ring;

#define BTF_VMLINUX	"/sys/kernel/btf/vmlinux"
/* A sample the in-kernel unwinder stopped for want of tables wakes the
 * drain loop at most this often (bpf/kunwind.bpf.h ku_wake_ns): the tables
 * a starting process needs are written a few ms after its first samples,
 * not a drain interval (up to 100 ms) later.  Only while samples stop so. */
#define KU_WAKE_NS	(2 * 1000000ull)
/* Tests: --call-graph auto behaves as if the kernel refused the in-kernel
 * unwinder (it copies stacks, and says why in META). */
#define KU_TEST_REFUSE_ENV "MICROSCOPE_TEST_KUNWIND_REFUSE"
#define SNAP_BUF_BYTES	(MS_PERF_RECORD_MAX)
#define EPOLL_BATCH	16

/* Capability numbers (include/uapi/linux/capability.h). */
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT	  38
#define CAP_BPF_BIT	  39

/* One side-band perf ring: a dummy event on one CPU. */
struct perf_ring {
	int fd;
	__u32 cpu;
	void *base;	  /* metadata page, then data pages */
	size_t map_bytes; /* whole mapping */
	char *data;
	__u64 data_size; /* bytes, power of two */
};

struct collector {
	struct record_options opts; /* pointers inside are borrowed */
	stream_sink_fn sink;
	void *sink_ctx;

	struct sampler_bpf *skel;
	struct sampler_bpf *py_skel; /* handle_sample_py's load (collector__load_python_walk) */
	struct offcpu *offcpu; /* --off-cpu, else NULL */
	struct probe_rings *probes; /* probes SDK rings of targets; NULL under -a */
	struct bpf_ring *rb;	  /* the sampler's ring */
	struct bpf_ring *rb_off;  /* the off-CPU ring (--off-cpu), or NULL */
	uint32_t offcpu_ring_bytes; /* its size (the sampler's: opts.ringbuf_bytes) */
	struct bpf_link *fork_link;
	struct bpf_link *exit_link;
	struct bpf_link *exec_link; /* -a with Python frames: CPython processes join at exec */
	int epoll_fd;
	long page_size;

	int nr_possible;	 /* possible CPUs (per-CPU map value count) */
	int nr_online;		 /* CPUs with events */
	int *online;		 /* [nr_online] CPU ids */
	int *sample_fds;	 /* [nr_online], -1 once owned by a link */
	int *period_fds;	 /* [nr_online] dups of the sampling fds for PERF_EVENT_IOC_PERIOD,
				    -1 if none; ours to close */
	__u32 duty_factor;	 /* sampling period multiplier in force (1 = requested rate) */
	struct bpf_link **links; /* [nr_online] */
	struct perf_ring *rings; /* [nr_online] */

	pid_t *targets;
	size_t ntargets, targets_cap;

	const char *event_name; /* "cpu-clock" or "cycles" */
	char event_note[160];
	bool build_ids;
	bool started, stopped;
	__u64 start_ns;
	__u64 sampling_ns;		/* CLOCK_MONOTONIC ns just before sampling was attached */
	volatile __u64 halt_ns;		/* set by collector__halt_sampling before halted */
	volatile sig_atomic_t halted;	/* sampling events disabled (signal-safe stop) */

	/* Counters reported at stop. */
	__u64 bpf_records, perf_records;
	__u64 lost_records, lost_events;
	__u64 ring_errors;     /* malformed perf ring headers: rest of ring skipped */
	__u64 snapshot_errors; /* /proc files of a live target that could not be read */
	__u64 snapshot_exited; /* processes or threads gone between listing and reading */
	bool have_find_vma;    /* the kernel has bpf_find_vma (stack copy bounds) */
	bool kunwind;	       /* the sampler unwinds user stacks in the kernel */
	char ku_refused[192];  /* --call-graph auto: why it does not (META) */

	struct perf_sample_id_layout sideband_id; /* trailer of MS_SIDEBAND_SAMPLE_TYPE */
	char *copy_buf; /* [MS_PERF_RECORD_MAX]: wrap-around perf records */
	char *snap_buf; /* [SNAP_BUF_BYTES]: synthesized records, META text */
	char *line;	/* getline buffer for /proc files */
	size_t line_cap;
};

/* collector.c */
__u64 collector__now_ns(void); /* CLOCK_MONOTONIC */
/* Format an error message into err (which may be NULL). */
void collector__errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One chunk to the sink; -E2BIG past MS_CHUNK_MAX_PAYLOAD. */
int collector__emit(struct collector *c, __u32 kind, __u32 source, __u64 time,
		    const void *payload, size_t len);
/* A key=value text chunk (META, COUNTER) formatted into snap_buf. */
int collector__emit_text(struct collector *c, __u32 kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* events.c */
int collector__find_cpus(struct collector *c);
/* Drain one side-band ring; returns the records emitted or -errno. */
int collector__drain_perf(struct collector *c, struct perf_ring *r);
/* Choose the sampling event: cycles if asked for and the CPU has it. */
int collector__pick_event(struct collector *c, char *err, size_t errlen);
int collector__open_rings(struct collector *c, char *err, size_t errlen);
int collector__attach_sampling(struct collector *c, char *err, size_t errlen);

/* diagnose.c */
/* CAP_SYS_ADMIN, or both CAP_BPF and CAP_PERFMON: what loading the sampler
 * needs (the rule collector__diagnose words when it fails). */
bool collector__may_load_bpf(void);
/* Name the likely cause of a failure to load BPF (bpf = true) or to open a
 * CPU-wide perf event (bpf = false) into buf. */
void collector__diagnose(int err, bool bpf, const char *what, char *buf, size_t len);

/* snapshot.c */
/* FORK, COMM and MMAP2 for every thread of pid, and its PROCESS chunk. */
int collector__snapshot_process(struct collector *c, pid_t pid, __u64 time);
/* The same for every process (-a). */
int collector__snapshot_all(struct collector *c, __u64 time);
/* The process a thread id belongs to ("Tgid:" in /proc/PID/status), or 0. */
pid_t collector__proc_tgid(pid_t pid);

/* meta.c */
int collector__emit_meta(struct collector *c);
int collector__emit_counters(struct collector *c);

#endif
