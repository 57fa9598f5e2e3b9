// SPDX-License-Identifier: MIT
/*
 * pprof importer: a perftools.profiles.Profile (gzip-compressed or raw) into
 * capture rows.  Untrusted input: the gzip stream is inflated with a size
 * cap, protobuf-c parses the wire format, and every string index and id
 * reference is checked here before it is followed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "capture/formats/formats.h"
#include "capture/formats/pprof_labels.h"
#include "capture/formats/profile.pb-c.h"
#include "capture/limits.h"

typedef Perftools__Profiles__Profile pb_profile;

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

/*
 * Inflate a gzip stream (one or more members) of at most max bytes
 * (CAPTURE_LIMIT_GZIP_RATIO x the input, and a quarter of the memory
 * limit); -EBADMSG if corrupt or truncated or not protobuf from its first
 * byte on, -EFBIG beyond max.
 */
static int gunzip(const unsigned char *in, size_t len, unsigned char **out, size_t *out_len,
		  char *err, size_t errlen)
{
	z_stream z = { 0 };
	size_t cap = len * 4 + 4096, used = 0, max;
	unsigned char *buf = NULL;
	uint64_t by_ratio, by_memory;
	int rc = Z_OK, ret;

	by_memory = capture_limits__memory_for(len, CAPTURE_LIMIT_INPUT_MEMORY_K) / 4;
	if (__builtin_mul_overflow((uint64_t)len, CAPTURE_LIMIT_GZIP_RATIO, &by_ratio))
		by_ratio = UINT64_MAX;
	max = (size_t)(by_ratio < by_memory ? by_ratio : by_memory);
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	for (;;) {
		if (used == cap || !buf) {
			unsigned char *nb;

			if (buf)
				cap = cap > max / 2 ? max : cap * 2;
			if (cap > max)
				cap = max;
			if (used == cap) {
				ret = -EFBIG;
				snprintf(err, errlen,
					 "gzip data inflates beyond %zu bytes (%s: %u x the input "
					 "or a quarter of the memory limit, %s)",
					 max, by_ratio < by_memory ? "the gzip ratio limit" :
					 "the memory limit", CAPTURE_LIMIT_GZIP_RATIO,
					 capture_limits__memory_name(len, CAPTURE_LIMIT_INPUT_MEMORY_K));
				goto cleanup;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				ret = -ENOMEM;
				goto cleanup;
			}
			buf = nb;
		}
		z.next_out = buf + used;
		z.avail_out = (uInt)(cap - used > UINT32_MAX ? UINT32_MAX : cap - used);
		rc = inflate(&z, Z_NO_FLUSH);
		used = cap - used > UINT32_MAX ? used + (UINT32_MAX - z.avail_out)
					       : cap - z.avail_out;
		/* no protobuf message starts with field number 0: stop a zero bomb now */
		if (used && buf[0] < 8) {
			ret = fail(err, errlen, "not a pprof profile: inflated byte 0 is 0x%02x "
				   "(protobuf field number 0 does not exist)", buf[0]);
			goto cleanup;
		}
		if (rc == Z_STREAM_END) {
			/* another member may follow (concatenated gzip files) */
			if (z.avail_in == 0)
				break;
			if (inflateReset(&z) != Z_OK) {
				ret = -ENOMEM;
				goto cleanup;
			}
			continue;
		}
		if (rc == Z_BUF_ERROR && z.avail_in == 0) {
			ret = fail(err, errlen, "truncated gzip data (stream ends after %zu bytes)",
				   len);
			goto cleanup;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			ret = fail(err, errlen, "corrupt gzip data: %s",
				   z.msg ? z.msg : "inflate failed");
			goto cleanup;
		}
	}
	*out = buf;
	*out_len = used;
	buf = NULL;
	ret = 0;
cleanup:
	inflateEnd(&z);
	free(buf);
	return ret;
}

/*
 * protobuf-c's allocations, counted against a limit: an out-of-memory
 * while unpacking is then told apart from a message that does not parse
 * (both make unpack return NULL).
 */
struct pb_budget {
	uint64_t left;
	bool exceeded;
};

static void *pb_alloc(void *data, size_t size)
{
	struct pb_budget *pb = data;
	uint64_t *p;

	/* what malloc really takes: a 16-byte header and 16-byte granules */
	uint64_t cost = ((uint64_t)size + 16 + 15) & ~(uint64_t)15;

	if (cost + 16 > pb->left) {
		pb->exceeded = true;
		return NULL;
	}
	p = malloc(size + 16);
	if (!p) {
		pb->exceeded = true;
		return NULL;
	}
	pb->left -= cost + 16;
	p[0] = cost + 16;
	return p + 2;
}

