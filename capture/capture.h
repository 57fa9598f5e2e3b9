/* SPDX-License-Identifier: MIT */
/*
 * The capture: an immutable, validated set of dense tables.
 *
 * Writers append rows to a struct capture_builder in a deterministic order
 * (ids are assigned in insertion order; no hash order leaks into ids), then
 * capture_builder__write() seals the tables, compresses each with zstd and
 * publishes the file atomically (temporary name in the same directory,
 * fsync, rename).  Readers get a struct capture only after every count,
 * index, range and cross-reference has been checked, so analysis can index
 * any table with any id it finds in another without further checks.
 *
 * Ids are dense u32 row indexes into their table; CAPTURE_NONE means "no
 * row".  String id 0 is always "".  All rows are fixed width and
 * little-endian on disk; see docs/capture-format.md.
 *
 * Units: times are CLOCK_MONOTONIC nanoseconds; sizes are bytes; addresses
 * are as described per field.
 */
#ifndef MS_CAPTURE_H
#define MS_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CAPTURE_NONE 0xffffffffu
#define CAPTURE_FORMAT_VERSION 1

/* capture_module.kind */
#define CAPTURE_MODULE_FILE 1	/* an ELF file (executable, shared library) */
#define CAPTURE_MODULE_KERNEL 2 /* the kernel image; addresses are runtime (KASLR) addresses */
#define CAPTURE_MODULE_VDSO 3	/* the vdso */
#define CAPTURE_MODULE_ANON 4	/* anonymous executable memory (JIT, ...) */
/* Code a JIT compiler named (perf map, jitdump): one module per anonymous
 * mapping; path is the file that named it; addresses are process
 * addresses; symbolized at record time (nothing proves a map later). */
#define CAPTURE_MODULE_JIT 5
#define CAPTURE_MODULE_KIND_MAX CAPTURE_MODULE_JIT

/* capture_module.flags */
#define CAPTURE_MODULE_F_SYMBOLIZED (1u << 0) /* frames of this module carry names */
#define CAPTURE_MODULE_F_CONTENT_HASH (1u << 1) /* identity is content_hash, not build_id */
/* Deferred recording: symbolized while recording because it cannot be found
 * again later (no build ID, memfd, deleted or replaced file, vdso, kernel). */
#define CAPTURE_MODULE_F_RECORD_TIME (1u << 2)

struct capture_module {
	uint32_t path;	       /* string: path as the process saw it */
	uint32_t build_id;     /* string: lowercase hex, "" if none */
	uint32_t kind;	       /* CAPTURE_MODULE_* */
	uint32_t flags;	       /* CAPTURE_MODULE_F_* */
	uint64_t size;	       /* file size in bytes, 0 if unknown */
	uint64_t content_hash; /* when the module has no build ID; else 0 */
};

/* A process is identified by (pid, start_time_ns). */
struct capture_process {
	uint32_t pid;	/* initial pid namespace */
	uint32_t ppid;	/* 0 if unknown */
	uint64_t start_time_ns; /* CLOCK_MONOTONIC of fork/exec as seen, 0 if unknown */
	uint32_t comm;	/* string: last comm */
	uint32_t exe;	/* string: executable path, "" if unknown */
	uint64_t pidns; /* namespace inode numbers, 0 if unknown */
	uint64_t mntns;
	uint64_t cgroupns;
};

struct capture_thread {
	uint32_t tid;	  /* initial pid namespace */
	uint32_t ns_tid;  /* as the target's pid namespace sees it; 0 if unknown */
	uint32_t process; /* -> processes */
	uint32_t comm;	  /* string */
};

/* [start, end) of process memory mapped from module at file offset pgoff. */
struct capture_mapping {
	uint32_t process; /* -> processes */
	uint32_t module;  /* -> modules */
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t time_ns; /* when the mapping was seen first */
};

/* capture_frame.flags */
#define CAPTURE_FRAME_F_KERNEL (1u << 0)     /* kernel code */
#define CAPTURE_FRAME_F_INLINE (1u << 1)     /* an inlined call inside its caller's frame */
#define CAPTURE_FRAME_F_TRUNCATION (1u << 2) /* not code: marks why a stack ends (name says) */
#define CAPTURE_FRAME_F_UNSYMBOLIZED (1u << 3) /* name lookup failed or deferred */
/* An interpreted (CPython) frame: module NONE, address 0, function the code
 * object's qualified name, file/line its source, first_line the line its
 * function begins at.  Keyed by (file, function, line, first_line). */
