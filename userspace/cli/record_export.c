// SPDX-License-Identifier: MIT
/* Per-segment exports of record --continuous --export (record_export.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/formats/formats.h"
#include "capture/segment_dir.h"
#include "record_export.h"

enum export_kind { EXPORT_PPROF, EXPORT_SPEEDSCOPE, EXPORT_FOLDED };

struct record_export {
	enum export_kind kind;
	const char *suffix; /* segment_export_suffixes (capture/segment_dir.h) */
};


int record_export__new(const char *fmt, struct record_export **out)
{
	struct record_export *e;
	enum export_kind kind;

	if (!strcmp(fmt, "pprof"))
		kind = EXPORT_PPROF;
	else if (!strcmp(fmt, "speedscope"))
		kind = EXPORT_SPEEDSCOPE;
	else if (!strcmp(fmt, "folded"))
		kind = EXPORT_FOLDED;
	else
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->kind = kind;
	for (int i = 0; segment_export_suffixes[i][0]; i++)
		if (!strcmp(segment_export_suffixes[i][0], fmt))
			e->suffix = segment_export_suffixes[i][1];
	if (!e->suffix) {
		free(e);
		return -EINVAL;
	}
	*out = e;
	return 0;
}

/* The export of c as bytes in a memory stream. */
static int export__render(const struct record_export *e, const struct capture *c, char **text,
			  size_t *len)
{
	struct formats_note note = { "" };
	struct analysis_names *names = NULL;
	struct analysis_tree *tree = NULL;
	struct analysis_query q;
	uint32_t event = analysis__default_event(c);
	FILE *f;
	int err;

	*text = NULL;
	*len = 0;
	if (e->kind == EXPORT_PPROF)
		return pprof__export(c, (void **)text, len, &note);
	if (event == CAPTURE_NONE)
		return 0; /* an empty segment: an empty export */
	if (e->kind == EXPORT_SPEEDSCOPE) {
		f = open_memstream(text, len);
		if (!f)
			return -errno;
		err = speedscope__export(c, event, f, &note);
		if (fclose(f) && !err)
			err = -EIO;
		return err;
	}
	analysis_query__init(&q, event);
	names = analysis_names__new(c);
	tree = names ? analysis_tree__new(names, &q) : NULL;
	err = tree ? analysis_tree__folded(tree, text, len) : -ENOMEM;
	analysis_tree__free(tree);
	analysis_names__free(names);
	return err;
}

int record_export__segment(void *ctx, const char *path, const struct capture *segment)
{
	struct record_export *e = ctx;
	struct file_out o = { .fd = -1, .slot = -1 };
	char *text = NULL, *out = NULL, msg[512] = "";
	size_t len = 0, plen = strlen(path);
	int err;

	err = export__render(e, segment, &text, &len);
	if (err)
		goto cleanup;
	if (plen > 4 && !strcmp(path + plen - 4, ".msc"))
		plen -= 4;
	if (asprintf(&out, "%.*s%s", (int)plen, path, e->suffix) < 0) {
		out = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	/* file_out (capture/file_io.h): 0600 temporary beside it, fsync, rename,
	 * directory fsync; a symlink under the export's name is refused */
	err = file_out__open(&o, out, msg, sizeof(msg));
	if (err)
		goto cleanup;
	err = file__write_all(o.fd, text, len);
	if (err) {
		snprintf(msg, sizeof(msg), "%s: write: %s", out, strerror(-err));
		file_out__abort(&o);
		goto cleanup;
	}
	err = file_out__commit(&o, msg, sizeof(msg));
cleanup:
	if (err && err != -ENOMEM && out)
		fprintf(stderr, "microscope record: --export: %s\n", msg);
	free(text);
	free(out);
	return err;
}

void record_export__free(struct record_export *e)
{
	free(e);
}
