"""Waker stacks with the recording's call-graph policy (issue 21, item 5).

tests/fixtures/offcpu_nofp.c (no frame pointers) in pingpong mode: main
writes a byte into a pipe that the other thread reads, then reads the answer.
Every interval of the other thread woken by main has main's stack at the
wakeup as its waker stack; with a DWARF stack copy (default auto, and dwarf)
its user part reaches main in >= 95 % of them; with frame pointers only it
cannot (libc's write keeps none), which shows the copy is what finds it.
"""
import helpers as H
from test_offcpu import intervals

ROUNDS = "3000"
MIN_SHARE = 95.0


def _woken_by_main(mode):
    """Intervals of the other thread woken by main's thread (the process's
    first thread: the lowest tid; the other thread is created by it)."""
    extra = ["--off-cpu", "--off-cpu-min", "0"]
    if mode:
        extra += ["--call-graph", mode]
    rec = H.record([H.fixture("offcpu_nofp"), "pingpong", ROUNDS], extra=extra)
    ivs = intervals(rec.capture)
    assert ivs, "no intervals"
    main_tid = min(iv.tid for iv in ivs)
    return [iv for iv in ivs if iv.cause == "task" and iv.tid != main_tid and
            iv.waker_tid == main_tid]


def _share_reaching_main(ivs):
    reach = [iv for iv in ivs if "main" in [f.strip() for f in iv.waker.split(";")]]
    return len(reach), H.percent(len(reach), len(ivs))


def test_dwarf_waker_stack_reaches_main():
    """Default (auto) and --call-graph dwarf: >= 95 % of main's waker
    stacks reach main through libc's write."""
    for mode in (None, "dwarf"):
        woken = _woken_by_main(mode)
        n, share = _share_reaching_main(woken)
        H.log("--call-graph %s: %d of %d waker stacks of main's wakeups reach main (%.1f%%)"
              % (mode or "auto", n, len(woken), share))
        assert len(woken) >= 500, "only %d wakeups by main" % len(woken)
        assert share >= MIN_SHARE, "\n".join(
            iv.text() for iv in woken if "main" not in iv.waker.split(";"))[:4000]


def test_fp_waker_stack_does_not_reach_main():
    """With --call-graph fp the waker keeps its frame-pointer chain, which
    cannot pass libc's write in the frame-pointer-less fixture."""
    woken = _woken_by_main("fp")
    n, share = _share_reaching_main(woken)
    H.log("--call-graph fp: %d of %d reach main" % (n, len(woken)))
    assert len(woken) >= 500 and share < 50.0, (n, len(woken))
