"""Off-CPU intervals (issue 5) in the export formats (issue 6).

One recording of the sleeper fixture (tests/fixtures/offcpu.c: ten 100 ms
nanosleeps, each logged with its own CLOCK_MONOTONIC) with --off-cpu, shared
with test_offcpu.  The truths are the capture's own intervals, read from
`microscope report --off-cpu` (tid, start_ns, end_ns, ns, start/end known):
pprof's off-cpu/nanoseconds total equals the intervals' (complete, and
clipped ones' part inside the window) exactly, the
Chrome trace draws every interval at its bounds (integer µs from
otherData.t0_ns, exact ns in args) both as an X slice (the slices nest per
thread) and in the "samples" speedscope reads, speedscope gets an off-CPU profile per thread
whose weights are the complete intervals' ns, folded --weight off-cpu-ns sums
to the same total.
"""
import json
import re

import helpers as H
import test_formats as F
import test_offcpu as OC

LONG_NS = 90_000_000  # the fixture's sleeps are 100 ms


def _recording():
    rec = OC.record_offcpu("sleeper", key="offcpu-sleeper")
    sleeps = OC.fixture_lines(rec, "sleep")
    assert len(sleeps) == 10, "fixture logged %d sleeps: %r" % (len(sleeps), rec.fixture_lines)
    ivs = OC.intervals(rec.capture)
    complete = [iv for iv in ivs if iv.complete]
    assert complete, "no complete intervals"
    return rec, sleeps, ivs, complete


def _report_complete_ns(cap):
    """report --off-cpu's "complete N intervals" line, exact ns from the listing."""
    out = H.report(cap, "--off-cpu").stdout
    m = re.search(r"complete\s+(\d+) interval", out)
    assert m, out[:1500]
    return int(m.group(1))


def test_pprof_off_cpu_total_matches_report():
    rec, sleeps, ivs, complete = _recording()
    assert _report_complete_ns(rec.capture) == len(complete)
    # complete intervals plus the part inside the window of clipped ones
    total = sum(iv.ns for iv in ivs)
    out = H.tmp_path("sleeper.pb.gz")
    proc = F._convert(rec.capture, out)
    H.log(proc.stderr)
    assert "off-CPU intervals summed" in proc.stderr, proc.stderr
    text = F._pprof("-top", "-nodecount=1000", "-nodefraction=0", "-sample_index=off-cpu",
                    "-symbolize=none", "-unit=ns", out).stdout
    H.log(text[:2000])
    assert "Type: off-cpu" in text, text[:500]
    m = re.search(r"of (\d+)ns total", text)
    assert m, text[:800]
    assert int(m.group(1)) == total, \
        "pprof off-cpu total %s ns, intervals (complete + clipped) %d ns" % (m.group(1), total)
    # the sleep stack: nanosleep and the fixture's functions carry the sleeper's ns
    cum = {}
    for line in text.splitlines():
        r = re.match(r"\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+(\d+)(?:ns)?\s+[\d.]+%\s+(.+?)\s*$",
                     line)
        if r:
            cum[r.group(3)] = int(r.group(2))
    want = sum(iv.ns for iv in complete if "do_sleeps" in iv.frames())
    assert want >= 10 * LONG_NS and cum.get("do_sleeps") == want, \
        "pprof cum of do_sleeps %r ns, intervals through do_sleeps %d ns" % (
            cum.get("do_sleeps"), want)
    assert any("nanosleep" in k and v >= 10 * LONG_NS for k, v in cum.items()), cum
    # the default sample type (the last one) is still CPU time
    dflt = F._pprof("-top", "-symbolize=none", out).stdout
    assert "Type: cpu" in dflt, dflt[:500]
    # pprof -> capture -> pprof keeps every value and location chain
    back = H.tmp_path("sleeper.back.msc")
    F._convert(out, back)
    again = H.tmp_path("sleeper.again.pb.gz")
    F._convert(back, again)
    a, _ = F._raw_without_labels(out)
    b, _ = F._raw_without_labels(again)
    assert a == b, "pprof -raw differs after pprof -> capture -> pprof:\n%s\n---\n%s" % (a, b)
    # folded --weight off-cpu-ns: the same total
    folded = H.run([H.BIN, "convert", rec.capture, "--to", "folded", "--weight", "off-cpu-ns"],
                   check=True).stdout
    assert sum(int(l.rsplit(" ", 1)[1]) for l in folded.splitlines() if l) == total


