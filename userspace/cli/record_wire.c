// SPDX-License-Identifier: MIT
/*
 * Wiring one live recording (record_session.c runs it): capture builder,
 * symbolizer, processor; the raw stream writer (--save-raw); META chunks;
 * the command behind its gate; the collector (BPF load); the budget
 * monitor; the CPython tracker; the in-kernel unwinder's tables; the
 * targets in the kernel filter.  Also the tee every chunk the collector
 * emits goes through (record_session__sink) and the report of a failed
 * step.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../capture/capture.h"
#include "../../capture/segment_dir.h"
#include "../budget/monitor.h"
#include "../collector/collector.h"
#include "../processor/kunwind_maps.h"
#include "../processor/processor.h"
#include "../runtimes/py_procs.h"
#include "../stream/memory_policy.h"
#include "../stream/meta.h"
#include "../symbols/symbols.h"
#include "cli_util.h"
#include "record.h"
#include "record_counters.h"
#include "record_probes.h"
#include "record_python.h"
#include "record_rolling.h"
#include "record_session.h"

/* "microscope record: STEP: strerror(-err)" on stderr; STEP from fmt. */
void record_session__step_failed(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("microscope record: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err < 0 ? -err : err));
}

/* errno as -errno for a constructor that returned NULL (ENOMEM if unset). */
static int neg_errno(void) { return errno ? -errno : -ENOMEM; }

/* A stream_sink_fn: the raw stream writer (when saving), then the processor. */
int record_session__sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	struct record_session *s = ctx;
	int err;

	/* Tell the user about a fallback the collector chose (e.g. -e cycles on
	 * a machine without hardware counters). */
	if (c->kind == MS_CHUNK_META && !s->o->quiet) {
		struct ms_meta m;

		if (!ms_meta__parse(payload, c->len, &m)) {
			if (m.id == MS_META_EVENT_NOTE)
				fprintf(stderr, "microscope record: note: %s\n", m.value);
			ms_meta__release(&m);
		}
	}
	if (s->raw) {
		err = stream_writer__sink(s->raw, c, payload);
		if (err)
			return err;
	}
	/* Before a round releases records (whose first use of a large module
	 * may take a while to symbolize), give the CPython tracker its turn:
	 * samples taken before it detects a process have no Python frames.
	 * Its return (processes known) is not needed here. */
	if (c->kind == MS_CHUNK_ROUND && s->py)
		(void)py_tracker__poll(s->py, c->time);
	if (s->py && s->o->system_wide)
		record_python__chunk(&s->pyw, s->py, c, payload);
	if (s->o->system_wide)
		record_probes__chunk(&s->probes, s->col, c, payload);
	return processor__sink(s->proc, c, payload);
}

/* One typed META pair (stream/meta.h) through the sink.  Returns 0 or
 * -errno (the step that failed is reported). */
int record_session__emit_meta(struct record_session *s, enum ms_meta_id id, const char *value)
{
	int err = ms_meta__emit(record_session__sink, s, id, value);

	if (err)
		record_session__step_failed(err, "writing meta %s", ms_meta_keys[id].key);
	return err;
}

/* Builder, symbolizer (with the --debug-dir directories) and processor. */
int record_session__open_processor(struct record_session *s)
{
	const struct record_options *o = s->o;
	char kcache[PATH_MAX];
	int err;

	errno = 0;
	s->b = capture_builder__new();
	if (!s->b) {
		err = neg_errno();
		record_session__step_failed(err, "creating the capture builder");
		return err;
	}
	errno = 0;
	s->sym = symbolizer__new();
	if (!s->sym) {
		err = neg_errno();
		record_session__step_failed(err, "creating the symbolizer");
		return err;
	}
	for (size_t i = 0; i < o->ndebug_dirs; i++) {
		err = symbolizer__add_debug_dir(s->sym, o->debug_dirs[i]);
		if (err) {
			record_session__step_failed(err, "adding debug directory %s",
						    o->debug_dirs[i]);
			return err;
		}
	}
	if (cli__cache_dir(CLI_KALLSYMS_CACHE_ENV, kcache, sizeof(kcache))) {
		err = symbolizer__set_kallsyms_cache(s->sym, kcache);
		if (err) {
			record_session__step_failed(err, "setting the kernel symbol cache %s",
						    kcache);
			return err;
		}
	}
	if (cli__cache_dir(CLI_DEBUG_CACHE_ENV, kcache, sizeof(kcache))) {
		err = symbolizer__set_debug_cache(s->sym, kcache, MS_DEBUG_CACHE_BYTES_MAX);
		if (err) {
			record_session__step_failed(err, "setting the debug image cache %s",
						    kcache);
			return err;
		}
	}
	errno = 0;
	s->proc = processor__new(s->b, s->sym);
	if (!s->proc) {
		err = neg_errno();
		record_session__step_failed(err, "creating the processor");
		return err;
	}
	return 0;
}

/* META describing the request: the command lines, -F, preset, symbolize,
 * scope. */
