#!/usr/bin/env python3
"""Server-side speed of `microscope serve` (issue 20): reported, never asserted.

    bench/serve.py BUILD_DIR [--samples N] [--stacks N] [--runs N]
                   [--paint-runs N] [--cpu-quota FRACTION] [--no-queries]

Generates a synthetic capture (bench/gen_capture: 1,000,000 samples over
50,000 distinct stacks by default), serves it, and times from a local client
the time to answer (request sent to last byte read, median of --runs) and the
server's CPU time for it (utime + stime, 10 ms ticks: robust on a busy machine):
  flamegraph           the default flame graph (pruned at 0.05%, <= 4000 nodes)
  flamegraph thread    filtered to one thread
  flamegraph focus     filtered to stacks through the hottest function
  flamegraph window    filtered to the middle half of the time range
  flat / calltree / lanes / process filter
Then headless chromium's first meaningful paint of the flame graph page
(tests/web/serve_pages.js), if node, playwright-core and /usr/bin/chromium
are there: --paint-runs fresh browsers (each a cold first load, then two
warm ones), their medians reported: "drawn" is the page's own clock
(navigation start to the second animation frame after the flame graph's
boxes are in the document), "ready" the harness's (until it has seen the
page ready and read its clock: later by its round trips to the page).
--cpu-quota 0.25 holds the server and chromium to a quarter of one CPU (a
CFS quota on a cgroup, v2 or v1's cpu controller; root), like a machine
several times oversubscribed: the throttle the 2 s first-paint goal is
measured under.  Writes BUILD/bench/serve.json.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_s(pid):
    """utime + stime of pid in seconds (proc(5) fields 14 and 15)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def quota_cgroup(fraction):
    """A cgroup whose tasks share FRACTION of one CPU (CFS quota of a 100 ms
    period): its cgroup.procs path.  cgroup v2 (cpu.max) or v1 (cpu controller)."""
    period = 100000
    quota = max(1000, int(fraction * period))
    for root, v2 in (("/sys/fs/cgroup/unified", True), ("/sys/fs/cgroup", True),
                     ("/sys/fs/cgroup/cpu", False)):
        if v2 and not os.path.exists(os.path.join(root, "cgroup.subtree_control")):
            continue
        if v2:
            with open(os.path.join(root, "cgroup.subtree_control")) as f:
                if "cpu" not in f.read().split():
                    continue
        if not v2 and not os.path.exists(os.path.join(root, "cpu.cfs_quota_us")):
            continue
        d = os.path.join(root, "microscope-bench-serve-%d" % os.getpid())
        os.makedirs(d, exist_ok=True)
        if v2:
            with open(os.path.join(d, "cpu.max"), "w") as f:
                f.write("%d %d" % (quota, period))
        else:
            with open(os.path.join(d, "cpu.cfs_period_us"), "w") as f:
                f.write(str(period))
            with open(os.path.join(d, "cpu.cfs_quota_us"), "w") as f:
                f.write(str(quota))
        return os.path.join(d, "cgroup.procs")
    sys.exit("--cpu-quota: no cgroup cpu controller (v2 cpu.max or v1 cpu) found")


def joiner(procs):
    """A preexec_fn that moves the child into the cgroup of procs (or nothing)."""
    if not procs:
        return None

    def join():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    return join


