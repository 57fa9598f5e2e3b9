// SPDX-License-Identifier: MIT
/*
 * The per-process table of JIT functions (jit_funcs.h).  A commit sorts the
 * live and staged functions by start and keeps a function only when no
 * function with a later sequence number overlaps it.  Overlap is found with
 * two segment trees over the sorted order: a range maximum of sequence
 * numbers for the functions starting inside one (its right side), and a
 * range "raise to at least" for the functions one covers the start of (its
 * left side); the same trees give each function the smallest sequence
 * number overlapping it, so a function alone in its range (most) needs no
 * more.  One that replaces or is replaced gets its time from the mappings
 * over its range (jit_funcs.h, "Time"); a replaced one moves to the
 * history.  Names and source lines of dropped functions are garbage,
 * reclaimed by compaction when a bound would be reached.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jit_funcs.h"
#include "jit_policy.h"

static const char *const problem_names[] = {
#define JIT_PROBLEM_NAME(id, name, text) name,
	JIT_PROBLEMS(JIT_PROBLEM_NAME)
#undef JIT_PROBLEM_NAME
};

const char *jit_problem__name(unsigned int problem)
{
	return problem < JIT_PROBLEM_COUNT ? problem_names[problem] : NULL;
}

void jit_funcs__init(struct jit_funcs *f)
{
	memset(f, 0, sizeof(*f));
	f->next_seq = 1;
	f->pin = UINT32_MAX;
}

void jit_funcs__release(struct jit_funcs *f)
{
	free(f->fns);
	free(f->staged);
	free(f->old);
	free(f->names);
	free(f->line_tab);
	jit_funcs__init(f);
}

void jit_funcs__problem(struct jit_funcs *f, enum jit_problem problem)
{
	if ((unsigned int)problem < JIT_PROBLEM_COUNT)
		f->problems[problem]++;
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap = ncap > UINT32_MAX / 2 ? need : ncap * 2;
	n = realloc(*arr, (size_t)ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

/* Bytes of names and line entries the live and staged functions use. */
static void live_use(const struct jit_funcs *f, size_t *names, uint32_t *lines)
{
	const struct jit_fn *sets[3] = { f->fns, f->staged, f->old };
	uint32_t counts[3] = { f->n, f->nstaged, f->nold };

	*names = 0;
	*lines = 0;
	for (int s = 0; s < 3; s++)
		for (uint32_t i = 0; i < counts[s]; i++) {
			*names += strlen(f->names + sets[s][i].name) + 1;
			*lines += sets[s][i].nlines;
		}
}

/*
 * Rebuild the names and the line table with only what live and staged
 * functions use (file names of consecutive entries shared stay shared).
 * Done only when at least half of either is garbage, so a full table is not
 * compacted at every addition.  0 or -ENOMEM (nothing changed).
 */
