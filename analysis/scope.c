// SPDX-License-Identifier: MIT
/*
 * Scopes: filtered views with optional per-process roots, and the
 * top-level split of report --by (rules in scope.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "scope.h"

#define CGROUP_NAME_BYTES 160 /* a container name as shown */

struct analysis_scope {
	struct capture view;
	struct capture_sample *samples;
	uint32_t *sample_cgroups;
	struct capture_interval *intervals;
	struct capture_probe_record *probe_records;
	struct capture_frame *frames;	/* NULL without process roots */
	struct capture_stack *stacks;	/* NULL without process roots */
	uint32_t *string_offsets;	/* NULL without process roots */
	char *string_data;
};

static const char *const field_names[ANALYSIS_FIELD_COUNT] = {
	"pid", "tid", "comm", "module", "container", "cgroup",
};

const char *analysis__field_name(uint32_t field)
{
	return field < ANALYSIS_FIELD_COUNT ? field_names[field] : "?";
}

int analysis_scope_filter__add(struct analysis_scope_filter *f, enum analysis_field field, const char *arg)
{
	struct analysis_term t = { .field = field };

	if ((unsigned)field >= ANALYSIS_FIELD_COUNT)
		return -EINVAL;
	if (arg[0] == '!') {
		t.exclude = true;
		arg++;
	}
	if (!arg[0])
		return -EINVAL;
	t.value = arg;
	if (field == ANALYSIS_FIELD_PID || field == ANALYSIS_FIELD_TID) {
		unsigned long long v;
		char *end;

		if (!isdigit((unsigned char)arg[0]))
			return -EINVAL;
		errno = 0;
		v = strtoull(arg, &end, 10);
		if (errno || *end || v > UINT32_MAX)
			return -EINVAL;
		t.number = (uint32_t)v;
	}
	if (analysis__grow((void **)&f->terms, &f->cap, (uint64_t)f->nterms + 1, sizeof(t)))
		return -ENOMEM;
	f->terms[f->nterms++] = t;
	return 0;
}

void analysis_scope_filter__release(struct analysis_scope_filter *f)
{
	free(f->terms);
	memset(f, 0, sizeof(*f));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool container_matches(const struct capture *c, uint32_t cg, const char *value)
{
	const char *id;
	size_t n = strlen(value);

	if (cg == CAPTURE_NONE)
		return false;
	id = capture__string(c, c->cgroups[cg].container);
	if (!id[0])
		return false;
	if (!strcmp(id, value))
		return true;
	if (n < 4 || n > strlen(id))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)value[i]))
			return false;
	return !strncmp(id, value, n);
}

static bool cgroup_matches(const struct capture *c, uint32_t cg, const char *value)
{
	const char *path;
	size_t n = strlen(value);

	if (cg == CAPTURE_NONE)
		return false;
	path = capture__string(c, c->cgroups[cg].path);
	if (!path[0])
		return false;
	/* "web/app" is relative to the hierarchy's root, as record --cgroup
	 * takes it: the capture's "/web/app" */
	if (value[0] != '/' && path[0] == '/')
		path++;
	while (n > 1 && value[n - 1] == '/')
		n--;
	if (n == 1 && value[0] == '/')
		return true; /* the root holds every cgroup */
	return !strncmp(path, value, n) && (path[n] == '\0' || path[n] == '/');
}

/* Precomputed per-term facts that make matching a sample O(terms). */
struct matcher {
	const struct capture *c;
	const struct analysis_scope_filter *f;
	uint8_t **stack_has; /* per MODULE term: per stack, 1 if a frame is in the module */
	uint32_t *thread_cgroup; /* per thread: cgroup of its latest sample (intervals) */
	bool has_include[ANALYSIS_FIELD_COUNT];
};

static void matcher__release(struct matcher *m)
{
	if (m->stack_has)
		for (uint32_t i = 0; i < m->f->nterms; i++)
			free(m->stack_has[i]);
	free(m->stack_has);
	free(m->thread_cgroup);
}

