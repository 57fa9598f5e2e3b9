"""record -p PID --pid-ns NS (issue 15): a pid as a container's own pid
namespace numbers it.  A real pid namespace (`unshare --pid --fork`) runs a
shell as its pid 1 and a burner as its pid 2; `-p 2 --pid-ns SHELL_HOST_PID`
must record that burner (its host pid, its function), never the host's pid
2; a pid the namespace does not hold and a file that is not a pid namespace
are refused with status 2 before anything is attached."""
import ctypes
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


@H.timeout(600)
def test_record_pid_ns_by_container():
    """--pid-ns NAME|ID: two containers (test_host.Containers: A a
    systemd-nspawn machine by name, B a podman container by short id) each
    run their burner as their own pid 1; -p 1 --pid-ns A records A's burner
    only (its host pid, spin_in_a), -p 1 --pid-ns B's short id B's.  The
    unshare process each leaves in its container's cgroup (in the host's pid
    namespace) is not taken for the container.  A prefix matching two
    containers and a name matching none exit 2 naming the candidates."""
    ct = test_host.Containers()
    extra_cg = None
    extra = None
    try:
        ct.start("A", 30)
        ct.start("B", 30)
        # a third podman-style container whose id shares B's first 10 hex
        # digits: B's 12-digit short id names B alone, 10 digits both
        id_c = ct.id_b[:10] + ("1" if ct.id_b[10] != "1" else "2") + ct.id_b[11:]
        extra_cg = os.path.join(ct.v2 + "/machine.slice", "libpod-%s.scope" % id_c)
        os.makedirs(extra_cg, exist_ok=True)
        extra = subprocess.Popen(["sh", "-c", "echo $$ > %s/cgroup.procs && exec unshare "
                                  "--pid --fork --kill-child sleep 60" % extra_cg])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pids = {w: ct.pids(w) for w in "AB"}
            inner = {w: [p for p in pids[w] if _nspid(p)[-1:] == [1]] for w in "AB"}
            if all(inner.values()) and len(open(extra_cg + "/cgroup.procs").read().split()) >= 2:
                break
            time.sleep(0.05)
        burners = {}
        for w in "AB":
            ones = [p for p in ct.pids(w) if _nspid(p)[-1:] == [1] and len(_nspid(p)) == 2]
            assert len(ones) == 1, "container %s: pid-1 processes %s" % (w, ones)
            burners[w] = ones[0]
        out = H.tmp_path("pidns_ct.msc")
        for w, ref, func, other in (("A", ct.name_a, "spin_in_a", "spin_in_b"),
                                    ("B", ct.id_b[:12], "spin_in_b", "spin_in_a")):
            rec = H.record(pids=[1], output=out, duration=1.5,
                           extra=("--pid-ns", ref) + test_host.NO_BUDGET)
            t = test_host.tables(out)
            pids = {int(s[0]) for s in t["sample"]}
            leaves = {}
            for s in t["sample"]:
                leaves[s[4]] = leaves.get(s[4], 0) + int(s[3])
            n = sum(leaves.values())
            H.log("--pid-ns %s: sampled pids %s (burner %d), %d of %d samples in %s" % (
                ref, sorted(pids), burners[w], leaves.get(func, 0), n, func))
            assert pids == {burners[w]}, "--pid-ns %s: samples of pids %s, expected only %d" % (
                ref, sorted(pids), burners[w])
            assert leaves.get(func, 0) >= 0.9 * n > 0, \
                "--pid-ns %s: %d of %d samples in %s" % (ref, leaves.get(func, 0), n, func)
            assert other not in leaves, leaves
            procs = {int(p[0]): int(p[4]) for p in t["process"]}
            assert procs.get(burners[w]) == 1, "process table: %s" % procs
        # a prefix of both B and the third container: ambiguous
        none = H.tmp_path("none.msc")
        bad = H.record(pids=[1], output=none, duration=1, extra=("--pid-ns", ct.id_b[:10]),
                       expect_status=2)
        assert "matches 2 containers" in bad.stderr, bad.stderr
        for cid in (ct.id_b[:12], id_c[:12]):
            assert cid in bad.stderr, "%s not named: %s" % (cid, bad.stderr)
        # no such container: the running ones are named
        bad = H.record(pids=[1], output=none, duration=1,
                       extra=("--pid-ns", "nosuch%d" % os.getpid()), expect_status=2)
        assert "no running container matches" in bad.stderr, bad.stderr
        assert ct.name_a in bad.stderr and ct.id_b[:12] in bad.stderr, bad.stderr
        assert not os.path.exists(none)
    finally:
        if extra:
            extra.kill()
            extra.wait()
        ct.close()
        if extra_cg:
            for _ in range(100):
                try:
                    os.rmdir(extra_cg)
                    break
                except OSError:
                    for pid in open(extra_cg + "/cgroup.procs").read().split():
                        H.kill_pid(int(pid))
                    time.sleep(0.05)


@H.timeout(300)
def test_unsampled_process_keeps_its_namespace_pid():
    """record -a: a process in a pid namespace of its own that is never
    sampled keeps its namespace pid (the /proc snapshot's NSpid) in the
    process table: one asleep as its namespace's pid 1, and one a zombie
    (the pid 1 a container's end leaves while its new parent has not reaped
    it yet: test_record_pid_ns_by_container left two, and the next test's
    -a recording showed them with namespace pid 0)."""
    H.require_root()
    if not shutil.which("unshare"):
        H.skip("unshare (util-linux) is not installed")
    libc = ctypes.CDLL(None, use_errno=True)
    PR_SET_CHILD_SUBREAPER = 36
    assert libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0, os.strerror(ctypes.get_errno())
    asleep = subprocess.Popen(["unshare", "--pid", "--fork", "--kill-child", "sleep", "120"])
    dying = subprocess.Popen(["unshare", "--pid", "--fork", "sleep", "120"])
    procs = {}
    try:
        for name, p in (("asleep", asleep), ("zombie", dying)):
            procs[name] = _wait_child(p.pid)
            assert _nspid(procs[name])[-1] == 1, (name, _nspid(procs[name]))
        # unshare ends first, so its child (this namespace's pid 1) is ours
        # (the subreaper's) when it dies, and stays a zombie until reaped
        dying.kill()
        dying.wait()
        H.kill_pid(procs["zombie"])
        deadline = time.monotonic() + 10
        while _state(procs["zombie"]) != "Z" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state(procs["zombie"]) == "Z", _state(procs["zombie"])
        out = H.tmp_path("unsampled.msc")
        H.record(system_wide=True, output=out, duration=1, extra=test_host.NO_BUDGET)
        t = test_host.tables(out)
        rows = {int(p[0]): p for p in t["process"]}
        host_ns = os.stat("/proc/self/ns/pid").st_ino
        for name, pid in procs.items():
            assert pid in rows, "%s [%d] is not in the process table" % (name, pid)
            H.log("%s: %s" % (name, rows[pid]))
            assert not [s for s in t["sample"] if int(s[0]) == pid], "%s was sampled" % name
            assert rows[pid][4] == "1", "%s [%d] has namespace pid %s, not 1" % (
                name, pid, rows[pid][4])
            assert int(rows[pid][3]) not in (0, host_ns), "%s: pid ns %s" % (name, rows[pid][3])
    finally:
        for pid in procs.values():
            H.kill_pid(pid)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        for p in (asleep, dying):
            p.kill()
            p.wait()


def _state(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("State:"):
                return line.split()[1]
    return "?"
