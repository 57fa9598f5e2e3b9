"""Analysis a perf or pprof user expects (issue 19): keys at a granularity,
diff, filters, and the report/convert command line around them.

The function table (`report`, function granularity, inlined calls folded)
is compared with `perf report --no-children` on a fixture whose hot loop
is two always_inline helpers; everything else runs on recordings of the
fixtures with known shares, and asserts values."""
import html
import json
import os
import re
import shutil

import helpers as H

VDIR = os.path.join(H.FIXTURES, "symbolize")
GRANULARITY_TOLERANCE = 2.0  # percentage points


def table(out):
    """{function: (self%, total%)} from a report's function table."""
    rows = {}
    lines = out.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("functions by ")), None)
    assert start is not None, "no function table:\n%s" % out[:3000]
    for line in lines[start + 2:]:
        m = re.match(r"\s+([\d.]+)%\s+\S+\s+([\d.]+)%\s+\S+\s+(.*)$", line)
        if not m:
            break
        name = m.group(3)
        if name.endswith(" [k]"):
            name = name[:-4]
        rows[name] = (float(m.group(1)), float(m.group(2)))
    return rows


@H.timeout(300)
def test_function_table_matches_perf_no_children():
    """inline_hot (hot_outer -> mix_round [inlined] -> mix_step [inlined]):
    the default function table folds the inlined calls into hot_outer like
    perf's symbol column, so perf's top 10 self shares are within 2 points;
    --inline show gives the inlined callee the self time instead."""
    H.require_root()
    binary = os.path.join(VDIR, "gcc_plain")
    assert os.path.exists(binary), "%s is missing: run `make all`" % binary
    cmd = [binary, "2"]
    data = H.tmp_path("perf.data")
    H.perf_record(cmd, data)
    theirs = H.perf_self_by_sym(data)
    rec = H.record(cmd)
    ours = table(H.report(rec.capture, "--limit", "200").stdout)
    H.log("perf self: %s" % H.top(theirs))
    H.log("ours self: %s" % {k: v[0] for k, v in sorted(ours.items(), key=lambda kv: -kv[1][0])[:10]})
    assert "mix_step" not in ours and "mix_round" not in ours, ours
    assert ours["hot_outer"][0] > 50, ours
    problems = []
    for name, pct in sorted(theirs.items(), key=lambda kv: -kv[1])[:10]:
        mine = ours.get(name, (0.0, 0.0))[0]
        if abs(mine - pct) > GRANULARITY_TOLERANCE:
            problems.append("%s: ours %.1f%% vs perf %.1f%%" % (name, mine, pct))
    assert not problems, "; ".join(problems)
    shown = table(H.report(rec.capture, "--limit", "200", "--inline", "show").stdout)
    # Where in the inlined code the CPU charges a sample varies by machine
    # (mix_step had 50.0 % once): the callee gets a large part, not a fixed one.
    assert shown.get("mix_step [i]", (0, 0))[0] > 25, shown
    # the inlined callees' self plus hot_outer's own is the folded hot_outer
    split = sum(shown.get(n, (0, 0))[0] for n in ("hot_outer", "mix_round [i]", "mix_step [i]"))
    assert abs(split - ours["hot_outer"][0]) <= 0.3, (split, ours["hot_outer"])
    assert shown["hot_outer"][0] < ours["hot_outer"][0] - 30, shown
    # the call tree keeps the inline frames by default
    assert "mix_step [i]" in H.report(rec.capture).stdout


def _shares(hot, name):
    """A recording of `shares HOT` (steady_fn 20 %, three cold functions share the rest)."""
    return H.record([H.fixture("shares"), str(hot)], output=H.tmp_path(name))


def diff_rows(out):
    """[(function, base%, new%, delta, z, significant)] from report --diff, in order."""
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s+([\d.]+)%\s+([\d.]+)%\s+([-+][\d.]+)\s+(-?[\d.]+)(\*?)\s+(\S.*)$", line)
        if m:
            rows.append((m.group(6), float(m.group(1)), float(m.group(2)), float(m.group(3)),
                         float(m.group(4)), m.group(5) == "*"))
    return rows


@H.timeout(300)
def test_diff_hot_function_60_to_30():
    """report --diff of `shares 60` vs `shares 30`: hot_fn first, -30 points
    +-3, marked significant; steady_fn (20 % in both) not marked.  --sort
    total gives the same for these leaves.  A capture of another event is
    refused with a message naming both."""
    base = _shares(60, "base.msc")
    new = _shares(30, "new.msc")
    # --limit: steady_fn's delta is near 0, so on a busy machine enough kernel
    # functions that moved by 0.1 points push it out of the default top 20
    out = H.run([H.BIN, "report", "--diff", "--limit", "500", base.capture, new.capture],
                check=True).stdout
    H.log(out[:1500])
    rows = diff_rows(out)
    assert rows, out
    name, b, n, delta, z, sig = rows[0]
    assert name == "hot_fn", "first row is %r, not hot_fn:\n%s" % (rows[0], out)
    assert abs(delta - (-30.0)) <= 3.0 and abs(b - 60) <= 3 and abs(n - 30) <= 3, rows[0]
    assert sig and z < 0, rows[0]
    steady = next(r for r in rows if r[0] == "steady_fn")
    assert not steady[5] and abs(steady[3]) < 3, steady
    cold = [r for r in rows if r[0].startswith("cold_")]
    assert len(cold) == 3 and all(r[3] > 0 and r[5] for r in cold), cold
    total = diff_rows(H.run([H.BIN, "report", "--diff", "--sort", "total", base.capture,
                             new.capture], check=True).stdout)
    # (total includes the kernel frames that interrupt hot_fn)
    hot_total = next(r for r in total if r[0] == "hot_fn")
    assert total[0][0] == "hot_fn" and abs(hot_total[3] + 30.0) <= 3.0 and hot_total[5], total[:3]
    # the differential flame graph: hot_fn blue (shrank), cold_a red (grew)
    svg = H.tmp_path("diff.svg")
    H.run([H.BIN, "convert", "--diff", base.capture, new.capture, "-o", svg], check=True)
    text = open(svg).read()
    m = re.search(r'data-delta="(-?[\d.]+)" data-name="hot_fn"', text)
    assert m and abs(float(m.group(1)) + 0.30) <= 0.03, m and m.group(0)
    assert re.search(r'data-name="hot_fn"><title>[^<]*points vs base\)</title><rect [^>]*'
                     r'fill="rgb\(\d+,\d+,255\)"', text), "hot_fn is not blue"
    assert re.search(r'data-name="cold_a"><title>[^<]*</title><rect [^>]*fill="rgb\(255,', text)
    # events that differ are refused: off-CPU nanoseconds (through pprof) vs CPU samples
    off = H.record([H.fixture("offcpu")], output=H.tmp_path("off.msc"), extra=["--off-cpu"])
    pb = H.tmp_path("off.pb.gz")
    H.run([H.BIN, "convert", off.capture, "--weight", "off-cpu-ns", "-o", pb], check=True)
    imp = H.tmp_path("offimp.msc")
    H.run([H.BIN, "convert", pb, "-o", imp], check=True)
    proc = H.run([H.BIN, "report", "--diff", imp, new.capture])
    assert proc.returncode == 1 and "cannot compare" in proc.stderr and \
        "events differ: off-cpu (nanoseconds) vs cpu-clock (samples)" in proc.stderr, proc.stderr


