// SPDX-License-Identifier: MIT
/*
 * `microscope record`: an adapter.  This file turns the command line into
 * one struct record_options (parse, then preset) and validates it
 * (record_options__check, the limits the collector shares, then what depends
 * on the machine); record_session.c runs it.  No profiling logic here.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../capture/output_check.h"
#include "../stream/memory_policy.h"
#include "../stream/stream.h"
#include "commands.h"
#include "record.h"
#include "record_scope.h"
#include "../cgroups/cgroups.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define MAX_FREQ_TEXT STR(MS_MAX_FREQ_HZ)

static const char record_usage[] =
	"usage: microscope record [options] -- COMMAND [ARGS...]\n"
	"       microscope record [options] -p PID[,PID...]\n"
	"       microscope record [options] -a\n"
	"       microscope record --replay DIR [-o FILE]\n"
	"\n"
	"Sample the CPU stacks (kernel and user) of a command, running processes,\n"
	"or the whole system, and write a capture file.\n"
	"\n"
	"  -F, --freq HZ        samples per second per CPU (default 999, max " MAX_FREQ_TEXT ")\n"
	"  -e, --event NAME     cpu-clock (default) or cycles (falls back to cpu-clock)\n"
	"  -o, --output FILE    capture file (default microscope.msc)\n"
	"  -p, --pid PID,...    attach to running processes (all threads, and children;\n"
	"                       at most " STR(MS_MAX_PIDS) " pids)\n"
	"  -a, --all-cpus       record the whole system (but microscope itself: see\n"
	"                       --include-self)\n"
	"      --cgroup PATH    only tasks of this cgroup v2 and its sub-cgroups (a path\n"
	"                       in the v2 hierarchy, absolute or relative to its root;\n"
	"                       repeatable); alone it implies -a\n"
	"      --container ID|NAME  only tasks of this container (docker, containerd,\n"
	"                       cri-o, podman id or short id of 4+ hex digits; docker,\n"
	"                       podman, systemd-nspawn or lxc name; repeatable),\n"
	"                       followed across restarts; alone it implies -a\n"
	"      --include-self   with -a, also sample microscope's own process\n"
	"      --pid-ns NS      -p gives pids as pid namespace NS sees them (a\n"
	"                       container's): NS is a host pid (its namespace), a\n"
	"                       namespace file such as /proc/PID/ns/pid (a path with\n"
	"                       a '/'), or a container id, short id or name as\n"
	"                       --container takes (its processes' pid namespace)\n"
	"  -d, --duration SEC   sample for SEC seconds, counted from when sampling\n"
	"                       starts (after setup); a command still running then\n"
	"                       is sent SIGTERM, as on SIGINT (below)\n"
	"      --call-graph fp|dwarf|dwarf-kernel|auto\n"
	"                       user stacks from frame pointers only (fp), from the\n"
	"                       copied stack with CFI (dwarf), with CFI in the kernel,\n"
	"                       copying the stack only where it stops (dwarf-kernel),\n"
	"                       or dwarf-kernel where the kernel loads it, else dwarf,\n"
	"                       with fp where CFI finds no caller (auto, default)\n"
	"      --verify-unwind  with dwarf-kernel: also copy every whole stack and count\n"
	"                       samples whose two unwinds differ (kunwind_mismatch)\n"
	"      --stack-size BYTES  user stack bytes copied per sample (default 16384,\n"
	"                       max 65536, 0 = none; rounded up to 8; not with fp)\n"
	"      --budget PCT     keep microscope's own cost (recorder CPU, BPF run\n"
	"                       time, perf's per-sample work) under PCT percent of one\n"
	"                       CPU by lengthening the sampling period (samples then\n"
	"                       weigh more); 0 = no budget\n"
	"      --preset NAME    light (99 Hz, fp, budget 1), default (999 Hz, auto,\n"
	"                       16 KiB, budget 25), detailed (999 Hz, dwarf, 64 KiB,\n"
	"                       --off-cpu, budget 50), production (97 Hz, auto,\n"
	"                       budget 1, -a unless a command or -p is given, 60 s\n"
	"                       segments); flags override it\n"
	"      --off-cpu        also record off-CPU intervals: when, how long and why\n"
	"                       each thread waited (state, waker thread and stack, or\n"
	"                       interrupt), with its stack (on in --preset detailed)\n"
	"      --off-cpu-min US shorter off-CPU intervals are only counted (default 100;\n"
	"                       0 keeps every interval)\n"
	"      --probes PREFIX[,PREFIX...]\n"
	"                       record only the probe sites (zones, marks: sdk/c,\n"
	"                       docs/probes.md) whose names start with a PREFIX\n"
	"                       (default: every site of the recorded processes)\n"
	"      --python bpf|off Python frames: walk CPython's frames in the sampler and\n"
	"                       splice them into native stacks (bpf, default; used\n"
	"                       when a CPython 3.10-3.13 is found), or native only (off)\n"
	"      --symbolize immediate|deferred\n"
	"                       names, lines and inline frames now (immediate,\n"
	"                       default), or only module identities and addresses,\n"
	"                       for `microscope symbolize` later (deferred; modules\n"
	"                       that cannot be found later are still symbolized now)\n"
	"      --debug-dir DIR  also look for separate debug files in DIR (its\n"
	"                       .build-id tree, or .gnu_debuglink names); repeatable\n"
	"      --save-raw DIR   also keep the raw ring stream in DIR (for replay);\n"
	"                       refused if DIR already holds one\n"
	"      --replay DIR     process a saved raw stream instead of recording\n"
	"      --continuous DIR write the recording as a series of complete segment\n"
	"                       captures in DIR (created 0700; one recorder per DIR);\n"
	"                       report, convert and symbolize read DIR as one capture\n"
	"      --segment DURATION  length of one segment (default 60s; 1s..24h)\n"
	"      --retain DURATION|SIZE  delete the oldest segments once older than\n"
	"                       DURATION (10m, 1h, 7d) or beyond SIZE in total\n"
	"                       (500M, 2G); the newest segment always stays\n"
	"      --export pprof|speedscope|folded  also write each segment's export\n"
	"                       beside it as it is published\n"
	"      --window DURATION  keep only the last DURATION of samples in memory;\n"
	"                       SIGUSR1 (or `microscope snapshot PID`) writes it to\n"
	"                       window-START-END.msc beside -o without stopping; the\n"
	"                       last window is written to -o at the end\n"
	"  -q, --quiet          no status line while recording, no summary line\n"
	"  -f, --force          replace FILE; without it the previous capture is kept\n"
	"                       as FILE.old (as perf keeps perf.data.old)\n"
	"  -h, --help           this text\n"
	"\n"
	"SIGINT (Ctrl-C), SIGTERM or SIGHUP to record stops sampling at once, sends the\n"
	"command SIGTERM, writes the capture and exits with the command's status\n"
	"(143 if SIGTERM ended it).  The output is checked before anything runs; a\n"
	"capture that still cannot be written at the end is saved as\n"
	"./microscope-PID.msc (or in $TMPDIR) and record exits 1.\n"
	"\n"
	"Exit status: the command's status (128+N if killed by signal N), 127 if it\n"
	"could not be run, 1 if recording failed, 2 for a usage error or an\n"
	"unwritable output.\n"
	"Needs root (CAP_BPF and CAP_PERFMON) and a kernel with BTF.\n";

/* getopt codes of long-only options. */
enum { OPT_STACK_SIZE = 0x5353, OPT_CALL_GRAPH = 0x4347, OPT_PRESET = 0x5052, OPT_BUDGET = 0x4255 };
enum { OPT_OFF_CPU = 0x4f43, OPT_OFF_CPU_MIN = 0x4f4d };
enum { OPT_PYTHON = 0x5059 };
enum { OPT_SYMBOLIZE = 0x5359, OPT_DEBUG_DIR = 0x4444 };
enum { OPT_CONTINUOUS = 0x434e, OPT_SEGMENT = 0x5347, OPT_RETAIN = 0x5254, OPT_WINDOW = 0x574e };
enum { OPT_EXPORT = 0x4558, OPT_PROBES = 0x5042 };
enum { OPT_CGROUP = 0x4347 + 0x100, OPT_CONTAINER, OPT_INCLUDE_SELF, OPT_PID_NS, OPT_VERIFY_UNWIND };

