# SPDX-License-Identifier: MIT
"""Where the sampler's per-sample BPF time goes, by section of handle_sample
(alone, with a build whose BPF has the sections:
    make OUTPUT=build-sections BPF_CFLAGS=-DMS_BPF_SECTIONS all build-sections/bench/work
    python3 bench/bpf_sections.py build-sections [--runs N] [--rate HZ]
                                  [--call-graphs fp,dwarf-kernel] [--fixtures work,...]).

With MS_BPF_SECTIONS, handle_sample reads bpf_ktime_get_ns at each section's
end and sums the differences per CPU in .bss (section_ns, section_runs:
bpf/sampler.bpf.c).  microscope records each fixture (bench/bpf_cost.py's)
at HZ with --budget 0 and a 16 KiB stack size; our recorder's sampler (the
handle_sample whose fd it holds) has its .bss read until it goes away.
Reported: ns per recorded sample of each section, median over the runs,
less the cost of one boundary (section 0: two readings back to back), and
their sum.  The readings cost the program time themselves (8 boundaries),
so the sum exceeds bench/bpf_cost.py's figure: read the sections relative
to each other.
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import py_walk  # noqa: E402  (bpftool, samplers, prog_ids_of)
import bpf_cost  # noqa: E402  (FIXTURES, STACK_SIZE)

NAMES = ["boundary", "filter+lookups", "header+ns ids", "kernel callchain", "user callchain",
         "hand-over+copy", "tail call", "wake+output"]


def bss_of(prog_id):
    info = py_walk.bpftool("prog", "show", "id", str(prog_id)) or {}
    for m in info.get("map_ids", []):
        if (py_walk.bpftool("map", "show", "id", str(m)) or {}).get("name", "").endswith(".bss"):
            return m
    return None


def sections(bss):
    """(runs, [ns per section], [the unwinder's counts]) summed over the
    CPUs, or None."""
    dump = py_walk.bpftool("map", "dump", "id", str(bss))
    if not isinstance(dump, list) or not dump:
        return None
    runs, ns, ku = 0, [0] * len(NAMES), [0] * 8
    for sec in dump[0].get("formatted", {}).get("value", {}).get(".bss", []):
        if "section_runs" in sec:
            runs = sum(sec["section_runs"])
        for name, into in (("section_ns", ns), ("ku_count", ku)):
            for row in sec.get(name, []):
                for i, v in enumerate(row):
                    into[i] += v
    return runs, ns, ku


def one(build, fixture, cg, rate, tmp):
    path, scale = bpf_cost.FIXTURES[fixture]
    env = dict(os.environ, MS_FIXTURE_SCALE=repr(scale), MS_FIXTURE_OUT=os.devnull)
    cmd = [os.path.join(build, "microscope"), "record", "-f", "-F", str(rate), "--budget", "0",
           "--call-graph", cg]
    if cg != "fp":
        cmd += ["--stack-size", str(bpf_cost.STACK_SIZE)]
    cmd += ["-o", os.path.join(tmp, "sections.msc"), "--", os.path.join(build, path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mine, bss, last = None, None, None
    while proc.poll() is None:
        if mine is None:
            ours = py_walk.prog_ids_of(proc.pid) & py_walk.samplers()
            mine = max(ours) if ours else None
            bss = bss_of(mine) if mine is not None else None
        if bss is not None:
            cur = sections(bss)
            last = cur or last
        time.sleep(0.1)
    proc.wait()
    if not last or not last[0]:
        return None
    runs, ns, ku = last
    per = [x / runs for x in ns]
    per = [per[0]] + [x - per[0] for x in per[1:]]
    if ku[6]:  # the in-kernel unwinder's counts per unwind
        u = ku[6]
        per += [ku[0] / u, ku[1] / u, ku[5] / max(1, ku[1]), ku[2] / u, ku[3] / u, ku[7] / u]
    return per


def main(argv):
    build = argv[1] if len(argv) > 1 else "build-sections"
    runs, rate = 3, bpf_cost.RATE
    cgs, fixtures = ["fp", "dwarf-kernel"], list(bpf_cost.FIXTURES)
    args = argv[2:]
    while args:
        a = args.pop(0)
        if a == "--runs":
            runs = int(args.pop(0))
        elif a == "--rate":
            rate = int(args.pop(0))
        elif a == "--call-graphs":
            cgs = args.pop(0).split(",")
        elif a == "--fixtures":
            fixtures = args.pop(0).split(",")
    with tempfile.TemporaryDirectory() as tmp:
        for fixture in fixtures:
            for cg in cgs:
                got = [r for r in (one(build, fixture, cg, rate, tmp) for _ in range(runs)) if r]
                if not got:
                    print("%s %s: no reading" % (fixture, cg))
                    continue
                n = min(len(r) for r in got)
                med = [statistics.median(r[i] for r in got) for i in range(n)]
                print("%s, --call-graph %s (%d runs), ns per sample:" % (fixture, cg, len(got)))
                for name, v in zip(NAMES, med):
                    print("  %-18s %7.0f" % (name, v))
                print("  %-18s %7.0f" % ("sum of sections", sum(med[1:len(NAMES)])))
                if n > len(NAMES):
                    print("  in-kernel unwind, per sample: %.1f frames, %.2f chunk refills of "
                          "%.0f bytes, %.2f mapping and %.2f row searches, %.0f ns in the "
                          "frame loop (%.1f ns a frame)" % tuple(med[len(NAMES):] + [
                              med[-1] / max(med[len(NAMES)], 1)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
