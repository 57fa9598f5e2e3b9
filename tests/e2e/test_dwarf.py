"""DWARF (CFI) unwinding of copied user stacks (issue 3 acceptance).

The fixtures are built without frame pointers (tests/fixtures/flags.mk):
    nofp_chain  main -> chain_a -> chain_b -> chain_c -> chain_leaf, then
                main -> sort_phase -> qsort(burn_cmp) through Debian's libc
    sighandler  CPU burnt in a SIGPROF handler that interrupts spin_interrupted
    deepstack   recursion (3 KiB frames) much deeper than the stack copy
and Debian's /usr/bin/python3.11 (also without frame pointers) runs
tests/fixtures/pyburn.py.

The recordings with --call-graph dwarf also keep their raw stream
(--save-raw), and tests/tools/unwind_compare.c (built here against
BUILD/libmicroscope.a) unwinds every sample's registers and copied bytes
with both our unwinder and libdwfl's: they must agree frame for frame.

Folded stacks are read here with their kernel marks kept ("name_[k]"), so a
stack splits into its user part (root first: an optional bracketed
truncation frame, then the user frames) and its kernel part.  Samples
without any user frame (a sample in the kernel with no user context) are
left out of the "reaches main" shares.
"""
import os
import re

import helpers as H

MAIN_SHARE_MIN = 99.0        # % of samples that reach main with --call-graph dwarf/auto
FP_MAIN_SHARE_MAX = 50.0     # % with --call-graph fp: the walk must visibly break
PYTHON_MAIN_SHARE_MIN = 95.0
CHAIN_SHARE_MIN = 99.0       # % of chain_leaf / burn_cmp samples with the full chain
AUTO_SHARE_TOLERANCE = 5.0   # points between auto and dwarf (and leaf vs fixture CPU share)
SIGNAL_SHARE_MIN = 99.0      # % of handler samples that unwind through __restore_rt to main
DEEP_EXHAUSTED_MIN = 99.0    # % of deep_bottom samples ending with [stack copy exhausted]
DEEP_MIN_RECURSE = 3         # deep_recurse frames a 16 KiB copy must still yield

CHAIN = ("main", "chain_a", "chain_b", "chain_c", "chain_leaf")
EXHAUSTED = "[stack copy exhausted]"
KERNEL_MARK = "_[k]"


# ---------------------------------------------------------------- parsing

class Stack:
    """One folded stack: @user (root first, no truncation frame), @reason
    (the bracketed root frame or None), @kernel (root first), @count."""

    def __init__(self, frames, count):
        self.frames = frames
        self.count = count
        user = [f for f in frames if not f.endswith(KERNEL_MARK)]
        self.kernel = tuple(f[:-len(KERNEL_MARK)] for f in frames if f.endswith(KERNEL_MARK))
        self.reason = None
        if user and user[0].startswith("[") and user[0].endswith("]") and \
                not user[0].startswith("[unknown]"):
            self.reason = user.pop(0)
        self.user = tuple(user)

    def text(self):
        return ";".join(self.frames)


def folded_stacks(capture):
    """`microscope convert CAPTURE --to folded` as a list of Stack, heaviest
    first (kernel marks kept, unlike helpers.folded; inlined-call frames,
    "name_[i]", dropped: these tests are about unwinding, not inlining)."""
    text = H.convert_folded_text(capture)
    stacks = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        stack, sep, count = line.rpartition(" ")
        assert sep and stack and re.fullmatch(r"\d+", count), \
            "folded output of %s line %d is not 'frame;...;frame COUNT': %r" % (capture, n, line)
        stacks.append(Stack(tuple(f for f in stack.split(";") if not f.endswith("_[i]")),
                            int(count)))
    stacks.sort(key=lambda s: -s.count)
    H.log("folded %s: %d samples in %d stacks" % (
        os.path.basename(capture), sum(s.count for s in stacks), len(stacks)))
    return stacks


def count(stacks, pred=lambda s: True):
    return sum(s.count for s in stacks if pred(s))


