"""CPU budget (issue 7): `record --budget 1` at 4999 Hz on a 2-thread CPU-bound
fixture for 45 s (at ~1/100 of the rate a 32 s run has only ~500
steady-state samples, a share std of ~2 points).  In the steady state after start-up the controller has
lowered the sampling duty, the recorder's own CPU (measured here from
/proc/PID/task/*/schedstat of the recorder) plus its BPF programs' run time
(reported in the capture) stays within 2x the budget, and the weighted
sample shares of spin_a/spin_b/spin_c are within +-5 points of the
fixture's own CLOCK_THREAD_CPUTIME_ID shares.

Robust under load: everything asserted is the recorder's or the fixture's
own CPU time (not wall-clock speed); the window starts 12 s in, after the
2 s warm-up and the controller's lowering steps."""
import os
import re
import time

import helpers as H

SECONDS = 45
FREQ = 4999
BUDGET_PCT = 1.0
WINDOW_START = 12.0     # s after the recorder started
SHARE_TOLERANCE = 5.0   # percentage points


def _recorder_cpu_ns(pid):
    """CPU time of every thread of @pid (ns, the scheduler's sum_exec_runtime
    from /proc/PID/task/TID/schedstat); None once it is gone."""
    total = 0
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return total


def _budget_lines(capture):
    out = H.report(capture, "--limit", "5").stdout
    b = re.search(r"^  budget +(.*)$", out, re.M)
    c = re.search(r"^  own cost +(.*)$", out, re.M)
    assert b and c, "report has no budget/own cost lines:\n%s" % out
    return b.group(1), c.group(1), out


@H.timeout(240)
def test_budget_1pct_lowers_duty_and_keeps_shares():
    env = dict(os.environ, MS_FIXTURE_SECONDS=str(SECONDS))
    proc, capture, fixture_out = H.start_record(
        [H.fixture("budget2")], output=H.tmp_path("budget.msc"), env=env, freq=FREQ,
        extra=["--budget", "%g" % BUDGET_PCT])
    t0 = time.monotonic()
    points = []  # (seconds since start, recorder CPU ns)
    try:
        while proc.poll() is None and time.monotonic() - t0 < SECONDS + 60:
            cpu = _recorder_cpu_ns(proc.pid)
            if cpu is not None:
                points.append((time.monotonic() - t0, cpu))
            time.sleep(0.5)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, "record exited %d:\n%s" % (proc.returncode, err)

    # The steady-state window: from WINDOW_START to the fixture's end (it
    # stops sampling-heavy work at SECONDS; the recorder then seals).
    window = [p for p in points if WINDOW_START <= p[0] <= SECONDS - 1]
    assert len(window) >= 10, "too few /proc readings in the window: %r" % points
    (ta, ca), (tb, cb) = window[0], window[-1]
    recorder_pct = 100.0 * (cb - ca) / ((tb - ta) * 1e9)

    budget, cost, out = _budget_lines(capture)
    H.log("budget: " + budget)
    H.log("own cost: " + cost)
    # The report separates the steady state the controller held from the
    # whole-run average (start-up at the full rate included), and says which is which.
    assert re.search(r"held in steady state \((the last|the longest span at one duty,) ", cost), out
    avg = re.search(r"^ {13}([\d.]+)% of one CPU averaged over the whole recording, start-up "
                    r"at the full rate included", out, re.M)
    assert avg, "no whole-recording average line:\n%s" % out
    steady_cost = float(re.match(r"([\d.]+)%", cost).group(1))
    H.log("capture's own cost: steady %.2f%%, whole recording %s%%" % (steady_cost, avg.group(1)))
    assert steady_cost <= 2 * BUDGET_PCT, \
        "steady own cost %.2f%% is more than 2x the budget:\n%s" % (steady_cost, out)
    m = re.search(r"duty lowered (\d+) times?, to 1/(\d+) of the requested rate at most "
                  r"\(1/(\d+) at the end\)", budget)
    assert m, "the duty was never lowered: %s\n%s" % (budget, out)
    peak, final = int(m.group(2)), int(m.group(3))
    assert peak >= 2 and final >= 2, budget
    # BPF run time: the capture's steady-state figure.
    bpf_pct = float(re.search(r"BPF ([\d.]+)%", cost).group(1))
    steady = recorder_pct + bpf_pct
    msg = ("steady state %.1f..%.1f s: recorder CPU %.2f%% of one CPU (from /proc) + BPF "
           "%.2f%% = %.2f%%; budget %g%%" % (ta, tb, recorder_pct, bpf_pct, steady, BUDGET_PCT))
    H.log(msg)
    assert steady <= 2 * BUDGET_PCT, msg + ": more than 2x the budget"

    # Shares: weighted samples (each stands for the period in force) against
    # the fixture's own per-function CPU time.
    with open(fixture_out) as f:
        cpu = H.parse_kv([l for l in f if l.startswith("cpu_ns")][0])
    prof = H.folded(capture)
    lines, bad = [], []
    for fn in ("spin_a", "spin_b", "spin_c"):
        ours = H.share(prof, fn)
        theirs = H.percent(cpu[fn], cpu["total"])
        line = "%s %.1f%% vs fixture %.1f%% (%+.1f points)" % (fn, ours, theirs, ours - theirs)
        lines.append(line)
        if abs(ours - theirs) > SHARE_TOLERANCE:
            bad.append(line)
    H.log("; ".join(lines))
    assert not bad, "outside +-%g points: %s\n%s" % (SHARE_TOLERANCE, "; ".join(bad), out)

    # The weights stand for the requested rate: their sum is about
    # FREQ x the fixture's CPU time (the per-CPU events sample it while it runs).
    weight = H.total(prof)
    expected = FREQ * cpu["total"] / 1e9
    H.log("weight %d vs %d Hz x %.2f s CPU = %.0f (%+.1f%%)" % (
        weight, FREQ, cpu["total"] / 1e9, expected, 100.0 * (weight - expected) / expected))
    assert abs(weight - expected) <= 0.25 * expected, \
        "sample weights %d do not stand for %d Hz x %.2f s CPU" % (weight, FREQ,
                                                                     cpu["total"] / 1e9)