def _shares60():
    return H.cached_record("shares60", [H.fixture("shares"), "60"])


def test_cli_errors_are_short_and_suggest():
    """A mistyped command or option: exit 2, a few lines, a suggestion;
    not the whole help."""
    proc = H.run([H.BIN, "reprot", "x.msc"])
    assert proc.returncode == 2, proc
    assert "did you mean 'report'?" in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) <= 4, proc.stderr
    proc = H.run([H.BIN, "report", "--lok", "python", "x.msc"])
    assert proc.returncode == 2 and "did you mean '--look'?" in proc.stderr, proc.stderr
    assert len(proc.stderr.splitlines()) <= 5, proc.stderr
    proc = H.run([H.BIN, "convert", "--threds", "x.msc"])
    assert proc.returncode == 2 and "did you mean '--threads'?" in proc.stderr, proc.stderr
    proc = H.run([H.BIN, "report", "--granularity", "lines"])
    assert proc.returncode == 2 and "function, line, address or module" in proc.stderr, proc.stderr
    # nothing close: no suggestion
    proc = H.run([H.BIN, "xyzzy"])
    assert proc.returncode == 2 and "did you mean" not in proc.stderr, proc.stderr


def test_report_and_convert_default_to_microscope_msc():
    """No FILE: report and convert read ./microscope.msc (record's default)."""
    rec = _shares60()
    d = H.tmp_path("default-dir")
    os.makedirs(d, exist_ok=True)
    proc = H.run([H.BIN, "report"], cwd=d)
    assert proc.returncode == 1 and "microscope.msc" in proc.stderr, proc.stderr
    with open(rec.capture, "rb") as src, open(os.path.join(d, "microscope.msc"), "wb") as dst:
        dst.write(src.read())
    out = H.run([H.BIN, "report"], cwd=d, check=True).stdout
    assert out.startswith("microscope report: microscope.msc"), out[:200]
    assert table(out)["hot_fn"][0] > 40, out
    folded = H.run([H.BIN, "convert"], cwd=d, check=True).stdout
    assert "hot_fn" in folded


def test_rate_line_separates_off_cpu_from_loss():
    """The rate line says how much of the gap to the requested rate is the
    target off-CPU and names lost samples apart."""
    rec = _shares60()
    out = H.report(rec.capture).stdout
    m = re.search(r"rate\s+([\d.]+) samples per thread-second \(requested (\d+) Hz\)\n"
                  r"\s+target on-CPU (\d+)% of its threads' time, off-CPU (\d+)% \([^)]*\); "
                  r"samples lost: (none|\d+)", out)
    assert m, out[:1500]
    assert int(m.group(3)) + int(m.group(4)) == 100
    assert abs(int(m.group(3)) - round(100 * float(m.group(1)) / int(m.group(2)))) <= 1, m.group(0)
    lost = re.search(r"^\s+lost\s+(\d+)", out, re.M)
    assert (m.group(5) == "none") == (lost.group(1) == "0"), (m.group(0), lost.group(0))


def test_man_page_and_completion_installed():
    """make install puts a man page (generated from the help texts) that
    man -l renders, and bash/zsh completions; bash and zsh (driven on a pty)
    complete subcommands, enumerated values (--look, --to, --weight,
    --preset), options from the help texts, after a global --max-memory."""
    dest = H.tmp_path("install-root")
    H.run(["make", "-s", "-C", H.REPO, "install", "DESTDIR=" + dest, "PREFIX=/usr"],
          check=True, timeout=300)
    page = os.path.join(dest, "usr/share/man/man1/microscope.1")
    bash = os.path.join(dest, "usr/share/bash-completion/completions/microscope")
    zsh_fn = os.path.join(dest, "usr/share/zsh/site-functions/_microscope")
    assert all(os.path.isfile(p) for p in (page, bash, zsh_fn))
    text = H.run(["man", "-l", page], env=dict(os.environ, MANWIDTH="100", MANPAGER="cat",
                                               PAGER="cat"), check=True).stdout
    assert "MICROSCOPE(1)" in text and "MICROSCOPE REPORT" in text, text[:500]
    # every option of every command's help is in the page
    for cmd in ("record", "report", "convert", "symbolize"):
        opts = set(re.findall(r"--[a-z][a-z0-9-]*", H.run([H.BIN, cmd, "--help"],
                                                           check=True).stdout))
        missing = [o for o in opts if o not in text]
        assert not missing, "%s: %s not in the man page" % (cmd, missing)

    def complete(words):
        script = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; _microscope; '
                  'printf "%%s\\n" "${COMPREPLY[@]}"' % (
                      bash, " ".join("'%s'" % w for w in words), len(words) - 1))
        return sorted(H.run(["bash", "-c", script], check=True).stdout.split())
    assert complete(["microscope", "re"]) == ["record", "report"]
    assert complete(["microscope", "con"]) == ["convert"]
    assert complete(["microscope", "report", "--look", ""]) == ["logical", "native", "python"]
    assert complete(["microscope", "convert", "--look", "n"]) == ["native"]
    assert complete([H.BIN, "report", "--gran"]) == ["--granularity"]
    assert "--diff" in complete([H.BIN, "report", "--d"])
    assert complete(["microscope", "--max-memory", "1G", "convert", "--to", "c"]) == \
        ["capture", "chrome"]
    assert complete(["microscope", "convert", "--weight", ""]) == ["off-cpu-ns", "samples", "wall"]

    # zsh: an interactive zsh on a pty with compinit and the installed
    # _microscope, TAB pressed after each line (tests/e2e/zsh_complete.zsh)
    zsh = H.require_tool("zsh")
    bindir = H.tmp_path("zsh-bin")
    os.makedirs(bindir, exist_ok=True)
    os.symlink(H.BIN, os.path.join(bindir, "microscope"))
    lines = ["microscope re", "microscope con", "microscope report --look ",
             "microscope convert --look n", "microscope report --gran", "microscope report --d",
             "microscope --max-memory 1G convert --to c", "microscope convert --weight ",
             "microscope record --pre", "microscope record --preset "]
    proc = H.run([zsh, "-f", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          "zsh_complete.zsh"),
                  os.path.dirname(zsh_fn)] + lines,
                 env=dict(os.environ, PATH=bindir + ":" + os.environ["PATH"]), check=True,
                 timeout=180)
    got, cur = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith("== "):
            cur = line[3:]
            got[cur] = set()
        elif cur is not None:
            got[cur].add(line)
    H.log("zsh completions: %r" % got)
    want = {
        "microscope re": {"record", "report"},
        "microscope con": {"convert"},
        "microscope report --look ": {"logical", "native", "python"},
        "microscope convert --look n": {"native"},
        "microscope report --gran": {"--granularity"},
        "microscope --max-memory 1G convert --to c": {"capture", "chrome"},
        "microscope convert --weight ": {"off-cpu-ns", "samples", "wall"},
        "microscope record --pre": {"--preset"},
        "microscope record --preset ": {"light", "default", "detailed", "production"},
    }
    for line, words in want.items():
        assert got.get(line) == words, "zsh completes %r to %r, expected %r" % (
            line, got.get(line), words)
    assert "--diff" in got["microscope report --d"], got["microscope report --d"]


