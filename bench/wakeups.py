#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The production preset's fixed cost: wakeups, CPU and system calls.

    bench/wakeups.py [--mode idle|busy|system|system-busy] [--seconds S]
                     [--strace] BUILD_DIR [BUILD_DIR ...]     (root)

Starts `record --preset production --continuous DIR` of every build at
once, beside the same load (both builds see the same machine), waits
--warm seconds (start-up, the CPython tracker's first detection tries),
then reads each recorder's threads from /proc over S seconds:
voluntary context switches (its wakeups: the drain loop sleeps in
epoll_wait), involuntary ones, and CPU time (schedstat).  --strace adds
`strace -c -f` of every recorder at once for 20 s.

Modes: idle (-p an idle CPython 3.11 process), busy (-p two spinners and
the idle CPython), system (-a as the preset does; on a shared machine the
other sessions' processes are the load), system-busy (-a beside two
spinners).  Printed; never asserted.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PYTHON = "/usr/bin/python3.11"


def threads(pid):
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        base = "/proc/%d/task/%s/" % (pid, tid)
        try:
            status = open(base + "status").read().splitlines()
            comm = open(base + "comm").read().strip()
            sched = open(base + "schedstat").read().split()
        except OSError:
            continue
        field = {l.split(":")[0]: l.split()[1] for l in status if ":" in l and l.split()[1:]}
        out[tid] = (comm, int(field["voluntary_ctxt_switches"]),
                    int(field["nonvoluntary_ctxt_switches"]), int(sched[0]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", default="idle", choices=("idle", "busy", "system", "system-busy"))
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--warm", type=float, default=12)
    ap.add_argument("--strace", action="store_true")
    ap.add_argument("builds", nargs="+")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench: needs root (BPF and perf events)", file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="ms-wakeups-")
    spinner = next((os.path.join(b, "fixtures", "spinner") for b in a.builds
                    if os.path.exists(os.path.join(b, "fixtures", "spinner"))), None)
    if a.mode in ("busy", "system-busy") and not spinner:
        print("bench: no BUILD_DIR/fixtures/spinner (make all)", file=sys.stderr)
        return 1
    load = []
    if a.mode in ("busy", "system-busy"):
        load += [subprocess.Popen([spinner, "0"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL) for _ in range(2)]
    if os.path.exists(PYTHON):
        load.append(subprocess.Popen([PYTHON, "-c", "import time\nwhile True: time.sleep(3600)"]))
    time.sleep(0.5)
    recs = []
    try:
        for i, b in enumerate(a.builds):
            argv = [os.path.join(b, "microscope"), "record", "-q", "--preset", "production",
                    "--continuous", os.path.join(tmp, "segs%d" % i)]
            if a.mode in ("idle", "busy"):
                for p in load:
                    argv += ["-p", str(p.pid)]
            recs.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL))
        time.sleep(a.warm)
        before = [threads(r.pid) for r in recs]
        t0 = time.monotonic()
        time.sleep(a.seconds)
        dt = time.monotonic() - t0
        after = [threads(r.pid) for r in recs]
        for b, r, x, y in zip(a.builds, recs, before, after):
            print("%s (%s, %.0f s):" % (b, a.mode, dt))
            vol = cpu = 0
            for tid in sorted(y):
                if tid not in x:
                    continue
                c, v0, n0, r0 = x[tid]
                _, v1, n1, r1 = y[tid]
                print("  thread %s %-12s voluntary %6.1f/s involuntary %6.1f/s CPU %.3f%%" % (
                    tid, c, (v1 - v0) / dt, (n1 - n0) / dt, 100 * (r1 - r0) / 1e9 / dt))
                vol += v1 - v0
                cpu += r1 - r0
            print("  all threads: %.1f wakeups/s, %.3f%% of one CPU, %.3f s CPU a minute" % (
                vol / dt, 100 * cpu / 1e9 / dt, 60 * cpu / 1e9 / dt))
        if a.strace:
            outs = [os.path.join(tmp, "strace%d" % i) for i in range(len(recs))]
            st = [subprocess.Popen(["strace", "-c", "-f", "-o", o, "-p", str(r.pid)],
                                   stderr=subprocess.DEVNULL) for o, r in zip(outs, recs)]
            time.sleep(20)
            for s in st:
                s.send_signal(signal.SIGINT)
            for s in st:
                s.wait()
            for b, o in zip(a.builds, outs):
                print("--- strace -c -f, 20 s: %s" % b)
                print(open(o).read())
    finally:
        for r in recs:
            r.send_signal(signal.SIGINT)
        for r in recs:
            r.wait()
        for p in load:
            p.kill()
            p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
