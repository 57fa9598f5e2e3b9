#!/usr/bin/env python3
"""microscope's test runner (what `make test`, `make unit` and `make e2e` call).

    python3 tests/run.py [--unit] [--e2e] [-k SUBSTR] [--timeout SEC] BUILD_DIR

--unit  runs every BUILD_DIR/tests/unit/test_* executable (cmocka; one test
        per binary; it passes when it exits 0), from the repository root.
--e2e   runs every function named test_* in tests/e2e/test_*.py, in file and
        definition order.  Each runs in a child process of its own, in a fresh
        temporary directory (its working directory), with a timeout
        (--timeout, or a function's `timeout` attribute set by
        helpers.timeout()).  When it ends, every process still running in that
        directory is killed.  A test passes when it returns, is skipped when
        it raises helpers.Skip (helpers.skip(reason)), and fails otherwise.
Neither flag: both.

Prints one line per test, "PASS|FAIL|SKIP name (seconds)", the captured
output of each failure (and the temporary directory, kept for inspection),
and ends with exactly one line "N passed, N failed, N skipped".  Exits 1 if
any test failed, 2 on a usage error, 0 otherwise.

Standard library only: CI runs it with Debian's /usr/bin/python3.
"""
import argparse
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
E2E_DIR = os.path.join(REPO, "tests", "e2e")
DEFAULT_TIMEOUT = 180.0
UNIT_TIMEOUT = 300.0
# Output of a failed test shown in full up to this many lines (then the tail).
MAX_FAILURE_LINES = 300


class Result:
    def __init__(self, name, status, seconds, details="", keep_dir=None, output=""):
        self.name = name
        self.status = status  # "PASS" | "FAIL" | "SKIP"
        self.seconds = seconds
        self.details = details  # why it failed or was skipped (+ output if it failed)
        self.keep_dir = keep_dir
        self.output = output  # everything it printed


def _tail(text, max_lines=MAX_FAILURE_LINES):
    lines = text.rstrip("\n").splitlines()
    if len(lines) > max_lines:
        cut = len(lines) - max_lines
        lines = ["[... %d earlier lines cut ...]" % cut] + lines[cut:]
    return "\n".join(lines)


def _kill_group(proc):
    """SIGKILL @proc's process group (it was started in a session of its own)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _processes_in(directory):
    """PIDs of processes whose working directory is @directory or below it:
    what a test started and left behind (children inherit the cwd)."""
    directory = os.path.realpath(directory)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % entry)
        except OSError:
            continue
        if cwd == directory or cwd.startswith(directory + "/"):
            found.append(int(entry))
    return found


def _reap_leftovers(directory):
    """Kill (by PID) the processes a test left running in @directory; return
    a description of them for the report."""
    leftovers = []
    for pid in _processes_in(directory):
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            cmd = "?"
        leftovers.append("%d %s" % (pid, cmd))
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return leftovers


def _run_child(cmd, cwd, env, timeout, log_path):
    """Run @cmd in a new session with stdout+stderr to @log_path; returns
    (returncode or None on timeout, seconds)."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc = None
            _kill_group(proc)
            proc.wait()
        except KeyboardInterrupt:
            _kill_group(proc)
            proc.wait()
            raise
        else:
            _kill_group(proc)  # anything the test left in its group
    return rc, time.monotonic() - start


