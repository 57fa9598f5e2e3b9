// SPDX-License-Identifier: MIT
/* The recording's META chunks at start and COUNTER chunks at stop
 * (stream/meta.h names every key; collector_internal.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/abi/kunwind.h"
#include "bpf/abi/records.h"
#include "offcpu.h"
#include "probes.h"
#include "prog_stats.h"
#include "../stream/memory_policy.h"
#include "../stream/meta.h"
#include "skel/sampler.skel.h"

#include "collector_internal.h"

static const char *collector__mode(const struct collector *c)
{
	if (c->opts.system_wide)
		return "system-wide";
	return c->opts.argv ? "launch" : "pid";
}

/* META command: argv joined with POSIX shell quoting where needed ("a b 'c d'"). */
static int collector__meta_command(struct collector *c)
{
	size_t cap = SNAP_BUF_BYTES - 1, n = 0;
	char *out = c->snap_buf;
	char **arg;

	for (arg = c->opts.argv; *arg && n < cap; arg++) {
		const char *p = *arg;
		bool plain = *p != '\0';

		for (; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("@%_+=:,./-", *p))
				plain = false;
		if (arg != c->opts.argv && n < cap)
			out[n++] = ' ';
		if (plain) {
			for (p = *arg; *p && n < cap; p++)
				out[n++] = *p;
			continue;
		}
		if (n < cap)
			out[n++] = '\'';
		for (p = *arg; *p && n + 4 < cap; p++) {
			if (*p == '\'') {
				memcpy(out + n, "'\\''", 4);
				n += 4;
			} else {
				out[n++] = *p;
			}
		}
		if (n < cap)
			out[n++] = '\'';
	}
	out[n] = '\0';
	return ms_meta__emit(c->sink, c->sink_ctx, MS_META_COMMAND, out);
}

/*
 * The recording's META chunks (stream/meta.h names every key, its type and
 * unit).  Returns 0 or the first error (-EINVAL for a value that is not of
 * its key's type, or the sink's).
 */
