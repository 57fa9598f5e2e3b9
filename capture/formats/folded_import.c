// SPDX-License-Identifier: MIT
/*
 * Folded stacks importer: "outer;...;inner COUNT" lines (Brendan Gregg's
 * stackcollapse format) into capture rows.  Frames have no module and no
 * address; a name is interned once, so equal names share a frame row.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"
#include "capture/formats/perf_script_line.h"
#include "capture/limits.h"

enum folded_skip {
	FOLDED_SKIP_BLANK,
	FOLDED_SKIP_COMMENT,
	FOLDED_SKIP_NO_COUNT,
	FOLDED_SKIP_EMPTY_FRAME,
	FOLDED_SKIP_COUNT,
};

static const char *const folded_skip_names[FOLDED_SKIP_COUNT] = {
	[FOLDED_SKIP_BLANK] = "folded.skipped_blank",
	[FOLDED_SKIP_COMMENT] = "folded.skipped_comment",
	[FOLDED_SKIP_NO_COUNT] = "folded.skipped_no_count",
	[FOLDED_SKIP_EMPTY_FRAME] = "folded.skipped_empty_frame",
};

static const char *const folded_skip_text[FOLDED_SKIP_COUNT] = {
	[FOLDED_SKIP_BLANK] = "blank",
	[FOLDED_SKIP_COMMENT] = "comment",
	[FOLDED_SKIP_NO_COUNT] = "count-less",
	[FOLDED_SKIP_EMPTY_FRAME] = "empty-frame",
};

/* Parse s[len] as decimal digits into *v; false if empty, not digits or > UINT64_MAX. */
static bool parse_count(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (!len)
		return false;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (__builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(s[i] - '0'), &x))
			return false;
	}
	*v = x;
	return true;
}

/* Whether path p[len] has an empty frame name ("a;;b", ";a", "a;", ""). */
static bool folded_has_empty_frame(const char *p, size_t len)
{
	size_t start = 0, i;

	for (i = 0; i <= len; i++) {
		if (i == len || p[i] == ';') {
			if (i == start)
				return true;
			start = i + 1;
		}
	}
	return false;
}

/* Import one line's path p[len] with weight; returns a skip reason or -1 when added. */
static int folded_line(struct capture_builder *b, struct import_budget *ib, uint32_t event,
		       const char *p, size_t len, uint64_t weight, char **name, size_t *name_cap)
{
	uint32_t parent = CAPTURE_NONE;
	size_t start = 0, i;

	/* check first: a line with an empty frame adds nothing */
	if (folded_has_empty_frame(p, len))
		return FOLDED_SKIP_EMPTY_FRAME;
	for (i = 0; i <= len; i++) {
		struct capture_frame f = { .module = CAPTURE_NONE };
		size_t n;

		if (i < len && p[i] != ';')
			continue;
		n = i - start;
		if (n + 1 > *name_cap) {
			char *np = realloc(*name, n + 1);

			if (!np)
				return -2;
			*name = np;
			*name_cap = n + 1;
		}
		if (import_budget__spend(ib, 2))
			return -3;
		memcpy(*name, p + start, n);
		(*name)[n] = '\0';
		if (n > 4 && !memcmp(*name + n - 4, "_[k]", 4)) {
			(*name)[n - 4] = '\0';
			f.flags = CAPTURE_FRAME_F_KERNEL;
		}
		f.function = capture_builder__string(b, *name);
		parent = capture_builder__add_stack(b, parent, capture_builder__add_frame(b, &f));
		start = i + 1;
	}
	capture_builder__add_sample(b, &(struct capture_sample){
					       .thread = CAPTURE_NONE,
					       .cpu = CAPTURE_NONE,
					       .stack = parent,
					       .event = event,
					       .weight = weight,
				       });
	return -1;
}

/* Quote line[len] into out[outlen] for a message: at most 60 bytes, non-printables as '?'. */
static void quote_line(const char *line, size_t len, char *out, size_t outlen)
{
	size_t i, n = len > 60 ? 60 : len;

	if (outlen < 8)
		return;
	if (n > outlen - 8)
		n = outlen - 8;
	out[0] = '"';
	for (i = 0; i < n; i++)
		out[i + 1] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
	snprintf(out + n + 1, outlen - n - 1, "%s\"", n < len ? "..." : "");
}

int folded__import(const void *buf, size_t len, struct capture_builder *b,
		   struct formats_note *note, char *errbuf, size_t errlen)
{
	const char *text = buf, *end = text + len, *line = text;
	uint64_t skipped[FOLDED_SKIP_COUNT] = { 0 }, lines = 0, total = 0, stacks = 0;
	uint64_t bad_lineno = 0;
	const char *bad = NULL;
	size_t bad_len = 0;
	struct capture_event ev = { 0 };
	char *name = NULL;
	size_t name_cap = 0;
	struct import_budget ib;
	uint32_t event;
	int i, err = 0;