def test_budget_usage_errors():
    for bad in ("-1", "101", "x", ""):
        proc = H.run([H.BIN, "record", "--budget", bad, "--", "true"])
        assert proc.returncode == 2, (bad, proc.returncode, proc.stderr)
        assert "budget" in proc.stderr, proc.stderr


SHARE_POINTS = 2.0      # issue 21 item 8: default budget vs --budget 0
SHARE_FLOOR = 2.0       # functions above this share (%) are compared


@H.timeout(240)
def test_default_budget_keeps_the_unbudgeted_shares():
    """Issue 21 item 8: ratio at 4999 Hz with the default budget (25 % of
    a CPU) and with --budget 0: every function above 2 % of either profile
    is within 2 points of the other.  The kernel's own per-sample cost is
    about 20 % at that rate: the controller lowers the duty when the whole
    cost is over the budget, and must not when it holds under it (since
    the recorder unwinds in the kernel it costs about 1 %, and a quiet
    machine holds about 22 %).  At the default 999 Hz the same program's
    start-up (BPF load, DWARF and CFI reading) does not lower the duty at
    all."""
    H.require_root()
    shares, lines = {}, {}
    # The controller acts after its 2 s warm-up and two intervals over the
    # budget: the fixture must outlast that on a fast machine (its plain
    # 2.5 s did not on CI's), so it runs 3x its work.
    env = dict(os.environ, MS_FIXTURE_SCALE="3")
    for name, extra in (("default", []), ("unbudgeted", ["--budget", "0"])):
        cap = H.tmp_path("ratio-%s.msc" % name)
        H.record([H.fixture("ratio")], output=cap, freq=4999, extra=extra, env=env)
        shares[name] = H.self_shares(H.folded(cap))
        lines[name] = _budget_lines(cap)[:2] if name == "default" else ""
    H.log("default budget: %s; own cost %s" % lines["default"])
    budget, cost = lines["default"]
    steady = re.search(r"^([\d.]+)% of one CPU held in steady state", cost)
    if not re.search(r"duty lowered (\d+) times?", budget):
        assert "duty never lowered" in budget, budget
        # the controller judges intervals, the report the whole steady state:
        # a tenth of slack between the two
        assert steady and float(steady.group(1)) <= 27.5, \
            "the default budget never lowered the duty at 4999 Hz, though the steady " \
            "cost is over it: %s; %s" % (budget, cost)
    bad = []
    for fn in sorted(set(shares["default"]) | set(shares["unbudgeted"])):
        a, b = shares["default"].get(fn, 0.0), shares["unbudgeted"].get(fn, 0.0)
        if max(a, b) < SHARE_FLOOR:
            continue
        H.log("%-30s default %5.1f%%, --budget 0 %5.1f%% (%+.1f points)" % (fn, a, b, a - b))
        if abs(a - b) > SHARE_POINTS:
            bad.append("%s %.1f%% vs %.1f%%" % (fn, a, b))
    assert not bad, "shares moved by the budget: %s" % "; ".join(bad)

    plain = H.cached_record("ratio", [H.fixture("ratio")]).capture
    budget = _budget_lines(plain)[0]
    H.log("999 Hz, default budget: %s" % budget)
    assert "duty never lowered" in budget, \
        "start-up lowered the duty of a 999 Hz recording: %s" % budget


