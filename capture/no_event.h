/* SPDX-License-Identifier: MIT */
/*
 * A capture with no event rows: a recording that took no sample (the
 * processor names its event when the first sample arrives), a segment
 * directory of such recordings, an import with no sample types.  Every
 * query names an event, so nothing could be asked of it: the commands that
 * read a capture (report, convert, serve) open it through
 * capture__ensure_event() instead, which answers a copy with one event of
 * no samples.  Views and exports of it are then empty ("no samples") rather
 * than errors, and report still shows the header (command, duration, lost
 * and problem counters) that says why there are none.  The file on disk is
 * never changed, and a capture with an event is passed through untouched.
 */
#ifndef MS_CAPTURE_NO_EVENT_H
#define MS_CAPTURE_NO_EVENT_H

#include <stddef.h>

#include "capture/capture.h"

/*
 * If *c has no event row, replace *c (freed) with a copy of it holding one
 * event: named as meta "event" says (what record used), else "samples";
 * unit "samples"; period 0 (unknown).  The copy keeps every meta entry,
 * counter, probe site and probe record (capture_builder__merge()).  Returns
 * 0 (with *c unchanged when it has an event), or -ENOMEM / -EINVAL with a
 * message in err and *c unchanged.
 */
int capture__ensure_event(struct capture **c, char *err, size_t errlen);

#endif