static int session__emit_request_meta(struct record_session *s, const char *record_command)
{
	const struct record_options *o = s->o;
	char text[4096];
	int err;

	/* META command (the recorded command) is the collector's */
	err = record_session__emit_meta(s, MS_META_RECORD_COMMAND, record_command);
	if (!err) {
		snprintf(text, sizeof(text), "%u", o->freq_hz);
		err = record_session__emit_meta(s, MS_META_REQUESTED_FREQ_HZ, text);
	}
	if (!err)
		err = record_session__emit_meta(s, MS_META_PRESET, o->preset);
	if (!err)
		err = record_session__emit_meta(
		    s, MS_META_SYMBOLIZE,
		    o->symbolize == MS_SYMBOLIZE_DEFERRED ? "deferred" : "immediate");
	if (!err && o->scope_desc)
		err = record_session__emit_meta(s, MS_META_SCOPE_CGROUPS, o->scope_desc);
	if (!err && o->system_wide)
		err = record_session__emit_meta(s, MS_META_SCOPE_SELF,
						o->include_self ? "included" : "excluded");
	return err;
}

/* The budget monitor (--budget), after the collector: its load names
 * missing privileges first. */
static int session__open_budget(struct record_session *s)
{
	const struct record_options *o = s->o;
	char why[512] = "";
	int err;

	errno = 0;
	s->budget = budget_monitor__new(o->budget_pct, o->freq_hz, why, sizeof(why));
	if (!s->budget) {
		err = neg_errno();
		fprintf(stderr, "microscope record: starting the budget monitor: %s\n",
			why[0] ? why : strerror(-err));
		return err;
	}
	if (budget_monitor__note(s->budget) && !o->quiet)
		fprintf(stderr, "microscope record: note: budget: BPF stats %s\n",
			budget_monitor__note(s->budget));
	err = budget_monitor__emit_meta(s->budget, record_session__sink, s);
	if (err)
		record_session__step_failed(err, "writing the budget meta");
	return err;
}

/* The tracker's first CPython process: the sampler's walk is loaded now. */
static int session__load_python_walk(void *ctx)
{
	struct record_session *s = ctx;

	return collector__load_python_walk(s->col);
}

/* The CPython tracker over the sampler's maps (--python bpf, not -a). */
static int session__open_python(struct record_session *s)
{
	struct collector *col = s->col;
	int err;

	errno = 0;
	s->py = py_tracker__new(
	    collector__map_fd(col, "py_procs"), collector__map_fd(col, "py_threads"),
	    collector__map_fd(col, "targets"), collector__map_fd(col, "py_exits"));
	if (!s->py) {
		err = neg_errno();
		record_session__step_failed(err, "starting the CPython tracker");
		return err;
	}
	py_tracker__watch(s->py, collector__targets_gen(col), collector__py_threads_gen(col),
			  collector__py_threads_written(col));
	py_tracker__on_first_process(s->py, session__load_python_walk, s);
	processor__set_python(s->proc, s->py);
	return 0;
}

/* The in-kernel unwinder's tables (--call-graph dwarf-kernel, or auto where it loaded). */
static int session__open_kunwind(struct record_session *s)
{
	struct collector *col = s->col;
	struct kunwind_fds fds = {
	    .rows = collector__map_fd(col, "ku_rows"),
	    .starts = collector__map_fd(col, "ku_starts"),
	    .modules = collector__map_fd(col, "ku_modules"),
	    .procs = collector__map_fd(col, "ku_procs"),
	    .rows_cap = MS_KU_ROWS_MAX,
	    .modules_cap = MS_KU_MODULES_MAX,
	};
	int err;

	errno = 0;
	s->ku = kunwind_maps__new(&fds);
	if (!s->ku) {
		err = neg_errno();
		record_session__step_failed(err, "opening the in-kernel unwinder's tables");
		return err;
	}
	processor__set_kunwind(s->proc, s->ku, !s->o->system_wide);
	return 0;
}

/*
 * Before the command runs: the rows of the file execvp will run go into the
 * in-kernel unwinder's tables, and when the command is or starts a CPython
 * interpreter (record_python__command) the sampler's CPython walk is loaded
 * now rather than when the tracker first meets the process (a load of
 * about 0.25 s, little of it CPU, that would stall the drain while the
 * command's first samples wait for their tables and lack their Python
 * frames).
 */
static void session__prepare_command(struct record_session *s)
{
	char exe[PATH_MAX];

	if (cli__command_file(s->o->argv[0], exe))
		processor__kunwind_prepare_command(s->proc, exe);
	/* also through a wrapper: "sh -c 'python3 x.py'", a #! script, a
	 * libpython build; else the tracker loads it, and says why not */
	if (s->py && record_python__command(s->o->argv))
		s->py_preloaded = !collector__load_python_walk(s->col);
}