static int compact(struct jit_funcs *f)
{
	struct jit_fn *sets[3] = { f->fns, f->staged, f->old };
	uint32_t counts[3] = { f->n, f->nstaged, f->nold };
	size_t names_use, pos = 0;
	uint32_t lines_use, nl = 0;
	char *names;
	struct jit_line *lines = NULL;

	live_use(f, &names_use, &lines_use);
	for (int s = 0; s < 3; s++)
		for (uint32_t i = 0; i < counts[s]; i++) {
			const struct jit_fn *fn = &sets[s][i];

			for (uint32_t k = 0; k < fn->nlines; k++)
				names_use += strlen(f->names + f->line_tab[fn->lines + k].file) + 1;
		}
	if (f->pin < f->nline_tab) {
		lines_use += f->nline_tab - f->pin;
		for (uint32_t k = f->pin; k < f->nline_tab; k++)
			names_use += strlen(f->names + f->line_tab[k].file) + 1;
	}
	if (names_use * 2 > f->names_len && lines_use * 2 > f->nline_tab)
		return 0;
	names = malloc(names_use ? names_use : 1);
	if (lines_use)
		lines = malloc((size_t)lines_use * sizeof(*lines));
	if (!names || (lines_use && !lines)) {
		free(names);
		free(lines);
		return -ENOMEM;
	}
	for (int s = 0; s < 3; s++)
		for (uint32_t i = 0; i < counts[s]; i++) {
			struct jit_fn *fn = &sets[s][i];
			size_t len = strlen(f->names + fn->name) + 1;
			uint32_t first = nl, last_old = UINT32_MAX, last_new = 0;

			memcpy(names + pos, f->names + fn->name, len);
			fn->name = (uint32_t)pos;
			pos += len;
			for (uint32_t k = 0; k < fn->nlines; k++) {
				struct jit_line l = f->line_tab[fn->lines + k];

				if (l.file != last_old) {
					len = strlen(f->names + l.file) + 1;
					memcpy(names + pos, f->names + l.file, len);
					last_old = l.file;
					last_new = (uint32_t)pos;
					pos += len;
				}
				l.file = last_new;
				lines[nl++] = l;
			}
			fn->lines = fn->nlines ? first : 0;
		}
	if (f->pin != UINT32_MAX) {
		uint32_t first = nl;

		for (uint32_t k = f->pin; k < f->nline_tab; k++) {
			struct jit_line l = f->line_tab[k];
			size_t len = strlen(f->names + l.file) + 1;

			memcpy(names + pos, f->names + l.file, len);
			l.file = (uint32_t)pos;
			pos += len;
			lines[nl++] = l;
		}
		f->pin = first;
	}
	free(f->names);
	free(f->line_tab);
	f->names = names;
	f->names_len = pos;
	f->names_cap = names_use ? names_use : 1;
	f->line_tab = lines;
	f->nline_tab = nl;
	f->line_tab_cap = lines_use;
	return 0;
}

/* Append len bytes + NUL to the names; offset in *off.  -ENOSPC counted. */
static int add_name(struct jit_funcs *f, const char *s, size_t len, uint32_t *off)
{
	if (f->names_len + len + 1 > JIT_NAMES_MAX && compact(f))
		return -ENOMEM;
	if (f->names_len + len + 1 > JIT_NAMES_MAX) {
		jit_funcs__problem(f, JIT_PROBLEM_NAMES_FULL);
		return -ENOSPC;
	}
	if (f->names_len + len + 1 > f->names_cap) {
		size_t ncap = f->names_cap ? f->names_cap : 4096;
		char *n;

		while (ncap < f->names_len + len + 1)
			ncap *= 2;
		if (ncap > JIT_NAMES_MAX)
			ncap = JIT_NAMES_MAX;
		n = realloc(f->names, ncap);
		if (!n)
			return -ENOMEM;
		f->names = n;
		f->names_cap = ncap;
	}
	memcpy(f->names + f->names_len, s, len);
	f->names[f->names_len + len] = '\0';
	*off = (uint32_t)f->names_len;
	f->names_len += len + 1;
	return 0;
}

void jit_funcs__begin_lines(struct jit_funcs *f)
{
	f->pin = f->nline_tab;
}

int jit_funcs__add_line(struct jit_funcs *f, uint64_t addr, uint32_t line, const char *file,
			size_t len)
{
	uint32_t off;
	int err;

	if (f->nline_tab >= JIT_LINES_MAX && compact(f))
		return -ENOMEM;
	if (f->nline_tab >= JIT_LINES_MAX) {
		jit_funcs__problem(f, JIT_PROBLEM_LINES_FULL);
		return -ENOSPC;
	}
	/* Entries of one record usually share their file: reuse the last one. */
	if (f->nline_tab && file) {
		const char *prev = f->names + f->line_tab[f->nline_tab - 1].file;

		if (strlen(prev) == len && !memcmp(prev, file, len)) {
			off = f->line_tab[f->nline_tab - 1].file;
			goto append;
		}
	}
	err = add_name(f, file ? file : "", file ? len : 0, &off);
	if (err)
		return err;
append:
	if (grow((void **)&f->line_tab, &f->line_tab_cap, f->nline_tab + 1, sizeof(*f->line_tab)))
		return -ENOMEM;
	f->line_tab[f->nline_tab] = (struct jit_line){ .addr = addr, .line = line, .file = off };
	f->nline_tab++;
	return 0;
}