static int matcher__init(struct matcher *m, const struct capture *c, const struct analysis_scope_filter *f)
{
	uint8_t *mod = NULL;
	int err = -ENOMEM;

	memset(m, 0, sizeof(*m));
	m->c = c;
	m->f = f;
	m->stack_has = calloc((size_t)f->nterms + 1, sizeof(*m->stack_has));
	m->thread_cgroup = malloc(((size_t)c->nthreads + 1) * sizeof(*m->thread_cgroup));
	mod = malloc((size_t)c->nmodules + 1);
	if (!m->stack_has || !m->thread_cgroup || !mod)
		goto cleanup;
	for (uint32_t t = 0; t < c->nthreads; t++)
		m->thread_cgroup[t] = CAPTURE_NONE;
	for (uint32_t i = 0; i < c->nsamples; i++) {
		uint32_t cg = capture__sample_cgroup(c, i);

		if (c->samples[i].thread != CAPTURE_NONE && cg != CAPTURE_NONE)
			m->thread_cgroup[c->samples[i].thread] = cg;
	}
	for (uint32_t i = 0; i < f->nterms; i++) {
		const struct analysis_term *t = &f->terms[i];
		uint8_t *has;

		if (!t->exclude)
			m->has_include[t->field] = true;
		if (t->field != ANALYSIS_FIELD_MODULE)
			continue;
		for (uint32_t k = 0; k < c->nmodules; k++) {
			const char *path = capture__string(c, c->modules[k].path);

			mod[k] = !strcmp(path, t->value) || !strcmp(base_name(path), t->value);
		}
		has = malloc((size_t)c->nstacks + 1);
		if (!has)
			goto cleanup;
		for (uint32_t s = 0; s < c->nstacks; s++) { /* parents come first */
			const struct capture_stack *st = &c->stacks[s];
			uint32_t module = c->frames[st->frame].module;

			has[s] = (st->parent != CAPTURE_NONE && has[st->parent]) ||
				 (module != CAPTURE_NONE && mod[module]);
		}
		m->stack_has[i] = has;
	}
	err = 0;
cleanup:
	free(mod);
	if (err)
		matcher__release(m);
	return err;
}

static bool term__matches(const struct matcher *m, uint32_t i, uint32_t thread, uint32_t stack,
			  uint32_t cg)
{
	const struct analysis_term *t = &m->f->terms[i];
	const struct capture *c = m->c;
	const struct capture_thread *th = thread == CAPTURE_NONE ? NULL : &c->threads[thread];
	const struct capture_process *p = th ? &c->processes[th->process] : NULL;

	switch (t->field) {
	case ANALYSIS_FIELD_PID:
		return p && p->pid == t->number;
	case ANALYSIS_FIELD_TID:
		return th && th->tid == t->number;
	case ANALYSIS_FIELD_COMM:
		return th && (!strcmp(capture__string(c, th->comm), t->value) ||
			      !strcmp(capture__string(c, p->comm), t->value));
	case ANALYSIS_FIELD_MODULE:
		return stack != CAPTURE_NONE && m->stack_has[i][stack];
	case ANALYSIS_FIELD_CONTAINER:
		return container_matches(c, cg, t->value);
	case ANALYSIS_FIELD_CGROUP:
		return cgroup_matches(c, cg, t->value);
	}
	return false;
}

/* stack CAPTURE_STACKLESS: a probe record, which module terms do not judge. */
#define CAPTURE_STACKLESS (CAPTURE_NONE - 1)

static bool matcher__keep(const struct matcher *m, uint32_t thread, uint32_t stack, uint32_t cg)
{
	bool included[ANALYSIS_FIELD_COUNT] = { false };

	for (uint32_t i = 0; i < m->f->nterms; i++) {
		const struct analysis_term *t = &m->f->terms[i];

		if (stack == CAPTURE_STACKLESS && t->field == ANALYSIS_FIELD_MODULE) {
			included[t->field] = true;
			continue;
		}

		if (t->exclude && term__matches(m, i, thread, stack, cg))
			return false;
		if (!t->exclude && !included[t->field] && term__matches(m, i, thread, stack, cg))
			included[t->field] = true;
	}
	for (int k = 0; k < ANALYSIS_FIELD_COUNT; k++)
		if (m->has_include[k] && !included[k])
			return false;
	return true;
}

/* ---- process roots --------------------------------------------------------- */

