// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/abi/records.h"
#include "record_options.h"

_Static_assert(MS_MAX_STACK_SIZE == MS_STACK_COPY_MAX, "--stack-size limit is the sampler's");

void record_options__init(struct record_options *o)
{
	memset(o, 0, sizeof(*o));
	o->freq_hz = MS_DEFAULT_FREQ_HZ;
	o->event = MS_EVENT_CPU_CLOCK;
	o->output = MS_DEFAULT_OUTPUT;
	o->stack_size = MS_DEFAULT_STACK_SIZE;
	o->call_graph = MS_CALL_GRAPH_AUTO;
	o->ringbuf_bytes = 0; /* automatic */
	o->perf_pages = 64;
	o->off_cpu_min_ns = MS_DEFAULT_OFF_CPU_MIN_US * 1000ull;
}

int record_options__parse_stack_size(const char *arg, uint32_t *bytes)
{
	unsigned long long v;
	char *end;

	if (!arg || *arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v > MS_MAX_STACK_SIZE)
		return -EINVAL;
	*bytes = (uint32_t)((v + 7) & ~7ull);
	return 0;
}

static const char *const call_graph_names[] = {
	[MS_CALL_GRAPH_AUTO] = "auto",
	[MS_CALL_GRAPH_FP] = "fp",
	[MS_CALL_GRAPH_DWARF] = "dwarf",
};

int record_options__parse_call_graph(const char *arg, uint32_t *mode)
{
	uint32_t i;

	for (i = 0; arg && i < sizeof(call_graph_names) / sizeof(call_graph_names[0]); i++) {
		if (!strcmp(arg, call_graph_names[i])) {
			*mode = i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *record_options__call_graph_name(uint32_t mode)
{
	if (mode < sizeof(call_graph_names) / sizeof(call_graph_names[0]))
		return call_graph_names[mode];
	return "unknown";
}

uint32_t record_options__stack_copy_bytes(const struct record_options *o)
{
	return o->call_graph == MS_CALL_GRAPH_FP ? 0 : o->stack_size;
}

uint32_t record_options__ringbuf_auto(const struct record_options *o, int nr_cpus)
{
	/* Largest record as it sits in the ring: BPF_RINGBUF_HDR_SZ (8) + the
	 * sample with two full callchains + the copy. */
	uint64_t rec = 8 + sizeof(struct ms_sample) + 2 * MS_MAX_STACK_DEPTH * 8 +
		       record_options__stack_copy_bytes(o);
	uint64_t want = 2 * (uint64_t)(nr_cpus > 0 ? nr_cpus : 1) * o->freq_hz * rec / 2;
	uint64_t size = MS_RINGBUF_AUTO_MIN;

	while (size < want && size < MS_RINGBUF_AUTO_MAX)
		size <<= 1;
	return (uint32_t)size;
}

int record_options__parse_budget(const char *arg, double *pct)
{
	char *end;
	double v;

	if (!arg || !*arg)
		return -EINVAL;
	errno = 0;
	v = strtod(arg, &end);
	if (errno || *end || !(v >= 0 && v <= 100))
		return -EINVAL;
	*pct = v;
	return 0;
}