int jit_funcs__add(struct jit_funcs *f, uint64_t start, uint64_t size, const char *name,
		   size_t len, uint64_t read_ns, uint64_t since_ns, uint32_t flags)
{
	struct jit_fn fn = {
		.start = start,
		.end = start + size,
		.read_ns = read_ns,
		.since_ns = since_ns,
		.flags = flags & JIT_FN_JITDUMP,
		.object = UINT32_MAX,
	};
	int err;

	if (!size || size > JIT_FUNC_SIZE_MAX || start + size < start) {
		jit_funcs__problem(f, JIT_PROBLEM_HUGE);
		f->pin = UINT32_MAX;
		return 0;
	}
	/* Full: a commit may make room (staged functions replacing live
	 * ones), but costs a sort of the whole table, so it is made only for
	 * at least JIT_FUNCS_ROOM staged functions; with fewer, the function
	 * is dropped and counted.  (One commit per line at the limit made a
	 * map of 1.06M lines read for minutes.) */
	if ((uint64_t)f->n + f->nstaged >= JIT_FUNCS_MAX && f->nstaged >= JIT_FUNCS_ROOM) {
		err = jit_funcs__commit(f);
		if (err < 0) {
			f->pin = UINT32_MAX;
			return err;
		}
	}
	if ((uint64_t)f->n + f->nstaged >= JIT_FUNCS_MAX) {
		jit_funcs__problem(f, JIT_PROBLEM_FUNCS_FULL);
		f->pin = UINT32_MAX;
		return 0;
	}
	if (len > JIT_NAME_MAX)
		len = JIT_NAME_MAX;
	err = add_name(f, name, len, &fn.name);
	if (!err && grow((void **)&f->staged, &f->staged_cap, f->nstaged + 1, sizeof(*f->staged)))
		err = -ENOMEM;
	if (err) {
		f->pin = UINT32_MAX;
		return err == -ENOSPC ? 0 : err;
	}
	if (f->pin < f->nline_tab) {
		fn.lines = f->pin;
		fn.nlines = f->nline_tab - f->pin;
	}
	f->pin = UINT32_MAX;
	if (f->code_bytes + size <= JIT_CODE_MAX) {
		f->code_bytes += size;
	} else {
		fn.flags |= JIT_FN_NO_CODE;
		jit_funcs__problem(f, JIT_PROBLEM_NO_CODE);
	}
	fn.seq = f->next_seq++;
	f->staged[f->nstaged++] = fn;
	return 0;
}