struct rooter {
	const struct capture *c;
	struct capture_stack *rows;
	uint32_t n, cap;
	struct u64map index;	 /* (parent + 1) << 32 | frame -> row */
	struct u64map remap;	 /* (process << 32 | old stack) -> new row */
	uint32_t first_root_frame; /* frame id of process 0's root */
	uint32_t *work;		 /* old stacks, innermost first, while remapping */
	uint32_t work_cap;
};

static int rooter__intern(struct rooter *r, uint32_t parent, uint32_t frame, uint32_t *out)
{
	uint64_t key = ((uint64_t)(parent + 1) << 32) | frame;
	uint32_t val = r->n;
	bool inserted;
	int err = u64map__upsert(&r->index, key, &val, &inserted);

	if (err)
		return err;
	if (inserted) {
		if (analysis__grow((void **)&r->rows, &r->cap, (uint64_t)r->n + 1, sizeof(*r->rows)))
			return -ENOMEM;
		r->rows[r->n++] = (struct capture_stack){ .parent = parent, .frame = frame };
	}
	*out = val;
	return 0;
}

/* Old stack (or CAPTURE_NONE) of a sample of process under the process's root. */
static int rooter__map(struct rooter *r, uint32_t process, uint32_t stack, uint32_t *out)
{
	uint32_t depth = 0, cur = CAPTURE_NONE, s;
	int err;

	/* the deepest already-mapped ancestor, then intern the rest down */
	for (s = stack; s != CAPTURE_NONE; s = r->c->stacks[s].parent) {
		uint32_t v = u64map__get(&r->remap, (uint64_t)process << 32 | s);

		if (v != U64MAP_EMPTY) {
			cur = v;
			break;
		}
		if (analysis__grow((void **)&r->work, &r->work_cap, (uint64_t)depth + 1,
				   sizeof(*r->work)))
			return -ENOMEM;
		r->work[depth++] = s;
	}
	if (s == CAPTURE_NONE) {
		err = rooter__intern(r, CAPTURE_NONE, r->first_root_frame + process, &cur);
		if (err)
			return err;
	}
	while (depth--) {
		uint32_t old = r->work[depth], val;
		bool inserted;

		err = rooter__intern(r, cur, r->c->stacks[old].frame, &cur);
		if (err)
			return err;
		val = cur;
		err = u64map__upsert(&r->remap, (uint64_t)process << 32 | old, &val, &inserted);
		if (err)
			return err;
	}
	*out = cur;
	return 0;
}

/* Copy c's strings and frames, appending one root frame per process. */
static int scope__add_roots(struct analysis_scope *sc, const struct capture *c)
{
	size_t data_len = c->string_offsets[c->nstrings], cap = data_len + 1;
	uint64_t nstrings = (uint64_t)c->nstrings + c->nprocesses;
	uint64_t nframes = (uint64_t)c->nframes + c->nprocesses;
	uint32_t at;

	if (nstrings >= CAPTURE_NONE || nframes >= CAPTURE_NONE)
		return -ENOMEM;
	for (uint32_t p = 0; p < c->nprocesses; p++)
		cap += strlen(capture__string(c, c->processes[p].comm)) + 24;
	if (cap >= UINT32_MAX)
		return -ENOMEM;
	sc->string_offsets = malloc((size_t)(nstrings + 1) * sizeof(uint32_t));
	sc->string_data = malloc(cap);
	sc->frames = malloc((size_t)(nframes + 1) * sizeof(*sc->frames));
	if (!sc->string_offsets || !sc->string_data || !sc->frames)
		return -ENOMEM;
	memcpy(sc->string_offsets, c->string_offsets, ((size_t)c->nstrings + 1) * sizeof(uint32_t));
	memcpy(sc->string_data, c->string_data, data_len);
	memcpy(sc->frames, c->frames, (size_t)c->nframes * sizeof(*sc->frames));
	at = (uint32_t)data_len;
	for (uint32_t p = 0; p < c->nprocesses; p++) {
		const struct capture_process *pr = &c->processes[p];
		const char *comm = capture__string(c, pr->comm);
		int n = snprintf(sc->string_data + at, cap - at, "%s [%u]", comm[0] ? comm : "[unknown]",
				 pr->pid);

		at += (uint32_t)n + 1;
		sc->string_offsets[c->nstrings + p + 1] = at;
		sc->frames[c->nframes + p] = (struct capture_frame){
			.module = CAPTURE_NONE,
			.function = c->nstrings + p,
		};
	}
	sc->view.string_offsets = sc->string_offsets;
	sc->view.string_data = sc->string_data;
	sc->view.nstrings = (uint32_t)nstrings;
	sc->view.frames = sc->frames;
	sc->view.nframes = (uint32_t)nframes;
	return 0;
}