	import_budget__init(&ib, b, len, len, CAPTURE_LIMIT_TEXT_MEMORY_K, len, errbuf, errlen);
	if (memchr(text, '\0', len)) {
		snprintf(errbuf, errlen, "binary data (a NUL byte at offset %zu): not a capture, "
			 "pprof or folded file",
			 (size_t)((const char *)memchr(text, '\0', len) - text));
		return -EBADMSG;
	}
	/* perf script text is never read as folded stacks (a header such as
	 * "comm 1234/1234 5.000001:   0" would be a stack of weight 0) */
	if (perf_script__detect(buf, len)) {
		snprintf(errbuf, errlen, "`perf script` output, not folded stacks (\"frame;...;"
			 "frame COUNT\" lines): convert it without --from folded, or with "
			 "--from perf-script");
		return -EBADMSG;
	}
	ev.name = capture_builder__string(b, "folded");
	ev.unit = capture_builder__string(b, "samples");
	event = capture_builder__add_event(b, &ev);
	capture_builder__set_meta(b, "source.format", "folded");

	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end, *sp, *p;
		uint64_t weight;
		int r;

		if (le > line && le[-1] == '\r')
			le--;
		lines++;
		/* trailing blanks are not part of the count */
		while (le > line && (le[-1] == ' ' || le[-1] == '\t'))
			le--;
		p = line;
		while (p < le && (*p == ' ' || *p == '\t'))
			p++;
		if (ps_line__is_frame(line, (size_t)(le - line))) {
			char q[80];

			quote_line(line, (size_t)(le - line), q, sizeof(q));
			snprintf(errbuf, errlen, "line %" PRIu64 " %s is a `perf script` callchain "
				 "line (TAB IP SYM), not \"frame;...;frame COUNT\": convert perf "
				 "script output with --from perf-script", lines, q);
			err = -EBADMSG;
			goto cleanup;
		}
		if (p == le) {
			skipped[FOLDED_SKIP_BLANK]++;
		} else if (*p == '#') {
			skipped[FOLDED_SKIP_COMMENT]++;
		} else {
			for (sp = le; sp > line && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
				;
			r = FOLDED_SKIP_NO_COUNT;
			if (sp != line && parse_count(sp, (size_t)(le - sp), &weight)) {
				const char *pe = sp - 1;

				/* the event's total must fit u64, or shares are garbage
				 * (an empty-frame line is skipped below, never added) */
				if (!folded_has_empty_frame(line, (size_t)(pe - line)) &&
				    __builtin_add_overflow(total, weight, &total)) {
					char q[80];

					quote_line(line, (size_t)(le - line), q, sizeof(q));
					snprintf(errbuf, errlen,
						 "line %" PRIu64 " %s: count %" PRIu64 " makes the "
						 "total weight overflow 2^64-1",
						 lines, q, weight);
					err = -EBADMSG;
					goto cleanup;
				}
				r = folded_line(b, &ib, event, line, (size_t)(pe - line), weight,
						&name, &name_cap);
				if (r == -2 || r == -3) {
					err = r == -2 ? -ENOMEM : -EFBIG;
					goto cleanup;
				}
				if (r < 0)
					stacks++;
			}
			if (r >= 0) {
				skipped[r]++;
				if (!bad) {
					bad = line;
					bad_len = (size_t)(le - line);
					bad_lineno = lines;
				}
			}
		}
		line = nl ? nl + 1 : end;
	}
	if (!stacks && bad) {
		char q[80];

		quote_line(bad, bad_len, q, sizeof(q));
		snprintf(errbuf, errlen,
			 "not a folded file: no line is \"frame;...;frame COUNT\"; line %" PRIu64
			 " %s %s",
			 bad_lineno, q,
			 skipped[FOLDED_SKIP_NO_COUNT] ? "has no count" : "has an empty frame");
		err = -EBADMSG;
		goto cleanup;
	}
	err = import_budget__memory(&ib);
	if (err)
		goto cleanup;
	if (!stacks)
		formats_note__add(note, "the input has no stack (%s): the capture is empty; did "
				  "what wrote it (perf script, a stackcollapse) fail or find no "
				  "samples?", len ? "only blank and comment lines" : "0 bytes");
	for (i = 0; i < FOLDED_SKIP_COUNT; i++) {
		if (!skipped[i])
			continue;
		capture_builder__add_counter(b, folded_skip_names[i], skipped[i]);
	}
	if (skipped[FOLDED_SKIP_BLANK] || skipped[FOLDED_SKIP_COMMENT] ||
	    skipped[FOLDED_SKIP_NO_COUNT] || skipped[FOLDED_SKIP_EMPTY_FRAME]) {
		char part[256] = "";
		size_t used = 0;

		for (i = 0; i < FOLDED_SKIP_COUNT; i++) {
			if (skipped[i] && used < sizeof(part))
				used += (size_t)snprintf(part + used, sizeof(part) - used,
							 "%s%" PRIu64 " %s", used ? ", " : "",
							 skipped[i], folded_skip_text[i]);
		}
		formats_note__add(note, "skipped %s line%s of %" PRIu64, part,
				  lines == 1 ? "" : "s", lines);
	}
cleanup:
	free(name);
	return err;
}
