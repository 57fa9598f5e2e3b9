"""How a recording ends (issue 2 acceptance): normally, by SIGINT/SIGTERM to
the recorder, with the target killed by SIGKILL.  Each time the capture is
sealed and readable, and no BPF program of ours is left loaded.

While `record` runs, the test reads the IDs of the BPF programs, links and
maps it holds from /proc/PID/fdinfo and checks with bpftool that those
programs are ours (named after SEC(...) functions in bpf/*.bpf.c), so the
check cannot pass by not recognising them; after it exits, bpftool must
list none of those IDs.  Going by IDs keeps the check exact while other
processes (another developer's recorder) load programs of the same names.
"""
import signal
import time

import helpers as H

CRASH_STATUSES = {-signal.SIGSEGV, -signal.SIGABRT, -signal.SIGBUS, -signal.SIGILL,
                  -signal.SIGFPE, 128 + signal.SIGSEGV, 128 + signal.SIGABRT}


def _record_spinner(spinner_seconds, stop, settle=1.0):
    """Record the spinner; once it runs (so sampling is attached) and
    @settle seconds passed, check our programs are loaded and call
    stop(recorder_popen, spinner_pid).  Returns (status, stderr, capture,
    spinner CPU ns before the stop) after the recorder exited and the
    leftover check passed."""
    proc, capture, fixture_out = H.start_record([H.fixture("spinner"), str(spinner_seconds)])
    spinner_pid = None
    try:
        m = H.wait_for_line(fixture_out, r"spinner ready pid=(\d+)", timeout=30, proc=proc)
        spinner_pid = int(m.group(1))
        time.sleep(settle)
        assert proc.poll() is None, "record exited early (status %s): %s" % (
            proc.returncode, proc.communicate()[1])
        held = H.assert_recorder_holds_our_programs(proc.pid)
        # Everything the spinner ran so far was recorded (it is exec'd
        # after sampling is attached): a lower bound for the capture.
        cpu_ns = H.thread_cpu_ns(spinner_pid)
        if stop:
            stop(proc, spinner_pid)
        try:
            out, err = proc.communicate(timeout=60)
        except Exception:
            raise AssertionError("record did not exit within 60 s after being stopped")
        H.log("record exited with status %d\nstderr:\n%s" % (proc.returncode, err.strip()))
        # Checked before the spinner is killed: a program whose descriptor
        # leaked into the target would still be held by it.
        H.assert_bpf_released(held)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if spinner_pid:
            H.kill_pid(spinner_pid)
    return proc.returncode, err, capture, cpu_ns


def _assert_sealed(capture, cpu_ns):
    """The capture reads back and holds the spinner's samples: at least
    70 % of 999 Hz x the CPU time it had used when we checked."""
    H.report(capture, "--limit", "10", check=True)
    prof = H.folded(capture)
    got = H.count_containing(prof, "spin_forever_work")
    need = 0.7 * H.DEFAULT_HZ * cpu_ns / 1e9
    msg = "spin_forever_work: %d samples; the spinner had used %.3f s CPU, so need >= %.0f" % (
        got, cpu_ns / 1e9, need)
    H.log(msg)
    assert got >= need, msg + "\n" + H.show_stacks(prof)


def test_normal_end_leaves_no_bpf_programs():
    status, err, capture, cpu_ns = _record_spinner(2.5, stop=None, settle=0.5)
    assert status == 0, "record exited %d after the target exited 0:\n%s" % (status, err)
    _assert_sealed(capture, cpu_ns)


def _test_stop_by(sig):
    def stop(proc, spinner_pid):
        H.log("sending %s to record (pid %d)" % (sig.name, proc.pid))
        proc.send_signal(sig)

    status, err, capture, cpu_ns = _record_spinner(60, stop)
    assert status not in CRASH_STATUSES, "record crashed after %s: status %d\n%s" % (
        sig.name, status, err)
    _assert_sealed(capture, cpu_ns)


def test_sigint_seals_capture_and_leaves_no_bpf_programs():
    _test_stop_by(signal.SIGINT)


def test_sigterm_seals_capture_and_leaves_no_bpf_programs():
    _test_stop_by(signal.SIGTERM)


def test_sighup_seals_capture_and_leaves_no_bpf_programs():
    """An ssh session that drops sends SIGHUP: record stops as on SIGTERM
    and keeps its capture (it died with status 129 and wrote nothing)."""
    _test_stop_by(signal.SIGHUP)


def test_target_sigkilled_leaves_no_bpf_programs():
    def stop(proc, spinner_pid):
        H.log("sending SIGKILL to the target (pid %d)" % spinner_pid)
        H.kill_pid(spinner_pid, signal.SIGKILL)

    status, err, capture, cpu_ns = _record_spinner(60, stop)
    assert status == 128 + signal.SIGKILL, \
        "record exited %d after its target was killed by SIGKILL (expected 137):\n%s" % (
            status, err)
    _assert_sealed(capture, cpu_ns)