@H.timeout(300)
def test_chrome_trace_draws_intervals_at_their_bounds():
    rec, sleeps, ivs, complete = _recording()
    tid = sleeps[0]["tid"]
    out = H.tmp_path("sleeper.trace.json")
    proc = F._convert(rec.capture, out)
    H.log(proc.stderr)
    with open(out) as f:
        doc = json.load(f)
    t0 = doc["otherData"]["t0_ns"]
    us = lambda ns: (ns - t0) // 1000  # one floor for every boundary
    slices = F._x_nest(doc["traceEvents"])
    off = {(e["tid"], e["args"]["start_ns"], e["args"]["end_ns"]): e
           for e, _ in slices if e["name"].startswith("off-CPU: ")}
    assert len(off) == len(ivs), "%d off-CPU slices for %d intervals" % (len(off), len(ivs))
    bad = []
    for iv in ivs:
        e = off.get((iv.tid, iv.start_ns, iv.end_ns))
        if not e:
            bad.append("no slice for " + iv.text())
            continue
        # µs from t0, floored (Perfetto reads integer µs exactly)
        if e["ts"] != us(iv.start_ns) or e["ts"] + e["dur"] != us(iv.end_ns):
            bad.append("slice [%d, %d] us, interval [%d, %d] ns - t0 %d" % (
                e["ts"], e["ts"] + e["dur"], iv.start_ns, iv.end_ns, t0))
        if iv.complete == bool(e["args"].get("start_unknown") or e["args"].get("end_unknown")):
            bad.append("edge flags wrong: %r for %s" % (e["args"], iv.text()))
    assert not bad, "\n".join(bad)
    long_ = sorted((e for (t, _, _), e in off.items()
                    if t == tid and "start_unknown" not in e["args"]
                    and "end_unknown" not in e["args"] and e["dur"] > LONG_NS / 1000),
                   key=lambda e: e["ts"])
    H.log("sleeper off-CPU slices: " + ", ".join(
        "%s %.3f ms" % (e["name"], e["dur"] / 1000) for e in long_))
    assert len(long_) == 10, "%d long off-CPU slices on the sleeper thread" % len(long_)
    for e, s in zip(long_, sorted(sleeps, key=lambda s: s["start_ns"])):
        assert e["name"].startswith("off-CPU: sleep"), e
        assert abs(e["args"]["start_ns"] - s["start_ns"]) <= OC.SPAN_TOLERANCE_NS, (e, s)
        assert abs(e["args"]["end_ns"] - s["end_ns"]) <= OC.SPAN_TOLERANCE_NS, (e, s)
    # on-CPU leaf slices of the sleeper never overlap its off-CPU time
    spans = sorted((us(e["args"]["start_ns"]), us(e["args"]["end_ns"]))
                   for (t, _, _), e in off.items() if t == tid)
    for e, _ in slices:
        if e["tid"] != tid or e["name"].startswith("off-CPU: ") or not e["dur"]:
            continue
        lo, hi = e["ts"], e["ts"] + e["dur"]
        inside = [sp for sp in spans if lo <= sp[0] and sp[1] <= hi]
        if not inside:
            assert not any(sp[0] < hi and lo < sp[1] for sp in spans), \
                ("sampled slice overlaps off-CPU time", e)
    # speedscope reads "samples": each interval is an entry at its start
    # whose leaf is its off-CPU frame, and the next entry is at its end
    frames = doc["stackFrames"]
    entries = [smp for smp in doc["samples"] if smp["tid"] == tid]
    at = {}
    for a, b in zip(entries, entries[1:]):
        if "sf" in a and frames[str(a["sf"])]["name"].startswith("off-CPU: "):
            at[a["ts"]] = b["ts"]
    for e in long_:
        assert at.get(e["ts"]) == e["ts"] + e["dur"], \
            ("samples do not draw", e, at.get(e["ts"]))
    total, _ = F._speedscope_totals(doc)
    drawn = sum(v for k, v in total.items() if k.startswith("off-CPU: sleep"))
    assert drawn >= sum(e["dur"] for e in long_), (drawn, total)
    F._speedscope(out, "off-CPU: sleep", "chrome-offcpu")


@H.timeout(300)
def test_speedscope_off_cpu_profile():
    rec, sleeps, ivs, complete = _recording()
    out = H.tmp_path("sleeper.speedscope.json")
    proc = F._convert(rec.capture, out)
    H.log(proc.stderr)
    with open(out) as f:
        doc = json.load(f)
    nframes = len(doc["shared"]["frames"])
    per_thread = {}
    for iv in complete:
        per_thread[iv.tid] = per_thread.get(iv.tid, 0) + iv.ns
    got = {}
    for p in doc["profiles"]:
        assert p["type"] == "sampled" and len(p["samples"]) == len(p["weights"])
        assert p["endValue"] == sum(p["weights"])
        assert all(0 <= i < nframes for s in p["samples"] for i in s)
        if p["name"].endswith(" off-CPU"):
            assert p["unit"] == "nanoseconds"
            got[int(p["name"][:-len(" off-CPU")].rsplit("-", 1)[1])] = p["endValue"]
    assert got == per_thread, "off-CPU profiles %r, complete intervals per tid %r" % (
        got, per_thread)
    sleeper = [p for p in doc["profiles"]
               if p["name"].endswith("-%d off-CPU" % sleeps[0]["tid"])][0]
    names = {doc["shared"]["frames"][i]["name"] for s in sleeper["samples"] for i in s}
    assert "do_sleeps" in names or "sleep_once" in names, names
    F._speedscope(out, "main", "speedscope-offcpu")