def _section(out, title):
    """{name: (ms, intervals)} of report --off-cpu's "off-CPU by TITLE" table."""
    lines = out.split("off-CPU by %s (" % title, 1)[1].splitlines()[2:]
    rows = {}
    for line in lines:
        m = re.match(r"\s+([\d.]+)\s+[\d.]+%\s+(\d+)\s+(\S.*)$", line)
        if not m:
            break
        name = re.sub(r"\s+\([\d.]+ \S+ clipped by the recording window\)$", "", m.group(3))
        rows[name] = (float(m.group(1)), int(m.group(2)))
    return rows


@H.timeout(300)
def test_off_cpu_tables_intervals_and_wall():
    """offcpu pipe (a reader blocked 150 ms in read() until a writer thread
    writes): off-CPU by blocking function has a user function on top (not
    the scheduler), by waker thread names the writer with the reader's wait,
    by state adds up to the total (complete + clipped); intervals are listed from the
    recording's start in ms; --weight wall folds off-CPU ns plus CPU samples
    x period."""
    rec = H.record([H.fixture("offcpu"), "pipe"], extra=["--off-cpu"])
    p = [H.parse_kv(l) for l in rec.fixture_lines if l.startswith("pipe ")][0]
    out = H.report(rec.capture, "--off-cpu", "--limit", "50").stdout
    H.log(out[:3000])
    blockers = _section(out, "blocking function")
    top = max(blockers, key=lambda k: blockers[k][0])
    assert not top.endswith("[k]") and "schedule" not in top, blockers
    wakers = _section(out, "waker thread")
    writer = [k for k in wakers if k.endswith("-%d" % p["writer_tid"])]
    wait_ms = (p["read_end_ns"] - p["read_start_ns"]) / 1e6
    assert writer and wakers[writer[0]][0] >= wait_ms - 3, (writer, wakers, wait_ms)
    wfun = _section(out, "waker function")
    assert any(not k.endswith("[k]") and v[0] >= wait_ms - 3 for k, v in wfun.items()), wfun
    states = _section(out, "state")
    # the tables count clipped intervals' part inside the window too: they
    # add up to the "total" line (complete + clipped)
    m = re.search(r"^\s+total\s+([\d.]+) (ms|s) off-CPU", out, re.M) or \
        re.search(r"complete\s+\d+ intervals?, ([\d.]+) (ms|s)", out)
    total_ms = float(m.group(1)) * (1000 if m.group(2) == "s" else 1)
    assert abs(sum(v[0] for v in states.values()) - total_ms) <= 0.5, (states, total_ms)
    # the reader's interval: from the start, in ms, woken by the writer
    start = re.search(r"^\s+\+([\d.]+) s\s+([\d.]+) ms\s+\S+-%d\s+sleep \(S\), woken by \S+-%d$"
                      % (p["reader_tid"], p["writer_tid"]), out, re.M)
    assert start and abs(float(start.group(2)) - wait_ms) <= 2.0, out[-3000:]
    assert float(start.group(1)) < 5.0
    # wall: off-CPU ns (complete) + CPU samples x period
    period = int(re.search(r"period (\d+)", H.report(rec.capture).stdout).group(1))
    samples = sum(int(l.rsplit(" ", 1)[1]) for l in H.convert_folded_text(rec.capture).splitlines())
    off = sum(int(l.rsplit(" ", 1)[1]) for l in H.run(
        [H.BIN, "convert", rec.capture, "--weight", "off-cpu-ns"], check=True).stdout.splitlines())
    wall = H.run([H.BIN, "convert", rec.capture, "--weight", "wall"], check=True)
    total = sum(int(l.rsplit(" ", 1)[1]) for l in wall.stdout.splitlines())
    assert total == off + samples * period, (total, off, samples, period)
    assert "wall: off-CPU ns plus" in wall.stderr, wall.stderr
    svg = H.tmp_path("wall.svg")
    H.run([H.BIN, "convert", rec.capture, "--weight", "wall", "-o", svg], check=True)
    assert 'data-total="%d"' % total in open(svg).read()


def test_timeline_lanes():
    """report --timeline=40: one lane for the fixture's thread, 40 columns
    of density and 40 of letters; hot_fn (60 %) is the top function of the
    most buckets; --since/--until narrow the window drawn."""
    rec = _shares60()
    out = H.report(rec.capture, "--timeline=40").stdout
    m = re.search(r"^  (shares-\d+)\s+\|(.*)\|\n\s+\|(.*)\|$", out, re.M)
    assert m, out[:2500]
    density, letters = m.group(2), m.group(3)
    assert len(density) == 40 and len(letters) == 40, (density, letters)
    legend = dict(re.findall(r"^  ([a-z])  (\S+)$", out, re.M))
    counts = {legend[ch]: letters.count(ch) for ch in set(letters) if ch in legend}
    assert max(counts, key=counts.get) == "hot_fn", counts
    assert "█" in density
    part = H.report(rec.capture, "--timeline=10", "--since", "0.2s", "--until", "0.6s").stdout
    m = re.search(r"10 buckets of ([\d.]+) ms from the recording's start to ([\d.]+) s", part)
    assert m and abs(float(m.group(1)) - 40.0) < 0.2 and abs(float(m.group(2)) - 0.6) < 0.01, \
        part[:1500]