int analysis_scope__new(const struct capture *c, const struct analysis_scope_filter *f,
			bool process_roots, struct analysis_scope **out)
{
	static const struct analysis_scope_filter none;
	struct analysis_scope *sc = NULL;
	struct rooter r = { .c = c };
	struct matcher m = { 0 };
	bool have_matcher = false;
	uint32_t n = 0;
	int err = -ENOMEM;

	*out = NULL;
	if (!f)
		f = &none;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		goto cleanup;
	sc->view = *c;
	sc->view.storage = NULL;
	sc->samples = malloc(((size_t)c->nsamples + 1) * sizeof(*sc->samples));
	sc->sample_cgroups = malloc(((size_t)c->nsample_cgroups + 1) * sizeof(uint32_t));
	sc->intervals = malloc(((size_t)c->nintervals + 1) * sizeof(*sc->intervals));
	sc->probe_records = malloc(((size_t)c->nprobe_records + 1) * sizeof(*sc->probe_records));
	if (!sc->samples || !sc->sample_cgroups || !sc->intervals || !sc->probe_records)
		goto cleanup;
	err = matcher__init(&m, c, f);
	if (err)
		goto cleanup;
	have_matcher = true;
	u64map__init(&r.index);
	u64map__init(&r.remap);
	if (process_roots) {
		err = scope__add_roots(sc, c);
		if (err)
			goto cleanup;
		r.first_root_frame = c->nframes;
	}
	for (uint32_t i = 0; i < c->nsamples; i++) {
		struct capture_sample s = c->samples[i];
		uint32_t cg = capture__sample_cgroup(c, i);

		if (!matcher__keep(&m, s.thread, s.stack, cg))
			continue;
		if (process_roots && s.thread != CAPTURE_NONE &&
		    (err = rooter__map(&r, c->threads[s.thread].process, s.stack, &s.stack)))
			goto cleanup;
		if (c->nsample_cgroups)
			sc->sample_cgroups[n] = cg;
		sc->samples[n++] = s;
	}
	sc->view.samples = sc->samples;
	sc->view.nsamples = n;
	sc->view.sample_cgroups = sc->sample_cgroups;
	sc->view.nsample_cgroups = c->nsample_cgroups ? n : 0;
	n = 0;
	for (uint32_t i = 0; i < c->nintervals; i++) {
		struct capture_interval v = c->intervals[i];

		if (!matcher__keep(&m, v.thread, v.stack, m.thread_cgroup[v.thread]))
			continue;
		if (process_roots) {
			uint32_t proc = c->threads[v.thread].process;

			if ((err = rooter__map(&r, proc, v.stack, &v.stack)))
				goto cleanup;
			if (v.waker_thread != CAPTURE_NONE && v.waker_stack != CAPTURE_NONE &&
			    (err = rooter__map(&r, c->threads[v.waker_thread].process, v.waker_stack,
					       &v.waker_stack)))
				goto cleanup;
		}
		sc->intervals[n++] = v;
	}
	sc->view.intervals = sc->intervals;
	sc->view.nintervals = n;
	n = 0;
	for (uint32_t i = 0; i < c->nprobe_records; i++) {
		const struct capture_probe_record *pr = &c->probe_records[i];

		if (matcher__keep(&m, pr->thread, CAPTURE_STACKLESS, m.thread_cgroup[pr->thread]))
			sc->probe_records[n++] = *pr;
	}
	sc->view.probe_records = sc->probe_records;
	sc->view.nprobe_records = n;
	if (process_roots) {
		sc->stacks = r.rows;
		r.rows = NULL;
		sc->view.stacks = sc->stacks;
		sc->view.nstacks = r.n;
	}
	*out = sc;
	sc = NULL;
	err = 0;
cleanup:
	if (have_matcher)
		matcher__release(&m);
	u64map__release(&r.index);
	u64map__release(&r.remap);
	free(r.rows);
	free(r.work);
	analysis_scope__free(sc);
	return err;
}

const struct capture *analysis_scope__capture(const struct analysis_scope *s)
{
	return &s->view;
}

