// SPDX-License-Identifier: MIT
/*
 * One recording, run from a validated struct record_options (record.h):
 *
 *   wiring    (record_wire.c) capture builder, symbolizer, processor; the
 *             raw stream writer (--save-raw); META chunks; the command
 *             behind its gate; the collector (BPF load); the budget monitor;
 *             the CPython tracker; the targets in the kernel filter
 *   start     signal handlers, sampling attached, the --duration timer, the
 *             command released
 *   drain     collector rounds until the command exits, the targets are
 *             gone, the duration ends or SIGINT/SIGTERM arrives
 *   finish    sampling halted, the command ended, final counters, collector
 *             stopped, the capture sealed (or kept elsewhere)
 *   release   everything freed, whatever step failed
 *
 * Every chunk the collector emits goes through record_session__sink (the
 * tee): to the raw stream writer when saving, then to the processor.  A
 * failing step is reported as "microscope record: STEP: REASON" and ends the recording
 * with status 1 (127 when the command cannot be run).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
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
#include "record_scope.h"
#include "record_session.h"
#include "record_signals.h"
#include "record_status.h"
#include "record_wake.h"

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

/* The collector as the budget monitor's recorder (budget/monitor.h). */
static int budget_bpf_stats(void *col, uint64_t *run_ns, uint64_t *runs)
{
	return collector__bpf_stats(col, run_ns, runs);
}

static int budget_set_duty(void *col, uint32_t factor)
{
	return collector__set_duty(col, factor);
}

#define BUDGET_RECORDER(col) (&(struct budget_recorder){ budget_bpf_stats, budget_set_duty, (col) })

/* Arm the --duration timer: it halts sampling on time even while a drain
 * round is busy processing. */