def test_timeline_legend_explains_off_cpu_only_when_present():
    """The timeline's off-CPU legend line stands only where a lane shows
    off-CPU shading: absent for a capture without off-CPU intervals (it
    used to be printed always), present with --off-cpu waits."""
    on = H.report(_shares60().capture, "--timeline=40").stdout
    assert "timeline (" in on and "░" not in on and "off-CPU" not in on.split("timeline (")[1], \
        on.split("timeline (")[1][:1500]
    rec = H.record([H.fixture("offcpu"), "pipe"], output=H.tmp_path("tl-off.msc"),
                   extra=["--off-cpu"])
    off = H.report(rec.capture, "--timeline=40").stdout.split("timeline (")[1]
    lanes = "".join(re.findall(r"^  \S.*\|(.*)\|$", off, re.M))
    assert "░" in lanes or "·" in lanes, off[:1500]
    assert re.search(r"^  off-CPU: ░ .* off the CPU, · less$", off, re.M), off[:1500]


@H.timeout(300)
def test_perf_script_import_matches_perf_report():
    """A perf recording of the 3:1 fixture, as `perf script` text (plain and
    -F comm,pid,tid,time,ip,sym,dso,event,period): recognized by content
    (a .txt name), or forced with --from perf-script; the imported shares of
    every symbol perf gives >= 1 % are within 1 point of perf report's."""
    H.require_root()
    data = H.tmp_path("perf.data")
    H.perf_record([H.fixture("ratio")], data)
    theirs = H.perf_self_by_sym(data)
    perf = H._perf()
    plain = H.run(perf + ["script", "-i", data], check=True, quiet=True).stdout
    fields = H.run(perf + ["script", "-i", data, "-F", "comm,pid,tid,time,ip,sym,dso,event,period"],
                   check=True, quiet=True).stdout
    for name, text, argv in (("plain.txt", plain, []),
                             ("fields.data", fields, ["--from", "perf-script"])):
        src = H.tmp_path(name)
        with open(src, "w") as f:
            f.write(text)
        cap = src + ".msc"
        proc = H.run([H.BIN, "convert", src, "-o", cap] + argv, check=True)
        assert "perf script text has no build IDs" in proc.stderr, proc.stderr
        out = H.report(cap, "--limit", "500").stdout
        assert "cpu-clock (unit samples, period" in out, out[:500]
        ours = table(out)
        H.log("%s: ours %s" % (name, {k: v[0] for k, v in list(ours.items())[:5]}))
        problems = ["%s: ours %.1f%% vs perf %.1f%%" % (sym, ours.get(sym, (0, 0))[0], pct)
                    for sym, pct in theirs.items()
                    if pct >= 1.0 and abs(ours.get(sym, (0, 0))[0] - pct) > 1.0]
        assert not problems, "%s: %s" % (name, "; ".join(problems))
        assert ours["leaf_a"][0] > ours["leaf_b"][0] * 2, ours
        # the threads and times came along
        assert re.search(r"samples\s+\d+ from 1 thread", out), out[:600]
    # without --from, the -F text under a neutral name is still recognized
    proc = H.run([H.BIN, "convert", H.tmp_path("fields.data"), "-o", H.tmp_path("f2.msc")])
    assert proc.returncode == 0, proc.stderr


@H.timeout(300)
def test_perf_script_field_sets_recognized_and_parsed():
    """`perf script -F` output without a time or an event (comm,tid,ip,sym;
    comm,pid,tid,ip,sym,dso; with period; with -G, no callchain, the comm
    padded) is perf script, not folded: before, comm,tid,ip,sym was read as
    folded with each thread id as a sample count (rc 0) and
    comm,pid,tid,ip,sym,dso failed 'folded: not a folded file'.  Every
    field set gives perf's sample count, the recorded thread id, the
    fixture's 3:1 leaves and, where printed, the period and event."""
    H.require_root()
    data = H.tmp_path("perf.data")
    H.perf_record([H.fixture("ratio")], data)
    perf = H._perf()
    plain = H.run(perf + ["script", "-i", data], check=True, quiet=True).stdout
    n = len(re.findall(r"^\S.* cpu-clock\S*: ", plain, re.M))
    tids = set(re.findall(r"^ratio +(\d+) ", plain, re.M))
    assert n > 100 and len(tids) == 1, (n, tids)
    tid = tids.pop()
    for fields in ("comm,tid,ip,sym", "comm,pid,tid,ip,sym,dso", "comm,tid,ip,sym,dso,period",
                   "comm,pid,tid,time,ip,sym,dso", "comm,tid,time,event,ip,sym",
                   "comm,pid,tid,period,event,ip,sym,dso"):
        for hide in ([], ["-G"]):
            what = fields + " " + " ".join(hide)
            text = H.run(perf + ["script", "-i", data, "-F", fields] + hide, check=True,
                         quiet=True).stdout
            src = H.tmp_path("pf.txt")
            with open(src, "w") as f:
                f.write(text)
            cap = H.tmp_path("pf.msc")
            proc = H.run([H.BIN, "convert", src, "-o", cap])
            assert proc.returncode == 0, (what, proc.stderr)
            assert "perf script text has no build IDs" in proc.stderr, (what, proc.stderr)
            out = H.report(cap, "--limit", "500").stdout
            m = re.search(r"^  samples\s+(\d+) from 1 thread", out, re.M)
            assert m and int(m.group(1)) == n, (what, n, out[:600])
            event = "cpu-clock" if "event" in fields else "samples"
            period = ", period 1001001" if "period" in fields else ""
            assert ("  event      %s (unit samples%s)" % (event, period)) in out, (what, out[:600])
            threads = H.convert_folded_text(cap, threads=True)
            assert all(l.startswith("ratio-%s;" % tid) for l in threads.splitlines()), \
                (what, threads[:300])
            ours = table(out)
            assert ours["leaf_a"][0] > ours["leaf_b"][0] * 2 > 0, (what, ours)


def test_record_status_line_and_old_capture():
    """On a TTY (under script(1)) record redraws one status line (elapsed,
    samples, lost, own CPU) and erases it; without a TTY or with -q there
    is none.  A second record keeps the first capture as FILE.old; -f
    does not."""
    H.require_root()
    script = H.require_tool("script")
    d = H.tmp_path("status")
    os.makedirs(d, exist_ok=True)
    cmd = "%s record -- %s 20" % (H.BIN, H.fixture("shares"))
    tty = H.run([script, "-qec", cmd, "/dev/null"], cwd=d, check=True).stdout
    lines = re.findall(r"\[ microscope: ([\d.]+) s, (\d+) samples, (\d+) lost, own CPU "
                       r"([\d.]+)% \]", tty)
    assert len(lines) >= 2, tty[-2000:]
    assert int(lines[-1][1]) > int(lines[0][1]) >= 0 and float(lines[-1][0]) > 0, lines
    assert "\x1b[K" in tty  # erased in place (run() reads \r as a line end)
    first = os.path.join(d, "microscope.msc")
    before = os.stat(first).st_ino
    plain = H.run([H.BIN, "record", "--", H.fixture("shares"), "5"], cwd=d, check=True)
    assert "[ microscope:" in plain.stderr and "\x1b[K" not in plain.stderr, plain.stderr
    assert "samples," not in plain.stderr, plain.stderr
    old = first + ".old"
    assert os.path.isfile(old) and os.stat(old).st_ino == before
    assert "hot_fn" in H.report(old).stdout
    quiet = H.run([script, "-qec", cmd.replace("record", "record -q -f"), "/dev/null"], cwd=d,
                  check=True).stdout
    assert "[ microscope:" not in quiet, quiet[-500:]
    assert os.stat(old).st_ino == before, "-f replaced FILE.old"