static void pb_free(void *data, void *ptr)
{
	struct pb_budget *pb = data;
	uint64_t *p = ptr;

	if (!p)
		return;
	pb->left += p[-2];
	free(p - 2);
}

/* (id, index) pairs sorted by id, for binary search. */
struct id_index {
	uint64_t id;
	uint32_t index;
};

static int id_cmp(const void *a, const void *b)
{
	const struct id_index *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static uint32_t id_find(const struct id_index *ix, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix[mid].id == id)
			return ix[mid].index;
		if (ix[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return CAPTURE_NONE;
}

/* Sort and check ids: nonzero, unique.  what names the table in messages. */
static int id_index_build(struct id_index *ix, size_t n, const char *what, char *err,
			  size_t errlen)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!ix[i].id)
			return fail(err, errlen, "%s %u has id 0 (ids must be nonzero)", what,
				    ix[i].index);
	qsort(ix, n, sizeof(*ix), id_cmp);
	for (i = 1; i < n; i++)
		if (ix[i].id == ix[i - 1].id)
			return fail(err, errlen, "%s id %" PRIu64 " is used twice", what,
				    ix[i].id);
	return 0;
}

struct pprof_in {
	const pb_profile *p;
	struct capture_builder *b;
	uint32_t *strs; /* pprof string index -> capture string id */
	char *err;
	size_t errlen;
};

/* The capture string for pprof string index idx; CAPTURE_NONE (and err) if out of range. */
static uint32_t str_ref(struct pprof_in *in, int64_t idx, const char *what, uint64_t id)
{
	if (idx < 0 || (uint64_t)idx >= in->p->n_string_table) {
		fail(in->err, in->errlen, "%s %" PRIu64 ": string index %" PRId64
			      " out of range (string_table has %zu entries)",
		     what, id, idx, in->p->n_string_table);
		return CAPTURE_NONE;
	}
	if (in->strs[idx] == CAPTURE_NONE)
		in->strs[idx] = capture_builder__string(in->b, in->p->string_table[idx]);
	return in->strs[idx];
}

static uint32_t module_kind(const char *path)
{
	if (!strncmp(path, "[kernel", 7))
		return CAPTURE_MODULE_KERNEL;
	if (!strcmp(path, "[vdso]"))
		return CAPTURE_MODULE_VDSO;
	return CAPTURE_MODULE_FILE;
}

int pprof__import(const void *data, size_t len, struct capture_builder *b,
		  struct formats_note *note, char *err, size_t errlen)
{
	const unsigned char *bytes = data;
	unsigned char *raw = NULL;
	size_t raw_len = len, i, j, k;
	pb_profile *p = NULL;
	struct pprof_in in = { .b = b, .err = err, .errlen = errlen };
	struct id_index *maps_ix = NULL, *locs_ix = NULL, *funcs_ix = NULL;
	uint32_t *map_module = NULL, *events = NULL, *loc_first = NULL, *loc_n = NULL;
	uint32_t *frames = NULL, *fn_name = NULL, *fn_file = NULL, process = CAPTURE_NONE;
	size_t nframes = 0;
	struct pprof_labels pl;
	uint64_t negative = 0, zero_only = 0, no_values = 0, empty_maps = 0;
	uint64_t *totals = NULL; /* per sample type: the sum must fit u64 */
	struct pb_budget pbb = { 0 };
	ProtobufCAllocator pb_allocator = { pb_alloc, pb_free, &pbb };
	struct import_budget ib;
	uint64_t max = capture_limits__memory_for(len, CAPTURE_LIMIT_INPUT_MEMORY_K), pb_limit;
	int ret = -ENOMEM;