static const struct option record_longopts[] = {
	{ "freq", required_argument, NULL, 'F' },
	{ "event", required_argument, NULL, 'e' },
	{ "output", required_argument, NULL, 'o' },
	{ "pid", required_argument, NULL, 'p' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "duration", required_argument, NULL, 'd' },
	{ "save-raw", required_argument, NULL, 'R' },
	{ "replay", required_argument, NULL, 'P' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "preset", required_argument, NULL, OPT_PRESET },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "probes", required_argument, NULL, OPT_PROBES },
	{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
	{ "python", required_argument, NULL, OPT_PYTHON },
	{ "symbolize", required_argument, NULL, OPT_SYMBOLIZE },
	{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
	{ "continuous", required_argument, NULL, OPT_CONTINUOUS },
	{ "segment", required_argument, NULL, OPT_SEGMENT },
	{ "retain", required_argument, NULL, OPT_RETAIN },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "export", required_argument, NULL, OPT_EXPORT },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "include-self", no_argument, NULL, OPT_INCLUDE_SELF },
	{ "pid-ns", required_argument, NULL, OPT_PID_NS },
	{ "verify-unwind", no_argument, NULL, OPT_VERIFY_UNWIND },
	{ 0 },
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print "microscope record: MESSAGE" and return -EINVAL (exit status 2). */
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("microscope record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* How long a piece of a bad -p list is echoed (bytes): the list may hold
 * thousands of pids. */
#define PID_ECHO_MAX 40

/* Append the pids of a -p list to o->pids.  0, -ENOMEM, or -EINVAL with the
 * reason in why. */
static int parse_pids(struct record_options *o, const char *arg, char *why, size_t whylen)
{
	char *copy, *save = NULL, *tok;
	int err = 0;

	/* strtok_r would skip empty items: "1,,2", ",1" and "1," are mistakes. */
	if (!*arg || *arg == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,")) {
		snprintf(why, whylen, "an empty item");
		return -EINVAL;
	}
	copy = strdup(arg);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0 || v > 0x3fffffff) {
			snprintf(why, whylen, "'%.*s%s' is not a pid (1..%d)", PID_ECHO_MAX, tok,
				 strlen(tok) > PID_ECHO_MAX ? "..." : "", 0x3fffffff);
			err = -EINVAL;
			break;
		}
		if (o->npids == MS_MAX_PIDS) {
			snprintf(why, whylen,
				 "more than %d pids, the most one recording follows (-a, --cgroup "
				 "or --container select more)",
				 MS_MAX_PIDS);
			err = -EINVAL;
			break;
		}
		o->pids[o->npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

/* A decimal number of Hz into *hz; the range is record_options__check's. */
static int parse_freq(const char *arg, uint32_t *hz)
{
	unsigned long long v;
	char *end;

	if (*arg < '0' || *arg > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*hz = (uint32_t)v;
	return 0;
}

/* One option (getopt code opt, argument arg) into o.  Returns 0 or -EINVAL
 * (message printed). */
static int record__parse_one(struct record_options *o, int opt, const char *arg,
			     const char **preset)
{
	unsigned long long us;
	struct stat st;
	char *end;

	switch (opt) {
	case 'F':
		if (parse_freq(arg, &o->freq_hz))
			return usage_error("bad frequency '%s' (%u..%u Hz)", arg, MS_MIN_FREQ_HZ,
					   MS_MAX_FREQ_HZ);
		o->explicit |= MS_OPT_SET_FREQ;
		return 0;
	case 'e':
		if (!strcmp(arg, "cpu-clock"))
			o->event = MS_EVENT_CPU_CLOCK;
		else if (!strcmp(arg, "cycles"))
			o->event = MS_EVENT_CYCLES;
		else
			return usage_error("unknown event '%s' (cpu-clock, cycles)", arg);
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case 'p': {
		char why[160];
		int err = parse_pids(o, arg, why, sizeof(why));

		if (err == -ENOMEM)
			return usage_error("parsing the pid list: %s", strerror(ENOMEM));
		if (err)
			return usage_error("bad pid list '%.*s%s': %s", PID_ECHO_MAX, arg,
					   strlen(arg) > PID_ECHO_MAX ? "..." : "", why);
		return 0;
	}
	case 'a':
		o->system_wide = true;
		return 0;
	case 'd':
		if (record_options__parse_decimal(arg, &o->duration_s, &end) || *end ||
		    !(o->duration_s > 0) || o->duration_s > (double)MS_MAX_DURATION_S)
			return usage_error("bad duration '%s' (decimal seconds, more than 0 and "
					   "at most %llu: ten years)",
					   arg, (unsigned long long)MS_MAX_DURATION_S);
		return 0;
	case 'R':
		o->save_raw = arg;
		return 0;
	case 'P':
		o->replay = arg;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'f':
		o->force = true;
		return 0;
	case OPT_STACK_SIZE:
		if (record_options__parse_stack_size(arg, &o->stack_size))
			return usage_error("bad stack size '%s' (0..%d bytes)", arg,
					   MS_MAX_STACK_SIZE);
		o->explicit |= MS_OPT_SET_STACK_SIZE;
		return 0;
	case OPT_CALL_GRAPH:
		if (record_options__parse_call_graph(arg, &o->call_graph))
			return usage_error("unknown call graph '%s' (fp, dwarf, dwarf-kernel, auto)",
					   arg);
		o->explicit |= MS_OPT_SET_CALL_GRAPH;
		return 0;
	case OPT_VERIFY_UNWIND:
		o->verify_unwind = true;
		return 0;
	case OPT_PRESET:
		*preset = arg;
		return 0;
	case OPT_BUDGET:
		if (record_options__parse_budget(arg, &o->budget_pct))
			return usage_error("bad budget '%s' (percent of one CPU, 0..100; 0 = none)",
					   arg);
		o->explicit |= MS_OPT_SET_BUDGET;
		return 0;
	case OPT_PROBES: {
		const char *p = arg;
		size_t n = 0;

		/* PREFIX[,PREFIX...]: each 1..MS_MAX_PROBE_PREFIX bytes */
		while (*p) {
			size_t len = strcspn(p, ",");

			if (!len || len > MS_MAX_PROBE_PREFIX || ++n > MS_MAX_PROBE_PREFIXES)
				return usage_error("bad --probes '%s' (at most %d comma-separated "
						   "prefixes of 1 to %d bytes)",
						   arg, MS_MAX_PROBE_PREFIXES, MS_MAX_PROBE_PREFIX);
			p += len + (p[len] == ',');
			if (p[-1] == ',' && !*p)
				return usage_error("bad --probes '%s' (ends with a comma)", arg);
		}
		if (!n)
			return usage_error("bad --probes '' (give site name prefixes)");
		o->probes = arg;
		return 0;
	}
	case OPT_OFF_CPU:
		o->off_cpu = true;
		o->explicit |= MS_OPT_SET_OFF_CPU;
		return 0;
	case OPT_OFF_CPU_MIN:
		errno = 0;
		us = strtoull(arg, &end, 10);
		if (errno || *end || end == arg || arg[0] == '-' || us > MS_MAX_OFF_CPU_MIN_US)
			return usage_error("bad --off-cpu-min '%s' (microseconds, 0..%llu)", arg,
					   MS_MAX_OFF_CPU_MIN_US);
		o->off_cpu_min_ns = us * 1000;
		o->explicit |= MS_OPT_SET_OFF_CPU_MIN;
		return 0;
	case OPT_PYTHON:
		if (!strcmp(arg, "bpf"))
			o->python = MS_PYTHON_BPF;
		else if (!strcmp(arg, "off"))
			o->python = MS_PYTHON_OFF;
		else
			return usage_error("unknown python mode '%s' (bpf, off)", arg);
		return 0;
	case OPT_SYMBOLIZE:
		if (!strcmp(arg, "immediate"))
			o->symbolize = MS_SYMBOLIZE_IMMEDIATE;
		else if (!strcmp(arg, "deferred"))
			o->symbolize = MS_SYMBOLIZE_DEFERRED;
		else
			return usage_error("unknown --symbolize '%s' (immediate, deferred)", arg);
		o->explicit |= MS_OPT_SET_SYMBOLIZE;
		return 0;
	case OPT_DEBUG_DIR:
		if (stat(arg, &st) || !S_ISDIR(st.st_mode))
			return usage_error("--debug-dir %s: not a directory", arg);
		if (o->ndebug_dirs == MS_MAX_DEBUG_DIRS)
			return usage_error("more than %d --debug-dir", MS_MAX_DEBUG_DIRS);
		o->debug_dirs[o->ndebug_dirs++] = arg;
		return 0;
	case OPT_CONTINUOUS:
		o->continuous = arg;
		return 0;
	case OPT_SEGMENT:
		if (record_options__parse_duration(arg, &o->segment_ns))
			return usage_error("bad --segment '%s' (a duration: 10s, 1m, 1h)", arg);
		o->explicit |= MS_OPT_SET_SEGMENT;
		return 0;
	case OPT_RETAIN:
		o->retain_ns = o->retain_bytes = 0;
		if (record_options__parse_size(arg, &o->retain_bytes) &&
		    record_options__parse_duration(arg, &o->retain_ns))
			return usage_error("bad --retain '%s' (a duration: 30m, 7d; or a size: "
					   "500M, 2G)",
					   arg);
		if (!o->retain_ns && !o->retain_bytes) /* "0", "0s", "0M" */
			return usage_error("bad --retain '%s' (more than 0: a duration or size; omit "
					   "--retain to keep every segment)",
					   arg);
		return 0;
	case OPT_WINDOW:
		if (record_options__parse_duration(arg, &o->window_ns))
			return usage_error("bad --window '%s' (a duration: 10s, 5m)", arg);
		o->explicit |= MS_OPT_SET_WINDOW;
		return 0;
	case OPT_EXPORT:
		if (strcmp(arg, "pprof") && strcmp(arg, "speedscope") && strcmp(arg, "folded"))
			return usage_error("unknown --export '%s' (pprof, speedscope, folded)", arg);
		o->export_fmt = arg;
		return 0;
	case OPT_CGROUP:
	case OPT_CONTAINER:
		if (o->ncgroups + o->ncontainers == MS_MAX_CGROUPS)
			return usage_error("more than %d --cgroup and --container", MS_MAX_CGROUPS);
		if (opt == OPT_CGROUP)
			o->cgroups[o->ncgroups++] = arg;
		else
			o->containers[o->ncontainers++] = arg;
		return 0;
	case OPT_INCLUDE_SELF:
		o->include_self = true;
		return 0;
	case OPT_PID_NS:
		o->pid_ns = arg;
		return 0;
	}
	fputs(record_usage, stderr);
	return -EINVAL;
}

/*
 * The command line (argv[0] = "record") into *o: defaults, options, the
 * preset for what the options left alone, and the command after the options
 * (o->argv, borrowed from argv).  *help is set for -h.  Returns 0 or -EINVAL
 * (message printed).
 */
static int record__parse(int argc, char **argv, struct record_options *o, bool *help)
{
	const char *preset = "default";
	int opt, err;

	record_options__init(o);
	*help = false;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+F:e:o:p:ad:qfh", record_longopts, NULL)) != -1) {
		if (opt == 'h') {
			*help = true;
			return 0;
		}
		err = record__parse_one(o, opt, optarg, &preset);
		if (err)
			return err;
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (record_options__apply_preset(o, preset, o->explicit))
		return usage_error("unknown preset '%s' (light, default, detailed, production)",
				   preset);
	/* A cgroup or container scope alone records its tasks host-wide. */
	if ((o->ncgroups || o->ncontainers) && !o->argv && !o->npids && !o->replay)
		o->system_wide = true;
	return 0;
}

/* kernel.perf_event_max_sample_rate (Hz), or 0 if unreadable. */
static long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	long v = 0;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/*
 * Everything that can be refused before anything runs: the limits shared
 * with the collector (record_options__check), one source of samples, the
 * kernel's sample-rate limit, a writable output and a free --save-raw
 * directory.  Returns 0 or -EINVAL (message printed).
 */
static int record__validate(const struct record_options *o)
{
	char why[512];
	long max_rate;

	if (record_options__check(o, why, sizeof(why)))
		return usage_error("%s", why);
	if (!!o->argv + !!o->npids + o->system_wide + !!o->replay != 1) {
		usage_error("give exactly one of a command, -p PID, -a or --replay DIR\n");
		fputs(record_usage, stderr);
		return -EINVAL;
	}
	max_rate = o->replay ? 0 : max_sample_rate();
	if (max_rate > 0 && o->freq_hz > max_rate)
		return usage_error("%u Hz exceeds kernel.perf_event_max_sample_rate=%ld (raise it "
				   "with sysctl, or use a lower -F)",
				   o->freq_hz, max_rate);
	if (!o->continuous && capture__check_output(o->output, why, sizeof(why)))
		return usage_error("%s", why);
	if (o->continuous) {
		struct stat st;

		/* An existing non-directory is refused before any work, as -o DIR is. */
		if (!stat(o->continuous, &st) && !S_ISDIR(st.st_mode))
			return usage_error("--continuous %s is not a directory", o->continuous);
	}
	if (o->save_raw && !o->replay) {
		char raw[4096];
		struct stat st;

		snprintf(raw, sizeof(raw), "%s/%s", o->save_raw, MS_RAW_FILE);
		if (!stat(raw, &st))
			return usage_error("--save-raw %s already holds a raw stream (%s): remove it "
					   "or give another directory",
					   o->save_raw, raw);
	}
	return 0;
}

/*
 * --pid-ns: every -p pid from the namespace's numbering to the host's
 * (cgroups.h pid_ns__host_pid).  Returns 0, or -errno after printing why.
 */
static int record__translate_pids(struct record_options *o)
{
	char why[512] = "";
	int fd, err = 0;

	if (!o->npids) {
		usage_error("--pid-ns needs -p PID");
		return -EINVAL;
	}
	fd = pid_ns__open("/proc", record_scope__state_root(), o->pid_ns, why, sizeof(why));
	if (fd < 0) {
		fprintf(stderr, "microscope record: %s\n", why);
		return fd;
	}
	for (size_t i = 0; i < o->npids && !err; i++) {
		pid_t host;

		err = pid_ns__host_pid("/proc", fd, o->pids[i], &host, why, sizeof(why));
		if (err)
			fprintf(stderr, "microscope record: --pid-ns %s: %s\n", o->pid_ns, why);
		else
			o->pids[i] = host;
	}
	close(fd);
	return err;
}

/* argv (NULL-terminated) joined by spaces into buf, truncated to len. */
static void join_args(char *buf, size_t len, char **argv)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

/* The kernel's initial pid namespace (PROC_PID_INIT_INO, linux/proc_ns.h). */
#define INIT_PID_NS_INO 0xEFFFFFFCull

/*
 * The sampler reports host tgids, while perf's side-band records carry pids
 * as the recorder's own pid namespace sees them (0 for a task outside it):
 * a recorder in a pid namespace of its own could join no sample to its
 * process.  Returns 0, or -EPERM after printing why.
 */
static int record__check_pid_namespace(void)
{
	unsigned long long ino;
	char link[64];
	ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);

	if (n < 0)
		return 0; /* no namespace files: nothing to tell */
	link[n] = '\0';
	if (sscanf(link, "pid:[%llu]", &ino) != 1 || ino == INIT_PID_NS_INO)
		return 0;
	fprintf(stderr,
		"microscope record: this process runs in a pid namespace of its own (%s), not the\n"
		"host's, so the kernel's samples name pids it cannot see; run it in the host's pid\n"
		"namespace (docker/podman --pid=host, Kubernetes hostPID: true)\n",
		link);
	return -EPERM;
}

/*
 * -a and -p: the recorder's nice value to MS_RECORDER_NICE (memory_policy.h
 * says why) when it runs at 0, before any thread is made (a nice value is
 * per thread).  Not with a command: the command would inherit it.  Without
 * CAP_SYS_NICE the call fails and the value stays.
 */
static void record__prioritize(const struct record_options *o)
{
	errno = 0;
	if (o->argv || getpriority(PRIO_PROCESS, 0) != 0 || errno)
		return;
	(void)setpriority(PRIO_PROCESS, 0, MS_RECORDER_NICE);
}

int cmd_record(int argc, char **argv)
{
	struct record_options o;
	char cmdline[4096], scope_desc[1024], why[512];
	struct record_scope *scope;
	int status;
	bool help;

	/* Freed start-up tables go back to the kernel (memory_policy.h). */
	mallopt(M_MMAP_THRESHOLD, MS_RECORDER_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, MS_RECORDER_MMAP_THRESHOLD);
	if (record__parse(argc, argv, &o, &help))
		return 2;
	if (help) {
		fputs(record_usage, stdout);
		return 0;
	}
	if (record__validate(&o))
		return 2;
	if (!o.replay && record__check_pid_namespace())
		return 2;
	if (o.pid_ns && !o.replay && record__translate_pids(&o))
		return 2;
	/* Before anything is attached: a scope that selects nothing is a usage error. */
	scope = record_scope__new("/proc", record_scope__state_root());
	if (!scope) {
		fprintf(stderr, "microscope record: %s\n", strerror(errno));
		return 1;
	}
	if (!o.replay && record_scope__resolve(scope, &o, "/proc/self/mountinfo", o.cgroups,
					       o.ncgroups, o.containers, o.ncontainers, scope_desc,
					       sizeof(scope_desc), why, sizeof(why))) {
		fprintf(stderr, "microscope record: %s\n", why);
		record_scope__free(scope);
		return 2;
	}
	o.scope_desc = scope_desc[0] ? scope_desc : NULL;
	if (o.replay) {
		status = record_session__replay(&o);
	} else {
		join_args(cmdline, sizeof(cmdline), argv);
		record__prioritize(&o);
		status = record_session__run(&o, cmdline, scope);
	}
	record_scope__free(scope);
	return status;
}
