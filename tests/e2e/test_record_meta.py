"""The recording's META keys and the sampling event's name (issue 13).

Every key `microscope record` writes into the raw stream is a row of
docs/capture-format.md's "Recording meta keys" table, and its value parses
as the type that row gives.  `-e cycles` names the event the collector really
used (cycles where the CPU has it, cpu-clock where it fell back) in META,
in the report and in pprof's sample_type; a stream that says cycles replays
as cycles, so the name comes from the stream, not from a constant.
"""
import os
import re
import shutil

import helpers as H
import rawstream as R

TYPE_RE = {
    "text": r"[^\0]*",
    "u64": r"[0-9]+",
    "hex u64": r"0x[0-9a-f]+",
    "0/1": r"[01]",
    "number": r"[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?",
}


def _docs_meta():
    """{key: (type, unit)} from the docs table."""
    with open(os.path.join(H.REPO, "docs", "capture-format.md")) as f:
        text = f.read()
    assert "### Recording meta keys" in text, "docs/capture-format.md has no meta key table"
    section = text.split("### Recording meta keys", 1)[1].split("\n#", 1)[0]
    rows = {}
    for m in re.finditer(r"^\| `([^`]+)` \| ([^|]+?) \| ([^|]+?) \|", section, re.M):
        assert m.group(1) not in rows, "key %s listed twice" % m.group(1)
        rows[m.group(1)] = (m.group(2), m.group(3))
    assert len(rows) > 20, "the docs table lists only %d keys" % len(rows)
    return rows


def _recorded():
    """spinner (1 s) recorded once with options that make most keys appear:
    -e cycles (event.note where it falls back), --budget, --off-cpu."""
    raw = os.path.join(H.SESSION_TMP, "rec-meta-raw")
    rec = H.cached_record("meta", [H.fixture("spinner"), "1"], save_raw=raw,
                          extra=["-e", "cycles", "--budget", "50", "--off-cpu"])
    return rec, raw


def _cycles_supported():
    """Whether this machine counts cycles, as perf sees it."""
    perf = shutil.which("perf")
    if not perf:
        H.skip("perf (Debian linux-perf) is not installed: run `make deps`")
    proc = H.run([perf, "stat", "-e", "cycles", "true"], quiet=True)
    return "<not supported>" not in proc.stderr and proc.returncode == 0


def _pprof_sample_types(capture):
    """["samples/count", "cpu/nanoseconds", ...] of `convert` to pprof."""
    go = shutil.which("go")
    if not go:
        H.skip("go (Debian golang-go) is not installed: run `make deps`")
    out = capture + ".pb.gz"
    H.run([H.BIN, "convert", capture, "-o", out], check=True)
    env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local",
               HOME=os.environ.get("HOME", "/root"), PPROF_TMPDIR=H.TMP)
    raw = H.run([go, "tool", "pprof", "-raw", "-symbolize=none", out], env=env,
                check=True, timeout=180).stdout
    lines = raw.splitlines()
    i = lines.index("Samples:")
    return lines[i + 1].split()


def _report_event(capture):
    out = H.report(capture).stdout
    m = re.search(r"^  event\s+(\S+) \(", out, re.M)
    assert m, "no event line in the report:\n" + out[:2000]
    return m.group(1)


def test_record_meta_keys_are_documented_with_their_type():
    """Each META key of a real recording is a docs row; its value parses as
    that row's type; no key is written twice (META command once)."""
    docs = _docs_meta()
    _, raw = _recorded()
    _, chunks = R.read(raw)
    pairs = R.meta(chunks)
    keys = [k for k, _ in pairs]
    H.log("%d META keys: %s" % (len(keys), " ".join(keys)))
    undocumented = [k for k in keys if k not in docs]
    assert not undocumented, "META keys missing from docs/capture-format.md: %s" % undocumented
    bad = ["%s=%r (%s)" % (k, v, docs[k][0]) for k, v in pairs
           if not re.fullmatch(TYPE_RE[docs[k][0]], v)]
    assert not bad, "values not of their documented type: %s" % bad
    twice = sorted({k for k in keys if keys.count(k) > 1})
    assert not twice, "META keys written more than once: %s" % twice
    for k in ("command", "event", "freq_hz", "perf.sample_type", "budget.pct", "off_cpu"):
        assert k in keys, "the recording wrote no META %s" % k
    assert dict(pairs)["off_cpu"] == "1" and dict(pairs)["event.requested"] == "cycles"


def test_record_cycles_names_the_event_really_used():
    """-e cycles: cycles where the CPU counts them, else cpu-clock (with
    META event.note saying why), in META, the report and pprof."""
    rec, raw = _recorded()
    expected = "cycles" if _cycles_supported() else "cpu-clock"
    meta = dict(R.meta(R.read(raw)[1]))
    H.log("perf: cycles %s; META event=%s note=%r" % (
        "supported" if expected == "cycles" else "not supported", meta.get("event"),
        meta.get("event.note")))
    assert meta["event"] == expected, "META event=%s, expected %s" % (meta["event"], expected)
    assert ("event.note" in meta) == (expected == "cpu-clock")
    assert _report_event(rec.capture) == expected
    types = _pprof_sample_types(rec.capture)
    if expected == "cycles":
        assert "cycles/count" in types and "cpu/nanoseconds" not in types, types
    else:
        assert "cpu/nanoseconds" in types and not any("cycles" in t for t in types), types


def test_record_replayed_stream_names_its_event():
    """The same stream with META event rewritten to the other event replays
    under that name: cycles counts cycles (no cpu/nanoseconds column), cpu-clock
    counts CPU time."""
    _, raw = _recorded()
    header, chunks = R.read(raw)
    for event, want in (("cycles", "cycles/count"), ("cpu-clock", "cpu/nanoseconds")):
        out = []
        for c in chunks:
            if c[0] == R.META:
                key = c[3].split(b"=", 1)[0]
                if key == b"event.note":
                    continue
                if key == b"event":
                    c = [c[0], c[1], c[2], b"event=" + event.encode()]
            out.append(c)
        path = H.tmp_path("stream-%s.msraw" % event)
        R.write(path, header, out)
        cap = H.tmp_path("replay-%s.msc" % event)
        H.record(output=cap, extra=["--replay", path], timeout=120)
        assert _report_event(cap) == event
        types = _pprof_sample_types(cap)
        assert want in types, "%s replay: pprof sample types %s" % (event, types)
        if event == "cycles":  # (off-cpu/nanoseconds is the --off-cpu event's)
            assert "cpu/nanoseconds" not in types, types
