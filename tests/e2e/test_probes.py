"""Probes SDK zones end to end (issue 20; docs/probes.md).

The fixture (tests/fixtures/zones.c, linked with build/libmicroscope_probes.a)
waits for a recorder to switch writing on, then runs zone "work" exactly N
times around a CPU loop and zone "wait" M times around nanosleep, logging
the CLOCK_MONOTONIC time it measured inside each wait zone.  report --zones
must count exactly N "work" zones and M "wait" zones, and the "wait" total
can be no less than what the fixture measured inside them (each zone's
bounds are stamped outside the fixture's own clock reads): no wall-clock
bound of our own.  The SDK's safety: without a recorder nothing is written;
a recorder killed with SIGKILL turns writing off after the heartbeat
timeout (the fixture reads the enable word through the SDK); a tiny ring
drops, and every record is either in the capture or counted as dropped.
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import time

import helpers as H
from test_python import counters as _counters
from test_serve import Server, pages

SDK_PY = os.path.join(H.REPO, "sdk", "python")
LIB = os.path.join(H.BUILD, "libmicroscope_probes.so")


def zones_table(capture, *extra):
    """report --zones [EXTRA...] -> ({site: row dict}, header dict, full text)."""
    text = H.report(capture, "--zones", *extra).stdout
    H.log(text)
    m = re.search(r"probe sites (\d+), records (\d+), zones (\d+), unmatched begins (\d+), "
                  r"unmatched ends (\d+), broken by dropped records (\d+)", text)
    assert m, text
    head = dict(zip(("sites", "records", "zones", "unmatched_begins", "unmatched_ends",
                     "broken"), map(int, m.groups())))
    rows = {}
    body = text.split("zones (durations in us)")
    if len(body) > 1:
        lines = body[1].strip().splitlines()
        cols = lines[0].split()
        for line in lines[1:]:
            vals = line.split()
            rows[vals[0]] = dict(zip(cols, vals))
    m = re.search(r"probe problems (\d+)", text)
    head["problems"] = int(m.group(1)) if m else None
    return rows, head, text


def us_to_ns(s):
    whole, frac = s.split(".")
    return int(whole) * 1000 + int(frac)


N, M, SLEEP_MS = 100, 5, 20
RAW = os.path.join(H.SESSION_TMP, "probes-raw")


def _zones_rec():
    return H.cached_record("probes-zones",
                           [H.fixture("zones"), "run", str(N), "200000", str(M), str(SLEEP_MS)],
                           save_raw=RAW)


def test_zones_counted_exactly():
    n, m, raw = N, M, RAW
    rec = _zones_rec()
    assert rec.fixture_line("enabled=")["enabled"] == 1, rec.fixture_lines
    slept = rec.fixture_line("wait count=")["slept_ns"]
    rows, head, text = zones_table(rec.capture)
    assert int(rows["work"]["count"]) == n, text
    assert int(rows["wait"]["count"]) == m, text
    total = us_to_ns(rows["wait"]["total"])
    assert total >= slept, "wait zones total %d ns < %d ns the fixture slept inside them\n%s" % (
        total, slept, text)
    # every zone closed, nothing dropped or refused
    for site in ("work", "wait"):
        assert rows[site]["unm.begin"] == "0" and rows[site]["unm.end"] == "0", text
    assert head["problems"] == 0, text
    # min <= median <= p99 <= max, mean between min and max
    for site in ("work", "wait"):
        v = {k: us_to_ns(rows[site][k]) for k in ("min", "mean", "median", "p99", "max")}
        assert v["min"] <= v["median"] <= v["p99"] <= v["max"], text
        assert v["min"] <= v["mean"] <= v["max"], text
    # the raw stream replays to the same zones
    again = H.tmp_path("zones-replay.msc")
    H.record(output=again, extra=["--replay", raw], timeout=120)
    rows2, _, text2 = zones_table(again)
    assert rows2 == rows, "replay differs:\n%s\nlive:\n%s" % (text2, text)


def test_zones_from_python_ctypes():
    py = shutil.which("python3.11")
    if not py:
        H.skip("Debian's python3.11 is not installed (make deps)")
    n = 40
    rec = H.record([py, os.path.join(H.REPO, "tests", "fixtures", "python", "zones.py"), str(n)],
                   output=H.tmp_path("pyzones.msc"), env=dict(os.environ, MICROSCOPE_PROBES_LIB=LIB))
    line = rec.fixture_line("py available=")
    assert line["available"] == 1 and line["enabled"] == 1, rec.fixture_lines
    rows, head, text = zones_table(rec.capture)
    assert int(rows["py_work"]["count"]) == n, text
    assert int(rows["py_mark"]["marks"]) == n, text
    assert head["problems"] == 0, text


def test_zone_before_the_recorder_finds_the_process():
    """A zone in the first statement of main, and a program that exits at
    once: the recorder names itself in the command's environment, so the
    SDK writes from its start and the record waits in its ring."""
    rec = H.record([H.fixture("zones_first")], output=H.tmp_path("first.msc"))
    line = rec.fixture_line("first enabled=")
    assert line["enabled"] == 1 and line["dropped"] == 0, rec.fixture_lines
    rows, head, text = zones_table(rec.capture)
    assert int(rows["first"]["count"]) == 1 and int(rows["first"]["marks"]) == 1, text
    assert head["records"] == 3, text


def test_zone_before_the_recorder_finds_the_process_with_probes_option():
    """The same with record --probes: the command's environment carries the
    prefixes too, so the SDK writes the selected sites from its start (it
    used to get no MICROSCOPE_PROBES_RECORDER with --probes and lost the
    zone: enabled=0, no site); a site not selected is not written at all."""
    for sel, want in (("fi,zz", {"first": 1}), ("zz", {})):
        rec = H.record([H.fixture("zones_first")], output=H.tmp_path("first-%s.msc" % sel),
                       extra=["--probes", sel])
        line = rec.fixture_line("first enabled=")
        assert line["enabled"] == 1 and line["dropped"] == 0, (sel, rec.fixture_lines)
        rows, head, text = zones_table(rec.capture)
        assert {k: int(v["count"]) for k, v in rows.items()} == want, (sel, text)
        assert head["records"] == 3 * len(want) and head["problems"] == 0, (sel, text)


def test_attach_keeps_the_first_zone_begun_after_it():
    """record -p PID: the program writes nothing until the recorder attaches
    (expected: no early start without the recorder's variable), and every
    zone begun after writing went on is kept whole, begin and end: the
    capture's zones are the fixture's "sure" ones (plus the one in flight
    at the switch when both its records made it), never fewer; the one in
    flight can only lose its begin (an unmatched end), never its end."""
    k = 40
    for i, extra in enumerate(([], ["--probes", "att"])):
        proc = None
        fx, out = H.start_fixture([H.fixture("zones"), "attach", str(k), "1000000"],
                                  out_name="attach%d.out" % i)
        try:
            H.wait_for_line(out, r"attach ready", timeout=30, proc=fx)
            # in the background: the fixture, our child, is reaped here
            # (a zombie would keep `record -p` waiting)
            proc, capture, _ = H.start_record(pids=[fx.pid], extra=extra,
                                              output=H.tmp_path("attach%d.msc" % i))
            assert fx.wait(timeout=60) == 0, fx.stderr.read()
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
        finally:
            for p in (fx, proc):
                if p is not None and p.poll() is None:
                    p.kill()
                    p.wait()
        line = [H.parse_kv(l) for l in open(out).read().splitlines()
                if l.startswith("attach sure=")]
        assert line and line[0]["sure"] == k, (extra, open(out).read())
        maybe = line[0]["maybe"]
        rows, head, text = zones_table(capture)
        count = int(rows["attach"]["count"])
        assert k <= count <= k + maybe, (extra, k, maybe, text)
        assert head["unmatched_begins"] == 0 and head["unmatched_ends"] <= maybe, (extra, text)
        assert head["problems"] == 0 and head["broken"] == 0, (extra, text)


def test_cxx_program_uses_the_header():
    """The SDK's header compiled as C++ (g++ -Werror -pedantic, an RAII
    zone guard): its zones are recorded like C's."""
    rec = H.record([H.fixture("zones_cxx"), "4"], output=H.tmp_path("cxx.msc"))
    assert rec.fixture_line("cxx count=")["enabled"] == 1, rec.fixture_lines
    rows, head, text = zones_table(rec.capture)
    assert int(rows["cxx"]["count"]) == 4 and int(rows["cxx"]["marks"]) == 1, text
    assert head["records"] == 9, text


