"""microscope serve on inputs a trial user met: a capture naming secret files
as its sources (captures are hostile: the source view shows only what
userspace/serve/source_file.h allows), a capture with no samples, and a
continuous-recording directory with no segment yet."""
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import urllib.request

import helpers as H
from test_serve import Server


def _varint(v):
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def _field(num, value):
    """Protobuf field: int -> varint, bytes -> length-delimited."""
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    return _varint(num << 3 | 2) + _varint(len(value)) + value


def _pprof_with_sources(funcs):
    """A pprof profile (profile.proto) with one sample of weight 1 per
    (function name, source file, line) of funcs, each its own function."""
    strings = [b"", b"samples", b"count"]

    def s(text):
        strings.append(text.encode())
        return len(strings) - 1

    p = _field(1, _field(1, 1) + _field(2, 2))
    for i, (name, path, line) in enumerate(funcs, 1):
        p += _field(2, _field(1, i) + _field(2, 1))
        p += _field(4, _field(1, i) + _field(4, _field(1, i) + _field(2, line)))
        p += _field(5, _field(1, i) + _field(2, s(name)) + _field(4, s(path)) + _field(5, 1))
    for t in strings:
        p += _field(6, t)
    return gzip.compress(p)


def _capture_naming(funcs, name="evil"):
    src = H.tmp_path(name + ".pb.gz")
    with open(src, "wb") as f:
        f.write(_pprof_with_sources(funcs))
    cap = H.tmp_path(name + ".msc")
    H.run([H.BIN, "convert", src, "-o", cap], check=True)
    return cap


def _write(path, text, mode):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def _source(srv, fn):
    files = srv.api("/api/source?function=" + fn)["files"]
    assert len(files) == 1, files
    return files[0]


def test_source_view_serves_no_secrets():
    """A capture names /etc/shadow, a 0600 .c file, a 0644 .c file in a 0700
    directory, a .c symlink to /etc/shadow, a world-readable key file and a
    world-readable .c file as its functions' sources.  Only the last is
    served; with --source-dir over the private directory its files are
    served too, but the symlink out of it still is not."""
    H.require_root()
    pub = tempfile.mkdtemp(prefix="ms-src-pub-")
    try:
        os.chmod(pub, 0o755)
        priv = os.path.join(pub, "priv")
        os.mkdir(priv, 0o700)
        os.chmod(priv, 0o700)
        _write(os.path.join(pub, "ok.c"), "int ok;\nint ok_line2;\n", 0o644)
        _write(os.path.join(pub, "secret.c"), "char *password = \"hunter2\";\n", 0o600)
        _write(os.path.join(pub, "id_rsa"), "-----BEGIN KEY-----\n", 0o644)
        _write(os.path.join(priv, "hidden.c"), "int hidden;\n", 0o644)
        os.symlink("/etc/shadow", os.path.join(pub, "link.c"))
        os.symlink("/etc/shadow", os.path.join(priv, "plink.c"))
        funcs = [("shadowfn", "/etc/shadow", 1), ("secretfn", os.path.join(pub, "secret.c"), 1),
                 ("hiddenfn", os.path.join(priv, "hidden.c"), 1),
                 ("linkfn", os.path.join(pub, "link.c"), 1),
                 ("plinkfn", os.path.join(priv, "plink.c"), 1),
                 ("keyfn", os.path.join(pub, "id_rsa"), 1),
                 ("ghostfn", os.path.join(priv, "ghost.c"), 1),
                 ("okfn", os.path.join(pub, "ok.c"), 2)]
        cap = _capture_naming(funcs)
        with open("/etc/shadow") as f:
            shadow = f.read()
        with Server(cap) as srv:
            got = {fn: _source(srv, fn) for fn, _, _ in funcs}
        with Server(cap, "--source-dir", priv) as srv:
            under = {fn: _source(srv, fn) for fn, _, _ in funcs}
        H.log("without --source-dir: %r" % {k: v.get("why") for k, v in got.items()})
        H.log("with --source-dir %s: %r" % (priv, {k: v.get("why") for k, v in under.items()}))
        for fn in ("shadowfn", "secretfn", "hiddenfn", "linkfn", "plinkfn", "keyfn", "ghostfn"):
            f = got[fn]
            assert not f["readable"] and "text" not in f, (fn, f)
            assert f["why"].startswith("source not served: "), (fn, f)
        assert "every user" in got["secretfn"]["why"] and "every user" in got["hiddenfn"]["why"]
        # a file that does not exist where not every user can look gets the
        # same answer as one that does (it told them apart)
        assert got["ghostfn"]["why"] == got["hiddenfn"]["why"], (got["ghostfn"], got["hiddenfn"])
        assert "named like a source file" in got["keyfn"]["why"], got["keyfn"]
        assert "named like a source file" in got["linkfn"]["why"], got["linkfn"]
        assert got["okfn"]["readable"] and got["okfn"]["text"] == ["int ok;", "int ok_line2;"], \
            got["okfn"]
        # --source-dir: the user vouches for that tree (0644 in a 0700 dir),
        # not for what its links reach, nor for anything else.
        assert under["hiddenfn"]["readable"] and under["hiddenfn"]["text"] == ["int hidden;"], \
            under["hiddenfn"]
        for fn in ("shadowfn", "secretfn", "plinkfn", "linkfn", "keyfn"):
            assert not under[fn]["readable"] and "text" not in under[fn], (fn, under[fn])
        assert under["okfn"]["readable"], under["okfn"]
        for answers in (got, under):
            for fn, f in answers.items():
                for line in f.get("text", []):
                    assert line not in shadow or not line, (fn, line)
    finally:
        shutil.rmtree(pub)


