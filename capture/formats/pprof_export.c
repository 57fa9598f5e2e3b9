// SPDX-License-Identifier: MIT
/*
 * pprof exporter: a capture as a gzip-compressed perftools.profiles.Profile
 * (capture/formats/profile.proto, packed by protobuf-c, compressed by zlib).
 * Everything is built in arrays indexed by the pprof id - 1, so ids are dense
 * and in first-use order: the output is a function of the capture only.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/demangle.h"

#include <zlib.h>

#include "capture/formats/formats.h"
#include "capture/formats/pprof_labels.h"
#include "capture/formats/keymap.h"
#include "capture/formats/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

/* Grow *p (of *cap elements of size) to hold n; 0 or -ENOMEM. */
static int grow(void *p, size_t *cap, size_t n, size_t size)
{
	void **pp = p;
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (n <= *cap)
		return 0;
	while (ncap < n)
		ncap *= 2;
	np = reallocarray(*pp, ncap, size);
	if (!np)
		return -ENOMEM;
	*pp = np;
	*cap = ncap;
	return 0;
}

struct pprof_out {
	const struct capture *c;
	/* string table: strs[i] borrowed from the capture, literals or owned[] */
	const char **strs;
	size_t nstrs, strs_cap;
	struct keymap str_index; /* (hash, probe) -> index */
	char **owned;
	size_t nowned, owned_cap;
	/* functions, locations (with their lines), mappings */
	pb_function *funcs;
	size_t nfuncs, funcs_cap;
	struct keymap func_index; /* (name | file << 32, kernel) -> index */
	pb_location *locs;
	size_t nlocs, locs_cap;
	uint32_t *loc_frames; /* per location: frames innermost first */
	size_t nloc_frames, loc_frames_cap;
	uint32_t *loc_first, *loc_count; /* [nlocs] into loc_frames */
	size_t loc_meta_cap;
	struct keymap loc_index; /* (hash of frames, probe) -> index */
	uint32_t *stack_loc;	 /* [nstacks] location id + 1 of the run at a stack, 0 unknown */
	uint32_t *stack_next;	 /* [nstacks] stack after the run */
	uint32_t *module_mapping; /* [nmodules] pprof mapping id, 0 none yet */
	pb_mapping *maps;
	size_t nmaps, maps_cap;
	int err;
};

static int64_t str_add(struct pprof_out *o, const char *s)
{
	uint64_t h = keymap__hash_str(s);
	uint32_t v;
	uint64_t k;

	if (o->err)
		return 0;
	for (k = 0;; k++) {
		if (!keymap__get(&o->str_index, h, k, &v))
			break;
		if (!strcmp(o->strs[v], s))
			return v;
	}
	if (grow(&o->strs, &o->strs_cap, o->nstrs + 1, sizeof(*o->strs)) ||
	    keymap__put(&o->str_index, h, k, (uint32_t)o->nstrs)) {
		o->err = -ENOMEM;
		return 0;
	}
	o->strs[o->nstrs] = s;
	return (int64_t)o->nstrs++;
}

/* Intern a copy of s (for computed text). */
static int64_t str_add_copy(struct pprof_out *o, const char *s)
{
	char *d;

	if (o->err)
		return 0;
	if (grow(&o->owned, &o->owned_cap, o->nowned + 1, sizeof(*o->owned)) || !(d = strdup(s))) {
		o->err = -ENOMEM;
		return 0;
	}
	o->owned[o->nowned++] = d;
	return str_add(o, d);
}

