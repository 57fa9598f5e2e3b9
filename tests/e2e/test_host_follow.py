"""record --container across a container restart, and by docker and podman
name (docs/host.md).  Containers are emulated as in test_host.py: a cgroup
named as the runtime names it (machine.slice/machine-NAME.scope for
systemd-nspawn, machine.slice/libpod-ID.scope for podman,
system.slice/docker-ID.scope for docker) holding `unshare --pid --fork`
running a static burner; the runtimes' state files (podman's
containers.json, docker's config.v2.json) are fakes under a directory given
by MICROSCOPE_CONTAINER_STATE_ROOT."""
import json
import os
import shlex
import subprocess
import time

import helpers as H
import test_host

NO_BUDGET = ("--budget", "0")


class Box:
    """One emulated container: cgroup rel (relative to the v2 root) and a
    burner whose hot function is func."""

    def __init__(self, rel, func):
        self.v2 = test_host._v2_root()
        self.rel = rel
        self.path = self.v2 + rel
        self.burner = test_host._burner("burn_" + func, func)
        self.proc = None
        os.makedirs(self.path, exist_ok=True)

    def start(self, cpu_seconds, linger=0):
        script = "echo $$ > %s && exec unshare --pid --fork %s %s %s" % (
            shlex.quote(self.path + "/cgroup.procs"), self.burner, cpu_seconds, linger)
        H.log("$ sh -c %r &" % script)
        self.proc = subprocess.Popen(["sh", "-c", script])

    def pids(self):
        try:
            with open(os.path.join(self.path, "cgroup.procs")) as f:
                return [int(x) for x in f.read().split()]
        except OSError:
            return []

    def usage_us(self):
        with open(os.path.join(self.path, "cpu.stat")) as f:
            for line in f:
                k, v = line.split()
                if k == "usage_usec":
                    return int(v)
        return 0

    def wait_running(self, timeout=30):
        deadline = time.monotonic() + timeout
        while not self.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.pids(), "no process entered %s" % self.rel

    def stop(self):
        """Kill its processes and remove its cgroup (a container stopping)."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        for pid in self.pids():
            H.kill_pid(pid)
        if self.proc:
            self.proc.wait()
        deadline = time.monotonic() + 10
        while self.pids() and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            os.rmdir(self.path)
        except OSError as e:
            H.log("cannot remove %s: %s" % (self.path, e))


def _leaves(capture):
    t = test_host.tables(capture)
    rows = {r[0]: r for r in t["cgroup"]}
    leaves, paths = {}, set()
    for s in t["sample"]:
        leaves[s[4]] = leaves.get(s[4], 0) + int(s[3])
        paths.add(rows[s[2]][2] if s[2] != "-1" else None)
    return leaves, paths


@H.timeout(600)
def test_container_restart_followed():
    """--container NAME while the container is removed and made again (same
    name, a new cgroup id): the new container's processes are recorded, the
    report says the container left and rejoined, and stderr said so as it
    happened.  Before: the old id stayed the only one in the kernel's set and
    the new container's samples were silently dropped (0 of them)."""
    H.require_root()
    name = "msweb-%d" % os.getpid()
    rel = "/machine.slice/machine-%s.scope" % name.replace("-", "\\x2d")
    first = Box(rel, "spin_in_a")
    second = None
    proc = None
    try:
        first.start(60)
        first.wait_running()
        proc, capture, _ = H.start_record(output=H.tmp_path("follow.msc"),
                                          extra=["--container", name] + list(NO_BUDGET))
        test_host.wait_recording(proc)
        test_host.wait_steady(proc)
        used = first.usage_us()
        while first.usage_us() - used < 300000 and proc.poll() is None:
            time.sleep(0.05)
        first.stop()  # the container stops: its cgroup is gone
        second = Box(rel, "spin_in_b")  # and is made again: a restart
        second.start(3.0)
        second.wait_running()
        rc = second.proc.wait(timeout=240)
        assert rc == 0, "the restarted container exited with %d" % rc
        b_cpu_s = second.usage_us() / 1e6
        err = test_host.stop_recording(proc)
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        for box in (first, second):
            if box:
                box.stop()
    H.log("record stderr:\n" + err[-2000:])
    leaves, paths = _leaves(capture)
    H.log("leaves: %s; restarted container CPU %.2f s" % (leaves, b_cpu_s))
    assert paths == {rel}, "samples outside the container's cgroup: %s" % paths
    assert leaves.get("spin_in_a", 0) > 0, "no samples of the first container: %s" % leaves
    # The new cgroup joins within RECORD_SCOPE_FOLLOW_NS (1 s) of the first
    # look after the stop, so at most ~1.2 s of the restarted container's 3 s
    # of CPU time is missed; a third of it at 999 Hz is 1000 samples.
    b = leaves.get("spin_in_b", 0)
    assert b >= 0.33 * b_cpu_s * H.DEFAULT_HZ, \
        "restarted container: %d samples for %.2f s of CPU time" % (b, b_cpu_s)
    assert "restarted; recording its new cgroup %s" % rel in err, err[-2000:]
    out = H.report(capture).stdout
    assert "containers 1 container cgroup of --container left the scope" in out, out
    assert "1 new one rejoined it" in out, out


