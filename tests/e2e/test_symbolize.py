"""Symbolization in depth (issue 4): source lines and inline frames from
DWARF, debug files found by build ID / .gnu_debuglink / --debug-dir /
MiniDebugInfo / debuginfod, binaries replaced while running, and deferred
symbolization with `microscope symbolize`.

The fixture is tests/fixtures/symbolize/inline_hot.c (hot_outer's loop is
mix_round -> mix_step, both always_inline), built in variants by
build_variants.sh into BUILD/fixtures/symbolize/.  The reference for names
and lines is `eu-addr2line -i -f` on the variant's unstripped, unsplit
build (VARIANT_ref, or the variant itself) at the capture's addresses."""
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request

import helpers as H

VDIR = os.path.join(H.FIXTURES, "symbolize")
# Local files only, unless a test starts its own server: no DEBUGINFOD_URLS
# from the environment (Debian's libdebuginfod-common sets it for login
# shells) reaches `microscope symbolize`.
os.environ.pop("DEBUGINFOD_URLS", None)


def _variant(name):
    path = os.path.join(VDIR, name)
    assert os.path.exists(path), "%s is missing: run `make all`" % path
    return path


def _frames(capture):
    """The frames table (convert --to frames) as a list of dicts, row order."""
    out = H.run([H.BIN, "convert", capture, "--to", "frames"], check=True, quiet=True).stdout
    rows = []
    for line in out.splitlines():
        if line.startswith("#"):
            continue
        f = line.split("\t")
        rows.append(dict(id=int(f[0]), module=f[1], build_id=f[2], address=int(f[3], 16),
                         flags=f[4], function=f[5], file=f[6], line=int(f[7])))
    return rows


def _chains(capture, module_path):
    """{(address, is_return): [(function, file basename, line), ...] outermost
    first} for the frames of module_path."""
    chains = {}
    for r in _frames(capture):
        if r["module"] != module_path or "T" in r["flags"]:
            continue
        key = (r["address"], "R" in r["flags"])
        loc = (r["function"], os.path.basename(r["file"]), r["line"])
        chain = chains.setdefault(key, [])
        if "I" not in r["flags"] and chain:
            continue  # the same address and name seen again: one chain per key
        chain.append(loc)
    return chains


def _addr2line(binary, address):
    """eu-addr2line -i -f -e BINARY ADDRESS as [(function, file, line)],
    outermost first."""
    out = H.run([H.require_tool("eu-addr2line"), "-i", "-f", "-e", binary, hex(address)],
                quiet=True).stdout.splitlines()  # status 1 when a line is unknown
    chain = []
    for i in range(0, len(out) - 1, 2):
        name = out[i].split(" inlined at ")[0].strip()
        loc = out[i + 1].strip()
        parts = loc.split(":")
        file = "" if parts[0] == "??" else os.path.basename(parts[0])
        line = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        chain.append((name if name != "??" else "", file, line))
    return list(reversed(chain))


def _record_variant(name, extra=(), seconds="0.6"):
    binary = _variant(name)
    out = H.tmp_path(name + ".msc")
    H.record([binary, seconds], output=out, extra=list(extra))
    return binary, out


# variant -> extra record options
VARIANTS = {
    "gcc_plain": (),
    "clang_dwarf4": (),
    "clang_dwarf5": (),
    "gcc_split": (),
    "gcc_gz": (),
    "gcc_zdebug": (),
    "gcc_zstd": (),
    "gcc_debuglink": (),
    "gcc_buildid": ("--debug-dir", os.path.join(VDIR, "buildid-tree")),
    "gcc_static": (),
    "gcc_nopie": (),
    "clang_lld": (),
}


