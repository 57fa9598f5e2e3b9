/* SPDX-License-Identifier: MIT */
/*
 * Copying part of one capture into a builder with the rows it needs.
 *
 * Used two ways: a directory reader merges the segments of a directory
 * into one builder (one logical profile), and a continuous recorder moves
 * what its processor has appended so far into a fresh builder that becomes
 * one self-contained segment, while the processor's own builder keeps its
 * dictionaries (every id the processor holds stays valid).
 *
 * Rows are copied with their ids remapped: strings, frames, stacks and
 * events are interned by the destination as usual; modules, processes,
 * threads and mappings are deduplicated by content among the rows copied
 * by these functions, so segments that share a process merge into one.
 */
#ifndef MS_CAPTURE_MERGE_H
#define MS_CAPTURE_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "capture/capture.h"
#include "capture/format.h"

/*
 * Copy into dst the samples of src with since_ns <= time_ns < until_ns and
 * the off-CPU intervals of src whose end_ns is in that range (so adjacent
 * ranges count each interval once), every row they reference, every event
 * of src (a quiet span still says what was recorded), every mapping of a
 * process they reference, src's meta (set, so later sources win) and src's
 * counters (added).  src must be validated (capture__open) or come from a
 * builder; ids are still checked: one out of range returns -EINVAL, and
 * dst, which may then hold part of src, is to be discarded.  Returns 0,
 * -ENOMEM or -EINVAL.
 */
int capture_builder__merge(struct capture_builder *dst, const struct capture *src,
			   uint64_t since_ns, uint64_t until_ns);

/*
 * Move the samples of src with time_ns < until_ns, its intervals with
 * end_ns < until_ns (all of both for UINT64_MAX) and all its counters into
 * dst, with the rows they need and src's meta.  src keeps its later
 * samples and intervals in order and all its other rows, so ids handed out
 * by src stay valid and later samples can be appended to it as before.
 * Returns 0, -ENOMEM, or -EINVAL (src holds a bad reference); src is
 * unchanged on failure.
 */
int capture_builder__take(struct capture_builder *src, struct capture_builder *dst,
			  uint64_t until_ns);

/*
 * Move src's counters into dst (added to dst's of the same name); src has
 * none after.  Returns 0 or -ENOMEM (src unchanged: dst's sticky error).
 */
int capture_builder__move_counters(struct capture_builder *src, struct capture_builder *dst);

/* capture_builder__merge() from another builder's rows (src unchanged). */
int capture_builder__merge_builder(struct capture_builder *dst, struct capture_builder *src,
				   uint64_t since_ns, uint64_t until_ns);

/*
 * Ids of b's rows that b's owner holds (a processor's caches).  A
 * capture_refs_fn calls ref(ctx, table, &id) once for every id it holds,
 * with table one of strings, modules, processes, threads, frames, stacks,
 * events or cgroups; CAPTURE_NONE ids are passed over.  ref may rewrite
 * *id: the walk must reach the same ids in the same places each time.
 */
typedef void (*capture_ref_fn)(void *ctx, enum capture_table table, uint32_t *id);
typedef void (*capture_refs_fn)(void *owner, capture_ref_fn ref, void *ctx);

/*
 * Rebuild b with only the rows it still needs: those of its samples and
 * intervals (capture_builder__take() left them: all of them are kept),
 * every event, the mappings of every process kept, its meta and counters,
 * and the rows refs(owner) reaches, whose ids it then rewrites to the
 * new ones (refs is called twice).  Everything else (strings, frames,
 * stacks, processes and threads nothing holds any more) is freed, so
 * a long recording's dictionaries follow what is live, not the run.
 * Returns 0, -ENOMEM or -EINVAL (a held id out of range, or a bad table);
 * on failure b and the owner's ids are unchanged.
 */
int capture_builder__compact(struct capture_builder *b, capture_refs_fn refs, void *owner);

/* The earliest and latest time (ns) of b's samples, interval ends and probe records:
 * false (and nothing set) when b has none. */
bool capture_builder__time_range(struct capture_builder *b, uint64_t *first_ns,
				 uint64_t *last_ns);

#endif
