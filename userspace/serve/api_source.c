// SPDX-License-Identifier: MIT
/*
 * /api/source: the source view of one function.  Per-line costs come from
 * analysis_source (the capture's line tables); the text of a line is added
 * when its file can be read on the serving host.
 *
 * The file names come from the capture, never from the request: a request
 * names a function, and only files the capture attributes that function's
 * sampled lines to are opened, read-only, and only when they are absolute
 * paths, or relative ones (DWARF names files relative to the build's
 * directory, which the capture does not keep) below --source-dir with no
 * ".." component, of regular files of at most SERVE_MAX_SOURCE_BYTES
 * holding no NUL byte (text).  Only a window around the sampled lines is sent (at most
 * SERVE_MAX_SOURCE_LINES lines), with invalid UTF-8 as U+FFFD and control
 * characters but tab as spaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "capture/text.h"

/* Does path have a ".." component? */
static bool has_dotdot(const char *path)
{
	const char *p = path;

	for (;;) {
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))
			return true;
		p = strchr(p, '/');
		if (!p)
			return false;
		p++;
	}
}

/* The whole file at path (below dir if relative) into *buf (malloc'd) if it is shown at all. */
static int read_source(const char *dir, const char *path, char **buf, size_t *len,
		       const char **why)
{
	char full[4096];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	*buf = NULL;
	if (path[0] != '/') {
		if (!dir) {
			*why = "a relative path (the build's directory is not recorded): "
			       "serve --source-dir DIR reads it below DIR";
			return -ENOENT;
		}
		if (has_dotdot(path) ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s", dir, path) >= sizeof(full)) {
			*why = "a relative path that leaves --source-dir";
			return -EINVAL;
		}
		path = full;
	}
	/* Not even opened unless a regular file (opening a device can act);
	 * checked again on the descriptor. */
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		*why = "not a regular file readable on this host";
		return -ENOENT;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*why = "cannot be read on this host";
		return -errno;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		err = -EINVAL;
		goto cleanup;
	}
	if (st.st_size > SERVE_MAX_SOURCE_BYTES) {
		*why = "larger than the source view shows";
		err = -EFBIG;
		goto cleanup;
	}
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		n = read(fd, *buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (memchr(*buf, '\0', got)) {
		*why = "not text";
		err = -EINVAL;
		goto cleanup;
	}
	(*buf)[got] = '\0';
	*len = got;
cleanup:
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	close(fd);
	return err;
}

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
		why = !path[0] ? "no source file recorded" : "no line numbers recorded";
	} else {
		first = s->lines[i].line > SERVE_SOURCE_CONTEXT ? s->lines[i].line - SERVE_SOURCE_CONTEXT
								 : 1;
		last = s->lines[hi - 1].line + SERVE_SOURCE_CONTEXT;
		if (last - first >= SERVE_MAX_SOURCE_LINES)
			last = first + SERVE_MAX_SOURCE_LINES - 1;
		rc = read_source(ctx->source_dir, path, &buf, &len, &why);
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

	rc = analysis_source__init(&s, ctx->c, &ctx->q, ctx->sq->function);
	if (rc)
		return rc == -EINVAL ? api__fail(ctx, "bad query") : rc;
	rc = -ENOMEM;
	files = json_array();
	if (api__head(ctx, out, s.weight) ||
	    api__set(out, "function", json_string(ctx->sq->function)) ||
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
