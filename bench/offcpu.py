#!/usr/bin/env python3
"""Off-CPU overhead: a context-switch-heavy fixture with and without off-CPU collection.

    bench/offcpu.py [--runs N] [--rounds N] BUILD_DIR     (root; `make bench-offcpu`)

tests/fixtures/offcpu.c `pingpong N`: two threads bounce a byte over two
pipes N times (two context switches per round per thread, ~10^5 switches
per second) and log their own elapsed CLOCK_MONOTONIC time.  The number
is ns per round, median of interleaved runs, and the slowdown against the
fixture alone, for:

    alone                   no profiler
    microscope              record (CPU sampling only)
    microscope --off-cpu    record --off-cpu (default --off-cpu-min 100 us)
    microscope --off-cpu-min 0
    offcputime              libbpf-tools offcputime (Debian libbpf-tools),
                            system-wide, kernel + user stacks, aggregated in
                            BPF maps, started before the fixture

Printed, and written to BUILD_DIR/bench/offcpu.json; never asserted (a
benchmark reports a number; the machine's load changes it).  Not part of
bench-smoke: it takes about a minute.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def log(msg):
    print(msg, flush=True)


def fixture_ns(build, argv_prefix, rounds, env_extra=None):
    """Run the fixture (optionally under a recorder) and return ns per round."""
    out = tempfile.mktemp(prefix="offcpu-bench-", suffix=".out")
    env = dict(os.environ, MS_FIXTURE_OUT=out)
    if env_extra:
        env.update(env_extra)
    cmd = argv_prefix + [os.path.join(build, "fixtures", "offcpu"), "pingpong", str(rounds)]
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, timeout=600)
    with open(out) as f:
        line = [l for l in f if l.startswith("pingpong ")][-1]
    os.unlink(out)
    ns = int(line.split("ns=")[1].split()[0])
    return ns / rounds


def with_offcputime(build, rounds):
    tool = shutil.which("offcputime") or "/usr/sbin/offcputime"
    proc = subprocess.Popen([tool, "-u"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        time.sleep(2.0)  # BPF load and attach
        if proc.poll() is not None:
            raise RuntimeError("offcputime exited: %s" % proc.stderr.read())
        return fixture_ns(build, [], rounds)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=100000)
    ap.add_argument("build")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench/offcpu.py: needs root (BPF)")
    mscope = os.path.join(args.build, "microscope")
    tmp = tempfile.mkdtemp(prefix="offcpu-bench-")
    cap = os.path.join(tmp, "c.msc")
    configs = [
        ("alone", lambda: fixture_ns(args.build, [], args.rounds)),
        ("microscope", lambda: fixture_ns(args.build, [mscope, "record", "-q", "-o", cap, "--"],
                                          args.rounds)),
        ("microscope --off-cpu", lambda: fixture_ns(
            args.build, [mscope, "record", "-q", "--off-cpu", "-o", cap, "--"], args.rounds)),
        ("microscope --off-cpu-min 0", lambda: fixture_ns(
            args.build, [mscope, "record", "-q", "--off-cpu", "--off-cpu-min", "0", "-o", cap,
                         "--"], args.rounds)),
    ]
    if shutil.which("offcputime") or os.path.exists("/usr/sbin/offcputime"):
        configs.append(("offcputime (libbpf-tools)", lambda: with_offcputime(args.build,
                                                                             args.rounds)))
    else:
        log("offcputime not found: install libbpf-tools (make deps)")
    res = {name: [] for name, _ in configs}
    for r in range(args.runs):
        for name, fn in configs:
            v = fn()
            res[name].append(v)
            log("run %d  %-28s %8.0f ns/round" % (r + 1, name, v))
    base = statistics.median(res["alone"])
    summary = {}
    log("\n%-28s %12s %9s" % ("configuration", "ns/round", "slowdown"))
    for name, _ in configs:
        med = statistics.median(res[name])
        summary[name] = dict(ns_per_round=med, slowdown=med / base, runs=res[name])
        log("%-28s %12.0f %8.2fx" % (name, med, med / base))
    os.makedirs(os.path.join(args.build, "bench"), exist_ok=True)
    out = os.path.join(args.build, "bench", "offcpu.json")
    with open(out, "w") as f:
        json.dump(dict(rounds=args.rounds, runs=args.runs, results=summary), f, indent=1)
    log("\nwritten to %s" % out)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