static uint64_t func_id(struct pprof_out *o, const struct capture_frame *f)
{
	const struct capture *c = o->c;
	uint64_t a, kernel = !!(f->flags & CAPTURE_FRAME_F_KERNEL);
	int64_t name, system_name;
	uint32_t v;
	char label[512];

	if (f->function) {
		a = f->function | (uint64_t)f->file << 32;
		if (keymap__get(&o->func_index, a, kernel, &v))
			return v + 1;
		/* Function.name is for display (demangled, as perf); system_name
		 * keeps the raw symbol (profile.proto). */
		system_name = str_add(o, capture__string(c, f->function));
		capture__demangle(capture__string(c, f->function), label, sizeof(label));
		name = str_add_copy(o, label);
	} else {
		/* an unnamed frame inside an inline run, or a truncation: its label */
		formats__frame_label(c, f, label, sizeof(label));
		name = str_add_copy(o, label);
		system_name = name;
		a = (uint64_t)name | (uint64_t)f->file << 32;
		kernel |= 2; /* keyed by pprof string, apart from capture string ids */
		if (keymap__get(&o->func_index, a, kernel, &v))
			return v + 1;
	}
	if (o->err || grow(&o->funcs, &o->funcs_cap, o->nfuncs + 1, sizeof(*o->funcs)) ||
	    keymap__put(&o->func_index, a, kernel, (uint32_t)o->nfuncs)) {
		o->err = -ENOMEM;
		return 0;
	}
	o->funcs[o->nfuncs] = (pb_function)PERFTOOLS__PROFILES__FUNCTION__INIT;
	o->funcs[o->nfuncs].id = o->nfuncs + 1;
	o->funcs[o->nfuncs].name = name;
	o->funcs[o->nfuncs].system_name = system_name;
	o->funcs[o->nfuncs].filename = str_add(o, capture__string(c, f->file));
	o->funcs[o->nfuncs].start_line = 0; /* not in the capture */
	return ++o->nfuncs;
}

static uint64_t mapping_id(struct pprof_out *o, uint32_t module)
{
	const struct capture *c = o->c;
	const struct capture_module *m;
	pb_mapping *pm;
	uint32_t i;

	if (module == CAPTURE_NONE)
		return 0;
	if (o->module_mapping[module])
		return o->module_mapping[module];
	if (grow(&o->maps, &o->maps_cap, o->nmaps + 1, sizeof(*o->maps))) {
		o->err = -ENOMEM;
		return 0;
	}
	m = &c->modules[module];
	pm = &o->maps[o->nmaps];
	*pm = (pb_mapping)PERFTOOLS__PROFILES__MAPPING__INIT;
	pm->id = o->nmaps + 1;
	for (i = 0; i < c->nmappings; i++) {
		if (c->mappings[i].module == module) {
			pm->memory_start = c->mappings[i].start;
			pm->memory_limit = c->mappings[i].end;
			pm->file_offset = c->mappings[i].pgoff;
			break;
		}
	}
	pm->filename = str_add(o, capture__string(c, m->path));
	pm->build_id = str_add(o, capture__string(c, m->build_id));
	pm->has_functions = !!(m->flags & CAPTURE_MODULE_F_SYMBOLIZED);
	pm->has_filenames = pm->has_functions;
	pm->has_line_numbers = pm->has_functions;
	pm->has_inline_frames = pm->has_functions;
	o->module_mapping[module] = (uint32_t)++o->nmaps;
	return o->nmaps;
}

