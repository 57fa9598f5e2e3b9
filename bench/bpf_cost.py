# SPDX-License-Identifier: MIT
"""The sampler's own BPF run time per sample, by call graph and fixture
(bench/run.py --full, or alone:
    python3 bench/bpf_cost.py BUILD_DIR [--runs N] [--rate HZ] [--call-graphs fp,dwarf-kernel]
                              [--fixtures work,nofp_chain,deepstack] [--json OUT]).

The kernel's accounting, as bench/py_walk.py reads it (its helpers): a
BPF_ENABLE_STATS file descriptor is held open while microscope records a
fixture at HZ with --budget 0 and a 16 KiB stack size, and our recorder's
handle_sample program's run_time_ns / run_cnt are read from its first sight
until it goes away.  Reported per recording, median [min-max] over the runs
(interleaved):

  - ns per sample: run time / the recorded tasks' samples (the sampler's
    bpf.samples_seen, from its ms_stats map).  The program also runs (and
    returns at the filter) for other tasks' samples on the CPUs, so on a
    shared machine this is an upper bound;
  - the same after the first SKIP_S seconds (steady: the in-kernel unwinder
    has its tables), with runs per sample (1.0 on an idle machine);
  - a fit of the steady part's 0.1 s intervals, run time = target ns x
    target samples + other ns x other tasks' runs (noisy: it needs the
    other load to vary).

The fixtures: BUILD_DIR/bench/work (the overhead matrix's fixture, frame
pointers), BUILD_DIR/fixtures/nofp_chain (no frame pointers: callers only
from CFI, a libc qsort callback) and BUILD_DIR/fixtures/deepstack (200
frames of 3 KiB, no frame pointers: the kernel unwinds up to its depth or
window bound).
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import py_walk  # noqa: E402  (enable_stats, bpftool, samplers, prog_ids_of)

RUNS = 3
SKIP_S = 0.5
RATE = 4999
STACK_SIZE = 16384
CALL_GRAPHS = ["fp", "dwarf-kernel"]
FIXTURES = {
    # name: (path under the build directory, MS_FIXTURE_SCALE)
    "work": ("bench/work", 1.0),
    "nofp_chain": ("fixtures/nofp_chain", 0.5),
    "deepstack": ("fixtures/deepstack", 0.5),
}


def stats_map_of(prog_id):
    info = py_walk.bpftool("prog", "show", "id", str(prog_id)) or {}
    for m in info.get("map_ids", []):
        if (py_walk.bpftool("map", "show", "id", str(m)) or {}).get("name") == "ms_stats":
            return m
    return None


def reading(prog_id, stats_map):
    """(time, run_time_ns, run_cnt, samples_seen) now, or None once gone."""
    p = py_walk.bpftool("prog", "show", "id", str(prog_id))
    if not isinstance(p, dict) or "run_cnt" not in p:
        return None
    dump = py_walk.bpftool("map", "dump", "id", str(stats_map))
    if not isinstance(dump, list) or not dump:
        return None
    seen = 0
    for v in dump[0].get("values", []):
        seen += int.from_bytes(bytes(int(x, 16) for x in v["value"][:8]), "little")
    return time.monotonic(), p.get("run_time_ns", 0), p["run_cnt"], seen


def split_cost(rs):
    """Least squares of d_ns = c * d_seen + f * d_other over the intervals
    between readings (no intercept): c the run time of a target sample, f
    that of another task's (filtered) one.  None when the intervals do not
    determine them."""
    a11 = a12 = a22 = b1 = b2 = 0.0
    for p, q in zip(rs, rs[1:]):
        ds, dn = q[3] - p[3], q[1] - p[1]
        do = (q[2] - p[2]) - ds
        a11, a12, a22 = a11 + ds * ds, a12 + ds * do, a22 + do * do
        b1, b2 = b1 + ds * dn, b2 + do * dn
    det = a11 * a22 - a12 * a12
    if det <= 1e-9 * max(1.0, a11 * a22):
        return None, None
    return (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det


def one(build, fixture, cg, rate, tmp, skip_s):
    """One recording: its sampler's cost, or None.  The steady figures leave
    out the first skip_s seconds (start-up: the in-kernel unwinder has no
    tables yet and hands every stack over with a full copy)."""
    path, scale = FIXTURES[fixture]
    out = os.path.join(tmp, "bpfcost.msc")
    env = dict(os.environ, MS_FIXTURE_SCALE=repr(scale), MS_FIXTURE_OUT=os.devnull)
    cmd = [os.path.join(build, "microscope"), "record", "-f", "-F", str(rate), "--budget", "0",
           "--call-graph", cg]
    if cg != "fp":
        cmd += ["--stack-size", str(STACK_SIZE)]
    cmd += ["-o", out, "--", os.path.join(build, path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    mine, give_up = None, time.monotonic() + 60.0
    while mine is None and proc.poll() is None and time.monotonic() < give_up:
        time.sleep(0.02)
        ours = py_walk.prog_ids_of(proc.pid) & py_walk.samplers()
        mine = max(ours) if ours else None
    smap = stats_map_of(mine) if mine is not None else None
    if smap is None:
        proc.kill()
        proc.communicate()
        return None
    rs = []
    while proc.poll() is None:
        cur = reading(mine, smap)
        if cur:
            rs.append(cur)
        time.sleep(0.1)
    err = proc.communicate()[1]
    m = re.search(r"microscope: (\d+) samples? written", err)
    if proc.returncode or not m or len(rs) < 2 or rs[-1][3] <= rs[0][3]:
        return None
    first, last = rs[0], rs[-1]
    d = dict(samples=int(m.group(1)), ns_per_sample=(last[1] - first[1]) / (last[3] - first[3]),
             runs_per_sample=(last[2] - first[2]) / (last[3] - first[3]))
    steady = [r for r in rs if r[0] >= first[0] + skip_s]
    if len(steady) >= 2 and steady[-1][3] > steady[0][3]:
        a, b = steady[0], steady[-1]
        d["steady_ns_per_sample"] = (b[1] - a[1]) / (b[3] - a[3])
        d["steady_runs_per_sample"] = (b[2] - a[2]) / (b[3] - a[3])
        d["steady_target_ns"], d["steady_other_ns"] = split_cost(steady)
    return d


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return dict(median=statistics.median(xs), min=min(xs), max=max(xs), n=len(xs))


def measure(build, tmp, runs=RUNS, rate=RATE, call_graphs=None, fixtures=None, skip_s=SKIP_S):
    call_graphs = call_graphs or CALL_GRAPHS
    fixtures = [f for f in (fixtures or list(FIXTURES))
                if os.access(os.path.join(build, FIXTURES[f][0]), os.X_OK)]
    if not fixtures:
        return {"error": "no fixture built"}
    fd = py_walk.enable_stats()
    if fd < 0:
        return {"error": "BPF_ENABLE_STATS failed: %s" % os.strerror(-fd)}
    res = {"rate_hz": rate, "stack_size": STACK_SIZE, "runs": runs, "skip_s": skip_s, "rows": {}}
    try:
        raw = {(f, cg): [] for f in fixtures for cg in call_graphs}
        for _ in range(runs):
            for key in raw:
                raw[key].append(one(build, key[0], key[1], rate, tmp, skip_s))
    finally:
        os.close(fd)
    for (f, cg), rs in raw.items():
        res["rows"]["%s/%s" % (f, cg)] = {
            "fixture": f, "call_graph": cg, "all": rs,
            "samples": spread([r and r["samples"] for r in rs])}
        for k in ("ns_per_sample", "runs_per_sample", "steady_ns_per_sample",
                  "steady_runs_per_sample", "steady_target_ns", "steady_other_ns"):
            res["rows"]["%s/%s" % (f, cg)][k] = spread([r and r.get(k) for r in rs])
    return res


def print_table(res):
    print("\nSampler BPF run time (kernel BPF stats), %s Hz, median [min-max] over runs" %
          res.get("rate_hz"))
    if "error" in res:
        print("  not measured: %s" % res["error"])
        return
    f = lambda s, spec="%.0f": ("%s [%s-%s]" % (spec % s["median"], spec % s["min"],
                                                spec % s["max"])) if s else "-"
    rows = []
    for name, r in res["rows"].items():
        rows.append([r["fixture"], r["call_graph"], f(r["samples"]), f(r["ns_per_sample"]),
                     f(r["steady_ns_per_sample"]), f(r["steady_runs_per_sample"], "%.2f"),
                     f(r["steady_target_ns"]), f(r["steady_other_ns"])])
    hdr = ["fixture", "call graph", "samples", "ns/sample", "steady ns/sample", "runs/sample",
           "fit: target ns", "other ns"]
    widths = [max(len(h), *(len(str(r[i])) for r in rows)) for i, h in enumerate(hdr)]
    for cells in [hdr, ["-" * w for w in widths]] + rows:
        print("  " + "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)))
    print("  ns/sample: run time / the recorded tasks' samples (bpf.samples_seen), which\n"
          "  includes the filtered runs of other tasks on the CPUs (an upper bound); steady: after\n"
          "  the first %.1f s; fit: least squares over the 0.1 s intervals of the steady part,\n"
          "  run time = target ns x target samples + other ns x other runs" % res["skip_s"])


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="the sampler's BPF run time per sample")
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--rate", type=int, default=RATE)
    ap.add_argument("--call-graphs", default=",".join(CALL_GRAPHS))
    ap.add_argument("--fixtures", default=",".join(FIXTURES))
    ap.add_argument("--skip", type=float, default=SKIP_S,
                    help="seconds of start-up left out of the steady figures")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bpf_cost.") as tmp:
        res = measure(os.path.abspath(a.build), tmp, a.runs, a.rate, a.call_graphs.split(","),
                      a.fixtures.split(","), a.skip)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    print_table(res)
    return 1 if "error" in res else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