def get(port, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t = time.perf_counter()
    c.request("GET", path)
    r = c.getresponse()
    body = r.read()
    dt = time.perf_counter() - t
    c.close()
    if r.status != 200:
        raise RuntimeError("%s: %d %s" % (path, r.status, body[:200]))
    return dt, body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--samples", type=int, default=1000000)
    ap.add_argument("--stacks", type=int, default=50000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--paint-runs", type=int, default=1)
    ap.add_argument("--cpu-quota", type=float, default=0)
    ap.add_argument("--no-queries", action="store_true")
    a = ap.parse_args()
    try:
        procs = quota_cgroup(a.cpu_quota) if a.cpu_quota else None
    except OSError as e:
        sys.exit("--cpu-quota needs root (a cgroup of its own): %s" % e)
    build = os.path.abspath(a.build)
    outdir = os.path.join(build, "bench")
    os.makedirs(outdir, exist_ok=True)
    cap = os.path.join(outdir, "serve-%d-%d.msc" % (a.samples, a.stacks))
    if not os.path.exists(cap):
        g = subprocess.run([os.path.join(outdir, "gen_capture"), cap, str(a.samples),
                            str(a.stacks)], capture_output=True, text=True)
        if g.returncode:
            sys.exit("gen_capture failed: " + g.stderr)
        print(g.stdout.strip())
    t0 = time.perf_counter()
    srv = subprocess.Popen([os.path.join(build, "microscope"), "serve", cap, "--port", "0"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=joiner(procs))
    line = srv.stdout.readline()
    load_s = time.perf_counter() - t0
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        srv.kill()
        sys.exit("serve did not start: %r %s" % (line, srv.stderr.read()))
    port = int(m.group(1))
    res = {"samples": a.samples, "stacks": a.stacks, "load_s": round(load_s, 3), "queries": {},
           "cpu_quota": a.cpu_quota or None}
    try:
        _, body = get(port, "/api/flat?limit=1&sort=self")
        hot = json.loads(body)["rows"][0]["name"]
        _, body = get(port, "/api/info")
        span = json.loads(body)["span_ns"]
        queries = {
            "flamegraph": "/api/flamegraph",
            "flamegraph thread": "/api/flamegraph?thread=3",
            "flamegraph focus": "/api/flamegraph?focus=" + urllib.parse.quote(hot),
            "flamegraph window": "/api/flamegraph?start=%d&end=%d" % (span // 4, 3 * span // 4),
            "flamegraph process": "/api/flamegraph?process=1&min_share=0.5",
            "flat": "/api/flat?limit=200",
            "calltree": "/api/calltree?node=0&limit=200",
            "lanes": "/api/lanes?buckets=500&limit=64",
        }
        for name, path in ({} if a.no_queries else queries).items():
            times, cpus, size = [], [], 0
            for _ in range(a.runs):
                c0 = cpu_s(srv.pid)
                dt, body = get(port, path)
                cpus.append(cpu_s(srv.pid) - c0)
                times.append(dt)
                size = len(body)
            res["queries"][name] = {"median_ms": round(1000 * statistics.median(times), 1),
                                    "min_ms": round(1000 * min(times), 1),
                                    "server_cpu_ms": round(1000 * statistics.median(cpus)),
                                    "bytes": size}
        node = shutil.which("node")
        if node and os.path.isdir(os.path.join(REPO, "tests/web/node_modules/playwright-core")) \
                and os.path.exists("/usr/bin/chromium"):
            spec = {"base": "http://127.0.0.1:%d/" % port, "paint": {"cgroup": procs},
                    "shots": os.path.join(outdir, "serve-shots")}
            cold, painted, outs, server_ms = [], [], [], 0
            for _ in range(max(1, a.paint_runs)):
                c0 = cpu_s(srv.pid)
                p = subprocess.run([node, os.path.join(REPO, "tests/web/serve_pages.js"),
                                    json.dumps(spec)], capture_output=True, text=True,
                                   timeout=600)
                server_ms += 1000 * (cpu_s(srv.pid) - c0)
                out = json.loads((p.stdout.strip().splitlines() or ["{}"])[-1])
                if not out.get("paint"):
                    res["first_paint_error"] = out.get("errors")
                    break
                outs.append(out["paint"])
                cold.append(out["paint"]["ms"][0])
                painted.append(out["paint"]["painted_ms"][0])
            if outs:
                pt = outs[-1]
                runs = (len(pt["ms"]) + 1) * len(outs)  # and one more page load after the baseline
                res["first_paint_ms"] = [round(x) for x in pt["ms"]]
                res["first_paint_cold_ms"] = [round(x) for x in cold]
                res["first_paint_cold_median_ms"] = round(statistics.median(cold))
                res["first_paint_painted_ms"] = [round(x) for x in painted if x]
                res["first_paint_painted_median_ms"] = round(statistics.median(
                    res["first_paint_painted_ms"] or [0]))
                res["first_paint_frames"] = pt["frames"]
                res["first_paint_resources"] = pt["resources"]
                res["first_paint_marks"] = pt["marks"]
                # The work a first paint costs, robust on a busy machine: every
                # chromium process's CPU plus the server's (its share per run).
                res["first_paint_chromium_cpu_ms"] = [o["chromium_cpu_ms"][0] for o in outs]
                res["first_paint_renderer_thread_ms"] = [o["renderer_thread_ms"][0] for o in outs]
                res["navigation_baseline_chromium_cpu_ms"] = pt["baseline_cpu_ms"]
                res["first_paint_server_cpu_ms"] = round(server_ms / runs)
                res["first_paint_cpu_ms"] = [round(c + server_ms / runs)
                                             for c in res["first_paint_chromium_cpu_ms"]]
        with open("/proc/%d/status" % srv.pid) as f:
            res["server_peak_rss_mb"] = round(int(re.search(r"VmHWM:\s+(\d+)", f.read())
                                                  .group(1)) / 1024)
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=30)
        if procs:
            try:
                os.rmdir(os.path.dirname(procs))
            except OSError:
                pass
    print("serve on %d samples / %d stacks: loaded in %.2f s, peak RSS %s MB" % (
        a.samples, a.stacks, load_s, res.get("server_peak_rss_mb")))
    for name, q in res["queries"].items():
        print("  %-20s median %7.1f ms  (min %7.1f ms; server CPU %4d ms; %d bytes)" % (
            name, q["median_ms"], q["min_ms"], q["server_cpu_ms"], q["bytes"]))
    if "first_paint_ms" in res:
        print("  first meaningful paint in chromium%s: fresh browsers ready %s ms wall, median %d"
              " (%d frames drawn); the last browser's cold and warm loads %s ms" % (
                  " at %g of a CPU" % a.cpu_quota if a.cpu_quota else "",
                  res["first_paint_cold_ms"], res["first_paint_cold_median_ms"],
                  res["first_paint_frames"], res["first_paint_ms"]))
        print("    drawn (the page's clock, the second frame after its boxes were in the document): %s ms,"
              " median %d" % (res["first_paint_painted_ms"], res["first_paint_painted_median_ms"]))
        print("    its resources: %s" % ", ".join("%s @%d +%d ms" % (r["name"][:40], r["start"], r["ms"])
                                                for r in res["first_paint_resources"]))
        print("    fresh browsers' CPU work: %s ms (chromium %s, renderer main thread %s, server %d per load)" % (
            res["first_paint_cpu_ms"], res["first_paint_chromium_cpu_ms"],
            res["first_paint_renderer_thread_ms"], res["first_paint_server_cpu_ms"]))
        print("    chromium CPU of a navigation to a static asset (baseline): %s ms" % (
            res["navigation_baseline_chromium_cpu_ms"],))
    with open(os.path.join(outdir, "serve.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