def show(stacks, pred=lambda s: True, n=6):
    """Up to @n of the heaviest stacks matching @pred, for messages."""
    return "\n".join("  %6d  %s" % (s.count, s.text()) for s in [x for x in stacks if pred(x)][:n])


def with_user(s):
    return bool(s.user)


def reaches(names):
    names = set(names)
    return lambda s: any(f in names for f in s.user)


def reach_share(stacks, names):
    """(samples with user frames, how many reach one of @names, share %)."""
    n = count(stacks, with_user)
    got = count(stacks, lambda s: with_user(s) and reaches(names)(s))
    return n, got, H.percent(got, n)


def reason_counts(stacks):
    out = {}
    for s in stacks:
        if s.reason:
            out[s.reason] = out.get(s.reason, 0) + s.count
    return out


def report_truncations(capture):
    """`microscope report`'s summary line
        truncated  N samples (P%): [reason] COUNT, [reason] COUNT
    as (N, {reason: COUNT}); (0, {}) when the report has no such line."""
    out = H.report(capture).stdout
    for line in out.splitlines():
        m = re.match(r"\s*truncated\s+(\d+) samples? \([\d.]+%\):\s*(.*)$", line)
        if m:
            reasons = {}
            for part in m.group(2).split(","):
                part = part.strip()
                if not part:
                    continue
                name, _, value = part.rpartition(" ")
                assert re.fullmatch(r"\d+", value), "cannot parse %r in %r" % (part, line)
                reasons[name] = int(value)
            H.log("report: " + line.strip())
            return int(m.group(1)), reasons
    H.log("report has no truncated line; summary:\n" + "\n".join(out.splitlines()[:12]))
    return 0, {}


def assert_no_frame_pointer(binary, funcs):
    """Fixture precondition: none of @funcs in @binary sets up %rbp as a
    frame pointer (push %rbp; mov %rsp,%rbp), so only CFI can find callers."""
    objdump = H.require_tool("objdump")
    for func in funcs:
        out = H.run([objdump, "-d", "--no-show-raw-insn", "--disassemble=" + func, binary],
                    check=True, quiet=True).stdout
        insns = re.findall(r"^\s*[0-9a-f]+:\s+(.*?)\s*$", out, re.M)
        assert insns, "objdump found no function %s in %s" % (func, binary)
        assert not any(i.startswith("mov    %rsp,%rbp") for i in insns), \
            "fixture bug: %s in %s sets up a frame pointer: %s" % (func, binary, insns[:6])


# ---------------------------------------------------------------- recordings

def _nofp(mode):
    """nofp_chain recorded once per run with --call-graph @mode (None: the
    default, auto)."""
    binary = H.fixture("nofp_chain")
    assert_no_frame_pointer(binary, CHAIN[1:] + ("burn_cmp", "sort_phase"))
    extra = ["--call-graph", mode] if mode else []
    key = "nofp_chain-" + (mode or "default")
    raw = os.path.join(H.SESSION_TMP, "raw-" + key) if mode == "dwarf" else None
    rec = H.cached_record(key, [binary], extra=extra, save_raw=raw)
    cpu = rec.fixture_line("cpu_ns")
    H.log("fixture CPU time: chain %.3f s, sort %.3f s, total %.3f s" % (
        cpu["chain"] / 1e9, cpu["sort"] / 1e9, cpu["total"] / 1e9))
    return rec, cpu, folded_stacks(rec.capture)


def _chain_ok(s):
    """chain_leaf is the innermost user frame, reached by exactly
    main;chain_a;chain_b;chain_c."""
    return s.user[-len(CHAIN):] == CHAIN


def _cmp_chain(user):
    """burn_cmp <- msort_with_tmp... <- qsort_r <- ... <- sort_phase <- main
    (root first in @user); returns '' if it holds, else what is wrong."""
    if "burn_cmp" not in user:
        return "no burn_cmp"
    k = len(user) - 1 - user[::-1].index("burn_cmp")
    j = k - 1
    if j < 0 or not user[j].startswith("msort_with_tmp"):
        return "burn_cmp is not called by msort_with_tmp"
    while j >= 0 and user[j].startswith("msort_with_tmp"):
        j -= 1
    below = user[:j + 1]
    if "qsort_r" not in below:
        return "no qsort_r below msort_with_tmp"
    q = len(below) - 1 - below[::-1].index("qsort_r")
    if "sort_phase" not in below[:q] or "main" not in below[:q]:
        return "sort_phase/main not below qsort_r"
    return ""


