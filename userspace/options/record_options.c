// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	o->segment_ns = MS_DEFAULT_SEGMENT_NS;
}

int record_options__parse_decimal(const char *arg, double *v, char **end)
{
	char buf[41];
	size_t n = 0, digits = 0;

	if (!arg)
		return -EINVAL;
	for (; arg[n] >= '0' && arg[n] <= '9'; n++)
		digits++;
	if (arg[n] == '.')
		for (n++; arg[n] >= '0' && arg[n] <= '9'; n++)
			digits++;
	if (!digits || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, arg, n);
	buf[n] = '\0';
	*v = strtod(buf, NULL); /* digits and one dot: always a finite number */
	*end = (char *)arg + n;
	return 0;
}

/* A non-negative decimal number at the start of arg; *end after it. */
static int parse_number(const char *arg, double *v, char **end)
{
	if (record_options__parse_decimal(arg, v, end) || *v > 1e18)
		return -EINVAL;
	return 0;
}

int record_options__parse_duration(const char *arg, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "", 1e9 },   { "ms", 1e6 },	{ "s", 1e9 },
		      { "m", 60e9 }, { "h", 3600e9 }, { "d", 86400e9 } };
	char *end;
	double v;

	if (parse_number(arg, &v, &end))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v * units[i].ns >= 1.8e19)
			return -EINVAL;
		*ns = (uint64_t)(v * units[i].ns);
		return 0;
	}
	return -EINVAL;
}