def test_python_first_line_zone_is_recorded():
    py = shutil.which("python3.11")
    if not py:
        H.skip("Debian's python3.11 is not installed (make deps)")
    env = dict(os.environ, MICROSCOPE_PROBES_LIB=LIB, PYTHONPATH=SDK_PY)
    rec = H.record([py, os.path.join(H.REPO, "tests", "fixtures", "python", "zones_first.py")],
                   output=H.tmp_path("pyfirst.msc"), env=env)
    rows, head, text = zones_table(rec.capture)
    assert int(rows["py_first"]["count"]) == 1 and int(rows["py_first"]["marks"]) == 1, text
    assert head["records"] == 3, text


def test_python_module_without_library_is_a_no_op():
    py = shutil.which("python3.11") or shutil.which("python3")
    env = dict(os.environ, MICROSCOPE_PROBES_LIB="/nonexistent/libmicroscope_probes.so")
    # run from a copy of the module away from any library
    d = H.tmp_path("pysdk")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(SDK_PY, "microscope_probes.py"), d)
    code = ("import sys; sys.path.insert(0, %r); import microscope_probes as mp; "
            "s = mp.site('x'); mp.begin(s); mp.end(s); mp.mark(s, 1)\n"
            "with mp.zone(s): pass\n"
            "print(mp.available(), mp.enabled(), s)" % d)
    out = H.run([py, "-c", code], env=env, check=True).stdout.strip()
    assert out == "False False None", out