def _node_flamegraph(svg, frame, term):
    node = shutil.which("node")
    web = os.path.join(H.REPO, "tests", "web")
    if not node or not os.path.isdir(os.path.join(web, "node_modules", "playwright-core")):
        H.skip("node or tests/web/node_modules missing: run `make deps` (npm ci in tests/web)")
    if not os.path.exists("/usr/bin/chromium"):
        H.skip("/usr/bin/chromium (Debian chromium) is not installed: run `make deps`")
    proc = H.run([node, os.path.join(web, "flamegraph_zoom.js"), svg, frame, term], timeout=180)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert proc.returncode == 0 and not res["errors"], res
    return res


def _names(svg_text):
    return [html.unescape(n) for n in re.findall(r'<g class="f"[^>]* data-name="([^"]*)"',
                                                  svg_text)]


@H.timeout(300)
def test_svg_click_to_zoom_and_search_in_chromium():
    """Our flame graph in headless chromium (playwright-core): a click on
    steady_fn makes it span the full width (and shows Reset Zoom, which
    undoes it); the Search prompt highlights exactly the boxes whose name
    matches, and says how many."""
    rec = _shares60()
    svg = H.tmp_path("shares.svg")
    H.run([H.BIN, "convert", rec.capture, "-o", svg], check=True)
    text = open(svg).read()
    term = "_fn$|^cold_"
    want = sum(1 for n in _names(text) if re.search(term, n))
    res = _node_flamegraph(svg, "steady_fn", term)
    H.log(json.dumps(res))
    assert res["before"] < res["full"] / 2, res
    assert abs(res["after"] - res["full"]) < 0.01, res
    assert res["reset_shown"] and res["label"] == "steady_fn", res
    assert abs(res["unzoomed"] - res["before"]) < 0.01, res
    assert res["count_attr"] == want == res["highlighted"] and want >= 4, (res, want)
    assert res["matched_text"].startswith("Matched: %d frames" % want), res


def test_svg_deep_stack_first_screen():
    """A 181-frame import: drawn as an icicle (root at the top), so the
    first 800 px show the root and the wide (hot) boxes."""
    folded = H.tmp_path("deep.folded")
    with open(folded, "w") as f:
        f.write(";".join("f%d" % i for i in range(181)) + " 900\n")
        f.write("f0;f1;hot 100\n")
    svg = H.tmp_path("deep.svg")
    H.run([H.BIN, "convert", folded, "-o", svg], check=True)
    res = _node_flamegraph(svg, "f1", "^f1[0-9]$")
    assert res["root_y"] < 100, res
    assert res["first_screen_wide"] >= 20, res
    assert res["count_attr"] == 10, res


@H.timeout(300)
def test_python_functions_sum_their_lines():
    """CPython (Debian's 3.11, calls.py): at the default function
    granularity a Python function is one row "name (file)"; its self and
    total equal the sums of its rows at --granularity line ("name
    (file:N)"), and those rows exist for inner's several lines."""
    H.require_root()
    if not os.access(H.DEBIAN_PYTHON, os.X_OK):
        H.skip("%s is not installed" % H.DEBIAN_PYTHON)
    rec = H.record([H.DEBIAN_PYTHON, os.path.join(H.REPO, "tests", "fixtures", "python",
                                                  "calls.py"), "1.0"])
    args = ["--look", "python", "--limit", "100000"]

    def rows(gran):
        out = H.report(rec.capture, "--granularity", gran, *args).stdout
        ab = {}
        for line in out.split("functions by self", 1)[1].splitlines()[2:]:
            m = re.match(r"\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(\d+)\s+(.+?)\s*$", line)
            if m:
                ab[m.group(3)] = (int(m.group(1)), int(m.group(2)))
        return ab
    func, lines = rows("function"), rows("line")
    py = {n: v for n, v in func.items() if re.fullmatch(r".+ \(.*calls\.py\)", n)}
    assert {"inner", "middle", "outer"} <= {n.split(" (")[0] for n in py}, py
    for name, (self_, total) in py.items():
        parts = {n: v for n, v in lines.items()
                 if n.startswith(name[:-1] + ":") and re.fullmatch(r".*:\d+\)", n)}
        assert parts, (name, sorted(lines)[:20])
        assert sum(v[0] for v in parts.values()) == self_, (name, self_, parts)
        # a function on one stack once (no recursion here): totals add up too
        assert sum(v[1] for v in parts.values()) == total, (name, total, parts)
    inner = [n for n in py if n.startswith("inner (")][0]
    assert len([n for n in lines if n.startswith(inner[:-1] + ":")]) >= 2


def _total_samples(out):
    return int(re.search(r"^\s+samples\s+(\d+)", out, re.M).group(1))


def test_focus_ignore_hide_since_until():
    """pprof's meanings on `shares 60`: --focus keeps exactly the samples
    through steady_fn, --ignore drops exactly hot_fn's, --hide removes a
    frame (main) and keeps every sample; --since/--until split the samples
    into two windows that add up."""
    rec = _shares60()
    base = H.report(rec.capture, "--limit", "1000").stdout
    all_rows, n = table(base), _total_samples(base)
    rows = {}
    for line in base.split("functions by self", 1)[1].splitlines()[2:]:
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(\d+)\s+(.+?)\s*$", line)
        if m:
            rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    focus = H.report(rec.capture, "--focus", "^steady_fn$").stdout
    assert _total_samples(focus) == rows["steady_fn"][1], (focus[:800], rows["steady_fn"])
    # --svg draws the same samples, also under another look
    svg = H.tmp_path("focus.svg")
    H.report(rec.capture, "--focus", "^steady_fn$", "--look", "native", "--svg", svg)
    assert re.search(r'id="root" data-total="%d"' % rows["steady_fn"][1], open(svg).read())
    ignore = H.report(rec.capture, "--ignore", "^hot_fn$").stdout
    assert _total_samples(ignore) == n - rows["hot_fn"][1]
    hide = H.report(rec.capture, "--hide", "^main$", "--limit", "1000").stdout
    assert _total_samples(hide) == n and "main" not in table(hide) and "main" in all_rows
    early = _total_samples(H.report(rec.capture, "--until", "700ms").stdout)
    late = _total_samples(H.report(rec.capture, "--since", "0.7").stdout)
    assert early > 0 and late > 0 and early + late == n, (early, late, n)
    bad = H.run([H.BIN, "report", rec.capture, "--focus", "("])
    # a bad regex is a usage error (README, "Exit status")
    assert bad.returncode == 2 and "--focus '('" in bad.stderr, bad.stderr


