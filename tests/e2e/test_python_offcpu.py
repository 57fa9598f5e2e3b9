"""Off-CPU intervals of a Python process under each look (report and
convert --look with --off-cpu).

tests/fixtures/python/sleeps.py logs its main thread's native id and the
CLOCK_MONOTONIC span of every time.sleep (called from nap()) while a
second thread spins in Python.  A look rebuilds the stack table; every
interval's stack and waker stack must be mapped through it like the
samples' stacks.  Off-CPU stacks carry the thread's Python frames at
switch-out (the off-CPU program walks CPython like the sampler), so each
sleep's stack must hold the interpreter's native sleep path (time_sleep,
clock_nanosleep) under every look; the python look, which hides the
interpreter's own frames, must show no evaluation loop and nap() as the
innermost Python frame, the native look no Python frame, and no look a
Python frame of the spinner thread's spin() in the main thread's waits.
"""
import json
import os
import re

import helpers as H

PY_FIXTURE = os.path.join(H.REPO, "tests", "fixtures", "python", "sleeps.py")
INTERPRETERS = [
    ("debian_3_11", H.DEBIAN_PYTHON),
    ("3_12", "/root/.pyenv/versions/3.12.1/bin/python3.12"),
]
# "fn (file)" at report's default function granularity, "fn (file:line)" at line
PY_FRAME = re.compile(r"^(.*) \(([^()]*?)(?::(\d+))?\)$")
# A logged sleep span also holds waits for the GIL (the spinner holds it)
# and run-queue waits under load, each its own interval: the sleep itself
# is the interval that covers most of the span, at least half of it.
SLEEP_COVER = 0.5
SLEEP_SHARE = 0.5   # folded: time_sleep stacks >= 50% of the logged sleep time


def _intervals(capture, look):
    """[(fields, [stack frames], [waker frames])] from report --off-cpu --look."""
    out = H.report(capture, "--off-cpu", "--raw-times", "--look", look,
                   "--limit", "1000000").stdout
    res = []
    for line in out.splitlines():
        m = re.match(r"\s+interval (.*)$", line)
        if m:
            res.append((H.parse_kv(m.group(1)), [], []))
            continue
        m = re.match(r"\s+(stack|waker)  (.*)$", line)
        if m and res:
            res[-1][1 if m.group(1) == "stack" else 2].extend(
                f.strip() for f in m.group(2).split(";"))
    return res


def _base(frame):
    """A native frame's name without '.lto_priv.0'-like suffixes and ' [k]'."""
    return re.sub(r"( \[[kji]\])$", "", frame).split(".")[0]


def _check(python):
    if not os.access(python, os.X_OK):
        H.skip("%s is not installed" % python)
    rec = H.record([python, PY_FIXTURE, "8", "0.1"], extra=["--off-cpu"])
    truth = None
    for line in rec.stdout.splitlines():
        if line.startswith("{"):
            truth = json.loads(line)
    assert truth, "fixture printed no JSON line:\n%s" % rec.stdout
    tid, spans = truth["tid"], truth["sleeps"]
    for look in ("native", "python", "logical"):
        ivs = _intervals(rec.capture, look)
        assert ivs, "report --off-cpu --look %s listed no interval" % look
        for fields, stack, waker in ivs:
            if fields.get("tid") != tid:
                continue
            for fr in stack:
                m = PY_FRAME.match(fr)
                assert not m or m.group(1) != "spin", \
                    "--look %s: interval of the main thread (tid %s) has Python frame %r " \
                    "(the spinner thread's)" % (look, fields.get("tid"), fr)
        for start, end in spans:
            # On a loaded machine a sleep's span also holds run-queue waits
            # and GIL waits, and the sleep itself may come in pieces: the
            # intervals in state sleep must cover SLEEP_COVER of the span,
            # and the longest of them is the one checked.
            best, overlap, slept = None, 0, 0
            for fields, stack, _ in ivs:
                if fields.get("tid") != tid or fields.get("state") != "sleep":
                    continue
                o = min(fields["end_ns"], end) - max(fields["start_ns"], start)
                slept += max(o, 0)
                if o > overlap:
                    best, overlap = (fields, stack), o
            assert best and slept >= SLEEP_COVER * (end - start), \
                "--look %s: intervals of tid %d in state sleep cover %d of the sleep " \
                "[%d, %d]" % (look, tid, slept, start, end)
            names = [_base(f) for f in best[1]]
            H.log("--look %s: sleep of %.1f ms -> %s" % (
                look, (end - start) / 1e6, ";".join(best[1])))
            assert "time_sleep" in names and "clock_nanosleep" in names, \
                "--look %s: the sleep [%d, %d] has stack %s" % (
                    look, start, end, ";".join(best[1]))
            py = [PY_FRAME.match(f).group(1) for f in best[1] if PY_FRAME.match(f)]
            if look == "python":
                assert "_PyEval_EvalFrameDefault" not in names, \
                    "--look python kept the evaluation loop: %s" % ";".join(best[1])
                assert py and py[-1] == "nap", "sleep called from %s, not nap" % (
                    py[-1] if py else "no Python frame")
            if look == "native":
                assert not py, "--look native has Python frames %s" % py
    # convert with a look: every format that carries intervals
    for look in ("native", "python"):
        for ext in ("pb.gz", "trace.json", "speedscope.json"):
            out = H.tmp_path("x-%s.%s" % (look, ext))
            r = H.run([H.BIN, "convert", rec.capture, "--look", look, "-o", out])
            assert r.returncode == 0 and os.path.getsize(out) > 0, \
                "convert --look %s -o %s: exit %d\n%s" % (look, out, r.returncode, r.stderr)
        out = H.tmp_path("x-%s.folded" % look)
        r = H.run([H.BIN, "convert", rec.capture, "--look", look, "--to", "folded",
                   "--weight", "off-cpu-ns", "-o", out])
        assert r.returncode == 0, "convert --look %s --weight off-cpu-ns: exit %d\n%s" % (
            look, r.returncode, r.stderr)
        with open(out) as f:
            prof = H.parse_folded(f.read(), out)
        slept = sum(w for st, w in prof.items()
                    if "time_sleep" in [_base(x) for x in st])
        logged = sum(e - s for s, e in spans)
        H.log("folded --look %s: %.1f ms under time_sleep, %.1f ms of sleeps logged" % (
            look, slept / 1e6, logged / 1e6))
        assert slept >= SLEEP_SHARE * logged, \
            "--look %s folded: %d ns under time_sleep, the fixture slept %d ns" % (
                look, slept, logged)


def _make(version, python):
    def test():
        _check(python)
    test.__name__ = "test_python_offcpu_looks_%s" % version
    return test


for _v, _p in INTERPRETERS:
    _t = H.timeout(150)(_make(_v, _p))
    globals()[_t.__name__] = _t