_CHECKS = r'''
import sys
sys.path.insert(0, sys.argv[1])
import microscope_probes as mp
s = mp.site("ok")
out = [str(mp.available())]
for call in ("mp.site(None)", "mp.site(b'x')", "mp.site('a\\0b')", "mp.site(3)",
             "mp.mark(s, 1.5)", "mp.mark(s, 2**64)", "mp.mark(s, -1)", "mp.mark(s, True)",
             "mp.mark(s, 2**64 - 1)", "mp.mark(None, 1)", "mp.begin('x')", "mp.end(1.0)",
             "mp.begin(None)"):
    try:
        eval(call)
        out.append(call + " ok")
    except Exception as e:
        out.append(call + " " + type(e).__name__)
print("\n".join(out))
'''


def test_python_checks_arguments_alike_with_and_without_library():
    """site(), begin(), end(), mark() raise the same errors whether the C
    library is loaded or not, and the module finds build/'s library by
    itself when it sits in the source tree."""
    py = shutil.which("python3.11") or shutil.which("python3")
    d = H.tmp_path("pysdk-checks")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(SDK_PY, "microscope_probes.py"), d)
    env = {k: v for k, v in os.environ.items() if k != "MICROSCOPE_PROBES_LIB"}
    with_lib = H.run([py, "-c", _CHECKS, SDK_PY], env=env, check=True).stdout.split("\n")
    without = H.run([py, "-c", _CHECKS, d], env=dict(env, MICROSCOPE_PROBES_LIB="/nonexistent"),
                    check=True).stdout.split("\n")
    assert with_lib[0] == "True" and without[0] == "False", (with_lib, without)
    assert with_lib[1:] == without[1:], (with_lib, without)
    want = ["mp.site(None) TypeError", "mp.site(b'x') TypeError", "mp.site('a\\0b') ValueError",
            "mp.site(3) TypeError", "mp.mark(s, 1.5) TypeError", "mp.mark(s, 2**64) ValueError",
            "mp.mark(s, -1) ValueError", "mp.mark(s, True) TypeError",
            "mp.mark(s, 2**64 - 1) ok", "mp.mark(None, 1) ok", "mp.begin('x') TypeError",
            "mp.end(1.0) TypeError", "mp.begin(None) ok"]
    assert with_lib[1:len(want) + 1] == want, with_lib


def test_no_recorder_writes_nothing():
    """Without a recorder the program runs unchanged: writing stays off."""
    proc, out = H.start_fixture([H.fixture("zones"), "run", "20", "10000", "2", "5", "0.3"])
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    lines = open(out).read()
    H.log(lines)
    last = H.parse_kv([ln for ln in lines.splitlines() if ln.startswith("dropped=")][0])
    assert "enabled=0" in lines.splitlines()[0], lines
    assert last == {"dropped": 0, "timeouts": 0, "enabled": 0}, lines
    assert "work count=20" in lines, lines