int jit_funcs__add_object(struct jit_funcs *f, uint64_t start, uint64_t size, const char *name,
			  size_t len, uint64_t read_ns, uint32_t object)
{
	uint64_t seq = f->next_seq;
	int err = jit_funcs__add(f, start, size, name, len, read_ns, 0, 0);

	/* Staged last, unless it was refused (counted). */
	if (!err && f->next_seq > seq) {
		f->staged[f->nstaged - 1].flags |= JIT_FN_GDB;
		f->staged[f->nstaged - 1].object = object;
	}
	return err;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct jit_fn *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* First index in a[0, n) whose start is >= addr (a sorted by start). */
static uint32_t lower_bound(const struct jit_fn *a, uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (a[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * keep[i] for a[0, n) sorted by (start, seq): no function with a larger seq
 * overlaps a[i]; low[i]: the smallest seq of the others overlapping a[i]
 * (UINT64_MAX: none).  Bottom-up segment trees of 2n nodes (max and min
 * are commutative, so n need not be a power of two).
 */
static int survivors(const struct jit_fn *a, uint32_t n, bool *keep, uint64_t *low)
{
	uint64_t *mx = calloc(2 * (size_t)n, sizeof(*mx));
	uint64_t *tag = calloc(2 * (size_t)n, sizeof(*tag));
	uint64_t *mn = malloc(2 * (size_t)n * sizeof(*mn));
	uint64_t *tmin = malloc(2 * (size_t)n * sizeof(*tmin));
	uint32_t *hi = malloc((size_t)n * sizeof(*hi));
	int err = -ENOMEM;

	if (!mx || !tag || !mn || !tmin || !hi)
		goto cleanup;
	for (size_t i = 0; i < 2 * (size_t)n; i++)
		mn[i] = tmin[i] = UINT64_MAX;
	for (uint32_t i = 0; i < n; i++) {
		mx[n + i] = mn[n + i] = a[i].seq;
		hi[i] = lower_bound(a, n, a[i].end);
	}
	for (uint32_t i = n - 1; i >= 1; i--) {
		mx[i] = max_u64(mx[2 * i], mx[2 * i + 1]);
		mn[i] = min_u64(mn[2 * i], mn[2 * i + 1]);
	}
	/* a[i] overlaps every a[j] with i < j < hi[i]: tell them. */
	for (uint32_t i = 0; i < n; i++)
		for (size_t l = i + 1 + (size_t)n, r = hi[i] + (size_t)n; l < r; l >>= 1, r >>= 1) {
			if (l & 1) {
				tag[l] = max_u64(tag[l], a[i].seq);
				tmin[l] = min_u64(tmin[l], a[i].seq);
				l++;
			}
			if (r & 1) {
				r--;
				tag[r] = max_u64(tag[r], a[i].seq);
				tmin[r] = min_u64(tmin[r], a[i].seq);
			}
		}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t killer = 0, first = UINT64_MAX;

		for (size_t p = i + (size_t)n; p >= 1; p >>= 1) {
			killer = max_u64(killer, tag[p]);
			first = min_u64(first, tmin[p]);
		}
		for (size_t l = i + 1 + (size_t)n, r = hi[i] + (size_t)n; l < r; l >>= 1, r >>= 1) {
			if (l & 1) {
				killer = max_u64(killer, mx[l]);
				first = min_u64(first, mn[l++]);
			}
			if (r & 1) {
				killer = max_u64(killer, mx[--r]);
				first = min_u64(first, mn[r]);
			}
		}
		keep[i] = killer < a[i].seq;
		low[i] = first;
	}
	err = 0;
cleanup:
	free(mx);
	free(tag);
	free(mn);
	free(tmin);
	free(hi);
	return err;
}

/* Indices of the functions of a[0, n) (sorted by start) overlapping a[j],
 * into out (2 * JIT_OVERLAP_SCAN entries): their count, or -1 when more
 * than JIT_OVERLAP_SCAN lie on one side (then nothing is concluded). */
static int overlaps(const struct jit_fn *a, uint32_t n, uint32_t j, uint64_t max_size,
		    uint32_t *out)
{
	uint32_t k = 0, seen = 0;

	for (uint32_t i = j + 1; i < n && a[i].start < a[j].end; i++) {
		if (++seen > JIT_OVERLAP_SCAN)
			return -1;
		out[k++] = i;
	}
	seen = 0;
	for (uint32_t i = j; i > 0 && a[j].start - a[i - 1].start < max_size; i--) {
		if (++seen > JIT_OVERLAP_SCAN)
			return -1;
		if (a[i - 1].end > a[j].start)
			out[k++] = i - 1;
	}
	return (int)k;
}

/* Is fn a function whose time is known exactly (a jitdump load time)? */
static bool exact(const struct jit_fn *fn)
{
	return (fn->flags & JIT_FN_JITDUMP) && fn->since_ns;
}

/*
 * When staged function a[j], which replaces or is replaced within its own
 * read, starts naming samples (*from; UINT64_MAX: never) and when the
 * functions it replaced stop (*cut), from the mappings over its range in
 * its read's window (jit_funcs.h, "Time").
 */
static void span(const struct jit_funcs *f, const struct jit_fn *a, uint32_t n, uint32_t j,
		 uint64_t first_staged, uint64_t max_size, uint64_t *from, uint64_t *cut)
{
	uint32_t idx[2 * JIT_OVERLAP_SCAN], before = 0, after = 0;
	uint64_t times[JIT_MAPPED_MAX], e = a[j].since_ns, r = a[j].read_ns;
	int no = overlaps(a, n, j, max_size, idx), c = -1;

	if (no < 0) {
		/* Too crowded to tell: from its read on, and what it
		 * replaced up to the window (a replaced one is dropped). */
		*from = r;
		*cut = e;
		return;
	}
	for (int i = 0; i < no; i++) {
		const struct jit_fn *o = &a[idx[i]];

		if (o->seq < first_staged || (o->flags & JIT_FN_ENDED))
			continue; /* an earlier read's */
		if (o->seq < a[j].seq)
			before++;
		else
			after++;
	}
	if (f->mapped)
		c = f->mapped(f->mapped_ctx, a[j].start, a[j].end, e, r, times, JIT_MAPPED_MAX);
	uint32_t k = before + after + 1, i = before + 1;

	if (c >= 0 && (uint32_t)c == k && k <= JIT_MAPPED_MAX) {
		/* As many changes of the range as functions: in order. */
		*from = *cut = times[i - 1];
		return;
	}
	/* The first replacement came no later than the first mapping (or
	 * anywhere in the window); the last function holds from its read
	 * (not from the last mapping: more mappings than functions are
	 * protection changes of neighbours too, and one made just before the
	 * read may not be drained yet); those between name nothing. */
	*cut = i == 1 && c > 0 ? times[0] : e;
	*from = after ? UINT64_MAX : r;
}

/*
 * When a GDB JIT object's function alone in its range starts naming
 * samples: the object is in memory at its read, so it was written after
 * the last mapping over its range in the read's window (an object is
 * written into fresh or freshly protected memory, then registered).
 */
static uint64_t object_from(const struct jit_funcs *f, const struct jit_fn *fn)
{
	uint64_t times[JIT_MAPPED_MAX];
	int c = f->mapped ? f->mapped(f->mapped_ctx, fn->start, fn->end, fn->since_ns, fn->read_ns,
				      times, JIT_MAPPED_MAX)
			  : 0;

	if (c < 0 || c > (int)JIT_MAPPED_MAX)
		return fn->read_ns; /* not known: from its read on */
	return c ? max_u64(fn->since_ns, times[c - 1]) : fn->since_ns;
}

/* Keep fn in the history, naming samples in [from, until). */
static int keep_old(struct jit_funcs *f, const struct jit_fn *fn, uint64_t from, uint64_t until)
{
	if (from == UINT64_MAX || until <= from || until <= f->floor_ns)
		return 0;
	if (f->nold >= JIT_OLD_FUNCS_MAX) {
		jit_funcs__problem(f, JIT_PROBLEM_HISTORY_FULL);
		return 0;
	}
	if (grow((void **)&f->old, &f->old_cap, f->nold + 1, sizeof(*f->old)))
		return -ENOMEM;
	f->old[f->nold] = *fn;
	f->old[f->nold].since_ns = from;
	f->old[f->nold].until_ns = until;
	f->old[f->nold].flags &= ~JIT_FN_ENDED;
	f->nold++;
	return 0;
}

/* Drop the history no sample to come can use. */
static void prune_old(struct jit_funcs *f)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < f->nold; i++)
		if (f->old[i].until_ns > f->floor_ns)
			f->old[k++] = f->old[i];
	f->nold = k;
}

/*
 * The times of a commit's functions (all[0, n), sorted): staged ones that
 * replace or are replaced get theirs from span(); replaced ones and
 * unregistered ones go to the history.  0 or -ENOMEM.
 */
static int times_of(struct jit_funcs *f, struct jit_fn *all, uint32_t n, const bool *keep,
		    const uint64_t *low, uint64_t first_staged)
{
	uint64_t *from = malloc((size_t)n * sizeof(*from)), *cut = malloc((size_t)n * sizeof(*cut));
	uint64_t max_size = 0;
	uint32_t idx[2 * JIT_OVERLAP_SCAN];
	int err = -ENOMEM;

	if (!from || !cut)
		goto cleanup;
	for (uint32_t j = 0; j < n; j++)
		max_size = max_u64(max_size, all[j].end - all[j].start);
	for (uint32_t j = 0; j < n; j++) {
		const struct jit_fn *fn = &all[j];

		from[j] = cut[j] = fn->since_ns;
		if (fn->seq < first_staged || exact(fn))
			continue; /* an earlier read's, or exactly timed */
		if (!(keep[j] && low[j] > fn->seq))
			span(f, all, n, j, first_staged, max_size, &from[j], &cut[j]);
		else if (fn->flags & JIT_FN_GDB)
			from[j] = cut[j] = object_from(f, fn);
		/* else alone in its range: from the read before (a JIT writes
		 * a line before its code runs) */
	}
	for (uint32_t j = 0; j < n; j++) {
		struct jit_fn *fn = &all[j];
		uint64_t until = (fn->flags & JIT_FN_ENDED) ? fn->until_ns : UINT64_MAX;
		int no;

		if (keep[j]) {
			fn->since_ns = from[j];
			continue;
		}
		no = overlaps(all, n, j, max_size, idx);
		for (int i = 0; i < no; i++)
			if (all[idx[i]].seq > fn->seq && !(all[idx[i]].flags & JIT_FN_ENDED))
				until = min_u64(until, cut[idx[i]]);
		if (no < 0)
			until = 0; /* what replaced it when is not known: nothing */
		err = keep_old(f, fn, from[j], until);
		if (err)
			goto cleanup;
	}
	err = 0;
cleanup:
	free(from);
	free(cut);
	return err;
}

int jit_funcs__commit(struct jit_funcs *f)
{
	uint32_t n = 0, kept = 0, staged_kept = 0;
	struct jit_fn *all = NULL;
	uint64_t *low = NULL;
	bool *keep = NULL;
	int err = -ENOMEM;

	f->commits++;
	prune_old(f);
	if (!f->nstaged) {
		/* Unregistered functions still go to the history. */
		for (uint32_t i = 0; i < f->n; i++)
			if ((f->fns[i].flags & JIT_FN_ENDED) && f->fns[i].until_ns) {
				err = keep_old(f, &f->fns[i], f->fns[i].since_ns, f->fns[i].until_ns);
				if (err)
					goto cleanup;
				f->fns[i].until_ns = 0;
			}
		err = 0;
		goto cleanup;
	}
	all = malloc(((size_t)f->n + f->nstaged) * sizeof(*all));
	keep = calloc((size_t)f->n + f->nstaged, sizeof(*keep));
	low = calloc((size_t)f->n + f->nstaged, sizeof(*low));
	if (!all || !keep || !low)
		goto cleanup;
	/* Ended by a mapping: gone.  Unregistered (until_ns set): what
	 * replaces it says until when it names samples. */
	for (uint32_t i = 0; i < f->n; i++)
		if (!(f->fns[i].flags & JIT_FN_ENDED) || f->fns[i].until_ns)
			all[n++] = f->fns[i];
	memcpy(all + n, f->staged, (size_t)f->nstaged * sizeof(*all));
	n += f->nstaged;
	qsort(all, n, sizeof(*all), fn_cmp);
	err = survivors(all, n, keep, low);
	if (err)
		goto cleanup;
	for (uint32_t i = 0; i < n; i++)
		if (all[i].flags & JIT_FN_ENDED)
			keep[i] = false;
	err = times_of(f, all, n, keep, low, f->staged[0].seq);
	if (err)
		goto cleanup;
	for (uint32_t i = 0; i < n; i++)
		if (keep[i])
			kept++;
	if (grow((void **)&f->fns, &f->cap, kept ? kept : 1, sizeof(*f->fns))) {
		err = -ENOMEM;
		goto cleanup;
	}
	kept = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!keep[i])
			continue;
		if (all[i].seq >= f->staged[0].seq)
			staged_kept++;
		f->fns[kept++] = all[i];
	}
	f->n = kept;
	f->nstaged = 0;
	err = (int)staged_kept;
