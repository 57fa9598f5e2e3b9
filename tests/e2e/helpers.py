"""Helpers for microscope's end-to-end tests (tests/e2e/test_*.py).

tests/run.py runs each test function in a child process whose working
directory is a fresh temporary directory, and sets:
    MS_REPO         repository root
    MS_BUILD        build directory (BUILD_DIR given to run.py)
    MS_BIN          BUILD/microscope
    MS_FIXTURES     BUILD/fixtures
    MS_TEST_TMP     this test's temporary directory (also its cwd)
    MS_SESSION_TMP  a directory shared by all tests of one run (cached recordings)
Without them (a module imported by hand) the defaults are the repository's
build/ and the current directory.

Conventions:
  * A folded profile is a dict {tuple_of_frames: count}, root first, leaf
    last, parsed from `microscope convert CAPTURE --to folded`.
  * A "share" is a percentage (0-100) of all samples in a profile.
  * Every assertion message carries the numbers it compared.
  * Nothing is retried: a failed command or a missed bound fails the test.
    The only waits are for things the kernel or a process does
    asynchronously (a fixture saying it is ready, BPF objects being freed),
    each bounded and reported.
"""
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

REPO = os.environ.get("MS_REPO") or os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("MS_BUILD") or os.path.join(REPO, "build")
BIN = os.environ.get("MS_BIN") or os.path.join(BUILD, "microscope")
FIXTURES = os.environ.get("MS_FIXTURES") or os.path.join(BUILD, "fixtures")
TMP = os.environ.get("MS_TEST_TMP") or os.getcwd()
SESSION_TMP = os.environ.get("MS_SESSION_TMP") or TMP

DEFAULT_HZ = 999
# Debian's interpreter, built without frame pointers (never a pyenv shim).
DEBIAN_PYTHON = "/usr/bin/python3.11"


class Skip(Exception):
    """Raised by skip(); the runner reports the test as SKIP with the reason."""


def skip(reason):
    raise Skip(reason)


def timeout(seconds):
    """Decorator: this test's timeout in seconds (the runner's default otherwise)."""
    def wrap(fn):
        fn.timeout = float(seconds)
        return fn
    return wrap


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------- environment

def require_root():
    """Recording needs root (or CAP_BPF + CAP_PERFMON); skip otherwise."""
    if os.geteuid() != 0:
        skip("needs root for BPF and perf events (CI runs as root)")


def require_tool(name):
    """Path of a tool `make deps` installs; a missing one is a failure."""
    path = shutil.which(name)
    assert path, "%s not found in PATH: run `make deps`" % name
    return path


def fixture(name):
    """Path of a built fixture (tests/fixtures/NAME.c -> BUILD/fixtures/NAME)."""
    path = os.path.join(FIXTURES, name)
    assert os.path.exists(path), "fixture %s is missing: run `make all`" % path
    return path


def tmp_path(name):
    return os.path.join(TMP, name)


def assert_has_frame_pointer(binary, func):
    """A precondition on a fixture: @func in @binary sets up %rbp
    (push %rbp; mov %rsp,%rbp within its first instructions).  GCC drops it
    from leaf functions with an empty frame even with -fno-omit-frame-pointer,
    and then no frame-pointer unwinder can find the caller."""
    objdump = require_tool("objdump")
    out = run([objdump, "-d", "--no-show-raw-insn", "--disassemble=" + func, binary],
              check=True, quiet=True).stdout
    insns = re.findall(r"^\s*[0-9a-f]+:\s+(.*?)\s*$", out, re.M)
    assert insns, "objdump found no function %s in %s" % (func, binary)
    head = [i for i in insns[:6] if not i.startswith("endbr64")]
    assert head[0].startswith("push   %rbp") and \
        any(i.startswith("mov    %rsp,%rbp") for i in head[1:5]), \
        "fixture bug: %s in %s has no frame-pointer prologue: %s" % (func, binary, insns[:4])


# ---------------------------------------------------------------- processes

def _fmt_cmd(cmd):
    return " ".join(cmd) if isinstance(cmd, (list, tuple)) else str(cmd)


