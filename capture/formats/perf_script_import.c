// SPDX-License-Identifier: MIT
/*
 * `perf script` text importer: the output of plain `perf script` and of
 * `perf script -F` with any subset of comm,pid,tid,cpu,time,period,event,
 * addr,ip,sym,symoff,dso (and fields that do not change the profile), with
 * or without callchains, into capture rows.  A sample is a header line of
 * the fields (parsed in perf_script_line.c, by perf's order and printf
 * widths) followed by indented frame lines, innermost first,
 *	TAB IP SYM[+0xOFF] (DSO)
 * and a blank line; without a callchain the header holds the sample's own
 * "IP SYM (DSO)"; with -F ip,sym the header is empty.  Frames are keyed
 * by (symbol, DSO, address as perf printed it); a DSO becomes a module by
 * path (perf script prints no build ID), "[kernel.kallsyms]" the kernel.
 * Strict: every header of an event has the fields of its first, and what
 * cannot be read is an error naming the line.  Policy limits are below.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"
#include "capture/formats/perf_script_line.h"
#include "capture/limits.h"

/* Limits on untrusted input (policy, stated once). */
#define PERF_SCRIPT_MAX_LINE 65536	 /* bytes per line; longer lines are an error */
#define PERF_SCRIPT_MAX_DEPTH 1024	 /* frames kept per sample; the rest counted */
#define PERF_SCRIPT_MAX_EVENTS 64	 /* distinct event names */
#define PERF_SCRIPT_MAX_THREADS (1u << 20) /* distinct (pid, tid) */
#define PERF_SCRIPT_NO_EVENT "samples"	 /* the event's name when -F left it out */

struct ps_event {
	char name[64];
	uint64_t period; /* the first period seen */
	bool varies;	 /* periods differ: weights become periods */
	unsigned shape;	 /* its first header's fields (enum ps_field) */
	uint64_t shape_line;
};

struct ps_sample {
	uint64_t time_ns;
	uint64_t period;
	uint32_t thread, stack, event;
};

