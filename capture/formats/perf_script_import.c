// SPDX-License-Identifier: MIT
/*
 * `perf script` text importer: the output of plain `perf script` and of
 * `perf script -F` with any of comm,pid,tid,cpu,time,period,event,ip,sym,dso
 * (comm and tid or pid required; with or without callchains) into capture
 * rows.  A sample is a header line
 *	COMM PID[/TID] [CPU] [TIME:] [PERIOD] [EVENT:] [IP SYM (DSO)]
 * (COMM may hold spaces and is padded when no callchain follows; the time
 * token "SECONDS.FRACTION:" anchors the parse when present, see
 * parse_header) followed by indented frame lines, innermost first,
 *	IP SYM[+0xOFF] (DSO)
 * and a blank line.  Frames are keyed by (symbol, DSO, address as perf
 * printed it); a DSO becomes a module by path (perf script prints no build
 * ID), "[kernel.kallsyms]" the kernel.  Policy limits are below.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"
#include "capture/limits.h"

/* Limits on untrusted input (policy, stated once). */
#define PERF_SCRIPT_MAX_LINE 65536	 /* bytes per line; longer lines are an error */
#define PERF_SCRIPT_MAX_DEPTH 1024	 /* frames kept per sample; the rest counted */
#define PERF_SCRIPT_MAX_EVENTS 64	 /* distinct event names */
#define PERF_SCRIPT_MAX_THREADS (1u << 20) /* distinct (pid, tid) */
#define PERF_SCRIPT_DETECT_LINES 64	 /* lines content detection looks at */
#define PERF_SCRIPT_NO_EVENT "samples"	 /* the event's name when -F left it out */

struct ps_header {
	const char *comm;
	size_t comm_len;
	uint32_t pid, tid;
	uint64_t time_ns;
	bool has_time;
	uint64_t period; /* 0 if absent */
	bool has_period;
	const char *event;
	size_t event_len;
	const char *rest; /* after "EVENT:", trimmed: an inline frame, or "" */
	size_t rest_len;
};

struct ps_event {
	char name[64];
	uint64_t period; /* the first period seen */
	bool varies;	 /* periods differ: weights become periods */
};

struct ps_sample {
	uint64_t time_ns;
	uint64_t period;
	uint32_t thread, stack, event;
};

struct ps_thread {
	uint32_t pid, tid, row;
};

struct ps_state {
	struct capture_builder *b;
	struct ps_event events[PERF_SCRIPT_MAX_EVENTS];
	uint32_t nevents;
	struct ps_sample *samples;
	size_t nsamples, samples_cap;
	struct ps_thread *threads; /* open addressing by tid, cap a power of two */
	uint32_t nthreads, threads_cap;
	uint32_t *frames; /* current sample's frame ids, innermost first */
	uint32_t nframes;
	uint64_t deep, bad_frames, bad_lines;
	bool cut; /* the current sample lost frames past the depth limit */
	char *tmp; /* scratch for names */
	uint32_t *module_of; /* [string id of a DSO] -> module row + 1, 0 if none yet */
	uint32_t module_cap;
	int err; /* sticky -ENOMEM */
};

/* The module of DSO text dso (interned as string id), created once. */
static uint32_t perf_script__module(struct ps_state *st, struct capture_module *m, const char *dso)
{
	uint32_t id = capture_builder__string(st->b, dso);

	if (id == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (id >= st->module_cap) {
		uint32_t ncap = st->module_cap ? st->module_cap : 64;
		uint32_t *nm;

		while (ncap <= id && ncap < (1u << 30))
			ncap *= 2;
		if (ncap <= id || !(nm = realloc(st->module_of, (size_t)ncap * sizeof(*nm)))) {
			st->err = -ENOMEM;
			return CAPTURE_NONE;
		}
		memset(nm + st->module_cap, 0, (size_t)(ncap - st->module_cap) * sizeof(*nm));
		st->module_of = nm;
		st->module_cap = ncap;
	}
	if (!st->module_of[id])
		st->module_of[id] = capture_builder__add_module(st->b, m) + 1;
	return st->module_of[id] - 1;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool parse_u64(const char *s, size_t n, unsigned base, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		unsigned d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned)(s[i] - 'A' + 10);
		else
			return false;
		if (__builtin_mul_overflow(x, base, &x) || __builtin_add_overflow(x, d, &x))
			return false;
	}
	*v = x;
	return true;
}