def run(cmd, timeout=120, env=None, check=False, cwd=None, quiet=False):
    """Run @cmd (list) to completion, capturing text stdout/stderr.  Logs the
    command (and its status) so a failing test's output shows what ran.
    check=True: a non-zero status fails the test with its stderr."""
    if not quiet:
        log("$ " + _fmt_cmd(cmd))
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        raise AssertionError("%s: still running after %.0f s\nstderr:\n%s" % (
            _fmt_cmd(cmd), timeout, _tail(e.stderr)))
    secs = time.monotonic() - start
    if not quiet:
        log("  -> status %d in %.2f s" % (proc.returncode, secs))
    if check and proc.returncode != 0:
        raise AssertionError("%s: exit status %d\nstdout:\n%s\nstderr:\n%s" % (
            _fmt_cmd(cmd), proc.returncode, _tail(proc.stdout), _tail(proc.stderr)))
    return proc


def _tail(text, lines=60):
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    parts = text.rstrip("\n").splitlines()
    return "\n".join(parts[-lines:])


def wait_for_line(path, pattern, timeout=15.0, proc=None):
    """Wait until file @path has a line matching regex @pattern; return the
    match.  Fails after @timeout seconds, or early if @proc (a Popen) exits."""
    rx = re.compile(pattern)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(path, errors="replace") as f:
                for line in f:
                    m = rx.search(line)
                    if m:
                        return m
        except FileNotFoundError:
            pass
        if proc is not None and proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError("process %s exited (status %s) before %r appeared in %s\n"
                                 "stdout:\n%s\nstderr:\n%s" % (
                                     _fmt_cmd(proc.args), proc.returncode, pattern, path,
                                     _tail(out), _tail(err)))
        if time.monotonic() > deadline:
            raise AssertionError("no line matching %r in %s after %.0f s" % (
                pattern, path, timeout))
        time.sleep(0.05)


def pid_alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (OSError, IndexError):
        return False


def thread_cpu_ns(pid):
    """CPU time of thread/process @pid's main thread in ns, from
    /proc/PID/schedstat (the scheduler's sum_exec_runtime)."""
    with open("/proc/%d/schedstat" % pid) as f:
        return int(f.read().split()[0])


def kill_pid(pid, sig=signal.SIGKILL):
    """Send @sig to @pid if it still exists (cleanup of a fixture we started)."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def start_fixture(argv, out_name="fixture.out", env=None):
    """Start a fixture directly (not under the recorder); returns
    (Popen, path of its report file)."""
    out = tmp_path(out_name)
    child_env = dict(env or os.environ, MS_FIXTURE_OUT=out)
    log("$ " + _fmt_cmd(argv) + " &")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=child_env, text=True)
    return proc, out


def parse_kv(line):
    """'cpu_ns leaf_a=1 leaf_b=2 src=x' -> {'leaf_a': 1, 'leaf_b': 2, 'src': 'x'}."""
    out = {}
    for key, value in re.findall(r"(\w+)=(\S+)", line):
        out[key] = int(value) if re.fullmatch(r"-?\d+", value) else value
    return out


# ---------------------------------------------------------------- recording

class Recording:
    """What one `microscope record` run left: the capture, the recorder's
    status and output, and the lines the fixture(s) reported."""

    def __init__(self, argv, capture, returncode, stdout, stderr, fixture_out, seconds):
        self.argv = argv
        self.capture = capture
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.fixture_out = fixture_out
        self.seconds = seconds

    @property
    def fixture_lines(self):
        try:
            with open(self.fixture_out, errors="replace") as f:
                return [line.rstrip("\n") for line in f]
        except FileNotFoundError:
            return []

    def fixture_line(self, prefix):
        """The fixture's report line starting with @prefix, parsed by parse_kv."""
        for line in self.fixture_lines:
            if line.startswith(prefix):
                return parse_kv(line)
        raise AssertionError("the fixture reported no line starting with %r; it reported %r"
                             "\nrecorder stderr:\n%s" % (prefix, self.fixture_lines,
                                                          _tail(self.stderr)))

    def to_json(self):
        return dict(vars(self))

    @classmethod
    def from_json(cls, d):
        return cls(**d)


def record_argv(cmd=None, output=None, freq=None, pids=None, system_wide=False,
                duration=None, save_raw=None, extra=()):
    argv = [BIN, "record"]
    if freq is not None:
        argv += ["-F", str(freq)]
    if output is not None:
        argv += ["-o", output]
    if save_raw is not None:
        argv += ["--save-raw", save_raw]
    if pids:
        argv += ["-p", ",".join(str(p) for p in pids)]
    if system_wide:
        argv += ["-a"]
    if duration is not None:
        argv += ["--duration", str(duration)]
    argv += list(extra)
    if cmd:
        argv += ["--"] + list(cmd)
    return argv