def test_dwarf_nofp_chain_reaches_main():
    """--call-graph dwarf on a fixture without frame pointers: >= 99 % of
    the samples that have user frames reach main (through Debian's
    frame-pointer-less libc too)."""
    _, _, stacks = _nofp("dwarf")
    n, got, pct = reach_share(stacks, ["main"])
    total = count(stacks)
    H.log("%d samples, %d with user frames, %d (%.2f%%) reach main; truncations %s" % (
        total, n, got, pct, reason_counts(stacks)))
    assert n > 0, "no samples with user frames:\n%s" % show(stacks)
    assert pct >= MAIN_SHARE_MIN, \
        "only %d of %d samples (%.2f%%) reach main (need >= %.0f%%); stacks without " \
        "main:\n%s" % (got, n, pct, MAIN_SHARE_MIN,
                       show(stacks, lambda s: with_user(s) and not reaches(["main"])(s)))


def test_dwarf_nofp_chain_leaf_shows_full_chain():
    """chain_leaf samples show main;chain_a;chain_b;chain_c;chain_leaf
    (>= 99 % of them), and chain_leaf's share is within 5 points of the
    fixture's own share of CPU time in the chain phase."""
    _, cpu, stacks = _nofp("dwarf")
    total = count(stacks)
    leaf = count(stacks, lambda s: "chain_leaf" in s.user)
    full = count(stacks, lambda s: "chain_leaf" in s.user and _chain_ok(s))
    ours, theirs = H.percent(leaf, total), H.percent(cpu["chain"], cpu["total"])
    H.log("%d chain_leaf samples of %d (%.1f%% vs fixture %.1f%%); %d (%.2f%%) with the "
          "full chain %s" % (leaf, total, ours, theirs, full, H.percent(full, leaf),
                             ";".join(CHAIN)))
    assert leaf > 0, "no chain_leaf samples:\n%s" % show(stacks)
    assert H.percent(full, leaf) >= CHAIN_SHARE_MIN, \
        "%d of %d chain_leaf samples (%.2f%%) show %s (need >= %.0f%%); others:\n%s" % (
            full, leaf, H.percent(full, leaf), ";".join(CHAIN), CHAIN_SHARE_MIN,
            show(stacks, lambda s: "chain_leaf" in s.user and not _chain_ok(s)))
    assert abs(ours - theirs) <= AUTO_SHARE_TOLERANCE, \
        "chain_leaf share %.1f%% vs fixture's chain phase %.1f%% of CPU time (diff %+.1f)" % (
            ours, theirs, ours - theirs)


def test_dwarf_nofp_chain_comparator_through_libc():
    """burn_cmp samples unwind through Debian's libc (no frame pointers,
    static names from libc6-dbg): burn_cmp <- msort_with_tmp... <- qsort_r
    <- ... <- sort_phase <- main, for >= 99 % of them."""
    _, _, stacks = _nofp("dwarf")
    cmp_n = count(stacks, lambda s: "burn_cmp" in s.user)
    good = count(stacks, lambda s: "burn_cmp" in s.user and not _cmp_chain(s.user))
    why = {}
    for s in stacks:
        if "burn_cmp" in s.user and _cmp_chain(s.user):
            why[_cmp_chain(s.user)] = why.get(_cmp_chain(s.user), 0) + s.count
    H.log("%d burn_cmp samples, %d (%.2f%%) with burn_cmp <- msort_with_tmp... <- qsort_r "
          "<- ... <- main; failures by kind: %s" % (cmp_n, good, H.percent(good, cmp_n), why))
    assert cmp_n > 0, "no burn_cmp samples:\n%s" % show(stacks)
    assert H.percent(good, cmp_n) >= CHAIN_SHARE_MIN, \
        "%d of %d burn_cmp samples (%.2f%%) show the qsort chain (need >= %.0f%%); %s; " \
        "e.g.:\n%s" % (good, cmp_n, H.percent(good, cmp_n), CHAIN_SHARE_MIN, why,
                       show(stacks, lambda s: "burn_cmp" in s.user and _cmp_chain(s.user)))


