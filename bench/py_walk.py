# SPDX-License-Identifier: MIT
"""Per-sample cost of the CPython walk in the sampler (bench/run.py --full;
or alone: python3 bench/py_walk.py BUILD/microscope [--runs N] [PYTHON...]).

The kernel's own accounting: a BPF_ENABLE_STATS (BPF_STATS_RUN_TIME) file
descriptor is held open, so the kernel adds every run of every BPF program
to its run_time_ns / run_cnt (bpf_prog_info); `bpftool prog show` reads
them.  microscope records bench/py_deep.py (50 interpreted frames on every
sample) with --python bpf and with --python off, frame pointers only,
several times, interleaved; per interpreter it reports the median and range
over the runs of:

  - the sampler's BPF run time per target sample, with and without the
    walk, and their difference (the walk's share).  The program also runs,
    and returns early, for the other tasks on the CPUs, so on a busy
    machine both figures carry that load; the difference cancels most of it;
  - the walk's own time per walk, from the sampler's counters (ms_stats
    py_walk_ns / py_walks: bpf_ktime_get_ns around the walk), which no
    other task's samples touch.

Our sampler is the handle_sample program whose file descriptor our recorder
holds (its /proc/PID/fdinfo names the program's id): other sessions'
recorders load programs of the same name, and the newest of them is not
necessarily ours.  Its counters are read from its first sight until the
recording ends (the last reading before the program goes away) and divided
by the samples the capture holds: on a loaded machine the target's share of
a CPU, hence its rate, varies too much for a rate times a wall-clock window
to count them.
"""
import ctypes
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONS = ["/root/.pyenv/versions/3.11.7/bin/python3.11", "/usr/bin/python3.11"]
FRAMES = 50
RUNS = 5
SYS_BPF = 321          # x86-64 (arch/x86/entry/syscalls/syscall_64.tbl)
BPF_ENABLE_STATS = 32  # enum bpf_cmd, include/uapi/linux/bpf.h
BPF_STATS_RUN_TIME = 0
MS_STATS_PY_WALKS = 64    # byte offsets in struct ms_stats (bpf/abi/records.h)
MS_STATS_PY_WALK_NS = 72


