"""Presets (issue 3, item 5): one name chooses rate, call graph and stack
copy size; explicit flags override; the result is stored in the capture."""
import re

import helpers as H


def _stacks_line(capture):
    out = H.report(capture).stdout
    m = re.search(r"^  stacks +(.*)$", out, re.M)
    assert m, "report has no stacks line:\n%s" % out
    return m.group(1)


def _sample_period(capture):
    out = H.report(capture).stdout
    m = re.search(r"period (\d+)\)", out)
    assert m, "report has no event period:\n%s" % out
    return int(m.group(1))


@H.timeout(120)
def test_preset_light_is_99hz_frame_pointers():
    rec = H.record([H.fixture("ratio")], extra=["--preset", "light"],
                   env=dict(H.os.environ, MS_FIXTURE_SCALE="0.3"))
    line = _stacks_line(rec.capture)
    assert line.startswith("fp") and "copies" not in line and "preset light" in line, line
    # cpu-clock period in ns: 1e9 / 99
    assert _sample_period(rec.capture) == 1000000000 // 99, _sample_period(rec.capture)


@H.timeout(120)
def test_preset_detailed_with_explicit_overrides():
    rec = H.record([H.fixture("ratio")],
                   extra=["--preset", "detailed", "-F", "499", "--stack-size", "8192"],
                   env=dict(H.os.environ, MS_FIXTURE_SCALE="0.3"))
    line = _stacks_line(rec.capture)
    assert line.startswith("dwarf") and "8192-byte" in line and "preset detailed" in line, line
    assert _sample_period(rec.capture) == 1000000000 // 499, _sample_period(rec.capture)


def test_unknown_preset_is_a_usage_error():
    proc = H.run([H.BIN, "record", "--preset", "bogus", "--", "true"])
    assert proc.returncode == 2, proc.returncode
    assert "bogus" in proc.stderr and "light" in proc.stderr, proc.stderr


@H.timeout(120)
def test_systemd_unit_is_valid_and_keeps_what_the_recorder_reads():
    """contrib/microscope.service: systemd accepts every line (systemd-analyze
    verify prints nothing), the command line it runs parses, and it keeps
    away from the options that hide what the recorder reads:
    ProtectKernelTunables= makes /proc/kallsyms unreadable and
    ProtectKernelLogs= drops CAP_SYSLOG (both seen under systemd 252 in
    systemd-nspawn: kernel frames had no names)."""
    import os
    import shutil
    unit = os.path.join(H.REPO, "contrib", "microscope.service")
    with open(unit) as f:
        text = f.read()
    for bad in ("ProtectKernelTunables=yes", "ProtectKernelLogs=yes", "ProtectProc=invisible"):
        assert not re.search(r"^" + re.escape(bad), text, re.M), bad
    caps = re.search(r"^AmbientCapabilities=(.*)$", text, re.M).group(1).split()
    for cap in ("CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE", "CAP_SYSLOG"):
        assert cap in caps, caps
    m = re.search(r"^ExecStart=(/\S+) (.*?)(?<!\\)$", text.replace("\\\n", " "), re.M)
    assert m, "no ExecStart"
    args = m.group(2).split()
    proc = H.run([H.BIN] + args + ["--help"])
    assert proc.returncode == 0, proc.stderr
    if not shutil.which("systemd-analyze"):
        H.skip("systemd-analyze (Debian systemd) is not installed")
    local = H.tmp_path("microscope.service")
    with open(local, "w") as f:
        f.write(text.replace(m.group(1), H.BIN, 1))
    proc = H.run(["systemd-analyze", "verify", local])
    assert proc.returncode == 0 and not proc.stderr.strip(), proc.stderr
