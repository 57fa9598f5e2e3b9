"""CPython frames walked in BPF and spliced into native stacks (issue 9).

Every test runs on each interpreter present on the machine (pyenv's 3.10,
3.11, 3.12 and 3.13 builds, Debian's /usr/bin/python3.11 without frame
pointers); an absent one is skipped, never silently passed.

Per-sample facts (time, thread, stack under a look) come from
tests/tools/sample_stacks.c, built here against BUILD/libmicroscope.a.
Assertions compare with the fixtures' own truths: their thread_time
shares, their threads' native ids, their CLOCK_MONOTONIC timestamps and
their source lines.
"""
import collections
import json
import os
import re

import helpers as H

INTERPRETERS = [
    ("3_10", "/root/.pyenv/versions/3.10.13/bin/python3.10"),
    ("3_11", "/root/.pyenv/versions/3.11.7/bin/python3.11"),
    ("3_12", "/root/.pyenv/versions/3.12.1/bin/python3.12"),
    ("3_13", "/root/.pyenv/versions/3.13.0/bin/python3.13"),
    ("debian_3_11", H.DEBIAN_PYTHON),
]
PY_FIXTURES = os.path.join(H.REPO, "tests", "fixtures", "python")
PATH_SHARE_MIN = 95.0   # % of inner's samples with exactly <module>;outer;middle;inner
KEY_SHARE_MIN = 95.0    # % of by_key's samples under <module>;sort_path;...;by_key
NAMED_SHARE_MIN = 90.0  # % of inner's samples (thread_time share) with every code object named
UNREADABLE = "[python code unreadable]"
THREAD_SHARE_TOL = 5.0  # points between a function's share and its thread's CPU share
PY_FRAME = re.compile(r"^(.*) \((.*):(\d+)\)$")


def _tool():
    out = os.path.join(H.SESSION_TMP, "sample_stacks")
    if os.path.exists(out):
        return out
    lib = os.path.join(H.BUILD, "libmicroscope.a")
    assert os.path.exists(lib), "%s is missing: run `make all`" % lib
    H.run([os.environ.get("CC") or "gcc", "-O2", "-std=gnu11", "-D_GNU_SOURCE", "-I", H.REPO,
           "-I", H.BUILD, os.path.join(H.REPO, "tests", "tools", "sample_stacks.c"), lib,
           "-lbpf", "-ldw", "-lelf", "-lzstd", "-lz", "-lm", "-lpthread", "-lstdc++", "-o", out + ".tmp"],
          check=True)
    os.rename(out + ".tmp", out)
    return out


def samples(capture, look):
    """[(time_ns, tid, [frame, ...] root first)] under look.  A sample of
    weight w (taken while the budget had lowered the sampling duty) stands
    for w samples at the requested rate and appears w times, so counts stay
    shares of CPU time (docs/capture-format.md, sampling duty)."""
    text = H.run([_tool(), capture, look], check=True, quiet=True).stdout
    out = []
    for line in text.splitlines():
        t, tid, weight, stack = (line.split(" ", 3) + [""])[:4]
        out.extend([(int(t), int(tid), stack.split(";") if stack else [])] * int(weight))
    return out


def counters(capture):
    """The capture's counters {name: value}."""
    text = H.run([_tool(), capture, "counters"], check=True, quiet=True).stdout
    return {k: int(v) for k, v in (line.split(" ", 1) for line in text.splitlines())}


def py_frames(stack):
    """The interpreted frames of a stack as (function, file, line), root first."""
    out = []
    for f in stack:
        m = PY_FRAME.match(f)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3))))
    return out


def fixture_json(rec):
    for line in rec.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise AssertionError("fixture printed no JSON line:\n%s" % rec.stdout)


def _interpreter(path):
    if not os.access(path, os.X_OK):
        H.skip("%s is not installed" % path)
    return path