/* "SECONDS.FRACTION:" into ns; false if tok is not one. */
static bool parse_time(const char *t, size_t n, uint64_t *ns)
{
	const char *dot = memchr(t, '.', n);
	uint64_t sec, frac;
	size_t fl;

	if (n < 4 || t[n - 1] != ':' || !dot)
		return false;
	fl = (size_t)(t + n - 1 - (dot + 1));
	if (!fl || fl > 9 || !parse_u64(t, (size_t)(dot - t), 10, &sec) ||
	    !parse_u64(dot + 1, fl, 10, &frac) || sec > UINT64_MAX / 1000000000ull)
		return false;
	while (fl++ < 9)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return true;
}

/* Is tok PID or PID/TID (decimal)?  Sets *pid and *tid (= pid without a TID). */
static bool parse_pid_tid(const char *tok, size_t n, uint64_t *pid, uint64_t *tid)
{
	const char *slash = memchr(tok, '/', n);

	if (slash)
		return parse_u64(tok, (size_t)(slash - tok), 10, pid) &&
		       parse_u64(slash + 1, (size_t)(tok + n - slash - 1), 10, tid);
	if (!parse_u64(tok, n, 10, pid))
		return false;
	*tid = *pid;
	return true;
}

static bool is_cpu(const char *tok, size_t n)
{
	uint64_t cpu;

	return n >= 3 && tok[0] == '[' && tok[n - 1] == ']' && parse_u64(tok + 1, n - 2, 10, &cpu);
}

static bool is_hex(const char *tok, size_t n)
{
	uint64_t v;

	return parse_u64(tok, n, 16, &v);
}

/*
 * Parse a header line; false if line is not one.  The fields perf script
 * prints, in its order (tools/perf/builtin-script.c), any of them but COMM
 * and PID left out by -F:
 *	COMM PID[/TID] [CPU] TIME: [PERIOD] [EVENT:] [IP SYM (DSO)]
 * COMM may hold spaces, and is right-aligned in 16 columns when no
 * callchain follows.  The time token anchors the parse when present; else
 * PID is the first decimal token after COMM.  A decimal token after them is
 * the period unless what follows it is no event and no address (then it is
 * the sample's own address: "401136 main").
 */
static bool parse_header(const char *line, size_t len, struct ps_header *h)
{
	const char *tok[64];
	size_t toklen[64], ntok = 0, i, t;
	const char *p = line, *end = line + len;
	uint64_t pid, tid;

	memset(h, 0, sizeof(*h));
	if (!len || line[0] == '\t')
		return false; /* a callchain frame */
	while (p < end && ntok < 64) {
		while (p < end && is_space(*p))
			p++;
		if (p == end)
			break;
		tok[ntok] = p;
		while (p < end && !is_space(*p))
			p++;
		toklen[ntok] = (size_t)(p - tok[ntok]);
		ntok++;
	}
	for (t = 1; t < ntok; t++)
		if (parse_time(tok[t], toklen[t], &h->time_ns))
			break;
	if (t < ntok) {
		/* COMM... PID[/TID] [CPU]? TIME: */
		i = t - 1;
		if (is_cpu(tok[i], toklen[i]))
			i--;
		if (i == 0 || !parse_pid_tid(tok[i], toklen[i], &pid, &tid))
			return false;
		h->has_time = true;
		t++;
	} else {
		/* no time: COMM... PID[/TID] [CPU]? */
		for (i = 1; i < ntok && !parse_pid_tid(tok[i], toklen[i], &pid, &tid); i++)
			;
		if (i >= ntok)
			return false;
		t = i + 1;
		if (t < ntok && is_cpu(tok[t], toklen[t]))
			t++;
	}
	if (pid > UINT32_MAX || tid > UINT32_MAX)
		return false;
	h->pid = (uint32_t)pid;
	h->tid = (uint32_t)tid;
	h->comm = tok[0];
	h->comm_len = (size_t)(tok[i - 1] + toklen[i - 1] - tok[0]);
	/* [PERIOD] [EVENT:] [rest] */
	if (t < ntok && parse_u64(tok[t], toklen[t], 10, &h->period) &&
	    (t + 1 == ntok || tok[t + 1][toklen[t + 1] - 1] == ':' ||
	     is_hex(tok[t + 1], toklen[t + 1]))) {
		h->has_period = true;
		t++;
	} else {
		h->period = 0;
	}
	if (t < ntok && tok[t][toklen[t] - 1] == ':') {
		h->event = tok[t];
		h->event_len = (size_t)((const char *)memchr(tok[t], ':', toklen[t]) - tok[t]);
		if (!h->event_len)
			return false;
		t++;
	}
	h->rest = t < ntok ? tok[t] : end;
	h->rest_len = (size_t)(end - h->rest);
	while (h->rest_len && is_space(h->rest[h->rest_len - 1]))
		h->rest_len--;
	return true;
}

