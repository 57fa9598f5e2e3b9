"""record's CLI contract: --duration is the sampling window and the capture
says so; an unwritable output fails before anything runs (and a capture that
cannot be sealed at the end is kept elsewhere); usage errors exit 2.

Timing assertions compare the capture with itself (sample span against the
recorded duration meta) and with the requested duration, with tolerances;
the wall-time bound on `record` is generous (setup = BPF load + /proc
snapshot, measured 0.4-0.8 s idle; the bound allows for a loaded machine).
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import helpers as H

# Setup (BPF load, snapshot) plus draining the backlog after sampling stopped,
# on a loaded 2-CPU machine.
WALL_SLACK_S = 15.0


def _sample_span_s(capture):
    """Seconds from the first to the last sample, from the Chrome trace
    conversion (its timestamps are the samples' own, in microseconds)."""
    out = capture + ".json"
    H.run([H.BIN, "convert", capture, "--to", "chrome", "-o", out], check=True)
    with open(out) as f:
        d = json.load(f)
    events = d["traceEvents"] if isinstance(d, dict) else d
    ts = [e["ts"] + e.get("dur", 0) for e in events if "ts" in e] + \
        [e["ts"] for e in events if "ts" in e]
    assert ts, "no timed events in the Chrome trace of %s" % capture
    return (max(ts) - min(ts)) / 1e6


def _report_duration_s(capture):
    text = H.report(capture, "--limit", "1").stdout
    m = re.search(r"^\s*duration\s+([\d.]+) (s|ms) \(recording\)", text, re.M)
    assert m, "report shows no recording duration:\n%s" % text
    return float(m.group(1)) / (1000.0 if m.group(2) == "ms" else 1.0)


def _start_spinner():
    proc, out = H.start_fixture([H.fixture("spinner"), "60"])
    m = H.wait_for_line(out, r"spinner ready pid=(\d+)", timeout=30, proc=proc)
    return proc, int(m.group(1))


def _check_window(capture, want_s):
    span = _sample_span_s(capture)
    dur = _report_duration_s(capture)
    H.log("requested %.1f s: samples span %.3f s, report duration %.3f s" % (want_s, span, dur))
    assert abs(span - want_s) <= 0.5, \
        "--duration %.1f: samples span %.3f s (want %.1f +- 0.5)" % (want_s, span, want_s)
    assert abs(dur - span) <= 0.1 * span, \
        "report duration %.3f s disagrees with the sample span %.3f s (> 10%%)" % (dur, span)


def test_duration_pid_is_the_sampling_window():
    spinner, pid = _start_spinner()
    try:
        rec = H.record(pids=[pid], duration=2, output=H.tmp_path("cli-dur.msc"))
    finally:
        H.kill_pid(pid)
        spinner.wait()
    H.log("record -p --duration 2 took %.2f s wall" % rec.seconds)
    _check_window(rec.capture, 2.0)
    assert rec.seconds < 2.0 + WALL_SLACK_S, "record took %.1f s for --duration 2" % rec.seconds


def test_duration_command_ends_it_with_sigterm():
    # The spinner would run 60 s: --duration 1 must stop sampling after ~1 s
    # and end it like SIGINT does (SIGTERM, record exits with 143).
    rec = H.record(cmd=[H.fixture("spinner"), "60"], duration=1,
                   output=H.tmp_path("cli-dur-cmd.msc"), expect_status=128 + signal.SIGTERM)
    _check_window(rec.capture, 1.0)


def _assert_early_failure(output, why_re, tmpdir=None):
    marker = H.tmp_path("cli-ran")
    if os.path.exists(marker):
        os.unlink(marker)
    proc = H.run([H.BIN, "record", "-o", output, "--", "sh", "-c", "touch %s" % marker])
    assert proc.returncode == 2, "record -o %s: status %d (want 2)\n%s" % (
        output, proc.returncode, proc.stderr)
    assert not os.path.exists(marker), "the command ran although -o %s is unwritable" % output
    err = proc.stderr.strip()
    assert err.startswith("microscope record: ") and output in err, err
    assert re.search(why_re, err), "%r does not say why (%s)" % (err, why_re)


def test_unwritable_output_fails_before_running():
    _assert_early_failure("/proc/version", r"cannot be created|cannot create")
    _assert_early_failure("/nonexistent-dir/x.msc", r"/nonexistent-dir does not exist")
    d = H.tmp_path("cli-isdir")
    os.makedirs(d, exist_ok=True)
    _assert_early_failure(d, r"is a directory")


def test_immutable_output_fails_before_running():
    if not shutil.which("chattr"):
        H.skip("chattr (Debian e2fsprogs) is not installed; it sets the immutable flag "
               "this check needs")
    path = H.tmp_path("cli-immutable.msc")
    with open(path, "w") as f:
        f.write("old")
    proc = H.run(["chattr", "+i", path])
    if proc.returncode:
        H.skip("chattr +i %s failed (%s): its file system has no immutable flag (tmpfs "
               "before Linux 6.0, overlayfs, ...)" % (path, proc.stderr.strip()))
    try:
        _assert_early_failure(path, r"immutable")
    finally:
        H.run(["chattr", "-i", path])


def test_capture_kept_when_sealing_fails():
    """A 4 KiB tmpfs passes the early check (a file can be created) but the
    capture does not fit: record exits 1 and names a fallback file that
    holds the recording."""
    H.require_root()
    mnt = H.tmp_path("cli-tiny")
    cwd = H.tmp_path("cli-cwd")
    os.makedirs(mnt, exist_ok=True)
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    proc = H.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", mnt])
    if proc.returncode:
        H.skip("mounting a 4 KiB tmpfs to fill up failed (%s): this needs root with "
               "CAP_SYS_ADMIN in its mount namespace" % proc.stderr.strip())
    try:
        proc = H.run([H.BIN, "record", "-o", mnt + "/out.msc", "--",
                      H.fixture("spinner"), "1"], cwd=cwd)
    finally:
        H.run(["umount", mnt])
    assert proc.returncode == 1, "status %d (want 1)\n%s" % (proc.returncode, proc.stderr)
    m = re.search(r"microscope record: capture saved to (\S+) instead", proc.stderr)
    assert m, proc.stderr
    assert "No space left" in proc.stderr, proc.stderr
    saved = m.group(1)
    assert os.path.dirname(saved) == os.path.realpath(cwd), saved
    prof = H.folded(saved)
    assert H.count_containing(prof, "spin_forever_work") > 0, H.show_stacks(prof)


def test_symbolize_checks_output_first():
    proc = H.run([H.BIN, "symbolize", "-o", "/nonexistent-dir/x.msc", "/nonexistent-in.msc"])
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == ("microscope symbolize: cannot write /nonexistent-dir/x.msc: "
                                   "directory /nonexistent-dir does not exist"), proc.stderr


def test_usage_errors_exit_2():
    H.require_root()
    cases = [
        (["--call-graph", "fp", "--stack-size", "8192"], r"no effect with --call-graph fp"),
        (["--preset", "light", "--stack-size", "8192"], r"no effect with --call-graph fp"),
        (["--call-graph", "dwarf", "--stack-size", "0"], r"dwarf needs a stack copy"),
        (["-p", "1,,2"], r"bad pid list"),
        (["-p", "1,"], r"bad pid list"),
        (["-p", ",1"], r"bad pid list"),
        (["--off-cpu-min", "500"], r"--off-cpu-min .*needs --off-cpu"),
        (["--window", "0s"], r"bad --window"),
        (["--window", "0.5s"], r"bad --window"),
    ]
    for args, why in cases:
        argv = [H.BIN, "record", "-o", H.tmp_path("cli-usage.msc")] + args
        if args[0] != "-p":
            argv += ["--", "true"]
        proc = H.run(argv)
        assert proc.returncode == 2, "%s: status %d\n%s" % (args, proc.returncode, proc.stderr)
        assert re.search(why, proc.stderr) and "microscope record: " in proc.stderr, proc.stderr
    # fp without a copy is fine
    H.record(cmd=["true"], output=H.tmp_path("cli-fp.msc"),
             extra=["--call-graph", "fp", "--stack-size", "0", "-q"])
    # --off-cpu-min with --off-cpu is fine
    H.record(cmd=["true"], output=H.tmp_path("cli-offmin.msc"),
             extra=["--off-cpu", "--off-cpu-min", "500", "-q"])


MAX_PIDS = 4096  # MS_MAX_PIDS, userspace/options/record_options.h


def test_pid_list_limit():
    """-p takes 66 processes (once refused: at most 64, unsaid); past
    MS_MAX_PIDS the error says why, echoing the list cut short."""
    H.require_root()
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(66)]
    try:
        rec = H.record(pids=[p.pid for p in sleepers], duration=0.5, extra=["-q"],
                       output=H.tmp_path("cli-66pids.msc"))
    finally:
        for p in sleepers:
            p.kill()
            p.wait()
    assert rec.returncode == 0
    too_many = ",".join(str(1000 + i) for i in range(MAX_PIDS + 1))
    proc = H.run([H.BIN, "record", "-o", H.tmp_path("cli-pids.msc"), "-p", too_many])
    assert proc.returncode == 2, proc.stderr
    assert "more than %d pids" % MAX_PIDS in proc.stderr, proc.stderr
    assert len(proc.stderr) < 400 and too_many not in proc.stderr, proc.stderr[:500]
    proc = H.run([H.BIN, "record", "-o", H.tmp_path("cli-pids.msc"), "-p", "12,x7,13"])
    assert proc.returncode == 2 and "'x7' is not a pid" in proc.stderr, proc.stderr