#define CAPTURE_FRAME_F_INTERPRETED (1u << 4)
/* Native code of the interpreter itself (its evaluation loop and call
 * plumbing), which the python look hides. */
#define CAPTURE_FRAME_F_INTERPRETER (1u << 5)
/* address is a return address: its call, and the name, line and inline
 * chain, are looked up at address - 1 */
#define CAPTURE_FRAME_F_RETURN (1u << 6)

/*
 * A code location.  address: for FILE and VDSO modules the ELF virtual
 * address inside the module (what addr2line takes); for the kernel the
 * runtime address; for frames with no module (module == CAPTURE_NONE) the
 * process address.  The name is a function name, or "" when unknown; the
 * report shows unknown names as "module+0xaddress".
 */
struct capture_frame {
	uint32_t module; /* -> modules, or CAPTURE_NONE */
	uint32_t flags;	 /* CAPTURE_FRAME_F_* */
	uint64_t address;
	uint32_t function; /* string: function name, "" if unknown */
	uint32_t file;	   /* string: source file, "" if unknown */
	uint32_t line;	   /* source line, 0 if unknown */
	uint32_t first_line; /* INTERPRETED frames: the function's first line; else written as 0 */
};

/*
 * Stacks form a prefix tree: a row is one frame under its caller's row.
 * parent is the caller's stack row (CAPTURE_NONE for a root frame) and
 * always has a smaller index than the row itself, so a stack id names the
 * innermost frame and the walk to the root is finite.
 */
struct capture_stack {
	uint32_t parent; /* -> stacks, < own index, or CAPTURE_NONE */
	uint32_t frame;	 /* -> frames */
};

/*
 * What a sample's weight measures: the generic event/weight model.
 * E.g. name "cpu-clock", unit "samples", period 1001001 (ns per sample);
 * or name "off-cpu", unit "nanoseconds", period 1.
 */
struct capture_event {
	uint32_t name;	 /* string */
	uint32_t unit;	 /* string: "samples", "nanoseconds", "count", ... */
	uint64_t period; /* nominal event units per weight unit, 0 if unknown */
};

struct capture_sample {
	uint64_t time_ns;
	uint32_t thread; /* -> threads, or CAPTURE_NONE (imported data) */
	uint32_t cpu;	 /* CAPTURE_NONE if unknown */
	uint32_t stack;	 /* -> stacks, or CAPTURE_NONE for an empty stack */
	uint32_t event;	 /* -> events */
	uint64_t weight; /* in the event's unit */
};

/* Problem and loss counters, e.g. "processor.bad_record_size". Names unique. */
struct capture_counter {
	uint32_t name; /* string */
	uint32_t reserved;
	uint64_t value;
};

/* Recording metadata, e.g. ("command", "./demo 3"). Keys unique. */
struct capture_meta {
	uint32_t key;	/* string */
	uint32_t value; /* string */
};

/* capture_interval.flags */
#define CAPTURE_INTERVAL_F_START_UNKNOWN (1u << 0) /* began before start_ns (recording start) */
#define CAPTURE_INTERVAL_F_END_UNKNOWN (1u << 1)   /* ended after end_ns (recording stop) */
#define CAPTURE_INTERVAL_F_STACK_COPY (1u << 2)	   /* user stack unwound from a stack copy */
#define CAPTURE_INTERVAL_F_KNOWN 0x7u

/* capture_interval.state: the thread's state when it left the CPU. */
#define CAPTURE_OFFCPU_STATE_RUNNABLE 0 /* preempted or yielded, still runnable */
#define CAPTURE_OFFCPU_STATE_SLEEP 1	/* interruptible sleep (S) */
#define CAPTURE_OFFCPU_STATE_DISK 2	/* uninterruptible sleep (D) */
#define CAPTURE_OFFCPU_STATE_STOPPED 3	/* stopped or traced (T) */
#define CAPTURE_OFFCPU_STATE_OTHER 4	/* parked or another state */
#define CAPTURE_OFFCPU_STATE_COUNT 5

/* capture_interval.cause: what made the thread runnable again. */
#define CAPTURE_OFFCPU_CAUSE_NONE 0    /* no wakeup seen (preempted, or outside the window) */
#define CAPTURE_OFFCPU_CAUSE_TASK 1    /* woken by waker_thread, whose stack is waker_stack */
#define CAPTURE_OFFCPU_CAUSE_HARDIRQ 2 /* woken from a hard interrupt; waker_stack is its stack */
#define CAPTURE_OFFCPU_CAUSE_SOFTIRQ 3 /* woken from a softirq; waker_stack is its stack */
#define CAPTURE_OFFCPU_CAUSE_NMI 4     /* reserved */
#define CAPTURE_OFFCPU_CAUSE_COUNT 5