/* "IP SYM[+0xOFF] (DSO)" into a frame row of b; CAPTURE_NONE if not one. */
static uint32_t parse_frame(struct ps_state *st, const char *s, size_t n)
{
	struct capture_builder *b = st->b;
	struct capture_frame f = { .module = CAPTURE_NONE };
	const char *sp, *open, *sym, *sym_end, *plus;
	uint64_t ip;

	while (n && is_space(*s))
		s++, n--;
	while (n && is_space(s[n - 1]))
		n--;
	sp = memchr(s, ' ', n);
	if (!sp || !parse_u64(s, (size_t)(sp - s), 16, &ip))
		return CAPTURE_NONE;
	f.address = ip;
	sym = sp + 1;
	sym_end = s + n;
	/* the DSO: the last " (...)" */
	if (n && s[n - 1] == ')') {
		for (open = s + n - 1; open > sym && !(open[0] == '(' && open[-1] == ' '); open--)
			;
		if (open > sym) {
			struct capture_module m = { .kind = CAPTURE_MODULE_FILE };
			size_t dl = (size_t)(s + n - 1 - (open + 1));

			memcpy(st->tmp, open + 1, dl);
			st->tmp[dl] = '\0';
			if (!strncmp(st->tmp, "[kernel", 7)) {
				f.flags |= CAPTURE_FRAME_F_KERNEL;
				m.kind = CAPTURE_MODULE_KERNEL;
			} else if (!strcmp(st->tmp, "[vdso]")) {
				m.kind = CAPTURE_MODULE_VDSO;
			} else if (st->tmp[0] == '[') {
				m.kind = CAPTURE_MODULE_ANON;
			}
			if (strcmp(st->tmp, "[unknown]")) {
				m.path = capture_builder__string(b, m.kind == CAPTURE_MODULE_FILE ||
									   m.kind == CAPTURE_MODULE_VDSO
								   ? st->tmp
								   : "");
				f.module = perf_script__module(st, &m, st->tmp);
			}
			sym_end = open - 1;
		}
	}
	while (sym_end > sym && is_space(sym_end[-1]))
		sym_end--;
	/* drop "+0xOFF" */
	for (plus = sym_end; plus > sym && plus[-1] != '+'; plus--)
		;
	if (plus > sym && sym_end - plus > 2 && plus[0] == '0' && plus[1] == 'x')
		sym_end = plus - 1;
	memcpy(st->tmp, sym, (size_t)(sym_end - sym));
	st->tmp[sym_end - sym] = '\0';
	if (!strcmp(st->tmp, "[unknown]") || !st->tmp[0])
		f.flags |= CAPTURE_FRAME_F_UNSYMBOLIZED;
	else
		f.function = capture_builder__string(b, st->tmp);
	return capture_builder__add_frame(b, &f);
}

