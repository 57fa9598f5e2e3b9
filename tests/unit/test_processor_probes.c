// SPDX-License-Identifier: MIT
/*
 * Probe records (bpf/abi/records.h MS_REC_PROBE / MS_REC_PROBE_SITE)
 * through the real processor: a site is taken as it arrives though it is
 * newer than its records; records are ordered by time like samples; every
 * malformed one is counted (processor.bad_probe), none reaches the capture.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bpf/abi/records.h"
#include "capture/capture.h"
#include "userspace/processor/processor.h"
#include "userspace/stream/stream.h"
#include "userspace/symbols/symbols.h"

static struct processor *proc;
static struct capture_builder *builder;
static struct symbolizer *symz;

static void feed(uint32_t kind, const void *payload, uint32_t len, uint64_t time)
{
	struct ms_chunk c = { .kind = kind, .source = MS_SOURCE_PROBES, .len = len, .time = time };

	assert_int_equal(processor__sink(proc, &c, payload), 0);
}

static void site(uint32_t pid, uint32_t id, const char *name, uint64_t time)
{
	struct ms_probe_site s = { { MS_REC_PROBE_SITE, sizeof(s) }, time, pid, id, "" };

	memcpy(s.name, name, strnlen(name, sizeof(s.name) - 1));
	feed(MS_CHUNK_BPF, &s, sizeof(s), 0);
}

static void rec(uint32_t pid, uint32_t tid, uint32_t id, uint32_t kind, uint64_t time,
		uint64_t value)
{
	struct ms_probe r = { { MS_REC_PROBE, sizeof(r) }, time, value, pid, tid, id, kind };

	feed(MS_CHUNK_BPF, &r, sizeof(r), 0);
}

static void test_probe_records(void **state)
{
	struct ms_probe_site s = { { MS_REC_PROBE_SITE, sizeof(s) }, 1, 900, 3, "" };
	struct ms_probe r = { { MS_REC_PROBE, sizeof(r) - 8 }, 10, 0, 900, 900, 0, 1 };
	struct capture *c;
	char err[256];
	void *buf;
	size_t len;

	(void)state;
	builder = capture_builder__new();
	symz = symbolizer__new();
	proc = processor__new(builder, symz);
	assert_non_null(proc);
	feed(MS_CHUNK_ROUND, NULL, 0, 100);
	/* records older than their sites, end before begin in arrival order */
	rec(900, 901, 0, MS_PROBE_ZONE_END, 250, 0);
	rec(900, 901, 0, MS_PROBE_ZONE_BEGIN, 150, 0);
	rec(900, 902, 1, MS_PROBE_MARK, 200, 42);
	site(900, 0, "work", 300);
	site(900, 1, "mark", 300);
	site(900, 0, "renamed", 300); /* the first name stays */
	/* bad: */
	rec(900, 901, 5, MS_PROBE_ZONE_BEGIN, 210, 0); /* a site never named */
	rec(901, 901, 0, MS_PROBE_ZONE_BEGIN, 210, 0); /* site 0 of another pid */
	rec(900, 901, 0, 9, 210, 0);			/* unknown kind */
	rec(900, 0, 0, MS_PROBE_ZONE_BEGIN, 210, 0);	/* no thread */
	feed(MS_CHUNK_BPF, &r, sizeof(r) - 8, 0);	/* short */
	memset(s.name, 'x', sizeof(s.name));		/* a name without its NUL */
	feed(MS_CHUNK_BPF, &s, sizeof(s), 0);
	site(900, MS_PROBE_NAME_MAX * 100, "far", 0); /* beyond the site limit */
	feed(MS_CHUNK_ROUND, NULL, 0, 1000);
	feed(MS_CHUNK_END, NULL, 0, 2000);
	assert_int_equal(processor__finish(proc), 0);
	assert_int_equal(capture_builder__serialize(builder, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "probes", &c, err, sizeof(err)), 0);
	free(buf);

	assert_int_equal(c->nprobe_sites, 2);
	assert_string_equal(capture__string(c, c->probe_sites[0].name), "work");
	assert_string_equal(capture__string(c, c->probe_sites[1].name), "mark");
	assert_int_equal(c->nprobe_records, 3);
	assert_int_equal(c->probe_records[0].time_ns, 150);
	assert_int_equal(c->probe_records[0].kind, CAPTURE_PROBE_ZONE_BEGIN);
	assert_int_equal(c->probe_records[1].time_ns, 200);
	assert_int_equal(c->probe_records[1].value, 42);
	assert_int_equal(c->probe_records[2].time_ns, 250);
	assert_int_equal(c->threads[c->probe_records[0].thread].tid, 901);
	assert_int_equal(c->threads[c->probe_records[1].thread].tid, 902);
	assert_int_equal(c->probe_records[0].thread, c->probe_records[2].thread);
	assert_int_equal(capture__counter(c, "processor.bad_probe"), 7);
	assert_int_equal(capture__counter(c, "processor.late_record"), 0);
	capture__free(c);
	processor__free(proc);
	symbolizer__free(symz);
	capture_builder__free(builder);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