def record(cmd=None, output=None, freq=None, pids=None, system_wide=False, duration=None,
           save_raw=None, extra=(), env=None, timeout=180, expect_status=0, directory=None):
    """Run `microscope record [options] -o OUTPUT [-- CMD...]` to completion.

    The fixture's report lines go to a file (MS_FIXTURE_OUT), never mixed
    with the recorder's output.  expect_status: the status `record` must
    exit with (None: any); when it is 0 the capture must exist.
    """
    require_root()
    assert os.path.exists(BIN), "%s is missing: run `make all`" % BIN
    directory = directory or TMP
    output = output or os.path.join(directory, "capture.msc")
    fixture_out = output + ".fixture.out"
    if os.path.exists(fixture_out):
        os.unlink(fixture_out)
    child_env = dict(env or os.environ, MS_FIXTURE_OUT=fixture_out)
    argv = record_argv(cmd, output, freq, pids, system_wide, duration, save_raw, extra)
    start = time.monotonic()
    proc = run(argv, timeout=timeout, env=child_env)
    rec = Recording(argv, output, proc.returncode, proc.stdout, proc.stderr, fixture_out,
                    time.monotonic() - start)
    if expect_status is not None:
        assert proc.returncode == expect_status, \
            "%s: exit status %d, expected %d\nstdout:\n%s\nstderr:\n%s" % (
                _fmt_cmd(argv), proc.returncode, expect_status, _tail(proc.stdout),
                _tail(proc.stderr))
    if expect_status == 0:
        assert os.path.isfile(output), "%s exited 0 but wrote no capture %s\nstderr:\n%s" % (
            _fmt_cmd(argv), output, _tail(proc.stderr))
    return rec


def start_record(cmd=None, output=None, env=None, **kw):
    """Start `microscope record` in the background; returns
    (Popen, capture path, fixture report path)."""
    require_root()
    assert os.path.exists(BIN), "%s is missing: run `make all`" % BIN
    output = output or tmp_path("capture.msc")
    fixture_out = output + ".fixture.out"
    child_env = dict(env or os.environ, MS_FIXTURE_OUT=fixture_out)
    argv = record_argv(cmd, output, **kw)
    log("$ " + _fmt_cmd(argv) + " &")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=child_env, text=True, errors="replace")
    return proc, output, fixture_out


def cached_record(key, cmd, **kw):
    """record() once per test run and share the result between tests (the
    capture lives in the session directory).  If the first attempt failed,
    every later caller fails with the same message: nothing is re-recorded."""
    directory = os.path.join(SESSION_TMP, "rec-" + key)
    meta = os.path.join(directory, "meta.json")
    if os.path.exists(meta):
        with open(meta) as f:
            d = json.load(f)
        if "error" in d:
            raise AssertionError("the shared recording %r failed in an earlier test:\n%s" % (
                key, d["error"]))
        log("(reusing recording %r: %s)" % (key, _fmt_cmd(d["argv"])))
        return Recording.from_json(d)
    os.makedirs(directory, exist_ok=True)
    try:
        rec = record(cmd, directory=directory, **kw)
    except AssertionError as e:
        with open(meta, "w") as f:
            json.dump({"error": str(e)}, f)
        raise
    with open(meta, "w") as f:
        json.dump(rec.to_json(), f)
    return rec


def zero_sample_record():
    """A recording that took no sample (shared by the tests of one run):
    `record -p` of a sleeping process for 0.3 s.  The recorder names its
    event at the first sample, so the capture has no event row either."""
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        rec = cached_record("zero-samples", None, pids=[sleeper.pid], duration=0.3)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert "0 samples written" in rec.stderr, rec.stderr[-2000:]
    return rec


# ---------------------------------------------------------------- capture views

def report(capture, *args, check=True):
    """`microscope report CAPTURE ARGS...`; returns the CompletedProcess."""
    return run([BIN, "report", capture] + list(args), check=check)


def _strip_frame(frame):
    # Tolerate kernel/inline annotations ("name_[k]" as perf writes them,
    # "name [k]" as our report does) should they appear in folded output.
    return re.sub(r"(_| )\[[kjiw]\]$", "", frame)