def test_dwarf_fp_mode_breaks_on_nofp_chain():
    """Control: --call-graph fp on the same fixture cannot find the callers
    (no frame pointers anywhere): fewer than 50 % of the samples reach main.
    This shows the dwarf tests above can fail."""
    _, _, stacks = _nofp("fp")
    n, got, pct = reach_share(stacks, ["main"])
    leaf = count(stacks, lambda s: "chain_leaf" in s.user)
    H.log("fp: %d samples with user frames, %d (%.2f%%) reach main; %d chain_leaf samples" % (
        n, got, pct, leaf))
    assert leaf > 0, "no chain_leaf samples with --call-graph fp:\n%s" % show(stacks)
    assert pct < FP_MAIN_SHARE_MAX, \
        "with --call-graph fp %.2f%% of samples reach main (expected < %.0f%%: the fixture " \
        "has no frame pointers); heaviest stacks:\n%s" % (pct, FP_MAIN_SHARE_MAX, show(stacks))


def test_dwarf_auto_default_matches_dwarf():
    """The default policy (auto) on nofp_chain: >= 99 % of samples reach
    main, >= 99 % of chain_leaf samples show the full chain, and
    chain_leaf's and burn_cmp's shares agree with --call-graph dwarf's
    within 5 points.  The two are separate runs whose CPU split between the
    phases differs a little (machine load), so each share is compared
    relative to its own run's split (share - the fixture's CPU share of that
    phase); the raw shares are printed too."""
    _, auto_cpu, auto = _nofp(None)
    _, dwarf_cpu, dwarf = _nofp("dwarf")
    n, got, pct = reach_share(auto, ["main"])
    lines, bad = [], []
    for name, phase in (("chain_leaf", "chain"), ("burn_cmp", "sort")):
        a = H.percent(count(auto, lambda s: name in s.user), count(auto))
        d = H.percent(count(dwarf, lambda s: name in s.user), count(dwarf))
        fa = H.percent(auto_cpu[phase], auto_cpu["total"])
        fd = H.percent(dwarf_cpu[phase], dwarf_cpu["total"])
        diff = (a - fa) - (d - fd)
        line = "%s: auto %.1f%% (its run's %s phase %.1f%% of CPU) vs dwarf %.1f%% (%.1f%%): " \
               "raw diff %+.1f, relative diff %+.1f points" % (name, a, phase, fa, d, fd,
                                                                a - d, diff)
        lines.append(line)
        if abs(diff) > AUTO_SHARE_TOLERANCE:
            bad.append(line)
    full = H.percent(count(auto, lambda s: "chain_leaf" in s.user and _chain_ok(s)),
                     count(auto, lambda s: "chain_leaf" in s.user))
    H.log("auto: %d samples with user frames, %d (%.2f%%) reach main; %.2f%% of chain_leaf "
          "samples have the full chain; truncations %s\n%s" % (
              n, got, pct, full, reason_counts(auto), "\n".join(lines)))
    assert pct >= MAIN_SHARE_MIN, \
        "auto: only %.2f%% of samples reach main (need >= %.0f%%); stacks without main:\n%s" % (
            pct, MAIN_SHARE_MIN, show(auto, lambda s: with_user(s) and not reaches(["main"])(s)))
    assert full >= CHAIN_SHARE_MIN, "auto: %.2f%% of chain_leaf samples show %s:\n%s" % (
        full, ";".join(CHAIN), show(auto, lambda s: "chain_leaf" in s.user and not _chain_ok(s)))
    assert not bad, "outside +-%.0f points: %s" % (AUTO_SHARE_TOLERANCE, "; ".join(bad))


# ---------------------------------------------------------------- signal frames

