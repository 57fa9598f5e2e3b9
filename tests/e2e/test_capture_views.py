"""`microscope report` and `microscope convert --to folded` on a real
capture (issue 2, item 9): deterministic output, the folded format as
specified, report's options, and a damaged capture rejected cleanly."""
import os

import helpers as H


def _capture():
    rec = H.cached_record("ratio", [H.fixture("ratio")])
    return rec.capture


def test_folded_is_sorted_with_one_line_per_stack():
    text = H.convert_folded_text(_capture(), out=H.tmp_path("a.folded"))
    H.parse_folded(text)  # one line per stack, positive counts
    stacks = [line.rpartition(" ")[0] for line in text.splitlines() if line.strip()]
    assert stacks, "empty folded output"
    unsorted = [(a, b) for a, b in zip(stacks, stacks[1:]) if a > b]
    assert not unsorted, "folded lines are not sorted by stack (byte order), e.g. %r before %r" % (
        unsorted[0])


def test_report_and_convert_are_deterministic():
    cap = _capture()
    a = H.convert_folded_text(cap, out=H.tmp_path("a.folded"))
    b = H.convert_folded_text(cap, out=H.tmp_path("b.folded"))
    assert a == b, "two conversions of one capture differ"
    t1 = H.convert_folded_text(cap, threads=True, out=H.tmp_path("a.threads.folded"))
    t2 = H.convert_folded_text(cap, threads=True, out=H.tmp_path("b.threads.folded"))
    assert t1 == t2, "two --threads conversions of one capture differ"
    r1 = H.report(cap).stdout
    r2 = H.report(cap).stdout
    assert r1 == r2, "two reports of one capture differ"


def test_report_options():
    cap = _capture()
    for args in ([], ["--sort", "self"], ["--sort", "total"], ["--limit", "5"], ["--threads"],
                 ["--min-percent", "5"]):
        out = H.report(cap, *args).stdout
        assert "leaf_a" in out, "report %s does not mention leaf_a:\n%s" % (
            " ".join(args), out[:3000])


def test_report_rejects_truncated_capture():
    cap = _capture()
    with open(cap, "rb") as f:
        data = f.read()
    bad = H.tmp_path("truncated.msc")
    with open(bad, "wb") as f:
        f.write(data[:len(data) // 2])
    proc = H.report(bad, check=False)
    H.log("stderr: " + proc.stderr.strip())
    assert proc.returncode == 1, "report of a truncated capture exited %d (expected 1)" % (
        proc.returncode)
    assert os.path.basename(bad) in proc.stderr, \
        "the error does not name the file:\n%s" % proc.stderr
