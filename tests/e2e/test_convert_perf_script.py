"""`microscope convert` of `perf script` text printed by the real perf for
many -F field sets (any subset and order of comm,pid,tid,cpu,time,period,
event,addr,ip,sym,symoff,dso; `-F +...`; with callchains and with -G), on a
`perf record -g -d --sample-cpu` of the four-thread fixture.  Each import
must give perf's own sample count, thread split and leaf and root symbols
(counted here from `perf script -F tid,ip,sym` with a regex of this file,
not the importer), and what is not perf script or not readable must fail
naming the line, never become a wrong profile."""
import collections
import re

import helpers as H

# -F sets with a callchain; the bug report's first (no comm: was read as folded, rc 0)
CHAIN_SETS = (
    "pid,tid,time,ip,sym,dso,addr", "ip,sym", "tid,ip,sym", "pid,ip,sym", "comm,ip,sym",
    "ip,sym,dso", "ip,sym,symoff,dso", "time,ip,sym", "cpu,ip,sym", "event,ip,sym",
    "period,ip,sym", "addr,ip,sym", "tid,period,ip,sym", "tid,cpu,ip,sym",
    "comm,tid,cpu,time,event,period,ip,sym,symoff,dso,addr",
    "dso,sym,ip,event,time,tid,pid,comm", "+addr", "+cpu,+period", "ip",
)
# -F sets without a callchain (-G): one header line per sample with its own IP
FLAT_SETS = (
    "ip,sym", "tid,ip,sym", "comm,tid,ip,sym,dso", "pid,tid,time,ip,sym,dso,addr",
    "comm,tid,cpu,time,event,period,ip,sym,symoff,dso,addr", "period,ip,sym", "addr,ip,sym",
)
_NAME = re.compile(r"^[A-Za-z_]\w*$")


def _record():
    data = H.tmp_path("t4-script.data")
    H._run_perf(H._perf() + ["record", "--no-bpf-event", "-e", "cpu-clock", "-F", "499", "-g",
                             "-d", "--sample-cpu", "-o", data, "--", H.fixture("threads4")])
    return data


def _script(data, *args):
    return H.run(H._perf() + ["script", "-i", data] + list(args), check=True, quiet=True).stdout


def _truth(data):
    """[(tid, [sym innermost first])] from `perf script -F tid,ip,sym`."""
    samples = []
    for block in _script(data, "-F", "tid,ip,sym").split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        if not lines:
            continue
        tid = int(lines[0].split()[0])
        syms = [(l.split(None, 1)[1:] or ["[unknown]"])[0].strip() for l in lines[1:]]
        assert syms and all(l.startswith("\t") for l in lines[1:]), block
        samples.append((tid, syms))
    return samples


def _convert(text, name, ext=".txt"):
    src = H.tmp_path(name + ext)
    with open(src, "w") as f:
        f.write(text)
    cap = H.tmp_path(name + ".msc")
    proc = H.run([H.BIN, "convert", src, "-o", cap])
    return src, cap, proc


def _folded(cap):
    """{(thread label, frames root first): count} of `convert --to folded --threads`."""
    out = collections.Counter()
    for line in H.convert_folded_text(cap, threads=True).splitlines():
        path, count = line.rsplit(" ", 1)
        parts = [re.sub(r"_\[k\]$", "", p) for p in path.split(";")]
        out[(parts[0], tuple(parts[1:]))] += int(count)
    return out


def _names(counter):
    return collections.Counter({k: v for k, v in counter.items() if _NAME.match(k)})


