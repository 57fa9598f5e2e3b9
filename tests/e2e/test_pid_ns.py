"""record -p PID --pid-ns NS (issue 15): a pid as a container's own pid
namespace numbers it.  A real pid namespace (`unshare --pid --fork`) runs a
shell as its pid 1 and a burner as its pid 2; `-p 2 --pid-ns SHELL_HOST_PID`
must record that burner (its host pid, its function), never the host's pid
2; a pid the namespace does not hold and a file that is not a pid namespace
are refused with status 2 before anything is attached."""
import os
import shutil
import subprocess
import time

import helpers as H
import test_host


def _children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def _nspid(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("NSpid:"):
                return [int(x) for x in line.split()[1:]]
    return []


def _wait_child(pid, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = _children(pid)
        if kids:
            return kids[0]
        time.sleep(0.05)
    raise AssertionError("pid %d started no child in %d s" % (pid, timeout))


@H.timeout(600)
def test_record_pid_in_its_namespace():
    H.require_root()
    if not shutil.which("unshare"):
        H.skip("unshare (util-linux) is not installed")
    burn = test_host._burner("burn_pidns", "spin_in_pidns")
    ns = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "sh", "-c",
                           "%s 30 & wait" % burn])
    shell = None
    try:
        shell = _wait_child(ns.pid)   # pid 1 of the new namespace
        burner = _wait_child(shell)   # its pid 2
        assert _nspid(shell)[-1] == 1 and _nspid(burner)[-1] == 2, (
            _nspid(shell), _nspid(burner))
        assert burner != 2
        out = H.tmp_path("pidns.msc")
        # the namespace by a host pid, then by its namespace file
        for ref in (str(shell), "/proc/%d/ns/pid" % shell):
            H.record(pids=[2], output=out, duration=1.5, extra=("--pid-ns", ref, "-f"))
            t = test_host.tables(out)
            pids = {int(s[0]) for s in t["sample"]}
            mine = [s for s in t["sample"] if s[4] == "spin_in_pidns"]
            H.log("--pid-ns %s: sampled pids %s, %d samples in spin_in_pidns" % (
                ref, sorted(pids), len(mine)))
            assert pids == {burner}, "--pid-ns %s: samples of pids %s, expected only %d" % (
                ref, sorted(pids), burner)
            assert len(mine) >= 0.5 * len(t["sample"]) > 0, \
                "--pid-ns %s: %d of %d samples in spin_in_pidns" % (
                    ref, len(mine), len(t["sample"]))
            procs = {int(p[0]): int(p[4]) for p in t["process"]}
            assert procs.get(burner) == 2, "process table: %s" % procs
        # refused before anything is attached
        bad = H.record(pids=[4000000], output=H.tmp_path("none.msc"), duration=1,
                       extra=("--pid-ns", str(shell)), expect_status=2)
        assert "no process 4000000 in that pid namespace" in bad.stderr, bad.stderr
        bad = H.record(pids=[2], output=H.tmp_path("none.msc"), duration=1,
                       extra=("--pid-ns", "/proc/self/ns/net"), expect_status=2)
        assert "is not a pid namespace" in bad.stderr, bad.stderr
        assert not os.path.exists(H.tmp_path("none.msc"))
    finally:
        if shell:  # pid 1 of the namespace: its end ends every process in it
            H.kill_pid(shell)
        ns.kill()
        ns.wait()