@H.timeout(300)
def test_variants_match_eu_addr2line():
    """Every variant names the same functions, files and lines as
    eu-addr2line -i on the plain build, inline chain included."""
    H.require_root()
    failures = []
    for name, extra in VARIANTS.items():
        binary, cap = _record_variant(name, extra)
        ref = os.path.join(VDIR, name + "_ref")
        ref = ref if os.path.exists(ref) else binary
        chains = _chains(cap, binary)
        assert chains, "%s: no frames of %s in the capture" % (name, binary)
        inline_seen = False
        for (addr, is_ret), chain in sorted(chains.items()):
            want = _addr2line(ref, addr - 1 if is_ret else addr)
            if not want[-1][1]:
                # No DWARF there (libc code linked into the static build):
                # symbol aliases at one address may be chosen differently
                # (we prefer the global __libc_start_main to the local
                # __libc_start_main_impl), so only the DWARF-described
                # code is compared.
                if chain != want:
                    H.log("%s 0x%x: no DWARF; ours %s, eu-addr2line %s" % (
                        name, addr, chain, want))
                continue
            if chain != want:
                failures.append("%s 0x%x%s: ours %s, eu-addr2line %s" % (
                    name, addr, " (return)" if is_ret else "", chain, want))
            names = [c[0] for c in chain]
            if names[-3:] == ["hot_outer", "mix_round", "mix_step"]:
                inline_seen = True
                assert chain[-1][1] == "inline_hot.c" and chain[-1][2] > 0, chain
        H.log("%s: %d addresses compared, inline chain seen: %s" % (
            name, len(chains), inline_seen))
        assert inline_seen, "%s: no sample shows hot_outer -> mix_round -> mix_step: %s" % (
            name, sorted(chains.items())[:8])
        prof = H.parse_folded(H.convert_folded_text(cap), keep_inline=True)
        hot = H.count_where(prof, lambda st: st[-3:] == ("hot_outer", "mix_round", "mix_step"))
        assert hot > 0, "%s: folded output never shows the inline chain" % name
    assert not failures, "%d mismatches:\n%s" % (len(failures), "\n".join(failures[:20]))


def test_minidebuginfo_names():
    """.gnu_debugdata gives the same function names (no lines)."""
    binary, cap = _record_variant("gcc_minidebug")
    chains = _chains(cap, binary)
    names = {c[0][0] for c in chains.values()}
    assert "hot_outer" in names and "run_phase" in names, names
    for (addr, is_ret), chain in chains.items():
        want = _addr2line(_variant("gcc_plain"), addr - 1 if is_ret else addr)
        assert chain[0][0] == want[0][0], "0x%x: ours %s, eu-addr2line %s" % (addr, chain, want)


def test_dwp_reported_per_module():
    """What libdw 0.188 cannot read (a .dwp package) is a counted problem
    with a message naming the module; names still come from the symbol
    table."""
    binary, cap = _record_variant("clang_dwp")
    rep = H.report(cap).stdout
    lines = [l for l in rep.splitlines() if "debug info" in l and binary in l]
    assert lines and ".dwp" in lines[0], "no per-module problem line:\n%s" % rep
    assert "module_debug_partial 1" in rep, rep
    names = {c[0][0] for c in _chains(cap, binary).values()}
    assert "hot_outer" in names, names


