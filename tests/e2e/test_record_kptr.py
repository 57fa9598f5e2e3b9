"""A recording with kallsyms unreadable (issue 13): with
kernel.kptr_restrict=2 every /proc/kallsyms address reads as zero, so the
kernel has no symbols.  The recording must still complete, count the
unreadable module, and its kernel frames must say why they have no names."""
import shutil

import helpers as H

KPTR = "/proc/sys/kernel/kptr_restrict"
MARK = "[kernel.kallsyms: no symbols: kallsyms addresses are hidden"


def test_record_with_kptr_restrict_names_why_kernel_frames_are_unnamed():
    H.require_root()
    dd = shutil.which("dd")
    if not dd:
        H.skip("dd (coreutils) is not installed")
    with open(KPTR) as f:
        old = f.read().strip()
    out = H.tmp_path("kptr.msc")
    try:
        with open(KPTR, "w") as f:
            f.write("2\n")
        # dd through 1-byte reads and writes: most of its time is in the kernel
        rec = H.record([dd, "if=/dev/zero", "of=/dev/null", "bs=1", "count=300000"],
                       output=out, timeout=120)
    finally:
        with open(KPTR, "w") as f:
            f.write(old + "\n")
    with open(KPTR) as f:
        assert f.read().strip() == old, "kernel.kptr_restrict not restored"
    assert rec.returncode == 0
    prof = H.folded(out)
    n = H.total(prof)
    assert n > 0, "the capture has no samples"
    kernel = {st: c for st, c in prof.items() if any(f.startswith(MARK) for f in st)}
    k = sum(kernel.values())
    H.log("%d samples, %d with kernel frames under the no-symbols mark" % (n, k))
    assert k >= n * 0.3, "only %d of %d samples have the kernel mark:\n%s" % (
        k, n, H.show_stacks(prof))
    named = [f for st in kernel for f in st[st.index(next(x for x in st if x.startswith(MARK))) + 1:]
             if not f.startswith("[kernel.kallsyms]+0x")]
    assert not named, "kernel frames with names although kallsyms was hidden: %s" % named[:5]
    report = H.report(out).stdout
    assert "processor.module_unreadable 1" in report, report[:1500]
