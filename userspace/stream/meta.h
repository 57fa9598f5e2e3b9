/* SPDX-License-Identifier: MIT */
/*
 * The typed META keys of the stream (MS_CHUNK_META, stream.h): one table of
 * every key the recorder writes (collector, budget monitor, record CLI),
 * with its type, unit and meaning.  Writers name a key by its id and the
 * value is checked against the key's type before it reaches the sink;
 * readers (the processor, record's notes) parse a chunk into its id and a
 * typed value.  The processor copies every META pair into the capture's
 * meta table, so docs/capture-format.md ("Recording meta keys") lists this
 * table row for row; tests/e2e/test_record_meta.py checks that every key a
 * recording writes is listed there with this type and unit.
 *
 * A key not in the table (a newer recorder's) is kept as text by readers.
 */
#ifndef MS_STREAM_META_H
#define MS_STREAM_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stream.h"

/* Value types: TEXT any text without NUL; U64 decimal; HEX "0x" + hex
 * digits (u64); BOOL "0" or "1"; NUMBER a decimal floating-point number. */
#define MS_META_TYPES(X)                                                                           \
	X(TEXT, "text")                                                                            \
	X(U64, "u64")                                                                              \
	X(HEX, "hex u64")                                                                          \
	X(BOOL, "0/1")                                                                             \
	X(NUMBER, "number")

enum ms_meta_type {
#define MS_META_TYPE_ENUM(id, name) MS_META_T_##id,
	MS_META_TYPES(MS_META_TYPE_ENUM)
#undef MS_META_TYPE_ENUM
};

/* X(ID, key, TYPE, unit, meaning); unit "" for none. */
#define MS_META_KEYS(X)                                                                            \
	X(ABI_VERSION, "abi_version", U64, "", "BPF record ABI (MS_ABI_VERSION, bpf/abi/records.h)") \
	X(KERNEL_RELEASE, "kernel.release", TEXT, "", "uname -r of the recording machine")        \
	X(MODE, "mode", TEXT, "", "launch, pid or system-wide")                                    \
	X(EVENT, "event", TEXT, "",                                                                \
	  "the sampling event really used: cpu-clock or cycles (the events table names it)")      \
	X(EVENT_REQUESTED, "event.requested", TEXT, "", "the event -e asked for")                  \
	X(EVENT_NOTE, "event.note", TEXT, "", "why the event used differs from the one asked for") \
	X(FREQ_HZ, "freq_hz", U64, "Hz", "sampling frequency of the sampling event")               \
	X(CLOCK, "clock", TEXT, "", "the clock of every time stamp (CLOCK_MONOTONIC)")            \
	X(CALL_GRAPH, "call_graph", TEXT, "", "user stack policy: auto, fp, dwarf or dwarf-kernel") \
	X(KERNEL_UNWIND, "call_graph.kernel_unwind", TEXT, "",                                     \
	  "yes when user stacks were unwound in the kernel; with auto, else why the kernel "       \
	  "refused the unwinder (stacks were copied)")                                             \
	X(VERIFY_UNWIND, "verify_unwind", BOOL, "",                                                \
	  "every in-kernel unwind checked against the copy path's (--verify-unwind)")              \
	X(BPF_FIND_VMA, "bpf.find_vma", TEXT, "",                                                  \
	  "yes, or why stack copies are bounded page by page")                                     \
	X(STACK_SIZE, "stack_size", U64, "bytes", "user stack bytes copied per sample at most (0: none)") \
	X(STACK_SIZE_REQUESTED, "stack_size.requested", U64, "bytes",                              \
	  "--stack-size as given, when the policy changed it")                                     \
	X(RINGBUF_BYTES, "ringbuf_bytes", U64, "bytes", "BPF ring buffer size")                    \
	X(PERF_PAGES, "perf_pages", U64, "pages", "data pages of each side-band perf ring")         \
	X(PERF_RING_BYTES, "perf_ring_bytes", U64, "bytes", "data bytes of each side-band perf ring") \
	X(PAGE_SIZE, "page_size", U64, "bytes", "the machine's page size")                         \
	X(NR_CPUS, "nr_cpus", U64, "CPUs", "online CPUs with events")                              \
	X(NR_CPUS_POSSIBLE, "nr_cpus_possible", U64, "CPUs", "possible CPUs")                      \
	X(MMAP2_BUILD_ID, "mmap2_build_id", BOOL, "", "MMAP2 records carry build IDs (always 0)")  \
	X(PERF_SAMPLE_TYPE, "perf.sample_type", HEX, "",                                           \
	  "perf sample_type of the side-band events: the sample_id trailer of every MS_CHUNK_PERF " \
	  "record (stream/perf_records.h)")                                                        \
	X(PIDS, "pids", TEXT, "", "target process ids, comma-separated")                           \
	X(START_TIME_NS, "start_time_ns", U64, "ns", "CLOCK_MONOTONIC when recording started")    \
	X(OFF_CPU, "off_cpu", BOOL, "", "off-CPU intervals recorded (--off-cpu)")                  \
	X(OFF_CPU_MIN_NS, "off_cpu_min_ns", U64, "ns", "shortest off-CPU interval kept")           \
	X(COMMAND, "command", TEXT, "", "the recorded command, shell-quoted")                      \
	X(RECORD_COMMAND, "record_command", TEXT, "", "the microscope command line")               \
	X(REQUESTED_FREQ_HZ, "requested_freq_hz", U64, "Hz", "-F as given (or from the preset)")  \
	X(PRESET, "preset", TEXT, "", "--preset name")                                             \
	X(PROBES_SELECT, "probes.select", TEXT, "",                                                \
	  "probe site name prefixes recorded (record --probes); absent: every site")             \
	X(SYMBOLIZE, "symbolize", TEXT, "", "immediate or deferred")                               \
	X(PYTHON, "python", TEXT, "", "CPython frames: bpf or off")                                \
	X(SCOPE_CGROUPS, "scope.cgroups", TEXT, "",                                                \
	  "cgroup v2 paths --cgroup/--container selected, comma-separated (docs/host.md)")         \
	X(SCOPE_SELF, "scope.self", TEXT, "", "-a: the recorder's own process excluded or included") \
	X(PYTHON_RUNTIME, "python_runtime", TEXT, "", "the CPython versions and layouts seen")     \
	X(BUDGET_PCT, "budget.pct", NUMBER, "percent of one CPU", "--budget")                      \
	X(BUDGET_BPF_STATS, "budget.bpf_stats", TEXT, "",                                          \
	  "yes, or why BPF run time is not counted")                                               \
	X(BUDGET_PERF_NS_PER_SAMPLE, "budget.perf_ns_per_sample", U64, "ns",                       \
	  "estimated perf cost of one sample")                                                     \
	X(BUDGET_MAX_FACTOR, "budget.max_factor", U64, "", "largest sampling period multiplier")   \
	X(BUDGET_INTERVAL_NS, "budget.interval_ns", U64, "ns", "budget control interval")

