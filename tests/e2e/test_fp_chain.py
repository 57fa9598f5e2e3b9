"""Frame-pointer chains (issue 21 item 2), fixture fp_asm recorded with
--call-graph fp.  The module's CFI proves each step of the kernel's
frame-pointer walk: where a frame keeps no frame pointer (asm_leaf in its
prologue or at its ret, nofp_mid compiled without one) the next entry of
the walk is its caller's caller, so the chain ends there with
"[frame without frame pointer]" instead of showing a wrong or skipped
caller."""
import os

import helpers as H

FULL_MIN = 90.0   # % of asm_leaf samples with the whole chain main -> fp_outer -> fp_mid
MARK = "[frame without frame pointer]"


def _user(stack):
    """User frames only: kernel ("_[k]") and inline ("_[i]") frames dropped."""
    return tuple(f for f in stack if not f.endswith("_[k]") and not f.endswith("_[i]"))


@H.timeout(120)
def test_fp_chain_never_shows_a_wrong_or_skipped_caller():
    H.require_root()
    cap = H.tmp_path("fp_asm.msc")
    H.record([H.fixture("fp_asm"), "2"], output=cap, extra=["--call-graph", "fp"])
    text = H.convert_folded_text(cap)
    H.parse_folded(text)  # well-formed
    prof = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        key = _user(stack.split(";"))
        prof[key] = prof.get(key, 0) + int(n)

    leaf = {st: n for st, n in prof.items() if "asm_leaf" in st}
    full = sum(n for st, n in leaf.items()
               if st[-4:] == ("main", "fp_outer", "fp_mid", "asm_leaf"))
    marked = sum(n for st, n in leaf.items() if st == (MARK, "asm_leaf"))
    wrong = {st: n for st, n in leaf.items()
             if st[-4:] != ("main", "fp_outer", "fp_mid", "asm_leaf") and st != (MARK, "asm_leaf")}
    total = sum(leaf.values())
    H.log("asm_leaf: %d samples, %d full chains, %d marked at the prologue/epilogue, "
          "%d otherwise: %s" % (total, full, marked, sum(wrong.values()), wrong))
    assert total >= 200, "only %d asm_leaf samples" % total
    assert not wrong, "asm_leaf with a wrong caller: %s" % wrong
    assert marked > 0, "no asm_leaf sample in its prologue or epilogue was marked"
    assert full >= FULL_MIN / 100.0 * total, "%d of %d asm_leaf chains reach main" % (full, total)

    mid = {st: n for st, n in prof.items() if "fp_leaf2" in st}
    good = sum(n for st, n in mid.items() if st[:3] == (MARK, "nofp_mid", "fp_leaf2"))
    skipped = {st: n for st, n in mid.items() if st[:3] != (MARK, "nofp_mid", "fp_leaf2")}
    H.log("fp_leaf2: %d under nofp_mid ending marked, other %s" % (good, skipped))
    assert good >= 200, "only %d fp_leaf2 samples end marked above nofp_mid" % good
    assert not skipped, "fp_leaf2 stacks that skip or misplace nofp_mid's caller: %s" % skipped
    rep = H.report(cap).stdout
    assert MARK in rep, rep[:2000]
    assert "without frame pointers" not in rep, "warning on code with frame pointers:\n" + rep


@H.timeout(120)
def test_fp_on_code_without_frame_pointers_is_reported():
    """--call-graph fp on nofp_chain (no frame pointers anywhere): the
    stacks end marked at their leaf and report says why in one line; the
    same program recorded with auto gets no such line."""
    H.require_root()
    env = dict(os.environ, MS_FIXTURE_SCALE="0.3")
    lines = {}
    for mode in ("fp", "auto"):
        cap = H.tmp_path("nofp-%s.msc" % mode)
        H.record([H.fixture("nofp_chain")], output=cap, env=env, extra=["--call-graph", mode])
        rep = H.report(cap).stdout
        lines[mode] = [l for l in rep.splitlines() if "without frame pointers" in l]
        H.log("%s: %s" % (mode, lines[mode]))
        if mode == "fp":
            assert MARK in rep, rep[:2000]
    assert len(lines["fp"]) == 1 and "--call-graph auto or dwarf" in lines["fp"][0], lines
    assert not lines["auto"], lines
