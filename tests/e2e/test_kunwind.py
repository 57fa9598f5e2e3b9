"""In-kernel DWARF unwinding (--call-graph dwarf-kernel, issue 16).

The sampler unwinds user stacks from compiled CFI tables it is given
lazily, and copies the stack only from where it stops; userspace finishes
from there.  --verify-unwind also copies every whole stack and unwinds it
the old way: the capture's "verified" line counts samples whose two unwinds
differ, which must be 0 on the fixtures built without frame pointers
(nofp_chain: a chain and Debian's libc qsort; sighandler: signal frames,
which the kernel steps through; deepstack: stacks deeper than the copy) and on Debian's python3.11.

The report's summary lines read here:
  kunwind    D of N user stacks unwound whole in the kernel (P%), frames F% ...
  verified   V stacks against the copy path: M differ
"""
import os
import re
import time

import helpers as H

# Samples of the recording that must be compared (all but a few without
# user registers, e.g. in exec).
VERIFIED_MIN_SHARE = 95.0
# The kernel's tables are loaded while the target runs (a targeted
# recording writes them as its first samples are drained), so a short
# fixture has a start-up share unwound in userspace (1-2 % of the C
# fixtures' ~1500 stacks at 999 Hz on the loaded 2-core VM, 5 % when the
# tables waited for the ordered processing); the rest must be whole in the
# kernel.
NOFP_KERNEL_WHOLE_MIN = 93.0
# dlopen_main under auto (2 s in its dlopen'ed library): the library's
# stacks are whole once its first samples are drained (99 % measured), but a
# drain loop held up by the ordered processing (a first symbolization, e.g.
# of the kernel's symbols) delays that by up to ~0.5 s (88-94 % in 4 of 17
# runs of 1 s); 0 % when the table is never re-read.
DLOPEN_KERNEL_WHOLE_MIN = 70.0
# The same for python3.11 on pyburn 0.3 (~800 stacks at 999 Hz): its
# start-up also compiles python3.11's 65001 rows (91.6-93.8 % measured).
PY_SHORT_KERNEL_WHOLE_MIN = 80.0
# Debian's python3.11 at 4999 Hz (pyburn, about 2.5 s of CPU): stacks whole
# in the kernel (issue 16's 95 %; 97.6-98.7 % measured at load average 11,
# 88-93.6 % when the tables waited for the ordered processing), and those
# that stopped for want of the process's table (no_proc, no_mapping: 0.2-0.6
# % measured, 3-7 % before; the rest of the start-up is its rows, no_rows).
PY_KERNEL_WHOLE_MIN = 95.0
NO_TABLE_MAX_SHARE = 2.0
# Frames of the chain fixture that must reach main (as --call-graph dwarf).
MAIN_SHARE_MIN = 99.0


def _summary(capture):
    rep = H.report(capture, "--limit", "3").stdout
    samples = int(re.search(r"^  samples +(\d+)", rep, re.M).group(1))
    ku = re.search(r"^  kunwind +(\d+) of (\d+) user stacks unwound whole in the kernel "
                   r"\(([\d.]+)%\), frames ([\d.]+)% in the kernel(.*)$", rep, re.M)
    ver = re.search(r"^  verified +(\d+) stacks against the copy path: (\d+) differ$", rep, re.M)
    assert ku, "no kunwind line in the report:\n%s" % rep
    H.log(ku.group(0))
    if ver:
        H.log(ver.group(0))
    return {
        "samples": samples, "whole": int(ku.group(1)), "stacks": int(ku.group(2)),
        "whole_pct": float(ku.group(3)), "frames_pct": float(ku.group(4)),
        "stops": ku.group(5), "verified": int(ver.group(1)) if ver else None,
        "differ": int(ver.group(2)) if ver else None, "report": rep,
    }


def _verified(name, cmd, timeout=180):
    rec = H.record(cmd, output=H.tmp_path(name + ".msc"), timeout=timeout,
                   extra=["--call-graph", "dwarf-kernel", "--verify-unwind"])
    s = _summary(rec.capture)
    assert s["verified"] is not None, "--verify-unwind printed no verified line:\n%s" % s["report"]
    assert s["differ"] == 0, "%d of %d stacks differ from the copy path's:\n%s" % (
        s["differ"], s["verified"], s["report"])
    assert H.percent(s["verified"], s["samples"]) >= VERIFIED_MIN_SHARE, \
        "only %d of %d samples were verified:\n%s" % (s["verified"], s["samples"], s["report"])
    return rec, s


def test_kunwind_nofp_chain_equals_copy_path():
    """nofp_chain (no frame pointers; libc's qsort): every stack the kernel
    unwound (and finished in userspace) equals the copy path's, most are
    whole in the kernel, and they reach main."""
    rec, s = _verified("ku-nofp", [H.fixture("nofp_chain")])
    assert s["whole_pct"] >= NOFP_KERNEL_WHOLE_MIN, \
        "only %.1f%% of stacks whole in the kernel:\n%s" % (s["whole_pct"], s["report"])
    prof = H.folded(rec.capture)
    pct = H.percent(H.count_containing(prof, "main"), H.total(prof))
    assert pct >= MAIN_SHARE_MIN, "%.2f%% of samples reach main" % pct