def _by_rows(out):
    """[(share %, recorded samples, name)] of a report's --by table, and the
    '(N more ...)' line's samples or None."""
    rows, more = [], None
    for line in out.split("\nby ", 1)[1].splitlines()[2:]:
        m = re.match(r"\s+([\d.]+)%\s+\S+\s+(\d+)\s+(.+?)\s*$", line)
        if m:
            rows.append((float(m.group(1)), int(m.group(2)), m.group(3)))
        elif re.match(r"\s+[\d.]+%\s+\S+\s+\(\d+ more", line):
            more = line
    return rows, more


def test_by_honours_window_filters_limit():
    """report --by splits the samples the other views select: under
    --since/--until its rows add up to the same window's plain report
    total, under --focus/--ignore to the filtered total (none for a focus
    that matches nothing), and --limit/--min-percent cut its rows (before,
    all four printed the whole capture's table)."""
    rec = _shares60()
    n = _total_samples(H.report(rec.capture).stdout)
    for args in (["--until", "700ms"], ["--since", "0.7"], ["--since", "0", "--until", "1ms"],
                 ["--focus", "^steady_fn$"], ["--ignore", "^hot_fn$"],
                 ["--focus", "zzzznomatch"]):
        plain = H.report(rec.capture, *args, check=False)
        want = _total_samples(plain.stdout)
        for by in ("process", "thread", "module"):
            out = H.report(rec.capture, *args, "--by", by, "--limit", "1000",
                           check=False).stdout
            rows, _ = _by_rows(out)
            got = sum(r[1] for r in rows)
            assert got == want, (args, by, got, want, out[-1500:])
        assert want < n, (args, want, n)
    # --limit 1: one row and a line for the rest, which add up to the total
    out = H.report(rec.capture, "--by", "module", "--limit", "1").stdout
    rows, more = _by_rows(out)
    full, _ = _by_rows(H.report(rec.capture, "--by", "module", "--limit", "1000").stdout)
    assert len(full) >= 2, full
    assert len(rows) == 1 and rows[0] == full[0], (rows, full)
    assert more and "(%d more" % (len(full) - 1) in more, out
    # --min-percent: no row under it, the largest kept
    out = H.report(rec.capture, "--by", "module", "--min-percent", "5").stdout
    rows, more = _by_rows(out)
    assert rows and all(r[0] >= 5 for r in rows), rows
    assert len(rows) == len([r for r in full if r[0] >= 5]) < len(full), (rows, full)


def _counts(out, heading):
    """{name: (self, total)} in samples from a report's table after heading."""
    rows = {}
    for line in out.split(heading, 1)[1].splitlines()[2:]:
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(\d+)\s+(.+?)\s*$", line)
        if not m:
            break
        rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return rows


@H.timeout(300)
def test_module_granularity_report_and_convert():
    """--granularity module on dlopen_main (its CPU in libhot.so's
    hot_function): report's "modules by self" table has libhot.so with
    hot_function's self, every module's self adds up to the samples;
    convert --granularity module's folded stacks never repeat a module
    twice in a row, their libhot.so leaves weigh libhot.so's self, and
    their stacks read dlopen_main;libc.so.6;dlopen_main;libhot.so."""
    rec = H.cached_record("dlopen", [H.fixture("dlopen_main")])
    mod_out = H.report(rec.capture, "--granularity", "module", "--limit", "1000").stdout
    fn_out = H.report(rec.capture, "--limit", "1000").stdout
    n = _total_samples(mod_out)
    mods = _counts(mod_out, "modules by self")
    fns = _counts(fn_out, "functions by self")
    H.log("modules: %r" % mods)
    assert "libhot.so" in mods and "hot_function" not in mods, mods
    assert mods["libhot.so"][0] == fns["hot_function"][0] > 0.8 * n, (mods, fns["hot_function"])
    assert sum(s for s, _ in mods.values()) == n, (mods, n)
    assert mods["dlopen_main"][1] >= mods["libhot.so"][1], mods
    folded = H.tmp_path("modules.folded")
    H.run([H.BIN, "convert", rec.capture, "--granularity", "module", "-o", folded], check=True)
    stacks = {}
    for line in open(folded).read().splitlines():
        frames, count = line.rsplit(" ", 1)
        stacks[tuple(frames.split(";"))] = int(count)
    for st in stacks:
        assert all(a != b for a, b in zip(st, st[1:])), st
    assert sum(stacks.values()) == n, (sum(stacks.values()), n)
    assert sum(c for st, c in stacks.items() if st[-1] == "libhot.so") == mods["libhot.so"][0]
    assert stacks.get(("dlopen_main", "libc.so.6", "dlopen_main", "libhot.so"), 0) > 0.8 * n, \
        stacks
    # The frames are keys only in folded and svg; pprof keeps its own frames.
    bad = H.run([H.BIN, "convert", rec.capture, "--granularity", "module", "--to", "pprof",
                 "-o", H.tmp_path("m.pb.gz")])
    assert bad.returncode == 2 and "folded and svg" in bad.stderr, bad.stderr
    bad = H.run([H.BIN, "report", rec.capture, "--granularity", "dso"])
    assert bad.returncode == 2 and "module" in bad.stderr, bad.stderr


def _svg_frames(path):
    """{frame name: samples} from a flame graph SVG's hover titles."""
    import xml.etree.ElementTree as ET
    ns = "{http://www.w3.org/2000/svg}"
    frames = {}
    for t in ET.parse(path).getroot().iter(ns + "title"):
        m = re.match(r"(.+) \(([\d,]+) samples", t.text or "")
        if m:
            frames[m.group(1)] = frames.get(m.group(1), 0) + int(m.group(2).replace(",", ""))
    return frames


