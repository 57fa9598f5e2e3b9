"""microscope serve (issue 20): the browser pages in headless chromium and
the HTTP surface.

Pages (tests/web/serve_pages.js, playwright-core driving /usr/bin/chromium):
  * ratio's flame graph shows leaf_a at the share analysis computes (to the
    hundredth of a percent) and near the fixture's own CPU-time truth;
    clicking zooms (the frame then spans the graph, the URL holds it);
    search highlights exactly the matching frames with their share;
    the function table sorts by self and by total;
  * offcpu sleeper's timeline shows its 10 sleeps (about 100 ms each, state
    sleep) with their waker (a hrtimer interrupt);
  * shift new --diff shift base: the changed function is the first row; with
    a time selection the diff view answers for it (base whole);
  * shift new --diff shift halves: the diff view's base-part control (typed
    and dragged) lands in the URL and changed's delta is the part's;
  * dlopen_main at granularity module: libhot.so's flame frame and row.
Screenshots go to BUILD/artifacts/serve/.

HTTP (no browser): path traversal in raw and encoded forms, malformed and
oversized queries, methods, Host names, ETags, gzip, 1,000 concurrent
connections with the server's peak RSS bounded, and the loopback-only
default bind.
"""
import asyncio
import gzip
import http.client
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import time
import urllib.parse

import helpers as H

WEB = os.path.join(H.REPO, "tests", "web")
SHOTS = os.path.join(H.BUILD, "artifacts", "serve")
CORPUS = os.path.join(H.REPO, "tests", "fuzz", "capture_reader")


class Server:
    """`microscope serve` on a free port; stopped by SIGTERM (exit 0 checked)."""

    def __init__(self, capture, *args):
        self.argv = [H.BIN, "serve", capture, "--port", "0"] + list(args)
        H.log("$ " + " ".join(self.argv) + " &")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        m = re.match(r"microscope serve: (http://(\S+):(\d+)/)$", line.strip())
        if not m:
            self.proc.kill()
            raise AssertionError("serve printed %r, not its URL\nstderr: %s" % (
                line, self.proc.stderr.read()[-2000:]))
        self.url, self.host, self.port = m.group(1), m.group(2), int(m.group(3))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise AssertionError("serve did not stop within 15 s of SIGTERM")
        self.stderr = self.proc.stderr.read()
        assert rc == 0, "serve exited %d\n%s" % (rc, self.stderr[-2000:])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            self.stop()
        elif self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def get(self, path, headers=None, method="GET", host=None):
        c = http.client.HTTPConnection(host or "127.0.0.1", self.port, timeout=30)
        try:
            c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            c.putheader("Host", (headers or {}).pop("Host", "127.0.0.1:%d" % self.port))
            for k, v in (headers or {}).items():
                c.putheader(k, v)
            c.endheaders()
            r = c.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            c.close()

    def api(self, path):
        st, _, body = self.get(path)
        assert st == 200, "%s: %d %s" % (path, st, body[:300])
        return json.loads(body)

    def vm_hwm_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))


def pages(server, spec, name):
    node = shutil.which("node")
    if not node or not os.path.isdir(os.path.join(WEB, "node_modules", "playwright-core")):
        H.skip("node or tests/web/node_modules missing: run `make deps` (npm ci in tests/web)")
    if not os.path.exists("/usr/bin/chromium"):
        H.skip("/usr/bin/chromium (Debian chromium) is not installed: run `make deps`")
    shots = os.path.join(SHOTS, name)
    spec = dict(spec, base=server.url, shots=shots)
    proc = H.run([node, os.path.join(WEB, "serve_pages.js"), json.dumps(spec)], timeout=240)
    line = (proc.stdout.strip().splitlines() or ["{}"])[-1]
    res = json.loads(line)
    H.log("pages: errors %r, screenshots in %s" % (res.get("errors"), shots))
    assert not res.get("errors"), "the pages reported errors: %r\n%s" % (
        res.get("errors"), proc.stderr[-2000:])
    assert res.get("foreign") == [], "the pages asked other origins: %r" % res.get("foreign")
    return res


def _ratio():
    return H.cached_record("ratio", [H.fixture("ratio")])


@H.timeout(300)
def test_flame_graph_share_zoom_search_and_table():
    rec = _ratio()
    truth = rec.fixture_line("cpu_ns")
    prof = H.folded(rec.capture)
    analysis_share = H.share(prof, "leaf_a")
    truth_share = 100.0 * truth["leaf_a"] / truth["total"]
    with Server(rec.capture) as srv:
        res = pages(srv, {"flame": {"name": "leaf_a", "search": "^leaf_a$"}, "table": {}},
                    "ratio")
    fl = res["flame"]
    assert fl["title"] == "microscope — capture.msc", fl["title"]
    # The first paint's order: the flame graph asked first, alone, pruned to
    # the boxes of 2 px or more it draws; the header's /api/info and
    # /api/threads once its boxes are in the document; the script and style
    # sheet inline in index.html (no other request for them).
    H.log("first load's fetches (url, boxes drawn): %r; paths %r" % (fl["fetches"], res["paths"]))
    first = fl["fetches"][0]
    m = re.search(r"min_share=([0-9.]+)", first[0])
    assert first[0].startswith("/api/flamegraph?") and first[1] == 0 and m, fl["fetches"]
    assert abs(float(m.group(1)) - 200.0 / fl["graphWidth"]) < 0.002, (m.group(1), fl["graphWidth"])
    later = [f for f in fl["fetches"] if f[0].startswith(("/api/info", "/api/threads"))]
    assert len(later) >= 2 and all(n > 0 for _, n in later), fl["fetches"]
    assert not [p for p in res["paths"] if p.startswith("/assets/")], res["paths"]
    hot = fl["hot"]
    assert hot, "no leaf_a frame in the flame graph (%d frames)" % fl["nframes"]
    shown = float(hot["share"].rstrip("%"))
    H.log("leaf_a: page %.2f%%, analysis %.4f%%, fixture truth %.2f%%" % (
        shown, analysis_share, truth_share))
    assert abs(shown - analysis_share) < 0.006, \
        "page shows leaf_a at %.2f%%, analysis computes %.4f%%" % (shown, analysis_share)
    assert abs(shown - truth_share) < 6.0, \
        "page shows leaf_a at %.2f%%, the fixture measured %.2f%% of its CPU time" % (
            shown, truth_share)
    assert hot["title"].startswith("leaf_a\n%s of all" % hot["share"]), hot["title"]
    # Clicking zoomed: leaf_a now spans the graph and the URL says so.
    assert "zoom=%s" % hot["id"] in fl["zoomHash"], fl["zoomHash"]
    assert abs(fl["zoomedWidth"] - fl["boxWidth"]) < 2 and hot["width"] < fl["boxWidth"] - 50, \
        "zoomed width %.1f, graph %.1f, before %.1f" % (fl["zoomedWidth"], fl["boxWidth"],
                                                         hot["width"])
    # Search highlighted exactly the leaf_a frames, and their share is leaf_a's.
    assert fl["matched"] and set(fl["matched"]) == {"leaf_a"}, fl["matched"]
    assert fl["unmatched"] > 0
    assert abs(float(fl["searchShare"].rstrip("%")) - analysis_share) < 0.006, \
        "search share %s, analysis %.4f%%" % (fl["searchShare"], analysis_share)
    # The table sorts by self, then (header click) by total, in the server.
    tb = res["table"]
    selfs = [r["self"] for r in tb["bySelf"]]
    totals = [r["total"] for r in tb["byTotal"]]
    assert selfs == sorted(selfs, reverse=True), tb["bySelf"][:5]
    assert totals == sorted(totals, reverse=True), tb["byTotal"][:5]
    # By total the outermost functions lead (main holds every sample of the run);
    # by self the leaves do.  leaf_a's total is the share the flame graph showed.
    assert tb["byTotal"][0]["name"] != tb["bySelf"][0]["name"], (tb["byTotal"][:3],
                                                                tb["bySelf"][:3])
    leaf_a = [r for r in tb["byTotal"] if r["name"] == "leaf_a"]
    assert leaf_a and leaf_a[0]["total"] == H.count_containing(prof, "leaf_a"), leaf_a