struct ps_thread {
	uint32_t pid, tid, comm, row; /* comm: string id, the key when perf printed no PID/TID */
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
	uint64_t nul_lines; /* lines with a NUL byte, skipped */
	uint64_t records; /* PERF_RECORD_* lines (--show-*-events), skipped */
	bool cut; /* the current sample lost frames past the depth limit */
	const char *own_ip; /* the current sample's "IP SYM (DSO)" on its header line */
	size_t own_ip_len;
	uint64_t nframes_all; /* frames of all samples */
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
	if (!sp)
		sp = s + n; /* -F ip: no symbol */
	if (!ps__parse_u64(s, (size_t)(sp - s), 16, &ip))
		return CAPTURE_NONE;
	f.address = ip;
	sym = sp < s + n ? sp + 1 : sp;
	sym_end = s + n;
	/* the DSO: the last " (...)" (right after the IP when -F has no sym) */
	if (sym < s + n && s[n - 1] == ')') {
		for (open = s + n - 1; open > sym && !(open[0] == '(' && open[-1] == ' '); open--)
			;
		if (open > sym || (open == sym && open[0] == '(')) {
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
			sym_end = open > sym ? open - 1 : sym;
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

/*
 * The thread row of (pid, tid), created with comm on first sight; of the
 * comm when perf printed no PID or TID (one thread per name, tid 0);
 * CAPTURE_NONE when it printed neither (st->err says if that is an error).
 */
static uint32_t ps_thread(struct ps_state *st, const struct ps_header *h)
{
	uint32_t mask, i, comm = 0, key;
	bool by_comm = !(h->fields & PS_F_TID);

	if (!(h->fields & (PS_F_TID | PS_F_COMM)))
		return CAPTURE_NONE;
	if (by_comm) {
		size_t n = h->comm_len < 255 ? h->comm_len : 255;

		memcpy(st->tmp, h->comm, n);
		st->tmp[n] = '\0';
		comm = capture_builder__string(st->b, st->tmp);
		if (comm == CAPTURE_NONE) {
			st->err = -ENOMEM;
			return CAPTURE_NONE;
		}
	}
	key = h->tid ^ comm;

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
			i = ((st->threads[j].tid ^ st->threads[j].comm) * 2654435761u) &
			    (ncap - 1);
			while (nt[i].row != CAPTURE_NONE)
				i = (i + 1) & (ncap - 1);
			nt[i] = st->threads[j];
		}
		free(st->threads);
		st->threads = nt;
		st->threads_cap = ncap;
	}
	mask = st->threads_cap - 1;
	for (i = (key * 2654435761u) & mask; st->threads[i].row != CAPTURE_NONE;
	     i = (i + 1) & mask)
		if (st->threads[i].tid == h->tid && st->threads[i].pid == h->pid &&
		    st->threads[i].comm == comm)
			return st->threads[i].row;
	{
		struct capture_process p = { .pid = h->pid };
		struct capture_thread t = { .tid = h->tid };
		size_t n = h->comm_len < 255 ? h->comm_len : 255;

		if (n) /* -F tid,...: no COMM */
			memcpy(st->tmp, h->comm, n);
		st->tmp[n] = '\0';
		p.comm = t.comm = capture_builder__string(st->b, st->tmp);
		t.process = capture_builder__add_process(st->b, &p);
		st->threads[i] = (struct ps_thread){ .pid = h->pid, .tid = h->tid, .comm = comm,
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
	/* no callchain followed: the header's own "IP SYM (DSO)" */
	if (!st->nframes && st->own_ip) {
		uint32_t f = parse_frame(st, st->own_ip, st->own_ip_len);

		if (f == CAPTURE_NONE)
			st->bad_frames++;
		else
			st->frames[st->nframes++] = f;
	}
	st->own_ip = NULL;
	st->nframes_all += st->nframes;
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

/* Quote line[len] for a message into out[outlen]: trimmed, at most 48 bytes, TAB as \t. */
static void ps_quote(const char *line, size_t len, char *out, size_t outlen)
{
	size_t i, o = 0;

	if (outlen < 16)
		return;
	while (len && is_space(line[len - 1]))
		len--; /* perf ends headers with a space */
	out[o++] = '"';
	for (i = 0; i < len && i < 48 && o + 8 < outlen; i++) {
		if (line[i] == '\t') {
			out[o++] = '\\';
			out[o++] = 't';
		} else {
			out[o++] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
		}
	}
	snprintf(out + o, outlen - o, "%s\"", i < len ? "..." : "");
}

/* Start a sample of header h (NULL: a callchain with no header line, -F ip,sym). */
static struct ps_sample *ps_start(struct ps_state *st, const struct ps_header *h, uint32_t event)
{
	struct ps_sample *cur;
	uint32_t thread = h ? ps_thread(st, h) : CAPTURE_NONE;

	if (st->err)
		return NULL;
	if (st->nsamples == st->samples_cap) {
		size_t ncap = st->samples_cap ? st->samples_cap * 2 : 1024;
		struct ps_sample *ns = realloc(st->samples, ncap * sizeof(*ns));

		if (!ns) {
			st->err = -ENOMEM;
			return NULL;
		}
		st->samples = ns;
		st->samples_cap = ncap;
	}
	cur = &st->samples[st->nsamples++];
	*cur = (struct ps_sample){ .time_ns = h ? h->time_ns : 0, .period = h ? h->period : 0,
				   .thread = thread, .event = event, .stack = CAPTURE_NONE };
	st->own_ip = h ? h->ip : NULL;
	st->own_ip_len = h ? h->ip_len : 0;
	return cur;
}

#define PS_BINARY_HEAD 4096 /* bytes looked at to tell binary data from damaged text */

#define PERF_DATA_MSG                                                                      \
	"this looks like perf.data (perf record's binary file), not perf script text: run " \
	"`perf script -i FILE > FILE.txt` first and convert that"

bool perf_script__is_perf_data(const void *buf, size_t len)
{
	/* perf's header magic: "PERFILE2" (tools/perf/util/header.c), or
	 * the older "PERFFILE" */
	return len >= 8 && (!memcmp(buf, "PERFILE2", 8) || !memcmp(buf, "PERFFILE", 8));
}

/*
 * Binary data, not text with a damaged line: 4 NUL bytes or more, over one in 64
 * of the first PS_BINARY_HEAD bytes (text has none; ELF files, perf.data
 * and compressed data many).
 */
static bool ps_binary(const char *text, size_t len)
{
	size_t n = len < PS_BINARY_HEAD ? len : PS_BINARY_HEAD, nul = 0, i;

	for (i = 0; i < n; i++)
		nul += !text[i];
	return nul >= 4 && nul * 64 > n;
}

#define PS_EXPECTED                                                                      \
	"a perf script sample header ([COMM] [PID/TID] [[CPU]] [TIME:] [PERIOD] [EVENT:] " \
	"[ADDR] [IP SYM (DSO)]) or callchain line (TAB IP SYM (DSO))"

int perf_script__import(const void *buf, size_t len, struct capture_builder *b,
			struct formats_note *note, char *errbuf, size_t errlen)
{
	const char *text = buf, *end = text + len, *line = text;
	struct ps_state st = { .b = b };
	struct ps_sample *cur = NULL;
	uint64_t lineno = 0, first_line = 0, content = 0;
	uint32_t ev_rows[PERF_SCRIPT_MAX_EVENTS], i;
	bool open = false, chain = false, headerless = false, orphan = false;
	const char *first = NULL;
	size_t first_len = 0;
	struct import_budget ib;
	char q[80], s1[96], s2[96];
	int err = 0;

	import_budget__init(&ib, b, len, len, CAPTURE_LIMIT_TEXT_MEMORY_K, len, errbuf, errlen);
	if (perf_script__is_perf_data(text, len)) {
		snprintf(errbuf, errlen, PERF_DATA_MSG);
		return -EBADMSG;
	}
	if (ps_binary(text, len)) {
		snprintf(errbuf, errlen, "binary data (NUL bytes in its first %d): not perf script "
			 "text", PS_BINARY_HEAD);
		return -EBADMSG;
	}
	st.tmp = malloc(PERF_SCRIPT_MAX_LINE + 1);
	st.frames = malloc(PERF_SCRIPT_MAX_DEPTH * sizeof(*st.frames));
	if (!st.tmp || !st.frames) {
		err = -ENOMEM;
		goto cleanup;
	}
	/*
	 * A sample: a header line, then (with a callchain) its frame lines and
	 * a blank line.  With -F ip,sym the header is empty: a sample is a run
	 * of frame lines.  Without a callchain every line is a header.  Lines
	 * after a sample's frames and before its blank line (srcline, iregs)
	 * are skipped and counted.
	 */
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
		if (memchr(line, '\0', n)) {
			/* A damaged line in text: skipped and counted.  Lost, a
			 * sample header takes its callchain lines with it. */
			st.nul_lines++;
			orphan = !open && !headerless;
			line = nl ? nl + 1 : end;
			continue;
		}
		if (orphan && n && ps_line__is_frame(line, n)) {
			st.bad_lines++; /* a frame of the sample whose header was damaged */
			line = nl ? nl + 1 : end;
			continue;
		}
		orphan = false;
		if (n && line[0] == '#') {
			/* perf script --header comments */
		} else if (!n || !ps_header__parse(line, n, &h)) {
			if (ps_line__is_frame(line, n)) {
				uint32_t f;

				if (!content++)
					headerless = true;
				if (!open && !headerless) {
					ps_quote(line, n, q, sizeof(q));
					snprintf(errbuf, errlen, "line %" PRIu64 " %s: a callchain line "
						 "with no sample header before it (expected %s)",
						 lineno, q, PS_EXPECTED);
					err = -EBADMSG;
					goto cleanup;
				}
				if (!open) {
					if ((err = import_budget__spend(&ib, st.nframes + 1)) ||
					    (err = ps_finish(&st, cur)))
						goto cleanup;
					memset(&h, 0, sizeof(h)); /* no header: no event name */
					cur = ps_start(&st, NULL, ps_event(&st, &h));
					if (!cur) {
						err = st.err;
						goto cleanup;
					}
					open = true;
				}
				chain = true;
				f = parse_frame(&st, line, n);
				if (f == CAPTURE_NONE)
					st.bad_frames++;
				else if (st.nframes == PERF_SCRIPT_MAX_DEPTH)
					st.cut = true;
				else
					st.frames[st.nframes++] = f;
			} else if (n && chain) {
				st.bad_lines++; /* a TAB-led line in a callchain that is no frame */
			} else if (n) {
				ps_quote(line, n, q, sizeof(q));
				snprintf(errbuf, errlen, "line %" PRIu64 " %s: not perf script output "
					 "(expected %s)", lineno, q, PS_EXPECTED);
				err = -EBADMSG;
				goto cleanup;
			} else {
				/* blank: a sample's end */
				open = chain = false;
			}
		} else if (chain) {
			st.bad_lines++; /* srcline, iregs and such after a callchain */
		} else if ((h.rest && !strncmp(h.rest, "PERF_RECORD_", 12)) ||
			   (h.event_len >= 12 && !strncmp(h.event, "PERF_RECORD_", 12))) {
			st.records++; /* --show-mmap-events and the like: no sample */
		} else if (headerless) {
			ps_quote(line, n, q, sizeof(q));
			snprintf(errbuf, errlen, "line %" PRIu64 " %s: a sample header in output "
				 "whose samples have none (line %" PRIu64 " is a callchain line "
				 "without one): not one perf script output", lineno, q, first_line);
			err = -EBADMSG;
			goto cleanup;
		} else {
			uint32_t event;

			if (!content++) {
				first = line;
				first_len = n;
				first_line = lineno;
			}
			/* the bounds of capture/limits.h (a stack costs its frames) */
			if ((err = import_budget__spend(&ib, st.nframes + 1)) ||
			    (err = ps_finish(&st, cur)))
				goto cleanup;
			event = ps_event(&st, &h);
			if (event == CAPTURE_NONE) {
				snprintf(errbuf, errlen, "more than %d event names (line %" PRIu64 ")",
					 PERF_SCRIPT_MAX_EVENTS, lineno);
				err = -EBADMSG;
				goto cleanup;
			}
			/* every header of one event has the fields of its first */
			if (!st.events[event].shape_line) {
				st.events[event].shape = h.fields;
				st.events[event].shape_line = lineno;
			} else if (st.events[event].shape != h.fields) {
				ps_quote(line, n, q, sizeof(q));
				ps_shape__name(h.fields, s1, sizeof(s1));
				ps_shape__name(st.events[event].shape, s2, sizeof(s2));
				snprintf(errbuf, errlen, "line %" PRIu64 " %s: a sample header of "
					 "fields %s where line %" PRIu64 "'s has %s: not one perf "
					 "script output (expected %s)", lineno, q, s1,
					 st.events[event].shape_line, s2, PS_EXPECTED);
				err = -EBADMSG;
				goto cleanup;
			}
			cur = ps_start(&st, &h, event);
			if (!cur) {
				err = st.err;
				goto cleanup;
			}
			open = true;
		}
		if (st.err) {
			err = st.err;
			goto cleanup;
		}
		if (headerless && !first_line)
			first_line = lineno;
		line = nl ? nl + 1 : end;
	}
	if ((err = import_budget__spend(&ib, st.nframes + 1)) || (err = ps_finish(&st, cur)) ||
	    (err = import_budget__memory(&ib)))
		goto cleanup;
	if (st.nsamples && !st.nframes_all) {
		/* headers only: no instruction pointer anywhere */
		ps_quote(first, first_len, q, sizeof(q));
		ps_shape__name(st.events[st.samples[0].event].shape, s1, sizeof(s1));
		if (st.events[st.samples[0].event].shape & ~(unsigned)PS_F_COMM)
			snprintf(errbuf, errlen, "line %" PRIu64 " %s: perf script samples "
				 "(fields %s) without an instruction pointer: no stack in any "
				 "of the %zu samples (run perf script with -F ...,ip,sym,dso)",
				 first_line, q, s1, st.nsamples);
		else
			snprintf(errbuf, errlen, "line %" PRIu64 " %s: not perf script output "
				 "(expected %s)", first_line, q, PS_EXPECTED);
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
	if (!st.nsamples)
		formats_note__add(note, "the input has no sample (%s): the capture is empty; "
				  "perf script prints nothing for a perf.data without samples "
				  "or when it fails (see its stderr)",
				  len ? "only blank and comment lines" : "0 bytes");
	else
		formats_note__add(note, "perf script text has no build IDs, mappings or inline "
				  "frames: frames keyed by symbol, DSO path and the address perf "
				  "printed");
	if (st.deep) {
		capture_builder__add_counter(b, "perf_script.deep_stacks", st.deep);
		formats_note__add(note, "%" PRIu64 " stacks cut at %d frames", st.deep,
				  PERF_SCRIPT_MAX_DEPTH);
	}
	if (st.records) {
		capture_builder__add_counter(b, "perf_script.skipped_records", st.records);
		formats_note__add(note, "skipped %" PRIu64 " PERF_RECORD_* line%s (not samples)",
				  st.records, st.records == 1 ? "" : "s");
	}
	if (st.nul_lines) {
		capture_builder__add_counter(b, "perf_script.nul_lines", st.nul_lines);
		formats_note__add(note, "skipped %" PRIu64 " line%s with a NUL byte (damaged text)",
				  st.nul_lines, st.nul_lines == 1 ? "" : "s");
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
