#!/usr/bin/env bash
# vmtest/guest-smoke.sh [BUILD_DIR] — structural checks of one guest kernel.
#
# Meant to run inside a vmtest guest (vmtest/run.sh -- vmtest/guest-smoke.sh),
# as root, from the repository root; it also runs on the host. Checks only
# what must hold on every supported kernel — no ratio or timing assertions:
#   * the kernel has BTF at /sys/kernel/btf/vmlinux (CO-RE needs it);
#   * vmtest/smoke.bpf.c: a CO-RE perf_event program and a tp_btf/sched_switch
#     program pass the verifier (bpftool prog loadall) and unload again;
#   * if BUILD_DIR/microscope and BUILD_DIR/fixtures/ratio exist: a recording of
#     ratio ends with status 0, and its report names main.
# Prints "ok|FAIL|skip NAME" per check and closes with
# "smoke: N passed, N failed, N skipped". Exits 1 if any check failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${1:-build}
STEP_TIMEOUT=${VMTEST_STEP_TIMEOUT:-300}
PASSED=0 FAILED=0 SKIPPED=0
TMP=$(mktemp -d /tmp/vmtest-smoke.XXXXXX)
PIN=/sys/fs/bpf/vmtest_smoke_$$
trap 'rm -rf "$TMP" "$PIN" 2>/dev/null' EXIT

ok() { echo "ok   $1"; PASSED=$((PASSED + 1)); }
now() { date +%s%N; }
secs() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1fs", (b - a) / 1e9 }'; }
fail() {
	echo "FAIL $1${2:+: $2}"
	FAILED=$((FAILED + 1))
}
skip() { echo "skip $1: $2"; SKIPPED=$((SKIPPED + 1)); }
# run NAME CMD...: a check that passes when CMD exits 0 within STEP_TIMEOUT;
# its output is shown only when it fails.
run() {
	local name=$1 rc=0 t0
	shift
	t0=$(now)
	timeout -k 5 "$STEP_TIMEOUT" "$@" >"$TMP/out" 2>&1 || rc=$?
	if ((rc == 0)); then
		ok "$name ($(secs "$t0"))"
	else
		local why="exit status $rc"
		((rc == 124)) && why+=" (timed out after ${STEP_TIMEOUT}s)"
		fail "$name" "$why"
		sed 's/^/     | /' "$TMP/out" | tail -n 40
	fi
	return "$rc"
}

echo "kernel $(uname -r)"

if [[ -r /sys/kernel/btf/vmlinux ]]; then
	ok "btf-vmlinux ($(stat -c %s /sys/kernel/btf/vmlinux) bytes)"
else
	fail btf-vmlinux "/sys/kernel/btf/vmlinux missing"
fi

# vmtest/smoke.bpf.c, compiled on the host by matrix.sh (VMTEST_SMOKE_OBJ)
# because clang is slow under emulation; compiled here otherwise.
OBJ=${VMTEST_SMOKE_OBJ:-}
if ! command -v bpftool >/dev/null; then
	skip bpf-core-load "bpftool missing"
elif [[ -z $OBJ || ! -r $OBJ ]] && ! command -v clang >/dev/null; then
	skip bpf-core-load "clang missing"
elif [[ -n $OBJ && -r $OBJ ]] || {
	OBJ=$TMP/smoke.bpf.o
	run bpf-compile clang -g -O2 -target bpf -I/usr/include/x86_64-linux-gnu \
		-c "$HERE/smoke.bpf.c" -o "$OBJ"
}; then
	if run bpf-core-load bpftool prog loadall "$OBJ" "$PIN"; then
		for p in smoke_sample smoke_switch; do
			run "bpf-pinned-$p" bpftool prog show pinned "$PIN/$p" || true
		done
		rm -rf "$PIN"
		# Unpinned and unreferenced: the programs must go away.
		gone=0 t0=$(now)
		for _ in $(seq 100); do
			bpftool prog show 2>/dev/null | grep -q 'smoke_' || { gone=1; break; }
			sleep 0.1
		done
		if ((gone)); then
			ok "bpf-unload ($(secs "$t0"))"
		else
			fail bpf-unload "smoke_ programs still loaded after $(secs "$t0")"
		fi
	fi
fi

if [[ -x $BUILD/microscope && -x $BUILD/fixtures/ratio ]]; then
	# Short run: emulation is ~10x slower than the host.
	if run microscope-record env MS_FIXTURE_SCALE="${MS_FIXTURE_SCALE:-0.1}" \
		"$BUILD/microscope" record -o "$TMP/x.msc" -- "$BUILD/fixtures/ratio"; then
		if run microscope-report "$BUILD/microscope" report "$TMP/x.msc"; then
			head -n 20 "$TMP/out"
			if grep -qw main "$TMP/out"; then ok report-names-main; else fail report-names-main; fi
		fi
	fi
else
	skip microscope-record "$BUILD/microscope or $BUILD/fixtures/ratio not built"
fi

echo "smoke: $PASSED passed, $FAILED failed, $SKIPPED skipped"
((FAILED == 0))
