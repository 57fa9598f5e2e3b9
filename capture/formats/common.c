// SPDX-License-Identifier: MIT
/*
 * Helpers shared by the converters: loss notes, frame and thread labels
 * (the display-name rules of analysis/analysis.h, restated over the capture
 * tables because capture/ may not include analysis/), sample durations and
 * JSON string literals.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "capture/frame_label.h"
#include "capture/limits.h"
#include "capture/text.h"

#include "capture/formats/formats.h"

void formats_note__add(struct formats_note *n, const char *fmt, ...)
{
	size_t used = strlen(n->text);
	va_list ap;

	if (used && used + 2 < sizeof(n->text)) {
		memcpy(n->text + used, "; ", 3);
		used += 2;
	}
	if (used + 1 >= sizeof(n->text))
		return;
	va_start(ap, fmt);
	vsnprintf(n->text + used, sizeof(n->text) - used, fmt, ap);
	va_end(ap);
}

size_t formats__frame_label(const struct capture *c, const struct capture_frame *f, char *buf,
			    size_t size)
{
	return capture__frame_label(c, f, buf, size);
}

size_t formats__thread_label(const struct capture *c, uint32_t thread, char *buf, size_t size)
{
	const char *comm;
	int n;

	if (thread == CAPTURE_NONE)
		return (size_t)snprintf(buf, size, "[no thread]");
	comm = capture__string(c, c->threads[thread].comm);
	n = snprintf(buf, size, "%s-%" PRIu32, comm[0] ? comm : "[unknown]",
		     c->threads[thread].tid);
	return n < 0 ? 0 : (size_t)n;
}

uint64_t formats__sample_ns(const struct capture_event *ev, const struct capture *c,
			    const struct capture_sample *s)
{
	const char *unit = capture__string(c, ev->unit);
	uint64_t ns;

	if (!strcmp(unit, "nanoseconds"))
		return s->weight;
	if (!strcmp(unit, "samples") && ev->period) {
		if (__builtin_mul_overflow(s->weight, ev->period, &ns))
			return UINT64_MAX;
		return ns;
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if invalid (text.h). */
static size_t utf8_len(const unsigned char *s)
{
	int n = text__utf8_len(s, strnlen((const char *)s, 4));

	return n > 0 ? (size_t)n : 0;
}

void formats__json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', out);
	while (*s) {
		size_t n = utf8_len(s);

		if (*s == '"' || *s == '\\') {
			fputc('\\', out);
			fputc(*s, out);
		} else if (*s == '\n') {
			fputs("\\n", out);
		} else if (*s == '\t') {
			fputs("\\t", out);
		} else if (*s < 0x20 || *s == 0x7f || !n) {
			/* control bytes; an invalid byte is read as Latin-1 */
			fprintf(out, "\\u%04x", *s);
			n = 1;
		} else {
			fwrite(s, 1, n, out);
		}
		s += n ? n : 1;
	}
	fputc('"', out);
}

int formats__labels_new(const struct capture *c, char ***labels)
{
	char **l = calloc((size_t)c->nframes + 1, sizeof(*l));
	uint32_t i;

	*labels = NULL;
	if (!l)
		return -ENOMEM;
	for (i = 0; i < c->nframes; i++) {
		const struct capture_frame *f = &c->frames[i];
		bool kernel = (f->flags & CAPTURE_FRAME_F_KERNEL) &&
			      !(f->flags & CAPTURE_FRAME_F_TRUNCATION);
		size_t n = formats__frame_label(c, f, NULL, 0);

		l[i] = malloc(n + 5);
		if (!l[i]) {
			formats__labels_free(l, i);
			return -ENOMEM;
		}
		formats__frame_label(c, f, l[i], n + 1);
		if (kernel)
			memcpy(l[i] + n, " [k]", 5);
	}
	*labels = l;
	return 0;
}

void formats__labels_free(char **labels, uint32_t n)
{
	uint32_t i;

	if (!labels)
		return;
	for (i = 0; i < n; i++)
		free(labels[i]);
	free(labels);
}

static int by_thread_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct capture *c = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct capture_sample *x = &c->samples[a], *y = &c->samples[b];

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return a < b ? -1 : a > b;
}

int formats__samples_by_thread(const struct capture *c, uint32_t **order)
{
	uint32_t *o = malloc(((size_t)c->nsamples + 1) * sizeof(*o)), i;

	*order = NULL;
	if (!o)
		return -ENOMEM;
	for (i = 0; i < c->nsamples; i++)
		o[i] = i;
	qsort_r(o, c->nsamples, sizeof(*o), by_thread_cmp, (void *)c);
	*order = o;
	return 0;
}

/* ---- import bounds -------------------------------------------------------- */

#define IMPORT_CHECK_EVERY (1u << 16)

void import_budget__init(struct import_budget *ib, const struct capture_builder *b,
			 size_t in_bytes, uint64_t stored_bytes, unsigned k, uint64_t held,
			 char *err, size_t errlen)
{
	*ib = (struct import_budget){
		.units_max = capture_limits__import_units(in_bytes),
		.max_memory = capture_limits__memory_for(stored_bytes, k),
		.memory_name = capture_limits__memory_name(stored_bytes, k),
		.held = held,
		.in_bytes = in_bytes,
		.b = b,
		.err = err,
		.errlen = errlen,
	};
	ib->units_left = ib->units_max;
	ib->next_check = ib->units_left > IMPORT_CHECK_EVERY ? ib->units_left - IMPORT_CHECK_EVERY
							     : 0;
}

int import_budget__memory(struct import_budget *ib)
{
	uint64_t max = ib->max_memory, need;

	need = ib->held + 2 * (uint64_t)capture_builder__bytes(ib->b);
	if (need <= max)
		return 0;
	if (ib->errlen)
		snprintf(ib->err, ib->errlen,
			 "importing needs more than the memory limit of %" PRIu64
			 " bytes (%s; %" PRIu64 " bytes so far)",
			 max, ib->memory_name, need);
	return -EFBIG;
}

int import_budget__exceeded(struct import_budget *ib, uint64_t n)
{
	if (n > ib->units_left) {
		if (ib->errlen)
			snprintf(ib->err, ib->errlen,
				 "the profile expands beyond the import limit of %u rows per "
				 "input byte (%" PRIu64 " for %zu bytes, capture/limits.h "
				 "CAPTURE_LIMIT_IMPORT_K): an amplification such as a location "
				 "with many inline lines named many times",
				 CAPTURE_LIMIT_IMPORT_K, ib->units_max, ib->in_bytes);
		return -EFBIG;
	}
	ib->units_left -= n;
	ib->next_check = ib->units_left > IMPORT_CHECK_EVERY ? ib->units_left - IMPORT_CHECK_EVERY
							     : 0;
	return import_budget__memory(ib);
}