def parse_folded(text, where="folded output", keep_inline=False):
    """Parse folded stacks ("root;...;leaf COUNT" per line) into
    {frames_tuple: count}.  Fails on a malformed line, a non-positive count
    or a stack that appears twice (the format has one line per stack).
    Inlined-call frames ("name_[i]") are dropped unless keep_inline, so
    stacks read as chains of out-of-line functions (as perf shows them);
    stacks that then coincide are summed."""
    out = {}
    seen = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        stack, sep, count = line.rpartition(" ")
        assert sep and stack and re.fullmatch(r"\d+", count), \
            "%s line %d is not 'frame;...;frame COUNT': %r" % (where, n, line)
        assert int(count) > 0, "%s line %d has count 0: %r" % (where, n, line)
        assert stack not in seen, "%s line %d repeats a stack: %r" % (where, n, line)
        seen.add(stack)
        parts = stack.split(";")
        if not keep_inline:
            parts = [f for f in parts if not f.endswith("_[i]")]
        frames = tuple(_strip_frame(f) for f in parts)
        out[frames] = out.get(frames, 0) + int(count)
    return out


def convert_folded_text(capture, threads=False, out=None):
    """Run `microscope convert CAPTURE --to folded -o OUT [--threads]`; returns the text."""
    out = out or (capture + (".threads" if threads else "") + ".folded")
    argv = [BIN, "convert", capture, "--to", "folded", "-o", out]
    if threads:
        argv.append("--threads")
    run(argv, check=True)
    with open(out, errors="replace") as f:
        return f.read()


def folded(capture, threads=False):
    """The capture as {frames_tuple: count} (see parse_folded).  With
    threads=True the first frame of every stack names the thread."""
    text = convert_folded_text(capture, threads)
    prof = parse_folded(text, "folded output of %s" % capture)
    log("folded %s%s: %d samples in %d stacks" % (
        os.path.basename(capture), " --threads" if threads else "", total(prof), len(prof)))
    return prof


def total(prof):
    return sum(prof.values())


def count_containing(prof, name):
    """Samples whose stack has a frame named @name (anywhere: kernel frames
    may sit on top of a user leaf)."""
    return sum(c for st, c in prof.items() if name in st)


def count_where(prof, pred):
    return sum(c for st, c in prof.items() if pred(st))


def percent(part, whole):
    return 100.0 * part / whole if whole else 0.0


def share(prof, name):
    """Percentage of all samples whose stack contains @name."""
    return percent(count_containing(prof, name), total(prof))


def self_shares(prof):
    """{leaf frame name: percentage of all samples} — self time, like perf
    report --no-children --sort sym (whose leaf is also the kernel frame when
    the sample hit the kernel)."""
    by = collections.Counter()
    for st, c in prof.items():
        by[st[-1]] += c
    n = total(prof)
    return {k: percent(v, n) for k, v in by.items()}


def top(shares, n=10):
    """The @n largest entries of {name: share}, largest first, as 'name 12.3%' text."""
    items = sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join("%s %.1f%%" % kv for kv in items)


def show_stacks(prof, pred=lambda st: True, n=5):
    """Up to @n of the heaviest stacks matching @pred, one per line (for messages)."""
    items = sorted(((c, st) for st, c in prof.items() if pred(st)), reverse=True)[:n]
    return "\n".join("  %6d  %s" % (c, ";".join(st)) for c, st in items)


def split_threads(prof, tids):
    """Split a --threads profile by thread: {tid: {frames_without_root: count}}.
    The root frame names the thread; it is matched to one of @tids by the
    integers it contains (so "comm-1234", "1234", "comm/1234 (1234)" all
    work).  Roots naming none of @tids go under key None."""
    tids = set(tids)
    out = collections.defaultdict(dict)
    for st, c in prof.items():
        nums = {int(x) for x in re.findall(r"\d+", st[0])} & tids
        assert len(nums) <= 1, "thread frame %r matches several tids %s" % (st[0], nums)
        key = nums.pop() if nums else None
        rest = st[1:]
        out[key][rest] = out[key].get(rest, 0) + c
    return dict(out)


# ---------------------------------------------------------------- BPF objects