int collector__emit_meta(struct collector *c)
{
	struct utsname u;
	char pids[MS_MAX_PIDS * 12 + 1] = "";
	__u32 copy_bytes = record_options__stack_copy_bytes(&c->opts);
	size_t i, n = 0;
	int err = 0;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	for (i = 0; i < c->ntargets && n < sizeof(pids) - 12; i++)
		n += (size_t)snprintf(pids + n, sizeof(pids) - n, "%s%d", i ? "," : "",
				      c->targets[i]);

#define META_TEXT(id, v)                                                                           \
	do {                                                                                       \
		if (!err)                                                                          \
			err = ms_meta__emit(c->sink, c->sink_ctx, MS_META_##id, (v));              \
	} while (0)
#define META_U64(id, v)                                                                            \
	do {                                                                                       \
		if (!err)                                                                          \
			err = ms_meta__emit_u64(c->sink, c->sink_ctx, MS_META_##id, (__u64)(v));   \
	} while (0)
	META_U64(ABI_VERSION, MS_ABI_VERSION);
	META_TEXT(KERNEL_RELEASE, u.release);
	META_TEXT(MODE, collector__mode(c));
	META_TEXT(EVENT, c->event_name);
	META_TEXT(EVENT_REQUESTED, c->opts.event == MS_EVENT_CYCLES ? "cycles" : "cpu-clock");
	if (c->event_note[0])
		META_TEXT(EVENT_NOTE, c->event_note);
	META_U64(FREQ_HZ, c->opts.freq_hz);
	if (c->opts.probes)
		META_TEXT(PROBES_SELECT, c->opts.probes);
	META_TEXT(CLOCK, "CLOCK_MONOTONIC");
	META_TEXT(CALL_GRAPH, record_options__call_graph_name(c->opts.call_graph));
	if (c->kunwind)
		META_TEXT(KERNEL_UNWIND, "yes");
	else if (c->ku_refused[0])
		META_TEXT(KERNEL_UNWIND, c->ku_refused);
	if (c->opts.verify_unwind)
		META_U64(VERIFY_UNWIND, 1);
	META_TEXT(BPF_FIND_VMA, c->have_find_vma ? "yes" : "no (stack copies bounded page by page)");
	/* Bytes copied per sample at most: 0 with --call-graph fp. */
	META_U64(STACK_SIZE, copy_bytes);
	if (copy_bytes != c->opts.stack_size)
		META_U64(STACK_SIZE_REQUESTED, c->opts.stack_size);
	META_U64(RINGBUF_BYTES, c->opts.ringbuf_bytes);
	META_U64(PERF_PAGES, c->opts.perf_pages);
	META_U64(PERF_RING_BYTES, (__u64)c->opts.perf_pages * (__u64)c->page_size);
	META_U64(PAGE_SIZE, c->page_size);
	META_U64(NR_CPUS, c->nr_online);
	META_U64(NR_CPUS_POSSIBLE, c->nr_possible);
	META_U64(MMAP2_BUILD_ID, c->build_ids);
	META_U64(PERF_SAMPLE_TYPE, MS_SIDEBAND_SAMPLE_TYPE);
	if (c->ntargets && !c->opts.system_wide)
		META_TEXT(PIDS, pids);
	META_U64(START_TIME_NS, c->start_ns);
	META_U64(OFF_CPU, c->offcpu != NULL);
	if (c->offcpu)
		META_U64(OFF_CPU_MIN_NS, c->opts.off_cpu_min_ns);
#undef META_TEXT
#undef META_U64
	if (!err && c->opts.argv && c->opts.argv[0])
		err = collector__meta_command(c);
	return err;
}

static int collector__counter(void *ctx, const char *name, __u64 value)
{
	return collector__emit_text(ctx, MS_CHUNK_COUNTER, "%s=%llu", name,
				    (unsigned long long)value);
}

static int collector__probe_counter(void *ctx, const char *name, uint64_t value)
{
	return collector__emit_text(ctx, MS_CHUNK_COUNTER, "%s=%llu", name,
				    (unsigned long long)value);
}

int collector__emit_counters(struct collector *c)
{
	static const char *const names[] = {MS_STATS_NAMES};
	struct ms_stats *per_cpu = NULL;
	__u64 sums[MS_STATS_COUNT] = {0};
	__u32 zero = 0;
	int cpu, i, err = 0;

	_Static_assert(sizeof(names) / sizeof(names[0]) == MS_STATS_COUNT, "MS_STATS_NAMES");
	per_cpu = calloc((size_t)c->nr_possible, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map__lookup_elem(c->skel->maps.ms_stats, &zero, sizeof(zero), per_cpu,
				 (size_t)c->nr_possible * sizeof(*per_cpu), 0)) {
		err = -errno;
		goto cleanup;
	}
	for (cpu = 0; cpu < c->nr_possible; cpu++) {
		const __u64 *v = (const __u64 *)&per_cpu[cpu];

		for (i = 0; i < MS_STATS_COUNT; i++)
			sums[i] += v[i];
	}
	for (i = 0; !err && i < MS_STATS_COUNT; i++)
		err = collector__emit_text(c, MS_CHUNK_COUNTER, "%s=%llu", names[i],
					   (unsigned long long)sums[i]);
#define COUNTER(name, v)                                                                           \
	do {                                                                                       \
		if (!err)                                                                          \
			err = collector__emit_text(c, MS_CHUNK_COUNTER, name "=%llu",              \
						   (unsigned long long)(v));                       \
	} while (0)
	COUNTER("bpf.lost_no_scratch", c->skel->bss->scratch_missing);
	COUNTER("bpf.degraded_copy_cut", c->skel->bss->degraded_copy_cut);
	COUNTER("bpf.degraded_copy_skipped", c->skel->bss->degraded_copy_skipped);
	COUNTER("perf.lost_records", c->lost_records);
	COUNTER("perf.lost_events", c->lost_events);
	COUNTER("perf.ring_errors", c->ring_errors);
	COUNTER("collector.bpf_records", c->bpf_records);
	COUNTER("collector.perf_records", c->perf_records);
	COUNTER("collector.snapshot_errors", c->snapshot_errors);
	COUNTER("collector.snapshot_exited", c->snapshot_exited);
#undef COUNTER
	if (!err && c->offcpu)
		err = offcpu__counters(c->offcpu, collector__counter, c);
	if (!err)
		err = probe_rings__counters(c->probes, collector__probe_counter, c);
cleanup:
	free(per_cpu);
	return err;
}

int collector__counters(struct collector *c, stream_sink_fn sink, void *ctx)
{
	stream_sink_fn own = c->sink;
	void *own_ctx = c->sink_ctx;
	int err;

	c->sink = sink;
	c->sink_ctx = ctx;
	err = collector__emit_counters(c);
	c->sink = own;
	c->sink_ctx = own_ctx;
	return err;
}