/* The location of the inline run starting at stack s; sets o->stack_loc/next[s]. */
static int location_at(struct pprof_out *o, uint32_t s)
{
	const struct capture *c = o->c;
	uint32_t frames[64], n = 0, t = s, v, i;
	uint64_t h = 0x9e3779b97f4a7c15ull, k;
	const struct capture_frame *outer;
	pb_location *loc;
	pb_line *lines;

	/* the run: INLINE frames up to and including the first non-inline one */
	for (;;) {
		const struct capture_frame *f = &c->frames[c->stacks[t].frame];

		frames[n++] = c->stacks[t].frame;
		h = keymap__mix(h ^ c->stacks[t].frame);
		t = c->stacks[t].parent;
		if (!(f->flags & CAPTURE_FRAME_F_INLINE) || t == CAPTURE_NONE ||
		    n == sizeof(frames) / sizeof(frames[0]))
			break;
	}
	o->stack_next[s] = t;
	for (k = 0;; k++) {
		if (!keymap__get(&o->loc_index, h, k, &v))
			break;
		if (o->loc_count[v] == n &&
		    !memcmp(o->loc_frames + o->loc_first[v], frames, n * sizeof(*frames))) {
			o->stack_loc[s] = v + 1;
			return 0;
		}
	}
	if (grow(&o->locs, &o->locs_cap, o->nlocs + 1, sizeof(*o->locs)) ||
	    grow(&o->loc_frames, &o->loc_frames_cap, o->nloc_frames + n, sizeof(uint32_t)) ||
	    keymap__put(&o->loc_index, h, k, (uint32_t)o->nlocs))
		return -ENOMEM;
	if (o->nlocs + 1 > o->loc_meta_cap) {
		size_t ncap = o->loc_meta_cap ? o->loc_meta_cap * 2 : 64;
		uint32_t *a = reallocarray(o->loc_first, ncap, sizeof(*a));

		if (!a)
			return -ENOMEM;
		o->loc_first = a;
		a = reallocarray(o->loc_count, ncap, sizeof(*a));
		if (!a)
			return -ENOMEM;
		o->loc_count = a;
		o->loc_meta_cap = ncap;
	}
	o->loc_first[o->nlocs] = (uint32_t)o->nloc_frames;
	o->loc_count[o->nlocs] = n;
	memcpy(o->loc_frames + o->nloc_frames, frames, n * sizeof(*frames));
	o->nloc_frames += n;

	outer = &c->frames[frames[n - 1]];
	loc = &o->locs[o->nlocs];
	*loc = (pb_location)PERFTOOLS__PROFILES__LOCATION__INIT;
	loc->id = o->nlocs + 1;
	loc->address = outer->address;
	loc->mapping_id = mapping_id(o, outer->module);
	/* A lone unnamed code frame stays unsymbolized: address only, no Line. */
	if (!(n == 1 && !outer->function && !(outer->flags & CAPTURE_FRAME_F_TRUNCATION))) {
		lines = calloc(n, sizeof(*lines));
		loc->line = calloc(n, sizeof(*loc->line));
		if (!lines || !loc->line) {
			free(lines);
			free(loc->line);
			loc->line = NULL;
			return -ENOMEM;
		}
		loc->n_line = n;
		for (i = 0; i < n; i++) {
			const struct capture_frame *f = &c->frames[frames[i]];

			lines[i] = (pb_line)PERFTOOLS__PROFILES__LINE__INIT;
			lines[i].function_id = func_id(o, f);
			lines[i].line = f->line;
			loc->line[i] = &lines[i];
		}
	}
	o->stack_loc[s] = (uint32_t)++o->nlocs;
	return o->err;
}

/* One pprof column: a capture event's weight, optionally times its period. */
struct pprof_column {
	uint32_t event;
	bool times_period;
};

struct pprof_agg {
	uint32_t stack, thread;
	size_t values; /* offset into the values array */
	uint32_t cgroup; /* -> cgroups, or CAPTURE_NONE (intervals) */
	bool clipped;    /* off-CPU intervals cut by the recording window */
};

/* The aggregation key's second half: thread and cgroup. */
static uint64_t agg_key(uint32_t thread, uint32_t cgroup)
{
	return (uint64_t)thread | (uint64_t)cgroup << 32;
}

/* Labels per sample (proto field 3, Label; keys in pprof_labels.h): pid,
 * tid, thread, comm, container, container_id, runtime, cgroup, cgroup_id,
 * clipped. */
#define PPROF_LABELS 10

/* Append label key=num to sample (its labels start at l0, PPROF_LABELS of them). */
static void label_num(struct pprof_out *o, pb_sample *sample, pb_label *l0, const char *key,
		      int64_t num)
{
	pb_label *l = &l0[sample->n_label++];

	*l = (pb_label)PERFTOOLS__PROFILES__LABEL__INIT;
	l->key = str_add(o, key);
	l->num = num;
}

/* Append label key=str (a string index) to sample. */
static void label_str(struct pprof_out *o, pb_sample *sample, pb_label *l0, const char *key,
		      int64_t str)
{
	pb_label *l = &l0[sample->n_label++];

	*l = (pb_label)PERFTOOLS__PROFILES__LABEL__INIT;
	l->key = str_add(o, key);
	l->str = str;
}

static int gzip_buf(const void *in, size_t in_len, void **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = deflateBound(&z, in_len) + 64;
	unsigned char *buf;
	int rc;

	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, in_len) + 64;
	buf = malloc(cap);
	if (!buf) {
		deflateEnd(&z);
		return -ENOMEM;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)in_len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(buf);
		return -EOVERFLOW;
	}
	*out = buf;
	*out_len = z.total_out;
	return 0;
}

