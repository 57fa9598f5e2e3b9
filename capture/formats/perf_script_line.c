// SPDX-License-Identifier: MIT
/*
 * `perf script` lines: the header parse by field order and printf width
 * (see perf_script_line.h), the callchain line test, and content detection
 * (perf_script__detect, formats.h).
 */
#include <string.h>

#include "capture/formats/formats.h"
#include "capture/formats/perf_script_line.h"

#define PS_MAX_TOKENS 64	   /* header tokens looked at; COMM takes the excess */
#define PS_DETECT_LINES 64	   /* lines content detection looks at */
#define PS_DETECT_MAX_LINE 65536   /* a longer line is no perf script line */

struct ps_tok {
	const char *s;
	size_t n;
	size_t fw; /* the field's printed width: its end minus the previous token's end, minus 1 */
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

bool ps__parse_u64(const char *s, size_t n, unsigned base, uint64_t *v)
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
static bool parse_time(const struct ps_tok *t, uint64_t *ns)
{
	const char *dot = memchr(t->s, '.', t->n);
	uint64_t sec, frac;
	size_t fl;

	if (t->n < 4 || t->s[t->n - 1] != ':' || !dot)
		return false;
	fl = (size_t)(t->s + t->n - 1 - (dot + 1));
	if (!fl || fl > 9 || !ps__parse_u64(t->s, (size_t)(dot - t->s), 10, &sec) ||
	    !ps__parse_u64(dot + 1, fl, 10, &frac) || sec > UINT64_MAX / 1000000000ull)
		return false;
	while (fl++ < 9)
		frac *= 10;
	*ns = sec * 1000000000ull + frac;
	return true;
}

/* PID/TID ("%5d/%-5d"). */
static bool parse_pid_tid(const struct ps_tok *t, uint64_t *pid, uint64_t *tid)
{
	const char *slash = memchr(t->s, '/', t->n);

	if (!slash)
		return false;
	return ps__parse_u64(t->s, (size_t)(slash - t->s), 10, pid) &&
	       ps__parse_u64(slash + 1, (size_t)(t->s + t->n - slash - 1), 10, tid) &&
	       *pid <= UINT32_MAX && *tid <= UINT32_MAX;
}

/* A lone PID or TID: "%5d" (perf >= 6.2 "%7d"), at most 7 digits (pid_max <= 2^22). */
static bool parse_lone_id(const struct ps_tok *t, uint64_t *id)
{
	return t->fw >= 5 && t->fw <= 7 && ps__parse_u64(t->s, t->n, 10, id);
}

static bool is_cpu(const struct ps_tok *t)
{
	uint64_t cpu;

	return t->n >= 3 && t->s[0] == '[' && t->s[t->n - 1] == ']' &&
	       ps__parse_u64(t->s + 1, t->n - 2, 10, &cpu);
}

/* "%10" PRIu64: 10 columns, or the digits themselves when more. */
static bool parse_period(const struct ps_tok *t, uint64_t *v)
{
	return (t->fw == 10 || (t->n > 10 && t->fw == t->n)) && ps__parse_u64(t->s, t->n, 10, v);
}

/* "NAME:" (perf's "%*s: "): ends with ':', has a character no number has. */
static bool is_event(const struct ps_tok *t)
{
	size_t i;

	if (t->n < 2 || t->s[t->n - 1] != ':' || t->s[0] == ':')
		return false;
	for (i = 0; i + 1 < t->n; i++)
		if ((t->s[i] < '0' || t->s[i] > '9') && t->s[i] != '.')
			return true;
	return false;
}

static bool is_hex_width(const struct ps_tok *t, size_t fw)
{
	uint64_t v;

	return t->fw == fw && t->n <= 16 && ps__parse_u64(t->s, t->n, 16, &v);
}

/* Could t start the fields after COMM? */
static bool is_field(const struct ps_tok *t)
{
	uint64_t a, b;

	return parse_pid_tid(t, &a, &b) || parse_lone_id(t, &a) || is_cpu(t) ||
	       parse_time(t, &a) || parse_period(t, &a) || is_event(t) || is_hex_width(t, 16) ||
	       is_hex_width(t, 17);
}

bool ps_header__parse(const char *line, size_t len, struct ps_header *h)
{
	struct ps_tok tok[PS_MAX_TOKENS];
	const char *p = line, *end = line + len, *prev_end = line - 1;
	size_t ntok = 0, k, t;
	uint64_t a, b;

	memset(h, 0, sizeof(*h));
	while (len && is_space(line[len - 1]))
		len--;
	end = line + len;
	if (!len || line[0] == '\t')
		return false;
	while (p < end && ntok < PS_MAX_TOKENS) {
		while (p < end && is_space(*p))
			p++;
		if (p == end)
			break;
		tok[ntok].s = p;
		while (p < end && !is_space(*p))
			p++;
		tok[ntok].n = (size_t)(p - tok[ntok].s);
		tok[ntok].fw = (size_t)(p - prev_end) - 1;
		prev_end = p;
		ntok++;
	}
	/* "%5d/%-5d ": the TID is left-aligned, its padding belongs to it (the
	 * PID's right-aligned padding tells the width: 5, or 7 in perf >= 6.2) */
	for (k = 1; k < ntok; k++) {
		const char *slash = memchr(tok[k - 1].s, '/', tok[k - 1].n);
		size_t width, tail, pad;

		if (!parse_pid_tid(&tok[k - 1], &a, &b))
			continue;
		width = (tok[k - 1].fw - tok[k - 1].n) + (size_t)(slash - tok[k - 1].s);
		tail = (size_t)(tok[k - 1].s + tok[k - 1].n - slash - 1);
		pad = width > tail ? width - tail : 0;
		if (tok[k].fw >= tok[k].n + pad)
			tok[k].fw -= pad;
	}
	/* COMM: the tokens before the first field (a COMM that reads as a
	 * number is taken for one; one ending in ':' is a COMM when a PID/TID
	 * follows, as no event name is followed by one) */
	for (k = 0; k < ntok; k++) {
		if (!is_field(&tok[k]))
			continue;
		if (k + 1 < ntok && is_event(&tok[k]) &&
		    (parse_pid_tid(&tok[k + 1], &a, &b) || parse_lone_id(&tok[k + 1], &a)))
			continue;
		break;
	}
	if (k) {
		h->fields |= PS_F_COMM;
		h->comm = tok[0].s;
		h->comm_len = (size_t)(tok[k - 1].s + tok[k - 1].n - tok[0].s);
	}
	t = k;
	if (t < ntok && parse_pid_tid(&tok[t], &a, &b)) {
		h->fields |= PS_F_PID | PS_F_TID;
		h->pid = (uint32_t)a;
		h->tid = (uint32_t)b;
		t++;
	} else if (t < ntok && parse_lone_id(&tok[t], &a) && a <= UINT32_MAX) {
		/* -F pid or -F tid alone: a thread id either way */
		h->fields |= PS_F_TID;
		h->pid = h->tid = (uint32_t)a;
		t++;
	}
	if (t < ntok && is_cpu(&tok[t])) {
		h->fields |= PS_F_CPU;
		t++;
	}
	if (t < ntok && parse_time(&tok[t], &h->time_ns)) {
		h->fields |= PS_F_TIME;
		t++;
	}
	if (t < ntok && parse_period(&tok[t], &h->period)) {
		h->fields |= PS_F_PERIOD;
		t++;
	}
	if (t < ntok && is_event(&tok[t])) {
		h->fields |= PS_F_EVENT;
		h->event = tok[t].s;
		h->event_len = (size_t)((const char *)memchr(tok[t].s, ':', tok[t].n) - tok[t].s);
		t++;
	}
	if (t < ntok && is_hex_width(&tok[t], 16)) {
		h->fields |= PS_F_ADDR;
		t++;
	}
	/* the sample's own IP: 17 columns after a field ending in a space, 16 after ADDR */
	if (t < ntok && is_hex_width(&tok[t], h->fields & PS_F_ADDR ? 16 : 17)) {
		h->ip = tok[t].s;
		h->ip_len = (size_t)(end - tok[t].s);
	} else if (t < ntok) {
		h->extra = true;
		h->rest = tok[t].s;
	}
	/* anything else after the fields (weight, data_src, a tracepoint's
	 * text) is not part of the profile */
	return true;
}

bool ps_line__is_frame(const char *line, size_t n)
{
	size_t i = 1, start;
	uint64_t v;

	if (!n || line[0] != '\t')
		return false;
	while (i < n && line[i] == ' ')
		i++;
	for (start = i; i < n && !is_space(line[i]); i++)
		;
	return i > start && (i == n || line[i] == ' ') && i - start <= 16 &&
	       ps__parse_u64(line + start, i - start, 16, &v);
}

bool ps_header__is_distinct(const struct ps_header *h)
{
	return (h->fields & (PS_F_TIME | PS_F_CPU)) || h->ip ||
	       ((h->fields & PS_F_EVENT) && !h->extra);
}

void ps_shape__name(unsigned shape, char *buf, size_t size)
{
	static const char *const names[] = { "comm", "pid", "tid", "cpu", "time",
					     "period", "event", "addr" };
	size_t used = 0, i;

	if (size)
		buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]) && used < size; i++) {
		if (!(shape & (1u << i)) || ((1u << i) == PS_F_TID && (shape & PS_F_PID)))
			continue;
		used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "," : "",
					 (1u << i) == PS_F_PID ? "pid/tid" : names[i]);
	}
	if (!used && size)
		snprintf(buf, size, "no field");
}