def _check(what, fields, folded, truth, chain):
    n = len(truth)
    assert sum(folded.values()) == n, (what, sum(folded.values()), n)
    # the thread split: by tid where perf printed one, by comm, or none
    threads = collections.Counter()
    for (label, _), c in folded.items():
        threads[label] += c
    tids = collections.Counter(t for t, _ in truth)
    names = set(fields.replace("+", "").split(","))
    if fields.startswith("+") or "tid" in names:
        want = {tid: c for tid, c in tids.items()}
        got = {int(label.rsplit("-", 1)[1]): c for label, c in threads.items()}
        assert got == want, (what, got, want)
        if not fields.startswith("+") and "comm" not in names:
            assert all(l.startswith("[unknown]-") for l in threads), (what, threads)
        else:
            assert all(l.startswith("threads4-") for l in threads), (what, threads)
    elif "pid" in names:
        assert len(threads) == 1 and list(threads.values()) == [n], (what, threads)
        assert not list(threads)[0].startswith("[no thread]"), (what, threads)
    elif "comm" in names:
        assert threads == {"threads4-0": n}, (what, threads)
    else:
        assert threads == {"[no thread]": n}, (what, threads)
    if "sym" not in names and not fields.startswith("+"):
        return
    leaves = collections.Counter()
    roots = collections.Counter()
    for (_, frames), c in folded.items():
        leaves[frames[-1]] += c
        roots[frames[0]] += c
    want_leaves = _names(collections.Counter(s[0] for _, s in truth))
    assert _names(leaves) == want_leaves, (what, leaves, want_leaves)
    for k in range(4):
        assert want_leaves["spin_%d" % k] > 0, want_leaves
    if chain:
        want_roots = _names(collections.Counter(s[-1] for _, s in truth))
        assert _names(roots) == want_roots, (what, roots, want_roots)
        assert roots["start_thread"] > n / 2, (what, roots)


@H.timeout(600)
def test_convert_perf_script_field_sets_real_perf():
    """Every field set, with and without a callchain, is recognized as perf
    script under a .txt name and gives perf's samples, threads, leaves and
    roots; -F pid,tid,time,ip,sym,dso,addr was read as folded (a wrong
    profile, rc 0), -F ip,sym and -F tid,ip,sym were refused.  Also --ns
    times, and --show-mmap-events/--show-task-events lines skipped."""
    H.require_root()
    data = _record()
    truth = _truth(data)
    assert len(truth) > 200 and len({t for t, _ in truth}) == 4, (len(truth), truth[:3])
    for chain, sets in ((True, CHAIN_SETS), (False, FLAT_SETS)):
        for fields in sets:
            what = "-F %s%s" % (fields, "" if chain else " -G")
            text = _script(data, "-F", fields, *([] if chain else ["-G"]))
            src, cap, proc = _convert(text, "fs")
            assert proc.returncode == 0, (what, proc.stderr)
            assert "perf script text has no build IDs" in proc.stderr, (what, proc.stderr)
            _check(what, fields, _folded(cap), truth, chain)
            H.log("%s: %d samples as perf" % (what, len(truth)))
    # --show-*-events: PERF_RECORD_* lines between the samples are no samples
    src, cap, proc = _convert(_script(data, "--show-mmap-events", "--show-task-events", "-F",
                                      "comm,tid,time,event,ip,sym"), "records")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"skipped \d+ PERF_RECORD_\* lines", proc.stderr), proc.stderr
    _check("--show-mmap-events", "comm,tid,time,event,ip,sym", _folded(cap), truth, True)
    # --ns times: nine decimals
    src, cap, proc = _convert(_script(data, "--ns", "-F", "comm,tid,time,ip,sym"), "ns")
    assert proc.returncode == 0, proc.stderr
    _check("--ns", "comm,tid,time,ip,sym", _folded(cap), truth, True)


