#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""microscope's overhead benchmark, beside perf and a BPF peer (bench/README.md).

    bench/run.py --smoke|--full [options] BUILD_DIR
    bench/run.py --make-baseline RESULTS.json [MORE_RESULTS.json...]
    bench/run.py --compare RESULTS.json [--baseline bench/overhead.json]

Measures, in one run on one machine (numbers only, nothing is asserted):
  1. target slowdown: recorded / unrecorded CPU and wall time of a fixed-work
     fixture (BUILD_DIR/bench/work), interleaved runs, median of N, and the
     cost per sample above the floor (perf record -F N with no call chain;
     a bpftrace count beside it) against perf dwarf's;
  2. capture bytes per sample (microscope .msc, perf.data, raw stream);
  3. recorder CPU seconds per 1,000 samples, live and by `record --replay`
     of a saved raw stream, beside perf record + perf report;
  4. unwind throughput from replaying a saved DWARF raw stream;
  5. `microscope report` time and peak RSS on a synthetic capture;
  (full) 6. lost samples system-wide at 999 Hz with 16 KiB copies;
  (full) 7. BPF run time per sample of the CPython walk at 50 frames beside
     native-only sampling, and the walk's own time per walk, median of 5
     runs (bench/py_walk.py, kernel BPF stats and the sampler's counters);
  (full) 7b. the sampler's BPF run time per sample, fp and dwarf-kernel at
     4999 Hz on bench/work and two fixtures without frame pointers
     (bench/bpf_cost.py);
  (full) 8. the production preset's steady-state cost on 2 busy CPUs beside
     perf record -a -F 19 -g for the same time (bench/production.py);
  (full, or alone with --host) 9. `record -a` at 999 Hz for 10 s on 2 busy
     CPUs beside `perf record -a -g`: recorder CPU, time to finish after
     sampling stopped, processing lag.
Prints tables and writes BUILD_DIR/bench/results.json.  Exits 0 when it
produced numbers (a peer that fails or is missing is reported as such), 1 if
microscope itself could not be measured, 2 for a usage error.
"""
import argparse
import datetime
import json
import math
import os
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BASELINE = os.path.join(HERE, "overhead.json")

MODES = {
    # scale: work per run (MS_FIXTURE_SCALE; 1 is about 1 s of CPU).
    "smoke": dict(runs=3, warmup=False, scale=0.5, rates=[99, 999], bpf_rates=[999],
                  raw_rate=4999, raw_scale=1.0, replays=3,
                  synth_samples=100000, report_reps=3, perf_report_reps=1, syswide_s=0,
                  kshare_runs=1, timeout=60),
    "full": dict(runs=7, warmup=True, scale=2.0, rates=[99, 999, 4999],
                 bpf_rates=[99, 999, 4999], raw_rate=4999, raw_scale=3.0,
                 replays=5, synth_samples=1000000, report_reps=5, perf_report_reps=3,
                 syswide_s=20, kshare_runs=3, timeout=90),
}
STACK_SIZE = 16384
ANALYSIS_RATE = 999  # the rate whose outputs perf report / microscope report read


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


# --------------------------------------------------------------------------
# Running a command and accounting for its CPU time


class Run:
    """One finished command: exit code, wall seconds, CPU seconds (user+sys of
    it and every descendant it waited for) and peak RSS (KiB, the largest of
    them), from wait4()."""

    def __init__(self, rc, wall, cpu, maxrss_kb, timed_out, stdout, stderr):
        self.rc, self.wall, self.cpu, self.maxrss_kb = rc, wall, cpu, maxrss_kb
        self.timed_out, self.stdout, self.stderr = timed_out, stdout, stderr

    def why(self):
        if self.timed_out:
            return "timed out"
        tail = [l for l in self.stderr.splitlines() if l.strip()][-2:]
        if self.rc < 0:
            return "killed by signal %d%s" % (-self.rc, ": " + " / ".join(tail) if tail else "")
        return "exit %d%s" % (self.rc, ": " + " / ".join(tail) if tail else "")


def run(cmd, env=None, timeout=300, workdir=None):
    """Run cmd (stdout/stderr to files in workdir), reap it with wait4."""
    out_path = os.path.join(workdir, "last.stdout")
    err_path = os.path.join(workdir, "last.stderr")
    t0 = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                 start_new_session=True, cwd=workdir)
        except OSError as e:
            return Run(127, 0.0, 0.0, 0, False, "", str(e))
        state = {"timed_out": False}

        def kill():
            state["timed_out"] = True
            try:
                os.killpg(p.pid, signal.SIGKILL)  # the group this command leads
            except ProcessLookupError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            while True:
                try:
                    _, status, ru = os.wait4(p.pid, 0)
                    break
                except InterruptedError:
                    continue
        finally:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    with open(out_path, errors="replace") as f:
        so = f.read()
    with open(err_path, errors="replace") as f:
        se = f.read()
    return Run(p.returncode, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, state["timed_out"],
               so, se)


WORK_RE = re.compile(r"^work cpu_ns=(\d+) wall_ns=(\d+) steps=(\d+)$", re.M)


# --------------------------------------------------------------------------
# The recorders


class Config:
    """One way of running the fixture: unrecorded, or under a recorder."""

    def __init__(self, name, tool, cg, rate):
        self.name, self.tool, self.cg, self.rate = name, tool, cg, rate
        self.runs = []  # dicts, see measure()
        self.unavailable = None

    @property
    def label(self):
        if self.tool == "none":
            return "unrecorded"
        kind = {"microscope": {"fp": "microscope fp", "dwarf": "microscope dwarf 16K",
                               "dwarf-kernel": "microscope dwarf-kernel 16K"},
                "perf": {"fp": "perf -g", "dwarf": "perf dwarf,16384",
                         "none": "perf (no call chain)"},
                "bpftrace": {"fp": "bpftrace profile",
                             "none": "bpftrace count"}}[self.tool][self.cg]
        return kind

    def ok_runs(self):
        return [r for r in self.runs if r["ok"]]


class Bench:
    def __init__(self, args, mode):
        self.args, self.mode = args, MODES[mode]
        self.mode_name = mode
        self.build = os.path.abspath(args.build)
        self.ms = os.path.join(self.build, "microscope")
        self.work = os.path.join(self.build, "bench", "work")
        self.gen = os.path.join(self.build, "bench", "gen_capture")
        self.out_dir = os.path.join(self.build, "bench")
        self.tmp = os.path.join(self.out_dir, "tmp")
        self.keep = os.path.join(self.tmp, "keep")
        self.buildid_dir = os.path.join(self.tmp, "perf-buildid")
        if args.runs:
            self.mode["runs"] = args.runs
        if args.scale:
            self.mode["scale"] = args.scale
        # Address-space randomization moves the initial stack pointer within
        # the stack mapping by up to 8 KiB, and with it how many bytes a
        # stack copy finds above sp: microscope's raw stream size and replay
        # cost vary 2-3x between recordings.  The save-raw recordings, whose
        # replay is timed alone, go through setarch -R (it execs the command
        # in place: same pid, same rusage).  The matrix keeps ASLR on: with it
        # off the stack sits just under TASK_SIZE and perf clips its copies
        # to the distance to TASK_SIZE (~4 KiB instead of 16 KiB), which is
        # not what users get.
        setarch = shutil.which("setarch")
        self.norand = [setarch, "-R"] if setarch else []
        self.perf = shutil.which("perf")
        self.bpftrace = None if args.no_bpf_peer else shutil.which("bpftrace")

    # ---- commands ----

    def env(self, scale, out):
        e = dict(os.environ)
        e["MS_FIXTURE_SCALE"] = repr(float(scale))
        e["MS_FIXTURE_OUT"] = out
        return e

    def command(self, cfg, out):
        """argv recording the fixture with cfg, writing its capture to out."""
        if cfg.tool == "none":
            return [self.work]
        if cfg.tool == "microscope":
            # --budget 0: the full rate, as perf records it (the default preset's
            # budget would lengthen the period at 4999 Hz; bench/README.md)
            cmd = [self.ms, "record", "-F", str(cfg.rate), "--budget", "0", "--call-graph", cfg.cg]
            if cfg.cg in ("dwarf", "dwarf-kernel"):
                cmd += ["--stack-size", str(STACK_SIZE)]
            return cmd + ["-o", out, "--", self.work]
        if cfg.tool == "perf":
            # --no-bpf-event: no BPF program records from other tools' loads;
            # -B/-N: no build-id pass at the end of recording, nothing in
            # ~/.debug.  That pass aborts perf 6.1 here ("stack smashing
            # detected") whenever an MMAP2 record carries a stray build-id flag
            # (see fix_perf_mmap2), and it would cost perf CPU it does not pay
            # here: perf's recorder CPU is a lower bound.
            cmd = [self.perf, "--buildid-dir", self.buildid_dir, "record", "--no-bpf-event",
                   "-B", "-N", "-q", "-F", str(cfg.rate), "-o", out]
            cmd += {"fp": ["-g"], "dwarf": ["--call-graph", "dwarf,%d" % STACK_SIZE],
                    "none": []}[cfg.cg]
            return cmd + ["--", self.work]
        if cfg.tool == "bpftrace":
            # "none": the floor of a BPF sampler, a count and no stacks
            what = "@" if cfg.cg == "none" else "@[ustack, kstack]"
            prog = "profile:hz:%d /pid == cpid/ { %s = count(); }" % (cfg.rate, what)
            return [self.bpftrace, "-q", "-o", out, "-c", self.work, "-e", prog]
        raise ValueError(cfg.tool)

    def samples_of(self, cfg, r, out):
        """Sample count of a finished recording, or None."""
        if cfg.tool == "microscope":
            m = re.search(r"microscope: (\d+) samples? written", r.stderr)
            return int(m.group(1)) if m else None
        if cfg.tool == "perf":
            s = run([self.perf, "--buildid-dir", self.buildid_dir, "report", "-i", out,
                     "--stats"], timeout=120, workdir=self.tmp)
            m = re.search(r"^\s*SAMPLE events:\s+(\d+)", s.stdout, re.M)
            if m:
                return int(m.group(1))
            return 0 if s.rc == 0 and "TOTAL events" in s.stdout else None
        if cfg.tool == "bpftrace":
            try:
                with open(out, errors="replace") as f:
                    text = f.read()
            except OSError:
                return None
            return sum(int(n) for n in re.findall(r"(?:\]|^@): (\d+)\s*$", text, re.M))
        return None

    def measure(self, cfg, scale, keep_as=None):
        """Run cfg once on `scale` work; append and return the run's dict."""
        out = os.path.join(self.tmp, cfg.name + (".msc" if cfg.tool == "microscope" else ".out"))
        fixture_out = os.path.join(self.tmp, cfg.name + ".fixture")
        for p in (out, fixture_out):
            rm(p)
        r = run(self.command(cfg, out), env=self.env(scale, fixture_out),
                timeout=self.mode["timeout"], workdir=self.tmp)
        d = {"ok": False, "scale": scale, "e2e_wall_s": r.wall, "total_cpu_s": r.cpu,
             "recorder_maxrss_kb": r.maxrss_kb}
        try:
            with open(fixture_out) as f:
                m = WORK_RE.search(f.read())
        except OSError:
            m = None
        smashed = "stack smashing" in r.stderr
        if r.rc != 0 or not m or smashed or r.timed_out:
            d["error"] = r.why() if (r.rc or r.timed_out) else (
                "stack smashing detected" if smashed else "fixture reported nothing")
        else:
            d["ok"] = True
            d["cpu_s"] = int(m.group(1)) / 1e9
            d["wall_s"] = int(m.group(2)) / 1e9
            if cfg.tool != "none":
                d["recorder_cpu_s"] = r.cpu - d["cpu_s"]
                d["samples"] = self.samples_of(cfg, r, out)
                d["bytes"] = os.path.getsize(out) if os.path.exists(out) else None
                if d["samples"] is None:
                    d["ok"], d["error"] = False, "no sample count"
        if d["ok"] and keep_as:
            os.replace(out, os.path.join(self.keep, keep_as))
        rm(out)
        cfg.runs.append(d)
        if not d["ok"]:
            log("    %s: failed (%s)" % (cfg.name, d.get("error")))
        return d

    # ---- 1-3: the interleaved matrix ----

    def configs(self):
        cfgs = [Config("unrecorded", "none", None, 0)]
        for rate in self.mode["rates"]:
            for cg in ("fp", "dwarf", "dwarf-kernel"):
                cfgs.append(Config("ms-%s-%d" % (cg, rate), "microscope", cg, rate))
            # "none": the floor, what sampling costs with no call chain at all
            for cg in ("fp", "dwarf", "none"):
                c = Config("perf-%s-%d" % (cg, rate), "perf", cg, rate)
                if not self.perf:
                    c.unavailable = "perf not installed"
                cfgs.append(c)
        for rate in self.mode["bpf_rates"]:
            for cg, name in (("fp", "bpftrace-%d"), ("none", "bpftrace-none-%d")):
                c = Config(name % rate, "bpftrace", cg, rate)
                if not self.bpftrace:
                    c.unavailable = ("--no-bpf-peer" if self.args.no_bpf_peer else
                                     "bpftrace not installed (apt-get install bpftrace)")
                cfgs.append(c)
        return cfgs

    def matrix(self):
        """Every configuration once per round, rounds rotating the order.  The
        no-work runs (fixed cost) are interleaved in the same rounds, so they
        see the same machine as the runs they are subtracted from."""
        cfgs = self.configs()
        if self.args.only:
            cfgs = [c for c in cfgs if c.tool == "none" or re.search(self.args.only, c.name)]
        live = [c for c in cfgs if not c.unavailable]
        fixed = [Config(c.name + "-nowork", c.tool, c.cg, c.rate) for c in live
                 if c.tool != "none"]
        n, scale = self.mode["runs"], self.mode["scale"]
        if self.mode["warmup"]:
            log("  warm-up round")
            for c in live:
                self.measure(c, scale)
                c.runs.clear()
        jobs = [(c, scale) for c in live] + [(f, 0) for f in fixed]
        for i in range(n):
            log("  round %d/%d (%d configurations at scale %g, %d with no work)" % (
                i + 1, n, len(live), scale, len(fixed)))
            k = (i * len(jobs)) // n
            for c, sc in jobs[k:] + jobs[:k]:
                # The analysis step reads the latest good recording at its rate.
                keep = c.name if (sc and c.rate == ANALYSIS_RATE and c.tool != "none") else None
                self.measure(c, sc, keep_as=keep)
        return cfgs, {c.name[:-len("-nowork")]: c for c in fixed}

    def summarize(self, cfgs, fixed):
        base = next(c for c in cfgs if c.tool == "none")
        base_cpu = median(r["cpu_s"] for r in base.ok_runs())
        base_wall = median(r["wall_s"] for r in base.ok_runs())
        rows = {}
        for c in cfgs:
            ok = c.ok_runs()
            row = {"label": c.label, "tool": c.tool, "call_graph": c.cg, "rate_hz": c.rate,
                   "runs": len(c.runs), "ok_runs": len(ok)}
            if c.unavailable:
                row["status"] = "unavailable: " + c.unavailable
            elif not ok:
                errs = sorted({r.get("error", "?") for r in c.runs})
                row["status"] = "failed: " + "; ".join(errs)[:300]
            else:
                row["status"] = "ok" if len(ok) == len(c.runs) else "partly failed: " + \
                    "; ".join(sorted({r.get("error", "?") for r in c.runs if not r["ok"]}))[:300]
                cpu = median(r["cpu_s"] for r in ok)
                wall = median(r["wall_s"] for r in ok)
                row.update(cpu_s=cpu, wall_s=wall,
                           cpu_s_all=[round(r["cpu_s"], 4) for r in ok],
                           wall_s_all=[round(r["wall_s"], 4) for r in ok],
                           e2e_wall_s=median(r["e2e_wall_s"] for r in ok),
                           slowdown_cpu=ratio(cpu, base_cpu), slowdown_wall=ratio(wall, base_wall),
                           slowdown_cpu_paired=median(
                               ratio(r["cpu_s"], b["cpu_s"]) for r, b in
                               zip(c.runs, base.runs) if r["ok"] and b["ok"]))
                if c.tool != "none":
                    samples = median(r["samples"] for r in ok)
                    rec = median(r["recorder_cpu_s"] for r in ok)
                    nbytes = median(r["bytes"] for r in ok)
                    row.update(samples=samples, samples_per_cpu_s=ratio(samples, cpu),
                               target_us_per_sample=ratio((cpu - base_cpu) * 1e6, samples)
                               if base_cpu is not None else None,
                               recorder_cpu_s=rec,
                               recorder_cpu_s_per_1k_samples=ratio(rec * 1000, samples),
                               recorder_maxrss_mib=median(r["recorder_maxrss_kb"] for r in ok)
                               / 1024, bytes=nbytes, bytes_per_sample=ratio(nbytes, samples))
                    f = fixed.get(c.name)
                    fok = f.ok_runs() if f else []
                    if fok:
                        fs = median(r["samples"] for r in fok)
                        fc = median(r["recorder_cpu_s"] for r in fok)
                        fb = median(r["bytes"] for r in fok)
                        row.update(fixed_samples=fs, fixed_recorder_cpu_s=fc, fixed_bytes=fb,
                                   fixed_recorder_maxrss_mib=median(
                                       r["recorder_maxrss_kb"] for r in fok) / 1024)
                        if samples - fs > 0:
                            row["marginal_recorder_cpu_s_per_1k_samples"] = \
                                (rec - fc) * 1000 / (samples - fs)
                            if nbytes is not None and fb is not None:
                                row["marginal_bytes_per_sample"] = (nbytes - fb) / (samples - fs)
                    elif f:
                        row["fixed_status"] = "failed: " + "; ".join(
                            sorted({r.get("error", "?") for r in f.runs}))[:300]
            rows[c.name] = row
        add_floor(rows)
        return rows

    # ---- 3b: perf report / microscope report over the 999 Hz outputs ----

    def analysis(self, rows):
        res = {}
        reps = self.mode["perf_report_reps"]
        for name, row in rows.items():
            path = os.path.join(self.keep, name)
            if row["tool"] not in ("microscope", "perf") or row["rate_hz"] != ANALYSIS_RATE:
                continue
            if not os.path.exists(path):
                res[name] = {"status": "no recording kept (%s)" % row["status"]}
                continue
            fixed = None
            if row["tool"] == "perf":
                fixed = fix_perf_mmap2(path)
                cmd = [self.perf, "--buildid-dir", self.buildid_dir, "report", "-i", path,
                       "--stdio"]
                what = "perf report --stdio"
            else:
                cmd = [self.ms, "report", path]
                what = "microscope report"
            runs = []
            for _ in range(reps):
                r = run(cmd, timeout=self.mode["timeout"], workdir=self.tmp)
                if r.rc == 0 and "stack smashing" not in r.stderr:
                    runs.append(r)
                else:
                    res[name] = {"status": "failed: " + r.why()}
                    break
            if runs:
                cpu = median(r.cpu for r in runs)
                rec = row.get("recorder_cpu_s")
                res[name] = {"status": "ok", "command": what, "cpu_s": cpu,
                             "perf_mmap2_build_id_bits_cleared": fixed,
                             "wall_s": median(r.wall for r in runs),
                             "maxrss_mib": median(r.maxrss_kb for r in runs) / 1024,
                             "record_plus_report_cpu_s": (rec or 0) + cpu,
                             "record_plus_report_cpu_s_per_1k_samples":
                                 ratio(((rec or 0) + cpu) * 1000, row.get("samples"))}
        for name in os.listdir(self.keep):
            rm(os.path.join(self.keep, name))
        return res

    # ---- 3c/4: saved raw streams, replayed ----

    def replay(self):
        rate, scale = self.mode["raw_rate"], self.mode["raw_scale"]
        res = {}
        streams = []
        for cg in ("fp", "dwarf"):
            for sc, tag in ((scale, "work"), (0, "nowork")):
                name = "raw-%s-%s" % (cg, tag)
                raw = os.path.join(self.tmp, name)
                shutil.rmtree(raw, ignore_errors=True)
                fixture_out = os.path.join(self.tmp, name + ".fixture")
                rm(fixture_out)
                cmd = [self.ms, "record", "-F", str(rate), "--budget", "0", "--call-graph", cg]
                if cg == "dwarf":
                    cmd += ["--stack-size", str(STACK_SIZE)]
                cmd += ["--save-raw", raw, "-o", os.path.join(self.tmp, name + ".msc"), "--",
                        self.work]
                log("  %s: record --save-raw at %d Hz, scale %g" % (name, rate, sc))
                r = run(self.norand + cmd, env=self.env(sc, fixture_out),
                        timeout=self.mode["timeout"],
                        workdir=self.tmp)
                m = None
                if os.path.exists(fixture_out):
                    with open(fixture_out) as f:
                        m = WORK_RE.search(f.read())
                raw_file = os.path.join(raw, "stream.msraw")
                sm = re.search(r"microscope: (\d+) samples? written", r.stderr)
                if r.rc or not m or not os.path.exists(raw_file) or not sm:
                    res[name] = {"status": "failed: " + r.why()}
                    continue
                res[name] = {"status": "ok", "call_graph": cg, "rate_hz": rate, "scale": sc,
                             "samples": int(sm.group(1)),
                             "live_recorder_cpu_s": r.cpu - int(m.group(1)) / 1e9,
                             "raw_bytes": os.path.getsize(raw_file),
                             "capture_bytes": os.path.getsize(os.path.join(self.tmp,
                                                                           name + ".msc"))}
                res[name]["raw_bytes_per_sample"] = ratio(res[name]["raw_bytes"],
                                                          res[name]["samples"])
                streams.append((name, raw))
        # Replays, interleaved.
        times = {name: [] for name, _ in streams}
        for i in range(self.mode["replays"]):
            for name, raw in streams:
                out = os.path.join(self.tmp, name + ".replay.msc")
                rm(out)
                r = run([self.ms, "record", "--replay", raw, "-o", out], timeout=self.mode["timeout"],
                        workdir=self.tmp)
                if r.rc == 0:
                    times[name].append(r)
                else:
                    res[name]["replay_status"] = "failed: " + r.why()
        for name, raw in streams:
            runs = times[name]
            if not runs:
                continue
            d = res[name]
            d["replay_cpu_s"] = median(r.cpu for r in runs)
            d["replay_wall_s"] = median(r.wall for r in runs)
            d["replay_maxrss_mib"] = median(r.maxrss_kb for r in runs) / 1024
            d["replay_cpu_s_all"] = [round(r.cpu, 4) for r in runs]
            d["replay_cpu_s_per_1k_samples"] = ratio(d["replay_cpu_s"] * 1000, d["samples"])
            d["collection_cpu_s"] = d["live_recorder_cpu_s"] - d["replay_cpu_s"]
            out = os.path.join(self.tmp, name + ".replay.msc")
            folded = os.path.join(self.tmp, name + ".folded")
            c = run([self.ms, "convert", out, "--to", "folded", "-o", folded],
                    timeout=self.mode["timeout"], workdir=self.tmp)
            if c.rc == 0:
                d.update(count_frames(folded))
            rm(folded)
            rm(out)
            shutil.rmtree(raw, ignore_errors=True)
            rm(os.path.join(self.tmp, name + ".msc"))
        # Marginal costs: the work stream minus the no-work stream.
        for cg in ("fp", "dwarf"):
            w, z = res.get("raw-%s-work" % cg), res.get("raw-%s-nowork" % cg)
            if not w or "replay_cpu_s" not in w:
                continue
            d = {"call_graph": cg}
            if z and "replay_cpu_s" in z and w["samples"] > z["samples"]:
                ds = w["samples"] - z["samples"]
                d["replay_cpu_s_per_1k_samples_marginal"] = \
                    (w["replay_cpu_s"] - z["replay_cpu_s"]) * 1000 / ds
                d["live_cpu_s_per_1k_samples_marginal"] = \
                    (w["live_recorder_cpu_s"] - z["live_recorder_cpu_s"]) * 1000 / ds
                d["collection_cpu_s_per_1k_samples_marginal"] = \
                    d["live_cpu_s_per_1k_samples_marginal"] - d["replay_cpu_s_per_1k_samples_marginal"]
                d["fixed_replay_cpu_s"] = z["replay_cpu_s"]
            if w.get("user_frames"):
                d["user_frames_per_sample"] = w["user_frames"] / max(1, w["folded_samples"])
                d["user_frames_per_replay_cpu_s"] = w["user_frames"] / w["replay_cpu_s"]
                m = d.get("replay_cpu_s_per_1k_samples_marginal")
                if m and m > 0:
                    d["user_frames_per_marginal_replay_cpu_s"] = \
                        d["user_frames_per_sample"] * 1000 / m
            res["%s-summary" % cg] = d
        fp, dw = res.get("fp-summary", {}), res.get("dwarf-summary", {})
        a = fp.get("replay_cpu_s_per_1k_samples_marginal")
        b = dw.get("replay_cpu_s_per_1k_samples_marginal")
        if a is not None and b is not None and b > a and dw.get("user_frames_per_sample"):
            dw["dwarf_extra_cpu_s_per_1k_samples"] = b - a
            dw["user_frames_per_dwarf_extra_cpu_s"] = dw["user_frames_per_sample"] * 1000 / (b - a)
        return res

    # ---- 4b: the unit test's own unwinder speed ----

    def unit_speed(self):
        path = os.path.join(self.build, "tests", "unit", "test_unwind")
        if not os.path.exists(path):
            return {"status": "not built (make OUTPUT=%s %s)" % (self.args.build,
                                                                  os.path.relpath(path))}
        r = run([path], timeout=self.mode["timeout"], workdir=self.tmp)
        m = re.search(r"speed \(thread CPU time\): (\d+)-frame sample x (\d+): ([\d.]+) M frames/s, "
                      r"([\d.]+) M samples/s.*?libdw on the same bytes x \d+: ([\d.]+) M frames/s",
                      r.stdout)
        if not m:
            return {"status": "no speed line (exit %d)" % r.rc}
        return {"status": "ok" if r.rc == 0 else "tests failed (exit %d)" % r.rc,
                "frames_per_sample": int(m.group(1)), "m_frames_per_s": float(m.group(3)),
                "m_samples_per_s": float(m.group(4)), "libdw_m_frames_per_s": float(m.group(5)),
                "line": m.group(0)}

    # ---- 5: report on a synthetic capture ----

    def synthetic(self):
        n = self.mode["synth_samples"]
        path = os.path.join(self.tmp, "synthetic.msc")
        g = run([self.gen, path, str(n)], timeout=self.mode["timeout"], workdir=self.tmp)
        if g.rc:
            return {"status": "failed: gen_capture " + g.why()}
        info = dict(re.findall(r"(\w+)=([\d.]+)", g.stdout))
        res = {"status": "ok", "samples": n, "generator": info}
        for what, cmd in (("report", [self.ms, "report", path]),
                          ("convert_folded", [self.ms, "convert", path, "--to", "folded", "-o",
                                              os.devnull])):
            runs = []
            for _ in range(self.mode["report_reps"]):
                r = run(cmd, timeout=self.mode["timeout"], workdir=self.tmp)
                if r.rc:
                    res[what] = {"status": "failed: " + r.why()}
                    break
                runs.append(r)
            else:
                res[what] = {"status": "ok", "wall_s": median(r.wall for r in runs),
                             "cpu_s": median(r.cpu for r in runs),
                             "maxrss_mib": median(r.maxrss_kb for r in runs) / 1024,
                             "wall_s_all": [round(r.wall, 3) for r in runs]}
        rm(path)
        return res

    # ---- 6: lost samples system-wide ----

    def syswide(self):
        secs = self.mode["syswide_s"]
        ncpu = os.cpu_count() or 1
        out = os.path.join(self.tmp, "syswide.msc")
        loads = []
        for i in range(ncpu):  # keep every CPU busy for longer than the recording
            loads.append(subprocess.Popen([self.work], env=self.env(secs * 2, os.devnull),
                                          stdout=subprocess.DEVNULL, start_new_session=True))
        try:
            r = run([self.ms, "record", "-a", "-F", "999", "--budget", "0", "--call-graph", "dwarf",
                     "--stack-size", str(STACK_SIZE), "--duration", str(secs), "-o", out],
                    timeout=secs + self.mode["timeout"], workdir=self.tmp)
        finally:
            for p in loads:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        if r.rc:
            return {"status": "failed: " + r.why()}
        rep = run([self.ms, "report", out, "--limit", "1"], timeout=self.mode["timeout"],
                  workdir=self.tmp)
        rm(out)
        d = {"status": "ok", "duration_s": secs, "cpus": ncpu, "recorder_cpu_s": r.cpu,
             "recorder_maxrss_mib": r.maxrss_kb / 1024}
        m = re.search(r"^\s*samples\s+(\d+)", rep.stdout, re.M)
        d["samples"] = int(m.group(1)) if m else None
        m = re.search(r"^\s*lost\s+(\d+)(.*)$", rep.stdout, re.M)
        d["lost"] = int(m.group(1)) if m else None
        d["lost_detail"] = m.group(2).strip() if m else None
        d["lost_fraction"] = ratio(d["lost"], (d["lost"] or 0) + (d["samples"] or 0))
        return d

    def host(self, secs=10, rate=999):
        """Issue 15's keeping-up figures: `record -a` at rate Hz for secs on 2
        busy CPUs (two `work` processes), beside `perf record -a -g` on the
        same load in the same run: recorder CPU, and how long each took to
        finish after sampling stopped (microscope: its own figure, from the
        halt to the sealed capture; perf: wall after its `sleep` ended)."""
        loads = [subprocess.Popen([self.work], env=self.env(secs * 8, os.devnull),
                                  stdout=subprocess.DEVNULL, start_new_session=True)
                 for _ in range(2)]
        d = {"duration_s": secs, "rate_hz": rate, "busy_cpus": 2,
             "loadavg_start": read_first("/proc/loadavg")}
        try:
            out = os.path.join(self.tmp, "host.msc")
            r = run([self.ms, "record", "-a", "-F", str(rate), "-d", str(secs), "-o", out, "-f"],
                    timeout=secs + 20 * self.mode["timeout"], workdir=self.tmp)
            m = re.search(r"sealed ([\d.]+) s after sampling stopped; processing lag max "
                          r"([\d.]+) s, mean ([\d.]+) s", r.stderr)
            d["microscope"] = {"status": "ok" if not r.rc else "failed: " + r.why(),
                               "recorder_cpu_s": r.cpu, "wall_s": r.wall,
                               "seal_after_stop_s": float(m.group(1)) if m else None,
                               "lag_max_s": float(m.group(2)) if m else None,
                               "lag_mean_s": float(m.group(3)) if m else None}
            rm(out)
            data = os.path.join(self.tmp, "host.perf.data")
            r = run(["perf", "record", "-a", "-g", "-F", str(rate), "-o", data, "--",
                     "sleep", str(secs)], timeout=secs + 20 * self.mode["timeout"],
                    workdir=self.tmp)
            d["perf"] = {"status": "ok" if not r.rc else "failed: " + r.why(),
                         "recorder_cpu_s": r.cpu, "wall_s": r.wall,
                         "seal_after_stop_s": max(0.0, r.wall - secs)}
            rm(data)
        finally:
            for p in loads:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        d["loadavg_end"] = read_first("/proc/loadavg")
        return d


def print_host(h):
    print()
    print("record -a at %d Hz for %d s on %d busy CPUs, beside perf record -a -g "
          "(load %s -> %s)" % (h["rate_hz"], h["duration_s"], h["busy_cpus"],
                               h["loadavg_start"], h["loadavg_end"]))
    rows = []
    for tool in ("microscope", "perf"):
        t = h.get(tool, {})
        rows.append([tool, t.get("status", "-"), fmt(t.get("recorder_cpu_s"), "%.2f"),
                     fmt(t.get("seal_after_stop_s"), "%.2f"), fmt(t.get("lag_max_s"), "%.2f"),
                     fmt(t.get("wall_s"), "%.1f")])
    table(["tool", "status", "recorder CPU s", "done after stop s", "lag max s", "wall s"],
          rows)


def rm(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def fix_perf_mmap2(path):
    """Clear a stray PERF_RECORD_MISC_MMAP_BUILD_ID bit in perf.data MMAP2
    records; returns how many were fixed.

    The kernel sets that bit on the mmap event it shares between all perf
    events it reports one mapping to (perf_event_mmap_output) and never
    clears it, so once any event with attr.build_id (another recorder's, e.g.
    microscope's side-band events) got the record, later events get the bit
    over a maj/min/ino body.  perf 6.1 then reads the device major (254 here)
    as build_id_size and overflows a 20-byte buffer ("stack smashing
    detected").  A record whose build_id_size is over 20 cannot be a build-id
    record, so clearing the bit restores exactly what the kernel wrote."""
    fixed = 0
    with open(path, "r+b") as f:
        head = f.read(104)
        if len(head) < 104 or head[:8] != b"PERFILE2":
            return 0
        data_off, data_size = struct.unpack_from("<QQ", head, 40)
        off, end = data_off, data_off + data_size
        while off + 8 <= end:
            f.seek(off)
            typ, misc, size = struct.unpack("<IHH", f.read(8))
            if size < 8:
                break
            if typ == 10 and misc & 0x4000 and size >= 48:  # PERF_RECORD_MMAP2
                f.seek(off + 40)  # header, pid, tid, addr, len, pgoff
                if f.read(1)[0] > 20:
                    f.seek(off + 4)
                    f.write(struct.pack("<H", misc & ~0x4000))
                    fixed += 1
            off += size
    return fixed


def count_frames(folded):
    """Frames in a folded file, weighted by count: user (unwound), kernel
    ("_[k]"), markers ("[no stack copy]" etc.)."""
    user = kernel = marker = samples = 0
    with open(folded, errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not count.isdigit():
                continue
            n = int(count)
            samples += n
            for fr in stack.split(";"):
                if fr.endswith("_[k]"):
                    kernel += n
                elif fr.startswith("[") and fr.endswith("]"):
                    marker += n
                else:
                    user += n
    return {"folded_samples": samples, "user_frames": user, "kernel_frames": kernel,
            "marker_frames": marker}


# --------------------------------------------------------------------------
# Output


def pos_ratio(a, b):
    """a / b when both are positive (a ratio of noisy differences is shown
    only when it means something)."""
    return a / b if a is not None and b is not None and a > 0 and b > 0 else None


def fmt(v, spec="%.3f", none="-"):
    return none if v is None else spec % v


def table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(headers))
    print(line(["-" * w for w in widths]))
    for r in rows:
        print(line(r))


def peer_of(name):
    """The perf configuration a microscope one is compared with."""
    m = re.match(r"ms-(fp|dwarf)-(\d+)$", name)
    return "perf-%s-%s" % m.groups() if m else None


def add_floor(rows):
    """The cost above the floor: what a sampler at the same rate costs the
    target with no call chain at all (perf record -F N without -g; the BPF
    floor, a bpftrace count, beside it).  Most of a sample's cost on a VM is
    the timer interrupt and the perf machinery every sampler pays, so the
    call chains are compared above it: us_above_floor = us/sample - perf's
    floor, and vs_perf_dwarf_above_floor = that / perf dwarf's."""
    for r in rows.values():
        if r["tool"] == "none" or r.get("target_us_per_sample") is None:
            continue
        floor = rows.get("perf-none-%d" % r["rate_hz"], {}).get("target_us_per_sample")
        dwarf = rows.get("perf-dwarf-%d" % r["rate_hz"], {}).get("target_us_per_sample")
        if floor is None:
            continue
        r["us_above_floor"] = r["target_us_per_sample"] - floor
        if dwarf is not None and dwarf - floor > 0:
            r["vs_perf_dwarf_above_floor"] = r["us_above_floor"] / (dwarf - floor)


def print_floor(m):
    rows = []
    for name, r in m.items():
        if r.get("us_above_floor") is None:
            continue
        rows.append([r["label"], r["rate_hz"], fmt(r.get("target_us_per_sample"), "%.1f"),
                     fmt(r["us_above_floor"], "%.1f"),
                     fmt(ratio(r.get("target_us_per_sample"), m.get("perf-dwarf-%d" % r["rate_hz"],
                                                                    {}).get("target_us_per_sample")),
                         "%.2f"),
                     fmt(r.get("vs_perf_dwarf_above_floor"), "%.2f")])
    if not rows:
        return
    print()
    print("1b. Target cost above the floor (perf record -F N with no call chain, same rate)")
    table(["config", "Hz", "us/sample", "above floor", "vs perf dwarf", "above floor vs perf dwarf"],
          rows)
    print("   above floor vs perf dwarf: (us/sample - floor) / (perf dwarf's - floor); the floor"
          " is the timer\n   interrupt and perf machinery that any sampler pays.")


def print_report(res):
    m = res["matrix"]
    print()
    print("1. Target slowdown: fixture CPU and wall time recorded / unrecorded "
          "(median of %d interleaved runs, work scale %g)" % (res["mode"]["runs"],
                                                               res["mode"]["scale"]))
    rows = []
    for name, r in m.items():
        if r["status"].startswith(("failed", "unavailable")):
            rows.append([r["label"], r["rate_hz"] or "-", "%d/%d" % (r["ok_runs"], r["runs"])]
                        + [r["status"][:60]] + [""] * 7)
            continue
        p = m.get(peer_of(name)) or {}
        rows.append([r["label"], r["rate_hz"] or "-", "%d/%d" % (r["ok_runs"], r["runs"]),
                     fmt(r.get("cpu_s")), fmt(r.get("slowdown_cpu"), "%.3fx"),
                     fmt(r.get("slowdown_wall"), "%.3fx"),
                     fmt(ratio(r.get("slowdown_cpu"), p.get("slowdown_cpu")), "%.3f"),
                     fmt(r.get("samples"), "%d"), fmt(r.get("samples_per_cpu_s"), "%.0f"),
                     fmt(r.get("target_us_per_sample"), "%.1f"),
                     fmt(pos_ratio(r.get("target_us_per_sample"), p.get("target_us_per_sample")),
                         "%.2f")])
    table(["config", "Hz", "ok", "cpu s", "cpu x", "wall x", "cpu x / perf x", "samples",
           "samples/cpu-s", "us/sample", "vs perf"], rows)
    print("   cpu x: the fixture's own CPU time (includes in-kernel sampling work charged to it);"
          " wall x: its own wall time, both vs unrecorded.\n"
          "   us/sample: (recorded - unrecorded fixture CPU) / samples, the target-side cost of"
          " one sample.\n"
          "   Noise: other jobs share the machine; see results.json *_all for every run.")
    print_floor(m)
    if res.get("kunwind_share"):
        import kshare
        kshare.print_table(res["kunwind_share"])

    print()
    print("2. Capture bytes per sample (median run; marginal = minus the no-work recording)")
    rows = []
    for name, r in m.items():
        if r["tool"] not in ("microscope", "perf") or "bytes_per_sample" not in r:
            continue
        p = m.get(peer_of(name)) or {}
        rows.append([r["label"], r["rate_hz"], fmt(r.get("samples"), "%d"),
                     fmt(r.get("bytes"), "%d"), fmt(r.get("bytes_per_sample"), "%.1f"),
                     fmt(r.get("marginal_bytes_per_sample"), "%.1f"),
                     fmt(ratio(r.get("bytes_per_sample"), p.get("bytes_per_sample")), "%.4f")])
    for name, r in res["replay"].items():
        if name.endswith("-work") and r.get("raw_bytes_per_sample"):
            rows.append(["microscope raw stream " + r["call_graph"], r["rate_hz"], r["samples"],
                         r["raw_bytes"], fmt(r["raw_bytes_per_sample"], "%.1f"), "-", "-"])
    table(["file", "Hz", "samples", "bytes", "bytes/sample", "marginal", "vs perf"], rows)

    print()
    print("3. Recorder CPU (the recorder process: its CPU minus the fixture's) per 1,000 samples")
    rows = []
    for name, r in m.items():
        if r["tool"] == "none" or "recorder_cpu_s" not in r:
            continue
        p = m.get(peer_of(name)) or {}
        rows.append([r["label"], r["rate_hz"], fmt(r.get("samples"), "%d"),
                     fmt(r.get("recorder_cpu_s")), fmt(r.get("recorder_cpu_s_per_1k_samples")),
                     fmt(r.get("fixed_recorder_cpu_s")),
                     fmt(r.get("marginal_recorder_cpu_s_per_1k_samples")),
                     fmt(pos_ratio(r.get("marginal_recorder_cpu_s_per_1k_samples"),
                                   p.get("marginal_recorder_cpu_s_per_1k_samples")), "%.2f"),
                     fmt(r.get("recorder_maxrss_mib"), "%.0f")])
    table(["recorder", "Hz", "samples", "cpu s", "s/1k", "fixed s", "marginal s/1k",
           "marg vs perf", "peak RSS MiB"], rows)
    print("   fixed s: the same recorder on a run with no work (start-up, attach, seal);"
          " marginal: (cpu - fixed) / (samples - fixed samples).")
    a = res["analysis"]
    if a:
        print()
        print("   record + analysis at %d Hz, same recordings (analysis: microscope report / "
              "perf report --stdio)" % ANALYSIS_RATE)
        rows = []
        for name, d in a.items():
            r = m[name]
            if d.get("status") != "ok":
                rows.append([r["label"], d.get("status", "?")[:40], "", "", "", ""])
                continue
            rows.append([r["label"], fmt(r.get("samples"), "%d"), fmt(r.get("recorder_cpu_s")),
                         fmt(d["cpu_s"]), fmt(d["record_plus_report_cpu_s"]),
                         fmt(d["record_plus_report_cpu_s_per_1k_samples"])])
        table(["tool", "samples", "record cpu s", "analysis cpu s", "total s", "total s/1k"],
              rows)
    rp = res["replay"]
    rows = []
    for name, d in rp.items():
        if not name.endswith(("-work", "-nowork")):
            continue
        if d.get("status") != "ok":
            rows.append([name, d.get("status", "?")[:50]] + [""] * 6)
            continue
        rows.append([name, d["samples"], fmt(d.get("live_recorder_cpu_s")),
                     fmt(d.get("replay_cpu_s")), fmt(d.get("collection_cpu_s")),
                     fmt(d.get("replay_cpu_s_per_1k_samples")),
                     fmt(d.get("replay_maxrss_mib"), "%.0f"), d.get("replay_status", "ok")])
    if rows:
        print()
        print("   live recording with --save-raw vs record --replay of the same stream "
              "(replay = processing + unwinding + symbolization + sealing; "
              "collection ~ live - replay)")
        table(["stream", "samples", "live cpu s", "replay cpu s", "collection s",
               "replay s/1k", "replay RSS MiB", "replay"], rows)
        for cg in ("fp", "dwarf"):
            s = rp.get("%s-summary" % cg, {})
            if "replay_cpu_s_per_1k_samples_marginal" in s:
                print("   %-5s marginal per 1k samples: live %.4f s, replay %.4f s, collection "
                      "%.4f s" % (cg, s["live_cpu_s_per_1k_samples_marginal"],
                                  s["replay_cpu_s_per_1k_samples_marginal"],
                                  s["collection_cpu_s_per_1k_samples_marginal"]))

    if not rp and not res["synthetic"]:  # --only: the matrix alone
        return
    print()
    print("4. Unwind throughput")
    s = rp.get("dwarf-summary", {})
    if s.get("user_frames_per_sample"):
        print("   replay of the dwarf stream: %.1f user frames/sample; %.2f M frames per replay "
              "CPU-second (everything included)" % (s["user_frames_per_sample"],
                                                    s["user_frames_per_replay_cpu_s"] / 1e6))
        if s.get("user_frames_per_marginal_replay_cpu_s"):
            print("   per marginal replay CPU-second (minus the no-work stream): %.2f M frames/s"
                  % (s["user_frames_per_marginal_replay_cpu_s"] / 1e6))
        if s.get("user_frames_per_dwarf_extra_cpu_s"):
            print("   per CPU-second dwarf replay costs beyond fp replay: %.2f M frames/s "
                  "(%.4f s extra per 1k samples)" % (s["user_frames_per_dwarf_extra_cpu_s"] / 1e6,
                                                     s["dwarf_extra_cpu_s_per_1k_samples"]))
    else:
        print("   replay of the dwarf stream: no numbers (%s)"
              % rp.get("raw-dwarf-work", {}).get("status", "not run"))
    u = res["unit_speed"]
    if u.get("status") == "ok" or "m_frames_per_s" in u:
        print("   tests/unit/test_unwind (one warm sample, loop): %.1f M frames/s, libdw %.2f M "
              "frames/s (%.0fx)" % (u["m_frames_per_s"], u["libdw_m_frames_per_s"],
                                    u["m_frames_per_s"] / u["libdw_m_frames_per_s"]))
    else:
        print("   tests/unit/test_unwind: %s" % u.get("status"))

    print()
    sy = res["synthetic"]
    print("5. microscope report on a synthetic capture (%s samples)" % sy.get("samples", "?"))
    if sy.get("status") == "ok":
        g = sy["generator"]
        print("   %s distinct stacks, %s stack rows, %s frames, %s threads, %.1f MiB file" % (
            g.get("stacks"), g.get("stack_rows"), g.get("frames"), g.get("threads"),
            int(g.get("bytes", 0)) / 2**20))
        rows = []
        for what in ("report", "convert_folded"):
            d = sy.get(what, {})
            if d.get("status") == "ok":
                rows.append([what, fmt(d["wall_s"]), fmt(d["cpu_s"]), fmt(d["maxrss_mib"], "%.0f")])
            else:
                rows.append([what, d.get("status", "?"), "", ""])
        table(["command", "wall s", "cpu s", "peak RSS MiB"], rows)
    else:
        print("   " + sy.get("status", "not run"))

    sw = res.get("syswide")
    if sw:
        print()
        if sw.get("status") == "ok":
            print("6. System-wide, 999 Hz, dwarf 16 KiB copies, %d s on %d busy CPUs: %s samples, "
                  "lost %s (%s), recorder %.2f s CPU, peak RSS %.0f MiB" % (
                      sw["duration_s"], sw["cpus"], sw["samples"], sw["lost"],
                      fmt(sw["lost_fraction"], "%.4f"), sw["recorder_cpu_s"],
                      sw["recorder_maxrss_mib"]))
        else:
            print("6. System-wide loss: " + sw["status"])


# --------------------------------------------------------------------------
# Baseline: key metrics, comparison, acceptance


def key_metrics(res):
    """Flat {name: value} of the numbers the baseline tracks: positive
    quantities whose relative change means something (marginal costs, which
    are differences of noisy numbers and can be negative, stay out)."""
    k = {}
    for name, r in res["matrix"].items():
        if r["tool"] == "none":
            continue
        fields = ["slowdown_cpu", "slowdown_wall", "recorder_cpu_s_per_1k_samples",
                  "recorder_maxrss_mib"]
        if r["rate_hz"] >= 999:  # at 99 Hz the per-sample cost is lost in the noise
            fields.append("target_us_per_sample")
        if r["tool"] in ("microscope", "perf"):
            fields.append("bytes_per_sample")
        for f in fields:
            if r.get(f) is not None and r[f] > 0:
                k["%s/%s" % (f, name)] = r[f]
    for name, d in res["analysis"].items():
        if d.get("record_plus_report_cpu_s_per_1k_samples"):
            k["record_plus_report_cpu_s_per_1k_samples/%s" % name] = \
                d["record_plus_report_cpu_s_per_1k_samples"]
    for cg in ("fp", "dwarf"):
        w = res["replay"].get("raw-%s-work" % cg, {})
        if w.get("replay_cpu_s_per_1k_samples"):
            k["replay_cpu_s_per_1k_samples/raw-%s" % cg] = w["replay_cpu_s_per_1k_samples"]
        if w.get("raw_bytes_per_sample"):
            k["raw_bytes_per_sample/raw-%s" % cg] = w["raw_bytes_per_sample"]
    s = res["replay"].get("dwarf-summary", {})
    if s.get("user_frames_per_replay_cpu_s"):
        k["user_frames_per_replay_cpu_s/raw-dwarf"] = s["user_frames_per_replay_cpu_s"]
    if res["unit_speed"].get("m_frames_per_s"):
        k["unit_m_frames_per_s/test_unwind"] = res["unit_speed"]["m_frames_per_s"]
    for what in ("report", "convert_folded"):
        d = res["synthetic"].get(what, {})
        for f in ("cpu_s", "maxrss_mib"):
            if d.get(f) is not None:
                k["synthetic_%s_%s" % (what, f)] = d[f]
    return k


LOWER_IS_BETTER_EXCEPT = ("user_frames_per", "unit_m_frames_per_s")
FLOOR = 0.05  # relative changes below 5 % are never flagged


def compare(res, path, cur=None):
    try:
        with open(path) as f:
            base = json.load(f)
    except (OSError, ValueError) as e:
        return {"status": "no baseline (%s)" % e}
    if base.get("mode") != res["mode_name"]:
        return {"status": "baseline is a %s run; this is %s: not compared" % (base.get("mode"),
                                                                                res["mode_name"])}
    if cur is None:
        cur = key_metrics(res)
    out = {"status": "ok", "baseline": os.path.relpath(path, ROOT), "flagged": [], "compared": 0}
    for name, b in sorted(base.get("metrics", {}).items()):
        c = cur.get(name)
        if c is None or not b:
            continue
        out["compared"] += 1
        band = max(FLOOR, base.get("noise_band", {}).get(name, 0.0))
        change = c / b - 1
        worse = change < 0 if name.startswith(LOWER_IS_BETTER_EXCEPT) else change > 0
        if abs(change) > band:
            out["flagged"].append({"metric": name, "baseline": b, "now": c,
                                   "change": change, "band": band,
                                   "direction": "worse" if worse else "better"})
    return out


def print_compare(cmp, informational=True):
    print()
    if cmp.get("status") != "ok":
        print("Baseline: %s" % cmp.get("status"))
        return
    fl = cmp["flagged"]
    print("Baseline %s: %d metrics compared, %d outside their noise band" % (
        cmp["baseline"], cmp["compared"], len(fl)))
    fl.sort(key=lambda f: (f["direction"] != "worse", f["metric"]))
    if fl:
        table(["metric", "baseline", "now", "change", "band", ""],
              [[f["metric"], "%.4g" % f["baseline"], "%.4g" % f["now"],
                "%+.1f%%" % (100 * f["change"]), "%.1f%%" % (100 * f["band"]), f["direction"]]
               for f in fl])
        if informational:
            print("   (informational: nothing is asserted; bench/README.md says how to accept a"
                  " new baseline)")


def compare_files(results_path, baseline_path):
    """make bench-compare: a results.json against the baseline.  Returns 0
    (nothing worse beyond its band), 1 (a regression) or 3 (not comparable:
    missing file, or a smoke run against a full baseline)."""
    try:
        with open(results_path) as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        print("bench-compare: cannot read %s: %s (run make bench first)" % (results_path, e))
        return 3
    # the metrics as the run computed them (older results files: recomputed)
    cmp = compare(res, baseline_path, res.get("key_metrics"))
    print("bench-compare: %s (%s run of %s) against %s" % (
        os.path.relpath(results_path), res.get("mode_name"), res.get("started"),
        os.path.relpath(baseline_path)))
    print_compare(cmp, informational=False)
    if cmp.get("status") != "ok":
        return 3
    worse = [f for f in cmp["flagged"] if f["direction"] == "worse"]
    print()
    print("bench-compare: %d of %d metrics worse beyond their noise band%s" % (
        len(worse), cmp["compared"], " (regression)" if worse else ""))
    return 1 if worse else 0


def by_kind(band):
    """{metric kind: {n, median, max}} of a noise band dict."""
    kinds = {}
    for name, b in band.items():
        if b is not None:
            kinds.setdefault(name.split("/")[0], []).append(b)
    return {k: {"n": len(v), "median": round(statistics.median(v), 4), "max": max(v)}
            for k, v in sorted(kinds.items())}


def make_baseline(files, out):
    runs = []
    for p in files:
        with open(p) as f:
            runs.append(json.load(f))
    first = runs[0]
    modes = {r["mode_name"] for r in runs}
    if len(modes) != 1:
        sys.exit("bench: results of different modes: %s" % ", ".join(sorted(modes)))
    metrics = key_metrics(first)
    band = {}
    for name, v in metrics.items():
        others = [key_metrics(r).get(name) for r in runs[1:]]
        devs = [abs(o / v - 1) for o in others if o is not None and v]
        band[name] = math.ceil(max(devs) * 1000) / 1000 if devs else None  # rounded up
    bands = sorted(b for b in band.values() if b is not None)
    doc = {
        "note": "Accepted baseline (bench/README.md). bench/run.py compares every run of the "
                "same mode with it and prints the metrics that moved beyond their band; it asserts "
                "nothing. metrics come from the first results file; "
                "noise_band[m] is the largest relative difference of m between that run and the "
                "others given (%d runs in all); a change is flagged beyond max(band, %g)." % (
                    len(runs), FLOOR),
        "mode": first["mode_name"],
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "from": [{"file": os.path.relpath(os.path.abspath(p), ROOT), "started": r.get("started"),
                  "git": r.get("system", {}).get("git"), "loadavg": r.get("system", {}).get(
                      "loadavg_start")} for p, r in zip(files, runs)],
        "system": first.get("system"),
        "noise_band_summary": {"runs": len(runs),
                               "median": statistics.median(bands) if bands else None,
                               "max": bands[-1] if bands else None,
                               "by_kind": by_kind(band)},
        "noise_band": band,
        "metrics": metrics,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print("bench: wrote %s (%d metrics, median noise band %s, max %s)" % (
        out, len(metrics), fmt(doc["noise_band_summary"]["median"], "%.3f"),
        fmt(doc["noise_band_summary"]["max"], "%.3f")))


# --------------------------------------------------------------------------


def read_first(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def system_info(bench):
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=20,
                                  cwd=ROOT).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            return None

    return {
        "kernel": os.uname().release,
        "cpus": os.cpu_count(),
        "cpu_model": next((l.split(":", 1)[1].strip() for l in
                           (read_first("/proc/cpuinfo") or "").splitlines()
                           if l.startswith("model name")), None),
        "loadavg_start": read_first("/proc/loadavg"),
        "perf_event_max_sample_rate_start": read_first("/proc/sys/kernel/perf_event_max_sample_rate"),
        "perf": out([bench.perf, "--version"]) if bench.perf else None,
        "bpftrace": out([bench.bpftrace, "--version"]) if bench.bpftrace else None,
        "git": out(["git", "rev-parse", "--short", "HEAD"]),
        "git_dirty": bool(out(["git", "status", "--porcelain", "--untracked-files=no"])),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--smoke", action="store_true", help="the CI subset (about 2 minutes)")
    g.add_argument("--full", action="store_true", help="everything (about 8 minutes)")
    g.add_argument("--host", action="store_true",
                   help="only the record -a rows beside perf record -a -g (issue 15)")
    g.add_argument("--make-baseline", nargs="+", metavar="RESULTS",
                   help="write bench/overhead.json from these results.json files (the first "
                        "gives the numbers, all of them the noise band)")
    g.add_argument("--compare", metavar="RESULTS",
                   help="compare a results.json with the baseline; exit 1 if a metric got "
                        "worse beyond its noise band, 3 if the two cannot be compared")
    ap.add_argument("--runs", type=int, help="interleaved runs per configuration")
    ap.add_argument("--scale", type=float, help="work per run (MS_FIXTURE_SCALE)")
    ap.add_argument("--no-bpf-peer", action="store_true", help="skip bpftrace")
    ap.add_argument("--only", metavar="REGEX",
                    help="only the matrix, and of it the configurations whose name matches "
                         "(e.g. 'ms-.*-999|perf-dwarf')")
    ap.add_argument("--baseline", default=BASELINE, help="baseline to compare with")
    ap.add_argument("--output", help="results file (default BUILD_DIR/bench/results.json)")
    ap.add_argument("build", nargs="?", help="build directory (OUTPUT)")
    args = ap.parse_args()
    if args.make_baseline:
        make_baseline(args.make_baseline, args.output or BASELINE)
        return 0
    if args.compare:
        return compare_files(args.compare, args.baseline)
    if not args.build:
        ap.error("give the build directory")
    mode = "full" if args.full else "smoke"
    if os.geteuid() != 0:
        log("bench: needs root (BPF and perf events)")
        return 1
    b = Bench(args, mode)
    for p in (b.ms, b.work, b.gen):
        if not os.access(p, os.X_OK):
            log("bench: %s is missing; run make OUTPUT=%s bench%s" % (
                p, args.build, "-smoke" if mode == "smoke" else ""))
            return 1
    shutil.rmtree(b.tmp, ignore_errors=True)
    os.makedirs(b.keep)
    os.makedirs(b.buildid_dir)
    if args.host:
        log("bench: record -a beside perf record -a -g")
        h = b.host()
        out = args.output or os.path.join(b.out_dir, "host.json")
        with open(out + ".tmp", "w") as f:
            json.dump(h, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(out + ".tmp", out)
        shutil.rmtree(b.tmp, ignore_errors=True)
        print_host(h)
        return 0 if h.get("microscope", {}).get("status") == "ok" else 1
    t0 = time.monotonic()
    res = {"mode_name": mode, "mode": dict(b.mode),
           "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "system": system_info(b), "stack_size": STACK_SIZE,
           "aslr": "on for the matrix; %s for the save-raw recordings" % (
               "off (setarch -R)" if b.norand else "on (no setarch)")}
    log("bench (%s): 1-3. slowdown matrix" % mode)
    cfgs, fixed = b.matrix()
    res["matrix"] = b.summarize(cfgs, fixed)
    res["runs"] = {c.name: c.runs for c in cfgs}
    res["runs"].update({c.name: c.runs for c in fixed.values()})
    if not args.only or re.search(args.only, "kunwind-share"):
        log("bench: 1b. user stacks unwound whole in the kernel, %d Hz" % 4999)
        import kshare
        res["kunwind_share"] = kshare.measure(b.build, b.tmp, runs=b.mode["kshare_runs"])
    res["analysis"], res["replay"], res["unit_speed"], res["synthetic"] = {}, {}, {}, {}
    if not args.only:
        log("bench: 3. perf report / microscope report on the %d Hz recordings" % ANALYSIS_RATE)
        res["analysis"] = b.analysis(res["matrix"])
        log("bench: 3-4. save-raw and replay")
        res["replay"] = b.replay()
        log("bench: 4. unit test unwind speed")
        res["unit_speed"] = b.unit_speed()
        log("bench: 5. report on a synthetic capture")
        res["synthetic"] = b.synthetic()
    if args.only:
        pass
    elif b.mode["syswide_s"]:
        log("bench: 6. system-wide loss, %d s" % b.mode["syswide_s"])
        res["syswide"] = b.syswide()
    if mode == "full" and not args.only:
        log("bench: 9. record -a beside perf record -a -g")
        res["host"] = b.host()
    if mode == "full" and not args.only:
        log("bench: 7. CPython walk cost (BPF stats)")
        import py_walk
        res["python_walk"] = py_walk.measure(b.ms, b.tmp)
        log("bench: 7b. sampler BPF run time per sample, fp / dwarf-kernel (BPF stats)")
        import bpf_cost
        res["bpf_cost"] = bpf_cost.measure(b.build, b.tmp)
        log("bench: 8. production preset beside perf -F 19, 2 busy CPUs")
        import production
        res["production"] = production.measure(b.build, b.tmp)
    res["system"]["loadavg_end"] = read_first("/proc/loadavg")
    res["system"]["perf_event_max_sample_rate_end"] = read_first(
        "/proc/sys/kernel/perf_event_max_sample_rate")
    res["elapsed_s"] = time.monotonic() - t0
    res["key_metrics"] = key_metrics(res)
    res["baseline_compare"] = compare(res, args.baseline)
    out = args.output or os.path.join(b.out_dir, "results.json")
    with open(out + ".tmp", "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(out + ".tmp", out)
    shutil.rmtree(b.tmp, ignore_errors=True)

    print_report(res)
    if "host" in res:
        print_host(res["host"])
    if "python_walk" in res:
        import py_walk
        py_walk.print_table(res["python_walk"])
    if "bpf_cost" in res:
        import bpf_cost
        bpf_cost.print_table(res["bpf_cost"])
    if "production" in res:
        import production
        production.print_table(res["production"])
    print_compare(res["baseline_compare"])
    print()
    print("bench (%s): %.0f s; load average %s -> %s; results in %s" % (
        mode, res["elapsed_s"], res["system"]["loadavg_start"], res["system"]["loadavg_end"],
        os.path.relpath(out)))
    ms_ok = any(r["tool"] == "microscope" and r.get("ok_runs") for r in res["matrix"].values())
    return 0 if ms_ok else 1


if __name__ == "__main__":
    sys.exit(main())
