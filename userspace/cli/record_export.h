/* SPDX-License-Identifier: MIT */
/*
 * record --continuous --export FORMAT: each published segment's export,
 * written beside it (seg-...msc -> seg-...pb.gz, .speedscope.json,
 * .folded) and published atomically like the segment.  A segment_published_fn
 * (capture/segment_writer.h).
 */
#ifndef MS_RECORD_EXPORT_H
#define MS_RECORD_EXPORT_H

#include "capture/capture.h"

struct record_export;

/* fmt: "pprof", "speedscope" or "folded".  Returns 0 with *out or -EINVAL / -ENOMEM. */
int record_export__new(const char *fmt, struct record_export **out);

/* A segment_published_fn: writes segment's export beside path (".msc"
 * replaced by the format's suffix, capture/segment_dir.h), published with
 * file_out (capture/file_io.h: a 0600 temporary, fsync, rename, directory
 * fsync; a symlink under the export's name is refused with -ELOOP).  ctx
 * is the struct record_export *.  Returns 0 or -errno (message printed). */
int record_export__segment(void *ctx, const char *path, const struct capture *segment);

/* Accepts NULL. */
void record_export__free(struct record_export *e);

#endif
