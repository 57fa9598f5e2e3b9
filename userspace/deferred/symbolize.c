// SPDX-License-Identifier: MIT
/*
 * capture__symbolize: the capture is immutable, so symbolizing means
 * building a new one.  Tables are copied row by row in id order (so process,
 * thread, module, mapping and event ids are unchanged); frames become
 * chains (one input frame -> one or more output frames) and stacks are
 * re-built over the chains: stack row j's new id is its parent's new id
 * extended by every frame of its frame's chain.  Parents precede children
 * (capture rule), so one pass in id order suffices.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/deferred/symbolize.h"

/* Inline frames kept per address at most. */
#define SYMBOLIZE_MAX_INLINE 16

struct chain {
	uint32_t off, count; /* into rows */
};

struct rebuild {
	const struct capture *in;
	uint64_t *missing; /* per input module: 1 + first address still unnamed, or 0 */
	struct capture_builder *out;
	struct sym_module **mods; /* per input module: found module or NULL */
	struct chain *chains;	  /* per input frame */
	uint32_t *rows;
	size_t nrows, rows_cap;
};

static uint32_t str(struct rebuild *r, uint32_t id)
{
	return capture_builder__string(r->out, capture__string(r->in, id));
}

static int hex_to_bytes(const char *hex, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(hex), i;

	if (n % 2 || n / 2 > max)
		return -EINVAL;
	for (i = 0; i < n / 2; i++) {
		unsigned v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

static int rows_push(struct rebuild *r, uint32_t id)
{
	if (r->nrows == r->rows_cap) {
		size_t n = r->rows_cap ? 2 * r->rows_cap : 1024;
		uint32_t *v = realloc(r->rows, n * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->rows = v;
		r->rows_cap = n;
	}
	r->rows[r->nrows++] = id;
	return 0;
}

/* Does input module i have frames waiting for names?  Sets *first to the
 * first such frame's address. */
static bool module_needs_names(const struct capture *c, uint32_t i, uint64_t *first)
{
	for (uint32_t f = 0; f < c->nframes; f++) {
		const struct capture_frame *fr = &c->frames[f];

		if (fr->module == i && (fr->flags & CAPTURE_FRAME_F_UNSYMBOLIZED) &&
		    !(fr->flags & CAPTURE_FRAME_F_TRUNCATION)) {
			*first = fr->address;
			return true;
		}
	}
	return false;
}

static int copy_modules(struct rebuild *r, struct symbolizer *s, struct symbolize_stats *st,
			FILE *log, uint32_t *nfail)
{
	const struct capture *c = r->in;

	for (uint32_t i = 0; i < c->nmodules; i++) {
		struct capture_module row = c->modules[i];
		const char *path = capture__string(c, row.path);
		const char *bid_hex = capture__string(c, row.build_id);
		uint8_t bid[64];
		size_t bid_len = 0;
		uint64_t first = 0;
		const char *why = NULL;

		row.path = str(r, row.path);
		row.build_id = str(r, row.build_id);
		if (row.kind == CAPTURE_MODULE_FILE && module_needs_names(c, i, &first)) {
			if (hex_to_bytes(bid_hex, bid, sizeof(bid), &bid_len) || !bid_len)
				why = "no build ID: identity cannot be proved";
			else
				r->mods[i] = symbolizer__by_build_id(s, path, bid, bid_len, &why);
			if (!r->mods[i] && errno == ENOMEM && !why)
				return -ENOMEM;
			if (r->mods[i]) {
				row.flags |= CAPTURE_MODULE_F_SYMBOLIZED;
				st->modules_symbolized++;
			} else {
				char key[64], val[2048];

				snprintf(key, sizeof(key), "symbolize.failure.%u", (*nfail)++);
				snprintf(val, sizeof(val), "module=%s build_id=%s address=0x%" PRIx64
					 " reason=%s",
					 path, bid_hex[0] ? bid_hex : "-", first, why ? why : "unknown");
				capture_builder__set_meta(r->out, key, val);
				st->modules_failed++;
				if (log)
					fprintf(log, "microscope symbolize: %s (%s): %s\n", path,
						bid_hex[0] ? bid_hex : "no build ID", why ? why : "unknown");
			}
		}
		capture_builder__add_module(r->out, &row);
	}
	return 0;
}

static int copy_frames(struct rebuild *r, struct symbolize_stats *st)
{
	const struct capture *c = r->in;
	struct sym_frame chain[SYMBOLIZE_MAX_INLINE];

	for (uint32_t i = 0; i < c->nframes; i++) {
		struct capture_frame row = c->frames[i];
		struct sym_module *m = row.module == CAPTURE_NONE ? NULL : r->mods[row.module];
		size_t depth = 0;
		int err;

		r->chains[i].off = (uint32_t)r->nrows;
		if (m && (row.flags & CAPTURE_FRAME_F_UNSYMBOLIZED) &&
		    !(row.flags & CAPTURE_FRAME_F_TRUNCATION)) {
			uint64_t at = (row.flags & CAPTURE_FRAME_F_RETURN) && row.address
					  ? row.address - 1
					  : row.address;

			depth = sym_module__frames(m, at, chain, SYMBOLIZE_MAX_INLINE);
			if (depth && !chain[depth - 1].function)
				depth = 0;
		}
		if (depth) {
			st->frames_symbolized++;
			for (size_t k = depth; k-- > 0;) {
				struct capture_frame f = {
				    .module = row.module,
				    .flags = (row.flags & ~CAPTURE_FRAME_F_UNSYMBOLIZED) |
					     (chain[k].inlined ? CAPTURE_FRAME_F_INLINE : 0),
				    .address = row.address,
				    .function = capture_builder__string(
					r->out, chain[k].function ? chain[k].function : ""),
				    .file = capture_builder__string(r->out,
								    chain[k].file ? chain[k].file : ""),
				    .line = chain[k].line,
				};
				if (!chain[k].function)
					f.flags |= CAPTURE_FRAME_F_UNSYMBOLIZED;
				err = rows_push(r, capture_builder__add_frame(r->out, &f));
				if (err)
					return err;
			}
		} else {
			if ((row.flags & CAPTURE_FRAME_F_UNSYMBOLIZED) &&
			    !(row.flags & CAPTURE_FRAME_F_TRUNCATION)) {
				st->frames_unsymbolized++;
				if (m && !r->missing[row.module])
					r->missing[row.module] = row.address + 1;
			}
			row.function = str(r, row.function);
			row.file = str(r, row.file);
			err = rows_push(r, capture_builder__add_frame(r->out, &row));
			if (err)
				return err;
		}
		r->chains[i].count = (uint32_t)(r->nrows - r->chains[i].off);
	}
	return 0;
}

int capture__symbolize(const struct capture *in, struct symbolizer *s, struct capture_builder *out,
		       struct symbolize_stats *stats, FILE *log)
{
	struct rebuild r = {.in = in, .out = out};
	uint32_t *stacks = NULL, nfail = 0, i;
	int err = -ENOMEM;

	memset(stats, 0, sizeof(*stats));
	r.mods = calloc(in->nmodules ? in->nmodules : 1, sizeof(*r.mods));
	r.chains = calloc(in->nframes ? in->nframes : 1, sizeof(*r.chains));
	r.missing = calloc(in->nmodules ? in->nmodules : 1, sizeof(*r.missing));
	stacks = calloc(in->nstacks ? in->nstacks : 1, sizeof(*stacks));
	if (!r.mods || !r.chains || !stacks || !r.missing)
		goto cleanup;

	err = copy_modules(&r, s, stats, log, &nfail);
	if (err)
		goto cleanup;
	for (i = 0; i < in->nprocesses; i++) {
		struct capture_process row = in->processes[i];

		row.comm = str(&r, row.comm);
		row.exe = str(&r, row.exe);
		capture_builder__add_process(out, &row);
	}
	for (i = 0; i < in->nthreads; i++) {
		struct capture_thread row = in->threads[i];

		row.comm = str(&r, row.comm);
		capture_builder__add_thread(out, &row);
	}
	for (i = 0; i < in->nmappings; i++)
		capture_builder__add_mapping(out, &in->mappings[i]);
	for (i = 0; i < in->nevents; i++) {
		struct capture_event row = in->events[i];

		row.name = str(&r, row.name);
		row.unit = str(&r, row.unit);
		capture_builder__add_event(out, &row);
	}
	err = copy_frames(&r, stats);
	if (err)
		goto cleanup;
	/* Found, but some addresses have no symbol (a stripped file and no
	 * debug file): a failure too. */
	for (i = 0; i < in->nmodules; i++) {
		char key[64], val[2048];
		const char *path = capture__string(in, in->modules[i].path);
		const char *bid = capture__string(in, in->modules[i].build_id);

		if (!r.missing[i])
			continue;
		/* Name what was looked at: a found debug file without a
		 * covering symbol is not a missing debug file. */
		const char *dbg = r.mods[i] ? sym_module__debug_path(r.mods[i]) : NULL;
		char why[1200];

		if (dbg)
			snprintf(why, sizeof(why),
				 "debug file %s found, but no symbol in it or the module covers the "
				 "address",
				 dbg);
		else
			snprintf(why, sizeof(why),
				 "no symbol in the module covers the address, and no debug file with "
				 "this build ID was found");
		snprintf(key, sizeof(key), "symbolize.failure.%u", nfail++);
		snprintf(val, sizeof(val), "module=%s build_id=%s address=0x%" PRIx64 " reason=%s",
			 path, bid, r.missing[i] - 1, why);
		capture_builder__set_meta(out, key, val);
		stats->modules_failed++;
		if (log)
			fprintf(log, "microscope symbolize: %s (%s): address 0x%" PRIx64 " and others: %s\n",
				path, bid, r.missing[i] - 1, why);
	}
	for (i = 0; i < in->nstacks; i++) {
		const struct capture_stack *st = &in->stacks[i];
		uint32_t parent = st->parent == CAPTURE_NONE ? CAPTURE_NONE : stacks[st->parent];
		const struct chain *ch = &r.chains[st->frame];

		for (uint32_t k = 0; k < ch->count; k++)
			parent = capture_builder__add_stack(out, parent, r.rows[ch->off + k]);
		stacks[i] = parent;
	}
	for (i = 0; i < in->nsamples; i++) {
		struct capture_sample row = in->samples[i];

		if (row.stack != CAPTURE_NONE)
			row.stack = stacks[row.stack];
		capture_builder__add_sample(out, &row);
	}
	/* Off-CPU intervals (docs/capture-format.md, intervals): thread and
	 * event ids are kept as they are; both stacks are rebuilt. */
	for (i = 0; i < in->nintervals; i++) {
		struct capture_interval row = in->intervals[i];

		if (row.stack != CAPTURE_NONE)
			row.stack = stacks[row.stack];
		if (row.waker_stack != CAPTURE_NONE)
			row.waker_stack = stacks[row.waker_stack];
		capture_builder__add_interval(out, &row);
	}
	/* cgroups and containers, as recorded where the recording ran */
	for (i = 0; i < in->ncgroups; i++) {
		struct capture_cgroup row = in->cgroups[i];

		row.path = str(&r, row.path);
		row.container = str(&r, row.container);
		row.runtime = str(&r, row.runtime);
		capture_builder__add_cgroup(out, &row);
	}
	for (i = 0; i < in->nsample_cgroups; i++)
		if (in->sample_cgroups[i] != CAPTURE_NONE)
			capture_builder__set_sample_cgroup(out, i, in->sample_cgroups[i]);
	/* probe sites and records (zones): process and thread ids kept */
	for (i = 0; i < in->nprobe_sites; i++) {
		struct capture_probe_site row = in->probe_sites[i];

		row.name = str(&r, row.name);
		capture_builder__add_probe_site(out, &row);
	}
	for (i = 0; i < in->nprobe_records; i++)
		capture_builder__add_probe_record(out, &in->probe_records[i]);
	for (i = 0; i < in->ncounters; i++)
		capture_builder__add_counter(out, capture__string(in, in->counters[i].name),
					     in->counters[i].value);
	for (i = 0; i < in->nmeta; i++)
		capture_builder__set_meta(out, capture__string(in, in->meta[i].key),
					  capture__string(in, in->meta[i].value));
	capture_builder__add_counter(out, "symbolize.modules_symbolized",
				     stats->modules_symbolized);
	capture_builder__add_counter(out, "symbolize.modules_failed", stats->modules_failed);
	capture_builder__add_counter(out, "symbolize.frames_symbolized", stats->frames_symbolized);
	capture_builder__add_counter(out, "symbolize.frames_unsymbolized",
				     stats->frames_unsymbolized);
	capture_builder__set_meta(out, "symbolize.later", "microscope symbolize");
	err = 0;
cleanup:
	free(r.mods);
	free(r.missing);
	free(r.chains);
	free(r.rows);
	free(stacks);
	return err;
}
