"""Continuous and rolling recordings (issue 17): segment directories with
retention, the directory reader, SIGKILL safety, the directory lock, and
--window snapshots.

Totals are compared exactly: `report DIR` and `convert DIR --to folded`
must equal the sum of the segments read one by one, stack by stack.
"""
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time

import helpers as H

SEG_RE = re.compile(r"^seg-\d{8}T\d{6}Z-\d{8}\.msc$")
TMP_RE = re.compile(r"^seg-\d{8}T\d{6}Z-\d{8}\.(msc|pb\.gz|speedscope\.json|folded)\.tmp\.[A-Za-z0-9]+$")


def _segments(d):
    return sorted(n for n in os.listdir(d) if SEG_RE.match(n))


def _temps(d):
    return sorted(n for n in os.listdir(d) if TMP_RE.match(n))


def _samples(capture):
    out = H.report(capture).stdout
    if re.search(r"^  no events, no samples", out, re.M):
        return 0  # a segment of a quiet span (e.g. before the command ran)
    m = re.search(r"^  samples\s+(\d+)", out, re.M)
    assert m, "no samples line in the report of %s:\n%s" % (capture, out[:2000])
    return int(m.group(1))


def _sum_profiles(profs):
    total = {}
    for p in profs:
        for st, c in p.items():
            total[st] = total.get(st, 0) + c
    return total


def _start_continuous(d, seconds, segment, retain=None, extra=()):
    argv = [H.BIN, "record", "-q", "-F", "199", "--continuous", d, "--segment", segment]
    if retain:
        argv += ["--retain", retain]
    argv += list(extra) + ["--", H.fixture("spinner"), str(seconds)]
    H.log("$ " + " ".join(argv) + " &")
    env = dict(os.environ, MS_FIXTURE_OUT=d + ".fixture.out")
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace", env=env)


@H.timeout(150)
def test_continuous_retention_and_exact_totals():
    """60 s with 10 s segments and 30 s retention: never more than 4
    complete segments at once; each validates; report DIR and the folded
    profile of DIR equal the sums over the segments."""
    H.require_root()
    d = H.tmp_path("segs")
    proc = _start_continuous(d, 60, "10s", "30s")
    most = 0
    try:
        while proc.poll() is None:
            if os.path.isdir(d):
                most = max(most, len(_segments(d)))
            time.sleep(0.25)
        out, err = proc.communicate()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, "record exited %d:\n%s" % (proc.returncode, err)
    segs = _segments(d)
    H.log("segments at the end: %s; most seen at once: %d" % (segs, most))
    assert most <= 4, "%d complete segments at once with 10 s segments, 30 s retention" % most
    assert 3 <= len(segs) <= 4, segs
    # Retention deleted the oldest: the sequence numbers left are the newest, contiguous.
    seqs = [int(s[21:29]) for s in segs]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and seqs[0] >= 2, seqs
    assert not _temps(d), _temps(d)
    per = [_samples(os.path.join(d, s)) for s in segs]
    whole = _samples(d)
    assert whole == sum(per), "report DIR says %d samples, the segments %s (sum %d)" % (
        whole, per, sum(per))
    assert all(n > 0 for n in per), per
    profs = [H.folded(os.path.join(d, s)) for s in segs]
    merged = H.folded(d)
    assert merged == _sum_profiles(profs), "folded DIR differs from the sum of its segments"
    assert H.share(merged, "spin_forever_work") > 80, H.share(merged, "spin_forever_work")


