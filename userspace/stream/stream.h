/* SPDX-License-Identifier: MIT */
/*
 * The raw ring stream: what the collector drains, framed but not decoded.
 *
 * The collector turns everything it reads into a sequence of chunks and
 * hands each to a sink.  The live sink is the processor; the --save-raw sink
 * appends the same chunks to DIR/stream.msraw, and stream__replay() feeds a
 * saved file back through the real processor, so a replay of the same file
 * always produces a byte-identical capture.
 *
 * Chunk kinds:
 *   MS_CHUNK_META    payload "key=value" text (no NUL); recording metadata
 *                    (command line, options, kernel release, start time...).
 *                    All META chunks come before the first ROUND.
 *   MS_CHUNK_BPF     payload: one record from a BPF ring buffer
 *                    (struct ms_rec_header first, bpf/abi/records.h).
 *                    source = ring index.
 *   MS_CHUNK_PERF    payload: one perf record (struct perf_event_header
 *                    first, include/uapi/linux/perf_event.h), copied out of
 *                    a perf mmap ring (wrap-around resolved).  source = CPU.
 *                    Synthesized records from the /proc snapshot at attach
 *                    (MMAP2, COMM, FORK) use source = MS_SOURCE_SNAPSHOT.
 *   MS_CHUNK_ROUND   no payload; time = CLOCK_MONOTONIC taken just before a
 *                    drain round began.  Every record stamped before the
 *                    previous ROUND's time has been delivered once this
 *                    ROUND is seen (the processor's watermark).
 *   MS_CHUNK_COUNTER payload "name=value" (decimal u64): loss and drop
 *                    counters read at stop (BPF stats map, perf LOST ...).
 *   MS_CHUNK_END     no payload; the recording stopped at time.
 *   MS_CHUNK_PROCESS payload: struct ms_process_info, identity facts about a
 *                    process read from /proc at attach (namespaces, start
 *                    time), emitted just before that process's snapshot
 *                    records.  Children inherit them at FORK.
 *   MS_CHUNK_DUTY    payload: struct ms_duty; time = CLOCK_MONOTONIC just
 *                    before the sampling period changed (record --budget).
 *                    Samples stamped at or after time were taken at the
 *                    new period.
 *
 * The on-disk form is a file header { "MSRAW\0\0\1", u32 abi, u32 version }
 * then for each chunk struct ms_chunk followed by len payload bytes padded to
 * 8.  abi is MS_ABI_VERSION (bpf/abi/records.h), version the stream version
 * below; a replay takes record ABIs MS_ABI_VERSION_MIN to MS_ABI_VERSION
 * (records.h says why an older ABI reads the same) and refuses others,
 * naming both.  Everything read back from a file is untrusted.
 *
 * Stream versions (MS_STREAM_VERSION; a replay refuses any other, naming
 * both, rather than misread it):
 *   1  files written before the field existed (it held 0): the perf
 *      records' sample_id trailer is TID|TIME|CPU, META keys untyped.
 *   2  META perf.sample_type names the side-band sample_type (the trailer,
 *      stream/perf_records.h); META values are typed (stream/meta.h).
 *   3  each chunk header's reserved field holds the chunk's CRC-32 (zlib
 *      crc32 of the header with that field 0, then the padded payload),
 *      checked on replay: a changed byte anywhere in a chunk is damage
 *      (-EBADMSG at its offset; the chunks before it were replayed).
 *      Sinks see reserved 0, as in older versions.
 * A version-1 file still replays (the processor assumes TID|TIME|CPU when
 * META perf.sample_type is absent) and gives the capture it gave before;
 * version 1 and 2 files replay unchecked (their reserved fields must be 0).
 * An older build refuses a version-3 file, naming its version.
 */
#ifndef MS_STREAM_STREAM_H
#define MS_STREAM_STREAM_H

#include <stddef.h>
#include <stdint.h>

