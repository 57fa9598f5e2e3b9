/* SPDX-License-Identifier: MIT */
/*
 * Segment directories: the on-disk layout of continuous recordings, and
 * the reader that presents a directory's valid segments as one capture.
 *
 * Layout (owned by this file; nothing else names these files):
 *   DIR/seg-YYYYMMDDTHHMMSSZ-NNNNNNNN.msc       a complete segment, published
 *                                               atomically (capture_builder__write)
 *   DIR/seg-...msc.tmp.XXXXXX                   a segment being written (file_out's
 *                                               temporary, capture/file_io.h)
 *   DIR/seg-...{.pb.gz,.speedscope.json,.folded}  its export (record --export),
 *                                               and their .tmp.XXXXXX while written
 *   DIR/.microscope.lock                        flock'ed by the one recorder
 *   DIR/.microscope.id                          the directory's id: 32 lowercase hex
 *                                               digits, made by its first recorder
 *                                               (random), kept by later ones
 * The UTC time is the segment's start (wall clock, seconds) and NNNNNNNN
 * its sequence number, which a recorder continues from the highest one in
 * the directory, so name order is time order and a gap inside the
 * sequence is a missing segment.  Retention deletes only names that match
 * segment_name__is_segment() exactly, with their exports.
 *
 * Each segment is an ordinary self-contained capture with these meta keys:
 *   segment.sequence     its sequence number (decimal)
 *   segment.start_ns     CLOCK_MONOTONIC ns the segment covers from (inclusive),
 *                        on the --segment grid
 *   segment.end_ns       ... up to (exclusive); the segments of a recording
 *                        never overlap
 *   segment.realtime_ns  CLOCK_REALTIME ns at segment.start_ns
 *   segment.directory    the id of the directory it was written into (absent
 *                        in segments of older recorders)
 *   segment.late_records samples and intervals older than segment.start_ns:
 *                        released after their own segment was cut (a drain
 *                        starved past the release lag), kept here with their
 *                        own times (absent: none)
 *   segment.counters     "segment": its loss, problem and budget counters are
 *                        what accrued during its span (deltas; the last
 *                        segment also holds the whole recording's peaks, lag,
 *                        kunwind and budget factors).  Absent in segments of
 *                        older recorders, whose last segment held every
 *                        counter of the whole recording.
 * A recording is one meta start_time_ns (CLOCK_MONOTONIC when it started):
 * a recorder that starts again into the directory begins another.
 */
#ifndef MS_CAPTURE_SEGMENT_DIR_H
#define MS_CAPTURE_SEGMENT_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/capture.h"

#define SEGMENT_LOCK_NAME ".microscope.lock"
#define SEGMENT_NAME_MAX  64

#define SEGMENT_META_SEQUENCE "segment.sequence"
#define SEGMENT_META_START    "segment.start_ns"
#define SEGMENT_META_END      "segment.end_ns"
#define SEGMENT_META_REALTIME "segment.realtime_ns"
#define SEGMENT_META_DIRECTORY "segment.directory"
#define SEGMENT_META_COUNTERS  "segment.counters"
#define SEGMENT_META_LATE      "segment.late_records"

#define SEGMENT_ID_NAME ".microscope.id"
#define SEGMENT_ID_LEN	32 /* hex digits */

/* The id of the directory open as dir_fd into id (SEGMENT_ID_LEN + 1
 * bytes).  Returns 0, -ENOENT (none: a directory of older recorders),
 * -EINVAL (not SEGMENT_ID_LEN lowercase hex digits), or -errno. */
int segment_dir__id(int dir_fd, char *id);

/* What replaces ".msc" in a segment's name for its exports, by format name
 * ("pprof", "speedscope", "folded"), NULL-terminated pairs. */
extern const char *const segment_export_suffixes[][2];

/* "seg-20261202T141700Z-00000042.msc" for realtime_ns and sequence into buf
 * (at least SEGMENT_NAME_MAX bytes).  Returns 0 or -EINVAL. */
int segment_name__format(char *buf, size_t len, uint64_t realtime_ns, uint64_t sequence);
/* Is name exactly a complete segment's name?  Sets *sequence if so. */
bool segment_name__is_segment(const char *name, uint64_t *sequence);
/* Is name the temporary of a segment or of a segment's export
 * ("seg-...msc.tmp.XXXXXX", "seg-...pb.gz.tmp.XXXXXX": a tag of 1 to 16
 * letters and digits, as file_out makes them)? */
bool segment_name__is_temp(const char *name);

/* The complete segments of dir, in name (= time) order: *names (malloc'd
 * array of malloc'd names; free with segment_dir__free_names) and *n.
 * Returns 0 or -errno. */
int segment_dir__list(const char *dir, char ***names, size_t *n);
void segment_dir__free_names(char **names, size_t n);

/* Called once per segment the reader skipped or could not account for,
 * with one line such as "seg-...msc: damaged: ...: skipped". */
typedef void (*segment_note_fn)(void *ctx, const char *line);

/*
 * Read the segments of dir as one capture: every valid segment whose
 * samples fall in [since_realtime_ns, until_realtime_ns) (CLOCK_REALTIME;
 * 0 and UINT64_MAX select everything), with its samples trimmed to that
 * range, merged with capture_builder__merge() in name order.  A segment
 * being written, a damaged one, one removed while reading (retention), a
 * gap in the sequence, and a file of another directory under a segment's
 * name (no segment meta, a sequence its name does not say, another
 * directory's segment.directory, a recording that ended before another
 * began) are each reported through note (may be NULL) and skipped.  The
 * merged capture's meta "segments" counts the segments read, "samples" its
 * samples, "segments.foreign_skipped" the other directories' files skipped,
 * "event.N.freq_hz" the rate requested by the recording that event N came
 * from (meta freq_hz is the last recording's),
 * and, when a segment read carries the recorder's counters,
 * "segments.counters_span_ns" that recording's span (start_time_ns to its
 * last segment's end) and "segments.counters_read_ns" how much of it the
 * segments read cover; "segments.counters" is "segment" when every such
 * segment carries its own span's loss, problem and budget counters
 * (SEGMENT_META_COUNTERS: they sum over the segments read), absent when one
 * holds a whole recording's (older recorders: written once, at stop).
 * Returns 0 with *out; -ERANGE (with err naming the span the segments
 * cover) when segments were readable but none falls in the range; -ENOENT
 * (with err) when no segment could be read; -errno of listing the
 * directory; -ENOMEM.
 */
int segment_dir__open(const char *dir, uint64_t since_realtime_ns, uint64_t until_realtime_ns,
		      struct capture **out, char *err, size_t errlen, segment_note_fn note,
		      void *ctx);

/* The same, serialized: *bytes (malloc'd, caller frees) of *len bytes, a
 * capture that capture__open_mem() accepts. */
int segment_dir__read(const char *dir, uint64_t since_realtime_ns, uint64_t until_realtime_ns,
		      void **bytes, size_t *len, char *err, size_t errlen, segment_note_fn note,
		      void *ctx);

/* Is path a directory (following symlinks)? */
bool segment_dir__is_dir(const char *path);

/* A directory through segment_dir__open (everything), anything else
 * through capture__open.  Same returns. */
int segment_dir__open_path(const char *path, struct capture **out, char *err, size_t errlen,
			   segment_note_fn note, void *ctx);

#endif
