/* SPDX-License-Identifier: MIT */
/*
 * Writing a segment directory (the layout of segment_dir.h): one recorder
 * per directory (an exclusive flock on its lock file), each segment a
 * complete capture published atomically, then retention.
 *
 * Ownership: the writer owns the directory's lock for its lifetime and
 * deletes only files whose names are exactly a segment's or a segment
 * temporary's (segment_name__is_segment / __is_temp); anything else in
 * the directory is left alone.
 */
#ifndef MS_CAPTURE_SEGMENT_WRITER_H
#define MS_CAPTURE_SEGMENT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

struct segment_writer;

/* Called after a segment is published, with its path (for exports). */
typedef int (*segment_published_fn)(void *ctx, const char *path, const struct capture *segment);

struct segment_policy {
	uint64_t retain_ns;    /* delete segments whose data ended longer ago than this (their
				* mtime: set to that end when published); 0 = no limit */
	uint64_t retain_bytes; /* keep the newest segments up to this many bytes; 0 = no limit */
	segment_published_fn published; /* may be NULL */
	void *ctx;
};

/*
 * Open dir for writing (created 0700 if missing; -EPERM if group or others
 * may write it, who could plant symlinks there): take its lock (-EBUSY if
 * another process holds it, err naming the holder's pid), delete the
 * segment temporaries a killed recorder left, and continue the sequence
 * after the highest segment there.  Returns 0 with *out, or -errno with a
 * message in err.
 */
int segment_writer__open(const char *dir, const struct segment_policy *policy,
			 struct segment_writer **out, char *err, size_t errlen);

/*
 * Move what src holds from before end_ns (capture_builder__take: samples,
 * intervals, all counters, and the rows they need; src keeps its
 * dictionaries and its later samples) into a new segment covering
 * [start_ns, end_ns) CLOCK_MONOTONIC, publish it (temporary name, fsync,
 * rename, directory fsync), then apply retention.  end_ns UINT64_MAX moves
 * everything (the last segment).  The segment's range (its meta) is
 * widened to its samples' own times if one falls outside (a record
 * released late).  Returns 0 or -errno with a message in err.
 *
 * A segment that cannot be written (a full disk, an I/O error) is never
 * published: its temporary is removed, its samples and intervals are
 * dropped with it, its counters go back to src with "segment.write_errors"
 * 1 and "segment.samples_lost" (so the next segment published says
 * so), its sequence number stays used (readers note the gap), retention
 * runs (it may free space), and segment_writer__write_failed() is true
 * until a segment is written again.
 */
int segment_writer__publish(struct segment_writer *w, struct capture_builder *src,
			    uint64_t start_ns, uint64_t end_ns, char *err, size_t errlen);

/* Segments published and deleted by retention so far. */
uint64_t segment_writer__published(const struct segment_writer *w);
uint64_t segment_writer__deleted(const struct segment_writer *w);

/* Whether the last publish failed to write its segment; the segments and
 * samples dropped so far into *segments and *samples (either may be NULL). */
bool segment_writer__write_failed(const struct segment_writer *w, uint64_t *segments,
				  uint64_t *samples);

/* Releases the lock.  Accepts NULL. */
void segment_writer__free(struct segment_writer *w);

#endif