def test_killed_recorder_turns_writing_off():
    proc, capture, fixture_out = H.start_record([H.fixture("zones"), "watch", "30"],
                                                output=H.tmp_path("killed.msc"))
    try:
        H.wait_for_line(fixture_out, r"on_ms=(\d+)", timeout=30, proc=proc)
        H.log("writing is on; SIGKILL to the recorder %d" % proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        # the fixture sees writing off once the heartbeat is older than the
        # timeout (2 s), and reports it; it is not killed with the recorder
        m = H.wait_for_line(fixture_out, r"timeouts=(\d+) dropped=(\d+) enabled=(\d+)",
                            timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = open(fixture_out).read()
    H.log(text)
    assert "off_ms=" in text, text
    assert m.group(1) == "1" and m.group(3) == "0", text


def test_tiny_ring_drops_are_counted():
    pairs = 200000
    rec = H.record([H.fixture("zones"), "flood", str(pairs)], output=H.tmp_path("tiny.msc"),
                   env=dict(os.environ, MICROSCOPE_PROBES_RING_SLOTS="16"))
    dropped = rec.fixture_line("flood pairs=")["dropped"]
    assert dropped > 0, rec.fixture_lines
    rows, head, text = zones_table(rec.capture)
    m = re.search(r"probes\.dropped (\d+)", text)
    assert m and int(m.group(1)) == dropped, "fixture dropped %d\n%s" % (dropped, text)
    # every begin/end either reached the capture or was counted dropped
    records = head["records"]
    assert records + dropped == 2 * pairs, text
    # and the ordinary report lists it among the problems
    summary = H.report(rec.capture).stdout
    assert re.search(r"problems .*probes\.dropped %d" % dropped, summary), summary


def test_dropped_records_never_stretch_a_zone():
    """Threads writing zones into a full ring: a begin whose end was dropped
    must not pair with a later orphan end.  The SDK flags each thread's
    first record after a drop and pairing forgets that thread's open
    begins, so no zone in the capture is longer than the longest the
    fixture measured around its own begin/end calls."""
    rec = H.record([H.fixture("zones"), "storm", "8", "2"], output=H.tmp_path("storm.msc"),
                   env=dict(os.environ, MICROSCOPE_PROBES_RING_SLOTS="16"))
    line = rec.fixture_line("storm threads=")
    assert line["dropped"] > 0, rec.fixture_lines
    rows, head, text = zones_table(rec.capture)
    st = rows["storm"]
    assert int(st["count"]) > 0, text
    assert us_to_ns(st["max"]) <= line["max_ns"], "zone max %s us > fixture's %d ns\n%s" % (
        st["max"], line["max_ns"], text)
    assert head["broken"] > 0 and int(st["broken"]) == head["broken"], text


def test_symbolize_keeps_zones():
    """symbolize rewrites a capture: its probe sites and records come
    along, so report --zones reads the same before and after."""
    d1, d2 = H.tmp_path("sym-d1.msc"), H.tmp_path("sym-d2.msc")
    H.record([H.fixture("zones"), "run", "30", "20000", "2", "5"], output=d1,
             extra=["--symbolize", "deferred"])
    rows1, head1, text1 = zones_table(d1)
    assert int(rows1["work"]["count"]) == 30, text1
    H.run([H.BIN, "symbolize", d1, "-o", d2], check=True)
    rows2, head2, text2 = zones_table(d2)
    assert rows2 == rows1 and head2["records"] == head1["records"], text2


@H.timeout(120)
def test_window_snapshot_keeps_zones():
    """record --window over a program writing a zone a millisecond and
    hardly sampled (-F 1): a snapshot and the final window hold that
    window's zones (at most one per ms of it), not none."""
    H.require_root()
    out = H.tmp_path("zw.msc")
    argv = [H.BIN, "record", "-F", "1", "--window", "2s", "-o", out, "--",
            H.fixture("zones"), "watch", "6"]
    env = dict(os.environ, MS_FIXTURE_OUT=out + ".fixture.out")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    H.wait_for_line(out + ".fixture.out", r"on_ms=", timeout=30, proc=proc)
    time.sleep(3)
    H.run([H.BIN, "snapshot", str(proc.pid)], check=True)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    snaps = glob.glob(H.tmp_path("window-*.msc"))
    assert len(snaps) == 1, (snaps, err)
    for f in snaps + [out]:
        rows, head, text = zones_table(f)
        assert "tick" in rows and 0 < int(rows["tick"]["count"]) <= 2100, text


def test_site_table_full_is_counted():
    """1030 defines in a process: 1024 sites, 6 refused, counted by the SDK
    and carried to probes.sites_refused (a problem of the recording)."""
    rec = H.record([H.fixture("zones"), "sites", "1030"], output=H.tmp_path("sites.msc"))
    line = rec.fixture_line("sites asked=")
    assert line["got"] == 1024 and line["refused"] == 6, rec.fixture_lines
    rows, head, text = zones_table(rec.capture)
    assert head["sites"] == 1024 and head["zones"] == 1024, text
    assert re.search(r"probes\.sites_refused 6\b", text), text
    summary = H.report(rec.capture).stdout
    assert re.search(r"problems .*probes\.sites_refused 6", summary), summary


def test_zones_table_escapes_site_names():
    """Site names with a tab, a newline, an escape sequence and UTF-8: each
    is one row, control bytes shown as \\xHH, and every row as wide (in
    characters) as the header."""
    rec = H.record([H.fixture("zones"), "names"], output=H.tmp_path("names.msc"))
    text = H.report(rec.capture, "--zones").stdout
    H.log(text)
    table = text.split("zones (durations in us)")[1].strip("\n").split("\n")
    assert len(table) == 5, text
    names = [ln.split()[0] for ln in table[1:]]
    assert sorted(names) == sorted(["a\\x09b", "line\\x0abreak", "\\x1b[31mred",
                                    "caf\u00e9-\u00e9t\u00e9"]), text
    assert "\x1b" not in text and "\t" not in text, repr(text)
    assert len({len(ln) for ln in table}) == 1, "\n".join(map(repr, table))


def test_serve_api_zones():
    """/api/zones gives report --zones' statistics, and pages the zones of
    a time range by start."""
    rec = _zones_rec()
    rows, head, text = zones_table(rec.capture)
    with Server(rec.capture) as srv:
        a = srv.api("/api/zones")
        sites = {s["name"]: s for s in a["sites"]}
        assert sites["work"]["count"] == N and sites["wait"]["count"] == M, a["sites"]
        assert sites["wait"]["total_ns"] == us_to_ns(rows["wait"]["total"]), (a["sites"], text)
        assert a["total"] == N + M == len(a["zones"]), a["total"]
        starts = [z["start_ns"] for z in a["zones"]]
        assert starts == sorted(starts)
        # a page: rows 10..19 of the whole list
        p = srv.api("/api/zones?offset=10&limit=10")
        assert p["zones"] == a["zones"][10:20] and p["total"] == a["total"]
        # a time range: the zones overlapping [start of the 3rd wait, its end)
        waits = [z for z in a["zones"] if z["site"] == sites["wait"]["id"]]
        lo, hi = waits[2]["start_ns"], waits[2]["end_ns"]
        r = srv.api("/api/zones?start=%d&end=%d" % (lo, hi))
        want = [z for z in a["zones"] if z["end_ns"] > lo and z["start_ns"] < hi]
        assert r["zones"] == want and r["total"] == len(want) >= 1, (r, want)
        st, _, body = srv.get("/api/zones?limit=5001")
        assert st == 400 and b"limit" in body, body


def test_zones_window_clips_and_scope_keeps_threads():
    """report --zones --since/--until and /api/zones start/end clip zones to
    the window: of the 3rd and 4th wait zones, the window [middle of the
    3rd, middle of the 4th) keeps 2, with only their parts inside as
    durations (exactly); the scope options and label=/process= keep a
    process's zones only (the fork fixture's parent and child)."""
    rec = _zones_rec()
    with Server(rec.capture) as srv:
        a = srv.api("/api/zones")
        wid = {s["name"]: s["id"] for s in a["sites"]}["wait"]
        w = [z for z in a["zones"] if z["site"] == wid]
        lo = w[2]["start_ns"] + w[2]["ns"] // 2
        hi = w[3]["start_ns"] + w[3]["ns"] // 2
        want = (w[2]["end_ns"] - lo) + (hi - w[3]["start_ns"])
        r = srv.api("/api/zones?start=%d&end=%d" % (lo, hi))
        got = {s["name"]: s for s in r["sites"]}
        assert got["wait"]["count"] == 2 and got["wait"]["total_ns"] == want, (got, want)
        assert got["work"]["count"] == 0 and r["clipped"] == 2, r["sites"]
        assert got["wait"]["max_ns"] == max(w[2]["end_ns"] - lo, hi - w[3]["start_ns"])
    rows, head, text = zones_table(rec.capture, "--since", "%dns" % lo, "--until", "%dns" % hi)
    assert int(rows["wait"]["count"]) == 2 and us_to_ns(rows["wait"]["total"]) == want, text
    assert int(rows["work"]["count"]) == 0 and head["zones"] == 2, text
    assert "zones clipped to it, 2 cut at an edge" in text, text

    k = 20
    fork = H.cached_record("probes-fork", [H.fixture("zones"), "fork", str(k)])
    pids = {}
    for line in fork.fixture_lines:
        if line.startswith("fork who="):
            kv = H.parse_kv(line)
            pids[kv["who"]] = kv["pid"]
    rows, head, text = zones_table(fork.capture, "--pid", str(pids["child"]))
    assert list(rows) == ["child"] and int(rows["child"]["count"]) == k, text
    assert head["records"] == 2 * k, text
    rows, _, text = zones_table(fork.capture, "--pid", "!%d" % pids["child"])
    assert list(rows) == ["parent"] and int(rows["parent"]["count"]) == k, text
    with Server(fork.capture) as srv:
        proc = next(z["thread"]["process"] for z in srv.api("/api/zones")["zones"]
                    if z["thread"]["pid"] == pids["child"])
        for q in ("label=pid:%d" % pids["child"], "process=%d" % proc):
            r = srv.api("/api/zones?" + q)
            got = {s["name"]: s["count"] for s in r["sites"]}
            assert got == {"child": k, "parent": 0}, (q, got)
            assert r["total"] == k and all(z["thread"]["pid"] == pids["child"]
                                           for z in r["zones"]), q
        st, _, body = srv.get("/api/zones?label=pid:x")
        assert st == 400, body


@H.timeout(300)
def test_timeline_draws_zone_blocks():
    """The browser's timeline draws every zone of /api/zones on its
    thread's lane: N "work" and M "wait" bars, each as long as its zone."""
    rec = _zones_rec()
    with Server(rec.capture) as srv:
        api = srv.api("/api/zones")
        tid = api["zones"][0]["thread"]["tid"]
        res = pages(srv, {"timeline": {"tid": tid}}, "probes-zones")
    drawn = res["timeline"]["zones"]
    by_site = {}
    for z in drawn:
        by_site.setdefault(z["site"], []).append(z)
    assert len(by_site.get("work", [])) == N and len(by_site.get("wait", [])) == M, \
        {k: len(v) for k, v in by_site.items()}
    assert all(z["tid"] == tid and z["width"] > 0 for z in drawn), drawn[:3]
    assert sorted(z["ns"] for z in drawn) == sorted(z["ns"] for z in api["zones"])
    # a wait zone is drawn wider than a work zone, as its duration is longer
    assert min(z["width"] for z in by_site["wait"]) > max(
        z["width"] for z in by_site["work"] if z["ns"] < min(w["ns"] for w in by_site["wait"]))


def fmt_ns(ns):
    """web/src/api.ts fmtNs."""
    if ns >= 1e9:
        return "%.3f s" % (ns / 1e9)
    if ns >= 1e6:
        return "%.3f ms" % (ns / 1e6)
    if ns >= 1e3:
        return "%.1f us" % (ns / 1e3)
    return "%d ns" % ns


@H.timeout(300)
def test_zones_table_and_marks_in_the_browser():
    """The Zones view shows /api/zones' statistics per site (every value,
    raw and as text), sorts by a clicked column, and a click on a site
    opens the timeline with exactly that site's N blocks highlighted and
    the rest faded; the fixture's N/10 marks of "work" are drawn with their
    values (9, 19, ...) in time order."""
    rec = _zones_rec()
    with Server(rec.capture) as srv:
        api = srv.api("/api/zones")
        res = pages(srv, {"zones": {"site": "work"}}, "probes-zones-table")
    z = res["zones"]
    sites = {s["name"]: s for s in api["sites"]}
    assert [r["site"] for r in z["byTotal"]] == sorted(
        sites, key=lambda n: (-sites[n]["total_ns"], n)), z["byTotal"]
    assert [r["site"] for r in z["byCount"]] == ["work", "wait"], z["byCount"]
    for row in z["byTotal"]:
        s = sites[row["site"]]
        assert row["id"] == s["id"] and row["pid"] == s["pid"], (row, s)
        assert row["marks"] == s["marks"] and row["count"] == s["count"], (row, s)
        for k in ("total_ns", "min_ns", "mean_ns", "median_ns", "p99_ns", "max_ns"):
            assert row[k] == s[k] and row["text"][k] == fmt_ns(s[k]), (k, row, s)
        assert row["text"]["count"] == "{:,}".format(s["count"]), row
    assert sites["work"]["marks"] == N // 10 and sites["wait"]["marks"] == 0, api["sites"]
    assert "site=%d" % sites["work"]["id"] in z["hash"], z["hash"]
    assert z["highlighted"] == ["work"] * N and z["faded"] == ["wait"] * M, (
        len(z["highlighted"]), len(z["faded"]))
    assert [m["value"] for m in z["marks"]] == list(range(9, N, 10)), z["marks"]
    assert all(m["site"] == "work" for m in z["marks"])
    xs = [m["x"] for m in z["marks"]]
    assert xs == sorted(xs) and [m["time"] for m in z["marks"]] == [
        m["time_ns"] for m in api["marks"]], z["marks"]


def test_probes_option_selects_sites_by_prefix():
    """record --probes wa: only "wait" is switched on in the SDK (the work
    zones are never written: a record of a site not selected would be
    counted as probes.bad_record), and the capture says what was chosen."""
    rec = H.record([H.fixture("zones"), "run", "50", "100000", "3", "5"],
                   output=H.tmp_path("select.msc"), extra=["--probes", "wa,zz"])
    rows, head, text = zones_table(rec.capture)
    assert list(rows) == ["wait"] and int(rows["wait"]["count"]) == 3, text
    assert head["records"] == 6 and head["problems"] == 0, text
    with Server(rec.capture) as srv:
        assert srv.api("/api/info")["meta"].get("probes.select") == "wa,zz"
    info = H.report(rec.capture).stdout
    assert "probes.bad_record" not in info, info
    bad = H.record(["true"], output=H.tmp_path("select-bad.msc"), extra=["--probes", "a,,b"],
                   expect_status=2)
    assert "bad --probes" in bad.stderr, bad.stderr


def test_probes_option_records_a_site_from_its_first_zone():
    """record --probes late: a site defined after the recorder switched
    writing on, whose only zone follows its definition at once, is
    recorded: the SDK matches it against the prefixes the recorder
    published (no drain round in between could switch it on); the site
    not selected is not written (none of its records, none refused)."""
    rec = H.record([H.fixture("zones"), "late"], output=H.tmp_path("late.msc"),
                   extra=["--probes", "late,zz"])
    assert rec.fixture_line("late enabled=")["enabled"] == 1, rec.fixture_lines
    rows, head, text = zones_table(rec.capture)
    assert list(rows) == ["late.one"], text
    assert int(rows["late.one"]["count"]) == 1, text
    assert head["records"] == 2 and head["problems"] == 0, text


def test_chrome_trace_carries_zones():
    """convert -o x.trace.json: every zone begin and end as an async event
    of its site, ids pairing them per site and thread, in time order."""
    import json
    rec = _zones_rec()
    out = H.tmp_path("zones.trace.json")
    p = H.run([H.BIN, "convert", rec.capture, "-o", out], check=True)
    assert "probe records" in p.stderr, p.stderr
    with open(out) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "zone"]
    for site, n in (("work", N), ("wait", M)):
        mine = [e for e in ev if e["name"] == site]
        assert [e["ph"] for e in mine] == ["b", "e"] * n, (site, [e["ph"] for e in mine][:6])
        assert len({e["id"] for e in mine}) == 1, mine[:2]
        assert all(b["ts"] <= e["ts"] for b, e in zip(mine[::2], mine[1::2]))


@H.timeout(300)
def test_speedscope_carries_zones():
    """convert -o x.speedscope.json: the thread's zones as an "evented"
    profile whose open/close pairs per site add up to /api/zones' totals
    exactly, and speedscope (in chromium) opens the file without a warning."""
    import json
    from test_formats import _speedscope
    rec = _zones_rec()
    out = H.tmp_path("zones.speedscope.json")
    p = H.run([H.BIN, "convert", rec.capture, "-o", out], check=True)
    assert "%d probe zones as per-thread 'zones' evented profiles (0 splits" % (N + M) in \
        p.stderr, p.stderr
    with open(out) as f:
        doc = json.load(f)
    frames = [fr["name"] for fr in doc["shared"]["frames"]]
    ev = [pr for pr in doc["profiles"] if pr["type"] == "evented"]
    assert len(ev) == 1 and ev[0]["name"].endswith(" zones"), [pr["name"] for pr in ev]
    total, count, opened = {}, {}, {}
    for e in ev[0]["events"]:
        name = frames[e["frame"]]
        if e["type"] == "O":
            opened[name] = e["at"]
        else:
            total[name] = total.get(name, 0) + e["at"] - opened.pop(name)
            count[name] = count.get(name, 0) + 1
    with Server(rec.capture) as srv:
        sites = {st["name"]: st for st in srv.api("/api/zones")["sites"]}
    assert count == {"work": N, "wait": M}, count
    assert total == {k: sites[k]["total_ns"] for k in ("work", "wait")}, (total, sites)
    _speedscope(out, "spin", "zones-speedscope")


def test_chrome_trace_leaves_unmatched_zones_out():
    """The storm capture (a full ring: begins without ends, orphan ends):
    the trace holds only begins and ends that pair, b then e per id, as
    many as report --zones' zones, and convert's note counts the rest;
    pprof, speedscope and folded say they carry no zones."""
    import json
    cap = H.tmp_path("storm-trace.msc")
    H.record([H.fixture("zones"), "storm", "4", "1"], output=cap,
             env=dict(os.environ, MICROSCOPE_PROBES_RING_SLOTS="16"))
    rows, head, text = zones_table(cap)
    left = head["records"] - 2 * head["zones"]
    assert rows["storm_open"]["unm.begin"] == "1" and rows["storm_open"]["unm.end"] == "1", text
    out = H.tmp_path("storm.trace.json")
    p = H.run([H.BIN, "convert", cap, "-o", out], check=True)
    assert re.search(r"\b%d unmatched zone begins and ends left out" % left, p.stderr), p.stderr
    with open(out) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "zone"]
    assert len(ev) == 2 * head["zones"], (len(ev), text)
    depth = {}
    for e in sorted(ev, key=lambda e: e["ts"]):
        depth[e["id"]] = depth.get(e["id"], 0) + (1 if e["ph"] == "b" else -1)
        assert depth[e["id"]] >= 0, e
    assert all(v == 0 for v in depth.values()), depth
    for fmt in ("pprof", "folded"):
        p = H.run([H.BIN, "convert", cap, "--to", fmt, "-o", H.tmp_path("s." + fmt)], check=True)
        assert re.search(r"%d probe records \(zones, marks\) not carried" % head["records"],
                         p.stderr), (fmt, p.stderr)
    # speedscope carries the same zones as the trace, by the same pairing
    # (a broken begin never meets a later end), and says what it leaves
    out = H.tmp_path("storm.speedscope.json")
    p = H.run([H.BIN, "convert", cap, "-o", out], check=True)
    assert re.search(r"\b%d probe zones as per-thread 'zones' evented profiles .*\b%d probe "
                     r"records not carried" % (head["zones"], left), p.stderr), p.stderr
    with open(out) as f:
        doc = json.load(f)
    opens = sum(1 for pr in doc["profiles"] if pr["type"] == "evented"
                for e in pr["events"] if e["type"] == "O")
    splits = int(re.search(r"\((\d+) splits", p.stderr).group(1))
    assert opens == head["zones"] + splits, (opens, head["zones"], splits)


