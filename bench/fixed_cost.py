#!/usr/bin/env python3
"""The recorder's fixed cost: CPU seconds of `microscope record` on a run with
no work (start-up, BPF load and verification, attach, the capture's seal),
next to `perf record`'s, as bench/run.py's "-nowork" rows measure it
(issue 16): rusage of the whole command minus the fixture's own CPU.

    sudo python3 bench/fixed_cost.py [--runs 7] [--rate 999]
        [--call-graph fp,dwarf,dwarf-kernel] [--kallsyms-cache off,cold,warm]
        [--debug-cache off,cold,warm] [--no-perf] [BIN ...]

Each round runs every (binary, call graph, kernel symbol cache) and perf
once, in a rotating order, so all see the same machine; medians are
printed.  Several binaries (e.g. a build of an older commit) compare
changes.  --kallsyms-cache: the recorder's MICROSCOPE_KALLSYMS_CACHE for
each run: off; cold (a new empty directory each run: a recording that needs
kernel names parses /proc/kallsyms and writes the cache); warm (one
directory, filled before the first round); default (unset: the recorder's
own default directory).  For cold, how many runs wrote a cache (needed
kernel names) is printed too.  --debug-cache: the same for
MICROSCOPE_DEBUG_CACHE (decompressed debug images: libc's, ld.so's).  Needs root and build/bench/work (`make
build/bench/work`).  A number, not a test.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORK_RE = re.compile(r"cpu_ns=(\d+)")
STACK_SIZE = 16384  # bench/run.py's


def commands(binary, out, rate, graphs):
    for cg in graphs:
        cmd = [binary, "record", "-F", str(rate), "--budget", "0", "--call-graph", cg]
        if cg != "fp":
            cmd += ["--stack-size", str(STACK_SIZE)]
        yield cg, cmd + ["-o", out, "--"]


def cache_env(kind, mode, tmp, run):
    """MICROSCOPE_<kind>_CACHE for one run of mode (None: leave it)."""
    if mode == "off":
        return "off"
    if mode == "warm":
        return os.path.join(tmp, "%s-warm" % kind)
    if mode == "cold":
        d = os.path.join(tmp, "%s-cold-%d" % (kind, run))
        shutil.rmtree(d, ignore_errors=True)
        return d
    return None


def kcache_env(mode, tmp, run):
    return cache_env("kcache", mode, tmp, run)


def dcache_env(mode, tmp, run):
    return cache_env("dcache", mode, tmp, run)


def run_once(cmd, work, tmp, kcache=None, dcache=None):
    fixture_out = os.path.join(tmp, "fixture.out")
    env = dict(os.environ, MS_FIXTURE_SCALE="0", MS_FIXTURE_OUT=fixture_out)
    if kcache is not None:
        env["MICROSCOPE_KALLSYMS_CACHE"] = kcache
    if dcache is not None:
        env["MICROSCOPE_DEBUG_CACHE"] = dcache
    with open(os.path.join(tmp, "stderr"), "w+") as err_file:
        p = subprocess.Popen(cmd + [work], env=env, cwd=tmp, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err_file)
        _, status, ru = os.wait4(p.pid, 0)
        err_file.seek(0)
        err = err_file.read()
    if status:
        sys.exit("%s failed (status %d):\n%s" % (" ".join(cmd), status, err))
    with open(fixture_out) as f:
        fixture = int(WORK_RE.search(f.read()).group(1)) / 1e9
    return ru.ru_utime + ru.ru_stime - fixture


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--rate", type=int, default=999, help="-F of every recorder (Hz)")
    ap.add_argument("--call-graph", default="fp,dwarf,dwarf-kernel")
    ap.add_argument("--kallsyms-cache", default="default",
                    help="comma list of off, cold, warm, default")
    ap.add_argument("--debug-cache", default="default",
                    help="comma list of off, cold, warm, default")
    ap.add_argument("--no-perf", action="store_true", help="leave perf record out")
    ap.add_argument("binaries", nargs="*", default=[os.path.join(REPO, "build", "microscope")])
    args = ap.parse_args()
    modes = [(k, d) for k in args.kallsyms_cache.split(",")
             for d in args.debug_cache.split(",")]
    work = os.path.join(REPO, "build", "bench", "work")
    if not os.path.exists(work):
        sys.exit("%s is missing: make build/bench/work" % work)
    tmp = tempfile.mkdtemp(prefix="ms-fixed-")
    jobs = []
    for b in args.binaries:
        tag = b if len(args.binaries) > 1 else "microscope"
        b = os.path.abspath(b)
        for cg, cmd in commands(b, os.path.join(tmp, "out.msc"), args.rate,
                                args.call_graph.split(",")):
            for mode in modes:
                name = "%s %s" % (tag, cg) + ("" if mode[0] == "default" else " kcache=" + mode[0]) \
                    + ("" if mode[1] == "default" else " dcache=" + mode[1])
                jobs.append((name, cmd, mode))
                if "warm" in mode:
                    run_once(cmd, work, tmp, kcache_env(mode[0], tmp, 0),
                             dcache_env(mode[1], tmp, 0))
    perf = None if args.no_perf else shutil.which("perf")
    if perf:
        jobs.append(("perf record -g", [perf, "record", "--no-bpf-event", "-B", "-N", "-q",
                                        "-F", str(args.rate), "-o",
                                        os.path.join(tmp, "perf.data"), "-g", "--"], None))
    cpu = {name: [] for name, _, _ in jobs}
    wrote = {name: 0 for name, _, mode in jobs if mode and mode[0] == "cold"}
    for r in range(args.runs):
        k = r % len(jobs)
        for name, cmd, mode in jobs[k:] + jobs[:k]:
            kc = kcache_env(mode[0], tmp, r) if mode else None
            dc = dcache_env(mode[1], tmp, r) if mode else None
            cpu[name].append(run_once(cmd, work, tmp, kc, dc))
            if name in wrote and os.path.exists(os.path.join(kc, "kallsyms")):
                wrote[name] += 1
    shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(n) for n in cpu)
    print("%-*s  %8s  %8s  %8s  (CPU s, %d runs)" % (width, "", "median", "min", "max",
                                                   args.runs))
    for name, v in cpu.items():
        print("%-*s  %8.3f  %8.3f  %8.3f" % (width, name, statistics.median(v), min(v), max(v))
              + ("  (%d/%d wrote a cache)" % (wrote[name], len(v)) if name in wrote else ""))


if __name__ == "__main__":
    main()