/* The thread row of (pid, tid), created with comm on first sight. */
static uint32_t ps_thread(struct ps_state *st, const struct ps_header *h)
{
	uint32_t mask, i;

	if ((uint64_t)(st->nthreads + 1) * 2 > st->threads_cap) {
		uint32_t ncap = st->threads_cap ? st->threads_cap * 2 : 256, j;
		struct ps_thread *nt;

		if (st->nthreads >= PERF_SCRIPT_MAX_THREADS)
			return CAPTURE_NONE;
		nt = malloc((size_t)ncap * sizeof(*nt));
		if (!nt) {
			st->err = -ENOMEM;
			return CAPTURE_NONE;
		}
		for (j = 0; j < ncap; j++)
			nt[j].row = CAPTURE_NONE;
		for (j = 0; j < st->threads_cap; j++) {
			if (st->threads[j].row == CAPTURE_NONE)
				continue;
			i = (st->threads[j].tid * 2654435761u) & (ncap - 1);
			while (nt[i].row != CAPTURE_NONE)
				i = (i + 1) & (ncap - 1);
			nt[i] = st->threads[j];
		}
		free(st->threads);
		st->threads = nt;
		st->threads_cap = ncap;
	}
	mask = st->threads_cap - 1;
	for (i = (h->tid * 2654435761u) & mask; st->threads[i].row != CAPTURE_NONE;
	     i = (i + 1) & mask)
		if (st->threads[i].tid == h->tid && st->threads[i].pid == h->pid)
			return st->threads[i].row;
	{
		struct capture_process p = { .pid = h->pid };
		struct capture_thread t = { .tid = h->tid };
		size_t n = h->comm_len < 255 ? h->comm_len : 255;

		memcpy(st->tmp, h->comm, n);
		st->tmp[n] = '\0';
		p.comm = t.comm = capture_builder__string(st->b, st->tmp);
		t.process = capture_builder__add_process(st->b, &p);
		st->threads[i] = (struct ps_thread){ .pid = h->pid, .tid = h->tid,
						     .row = capture_builder__add_thread(st->b, &t) };
		st->nthreads++;
		return st->threads[i].row;
	}
}

static uint32_t ps_event(struct ps_state *st, const struct ps_header *h)
{
	/* -F without "event": perf printed no name */
	const char *name = h->event_len ? h->event : PERF_SCRIPT_NO_EVENT;
	size_t n = h->event_len ? h->event_len : strlen(PERF_SCRIPT_NO_EVENT);
	uint32_t i;

	if (n > 63)
		n = 63;
	for (i = 0; i < st->nevents; i++)
		if (strlen(st->events[i].name) == n && !memcmp(st->events[i].name, name, n))
			break;
	if (i == st->nevents) {
		if (st->nevents == PERF_SCRIPT_MAX_EVENTS)
			return CAPTURE_NONE;
		memcpy(st->events[i].name, name, n);
		st->events[i].name[n] = '\0';
		st->events[i].period = h->period;
		st->nevents++;
	} else if (st->events[i].period != h->period) {
		st->events[i].varies = true;
	}
	return i;
}

/* Close the current sample: its frames (innermost first) become a stack. */
static int ps_finish(struct ps_state *st, struct ps_sample *cur)
{
	uint32_t stack = CAPTURE_NONE, i;

	if (!cur)
		return 0;
	for (i = st->nframes; i-- > 0;)
		stack = capture_builder__add_stack(st->b, stack, st->frames[i]);
	if (st->nframes && stack == CAPTURE_NONE)
		return -ENOMEM;
	cur->stack = stack;
	st->nframes = 0;
	st->deep += st->cut;
	st->cut = false;
	return 0;
}

/* Is line (n bytes) a callchain frame perf script prints: TAB, spaces, IP, SYM? */
static bool is_frame_line(const char *line, size_t n)
{
	size_t i = 1, start;

	if (!n || line[0] != '\t')
		return false;
	while (i < n && line[i] == ' ')
		i++;
	for (start = i; i < n && !is_space(line[i]); i++)
		;
	return i > start && i < n && line[i] == ' ' && is_hex(line + start, i - start);
}