def test_record_in_its_own_pid_namespace_is_refused():
    """perf names pids as the recorder's namespace sees them (0 outside it)
    and the sampler names host pids: a recorder in a pid namespace of its
    own (a container without --pid=host, systemd-nspawn) is refused with
    status 2 and a way out, before anything is attached, as -a and as a
    launched command."""
    H.require_root()
    if not shutil.which("unshare"):
        H.skip("unshare (util-linux) is not installed")
    out = H.tmp_path("cli-pidns.msc")
    for args in (["-a", "-d", "1"], ["--", "true"]):
        proc = H.run(["unshare", "--pid", "--fork", "--mount-proc", H.BIN, "record",
                      "-o", out] + args)
        assert proc.returncode == 2, "%s: status %d\n%s" % (args, proc.returncode, proc.stderr)
        assert re.search(r"pid namespace of its own \(pid:\[\d+\]\).*--pid=host",
                         proc.stderr, re.S), proc.stderr
        assert not os.path.exists(out)


def test_sigint_during_start_up_is_kept():
    """A SIGINT that arrives during start-up (BPF load and snapshots, a
    second or two on a loaded host) stops the recording as soon as it
    starts: the command is never run (status 130, a message naming it), and
    -a stops at once.  The recorder starts with SIGINT ignored, as a shell's
    background job does, which used to lose the signal: `sleep 30` ran to
    its end."""
    H.require_root()

    def ignore_sigint():
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    # A signal must land after the handlers are installed (before, SIGINT
    # is still ignored and lost, as for any program) and before the command
    # starts.  Start-up is now often shorter than 50 ms (warm caches, cheap
    # BPF verification): a signal that came too late stops a running
    # recording and ends its command (status 143, not the bug, which let
    # `sleep 30` run to its end), so earlier ones are tried.
    for args, want_rc in ((["--", "sleep", "30"], 130), (["-a"], None)):
        for delay in (0.05, 0.02, 0.008):
            out = H.tmp_path("cli-early.msc")
            proc = subprocess.Popen([H.BIN, "record", "-q", "-f", "-o", out] + args,
                                    stderr=subprocess.PIPE, text=True, preexec_fn=ignore_sigint)
            time.sleep(delay)
            proc.send_signal(signal.SIGINT)
            try:
                _, err = proc.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise AssertionError("%s: still running 120 s after an early SIGINT" % args)
            H.log("%s after %.3f s: status %d, %s" % (args, delay, proc.returncode, err.strip()))
            if want_rc is not None and proc.returncode == 128 + signal.SIGTERM:
                continue  # start-up was over: try an earlier signal
            if want_rc is not None:
                assert proc.returncode == want_rc, (proc.returncode, err)
                assert "during start-up: 'sleep' not run" in err, err
                assert "0 samples" in H.report(out).stdout or \
                    "no samples" in H.report(out).stdout
            else:
                assert proc.returncode == 0, (proc.returncode, err)
                assert os.path.exists(out)
            break
        else:
            H.log("%s: start-up was over before every signal tried" % args)


