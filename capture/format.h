/* SPDX-License-Identifier: MIT */
/*
 * On-disk layout of a capture file, private to capture/ and its tests.
 * docs/capture-format.md is the specification; this header mirrors it and
 * must change with it.
 *
 *   file    := file_header segment
 *   segment := chunk(SEGM) chunk(table)... chunk(SEAL)
 *   chunk   := chunk_header stored_bytes[stored_size]
 *
 * Every integer is little-endian.  Rows are the fixed-width structs of
 * capture.h, stored back to back with no padding between rows; this code
 * memcpy()s them, which is only correct on a little-endian host (checked
 * below).  A big-endian port must byte-swap each field instead.
 *
 * Also declared here: the few functions builder.c, writer.c and reader.c
 * share.  Nothing outside capture/ (and tests/unit/test_capture.c) includes
 * this header.
 */
#ifndef MS_CAPTURE_FORMAT_H
#define MS_CAPTURE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "capture/: rows are memcpy'd as little-endian structs; add byte swaps for this host"
#endif

/* PNG-style: a high byte, a name, CR LF, ^Z, LF catch text-mode transfers. */
#define CAPTURE_MAGIC	  "\x89MSC\r\n\x1a\n"
#define CAPTURE_MAGIC_LEN 8
/* The minor version grows with compatible additions (new optional chunks). */
/* 1.1: the optional intervals table; 1.2: cgroups and sample_cgroups;
 * 1.3: probe_sites and probe_records */
#define CAPTURE_FORMAT_VERSION_MINOR 3

struct capture_file_header {
	uint8_t magic[CAPTURE_MAGIC_LEN]; /* CAPTURE_MAGIC */
	uint16_t version_major;		  /* CAPTURE_FORMAT_VERSION */
	uint16_t version_minor;		  /* CAPTURE_FORMAT_VERSION_MINOR */
	uint32_t flags;			  /* none defined in 1.x: 0 */
	uint32_t reserved;		  /* 0 */
	uint32_t header_crc;		  /* zlib crc32 of bytes [0, 20) */
};

/* A chunk tag is four ASCII bytes; as a little-endian u32, 'a' is the low byte. */
#define CAPTURE_TAG(a, b, c, d)                                                                    \
	((uint32_t)(uint8_t)(a) | (uint32_t)(uint8_t)(b) << 8 | (uint32_t)(uint8_t)(c) << 16 |     \
	 (uint32_t)(uint8_t)(d) << 24)

#define CAPTURE_TAG_SEGMENT CAPTURE_TAG('S', 'E', 'G', 'M')
#define CAPTURE_TAG_SEAL    CAPTURE_TAG('S', 'E', 'A', 'L')

/* capture_chunk_header.flags */
#define CAPTURE_CHUNK_F_OPTIONAL 0x0001 /* a reader that does not know the tag skips the chunk */
#define CAPTURE_CHUNK_F_KNOWN	 CAPTURE_CHUNK_F_OPTIONAL

/* capture_chunk_header.compression */
#define CAPTURE_COMPRESSION_NONE 0 /* stored bytes are the raw bytes */
#define CAPTURE_COMPRESSION_ZSTD 1 /* stored bytes are exactly one zstd frame with content size */

#define CAPTURE_ZSTD_LEVEL 3
/*
 * Upper bound of raw_size / stored_size for a zstd frame: a block holds at
 * most 128 KiB and the smallest block (RLE) takes 4 bytes, 3 of header and
 * 1 of content (RFC 8878 section 3.1.1.2).  Lets the reader reject an
 * absurd raw size before it allocates anything.
 */
#define CAPTURE_ZSTD_MAX_RATIO 32768u

struct capture_chunk_header {
	uint32_t tag;	      /* CAPTURE_TAG(...) */
	uint16_t flags;	      /* CAPTURE_CHUNK_F_* */
	uint8_t compression;  /* CAPTURE_COMPRESSION_* */
	uint8_t reserved;     /* 0 */
	uint32_t row_size;    /* bytes per row */
	uint32_t crc;	      /* zlib crc32 of the stored bytes */
	uint64_t row_count;   /* rows */
	uint64_t raw_size;    /* bytes after decompression */
	uint64_t stored_size; /* bytes that follow this header */
};