/*
 * One off-CPU interval of a thread: [start_ns, end_ns) off the CPU, in the
 * generic event/weight model: event names an event with unit
 * "nanoseconds" ("off-cpu") and weight is end_ns - start_ns.  An interval
 * cut by the recording's edges carries START_UNKNOWN / END_UNKNOWN: its
 * bounds are then the window's edges and weight is only the part inside
 * the window; it is never stretched.  stack: the thread's stack when it
 * left the CPU (same stack table as samples).
 */
struct capture_interval {
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t weight;       /* == end_ns - start_ns, in the event's unit (ns) */
	uint32_t thread;       /* -> threads */
	uint32_t event;	       /* -> events (unit "nanoseconds") */
	uint32_t stack;	       /* -> stacks, or CAPTURE_NONE */
	uint32_t flags;	       /* CAPTURE_INTERVAL_F_* */
	uint32_t state;	       /* CAPTURE_OFFCPU_STATE_* */
	uint32_t cause;	       /* CAPTURE_OFFCPU_CAUSE_* */
	uint32_t waker_thread; /* -> threads (CAUSE_TASK), or CAPTURE_NONE */
	uint32_t waker_stack;  /* -> stacks, or CAPTURE_NONE */
	uint32_t cpu;	       /* CPU it came back on; CAPTURE_NONE if unknown */
	uint32_t reserved;     /* 0 */
};

/*
 * A cgroup (v2) that samples ran in, and the container it belongs to
 * (format 1.2).  Samples point at these rows through the sample_cgroups
 * column (struct capture::sample_cgroups).  The container and runtime come
 * from the cgroup directory names the runtimes create (docker-<id>.scope,
 * libpod-<id>.scope, machine-<name>.scope, ...), read where the recording
 * ran, so they survive symbolization elsewhere.
 */
struct capture_cgroup {
	uint64_t cgroup_id; /* kernel cgroup id (inode of its v2 directory); 0 if unknown */
	uint32_t path;	    /* string: path below the v2 root ("/machine.slice/..."), "" if unknown */
	uint32_t container; /* string: container id or machine name, "" if none */
	uint32_t runtime;   /* string: "docker", "podman", "systemd-nspawn", ..., "" if none */
	uint32_t reserved;  /* 0 */
};

/*
 * Probes (format 1.3; sdk/c/microscope_probes.h, docs/probes.md): a site is
 * a named instrumentation point of one process; a record is one zone
 * begin or end, or one mark with a value, written by a thread.  Sites
 * are dense ids after validation (the SDK's own numbers are per process).
 * Records are stored in time order as the recorder released them; zone
 * pairing (analysis/zones.c) does not assume they nest.
 */
struct capture_probe_site {
	uint32_t name;	  /* string */
	uint32_t process; /* -> processes */
};

#define CAPTURE_PROBE_ZONE_BEGIN 1
#define CAPTURE_PROBE_ZONE_END 2
#define CAPTURE_PROBE_MARK 3
#define CAPTURE_PROBE_KIND_MAX CAPTURE_PROBE_MARK
/* flags: the first record of its thread after the SDK dropped some of the
 * thread's records (ring full): zone pairing forgets its open begins. */
#define CAPTURE_PROBE_F_AFTER_DROP 1u
#define CAPTURE_PROBE_F_ALL CAPTURE_PROBE_F_AFTER_DROP

struct capture_probe_record {
	uint64_t time_ns;  /* CLOCK_MONOTONIC */
	uint64_t value;	   /* MARK: the value written; zones: 0 */
	uint32_t site;	   /* -> probe_sites */
	uint32_t thread;   /* -> threads; its process is the site's */
	uint32_t kind;	   /* CAPTURE_PROBE_* */
	uint32_t flags;	   /* CAPTURE_PROBE_F_* (0 in captures before it existed) */
};

_Static_assert(sizeof(struct capture_module) == 32, "capture_module");
_Static_assert(sizeof(struct capture_process) == 48, "capture_process");
_Static_assert(sizeof(struct capture_thread) == 16, "capture_thread");
_Static_assert(sizeof(struct capture_mapping) == 40, "capture_mapping");
_Static_assert(sizeof(struct capture_frame) == 32, "capture_frame");
_Static_assert(sizeof(struct capture_stack) == 8, "capture_stack");
_Static_assert(sizeof(struct capture_event) == 16, "capture_event");
_Static_assert(sizeof(struct capture_sample) == 32, "capture_sample");
_Static_assert(sizeof(struct capture_counter) == 16, "capture_counter");
_Static_assert(sizeof(struct capture_meta) == 8, "capture_meta");
_Static_assert(sizeof(struct capture_interval) == 64, "capture_interval");
_Static_assert(sizeof(struct capture_cgroup) == 24, "capture_cgroup");
_Static_assert(sizeof(struct capture_probe_site) == 8, "capture_probe_site");
_Static_assert(sizeof(struct capture_probe_record) == 32, "capture_probe_record");