@H.timeout(120)
def test_short_recording_over_budget_says_the_budget_never_acted():
    """-F 4999 --budget 1 for 2 s ends before the controller's first judged
    interval (2 s warm-up): beside `duty never lowered` and a whole-run cost
    far above 1 %, the budget line says the budget was exceeded but could
    not act yet, naming the warm-up.  Under its budget (100 %) it says
    nothing of the kind."""
    H.require_root()
    over = H.record([H.fixture("spinner"), "30"], output=H.tmp_path("short-over.msc"),
                    freq=FREQ, duration=2, extra=["--budget", "1", "-q"],
                    expect_status=None)
    budget, cost, out = _budget_lines(over.capture)
    assert budget.startswith("1% of one CPU: duty never lowered"), budget
    pct = float(re.match(r"([\d.]+)%", cost).group(1))
    assert pct > 1.0 and "no steady-state figure" in cost, cost
    m = re.search(r"^ +exceeded, but the recording ended \(after ([\d.]+) s of sampling\) "
                  r"before the budget could act: it judges its cost from the first interval "
                  r"after a 2\.000 s warm-up$", out, re.M)
    assert m, out[:2500]
    assert 1.0 < float(m.group(1)) <= 2.2, m.group(1)
    under = H.record([H.fixture("spinner"), "30"], output=H.tmp_path("short-under.msc"),
                     freq=99, duration=2, extra=["--budget", "100", "-q"],
                     expect_status=None)
    budget, cost, out = _budget_lines(under.capture)
    assert float(re.match(r"([\d.]+)%", cost).group(1)) < 100, cost
    assert "exceeded" not in out, out[:2500]


def test_steady_state_over_budget_too_short_to_act_says_so():
    """-F 4999 --budget 1 for 3 s: about 1 s of steady state after the
    2 s warm-up, far over 1 %, but the controller lowers the duty only
    after 2 s over the budget (counter budget.lower_after_ns); the budget
    line says so instead of a bare `duty never lowered` (the trial's
    3 s --preset production run held 1.48 % with no word of why)."""
    H.require_root()
    rec = H.record([H.fixture("spinner"), "30"], output=H.tmp_path("steady-short.msc"),
                   freq=FREQ, duration=3, extra=["--budget", "1", "-q"], expect_status=None)
    budget, cost, out = _budget_lines(rec.capture)
    assert budget.startswith("1% of one CPU: duty never lowered"), budget
    m = re.search(r"^  own cost +([\d.]+)% of one CPU held in steady state", out, re.M)
    assert m and float(m.group(1)) > 1.0, out[:2500]
    assert re.search(r"^ +exceeded in steady state, but the recording ended \(after [\d.]+ m?s "
                     r"of it\) before the budget could act: it lowers the duty after 2\.000 s "
                     r"over the budget$", out, re.M), out[:2500]
