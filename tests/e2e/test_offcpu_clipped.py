"""Off-CPU waits cut by the recording window (issue 21, item 4).

A wait that began before the recording or was still going at its stop is
kept in the capture with its unknown start/end and only its part inside the
window as weight.  Every default view counts that part, marked clipped:
`report --off-cpu` (tables, tree, interval list), `convert --weight
off-cpu-ns` to folded (a "[clipped by the recording window]" leaf) and to
pprof (samples labelled clipped); `convert --complete-only` leaves them out.
"""
import os
import re
import subprocess
import sys
import time

import helpers as H
from test_offcpu import intervals

CLIP = "[clipped by the recording window]"
WINDOW_S = 4
WINDOW_TOLERANCE_NS = 300_000_000   # the 4.0 s +- 0.3 s


def _convert(capture, out, *args):
    argv = [H.BIN, "convert", capture, "-o", out] + list(args)
    return H.run(argv, check=True)


def _folded_clipped_ns(capture, name, *args):
    out = H.tmp_path(name)
    proc = _convert(capture, out, "--to", "folded", "--weight", "off-cpu-ns", *args)
    with open(out) as f:
        prof = H.parse_folded(f.read(), out)
    clipped = sum(n for st, n in prof.items() if st and st[-1] == CLIP)
    return clipped, H.total(prof), proc


def _state_table_clipped_ms(out):
    """The clipped ms of the "off-CPU by state" table of report --off-cpu."""
    sec = out.split("off-CPU by state", 1)
    assert len(sec) == 2, "no state table:\n" + out
    body = sec[1].split("\n\n", 1)[0]
    return sum(float(m.group(1)) for m in
               re.finditer(r"\(([\d.]+) ms clipped by the recording window\)", body))


def test_sleep_spanning_the_window_counts_the_window():
    """`sleep 10` asleep across a 4 s recording: 4.0 s +- 0.3 s off-CPU,
    clipped, in report --off-cpu, folded and pprof; never 0, never 10 s."""
    proc = subprocess.Popen(["sleep", "10"])
    try:
        time.sleep(0.3)  # let it reach nanosleep
        rec = H.record(pids=[proc.pid], duration=WINDOW_S, extra=["--off-cpu"])
    finally:
        proc.kill()
        proc.wait()
    ivs = [iv for iv in intervals(rec.capture) if iv.tid == proc.pid]
    assert len(ivs) == 1, "\n".join(iv.text() for iv in ivs)
    iv = ivs[0]
    H.log(iv.text())
    assert iv.f["start"] == "unknown" and iv.f["end"] == "unknown", iv.text()
    assert iv.f["clipped"] == "yes", iv.text()
    assert abs(iv.ns - WINDOW_S * 1e9) <= WINDOW_TOLERANCE_NS, iv.text()

    # report --off-cpu: counted, marked, in the tables and the tree
    out = H.report(rec.capture, "--off-cpu").stdout
    ms = _state_table_clipped_ms(out)
    H.log("report --off-cpu: %.1f ms clipped" % ms)
    assert abs(ms * 1e6 - WINDOW_S * 1e9) <= WINDOW_TOLERANCE_NS, out
    m = re.search(r"clipped\s+1 interval cut", out)
    assert m, "the summary does not count one clipped interval:\n" + out
    assert CLIP in out, "the tree does not mark the clipped time:\n" + out
    assert "[clipped]" in out, "the interval list does not mark it:\n" + out

    # convert --weight off-cpu-ns (folded): the clipped leaf holds the window
    clipped, total, _ = _folded_clipped_ns(rec.capture, "span.folded")
    H.log("folded: %d ns clipped of %d ns" % (clipped, total))
    assert abs(clipped - WINDOW_S * 1e9) <= WINDOW_TOLERANCE_NS, (clipped, total)
    assert clipped == iv.ns, (clipped, iv.ns)
    # --complete-only leaves it out (and says nothing is left): not ignored
    out_path = H.tmp_path("span-complete.folded")
    _convert(rec.capture, out_path, "--to", "folded", "--weight", "off-cpu-ns",
             "--complete-only")
    with open(out_path) as f:
        assert CLIP not in f.read(), "--complete-only was ignored"

    # pprof: the same nanoseconds, in samples labelled clipped
    pb = H.tmp_path("span.pb.gz")
    p = _convert(rec.capture, pb, "--to", "pprof", "--weight", "off-cpu-ns")
    assert "1 off-CPU intervals cut by the recording's edges count" in p.stderr, p.stderr
    back = H.tmp_path("span-back.folded")
    _convert(pb, back, "--to", "folded", "--event", "off-cpu")
    with open(back) as f:
        prof = H.parse_folded(f.read(), back)
    H.log("pprof: %d ns" % H.total(prof))
    assert abs(H.total(prof) - WINDOW_S * 1e9) <= WINDOW_TOLERANCE_NS, H.total(prof)