def _zstd_sections(path):
    """Names of the sections of path compressed with zstd (Elf64_Chdr
    ch_type 2), read from the file itself."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx][4]
    names = []
    for h in hdrs:
        if h[2] & 0x800 and struct.unpack_from("<I", data, h[4])[0] == 2:  # SHF_COMPRESSED
            names.append(data[strtab + h[0]:data.index(b"\0", strtab + h[0])].decode())
    return names


def _folded_raw(capture):
    """{frames: count} with frames as written (inline ones end "_[i]")."""
    text = H.convert_folded_text(capture, out=capture + ".folded")
    H.parse_folded(text)  # well-formed
    prof = {}
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        prof[tuple(stack.split(";"))] = int(count)
    return prof


@H.timeout(300)
def test_compressed_debug_sections_fold_identically():
    """Issue 21 item 3: the same samples symbolized through the plain build
    and through the same build with its DWARF compressed with zlib (gABI),
    zlib-gnu (.zdebug) and zstd give identical folded output, inline frames
    included, and no per-module DWARF problem.  The build is recorded once
    with --symbolize deferred, then each variant (objcopy keeps the code and
    the build ID; GCC 12 has no -gz=zstd) replaces it on disk before
    `microscope symbolize`, so the comparison is exact, not statistical.
    test_variants_match_eu_addr2line covers gcc -gz=zlib and live recordings
    of each variant."""
    H.require_root()
    zst = _zstd_sections(_variant("gcc_zstd"))
    assert ".debug_info" in zst and ".debug_line" in zst, \
        "gcc_zstd has no zstd-compressed DWARF (objcopy wrote %s)" % zst
    app = H.tmp_path("app")
    shutil.copy(_variant("gcc_plain"), app)
    raw = H.tmp_path("deferred.msc")
    H.record([app, "2"], output=raw, extra=["--symbolize", "deferred"])
    folded = {}
    for name in ("gcc_plain", "gcc_zlib", "gcc_zdebug", "gcc_zstd"):
        shutil.copy(_variant(name), app + ".new")
        os.rename(app + ".new", app)
        out = H.tmp_path(name + ".msc")
        H.run([H.BIN, "symbolize", raw, "-o", out], check=True)
        rep = H.report(out).stdout
        assert "module_debug_partial" not in rep and "debug info" not in rep, "%s: DWARF problem:\n%s" % (name, rep)
        folded[name] = _folded_raw(out)
        hot = sum(n for st, n in folded[name].items()
                  if st[-3:] == ("hot_outer", "mix_round_[i]", "mix_step_[i]"))
        H.log("%s: %d samples, %d in hot_outer -> mix_round [i] -> mix_step [i]" % (
            name, sum(folded[name].values()), hot))
        assert hot >= 20, "%s: %d samples show the inline chain" % (name, hot)
    for name, prof in folded.items():
        diff = {st: (folded["gcc_plain"].get(st), n) for st, n in prof.items()
                if folded["gcc_plain"].get(st) != n}
        diff.update({st: (n, prof.get(st)) for st, n in folded["gcc_plain"].items()
                     if prof.get(st) != n})
        assert not diff, "%s folds differently from gcc_plain (plain, %s):\n%s" % (
            name, name, "\n".join("%s %s" % (";".join(st), v) for st, v in list(diff.items())[:10]))


def _wait_ready(path, proc, timeout=15):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return
        assert proc.poll() is None, "fixture exited early: %s" % proc.stderr.read()
        time.sleep(0.05)
    raise AssertionError("fixture never wrote %s" % path)


@H.timeout(120)
def test_replaced_binary_keeps_running_build_names():
    """A binary replaced on disk (rename over it) while running: names come
    from the running build, immediate and deferred, and the path loses its
    ' (deleted)'."""
    H.require_root()
    app = H.tmp_path("app")
    shutil.copy(_variant("gcc_plain"), app)
    ready = H.tmp_path("ready")
    # It runs long enough for both recordings on a loaded machine (it is
    # killed at the end); at 6 s the second once found it gone: no samples.
    proc = subprocess.Popen([app, "60", ready], stderr=subprocess.PIPE, text=True)
    try:
        _wait_ready(ready, proc)
        shutil.copy(_variant("gcc_alt"), app + ".new")
        os.rename(app + ".new", app)
        for mode in ("immediate", "deferred"):
            cap = H.tmp_path("replaced-%s.msc" % mode)
            H.record(pids=[proc.pid], duration=1, output=cap, extra=["--symbolize", mode])
            prof = H.folded(cap)
            assert H.count_containing(prof, "hot_outer") > 0, H.top(H.self_shares(prof))
            assert H.count_containing(prof, "alt_outer") == 0, H.top(H.self_shares(prof))
            mods = {r["module"] for r in _frames(cap)}
            assert app in mods and not any("(deleted)" in m for m in mods), mods
    finally:
        proc.kill()
        proc.wait()


def _deferred_pair(binary_copy, raw):
    """Record binary_copy once (raw stream kept) deferred."""
    cap = H.tmp_path("deferred.msc")
    H.record([binary_copy, "0.8"], output=cap, save_raw=raw,
             extra=["--symbolize", "deferred"])
    return cap


@H.timeout(180)
def test_deferred_then_symbolize_equals_immediate():
    """The same raw stream processed immediately (with --debug-dir) and
    deferred then `symbolize --debug-dir`: identical folded output; before
    symbolize, frames show as module+0xoffset."""
    H.require_root()
    app = H.tmp_path("app")
    shutil.copy(_variant("gcc_buildid"), app)
    tree = os.path.join(VDIR, "buildid-tree")
    raw = H.tmp_path("raw")
    deferred = _deferred_pair(app, raw)
    before = H.convert_folded_text(deferred)
    assert "app+0x" in before and "hot_outer" not in before, before[:2000]
    immediate = H.tmp_path("immediate.msc")
    H.record(output=immediate, extra=["--replay", raw, "--symbolize", "immediate",
                                      "--debug-dir", tree])
    later = H.tmp_path("later.msc")
    res = H.run([H.BIN, "symbolize", deferred, "-o", later, "--debug-dir", tree], check=True)
    a = H.convert_folded_text(immediate)
    b = H.convert_folded_text(later)
    assert "hot_outer;mix_round_[i];mix_step_[i]" in a, a[:2000]
    assert a == b, "immediate and deferred+symbolize differ:\n--- immediate\n%s\n--- later\n%s" % (
        a[:3000], b[:3000])
    H.log(res.stderr.strip())

    # Another build at the same path is refused, naming both build IDs.
    want_id = [r["build_id"] for r in _frames(deferred) if r["module"] == app][0]
    shutil.copy(_variant("gcc_alt"), app)
    other_id = subprocess.run(["readelf", "-n", app], capture_output=True, text=True).stdout
    other_id = other_id.split("Build ID:")[1].split()[0]
    refused = H.tmp_path("refused.msc")
    res = H.run([H.BIN, "symbolize", deferred, "-o", refused], check=True)
    assert want_id in res.stderr and other_id in res.stderr, res.stderr
    text = H.convert_folded_text(refused)
    assert "alt_outer" not in text and "app+0x" in text, text[:2000]
    rep = H.report(refused).stdout
    assert "build_id=%s" % want_id in rep and "mismatch" in rep, rep


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@H.timeout(180)
def test_symbolize_with_debuginfod():
    """A local Debian debuginfod server over a directory holding only the
    debug file: `symbolize --debuginfod URL` fetches it by build ID."""
    H.require_root()
    server = H.require_tool("debuginfod")
    app = H.tmp_path("app")
    shutil.copy(_variant("gcc_buildid"), app)
    srv_dir = H.tmp_path("srv")
    os.makedirs(srv_dir)
    shutil.copy(os.path.join(VDIR, "gcc_debuglink.debug"), srv_dir)
    cap = H.tmp_path("deferred.msc")
    H.record([app, "0.6"], output=cap, extra=["--symbolize", "deferred"])
    bid = [r["build_id"] for r in _frames(cap) if r["module"] == app][0]
    port = _free_port()
    log = open(H.tmp_path("debuginfod.log"), "w")
    proc = subprocess.Popen([server, "-F", srv_dir, "-p", str(port), "-d",
                             H.tmp_path("debuginfod.sqlite")], stdout=log, stderr=log)
    url = "http://127.0.0.1:%d" % port
    try:
        end = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (url, bid),
                                            timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert proc.poll() is None, "debuginfod exited: %s" % open(log.name).read()
            assert time.monotonic() < end, "debuginfod never served %s" % bid
            time.sleep(0.2)
        env = dict(os.environ, DEBUGINFOD_CACHE_PATH=H.tmp_path("dcache"))
        env.pop("DEBUGINFOD_URLS", None)
        out = H.tmp_path("fetched.msc")
        res = H.run([H.BIN, "symbolize", cap, "-o", out, "--debuginfod", url], env=env,
                    check=True)
        assert "debuginfod used" in res.stderr, res.stderr
        text = H.convert_folded_text(out)
        assert "hot_outer;mix_round_[i];mix_step_[i]" in text, text[:2000]
        # Without the server nothing names hot_outer (the file is stripped).
        res = H.run([H.BIN, "symbolize", cap, "-o", H.tmp_path("none.msc")], env=env,
                    check=True)
        assert "hot_outer" not in H.convert_folded_text(H.tmp_path("none.msc"))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@H.timeout(60)
def test_memfd_executable_symbolized_at_record_time():
    """An executable run from a memfd (fexecve): in deferred mode it cannot be
    found later, so it is symbolized while recording (names, inline chain)."""
    H.require_root()
    src = _variant("gcc_plain")
    code = ("import os,sys; fd=os.memfd_create('inlhot', 0); "
            "os.write(fd, open(sys.argv[1],'rb').read()); "
            "os.execve(fd, ['inlhot', '2'], dict(os.environ))")
    cap = H.tmp_path("memfd.msc")
    # --python off: the launcher's interpreter stays deferred too (with
    # Python frames walked it is symbolized while recording, and loading
    # python3.11-dbg's DWARF can hold the processor back until the fixture
    # has exited and its /proc/PID/map_files is gone).
    H.record([H.DEBIAN_PYTHON, "-c", code, src], output=cap,
             extra=["--symbolize", "deferred", "--python", "off"])
    text = H.convert_folded_text(cap)
    assert "hot_outer;mix_round_[i];mix_step_[i]" in text, text[:2000]
    mods = {r["module"] for r in _frames(cap) if r["function"] == "hot_outer"}
    assert mods and all(m.startswith("/memfd:inlhot") and "(deleted)" not in m
                        for m in mods), mods


def _build_id(binary):
    out = subprocess.run(["readelf", "-n", binary], capture_output=True, text=True).stdout
    return out.split("Build ID:")[1].split()[0]


@H.timeout(120)
def test_symbolize_other_mount_namespace_reads_the_process_file():
    """A process in its own mount namespace (unshare --mount, a private bind
    mount: a container's view) runs build A at a path where our namespace
    has build B.  Immediate and deferred captures name A's functions, never
    B's, with A's build ID; deferred symbolizes it while recording, since
    `symbolize` here would find B at that path."""
    H.require_root()
    unshare = H.require_tool("unshare")
    a, b = _variant("gcc_plain"), _variant("gcc_alt")
    a_id, b_id = _build_id(a), _build_id(b)
    assert a_id != b_id
    app = H.tmp_path("ns/app")
    os.makedirs(os.path.dirname(app), exist_ok=True)
    shutil.copy(b, app)  # what our namespace sees
    a_copy = H.tmp_path("ns-a")
    shutil.copy(a, a_copy)  # bound over app inside the namespace
    ready = H.tmp_path("ns-ready")
    proc = subprocess.Popen(
        [unshare, "--mount", "--propagation", "private", "--fork", "sh", "-c",
         'mount --bind "$1" "$2" && exec "$2" 30 "$3"', "sh", a_copy, app, ready],
        stderr=subprocess.PIPE, text=True)
    child = None
    try:
        _wait_ready(ready, proc)
        # unshare --fork's child (the fixture, after exec) is what runs A.
        with open("/proc/%d/task/%d/children" % (proc.pid, proc.pid)) as f:
            child = int(f.read().split()[0])
        assert os.readlink("/proc/%d/exe" % child) == app
        for mode in ("immediate", "deferred"):
            cap = H.tmp_path("ns-%s.msc" % mode)
            H.record(pids=[child], duration=1, output=cap, extra=["--symbolize", mode])
            prof = H.folded(cap)
            assert H.count_containing(prof, "hot_outer") > 0.5 * H.total(prof), \
                H.top(H.self_shares(prof))
            assert H.count_containing(prof, "alt_outer") == 0, H.top(H.self_shares(prof))
            ids = {r["build_id"] for r in _frames(cap) if r["module"] == app}
            assert ids == {a_id}, "%s: module build IDs %s, A is %s, B is %s" % (
                mode, ids, a_id, b_id)
            if mode == "deferred":
                # Named in the capture itself (no `symbolize` run): record time.
                assert "hot_outer;mix_round_[i];mix_step_[i]" in H.convert_folded_text(cap)
                later = H.tmp_path("ns-later.msc")
                H.run([H.BIN, "symbolize", cap, "-o", later], check=True)
                text = H.convert_folded_text(later)
                assert "hot_outer" in text and "alt_outer" not in text, text[:2000]
    finally:
        if child:
            H.kill_pid(child)
        proc.kill()
        proc.wait()


@H.timeout(120)
def test_symbolize_dwarf_cfi_from_running_binary_deleted_or_replaced():
    """--call-graph dwarf on a frame-pointer-less fixture whose binary was
    replaced on disk by another build, or deleted, after it started: CFI
    comes from the running file (/proc/PID/map_files, build-ID checked, as
    the symbols), so stacks reach main and no module lacks CFI."""
    H.require_root()
    for how in ("replaced", "deleted"):
        app = H.tmp_path("nofp-" + how)
        shutil.copy(H.fixture("nofp_chain"), app)
        env = dict(os.environ, MS_FIXTURE_SCALE="4")
        proc = subprocess.Popen([app], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env)
        try:
            if how == "replaced":
                shutil.copy(_variant("gcc_alt"), app + ".new")
                os.rename(app + ".new", app)
            else:
                os.unlink(app)
            cap = H.tmp_path("nofp-%s.msc" % how)
            H.record(pids=[proc.pid], duration=1, output=cap, extra=["--call-graph", "dwarf"])
            prof = H.folded(cap)
            n = H.total(prof)
            leaf = H.count_containing(prof, "chain_leaf")
            full = H.count_where(prof, lambda st: "main" in st and "chain_leaf" in st)
            H.log("%s: %d samples, %d in chain_leaf, %d of them reach main" % (
                how, n, leaf, full))
            assert leaf > 0.5 * n, H.top(H.self_shares(prof))
            assert full >= 0.98 * leaf, H.show_stacks(prof, lambda st: "main" not in st)
            assert H.count_containing(prof, "alt_outer") == 0
            problems = [l for l in H.report(cap).stdout.splitlines()
                        if l.strip().startswith("problems")]
            assert problems and "module_no_cfi" not in problems[0], problems
        finally:
            proc.kill()
            proc.wait()


def _python_samples(capture, look):
    import test_python
    return test_python.samples(capture, look), test_python.py_frames


@H.timeout(180)
def test_symbolize_deferred_python_frames_placed():
    """record --symbolize deferred of CPython (pyenv's 3.11 with libpython,
    Debian's 3.11 with the interpreter in the executable): the module holding
    _PyEval_EvalFrameDefault is symbolized while recording, so interpreted
    frames are placed at its activations; after `symbolize` the python look
    shows <module>;outer;middle;inner, other modules were deferred."""
    H.require_root()
    fixture = os.path.join(H.REPO, "tests", "fixtures", "python", "calls.py")
    tried = 0
    for python in ("/root/.pyenv/versions/3.11.7/bin/python3.11", H.DEBIAN_PYTHON):
        if not os.access(python, os.X_OK):
            H.log("%s is not installed" % python)
            continue
        tried += 1
        tag = "pyenv" if "pyenv" in python else "debian"
        cap = H.tmp_path("py-deferred-%s.msc" % tag)
        H.record([python, fixture, "0.5"], output=cap, extra=["--symbolize", "deferred"])
        before = H.convert_folded_text(cap)
        assert "_PyEval_EvalFrameDefault" in before, before[:2000]
        assert "libc.so.6+0x" in before, "libc was not deferred:\n%s" % before[:2000]
        later = H.tmp_path("py-later-%s.msc" % tag)
        H.run([H.BIN, "symbolize", cap, "-o", later], check=True)
        stacks, py_frames = _python_samples(later, "python")
        inner = [st for _, _, st in stacks if any(f[0] == "inner" for f in py_frames(st))]
        full = [st for st in inner
                if [f[0] for f in py_frames(st)] == ["<module>", "outer", "middle", "inner"]]
        H.log("%s: %d samples, %d in inner, %d with the full path" % (
            tag, len(stacks), len(inner), len(full)))
        assert len(inner) >= 50 and H.percent(len(full), len(inner)) >= 95.0, \
            [";".join(st) for st in inner if st not in full][:3]
        rep = H.report(later, "--look", "python").stdout
        assert re.search(r"inner \(.*calls\.py\)", rep), rep
    if not tried:
        H.skip("no python3.11 installed")