@H.timeout(600)
def test_convert_perf_script_misreads_fail():
    """What is not readable fails naming the line instead of converting:
    perf script text forced as folded; perf script without ip (no stack to
    import); a folded line inside perf script text; a callchain line with
    no header in headed output.  An empty input converts with a note."""
    H.require_root()
    data = _record()
    plain = _script(data, "-F", "pid,tid,time,ip,sym,dso,addr")
    src, cap, proc = _convert(plain, "forced")
    assert proc.returncode == 0, proc.stderr
    proc = H.run([H.BIN, "convert", src, "--from", "folded", "-o", cap + ".2.msc"])
    assert proc.returncode != 0 and "`perf script` output, not folded stacks" in proc.stderr, \
        proc.stderr
    for fields in ("tid,time", "comm,pid,tid,cpu,time,period,event"):
        src, cap, proc = _convert(_script(data, "-F", fields), "noip")
        assert proc.returncode != 0, (fields, proc.stderr)
        assert re.search(r"line 1 .*without an instruction pointer", proc.stderr), \
            (fields, proc.stderr)
    lines = plain.splitlines(True)
    mixed = "".join(lines[:20]) + "main;spin_0 12\n" + "".join(lines[20:])
    src, cap, proc = _convert(mixed, "mixed")
    assert proc.returncode != 0 and re.search(r"line 21 \"main;spin_0 12\": a sample header "
                                              r"of fields comm where line 1's has pid/tid,"
                                              r"time,addr", proc.stderr), proc.stderr
    blank = plain.split("\n\n", 1)
    orphan = blank[0] + "\n\n" + "\n".join(l for l in blank[1].split("\n")[1:])
    src, cap, proc = _convert(orphan, "orphan")
    assert proc.returncode != 0 and "a callchain line with no sample header" in proc.stderr, \
        proc.stderr
    src, cap, proc = _convert("", "empty")
    assert proc.returncode == 0, proc.stderr
    assert "the input has no stack (0 bytes): the capture is empty" in proc.stderr, proc.stderr
    src, cap, proc = _convert("", "empty", ".perf-script")
    assert proc.returncode == 0, proc.stderr
    assert "the input has no sample (0 bytes): the capture is empty" in proc.stderr, proc.stderr


def _samples(cap):
    return sum(int(l.rsplit(" ", 1)[1]) for l in _folded_text(cap).splitlines() if l)


def _folded_text(cap):
    return H.run([H.BIN, "convert", cap, "--to", "folded"], check=True).stdout


def test_convert_perf_script_nul_line_and_perf_data():
    """One NUL byte in perf script text damages a line, not the file (before:
    'binary data ... not perf script text' and nothing converted): a NUL in
    a callchain line skips that line, one in a header skips its sample, the
    rest converts and the note and counter say how many lines.  perf.data
    given by mistake is named as such, with the command to run."""
    H.require_root()
    data = _record()
    plain = _script(data, "-F", "comm,tid,time,ip,sym,dso")
    src, cap, proc = _convert(plain, "clean")
    assert proc.returncode == 0, proc.stderr
    whole = _samples(cap)
    blocks = plain.split("\n\n")
    assert len(blocks) > 20, len(blocks)
    # block 10: a NUL inside its second callchain line; block 20: in its header
    b10 = blocks[10].split("\n")
    b10[2] = b10[2][:5] + "\0" + b10[2][6:]
    blocks[10] = "\n".join(b10)
    blocks[20] = blocks[20][:3] + "\0" + blocks[20][4:]
    src, cap, proc = _convert("\n\n".join(blocks), "nul")
    assert proc.returncode == 0, proc.stderr
    assert "skipped 2 lines with a NUL byte" in proc.stderr, proc.stderr
    assert _samples(cap) == whole - 1, (_samples(cap), whole)
    # every other sample kept whole: folded equal but for block 20's stack
    # and block 10's (one frame less)
    proc = H.run([H.BIN, "convert", data, "-o", H.tmp_path("perfdata.msc")])
    assert proc.returncode == 1 and "looks like perf.data" in proc.stderr, proc.stderr
    assert "perf script -i" in proc.stderr, proc.stderr
    proc = H.run([H.BIN, "convert", data, "--from", "perf-script", "-o", H.tmp_path("pd2.msc")])
    assert proc.returncode == 1 and "looks like perf.data" in proc.stderr, proc.stderr
