#!/usr/bin/env python3
"""Symbolization throughput (issue 4): addresses per second, cold and warm,
for microscope's symbolizer (userspace/symbols via build/bench/sym_bench)
beside eu-addr2line -i -f and addr2line -i -f on the same fixed addresses
in the same run.  Modules: Debian's libc (debug file from libc6-dbg),
python3.11 (libpython is linked into it), and microscope itself (the large
fixture: ~1 MB of DWARF).  Cold = a fresh process or symbolizer (load, find
debug file, index DWARF, then every address); warm (ours only) = the same
addresses again in the same symbolizer.  Prints a table and writes
BUILD/bench/symbols.json.  Nothing is asserted.

usage: bench/symbols.py [BUILD] [--addresses N]
"""
import json
import os
import shutil
import subprocess
import sys
import time


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    build = args[0] if args else "build"
    n = 2000
    if "--addresses" in sys.argv:
        n = int(sys.argv[sys.argv.index("--addresses") + 1])
    tool = os.path.join(build, "bench", "sym_bench")
    modules = [("libc", "/usr/lib/x86_64-linux-gnu/libc.so.6"),
               ("python3.11", "/usr/bin/python3.11"),
               ("microscope", os.path.join(build, "microscope"))]
    results = []
    print("%-11s %6s %7s %7s %12s %12s %14s %14s" % (
        "module", "addrs", "lines", "inline", "ours cold/s", "ours warm/s",
        "eu-addr2line/s", "addr2line -i/s"))
    for name, path in modules:
        if not os.path.exists(path):
            print("%-11s unavailable: %s missing" % (name, path))
            continue
        addrs = subprocess.run([tool, "--list", path, str(n)], capture_output=True,
                               text=True, check=True).stdout
        afile = os.path.join(build, "bench", "sym-%s.addrs" % name)
        with open(afile, "w") as f:
            f.write(addrs)
        ours = json.loads(subprocess.run([tool, "--time", path, afile], capture_output=True,
                                         text=True, check=True).stdout)
        peers = {}
        for peer, argv in (("eu-addr2line", ["eu-addr2line", "-i", "-f", "-e", path]),
                           ("addr2line", ["addr2line", "-i", "-f", "-e", path])):
            if not shutil.which(argv[0]):
                peers[peer] = None
                continue
            t0 = time.monotonic()
            with open(afile) as f:
                subprocess.run(argv, stdin=f, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
            peers[peer] = time.monotonic() - t0
        cnt = ours["addresses"]
        row = dict(ours, name=name, eu_addr2line_s=peers["eu-addr2line"],
                   addr2line_s=peers["addr2line"])
        results.append(row)

        def rate(s):
            return "%.0f" % (cnt / s) if s else "-"
        print("%-11s %6d %7d %7d %12s %12s %14s %14s" % (
            name, cnt, ours["with_line"], ours["inline_frames"], rate(ours["cold_s"]),
            rate(ours["warm_s"]), rate(peers["eu-addr2line"]), rate(peers["addr2line"])))
    out = os.path.join(build, "bench", "symbols.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print("wrote", out)


if __name__ == "__main__":
    main()
