"""The kernel symbol table's per-boot cache (userspace/symbols/kallsyms_cache.c,
README "Usage", MICROSCOPE_KALLSYMS_CACHE).  Recordings with kernel frames
(dd through 1-byte reads: most of its time in the kernel): the first with an
empty cache directory parses /proc/kallsyms and writes the cache (a miss);
the next loads it (a hit) and names its kernel frames; the first one's raw
stream replayed through the cache, and with the cache off, gives exactly the
first one's stacks; a damaged cache file is counted bad and replaced by the
same bytes (the static part only: no BPF program in it); the cache turned
off leaves no counter and no file.  Off-CPU stacks, whose innermost frames
are our own sampler's BPF program and trampoline, named through a warm
cache: those addresses read /proc/kallsyms live (counted), so the tracing
frames are recognised and cut exactly as with the cache off."""
import os
import shutil
import stat

import helpers as H
from test_python import _tool, counters as _counters

FILE = "kallsyms"
KEYS = ("symbolizer.kallsyms_cache_hit", "symbolizer.kallsyms_cache_miss",
        "symbolizer.kallsyms_cache_bad", "symbolizer.kallsyms_cache_unusable")


def _cache_counters(capture):
    """hit/miss/bad/unusable; the outside_* ones are _outside's."""
    c = _counters(capture)
    return {k.rsplit("_", 1)[1]: c[k] for k in KEYS if c.get(k)}


def _outside(capture):
    """Why a warm cache read /proc/kallsyms live: {bpf|other|unknown: n}.
    A sample of dd may land in another recorder's BPF program (tracepoints
    on fork, exec, sched_switch run in dd's context): not asserted there."""
    c = _counters(capture)
    pre = "symbolizer.kallsyms_cache_outside_"
    return {k[len(pre):]: v for k, v in c.items() if k.startswith(pre)}


def _dd():
    dd = shutil.which("dd")
    if not dd:
        H.skip("dd (coreutils) is not installed")
    return [dd, "if=/dev/zero", "of=/dev/null", "bs=1", "count=200000"]


def _kernel_frames(prof):
    """Frames from the syscall entry on (folded output drops the [k] mark)."""
    out = set()
    for st in prof:
        entry = [i for i, f in enumerate(st) if f.startswith(("entry_SYSCALL", "[kernel"))]
        if entry:
            out.update(st[entry[0]:])
    return out


def _env(cache):
    return dict(os.environ, MICROSCOPE_KALLSYMS_CACHE=cache)