/* Payload of the SEGM chunk that opens every segment (uncompressed). */
struct capture_segment_payload {
	uint64_t sequence; /* 0-based position in a series of segments; 0 for a single file */
	uint64_t reserved; /* 0 */
};

/* Payload of the SEAL chunk that closes every segment (uncompressed). */
struct capture_seal_payload {
	uint32_t chunk_count;  /* chunks of the segment before the seal, SEGM included */
	uint32_t headers_crc;  /* crc32 over those chunk headers (40 bytes each), in file order */
	uint64_t segment_size; /* bytes from the SEGM header to the end of the seal */
};

_Static_assert(sizeof(struct capture_file_header) == 24, "capture_file_header");
_Static_assert(sizeof(struct capture_chunk_header) == 40, "capture_chunk_header");
_Static_assert(offsetof(struct capture_chunk_header, row_count) == 16, "row_count offset");
_Static_assert(sizeof(struct capture_segment_payload) == 16, "capture_segment_payload");
_Static_assert(sizeof(struct capture_seal_payload) == 16, "capture_seal_payload");

/* Row field offsets as docs/capture-format.md lists them (capture.h asserts the sizes). */
#define CAPTURE_AT(type, field, off) _Static_assert(offsetof(struct type, field) == off, #field)
CAPTURE_AT(capture_module, size, 16);
CAPTURE_AT(capture_module, content_hash, 24);
CAPTURE_AT(capture_process, start_time_ns, 8);
CAPTURE_AT(capture_process, comm, 16);
CAPTURE_AT(capture_process, pidns, 24);
CAPTURE_AT(capture_process, cgroupns, 40);
CAPTURE_AT(capture_thread, process, 8);
CAPTURE_AT(capture_thread, comm, 12);
CAPTURE_AT(capture_mapping, start, 8);
CAPTURE_AT(capture_mapping, time_ns, 32);
CAPTURE_AT(capture_frame, address, 8);
CAPTURE_AT(capture_frame, function, 16);
CAPTURE_AT(capture_frame, line, 24);
CAPTURE_AT(capture_stack, frame, 4);
CAPTURE_AT(capture_event, period, 8);
CAPTURE_AT(capture_sample, thread, 8);
CAPTURE_AT(capture_sample, stack, 16);
CAPTURE_AT(capture_sample, weight, 24);
CAPTURE_AT(capture_counter, value, 8);
CAPTURE_AT(capture_meta, value, 4);
CAPTURE_AT(capture_interval, weight, 16);
CAPTURE_AT(capture_interval, thread, 24);
CAPTURE_AT(capture_interval, stack, 32);
CAPTURE_AT(capture_interval, waker_thread, 48);
CAPTURE_AT(capture_interval, cpu, 56);
CAPTURE_AT(capture_cgroup, path, 8);
CAPTURE_AT(capture_cgroup, runtime, 16);
CAPTURE_AT(capture_probe_site, process, 4);
CAPTURE_AT(capture_probe_record, value, 8);
CAPTURE_AT(capture_probe_record, site, 16);
CAPTURE_AT(capture_probe_record, thread, 20);
CAPTURE_AT(capture_probe_record, kind, 24);
#undef CAPTURE_AT

/*
 * The tables, in the order the writer emits them.  The strings chunk is
 * not row-shaped: its payload is u32 offsets[row_count + 1] then the string
 * bytes, so its row_size is that of one offset (see the format document).
 */