def test_zero_sample_capture_serves_empty_views():
    """serve on a recording that took no sample answers every view with an
    empty result (before: 400 'has no events' to every API call)."""
    cap = H.zero_sample_record().capture
    with Server(cap) as srv:
        info = srv.api("/api/info")
        flame = srv.api("/api/flamegraph")
        tree = srv.api("/api/calltree")
        flat = srv.api("/api/flat")
        lanes = srv.api("/api/lanes")
        groups = srv.api("/api/groups?by=process")
        src = srv.api("/api/source?function=main")
        zones = srv.api("/api/zones")
        st, _, body = srv.get("/api/offcpu")
    H.log("info: %r" % info)
    assert [e["name"] for e in info["events"]] == ["cpu-clock"], info
    assert flame["total"] == 0 and tree["total"] == 0 and flat["total"] == 0, (flame, flat)
    assert flat["rows"] == [] and src["files"] == [] and src["function_total"] == 0, (flat, src)
    assert groups["total"] == 0 and lanes is not None and zones is not None
    # no off-CPU intervals: a clear 400, as for any capture without them
    assert st == 400 and b"off-CPU" in body, (st, body)


def test_live_directory_waits_for_its_first_segment():
    """serve DIR on a continuous-recording directory with no segment yet
    says it waits, then serves the first segment once it is published
    (before: exit 1 'no readable segments').  Ctrl-C while waiting exits 0."""
    H.require_root()
    src = H.tmp_path("segs-src")
    H.run([H.BIN, "record", "-q", "-F", "199", "--continuous", src, "--segment", "1s", "--",
           H.fixture("spinner"), "2"], timeout=120, check=True)
    segs = sorted(n for n in os.listdir(src) if re.match(r"^seg-\d{8}T\d{6}Z-\d{8}\.msc$", n))
    assert segs, os.listdir(src)
    want = int(re.search(r"^  samples\s+(\d+)", H.report(os.path.join(src, segs[0])).stdout,
                         re.M).group(1))
    d = H.tmp_path("segs-live")
    os.mkdir(d, 0o700)
    errpath = H.tmp_path("serve.err")
    with open(errpath, "w") as err:
        proc = subprocess.Popen([H.BIN, "serve", d, "--port", "0"], stdout=subprocess.PIPE,
                                stderr=err, text=True)
    try:
        H.wait_for_line(errpath, r"no segment yet: waiting for the first", proc=proc)
        assert proc.poll() is None
        tmp = os.path.join(d, "incoming.part")
        shutil.copy(os.path.join(src, segs[0]), tmp)
        os.rename(tmp, os.path.join(d, segs[0]))
        m = re.match(r"microscope serve: (http://\S+/)$", proc.stdout.readline().strip())
        assert m, open(errpath).read()
        with urllib.request.urlopen(m.group(1) + "api/info", timeout=30) as r:
            info = json.load(r)
        assert info["live"] and info["segments"] == 1, info
        assert info["summary"]["samples"] == want > 0, (info["summary"], want)
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=15)
    assert rc == 0, (rc, open(errpath).read())
    # Stopped while still waiting: exit 0, nothing served.
    empty = H.tmp_path("segs-empty")
    os.mkdir(empty, 0o700)
    with open(errpath, "w") as err:
        proc = subprocess.Popen([H.BIN, "serve", empty, "--port", "0"], stdout=subprocess.PIPE,
                                stderr=err, text=True)
    H.wait_for_line(errpath, r"no segment yet", proc=proc)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=15)
    assert proc.returncode == 0 and out == "", (proc.returncode, out)


def test_live_directory_waits_until_it_exists():
    """serve DIR before `record --continuous DIR` made DIR: it says it waits
    for DIR, then for its first segment, then serves what the recording
    publishes (before: exit 1 'open: No such file or directory').  A missing
    path that record could not make (named like a capture file, or under a
    missing directory) and an existing path that is not a capture keep their
    error, exit 1 at once."""
    H.require_root()
    d = H.tmp_path("segs-later")
    errpath = H.tmp_path("serve-later.err")
    with open(errpath, "w") as err:
        proc = subprocess.Popen([H.BIN, "serve", d, "--port", "0"], stdout=subprocess.PIPE,
                                stderr=err, text=True)
    try:
        H.wait_for_line(errpath, r"segs-later does not exist yet: waiting for it", proc=proc)
        assert proc.poll() is None
        H.run([H.BIN, "record", "-q", "-F", "199", "--continuous", d, "--segment", "1s", "--",
               H.fixture("spinner"), "1.5"], timeout=120, check=True)
        m = re.match(r"microscope serve: (http://\S+/)$", proc.stdout.readline().strip())
        assert m, open(errpath).read()
        with urllib.request.urlopen(m.group(1) + "api/info", timeout=30) as r:
            info = json.load(r)
        assert info["live"] and info["segments"] >= 1 and info["summary"]["samples"] > 0, info
    finally:
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=15)
    assert rc == 0, (rc, open(errpath).read())
    junk = H.tmp_path("not-a-capture")
    with open(junk, "w") as f:
        f.write("junk\n")
    for path, why in ((H.tmp_path("typo.msc"), "No such file"),
                      (H.tmp_path("no-such-dir/segs"), "No such file"),
                      (junk, "not a microscope capture")):
        r = H.run([H.BIN, "serve", path, "--port", "0"], timeout=30)
        assert r.returncode == 1 and why in r.stderr and "waiting" not in r.stderr, \
            (path, r.returncode, r.stderr)
