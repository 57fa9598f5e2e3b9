"""What loading the sampler costs the kernel's verifier, as a count: the
verified instructions of handle_sample (/proc/PID/fdinfo's verified_insns,
kernel 5.16+), which every `record` pays in system CPU at start-up (about
0.2 s per 100k on this 2-vCPU VM).  The CPython walk and the stack copy are
subprograms the verifier goes through once per caller state it cannot
prune; when the copy's offset and the sample's size reached them in several
ranges, the default sampler verified 530k instructions (0.9 s at every
start, bench-host's recorder CPU 0.73 -> 0.92 s) and a 64 KiB --stack-size
908k, near the 1M limit where loading fails.  Then 201k and 422k on 6.18;
auto then unwound in the kernel (PLT and signal rows) in 390k, the copy
path 193k, 64 KiB 407k, fp 65k: the clamp in verifier__one_range left two
states (max and below), the kernel callchain's length reached the unwinder
in two, the saved registers' pointer and a stack key kept dead values
live, the unwinder's constants and valid bits were kept apart per path,
the page-by-page copy's progress per page and the CPython walk's frame
count per frame.  Then on 6.18: default and dwarf-kernel 39k, dwarf 20k,
64 KiB 20k, fp 15k.  Then the CPython walk (13k of each) moved to its own
program, loaded only once a CPython process is recorded (default 24k,
dwarf 5.6k, fp 0.5k, and the walk 15k when loaded), and the in-kernel
unwinder's row hints and stack chunk (bpf/kunwind.bpf.h) added about 10k
to dwarf-kernel and default (34.5k).  Then the unwinder's mapping search,
row search, chunk refill and one frame became global subprograms (verified
once each: since 6.8 a bpf_loop callback is verified as a loop body, where
states that differ only in dead spills are not pruned) and the page-by-page
copy loops over the pages stack_copy_bytes spans, not 17: default and
dwarf-kernel 9.3k, dwarf 2.8k, 64 KiB 6.7k, fp 0.7k on 6.18.  The limits
leave room for other kernels and small changes, not for that
multiplication."""
import os
import signal
import subprocess
import time

import helpers as H

LIMITS = (
    # the default (auto) unwinds in the kernel where it loads: 9.3k on 6.18
    # (18.7k with the unwinder's frame verified as the callback's body)
    ((), 15000),
    # 2.8k (6.7k with the page-by-page copy over 17 pages)
    (("--call-graph", "dwarf"), 5000),
    (("--call-graph", "dwarf-kernel"), 15000),
    (("--call-graph", "fp"), 2500),
    (("--call-graph", "dwarf", "--stack-size", "65536"), 10000),
)


def _verified_insns(pid, timeout=60, want="handle_sample"):
    """{program name: verified_insns} of the BPF programs record (@pid) holds,
    once it holds the program called want."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = H.bpf_objects_held_by(pid)
        if held["prog"]:
            names = {p["id"]: p.get("name", "") for p in H.bpftool_progs()
                     if p.get("id") in held["prog"]}
            out = {}
            for fd in os.listdir("/proc/%d/fdinfo" % pid):
                try:
                    with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                        info = dict(line.split(":", 1) for line in f.read().splitlines()
                                    if ":" in line)
                except OSError:
                    continue
                info = {k.strip(): v.strip() for k, v in info.items()}
                if "prog_id" not in info or "prog_type" not in info:
                    continue
                if "verified_insns" not in info:
                    H.skip("this kernel's fdinfo has no verified_insns (5.16+)")
                out[names.get(int(info["prog_id"]), "?")] = int(info["verified_insns"])
            if want in out:
                return out
        time.sleep(0.1)
    raise AssertionError("record (pid %d) loaded no %s in %d s" % (pid, want, timeout))


@H.timeout(300)
def test_sampler_verified_instructions():
    H.require_root()
    sleeper = subprocess.Popen(["sleep", "120"])
    try:
        for extra, limit in LIMITS:
            proc, _, _ = H.start_record(pids=[sleeper.pid], extra=extra,
                                        output=H.tmp_path("verifier.msc"))
            try:
                progs = _verified_insns(proc.pid)
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, "record %s: status %d\n%s" % (
                " ".join(extra), proc.returncode, err)
            got = progs["handle_sample"]
            H.log("record %s: verified instructions %s" % (" ".join(extra) or "(default)",
                                                            progs))
            assert got <= limit, "record %s: handle_sample verified in %d instructions, " \
                "over %d" % (" ".join(extra) or "(default)", got, limit)
    finally:
        sleeper.kill()
        sleeper.wait()


# handle_sample_py (the CPython walk, tail-called by handle_sample): 15k
# on 6.18 with the default settings
PY_WALK_LIMIT = 25000


@H.timeout(300)
def test_python_walk_loaded_only_for_cpython():
    """The CPython walk is most of the sampler's verification (13k of the
    15k instructions with fp): it is loaded, as its own program, only once a
    recorded process runs CPython.  A recording of a process without CPython
    holds no handle_sample_py after the tracker looked at it; one of a
    CPython process holds it, verified within PY_WALK_LIMIT."""
    H.require_root()
    sleeper = subprocess.Popen(["sleep", "120"])
    python = subprocess.Popen([H.DEBIAN_PYTHON, "-c",
                               "while True: sum(i * i for i in range(10000))"])
    try:
        for target, has_python in ((sleeper, False), (python, True)):
            proc, _, _ = H.start_record(pids=[target.pid], output=H.tmp_path("pywalk.msc"))
            try:
                progs = _verified_insns(proc.pid, want="handle_sample_py" if has_python
                                        else "handle_sample")
                if not has_python:
                    time.sleep(2)  # the tracker polls the targets at once; give it time
                    progs = _verified_insns(proc.pid)
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, "record: status %d\n%s" % (proc.returncode, err)
            H.log("record -p %s: verified instructions %s" % (
                "python" if has_python else "sleep", progs))
            if has_python:
                assert progs["handle_sample_py"] <= PY_WALK_LIMIT, progs
            else:
                assert "handle_sample_py" not in progs, \
                    "the CPython walk was loaded for a process without CPython: %s" % progs
    finally:
        for p in (sleeper, python):
            p.kill()
            p.wait()