def _calls(python):
    rec = H.record([python, os.path.join(PY_FIXTURES, "calls.py"), "1.5"])
    truth = fixture_json(rec)
    main_tid = None
    py_look = samples(rec.capture, "python")
    # The main thread is the one running <module>.
    tids = collections.Counter(tid for _, tid, st in py_look
                               if any(f[0] == "<module>" for f in py_frames(st)))
    assert tids, "no sample has a <module> frame"
    main_tid = tids.most_common(1)[0][0]
    mine = [st for _, tid, st in py_look if tid == main_tid]
    inner = [st for st in mine if any(f[0] == "inner" for f in py_frames(st))]
    full = [st for st in inner
            if [f[0] for f in py_frames(st)] == ["<module>", "outer", "middle", "inner"]]
    expected = len(mine) * truth["inner_cpu"] / truth["total_cpu"]
    H.log("main thread %d: %d samples, %d in inner (%.0f expected from thread_time), "
          "%d with the full path" % (main_tid, len(mine), len(inner), expected, len(full)))
    assert len(full) >= PATH_SHARE_MIN / 100 * expected, \
        "%d samples show <module>;outer;middle;inner, want >= %.0f%% of %.0f (inner's CPU " \
        "share of the thread); examples: %s" % (
            len(full), PATH_SHARE_MIN, expected,
            [";".join(st) for st in inner if st not in full][:3])
    assert H.percent(len(full), len(inner)) >= PATH_SHARE_MIN, \
        "only %d of %d inner samples have the full path" % (len(full), len(inner))
    # Code objects are named while the process lives (record drains and
    # names in rounds of at most 5 ms), so a short run is named too: inner's
    # samples carry no unreadable mark anywhere in their stack.
    named = [st for st in inner if UNREADABLE not in st]
    unreadable = sum(1 for st in mine if UNREADABLE in st)
    H.log("inner: %d fully named of %.0f expected; %d of the thread's %d samples hold %s" % (
        len(named), expected, unreadable, len(mine), UNREADABLE))
    assert len(named) >= NAMED_SHARE_MIN / 100 * expected, \
        "%d inner samples fully named, want >= %.0f%% of %.0f (inner's CPU share); " \
        "%d samples of the thread hold %s" % (len(named), NAMED_SHARE_MIN, expected,
                                            unreadable, UNREADABLE)
    # A function's body, from its def line (RESUME and argument set-up carry it) to its return.
    lo, hi = truth["inner_lines"]
    lo -= 1
    for st in full:
        fn, path, line = py_frames(st)[-1]
        assert os.path.basename(path) == "calls.py", "inner's file is %r" % path
        assert lo <= line <= hi, "inner at line %d, its body is lines %d-%d" % (line, lo, hi)
    # The second path: sorted(key=by_key) calls back into Python, native code kept.
    keyed = [st for st in mine if any(f[0] == "by_key" for f in py_frames(st))]
    good = [st for st in keyed
            if [f[0] for f in py_frames(st)] == ["<module>", "sort_path", "by_key"] and
            any("sort" in f and "(" not in f for f in st)]
    assert keyed and H.percent(len(good), len(keyed)) >= KEY_SHARE_MIN, \
        "%d of %d by_key samples under <module>;sort_path;<native sort>;by_key: %s" % (
            len(good), len(keyed), [";".join(st) for st in keyed if st not in good][:3])
    klo, khi = truth["key_lines"]
    klo -= 1
    outside = [py_frames(st)[-1][2] for st in good if not klo <= py_frames(st)[-1][2] <= khi]
    assert not outside, "by_key at lines %s, its body is %d-%d" % (sorted(set(outside)), klo, khi)
    # Looks: native has no interpreted frame; logical keeps the evaluation loop.
    native = samples(rec.capture, "native")
    assert not any(py_frames(st) for _, _, st in native), "native look has Python frames"
    logical = samples(rec.capture, "logical")
    spliced = [st for _, tid, st in logical if tid == main_tid and
               any(f.startswith("inner (") for f in st)]
    assert spliced and all("_PyEval_EvalFrameDefault" in st for st in spliced), \
        "logical look lost the evaluation loop"
    # report --look python shows the chain with file names
    out = H.report(rec.capture, "--look", "python").stdout
    assert re.search(r"inner \(.*calls\.py\)", out), out  # function granularity
    out = H.report(rec.capture, "--look", "python", "--granularity", "line").stdout
    assert re.search(r"inner \(.*calls\.py:\d+\)", out), out


def _threads4(python):
    rec = H.record([python, os.path.join(PY_FIXTURES, "threads4.py"), "0.25"])
    truth = fixture_json(rec)
    py_look = samples(rec.capture, "python")
    tids = {v["tid"]: fn for fn, v in truth.items()}
    cpu_total = sum(v["cpu"] for v in truth.values())
    per_thread = collections.Counter(tid for _, tid, _ in py_look if tid in tids)
    n = sum(per_thread.values())
    for fn, v in sorted(truth.items()):
        hits = [(tid, st) for _, tid, st in py_look
                if any(f[0] == fn for f in py_frames(st))]
        wrong = [tid for tid, _ in hits if tid != v["tid"]]
        assert not wrong, "%s seen under tids %s, its thread is %d" % (fn, set(wrong), v["tid"])
        got = H.percent(len(hits), n)
        want = 100.0 * v["cpu"] / cpu_total
        H.log("%s: %.1f%% of the four threads' samples, thread_time share %.1f%%" % (
            fn, got, want))
        assert abs(got - want) <= THREAD_SHARE_TOL, \
            "%s: %.1f%% of samples vs %.1f%% of CPU (tolerance %.0f points)" % (
                fn, got, want, THREAD_SHARE_TOL)