def _sighandler():
    """sighandler recorded once per run with --call-graph dwarf (raw stream kept)."""
    binary = H.fixture("sighandler")
    assert_no_frame_pointer(binary, ["prof_handler", "spin_interrupted"])
    rec = H.cached_record("sighandler-dwarf", [binary], extra=["--call-graph", "dwarf"],
                          save_raw=os.path.join(H.SESSION_TMP, "raw-sighandler-dwarf"))
    return rec, rec.fixture_line("cpu_ns"), folded_stacks(rec.capture)


def test_dwarf_signal_handler_unwinds_through_restore_rt():
    """CPU burnt in a SIGPROF handler: >= 99 % of prof_handler samples read
    main <- ... <- [signal frame __restore_rt] <- prof_handler, i.e. the
    frame right below the handler is __restore_rt and main is below it;
    most (>= 90 %) show spin_interrupted as the interrupted function."""
    rec, cpu, stacks = _sighandler()
    total = count(stacks)

    def handler_at(s):
        return s.user.index("prof_handler") if "prof_handler" in s.user else None

    def through_signal(s):
        i = handler_at(s)
        return (i is not None and i >= 1 and "__restore_rt" in s.user[i - 1]
                and "main" in s.user[:i - 1])

    def interrupted_spin(s):
        i = handler_at(s)
        return through_signal(s) and i >= 2 and s.user[i - 2] == "spin_interrupted"

    handler = count(stacks, lambda s: handler_at(s) is not None)
    good = count(stacks, through_signal)
    spin = count(stacks, interrupted_spin)
    H.log("fixture: %d signals, handler %.3f s of %.3f s CPU (%.1f%%); %d of %d samples "
          "(%.1f%%) in prof_handler; %d (%.2f%%) of those reach main through __restore_rt, "
          "%d (%.2f%%) with spin_interrupted as the interrupted function" % (
              cpu["signals"], cpu["handler"] / 1e9, cpu["total"] / 1e9,
              H.percent(cpu["handler"], cpu["total"]), handler, total,
              H.percent(handler, total), good, H.percent(good, handler), spin,
              H.percent(spin, handler)))
    assert handler > 0, "no prof_handler samples:\n%s" % show(stacks)
    assert H.percent(good, handler) >= SIGNAL_SHARE_MIN, \
        "%d of %d prof_handler samples (%.2f%%) unwind through __restore_rt to main (need " \
        ">= %.0f%%); others:\n%s" % (good, handler, H.percent(good, handler), SIGNAL_SHARE_MIN,
                                     show(stacks, lambda s: handler_at(s) is not None
                                          and not through_signal(s)))
    assert H.percent(spin, handler) >= 90.0, \
        "only %d of %d handler samples (%.2f%%) show spin_interrupted below __restore_rt:\n%s" % (
            spin, handler, H.percent(spin, handler),
            show(stacks, lambda s: through_signal(s) and not interrupted_spin(s)))


# ---------------------------------------------------------------- stack deeper than the copy

def _deep(stack_size=None):
    binary = H.fixture("deepstack")
    extra = ["--call-graph", "dwarf"]
    if stack_size is not None:
        extra += ["--stack-size", str(stack_size)]
    rec = H.record([binary], extra=extra,
                   output=H.tmp_path("deep-%s.msc" % (stack_size or "default")))
    info = rec.fixture_line("cpu_ns")
    return rec, info, folded_stacks(rec.capture)


def _recurse_frames(s):
    """deep_recurse frames directly above deep_bottom (innermost user frame)."""
    if not s.user or s.user[-1] != "deep_bottom":
        return -1
    k = 0
    for f in reversed(s.user[:-1]):
        if f != "deep_recurse":
            break
        k += 1
    return k