@H.timeout(300)
def test_report_svg_honours_granularity():
    """report --svg --granularity module draws modules (libhot.so, which
    holds dlopen_main's CPU, and no function names), the same SVG as convert
    --granularity module -o .svg; without --granularity both draw frames
    (hot_function)."""
    rec = H.cached_record("dlopen", [H.fixture("dlopen_main")])
    mod_r, mod_c = H.tmp_path("mod.report.svg"), H.tmp_path("mod.convert.svg")
    frame_r = H.tmp_path("frame.report.svg")
    H.report(rec.capture, "--granularity", "module", "--svg", mod_r)
    H.run([H.BIN, "convert", rec.capture, "--granularity", "module", "-o", mod_c], check=True)
    H.report(rec.capture, "--svg", frame_r)
    mods, frames = _svg_frames(mod_r), _svg_frames(frame_r)
    H.log("module svg frames: %r" % sorted(mods)[:20])
    assert "libhot.so" in mods and "hot_function" not in mods and "main" not in mods, mods
    assert "hot_function" in frames and "libhot.so" not in frames, sorted(frames)[:20]
    n = _total_samples(H.report(rec.capture).stdout)
    assert mods["libhot.so"] > 0.8 * n, (mods["libhot.so"], n)
    with open(mod_r) as a, open(mod_c) as b:
        assert a.read() == b.read(), "report --svg and convert -o .svg differ at module granularity"


def test_diff_since_until_narrow_new():
    """report --diff BASE NEW --since/--until: NEW's side is the window's
    samples (what report NEW --since/--until counts), BASE whole; a capture
    against itself whole has no deltas."""
    rec = _shares60()
    n = _total_samples(H.report(rec.capture).stdout)
    win = _total_samples(H.report(rec.capture, "--since", "0.3", "--until", "0.7").stdout)
    whole = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture], check=True).stdout
    out = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--since", "0.3",
                 "--until", "0.7"], check=True).stdout
    H.log(out[:800])

    def side(text, name):
        return int(re.search(r"^  %s\s+(\d+) samples" % name, text, re.M).group(1))
    assert side(whole, "base") == side(whole, "new") == n
    assert all(r[3] == 0 for r in diff_rows(whole)), diff_rows(whole)[:3]
    assert 0 < win < n and side(out, "new") == win and side(out, "base") == n, (win, n, out[:400])
    assert "window     new's samples from 0.300 s to 0.700 s" in out, out[:600]


def test_diff_base_since_until_narrow_base():
    """report --diff BASE NEW --base-since/--base-until: BASE's side is the
    window's samples (what report BASE --since/--until counts), NEW whole;
    both windows at once narrow each side to its own.  convert --diff draws
    another graph with either window (the options are not ignored), report
    --diff --svg the same graph, and --base-since without --diff is refused."""
    rec = _shares60()
    n = _total_samples(H.report(rec.capture).stdout)
    win = _total_samples(H.report(rec.capture, "--since", "0.2", "--until", "0.6").stdout)
    late = _total_samples(H.report(rec.capture, "--since", "0.5").stdout)
    out = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--base-since", "0.2",
                 "--base-until", "0.6"], check=True).stdout
    H.log(out[:800])

    def side(text, name):
        return int(re.search(r"^  %s\s+(\d+) samples" % name, text, re.M).group(1))
    assert 0 < win < n and side(out, "base") == win and side(out, "new") == n, (win, n, out[:400])
    assert "window     base's samples from 0.200 s to 0.600 s of its recording " \
        "(--base-since/--base-until); new whole" in out, out[:600]
    both = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--base-since", "0.2",
                  "--base-until", "0.6", "--since", "0.5"], check=True).stdout
    assert side(both, "base") == win and side(both, "new") == late != win, (win, late, both[:400])
    bad = H.run([H.BIN, "report", rec.capture, "--base-since", "0.2"])
    assert bad.returncode == 2 and "--diff" in bad.stderr, bad.stderr
    bad = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--base-since", "0.6",
                 "--base-until", "0.2"])
    assert bad.returncode == 2 and "--base-until must be after" in bad.stderr, bad.stderr
    svgs = {}
    for name, args in (("whole", []), ("base", ["--base-since", "0.2", "--base-until", "0.6"]),
                       ("new", ["--since", "0.2", "--until", "0.6"])):
        svgs[name] = H.tmp_path("diff-%s.svg" % name)
        H.run([H.BIN, "convert", "--diff", rec.capture, rec.capture, "-o", svgs[name]] + args,
              check=True)
    text = {k: open(v).read() for k, v in svgs.items()}
    assert text["whole"] != text["base"] and text["whole"] != text["new"] != text["base"]
    # report --diff --svg writes the same differential graph (it was ignored).
    rsvg = H.tmp_path("diff-base.report.svg")
    H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--base-since", "0.2",
           "--base-until", "0.6", "--svg", rsvg], check=True)
    assert open(rsvg).read() == text["base"], "report --diff --svg and convert --diff differ"
    new_frames = _svg_frames(svgs["new"])
    assert new_frames.get("all") == win, (new_frames.get("all"), win)
    bad = H.run([H.BIN, "convert", rec.capture, "--base-since", "0.2", "-o", H.tmp_path("x.svg")])
    assert bad.returncode == 2 and "--diff" in bad.stderr, bad.stderr


def test_diff_base_window_outside_the_base_warns():
    """A --base-since past BASE's end (or a --since past NEW's) selects none
    of that side's samples: report --diff and convert --diff say so on
    stderr, as report --since past the end does, and exit 0 like it (the
    table showed +50 points for everything, silently)."""
    rec = _shares60()
    plain = H.run([H.BIN, "report", rec.capture, "--since", "99s"], check=True)
    assert "none of the capture's" in plain.stderr, plain.stderr
    out = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--base-since", "99s"],
                check=True)
    assert re.search(r"^microscope report: none of BASE %s's \d+ samples is selected: check "
                     r"--event, --base-since/--base-until" % re.escape(rec.capture),
                     out.stderr, re.M), out.stderr
    assert "NEW" not in out.stderr, out.stderr
    out = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--since", "99s"],
                check=True)
    assert "none of NEW %s's" % rec.capture in out.stderr and "BASE" not in out.stderr, \
        out.stderr
    whole = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture], check=True)
    assert "none of" not in whole.stderr, whole.stderr
    out = H.run([H.BIN, "convert", "--diff", rec.capture, rec.capture, "--base-since", "99s",
                 "-o", H.tmp_path("diff-past.svg")], check=True)
    assert "microscope convert: none of BASE" in out.stderr, out.stderr