def _tidreuse(python):
    rec = H.record([python, os.path.join(PY_FIXTURES, "tidreuse.py"), "40", "0.03"])
    log = {int(k): v for k, v in fixture_json(rec).items()}
    reuse = max(collections.Counter(v[0] for v in log.values()).values())
    states = len(set(v[1] for v in log.values()))
    H.log("40 threads: a tid used by up to %d of them, %d distinct PyThreadStates" % (
        reuse, states))
    checked = 0
    for t, tid, st in samples(rec.capture, "python"):
        for fn, _, _ in py_frames(st):
            m = re.fullmatch(r"gen_(\d+)", fn)
            if not m:
                continue
            k = int(m.group(1))
            own_tid, _, t0, t1 = log[k]
            assert tid == own_tid and t0 <= t <= t1, \
                "sample at %d of tid %d carries gen_%d, which ran on tid %d in [%d, %d]" % (
                    t, tid, k, own_tid, t0, t1)
            checked += 1
    assert checked > 100, "only %d samples named a generation" % checked
    if reuse < 2:
        H.skip("no thread id could be reused (ns_last_pid); %d samples checked" % checked)
    assert states < len(log), "no PyThreadState address was reused"


def _make(fn, version, python):
    def test():
        fn(_interpreter(python))
    test.__name__ = "test_python_%s_%s" % (fn.__name__.strip("_"), version)
    return test


for _fn in (_calls, _threads4, _tidreuse):
    for _v, _p in INTERPRETERS:
        _t = H.timeout(150)(_make(_fn, _v, _p))
        globals()[_t.__name__] = _t


def test_python_off_records_native_only():
    python = _interpreter(INTERPRETERS[1][1])
    rec = H.record([python, os.path.join(PY_FIXTURES, "calls.py"), "0.3"],
                   extra=["--python", "off"])
    assert not any(py_frames(st) for _, _, st in samples(rec.capture, "logical")), \
        "--python off recorded interpreted frames"
    bad = H.run([H.BIN, "record", "--python", "maybe", "--", "true"])
    assert bad.returncode == 2 and "bpf, off" in bad.stderr, bad.stderr
    marked = [st for _, _, st in samples(rec.capture, "logical")
              if "[python frames unknown]" in st]
    assert not marked, "--python off marked %d samples [python frames unknown]" % len(marked)


UNSUPPORTED_PYTHON = "/root/.pyenv/versions/3.9.18/bin/python3.9"
UNSUPPORTED_TRUNCATED_MAX = 10.0  # % of samples truncated for any reason


@H.timeout(120)
def test_python_unsupported_version_native_stacks_unmarked():
    """CPython 3.9 has no layout: record says so, and its samples keep their
    native stacks without "[python frames unknown]" (nothing was walked)."""
    python = _interpreter(UNSUPPORTED_PYTHON)
    rec = H.record([python, os.path.join(PY_FIXTURES, "calls.py"), "1.0"])
    assert "has no known layout" in rec.stderr, rec.stderr
    logical = samples(rec.capture, "logical")
    marked = [st for _, _, st in logical if "[python frames unknown]" in st]
    assert logical and not marked, "%d of %d samples marked [python frames unknown]" % (
        len(marked), len(logical))
    out = H.report(rec.capture).stdout
    m = re.search(r"truncated\s+(\d+) samples \(([\d.]+)%\)", out)
    share = float(m.group(2)) if m else 0.0
    H.log("CPython 3.9: %d samples, %.1f%% truncated (%s)" % (
        len(logical), share, m.group(0) if m else "none"))
    assert share < UNSUPPORTED_TRUNCATED_MAX, \
        "%.1f%% of samples truncated, want < %.0f%%:\n%s" % (
            share, UNSUPPORTED_TRUNCATED_MAX, out[:3000])
    assert any("_PyEval_EvalFrameDefault" in st for _, _, st in logical), \
        "no sample runs the evaluation loop"
