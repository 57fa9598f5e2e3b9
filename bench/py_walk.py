# SPDX-License-Identifier: MIT
"""Per-sample cost of the CPython walk in the sampler (bench/run.py --full).

The kernel's own accounting: a BPF_ENABLE_STATS (BPF_STATS_RUN_TIME) file
descriptor is held open, so the kernel adds every run of every BPF program
to its run_time_ns / run_cnt (bpf_prog_info); `bpftool prog show` reads
them.  microscope records bench/py_deep.py (50 interpreted frames on every
sample) with --python bpf and with --python off, and the sampler program's
run time per run is compared between the two, for frame-pointer-only and
default (16 KiB stack copy) call graphs.
"""
import ctypes
import json
import os
import re
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHONS = ["/root/.pyenv/versions/3.11.7/bin/python3.11", "/usr/bin/python3.11"]
SYS_BPF = 321          # x86-64 (arch/x86/entry/syscalls/syscall_64.tbl)
BPF_ENABLE_STATS = 32  # enum bpf_cmd, include/uapi/linux/bpf.h
BPF_STATS_RUN_TIME = 0


def enable_stats():
    """The stats fd (keep it open while measuring), or -errno."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = (ctypes.c_uint32 * 16)()
    attr[0] = BPF_STATS_RUN_TIME
    fd = libc.syscall(SYS_BPF, BPF_ENABLE_STATS, ctypes.byref(attr), ctypes.sizeof(attr))
    return fd if fd >= 0 else -ctypes.get_errno()


def samplers():
    """{id: (run_time_ns, run_cnt)} of every loaded handle_sample program."""
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
    return {p["id"]: (p.get("run_time_ns", 0), p.get("run_cnt", 0))
            for p in json.loads(out.stdout or "[]") if p.get("name") == "handle_sample"}


def one(ms, python, extra, tmp, secs):
    """Our sampler is the handle_sample program that appears with our record
    (bpftool may not name owner pids); the newest if others appear too.
    Its counters are read from its first sight until the recording ends
    (the last reading before the program goes away), and divided by the
    samples the capture holds: on a loaded machine the target's share of
    a CPU, hence its rate, varies too much for a rate times a wall-clock
    window to count them."""
    out = os.path.join(tmp, "pywalk.msc")
    before = set(samplers())
    proc = subprocess.Popen([ms, "record", "-q", "-o", out] + extra +
                            ["--", python, os.path.join(HERE, "py_deep.py"), "50", str(secs)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # start-up and the interpreter's imports; a loaded machine takes longer
    new, give_up = [], time.monotonic() + 60.0
    while not new and proc.poll() is None and time.monotonic() < give_up:
        time.sleep(0.2)
        new = sorted(set(samplers()) - before)
    if not new:
        proc.kill()
        proc.wait()
        return None
    first = last = samplers().get(new[-1])
    while proc.poll() is None:
        time.sleep(0.2)
        cur = samplers().get(new[-1])
        if cur:
            last = cur
    if not first or not last or last[1] <= first[1]:
        return None
    rep = subprocess.run([ms, "report", out], capture_output=True, text=True).stdout
    m = re.search(r"samples\s+(\d+) from", rep)
    target = int(m.group(1)) if m else 0
    # The program runs for every task's samples on the CPUs (the filter is
    # in it); the capture's samples are the target's (a busy single thread).
    return dict(ns_per_run=(last[0] - first[0]) / (last[1] - first[1]),
                runs=last[1] - first[1], target_samples=target,
                ns_per_target_sample=(last[0] - first[0]) / target if target else None)


def measure(ms, tmp, secs=4.0):
    python = next((p for p in PYTHONS if os.access(p, os.X_OK)), None)
    if not python:
        return {"error": "no CPython 3.11 to run"}
    fd = enable_stats()
    if fd < 0:
        return {"error": "BPF_ENABLE_STATS failed: %s" % os.strerror(-fd)}
    res = {"python": python, "frames": 50}
    try:
        for cg in ("fp", "auto"):
            for mode in ("off", "bpf"):
                r = one(ms, python, ["--call-graph", cg, "--python", mode], tmp, secs)
                res["%s_%s" % (cg, mode)] = r
            off, on = res["%s_off" % cg], res["%s_bpf" % cg]
            if off and on and off["ns_per_target_sample"] and on["ns_per_target_sample"]:
                res["%s_walk_ns" % cg] = (on["ns_per_target_sample"] -
                                          off["ns_per_target_sample"])
    finally:
        os.close(fd)
    return res


def print_table(res):
    print("\nCPython walk in the sampler, %s frames (%s): BPF run time per target sample\n"
          "(kernel stats; includes the filtered runs for other tasks, so an upper bound)" % (
              res.get("frames"), res.get("python", "-")))
    if "error" in res:
        print("  not measured: %s" % res["error"])
        return
    for cg in ("fp", "auto"):
        off, on = res.get("%s_off" % cg), res.get("%s_bpf" % cg)
        f = lambda r: "%.1f us" % (r["ns_per_target_sample"] / 1000) \
            if r and r["ns_per_target_sample"] else "-"
        print("  call graph %-4s  native only %-10s  with Python walk %-10s  walk %s" % (
            cg, f(off), f(on), "%.1f us" % (res["%s_walk_ns" % cg] / 1000)
            if "%s_walk_ns" % cg in res else "-"))