def enable_stats():
    """The stats fd (keep it open while measuring), or -errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 16)()
    attr[0] = BPF_STATS_RUN_TIME
    fd = libc.syscall(SYS_BPF, BPF_ENABLE_STATS, ctypes.byref(attr), ctypes.sizeof(attr))
    return fd if fd >= 0 else -ctypes.get_errno()


def bpftool(*args):
    out = subprocess.run(["bpftool", "-j"] + list(args), capture_output=True, text=True)
    try:
        return json.loads(out.stdout or "null")
    except ValueError:
        return None


def samplers():
    """Ids of every loaded handle_sample program."""
    return {p["id"] for p in bpftool("prog", "show") or [] if p.get("name") == "handle_sample"}


def prog_ids_of(pid):
    """Ids of the BPF programs process pid holds a file descriptor of."""
    ids = set()
    try:
        fds = os.listdir("/proc/%d/fdinfo" % pid)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except (OSError, ValueError):
            pass
    return ids


def walk_counters(map_id):
    """(py_walks, py_walk_ns) summed over the CPUs of ms_stats, or None."""
    dump = bpftool("map", "dump", "id", str(map_id))
    if not isinstance(dump, list) or not dump:
        return None
    walks = ns = 0
    for v in dump[0].get("values", []):
        b = bytes(int(x, 16) for x in v["value"])
        walks += int.from_bytes(b[MS_STATS_PY_WALKS:MS_STATS_PY_WALKS + 8], "little")
        ns += int.from_bytes(b[MS_STATS_PY_WALK_NS:MS_STATS_PY_WALK_NS + 8], "little")
    return walks, ns


def reading(prog_id, stats_map):
    """(run_time_ns, run_cnt, py_walks, py_walk_ns) now, or None once gone."""
    p = bpftool("prog", "show", "id", str(prog_id))
    if not isinstance(p, dict) or "run_cnt" not in p:
        return None
    w = walk_counters(stats_map) if stats_map else None
    if stats_map and w is None:
        return None
    return (p.get("run_time_ns", 0), p["run_cnt"]) + (w or (0, 0))


def one(ms, python, extra, tmp, secs):
    """One recording of py_deep.py: its sampler's cost, or None."""
    out = os.path.join(tmp, "pywalk.msc")
    proc = subprocess.Popen([ms, "record", "-q", "-f", "-o", out] + extra +
                            ["--", python, os.path.join(HERE, "py_deep.py"), str(FRAMES),
                             str(secs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # start-up and the interpreter's imports; a loaded machine takes longer
    mine, give_up = None, time.monotonic() + 60.0
    while mine is None and proc.poll() is None and time.monotonic() < give_up:
        time.sleep(0.05)
        ours = prog_ids_of(proc.pid) & samplers()
        mine = max(ours) if ours else None
    if mine is None:
        proc.kill()
        proc.wait()
        return None
    info = bpftool("prog", "show", "id", str(mine)) or {}
    stats_map = None
    for m in info.get("map_ids", []):
        if (bpftool("map", "show", "id", str(m)) or {}).get("name") == "ms_stats":
            stats_map = m
    first = last = reading(mine, stats_map)
    while proc.poll() is None:
        time.sleep(0.1)
        cur = reading(mine, stats_map)
        if cur:
            last = cur
    proc.stderr.read()
    if not first or not last or last[1] <= first[1]:
        return None
    rep = subprocess.run([ms, "report", out], capture_output=True, text=True).stdout
    m = re.search(r"samples\s+(\d+) from", rep)
    target = int(m.group(1)) if m else 0
    walks = last[2] - first[2]
    # The program runs for every task's samples on the CPUs (the filter is
    # in it); the capture's samples are the target's (a busy single thread).
    return dict(ns_per_run=(last[0] - first[0]) / (last[1] - first[1]),
                runs=last[1] - first[1], target_samples=target,
                ns_per_target_sample=(last[0] - first[0]) / target if target else None,
                walks=walks, ns_per_walk=(last[3] - first[3]) / walks if walks else None)


def spread(xs):
    """{median, min, max, n} of the values that are not None, or None."""
    xs = [x for x in xs if x is not None]
    if not xs:
        return None
    return dict(median=statistics.median(xs), min=min(xs), max=max(xs), n=len(xs))


def measure_one(ms, python, tmp, runs, secs):
    res = {"python": python, "frames": FRAMES, "runs": {"off": [], "bpf": []}}
    for _ in range(runs):
        for mode in ("off", "bpf"):
            res["runs"][mode].append(one(ms, python, ["--call-graph", "fp", "--python", mode],
                                         tmp, secs))
    per = lambda mode: [r and r["ns_per_target_sample"] for r in res["runs"][mode]]
    res["off_ns"] = spread(per("off"))
    res["bpf_ns"] = spread(per("bpf"))
    res["walk_share_ns"] = spread([b - a if a is not None and b is not None else None
                                   for a, b in zip(per("off"), per("bpf"))])
    res["walk_ns"] = spread([r and r["ns_per_walk"] for r in res["runs"]["bpf"]])
    return res


def measure(ms, tmp, secs=4.0, runs=RUNS, pythons=None):
    found = [p for p in (pythons or PYTHONS) if os.access(p, os.X_OK)]
    if not found:
        return {"error": "no CPython 3.11 to run"}
    fd = enable_stats()
    if fd < 0:
        return {"error": "BPF_ENABLE_STATS failed: %s" % os.strerror(-fd)}
    try:
        res = {"frames": FRAMES, "interpreters": [measure_one(ms, p, tmp, runs, secs)
                                                  for p in found]}
    finally:
        os.close(fd)
    return res


def print_table(res):
    print("\nCPython walk in the sampler, %s frames, --call-graph fp: BPF time, median "
          "[min-max] over runs\n(per target sample: kernel stats, with the filtered runs of "
          "other tasks, so an upper bound;\nper walk: the sampler's own py_walk_ns)" % (
              res.get("frames")))
    if "error" in res:
        print("  not measured: %s" % res["error"])
        return
    f = lambda s: "%.2f [%.2f-%.2f] us" % (s["median"] / 1e3, s["min"] / 1e3,
                                           s["max"] / 1e3) if s else "-"
    for r in res["interpreters"]:
        print("  %s (%d runs)" % (r["python"], len(r["runs"]["bpf"])))
        print("    per target sample: native only %s, with the walk %s, difference %s" % (
            f(r["off_ns"]), f(r["bpf_ns"]), f(r["walk_share_ns"])))
        print("    per walk: %s" % f(r["walk_ns"]))


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="CPython walk cost in the sampler (BPF stats)")
    ap.add_argument("microscope")
    ap.add_argument("pythons", nargs="*")
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--secs", type=float, default=4.0, help="CPU seconds per recording")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_intermixed_args(argv)
    with tempfile.TemporaryDirectory(prefix="py_walk.") as tmp:
        res = measure(os.path.abspath(a.microscope), tmp, a.secs, a.runs, a.pythons or None)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    print_table(res)
    return 1 if "error" in res else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