def test_kunwind_signal_frames_equal_copy_path():
    """sighandler: the kernel steps through __restore_rt (a signal frame:
    registers from the ucontext at rsp) and on into the interrupted code,
    as the copy path does; before the kernel took signal frames it stopped
    there ("unsupported") and userspace went on."""
    rec, s = _verified("ku-sig", [H.fixture("sighandler")])
    assert "unsupported" not in s["stops"], \
        "the kernel stopped at a signal frame: %s" % s["stops"]
    prof = H.folded(rec.capture)
    through = H.count_containing(prof, "__restore_rt")
    assert H.percent(through, H.total(prof)) >= 10.0, \
        "only %d of %d samples went through the signal frame" % (through, H.total(prof))
    assert s["whole_pct"] >= NOFP_KERNEL_WHOLE_MIN, \
        "only %.1f%% of stacks whole in the kernel:\n%s" % (s["whole_pct"], s["report"])


def test_kunwind_deep_stack_equals_copy_path():
    """deepstack: stacks deeper than the 16 KiB copy; the kernel reads no
    further than the copy would have held ("read" stops), so the stacks end
    with the same [stack copy exhausted]."""
    _, s = _verified("ku-deep", [H.fixture("deepstack")])
    assert "read" in s["stops"], "no stop at the copy's end counted: %s" % s["stops"]


@H.timeout(240)
def test_kunwind_python_equals_copy_path():
    """Debian's python3.11 (no frame pointers) on a CPU-bound script."""
    assert os.path.exists(H.DEBIAN_PYTHON), "%s is missing: run `make deps`" % H.DEBIAN_PYTHON
    script = os.path.join(H.REPO, "tests", "fixtures", "pyburn.py")
    _, s = _verified("ku-py", [H.DEBIAN_PYTHON, script, "0.3"], timeout=240)
    assert s["whole_pct"] >= PY_SHORT_KERNEL_WHOLE_MIN, \
        "only %.1f%% of stacks whole in the kernel:\n%s" % (s["whole_pct"], s["report"])


@H.timeout(240)
def test_kunwind_python_whole_in_kernel_at_4999hz():
    """Debian's python3.11 (no frame pointers) at 4999 Hz for about 2.5 s
    of CPU: the kernel's tables follow the process's first samples within
    ms (written as the samples are drained, from its live maps, with the
    rows of every module it maps), so its start-up costs few of its stacks
    (before, the table waited for the ordered processing, which a start-up
    keeps hundreds of ms behind: 88-93 % whole in the kernel)."""
    if not os.path.exists(H.DEBIAN_PYTHON):
        H.skip("%s is not installed: `make deps` installs Debian's python3.11" % H.DEBIAN_PYTHON)
    script = os.path.join(H.REPO, "tests", "fixtures", "pyburn.py")
    rec = H.record([H.DEBIAN_PYTHON, script, "0.8"], output=H.tmp_path("ku-py4999.msc"),
                   freq=4999, timeout=240, extra=["--budget", "0", "--call-graph", "dwarf-kernel"])
    s = _summary(rec.capture)
    assert s["stacks"] >= 2000, "only %d user stacks:\n%s" % (s["stacks"], s["report"])
    assert s["whole_pct"] >= PY_KERNEL_WHOLE_MIN, \
        "only %.1f%% of stacks whole in the kernel:\n%s" % (s["whole_pct"], s["report"])
    # The process's table (as opposed to its rows) is written at its first
    # drained sample: the stacks that stopped for want of it are few.
    stops = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", s["stops"])}
    no_table = stops.get("no_proc", 0) + stops.get("no_mapping", 0)
    assert H.percent(no_table, s["stacks"]) <= NO_TABLE_MAX_SHARE, \
        "%d of %d stacks stopped for want of the process's table:\n%s" % (
            no_table, s["stacks"], s["report"])


def test_kunwind_pid_rows_loaded_before_sampling():
    """-p of a running nofp_chain: the rows of every module it maps are
    loaded at attach, before its first sample, so no stack stops for want
    of rows (only its table waits for a first sample, which names its
    address space), and the stacks still equal the copy path's."""
    env = dict(os.environ, MS_FIXTURE_SCALE="4")
    proc, _ = H.start_fixture([H.fixture("nofp_chain")], out_name="ku-pid.out", env=env)
    try:
        time.sleep(0.3)  # past its start-up: every module mapped
        rec = H.record(pids=[proc.pid], duration=2, freq=999, output=H.tmp_path("ku-pid.msc"),
                       extra=["--call-graph", "dwarf-kernel", "--verify-unwind"])
    finally:
        proc.kill()
        proc.wait()
    s = _summary(rec.capture)
    assert s["differ"] == 0, "%d of %d stacks differ from the copy path's:\n%s" % (
        s["differ"], s["verified"], s["report"])
    assert s["stacks"] >= 100, "only %d user stacks:\n%s" % (s["stacks"], s["report"])
    assert "no_rows" not in s["stops"], \
        "stacks stopped for want of rows loaded at attach: %s" % s["stops"]
    assert s["whole_pct"] >= NOFP_KERNEL_WHOLE_MIN, \
        "only %.1f%% of stacks whole in the kernel:\n%s" % (s["whole_pct"], s["report"])