cleanup:
	free(all);
	free(keep);
	free(low);
	return err;
}

uint32_t jit_funcs__map(struct jit_funcs *f, uint64_t start, uint64_t end, uint64_t map_ns)
{
	uint32_t lo = 0, hi = f->n, ended = 0;

	/* Live functions are disjoint and sorted, so their ends are sorted too. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->fns[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < f->n && f->fns[lo].start < end; lo++) {
		struct jit_fn *fn = &f->fns[lo];

		if (!(fn->flags & JIT_FN_ENDED) && fn->read_ns < map_ns) {
			fn->flags |= JIT_FN_ENDED;
			ended++;
		}
	}
	/* A replaced function read before the mapping names no sample after
	 * it either (its replacement was read before the mapping was seen). */
	for (uint32_t i = 0; i < f->nold; i++) {
		struct jit_fn *fn = &f->old[i];

		if (fn->start < end && fn->end > start && fn->read_ns < map_ns &&
		    fn->until_ns > map_ns) {
			fn->until_ns = map_ns > fn->since_ns ? map_ns : fn->since_ns;
			ended++;
		}
	}
	return ended;
}

uint32_t jit_funcs__end_object(struct jit_funcs *f, uint32_t object, uint64_t since_ns,
			       uint64_t read_ns)
{
	uint64_t times[JIT_MAPPED_MAX];
	uint32_t ended = 0;

	for (uint32_t i = 0; i < f->n; i++) {
		struct jit_fn *fn = &f->fns[i];
		uint64_t after = max_u64(since_ns, fn->read_ns);
		int c = 0;

		if (!(fn->flags & JIT_FN_GDB) || fn->object != object || (fn->flags & JIT_FN_ENDED))
			continue;
		if (f->mapped && after < read_ns)
			c = f->mapped(f->mapped_ctx, fn->start, fn->end, after, read_ns, times,
				      JIT_MAPPED_MAX);
		fn->flags |= JIT_FN_ENDED;
		fn->until_ns = c > 0 ? times[0] : since_ns;
		ended++;
	}
	return ended;
}