static int session__arm_duration(struct record_session *s)
{
	double d = s->o->duration_s, whole = (double)(long)d;
	struct itimerval it = { 0 };

	s->t_end = now_s() + d;
	it.it_value.tv_sec = (time_t)whole;
	it.it_value.tv_usec = (suseconds_t)((d - whole) * 1e6);
	if (!it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	if (setitimer(ITIMER_REAL, &it, NULL))
		return -errno;
	return 0;
}

/* Sampling attached, the duration timer, the command run. */
static int session__start(struct record_session *s)
{
	const struct record_options *o = s->o;
	char why[512] = "";
	int err, wstatus;

	err = collector__start(s->col, why, sizeof(why));
	if (err) {
		fprintf(stderr, "microscope record: starting sampling: %s\n",
			why[0] ? why : strerror(-err));
		return err;
	}
	record_signals__halt(s->col);
	record_wake__init(&s->wake, o, s->py != NULL);
	if (o->argv)
		record_wake__watch(&s->wake, s->col, s->launch.pid);
	for (size_t i = 0; i < o->npids; i++)
		record_wake__watch(&s->wake, s->col, o->pids[i]);
	/* --duration counts from here, when sampling is attached (not from
	 * before the BPF load and snapshots), and so does the --segment grid:
	 * -d 6 --segment 1s gives 6 segments, not a 7th of the attach time
	 * (the few samples of the attach itself join the first segment). */
	record_rolling__begin(s->roll, (uint64_t)(now_s() * 1e9),
			      o->duration_s > 0 ? (uint64_t)(o->duration_s * 1e9) : 0);
	if (o->duration_s > 0) {
		err = session__arm_duration(s);
		if (err) {
			record_session__step_failed(err, "arming the --duration timer");
			return err;
		}
	}
	if (o->argv && record_signals__stop()) {
		/* stopped during start-up: the command never runs (its gate
		 * closed unopened, it exits 127 without exec) */
		fprintf(stderr, "microscope record: %s during start-up: '%s' not run\n",
			strsignal(record_signals__stop()), o->argv[0]);
		close(s->launch.gate_fd);
		close(s->launch.error_fd);
		s->launch.gate_fd = -1;
		s->launch.error_fd = -1;
		waitpid(s->launch.pid, &wstatus, 0);
		s->launch.pid = -1;
		s->child_done = true;
		s->status = 128 + record_signals__stop();
		return 0;
	}
	if (o->argv) {
		err = launcher__release(&s->launch);
		if (err) {
			record_session__step_failed(err, "cannot run '%s'", o->argv[0]);
			waitpid(s->launch.pid, &wstatus, 0);
			s->launch.pid = -1;
			s->status = 127;
			return err;
		}
	}
	return 0;
}

static bool session__any_alive(const struct record_session *s)
{
	const struct record_options *o = s->o;

	for (size_t i = 0; i < o->npids; i++)
		if (!kill(o->pids[i], 0) || errno == EPERM)
			return true;
	return false;
}

/* Resident set size of this process (KiB), 0 if unknown. */
static uint64_t self_rss_kib(void)
{
	unsigned long long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

/* After a segment or slice was cut: bound the processor's state by the
 * live processes (processor__compact), and say in the next segment's meta
 * what the recorder holds ("recorder.*": a week-long run can be checked
 * for growth from its own segments).  Out of memory is not fatal: the
 * state stays as it was and recording goes on. */
static int session__compact(struct record_session *s)
{
	struct processor_state st;
	struct mallinfo2 mi;
	char buf[32];
	int err = processor__compact(s->proc);

	if (err == -ENOMEM) {
		fprintf(stderr, "microscope record: compacting the recorder's state: %s\n",
			strerror(ENOMEM));
		return 0;
	}
	if (err) {
		record_session__step_failed(err, "compacting the recorder's state");
		return err;
	}
	processor__state(s->proc, &st);
	snprintf(buf, sizeof(buf), "%" PRIu64, st.processes);
	capture_builder__set_meta(s->b, "recorder.processes", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, st.threads);
	capture_builder__set_meta(s->b, "recorder.threads", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, st.mappings);
	capture_builder__set_meta(s->b, "recorder.mappings", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, st.modules);
	capture_builder__set_meta(s->b, "recorder.modules", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, st.rows);
	capture_builder__set_meta(s->b, "recorder.rows", buf);
	/* What was freed goes back to the system, not only to malloc's free
	 * lists: a week-long run's RSS is what it uses, not its peak. */
	malloc_trim(0);
	mi = mallinfo2();
	snprintf(buf, sizeof(buf), "%" PRIu64, (uint64_t)(mi.uordblks + mi.hblkhd) / 1024);
	capture_builder__set_meta(s->b, "recorder.heap_kib", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, self_rss_kib());
	capture_builder__set_meta(s->b, "recorder.rss_kib", buf);
	return 0;
}

/* Adds or removes a cgroup in the sampler's scope set (record_scope_set_fn). */
static int session__scope_set(void *ctx, uint64_t id, bool in)
{
	struct record_session *s = ctx;

	return collector__scope_set(s->col, id, in);
}

/* --container: a restarted container's new cgroup joins the scope
 * (record_scope__follow); a failure leaves the scope as it is, said once. */
static void session__follow_scope(struct record_session *s)
{
	int err;

	if (!s->scope || s->scope_failed)
		return;
	err = record_scope__follow(s->scope, (uint64_t)(now_s() * 1e9), session__scope_set, s,
				   stderr);
	if (err < 0) {
		record_session__step_failed(err, "following --container into a new cgroup");
		s->scope_failed = true;
	}
}

/* --continuous: as a segment boundary passes, the kernel's and the
 * budget's running totals, for the segment that ends there; as a segment
 * is about to be cut, the processor's problems (record_counters.h). */
static void session__counter_marks(struct record_session *s, uint64_t now_ns)
{
	uint64_t at;

	if (!record_rolling__mark_due(s->roll, now_ns, &at))
		return;
	record_counters__mark(s->deltas, at);
	(void)collector__counters(s->col, record_counters__sink, s->deltas);
	if (s->budget)
		(void)budget_monitor__counters(s->budget, BUDGET_RECORDER(s->col),
					       record_counters__sink, s->deltas);
}

/* Drain rounds until the command exits, the -p targets are gone, the
 * duration ends or a stop signal arrives.  Returns 0 or -errno of a drain. */
static int session__drain(struct record_session *s)
{
	const struct record_options *o = s->o;
	int err, wstatus, timeout_ms;
	uint64_t now_ns, released;

	record_status__init(&s->live, !o->quiet);
	while (!record_signals__stop()) {
		record_status__tick(&s->live, processor__samples(s->proc), collector__lost(s->col));
		if (s->py)
			(void)py_tracker__poll(s->py, (uint64_t)(now_s() * 1e9));
		/* CPython code objects are named from the live process as
		 * records arrive (processor/python.c), so draining must not
		 * wait behind slow processing: each round processes for at
		 * most SESSION_ROUND_BUDGET_NS and the loop comes back at once
		 * while records wait. */
		timeout_ms = record_wake__wait_ms(&s->wake, processor__behind(s->proc), s->py,
						  s->live.on ? RECORD_STATUS_PERIOD_MS : 0,
						  (uint64_t)(now_s() * 1e9));
		err = collector__poll(s->col, timeout_ms);
		if (err < 0) {
			record_session__step_failed(err, "draining rings");
			return err;
		}
		err = record_python__flush(&s->pyw, s->col);
		if (err)
			record_session__step_failed(err, "adding an embedded CPython process");
		err = record_probes__flush(&s->probes, s->col);
		if (err)
			record_session__step_failed(err, "looking for the probes SDK in a process");
		if (o->argv && waitpid(s->launch.pid, &wstatus, WNOHANG) == s->launch.pid) {
			s->child_done = true;
			s->status = exit_status_of(wstatus);
			return 0;
		}
		if (o->npids && !session__any_alive(s))
			return 0;
		if (s->t_end && now_s() >= s->t_end)
			return 0;
		now_ns = (uint64_t)(now_s() * 1e9);
		session__counter_marks(s, now_ns);
		/* JIT frames waiting for jitdump records are named from the
		 * files as they are now, or stay unnamed in the segment */
		released = processor__released_until(s->proc);
		if (record_rolling__due(s->roll, now_ns, released)) {
			if (processor__name_late(s->proc))
				fprintf(stderr, "microscope record: naming late JIT frames: %s\n",
					strerror(ENOMEM));
			if (s->deltas)
				processor__problem_counters(s->proc, record_counters__total,
							    s->deltas);
		}
		err = record_rolling__tick(s->roll, s->b, now_ns, released);
		if (err > 0)
			err = session__compact(s);
		if (!err && record_signals__take_snapshot()) {
			err = record_rolling__snapshot(s->roll, s->b, (uint64_t)(now_s() * 1e9),
						       processor__released_until(s->proc));
		}
		if (err)
			return err;
		session__follow_scope(s);
		if (s->budget) {
			err = budget_monitor__tick(s->budget, BUDGET_RECORDER(s->col));
			if (err) {
				/* Keep recording at the duty in force, without control. */
				fprintf(stderr, "microscope record: budget disabled: %s\n",
					strerror(-err));
				budget_monitor__free(s->budget);
				s->budget = NULL;
			}
		}
	}
	return 0;
}

/* End the command (SIGTERM, as perf does) if sampling stopped before it
 * exited; its status becomes record's. */
static void session__end_command(struct record_session *s)
{
	int wstatus;

	if (!s->o->argv || s->child_done)
		return;
	kill(s->launch.pid, SIGTERM);
	if (waitpid(s->launch.pid, &wstatus, 0) == s->launch.pid)
		s->status = exit_status_of(wstatus);
	s->child_done = true;
}

/*
 * Where a capture goes when path cannot take it: ./microscope-PID.msc, else
 * $TMPDIR (or /tmp)/microscope-PID.msc.  Returns 0 with the path used in
 * buf, or -errno of the last attempt.
 */
static int seal_fallback(struct capture_builder *b, char *buf, size_t len)
{
	const char *tmpdir = getenv("TMPDIR");
	char cwd[2048];
	int err;

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

/* Finish processing and write the capture (or keep it elsewhere).  Returns
 * 0 or -errno (reported). */
static int session__seal(struct record_session *s)
{
	const char *path = s->o->output;
	char fallback[4096];
	int err;

	err = processor__finish(s->proc);
	if (err) {
		fprintf(stderr, "microscope record: cannot finish the capture: %s\n",
			strerror(-err));
		return err;
	}
	if (s->py) {
		uint64_t cpu, refreshes, skipped;

		py_tracker__costs(s->py, &cpu, &refreshes, &skipped);
		capture_builder__add_counter(s->b, "python.tracker_cpu_us", cpu / 1000);
		capture_builder__add_counter(s->b, "python.thread_map_refreshes", refreshes);
		capture_builder__add_counter(s->b, "python.thread_map_unchanged", skipped);
		capture_builder__add_counter(s->b, "python.targets_walks", py_tracker__walks(s->py));
		capture_builder__add_counter(s->b, "python.elf_reads", py_tracker__elf_reads(s->py));
		if (s->py_preloaded)
			capture_builder__add_counter(s->b, "python.walk_preloaded", 1);
		if (s->o->system_wide)
			capture_builder__add_counter(s->b, "python.scan_cpu_us",
						     s->py_scan_ns / 1000);
		if (s->pyw.embedded)
			capture_builder__add_counter(s->b, "python.libpython_processes",
						     s->pyw.embedded);
		if (s->pyw.by_exe)
			capture_builder__add_counter(s->b, "python.interpreter_exe_processes",
						     s->pyw.by_exe);
		if (s->pyw.dropped)
			capture_builder__add_counter(s->b, "python.candidate_queue_full",
						     s->pyw.dropped);
	}
	if (s->probes.dropped)
		capture_builder__add_counter(s->b, "probes.candidate_queue_full", s->probes.dropped);
	if (s->o->system_wide) {
		capture_builder__add_counter(s->b, "probes.exe_reads", s->probes.exe_reads);
		capture_builder__add_counter(s->b, "probes.exe_reads_at_start",
					     s->probes.exe_reads_at_start);
		capture_builder__add_counter(s->b, "probes.exe_cpu_us", s->probes.exe_cpu_ns / 1000);
		capture_builder__add_counter(s->b, "probes.found_by_exe", s->probes.by_exe);
	}
	if (s->scope && s->o->ncontainers) {
		struct record_scope_stats st;

		record_scope__stats(s->scope, &st);
		capture_builder__add_counter(s->b, "scope.container_left", st.left);
		capture_builder__add_counter(s->b, "scope.container_rejoined", st.rejoined);
		capture_builder__add_counter(s->b, "scope.container_rescans", st.rescans);
		capture_builder__add_counter(s->b, "scope.follow_cpu_us", st.cpu_ns / 1000);
	}
	/* How long the backlog took once sampling stopped (docs/host.md). */
	if (s->t_halt > 0)
		capture_builder__add_counter(s->b, "record.finish_ms",
					     (uint64_t)((now_s() - s->t_halt) * 1e3));
	if (!s->o->continuous && !s->o->force && (err = cli__keep_previous(path)))
		fprintf(stderr, "microscope record: keeping the previous %s as .old: %s\n", path,
			strerror(-err));
	if (s->roll) /* the last segment, or the last window to -o */
		return record_rolling__finish(s->roll, s->b, (uint64_t)(now_s() * 1e9),
					      processor__samples(s->proc));
	err = capture_builder__write(s->b, path);
	if (err) {
		const char *why = capture_builder__error(s->b);

		if (why && why[0]) /* why starts with the path */
			fprintf(stderr, "microscope record: cannot write capture %s\n", why);
		else
			fprintf(stderr, "microscope record: cannot write capture %s: %s\n", path,
				strerror(-err));
		/* The recording cannot be redone: keep it somewhere. */
		if (!seal_fallback(s->b, fallback, sizeof(fallback)))
			fprintf(stderr, "microscope record: capture saved to %s instead\n",
				fallback);
		else
			fprintf(stderr, "microscope record: could not save the capture anywhere "
					"(tried ./ and $TMPDIR): %s\n",
				capture_builder__error(s->b));
		return err;
	}
	if (!s->o->quiet) {
		struct stat st;

		if (stat(path, &st))
			st.st_size = 0;
		uint64_t n = processor__samples(s->proc);

		fprintf(stderr, "[ microscope: %llu sample%s written to %s (%.1f KiB) ]\n",
			(unsigned long long)n, n == 1 ? "" : "s", path, st.st_size / 1024.0);
		if (s->t_halt > 0 && s->o->system_wide) {
			uint64_t mean, max = processor__lag_ns(s->proc, &mean);

			fprintf(stderr,
				"[ microscope: sealed %.2f s after sampling stopped; processing "
				"lag max %.2f s, mean %.2f s ]\n",
				now_s() - s->t_halt, max / 1e9, mean / 1e9);
		}
	}
	return 0;
}

/*
 * After the drain: sampling halted, the command ended, the budget's and the
 * CPython tracker's last words, the collector stopped and freed, the capture
 * sealed.  Sets s->status (1 if any of it failed).
 */
static void session__finish(struct record_session *s)
{
	const struct record_options *o = s->o;
	int err;

	/* Sampling ends here at the latest (the duration timer or a signal may
	 * have halted it already): what follows is processing the backlog. */
	collector__halt_sampling(s->col);
	record_signals__halt(NULL);
	s->t_halt = collector__halted_at(s->col) ? collector__halted_at(s->col) / 1e9 : now_s();
	/* a segment boundary passed since the last round gets its mark (the
	 * totals at the halt), so the segment before it keeps its counters */
	session__counter_marks(s, (uint64_t)(s->t_halt * 1e9));
	record_status__finish(&s->live);
	if (o->argv)
		session__end_command(s);
	else
		s->status = 0;
	if (s->budget) {
		err = budget_monitor__finish(s->budget, BUDGET_RECORDER(s->col),
					     record_session__sink, s);
		if (err) /* the recording stands; its budget totals are missing */
			record_session__step_failed(err, "budget: reading the final counters");
	}
	if (s->py && py_tracker__describe(s->py) &&
	    record_session__emit_meta(s, MS_META_PYTHON_RUNTIME, py_tracker__describe(s->py)))
		s->status = 1;
	err = collector__stop(s->col);
	if (err) {
		record_session__step_failed(err, "stopping the collector");
		s->status = 1;
	}
	collector__free(s->col);
	s->col = NULL;
	if (session__seal(s))
		s->status = 1;
}

/* Free everything; a command still running is killed.  Sets status 1 if the
 * raw stream cannot be published. */
static void session__release(struct record_session *s)
{
	if (s->launch.pid > 0 && !s->child_done) {
		kill(s->launch.pid, SIGKILL);
		waitpid(s->launch.pid, NULL, 0);
	}
	record_signals__halt(NULL);
	record_wake__release(&s->wake);
	collector__free(s->col);
	budget_monitor__free(s->budget);
	if (s->raw) {
		int err = stream_writer__free(s->raw);

		if (err) {
			record_session__step_failed(err, "finishing the raw stream in %s",
						    s->o->save_raw);
			s->status = 1;
		}
	}
	record_rolling__free(s->roll);
	record_counters__free(s->deltas);
	processor__free(s->proc);
	py_tracker__free(s->py);
	kunwind_maps__free(s->ku);
	symbolizer__free(s->sym);
	capture_builder__free(s->b);
}

static void session__init(struct record_session *s, const struct record_options *o)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->launch = (struct launcher){ .pid = -1, .gate_fd = -1, .error_fd = -1 };
	record_python__init(&s->pyw);
	record_probes__init(&s->probes);
	s->status = 1;
}

int record_session__run(const struct record_options *o, const char *record_command,
			struct record_scope *scope)
{
	struct record_session s;
	int err;

	session__init(&s, o);
	s.scope = scope;
	err = record_signals__install();
	if (err) {
		record_session__step_failed(err, "installing signal handlers");
	} else if (!record_session__wire(&s, record_command) && !session__start(&s)) {
		/* A failed drain still seals what was recorded, then exits 1. */
		err = session__drain(&s);
		session__finish(&s);
		if (err)
			s.status = 1;
	}
	session__release(&s);
	return s.status;
}

int record_session__replay(const struct record_options *o)
{
	struct record_session s;
	int err;

	session__init(&s, o);
	if (record_session__open_processor(&s))
		goto cleanup;
	/* The stream's own meta says how it was recorded; an explicit
	 * --symbolize replays it the other way. */
	if (o->explicit & MS_OPT_SET_SYMBOLIZE)
		processor__force_symbolize(s.proc, o->symbolize == MS_SYMBOLIZE_DEFERRED);
	err = stream__replay(o->replay, processor__sink, s.proc);
	if (err == -EBADMSG) {
		/* Damaged at an offset (reported with it): the chunks before
		 * the damage were replayed and stand, as a stream cut by
		 * SIGKILL does; the capture keeps them, and the status says
		 * the input was damaged. */
		fprintf(stderr, "microscope record: writing what the stream held before the damage\n");
		session__seal(&s);
		s.status = 1;
		goto cleanup;
	}
	if (err) {
		/* -EPROTONOSUPPORT: already reported (the stream's version
		 * and the ones replayed) */
		if (err != -EPROTONOSUPPORT)
			record_session__step_failed(err, "replaying %s", o->replay);
		goto cleanup;
	}
	s.status = session__seal(&s) ? 1 : 0;
cleanup:
	session__release(&s);
	return s.status;
}
