/* SPDX-License-Identifier: MIT */
/*
 * RecordOptions: the one value `microscope record` builds from its preset
 * and command-line overrides before recording begins.  Every layer of the
 * recorder reads its settings from here; the capture stores them as meta.
 *
 * userspace/options/ is the recorder's settings layer: this value, its
 * limits and validator, and the presets (presets.c).  It sits below the
 * collector and the CLI (both include it) and includes nothing of
 * userspace/ itself (only bpf/abi/ for the sampler's limits).
 */
#ifndef MS_RECORD_OPTIONS_H
#define MS_RECORD_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Limits: stated once here and enforced by record_options__check, which both
 * the CLI (before anything runs) and the collector (collector__new) call, so
 * a value is refused with the same message wherever it comes from.
 */
#define MS_DEFAULT_FREQ_HZ 999
#define MS_MIN_FREQ_HZ 1
/* -F ceiling (Hz per CPU): above it the sampler itself would take the CPUs
 * (a sample costs a few microseconds of BPF and perf work). */
#define MS_MAX_FREQ_HZ 20000
/* --off-cpu-min ceiling (microseconds): one hour. */
#define MS_MAX_OFF_CPU_MIN_US (3600ull * 1000000)
/* --debug-dir values kept at most. */
#define MS_MAX_DEBUG_DIRS 32
#define MS_DEFAULT_OUTPUT "microscope.msc"
/* -p targets one recording follows (the whole list, over all -p options).
 * Generous: a service's workers, each a tgid in the sampler's target map
 * (TARGETS_MAX 16384 of bpf/sampler.bpf.c, which also holds their forked
 * children); the list is an array here (16 KiB).  More: -a, --cgroup or
 * --container. */
#define MS_MAX_PIDS 4096
/* cgroups one recording may select (--cgroup, --container; = SCOPE_CGROUPS_MAX
 * of bpf/scope.bpf.h) */
#define MS_MAX_CGROUPS 256
#define MS_MAX_PROBE_PREFIXES 16
#define MS_MAX_PROBE_PREFIX 55 /* a site name's longest (sdk/c MICROSCOPE_PROBES_NAME_MAX - 1) */
#define MS_DEFAULT_STACK_SIZE 16384 /* bytes of user stack copied per sample */
#define MS_MAX_STACK_SIZE 65536	    /* = MS_STACK_COPY_MAX, bpf/abi/records.h */
/* Side-band perf ring pages per CPU with -a (4 MiB with 4 KiB pages: about
 * 2,500 dynamically linked execs per CPU, or seconds of a busy build host,
 * before records are lost while the drain runs behind). */
#define MS_PERF_PAGES_SYSTEM_WIDE 1024

/* Continuous recording (--continuous DIR): segment length limits and default. */
#define MS_MIN_SEGMENT_NS (1000000000ull)	   /* 1 s */
#define MS_MAX_SEGMENT_NS (24ull * 3600 * 1000000000) /* 1 day */
#define MS_DEFAULT_SEGMENT_NS (60ull * 1000000000)   /* 60 s */
/* Rolling window (--window): at least 1 s, at most 1 hour of records in memory. */
#define MS_MIN_WINDOW_NS (1000000000ull)
#define MS_MAX_WINDOW_NS (3600ull * 1000000000)
/* --duration ceiling (seconds): ten years, well within the interval timer. */
#define MS_MAX_DURATION_S (10ull * 366 * 86400)
/* --retain SIZE: at least one megabyte. */
#define MS_MIN_RETAIN_BYTES (1ull << 20)

/* record_options.event */
#define MS_EVENT_CPU_CLOCK 0 /* PERF_COUNT_SW_CPU_CLOCK */
#define MS_EVENT_CYCLES 1    /* PERF_COUNT_HW_CPU_CYCLES, falls back to cpu-clock */

/*
 * record_options.call_graph: how user stacks are to be unwound.  fp: the
 * kernel's frame-pointer walk only, no stack copy.  dwarf: CFI unwinding
 * from the copied stack.  auto: both are recorded (frame-pointer chain and
 * stack copy) and the unwinder chooses per module.  dwarf-kernel: CFI
 * unwinding in the sampler from tables userspace loads (bpf/kunwind.bpf.h);
 * a stack is copied only from where the kernel stopped, and userspace
 * finishes from there.
 */
#define MS_CALL_GRAPH_AUTO 0
#define MS_CALL_GRAPH_FP 1
#define MS_CALL_GRAPH_DWARF 2
#define MS_CALL_GRAPH_DWARF_KERNEL 3

