/* SPDX-License-Identifier: MIT */
/*
 * The perf side-band records of the stream (MS_CHUNK_PERF), defined once:
 * the on-wire layouts of MMAP2, COMM, FORK/EXIT and LOST, the sample_id
 * trailer every one of them carries (attr.sample_id_all), and the helpers
 * that build them (the collector's /proc snapshot, tests) and parse them
 * (the processor).  Nothing else defines or parses these layouts.
 *
 * Source: include/uapi/linux/perf_event.h, enum perf_event_type and
 * "struct sample_id".  The trailer's fields depend on the sample_type of the
 * event that wrote the record, so its layout is derived from that
 * sample_type (perf_sample_id__layout), never assumed: the collector's
 * side-band events use MS_SIDEBAND_SAMPLE_TYPE and say so in META
 * perf.sample_type (stream/meta.h).
 *
 * Every parse helper takes an untrusted record of len bytes (hdr.size ==
 * len already checked or not: they check it again), copies the fixed part
 * out (no alignment assumed) and returns 0, or -EBADMSG when the record is
 * too short, its size field disagrees, or a string runs past its end.
 * Strings returned point into the borrowed record.
 */
#ifndef MS_STREAM_PERF_RECORDS_H
#define MS_STREAM_PERF_RECORDS_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* sample_type of the collector's side-band (dummy) events: the trailer is
 * {u32 pid, tid; u64 time; u32 cpu, res} (24 bytes). */
#define MS_SIDEBAND_SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* Largest perf record (bytes): perf_event_header.size is a __u16. */
#define MS_PERF_RECORD_MAX 65536

/* ---- on-wire fixed parts (the sample_id trailer follows each record) ---- */

/* PERF_RECORD_MMAP2 without attr.build_id: then char filename[] (NUL,
 * padded to 8).  PERF_RECORD_MISC_MMAP_BUILD_ID is ignored on purpose: the
 * kernel sets it in the header shared by every listener, so another tool's
 * attr.build_id can flag our records although they carry maj/min/ino. */
struct perf_rec_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
};
_Static_assert(sizeof(struct perf_rec_mmap2) == 72, "PERF_RECORD_MMAP2 fixed part");

/* PERF_RECORD_COMM: then char comm[] (NUL, padded to 8). */
struct perf_rec_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
};
_Static_assert(sizeof(struct perf_rec_comm) == 16, "PERF_RECORD_COMM fixed part");

/* PERF_RECORD_FORK and PERF_RECORD_EXIT. */
struct perf_rec_task {
	struct perf_event_header header;
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};
_Static_assert(sizeof(struct perf_rec_task) == 32, "PERF_RECORD_FORK/EXIT");

/* PERF_RECORD_LOST. */
struct perf_rec_lost {
	struct perf_event_header header;
	uint64_t id, lost;
};
_Static_assert(sizeof(struct perf_rec_lost) == 24, "PERF_RECORD_LOST");

/* ---- the sample_id trailer ---- */

/* Where each field of the trailer sits (byte offset from the trailer's
 * start), -1 when sample_type does not select it; size is the trailer's
 * length in bytes. */
struct perf_sample_id_layout {
	uint64_t sample_type;
	uint32_t size;
	int32_t tid_off;	/* u32 pid, u32 tid */
	int32_t time_off;	/* u64 */
	int32_t id_off;		/* u64 */
	int32_t stream_id_off;	/* u64 */
	int32_t cpu_off;	/* u32 cpu, u32 res */
	int32_t identifier_off; /* u64 */
};

/* The trailer's fields, 0 where the layout has none. */
struct perf_sample_id {
	uint32_t pid, tid;
	uint64_t time; /* CLOCK_MONOTONIC ns (attr.use_clockid) */
	uint64_t id, stream_id;
	uint32_t cpu;
};

/* Derive the trailer layout of sample_type (perf_event.h, "struct
 * sample_id": TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER in that order).
 * Bits that do not appear in the trailer are ignored. */
void perf_sample_id__layout(uint64_t sample_type, struct perf_sample_id_layout *out);

/* Read the trailer at the end of rec (len bytes).  Returns 0 or -EBADMSG
 * when the record is shorter than header + trailer. */
int perf_sample_id__read(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_sample_id *out);

/* ---- parse ---- */

struct perf_mmap2 {
	struct perf_rec_mmap2 f;
	const char *filename; /* NUL-terminated inside the record */
	size_t filename_len;  /* strlen */
	struct perf_sample_id id;
};

struct perf_comm {
	struct perf_rec_comm f;
	uint16_t misc; /* header.misc: PERF_RECORD_MISC_COMM_EXEC */
	const char *comm; /* NUL-terminated inside the record */
	struct perf_sample_id id;
};

struct perf_task {
	struct perf_rec_task f;
	struct perf_sample_id id;
};

struct perf_lost {
	struct perf_rec_lost f;
	struct perf_sample_id id;
};

/* The record's header (type, misc, size); -EBADMSG if len < 8, size !=
 * len or len is not a multiple of 8. */
int perf_rec__header(const void *rec, uint32_t len, struct perf_event_header *out);
int perf_rec__parse_mmap2(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			  struct perf_mmap2 *out);
int perf_rec__parse_comm(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_comm *out);
/* PERF_RECORD_FORK or PERF_RECORD_EXIT. */
int perf_rec__parse_task(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_task *out);
int perf_rec__parse_lost(const struct perf_sample_id_layout *l, const void *rec, uint32_t len,
			 struct perf_lost *out);

/* ---- build ----
 * Each writes one record into buf (cap bytes, zeroing its padding) with the
 * trailer of layout l filled from id, and returns its size in bytes, or
 * -ENOSPC if it does not fit in cap or in MS_PERF_RECORD_MAX. */

/* m's header type/size are set here; m->header.misc is kept. */
int perf_rec__build_mmap2(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			  const struct perf_rec_mmap2 *m, const char *filename,
			  const struct perf_sample_id *id);
int perf_rec__build_comm(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			 uint16_t misc, uint32_t pid, uint32_t tid, const char *comm,
			 const struct perf_sample_id *id);
/* type PERF_RECORD_FORK or PERF_RECORD_EXIT. */
int perf_rec__build_task(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			 uint32_t type, const struct perf_rec_task *t,
			 const struct perf_sample_id *id);
int perf_rec__build_lost(void *buf, size_t cap, const struct perf_sample_id_layout *l,
			 uint64_t stream_id, uint64_t lost, const struct perf_sample_id *id);

#endif