#define MS_CHUNK_META 1
#define MS_CHUNK_BPF 2
#define MS_CHUNK_PERF 3
#define MS_CHUNK_ROUND 4
#define MS_CHUNK_COUNTER 5
#define MS_CHUNK_END 6
#define MS_CHUNK_PROCESS 7
#define MS_CHUNK_DUTY 8

/* MS_CHUNK_DUTY payload: the sampling period is now factor times the
 * requested one (factor >= 1); period is the new period in the event's unit
 * (ns for cpu-clock), 0 for an event sampled by frequency. */
struct ms_duty {
	uint32_t factor;
	uint32_t reserved;
	uint64_t period;
};
_Static_assert(sizeof(struct ms_duty) == 16, "ms_duty size");

/* MS_CHUNK_PROCESS payload.  Namespace ids are the nsfs inode numbers of
 * /proc/PID/ns/{pid,mnt,cgroup} (0 if unreadable); start_time_ns is
 * /proc/PID/stat starttime converted to ns since boot (CLOCK_BOOTTIME,
 * equal to CLOCK_MONOTONIC unless the machine suspended). */
struct ms_process_info {
	uint32_t pid;
	uint32_t ns_pid; /* the pid as its own pid namespace sees it (NSpid), 0 if unknown */
	uint64_t pidns;
	uint64_t mntns;
	uint64_t cgroupns;
	uint64_t start_time_ns;
};
_Static_assert(sizeof(struct ms_process_info) == 40, "ms_process_info size");

#define MS_SOURCE_SNAPSHOT 0xffffffffu
/* MS_CHUNK_BPF records the collector read from a probes SDK ring. */
#define MS_SOURCE_PROBES 0xfffffffeu

#define MS_RAW_MAGIC "MSRAW\0\0\1"
/* The stream version this build writes, and the oldest it replays. */
#define MS_STREAM_VERSION 3
#define MS_STREAM_VERSION_MIN 1
#define MS_RAW_FILE "stream.msraw"
/* Largest payload one chunk may carry (bytes); larger is malformed. */
#define MS_CHUNK_MAX_PAYLOAD (1u << 20)

struct ms_chunk {
	uint32_t kind;	 /* MS_CHUNK_* */
	uint32_t source; /* ring index, CPU, or MS_SOURCE_SNAPSHOT */
	uint32_t len;	 /* payload bytes */
	uint32_t reserved; /* 0; in a stream file of version 3 on, the chunk's CRC-32 */
	uint64_t time;	   /* CLOCK_MONOTONIC ns for ROUND/END; 0 otherwise */
};
_Static_assert(sizeof(struct ms_chunk) == 24, "ms_chunk size");

/*
 * A chunk consumer.  payload is borrowed: valid only during the call.
 * Returns 0 or -errno; a negative return stops the producer, which returns it.
 */
typedef int (*stream_sink_fn)(void *ctx, const struct ms_chunk *chunk, const void *payload);

struct stream_writer;

/* Create DIR (mode 0755, may exist) and open DIR/stream.msraw.partial for
 * writing; stream_writer__free renames it to DIR/stream.msraw once complete.
 * Returns NULL and sets errno on failure. */
struct stream_writer *stream_writer__new(const char *dir);
/* A stream_sink_fn that appends a chunk; ctx is a struct stream_writer *. */
int stream_writer__sink(void *ctx, const struct ms_chunk *chunk, const void *payload);
/* Flush, fsync, close and publish as DIR/stream.msraw (rename, then fsync
 * DIR).  Returns 0 or -errno (the file then keeps its .partial name).
 * Accepts NULL. */
int stream_writer__free(struct stream_writer *w);

/*
 * Read PATH (a file, or a directory holding stream.msraw) and feed every
 * chunk to sink in order.  Returns 0, -errno for I/O errors, -EBADMSG for a
 * malformed file (message printed to stderr naming the file and offset),
 * -EPROTONOSUPPORT for a stream version or record ABI this build does not
 * replay (message naming the file's version and the ones replayed), or the
 * sink's negative return.
 */
int stream__replay(const char *path, stream_sink_fn sink, void *ctx);

#endif