/* Does the sample's own "IP SYM" follow the header's fields? */
static bool rest_is_frame(const struct ps_header *h)
{
	const char *sp = memchr(h->rest, ' ', h->rest_len);

	return sp && sp + 1 < h->rest + h->rest_len && is_hex(h->rest, (size_t)(sp - h->rest));
}

/*
 * The first line that is neither blank nor a '#' comment must be a header.
 * One with a time or an event is perf script's; one without them (-F
 * comm,tid,ip,sym) could be a folded line ("comm 21799" = a frame and a
 * count), so it needs its own "IP SYM" (no callchain), or a callchain frame
 * line (TAB, address, symbol) after it and only such headers before that
 * frame, within the first PERF_SCRIPT_DETECT_LINES lines.
 */
bool perf_script__detect(const void *buf, size_t len)
{
	const char *p = buf, *end = p + len;
	struct ps_header h;
	bool header = false;
	unsigned seen = 0;

	while (p < end && seen < PERF_SCRIPT_DETECT_LINES) {
		const char *line = p, *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t n;

		if (le > line && le[-1] == '\r')
			le--;
		n = (size_t)(le - line);
		p = nl ? nl + 1 : end;
		if (!n || line[0] == '#')
			continue;
		seen++;
		if (n >= PERF_SCRIPT_MAX_LINE)
			return false;
		if (is_frame_line(line, n))
			return header;
		if (!parse_header(line, n, &h))
			return false;
		if (h.has_time || h.event_len || rest_is_frame(&h))
			return true;
		header = true;
	}
	return false;
}

int perf_script__import(const void *buf, size_t len, struct capture_builder *b,
			struct formats_note *note, char *errbuf, size_t errlen)
{
	const char *text = buf, *end = text + len, *line = text;
	struct ps_state st = { .b = b };
	struct ps_sample *cur = NULL;
	uint64_t lineno = 0;
	uint32_t ev_rows[PERF_SCRIPT_MAX_EVENTS], i;
	struct import_budget ib;
	int err = 0;

	import_budget__init(&ib, b, len, len, CAPTURE_LIMIT_TEXT_MEMORY_K, len, errbuf, errlen);
	if (memchr(text, '\0', len)) {
		snprintf(errbuf, errlen, "binary data (a NUL byte at offset %zu): not perf script "
			 "text (perf.data itself is not read: run `perf script` on it)",
			 (size_t)((const char *)memchr(text, '\0', len) - text));
		return -EBADMSG;
	}
	st.tmp = malloc(PERF_SCRIPT_MAX_LINE + 1);
	st.frames = malloc(PERF_SCRIPT_MAX_DEPTH * sizeof(*st.frames));
	if (!st.tmp || !st.frames) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		struct ps_header h;
		size_t n;