enum ms_meta_id {
#define MS_META_ID_ENUM(id, key, type, unit, meaning) MS_META_##id,
	MS_META_KEYS(MS_META_ID_ENUM)
#undef MS_META_ID_ENUM
	MS_META__COUNT,
	MS_META_UNKNOWN = MS_META__COUNT, /* a key not in the table */
};

struct ms_meta_key {
	const char *key;
	enum ms_meta_type type;
	const char *unit;    /* "" for none */
	const char *meaning;
};

/* The table, indexed by enum ms_meta_id. */
extern const struct ms_meta_key ms_meta_keys[MS_META__COUNT];

/* "text", "u64"... */
const char *ms_meta_type__name(enum ms_meta_type t);

/* The id of key (len bytes, not NUL-terminated), or MS_META_UNKNOWN. */
enum ms_meta_id ms_meta__lookup(const char *key, size_t len);

/* True when value (NUL-terminated) is a valid value of type t. */
bool ms_meta__valid(enum ms_meta_type t, const char *value);

/*
 * Send "key=value" as one MS_CHUNK_META chunk to sink.  value must be valid
 * for the key's type (ms_meta__valid) and short enough for one chunk.
 * Returns 0, -EINVAL (bad id or value), -E2BIG, -ENOMEM or the sink's error.
 */
int ms_meta__emit(stream_sink_fn sink, void *ctx, enum ms_meta_id id, const char *value);
/* As ms_meta__emit for U64 (decimal), HEX (0x...) and BOOL (v != 0) keys. */
int ms_meta__emit_u64(stream_sink_fn sink, void *ctx, enum ms_meta_id id, uint64_t v);
/* As ms_meta__emit for NUMBER keys (%g). */
int ms_meta__emit_number(stream_sink_fn sink, void *ctx, enum ms_meta_id id, double v);

/* One META chunk parsed. */
struct ms_meta {
	enum ms_meta_id id; /* MS_META_UNKNOWN for a key outside the table */
	char key[128];	    /* NUL-terminated */
	char *value;	    /* NUL-terminated, owned (ms_meta__release) */
	uint64_t u64;	    /* U64, HEX, BOOL keys */
	double number;	    /* NUMBER keys */
};

/*
 * Parse a META payload of len bytes (untrusted, not NUL-terminated).
 * Returns 0, -EBADMSG when it is not "key=value" text (no '=', empty or
 * oversized key, a NUL byte) or a known key's value does not parse as its
 * type, or -ENOMEM.  On error nothing is left to release.
 */
int ms_meta__parse(const void *payload, uint32_t len, struct ms_meta *out);
void ms_meta__release(struct ms_meta *m);

#endif