def _state_root(podman, docker):
    """Fake runtime state: podman {id: [names]}, docker {id: name}."""
    root = H.tmp_path("state")
    pdir = os.path.join(root, "var/lib/containers/storage/overlay-containers")
    os.makedirs(pdir, exist_ok=True)
    with open(os.path.join(pdir, "containers.json"), "w") as f:
        json.dump([{"id": i, "names": n, "image": "x"} for i, n in podman.items()], f)
    for i, n in docker.items():
        d = os.path.join(root, "var/lib/docker/containers", i)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "config.v2.json"), "w") as f:
            json.dump({"ID": i, "Name": "/" + n, "State": {"Running": True}}, f)
    return root


@H.timeout(600)
def test_container_by_docker_and_podman_name():
    """--container NAME for a podman and a docker container, names from
    their state files: each recording keeps only its container's samples.
    Before: "no running container matches" (status 2) for both."""
    H.require_root()
    tag = os.getpid()
    pid_hex = ("%064x" % (0x5028 << 200 | tag))[-64:]
    did_hex = ("%064x" % (0xd0c << 200 | tag))[-64:]
    pname, dname = "s28burn%d" % tag, "dweb%d" % tag
    state = _state_root({pid_hex: [pname]}, {did_hex: dname})
    env = dict(os.environ, MICROSCOPE_CONTAINER_STATE_ROOT=state)
    pod = Box("/machine.slice/libpod-%s.scope" % pid_hex, "spin_in_a")
    dock = Box("/system.slice/docker-%s.scope" % did_hex, "spin_in_b")
    recs = {}
    try:
        pod.start(30)
        dock.start(30)
        pod.wait_running()
        dock.wait_running()
        for name in (pname, dname):
            recs[name] = H.record(output=H.tmp_path("%s.msc" % name), duration=2, env=env,
                                  extra=["--container", name] + list(NO_BUDGET), timeout=300)
        # without the state files the names are unknown, and the message
        # lists the running containers
        bad = H.run([H.BIN, "record", "-o", H.tmp_path("never.msc"), "--container", pname,
                     "-d", "1"], env=dict(os.environ, MICROSCOPE_CONTAINER_STATE_ROOT="/nonexistent"))
        # an id prefix under 4 digits: the rule is said, not only "no match"
        short = H.run([H.BIN, "record", "-o", H.tmp_path("never.msc"), "--container",
                       pid_hex[:3], "-d", "1"], env=env)
    finally:
        pod.stop()
        dock.stop()
    for name, box, func in ((pname, pod, "spin_in_a"), (dname, dock, "spin_in_b")):
        leaves, paths = _leaves(recs[name].capture)
        assert paths == {box.rel}, "--container %s: samples outside %s: %s" % (
            name, box.rel, paths)
        assert leaves.get(func, 0) >= 0.9 * sum(leaves.values()), (name, leaves)
    assert bad.returncode == 2, bad.stderr
    assert "no running container matches" in bad.stderr, bad.stderr
    assert "running containers: " in bad.stderr and pid_hex[:12] in bad.stderr, bad.stderr
    assert short.returncode == 2, short.stderr
    assert "an id prefix needs at least 4 hex digits" in short.stderr, short.stderr
    assert "%s (podman %s)" % (pname, pid_hex[:12]) in short.stderr, short.stderr
    assert not os.path.exists(H.tmp_path("never.msc"))
