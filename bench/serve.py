#!/usr/bin/env python3
"""Server-side speed of `microscope serve` (issue 20): reported, never asserted.

    bench/serve.py BUILD_DIR [--samples N] [--stacks N] [--runs N]

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
(navigation start to the graph drawn; tests/web/serve_pages.js), if node,
playwright-core and /usr/bin/chromium are there.  Writes BUILD/bench/serve.json.
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
    a = ap.parse_args()
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
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = srv.stdout.readline()
    load_s = time.perf_counter() - t0
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not m:
        srv.kill()
        sys.exit("serve did not start: %r %s" % (line, srv.stderr.read()))
    port = int(m.group(1))
    res = {"samples": a.samples, "stacks": a.stacks, "load_s": round(load_s, 3), "queries": {}}
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
        for name, path in queries.items():
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
            spec = {"base": "http://127.0.0.1:%d/" % port, "paint": {},
                    "shots": os.path.join(outdir, "serve-shots")}
            c0 = cpu_s(srv.pid)
            p = subprocess.run([node, os.path.join(REPO, "tests/web/serve_pages.js"),
                                json.dumps(spec)], capture_output=True, text=True, timeout=300)
            server_ms = 1000 * (cpu_s(srv.pid) - c0)
            out = json.loads((p.stdout.strip().splitlines() or ["{}"])[-1])
            if out.get("paint"):
                pt = out["paint"]
                runs = len(pt["ms"]) + 1  # and one more page load after the baseline
                res["first_paint_ms"] = [round(x) for x in pt["ms"]]
                res["first_paint_frames"] = pt["frames"]
                # The work a first paint costs, robust on a busy machine: every
                # chromium process's CPU plus the server's (its share per run).
                res["first_paint_chromium_cpu_ms"] = pt["chromium_cpu_ms"]
                res["first_paint_renderer_thread_ms"] = pt["renderer_thread_ms"]
                res["navigation_baseline_chromium_cpu_ms"] = pt["baseline_cpu_ms"]
                res["first_paint_server_cpu_ms"] = round(server_ms / runs)
                res["first_paint_cpu_ms"] = [round(c + server_ms / runs)
                                             for c in pt["chromium_cpu_ms"]]
            else:
                res["first_paint_error"] = out.get("errors")
        with open("/proc/%d/status" % srv.pid) as f:
            res["server_peak_rss_mb"] = round(int(re.search(r"VmHWM:\s+(\d+)", f.read())
                                                  .group(1)) / 1024)
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=30)
    print("serve on %d samples / %d stacks: loaded in %.2f s, peak RSS %s MB" % (
        a.samples, a.stacks, load_s, res.get("server_peak_rss_mb")))
    for name, q in res["queries"].items():
        print("  %-20s median %7.1f ms  (min %7.1f ms; server CPU %4d ms; %d bytes)" % (
            name, q["median_ms"], q["min_ms"], q["server_cpu_ms"], q["bytes"]))
    if "first_paint_ms" in res:
        print("  first meaningful paint in chromium: %s ms wall (%d frames drawn)" % (
            res["first_paint_ms"], res["first_paint_frames"]))
        print("    its CPU work: %s ms (chromium %s, renderer main thread %s, server %d per run)" % (
            res["first_paint_cpu_ms"], res["first_paint_chromium_cpu_ms"],
            res["first_paint_renderer_thread_ms"], res["first_paint_server_cpu_ms"]))
        print("    chromium CPU of a navigation to a static asset (baseline): %s ms" % (
            res["navigation_baseline_chromium_cpu_ms"],))
    with open(os.path.join(outdir, "serve.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