def test_dwarf_deep_stack_ends_with_stack_copy_exhausted():
    """A stack deeper than the 16 KiB copy (200 frames of 3 KiB): >= 99 % of
    deep_bottom samples keep deep_bottom and >= 3 deep_recurse frames and end
    with [stack copy exhausted]; report's truncated line counts exactly the
    folded stacks that end that way."""
    rec, info, stacks = _deep()
    bottom = count(stacks, lambda s: "deep_bottom" in s.user)
    ok = count(stacks, lambda s: "deep_bottom" in s.user and s.reason == EXHAUSTED
               and _recurse_frames(s) >= DEEP_MIN_RECURSE and "main" not in s.user)
    depths = {}
    for s in stacks:
        if "deep_bottom" in s.user:
            depths[_recurse_frames(s)] = depths.get(_recurse_frames(s), 0) + s.count
    reasons = reason_counts(stacks)
    n_trunc, rep = report_truncations(rec.capture)
    H.log("fixture: depth %d, %d-byte frames; %d samples, %d in deep_bottom, %d (%.2f%%) "
          "end with %s after >= %d deep_recurse frames; deep_recurse frames found: %s; "
          "folded roots %s; report: %d truncated %s" % (
              info["depth"], info["frame_bytes"], count(stacks), bottom, ok,
              H.percent(ok, bottom), EXHAUSTED, DEEP_MIN_RECURSE, dict(sorted(depths.items())),
              reasons, n_trunc, rep))
    assert bottom > 0, "no deep_bottom samples:\n%s" % show(stacks)
    assert H.percent(ok, bottom) >= DEEP_EXHAUSTED_MIN, \
        "%d of %d deep_bottom samples (%.2f%%) end with %s after >= %d deep_recurse frames " \
        "(need >= %.0f%%); others:\n%s" % (
            ok, bottom, H.percent(ok, bottom), EXHAUSTED, DEEP_MIN_RECURSE, DEEP_EXHAUSTED_MIN,
            show(stacks, lambda s: "deep_bottom" in s.user and not (
                s.reason == EXHAUSTED and _recurse_frames(s) >= DEEP_MIN_RECURSE)))
    assert rep.get(EXHAUSTED) == reasons.get(EXHAUSTED), \
        "report counts %s %s, the folded stacks %s" % (
            EXHAUSTED, rep.get(EXHAUSTED), reasons.get(EXHAUSTED))
    assert n_trunc == sum(reasons.values()), \
        "report says %d truncated samples, the folded stacks end with a reason %d times (%s)" % (
            n_trunc, sum(reasons.values()), reasons)


def test_dwarf_stack_size_bounds_frames_found():
    """--stack-size sets how deep a too-deep stack unwinds: with 64 KiB the
    usual deep_bottom stack has >= 3x the deep_recurse frames of 16 KiB,
    each within 2 frames of what the copy size allows (copy / frame size + 1)."""
    got = {}
    for size in (16384, 65536):
        _, info, stacks = _deep(size)
        depths = {}
        for s in stacks:
            if "deep_bottom" in s.user and s.reason == EXHAUSTED:
                depths[_recurse_frames(s)] = depths.get(_recurse_frames(s), 0) + s.count
        assert depths, "--stack-size %d: no deep_bottom stack ends with %s:\n%s" % (
            size, EXHAUSTED, show(stacks))
        usual = max(depths.items(), key=lambda kv: kv[1])[0]
        # Each deep_recurse frame is frame_bytes plus a saved register and
        # the return address.  The k-th deep_recurse frame's pc is the
        # return address saved at the top of the (k-1)-th, so k frames need
        # about 16 + (k - 1) * frame bytes of copy.
        expected = (size - 16) / (info["frame_bytes"] + 16) + 1
        got[size] = (usual, expected, depths)
        H.log("--stack-size %d: deep_recurse frames found %s (usual %d, about %.1f expected)" % (
            size, dict(sorted(depths.items())), usual, expected))
    for size, (usual, expected, depths) in got.items():
        assert abs(usual - expected) <= 2, \
            "--stack-size %d: usually %d deep_recurse frames, expected about %.1f (%s)" % (
                size, usual, expected, depths)
    assert got[65536][0] >= 3 * got[16384][0], \
        "64 KiB copy finds %d frames, 16 KiB %d: not >= 3x" % (
            got[65536][0], got[16384][0])


# ---------------------------------------------------------------- python3.11