def test_forked_child_is_found_and_recorded_apart():
    """A child forked while recording starts with writing off (its ring is
    its own copy), is found as a new process, and its zones are its own."""
    k = 30
    rec = H.record([H.fixture("zones"), "fork", str(k)], output=H.tmp_path("fork.msc"))
    assert rec.fixture_line("child enabled_at_fork=")["enabled_at_fork"] == 0, rec.fixture_lines
    pids = {}
    for line in rec.fixture_lines:
        if line.startswith("fork who="):
            kv = H.parse_kv(line)
            assert kv["enabled"] == 1, line
            pids[kv["who"]] = kv["pid"]
    rows, head, text = zones_table(rec.capture)
    assert int(rows["parent"]["count"]) == k and int(rows["child"]["count"]) == k, text
    assert int(rows["parent"]["pid"]) == pids["parent"], text
    assert int(rows["child"]["pid"]) == pids["child"] != pids["parent"], text
    assert head["problems"] == 0, text


def test_system_wide_finds_processes_mapping_the_sdk():
    """record -a looks in every process that maps libmicroscope_probes.so
    (here Python's ctypes loading it, after the recording started)."""
    py = shutil.which("python3.11")
    if not py:
        H.skip("Debian's python3.11 is not installed (make deps)")
    n = 40
    proc, capture, _ = H.start_record(output=H.tmp_path("system.msc"), system_wide=True,
                                      duration=60)
    try:
        time.sleep(1.0)
        fx, out = H.start_fixture([py, os.path.join(H.REPO, "tests", "fixtures", "python",
                                                    "zones.py"), str(n)],
                                  out_name="system-py.out",
                                  env=dict(os.environ, MICROSCOPE_PROBES_LIB=LIB))
        assert fx.wait(timeout=60) == 0, fx.stderr.read()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = open(out).read()
    assert "enabled=1" in lines, lines
    pid = fx.pid
    rows, head, text = zones_table(capture)
    assert int(rows["py_work"]["count"]) == n and int(rows["py_work"]["pid"]) == pid, text
    assert int(rows["py_mark"]["marks"]) == n, text