def _read(path):
    try:
        with open(path, "r", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _base_env(build_dir, session_tmp):
    env = dict(os.environ)
    env.update({
        "MS_REPO": REPO,
        "MS_BUILD": build_dir,
        "MS_BIN": os.path.join(build_dir, "microscope"),
        "MS_FIXTURES": os.path.join(build_dir, "fixtures"),
        "MS_SESSION_TMP": session_tmp,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
    })
    return env


def _discover_unit(build_dir):
    unit_dir = os.path.join(build_dir, "tests", "unit")
    if not os.path.isdir(unit_dir):
        return []
    out = []
    for name in sorted(os.listdir(unit_dir)):
        path = os.path.join(unit_dir, name)
        if (name.startswith("test_") and "." not in name and os.path.isfile(path)
                and os.access(path, os.X_OK)):
            out.append(path)
    return out


def run_unit(path, env, work_root):
    name = "unit/" + os.path.basename(path)
    tmp = tempfile.mkdtemp(prefix=os.path.basename(path) + "-", dir=work_root)
    log = os.path.join(tmp, "output.log")
    child_env = dict(env, MS_TEST_TMP=tmp)
    # Unit tests read their golden files relative to the repository root.
    rc, secs = _run_child([path], REPO, child_env, UNIT_TIMEOUT, log)
    out = _read(log)
    if rc == 0:
        shutil.rmtree(tmp, ignore_errors=True)
        return Result(name, "PASS", secs, output=out)
    if rc is None:
        why = "timed out after %.0f s" % UNIT_TIMEOUT
    elif rc < 0:
        why = "killed by signal %d (%s)" % (-rc, signal.Signals(-rc).name)
    else:
        why = "exit status %d" % rc
    return Result(name, "FAIL", secs, "%s\n%s" % (why, _tail(out)), keep_dir=tmp)


def _load_module(path):
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _discover_e2e(e2e_dir):
    """[(module_path, function_name, timeout)] in file and definition order."""
    if E2E_DIR not in sys.path:
        sys.path.insert(0, e2e_dir)
    tests = []
    for fname in sorted(os.listdir(e2e_dir)):
        if not (fname.startswith("test_") and fname.endswith(".py")):
            continue
        path = os.path.join(e2e_dir, fname)
        module = _load_module(path)
        funcs = [(getattr(fn, "__code__").co_firstlineno, name, fn)
                 for name, fn in vars(module).items()
                 if name.startswith("test_") and callable(fn) and hasattr(fn, "__code__")
                 and getattr(fn, "__module__", None) == module.__name__]
        for _, name, fn in sorted(funcs):
            tests.append((path, name, getattr(fn, "timeout", None)))
    return tests


def run_e2e(path, func, timeout, env, work_root):
    module = os.path.splitext(os.path.basename(path))[0]
    name = "%s.%s" % (module, func)
    tmp = tempfile.mkdtemp(prefix=func + "-", dir=work_root)
    log = os.path.join(tmp, "output.log")
    result_file = os.path.join(tmp, "result.json")
    child_env = dict(env, MS_TEST_TMP=tmp, MS_RESULT_FILE=result_file)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", path, func]
    rc, secs = _run_child(cmd, tmp, child_env, timeout, log)
    leftovers = _reap_leftovers(tmp)
    out = _read(log)
    try:
        with open(result_file) as f:
            result = json.load(f)
    except (OSError, ValueError):
        result = None
    if rc is None:
        status, why = "FAIL", "timed out after %.0f s" % timeout
    elif result is None:
        status, why = "FAIL", "test process ended without a result (exit status %s)" % rc
    else:
        status, why = result["status"], result.get("message", "")
    if leftovers:
        out += "\n[runner] killed processes the test left running:\n  " + "\n  ".join(leftovers)
    if status == "PASS":
        shutil.rmtree(tmp, ignore_errors=True)
        return Result(name, "PASS", secs, output=out)
    if status == "SKIP":
        shutil.rmtree(tmp, ignore_errors=True)
        return Result(name, "SKIP", secs, why, output=out)
    return Result(name, "FAIL", secs, "%s\n%s" % (why, _tail(out)), keep_dir=tmp)


def child_main(path, func):
    """Runs one e2e test function in this process (the runner's child)."""
    sys.path.insert(0, os.path.dirname(path))
    result_file = os.environ["MS_RESULT_FILE"]
    result = {"status": "FAIL", "message": ""}
    try:
        import helpers  # noqa: E402  (tests/e2e/helpers.py)
        module = _load_module(path)
        getattr(module, func)()
        result = {"status": "PASS"}
    except helpers.Skip as e:
        result = {"status": "SKIP", "message": str(e)}
    except AssertionError as e:
        traceback.print_exc()
        result = {"status": "FAIL", "message": "assertion failed: %s" % (e or "(no message)")}
    except BaseException as e:  # noqa: B902 — report everything, including SystemExit
        traceback.print_exc()
        result = {"status": "FAIL", "message": "%s: %s" % (type(e).__name__, e)}
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        with open(result_file, "w") as f:
            json.dump(result, f)
    return 0


def main(argv):
    if len(argv) >= 1 and argv[0] == "--child":
        return child_main(argv[1], argv[2])

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--unit", action="store_true", help="run the cmocka unit test binaries")
    ap.add_argument("--e2e", action="store_true", help="run tests/e2e/test_*.py")
    ap.add_argument("-k", dest="substr", default=None,
                    help="only tests whose name contains SUBSTR")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="also print the output of tests that pass or skip")
    ap.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                    help="default per-test timeout for e2e tests, seconds")
    ap.add_argument("build_dir", metavar="BUILD_DIR")
    args = ap.parse_args(argv)
    if not args.unit and not args.e2e:
        args.unit = args.e2e = True
    build_dir = os.path.abspath(args.build_dir)

    work_root = tempfile.mkdtemp(prefix="microscope-tests-")
    session_tmp = os.path.join(work_root, "session")
    os.mkdir(session_tmp)
    env = _base_env(build_dir, session_tmp)

    results = []
    started = time.monotonic()

    def report(r):
        results.append(r)
        print("%s %s (%.2fs)" % (r.status, r.name, r.seconds), flush=True)
        if r.status == "SKIP" and r.details:
            print("    skipped: %s" % r.details, flush=True)
        if args.verbose and r.status != "FAIL" and r.output.strip():
            for line in _tail(r.output).splitlines():
                print("    " + line)
        if r.status == "FAIL":
            for line in r.details.splitlines():
                print("    " + line)
            if r.keep_dir:
                print("    (files kept in %s)" % r.keep_dir)
            sys.stdout.flush()

    def selected(name):
        return args.substr is None or args.substr in name

    try:
        if args.unit:
            for path in _discover_unit(build_dir):
                if selected("unit/" + os.path.basename(path)):
                    report(run_unit(path, env, work_root))
        if args.e2e:
            try:
                tests = _discover_e2e(E2E_DIR)
            except Exception:  # a broken test module is a failure, not a crash
                report(Result("e2e/collect", "FAIL", 0.0, traceback.format_exc()))
                tests = []
            for path, func, timeout in tests:
                module = os.path.splitext(os.path.basename(path))[0]
                if selected("%s.%s" % (module, func)):
                    report(run_e2e(path, func, timeout or args.timeout, env, work_root))
    except KeyboardInterrupt:
        print("interrupted", flush=True)

    # Keep everything (recordings shared through the session directory too)
    # when a test failed, so its files can be inspected.
    if not any(r.keep_dir for r in results):
        shutil.rmtree(work_root, ignore_errors=True)
    counts = {s: sum(1 for r in results if r.status == s) for s in ("PASS", "FAIL", "SKIP")}
    print("(%.1f s in all)" % (time.monotonic() - started))
    print("%d passed, %d failed, %d skipped" % (counts["PASS"], counts["FAIL"], counts["SKIP"]),
          flush=True)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