		lineno++;
		if (le > line && le[-1] == '\r')
			le--;
		n = (size_t)(le - line);
		if (n >= PERF_SCRIPT_MAX_LINE) {
			snprintf(errbuf, errlen, "line %" PRIu64 " is %zu bytes long, over the "
				 "%d-byte limit", lineno, n, PERF_SCRIPT_MAX_LINE);
			err = -EBADMSG;
			goto cleanup;
		}
		if (!n || line[0] == '#') {
			/* blank: a sample's end */
		} else if (!is_space(line[0]) || (line[0] == ' ' && parse_header(line, n, &h))) {
			/* a header; padded with spaces when no callchain follows */
			if (!parse_header(line, n, &h)) {
				if (!st.nsamples) {
					snprintf(errbuf, errlen, "not perf script output: line %" PRIu64
						 " is not \"COMM PID[/TID] [CPU] TIME: [PERIOD] "
						 "EVENT:\"", lineno);
					err = -EBADMSG;
					goto cleanup;
				}
				st.bad_lines++;
			} else {
				uint32_t thread, event;

				/* the bounds of capture/limits.h (a stack costs its frames) */
				if ((err = import_budget__spend(&ib, st.nframes + 1)) ||
				    (err = ps_finish(&st, cur)))
					goto cleanup;
				thread = ps_thread(&st, &h);
				event = ps_event(&st, &h);
				if (st.err) {
					err = st.err;
					goto cleanup;
				}
				if (event == CAPTURE_NONE) {
					snprintf(errbuf, errlen, "more than %d event names (line %" PRIu64
						 ")", PERF_SCRIPT_MAX_EVENTS, lineno);
					err = -EBADMSG;
					goto cleanup;
				}
				if (st.nsamples == st.samples_cap) {
					size_t ncap = st.samples_cap ? st.samples_cap * 2 : 1024;
					struct ps_sample *ns = realloc(st.samples,
								       ncap * sizeof(*ns));

					if (!ns) {
						err = -ENOMEM;
						goto cleanup;
					}
					st.samples = ns;
					st.samples_cap = ncap;
				}
				cur = &st.samples[st.nsamples++];
				*cur = (struct ps_sample){ .time_ns = h.time_ns, .period = h.period,
							   .thread = thread, .event = event };
				/* no callchain: the sample's own "IP SYM (DSO)" */
				if (h.rest_len) {
					uint32_t f = parse_frame(&st, h.rest, h.rest_len);

					if (f != CAPTURE_NONE)
						st.frames[st.nframes++] = f;
				}
			}
		} else if (cur) {
			uint32_t f = parse_frame(&st, line, n);

			if (f == CAPTURE_NONE)
				st.bad_frames++;
			else if (st.nframes == PERF_SCRIPT_MAX_DEPTH)
				st.cut = true;
			else
				st.frames[st.nframes++] = f;
		} else {
			st.bad_lines++;
		}
		if (st.err) {
			err = st.err;
			goto cleanup;
		}
		line = nl ? nl + 1 : end;
	}
	if ((err = import_budget__spend(&ib, st.nframes + 1)) || (err = ps_finish(&st, cur)) ||
	    (err = import_budget__memory(&ib)))
		goto cleanup;
	if (!st.nsamples && len) {
		snprintf(errbuf, errlen, "not perf script output: no sample header");
		err = -EBADMSG;
		goto cleanup;
	}
	/* A constant period: samples of weight 1 and that period (as our own
	 * recordings); a varying one: weights are periods, in the event's units. */
	for (i = 0; i < st.nevents; i++) {
		struct ps_event *e = &st.events[i];
		struct capture_event row = {
			.name = capture_builder__string(b, e->name),
			.unit = capture_builder__string(b, e->varies ? "events" : "samples"),
			.period = e->varies ? 1 : e->period,
		};

		ev_rows[i] = capture_builder__add_event(b, &row);
	}
	for (size_t k = 0; k < st.nsamples; k++) {
		const struct ps_sample *s = &st.samples[k];

		capture_builder__add_sample(b, &(struct capture_sample){
			.time_ns = s->time_ns,
			.thread = s->thread,
			.cpu = CAPTURE_NONE,
			.stack = s->stack,
			.event = ev_rows[s->event],
			.weight = st.events[s->event].varies ? s->period : 1,
		});
	}
	capture_builder__set_meta(b, "source.format", "perf-script");
	formats_note__add(note, "perf script text has no build IDs, mappings or inline frames: "
			  "frames keyed by symbol, DSO path and the address perf printed");
	if (st.deep) {
		capture_builder__add_counter(b, "perf_script.deep_stacks", st.deep);
		formats_note__add(note, "%" PRIu64 " stacks cut at %d frames", st.deep,
				  PERF_SCRIPT_MAX_DEPTH);
	}
	if (st.bad_frames || st.bad_lines) {
		capture_builder__add_counter(b, "perf_script.skipped_frames", st.bad_frames);
		capture_builder__add_counter(b, "perf_script.skipped_lines", st.bad_lines);
		formats_note__add(note, "skipped %" PRIu64 " unparsable frame line%s and %" PRIu64
				  " other line%s", st.bad_frames, st.bad_frames == 1 ? "" : "s",
				  st.bad_lines, st.bad_lines == 1 ? "" : "s");
	}
cleanup:
	free(st.tmp);
	free(st.frames);
	free(st.samples);
	free(st.threads);
	free(st.module_of);
	return err;
}