def test_help_texts():
    top = H.run([H.BIN, "--help"], check=True).stdout
    assert "pprof" in top and "speedscope" in top and "symbolize" in top, top
    rec = H.run([H.BIN, "record", "--help"], check=True).stdout
    assert "SIGTERM" in rec and "143" in rec, rec


def test_save_raw_refuses_existing_stream():
    d = H.tmp_path("cli-raw")
    shutil.rmtree(d, ignore_errors=True)
    H.record(cmd=["true"], output=H.tmp_path("cli-raw.msc"), save_raw=d, extra=["-q"])
    raw = os.path.join(d, "stream.msraw")
    before = os.stat(raw)
    proc = H.run([H.BIN, "record", "-o", H.tmp_path("cli-raw2.msc"), "--save-raw", d, "--",
                  "true"])
    assert proc.returncode == 2 and "already holds a raw stream" in proc.stderr, proc.stderr
    after = os.stat(raw)
    assert (after.st_mtime_ns, after.st_size) == (before.st_mtime_ns, before.st_size)


def _perf_max_sample_rate():
    try:
        with open("/proc/sys/kernel/perf_event_max_sample_rate") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 0


def test_freq_above_the_shared_limit_is_refused():
    """-F has one ceiling (MS_MAX_FREQ_HZ = 20000, options/record_options.h),
    the one the collector enforces too: one above it is refused before
    anything runs, with the validator's message (tests/unit/test_options.c
    checks the same text); the ceiling itself is accepted."""
    marker = H.tmp_path("cli-freq-ran")
    if os.path.exists(marker):
        os.unlink(marker)
    out = H.tmp_path("cli-freq.msc")
    for freq in ("20001", "100000"):
        proc = H.run([H.BIN, "record", "-F", freq, "-o", out, "--", "touch", marker])
        assert proc.returncode == 2, "-F %s: status %d\n%s" % (freq, proc.returncode,
                                                               proc.stderr)
        assert proc.stderr.strip() == (
            "microscope record: bad frequency %s Hz (1..20000 Hz: above that the sampler "
            "itself would take the CPUs)" % freq), proc.stderr
        assert not os.path.exists(marker), "-F %s: the command ran" % freq
    rec = H.run([H.BIN, "record", "--help"], check=True).stdout
    assert "max 20000" in rec, rec
    H.require_root()
    if _perf_max_sample_rate() < 20000:
        H.skip("kernel.perf_event_max_sample_rate=%d is below 20000 (the kernel lowered "
               "it): -F 20000 would be refused by the kernel's limit"
               % _perf_max_sample_rate())
    H.record(cmd=["true"], output=out, freq=20000, extra=["-q"])