def test_diff_honours_min_percent():
    """report --diff --min-percent P hides the rows under P% of the sorted
    share in both sides (it was ignored): shares 60 vs itself keeps hot_fn
    (60 %) and steady_fn (20 %) at 15 and drops every function under 15 %
    in both; the header counts the hidden rows; --sort total uses totals."""
    rec = _shares60()
    every = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--limit", "1000"],
                  check=True).stdout
    cut = H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--limit", "1000",
                 "--min-percent", "15"], check=True).stdout
    H.log(cut[:1200])
    rows, kept = diff_rows(every), diff_rows(cut)
    want = [r for r in rows if r[1] >= 15 or r[2] >= 15]
    assert len(rows) > len(kept) >= 2, (len(rows), kept)
    assert [r[0] for r in kept] == [r[0] for r in want], (kept, want)
    assert {"hot_fn", "steady_fn"} <= {r[0] for r in kept}, kept
    assert "(top %d of %d; %d under 15%% in both hidden)" % (
        len(kept), len(kept), len(rows) - len(kept)) in cut, cut[:800]
    tot = diff_rows(H.run([H.BIN, "report", "--diff", rec.capture, rec.capture, "--sort",
                           "total", "--min-percent", "15"], check=True).stdout)
    assert "main" in {r[0] for r in tot} and "main" not in {r[0] for r in kept}, tot


def test_report_of_a_zero_sample_capture_shows_its_header():
    """report on a recording that took no sample prints the usual header
    (event, duration, lost and problem counters: why there are none), not
    only 'no events, no samples'."""
    rec = H.zero_sample_record()
    out = H.report(rec.capture).stdout
    H.log(out)
    assert "no events, no samples" not in out, out
    lines = out.splitlines()
    head = dict(l.split(None, 1) for l in lines[1:lines.index("")] if l.startswith("  "))
    assert head.get("samples", "").startswith("0 "), out
    assert head.get("event", "").startswith("cpu-clock"), out
    assert head.get("lost") == "0" and head.get("problems") == "0", out
    assert head.get("duration", "").endswith("(recording)"), out
    # --diff against it compares with an empty profile (before: 'no events to compare')
    other = _shares60().capture
    proc = H.report(rec.capture, "--diff", other, check=False)
    assert proc.returncode == 0, proc.stderr
    sides = dict(re.findall(r"^  (base|new)\s+(\d+) samples", proc.stdout, re.M))
    assert sorted(int(v) == 0 for v in sides.values()) == [False, True], proc.stdout[:800]


def test_wall_without_off_cpu_says_not_recorded():
    """report --wall of a capture recorded without --off-cpu: a thread's
    off-CPU time is unknown, so its row says 'not recorded' (before: 'off-CPU
    ms 0.0' for a thread that was mostly off-CPU), with its samples and
    on-CPU ms still there."""
    rec = _shares60()
    out = H.report(rec.capture, "--wall").stdout
    rows = [l.split() for l in out.split("incomplete ms (n)", 1)[1].splitlines()
            if re.match(r"\s+\S+-\d+\s+\d+\s", l)]
    assert rows, out
    n = _total_samples(H.report(rec.capture).stdout)
    assert sum(int(r[1]) for r in rows) == n, (rows, n)
    for r in rows:
        assert r[3:5] == ["not", "recorded"] and r[5:] == ["-"] * 6, out
    assert "off-CPU time was not recorded" in out and "add up to off-CPU ms" not in out, out


def test_impossible_calendar_times_are_usage_errors():
    """--since/--until take real UTC times: 2026-02-30, hour 24, minute 60
    and 2026-02-29 (no leap year) are usage errors naming the value (before:
    timegm normalized 2026-02-30 to March 2 and took it), in report,
    convert and symbolize alike; 2024-02-29 is a day."""
    demo = os.path.join(H.REPO, "tests", "fuzz", "capture_reader", "demo.msc")
    d = H.tmp_path("calendar-dir")
    os.makedirs(d, exist_ok=True)
    for when in ("2026-02-30T00:00Z", "2026-02-29T12:00", "2026-12-02T24:00Z",
                 "2026-12-02 23:60", "25:00"):
        for cmd in (["report", demo], ["convert", d, "--to", "folded"], ["symbolize", d]):
            p = H.run([H.BIN] + cmd + ["--since", when])
            assert p.returncode == 2 and ("'%s'" % when) in p.stderr, (cmd, when, p.returncode, p.stderr)
            assert "select segments" not in p.stderr, p.stderr
    # A real day passes the parser: on a file, the usage error is the range's.
    p = H.run([H.BIN, "report", demo, "--since", "2024-02-29T00:00Z"])
    assert p.returncode == 2 and "select segments of a directory" in p.stderr, p.stderr


def test_numbers_times_and_scope_of_the_header():
    """Numbers are decimal in every option (README, 'Numbers'): 1e3 and
    0x10 are usage errors for --since as for -F (before: --since 1e3 and
    --since 0x10 were taken); record --duration 1e99 is a usage error naming
    the limit, not a late 'arming the --duration timer' with status 1; a
    directory's --until before --since is the same usage error as a file's
    (before: status 1, 'no readable segment'); and with --pid the header
    says its kunwind/lost/problems lines are the whole recording's."""
    rec = _shares60()
    for args in (["report", rec.capture, "--since", "1e3"],
                 ["report", rec.capture, "--since", "0x10"],
                 ["report", rec.capture, "--until", "1e-1"],
                 ["report", rec.capture, "--min-percent", "1e1"],
                 ["report", rec.capture, "--limit", "+3"],
                 ["convert", rec.capture, "--to", "folded", "--since", "0x10"],
                 ["record", "-F", "1e3", "--", "true"],
                 ["record", "--duration", "0x10", "--", "true"]):
        p = H.run([H.BIN] + args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
    p = H.run([H.BIN, "record", "-o", H.tmp_path("never.msc"), "--duration", "1e99",
               "--", "true"])
    assert p.returncode == 2 and "at most 316224000" in p.stderr, (p.returncode, p.stderr)
    assert not os.path.exists(H.tmp_path("never.msc"))
    # decimal still works
    ok = H.report(rec.capture, "--since", "0.5", "--until", "700ms", "--min-percent", "2.5")
    assert _total_samples(ok.stdout) > 0, ok.stdout[:600]
    d = H.tmp_path("emptydir")
    os.makedirs(d, exist_ok=True)
    for cmd in (["report", d], ["convert", d, "--to", "folded"]):
        p = H.run([H.BIN] + cmd + ["--since", "12:35", "--until", "12:34"])
        assert p.returncode == 2 and "--until must be after --since" in p.stderr, \
            (cmd, p.returncode, p.stderr)
    pid = re.search(r"\[(\d+)\]", H.report(rec.capture, "--by", "process").stdout).group(1)
    scoped = H.report(rec.capture, "--pid", pid).stdout
    whole = H.report(rec.capture).stdout
    assert re.search(r"^  counters .*whole recording's, not only the samples selected",
                     scoped, re.M), scoped[:1500]
    assert "  counters " not in whole, whole[:1500]