#define CAPTURE_TABLES(X)                                                                          \
	X(STRINGS, 'S', 'T', 'R', 'S', "strings", sizeof(uint32_t))                                \
	X(MODULES, 'M', 'O', 'D', 'S', "modules", sizeof(struct capture_module))                   \
	X(PROCESSES, 'P', 'R', 'O', 'C', "processes", sizeof(struct capture_process))              \
	X(THREADS, 'T', 'H', 'R', 'D', "threads", sizeof(struct capture_thread))                   \
	X(MAPPINGS, 'M', 'A', 'P', 'S', "mappings", sizeof(struct capture_mapping))                \
	X(FRAMES, 'F', 'R', 'M', 'S', "frames", sizeof(struct capture_frame))                      \
	X(STACKS, 'S', 'T', 'K', 'S', "stacks", sizeof(struct capture_stack))                      \
	X(EVENTS, 'E', 'V', 'T', 'S', "events", sizeof(struct capture_event))                      \
	X(SAMPLES, 'S', 'M', 'P', 'L', "samples", sizeof(struct capture_sample))                   \
	X(COUNTERS, 'C', 'N', 'T', 'R', "counters", sizeof(struct capture_counter))                \
	X(META, 'M', 'E', 'T', 'A', "meta", sizeof(struct capture_meta))                           \
	X(INTERVALS, 'O', 'F', 'F', 'C', "intervals", sizeof(struct capture_interval))            \
	X(CGROUPS, 'C', 'G', 'R', 'P', "cgroups", sizeof(struct capture_cgroup))                   \
	X(SAMPLE_CGROUPS, 'S', 'C', 'G', 'R', "sample_cgroups", sizeof(uint32_t))                 \
	X(PROBE_SITES, 'P', 'S', 'I', 'T', "probe_sites", sizeof(struct capture_probe_site))      \
	X(PROBE_RECORDS, 'P', 'R', 'E', 'C', "probe_records", sizeof(struct capture_probe_record))

enum capture_table {
#define CAPTURE_TABLE_ENUM(id, a, b, c, d, name, size) CAPTURE_TABLE_##id,
	CAPTURE_TABLES(CAPTURE_TABLE_ENUM)
#undef CAPTURE_TABLE_ENUM
	    CAPTURE_TABLE_COUNT
};

/* Tables of format 1.0 (strings .. meta) are required.  Tables appended
 * later are written as optional chunks, so that 1.0 readers skip them, and
 * a file without one reads as that table with 0 rows. */
#define CAPTURE_TABLE_REQUIRED_COUNT (CAPTURE_TABLE_META + 1)

struct capture_table_info {
	uint32_t tag;
	uint32_t row_size;
	const char *name;
};

/* Indexed by enum capture_table; defined in reader.c. */
extern const struct capture_table_info capture_table_info[CAPTURE_TABLE_COUNT];

/* The table with this tag, or -1. */
int capture_table__by_tag(uint32_t tag);

/* zlib crc32 continued over n bytes (any size_t; zlib takes 32-bit lengths). */
uint32_t capture__crc32(uint32_t crc, const void *p, size_t n);

/*
 * Check every string, index, range and cross-reference of c, whose
 * strings table must already be framed (string_offsets has nstrings + 1
 * entries and string_offsets[nstrings] bytes follow at string_data).
 * Returns 0, -ENOMEM, or -EBADMSG with "name: table 't' row r: ..." in err.
 */
int capture__validate(const struct capture *c, const char *name, char *err, size_t errlen);

/*
 * builder.c -> writer.c.  capture_builder__view() fills view with pointers
 * into b's tables (valid until the next add) and returns b's sticky error.
 * capture_builder__cctx() returns b's one zstd compression context,
 * created on first use (NULL when out of memory).  capture_builder__msg()
 * is the buffer writer.c explains its last failure in.
 */
int capture_builder__view(struct capture_builder *b, struct capture *view);
/*
 * merge.c.  capture_builder__intern_row() adds a row of an appended table
 * (modules, processes, threads, mappings) unless a row with the same bytes
 * was added through it before, and returns that row's id (CAPTURE_NONE and
 * the sticky error on failure, or for another table).  Rows added with the
 * plain adders are not seen by it.  capture_builder__drop_before() drops
 * the samples with time_ns < until_ns and the intervals with end_ns <
 * until_ns (every one for UINT64_MAX), keeping the order of the rest, and
 * every counter; every other table stays.
 */
uint32_t capture_builder__intern_row(struct capture_builder *b, enum capture_table t,
				     const void *row);
void capture_builder__drop_before(struct capture_builder *b, uint64_t until_ns);
/* merge.c: exchange the whole contents of a and b (rows, indexes, error). */
void capture_builder__swap(struct capture_builder *a, struct capture_builder *b);
struct ZSTD_CCtx_s *capture_builder__cctx(struct capture_builder *b);
char *capture_builder__msg(struct capture_builder *b, size_t *len);

#endif
