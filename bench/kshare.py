#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The share of user stacks the in-kernel unwinder unwinds whole (issue 16).

    bench/kshare.py [--runs N] BUILD_DIR     (root; also a step of bench/run.py)

Records, at 4999 Hz with --budget 0 --call-graph dwarf-kernel, each target
built without frame pointers:

    python3.11   Debian's /usr/bin/python3.11 on tests/fixtures/pyburn.py
                 (about 2.5 s of CPU; skipped if it is not installed)
    nofp_chain   BUILD_DIR/fixtures/nofp_chain (about 2 s of CPU)

and reads `microscope report`'s line

    kunwind  D of N user stacks unwound whole in the kernel (P%), frames F%
             in the kernel; stops: CAUSE COUNT, ...

The stacks not whole in the kernel are the start-up's (no_proc,
no_mapping: the process's table not written yet; no_rows: a module's rows
not loaded yet) and the kernel's real stops (read, unsupported...).  The
median of N runs (default 3), each run's figures kept.  Printed beside the
matrix's costs; never asserted (the machine's load moves the start-up).
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import run as R  # noqa: E402  (the bench's wait4 runner)

RATE = 4999
DEBIAN_PYTHON = "/usr/bin/python3.11"
KU_RE = re.compile(r"^  kunwind +(\d+) of (\d+) user stacks unwound whole in the kernel "
                   r"\(([\d.]+)%\), frames ([\d.]+)% in the kernel(?:; stops: (.*))?$", re.M)


def targets(build):
    """[(name, argv, env extra, why unavailable or None)]"""
    return [
        ("python3.11", [DEBIAN_PYTHON, os.path.join(REPO, "tests", "fixtures", "pyburn.py"),
                        "0.8"], {},
         None if os.path.exists(DEBIAN_PYTHON) else DEBIAN_PYTHON + " not installed"),
        ("nofp_chain", [os.path.join(build, "fixtures", "nofp_chain")],
         {"MS_FIXTURE_SCALE": "1.0"}, None),
    ]


def one(ms, argv, env_extra, tmp):
    """One recording and its report's kunwind figures (a dict with status)."""
    out = os.path.join(tmp, "kshare.msc")
    R.rm(out)
    env = dict(os.environ, MS_FIXTURE_OUT=os.devnull, **env_extra)
    r = R.run([ms, "record", "-F", str(RATE), "--budget", "0", "--call-graph", "dwarf-kernel",
               "-o", out, "--"] + argv, env=env, timeout=120, workdir=tmp)
    if r.rc != 0 or not os.path.exists(out):
        return {"status": "failed: " + r.why()}
    rep = R.run([ms, "report", out, "--limit", "1"], timeout=120, workdir=tmp)
    R.rm(out)
    m = KU_RE.search(rep.stdout)
    if rep.rc != 0 or not m:
        return {"status": "failed: no kunwind line in the report (%s)" % rep.why()}
    stops = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(5) or "")}
    return {"status": "ok", "whole": int(m.group(1)), "stacks": int(m.group(2)),
            "whole_pct": float(m.group(3)), "frames_pct": float(m.group(4)), "stops": stops,
            "recorder_cpu_s": r.cpu}


def measure(build, tmp, runs=3):
    """{target: {"status", "whole_pct" (median), "runs": [...]}}"""
    ms = os.path.join(build, "microscope")
    res = {}
    for name, argv, env_extra, unavailable in targets(build):
        if unavailable:
            res[name] = {"status": "unavailable: " + unavailable}
            continue
        rr = [one(ms, argv, env_extra, tmp) for _ in range(runs)]
        ok = [x for x in rr if x["status"] == "ok"]
        d = {"status": "ok" if ok else rr[0]["status"], "rate_hz": RATE, "runs": rr}
        if ok:
            med = sorted(ok, key=lambda x: x["whole_pct"])[len(ok) // 2]
            d.update(whole_pct=med["whole_pct"], frames_pct=med["frames_pct"],
                     stacks=med["stacks"], stops=med["stops"],
                     whole_pct_all=[x["whole_pct"] for x in ok])
        res[name] = d
    return res


def print_table(res):
    print()
    print("1b. User stacks unwound whole in the kernel (dwarf-kernel, %d Hz, --budget 0; "
          "median run)" % RATE)
    rows = []
    for name, d in res.items():
        if d.get("status") != "ok":
            rows.append([name, d.get("status", "?")[:60], "", "", "", ""])
            continue
        stops = ", ".join("%s %d" % kv for kv in sorted(d["stops"].items(),
                                                          key=lambda kv: -kv[1]))
        rows.append([name, "%d" % d["stacks"], "%.1f%%" % d["whole_pct"],
                     " ".join("%.1f" % x for x in d["whole_pct_all"]),
                     "%.1f%%" % d["frames_pct"], stops or "-"])
    R.table(["target", "stacks", "whole", "whole, every run", "frames", "stops (median run)"],
            rows)
    print("   the stops are the start-up's (no_proc/no_mapping: the process's table not yet "
          "written; no_rows: a module's rows not yet loaded) and the kernel's own.")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("build")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("kshare: needs root (BPF and perf events)", file=sys.stderr)
        return 1
    build = os.path.abspath(args.build)
    tmp = os.path.join(build, "bench", "tmp-kshare")
    os.makedirs(tmp, exist_ok=True)
    res = measure(build, tmp, args.runs)
    out = os.path.join(build, "bench", "kshare.json")
    with open(out + ".tmp", "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(out + ".tmp", out)
    print_table(res)
    return 0 if any(d.get("status") == "ok" for d in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
