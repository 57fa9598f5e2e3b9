// SPDX-License-Identifier: MIT
/*
 * The inputs of `microscope convert` (see convert_input.h): one row of
 * convert_inputs[] per format, with the importer that fills a
 * capture_builder from its bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "capture/file_io.h"
#include "capture/format.h"
#include "capture/limits.h"
#include "convert_input.h"

static int convert_import_folded(const void *buf, size_t len, struct capture_builder *b,
				 struct formats_note *note, char *err, size_t errlen)
{
	return folded__import(buf, len, b, note, err, errlen);
}

static const struct convert_input_format convert_inputs[] = {
    {.name = "capture", .extensions = {".msc", NULL}, .import = NULL},
    {.name = "pprof", .extensions = {".pb.gz", ".pprof", ".pb", NULL}, .import = pprof__import},
    {.name = "folded",
     .extensions = {".folded", NULL},
     .import = convert_import_folded,
     .text = true},
    {.name = "perf-script",
     .extensions = {".perf-script", ".script", ".perf", NULL},
     .import = perf_script__import,
     .text = true},
};

#define CONVERT_INPUT_FOLDED	  (&convert_inputs[2])
#define CONVERT_INPUT_PERF_SCRIPT (&convert_inputs[3])

#define CONVERT_NINPUTS (sizeof(convert_inputs) / sizeof(convert_inputs[0]))

bool convert_input__has_suffix(const char *path, const char *ext)
{
	size_t lp = strlen(path), le = strlen(ext);

	return lp > le && !strcasecmp(path + lp - le, ext);
}

/* --from name, else the extension, else the content (capture magic, gzip, text). */
const struct convert_input_format *convert_input__format(const char *from, const char *path,
							 const void *buf, size_t len)
{
	size_t i, j;

	for (i = 0; i < CONVERT_NINPUTS; i++) {
		if (from) {
			if (!strcmp(from, convert_inputs[i].name))
				return &convert_inputs[i];
			continue;
		}
		for (j = 0; convert_inputs[i].extensions[j]; j++)
			if (convert_input__has_suffix(path, convert_inputs[i].extensions[j]))
				return &convert_inputs[i];
	}
	if (from)
		return NULL;
	if (len >= CAPTURE_MAGIC_LEN && !memcmp(buf, CAPTURE_MAGIC, CAPTURE_MAGIC_LEN))
		return &convert_inputs[0];
	if (len >= 2 && ((const unsigned char *)buf)[0] == 0x1f &&
	    ((const unsigned char *)buf)[1] == 0x8b)
		return &convert_inputs[1];
	/* Text: perf script output by its sample headers, else folded stacks
	 * (a .txt file can be either). */
	if (perf_script__detect(buf, len))
		return CONVERT_INPUT_PERF_SCRIPT;
	return CONVERT_INPUT_FOLDED;
}

/* What convert reads, for the refusal of a format it only writes. */
#define OUTPUT_ONLY_MSG                                                                    \
	"%s: this is %s, which microscope writes but cannot read back; convert reads a "  \
	"capture (.msc), pprof (.pb.gz, .pprof, .pb), folded stacks (.folded) or perf "    \
	"script text: convert the capture (or pprof) it was made from"

#define PERF_DATA_MSG                                                                      \
	"%s: this looks like perf.data (perf record's binary file): run `perf script -i FILE "  \
	"> FILE.txt` first and convert that text"

static const unsigned char *skip_space(const unsigned char *p, const unsigned char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/*
 * Which output-only format buf[len] (the input's first bytes) is, or NULL:
 * a JSON document (an object whose first key begins, or an array of
 * objects: a folded line never starts so) or an SVG/XML one.  Chrome trace
 * and speedscope files are named apart, as convert writes them.
 */
static const char *output_only_format(const void *buf, size_t len)
{
	const unsigned char *p = buf, *end = p + (len < 4096 ? len : 4096), *q;

	p = skip_space(p, end);
	if (p == end)
		return NULL;
	if ((size_t)(end - p) >= 5 && (!memcmp(p, "<?xml", 5) || !memcmp(p, "<svg", 4)))
		return "an SVG flame graph (XML)";
	q = skip_space(p + 1, end);
	if (q == end || !((*p == '{' && *q == '"') || (*p == '[' && (*q == '{' || *q == ']'))))
		return NULL;
	if (memmem(p, (size_t)(end - p), "speedscope", 10))
		return "a speedscope profile (JSON)";
	if (*p == '[' || memmem(p, (size_t)(end - p), "\"traceEvents\"", 13))
		return "a Chrome trace (JSON)";
	return "a JSON document";
}

/*
 * Read the input (path, or stdin for "-") into *buf (malloc'd) and choose
 * its format.  A regular file's first bytes are checked before the rest is
 * read: a capture's header, the NUL byte binary data has where folded text
 * has none, the field number 0 no protobuf message starts with.  Every
 * read is bounded by the memory limit (capture/limits.h).  Returns 0, or
 * -errno after printing why.
 */
int convert_input__read(const char *path, const char *from, void **buf, size_t *len,
			const struct convert_input_format **ifmt)
{
	unsigned char head[4096];
	const char *what;
	char msg[600] = "";
	size_t got = 0;
	int err, consumed;

	*buf = NULL;
	*len = 0;
	consumed = file__read_head(path, head, sizeof(head), &got);
	err = consumed < 0 ? consumed : 0;
	if (!err) {
		const unsigned char *nul = memchr(head, '\0', got);

		*ifmt = convert_input__format(from, path, head, got);
		if ((*ifmt)->text && perf_script__is_perf_data(head, got)) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg), PERF_DATA_MSG, path);
		} else if ((*ifmt)->text && (what = output_only_format(head, got))) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg), OUTPUT_ONLY_MSG, path, what);
		} else if (!(*ifmt)->import) {
			err = capture__check_header(head, got, path, msg, sizeof(msg));
		} else if ((*ifmt)->import == convert_import_folded && nul) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg),
				 "%s: not a capture, pprof or folded file (binary data: a NUL "
				 "byte at offset %zu)",
				 path, (size_t)(nul - head));
		} else if ((*ifmt)->import == pprof__import && got &&
			   !(got >= 2 && head[0] == 0x1f && head[1] == 0x8b) && head[0] < 8) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg),
				 "%s: pprof: not a pprof profile: byte 0 is 0x%02x (protobuf "
				 "field number 0 does not exist)",
				 path, head[0]);
		}
	} else if (err == -ESPIPE) {
		err = 0; /* stdin or a pipe: read with the bound, then sniff */
	} else {
		snprintf(msg, sizeof(msg), "%s: %s", path, strerror(-err));
	}
	if (!err)
		err = file__read_bounded(path, capture_limits__max_memory(),
					 consumed > 0 ? head : NULL, consumed > 0 ? got : 0, buf,
					 len, msg, sizeof(msg));
	/* the first bytes only decided early refusals: the whole input decides
	 * the format (perf script's header comments may run past them) */
	if (!err) {
		*ifmt = convert_input__format(from, path, *buf, *len);
		if ((*ifmt)->text && perf_script__is_perf_data(*buf, *len)) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg), PERF_DATA_MSG, path);
		} else if ((*ifmt)->text && (what = output_only_format(*buf, *len))) {
			err = -EBADMSG;
			snprintf(msg, sizeof(msg), OUTPUT_ONLY_MSG, path, what);
		}
		if (err) {
			free(*buf);
			*buf = NULL;
			*len = 0;
		}
	}
	if (err)
		fprintf(stderr, "microscope convert: %s\n", msg);
	return err;
}