int pprof__export(const struct capture *c, void **out_buf, size_t *out_len,
		  struct formats_note *note)
{
	struct pprof_out o = { .c = c };
	pb_profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	pb_value_type *types = NULL, **type_ptrs = NULL, period_type =
		PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	struct pprof_column *cols = NULL;
	uint32_t *event_col = NULL, ncols = 0, i, j;
	struct pprof_agg *aggs = NULL;
	size_t naggs = 0, aggs_cap = 0;
	int64_t *values = NULL;
	size_t values_cap = 0;
	struct keymap agg_index = { 0 }, clip_index = { 0 };
	pb_sample *samples = NULL, **sample_ptrs = NULL;
	pb_label *labels = NULL, **label_ptrs = NULL, *l0;
	uint64_t *loc_ids = NULL;
	size_t nloc_ids = 0;
	pb_mapping **map_ptrs = NULL;
	pb_location **loc_ptrs = NULL;
	pb_function **func_ptrs = NULL;
	uint8_t *packed = NULL;
	size_t packed_len;
	bool from_pprof, samples_taken = false, clamped = false, dropped_time = false;
	uint32_t complete_ivs = 0, incomplete_ivs = 0, pass;
	bool *interval_event = NULL, generic_period = false;
	const char *meta;
	int err = -ENOMEM;

	*out_buf = NULL;
	*out_len = 0;
	meta = capture__meta(c, "source.format");
	from_pprof = meta && !strcmp(meta, "pprof");
	str_add(&o, "");

	/* columns */
	cols = calloc((size_t)c->nevents * 2 + 1, sizeof(*cols));
	types = calloc((size_t)c->nevents * 2 + 1, sizeof(*types));
	type_ptrs = calloc((size_t)c->nevents * 2 + 1, sizeof(*type_ptrs));
	event_col = calloc((size_t)c->nevents + 1, sizeof(*event_col));
	interval_event = calloc((size_t)c->nevents + 1, sizeof(*interval_event));
	o.stack_loc = calloc((size_t)c->nstacks + 1, sizeof(uint32_t));
	o.stack_next = calloc((size_t)c->nstacks + 1, sizeof(uint32_t));
	o.module_mapping = calloc((size_t)c->nmodules + 1, sizeof(uint32_t));
	if (!cols || !types || !type_ptrs || !event_col || !interval_event || !o.stack_loc ||
	    !o.stack_next || !o.module_mapping)
		goto cleanup;
	/*
	 * Interval events' columns come first, so the last column, which
	 * `go tool pprof` shows by default, stays a CPU one; the period type is
	 * the first samples event's period ("cpu/nanoseconds") when there is one.
	 */
	for (i = 0; i < c->nintervals; i++)
		interval_event[c->intervals[i].event] = true;
	for (pass = 0; pass < 2 * c->nevents; pass++) {
		const struct capture_event *ev;
		const char *name, *unit;

		i = pass % c->nevents;
		if (interval_event[i] != (pass < c->nevents))
			continue;
		ev = &c->events[i];
		name = capture__string(c, ev->name);
		unit = capture__string(c, ev->unit);

		event_col[i] = ncols;
		types[ncols] = (pb_value_type)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		if (!from_pprof && !strcmp(unit, "samples")) {
			types[ncols].type = str_add(&o, samples_taken ? name : "samples");
			types[ncols].unit = str_add(&o, "count");
			cols[ncols++] = (struct pprof_column){ .event = i };
			if (ev->period) {
				/* A clock event's period is ns of CPU time ("cpu",
				 * pprof's name for it); any other event (cycles)
				 * counts its own unit and keeps its name. */
				bool clock = !strcmp(name, "cpu-clock") || !strcmp(name, "task-clock");

				types[ncols] = (pb_value_type)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
				types[ncols].type =
					str_add(&o, samples_taken || !clock ? name : "cpu");
				types[ncols].unit = str_add(&o, clock ? "nanoseconds" : "count");
				cols[ncols++] = (struct pprof_column){ .event = i, .times_period = true };
				if (!prof.period_type || generic_period) {
					generic_period = false;
					period_type.type = types[ncols - 1].type;
					period_type.unit = types[ncols - 1].unit;
					prof.period_type = &period_type;
					prof.period = (int64_t)ev->period;
				}
			}
			samples_taken = true;
		} else {
			types[ncols].type = str_add(&o, name);
			types[ncols].unit = str_add(&o, unit);
			cols[ncols++] = (struct pprof_column){ .event = i };
			if (ev->period && !prof.period_type) {
				generic_period = !from_pprof;
				period_type = types[ncols - 1];
				prof.period_type = &period_type;
				prof.period = (int64_t)(ev->period & INT64_MAX);
			}
		}
	}
	/* pprof takes the first mapping as the main binary: the first process's executable
	 * (by path, else by file name = comm, which the kernel cuts to 15 bytes) */
	if (from_pprof) {
		/* an imported profile keeps its mappings, in their order */
		for (i = 0; i < c->nmodules; i++)
			mapping_id(&o, i);
	} else if (c->nprocesses) {
		const char *exe = capture__string(c, c->processes[0].exe);
		const char *comm = capture__string(c, c->processes[0].comm);

		for (i = 0; i < c->nmodules; i++) {
			const char *path = capture__string(c, c->modules[i].path);
			const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

			if (c->modules[i].kind != CAPTURE_MODULE_FILE)
				continue;
			if ((exe[0] && !strcmp(path, exe)) ||
			    (!exe[0] && comm[0] && !strncmp(base, comm, 15))) {
				mapping_id(&o, i);
				break;
			}
		}
	}
	for (i = 0; i < ncols; i++)
		type_ptrs[i] = &types[i];
	prof.n_sample_type = ncols;
	prof.sample_type = type_ptrs;

