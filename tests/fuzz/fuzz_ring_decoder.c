// SPDX-License-Identifier: MIT
/*
 * The ring-record decoder: the processor's chunk intake (processor__sink),
 * fed the chunk stream of a raw recording (stream.msraw layout: an optional
 * 16-byte file header, then struct ms_chunk + payload zero-padded to 8
 * bytes, repeated).  Chunk lengths are clipped to the input and to
 * MS_CHUNK_MAX_PAYLOAD (the replayer's checks); each payload is copied to
 * its own malloc'd buffer, as stream__replay hands it over.  Then finish and
 * seal the capture.  One symbolizer serves every input (as one serves a whole
 * recording): building one per input (kallsyms, ELF files) would cost about a
 * second each.
 */
#include <string.h>

#include "capture/capture.h"
#include "fuzz.h"
#include "userspace/stream/stream.h"
#include "userspace/processor/processor.h"
#include "userspace/symbols/symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct capture_builder *b = capture_builder__new();
	static struct symbolizer *s;
	struct processor *p = NULL;
	size_t pos = 0;
	void *buf = NULL;
	size_t len = 0;

	if (!s)
		s = symbolizer__new();
	if (!b || !s)
		goto cleanup;
	p = processor__new(b, s);
	if (!p)
		goto cleanup;
	if (size >= 16 && !memcmp(data, MS_RAW_MAGIC, 8))
		pos = 16;
	while (size - pos >= sizeof(struct ms_chunk)) {
		struct ms_chunk ch;

		memcpy(&ch, data + pos, sizeof(ch));
		pos += sizeof(ch);
		void *payload;
		int rc;

		if (ch.len > size - pos)
			ch.len = (uint32_t)(size - pos);
		if (ch.len > MS_CHUNK_MAX_PAYLOAD)
			ch.len = MS_CHUNK_MAX_PAYLOAD;
		payload = malloc(ch.len ? ch.len : 1);
		if (!payload)
			break;
		memcpy(payload, data + pos, ch.len);
		rc = processor__sink(p, &ch, ch.len ? payload : NULL);
		free(payload);
		if (rc)
			break;
		pos += ((size_t)ch.len + 7) & ~(size_t)7;
		if (pos > size)
			break;
	}
	processor__finish(p);
	if (!capture_builder__serialize(b, &buf, &len)) {
		struct capture *c = NULL;
		char err[256];
		int rc = capture__open_mem(buf, len, "fuzz", &c, err, sizeof(err));

		FUZZ_INVARIANT(!rc, "the processor built an invalid capture: %s", err);
		capture__free(c);
	}
cleanup:
	free(buf);
	processor__free(p);
	capture_builder__free(b);
	return 0;
}