def test_system_wide_finds_a_child_forked_after_a_site_was_defined():
    """record -a: a child forked (without exec) by a process mapping
    libmicroscope_probes.so maps no file and execs nothing, so only its
    fork record names it; it is looked in at its parent's control-block
    address, and its zones of the site its parent defined before the fork
    are its own (they were lost: the child waited in vain for writing on)."""
    k = 30
    proc, capture, _ = H.start_record(output=H.tmp_path("system-fork.msc"), system_wide=True,
                                      duration=60)
    fx = None
    try:
        time.sleep(1.0)  # not an assertion: the recorder is running
        fx, out = H.start_fixture([H.fixture("zones_so"), "forkdef", str(k)],
                                  out_name="system-fork.out")
        assert fx.wait(timeout=60) == 0, fx.stderr.read()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    finally:
        for p in (fx, proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
    lines = open(out).read().splitlines()
    assert "forkdef child enabled_at_fork=0" in lines, lines
    pids = {}
    for line in lines:
        if line.startswith("forkdef who="):
            kv = H.parse_kv(line)
            assert kv["enabled"] == 1, lines
            pids[kv["who"]] = kv["pid"]
    assert set(pids) == {"parent", "child"} and pids["child"] != pids["parent"], lines
    for who, want in (("parent", k + 1), ("child", k)):
        rows, head, text = zones_table(capture, "--pid", str(pids[who]))
        assert int(rows["shared"]["count"]) == want, (who, text)
        assert int(rows["shared"]["pid"]) == pids[who], (who, text)
        assert head["problems"] == 0 and head["unmatched_ends"] == 0, (who, text)
    # found by its fork record, at the parent's address (not by a search)
    assert _counters(capture).get("probes.forks", 0) >= 1, _counters(capture)


@H.timeout(300)
def test_system_wide_finds_programs_linking_the_static_library():
    """record -a finds programs that link libmicroscope_probes.a (they map
    no *microscope_probes* file) by their executable's symbol: 20 copies
    running before the recording (the snapshot) and one exec'd during it
    each have their 5 work zones recorded, beside 20 idle sleep processes.
    The executables are read once each: 40 processes of 2 executables
    cost 2 reads at most, so the reads at start stay below the host's
    processes less 38."""
    k = 20
    fixtures, sleeps = [], []
    try:
        for i in range(k):
            fixtures.append(H.start_fixture([H.fixture("zones"), "run", "5", "1000", "0", "0",
                                             "60"], out_name="static-%d.out" % i))
            sleeps.append(subprocess.Popen(["sleep", "120"]))
        time.sleep(0.5)
        nprocs = sum(1 for d in os.listdir("/proc") if d.isdigit())
        proc, capture, _ = H.start_record(output=H.tmp_path("system-static.msc"),
                                          system_wide=True, duration=60)
        # the snapshot's processes are found at the first rounds
        for fx, out in fixtures:
            assert fx.wait(timeout=60) == 0, fx.stderr.read()
        late, late_out = H.start_fixture([H.fixture("zones"), "run", "5", "1000", "0", "0", "30"],
                                         out_name="static-late.out")
        assert late.wait(timeout=60) == 0, late.stderr.read()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    finally:
        for p in sleeps:
            p.kill()
            p.wait()
        for fx, _ in fixtures:
            if fx.poll() is None:
                fx.kill()
                fx.wait()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    pids = [fx.pid for fx, _ in fixtures] + [late.pid]
    for _, out in fixtures + [(late, late_out)]:
        assert "enabled=1" in open(out).read(), open(out).read()
    text = H.report(capture, "--zones").stdout
    H.log(text)
    rows = [l.split() for l in text.splitlines() if l.split()[:1] == ["work"]]
    got = {int(r[1]): int(r[2]) for r in rows}
    assert all(got.get(p) == 5 for p in pids), (pids, got)
    c = _counters(capture)
    H.log("probes: %d host processes at start; exe reads %d (%d at start), %d us, found by "
          "exe %d" % (nprocs, c["probes.exe_reads"], c["probes.exe_reads_at_start"],
                      c["probes.exe_cpu_us"], c["probes.found_by_exe"]))
    assert c["probes.found_by_exe"] >= k + 1, c
    assert c["probes.exe_reads_at_start"] <= nprocs - 2 * k + 2, (nprocs, c)