struct record_options {
	uint32_t freq_hz;      /* samples per second per CPU, 1..100000 */
	uint32_t event;	       /* MS_EVENT_* */
	const char *output;    /* capture path */
	const char *save_raw;  /* directory for the raw ring stream, or NULL */
	pid_t pids[MS_MAX_PIDS]; /* -p targets (tgids; host pids once record.c translated --pid-ns) */
	const char *pid_ns;	 /* --pid-ns: -p was given as this pid namespace sees it, or NULL */
	size_t npids;
	bool system_wide;      /* -a */
	double duration_s;     /* 0 = until the command exits / a signal */
	uint32_t stack_size;   /* user stack bytes to copy per sample: multiple of 8,
				  0..MS_MAX_STACK_SIZE; 0 = no copy */
	uint32_t call_graph;   /* MS_CALL_GRAPH_* */
	bool verify_unwind;    /* --verify-unwind: dwarf-kernel, plus a whole stack copy per
				  sample; both unwinds compared (processor counter
				  "processor.kunwind_mismatch") */
	uint32_t ringbuf_bytes; /* BPF ring buffer size, power of two; 0 = automatic
				   (stream/memory_policy.h, ms_ringbuf_auto_bytes) */
	uint32_t perf_pages;	/* side-band perf ring pages per CPU, power of two */
	uint32_t drain_wait_ms; /* longest the drain loop sleeps when nothing wakes it
				   (records past the rings' watermark, a change of the
				   recorded processes, a CPython tracker's timer, the
				   end); 0 = MS_DRAIN_WAIT_MS */
	uint32_t py_wake_ms;	/* a sample with Python frames wakes the drain loop once
				   this long (ms) passed since the last such wakeup,
				   so its code objects are named while they live;
				   0 = only the other wakeups */
	char **argv;	       /* command to launch, NULL-terminated, or NULL */
	bool quiet;
	bool force;	       /* -f: replace the output without keeping FILE.old */
	const char *preset;    /* preset applied ("default" unless --preset) */
	double budget_pct;     /* --budget: percent of one CPU for microscope's own work,
				  0 = no budget (userspace/budget/budget.h) */
	bool off_cpu;	       /* --off-cpu: record off-CPU intervals (bpf/offcpu.bpf.c) */
	uint64_t off_cpu_min_ns; /* --off-cpu-min: shorter intervals are counted, not kept */
	uint32_t python;       /* MS_PYTHON_*: how CPython frames are recorded */
	const char *replay;    /* --replay: raw stream to process instead of recording, or NULL */
	uint32_t symbolize;    /* MS_SYMBOLIZE_* */
	const char *debug_dirs[MS_MAX_DEBUG_DIRS]; /* --debug-dir, borrowed */
	size_t ndebug_dirs;
	uint32_t explicit;     /* MS_OPT_SET_*: fields the command line set */
	const char *continuous; /* --continuous: segment directory, or NULL */
	uint64_t segment_ns;   /* --segment: length of one segment (ns) */
	uint64_t retain_ns;    /* --retain DURATION: 0 = keep every segment */
	uint64_t retain_bytes; /* --retain SIZE: 0 = no size limit */
	uint64_t window_ns;    /* --window: rolling window length (ns), 0 = off */
	const char *export_fmt; /* --export: per-segment export format name, or NULL */
	/* --probes: comma-separated prefixes of the probe site names recorded
	 * (collector/probes.h), at most MS_MAX_PROBE_PREFIXES of at most
	 * MS_MAX_PROBE_PREFIX bytes; NULL: every site (borrowed) */
	const char *probes;
	/* Scope (bpf/scope.bpf.h): --cgroup paths and --container ids or names
	 * (borrowed), resolved before anything is attached into cgroup v2 ids
	 * whose tasks (and their sub-cgroups' tasks) are the only ones
	 * recorded; no ids: no cgroup filter. */
	const char *cgroups[MS_MAX_CGROUPS];
	size_t ncgroups;
	const char *containers[MS_MAX_CGROUPS];
	size_t ncontainers;
	uint64_t cgroup_ids[MS_MAX_CGROUPS];
	size_t ncgroup_ids;
	bool include_self;     /* --include-self: sample the recorder's own process too */
	const char *scope_desc; /* the selected cgroup paths for meta "scope.cgroups", or NULL */
};

/* record_options.symbolize */
#define MS_SYMBOLIZE_IMMEDIATE 0 /* names, lines and inline frames while recording */
#define MS_SYMBOLIZE_DEFERRED 1	 /* module identities and addresses only */

/* Default --off-cpu-min (microseconds): docs/off-cpu.md explains the choice. */
#define MS_DEFAULT_OFF_CPU_MIN_US 100

/* record_options.python */
#define MS_PYTHON_BPF 0 /* walk CPython frames in the sampler when a CPython is found (default) */
#define MS_PYTHON_OFF 1 /* native stacks only */