def test_second_recording_loads_the_cache_with_the_same_names():
    H.require_root()
    cache = H.tmp_path("kcache")
    shutil.rmtree(cache, ignore_errors=True)
    raw = H.tmp_path("kcache-raw")
    shutil.rmtree(raw, ignore_errors=True)
    first = H.record(_dd(), output=H.tmp_path("kcache1.msc"), save_raw=raw, env=_env(cache))
    assert _cache_counters(first.capture) == {"miss": 1}, _counters(first.capture)
    st = os.lstat(cache)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700, oct(st.st_mode)
    st = os.lstat(os.path.join(cache, FILE))
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
    assert st.st_uid == 0
    prof1 = H.folded(first.capture)
    k1 = _kernel_frames(prof1)
    assert k1, "no kernel frames in the first recording:\n%s" % H.show_stacks(prof1)

    second = H.record(_dd(), output=H.tmp_path("kcache2.msc"), env=_env(cache))
    assert _cache_counters(second.capture) == {"hit": 1}, _counters(second.capture)
    prof2 = H.folded(second.capture)
    k2 = _kernel_frames(prof2)
    names = H.kallsyms_names()
    unnamed = sorted(f for f in k2 if f not in names)
    assert k2 and not unnamed, "kernel frames from the cache not in kallsyms: %s" % unnamed[:10]
    # dd's hot kernel path is the same both times: read_zero, the syscall entry...
    common = k1 & k2
    H.log("kernel frames: %d first, %d second, %d in both" % (len(k1), len(k2), len(common)))
    assert len(common) >= min(len(k1), len(k2)) // 2, (sorted(k1), sorted(k2))

    # The same samples: the first stream replayed through the cache (a hit),
    # and with the cache off (no counter), gives the first's stacks exactly.
    hit = H.tmp_path("kcache-replay-hit.msc")
    H.record(output=hit, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(hit) == {"hit": 1}, _counters(hit)
    assert H.folded(hit) == prof1, "the cached table named the replayed stacks otherwise"
    mtime = os.stat(os.path.join(cache, FILE)).st_mtime_ns
    off = H.tmp_path("kcache-replay-off.msc")
    H.record(output=off, extra=["--replay", raw], env=_env("off"), timeout=120)
    assert _cache_counters(off) == {}, _counters(off)
    assert H.folded(off) == prof1

    # A damaged file: counted bad, the table parsed again (same stacks) and
    # the file replaced, so the next load hits.
    path = os.path.join(cache, FILE)
    with open(path, "rb") as f:
        before = f.read()
    size = len(before)
    with open(path, "r+b") as f:
        f.truncate(size - 5)
    bad = H.tmp_path("kcache-replay-bad.msc")
    H.record(output=bad, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(bad) == {"bad": 1}, _counters(bad)
    assert H.folded(bad) == prof1
    # The same bytes: only the static part is cached, and it has not
    # changed, whatever BPF programs came and went in between.
    with open(path, "rb") as f:
        assert f.read() == before, "the rebuilt cache differs from the first"
    assert os.stat(path).st_mtime_ns != mtime
    again = H.tmp_path("kcache-replay-again.msc")
    H.record(output=again, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(again) == {"hit": 1}, _counters(again)


def test_cache_off_and_unsafe_directories():
    H.require_root()
    cache = H.tmp_path("kcache-off")
    shutil.rmtree(cache, ignore_errors=True)
    raw = H.tmp_path("kcache-raw-off")
    shutil.rmtree(raw, ignore_errors=True)
    # A cache that would hit if "off" were ignored... there is none: off
    # writes nothing and counts nothing.
    H.record(_dd(), output=H.tmp_path("kcache-off.msc"), save_raw=raw, env=_env("0"))
    assert _cache_counters(H.tmp_path("kcache-off.msc")) == {}
    assert not os.path.exists(cache)

    # A world-writable directory, and a symbolic link to a good one, are
    # refused (counted unusable) and nothing is written there.
    os.makedirs(cache)
    os.chmod(cache, 0o777)
    out = H.tmp_path("kcache-unsafe.msc")
    H.record(output=out, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(out) == {"unusable": 1}, _counters(out)
    assert not os.path.exists(os.path.join(cache, FILE))
    os.chmod(cache, 0o700)
    link = H.tmp_path("kcache-link")
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(cache, link)
    H.record(output=out, extra=["--replay", raw], env=_env(link), timeout=120)
    assert _cache_counters(out) == {"unusable": 1}, _counters(out)
    assert not os.path.exists(os.path.join(cache, FILE))
    # The same directory, safe now: a miss, then a hit.
    H.record(output=out, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(out) == {"miss": 1}, _counters(out)
    H.record(output=out, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(out) == {"hit": 1}, _counters(out)


def _offcpu_leaves(capture):
    """The innermost frame of each off-CPU stack, and the whole stacks."""
    out = H.run([H.BIN, "convert", capture, "--weight", "off-cpu-ns"], check=True,
                quiet=True).stdout
    stacks = [line.rsplit(" ", 1)[0].split(";") for line in out.splitlines() if line.strip()]
    return {st[-1] for st in stacks}, stacks


def test_offcpu_bpf_frames_named_live_with_the_cache_warm():
    """Off-CPU stacks start in our sampler's sched_switch program and its
    trampoline ([bpf] in /proc/kallsyms, not cached): recognising them needs
    their live names; a cache that named them (or left them unnamed) would
    leave a bpf_prog_/trampoline or a hex frame at the leaf."""
    H.require_root()
    cache = H.tmp_path("kcache-offcpu")
    shutil.rmtree(cache, ignore_errors=True)
    warm = H.record(_dd(), output=H.tmp_path("kcache-offcpu-warm.msc"), env=_env(cache))
    assert _cache_counters(warm.capture) == {"miss": 1}, _counters(warm.capture)
    sleeper = ["/bin/sleep", "0.3"]
    rec = H.record(sleeper, output=H.tmp_path("kcache-offcpu.msc"), extra=["--off-cpu"],
                   env=_env(cache))
    assert _cache_counters(rec.capture) == {"hit": 1}, _counters(rec.capture)
    assert _outside(rec.capture) == {"bpf": 1}, _counters(rec.capture)
    leaves, stacks = _offcpu_leaves(rec.capture)
    off = H.record(sleeper, output=H.tmp_path("kcache-offcpu-off.msc"), extra=["--off-cpu"],
                   env=_env("off"))
    assert _cache_counters(off.capture) == {} and _outside(off.capture) == {}
    leaves_off, _ = _offcpu_leaves(off.capture)
    shown = "\n".join(";".join(st) for st in stacks)
    bad = [f for st in stacks for f in st
           if f.startswith(("bpf_prog_", "bpf_trampoline_", "__bpf_trace", "0x", "[kernel"))
           or (f.endswith("_[k]") and "+0x" in f)]
    assert not bad, "tracing frames left in off-CPU stacks: %s\n%s" % (bad, shown)
    # sleep's nanosleep blocks in the scheduler, with the cache as without.
    assert "__schedule_[k]" in leaves, shown
    assert "__schedule_[k]" in leaves_off


def test_fifo_in_the_cache_and_off_words():
    """A new user's findings: a FIFO planted as the cache file made the
    recording hang after its command ended (open blocked until a writer
    came: `record -- ./spin 0.3` ran until SIGTERM at 15 s); now it opens at
    once, is refused as not a regular file (counted bad) and replaced.  And
    MICROSCOPE_KALLSYMS_CACHE=OFF (or none, false) made a cache directory
    named OFF in the working directory; now those words turn it off, and a
    relative path is refused with a message."""
    H.require_root()
    cache = H.tmp_path("kcache-fifo")
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache, mode=0o700)
    os.mkfifo(os.path.join(cache, FILE), 0o600)
    rec = H.record(_dd(), output=H.tmp_path("kcache-fifo.msc"), env=_env(cache), timeout=60)
    assert _cache_counters(rec.capture) == {"bad": 1}, _counters(rec.capture)
    assert stat.S_ISREG(os.lstat(os.path.join(cache, FILE)).st_mode), "the FIFO was not replaced"
    here = os.getcwd()  # the recorder's working directory
    for word in ("OFF", "none", "False"):
        rec = H.record(_dd(), output=H.tmp_path("kcache-word.msc"), env=_env(word))
        assert _cache_counters(rec.capture) == {}, (word, _counters(rec.capture))
        assert not os.path.exists(os.path.join(here, word)), "%s made a directory" % word
    rel = H.record(_dd(), output=H.tmp_path("kcache-rel.msc"), env=_env("mycache"))
    assert "neither off" in rel.stderr and "absolute" in rel.stderr, rel.stderr
    assert _cache_counters(rel.capture) == {}, _counters(rel.capture)
    assert not os.path.exists(os.path.join(here, "mycache"))