void analysis_scope__free(struct analysis_scope *s)
{
	if (!s)
		return;
	free(s->samples);
	free(s->sample_cgroups);
	free(s->intervals);
	free(s->probe_records);
	free(s->frames);
	free(s->stacks);
	free(s->string_offsets);
	free(s->string_data);
	free(s);
}

/* ---- report --by ----------------------------------------------------------- */

int analysis_by__parse(const char *name, enum analysis_by *by)
{
	static const char *const names[] = { "process", "thread", "container", "module" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(name, names[i])) {
			*by = (enum analysis_by)i;
			return 0;
		}
	return -EINVAL;
}

bool analysis__sample_container(const struct capture *c, uint32_t i, char *buf, size_t size,
				const char **runtime)
{
	return capture__container_name(c, capture__sample_cgroup(c, i), buf, size, runtime);
}

/*
 * The group of a sample or interval s (its thread and stack; cg its cgroup,
 * CAPTURE_NONE for an interval) as a u64 key: a process or thread row, a container
 * string id (cgroup-less and container-less samples apart), or a module row
 * (kernel, interpreted and unknown apart).  Strings are interned, so the
 * cgroups of one container share its key.
 */
#define KEY_SPECIAL (1ull << 63) /* above every row key, a thread's (process, tid) too */
static uint64_t group__key(const struct capture *c, const struct capture_sample *s, uint32_t cg,
			   enum analysis_by by)
{
	const struct capture_frame *f;

	switch (by) {
	case ANALYSIS_BY_PROCESS:
		return s->thread == CAPTURE_NONE ? KEY_SPECIAL : c->threads[s->thread].process;
	case ANALYSIS_BY_THREAD:
		/* A thread is its tid in its process: rows the processor made
		 * for it at two moments (before and after its name was known,
		 * say) are one group, as label=tid:N is one selection. */
		return s->thread == CAPTURE_NONE ? KEY_SPECIAL
						 : (uint64_t)(c->threads[s->thread].process & 0x7fffffffu) << 32 |
							   c->threads[s->thread].tid;
	case ANALYSIS_BY_CONTAINER:
		if (cg == CAPTURE_NONE)
			return KEY_SPECIAL;
		if (!capture__string(c, c->cgroups[cg].container)[0])
			return KEY_SPECIAL + 1;
		return c->cgroups[cg].container;
	case ANALYSIS_BY_MODULE:
		f = s->stack == CAPTURE_NONE ? NULL : &c->frames[c->stacks[s->stack].frame];
		if (f && f->module != CAPTURE_NONE)
			return c->modules[f->module].kind == CAPTURE_MODULE_KERNEL ? KEY_SPECIAL + 2
										   : f->module;
		return f && (f->flags & CAPTURE_FRAME_F_INTERPRETED) ? KEY_SPECIAL + 3
								     : KEY_SPECIAL;
	}
	return KEY_SPECIAL;
}

/* The pid process has in its own pid namespace (its main thread's
 * ns_tid), 0 if unknown. */
static uint32_t process__ns_pid(const struct capture *c, uint32_t process)
{
	for (uint32_t t = 0; t < c->nthreads; t++)
		if (c->threads[t].process == process &&
		    c->threads[t].tid == c->processes[process].pid)
			return c->threads[t].ns_tid;
	return 0;
}

/* The display name of a group whose first sample or interval is s (cgroup
 * cg), into buf. */
static void group__name(const struct capture *c, const struct capture_sample *s, uint32_t cg,
			enum analysis_by by, char *buf, size_t size)
{
	const struct capture_thread *th = s->thread == CAPTURE_NONE ? NULL : &c->threads[s->thread];
	const struct capture_process *p = th ? &c->processes[th->process] : NULL;
	const char *comm = th ? capture__string(c, th->comm) : "";

	uint32_t ns_pid = th ? process__ns_pid(c, th->process) : 0;
	char ns[48] = "";