/* Fill defaults (999 Hz, cpu-clock, microscope.msc, 16 KiB stack copy,
 * call graph auto, automatic ring size, 64 pages). */
void record_options__init(struct record_options *o);

/*
 * Parse a --stack-size argument (decimal bytes) into *bytes, rounded up to a
 * multiple of 8 as perf does (tools/perf/util/callchain.c).  Returns 0, or
 * -EINVAL if it is not a number or exceeds MS_MAX_STACK_SIZE.
 */
int record_options__parse_stack_size(const char *arg, uint32_t *bytes);

/* Parse "fp", "dwarf" or "auto" into *mode (MS_CALL_GRAPH_*).  Returns 0 or
 * -EINVAL. */
int record_options__parse_call_graph(const char *arg, uint32_t *mode);

/* "fp", "dwarf", "auto", or "unknown". */
const char *record_options__call_graph_name(uint32_t mode);

/* Bytes of user stack the sampler copies per sample: stack_size, or 0 with
 * --call-graph fp. */
uint32_t record_options__stack_copy_bytes(const struct record_options *o);


/*
 * The numbers of every option are decimal: digits with an optional
 * fraction ("12", "0.5", ".5", "3."), no sign, exponent ("1e3"), hex
 * ("0x10"), "inf" or "nan", so an option takes the same spelling wherever
 * it is (docs: README, "Numbers").  Counts (-F, --limit, pids) take digits
 * only.  Parse one at the start of arg (at most 40 characters) into *v,
 * *end after it.  Returns 0 or -EINVAL.
 */
int record_options__parse_decimal(const char *arg, double *v, char **end);

/*
 * Parse a duration: a decimal number with a unit, "ms", "s", "m", "h" or
 * "d" ("10s", "1.5m", "500ms"; a bare number is seconds) into *ns.
 * Returns 0 or -EINVAL (negative, overflowing, or not a duration).
 */
int record_options__parse_duration(const char *arg, uint64_t *ns);
/*
 * Parse a size: a decimal number with a unit, "K", "M", "G" or "T"
 * (powers of 1024, optionally followed by "B" or "iB"), or "B" alone.
 * Returns 0 or -EINVAL.  A bare number is not a size.
 */
int record_options__parse_size(const char *arg, uint64_t *bytes);

/* Which fields the command line set explicitly (a preset leaves them alone;
 * record_options.explicit). */
#define MS_OPT_SET_FREQ (1u << 0)
#define MS_OPT_SET_CALL_GRAPH (1u << 1)
#define MS_OPT_SET_STACK_SIZE (1u << 2)
#define MS_OPT_SET_BUDGET (1u << 3)
#define MS_OPT_SET_OFF_CPU (1u << 4)
#define MS_OPT_SET_SYMBOLIZE (1u << 5)
#define MS_OPT_SET_SEGMENT (1u << 6)
#define MS_OPT_SET_OFF_CPU_MIN (1u << 7)
#define MS_OPT_SET_WINDOW (1u << 8)

/*
 * The one validator: every field within the limits above (frequency, event,
 * stack copy, call graph and its stack copy, ring sizes, budget, Python mode,
 * off-CPU minimum, list lengths).  It does not look at the machine (kernel
 * sample-rate limits, the output file, targets): the CLI checks those.
 * Returns 0, or -EINVAL with a message for the user in err (errlen bytes,
 * may be 0) that names the option and its allowed range.
 */
int record_options__check(const struct record_options *o, char *err, size_t errlen);

/*
 * Presets: one name chooses sample rate, call-graph policy, stack copy size,
 * off-CPU collection and CPU budget:
 *   light     99 Hz, fp, no stack copy, budget 1 %   (always-on, lowest cost)
 *   default   999 Hz, auto, 16 KiB copies, budget 25 %
 *   detailed  999 Hz, dwarf, 64 KiB copies, off-CPU intervals, budget 50 %
 *             (deep stacks, highest cost)
 *   production  97 Hz (prime: does not beat with 10 ms, 100 Hz or 1 kHz
 *             timers), auto, 16 KiB copies, budget 1 %, the whole system when
 *             no command or -p is given, 60 s segments (with --continuous)
 * Fields whose bit is in explicit keep their value.  Returns 0, or -EINVAL
 * for an unknown name.  The chosen name is kept in o->preset.
 */
int record_options__apply_preset(struct record_options *o, const char *name, uint32_t explicit);

/* The names above, NULL-terminated, for --help and error messages. */
extern const char *const record_options__preset_names[];

/* Parse a --budget argument: percent of one CPU, a decimal number in
 * 0..100 (0 = no budget).  Returns 0 or -EINVAL. */
int record_options__parse_budget(const char *arg, double *pct);

#endif