@H.timeout(300)
def test_timeline_shows_ten_sleeps_with_their_waker():
    rec = H.cached_record("offcpu-sleeper", [H.fixture("offcpu"), "sleeper"], extra=["--off-cpu"])
    sleeps = [H.parse_kv(l) for l in rec.fixture_lines if l.startswith("sleep ")]
    assert len(sleeps) == 10, rec.fixture_lines
    tid = sleeps[0]["tid"]
    with Server(rec.capture) as srv:
        api = srv.api("/api/intervals?min_ns=90000000&incomplete=0")
        every = srv.api("/api/intervals?min_ns=90000000")
        res = pages(srv, {"timeline": {"tid": tid}}, "offcpu-sleeper")
    long_ = [iv for iv in res["timeline"]["intervals"] if iv["ns"] >= 90e6 and not iv["clipped"]]
    for iv in long_:
        H.log("interval %s: %.3f ms %s, waker %s" % (iv["id"], iv["ns"] / 1e6, iv["state"],
                                                     iv["waker"]))
    assert tid in res["timeline"]["lanes"], res["timeline"]["lanes"]
    assert len(long_) == 10, "the timeline shows %d intervals of >= 90 ms, expected 10" % len(long_)
    assert all(iv["state"] == "sleep (S)" and "state-sleep" in iv["cls"] for iv in long_), long_
    # Each drawn interval says what the capture says: its cause and its waker's
    # innermost frames, from /api/intervals (computed in the server).
    by_id = {str(iv["id"]): iv for iv in api["intervals"]}
    for iv in long_:
        want = by_id.get(iv["id"])
        assert want, "interval %s on the page is not in /api/intervals" % iv["id"]
        assert iv["cause"] == want["cause"], (iv, want["cause"])
        frames = [f["name"] + (" [k]" if f["kind"] == "kernel" else "")
                  for f in want["waker_stack"][:6]]
        assert all(f in iv["waker"] for f in frames), (iv["waker"], frames)
    # Woken by the timer: a hard interrupt whose stack holds hrtimer_wakeup.  The
    # recorder can miss a wakeup on a loaded machine (the interval then has no
    # cause, as report --off-cpu's "no wakeup" shows); most must have it.
    timer = [iv for iv in long_ if iv["cause"] == "hardirq" and "hrtimer_wakeup" in iv["waker"]]
    H.log("%d of 10 sleeps show a hrtimer waker" % len(timer))
    assert len(timer) >= 8, "%d of 10 sleeps show a hrtimer waker: %r" % (
        len(timer), [iv["waker"] for iv in long_])
    assert "hrtimer_wakeup" in res["timeline"]["detail"], res["timeline"]["detail"]
    assert api["total"] == 10, "/api/intervals?min_ns=90000000&incomplete=0: %d" % api["total"]
    # By default (as report) intervals cut by the recording's edges are listed
    # too, marked; incomplete=0 leaves exactly those out.
    clipped = [iv for iv in every["intervals"] if not (iv["start_known"] and iv["end_known"])]
    assert every["total"] == api["total"] + len(clipped), (every["total"], len(clipped))


def _shift():
    return (H.cached_record("shift-base", [H.fixture("shift"), "base"]),
            H.cached_record("shift-new", [H.fixture("shift"), "new"]))


@H.timeout(300)
def test_diff_view_puts_changed_function_first():
    base, new = _shift()
    with Server(new.capture, "--diff", base.capture) as srv:
        res = pages(srv, {"diff": {}}, "shift")
        api = {r["name"]: r for r in srv.api("/api/diff?limit=300")["rows"]}
        past = pages(srv, {"diff": {"hash": "base_start=99000000000"}}, "shift-past")
    rows = res["diff"]["rows"]
    H.log("diff rows: %r" % rows[:5])
    assert rows and rows[0]["name"] == "changed", rows[:5]
    # base 2 of 10 units, new 5 of 10: about +30 percentage points.
    assert 15 < rows[0]["delta"] < 45, rows[0]
    # The z column (as report --diff's): changed, the function the fixture
    # changed, is starred with |z| above 3.29; every row's star and z are
    # /api/diff's (a column drawn from another field would differ).
    assert "z" in res["diff"]["columns"], res["diff"]["columns"]
    assert rows[0]["significant"] and rows[0]["z"].endswith("*") and \
        float(rows[0]["z"].rstrip("*")) > 3.29, rows[0]
    for r in rows:
        want = "%.1f%s" % (api[r["name"]]["z"], "*" if api[r["name"]]["significant"] else "")
        assert r["z"] == want and r["significant"] == api[r["name"]]["significant"], (r, want)
    assert any(not r["significant"] for r in rows), rows
    assert res["diff"]["notes"] == [], res["diff"]["notes"]
    # A base part past the base's end: the page says so (base_note), no star.
    assert any("none of the base's" in n for n in past["diff"]["notes"]), past["diff"]["notes"]
    assert not any(r["significant"] for r in past["diff"]["rows"]), past["diff"]["rows"][:3]


@H.timeout(300)
def test_granularity_line_and_address():
    """granularity=line keys a native frame by its source line, address by
    its module offset; the totals stay those of function granularity."""
    rec = _ratio()
    with Server(rec.capture) as srv:
        by = {g: srv.api("/api/flat?granularity=%s&sort=total&limit=1000" % g)
              for g in ("function", "line", "address", "frame")}
        fl = srv.api("/api/flamegraph?granularity=line&min_share=0")
    for g, f in by.items():
        H.log("%s: %d rows, total %d, e.g. %s" % (g, f["nrows"], f["total"],
                                                   [r["name"] for r in f["rows"][:4]]))
    assert len({f["total"] for f in by.values()}) == 1, {g: f["total"] for g, f in by.items()}
    fn = {r["name"]: r for r in by["function"]["rows"]}
    assert "leaf_a" in fn, list(fn)[:20]
    # Line: leaf_a's rows are "leaf_a (ratio.c:N)", their self adding up to leaf_a's.
    lines = [r for r in by["line"]["rows"] if r["name"].startswith("leaf_a (")]
    assert lines and all(re.match(r"leaf_a \(ratio\.c:\d+\)$", r["name"]) for r in lines), lines
    assert sum(r["self"] for r in lines) == fn["leaf_a"]["self"], (lines, fn["leaf_a"])
    addrs = [r for r in by["address"]["rows"] if r["name"].startswith("leaf_a (")]
    assert addrs and all(re.match(r"leaf_a \(ratio\+0x[0-9a-f]+\)$", r["name"]) for r in addrs), \
        addrs
    assert sum(r["self"] for r in addrs) == fn["leaf_a"]["self"]
    assert len(addrs) >= len(lines), (len(addrs), len(lines))
    assert any(n["name"].startswith("leaf_a (ratio.c:") for n in fl["nodes"])