	switch (by) {
	case ANALYSIS_BY_PROCESS:
		if (p)
			comm = capture__string(c, p->comm);
		if (ns_pid && ns_pid != p->pid)
			snprintf(ns, sizeof(ns), ", ns %u", ns_pid);
		if (p)
			snprintf(buf, size, "%s [%u%s]", comm[0] ? comm : "[unknown]", p->pid, ns);
		else
			snprintf(buf, size, "[no thread]");
		break;
	case ANALYSIS_BY_THREAD:
		if (th && th->ns_tid && th->ns_tid != th->tid)
			snprintf(ns, sizeof(ns), ", ns %u/%u", ns_pid, th->ns_tid);
		if (th)
			snprintf(buf, size, "%s [%u/%u%s]", comm[0] ? comm : "[unknown]", p->pid,
				 th->tid, ns);
		else
			snprintf(buf, size, "[no thread]");
		break;
	case ANALYSIS_BY_CONTAINER: {
		const char *rt;
		char id[CGROUP_NAME_BYTES];

		if (capture__container_name(c, cg, id, sizeof(id), &rt))
			snprintf(buf, size, "%s (%s)", id, rt[0] ? rt : "?");
		else
			snprintf(buf, size, "%s",
				 cg == CAPTURE_NONE ? "[unknown]" : "[host]");
		break;
	}
	case ANALYSIS_BY_MODULE: {
		const struct capture_frame *f =
			s->stack == CAPTURE_NONE ? NULL : &c->frames[c->stacks[s->stack].frame];
		const struct capture_module *mod =
			f && f->module != CAPTURE_NONE ? &c->modules[f->module] : NULL;

		if (mod && mod->kind == CAPTURE_MODULE_KERNEL)
			snprintf(buf, size, "[kernel]");
		else if (mod && capture__string(c, mod->path)[0])
			snprintf(buf, size, "%s", base_name(capture__string(c, mod->path)));
		else if (f && (f->flags & CAPTURE_FRAME_F_INTERPRETED))
			snprintf(buf, size, "[python]");
		else
			snprintf(buf, size, "[unknown]");
		break;
	}
	}
}

static int group_cmp(const void *a, const void *b)
{
	const struct analysis_group *x = a, *y = b;

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

int analysis_groups__init(struct analysis_groups *g, const struct capture *c,
			  const struct analysis_query *q, enum analysis_by by)
{
	struct u64map index;
	uint32_t cap = 0;
	char name[512];
	int err = -ENOMEM;

	memset(g, 0, sizeof(*g));
	if (analysis_query__check(c, q))
		return -EINVAL;
	u64map__init(&index);
	/* the samples q selects, then its off-CPU intervals (an interval event's
	 * weight, as the tree counts them; they carry no cgroup) */
	for (uint64_t k = 0; k < (uint64_t)c->nsamples + c->nintervals; k++) {
		struct capture_sample iv;
		const struct capture_sample *s;
		uint32_t row = g->nrows, cg = CAPTURE_NONE;
		bool inserted;

		if (k < c->nsamples) {
			s = &c->samples[k];
			if (!analysis_query__match(q, s))
				continue;
			cg = capture__sample_cgroup(c, (uint32_t)k);
		} else {
			const struct capture_interval *v = &c->intervals[k - c->nsamples];

			if (!analysis_query__match_interval(q, v))
				continue;
			iv = (struct capture_sample){ .thread = v->thread, .stack = v->stack,
						      .weight = v->weight };
			s = &iv;
		}
		if (u64map__upsert(&index, group__key(c, s, cg, by), &row, &inserted))
			goto cleanup;
		if (inserted) {
			if (analysis__grow((void **)&g->rows, &cap, (uint64_t)g->nrows + 1,
					   sizeof(*g->rows)))
				goto cleanup;
			group__name(c, s, cg, by, name, sizeof(name));
			g->rows[row] = (struct analysis_group){ .name = strdup(name) };
			g->nrows++;
			if (!g->rows[row].name)
				goto cleanup;
		}
		analysis__sat_add(&g->rows[row].weight, s->weight);
		g->rows[row].samples++;
		analysis__sat_add(&g->total, s->weight);
	}
	if (g->nrows)
		qsort(g->rows, g->nrows, sizeof(*g->rows), group_cmp);
	err = 0;
cleanup:
	u64map__release(&index);
	if (err)
		analysis_groups__release(g);
	return err;
}

void analysis_groups__release(struct analysis_groups *g)
{
	for (uint32_t i = 0; i < g->nrows; i++)
		free(g->rows[i].name);
	free(g->rows);
	memset(g, 0, sizeof(*g));
}