	if (errlen)
		err[0] = '\0';
	if (len >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) {
		ret = gunzip(bytes, len, &raw, &raw_len, err, errlen);
		if (ret)
			goto cleanup;
		bytes = raw;
	}
	/* the parser gets what the input and its inflated copy leave of the limit */
	pbb.left = max > len + (raw ? raw_len : 0) ? max - len - (raw ? raw_len : 0) : 0;
	pbb.left /= 2; /* the other half is for the rows */
	pb_limit = pbb.left;
	p = perftools__profiles__profile__unpack(&pb_allocator, raw_len, bytes);
	if (!p && pbb.exceeded) {
		ret = -EFBIG;
		snprintf(err, errlen,
			 "decoding the %zu-byte protobuf message needs more than half the memory "
			 "limit of %" PRIu64 " bytes (%s)",
			 raw_len, max, capture_limits__memory_name(len, CAPTURE_LIMIT_INPUT_MEMORY_K));
		goto cleanup;
	}
	if (!p) {
		ret = fail(err, errlen, "not a pprof profile: the protobuf message does not parse");
		goto cleanup;
	}
	import_budget__init(&ib, b, raw_len, len, CAPTURE_LIMIT_INPUT_MEMORY_K,
			    pb_limit - pbb.left + len + (raw ? raw_len : 0), err, errlen);
	in.p = p;
	pprof_labels__init(&pl, b, p);
	if (!p->n_string_table || p->string_table[0][0]) {
		ret = fail(err, errlen, "string_table[0] must be \"\" (%s)",
			   p->n_string_table ? "it is not" : "the table is empty");
		goto cleanup;
	}
	ret = -ENOMEM;
	in.strs = malloc(p->n_string_table * sizeof(*in.strs));
	maps_ix = calloc(p->n_mapping + 1, sizeof(*maps_ix));
	locs_ix = calloc(p->n_location + 1, sizeof(*locs_ix));
	funcs_ix = calloc(p->n_function + 1, sizeof(*funcs_ix));
	map_module = calloc(p->n_mapping + 1, sizeof(*map_module));
	events = calloc(p->n_sample_type + 1, sizeof(*events));
	totals = calloc(p->n_sample_type + 1, sizeof(*totals));
	loc_first = calloc(p->n_location + 1, sizeof(*loc_first));
	loc_n = calloc(p->n_location + 1, sizeof(*loc_n));
	fn_name = calloc(p->n_function + 1, sizeof(*fn_name));
	fn_file = calloc(p->n_function + 1, sizeof(*fn_file));
	if (!in.strs || !maps_ix || !locs_ix || !funcs_ix || !map_module || !events || !totals ||
	    !loc_first || !loc_n || !fn_name || !fn_file)
		goto cleanup;
	memset(in.strs, 0xff, p->n_string_table * sizeof(*in.strs));
	in.strs[0] = 0;

	for (i = 0; i < p->n_mapping; i++)
		maps_ix[i] = (struct id_index){ p->mapping[i]->id, (uint32_t)i };
	for (i = 0; i < p->n_location; i++)
		locs_ix[i] = (struct id_index){ p->location[i]->id, (uint32_t)i };
	for (i = 0; i < p->n_function; i++)
		funcs_ix[i] = (struct id_index){ p->function[i]->id, (uint32_t)i };
	if ((ret = id_index_build(maps_ix, p->n_mapping, "mapping", err, errlen)) ||
	    (ret = id_index_build(locs_ix, p->n_location, "location", err, errlen)) ||
	    (ret = id_index_build(funcs_ix, p->n_function, "function", err, errlen)))
		goto cleanup;
	ret = -EBADMSG;

	/* sample types -> events */
	for (i = 0; i < p->n_sample_type; i++) {
		const Perftools__Profiles__ValueType *t = p->sample_type[i];
		struct capture_event ev = { 0 };

		ev.name = str_ref(&in, t->type, "sample_type", i);
		ev.unit = str_ref(&in, t->unit, "sample_type", i);
		if (ev.name == CAPTURE_NONE || ev.unit == CAPTURE_NONE)
			goto cleanup;
		if (p->period_type && p->period_type->type == t->type &&
		    p->period_type->unit == t->unit && p->period > 0)
			ev.period = (uint64_t)p->period;
		events[i] = capture_builder__add_event(b, &ev);
		for (j = 0; j < i; j++) {
			if (events[j] == events[i]) {
				/* the same type twice: keep both columns apart */
				char name[300];

				snprintf(name, sizeof(name), "%s#%zu",
					 p->string_table[t->type], i);
				ev.name = capture_builder__string(b, name);
				events[i] = capture_builder__add_event(b, &ev);
				break;
			}
		}
	}

	/* mappings -> modules (+ mappings of one synthetic process) */
	for (i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];
		struct capture_module mod = { 0 };

