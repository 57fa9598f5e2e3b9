"""Real programs, compared with perf in the same test (issue 2 acceptance).

Both sides sample cpu-clock at 999 Hz (`perf record -e cpu-clock -F 999 -g`;
cpu-clock is also what perf falls back to on machines without a PMU) and
run the same command one after the other.  Compared are *self* shares (the
leaf frame of each sample, kernel frames included, like
`perf report --no-children`): Debian's python3.11 has no frame pointers, so
only leaves are comparable before DWARF unwinding (issue 3).  Both sides
read the same symbol sources (the binaries' .symtab/.dynsym and whatever
/usr/lib/debug holds).
"""
import os
import random
import re

import helpers as H

SHARE_TOLERANCE = 3.0   # percentage points
PERF_MIN_SHARE = 5.0    # compare every symbol/module perf gives at least this


def _match_perf_name(perf_name, ours):
    """Our key for perf's symbol name.  perf shows an address no symbol
    covers as "0x000000000001692b" (file offset); we show "module+0x1692b"."""
    if perf_name in ours:
        return perf_name
    m = re.fullmatch(r"0x0*([0-9a-f]+)", perf_name)
    if m:
        suffix = "+0x" + m.group(1)
        for name in ours:
            if name.lower().endswith(suffix):
                return name
    return perf_name


def _compare(kind, theirs, ours, match=lambda name, ours: name):
    H.log("perf %s self: %s" % (kind, H.top(theirs)))
    H.log("ours %s self: %s" % (kind, H.top(ours)))
    their_top = max(theirs, key=lambda k: (theirs[k], k))
    our_top = max(ours, key=lambda k: (ours[k], k))
    problems = []
    if match(their_top, ours) != our_top:
        problems.append("top %s differs: perf %s %.1f%%, ours %s %.1f%%" % (
            kind, their_top, theirs[their_top], our_top, ours[our_top]))
    for name, pct in sorted(theirs.items(), key=lambda kv: -kv[1]):
        if pct < PERF_MIN_SHARE:
            continue
        key = match(name, ours)
        mine = ours.get(key, 0.0)
        line = "%s: ours %.1f%% vs perf %.1f%% (diff %+.1f points)" % (name, mine, pct, mine - pct)
        H.log(line)
        if abs(mine - pct) > SHARE_TOLERANCE:
            problems.append(line)
    assert not problems, "; ".join(problems)


@H.timeout(300)
def test_python311_self_time_matches_perf():
    """Debian's python3.11 on a pure-Python workload: the top self function
    equals perf's, and every function perf gives >= 5 % self is within
    +-3 points in ours."""
    H.require_root()
    assert os.path.exists(H.DEBIAN_PYTHON), "%s is missing: run `make deps`" % H.DEBIAN_PYTHON
    # Twice the fixture's work (about 5,000 samples each): two independent
    # recordings of ~2,700 differed by 3.2 points once (perf's own share of
    # _PyEval_EvalFrameDefault moves 2 points from run to run).
    cmd = [H.DEBIAN_PYTHON, os.path.join(H.REPO, "tests", "fixtures", "pyburn.py"), "2"]
    data = H.tmp_path("perf.data")
    H.perf_record(cmd, data)
    theirs = H.perf_self_by_sym(data)
    rec = H.record(cmd)
    ours = H.self_shares(H.folded(rec.capture))
    _compare("function", theirs, ours, _match_perf_name)


def _write_xz_input(path, size=8 * 1024 * 1024):
    """~8 MiB of deterministic text: lines of words from a fixed vocabulary,
    compressible enough to be realistic, random enough to keep xz busy."""
    rng = random.Random(20240611)
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(2, 10)))
             for _ in range(800)]
    written = 0
    with open(path, "w") as f:
        while written < size:
            line = " ".join(rng.choice(words) for _ in range(12)) + "\n"
            f.write(line)
            written += len(line)


def _module_of(frame, sym_dso, ksyms):
    """The module of one of our leaf frames: "module+0xoff" names it; a
    symbol name gets the DSO perf found it in; else a kernel symbol."""
    m = re.fullmatch(r"\[?(.+?)\]?\+0x[0-9a-fA-F]+", frame)
    if m:
        return os.path.basename(m.group(1))
    if frame in sym_dso:
        return sym_dso[frame]
    if frame in ksyms:
        return "[kernel.kallsyms]"
    return "unknown:" + frame


@H.timeout(400)
def test_xz_top_modules_match_perf():
    """`xz -6` of a generated ~8 MB file: the same top module as perf, and
    every module perf gives >= 5 % self within +-3 points in ours.

    Our folded output names functions, not modules, so each leaf frame is
    mapped to a module by name: "module+0xoffset" (an address no symbol
    covers, as in stripped liblzma) carries it; a symbol maps to the DSO
    perf's `--sort dso,sym` table puts it in; otherwise /proc/kallsyms
    decides whether it is a kernel function."""
    H.require_root()
    xz = H.require_tool("xz")
    src = H.tmp_path("input.txt")
    _write_xz_input(src)
    cmd = [xz, "-6", "-T1", "-k", "-f", src]
    data = H.tmp_path("perf.data")
    H.perf_record(cmd, data)
    theirs = H.perf_self_by_dso(data)
    sym_dso = H.perf_sym_dsos(data)
    rec = H.record(cmd)
    ours_by_frame = H.self_shares(H.folded(rec.capture))
    ksyms = H.kallsyms_names()
    ours = {}
    for frame, pct in ours_by_frame.items():
        mod = _module_of(frame, sym_dso, ksyms)
        ours[mod] = ours.get(mod, 0.0) + pct
    _compare("module", theirs, ours)
