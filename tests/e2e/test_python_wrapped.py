"""CPython started through a wrapper gets its walk as early as a direct
command (record_py_command.c): `sh -c 'python3.11 x.py'`, a shell script
that execs the interpreter, a `#!/usr/bin/env python3.11` script, and an
interpreter that needs libpython3.N (pyenv's builds), direct or wrapped.

Before, only an executable holding _PyRuntime itself (Debian's
/usr/bin/python3.11) run directly had the sampler's CPython walk loaded
before the command ran; otherwise the tracker loaded it when it met the
process, a load of about 0.25 s (little of it CPU), and every sample until then
was "[python frames unknown]": 1.4-4.9 % of a 1 s run (median 3.6 %, 12 runs,
2-vCPU VM), 0-0.7 % after.  A command that runs no Python keeps the lazy
load (no python.walk_preloaded counter).
"""
import os

import helpers as H
import test_python as P

UNKNOWN = "[python frames unknown]"
UNKNOWN_SHARE_MAX = 1.5  # % of samples marked unknown (before: 1.4-4.9, median 3.6)
PYENV_311 = "/root/.pyenv/versions/3.11.7/bin/python3.11"


def _script(name, text):
    path = H.tmp_path(name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


def _check(cmd, env=None):
    rec = H.record(cmd, env=env)
    counters = P.counters(rec.capture)
    logical = P.samples(rec.capture, "logical")
    unknown = sum(1 for _, _, st in logical if UNKNOWN in st)
    walked = sum(1 for _, _, st in logical if P.py_frames(st))
    H.log("%s: walk preloaded %s, %d of %d samples %s (%.2f%%), %d with Python frames" % (
        " ".join(cmd), counters.get("python.walk_preloaded"), unknown, len(logical), UNKNOWN,
        H.percent(unknown, len(logical)), walked))
    assert counters.get("python.walk_preloaded") == 1, \
        "the CPython walk was not loaded before %r ran: %s" % (cmd, sorted(
            k for k in counters if k.startswith("python.")))
    assert walked >= len(logical) // 2, "only %d of %d samples have Python frames" % (
        walked, len(logical))
    assert H.percent(unknown, len(logical)) <= UNKNOWN_SHARE_MAX, \
        "%d of %d samples %s (> %.1f%%)" % (unknown, len(logical), UNKNOWN, UNKNOWN_SHARE_MAX)


def _calls():
    return os.path.join(P.PY_FIXTURES, "calls.py")


@H.timeout(120)
def test_python_wrapped_sh_c():
    python = P._interpreter(H.DEBIAN_PYTHON)
    _check(["sh", "-c", "%s %s 1.0" % (python, _calls())])


@H.timeout(120)
def test_python_wrapped_shell_script_exec():
    python = P._interpreter(H.DEBIAN_PYTHON)
    run = _script("run_calls.sh", "#!/bin/sh\nset -e\nPYTHONDONTWRITEBYTECODE=1 exec %s %s \"$@\"\n"
                  % (python, _calls()))
    _check([run, "1.0"])


@H.timeout(120)
def test_python_wrapped_env_shebang_libpython():
    """#!/usr/bin/env python3.11 finding pyenv's build (it needs
    libpython3.11.so: no _PyRuntime in the executable) first in PATH."""
    python = P._interpreter(PYENV_311)
    with open(_calls()) as f:
        body = f.read()
    script = _script("calls_env.py", "#!/usr/bin/env python3.11\n" + body)
    env = dict(os.environ, PATH=os.path.dirname(python) + ":" + os.environ["PATH"])
    _check([script, "1.0"], env=env)


@H.timeout(120)
def test_python_libpython_direct():
    _check([P._interpreter(PYENV_311), _calls(), "1.0"])


@H.timeout(120)
def test_python_wrapped_not_python_stays_lazy():
    """A shell running no Python: the walk is not loaded for it."""
    rec = H.record(["sh", "-c", "%s 0.3" % H.fixture("spinner")])
    counters = P.counters(rec.capture)
    assert "python.walk_preloaded" not in counters, counters