/* ---- building ---------------------------------------------------------- */

struct capture_builder;

/* Returns NULL and sets errno on failure. */
struct capture_builder *capture_builder__new(void);
/* Accepts NULL. */
void capture_builder__free(struct capture_builder *b);

/*
 * Adders.  Each returns the new (or, for interned kinds, existing) row id.
 * On allocation failure they return CAPTURE_NONE and set a sticky error that
 * capture_builder__write() reports as -ENOMEM; callers need not check each.
 *
 * Interned (deduplicated by full row content): strings, frames, stacks,
 * events.  Appended: modules, processes, threads, mappings, samples.
 * Counters and meta are keyed by name: add_counter adds value to an existing
 * counter of that name; set_meta replaces an existing key's value.
 */
uint32_t capture_builder__string(struct capture_builder *b, const char *s);
/* The text of string id, or NULL if id is out of range; valid until the next add. */
const char *capture_builder__string_at(const struct capture_builder *b, uint32_t id);
uint32_t capture_builder__add_module(struct capture_builder *b, const struct capture_module *row);
uint32_t capture_builder__add_process(struct capture_builder *b, const struct capture_process *row);
uint32_t capture_builder__add_thread(struct capture_builder *b, const struct capture_thread *row);
uint32_t capture_builder__add_mapping(struct capture_builder *b, const struct capture_mapping *row);
uint32_t capture_builder__add_frame(struct capture_builder *b, const struct capture_frame *row);
uint32_t capture_builder__add_stack(struct capture_builder *b, uint32_t parent, uint32_t frame);
uint32_t capture_builder__add_event(struct capture_builder *b, const struct capture_event *row);
uint32_t capture_builder__add_sample(struct capture_builder *b, const struct capture_sample *row);
/* Appended. */
uint32_t capture_builder__add_interval(struct capture_builder *b,
				       const struct capture_interval *row);
/* Appended (the caller keeps one row per cgroup id). */
uint32_t capture_builder__add_cgroup(struct capture_builder *b, const struct capture_cgroup *row);
/* Appended (format 1.3). */
uint32_t capture_builder__add_probe_site(struct capture_builder *b,
					 const struct capture_probe_site *row);
uint32_t capture_builder__add_probe_record(struct capture_builder *b,
					   const struct capture_probe_record *row);
/* Sample sample ran in cgroup (a cgroups row, or CAPTURE_NONE).  Samples
 * never given one read as CAPTURE_NONE.  Returns 0, -ENOMEM (also sticky). */
int capture_builder__set_sample_cgroup(struct capture_builder *b, uint32_t sample,
				       uint32_t cgroup);
void capture_builder__add_counter(struct capture_builder *b, const char *name, uint64_t value);
/* Drop every counter of b. */
void capture_builder__clear_counters(struct capture_builder *b);
void capture_builder__set_meta(struct capture_builder *b, const char *key, const char *value);

/* Mutable access for rows whose fields are learned later (a thread's comm,
 * a module's flags).  Returns NULL if id is out of range.  The pointer is
 * valid until the next add to that table. */
struct capture_thread *capture_builder__thread(struct capture_builder *b, uint32_t id);
struct capture_process *capture_builder__process(struct capture_builder *b, uint32_t id);
struct capture_module *capture_builder__module(struct capture_builder *b, uint32_t id);
/* A frame named after it was added (a JIT frame named when the capture is
 * sealed).  The row keeps its id; it is not interned under its new
 * contents, so a later add of equal contents makes a second, equal row. */
struct capture_frame *capture_builder__frame(struct capture_builder *b, uint32_t id);

/* Row counts so far (table sizes). */
uint32_t capture_builder__sample_count(const struct capture_builder *b);
/* Bytes the builder holds now (tables, strings and indexes at capacity):
 * what importers charge against the memory limit (capture/limits.h). */
size_t capture_builder__bytes(const struct capture_builder *b);

/*
 * Seal and serialize to memory: *buf (malloc'd, caller frees) of *len bytes.
 * Deterministic: the same adds in the same order give the same bytes.
 * Returns 0, -ENOMEM, or -EINVAL if a row references a missing row.
 */