CUT_SCRIPT = """
import os, time
os.read(0, 1)            # blocked before the recording: start unknown
t = time.monotonic()
while time.monotonic() - t < 0.2:
    pass
os.read(0, 1)            # still blocked at the stop: end unknown
"""


def test_waits_cut_at_one_end():
    """A wait that began before the recording and one still going at its
    stop: each counts exactly its part inside the window, marked clipped."""
    proc = subprocess.Popen([sys.executable, "-c", CUT_SCRIPT], stdin=subprocess.PIPE)
    rp = None
    try:
        time.sleep(0.3)  # let it block in read
        rp, capture, _ = H.start_record(pids=[proc.pid], duration=4, extra=["--off-cpu"])
        deadline = time.monotonic() + 60
        while not H.bpf_objects_held_by(rp.pid)["link"]:
            assert rp.poll() is None and time.monotonic() < deadline, \
                "the recorder never attached: %r" % (rp.communicate(),)
            time.sleep(0.05)
        time.sleep(1.0)  # well inside the window
        proc.stdin.write(b"x")
        proc.stdin.flush()
        _, err = rp.communicate(timeout=120)
        assert rp.returncode == 0, err
    finally:
        if rp and rp.poll() is None:
            rp.kill()
            rp.wait()
        proc.kill()
        proc.wait()
    ivs = [iv for iv in intervals(capture) if iv.tid == proc.pid]
    for iv in ivs:
        H.log(iv.text())
    head = [iv for iv in ivs if iv.f["start"] == "unknown" and iv.f["end"] == "known"]
    tail = [iv for iv in ivs if iv.f["start"] == "known" and iv.f["end"] == "unknown"]
    assert len(head) == 1 and len(tail) == 1, "\n".join(iv.text() for iv in ivs)
    assert not [iv for iv in ivs if iv.f["start"] == iv.f["end"] == "unknown"], \
        "\n".join(iv.text() for iv in ivs)
    for iv in head + tail:
        assert iv.f["clipped"] == "yes" and iv.ns == iv.end_ns - iv.start_ns, iv.text()
    # the first wait ends about 1 s after the attach, the last one runs from
    # 0.2 s later to the stop (4 s window): never stretched past the window
    assert 500_000_000 <= head[0].ns <= 3_500_000_000, head[0].text()
    assert tail[0].start_ns > head[0].end_ns, tail[0].text()
    assert 500_000_000 <= tail[0].ns <= 3_500_000_000, tail[0].text()
    assert head[0].ns + tail[0].ns <= 4_000_000_000, (head[0].text(), tail[0].text())
    clipped, total, _ = _folded_clipped_ns(capture, "cut.folded")
    want = head[0].ns + tail[0].ns
    assert clipped == want, (clipped, want)
    assert total == want + sum(iv.ns for iv in ivs if iv.complete), (total, want)
    ms = _state_table_clipped_ms(H.report(capture, "--off-cpu").stdout)
    assert abs(ms * 1e6 - want) <= 0.2e6, (ms, want)