@H.timeout(300)
def test_cached_first_answers_equal_fresh_ones():
    """The unfiltered flame graph's weights and /api/info's summary are made
    once per profile (the first page asks them): answered from that cache
    they equal a fresh weighing of the same samples (a time range covering
    the whole capture is not cached), node for node, at two granularities."""
    rec = _ratio()
    with Server(rec.capture) as srv:
        info = srv.api("/api/info")
        whole = "&start=0&end=%d" % (info["span_ns"] + 1)
        for g in ("function", "module"):
            cached = srv.api("/api/flamegraph?min_share=0&granularity=" + g)
            again = srv.api("/api/flamegraph?min_share=0&granularity=" + g)
            fresh = srv.api("/api/flamegraph?min_share=0&granularity=%s%s" % (g, whole))
            H.log("%s: %d nodes, total %d" % (g, len(cached["nodes"]), cached["total"]))
            # by module the ratio fixture is root, ratio, libc and ld.so
            # (5 nodes when no sample has a kernel or vDSO frame)
            assert len(cached["nodes"]) > (5 if g == "function" else 3) and \
                cached["total"] > 100, cached
            assert cached == again == fresh, (g, cached["total"], fresh["total"])
    assert info["summary"]["samples"] == cached["samples"] and \
        info["summary"]["weight"] == cached["total"], (info["summary"], cached["total"])


@H.timeout(300)
def test_diff_answers_for_the_time_selection():
    """/api/diff?start&end: the served capture's side is the selection's
    (its total and each function's self those of /api/flat over the same
    range, below the whole), the base is compared whole (its total that of
    the diff without a range); the page's diff view asks the same."""
    base, new = _shift()
    with Server(base.capture) as srv:
        base_whole = srv.api("/api/flat?limit=1000")["total"]
    with Server(new.capture, "--diff", base.capture) as srv:
        info = srv.api("/api/info")
        lo, hi = info["span_ns"] // 4, info["span_ns"] * 3 // 4
        rng = "start=%d&end=%d" % (lo, hi)
        whole = srv.api("/api/diff?limit=1000")
        zone = srv.api("/api/diff?limit=1000&" + rng)
        flat = srv.api("/api/flat?limit=1000&" + rng)
        mod = srv.api("/api/diff?limit=1000&granularity=module&" + rng)
        res = pages(srv, {"diff": {"hash": rng}}, "shift-zone")
    H.log("diff: whole %d, range %s %d (flat %d); base %d / %d" % (
        whole["total"], rng, zone["total"], flat["total"], zone["base_total"], base_whole))
    assert 0 < zone["total"] == flat["total"] < whole["total"], (zone["total"], flat["total"])
    assert zone["base_total"] == whole["base_total"] == base_whole, \
        (zone["base_total"], whole["base_total"], base_whole)
    selfs = {r["name"]: r["self"] for r in flat["rows"]}
    for r in zone["rows"]:
        assert r["self"] == selfs.get(r["name"], 0), (r, selfs.get(r["name"]))
    assert zone["rows"][0]["name"] == "changed", zone["rows"][:3]
    # Other filters still apply to both sides: by module, one row per module.
    assert mod["total"] == zone["total"] and mod["base_total"] == base_whole
    assert all("+0x" not in r["name"] and r["name"] not in ("changed", "steady")
               for r in mod["rows"]), mod["rows"][:5]
    head = res["diff"]["head"]
    assert head["total"] == zone["total"] and head["baseTotal"] == base_whole, head
    assert "time selection" in head["text"], head
    assert res["diff"]["rows"][0]["name"] == "changed", res["diff"]["rows"][:3]