def _free_pid():
    """A pid no process has (counting down from pid_max)."""
    with open("/proc/sys/kernel/pid_max") as f:
        pid = int(f.read()) - 1
    while os.path.exists("/proc/%d" % pid):
        pid -= 1
    return pid


def test_failing_step_is_named():
    """A step that fails at run time is named with its target and the
    system's reason, and record exits 1 without a capture."""
    H.require_root()
    pid = _free_pid()
    out = H.tmp_path("cli-nopid.msc")
    if os.path.exists(out):
        os.unlink(out)
    proc = H.run([H.BIN, "record", "-p", str(pid), "-o", out])
    assert proc.returncode == 1, "status %d (want 1)\n%s" % (proc.returncode, proc.stderr)
    assert proc.stderr.strip().splitlines()[-1] == (
        "microscope record: attaching to pid %d: No such process" % pid), proc.stderr
    assert not os.path.exists(out), "a capture was written for a pid that does not exist"


def test_exit_statuses_across_commands():
    """One table of statuses (README, "Exit status"): 2 for every usage or
    argument error found before the work (an unknown option, a bad value or
    regex, an --event the input lacks, a wall-clock range for a file, an
    output refused before anything is read: a symbolic link, a missing
    directory), 1 when the work fails
    (an input missing or damaged).  report --focus '(' used to exit 1, and a
    symbolic link as -o 2 in record but 1 in convert and report --svg."""
    H.require_root()
    cap = H.tmp_path("status.msc")
    H.record(cmd=[H.fixture("spinner"), "1"], output=cap, extra=["-q"])
    link = H.tmp_path("status-link")
    os.symlink(H.tmp_path("status-target"), link)
    svg_link = H.tmp_path("status-link.svg")
    os.symlink(H.tmp_path("status-target.svg"), svg_link)
    damaged = H.tmp_path("status-damaged.msc")
    with open(cap, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0xFF
    with open(damaged, "wb") as f:
        f.write(bytes(data))
    missing = H.tmp_path("no-such.msc")
    nodir = H.tmp_path("no-such-dir/out")
    sym = "symbolic link; refusing"
    table = [
        # command line, status, what stderr says
        (["record", "--bogus", "--", "true"], 2, r"unrecognized option|unknown option"),
        (["record", "-F", "abc", "--", "true"], 2, r"bad frequency"),
        (["record", "-o", link, "--", "true"], 2, sym),
        (["record", "-o", nodir + ".msc", "--", "true"], 2, r"does not exist"),
        (["record", "-o", H.TMP, "--", "true"], 2, r"is a directory"),
        (["record", "--continuous", cap, "--", "true"], 2, r"is not a directory"),
        (["record", "--continuous", H.tmp_path("status-segs"), "--retain", "0", "--", "true"],
         2, r"bad --retain '0'"),
        (["record", "--continuous", H.tmp_path("status-segs"), "--retain", "0s", "--", "true"],
         2, r"bad --retain '0s'"),
        (["report", cap, "--bogus"], 2, r"unknown option"),
        (["report", cap, "--limit", "x"], 2, r"--limit takes"),
        (["report", cap, "--focus", "("], 2, r"--focus '\('"),
        (["report", cap, "--ignore", "["], 2, r"--ignore '\['"),
        (["report", cap, "--hide", "("], 2, r"--hide '\('"),
        (["report", cap, "--event", "nope"], 2, r"no event 'nope'"),
        (["report", cap, "--svg", link], 2, sym),
        (["report", "--diff", cap, cap, "--focus", "("], 2, r"--focus '\('"),
        (["report", "--diff", cap, cap, "--event", "nope"], 2, r"no event 'nope'"),
        (["report", cap, "extra"], 2, r"one capture FILE"),
        (["report", cap, "--since", "-10m"], 2, r"select segments of a directory"),
        (["report", cap, "--since", "-1s"], 2, r"select segments of a directory"),
        (["report", "--diff", cap, cap, "--since", "-10m"], 2, r"segments of a directory"),
        (["report", missing], 1, r"No such file"),
        (["report", "--diff", missing, cap], 1, r"^microscope report: .*No such file"),
        (["convert", "--diff", missing, cap, "-o", H.tmp_path("s.svg")], 1,
         r"^microscope convert: .*No such file"),
        (["report", damaged], 1, re.escape(damaged)),
        (["convert", cap, "--bogus"], 2, r"unknown option"),
        (["convert", cap, "--to", "bogus"], 2, r"unknown format"),
        (["convert", cap, "--to", "folded", "-o", link], 2, sym),
        (["convert", cap, "-o", nodir + ".folded"], 2, r"does not exist"),
        (["convert", cap, "--to", "folded", "--event", "nope"], 2, r"no event 'nope'"),
        (["convert", "--diff", cap, cap, "-o", svg_link], 2, sym),
        (["convert", cap, "--to", "folded", "--since", "-10m"], 2, r"segments of a directory"),
        (["convert", missing, "--to", "folded"], 1, r"No such file"),
        (["convert", damaged, "--to", "folded"], 1, re.escape(damaged)),
        (["symbolize", cap], 2, r"-o OUT"),
        (["symbolize", cap, "--bogus", "-o", H.tmp_path("s.msc")], 2, r"unrecognized option"),
        (["symbolize", cap, "-o", link], 2, sym),
        (["symbolize", cap, "--since", "-10m", "-o", H.tmp_path("s.msc")], 2,
         r"segments of a directory"),
        (["symbolize", missing, "-o", H.tmp_path("s.msc")], 1, r"No such file"),
        (["serve"], 2, r"one CAPTURE or DIR"),
        (["serve", cap, "--port", "x"], 2, r"--port takes"),
        (["serve", cap, "--bogus"], 2, r"unrecognized option|bad option"),
        (["serve", missing], 1, r"No such file"),
        (["snapshot", "x"], 2, r"bad pid"),
        (["bogus"], 2, r"unknown command"),
    ]
    wrong = []
    for args, status, why in table:
        p = H.run([H.BIN] + args, timeout=30, quiet=True)
        if p.returncode != status or not re.search(why, p.stderr):
            wrong.append("%s: status %d (want %d), stderr %r" % (
                " ".join(args), p.returncode, status, p.stderr[:300]))
    assert not wrong, "\n".join(wrong)
    # Nothing was written through the links or beside them.
    assert not os.path.exists(H.tmp_path("status-target"))
    assert not os.path.exists(H.tmp_path("status-target.svg"))


def test_report_views_of_data_a_capture_lacks_exit_0():
    """A report view of data the capture does not hold, or whose selection
    holds none of it, is a report that selects nothing (README, "Exit
    status": 0, said on stderr), not a failed input (1) nor an argument
    error (2): --off-cpu on a capture recorded without it exited 1 while
    --zones without probes and --wall without off-CPU exited 0.  Every view
    (--timeline, --by, the plain report) says so the same way."""
    H.require_root()
    cpu = H.tmp_path("views-cpu.msc")
    H.record(cmd=[H.fixture("spinner"), "1"], output=cpu, extra=["-q"])
    off = H.tmp_path("views-off.msc")
    H.record(cmd=[H.fixture("offcpu")], output=off, extra=["-q", "--off-cpu"])
    n_off = int(re.search(r"complete\s+(\d+) intervals",
                          H.report(off, "--off-cpu").stdout).group(1))
    assert n_off > 0, "the off-CPU fixture recorded no interval"
    lacks = r"no off-CPU intervals \(record with --off-cpu\)"
    nothing = r"none of the capture's \d+ samples is selected"
    nothing_off = r"none of the capture's \d+ off-CPU intervals is selected"
    table = [
        # arguments, stdout says, stderr says
        ([cpu, "--off-cpu"], r"no off-CPU intervals: the capture was recorded without", lacks),
        ([cpu, "--off-cpu", "--timeline"], r"no off-CPU intervals", lacks),
        ([cpu, "--off-cpu", "--by", "thread"], r"no off-CPU intervals", lacks),
        ([cpu, "--zones"], r"no probe sites", r"^$"),
        ([cpu, "--wall"], r"off-CPU    not recorded", r"^$"),
        ([cpu, "--comm", "no-such-comm"], r"\(no samples\)", nothing),
        ([cpu, "--timeline", "--comm", "no-such-comm"], r"timeline: no samples in the selection",
         nothing),
        ([cpu, "--by", "thread", "--comm", "no-such-comm"], r"by thread", nothing),
        ([off, "--off-cpu", "--comm", "no-such-comm"], r"off-CPU by blocking function \(top 0",
         nothing_off),
        ([off, "--off-cpu", "--timeline", "--comm", "no-such-comm"],
         r"timeline: no samples in the selection", nothing_off),
    ]
    wrong = []
    for args, out, err in table:
        p = H.run([H.BIN, "report"] + args, timeout=60, quiet=True)
        if p.returncode != 0 or not re.search(out, p.stdout) or not re.search(err, p.stderr):
            wrong.append("report %s: status %d (want 0), stdout %r, stderr %r" % (
                " ".join(args), p.returncode, p.stdout[:300], p.stderr[:300]))
    assert not wrong, "\n".join(wrong)


def _by_rows(capture, *args):
    """report --by thread ARGS -> ({thread: samples recorded}, stdout, stderr)."""
    p = H.run([H.BIN, "report", capture, "--by", "thread"] + list(args), check=True, quiet=True)
    rows = {}
    for line in re.split(r"by thread \((?:samples|ms)[^)\n]*\)\n", p.stdout, 1)[1].splitlines()[1:]:
        m = re.match(r"^\s+[\d.]+%\s+\S+\s+(\d+)\s+(.*)$", line)
        if not m:
            break
        rows[m.group(2)] = int(m.group(1))
    return rows, p.stdout, p.stderr


def test_by_and_timeline_keep_the_window():
    """report --by counts the samples the window and filters select, as the
    tree does (it counted the whole capture: --since past the end listed
    all 167 samples under an empty tree); the halves of a split add up to
    the whole.  --timeline on a window past the data says it holds none
    (it drew a 1 ns timeline); --off-cpu --by splits the intervals (it
    printed an empty table), their ms adding up to the summary's."""
    H.require_root()
    cpu = H.tmp_path("by-cpu.msc")
    H.record(cmd=[H.fixture("spinner"), "1"], output=cpu, extra=["-q"])
    whole, _, _ = _by_rows(cpu)
    first, _, _ = _by_rows(cpu, "--until", "0.5s")
    second, _, _ = _by_rows(cpu, "--since", "0.5s")
    H.log("whole %s, halves %s %s" % (whole, first, second))
    assert whole and all(first.get(t, 0) + second.get(t, 0) == n for t, n in whole.items()), \
        (whole, first, second)
    assert 0 < sum(first.values()) < sum(whole.values()), (whole, first)
    rows, _, err = _by_rows(cpu, "--since", "100s")
    assert rows == {} and re.search(r"none of the capture's \d+ samples is selected", err), \
        (rows, err)
    p = H.run([H.BIN, "report", cpu, "--timeline", "--since", "100s"], check=True, quiet=True)
    assert "timeline: no samples in the window" in p.stdout, p.stdout[-1500:]
    off = H.tmp_path("by-off.msc")
    H.record(cmd=[H.fixture("offcpu")], output=off, extra=["-q", "--off-cpu"])
    p = H.run([H.BIN, "report", off, "--off-cpu", "--by", "thread"], check=True, quiet=True)
    rows = re.findall(r"^\s+[\d.]+%\s+([\d.]+)\s+(\d+)\s+offcpu \[", p.stdout, re.M)
    assert len(rows) == 1 and float(rows[0][0]) > 0, p.stdout[-1500:]