/* Does fn name a sample at time_ns (0: any)? */
static bool in_time(const struct jit_fn *fn, uint64_t time_ns)
{
	if (!time_ns)
		return true;
	if (fn->since_ns && time_ns < fn->since_ns)
		return false;
	return !fn->until_ns || time_ns < fn->until_ns;
}

const struct jit_fn *jit_funcs__find(const struct jit_funcs *f, uint64_t addr, uint64_t time_ns)
{
	uint32_t i = lower_bound(f->fns, f->n, addr + 1);
	const struct jit_fn *fn, *best = NULL;

	if (addr == UINT64_MAX)
		return NULL;
	if (i) {
		fn = &f->fns[i - 1];
		if (addr < fn->end && !(fn->flags & JIT_FN_ENDED) && in_time(fn, time_ns))
			return fn;
	}
	/* The history: the latest function whose time holds the sample (a
	 * sample of no known time is not named by a replaced function). */
	for (uint32_t k = 0; time_ns && k < f->nold; k++) {
		fn = &f->old[k];
		if (addr >= fn->start && addr < fn->end && in_time(fn, time_ns) &&
		    (!best || fn->seq > best->seq))
			best = fn;
	}
	return best;
}

bool jit_funcs__covers(const struct jit_funcs *f, uint64_t addr)
{
	uint32_t i = lower_bound(f->fns, f->n, addr + 1);

	if (i && addr < f->fns[i - 1].end)
		return true;
	for (uint32_t k = 0; k < f->nold; k++)
		if (addr >= f->old[k].start && addr < f->old[k].end)
			return true;
	return false;
}

const char *jit_funcs__name(const struct jit_funcs *f, const struct jit_fn *fn)
{
	return f->names ? f->names + fn->name : "";
}

int jit_funcs__line(const struct jit_funcs *f, const struct jit_fn *fn, uint64_t addr,
		    uint32_t *line, const char **file)
{
	const struct jit_line *t;
	uint32_t lo = 0, hi = fn->nlines;

	if (!fn->nlines)
		return -ENOENT;
	t = f->line_tab + fn->lines;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -ENOENT;
	*line = t[lo - 1].line;
	*file = f->names + t[lo - 1].file;
	return 0;
}
