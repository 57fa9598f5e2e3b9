#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The production preset's steady-state cost on busy CPUs, beside perf.

    bench/production.py [--seconds S] BUILD_DIR     (root; `make bench-production`;
                                                     also step 8 of bench/run.py --full)

While one busy loop per CPU (at most 2: BUILD_DIR/bench/work) keeps the
CPUs busy, each profiler records the whole system for the same S seconds
(default 90), one after the other:

    microscope  record --preset production --continuous DIR --duration S
                (system-wide, 97 Hz, auto call graphs, a 1 % budget, 60 s
                segments)
    perf        perf record -a -F 19 -g -o perf.data -- sleep S

microscope's figure is its own steady-state cost as `report DIR` prints it
("own cost ... held in steady state": recorder CPU + BPF run time + the
kernel's perf-event cost estimate, % of one CPU, after start-up), and its
process CPU (wait4) over the whole run.  perf's figure is its process CPU
(wait4: perf and its sleep) as % of one CPU over S; the kernel's sampling
and unwinding cost for perf is not in it (microscope's "perf estimate" is),
so the ratio flatters perf.  Printed, and written to
BUILD_DIR/bench/production.json; never asserted (a benchmark reports a
number; the machine's load changes it).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as R  # noqa: E402  (the bench's wait4 runner)

# "(the last S, after start-up and the last duty change; ...)", or, when the
# controller changed the duty late (raised it again), "(the longest span at
# one duty, S, after start-up before a late duty change; ...)".
STEADY_RE = re.compile(r"own cost\s+([\d.]+)% of one CPU held in steady state "
                       r"\((?:the last|the longest span at one duty,) ([^,]+),"
                       r".*?recorder ([\d.]+)%, BPF ([\d.]+)%, perf estimate ([\d.]+)%\)")
WHOLE_RE = re.compile(r"([\d.]+)% of one CPU averaged over the whole recording")
SAMPLES_RE = re.compile(r"^\s*samples\s+(\d+)", re.M)


def busy(work, secs, ncpu):
    """One work loop per CPU for secs (about 1 s of CPU per unit of scale)."""
    env = dict(os.environ, MS_FIXTURE_SCALE=repr(float(secs)), MS_FIXTURE_OUT=os.devnull)
    return [subprocess.Popen([work], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
            for _ in range(ncpu)]


def stop(loads):
    for p in loads:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def microscope(ms, work, tmp, secs, ncpu):
    d = os.path.join(tmp, "production-segs")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(tmp, exist_ok=True)
    loads = busy(work, secs * 3, ncpu)
    try:
        r = R.run([ms, "record", "--preset", "production", "--continuous", d, "--duration",
                   str(secs)], timeout=secs + 120, workdir=tmp)
    finally:
        stop(loads)
    if r.rc:
        return {"status": "failed: " + r.why()}
    rep = R.run([ms, "report", d, "--limit", "1"], timeout=120, workdir=tmp)
    shutil.rmtree(d, ignore_errors=True)
    res = {"status": "ok", "seconds": secs, "busy_cpus": ncpu, "process_cpu_s": r.cpu,
           "process_cpu_pct": 100.0 * r.cpu / secs, "maxrss_mib": r.maxrss_kb / 1024}
    m = STEADY_RE.search(rep.stdout)
    if m:
        res.update(steady_pct=float(m.group(1)), steady_span=m.group(2),
                   steady_recorder_pct=float(m.group(3)), steady_bpf_pct=float(m.group(4)),
                   steady_perf_estimate_pct=float(m.group(5)))
    else:
        res["steady_note"] = "no steady-state line in report DIR"
    m = WHOLE_RE.search(rep.stdout)
    res["whole_run_pct"] = float(m.group(1)) if m else None
    m = SAMPLES_RE.search(rep.stdout)
    res["samples"] = int(m.group(1)) if m else None
    return res


def perf(work, tmp, secs, ncpu):
    tool = shutil.which("perf")
    if not tool:
        return {"status": "perf not installed"}
    out = os.path.join(tmp, "production-perf.data")
    loads = busy(work, secs * 3, ncpu)
    try:
        r = R.run([tool, "record", "-a", "-F", "19", "-g", "-o", out, "--", "sleep", str(secs)],
                  timeout=secs + 120, workdir=tmp)
    finally:
        stop(loads)
    res = {"status": "ok" if r.rc == 0 else "failed: " + r.why(), "seconds": secs,
           "busy_cpus": ncpu, "process_cpu_s": r.cpu, "process_cpu_pct": 100.0 * r.cpu / secs,
           "maxrss_mib": r.maxrss_kb / 1024,
           "data_bytes": os.path.getsize(out) if os.path.exists(out) else None}
    m = re.search(r"\(([\d]+) samples\)", r.stderr)
    res["samples"] = int(m.group(1)) if m else None
    R.rm(out)
    return res


def measure(build, tmp, secs=90):
    ms = os.path.join(build, "microscope")
    work = os.path.join(build, "bench", "work")
    ncpu = min(2, os.cpu_count() or 1)
    res = {"seconds": secs, "busy_cpus": ncpu}
    res["microscope"] = microscope(ms, work, tmp, secs, ncpu)
    res["perf"] = perf(work, tmp, secs, ncpu)
    m, p = res["microscope"], res["perf"]
    res["steady_vs_perf"] = R.ratio(m.get("steady_pct"), p.get("process_cpu_pct"))
    res["process_cpu_vs_perf"] = R.ratio(m.get("process_cpu_s"), p.get("process_cpu_s"))
    return res


def print_table(res):
    m, p = res.get("microscope", {}), res.get("perf", {})
    print("\nProduction preset on %s busy CPUs, %s s each (%% of one CPU)" % (
        res.get("busy_cpus"), res.get("seconds")))
    if m.get("status") != "ok":
        print("  microscope: %s" % m.get("status"))
    else:
        print("  microscope --preset production  steady %s%% (recorder %s%%, BPF %s%%, perf "
              "estimate %s%%; the last %s); process CPU %.2f s = %.2f%%; %s samples; "
              "peak RSS %.0f MiB" % (
                  R.fmt(m.get("steady_pct"), "%.2f"), R.fmt(m.get("steady_recorder_pct"), "%.2f"),
                  R.fmt(m.get("steady_bpf_pct"), "%.2f"),
                  R.fmt(m.get("steady_perf_estimate_pct"), "%.2f"), m.get("steady_span", "-"),
                  m["process_cpu_s"], m["process_cpu_pct"], m.get("samples"), m["maxrss_mib"]))
    if p.get("status") != "ok":
        print("  perf: %s" % p.get("status"))
    else:
        print("  perf record -a -F 19 -g          process CPU %.2f s = %.2f%% (kernel-side "
              "sampling not counted); %s samples; peak RSS %.0f MiB" % (
                  p["process_cpu_s"], p["process_cpu_pct"], p.get("samples"), p["maxrss_mib"]))
    print("  ratio microscope steady / perf process CPU: %s; process CPU / process CPU: %s" % (
        R.fmt(res.get("steady_vs_perf"), "%.2f"), R.fmt(res.get("process_cpu_vs_perf"), "%.2f")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=90, help="each recording's length")
    ap.add_argument("build", help="build directory (OUTPUT)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("bench: needs root (BPF and perf events)", file=sys.stderr)
        return 1
    build = os.path.abspath(args.build)
    tmp = os.path.join(build, "bench", "tmp-production")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    res = measure(build, tmp, args.seconds)
    shutil.rmtree(tmp, ignore_errors=True)
    out = os.path.join(build, "bench", "production.json")
    with open(out + ".tmp", "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(out + ".tmp", out)
    print_table(res)
    return 0 if res["microscope"].get("status") == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
