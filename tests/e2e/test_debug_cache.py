"""The decompressed debug images' cache (userspace/symbols/debug_cache.c,
README "Usage", MICROSCOPE_DEBUG_CACHE).  Two recordings of the demo
fixture, whose hot path is libc's snprintf (vfprintf's inlined helpers),
with libc's compressed Debian debug file (/usr/lib/debug/.build-id): the
first with an empty cache directory decompresses it and writes the image
(a miss), the second maps it (a hit, nothing decompressed).  The first
one's raw stream replayed through the warm cache and with the cache off
gives the same report, names, source lines and inline frames alike; off
leaves no counter and no file; a damaged image is counted bad, made again,
and the report is still the same."""
import glob
import os
import re
import shutil
import stat

import helpers as H
from test_python import _tool, counters as _counters

KEYS = ("symbolizer.debug_cache_hit", "symbolizer.debug_cache_miss",
        "symbolizer.debug_cache_bad", "symbolizer.debug_cache_unusable")
TRAILER = 136  # sizeof(struct dcache_trailer)


def _cache_counters(capture):
    c = _counters(capture)
    return {k.rsplit("_", 1)[1]: c[k] for k in KEYS if c.get(k)}


def _env(cache):
    return dict(os.environ, MICROSCOPE_DEBUG_CACHE=cache)


def _report(capture):
    """Functions with their source lines and inline frames, every row (the
    first line, naming the capture file, left out)."""
    out = H.report(capture, "--granularity", "line", "--inline", "show", "--limit",
                   "100000").stdout
    return "\n".join(l for l in out.splitlines() if not l.startswith("microscope report:"))


def _libc_debug_file():
    """libc's separate debug file (by its build ID), when installed."""
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    if not os.path.exists(libc) or not shutil.which("readelf"):
        return None
    notes = H.run(["readelf", "-n", libc], quiet=True).stdout
    for line in notes.splitlines():
        if "Build ID:" in line:
            bid = line.split()[-1]
            path = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
            return path if os.path.exists(path) else None
    return None


def test_second_recording_maps_the_cached_image_with_the_same_report():
    H.require_root()
    if not _libc_debug_file():
        H.skip("libc's debug file (libc6-dbg) is not installed")
    cache = H.tmp_path("dcache")
    shutil.rmtree(cache, ignore_errors=True)
    raw = H.tmp_path("dcache-raw")
    shutil.rmtree(raw, ignore_errors=True)
    cmd = [H.fixture("demo")]
    first = H.record(cmd, output=H.tmp_path("dcache1.msc"), freq=2999, save_raw=raw,
                     extra=["--budget", "0"], env=_env(cache))
    c1 = _cache_counters(first.capture)
    assert c1.get("miss", 0) >= 1 and not c1.get("hit") and not c1.get("bad"), c1
    st = os.lstat(cache)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700, oct(st.st_mode)
    images = sorted(glob.glob(os.path.join(cache, "debug-*.img")))
    assert len(images) == c1["miss"], (images, c1)
    for path in images:
        st = os.lstat(path)
        assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
        assert st.st_uid == 0
    rep1 = _report(first.capture)
    # libc's lines and inline frames come from its debug file's image
    assert re.search(r"__vfprintf_internal \(vfprintf-[\w-]+\.c:\d+\)", rep1), rep1[:4000]
    assert re.search(r"\((?:vfprintf-internal|genops|libioP)\.[ch]:\d+\) \[i\]", rep1), \
        rep1[:4000]

    second = H.record(cmd, output=H.tmp_path("dcache2.msc"), freq=2999,
                      extra=["--budget", "0"], env=_env(cache))
    c2 = _cache_counters(second.capture)
    assert c2.get("hit", 0) >= 1 and not c2.get("bad"), c2

    # The same samples through the warm cache, and with it off: the same
    # report, line for line.
    hit = H.tmp_path("dcache-replay-hit.msc")
    H.record(output=hit, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(hit) == {"hit": c1["miss"]}, _counters(hit)
    off = H.tmp_path("dcache-replay-off.msc")
    H.record(output=off, extra=["--replay", raw], env=_env("off"), timeout=120)
    assert _cache_counters(off) == {}, _counters(off)
    rep_hit, rep_off = _report(hit), _report(off)
    assert rep_hit == rep_off, "the cached image symbolized otherwise"
    assert rep_off == rep1

    # A damaged image (its trailer): bad, made again, the same report.
    victim = max(images, key=os.path.getsize)
    with open(victim, "r+b") as f:
        f.seek(-TRAILER, os.SEEK_END)
        f.write(b"XXXXXXXX")
    bad = H.tmp_path("dcache-replay-bad.msc")
    H.record(output=bad, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(bad).get("bad") == 1, _counters(bad)
    assert _report(bad) == rep_off
    again = H.tmp_path("dcache-replay-again.msc")
    H.record(output=again, extra=["--replay", raw], env=_env(cache), timeout=120)
    assert _cache_counters(again) == {"hit": c1["miss"]}, _counters(again)