	/* aggregate per (stack, thread) in first-appearance order */
	for (i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];
		uint32_t a, col;
		int64_t *v;

		if (s->time_ns)
			dropped_time = true;
		uint32_t cg = capture__sample_cgroup(c, i);

		if (!keymap__get(&agg_index, s->stack, agg_key(s->thread, cg), &a)) {
			a = (uint32_t)naggs;
			if (grow(&aggs, &aggs_cap, naggs + 1, sizeof(*aggs)) ||
			    grow(&values, &values_cap, (naggs + 1) * ncols, sizeof(*values)) ||
			    keymap__put(&agg_index, s->stack, agg_key(s->thread, cg), a))
				goto cleanup;
			aggs[a] = (struct pprof_agg){ s->stack, s->thread, naggs * ncols, cg };
			memset(values + naggs * ncols, 0, ncols * sizeof(*values));
			naggs++;
		}
		v = values + aggs[a].values;
		for (col = event_col[s->event];
		     col < ncols && cols[col].event == s->event; col++) {
			uint64_t w = s->weight, sum;

			if (cols[col].times_period &&
			    __builtin_mul_overflow(w, c->events[s->event].period, &w))
				w = UINT64_MAX;
			if (__builtin_add_overflow((uint64_t)v[col], w, &sum) || sum > INT64_MAX) {
				sum = INT64_MAX;
				clamped = true;
			}
			v[col] = (int64_t)sum;
		}
	}
	/*
	 * Off-CPU intervals: their event's column ("off-cpu/nanoseconds"), weight
	 * = ns, per (stack, thread) like samples.  One cut by the recording's
	 * edges counts its part inside the window (its weight) in a sample of
	 * its own labelled clipped="recording window", as report --off-cpu
	 * marks it.
	 */
	for (i = 0; i < c->nintervals; i++) {
		const struct capture_interval *v = &c->intervals[i];
		uint32_t a, col = event_col[v->event];
		uint64_t sum;
		int64_t *val;

		bool clip = v->flags & (CAPTURE_INTERVAL_F_START_UNKNOWN |
					CAPTURE_INTERVAL_F_END_UNKNOWN);
		struct keymap *index = clip ? &clip_index : &agg_index;

		if (clip)
			incomplete_ivs++;
		else
			complete_ivs++;
		if (!keymap__get(index, v->stack, agg_key(v->thread, CAPTURE_NONE), &a)) {
			a = (uint32_t)naggs;
			if (grow(&aggs, &aggs_cap, naggs + 1, sizeof(*aggs)) ||
			    grow(&values, &values_cap, (naggs + 1) * ncols, sizeof(*values)) ||
			    keymap__put(index, v->stack, agg_key(v->thread, CAPTURE_NONE), a))
				goto cleanup;
			aggs[a] = (struct pprof_agg){ v->stack, v->thread, naggs * ncols,
						      CAPTURE_NONE, clip };
			memset(values + naggs * ncols, 0, ncols * sizeof(*values));
			naggs++;
		}
		val = values + aggs[a].values;
		if (__builtin_add_overflow((uint64_t)val[col], v->weight, &sum) || sum > INT64_MAX) {
			sum = INT64_MAX;
			clamped = true;
		}
		val[col] = (int64_t)sum;
	}

	/* samples, their labels and location chains */
	samples = calloc(naggs + 1, sizeof(*samples));
	sample_ptrs = calloc(naggs + 1, sizeof(*sample_ptrs));
	labels = calloc(naggs * PPROF_LABELS + 1, sizeof(*labels));
	label_ptrs = calloc(naggs * PPROF_LABELS + 1, sizeof(*label_ptrs));
	if (!samples || !sample_ptrs || !labels || !label_ptrs)
		goto cleanup;
	for (i = 0; i < naggs; i++) {
		size_t first = nloc_ids;
		uint32_t s = aggs[i].stack;

		while (s != CAPTURE_NONE) {
			if (!o.stack_loc[s] && location_at(&o, s))
				goto cleanup;
			if (nloc_ids % 1024 == 0) {
				uint64_t *nl = reallocarray(loc_ids, nloc_ids + 1024, sizeof(*nl));

				if (!nl)
					goto cleanup;
				loc_ids = nl;
			}
			loc_ids[nloc_ids++] = o.stack_loc[s];
			s = o.stack_next[s];
		}
		samples[i] = (pb_sample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		samples[i].n_location_id = nloc_ids - first;
		samples[i].location_id = (uint64_t *)(uintptr_t)first; /* fixed up below */
		samples[i].n_value = ncols;
		samples[i].value = values + aggs[i].values;
		l0 = &labels[i * PPROF_LABELS];
		if (aggs[i].thread != CAPTURE_NONE) {
			const struct capture_thread *t = &c->threads[aggs[i].thread];

			label_num(&o, &samples[i], l0, PPROF_LABEL_PID,
				  c->processes[t->process].pid);
			label_num(&o, &samples[i], l0, PPROF_LABEL_TID, t->tid);
			label_str(&o, &samples[i], l0, PPROF_LABEL_THREAD,
				  str_add(&o, capture__string(c, t->comm)));
			label_str(&o, &samples[i], l0, PPROF_LABEL_COMM,
				  str_add(&o, capture__string(c, c->processes[t->process].comm)));
		}
		if (aggs[i].cgroup != CAPTURE_NONE && aggs[i].cgroup < c->ncgroups) {
			const struct capture_cgroup *cg = &c->cgroups[aggs[i].cgroup];
			const char *id = capture__string(c, cg->container);
			char container[160];

			if (capture__container_name(c, aggs[i].cgroup, container,
						    sizeof(container), NULL)) {
				label_str(&o, &samples[i], l0, PPROF_LABEL_CONTAINER,
					  str_add_copy(&o, container));
				if (strcmp(container, id))
					label_str(&o, &samples[i], l0, PPROF_LABEL_CONTAINER_ID,
						  str_add(&o, id));
			}
			if (capture__string(c, cg->runtime)[0])
				label_str(&o, &samples[i], l0, PPROF_LABEL_RUNTIME,
					  str_add(&o, capture__string(c, cg->runtime)));
			if (capture__string(c, cg->path)[0])
				label_str(&o, &samples[i], l0, PPROF_LABEL_CGROUP,
					  str_add(&o, capture__string(c, cg->path)));
			if (cg->cgroup_id && cg->cgroup_id <= INT64_MAX)
				label_num(&o, &samples[i], l0, PPROF_LABEL_CGROUP_ID,
					  (int64_t)cg->cgroup_id);
		}
		if (aggs[i].clipped)
			label_str(&o, &samples[i], l0, PPROF_LABEL_CLIPPED,
				  str_add(&o, "recording window"));
		if (samples[i].n_label) {
			for (j = 0; j < samples[i].n_label; j++)
				label_ptrs[i * PPROF_LABELS + j] = &labels[i * PPROF_LABELS + j];
			samples[i].label = &label_ptrs[i * PPROF_LABELS];
		}
		sample_ptrs[i] = &samples[i];
	}
	if (o.err)
		goto cleanup;
	for (i = 0; i < naggs; i++)
		samples[i].location_id = loc_ids ? loc_ids + (uintptr_t)samples[i].location_id
						 : NULL;
	prof.n_sample = naggs;
	prof.sample = sample_ptrs;

	map_ptrs = calloc(o.nmaps + 1, sizeof(*map_ptrs));
	loc_ptrs = calloc(o.nlocs + 1, sizeof(*loc_ptrs));
	func_ptrs = calloc(o.nfuncs + 1, sizeof(*func_ptrs));
	if (!map_ptrs || !loc_ptrs || !func_ptrs)
		goto cleanup;
	for (i = 0; i < o.nmaps; i++)
		map_ptrs[i] = &o.maps[i];
	for (i = 0; i < o.nlocs; i++)
		loc_ptrs[i] = &o.locs[i];
	for (i = 0; i < o.nfuncs; i++)
		func_ptrs[i] = &o.funcs[i];
	prof.n_mapping = o.nmaps;
	prof.mapping = map_ptrs;
	prof.n_location = o.nlocs;
	prof.location = loc_ptrs;
	prof.n_function = o.nfuncs;
	prof.function = func_ptrs;

	meta = capture__meta(c, "duration_ns");
	if (meta)
		prof.duration_nanos = (int64_t)(strtoull(meta, NULL, 10) & INT64_MAX);
	meta = capture__meta(c, "pprof.time_nanos");
	if (meta)
		prof.time_nanos = strtoll(meta, NULL, 10);
	prof.n_string_table = o.nstrs;
	prof.string_table = (char **)o.strs;
	if (o.err)
		goto cleanup;

	packed_len = perftools__profiles__profile__get_packed_size(&prof);
	packed = malloc(packed_len + 1);
	if (!packed)
		goto cleanup;
	perftools__profiles__profile__pack(&prof, packed);
	err = gzip_buf(packed, packed_len, out_buf, out_len);
	if (err)
		goto cleanup;
	if (dropped_time)
		formats_note__add(note, "pprof keeps no sample times: %u samples summed into %zu "
				  "stacks", c->nsamples, naggs);
	if (complete_ivs)
		formats_note__add(note, "%u off-CPU intervals summed per stack as off-cpu/"
				  "nanoseconds: their times, state, cause and waker not carried",
				  complete_ivs);
	if (incomplete_ivs)
		formats_note__add(note, "%u off-CPU intervals cut by the recording's edges count "
				  "their part inside it, in samples labelled clipped", incomplete_ivs);
	if (clamped)
		formats_note__add(note, "values above 2^63-1 clamped");
	if (c->ncounters)
		formats_note__add(note, "%u capture counters not carried", c->ncounters);
	if (c->nprobe_records)
		formats_note__add(note, "%u probe records (zones, marks) not carried: pprof has no "
				  "time ranges (convert to chrome keeps them)", c->nprobe_records);
cleanup:
	if (o.err)
		err = o.err;
	for (i = 0; i < o.nlocs; i++) {
		if (o.locs[i].n_line)
			free(o.locs[i].line[0]);
		free(o.locs[i].line);
	}
	for (i = 0; i < o.nowned; i++)
		free(o.owned[i]);
	free(o.owned);
	free(o.strs);
	keymap__release(&o.str_index);
	keymap__release(&o.func_index);
	keymap__release(&o.loc_index);
	free(o.funcs);
	free(o.locs);
	free(o.loc_frames);
	free(o.loc_first);
	free(o.loc_count);
	free(o.stack_loc);
	free(o.stack_next);
	free(o.module_mapping);
	free(o.maps);
	free(cols);
	free(types);
	free(type_ptrs);
	free(event_col);
	free(interval_event);
	free(aggs);
	free(values);
	keymap__release(&agg_index);
	keymap__release(&clip_index);
	free(samples);
	free(sample_ptrs);
	free(labels);
	free(label_ptrs);
	free(loc_ids);
	free(map_ptrs);
	free(loc_ptrs);
	free(func_ptrs);
	free(packed);
	return err;
}
