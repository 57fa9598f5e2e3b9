// SPDX-License-Identifier: MIT
/*
 * `microscope record`: an adapter.  It parses options into one struct
 * record_options, then wires collector -> (raw stream writer) -> processor
 * -> capture builder, runs the drain loop until the command exits, the
 * targets are gone, the duration ends or SIGINT/SIGTERM arrives, and seals
 * the capture.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../capture/capture.h"
#include "../../capture/output_check.h"
#include "../collector/collector.h"
#include "../processor/processor.h"
#include "../budget/monitor.h"
#include "../runtimes/py_procs.h"
#include "../symbols/symbols.h"
#include "commands.h"
#include "record_scope.h"

static const char record_usage[] =
	"usage: microscope record [options] -- COMMAND [ARGS...]\n"
	"       microscope record [options] -p PID[,PID...]\n"
	"       microscope record [options] -a\n"
	"       microscope record --replay DIR [-o FILE]\n"
	"\n"
	"Sample the CPU stacks (kernel and user) of a command, running processes,\n"
	"or the whole system, and write a capture file.\n"
	"\n"
	"  -F, --freq HZ        samples per second per CPU (default 999, max 20000)\n"
	"  -e, --event NAME     cpu-clock (default) or cycles (falls back to cpu-clock)\n"
	"  -o, --output FILE    capture file (default microscope.msc)\n"
	"  -p, --pid PID,...    attach to running processes (all threads, and children)\n"
	"  -a, --all-cpus       record the whole system (but microscope itself: see\n"
	"                       --include-self)\n"
	"      --cgroup PATH    only tasks of this cgroup v2 and its sub-cgroups (a path\n"
	"                       in the v2 hierarchy, absolute or relative to its root;\n"
	"                       repeatable); alone it implies -a\n"
	"      --container ID|NAME  only tasks of this container (docker, containerd,\n"
	"                       cri-o, podman id or short id, systemd-nspawn machine or\n"
	"                       lxc name; repeatable); alone it implies -a\n"
	"      --include-self   with -a, also sample microscope's own process\n"
	"  -d, --duration SEC   sample for SEC seconds, counted from when sampling\n"
	"                       starts (after setup); a command still running then\n"
	"                       is sent SIGTERM, as on SIGINT (below)\n"
	"      --call-graph fp|dwarf|auto\n"
	"                       user stacks from frame pointers only (fp), from the\n"
	"                       copied stack with CFI (dwarf), or both (auto, default)\n"
	"      --stack-size BYTES  user stack bytes copied per sample (default 16384,\n"
	"                       max 65536, 0 = none; rounded up to 8; not with fp)\n"
	"      --budget PCT     keep microscope's own cost (recorder CPU, BPF run\n"
	"                       time, perf's per-sample work) under PCT percent of one\n"
	"                       CPU by lengthening the sampling period (samples then\n"
	"                       weigh more); 0 = no budget\n"
	"      --preset NAME    light (99 Hz, fp, budget 1), default (999 Hz, auto,\n"
	"                       16 KiB, budget 25), detailed (999 Hz, dwarf, 64 KiB,\n"
	"                       --off-cpu, budget 50); flags override it\n"
	"      --off-cpu        also record off-CPU intervals: when, how long and why\n"
	"                       each thread waited (state, waker thread and stack, or\n"
	"                       interrupt), with its stack (on in --preset detailed)\n"
	"      --off-cpu-min US shorter off-CPU intervals are only counted (default 100;\n"
	"                       0 keeps every interval)\n"
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
	"  -q, --quiet          no summary line\n"
	"  -h, --help           this text\n"
	"\n"
	"SIGINT (Ctrl-C) or SIGTERM to record stops sampling at once, sends the\n"
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
enum { OPT_CGROUP = 0x4347 + 0x100, OPT_CONTAINER, OPT_INCLUDE_SELF };
/* --debug-dir values kept at most. */
#define RECORD_MAX_DEBUG_DIRS 32

static volatile sig_atomic_t stop_signal;
/* The collector whose sampling a stop signal or the duration timer halts
 * (collector__halt_sampling is async-signal-safe), or NULL. */
static struct collector *volatile halt_col;

static void on_signal(int sig)
{
	stop_signal = sig;
	collector__halt_sampling(halt_col);
}

struct tee {
	struct stream_writer *raw;
	struct processor *proc;
	struct py_tracker *py; /* NULL unless CPython frames are walked */
	bool quiet;
};

