#!/usr/bin/env bash
# vmtest/matrix.sh [--kernels "6.1 6.12"] [--timeout SEC] [BUILD_DIR]
#
# The kernel matrix: boots each kernel with vmtest/run.sh and runs, inside it,
# from the repository root:
#   1. vmtest/guest-smoke.sh BUILD_DIR — BTF present, a CO-RE perf_event and a
#      tp_btf program pass the verifier, a short recording if BUILD_DIR has one;
#   2. tests/run.py --e2e -k vmtest BUILD_DIR — the structural end-to-end tests
#      (names containing "vmtest"), when any exist.
# Inside the guest it closes with "matrix: N passed, N failed, N skipped"
# (both parts added up), which run.sh's summary table shows per kernel.
# BUILD_DIR (default build) must already be built on the host (`make all`).
# Exits as run.sh does: 0 when every kernel passed.
#
# Environment: as run.sh, plus VMTEST_TEST_TIMEOUT (seconds per e2e test,
# default 300) and PYTHON (default /usr/bin/python3).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ORIG=$PWD
cd "$REPO"

if [[ ${1:-} == --in-guest ]]; then
	BUILD=${2:-build}
	PYTHON=${PYTHON:-/usr/bin/python3}
	LOG=$(mktemp -d /tmp/vmtest-matrix.XXXXXX)
	trap 'rm -rf "$LOG"' EXIT
	rc=0
	vmtest/guest-smoke.sh "$BUILD" | tee "$LOG/smoke" || rc=1
	if grep -qsE '^def test_[A-Za-z0-9_]*vmtest' tests/e2e/test_*.py; then
		"$PYTHON" tests/run.py --e2e -k vmtest --timeout "${VMTEST_TEST_TIMEOUT:-300}" "$BUILD" |
			tee "$LOG/e2e" || rc=1
	else
		echo "e2e: no tests named *vmtest* in tests/e2e yet"
	fi
	# Add up the closing "N passed, N failed, N skipped" lines.
	cat "$LOG"/* | sed -nE 's/^([a-z0-9]+: )?([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$/\2 \3 \5/p' |
		awk '{ p += $1; f += $2; s += $3 } END { printf "matrix: %d passed, %d failed, %d skipped\n", p, f, s }'
	exit "$rc"
fi

ARGS=()
BUILD=build
while (($#)); do
	case $1 in
	--kernels | --timeout) ARGS+=("$1" "${2:?$1 needs a value}"); shift 2 ;;
	--kernels=* | --timeout=* | --keep-logs) ARGS+=("$1"); shift ;;
	-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
	-*) echo "matrix.sh: unknown option $1" >&2; exit 2 ;;
	*) BUILD=$1; shift ;;
	esac
done
# BUILD_DIR is relative to where matrix.sh was started; the guest runs in REPO.
[[ $BUILD == /* ]] || BUILD=$(realpath -m "$ORIG/$BUILD")
[[ -d $BUILD ]] || echo "matrix.sh: warning: $BUILD does not exist; only the kernel checks will run" >&2

# clang takes tens of seconds under emulation: build the smoke object here,
# somewhere the guest sees (the cache is shared with it).
CACHE=${VMTEST_CACHE:-/var/cache/microscope-vmtest}
mkdir -p "$CACHE/smoke"
OBJ=$(mktemp "$CACHE/smoke/smoke.XXXXXX.bpf.o")
trap 'rm -f "$OBJ"' EXIT
${CLANG:-clang} -g -O2 -target bpf -I/usr/include/x86_64-linux-gnu -c vmtest/smoke.bpf.c -o "$OBJ"
export VMTEST_SMOKE_OBJ=$OBJ
export VMTEST_PASSENV="${VMTEST_PASSENV:-} VMTEST_SMOKE_OBJ"
vmtest/run.sh "${ARGS[@]}" -- vmtest/matrix.sh --in-guest "$BUILD"
