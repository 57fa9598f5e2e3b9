/* SPDX-License-Identifier: MIT */
/*
 * Importers and exporters between the capture and other profile formats.
 *
 * Importers parse untrusted bytes and append rows to a caller's
 * capture_builder; the caller seals it and reopens it with capture__open_mem,
 * so an imported profile passes the same validator as a recording.  They
 * never crash on malformed input: they return -EBADMSG with a message naming
 * the offending element, or skip a bad record and count it (a capture
 * counter and a loss note).
 *
 * Exporters read a validated capture only (capture/ never includes
 * analysis/).  Frame display names follow the rules of analysis/analysis.h
 * (formats__frame_label); test_formats checks they agree.
 *
 * What a converter cannot carry is a property of the converter
 * (docs/formats.md).  Each call reports what it actually lost in this
 * conversion as a one-line note (empty if nothing), for the CLI to print.
 */
#ifndef MS_CAPTURE_FORMATS_H
#define MS_CAPTURE_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/capture.h"

/* A one-line description of what a conversion lost; "" when nothing. */
struct formats_note {
	char text[512];
};

/* Append "; "-separated printf text to the note (truncated to fit). */
void formats_note__add(struct formats_note *n, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Display name of frame f, as analysis__frame_name (analysis.h) makes it:
 * the function name; else "<module basename>+0x<addr>" ("[kernel]",
 * "[vdso]", "[anon]", "[unknown]" for modules without a path); else
 * "[unknown]+0x<addr>"; truncation frames their bracketed reason or
 * "[truncated]".  Written NUL-terminated into buf of size bytes (truncated
 * to fit); returns the full length like snprintf.
 */
size_t formats__frame_label(const struct capture *c, const struct capture_frame *f, char *buf,
			    size_t size);

/* Display name of a thread: "<comm>-<tid>" ("[unknown]" comm if empty). */
size_t formats__thread_label(const struct capture *c, uint32_t thread, char *buf, size_t size);

/*
 * The nominal duration in ns one sample s of event ev stands for: weight
 * for unit "nanoseconds", weight * period for unit "samples" with a known
 * period, else 0 (unknown).
 */
uint64_t formats__sample_ns(const struct capture_event *ev, const struct capture *c,
			    const struct capture_sample *s);

/*
 * Labels of every frame of c, as formats__frame_label, kernel frames with
 * " [k]" appended (as the report marks them): *labels[c->nframes] of
 * malloc'd strings; free with formats__labels_free.  Returns 0 or -ENOMEM.
 */
int formats__labels_new(const struct capture *c, char ***labels);
void formats__labels_free(char **labels, uint32_t n);

/*
 * Sample ids of c sorted by (thread, time_ns, id), thread CAPTURE_NONE
 * last: *order[c->nsamples], malloc'd.  Returns 0 or -ENOMEM.
 */
int formats__samples_by_thread(const struct capture *c, uint32_t **order);

/* ---- import bounds (capture/limits.h) ------------------------------------- */

/*
 * An importer's budget: work units (every frame, stack row and sample
 * added, every stack step walked) at most CAPTURE_LIMIT_IMPORT_K per input
 * byte, and memory (the bytes held outside the builder, plus twice the
 * builder's, since the caller serializes and reopens it) within the memory
 * limit.  A breach is -EFBIG with err naming the limit.
 */
struct import_budget {
	uint64_t units_left, units_max;
	uint64_t max_memory; /* bytes: capture_limits__memory_for(the input as stored) */
	const char *memory_name; /* capture_limits__memory_name of the same */
	uint64_t held;	/* bytes held outside the builder (input, inflated data, parser) */
	size_t in_bytes;	/* input bytes the unit budget was computed from */
	uint64_t next_check; /* units_left at which memory is checked next */
	const struct capture_builder *b;
	char *err;
	size_t errlen;
};

/*
 * in_bytes: the input the work units are computed from (a .pb.gz's inflated
 * bytes); stored_bytes: the input as given, which the memory limit follows
 * (capture_limits__memory_for with k, CAPTURE_LIMIT_INPUT_MEMORY_K or
 * CAPTURE_LIMIT_TEXT_MEMORY_K); held: bytes already held outside the builder.
 */
void import_budget__init(struct import_budget *ib, const struct capture_builder *b,
			 size_t in_bytes, uint64_t stored_bytes, unsigned k, uint64_t held,
			 char *err, size_t errlen);

/* Check the memory now: 0 or -EFBIG (err set). */
int import_budget__memory(struct import_budget *ib);

/* The slow path of import_budget__spend. */
int import_budget__exceeded(struct import_budget *ib, uint64_t n);

/* Spend n units (memory is checked every 64 Ki units): 0 or -EFBIG (err set). */
static inline int import_budget__spend(struct import_budget *ib, uint64_t n)
{
	if (n > ib->units_left || ib->units_left - n < ib->next_check)
		return import_budget__exceeded(ib, n);
	ib->units_left -= n;
	return 0;
}

/* ---- folded stacks ------------------------------------------------------ */

/*
 * Import folded stacks ("outer;...;inner COUNT" lines, stackcollapse
 * format) from buf[len] into b: one event "folded" (unit "samples"), one
 * sample per line with weight COUNT, no thread, no time.  COUNT is the last
 * space-separated token and must be decimal digits fitting u64; names may
 * hold spaces, brackets and commas.  A trailing "_[k]" marks a kernel frame
 * (the stackcollapse-perf --kernel convention our export writes).  "\r\n"
 * line ends are accepted.  Lines that are blank, comments ('#'), count-less
 * or have an empty frame name are skipped and counted in capture counters
 * folded.skipped_blank, _comment, _no_count, _empty_frame; the note says how
 * many.  An empty file, or one of only blank and comment lines, is an
 * empty profile, noted.  Errors (-EBADMSG, errbuf[errlen] names the reason
 * and the line): a NUL byte anywhere (binary input: not a capture, pprof or
 * folded file); perf script text (perf_script__detect), or any perf script
 * callchain line (TAB, spaces, hex IP); no stack at all while some line is count-less or has an empty
 * frame (not a folded file; the first such line is named); a count that
 * makes the sum of counts overflow 2^64-1 (the line is named).  Returns 0,
 * -EBADMSG or -ENOMEM.
 */
int folded__import(const void *buf, size_t len, struct capture_builder *b,
		   struct formats_note *note, char *errbuf, size_t errlen);

/* ---- perf script text ----------------------------------------------------- */

/*
 * Import `perf script` output from buf[len] into b: plain, or -F with any
 * subset and order of comm,pid,tid,cpu,time,period,event,addr,ip,sym,
 * symoff,dso (`-F +...` too), callchains (perf record -g) or not (-G, or
 * no -g).  Each header line "[COMM] [PID[/TID]] [[CPU]] [TIME:] [PERIOD]
 * [EVENT:] [ADDR]" starts a sample (the fields told apart by perf's order
 * and printf widths, perf_script_line.h) of thread (PID, TID) named COMM
 * at TIME (seconds, as ns); its indented "IP SYM[+0xOFF] (DSO)" lines are
 * its stack, innermost first; without a callchain the header ends with the
 * sample's own "IP SYM (DSO)"; with -F ip,sym (an empty header) each run
 * of callchain lines is a sample without a thread.  Without PID and TID a
 * COMM is one thread (tid 0).  Events are named by EVENT's first ':'-part
 * ("samples" when not printed); an event whose periods are all equal is
 * unit "samples" with that period, weight 1 (comparable with recordings);
 * otherwise unit "events", weight = PERIOD.  DSOs become modules by path
 * ("[kernel.kallsyms]" the kernel, kernel frames flagged); "[unknown]"
 * symbols are unsymbolized frames.  What it loses is noted (no build IDs,
 * mappings or inline frames); lines after a callchain before its blank
 * line (srcline, iregs) are skipped and counted.  An input with no sample
 * is an empty capture, noted.  Limits: lines under 64 KiB, 1024 frames per
 * stack (deeper stacks cut, counted), 64 event names, 2^20 threads.
 * A line with a NUL byte (damaged text) is skipped and counted
 * (perf_script.nul_lines), with the callchain lines of the sample whose
 * header it was.  Errors (-EBADMSG, errbuf names the line and what was
 * expected): perf.data itself (its magic: run perf script first); binary
 * data (4 NUL bytes or more, over 1 in 64 of the first 4 KiB); a first
 * line that is no header or callchain line; a header whose fields differ from its event's first header's; a callchain line with no
 * header before it (in output that has headers) or a header in output
 * that has none; samples none of which has an IP (-F without ip); an
 * over-long line.  Returns 0, -EBADMSG or -ENOMEM.
 */
int perf_script__import(const void *buf, size_t len, struct capture_builder *b,
			struct formats_note *note, char *errbuf, size_t errlen);

/* Whether buf starts with perf.data's magic ("PERFILE2", or "PERFFILE"). */
bool perf_script__is_perf_data(const void *buf, size_t len);

/*
 * Whether buf is perf script text (content detection for convert; the
 * folded importer refuses what it accepts): its first line that is neither
 * blank nor a '#' comment is a callchain line, or a header with a time,
 * event, CPU or its own IP, or a header of COMM/PID/TID/period alone that a
 * callchain line follows or whose first field perf right-aligned.  A folded
 * line "comm 21799" stays folded.
 */
bool perf_script__detect(const void *buf, size_t len);

/* ---- pprof (github.com/google/pprof proto/profile.proto) ---------------- */

/*
 * Encode c as a gzip-compressed pprof Profile: *buf (malloc'd, caller
 * frees) of *len bytes.
 *
 * Sample types: a recorded event of unit "samples" becomes "samples/count"
 * (the weight) and, when its period is known, "cpu/nanoseconds" (weight *
 * period ns); any other event becomes "<name>/<unit>" ("off-cpu/
 * nanoseconds", or an imported pprof type unchanged).  Samples are summed
 * per (stack, thread, cgroup, event); labels (pprof_labels.h) say the
 * thread (pid, tid, thread, comm) and cgroup (container, container_id,
 * runtime, cgroup, cgroup_id).  Locations are runs of frames ending at a non-inline
 * frame: the run's INLINE frames become the location's leading Line entries
 * (innermost first).  Functions are keyed by (name, file, kernel); the
 * capture has no start line, so start_line is 0.  One Mapping per module
 * with frames (filename, build ID, range of its first capture mapping).
 * Location addresses are the capture's frame addresses (module ELF
 * addresses for files).  duration_nanos from meta "duration_ns", period from
 * the first event with one.  Off-CPU intervals (c->intervals) fill their
 * event's column ("off-cpu/nanoseconds"): weight = ns, stack = the
 * interval's, summed per (stack, thread); an interval cut by the recording's
 * edges counts its part inside the window in a sample apart labelled
 * clipped="recording window" (as report --off-cpu marks it), noted.  Interval events' columns come
 * first so the last (pprof's default) stays a CPU one.  Returns 0, -ENOMEM,
 * or -EOVERFLOW.
 */
int pprof__export(const struct capture *c, void **buf, size_t *len, struct formats_note *note);

/*
 * Decode a pprof Profile (gzip-compressed or raw protobuf) from buf[len]
 * into b.  Every sample type becomes an event (name = type, unit = unit,
 * period = Profile.period for the type equal to period_type); each nonzero
 * value of a sample becomes a capture sample of that event (a sample whose
 * values are all 0 keeps its stack as one 0-weight sample of the first
 * type).  Each Location becomes its Line chain of frames, the leading ones
 * INLINE; a location without lines one UNSYMBOLIZED frame.  Each Mapping
 * becomes a module and a mapping of one synthetic process.
 *
 * Errors (-EBADMSG, err names the reason): truncated or corrupt gzip,
 * protobuf that does not parse, string_table[0] != "", a zero or duplicate
 * id, a reference to a missing id or string, more values than sample types,
 * a sample type whose values sum beyond 2^64-1 (its shares would be garbage).
 * The labels pprof__export writes become the samples' threads (and their
 * processes) and cgroups again (pprof_labels.h); other labels, and
 * negative values (diff profiles), are dropped, counted and noted.
 * Returns 0, -EBADMSG or -ENOMEM.
 */
int pprof__import(const void *buf, size_t len, struct capture_builder *b,
		  struct formats_note *note, char *err, size_t errlen);

/* ---- trace viewers ------------------------------------------------------ */

/*
 * Chrome trace event JSON ({"traceEvents": [...]}, the format of
 * chrome://tracing, Perfetto and speedscope) of c's samples and off-CPU
 * intervals, per thread in time order, each drawn over a span (a sample
 * [time, time + formats__sample_ns) cut at the thread's next item, jitter
 * closed; an interval its real bounds; samples trimmed or dropped where
 * they would overlap an interval), in integer µs from otherData.t0_ns:
 * "samples" + "stackFrames" (one entry per span, one without "sf" per gap;
 * speedscope weighs each by the time to the next; an interval's leaf
 * "off-CPU: <state> (woken by ...)" shared by intervals of the same stack
 * and name) and, for Perfetto, "X" slices in traceEvents (a frame's slice
 * spans the consecutive items that have it at the same depth, parents
 * first, at most 512 deep), one "T" thread-state event per interval (state
 * code, exact ns in µs with decimals, args cpu, blocked_function,
 * start_unknown, end_unknown, clamped), "M" events naming processes and
 * threads.  Samples of other events than event get a leaf "[<event
 * name>]".  Slices stop at
 * CAPTURE_LIMIT_EXPORT_K events per row (noted).  docs/formats.md.
 * Returns 0, -ENOMEM or -EIO.
 */
int chrome_trace__export(const struct capture *c, uint32_t event, FILE *out,
			 struct formats_note *note);

/*
 * speedscope JSON (https://www.speedscope.app/file-format-schema.json): one
 * "sampled" profile per thread with samples of event, in time order,
 * weights in nanoseconds when the event has a duration (formats__sample_ns)
 * else unit "none" (plain weights); frames shared, keyed by label, with file
 * and line of their first frame.  The thread with the most weight is the
 * active profile.  Per thread with complete off-CPU intervals, one more
 * "sampled" profile "<comm-tid> off-CPU": one sample per interval (its
 * stack), weights in nanoseconds.  Returns 0 or -ENOMEM.
 */
int speedscope__export(const struct capture *c, uint32_t event, FILE *out,
		       struct formats_note *note);

/* Write s as a JSON string literal (quotes included, UTF-8 passed through,
 * control bytes and invalid bytes escaped) to out. */
void formats__json_string(FILE *out, const char *s);

#endif