@H.timeout(120)
def test_directory_reader_tolerates_damage_and_temporaries():
    """A damaged segment, a temporary being written, a missing one and a
    foreign file: one note each, totals of the valid segments exactly."""
    H.require_root()
    d = H.tmp_path("segs")
    proc = _start_continuous(d, 9, "1s")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    segs = _segments(d)
    assert len(segs) >= 5, segs
    damaged, missing = segs[1], segs[3]
    with open(os.path.join(d, damaged), "r+b") as f:
        f.truncate(os.path.getsize(os.path.join(d, damaged)) // 2)
    os.unlink(os.path.join(d, missing))
    shutil.copy(os.path.join(d, segs[0]), os.path.join(d, segs[-1] + ".tmp.4242"))
    with open(os.path.join(d, "notes.txt"), "w") as f:
        f.write("not a segment\n")
    valid = [s for s in segs if s not in (damaged, missing)]
    per = [_samples(os.path.join(d, s)) for s in valid]
    p = H.report(d)
    notes = [l for l in p.stderr.splitlines() if "note:" in l]
    H.log("\n".join(notes))
    assert len(notes) == 3, notes
    assert any("being written" in l and ".tmp.4242" in l for l in notes), notes
    assert any("damaged" in l and damaged in l for l in notes), notes
    assert any("missing" in l and str(int(missing[21:29])) in l for l in notes), notes
    m = re.search(r"^  samples\s+(\d+)", p.stdout, re.M)
    assert int(m.group(1)) == sum(per), (m.group(1), per)
    assert H.folded(d) == _sum_profiles([H.folded(os.path.join(d, s)) for s in valid])
    # --since/--until split the directory at a time: the two halves add up
    # to the whole, sample for sample, and each holds part of it.
    t = valid[2][4:19]  # YYYYMMDDTHHMMSS of a segment's start
    when = "%s-%s-%sT%s:%s:%sZ" % (t[0:4], t[4:6], t[6:8], t[9:11], t[11:13], t[13:15])
    before = H.parse_folded(H.run([H.BIN, "convert", d, "--until", when, "--to", "folded"],
                                  check=True).stdout)
    after = H.parse_folded(H.run([H.BIN, "convert", d, "--since", when, "--to", "folded"],
                                 check=True).stdout)
    whole = H.folded(d)
    H.log("split at %s: %d + %d of %d" % (when, H.total(before), H.total(after), H.total(whole)))
    assert _sum_profiles([before, after]) == whole
    assert 0 < H.total(before) < H.total(whole), (H.total(before), H.total(whole))
    p = H.run([H.BIN, "convert", os.path.join(d, valid[0]), "--since", "-1h"])
    # a usage error (README, "Exit status")
    assert p.returncode == 2 and "select segments of a directory" in p.stderr, p.stderr
    # convert and symbolize read the directory too.
    H.run([H.BIN, "symbolize", d, "-o", H.tmp_path("sym.msc")], check=True)
    assert _samples(H.tmp_path("sym.msc")) == sum(per)


@H.timeout(180)
def test_sigkill_leaves_no_partial_segment():
    """SIGKILL at random points: every complete-named file validates, and the
    next recorder's start removes any temporary."""
    H.require_root()
    rnd = random.Random(17)
    d = H.tmp_path("segs")
    for run in range(6):
        if os.path.exists(d + ".fixture.out"):
            os.unlink(d + ".fixture.out")
        proc = _start_continuous(d, 30, "1s", extra=["--export", "pprof"])
        m = H.wait_for_line(d + ".fixture.out", r"spinner ready pid=(\d+)", timeout=30,
                            proc=proc)
        time.sleep(2.0 + rnd.random() * 4.0)
        proc.send_signal(signal.SIGKILL)
        H.kill_pid(int(m.group(1)))  # it holds the recorder's pipes
        proc.communicate()
        for s in _segments(d):
            p = H.report(os.path.join(d, s), check=False)
            assert p.returncode == 0, "%s fails validation after SIGKILL:\n%s" % (s, p.stderr)
        H.log("run %d: %d segments, temporaries %s" % (run, len(_segments(d)), _temps(d)))
    # A next start cleans the temporaries a killed recorder left.
    # (an older recorder's PID tag, and file_out's own mkostemp tag)
    for tag in (".tmp.999999", ".tmp.Ab3xYz"):
        with open(os.path.join(d, _segments(d)[-1] + tag), "w") as f:
            f.write("partial")
    with open(os.path.join(d, _segments(d)[-1][:-4] + ".pb.gz.tmp.q1W2e3"), "w") as f:
        f.write("partial")
    proc = _start_continuous(d, 2, "1s")
    proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert not _temps(d), _temps(d)
    assert not [n for n in os.listdir(d) if ".tmp." in n], os.listdir(d)
    assert glob.glob(os.path.join(d, "seg-*.pb.gz")), "no pprof exports beside segments"


@H.timeout(60)
def test_lock_keeps_a_second_recorder_out():
    H.require_root()
    d = H.tmp_path("segs")
    first = _start_continuous(d, 6, "1s")
    try:
        H.wait_for_line(d + ".fixture.out", r"spinner ready", timeout=30, proc=first)
        p = H.run([H.BIN, "record", "--continuous", d, "--", "/bin/true"])
        assert p.returncode != 0, p.stderr
        assert "another recorder (pid %d)" % first.pid in p.stderr, p.stderr
    finally:
        first.communicate(timeout=60)
    assert first.returncode == 0


def _chrome_span_s(capture):
    out = capture + ".json"
    H.run([H.BIN, "convert", capture, "--to", "chrome", "-o", out], check=True)
    with open(out) as f:
        ev = [e for e in json.load(f)["traceEvents"] if "ts" in e]
    ts = [e["ts"] for e in ev] + [e["ts"] + e.get("dur", 0) for e in ev]
    return (max(ts) - min(ts)) / 1e6


@H.timeout(120)
def test_window_snapshots_cover_the_last_window():
    """--window 5s over 20 s, SIGUSR1 at 10 s and 15 s: each snapshot spans
    its last 5 s (within a drain round); the final file is the last window
    and says how many samples the whole recording took."""
    H.require_root()
    out = H.tmp_path("w.msc")
    argv = [H.BIN, "record", "-F", "199", "--window", "5s", "-o", out, "--",
            H.fixture("spinner"), "20"]
    env = dict(os.environ, MS_FIXTURE_OUT=out + ".fixture.out")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    H.wait_for_line(out + ".fixture.out", r"spinner ready", timeout=30, proc=proc)
    time.sleep(10)
    proc.send_signal(signal.SIGUSR1)
    time.sleep(5)
    H.run([H.BIN, "snapshot", str(proc.pid)], check=True)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    snaps = sorted(glob.glob(H.tmp_path("window-*.msc")))
    assert len(snaps) == 2, (snaps, err)
    for s in snaps:
        span = _chrome_span_s(s)
        H.log("%s: %d samples over %.2f s" % (s, _samples(s), span))
        assert 4.5 <= span <= 5.3, "%s spans %.2f s, not the last 5 s" % (s, span)
    final_span = _chrome_span_s(out)
    assert final_span <= 5.3, final_span
    # The last window is what -o holds.  The snapshots (at 10 s and 15 s)
    # and the last window cover disjoint spans of one recording, so the
    # whole recording's count holds all three: snapshots took nothing away.
    m = re.search(r"window of (\d+) samples written to %s \((\d+) recorded in all\)"
                  % re.escape(out), err)
    assert m, err
    last, total = int(m.group(1)), int(m.group(2))
    assert last == _samples(out), (last, _samples(out))
    snap_counts = [_samples(s) for s in snaps]
    assert total >= sum(snap_counts) + last, (total, snap_counts, last)
    assert all(n > 0 for n in snap_counts), snap_counts


@H.timeout(120)
def test_reading_while_retention_deletes_and_segments_are_written():
    """report/convert DIR in a loop while a recorder publishes a segment a
    second and retention deletes one a second: every read succeeds, its
    notes are only of the kinds the reader names, and its total equals the
    sum of the segments it read (those still present after the read)."""
    H.require_root()
    d = H.tmp_path("segs")
    proc = _start_continuous(d, 14, "1s", "2s")
    reads = skipped = 0
    try:
        H.wait_for_line(d + ".fixture.out", r"spinner ready", timeout=30, proc=proc)
        while proc.poll() is None:
            if not _segments(d):
                time.sleep(0.2)
                continue
            p = H.run([H.BIN, "convert", d, "--to", "folded"], quiet=True)
            if p.returncode == 1 and "no readable segment" in p.stderr:
                continue  # everything was deleted under it: said so
            assert p.returncode == 0, p.stderr
            notes = [l for l in p.stderr.splitlines() if "note:" in l and "folded keeps" not in l]
            for l in notes:
                assert re.search(r"being written|removed while reading|missing", l), l
            skipped += len(notes)
            reads += 1
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    H.log("%d reads, %d segments noted as skipped" % (reads, skipped))
    assert reads >= 5, reads
    # Quiet directory: the totals are exact.
    segs = _segments(d)
    assert len(segs) <= 3, segs
    assert H.folded(d) == _sum_profiles([H.folded(os.path.join(d, s)) for s in segs])


@H.timeout(90)
def test_preset_production():
    """--preset production: 97 Hz, auto call graphs, a 1 % budget, the whole
    system without a command, 60 s segments unless --segment says otherwise."""
    H.require_root()
    d = H.tmp_path("prod")
    # busy processes, so the system-wide recording has samples even when the
    # loaded machine keeps other tasks idle; two of them, so "not just one
    # process" holds on a quiet machine too (it once saw the spinner alone)
    spins = [H.start_fixture([H.fixture("spinner"), "6"], out_name="spin%d.out" % i)[0]
             for i in range(2)]
    try:
        p = H.run([H.BIN, "record", "--preset", "production", "--continuous", d, "-d", "3"],
                  check=True)
    finally:
        for spin in spins:
            spin.kill()
            spin.communicate()
    segs = _segments(d)
    assert len(segs) == 1, segs  # 3 s in one 60 s segment
    out = H.report(d).stdout
    assert "requested 97 Hz" in out, out[:1500]
    assert "preset production" in out and re.search(r"^  stacks\s+auto", out, re.M), out[:1500]
    assert re.search(r"^  budget\s+1% of one CPU", out, re.M), out[:1500]
    m = re.search(r"^  samples\s+\d+.* from (\d+) threads", out, re.M)
    assert m and int(m.group(1)) >= 2, out[:1500]  # system-wide: not just one process
    p = H.run([H.BIN, "record", "--preset", "production", "-o", "x.msc", "--segment", "5s",
               "--", "true"])
    assert p.returncode == 2 and "need --continuous" in p.stderr, p.stderr


# Voluntary context switches per second a --preset production recorder may
# add while its only target, a Python process, sleeps.  Design: the drain
# loop sleeps until records fill a quarter of a ring, the sampler reports a
# change, a CPython tracker timer (none for an idle, detected interpreter)
# or drain_wait_ms (1 s) passes; the side-band rings see every process of
# the machine, so another session's builds add watermark wakeups, a few a
# second.  The 20 ms drain period it replaced gave 50 a second.
IDLE_SWITCHES_PER_S = 10


@H.timeout(90)
def test_preset_production_sleeps_while_idle():
    """--preset production -p an idle Python process: the recorder's
    voluntary context switches (its wakeups) grow by at most
    IDLE_SWITCHES_PER_S per second of recording.  Two recordings of 4 and
    14 s run at once beside the same target; the difference of their
    counts (from wait4) leaves out start-up and sealing."""
    H.require_root()
    if not os.path.exists(H.DEBIAN_PYTHON):
        H.skip("%s is not installed: `make deps` installs Debian's python3.11" % H.DEBIAN_PYTHON)
    idle = subprocess.Popen([H.DEBIAN_PYTHON, "-c", "import time\nwhile True: time.sleep(3600)"])
    try:
        time.sleep(0.5)  # the interpreter is up: detected at the first poll
        recs = {}
        for secs in (4, 14):
            d = H.tmp_path("idle%d" % secs)
            recs[secs] = subprocess.Popen(
                [H.BIN, "record", "-q", "--preset", "production", "--continuous", d,
                 "-d", str(secs), "-p", str(idle.pid)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        switches = {}
        for secs, p in recs.items():
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = 0  # reaped here
            err = p.stderr.read().decode(errors="replace")
            assert status == 0, "record -d %d: status %d: %s" % (secs, status, err)
            switches[secs] = ru.ru_nvcsw
    finally:
        idle.kill()
        idle.wait()
    per_s = (switches[14] - switches[4]) / 10.0
    H.log("voluntary context switches: %d in 4 s, %d in 14 s: %.1f a second" % (
        switches[4], switches[14], per_s))
    assert per_s <= IDLE_SWITCHES_PER_S, \
        "%.1f voluntary context switches a second (%d in 4 s, %d in 14 s), want <= %d" % (
            per_s, switches[4], switches[14], IDLE_SWITCHES_PER_S)


@H.timeout(90)
def test_export_beside_each_segment():
    """--export folded: each published segment has its folded export beside
    it, equal to converting that segment; retention removes both."""
    H.require_root()
    d = H.tmp_path("segs")
    proc = _start_continuous(d, 8, "1s", "3s", extra=["--export", "folded"])
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    segs = _segments(d)
    exports = sorted(n for n in os.listdir(d) if n.endswith(".folded"))
    H.log("segments %s\nexports %s" % (segs, exports))
    assert exports == [s[:-4] + ".folded" for s in segs], (segs, exports)
    checked = 0
    for s in segs:
        with open(os.path.join(d, s[:-4] + ".folded")) as f:
            mine = H.parse_folded(f.read(), s)
        if _samples(os.path.join(d, s)):
            assert mine == H.folded(os.path.join(d, s)), s
            checked += 1
        else:
            assert mine == {}, s
    assert checked >= 2, checked


RECORDER_RE = re.compile(r"recorder\s+(\d+) processes, (\d+) threads, (\d+) mappings, "
                         r"(\d+) modules, (\d+) rows held, RSS (\d+) KiB")
CHURN_PROCESSES = 1000
CHURN_SEGMENTS_READ = 24  # read evenly over the run: the test's own time stays bounded


@H.timeout(300)
def test_recorder_state_flat_under_process_churn():
    """Issue 17, memory: 1 s segments over a command that starts and ends
    1,000 processes one after another.  What the recorder holds as each
    segment begins (meta recorder.*, the report's "recorder" line) is what
    the live processes need, never what the run saw: a few processes,
    threads and modules, and rows bounded by one segment; its RSS from the
    3rd segment to the last grows by at most 10 %.  Counts, not time: the
    workload is a fixed number of processes however fast the machine is."""
    H.require_root()
    d = H.tmp_path("churn-segs")
    # Each child burns 8x the fixture's 2 ms so that even a fast machine's
    # run spans a dozen 1 s segments (CI's 1,000 plain children took 5.7 s).
    env = dict(os.environ, MS_FIXTURE_SCALE="8")
    H.run([H.BIN, "record", "-q", "-F", "199", "--continuous", d, "--segment", "1s", "--",
           H.fixture("spawner"), str(CHURN_PROCESSES)], timeout=240, check=True, env=env)
    states = []
    segs = _segments(d)
    step = max(1, len(segs) // CHURN_SEGMENTS_READ)
    for s in segs[::step]:
        m = RECORDER_RE.search(H.report(os.path.join(d, s)).stdout)
        if m:
            states.append([int(x) for x in m.groups()])
    H.log("recorder state per segment (processes, threads, mappings, modules, rows, RSS KiB):\n"
          + "\n".join("  %s" % st for st in states))
    assert len(states) >= 6, "too few segments with samples: %d" % len(states)
    for procs, threads, maps, mods, rows, rss in states:
        # the spawner and the child of the moment (the recorder's own command)
        assert procs <= 4 and threads <= 4, (procs, threads)
        assert maps <= 40 and mods <= 12, (maps, mods)
    rows = [st[4] for st in states]
    half = len(rows) // 2
    assert max(rows[half:]) <= 2 * max(rows[:half]), rows  # one segment's worth, not the run's
    early, late = states[2][5], max(st[5] for st in states[len(states) // 2:])
    assert late <= early * 1.10, "RSS grew from %d KiB to %d KiB" % (early, late)


def _duration_s(capture, *args):
    out = H.report(capture, *args).stdout
    m = re.search(r"^  duration\s+([\d.]+) (s|ms|us)", out, re.M)
    assert m, "no duration line in the report of %s:\n%s" % (capture, out[:2000])
    return float(m.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[m.group(2)]


@H.timeout(120)
def test_sigint_cuts_the_last_segments_at_the_boundary():
    """--segment 1s stopped by SIGINT half a second after the first segment
    appears (3 s in: one segment plus the 2 s release lag): what the lag
    held back (about 2.5 s) is cut on the 1 s grid, so no segment is
    longer than 1 s; before, the last one held all of it."""
    H.require_root()
    d = H.tmp_path("segs-sigint")
    proc = _start_continuous(d, 60, "1s")
    try:
        deadline = time.time() + 60
        while proc.poll() is None and time.time() < deadline:
            if os.path.isdir(d) and _segments(d):
                break
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    segs = _segments(d)
    durations = [_duration_s(os.path.join(d, s)) for s in segs]
    H.log("segments %s, durations %s" % (segs, durations))
    assert len(segs) >= 4, segs
    # Tolerance 1 ms: the report prints ms; segments are never widened.
    assert max(durations) <= 1.001, durations
    # Whole segments in the middle are exactly the grid's step.
    assert all(abs(x - 1.0) <= 0.001 for x in durations[1:-1]), durations
    whole = _samples(d)
    assert whole == sum(_samples(os.path.join(d, s)) for s in segs)


@H.timeout(120)
def test_event_of_the_second_recording_in_a_directory():
    """Two recordings into one directory at 99 and 499 Hz: two events named
    cpu-clock (one per period).  --event cpu-clock is refused naming both
    choices; --event cpu-clock#2 selects the second recording's samples
    exactly, in report and convert."""
    H.require_root()
    d = H.tmp_path("two")
    counts = []
    for hz in ("99", "499"):
        before = set(_segments(d)) if os.path.isdir(d) else set()
        H.run([H.BIN, "record", "-q", "-F", hz, "--budget", "0", "--continuous", d,
               "--segment", "10s", "-d", "1.5", "--", H.fixture("spinner"), "30"])
        mine = sorted(set(_segments(d)) - before)
        counts.append(sum(_samples(os.path.join(d, s)) for s in mine))
    H.log("samples per recording: %s" % counts)
    assert counts[1] > 2 * counts[0] > 0, counts
    for cmd in (["report", d], ["convert", d, "--to", "folded"]):
        p = H.run([H.BIN] + cmd + ["--event", "cpu-clock"])
        assert p.returncode == 2, (p.returncode, p.stderr)
        assert "2 events are named 'cpu-clock'" in p.stderr, p.stderr
        assert "--event cpu-clock#1 (%d samples" % counts[0] in p.stderr, p.stderr
        assert "--event cpu-clock#2 (%d samples" % counts[1] in p.stderr, p.stderr
        p = H.run([H.BIN] + cmd + ["--event", "cpu-clock#3"])
        assert p.returncode == 2 and "no event 'cpu-clock#3'" in p.stderr, p.stderr
    for i, n in enumerate(counts):
        out = H.report(d, "--event", "cpu-clock#%d" % (i + 1)).stdout
        assert re.search(r"^  samples\s+%d\b" % n, out, re.M), (n, out[:1500])
        assert re.search(r"^  event\s+cpu-clock#%d " % (i + 1), out, re.M), out[:1500]
        # the event's own recording's rate (before: the last one's for both)
        assert "(requested %s Hz)" % ("99", "499")[i] in out, out[:1500]
        p = H.run([H.BIN, "convert", d, "--to", "folded", "--event", "cpu-clock#%d" % (i + 1)],
                  check=True)
        assert H.total(H.parse_folded(p.stdout)) == n, (n, p.stdout[:500])
    # Without --event: the first, with the second named as --event takes it.
    out = H.report(d).stdout
    assert re.search(r"^  other\s+cpu-clock#2 \(%d samples\)" % counts[1], out, re.M), out[:1500]


def _segment_dir_of(seconds, segment="1s"):
    """A finished --continuous recording of `seconds`; its directory and the
    CLOCK_REALTIME second its first segment starts in (from its name)."""
    import calendar
    d = H.tmp_path("segs-%s" % seconds)
    H.run([H.BIN, "record", "-q", "-F", "199", "--continuous", d, "--segment", segment,
           "-d", str(seconds), "--", H.fixture("spinner"), "60"])
    segs = _segments(d)
    assert segs, os.listdir(d)
    return d, calendar.timegm(time.strptime(segs[0][4:19], "%Y%m%dT%H%M%S"))


@H.timeout(90)
def test_since_until_header_shows_the_window_of_a_directory():
    """report DIR --since/--until: the header's duration is the window
    selected, not the segments' whole span (4.5 s here), both for times from
    the recording's start and for wall-clock times that cut segments."""
    H.require_root()
    d, t0 = _segment_dir_of(4.5)
    assert 4.4 <= _duration_s(d) <= 4.6, _duration_s(d)
    for args, want in ((["--since", "1s", "--until", "2s"], 1.0),
                       (["--since", "0.5s", "--until", "3s"], 2.5),
                       (["--since", "@%d" % (t0 + 1), "--until", "@%d" % (t0 + 2)], 1.0),
                       (["--since", "@%d" % (t0 + 2), "--until", "@%d" % (t0 + 4)], 2.0)):
        got = _duration_s(d, *args)
        H.log("%s: %.3f s" % (args, got))
        assert abs(got - want) < 0.0015, (args, got, want)



@H.timeout(90)
def test_window_without_segments_says_so_and_exits_0():
    """report DIR --since/--until whose window holds none of the segments is
    a report that selects nothing (README, "Exit status": 0, said on
    stderr), and says where the data is: it used to exit 1 with "no
    readable segment", as for a damaged directory.  A directory whose only
    segment is damaged still exits 1, window or not."""
    import calendar
    H.require_root()
    d, t0 = _segment_dir_of(2.5)
    n = len(_segments(d))
    first = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0))
    for args in (["--since", "@%d" % (t0 + 3600)], ["--until", "@%d" % (t0 - 3600)],
                 ["--since", "@%d" % (t0 - 7200), "--until", "@%d" % (t0 - 3600), "--zones"],
                 ["--since", "@%d" % (t0 + 3600), "--off-cpu"]):
        p = H.run([H.BIN, "report", d] + args, quiet=True)
        assert p.returncode == 0, (args, p.returncode, p.stderr)
        m = re.search(r"the time range holds no data: none of the (\d+) readable segments? "
                      r"\((\S+) to (\S+)\) falls in it", p.stderr)
        assert m, (args, p.stderr)
        assert int(m.group(1)) == n and m.group(2) == first, (args, n, first, p.stderr)
        last = calendar.timegm(time.strptime(m.group(3), "%Y-%m-%dT%H:%M:%SZ"))
        assert t0 + 2 <= last <= t0 + 4, (args, t0, p.stderr)
        assert "the time range holds no segment" in p.stdout, (args, p.stdout)
    bad = H.tmp_path("segs-damaged")
    os.makedirs(bad, exist_ok=True)
    with open(os.path.join(d, _segments(d)[0]), "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0xFF
    with open(os.path.join(bad, _segments(d)[0]), "wb") as f:
        f.write(bytes(data))
    for args in ([], ["--since", "@%d" % (t0 + 3600)]):
        p = H.run([H.BIN, "report", bad] + args, quiet=True)
        assert p.returncode == 1 and "no readable segments" in p.stderr, (args, p.stderr)


@H.timeout(60)
def test_stopped_before_any_sample_publishes_no_segment():
    """SIGINT before the first sample (here: an idle target, which never
    gives one) publishes no segment: it used to write an empty one ("0
    samples in 1 segment"), which report DIR then read as a profile of
    nothing.  A recording with samples still writes its last segment."""
    H.require_root()
    d = H.tmp_path("idle-segs")
    shutil.rmtree(d, ignore_errors=True)
    idle = subprocess.Popen(["sleep", "60"])
    try:
        proc = subprocess.Popen([H.BIN, "record", "--continuous", d, "-p", str(idle.pid)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(1)  # not an assertion: let it attach before the signal
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        idle.kill()
        idle.wait()
    H.log(err)
    assert proc.returncode == 0, (proc.returncode, err)
    assert _segments(d) == [] and _temps(d) == [], os.listdir(d)
    assert "no samples: no segment written to %s" % d in err, err
    busy = H.tmp_path("busy-segs")
    shutil.rmtree(busy, ignore_errors=True)
    H.run([H.BIN, "record", "-q", "--continuous", busy, "--", H.fixture("spinner"), "1"],
          check=True)
    assert len(_segments(busy)) == 1 and _samples(os.path.join(busy, _segments(busy)[0])) > 0


@H.timeout(120)
def test_duration_ends_on_the_segment_grid():
    """--duration and the --segment grid count from the same moment, and
    the samples of the halt's moment after the duration's end join the
    last segment: -d 2 --segment 1s is 2 segments (a third of half a
    millisecond came in about 1 run of 3), and -d 2.5 is 3, the last
    half a second."""
    H.require_root()
    for i, (dur, want) in enumerate((("2", 2), ("2", 2), ("2.5", 3))):
        d = H.tmp_path("segs-dur-%d" % i)
        proc = _start_continuous(d, 10, "1s", extra=["-d", dur])
        out, err = proc.communicate(timeout=60)
        segs = _segments(d)
        durations = [_duration_s(os.path.join(d, s)) for s in segs]
        H.log("-d %s: segments %s, durations %s" % (dur, segs, durations))
        assert len(segs) == want, (dur, segs, durations, err)
        assert all(abs(x - 1.0) <= 0.001 for x in durations[:-1]), durations
        assert durations[-1] >= float(dur) - (want - 1) - 0.05, durations


def _span_s(text):
    m = re.search(r"^  duration\s+([\d.]+) (m?s)", text, re.M)
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


@H.timeout(120)
def test_directory_counters_say_their_span_and_foreign_files_are_skipped():
    """The recorder writes its counters (kunwind, lost, problems) and budget
    figures once, at stop, for the whole recording: reading a directory whose
    first segments retention deleted, the header says those lines cover the
    whole recording (from its start to its last segment's end) while the
    samples are the segments read (before: 'samples 5735' beside 'kunwind
    9216 of 9241' and own cost over 'the last 7.982 s' of a 6.009 s profile,
    unexplained).  A segment of another recording copied in with its name,
    and a plain capture under a segment's name, are skipped with a note each
    (before: merged, the report showing the foreign file's command)."""
    H.require_root()
    other = H.tmp_path("segs-other")
    p = subprocess.run([H.BIN, "record", "-q", "-F", "199", "--continuous", other,
                        "--segment", "1s", "-d", "2.5", "--", "sh", "-c",
                        "while :; do :; done"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    foreign = _segments(other)
    assert len(foreign) >= 2, (p.stderr, foreign)
    d = H.tmp_path("segs-counters")
    proc = _start_continuous(d, 6, "1s", retain="2s")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    segs = _segments(d)
    assert 2 <= len(segs) <= 5 and not segs[0].endswith("-00000000.msc"), segs
    per = sum(_samples(os.path.join(d, s)) for s in segs)
    text = H.report(d).stdout
    m = re.search(r"^  counters .* whole recording's \(([\d.]+) s from its start\), the "
                  r"samples those of the segments read \(([\d.]+) (m?s) of it", text, re.M)
    assert m, text[:2500]
    whole, read = float(m.group(1)), float(m.group(2)) / (1000 if m.group(3) == "ms" else 1)
    H.log("counters span %.3f s, segments read %.3f s, header %.3f s" % (whole, read,
                                                                          _span_s(text)))
    assert abs(read - _span_s(text)) < 0.002 and whole > read + 1.5, (whole, read, text[:1500])
    # a foreign segment (another recording's, its own name) and a plain capture
    # under a segment's name: skipped, each with a note, totals unchanged
    shutil.copy(os.path.join(other, foreign[1]), os.path.join(d, foreign[1]))
    last = segs[-1]
    fake = "seg-%s-%08d.msc" % (last[4:20], int(last[21:29]) + 1)
    shutil.copy(os.path.join(other, foreign[0]), os.path.join(d, fake))
    p = H.report(d)
    notes = [l for l in p.stderr.splitlines() if "note:" in l]
    H.log("\n".join(notes))
    assert any(foreign[1] in l and "skipped" in l for l in notes), notes
    assert len(notes) == 2, notes
    assert re.search(r"^  samples\s+%d\b" % per, p.stdout, re.M), (per, p.stdout[:800])
    assert "while :; do :; done" not in p.stdout and "spinner" in p.stdout, p.stdout[:600]
    assert any(fake in l and "not a segment of this directory" in l for l in notes), notes


def _counters(capture):
    """{name: value} of a capture's counters (tests/tools/sample_stacks.c);
    a directory through `convert DIR -o`."""
    from test_python import _tool
    if os.path.isdir(capture):
        out = H.tmp_path("counters-of.msc")
        H.run([H.BIN, "convert", capture, "-o", out], check=True, quiet=True)
        capture = out
    text = H.run([_tool(), capture, "counters"], check=True, quiet=True).stdout
    return {k: int(v) for k, v in (line.split(" ", 1) for line in text.splitlines())}


@H.timeout(150)
def test_each_segment_carries_its_own_counters():
    """The loss, problem and budget counters are each segment's own span's
    (before: written once, at stop, into the last segment; every other
    segment had none, so a segment or a --since/--until window of them
    reported 'lost 0' and a SIGKILLed recorder left no counters at all).
    bpf.samples_seen and collector.bpf_records stand for them: they are
    read with bpf.ringbuf_full and perf.lost_* (collector__counters) and
    are never 0 while a spinner runs.  The segments sum to the directory's
    totals, no counter counted twice, and a killed recorder's segments keep
    theirs."""
    H.require_root()
    d = H.tmp_path("segs-deltas")
    proc = _start_continuous(d, 5, "1s", extra=["--budget", "5"])
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    segs = _segments(d)
    assert len(segs) >= 4, segs
    per = [(_samples(os.path.join(d, s)), _counters(os.path.join(d, s))) for s in segs]
    H.log("samples, bpf.samples_seen, budget.sampler_runs per segment: %s" % [
        (n, c.get("bpf.samples_seen"), c.get("budget.sampler_runs")) for n, c in per])
    for s, (n, c) in zip(segs, per):
        if n:
            assert c.get("bpf.samples_seen", 0) > 0 and c.get("collector.bpf_records", 0) > 0, \
                "%s: %d samples, no counters of its own: %s" % (s, n, sorted(c))
            assert c.get("budget.sampler_runs", 0) > 0, (s, sorted(c))
    # whole-recording figures only in the last segment
    assert all("processor.lag_max_ms" not in c for _, c in per[:-1]), [sorted(c) for _, c in per]
    whole = _counters(d)
    for name in ("bpf.samples_seen", "collector.bpf_records", "budget.sampler_runs",
                 "budget.observed_ns"):
        assert whole.get(name) == sum(c.get(name, 0) for _, c in per), (name, whole.get(name))
    samples = sum(n for n, _ in per)
    # each kept sample was seen once, and nothing counted twice
    assert samples <= whole["bpf.samples_seen"] <= samples + samples // 10 + 10, (
        samples, whole["bpf.samples_seen"])
    # a segment's own counters follow its samples (read at its boundary)
    busy = [(n, c["bpf.samples_seen"]) for n, c in per[:-1] if n >= 20]
    # (most of them: a drain round late past a boundary moves some to the next)
    near = [1 for n, seen in busy if abs(seen - n) <= n // 4 + 5]
    assert busy and 2 * len(near) >= len(busy), busy
    # SIGKILL: the segments published keep the counters of their spans
    k = H.tmp_path("segs-killed")
    if os.path.exists(k + ".fixture.out"):
        os.unlink(k + ".fixture.out")
    proc = _start_continuous(k, 30, "1s")
    m = H.wait_for_line(k + ".fixture.out", r"spinner ready pid=(\d+)", timeout=30, proc=proc)
    while len(_segments(k)) < 3 and proc.poll() is None:
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    H.kill_pid(int(m.group(1)))
    proc.communicate()
    killed = _segments(k)
    seen = [_counters(os.path.join(k, s)).get("bpf.samples_seen", 0) for s in killed]
    H.log("killed recorder: bpf.samples_seen per segment %s" % seen)
    assert len(killed) >= 3 and all(seen), (killed, seen)


@H.timeout(150)
def test_full_disk_drops_segments_and_goes_on():
    """A segment that cannot be written (a 48 KiB tmpfs filled up) is never
    published and is counted; the recorder keeps recording with one warning
    for the streak, and once space is freed the next segment is written and
    says what was dropped (before: the recorder exited 1 at the first full
    write, after publishing an empty segment of 0 samples under the failed
    one's sequence number)."""
    H.require_root()
    small = H.tmp_path("small")
    os.makedirs(small)
    H.run(["mount", "-t", "tmpfs", "-o", "size=48k", "tmpfs", small], check=True)
    spinner = subprocess.Popen([H.fixture("spinner"), "90"], stdout=subprocess.DEVNULL)
    d = os.path.join(small, "segs")
    errf = H.tmp_path("record.err")
    proc = None
    try:
        with open(errf, "w") as ef:
            proc = subprocess.Popen([H.BIN, "record", "-q", "-F", "199", "-p", str(spinner.pid),
                                     "--continuous", d, "--segment", "1s"],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=ef)
        H.wait_for_line(errf, r"segment not written", timeout=60, proc=proc)
        full = _segments(d)
        assert proc.poll() is None, "the recorder stopped at a full disk"
        for s in full[:-1]:  # the user frees space
            os.unlink(os.path.join(d, s))
        again = None
        for _ in range(300):
            later = [s for s in _segments(d) if s > full[-1]]
            if later:
                again = later[0]
                break
            assert proc.poll() is None, open(errf).read()
            time.sleep(0.1)
        assert again, "no segment written after space was freed: %s" % open(errf).read()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        err = open(errf).read()
        H.log(err)
        assert proc.returncode == 0, err
        assert err.count("segment not written") == 1, err
        assert "segments written again" in err, err
        assert not [n for n in os.listdir(d) if ".tmp." in n], os.listdir(d)
        c = _counters(os.path.join(d, again))
        gap = int(again[21:29]) - int(full[-1][21:29]) - 1
        H.log("%s after %s: %d dropped, counters write_errors %s samples_lost %s" % (
            again, full[-1], gap, c.get("segment.write_errors"), c.get("segment.samples_lost")))
        assert gap >= 1 and c.get("segment.write_errors") == gap, (gap, c)
        assert c.get("segment.samples_lost", 0) > 0, c
        for s in _segments(d):
            assert _samples(os.path.join(d, s)) > 0, "%s published with no samples" % s
        rep = H.report(d).stdout
        assert re.search(r"^  lost .*segment\.samples_lost %d" % c["segment.samples_lost"],
                         rep, re.M), rep[:2000]
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        spinner.kill()
        spinner.wait()
        subprocess.run(["umount", small])


def _meta(capture):
    """{key: value} of a capture's meta (tests/tools/sample_stacks.c)."""
    from test_python import _tool
    text = H.run([_tool(), capture, "meta"], check=True, quiet=True).stdout
    return dict(line.split(" ", 1) for line in text.splitlines() if " " in line)


@H.timeout(120)
def test_lagging_processor_cuts_segments_on_the_grid():
    """Processing held 3.5 s behind sampling (MICROSCOPE_TEST_LAG_MS, as a
    loaded host does; the release lag is 2 s): every segment but the last
    spans exactly --segment, each starts where the one before ended, and
    none holds a sample outside its span (before: records released after
    their segment was cut widened the next one back, 1.985, 2.503, 2.508 s,
    each overlapping the one before)."""
    H.require_root()
    d = H.tmp_path("segs-lag")
    p = subprocess.run([H.BIN, "record", "-q", "-F", "199", "--continuous", d, "--segment",
                        "1s", "-d", "6", "--", H.fixture("spinner"), "60"],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90,
                       env=dict(os.environ, MICROSCOPE_TEST_LAG_MS="3500"))
    assert "microscope record:" not in p.stderr, p.stderr  # (its status: the spinner's SIGTERM)
    segs = _segments(d)
    spans = []
    for s in segs:
        m = _meta(os.path.join(d, s))
        spans.append((int(m["segment.start_ns"]), int(m["segment.end_ns"]),
                      int(m.get("segment.late_records", 0))))
    H.log("spans (s from the first): %s" % [((a - spans[0][0]) / 1e9, (b - a) / 1e9, late)
                                           for a, b, late in spans])
    assert len(spans) == 6, spans
    assert all(b - a == 1000000000 for a, b, _ in spans[:-1]), spans
    assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1)), spans
    assert not any(late for _, _, late in spans), spans
    samples = sum(_samples(os.path.join(d, s)) for s in segs)
    assert _samples(d) == samples > 0
    # the directory's duration is the span the segments cover
    assert abs(_span_s(H.report(d).stdout) - (spans[-1][1] - spans[0][0]) / 1e9) < 0.002


@H.timeout(120)
def test_window_snapshot_waits_for_a_lagging_processor():
    """SIGUSR1 to a `record --window 3s` whose processing runs behind
    (MICROSCOPE_TEST_LAG_MS, as on a loaded host): the snapshot waits until
    processing reaches its time and holds the window's samples (before:
    'window of 0 samples', as if the target were idle); past the 5 s bound
    it is written anyway and says how far behind it was."""
    H.require_root()
    got = []
    for lag in (3000, 9000):
        out = H.tmp_path("lag%d/w.msc" % lag)
        os.makedirs(os.path.dirname(out))
        proc = subprocess.Popen(
            [H.BIN, "record", "-F", "199", "--window", "3s", "-o", out, "--",
             H.fixture("spinner"), "60"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=dict(os.environ, MS_FIXTURE_OUT=out + ".fixture.out",
                                MICROSCOPE_TEST_LAG_MS=str(lag)))
        try:
            H.wait_for_line(out + ".fixture.out", r"spinner ready", timeout=30, proc=proc)
            time.sleep(5)
            proc.send_signal(signal.SIGUSR1)
            for _ in range(200):  # written once processing reaches it, or after 5 s
                if glob.glob(os.path.join(os.path.dirname(out), "window-*.msc")):
                    break
                time.sleep(0.1)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        snaps = glob.glob(os.path.join(os.path.dirname(out), "window-*.msc"))
        assert len(snaps) == 1, (snaps, err)
        rep = H.report(snaps[0]).stdout
        got.append((lag, _samples(snaps[0]), _meta(snaps[0]).get("window.behind_ns")))
        H.log("lag %d ms: %s" % (lag, got[-1]))
        if lag == 3000:
            assert got[-1][1] > 0 and got[-1][2] is None, (got, err)
            assert not re.search(r"^  behind ", rep, re.M), rep[:1500]
        else:
            behind = int(got[-1][2] or 0)
            assert 1e9 <= behind <= 9e9, (got, err)
            assert "window.behind_ns" in err, err
            assert re.search(r"^  behind +the recorder's processing was [\d.]+ s behind", rep,
                             re.M), rep[:1500]
