"""Display names: C++ symbols demangled in views (the capture keeps the raw
name), and vdso frames named from the kernel's vdso image."""
import helpers as H


def test_cxx_method_is_demangled():
    """cxx_hot burns ~all its CPU in ns::Burner::method(int) (raw symbol
    _ZN2ns6Burner6methodEi): report and folded show the demangled name; the
    capture's frame table keeps the raw one."""
    rec = H.record([H.fixture("cxx_hot"), "1"])
    prof = H.folded(rec.capture)
    n = H.total(prof)
    ours = H.share(prof, "ns::Burner::method(int)")
    raw = H.count_where(prof, lambda st: any(f.startswith("_ZN") for f in st))
    msg = "ns::Burner::method(int) in %.1f%% of %d samples; %d with a mangled frame" % (
        ours, n, raw)
    H.log(msg)
    assert ours >= 80.0 and raw == 0, msg + "\n" + H.show_stacks(prof)
    out = H.report(rec.capture).stdout
    assert "ns::Burner::method(int)" in out, out[-3000:]
    frames = H.run([H.BIN, "convert", rec.capture, "--to", "frames"], check=True).stdout
    assert "_ZN2ns6Burner6methodEi" in frames, frames[-3000:]


def test_vdso_clock_gettime_is_named():
    """vdso_loop calls clock_gettime(CLOCK_MONOTONIC) in a hot loop: most
    samples run inside the vDSO, and their stacks name its exported
    __vdso_clock_gettime (clock_gettime) rather than [vdso]+0x...  Static
    helpers inside it (e.g. vread_pvclock) only get names when the kernel's
    unstripped vdso64.so is installed."""
    rec = H.record([H.fixture("vdso_loop"), "1"])
    prof = H.folded(rec.capture)
    n = H.total(prof)
    named = H.count_where(prof, lambda st: any(f in ("__vdso_clock_gettime", "clock_gettime")
                                               for f in st))
    in_loop = H.count_containing(prof, "vdso_hot_loop")
    msg = "%d of %d samples name __vdso_clock_gettime/clock_gettime; %d in vdso_hot_loop" % (
        named, n, in_loop)
    H.log(msg)
    assert in_loop >= 0.8 * n and named >= 0.5 * in_loop, msg + "\n" + H.show_stacks(prof)