/* The command and every -p pid into the collector's kernel filter. */
static int session__add_targets(struct record_session *s)
{
	const struct record_options *o = s->o;
	int err;

	if (o->system_wide && o->python == MS_PYTHON_BPF) {
		struct timespec c0, c1;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		err = record_python__scan(&s->pyw, s->py, s->col);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
		s->py_scan_ns = (uint64_t)(c1.tv_sec - c0.tv_sec) * 1000000000ull +
				(uint64_t)c1.tv_nsec - (uint64_t)c0.tv_nsec;
		if (err) {
			record_session__step_failed(err, "finding the CPython processes");
			return err;
		}
	}

	if (o->argv) {
		err = collector__add_target(s->col, s->launch.pid);
		if (err) {
			record_session__step_failed(err, "attaching to %s (pid %d)", o->argv[0],
						    s->launch.pid);
			return err;
		}
		session__prepare_command(s);
	}
	for (size_t i = 0; i < o->npids; i++) {
		err = collector__add_target(s->col, o->pids[i]);
		if (err) {
			record_session__step_failed(err, "attaching to pid %d", o->pids[i]);
			return err;
		}
		processor__kunwind_prepare(s->proc, (uint32_t)o->pids[i]);
	}
	return 0;
}

/* Tests only: MICROSCOPE_TEST_LAG_MS=N holds processing N ms behind
 * sampling (processor__set_hold_back), as a loaded machine does, so tests
 * can show what lag does to naming without a CPU hog.  At most 60 s. */
static void session__test_lag(struct record_session *s)
{
	const char *env = getenv("MICROSCOPE_TEST_LAG_MS");
	char *end;
	unsigned long ms;

	if (!env || !*env)
		return;
	errno = 0;
	ms = strtoul(env, &end, 10);
	if (errno || *end || ms > 60000) {
		fprintf(stderr, "microscope record: MICROSCOPE_TEST_LAG_MS=%s ignored\n", env);
		return;
	}
	processor__set_hold_back(s->proc, (uint64_t)ms * 1000000ull);
}

/* Everything a live recording needs, up to (not including) sampling. */
int record_session__wire(struct record_session *s, const char *record_command)
{
	const struct record_options *o = s->o;
	char why[512] = "";
	int err;

	err = record_session__open_processor(s);
	if (err)
		return err;
	processor__set_round_budget(s->proc, SESSION_ROUND_BUDGET_NS, SESSION_MAX_LAG_NS);
	session__test_lag(s);
	/* Sampling halts at the --duration timer's signal, which a loaded
	 * machine delivers late: the capture holds the asked window only. */
	if (o->duration_s > 0 && o->duration_s < 1e10)
		processor__set_window(s->proc, o->duration_s * 1e9 >= 1 ? (uint64_t)(o->duration_s * 1e9)
									: 1);
	/* Live: the recorded processes' perf maps and jitdump files are theirs. */
	processor__read_processes(s->proc, true);
	if (o->save_raw) {
		errno = 0;
		s->raw = stream_writer__new(o->save_raw);
		if (!s->raw) {
			err = neg_errno();
			record_session__step_failed(err, "writing the raw stream to %s",
						    o->save_raw);
			return err;
		}
	}
	err = session__emit_request_meta(s, record_command);
	if (err)
		return err;
	err = record_rolling__open(o, SESSION_MAX_LAG_NS, &s->roll);
	if (err)
		return err;
	if (o->continuous) {
		s->deltas = record_counters__new(s->b);
		if (!s->deltas) {
			record_session__step_failed(-ENOMEM, "--continuous");
			return -ENOMEM;
		}
		/* each segment's loss, problem and budget counters are its own
		 * span's (segment_dir.h) */
		capture_builder__set_meta(s->b, SEGMENT_META_COUNTERS, "segment");
		record_rolling__set_counters(s->roll, s->deltas);
	}
	if (o->argv) {
		/* the probes SDK in the command writes from its start (with
		 * --probes, the sites the prefixes select) */
		if (launcher__probes_env(s->probes_env, sizeof(s->probes_env), o->probes))
			s->probes_env[0] = 0;
		err = launcher__spawn_env(&s->launch, o->argv,
					  s->probes_env[0] ? s->probes_env : NULL);
		if (err) {
			record_session__step_failed(err, "starting %s", o->argv[0]);
			return err;
		}
	}
	errno = 0;
	s->col = collector__new(o, record_session__sink, s, why, sizeof(why));
	if (!s->col) {
		/* why names the step ("loading the BPF sampler: ..."). */
		fprintf(stderr, "microscope record: %s\n", why[0] ? why : strerror(errno));
		return neg_errno();
	}
	if (o->budget_pct > 0) {
		err = session__open_budget(s);
		if (err)
			return err;
	}
	if (o->python == MS_PYTHON_BPF) {
		err = session__open_python(s);
		if (err)
			return err;
	}
	if (collector__kunwind(s->col)) {
		err = session__open_kunwind(s);
		if (err)
			return err;
	}
	err = record_session__emit_meta(s, MS_META_PYTHON,
					o->python == MS_PYTHON_OFF ? "off" : "bpf");
	if (err)
		return err;
	return session__add_targets(s);
}