static int tee_sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	struct tee *t = ctx;
	int err;

	/* Tell the user about a fallback the collector chose (e.g. -e cycles on
	 * a machine without hardware counters). */
	if (c->kind == MS_CHUNK_META && !t->quiet && c->len > 11 &&
	    !memcmp(payload, "event.note=", 11))
		fprintf(stderr, "microscope record: note: %.*s\n", (int)c->len - 11,
			(const char *)payload + 11);
	if (t->raw) {
		err = stream_writer__sink(t->raw, c, payload);
		if (err)
			return err;
	}
	/* Before a round releases records (whose first use of a large module
	 * may take a while to symbolize), give the CPython tracker its turn:
	 * samples taken before it detects a process have no Python frames. */
	if (c->kind == MS_CHUNK_ROUND && t->py)
		py_tracker__poll(t->py, c->time);
	return processor__sink(t->proc, c, payload);
}

static int emit_meta(struct tee *t, const char *key, const char *value)
{
	char buf[8192];
	int n = snprintf(buf, sizeof(buf), "%s=%s", key, value);
	struct ms_chunk c = { .kind = MS_CHUNK_META };

	if (n < 0 || (size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1;
	c.len = n;
	return tee_sink(t, &c, buf);
}

static int parse_pids(struct record_options *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	/* strtok_r would skip empty items: "1,,2", ",1" and "1," are mistakes. */
	if (!*arg || *arg == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,")) {
		free(copy);
		return -EINVAL;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);

		if (*end || v <= 0 || v > 0x3fffffff || o->npids == MS_MAX_PIDS) {
			err = -EINVAL;
			break;
		}
		o->pids[o->npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int exit_status_of(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

static void join_args(char *buf, size_t len, int argc, char **argv)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

/*
 * Where a capture goes when path cannot take it: ./microscope-PID.msc, else
 * $TMPDIR (or /tmp)/microscope-PID.msc.  Returns 0 with the path used in
 * buf, or -errno of the last attempt.
 */
static int seal_fallback(struct capture_builder *b, char *buf, size_t len)
{
	const char *tmpdir = getenv("TMPDIR");
	int err;

	char cwd[2048];

	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), ".");
	snprintf(buf, len, "%s/microscope-%d.msc", cwd, (int)getpid());
	err = capture_builder__write(b, buf);
	if (!err)
		return 0;
	snprintf(buf, len, "%s/microscope-%d.msc", tmpdir && *tmpdir ? tmpdir : "/tmp",
		 (int)getpid());
	return capture_builder__write(b, buf);
}

static int seal(struct processor *proc, struct capture_builder *b, const char *path, bool quiet)
{
	int err = processor__finish(proc);
	char fallback[4096];

	if (err) {
		fprintf(stderr, "microscope record: cannot finish the capture: %s\n",
			strerror(-err));
		return err;
	}
	err = capture_builder__write(b, path);
	if (err) {
		const char *why = capture_builder__error(b);

		if (why && why[0]) /* why starts with the path */
			fprintf(stderr, "microscope record: cannot write capture %s\n", why);
		else
			fprintf(stderr, "microscope record: cannot write capture %s: %s\n", path,
				strerror(-err));
		/* The recording cannot be redone: keep it somewhere. */
		if (!seal_fallback(b, fallback, sizeof(fallback)))
			fprintf(stderr, "microscope record: capture saved to %s instead\n",
				fallback);
		else
			fprintf(stderr, "microscope record: could not save the capture anywhere "
					"(tried ./ and $TMPDIR): %s\n",
				capture_builder__error(b));
		return err;
	}
	if (!quiet) {
		struct stat st;

		if (stat(path, &st))
			st.st_size = 0;
		fprintf(stderr, "[ microscope: %llu samples written to %s (%.1f KiB) ]\n",
			(unsigned long long)processor__samples(proc), path, st.st_size / 1024.0);
	}
	return 0;
}

static bool any_alive(const struct record_options *o)
{
	for (size_t i = 0; i < o->npids; i++)
		if (!kill(o->pids[i], 0) || errno == EPERM)
			return true;
	return false;
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

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "event", required_argument, NULL, 'e' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "save-raw", required_argument, NULL, 'R' },
		{ "replay", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "preset", required_argument, NULL, OPT_PRESET },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "off-cpu-min", required_argument, NULL, OPT_OFF_CPU_MIN },
		{ "python", required_argument, NULL, OPT_PYTHON },
		{ "symbolize", required_argument, NULL, OPT_SYMBOLIZE },
		{ "debug-dir", required_argument, NULL, OPT_DEBUG_DIR },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "container", required_argument, NULL, OPT_CONTAINER },
		{ "include-self", no_argument, NULL, OPT_INCLUDE_SELF },
		{ 0 },
	};
	struct record_options o;
	struct capture_builder *b = NULL;
	struct symbolizer *sym = NULL;
	struct collector *col = NULL;
	struct budget_monitor *budget = NULL;
	struct py_tracker *py = NULL;
	struct launcher launch = { .pid = -1, .gate_fd = -1, .error_fd = -1 };
	struct tee tee = { 0 };
	const char *replay = NULL, *preset = "default";
	uint32_t explicit = 0;
	char err_msg[512] = "", cmdline[4096];
	int opt, err, status = 1, wstatus;
	bool child_done = false;
	double t_end = 0;
	const char *symbolize = "immediate";
	bool symbolize_set = false;
	const char *debug_dirs[RECORD_MAX_DEBUG_DIRS];
	size_t ndebug_dirs = 0;
	const char *cgroups[MS_MAX_CGROUPS], *containers[MS_MAX_CGROUPS];
	size_t ncgroups = 0, ncontainers = 0;
	char scope_desc[1024] = "";

	record_options__init(&o);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+F:e:o:p:ad:qh", longopts, NULL)) != -1) {
		char *end;

		switch (opt) {
		case 'F': {
			long v = strtol(optarg, &end, 10);

			if (*end || v < 1 || v > 20000) {
				fprintf(stderr,
					"microscope record: bad frequency '%s' (1..20000 Hz: above "
					"that the sampler itself would take the CPUs)\n",
					optarg);
				return 2;
			}
			o.freq_hz = v;
			explicit |= MS_OPT_SET_FREQ;
			break;
		}
		case 'e':
			if (!strcmp(optarg, "cpu-clock")) {
				o.event = MS_EVENT_CPU_CLOCK;
			} else if (!strcmp(optarg, "cycles")) {
				o.event = MS_EVENT_CYCLES;
			} else {
				fprintf(stderr, "microscope record: unknown event '%s' (cpu-clock, cycles)\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			if (parse_pids(&o, optarg)) {
				fprintf(stderr, "microscope record: bad pid list '%s'\n", optarg);
				return 2;
			}
			break;
		case 'a':
			o.system_wide = true;
			break;
		case 'd':
			o.duration_s = strtod(optarg, &end);
			if (*end || o.duration_s <= 0) {
				fprintf(stderr, "microscope record: bad duration '%s'\n", optarg);
				return 2;
			}
			break;
		case 'R':
			o.save_raw = optarg;
			break;
		case 'P':
			replay = optarg;
			break;
		case 'q':
			o.quiet = true;
			break;
		case OPT_STACK_SIZE:
			if (record_options__parse_stack_size(optarg, &o.stack_size)) {
				fprintf(stderr, "microscope record: bad stack size '%s' (0..%d bytes)\n",
					optarg, MS_MAX_STACK_SIZE);
				return 2;
			}
			explicit |= MS_OPT_SET_STACK_SIZE;
			break;
		case OPT_CALL_GRAPH:
			if (record_options__parse_call_graph(optarg, &o.call_graph)) {
				fprintf(stderr, "microscope record: unknown call graph '%s' (fp, dwarf, auto)\n",
					optarg);
				return 2;
			}
			explicit |= MS_OPT_SET_CALL_GRAPH;
			break;
		case OPT_PRESET:
			preset = optarg;
			break;
		case OPT_BUDGET:
			if (record_options__parse_budget(optarg, &o.budget_pct)) {
				fprintf(stderr, "microscope record: bad budget '%s' (percent of one "
						"CPU, 0..100; 0 = none)\n",
					optarg);
				return 2;
			}
			explicit |= MS_OPT_SET_BUDGET;
			break;
		case OPT_OFF_CPU:
			o.off_cpu = true;
			explicit |= MS_OPT_SET_OFF_CPU;
			break;
		case OPT_OFF_CPU_MIN: {
			unsigned long long v;

			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-' ||
			    v > 3600ull * 1000000) {
				fprintf(stderr,
					"microscope record: bad --off-cpu-min '%s' (microseconds, "
					"0..3600000000)\n",
					optarg);
				return 2;
			}
			o.off_cpu_min_ns = v * 1000;
			break;
		}
		case OPT_PYTHON:
			if (!strcmp(optarg, "bpf")) {
				o.python = MS_PYTHON_BPF;
			} else if (!strcmp(optarg, "off")) {
				o.python = MS_PYTHON_OFF;
			} else {
				fprintf(stderr, "microscope record: unknown python mode '%s' (bpf, off)\n",
					optarg);
				return 2;
			}
			break;
		case OPT_SYMBOLIZE:
			if (strcmp(optarg, "immediate") && strcmp(optarg, "deferred")) {
				fprintf(stderr,
					"microscope record: unknown --symbolize '%s' (immediate, "
					"deferred)\n",
					optarg);
				return 2;
			}
			symbolize = optarg;
			symbolize_set = true;
			break;
		case OPT_DEBUG_DIR: {
			struct stat st;

			if (stat(optarg, &st) || !S_ISDIR(st.st_mode)) {
				fprintf(stderr, "microscope record: --debug-dir %s: not a directory\n",
					optarg);
				return 2;
			}
			if (ndebug_dirs == RECORD_MAX_DEBUG_DIRS) {
				fprintf(stderr, "microscope record: more than %d --debug-dir\n",
					RECORD_MAX_DEBUG_DIRS);
				return 2;
			}
			debug_dirs[ndebug_dirs++] = optarg;
			break;
		}
		case OPT_CGROUP:
		case OPT_CONTAINER:
			if (ncgroups + ncontainers == MS_MAX_CGROUPS) {
				fprintf(stderr, "microscope record: more than %d --cgroup and "
						"--container\n", MS_MAX_CGROUPS);
				return 2;
			}
			if (opt == OPT_CGROUP)
				cgroups[ncgroups++] = optarg;
			else
				containers[ncontainers++] = optarg;
			break;
		case OPT_INCLUDE_SELF:
			o.include_self = true;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 0;
		default:
			fputs(record_usage, stderr);
			return 2;
		}
	}
	if (record_options__apply_preset(&o, preset, explicit)) {
		fprintf(stderr, "microscope record: unknown preset '%s' (light, default, detailed)\n",
			preset);
		return 2;
	}
	if (o.call_graph == MS_CALL_GRAPH_DWARF && !o.stack_size) {
		fprintf(stderr, "microscope record: --call-graph dwarf needs a stack copy "
				"(--stack-size greater than 0)\n");
		return 2;
	}
	if (o.call_graph == MS_CALL_GRAPH_FP && (explicit & MS_OPT_SET_STACK_SIZE) &&
	    o.stack_size) {
		fprintf(stderr, "microscope record: --stack-size has no effect with --call-graph "
				"fp (%s): frame pointers copy no stack; drop it or use auto or "
				"dwarf\n",
			(explicit & MS_OPT_SET_CALL_GRAPH) ? "given" : "from the preset");
		return 2;
	}
	if (optind < argc)
		o.argv = argv + optind;
	/* A cgroup or container scope alone records its tasks host-wide. */
	if ((ncgroups || ncontainers) && !o.argv && !o.npids && !replay)
		o.system_wide = true;
	if (!!o.argv + !!o.npids + o.system_wide + !!replay != 1) {
		fprintf(stderr, "microscope record: give exactly one of a command, -p PID, -a or "
				"--replay DIR\n\n%s",
			record_usage);
		return 2;
	}
	if (!replay && max_sample_rate() > 0 && o.freq_hz > max_sample_rate()) {
		fprintf(stderr,
			"microscope record: %u Hz exceeds kernel.perf_event_max_sample_rate=%ld "
			"(raise it with sysctl, or use a lower -F)\n",
			o.freq_hz, max_sample_rate());
		return 2;
	}
	if (capture__check_output(o.output, err_msg, sizeof(err_msg))) {
		fprintf(stderr, "microscope record: %s\n", err_msg);
		return 2;
	}
	if (o.save_raw && !replay) {
		char raw[4096];
		struct stat st;

		snprintf(raw, sizeof(raw), "%s/%s", o.save_raw, MS_RAW_FILE);
		if (!stat(raw, &st)) {
			fprintf(stderr, "microscope record: --save-raw %s already holds a raw stream "
					"(%s): remove it or give another directory\n",
				o.save_raw, raw);
			return 2;
		}
	}
	/* Before anything is attached: a scope that selects nothing is a usage error. */
	if (!replay && record_scope__resolve(&o, "/proc/self/mountinfo", "/proc", cgroups, ncgroups,
					     containers, ncontainers, scope_desc,
					     sizeof(scope_desc), err_msg, sizeof(err_msg))) {
		fprintf(stderr, "microscope record: %s\n", err_msg);
		return 2;
	}
	for (size_t i = 0; i < o.npids; i++) {
		if (kill(o.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "microscope record: no process with pid %d\n", o.pids[i]);
			return 1;
		}
	}

	b = capture_builder__new();
	sym = symbolizer__new();
	for (size_t i = 0; sym && i < ndebug_dirs; i++)
		if (symbolizer__add_debug_dir(sym, debug_dirs[i])) {
			symbolizer__free(sym);
			sym = NULL;
		}
	if (b && sym)
		tee.proc = processor__new(b, sym);
	if (!tee.proc) {
		fprintf(stderr, "microscope record: out of memory\n");
		goto cleanup;
	}
	if (replay) {
		/* The stream's own meta says how it was recorded; an explicit
		 * --symbolize replays it the other way. */
		if (symbolize_set)
			processor__force_symbolize(tee.proc, !strcmp(symbolize, "deferred"));
		err = stream__replay(replay, processor__sink, tee.proc);
		if (err) {
			if (err != -EBADMSG)
				fprintf(stderr, "microscope record: cannot replay %s: %s\n", replay,
					strerror(-err));
			goto cleanup;
		}
		status = seal(tee.proc, b, o.output, o.quiet) ? 1 : 0;
		goto cleanup;
	}
	/* Live: at most 5 ms of processing per drain round, at most 2 s behind. */
	processor__set_round_budget(tee.proc, 5000000, 2000000000ull);
	tee.quiet = o.quiet;
	if (o.save_raw) {
		tee.raw = stream_writer__new(o.save_raw);
		if (!tee.raw) {
			fprintf(stderr, "microscope record: cannot write raw stream to %s: %s\n",
				o.save_raw, strerror(errno));
			goto cleanup;
		}
	}

	join_args(cmdline, sizeof(cmdline), argc, argv);
	emit_meta(&tee, "record_command", cmdline);
	if (o.argv) {
		join_args(cmdline, sizeof(cmdline), argc - optind, argv + optind);
		emit_meta(&tee, "command", cmdline);
	}
	snprintf(cmdline, sizeof(cmdline), "%u", o.freq_hz);
	emit_meta(&tee, "requested_freq_hz", cmdline);
	emit_meta(&tee, "preset", o.preset);
	emit_meta(&tee, "symbolize", symbolize);
	if (scope_desc[0])
		emit_meta(&tee, "scope.cgroups", scope_desc);
	if (o.system_wide)
		emit_meta(&tee, "scope.self", o.include_self ? "included" : "excluded");

	if (o.argv) {
		err = launcher__spawn(&launch, o.argv);
		if (err) {
			fprintf(stderr, "microscope record: cannot start %s: %s\n", o.argv[0],
				strerror(-err));
			goto cleanup;
		}
	}
	col = collector__new(&o, tee_sink, &tee, err_msg, sizeof(err_msg));
	if (!col) {
		fprintf(stderr, "microscope record: %s\n", err_msg);
		goto cleanup;
	}
	if (o.budget_pct > 0) {
		/* After the collector: its load names missing privileges first. */
		budget = budget_monitor__new(o.budget_pct, o.freq_hz, err_msg, sizeof(err_msg));
		if (!budget) {
			fprintf(stderr, "microscope record: %s\n", err_msg);
			goto cleanup;
		}
		if (budget_monitor__note(budget) && !o.quiet)
			fprintf(stderr, "microscope record: note: budget: BPF stats %s\n",
				budget_monitor__note(budget));
		budget_monitor__emit_meta(budget, tee_sink, &tee);
	}
	if (o.python == MS_PYTHON_BPF && !o.system_wide) {
		py = py_tracker__new(collector__map_fd(col, "py_procs"),
				     collector__map_fd(col, "py_threads"),
				     collector__map_fd(col, "targets"),
				     collector__map_fd(col, "py_exits"));
		if (!py) {
			fprintf(stderr, "microscope record: out of memory\n");
			goto cleanup;
		}
		processor__set_python(tee.proc, py);
		tee.py = py;
	}
	emit_meta(&tee, "python", o.python == MS_PYTHON_OFF ? "off" : o.system_wide ? "off (-a)"
											: "bpf");
	if (o.argv)
		err = collector__add_target(col, launch.pid);
	for (size_t i = 0; i < o.npids; i++)
		err = collector__add_target(col, o.pids[i]);

	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	err = collector__start(col, err_msg, sizeof(err_msg));
	if (err) {
		fprintf(stderr, "microscope record: %s\n", err_msg);
		goto cleanup;
	}
	halt_col = col;
	/* --duration counts from here, when sampling is attached (not from
	 * before the BPF load and snapshots), and the timer halts sampling on
	 * time even while a drain round is busy processing. */
	if (o.duration_s > 0) {
		struct itimerval it = { 0 };
		double whole = (double)(long)o.duration_s;

		t_end = now_s() + o.duration_s;
		it.it_value.tv_sec = (time_t)whole;
		it.it_value.tv_usec = (suseconds_t)((o.duration_s - whole) * 1e6);
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		setitimer(ITIMER_REAL, &it, NULL);
	}
	if (o.argv) {
		err = launcher__release(&launch);
		if (err) {
			fprintf(stderr, "microscope record: cannot run '%s': %s\n", o.argv[0],
				strerror(-err));
			waitpid(launch.pid, &wstatus, 0);
			launch.pid = -1;
			status = 127;
			goto cleanup;
		}
	}
	while (!stop_signal) {
		if (py)
			py_tracker__poll(py, (uint64_t)(now_s() * 1e9));
		/* CPython code objects are named from the live process as
		 * records arrive (processor/python.c), so draining must not
		 * wait behind slow processing: each round processes for at
		 * most 5 ms (processor__set_round_budget) and the loop comes
		 * back at once while records wait. */
		err = collector__poll(col, processor__behind(tee.proc) ? 0 : py ? 20 : 100);
		if (err < 0) {
			fprintf(stderr, "microscope record: draining rings: %s\n", strerror(-err));
			break;
		}
		if (o.argv && waitpid(launch.pid, &wstatus, WNOHANG) == launch.pid) {
			child_done = true;
			status = exit_status_of(wstatus);
			break;
		}
		if (o.npids && !any_alive(&o))
			break;
		if (t_end && now_s() >= t_end)
			break;
		if (budget) {
			err = budget_monitor__tick(budget, col);
			if (err) {
				/* Keep recording at the duty in force, without control. */
				fprintf(stderr, "microscope record: budget disabled: %s\n",
					strerror(-err));
				budget_monitor__free(budget);
				budget = NULL;
			}
		}
	}
	/* Sampling ends here at the latest (the duration timer or a signal may
	 * have halted it already): what follows is processing the backlog. */
	collector__halt_sampling(col);
	halt_col = NULL;
	if (o.argv && !child_done) {
		/* Stopped by a signal or the duration: end the command like perf does. */
		kill(launch.pid, SIGTERM);
		if (waitpid(launch.pid, &wstatus, 0) == launch.pid)
			status = exit_status_of(wstatus);
		child_done = true;
	} else if (!o.argv) {
		status = 0;
	}
	if (budget && budget_monitor__finish(budget, col, tee_sink, &tee))
		fprintf(stderr, "microscope record: budget: cannot read the final counters\n");
	if (py && py_tracker__describe(py))
		emit_meta(&tee, "python_runtime", py_tracker__describe(py));
	err = collector__stop(col);
	if (err) {
		fprintf(stderr, "microscope record: stopping: %s\n", strerror(-err));
		status = 1;
	}
	collector__free(col);
	col = NULL;
	if (seal(tee.proc, b, o.output, o.quiet))
		status = 1;
cleanup:
	if (launch.pid > 0 && !child_done) {
		kill(launch.pid, SIGKILL);
		waitpid(launch.pid, NULL, 0);
	}
	collector__free(col);
	budget_monitor__free(budget);
	if (tee.raw && stream_writer__free(tee.raw)) {
		fprintf(stderr, "microscope record: cannot finish raw stream in %s\n", o.save_raw);
		status = 1;
	}
	processor__free(tee.proc);
	py_tracker__free(py);
	symbolizer__free(sym);
	capture_builder__free(b);
	return status;
}
