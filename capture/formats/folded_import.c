// SPDX-License-Identifier: MIT
/*
 * Folded stacks importer: "outer;...;inner COUNT" lines (Brendan Gregg's
 * stackcollapse format) into capture rows.  Frames have no module and no
 * address; a name is interned once, so equal names share a frame row.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "capture/formats/formats.h"

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

/* Import one line's path p[len] with weight; returns a skip reason or -1 when added. */
static int folded_line(struct capture_builder *b, uint32_t event, const char *p, size_t len,
		       uint64_t weight, char **name, size_t *name_cap)
{
	uint32_t parent = CAPTURE_NONE;
	size_t start = 0, i;

	/* check first: a line with an empty frame adds nothing */
	for (i = 0; i <= len; i++) {
		if (i == len || p[i] == ';') {
			if (i == start)
				return FOLDED_SKIP_EMPTY_FRAME;
			start = i + 1;
		}
	}
	start = 0;
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

int folded__import(const void *buf, size_t len, struct capture_builder *b,
		   struct formats_note *note)
{
	const char *text = buf, *end = text + len, *line = text;
	uint64_t skipped[FOLDED_SKIP_COUNT] = { 0 }, lines = 0, total = 0;
	struct capture_event ev = { 0 };
	char *name = NULL;
	size_t name_cap = 0;
	uint32_t event;
	int i, err = 0;

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
		if (p == le) {
			skipped[FOLDED_SKIP_BLANK]++;
		} else if (*p == '#') {
			skipped[FOLDED_SKIP_COMMENT]++;
		} else {
			for (sp = le; sp > line && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
				;
			if (sp == line || !parse_count(sp, (size_t)(le - sp), &weight)) {
				skipped[FOLDED_SKIP_NO_COUNT]++;
			} else {
				const char *pe = sp - 1;

				r = folded_line(b, event, line, (size_t)(pe - line), weight, &name,
						&name_cap);
				if (r == -2) {
					err = -ENOMEM;
					goto cleanup;
				}
				if (r >= 0)
					skipped[r]++;
				else if (__builtin_add_overflow(total, weight, &total))
					total = UINT64_MAX;
			}
		}
		line = nl ? nl + 1 : end;
	}
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