def test_kunwind_auto_dlopen_is_told():
    """--call-graph auto (whose samples the kernel could not step carry the
    frame-pointer chain after the one pc it has): a library dlopen'ed 300 ms
    into the run (dlopen_main's libhot.so) is added to the process's table
    when its first samples stop there (no_mapping), so its stacks are soon
    whole in the kernel.  When the chain's last pc was taken for where the
    kernel stopped (a pc of libc the table had), the table was never
    re-read: 0 % whole."""
    env = dict(os.environ, MS_FIXTURE_SCALE="2")
    rec = H.record([H.fixture("dlopen_main")], output=H.tmp_path("ku-dlopen.msc"), env=env)
    s = _summary(rec.capture)
    prof = H.folded(rec.capture)
    assert H.count_containing(prof, "hot_function") * 2 > H.total(prof), H.show_stacks(prof)
    assert s["whole_pct"] >= DLOPEN_KERNEL_WHOLE_MIN, \
        "only %.1f%% of stacks whole in the kernel:\n%s" % (s["whole_pct"], s["report"])


def test_kunwind_without_verify_copies_less():
    """Without --verify-unwind a stack the kernel unwound whole carries no
    stack copy: the capture's raw stream is much smaller than dwarf's for
    the same fixture (bytes per sample), and the stacks still reach main."""
    out = {}
    for mode in ("dwarf", "dwarf-kernel"):
        raw = H.tmp_path("raw-" + mode)
        rec = H.record([H.fixture("nofp_chain")], output=H.tmp_path("ku-%s.msc" % mode),
                       save_raw=raw, extra=["--call-graph", mode])
        size = sum(os.path.getsize(os.path.join(raw, f)) for f in os.listdir(raw))
        prof = H.folded(rec.capture)
        out[mode] = (size / max(1, H.total(prof)), prof)
        H.log("%s: %.0f raw bytes per sample" % (mode, out[mode][0]))
    prof = out["dwarf-kernel"][1]
    pct = H.percent(H.count_containing(prof, "main"), H.total(prof))
    assert pct >= MAIN_SHARE_MIN, "dwarf-kernel: %.2f%% of samples reach main" % pct
    assert out["dwarf-kernel"][0] < 0.5 * out["dwarf"][0], \
        "dwarf-kernel streams %.0f bytes per sample, dwarf %.0f" % (
            out["dwarf-kernel"][0], out["dwarf"][0])


def test_kunwind_verify_needs_dwarf_kernel():
    """--verify-unwind alone is refused with a message naming the mode."""
    proc = H.run(H.record_argv([H.fixture("spinner")], H.tmp_path("ku-bad.msc"),
                               extra=["--verify-unwind"]))
    assert proc.returncode == 2, "exit %d:\n%s" % (proc.returncode, proc.stderr)
    assert "dwarf-kernel" in proc.stderr, proc.stderr


def test_kunwind_auto_unwinds_in_the_kernel():
    """--call-graph auto (the default) unwinds in the kernel where the
    kernel loads the unwinder: the report says so and counts the stacks the
    kernel unwound; when the kernel refuses it (simulated with
    MICROSCOPE_TEST_KUNWIND_REFUSE) the recording copies stacks instead, the
    stacks line says why, no stack counts as unwound in the kernel, and the
    stacks still reach main."""
    rec = H.record([H.fixture("nofp_chain")], output=H.tmp_path("ku-auto.msc"))
    s = _summary(rec.capture)
    assert re.search(r"^  stacks +auto \(unwound in the kernel\)", s["report"], re.M), s["report"]
    assert s["whole_pct"] >= NOFP_KERNEL_WHOLE_MIN, \
        "only %.1f%% of stacks whole in the kernel:\n%s" % (s["whole_pct"], s["report"])

    env = dict(os.environ, MICROSCOPE_TEST_KUNWIND_REFUSE="1")
    rec = H.record([H.fixture("nofp_chain")], output=H.tmp_path("ku-auto-refused.msc"), env=env)
    rep = H.report(rec.capture, "--limit", "3").stdout
    assert re.search(r"^  stacks +auto \(stacks copied: the in-kernel unwinder was refused: "
                     r".*MICROSCOPE_TEST_KUNWIND_REFUSE set\)", rep, re.M), rep
    assert not re.search(r"^  kunwind ", rep, re.M), rep
    prof = H.folded(rec.capture)
    pct = H.percent(H.count_containing(prof, "main"), H.total(prof))
    assert pct >= MAIN_SHARE_MIN, "refused auto: %.2f%% of samples reach main" % pct