		mod.path = str_ref(&in, m->filename, "mapping", m->id);
		mod.build_id = str_ref(&in, m->build_id, "mapping", m->id);
		if (mod.path == CAPTURE_NONE || mod.build_id == CAPTURE_NONE)
			goto cleanup;
		mod.kind = module_kind(p->string_table[m->filename]);
		mod.flags = m->has_functions ? CAPTURE_MODULE_F_SYMBOLIZED : 0;
		map_module[i] = capture_builder__add_module(b, &mod);
		if (m->memory_start >= m->memory_limit) {
			empty_maps++;
			continue;
		}
		if (process == CAPTURE_NONE)
			process = capture_builder__add_process(
				b, &(struct capture_process){
					   .comm = capture_builder__string(b, "pprof"),
				   });
		capture_builder__add_mapping(b, &(struct capture_mapping){
							.process = process,
							.module = map_module[i],
							.start = m->memory_start,
							.end = m->memory_limit,
							.pgoff = m->file_offset,
						});
	}

	/* functions */
	for (i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		fn_name[i] = str_ref(&in, f->name, "function", f->id);
		fn_file[i] = str_ref(&in, f->filename, "function", f->id);
		if (fn_name[i] == CAPTURE_NONE || fn_file[i] == CAPTURE_NONE ||
		    str_ref(&in, f->system_name, "function", f->id) == CAPTURE_NONE)
			goto cleanup;
	}

	/* locations -> frames, innermost first */
	for (i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		uint32_t module = CAPTURE_NONE, kflag = 0, *nf;
		size_t n = l->n_line ? l->n_line : 1;

		if (l->mapping_id) {
			uint32_t mi = id_find(maps_ix, p->n_mapping, l->mapping_id);

			if (mi == CAPTURE_NONE) {
				ret = fail(err, errlen,
					   "location %" PRIu64 ": mapping_id %" PRIu64
					   " names no mapping",
					   l->id, l->mapping_id);
				goto cleanup;
			}
			module = map_module[mi];
			if (module_kind(p->string_table[p->mapping[mi]->filename]) ==
			    CAPTURE_MODULE_KERNEL)
				kflag = CAPTURE_FRAME_F_KERNEL;
		}
		if ((ret = import_budget__spend(&ib, n)))
			goto cleanup;
		ret = -EBADMSG;
		nf = reallocarray(frames, nframes + n, sizeof(*frames));
		if (!nf) {
			ret = -ENOMEM;
			goto cleanup;
		}
		frames = nf;
		loc_first[i] = (uint32_t)nframes;
		loc_n[i] = (uint32_t)n;
		if (!l->n_line) {
			frames[nframes++] = capture_builder__add_frame(
				b, &(struct capture_frame){
					   .module = module,
					   .flags = kflag | CAPTURE_FRAME_F_UNSYMBOLIZED,
					   .address = l->address,
				   });
			continue;
		}
		for (j = 0; j < l->n_line; j++) {
			const Perftools__Profiles__Line *ln = l->line[j];
			uint32_t fi;

			if (!ln->function_id) {
				ret = fail(err, errlen,
					   "location %" PRIu64 ": line %zu has function_id 0",
					   l->id, j);
				goto cleanup;
			}
			fi = id_find(funcs_ix, p->n_function, ln->function_id);
			if (fi == CAPTURE_NONE) {
				ret = fail(err, errlen,
					   "location %" PRIu64 ": function_id %" PRIu64
					   " names no function",
					   l->id, ln->function_id);
				goto cleanup;
			}
			frames[nframes++] = capture_builder__add_frame(
				b, &(struct capture_frame){
					   .module = module,
					   .flags = kflag |
						    (j + 1 < l->n_line ? CAPTURE_FRAME_F_INLINE : 0),
					   .address = l->address,
					   .function = fn_name[fi],
					   .file = fn_file[fi],
					   .line = ln->line > 0 && ln->line <= UINT32_MAX
							   ? (uint32_t)ln->line
							   : 0,
				   });
		}
	}

	/* samples */
	for (i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		uint32_t stack = CAPTURE_NONE, thread, cgroup, row;
		bool added = false;

		if (s->n_value > p->n_sample_type) {
			ret = fail(err, errlen, "sample %zu has %zu values for %zu sample types", i,
				   s->n_value, p->n_sample_type);
			goto cleanup;
		}
		for (j = s->n_location_id; j-- > 0;) {
			uint32_t li;

			if (!s->location_id[j]) {
				ret = fail(err, errlen, "sample %zu: location id 0", i);
				goto cleanup;
			}
			li = id_find(locs_ix, p->n_location, s->location_id[j]);
			if (li == CAPTURE_NONE) {
				ret = fail(err, errlen,
					   "sample %zu: location_id %" PRIu64 " names no location",
					   i, s->location_id[j]);
				goto cleanup;
			}
			/* every step counts, interned or not: inline amplification */
			if ((ret = import_budget__spend(&ib, loc_n[li])))
				goto cleanup;
			ret = -EBADMSG;
			for (k = loc_n[li]; k-- > 0;)
				stack = capture_builder__add_stack(b, stack,
								   frames[loc_first[li] + k]);
		}
		if ((ret = import_budget__spend(&ib, s->n_value + 1)))
			goto cleanup;
		ret = -EBADMSG;
		ret = pprof_labels__sample(&pl, s, i, &thread, &cgroup, err, errlen);
		if (ret)
			goto cleanup;
		ret = -EBADMSG;
		for (j = 0; j < s->n_value; j++) {
			if (s->value[j] < 0) {
				negative++;
				continue;
			}
			if (!s->value[j])
				continue;
			if (__builtin_add_overflow(totals[j], (uint64_t)s->value[j], &totals[j])) {
				ret = fail(err, errlen,
					   "sample %zu: value %" PRId64 " of sample type %zu makes the "
					   "type's total overflow 2^64-1",
					   i, s->value[j], j);
				goto cleanup;
			}
			row = capture_builder__add_sample(b, &(struct capture_sample){
				.thread = thread,
				.cpu = CAPTURE_NONE,
				.stack = stack,
				.event = events[j],
				.weight = (uint64_t)s->value[j],
			});
			if (cgroup != CAPTURE_NONE && row != CAPTURE_NONE)
				capture_builder__set_sample_cgroup(b, row, cgroup);
			added = true;
		}
		if (!added) {
			if (!p->n_sample_type) {
				no_values++;
				continue;
			}
			zero_only++;
			row = capture_builder__add_sample(b, &(struct capture_sample){
				.thread = thread,
				.cpu = CAPTURE_NONE,
				.stack = stack,
				.event = events[0],
			});
			if (cgroup != CAPTURE_NONE && row != CAPTURE_NONE)
				capture_builder__set_sample_cgroup(b, row, cgroup);
		}
	}

	if ((ret = import_budget__memory(&ib)))
		goto cleanup;
	capture_builder__set_meta(b, "source.format", "pprof");
	if (p->duration_nanos > 0) {
		char v[32];

		snprintf(v, sizeof(v), "%" PRId64, p->duration_nanos);
		capture_builder__set_meta(b, "duration_ns", v);
	}
	if (p->time_nanos) {
		char v[32];

		snprintf(v, sizeof(v), "%" PRId64, p->time_nanos);
		capture_builder__set_meta(b, "pprof.time_nanos", v);
	}
	if (negative) {
		capture_builder__add_counter(b, "pprof.negative_values_dropped", negative);
		formats_note__add(note, "%" PRIu64 " negative sample values dropped", negative);
	}
	if (pl.dropped) {
		capture_builder__add_counter(b, "pprof.labels_dropped", pl.dropped);
		if (pl.first_unknown >= 0)
			formats_note__add(note,
					  "%" PRIu64 " sample labels dropped (keys microscope does "
					  "not read, e.g. '%.64s')",
					  pl.dropped, p->string_table[pl.first_unknown]);
		else
			formats_note__add(note, "%" PRIu64 " sample labels dropped (clipped "
					  "marks of off-CPU time, and pid/tid halves)", pl.dropped);
	}
	if (no_values) {
		capture_builder__add_counter(b, "pprof.samples_without_types", no_values);
		formats_note__add(note, "%" PRIu64 " samples dropped: the profile has no sample "
				  "types", no_values);
	}
	if (p->n_comment || p->drop_frames || p->keep_frames || p->default_sample_type ||
	    p->doc_url)
		formats_note__add(note, "comments, drop/keep_frames, default_sample_type and "
				  "doc_url are not carried");
	(void)zero_only;
	(void)empty_maps;
	ret = 0;
cleanup:
	if (p) {
		pprof_labels__release(&pl);
		perftools__profiles__profile__free_unpacked(p, &pb_allocator);
	}
	free(raw);
	free(in.strs);
	free(maps_ix);
	free(locs_ix);
	free(funcs_ix);
	free(map_module);
	free(events);
	free(totals);
	free(loc_first);
	free(loc_n);
	free(frames);
	free(fn_name);
	free(fn_file);
	return ret;
}
