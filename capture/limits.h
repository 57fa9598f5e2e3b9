/* SPDX-License-Identifier: MIT */
/*
 * Limits on untrusted input: the one place where microscope's bounds on
 * captures, imports and input files are stated (docs/capture-format.md,
 * "Limits", explains each).  Readers and importers check these before they
 * allocate, and a breach is an error that names the limit, never an OOM
 * kill or a misleading parse error.
 *
 * Two kinds of bound:
 *   - fixed ratios and sizes below (format policy; the same everywhere);
 *   - one process-wide memory budget (--max-memory, default a quarter of
 *     physical RAM, at least CAPTURE_LIMIT_MEMORY_FLOOR) that every input
 *     buffer, inflated table and importer workspace is charged against.
 */
#ifndef MS_CAPTURE_LIMITS_H
#define MS_CAPTURE_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * A compressed capture table may inflate to at most
 * CAPTURE_LIMIT_INFLATE_RATIO x its stored bytes + CAPTURE_LIMIT_INFLATE_SLACK.
 * Real tables compress 3-40x (time stamps and ids vary); zstd itself allows
 * 32768x (CAPTURE_ZSTD_MAX_RATIO), which is what a decompression bomb uses.
 */
#define CAPTURE_LIMIT_INFLATE_RATIO 1024u
#define CAPTURE_LIMIT_INFLATE_SLACK (1ull << 20)

/* One table inflates to at most 4 GiB (a string offset is a u32 anyway). */
#define CAPTURE_LIMIT_TABLE_BYTES (4ull << 30)

/*
 * Importers (pprof, folded): rows and steps produced per byte of (inflated)
 * input.  Every frame, stack row and sample added, and every stack step
 * walked (a location's inline lines count one each, for every reference),
 * is one unit; at most CAPTURE_LIMIT_IMPORT_K units per input byte plus
 * CAPTURE_LIMIT_IMPORT_SLACK.  Real profiles need about 1 unit per byte
 * (a location id in a sample is at least one byte); inline-line
 * amplification needs thousands.
 */
#define CAPTURE_LIMIT_IMPORT_K	   16u
#define CAPTURE_LIMIT_IMPORT_SLACK (1ull << 20)

/* A gzip stream inflates at most 1032x (deflate's best case, RFC 1951);
 * the pprof importer refuses more than this factor of its input. */
#define CAPTURE_LIMIT_GZIP_RATIO 1032u

/*
 * Exporters whose output could grow with stack depth x samples (the Chrome
 * trace's B/E slices reopen a stack after every gap) write at most
 * CAPTURE_LIMIT_EXPORT_K events per capture row (samples, intervals and
 * stack rows) plus CAPTURE_LIMIT_EXPORT_SLACK; what does not fit is carried
 * by a compact form (stackFrames + samples) and noted.
 */
#define CAPTURE_LIMIT_EXPORT_K	   16u
#define CAPTURE_LIMIT_EXPORT_SLACK (1ull << 16)

/* The default memory budget is physical RAM / this, and at least the floor. */
#define CAPTURE_LIMIT_MEMORY_FRACTION 4u
#define CAPTURE_LIMIT_MEMORY_FLOOR    (256ull << 20)

/* The name under which messages cite the budget. */
#define CAPTURE_LIMIT_MEMORY_NAME "--max-memory"

/*
 * Unless --max-memory is given, work on one input (reading a capture,
 * importing a profile) may use at most K x the input's bytes as stored +
 * CAPTURE_LIMIT_INPUT_MEMORY_SLACK of the budget, so a few-KB bomb is
 * stopped within ~100 MiB whatever the RAM:
 *   - CAPTURE_LIMIT_INPUT_MEMORY_K for compressed input (captures, .pb.gz;
 *     a bomb is small on disk).  Captures inflate 3-40x; a pprof import
 *     takes 20-50x its .pb.gz (a 200k-sample, 20k-function profile: 11 MB
 *     gzip, 13 MB inflated, 257 MB RSS; a repetitive one: 2.8 MB, 148 MB);
 *   - CAPTURE_LIMIT_TEXT_MEMORY_K for text (folded, perf script): real
 *     folded files repeat their frames and need a few x their bytes; 1M
 *     distinct 8-byte frames (tests/bombs) need 25x and are refused.
 * Bigger needs are met by giving --max-memory, which replaces this bound.
 */
#define CAPTURE_LIMIT_INPUT_MEMORY_K	 256u
#define CAPTURE_LIMIT_TEXT_MEMORY_K	 16u /* must be another value than the one above */
#define CAPTURE_LIMIT_INPUT_MEMORY_SLACK (64ull << 20)

/* The memory budget in bytes: the value set, else the default above. */
uint64_t capture_limits__max_memory(void);

/*
 * The memory budget (bytes) for work on one input of input_bytes bytes as
 * stored: --max-memory when set, else the smaller of the default and k x
 * input_bytes + CAPTURE_LIMIT_INPUT_MEMORY_SLACK (k: one of the _K above).
 */
uint64_t capture_limits__memory_for(uint64_t input_bytes, unsigned k);

/*
 * The limit capture_limits__memory_for(input_bytes, k) applies, named for
 * messages: "--max-memory", or a statement of the input-proportional
 * default and how to raise it when that is the smaller.  A string constant.
 */
const char *capture_limits__memory_name(uint64_t input_bytes, unsigned k);

/* Set the budget (bytes; 0 restores the default).  Not thread-safe: the
 * CLI calls it once before any work. */
void capture_limits__set_max_memory(uint64_t bytes);

/*
 * Parse a size: decimal digits with an optional K, M, G or T suffix
 * (powers of 1024; "512M", "2G").  Returns 0 with *bytes set, or -EINVAL.
 */
int capture_limits__parse_size(const char *s, uint64_t *bytes);

/* The largest raw_size a table of stored_size zstd bytes may claim. */
uint64_t capture_limits__max_inflated(uint64_t stored_size);

/* The importer work budget (units as above) for len input bytes. */
uint64_t capture_limits__import_units(size_t len);

#endif
