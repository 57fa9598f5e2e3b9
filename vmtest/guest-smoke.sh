#!/usr/bin/env bash
# vmtest/guest-smoke.sh [BUILD_DIR] — structural checks of one guest kernel.
#
# Meant to run inside a vmtest guest (vmtest/run.sh -- vmtest/guest-smoke.sh),
# as root, from the repository root; it also runs on the host. Checks only
# what must hold on every supported kernel — no ratio or timing assertions:
#   * the kernel has BTF at /sys/kernel/btf/vmlinux (CO-RE needs it);
#   * a CO-RE object with a perf_event program and a tp_btf/sched_switch
#     program, compiled here with clang, passes the verifier (bpftool loadall)
#     and is unloaded again;
#   * if BUILD_DIR/microscope and BUILD_DIR/fixtures/ratio exist: a recording of
#     ratio ends with status 0, and its report names main.
# Prints "ok|FAIL|skip NAME" per check and closes with
# "smoke: N passed, N failed, N skipped". Exits 1 if any check failed.
set -uo pipefail

BUILD=${1:-build}
STEP_TIMEOUT=${VMTEST_STEP_TIMEOUT:-300}
PASSED=0 FAILED=0 SKIPPED=0
TMP=$(mktemp -d /tmp/vmtest-smoke.XXXXXX)
PIN=/sys/fs/bpf/vmtest_smoke_$$
trap 'rm -rf "$TMP" "$PIN" 2>/dev/null' EXIT

ok() { echo "ok   $1"; PASSED=$((PASSED + 1)); }
fail() {
	echo "FAIL $1${2:+: $2}"
	FAILED=$((FAILED + 1))
}
skip() { echo "skip $1: $2"; SKIPPED=$((SKIPPED + 1)); }
# run NAME CMD...: a check that passes when CMD exits 0 within STEP_TIMEOUT;
# its output is shown only when it fails.
run() {
	local name=$1 rc=0
	shift
	timeout -k 5 "$STEP_TIMEOUT" "$@" >"$TMP/out" 2>&1 || rc=$?
	if ((rc == 0)); then
		ok "$name"
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

# A CO-RE object: task_struct->tgid is relocated against this kernel's BTF.
cat >"$TMP/smoke.bpf.c" <<'EOF'
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task_struct { int tgid; } __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps");

SEC("perf_event")
int smoke_sample(void *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &key);

	if (v)
		*v += (__u64)BPF_CORE_READ(task, tgid) | 1;
	return 0;
}

SEC("tp_btf/sched_switch")
int smoke_switch(__u64 *ctx)
{
	__u32 key = 0;
	__u64 *v = bpf_map_lookup_elem(&hits, &key);

	if (v)
		*v += 1;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
EOF
if ! command -v clang >/dev/null || ! command -v bpftool >/dev/null; then
	skip bpf-core-load "clang or bpftool missing"
elif run bpf-compile clang -g -O2 -target bpf -I/usr/include/x86_64-linux-gnu \
	-c "$TMP/smoke.bpf.c" -o "$TMP/smoke.bpf.o"; then
	if run bpf-core-load bpftool prog loadall "$TMP/smoke.bpf.o" "$PIN"; then
		for p in smoke_sample smoke_switch; do
			run "bpf-pinned-$p" bpftool prog show pinned "$PIN/$p" || true
		done
		rm -rf "$PIN"
		# Unpinned and unreferenced: the programs must go away.
		gone=0
		for _ in $(seq 50); do
			bpftool prog show 2>/dev/null | grep -q 'smoke_' || { gone=1; break; }
			sleep 0.1
		done
		if ((gone)); then ok bpf-unload; else fail bpf-unload "smoke_ programs still loaded"; fi
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
