// SPDX-License-Identifier: MIT
/*
 * /api/source: the source view of one function.  Per-line costs come from
 * analysis_source (the capture's line tables); the text of a line is added
 * when its file can be read on the serving host.
 *
 * Which files are read is source_file.h's policy (a capture is hostile
 * input: it names the files).  Only a window around the sampled lines is
 * sent (at most SERVE_MAX_SOURCE_LINES lines), with invalid UTF-8 as U+FFFD
 * and control characters but tab as spaces.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "capture/text.h"
#include "source_file.h"

/* One line of untrusted bytes as a JSON string (valid UTF-8, no controls). */
static json_t *line_json(const char *p, size_t n)
{
	char *out = malloc(3 * n + 1);
	size_t o = 0, i = 0;
	json_t *j;
	int k;

	if (!out)
		return NULL;
	while (i < n) {
		unsigned char ch = (unsigned char)p[i];

		if (ch < 0x80) {
			out[o++] = (ch < 0x20 && ch != '\t') || ch == 0x7f ? ' ' : (char)ch;
			i++;
			continue;
		}
		k = text__utf8_len((const unsigned char *)p + i, n - i);
		if (k > 0) {
			memcpy(out + o, p + i, (size_t)k);
			o += (size_t)k;
			i += (size_t)k;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	j = json_stringn(out, o);
	free(out);
	return j;
}

/* "text": lines [first, last] of the file (1-based), as far as it has them. */
static int add_text(json_t *file, const char *buf, size_t len, uint32_t first, uint32_t last)
{
	json_t *arr = json_array();
	const char *p = buf, *end = buf + len, *nl;
	uint32_t line = 1;

	if (api__set(file, "first_line", json_integer(first)) || api__set(file, "text", arr))
		return -ENOMEM;
	for (; p < end && line <= last; line++, p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (line >= first && json_array_append_new(arr, line_json(p, (size_t)(nl - p))))
			return -ENOMEM;
	}
	return 0;
}

/* File f's entry: its path, its lines' costs [lo, hi) of s, and its text if readable. */
static int add_file(struct api_ctx *ctx, json_t *files, const struct analysis_source *s,
		    uint32_t lo, uint32_t hi)
{
	const char *path = capture__string(ctx->c, s->lines[lo].file);
	json_t *f = json_object(), *lines = json_array();
	uint32_t i, first, last;
	const char *why = NULL;
	char *buf = NULL;
	size_t len = 0;
	int rc = -ENOMEM;

	if (!f || json_array_append_new(files, f)) {
		json_decref(lines);
		return -ENOMEM;
	}
	if (api__set(f, "file", json_string(path)) || api__set(f, "lines", lines))
		return -ENOMEM;
	for (i = lo; i < hi; i++)
		if (json_array_append_new(lines, json_pack("{s:I,s:o,s:o}", "line",
							   (json_int_t)s->lines[i].line, "self",
							   api__u64(s->lines[i].self), "total",
							   api__u64(s->lines[i].total))))
			return -ENOMEM;
	/* Lines are sorted: the window spans the first known line to the last. */
	for (i = lo; i < hi && !s->lines[i].line; i++)
		;
	if (!path[0] || i == hi) {
		why = !path[0] ? "source not shown: no source file recorded"
				  : "source not shown: no line numbers recorded";
	} else {
		first = s->lines[i].line > SERVE_SOURCE_CONTEXT ? s->lines[i].line - SERVE_SOURCE_CONTEXT
								 : 1;
		last = s->lines[hi - 1].line + SERVE_SOURCE_CONTEXT;
		if (last - first >= SERVE_MAX_SOURCE_LINES)
			last = first + SERVE_MAX_SOURCE_LINES - 1;
		rc = serve_source__read(ctx->source_dir, path, &buf, &len, &why);
		if (rc == -ENOMEM)
			return rc;
		if (!rc && add_text(f, buf, len, first, last)) {
			free(buf);
			return -ENOMEM;
		}
		free(buf);
	}
	rc = api__set(f, "readable", json_boolean(!why));
	if (!rc && why)
		rc = api__set(f, "why", json_string(why));
	return rc;
}

int api__source(struct api_ctx *ctx, json_t *out)
{
	struct analysis_source s;
	json_t *files;
	uint32_t i, lo, nfiles = 0;
	int rc;

	rc = analysis_source__init(&s, ctx->c, &ctx->q, ctx->sq->function,
				   ctx->sq->set & (1u << SERVE_P_FILE) ? ctx->sq->file : NULL);
	if (rc)
		return rc == -EINVAL ? api__fail(ctx, "bad query") : rc;
	rc = -ENOMEM;
	files = json_array();
	if (api__head(ctx, out, s.weight) ||
	    api__set(out, "function", json_string(ctx->sq->function)) ||
	    ((ctx->sq->set & (1u << SERVE_P_FILE)) &&
	     api__set(out, "file", json_string(ctx->sq->file))) ||
	    api__set(out, "function_total", api__u64(s.total)) || api__set(out, "files", files))
		goto cleanup;
	for (lo = 0; lo < s.nlines; lo = i) {
		for (i = lo + 1; i < s.nlines && s.lines[i].file == s.lines[lo].file; i++)
			;
		if (nfiles++ >= SERVE_MAX_SOURCE_FILES)
			break;
		rc = add_file(ctx, files, &s, lo, i);
		if (rc)
			goto cleanup;
	}
	rc = 0;
cleanup:
	analysis_source__release(&s);
	return rc;
}
