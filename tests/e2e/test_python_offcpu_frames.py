"""Python frames in off-CPU stacks (issue 21, item 6).

tests/fixtures/python/waits.py runs a thread that sleeps in time.sleep
under outer() -> waiter(), again and again.  The test records the running
process (-p, --duration) while it sleeps on, so the fixture outlives the
recording and its code objects can be named however late a loaded machine
lets the recorder get to them.  The off-CPU program walks CPython at
switch-out with the sampler's walker, so under --look python at least 95 %
of the sleeper's off-CPU intervals (those that began inside the recording:
one asleep at its start has no stack) must read
... outer -> waiter -> time_sleep (the C function behind time.sleep) ...
in `report --off-cpu`, and as much of its off-CPU ns in
`convert --to folded --weight off-cpu-ns`.  With --python off the same
stacks carry no Python frame (the walk follows the option).
"""
import os
import re
import time

import helpers as H

FIXTURE = os.path.join(H.REPO, "tests", "fixtures", "python", "waits.py")
INTERPRETERS = [
    ("3_10", "/root/.pyenv/versions/3.10.13/bin/python3.10"),
    ("3_11", "/root/.pyenv/versions/3.11.7/bin/python3.11"),
    ("3_12", "/root/.pyenv/versions/3.12.1/bin/python3.12"),
    ("3_13", "/root/.pyenv/versions/3.13.0/bin/python3.13"),
    ("debian_3_11", H.DEBIAN_PYTHON),
]
SLEEPS, SLEEP_S = "4000", "0.02"   # 80 s at most: killed once recorded
WINDOW_S = 3
SHARE_MIN = 0.95
PY_FRAME = re.compile(r"^(.*) \(([^()]*?)(?::(\d+))?\)$")
PATH = ("outer", "waiter", "time_sleep")


def _intervals(capture, look):
    """[(fields, [stack frames])] from report --off-cpu --raw-times --look."""
    out = H.report(capture, "--off-cpu", "--raw-times", "--look", look,
                   "--limit", "1000000").stdout
    res = []
    for line in out.splitlines():
        m = re.match(r"\s+interval (.*)$", line)
        if m:
            res.append((H.parse_kv(m.group(1)), []))
            continue
        m = re.match(r"\s+stack  (.*)$", line)
        if m and res:
            res[-1][1].extend(f.strip() for f in m.group(1).split(";"))
    return res


def _name(frame):
    """'waiter (file.py)' -> 'waiter'; 'time_sleep.lto_priv.0' -> 'time_sleep'."""
    m = PY_FRAME.match(frame)
    if m:
        return m.group(1)
    return re.sub(r"( \[[kji]\])$", "", frame).split(".")[0]


def _has_path(stack):
    names = [_name(f) for f in stack]
    return any(tuple(names[i:i + len(PATH)]) == PATH for i in range(len(names)))


def _record(python, extra=()):
    """Record the sleeping fixture for WINDOW_S; (recording, sleeper tid)."""
    if not os.access(python, os.X_OK):
        H.skip("%s is not installed" % python)
    proc, out = H.start_fixture([python, FIXTURE, SLEEPS, SLEEP_S])
    try:
        tid = int(H.wait_for_line(out, r'"tid": (\d+)', timeout=60, proc=proc).group(1))
        time.sleep(0.2)  # into its sleeps
        rec = H.record(pids=[proc.pid], duration=WINDOW_S,
                       extra=["--off-cpu"] + list(extra))
    finally:
        proc.kill()
        proc.wait()
    return rec, tid


def _check(python):
    rec, tid = _record(python)
    ivs = [(f, st) for f, st in _intervals(rec.capture, "python")
           if f.get("tid") == tid and f.get("start") == "known"]
    # a 20 ms sleep ends about 50 times a second
    assert len(ivs) >= 10, "%d off-CPU intervals of the sleeper (tid %d) in %d s" % (
        len(ivs), tid, WINDOW_S)
    good = [st for _, st in ivs if _has_path(st)]
    bad = [st for _, st in ivs if not _has_path(st)]
    H.log("report --off-cpu --look python: %d of %d intervals of tid %d under %s" % (
        len(good), len(ivs), tid, " -> ".join(PATH)))
    for st in bad[:3]:
        H.log("  without: %s" % ";".join(st))
    assert len(good) >= SHARE_MIN * len(ivs), \
        "%d of %d off-CPU intervals of the sleeper show %s; e.g. %s" % (
            len(good), len(ivs), " -> ".join(PATH), ";".join(bad[0]) if bad else "-")
    # The Python frames are the fixture's own, in order, under threading's.
    py = [PY_FRAME.match(f).group(1) for f in good[0] if PY_FRAME.match(f)]
    assert py[-2:] == ["outer", "waiter"], "Python frames of a sleep: %s" % py

    # convert: off-CPU ns of the sleeper's thread, folded with thread roots
    out = H.tmp_path("waits-%d.folded" % tid)
    H.run([H.BIN, "convert", rec.capture, "--look", "python", "--to", "folded", "--threads",
           "--weight", "off-cpu-ns", "-o", out], check=True)
    with open(out) as f:
        prof = H.parse_folded(f.read(), out)
    mine = {st: w for st, w in prof.items() if st and st[0].endswith("-%d" % tid)}
    assert mine, "folded --threads has no stack rooted at thread %d: %s" % (
        tid, sorted({st[0] for st in prof if st})[:10])
    total = sum(mine.values())
    under = sum(w for st, w in mine.items() if _has_path(list(st[1:])))
    H.log("folded: %.1f of %.1f ms off-CPU of tid %d under the path" % (
        under / 1e6, total / 1e6, tid))
    assert under >= SHARE_MIN * total, \
        "folded --weight off-cpu-ns: %d of %d ns of the sleeper under %s" % (
            under, total, " -> ".join(PATH))
    # it slept nearly all the window (the part before its first switch-in
    # is clipped, stackless, and not under the path)
    assert under >= 0.5 * WINDOW_S * 1e9, \
        "folded: %d ns under the path in a %d s recording" % (under, WINDOW_S)


def _make(version, python):
    def test():
        _check(python)
    test.__name__ = "test_python_offcpu_frames_%s" % version
    return test


for _v, _p in INTERPRETERS:
    _t = H.timeout(150)(_make(_v, _p))
    globals()[_t.__name__] = _t


@H.timeout(150)
def test_python_offcpu_frames_follow_python_off():
    """--python off: the off-CPU program walks nothing (the frames above
    come from the walk, not from somewhere else)."""
    rec, tid = _record("/root/.pyenv/versions/3.12.1/bin/python3.12", ["--python", "off"])
    ivs = [(f, st) for f, st in _intervals(rec.capture, "logical") if f.get("tid") == tid]
    assert len(ivs) >= 10, "%d off-CPU intervals of the sleeper" % len(ivs)
    for f, st in ivs:
        assert not any(PY_FRAME.match(x) for x in st), \
            "--python off: an off-CPU stack with Python frames: %s" % ";".join(st)