int capture_builder__serialize(struct capture_builder *b, void **buf, size_t *len);
/* Serialize and publish atomically at path (PATH.tmp.PID, fsync, rename).
 * Returns 0 or -errno. */
int capture_builder__write(struct capture_builder *b, const char *path);
/* Why the last serialize/write failed, e.g. "capture builder: table 'samples'
 * row 3: stack 9 out of range ('stacks' has 4 rows)"; "" after a success.
 * Owned by b, valid until its next serialize/write. */
const char *capture_builder__error(const struct capture_builder *b);

/* ---- reading ----------------------------------------------------------- */

/* A validated capture.  Every id in any row is in range (or CAPTURE_NONE
 * where the field allows it); every string is NUL-terminated UTF-8-agnostic
 * bytes.  Read-only; owned by the struct. */
struct capture {
	uint32_t version;
	uint32_t nstrings, nmodules, nprocesses, nthreads, nmappings;
	uint32_t nframes, nstacks, nevents, nsamples, ncounters, nmeta;
	const struct capture_module *modules;
	const struct capture_process *processes;
	const struct capture_thread *threads;
	const struct capture_mapping *mappings;
	const struct capture_frame *frames;
	const struct capture_stack *stacks;
	const struct capture_event *events;
	const struct capture_sample *samples;
	const struct capture_counter *counters;
	const struct capture_meta *meta;
	/* off-CPU intervals (format 1.1; 0 rows in older files) */
	uint32_t nintervals;
	const struct capture_interval *intervals;
	/* cgroups (format 1.2; 0 rows in older files) and each sample's cgroup:
	 * nsample_cgroups is 0 (no attribution) or nsamples; entries are
	 * cgroups rows or CAPTURE_NONE.  Use capture__sample_cgroup(). */
	uint32_t ncgroups, nsample_cgroups;
	const struct capture_cgroup *cgroups;
	const uint32_t *sample_cgroups;
	/* probes (format 1.3; 0 rows in older files) */
	uint32_t nprobe_sites, nprobe_records;
	const struct capture_probe_site *probe_sites;
	const struct capture_probe_record *probe_records;
	/* private */
	const uint32_t *string_offsets; /* nstrings + 1 offsets into string_data */
	const char *string_data;
	void *storage;
};

/*
 * Open and validate a capture file.  On failure returns -errno (I/O),
 * -EBADMSG (malformed: err holds e.g. "microscope.msc: table 'stacks' row
 * 17: parent 40 out of range"), -ENOTSUP (newer version), -EINVAL (not a
 * regular file) or -EFBIG (beyond a limit of capture/limits.h, which err
 * names); *out is NULL.  The magic and file header are checked from the
 * first 24 bytes before the rest is read.
 */
int capture__open(const char *path, struct capture **out, char *err, size_t errlen);
/* Same, from memory (copied).  name is used in messages. */
int capture__open_mem(const void *buf, size_t len, const char *name, struct capture **out,
		      char *err, size_t errlen);
/*
 * Check only the file header at the start of buf[len] (magic, version,
 * header crc): what a caller holding the first 24 bytes can decide before
 * reading more.  Returns 0, -EBADMSG or -ENOTSUP with "name: reason".
 */
int capture__check_header(const void *buf, size_t len, const char *name, char *err,
			  size_t errlen);
/* Accepts NULL. */
void capture__free(struct capture *c);

/* String by id; "" for CAPTURE_NONE.  id must be valid (the reader checked). */
const char *capture__string(const struct capture *c, uint32_t id);
/* Meta value for key, or NULL. */
const char *capture__meta(const struct capture *c, const char *key);
/* The cgroups row of sample i (< nsamples), or CAPTURE_NONE. */
static inline uint32_t capture__sample_cgroup(const struct capture *c, uint32_t i)
{
	return i < c->nsample_cgroups ? c->sample_cgroups[i] : CAPTURE_NONE;
}
/*
 * The container of cgroups row cg (CAPTURE_NONE allowed) as tools show it:
 * its name, or its id with ids of more than 12 hex digits shortened to 12
 * (docker's short ids), into buf (NUL-terminated, truncated), and its
 * runtime ("" if unknown) into *runtime (may be NULL).  Returns false, buf
 * "", when cg is NONE or not a container's.  (capture/container_name.c)
 */
bool capture__container_name(const struct capture *c, uint32_t cg, char *buf, size_t size,
			     const char **runtime);
/* Counter value by name, 0 if absent. */
uint64_t capture__counter(const struct capture *c, const char *name);

#endif