def _python():
    """Debian's python3.11 running pyburn.py (scale 0.3, about 1 s of CPU),
    recorded once per run with --call-graph dwarf (raw stream kept)."""
    assert os.path.exists(H.DEBIAN_PYTHON), "%s is missing: run `make deps`" % H.DEBIAN_PYTHON
    script = os.path.join(H.REPO, "tests", "fixtures", "pyburn.py")
    rec = H.cached_record("python-dwarf", [H.DEBIAN_PYTHON, script, "0.3"],
                          extra=["--call-graph", "dwarf"],
                          save_raw=os.path.join(H.SESSION_TMP, "raw-python-dwarf"))
    return rec, folded_stacks(rec.capture)


@H.timeout(240)
def test_dwarf_python_reaches_main():
    """Debian's python3.11 (no frame pointers) on a CPU-bound script with
    --call-graph dwarf: >= 95 % of the samples with user frames reach
    Py_BytesMain (or main/_start below it)."""
    _, stacks = _python()
    n, got, pct = reach_share(stacks, ["Py_BytesMain", "main", "_start"])
    _, got_py, pct_py = reach_share(stacks, ["Py_BytesMain"])
    eval_n = count(stacks, lambda s: "_PyEval_EvalFrameDefault" in s.user)
    H.log("python3.11: %d samples with user frames, %d (%.2f%%) reach Py_BytesMain/main/"
          "_start, %d (%.2f%%) Py_BytesMain; %d in _PyEval_EvalFrameDefault; truncations %s" % (
              n, got, pct, got_py, pct_py, eval_n, reason_counts(stacks)))
    assert eval_n > 0, "no _PyEval_EvalFrameDefault samples:\n%s" % show(stacks)
    assert pct >= PYTHON_MAIN_SHARE_MIN, \
        "only %.2f%% of python3.11 samples reach Py_BytesMain/main/_start (need >= %.0f%%); " \
        "others:\n%s" % (pct, PYTHON_MAIN_SHARE_MIN, show(
            stacks, lambda s: with_user(s) and not reaches(["Py_BytesMain", "main", "_start"])(s)))


# ---------------------------------------------------------------- per-sample agreement with libdw

COMPARE_MIN_SHARE = 95.0  # % of a recording's samples the comparison must cover


def _unwind_compare_tool():
    """tests/tools/unwind_compare.c built once per run against
    BUILD/libmicroscope.a (see the tool's header comment)."""
    out = os.path.join(H.SESSION_TMP, "unwind_compare")
    if os.path.exists(out):
        return out
    lib = os.path.join(H.BUILD, "libmicroscope.a")
    assert os.path.exists(lib), "%s is missing: run `make all`" % lib
    cc = os.environ.get("CC") or "gcc"
    H.run([cc, "-O2", "-g", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter",
           "-D_GNU_SOURCE", "-I", H.REPO, "-I", H.BUILD,
           os.path.join(H.REPO, "tests", "tools", "unwind_compare.c"), lib,
           "-ldw", "-lelf", "-lz", "-o", out + ".tmp"], check=True)
    os.rename(out + ".tmp", out)
    return out


def _compare_with_libdw(raw_dir, what, capture):
    """Run unwind_compare over the raw stream of a recording and check
    that every sample it can compare (a copy, a pc in a mapped file) got
    exactly libdw's frames, and that it covered >= 95 % of the samples."""
    tool = _unwind_compare_tool()
    assert os.path.isdir(raw_dir), "no raw stream %s (record --save-raw)" % raw_dir
    proc = H.run([tool, raw_dir], timeout=300)
    m = re.search(r"^summary samples=(\d+) compared=(\d+) same=(\d+) differ=(\d+) "
                  r"nocfi_prefix=(\d+) skipped=(\d+) frames=(\d+) reasons=(.*)$",
                  proc.stdout, re.M)
    assert m, "unwind_compare printed no summary (status %d)\nstdout:\n%s\nstderr:\n%s" % (
        proc.returncode, H._tail(proc.stdout), H._tail(proc.stderr))
    samples, compared, same, differ, nocfi, skipped, frames = (int(x) for x in m.groups()[:7])
    n_trunc, rep = report_truncations(capture)
    H.log("%s: %d samples, %d compared with libdw: %d identical, %d differ, %d where libdw "
          "guessed on after our [no CFI for pc]; %d skipped (no copy / pc outside files); "
          "%d frames (%.1f per sample); our endings %s; report: %d truncated %s" % (
              what, samples, compared, same, differ, nocfi, skipped, frames,
              frames / compared if compared else 0.0, m.group(8), n_trunc, rep))
    assert compared > 0 and H.percent(compared, samples) >= COMPARE_MIN_SHARE, \
        "%s: only %d of %d samples (%.1f%%) could be compared (need >= %.0f%%)\nstderr:\n%s" % (
            what, compared, samples, H.percent(compared, samples), COMPARE_MIN_SHARE,
            H._tail(proc.stderr))
    assert differ == 0 and proc.returncode == 0, \
        "%s: %d of %d samples differ from libdw's unwind of the same bytes (status %d):\n%s" % (
            what, differ, compared, proc.returncode, H._tail(proc.stderr, 120))