/*
 * Content detection.  A first line that is neither blank nor a '#' comment
 * that is a callchain line (-F ip,sym: the header is empty) is perf
 * script's.  A header with a time, event, CPU or its own IP is perf
 * script's.  A header of COMM, PID/TID and period only could be a folded
 * line ("comm 21799" = a frame and a count), so it needs a callchain line
 * after it (headers only before that), or a first field that perf
 * right-aligned (the line starts with a space) where a folded line starts
 * with a frame name; all within the first PS_DETECT_LINES lines.
 */
bool perf_script__detect(const void *buf, size_t len)
{
	const char *p = buf, *end = p + len;
	struct ps_header h;
	bool header = false;
	unsigned seen = 0;

	while (p < end && seen < PS_DETECT_LINES) {
		const char *line = p, *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		size_t n;

		if (le > line && le[-1] == '\r')
			le--;
		n = (size_t)(le - line);
		p = nl ? nl + 1 : end;
		if (!n || line[0] == '#' || memchr(line, '\0', n) ||
		    (!ps_header__parse(line, n, &h) && line[0] != '\t'))
			continue; /* blank, comment, spaces only, damaged (the importer skips it) */
		seen++;
		if (n >= PS_DETECT_MAX_LINE)
			return false;
		if (ps_line__is_frame(line, n))
			return header || seen == 1;
		if (line[0] == '\t')
			return false;
		if (ps_header__is_distinct(&h))
			return true;
		if (line[0] == ' ' && (h.fields & ~PS_F_COMM))
			return true;
		header = true;
	}
	return false;
}