def our_bpf_program_names():
    """Names of our BPF programs: the function after each SEC("...") in
    bpf/*.bpf.c (a program's name is its function name; the kernel keeps the
    first 15 characters)."""
    names = set()
    rx = re.compile(r'SEC\(\s*"[^"]*"\s*\)\s*'            # SEC("perf_event")
                    r'(?:static\s+|__\w+\s+)*'             # static, __always_inline...
                    r'(?:int|long|__u32|__s32|u32|s32|void)\s+'
                    r'(?:BPF_\w+\(\s*)?(\w+)\s*[(,)]')     # name( or BPF_PROG(name,
    for dirpath, _, files in os.walk(os.path.join(REPO, "bpf")):
        for fname in files:
            if fname.endswith(".bpf.c"):
                with open(os.path.join(dirpath, fname), errors="replace") as f:
                    names.update(rx.findall(f.read()))
    return names


def _bpftool_json(*args):
    bpftool = require_tool("bpftool")
    proc = run([bpftool, "-j"] + list(args), check=True, quiet=True)
    return json.loads(proc.stdout or "[]")


def bpftool_progs():
    """`bpftool prog show -j`: a list of dicts (id, name, pids...)."""
    return _bpftool_json("prog", "show")


def bpftool_prog_names():
    return [p.get("name", "") for p in bpftool_progs()]


def _bpftool_ids(kind):
    """IDs `bpftool KIND show` lists now (KIND: prog, link, map)."""
    return {o["id"] for o in _bpftool_json(kind, "show") if "id" in o}


def bpf_objects_held_by(pid):
    """{'prog': ids, 'link': ids, 'map': ids} of the BPF objects process @pid
    holds descriptors for, from /proc/PID/fdinfo/* (the kernel prints
    prog_id / link_id / map_id there for BPF descriptors).  Exact even when
    other processes load programs of the same names at the same time."""
    held = {"prog": set(), "link": set(), "map": set()}
    base = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(base):
        try:
            with open(os.path.join(base, fd)) as f:
                info = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except OSError:
            continue  # closed meanwhile
        info = {k.strip(): v.strip() for k, v in info.items()}
        if "link_id" in info:
            held["link"].add(int(info["link_id"]))
        elif "prog_id" in info and "prog_type" in info:
            held["prog"].add(int(info["prog_id"]))
        elif "map_id" in info:
            held["map"].add(int(info["map_id"]))
    return held


def assert_recorder_holds_our_programs(pid):
    """While `record` (@pid) runs: it holds BPF programs, and they are ours
    (bpftool names them after SEC(...) functions of bpf/*.bpf.c).  This
    makes the "none left" check that follows meaningful.  Returns
    bpf_objects_held_by(pid)."""
    ours = our_bpf_program_names()
    assert ours, "found no SEC(...) programs in bpf/*.bpf.c"
    held = bpf_objects_held_by(pid)
    progs = [p for p in bpftool_progs() if p.get("id") in held["prog"]]
    names = sorted({p.get("name", "") for p in progs})
    log("while recording, record (pid %d) holds %d programs %s, %d links, %d maps" % (
        pid, len(held["prog"]), names, len(held["link"]), len(held["map"])))
    assert held["prog"], "record (pid %d) holds no BPF program descriptors while recording" % pid
    assert any(n == o[:15] for n in names for o in ours), \
        "bpftool names record's programs %s, none of which is a SEC() function of " \
        "bpf/*.bpf.c %s" % (names, sorted(ours))
    return held


def assert_bpf_released(held, wait=3.0):
    """After `record` exited: none of the programs, links and maps it held
    (@held, from bpf_objects_held_by) is still listed by bpftool.  The kernel
    frees them when the last reference drops, some of it deferred (links,
    RCU), so allow @wait seconds; the time it took is logged."""
    start = time.monotonic()
    while True:
        left = {kind: held[kind] & _bpftool_ids(kind) for kind in ("prog", "link", "map")}
        if not any(left.values()):
            log("bpftool lists none of record's BPF programs, links or maps (after %.2f s)" %
                (time.monotonic() - start))
            return
        if time.monotonic() - start > wait:
            progs = [p for p in bpftool_progs() if p.get("id") in left["prog"]]
            raise AssertionError(
                "%.1f s after record ended, bpftool still lists its programs %s, links %s, "
                "maps %s" % (wait, ["%s %s" % (p.get("id"), p.get("name")) for p in progs],
                             sorted(left["link"]), sorted(left["map"])))
        time.sleep(0.1)