def test_dwarf_nofp_chain_matches_libdw_per_sample():
    """Every nofp_chain sample (--call-graph dwarf) with a stack copy unwinds
    to exactly the pcs and activation flags libdwfl's unwinder finds over
    the same registers and copied bytes (tests/tools/unwind_compare.c)."""
    rec, _, _ = _nofp("dwarf")
    _compare_with_libdw(os.path.join(H.SESSION_TMP, "raw-nofp_chain-dwarf"), "nofp_chain",
                        rec.capture)


def test_dwarf_sighandler_matches_libdw_per_sample():
    """Same per-sample agreement with libdw for the signal handler fixture
    (unwinds through __restore_rt's DW_CFA_expression rules)."""
    rec, _, _ = _sighandler()
    _compare_with_libdw(os.path.join(H.SESSION_TMP, "raw-sighandler-dwarf"), "sighandler",
                        rec.capture)


@H.timeout(240)
def test_dwarf_python_matches_libdw_per_sample():
    """Same per-sample agreement with libdw for Debian's python3.11."""
    rec, _ = _python()
    _compare_with_libdw(os.path.join(H.SESSION_TMP, "raw-python-dwarf"), "python3.11",
                        rec.capture)


SHORT_PROCESSES = 1000
SHORT_TRUNCATED_MAX = 2.0    # % of a 1,000-process run's samples reported truncated


@H.timeout(300)
def test_short_processes_end_at_their_root():
    """Issue 21 item 7 / issue 14 item 9: 1,000 short processes (spawner:
    fork, exec, ld.so start-up, 2 ms of work, exit).  ld.so's _start has no
    CFI: a stack that reaches it is whole, not "[no CFI for pc]"; a sample
    in execve past its point of no return has no user part (the old program
    is gone) and is whole too.  At most 2 % of the samples are truncated."""
    H.require_root()
    cap = H.tmp_path("spawner.msc")
    H.record([H.fixture("spawner"), str(SHORT_PROCESSES)], output=cap, timeout=280)
    stacks = folded_stacks(cap)
    whole = count(stacks)
    truncated, reasons = report_truncations(cap)
    ldso = count(stacks, lambda s: s.user[:2] == ("_start", "_dl_start"))
    cut = lambda s: s.reason == "[no CFI for pc]" and s.user[:1] == ("_start",)  # noqa: E731
    ldso_cut = count(stacks, cut)
    execs = count(stacks, lambda s: not s.user and "__x64_sys_execve" in s.kernel)
    H.log("%d samples, %d truncated %s; %d whole under ld.so's _start, %d cut above it; "
          "%d in execve with no user part" % (whole, truncated, reasons, ldso, ldso_cut, execs))
    assert whole >= 1000, "only %d samples of %d processes" % (whole, SHORT_PROCESSES)
    assert ldso > 0, "no stack reaches ld.so's _start -> _dl_start:\n%s" % show(stacks)
    assert ldso_cut == 0, "stacks cut right above ld.so's _start:\n%s" % show(stacks, cut)
    assert truncated <= SHORT_TRUNCATED_MAX / 100.0 * whole, \
        "%d of %d samples (%.1f%%) truncated: %s\n%s" % (
            truncated, whole, 100.0 * truncated / whole, reasons, show(stacks, lambda s: s.reason))