int record_options__parse_size(const char *arg, uint64_t *bytes)
{
	static const char prefixes[] = "KMGT";
	char *end;
	double v, scale = 1;
	const char *p;

	if (parse_number(arg, &v, &end))
		return -EINVAL;
	if (*end && (p = strchr(prefixes, *end))) {
		scale = (double)(1ull << (10 * (p - prefixes + 1)));
		end++;
		if (!strcmp(end, "") || !strcmp(end, "B") || !strcmp(end, "iB"))
			end += strlen(end);
	} else if (!strcmp(end, "B")) {
		end++;
	} else {
		return -EINVAL;
	}
	if (*end || v * scale >= 1.8e19)
		return -EINVAL;
	*bytes = (uint64_t)(v * scale);
	return 0;
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
	[MS_CALL_GRAPH_DWARF_KERNEL] = "dwarf-kernel",
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

int record_options__parse_budget(const char *arg, double *pct)
{
	char *end;
	double v;

	if (record_options__parse_decimal(arg, &v, &end) || *end || v > 100)
		return -EINVAL;
	*pct = v;
	return 0;
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int check_failed(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int record_options__check(const struct record_options *o, char *err, size_t errlen)
{
	long page_size = sysconf(_SC_PAGESIZE);

	if (err && errlen)
		err[0] = '\0';
	if (o->freq_hz < MS_MIN_FREQ_HZ || o->freq_hz > MS_MAX_FREQ_HZ)
		return check_failed(err, errlen,
				    "bad frequency %u Hz (%u..%u Hz: above that the sampler "
				    "itself would take the CPUs)",
				    o->freq_hz, MS_MIN_FREQ_HZ, MS_MAX_FREQ_HZ);
	if (o->event != MS_EVENT_CPU_CLOCK && o->event != MS_EVENT_CYCLES)
		return check_failed(err, errlen, "unknown sampling event %u", o->event);
	if (o->stack_size > MS_MAX_STACK_SIZE || o->stack_size % 8)
		return check_failed(err, errlen,
				    "bad stack size %u (a multiple of 8 bytes, 0..%d)",
				    o->stack_size, MS_MAX_STACK_SIZE);
	if (o->call_graph != MS_CALL_GRAPH_AUTO && o->call_graph != MS_CALL_GRAPH_FP &&
	    o->call_graph != MS_CALL_GRAPH_DWARF && o->call_graph != MS_CALL_GRAPH_DWARF_KERNEL)
		return check_failed(err, errlen, "unknown call-graph mode %u", o->call_graph);
	if ((o->call_graph == MS_CALL_GRAPH_DWARF || o->call_graph == MS_CALL_GRAPH_DWARF_KERNEL) &&
	    !o->stack_size)
		return check_failed(err, errlen, "--call-graph %s needs a stack copy "
						 "(--stack-size greater than 0)",
				    record_options__call_graph_name(o->call_graph));
	if (o->verify_unwind && o->call_graph != MS_CALL_GRAPH_DWARF_KERNEL)
		return check_failed(err, errlen, "--verify-unwind compares the in-kernel unwinder "
						 "with the copy path: it needs --call-graph "
						 "dwarf-kernel");
	if (o->call_graph == MS_CALL_GRAPH_FP && (o->explicit & MS_OPT_SET_STACK_SIZE) &&
	    o->stack_size)
		return check_failed(err, errlen,
				    "--stack-size has no effect with --call-graph fp (%s): frame "
				    "pointers copy no stack; drop it or use auto or dwarf",
				    (o->explicit & MS_OPT_SET_CALL_GRAPH) ? "given"
									 : "from the preset");
	if (o->ringbuf_bytes &&
	    (!is_pow2(o->ringbuf_bytes) || (page_size > 0 && o->ringbuf_bytes < (uint64_t)page_size) ||
	     o->ringbuf_bytes < 2 * MS_SAMPLE_MAX_SIZE))
		return check_failed(err, errlen,
				    "BPF ring buffer size must be a power of two of at least one "
				    "page and two of the largest samples");
	if (!is_pow2(o->perf_pages))
		return check_failed(err, errlen, "perf ring pages must be a power of two");
	if (!(o->budget_pct >= 0 && o->budget_pct <= 100))
		return check_failed(err, errlen,
				    "bad budget %g (percent of one CPU, 0..100; 0 = none)",
				    o->budget_pct);
	if (o->python != MS_PYTHON_BPF && o->python != MS_PYTHON_OFF)
		return check_failed(err, errlen, "unknown python mode %u (bpf, off)", o->python);
	if (o->off_cpu_min_ns > MS_MAX_OFF_CPU_MIN_US * 1000)
		return check_failed(err, errlen,
				    "bad --off-cpu-min %llu us (microseconds, 0..%llu)",
				    (unsigned long long)(o->off_cpu_min_ns / 1000),
				    MS_MAX_OFF_CPU_MIN_US);
	if (o->symbolize != MS_SYMBOLIZE_IMMEDIATE && o->symbolize != MS_SYMBOLIZE_DEFERRED)
		return check_failed(err, errlen, "unknown --symbolize mode %u", o->symbolize);
	if (o->npids > MS_MAX_PIDS)
		return check_failed(err, errlen, "more than %d pids", MS_MAX_PIDS);
	if (o->ndebug_dirs > MS_MAX_DEBUG_DIRS)
		return check_failed(err, errlen, "more than %d --debug-dir", MS_MAX_DEBUG_DIRS);
	if (!(o->duration_s >= 0) || o->duration_s > (double)MS_MAX_DURATION_S)
		return check_failed(err, errlen, "bad duration %g s (at most %llu s, ten years)",
				    o->duration_s, (unsigned long long)MS_MAX_DURATION_S);
	if (o->segment_ns < MS_MIN_SEGMENT_NS || o->segment_ns > MS_MAX_SEGMENT_NS)
		return check_failed(err, errlen, "bad --segment %.3f s (1 s .. 24 h)",
				    o->segment_ns / 1e9);
	if (o->retain_bytes && o->retain_bytes < MS_MIN_RETAIN_BYTES)
		return check_failed(err, errlen, "bad --retain %llu bytes (at least 1M)",
				    (unsigned long long)o->retain_bytes);
	if (!o->continuous && (o->retain_ns || o->retain_bytes || o->export_fmt ||
			       (o->explicit & MS_OPT_SET_SEGMENT)))
		return check_failed(err, errlen,
				    "--segment, --retain and --export need --continuous DIR");
	if (o->retain_ns && o->retain_ns < o->segment_ns)
		return check_failed(err, errlen,
				    "--retain %.3f s is shorter than one segment (%.3f s)",
				    o->retain_ns / 1e9, o->segment_ns / 1e9);
	if ((o->explicit & MS_OPT_SET_OFF_CPU_MIN) && !o->off_cpu)
		return check_failed(err, errlen, "--off-cpu-min sets the off-CPU threshold: it "
						 "needs --off-cpu (or a preset that records it)");
	if ((o->window_ns || (o->explicit & MS_OPT_SET_WINDOW)) &&
	    (o->window_ns < MS_MIN_WINDOW_NS || o->window_ns > MS_MAX_WINDOW_NS))
		return check_failed(err, errlen, "bad --window %.3f s (1 s .. 1 h)",
				    o->window_ns / 1e9);
	if (o->window_ns && o->continuous)
		return check_failed(err, errlen, "--window and --continuous exclude each other");
	return 0;
}