# ---------------------------------------------------------------- perf

def _perf():
    """perf with a build-id cache of this test's own (never the shared
    ~/.debug, which other perf runs may be writing at the same time)."""
    return [require_tool("perf"), "--buildid-dir", tmp_path("perf-buildid-cache")]


def perf_record(cmd, data, freq=DEFAULT_HZ, timeout=300):
    """`perf record -e cpu-clock -F FREQ -g -o DATA -- CMD`.  cpu-clock,
    the event microscope samples, also where the machine has a PMU.
    --no-bpf-event: perf 6.1 otherwise stores the BPF programs loaded at the
    time (a concurrent recorder's, say) and its report then dies in
    build-id.c ("stack smashing detected"); the comparison needs none of it."""
    argv = _perf() + ["record", "--no-bpf-event", "-e", "cpu-clock", "-F", str(freq), "-g",
                      "-o", data, "--"] + list(cmd)
    _BPF_AT_PERF_RECORD[data] = bpftool_progs()
    return _run_perf(argv, timeout, _BPF_AT_PERF_RECORD[data])


# perf.data path -> BPF programs loaded when it was recorded (see _run_perf).
_BPF_AT_PERF_RECORD = {}


def _run_perf(argv, timeout=300, loaded_at_record=()):
    """Run perf; fail on a non-zero status, except for one known perf 6.1
    crash: with BPF programs loaded (JIT'd, so in kallsyms and in the
    KSYMBOL records perf synthesizes) perf aborts in util/build-id.c with
    "stack smashing detected".  On a machine where other processes (another
    developer's recorder) hold BPF programs, that is a skip naming them, not
    a failure; CI runs the tests one at a time with none loaded."""
    before = bpftool_progs()
    proc = run(argv, timeout=timeout)
    if proc.returncode == 0:
        return proc
    if "build-id.c" in proc.stderr or "stack smashing" in proc.stderr:
        loaded = list(loaded_at_record) or before or bpftool_progs()
        if loaded:
            skip("perf crashed in util/build-id.c (a perf 6.1 bug triggered by loaded BPF "
                 "programs); %d BPF programs were loaded by other processes: %s" % (
                     len(loaded), ", ".join(sorted({p.get("name", "?") for p in loaded}))))
    raise AssertionError("%s: exit status %d\nstderr:\n%s" % (
        _fmt_cmd(argv), proc.returncode, _tail(proc.stderr)))


def perf_report_rows(data, sort):
    """`perf report --stdio --no-children --sort SORT -g none -t ';'` rows as
    (percent, [field, ...]) for the sort keys, in perf's order."""
    proc = _run_perf(_perf() + ["report", "-i", data, "--stdio", "--no-children", "--sort", sort,
                                "-g", "none", "-t", ";"],
                     loaded_at_record=_BPF_AT_PERF_RECORD.get(data, ()))
    rows = []
    for line in proc.stdout.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(";")]
        m = re.fullmatch(r"([\d.]+)%", fields[0])
        assert m, "cannot parse perf report line %r" % line
        rows.append((float(m.group(1)), fields[1:]))
    assert rows, "perf report printed no rows:\n%s" % _tail(proc.stdout)
    return rows


def _perf_sym(field):
    # "[.] name" (user) or "[k] name" (kernel) -> name
    return re.sub(r"^\[.\]\s+", "", field)


def perf_self_by_sym(data):
    """{symbol: self percentage} from perf (same name in two DSOs summed)."""
    out = collections.Counter()
    for pct, fields in perf_report_rows(data, "sym"):
        out[_perf_sym(fields[0])] += pct
    return dict(out)


def perf_self_by_dso(data):
    out = collections.Counter()
    for pct, fields in perf_report_rows(data, "dso"):
        out[fields[0]] += pct
    return dict(out)


def perf_sym_dsos(data):
    """{symbol: dso} for every symbol perf saw (from --sort dso,sym)."""
    out = {}
    for _, fields in perf_report_rows(data, "dso,sym"):
        out.setdefault(_perf_sym(fields[1]), fields[0])
    return out


def kallsyms_names():
    names = set()
    with open("/proc/kallsyms") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3:
                names.add(parts[2])
    return names