@H.timeout(300)
def test_diff_base_range_narrows_the_base():
    """/api/diff?base_start&base_end: the base's side is that part of the
    base recording (base_total that of the base's own /api/flat over the
    same range from its origin, below its whole), the served capture's side
    stays whole; each side's range is its own; the ETag follows the base
    range; base_end <= base_start is a 400."""
    base, new = _shift()
    with Server(base.capture) as srv:
        binfo = srv.api("/api/info")
        blo, bhi = binfo["span_ns"] // 4, binfo["span_ns"] // 2
        base_whole = srv.api("/api/flat?limit=1000")["total"]
        base_part = srv.api("/api/flat?limit=1000&start=%d&end=%d" % (blo, bhi))["total"]
    with Server(new.capture, "--diff", base.capture) as srv:
        info = srv.api("/api/info")
        brng = "base_start=%d&base_end=%d" % (blo, bhi)
        whole = srv.api("/api/diff?limit=1000")
        part = srv.api("/api/diff?limit=1000&" + brng)
        both = srv.api("/api/diff?limit=1000&%s&start=%d" % (brng, info["span_ns"] // 2))
        late = srv.api("/api/flat?limit=1000&start=%d" % (info["span_ns"] // 2))["total"]
        _, h_whole, _ = srv.get("/api/diff?limit=1000")
        _, h_part, _ = srv.get("/api/diff?limit=1000&" + brng)
        st, _, body = srv.get("/api/diff?base_start=%d&base_end=%d" % (bhi, blo))
    H.log("base whole %d, part %d; diff base_total %d / %d" % (
        base_whole, base_part, whole["base_total"], part["base_total"]))
    assert 0 < base_part < base_whole, (base_part, base_whole)
    assert part["base_total"] == base_part and whole["base_total"] == base_whole, \
        (part["base_total"], base_part, whole["base_total"])
    assert part["total"] == whole["total"], (part["total"], whole["total"])
    assert both["base_total"] == base_part and both["total"] == late < whole["total"], \
        (both["base_total"], both["total"], late)
    assert h_whole["ETag"] != h_part["ETag"], (h_whole["ETag"], h_part["ETag"])
    assert st == 400 and b"base_end" in body, (st, body)


@H.timeout(300)
def test_diff_base_range_outside_the_base_says_so():
    """/api/diff?base_start past the base's end selects none of its samples:
    still a 200 (as report --since past the end exits 0) with base_total 0,
    and base_note says so (report --diff warns on stderr); start past the
    served capture's end gives note; a range inside gives neither."""
    base, new = _shift()
    with Server(new.capture, "--diff", base.capture) as srv:
        past = srv.api("/api/diff?limit=5&base_start=99000000000")
        late = srv.api("/api/diff?limit=5&start=99000000000")
        whole = srv.api("/api/diff?limit=5")
    H.log("past: base_total %d, base_note %r; late: note %r" % (
        past["base_total"], past.get("base_note"), late.get("note")))
    assert past["base_total"] == 0 and past["total"] == whole["total"] > 0, past
    assert re.match(r"none of the base's \d+ samples is selected: check base_start/base_end",
                    past.get("base_note", "")), past
    assert "note" not in past, past
    assert late["total"] == 0 and re.match(r"none of the served capture's \d+ samples",
                                           late.get("note", "")), late
    assert "base_note" not in late and "note" not in whole and "base_note" not in whole, whole


@H.timeout(300)
def test_diff_base_may_be_a_segment_directory():
    """serve NEW --diff DIR: a record --continuous directory is a base as
    report --diff DIR NEW takes it (it failed: "stat: not a regular file",
    exit 1); base_total is the directory's samples, report's base count."""
    H.require_root()
    _, new = _shift()
    d = H.tmp_path("serve-diff-segs")
    shutil.rmtree(d, ignore_errors=True)
    H.run([H.BIN, "record", "-q", "-F", "199", "--continuous", d, "--segment", "1s", "--",
           H.fixture("shift"), "base"], check=True, timeout=120)
    segs = [n for n in os.listdir(d) if n.endswith(".msc")]
    out = H.run([H.BIN, "report", "--diff", d, new.capture], check=True).stdout
    want = int(re.search(r"^  base\s+(\d+) samples", out, re.M).group(1))
    with Server(new.capture, "--diff", d) as srv:
        diff = srv.api("/api/diff?limit=5")
    H.log("%d segments; report base %d, /api/diff base_total %d" % (
        len(segs), want, diff["base_total"]))
    assert segs, os.listdir(d)
    assert diff["base_total"] == want > 0, (diff["base_total"], want)
    assert diff["rows"][0]["name"] == "changed", diff["rows"][:3]


def _delta(new_rows, new_total, base_rows, base_total, name):
    """The self-share change of name in percentage points, from two flat tables."""
    n = {r["name"]: r["self"] for r in new_rows}.get(name, 0)
    b = {r["name"]: r["self"] for r in base_rows}.get(name, 0)
    return 100.0 * n / new_total - 100.0 * b / base_total


@H.timeout(300)
def test_diff_view_base_part():
    """The diff view's base-part control: shift halves ran steady alone in
    its first half and changed 5 : other 5 in its second.  Typing a time
    past the first phase's end into "from" puts base_start (ns) in the URL and the
    rows become those against that part: changed's delta is then about 0
    (new's 50 % against the part's 50 %; the whole base gives about +25)
    and equal, to the hundredth, to what the base's own /api/flat over the
    part implies; steady's about +40.  Dragging across the base's bar up to
    before that end sets that part instead (changed about +50); the button
    clears it."""
    base = H.cached_record("shift-halves", [H.fixture("shift"), "halves"])
    _, new = _shift()
    with Server(new.capture) as srv:
        nflat = srv.api("/api/flat?limit=1000")
    with Server(base.capture) as srv:
        span = srv.api("/api/info")["span_ns"]
        bwhole = srv.api("/api/flat?limit=1000")
        # The phases split the fixture's work, not its wall time: on a
        # loaded machine either may take more of the span.  The typed part
        # starts 10 % of the span after the first phase's end (the latest
        # start whose part still holds steady, by bisection on the base's
        # own table), the dragged one ends 10 % before it.
        def steady_from(start):
            rows = srv.api("/api/flat?limit=1000&start=%d" % start)["rows"]
            return sum(r["self"] for r in rows if r["name"] == "steady")
        a, b = 0, span
        while b - a > span // 1000:
            mid = (a + b) // 2
            a, b = (mid, b) if steady_from(mid) else (a, mid)
        boundary = b
        H.log("base span %d ns, first phase ends at %.1f %%" % (span, 100.0 * boundary / span))
        assert 0.12 * span < boundary < 0.88 * span, (boundary, span)
        start_ms = round((boundary + 0.1 * span) / 1e6, 3)
        lo = round(start_ms * 1e6)
        drag_end = (boundary - 0.1 * span) / span
        blate = srv.api("/api/flat?limit=1000&start=%d" % lo)
        with Server(new.capture, "--diff", base.capture) as dsrv:
            info = dsrv.api("/api/info")
            res = pages(dsrv, {"diffbase": {"start_ms": start_ms, "drag": [0, drag_end]}},
                        "shift-halves")
        r = res["diffbase"]
        H.log("base span %d ns; hashes %s | %s | %s" % (span, r["typed"]["hash"],
                                                    r["dragged"]["hash"], r["cleared"]["hash"]))
        m = re.search(r"base_end=(\d+)", r["dragged"]["hash"])
        hi = int(m.group(1)) if m else None
        m = re.search(r"base_start=(\d+)", r["dragged"]["hash"])
        dlo = int(m.group(1)) if m else 0
        bearly = srv.api("/api/flat?limit=1000&start=%d&end=%d" % (dlo, hi)) if hi else None
    assert info["diff_span_ns"] == span, (info["diff_span_ns"], span)

    def by(state):
        return {row["name"]: row["delta"] for row in state["rows"]}
    whole, typed, dragged, cleared = (by(r[k]) for k in ("whole", "typed", "dragged", "cleared"))
    H.log("changed's delta: whole base %s, its last 40%% %s, its first 40%% %s; steady %s / %s" % (
        whole.get("changed"), typed.get("changed"), dragged.get("changed"),
        whole.get("steady"), typed.get("steady")))
    # The URL holds the part, in ns from the base's origin.
    assert "base_start=%d" % lo in r["typed"]["hash"] and "base_end" not in r["typed"]["hash"], \
        r["typed"]["hash"]
    assert hi and abs(hi - drag_end * span) < 0.05 * span and dlo < 0.02 * span, \
        r["dragged"]["hash"]
    assert "base_" not in r["cleared"]["hash"], r["cleared"]["hash"]
    # What the fixture implies, against the part and the whole.
    assert 15 < whole["changed"] < 35, whole
    assert abs(typed["changed"]) < 8, typed
    assert 30 < typed["steady"] < 50, typed
    assert 40 < dragged["changed"] < 60, dragged
    assert cleared == whole, (cleared, whole)
    # To the hundredth: what the two flat tables over the same parts give.
    nt = nflat["total"]
    for state, part, got in ((r["whole"], bwhole, whole), (r["typed"], blate, typed),
                             (r["dragged"], bearly, dragged)):
        assert state["head"]["baseTotal"] == part["total"] and state["head"]["total"] == nt, \
            (state["head"], part["total"], nt)
        for name in ("changed", "steady", "other"):
            want = _delta(nflat["rows"], nt, part["rows"], part["total"], name)
            assert abs(got[name] - want) < 0.006, (name, got[name], want)
    assert blate["total"] < bwhole["total"] and bearly["total"] < bwhole["total"]


def _module_of(row):
    """The module of an address-granularity row: "name (module+0xoff)",
    "module+0xoff"; kernel rows are "[kernel]" at module granularity."""
    if row["kind"] == "kernel":
        return "[kernel]"
    if row["kind"] == "truncation":
        return row["name"]
    m = re.match(r".*\((.+)\+0x[0-9a-f]+\)$", row["name"]) or \
        re.match(r"(.+)\+0x[0-9a-f]+$", row["name"])
    assert m, row
    return m.group(1)


@H.timeout(300)
def test_module_granularity():
    """granularity=module: one key per binary or library.  dlopen_main burns
    its CPU in libhot.so's hot_function: libhot.so's self is the sum of the
    self of every address row of libhot.so (and so for every module), the
    totals are function granularity's, no flame graph node has its parent's
    module (runs collapse: dlopen_main;libc.so.6;dlopen_main;libhot.so),
    and the page's granularity selector shows the same."""
    rec = H.cached_record("dlopen", [H.fixture("dlopen_main")])
    truth = rec.fixture_line("cpu_ns")
    with Server(rec.capture) as srv:
        mod = srv.api("/api/flat?granularity=module&limit=1000")
        fn = srv.api("/api/flat?granularity=function&limit=1000")
        addr = srv.api("/api/flat?granularity=address&limit=1000")
        fl = srv.api("/api/flamegraph?granularity=module&min_share=0")
        hot_only = srv.api("/api/flat?granularity=module&focus=hot_function&limit=1000")
        res = pages(srv, {"modules": {}}, "dlopen-modules")
    rows = {r["name"]: r for r in mod["rows"]}
    H.log("modules: %r" % [(r["name"], r["self"], r["total"]) for r in mod["rows"]])
    assert mod["total"] == fn["total"] == addr["total"] > 0, (mod["total"], fn["total"])
    assert mod["nrows"] < fn["nrows"], (mod["nrows"], fn["nrows"])
    assert "libhot.so" in rows and "hot_function" not in rows, list(rows)
    by_module = {}
    for r in addr["rows"]:
        by_module[_module_of(r)] = by_module.get(_module_of(r), 0) + r["self"]
    assert {k: v for k, v in by_module.items() if v} == \
        {k: r["self"] for k, r in rows.items() if r["self"]}, (by_module, rows)
    # hot_function is libhot.so's only function: equal selves, and its share
    # of the samples is near the fixture's share of its CPU time.
    hot = {r["name"]: r for r in fn["rows"]}["hot_function"]
    assert rows["libhot.so"]["self"] == hot["self"], (rows["libhot.so"], hot)
    share = 100.0 * rows["libhot.so"]["self"] / mod["total"]
    truth_share = 100.0 * truth["hot_function"] / truth["total"]
    H.log("libhot.so %.2f%% of samples, fixture %.2f%% of its CPU time" % (share, truth_share))
    assert abs(share - truth_share) < 10, (share, truth_share)
    # The executable holds every user stack: its total is the root's.
    assert rows["dlopen_main"]["total"] >= rows["libhot.so"]["total"]
    assert hot_only["total"] == rows["libhot.so"]["total"], (hot_only["total"], rows["libhot.so"])
    # Collapsed: no node repeats its parent's module, and libhot.so sits under
    # dlopen_main (main) under libc.so.6 (__libc_start_main) under dlopen_main (_start).
    nodes = {n["id"]: n for n in fl["nodes"]}
    for n in fl["nodes"]:
        p = nodes.get(n["parent"])
        assert not p or p["kind"] == "root" or (p["name"], p["kind"]) != (n["name"], n["kind"]), \
            (p, n)
    big = max((n for n in fl["nodes"] if n["name"] == "libhot.so"), key=lambda n: n["total"])
    path = []
    n = big
    while n and n["kind"] != "root":
        path.append(n["name"])
        n = nodes.get(n["parent"])
    H.log("libhot.so's heaviest path: %s" % ";".join(reversed(path)))
    assert path[:2] == ["libhot.so", "dlopen_main"] and "libc.so.6" in path, path
    # The page: the selector puts gran=module in the URL; the flame graph's
    # libhot.so frame and the table's row say what the API says.
    pg = res["modules"]
    assert "gran=module" in pg["hash"], pg["hash"]
    frame = max((f for f in pg["frames"] if f["name"] == "libhot.so"),
                key=lambda f: float(f["share"].rstrip("%")))
    assert abs(float(frame["share"].rstrip("%")) - 100.0 * big["total"] / fl["total"]) < 0.006, \
        (frame, big, fl["total"])
    table = {r["name"]: r for r in pg["rows"]}
    assert table["libhot.so"]["self"] == rows["libhot.so"]["self"], pg["rows"][:5]
    assert "hot_function" not in table, list(table)


def test_clipped_off_cpu_counts_by_default():
    """As report: off-CPU time clipped by the recording window counts, under
    its own leaf; incomplete=0 leaves exactly that out."""
    with Server(_corpus("offcpu-sleeper.msc")) as srv:
        every = srv.api("/api/flat?event=off-cpu&limit=1000")
        complete = srv.api("/api/flat?event=off-cpu&incomplete=0&limit=1000")
        tree = srv.api("/api/flamegraph?event=off-cpu&min_share=0")
        offcpu = srv.api("/api/offcpu?by=state")
        offcpu0 = srv.api("/api/offcpu?by=state&incomplete=0")
    clipped = [r for r in every["rows"] if r["name"] == "[clipped by the recording window]"]
    H.log("off-CPU total %d, complete %d, clipped %r" % (every["total"], complete["total"], clipped))
    assert clipped and clipped[0]["self"] > 0, every["rows"][:5]
    assert every["total"] == complete["total"] + clipped[0]["self"], (every["total"],
                                                                       complete["total"])
    assert not any(r["name"].startswith("[clipped") for r in complete["rows"])
    assert tree["total"] == every["total"]
    assert offcpu["total"] == every["total"] and offcpu0["total"] == complete["total"], (
        offcpu["total"], offcpu0["total"])


@H.timeout(200)
def test_segment_directory_is_one_live_profile():
    """serve DIR (a continuous recording's segments) answers for all its
    segments as one profile, and a segment added later shows up without a
    restart: the totals are report's of the same directory."""
    H.require_root()
    src = H.tmp_path("segs-src")
    argv = [H.BIN, "record", "-q", "-F", "199", "--continuous", src, "--segment", "1s", "--",
            H.fixture("spinner"), "5"]
    H.run(argv, timeout=120)
    segs = sorted(n for n in os.listdir(src) if re.match(r"^seg-\d{8}T\d{6}Z-\d{8}\.msc$", n))
    assert segs, os.listdir(d)
    d = H.tmp_path("segs-served")
    os.makedirs(d)
    for n in segs[:-1]:
        shutil.copy(os.path.join(src, n), os.path.join(d, n))

    def samples_of(path):
        m = re.search(r"^  samples\s+(\d+)", H.report(path).stdout, re.M)
        return int(m.group(1)) if m else 0

    first = samples_of(d)
    with Server(d) as srv:
        info = srv.api("/api/info")
        st, hdr, _ = srv.get("/api/flat?limit=1")
        assert info["live"] and info["segments"] == len(segs) - 1, info
        assert info["summary"]["samples"] == first, (info["summary"]["samples"], first)
        assert hdr.get("Cache-Control") == "no-cache", hdr
        # One more segment: the next look at the directory reads it.
        tmp = os.path.join(d, "incoming.part")
        shutil.copy(os.path.join(src, segs[-1]), tmp)
        os.rename(tmp, os.path.join(d, segs[-1]))
        for _ in range(300):
            now = srv.api("/api/info")
            if now["segments"] == len(segs):
                break
            time.sleep(0.1)
        assert now["segments"] == len(segs), now["segments"]
        assert now["version"] != info["version"]
        assert now["summary"]["samples"] == samples_of(d) > first, now["summary"]["samples"]
        # A time selection over the whole profile: the two halves add up.
        span = now["span_ns"]
        a = srv.api("/api/flamegraph?end=%d" % (span // 2))["total"]
        b = srv.api("/api/flamegraph?start=%d" % (span // 2))["total"]
        whole = srv.api("/api/flamegraph")["total"]
        assert a > 0 and b > 0 and a + b == whole, (a, b, whole)


@H.timeout(300)
def test_labels_filter_and_group():
    """label=tid:N keeps one thread's samples (tid:!N the others), label=comm:
    by name; /api/groups splits the weight by thread and process, adding up
    to the total; every view answers for the labels' samples."""
    rec = H.cached_record("threads4", [H.fixture("threads4")])
    lines = [H.parse_kv(l) for l in rec.fixture_lines if l.startswith("tid=")]
    assert len(lines) == 4, rec.fixture_lines
    with Server(rec.capture) as srv:
        total = srv.api("/api/flat?limit=1")["total"]
        groups = srv.api("/api/groups?by=thread")
        procs = srv.api("/api/groups?by=process")
        spin = {}
        for ln in lines:
            one = srv.api("/api/flat?label=tid:%d&limit=1000" % ln["tid"])
            rest = srv.api("/api/flat?label=tid:!%d&limit=1" % ln["tid"])
            fg = srv.api("/api/flamegraph?label=tid:%d" % ln["tid"])
            names = {r["name"]: r for r in one["rows"]}
            spin[ln["func"]] = (one["total"], names.get(ln["func"], {}).get("self", 0))
            assert one["total"] + rest["total"] == total, (ln, one["total"], rest["total"], total)
            assert fg["total"] == one["total"], (fg["total"], one["total"])
            # Only this thread's function: no other spin_K in its table.
            others = [n for n in names if n.startswith("spin_") and n != ln["func"]]
            assert not others, (ln, others)
            row = [g for g in groups["rows"] if g["name"].endswith("/%d]" % ln["tid"])]
            assert row and row[0]["weight"] == one["total"], (row, one["total"])
        comm = srv.api("/api/flat?label=comm:threads4&limit=1")["total"]
        none = srv.api("/api/flat?label=comm:no-such-comm&limit=1")
        st, _, body = srv.get("/api/flat?label=colour:red")
    H.log("per thread (total, self in its spin): %r" % spin)
    assert sum(g["weight"] for g in groups["rows"]) == groups["total"] == total
    assert len(procs["rows"]) == 1 and procs["rows"][0]["weight"] == total, procs
    # The thread doing 4 units has about 4 times the samples of the one doing 1.
    assert spin["spin_3"][0] > 2 * spin["spin_0"][0], spin
    assert comm == total and none["total"] == 0 and none["event"] == "cpu-clock", none
    assert st == 400 and b"colour" in body, (st, body)


@H.timeout(300)
def test_groups_take_the_time_selection_and_filters():
    """/api/groups counts the samples the other views count under the same
    start/end and focus/ignore: its total (and its rows' sum) is the flat
    table's (before, start= was a 400 'does not apply to /api/groups' and
    the page's groups view counted every sample under a time selection)."""
    rec = H.cached_record("threads4", [H.fixture("threads4")])
    with Server(rec.capture) as srv:
        span = srv.api("/api/info")["span_ns"]
        whole = srv.api("/api/groups?by=thread")["total"]
        for q in ("start=0&end=%d" % (span // 3), "start=%d" % (span // 3),
                  "focus=spin_3", "ignore=spin_3", "focus=zzzznomatch"):
            flat = srv.api("/api/flat?limit=1&" + q)["total"]
            for by in ("thread", "process", "module"):
                g = srv.api("/api/groups?by=%s&%s" % (by, q))
                assert g["total"] == flat == sum(r["weight"] for r in g["rows"]), (q, by, g, flat)
            assert flat < whole, (q, flat, whole)
        # the page's groups view asks with the time selection in its state
        end = span // 3
        want = srv.api("/api/groups?by=thread&start=0&end=%d" % end)
        res = pages(srv, {"groups": {"hash": "start=0&end=%d" % end}}, "groups")
    got = res["groups"]["rows"]
    assert sum(r["samples"] for r in got) == sum(r["samples"] for r in want["rows"]), (got, want)
    assert len(got) == len(want["rows"]), (got, want)


@H.timeout(300)
def test_source_view_and_time_selection_in_the_page():
    """Clicking leaf_a in the function table opens its source view: each
    sampled line's self/total (from the capture's line tables, as
    /api/source counts them) beside the fixture's own source text.  Dragging
    across the timeline selects a zone of time: the URL holds it and the
    flame graph answers for it (its total is the window's, below the whole)."""
    rec = _ratio()
    with Server(rec.capture, "--source-dir", H.REPO) as srv:
        api = srv.api("/api/source?function=leaf_a")
        res = pages(srv, {"source": {"name": "leaf_a"}, "zone": {}}, "ratio-source")
        zone = res["zone"]
        m = re.search(r"start=(\d+)&end=(\d+)", zone["flameHash"])
        assert m, zone
        window = srv.api("/api/flamegraph?start=%s&end=%s" % m.groups())
        # No off-CPU intervals in this capture: the timeline lists none (no 400).
        assert srv.api("/api/intervals")["total"] == 0
    with Server(rec.capture) as srv:
        bare = srv.api("/api/source?function=leaf_a")
    src = res["source"]
    H.log("source rows with costs: %r" % [r for r in src["rows"] if r["total"]])
    f = api["files"][0]
    assert f["file"].endswith("tests/fixtures/ratio.c") and f["readable"], f
    assert sum(l["total"] for l in f["lines"]) == api["function_total"] > 0, api
    # leaf_a's own total in the function table equals the lines' sum.
    flat = {r["name"]: r for r in srv_flat(rec.capture)}
    assert api["function_total"] == flat["leaf_a"]["total"], (api["function_total"], flat["leaf_a"])
    with open(os.path.join(H.REPO, "tests", "fixtures", "ratio.c")) as fh:
        text = fh.read().split("\n")
    costed = [r for r in src["rows"] if r["total"] is not None]
    assert {(r["line"], r["self"], r["total"]) for r in costed} == \
        {(l["line"], l["self"], l["total"]) for l in f["lines"]}, (costed, f["lines"])
    for r in src["rows"]:
        assert r["text"] == text[r["line"] - 1], (r, text[r["line"] - 1])
    assert any("leaf_a" in r["text"] for r in src["rows"]), src["rows"]
    # Without --source-dir the relative path is not read: costs only, and why.
    assert not bare["files"][0]["readable"] and "source-dir" in bare["files"][0]["why"], bare
    assert "text" not in bare["files"][0]
    # The zone: in the URL, shaded, and what the flame graph answers.
    assert not zone["shade"]["hidden"] and not zone["chip"]["hidden"], zone
    assert zone["total"] == window["total"] and 0 < zone["total"] < zone["whole"], zone


@H.timeout(300)
def test_source_view_of_a_python_function():
    """A Python function's row is labelled "inner (/path/calls.py)" but is
    the function inner of that file: /api/flat gives that identity apart
    from the label, and clicking the row opens a source view with inner's
    lines (before, the page sent the label as the name: 0 lines, 0 total).
    /api/source still takes the label (old URLs), and file= narrows."""
    calls = os.path.join(H.REPO, "tests", "fixtures", "python", "calls.py")
    rec = H.cached_record("py-calls", ["/usr/bin/python3", calls, "0.5"])
    with Server(rec.capture) as srv:
        rows = srv.api("/api/flat?limit=1000&sort=total")["rows"]
        label = "inner (%s)" % calls
        row = next((r for r in rows if r["name"] == label), None)
        assert row, [r["name"] for r in rows if ".py" in r["name"]]
        assert row["function"] == "inner" and row["file"] == calls, row
        # A native row: its recorded name, no file.
        native = next(r for r in rows if r["kind"] == "function" and ".py" not in r["name"])
        assert native.get("function") and "file" not in native, native
        q = "/api/source?function=inner&file=" + urllib.parse.quote(calls)
        api = srv.api(q)
        old = srv.api("/api/source?function=" + urllib.parse.quote(label))
        other = srv.api("/api/source?function=inner&file=/elsewhere/calls.py")
        res = pages(srv, {"source": {"name": label, "hash": "view=table&sort=total"}}, "py-source")
    H.log("inner: flat total %d, source %r" % (row["total"], api["files"]))
    assert row["total"] > 0 and api["function_total"] == row["total"], (row, api["function_total"])
    assert [f["file"] for f in api["files"]] == [calls], api
    lines = {l["line"]: l["total"] for l in api["files"][0]["lines"]}
    assert sum(lines.values()) == row["total"], lines
    # inner's body is lines 16-19 of calls.py (INNER_FIRST..INNER_LAST).
    assert all(16 <= n <= 19 for n in lines), lines
    assert old["function_total"] == row["total"] and old["files"] == api["files"], old
    assert other["function_total"] == 0 and other["files"] == [], other
    src = res["source"]
    assert "fn=inner" in src["hash"] and "fnfile=" in src["hash"], src["hash"]
    costed = {r["line"]: r["total"] for r in src["rows"] if r["total"] is not None}
    assert costed == lines, (costed, lines)
    assert src["head"].startswith("inner (%s): " % calls), src["head"]
    with open(calls) as fh:
        text = fh.read().split("\n")
    for r in src["rows"]:
        assert r["text"] == text[r["line"] - 1], (r, text[r["line"] - 1])


def test_source_of_a_cxx_method_by_its_identity():
    """A C++ row is labelled demangled ("ns::Burner::method(int)") while its
    frames are named as the symbol table does (_ZN2ns6Burner6methodEi): the
    row's function is the recorded name and /api/source answers for it
    (before: the page sent the label, 0 lines); the label works too."""
    rec = H.cached_record("cxx_hot", [H.fixture("cxx_hot"), "1"])
    with Server(rec.capture) as srv:
        rows = srv.api("/api/flat?limit=1000")["rows"]
        row = next(r for r in rows if r["name"] == "ns::Burner::method(int)")
        assert row["function"] == "_ZN2ns6Burner6methodEi" and "file" not in row, row
        api = srv.api("/api/source?function=" + row["function"])
        old = srv.api("/api/source?function=" + urllib.parse.quote(row["name"]))
    assert api["function_total"] == row["total"] > 0, (api["function_total"], row)
    assert api["files"] and api["files"][0]["file"].endswith("cxx_hot.cc"), api["files"]
    assert sum(l["total"] for l in api["files"][0]["lines"]) == row["total"], api["files"]
    assert old["function_total"] == row["total"] and old["files"] == api["files"], old


def srv_flat(capture):
    with Server(capture) as srv:
        return srv.api("/api/flat?limit=1000&sort=total")["rows"]


# ---------------------------------------------------------------- HTTP surface

def _corpus(name):
    path = os.path.join(CORPUS, name)
    assert os.path.exists(path), path
    return path


def test_nothing_outside_the_assets_is_served():
    with Server(_corpus("demo.msc")) as srv:
        st, hdr, body = srv.get("/")
        assert st == 200 and b"<title>microscope" in body, (st, body[:200])
        assets = re.findall(r'(?:src|href)="(/[^"]+)"', body.decode())
        assert assets, body
        for a in assets:
            st, hdr, _ = srv.get(a)
            assert st == 200 and hdr.get("ETag"), (a, st, hdr)
        for path in ["/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
                     "/assets/..%2f..%2f..%2fetc%2fpasswd", "/%2fetc%2fpasswd", "//etc/passwd",
                     "/index.html/../../../etc/passwd", "/api/../../etc/passwd",
                     "/assets/%2e%2e/index.html", "/etc/passwd", "/Makefile",
                     "/web/embed.py", "/src/main.ts", "/api", "/api/", "/api/flat/",
                     "/api/..%2fflat", "/index.html%00.js", "/%00", "/assets/",
                     "/" + "a" * 2000, "/.%2e/.%2e/proc/self/environ"]:
            st, _, body = srv.get(path)
            assert st in (400, 404), "%s: status %d" % (path, st)
            assert b"root:" not in body and b"PATH=" not in body, path


def test_gzip_for_clients_that_take_it():
    """Accept-Encoding gzip: the flame graph and index.html come gzipped,
    inflating to the identity bytes, under their own ETag (which a 304
    then echoes); both representations say Vary: Accept-Encoding; q=0,
    identity or no header get the identity body; an answer under 1 KiB
    goes as it is."""
    takes = {"gzip, deflate, br, zstd": True, "GZIP": True, "br;q=1, gzip;q=0.5": True,
             "*": True, "identity": False, "gzip;q=0": False, "gzip; q=0.000": False,
             "deflate, br": False, "gzipx": False}
    with Server(_corpus("demo.msc")) as srv:
        for path in ("/api/flamegraph?min_share=0", "/"):
            st, h, plain = srv.get(path)
            assert st == 200 and "Content-Encoding" not in h and \
                h.get("Vary") == "Accept-Encoding", (path, h)
            for ae, want in takes.items():
                st, hz, body = srv.get(path, headers={"Accept-Encoding": ae})
                got = hz.get("Content-Encoding") == "gzip"
                H.log("%s, Accept-Encoding %r: %s, %d of %d bytes, ETag %s" % (
                    path, ae, hz.get("Content-Encoding"), len(body), len(plain), hz["ETag"]))
                assert st == 200 and got == want, (path, ae, hz)
                if got:
                    assert gzip.decompress(body) == plain and len(body) < len(plain) // 2
                    assert hz["ETag"] == h["ETag"][:-1] + '-gz"', (hz["ETag"], h["ETag"])
                    assert hz.get("Vary") == "Accept-Encoding", hz
                else:
                    assert body == plain and hz["ETag"] == h["ETag"], (ae, hz)
            st, h3, b3 = srv.get(path, headers={"Accept-Encoding": "gzip",
                                                "If-None-Match": h["ETag"][:-1] + '-gz"'})
            assert st == 304 and not b3 and h3["ETag"] == h["ETag"][:-1] + '-gz"', (st, h3)
            st, h4, _ = srv.get(path, headers={"If-None-Match": h["ETag"]})
            assert st == 304 and h4["ETag"] == h["ETag"], (st, h4)
        st, h, body = srv.get("/api/calltree?node=0&limit=1",
                              headers={"Accept-Encoding": "gzip"})
        assert st == 200 and len(body) < 1024 and "Content-Encoding" not in h, (len(body), h)


def test_bad_queries_get_400_with_a_message():
    with Server(_corpus("offcpu-sleeper.msc")) as srv:
        for q in ["/api/flat?limit=abc", "/api/flat?limit=0", "/api/flat?limit=99999",
                  "/api/flat?thread=-1", "/api/flat?start=1e9", "/api/flat?start=10&end=5",
                  "/api/flat?event=no-such-event", "/api/flat?%zz=1", "/api/flat?limit",
                  "/api/flat?limit=1&limit=2", "/api/flat?focus=" + "x" * 600,
                  "/api/flat?look=evil", "/api/flamegraph?min_share=nan",
                  "/api/flat?thread=4294967295", "/api/flat?thread=999", "/api/flat?buckets=3",
                  "/api/lanes?buckets=100000", "/api/calltree?node=99999999",
                  "/api/diff", "/api/flat?focus=a%00b", "/api/offcpu?by=mood",
                  "/api/flat?" + "&".join("k%d=1" % i for i in range(40)),
                  "/api/flat?granularity=bogus", "/api/flat?label=pid", "/api/flat?label=pid:", "/api/groups?by=state", "/api/source", "/api/source?function=", "/api/intervals?limit=5001"]:
            st, hdr, body = srv.get(q)
            assert st == 400, "%s: status %d %s" % (q[:80], st, body[:200])
            msg = json.loads(body)["error"]
            assert msg, q
            H.log("%s -> 400 %s" % (q[:60], msg))
        # Oversized request line: refused by the HTTP library's limits.
        st, _, _ = srv.get("/api/flat?focus=" + "y" * 200000)
        assert st in (400, 413, 414, 431), st
        st, hdr, _ = srv.get("/api/flat", method="POST")
        assert st == 405 and "GET" in hdr.get("Allow", ""), (st, hdr)
        st, _, _ = srv.get("/api/info", headers={"Host": "evil.example:80"})
        assert st == 403, "a foreign Host name got %d (DNS rebinding)" % st
        # ETags: equal queries, equal tags; If-None-Match answers 304.
        st, h1, b1 = srv.get("/api/flat?limit=5&sort=total")
        st2, h2, _ = srv.get("/api/flat?sort=total&limit=5")
        assert st == st2 == 200 and h1["ETag"] == h2["ETag"], (h1, h2)
        assert "immutable" in h1["Cache-Control"], h1
        st, h3, b3 = srv.get("/api/flat?sort=total&limit=5", headers={"If-None-Match": h1["ETag"]})
        assert st == 304 and not b3, st
        _, h4, _ = srv.get("/api/flat?sort=total&limit=6")
        assert h4["ETag"] != h1["ETag"]


async def _one(port, path):
    try:
        r, w = await asyncio.open_connection("127.0.0.1", port)
        w.write(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (
            path, port)).encode())
        await w.drain()
        data = await asyncio.wait_for(r.read(), 60)
        w.close()
        m = re.match(rb"HTTP/1\.1 (\d+)", data)
        return int(m.group(1)) if m else "empty"
    except (ConnectionResetError, ConnectionRefusedError, BrokenPipeError):
        return "refused"


async def _many(port, n):
    paths = ["/api/flamegraph?min_share=%d" % (i % 50) for i in range(n)]
    return await asyncio.gather(*(_one(port, p) for p in paths))


@H.timeout(300)
def test_1000_concurrent_requests_bounded_rss():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    with Server(_corpus("demo.msc")) as srv:
        srv.api("/api/info")
        before = srv.vm_hwm_kb()
        t = time.monotonic()
        res = asyncio.run(_many(srv.port, 1000))
        took = time.monotonic() - t
        after = srv.vm_hwm_kb()
        again = srv.api("/api/flamegraph?min_share=1")
    counts = {}
    for r in res:
        counts[r] = counts.get(r, 0) + 1
    H.log("1000 concurrent: %r in %.1f s; peak RSS %d -> %d kB" % (counts, took, before, after))
    assert set(counts) <= {200, 503, "refused", "empty"}, counts
    assert counts.get(200, 0) >= 256, counts
    assert after - before < 150 * 1024, "peak RSS grew by %d kB" % (after - before)
    assert again["nodes"], "the server stopped answering"


def _non_loopback_ipv4():
    try:
        out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    for m in re.finditer(r"inet (\d+\.\d+\.\d+\.\d+)/", out):
        if not m.group(1).startswith("127."):
            return m.group(1)
    return None


def test_default_bind_refuses_non_loopback():
    addr = _non_loopback_ipv4()
    if not addr:
        H.skip("this machine has no non-loopback IPv4 address")
    with Server(_corpus("demo.msc")) as srv:
        assert srv.host == "127.0.0.1", srv.url
        try:
            socket.create_connection((addr, srv.port), timeout=5).close()
            raise AssertionError("a connection to %s:%d was accepted" % (addr, srv.port))
        except (ConnectionRefusedError, socket.timeout, OSError) as e:
            H.log("connect %s:%d: %s (refused as expected)" % (addr, srv.port, e))
    # --bind another address: a warning, and then that address is served.
    with Server(_corpus("demo.msc"), "--bind", "0.0.0.0") as srv:
        st, _, _ = srv.get("/api/info", host=addr, headers={"Host": "%s:%d" % (addr, srv.port)})
        assert st == 200, st
    assert "warning" in srv.stderr and "0.0.0.0" in srv.stderr, srv.stderr


def test_repeated_event_names_are_selectable():
    """serve DIR of two recordings at 99 and 499 Hz (two cpu-clock events,
    one per period): /api/info names them cpu-clock#1 and cpu-clock#2, as
    --event takes them, and event=cpu-clock#2 answers for the second
    recording's samples; the bare name is refused as ambiguous (400)."""
    H.require_root()
    d = H.tmp_path("two-served")
    for hz in ("99", "499"):
        H.run([H.BIN, "record", "-q", "-F", hz, "--budget", "0", "--continuous", d,
               "--segment", "10s", "-d", "1.5", "--", H.fixture("spinner"), "30"], timeout=120)

    def samples(*args):
        m = re.search(r"^  samples\s+(\d+)", H.report(d, *args).stdout, re.M)
        return int(m.group(1))

    want = [samples("--event", "cpu-clock#1"), samples("--event", "cpu-clock#2")]
    assert want[1] > 2 * want[0] > 0, want
    with Server(d) as srv:
        info = srv.api("/api/info")
        names = [e["name"] for e in info["events"]]
        assert names[:2] == ["cpu-clock#1", "cpu-clock#2"], names
        for i, n in enumerate(want):
            fg = srv.api("/api/flamegraph?min_share=0&event=cpu-clock%%23%d" % (i + 1))
            assert fg["samples"] == n, (i, fg["samples"], n)
        st, _, body = srv.get("/api/flamegraph?event=cpu-clock")
        assert st == 400 and b"choose one as 'cpu-clock#N'" in body, (st, body[:300])
