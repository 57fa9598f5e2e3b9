#!/usr/bin/env bash
# vmtest/run.sh — run one command under each kernel of a matrix, in qemu.
#
#   vmtest/run.sh [--kernels "6.1 6.12"] [--timeout SEC] [--keep-logs] -- COMMAND...
#
# For each kernel: resolve the newest Debian linux-image-<series>.*-cloud-amd64
# package, fetch it with `apt-get download` into the cache (never installed),
# unpack it with `dpkg -x`, run `depmod`, build a busybox initramfs
# (vmtest/init.sh is its /init), and boot it under qemu TCG with the host's
# root file system shared read-only over virtio-fs and a tmpfs overlay on top.
# COMMAND runs as root in the guest, chrooted into that overlay, in the current
# directory's path. Its stdout and stderr are streamed back over serial ports;
# its exit status comes back over a third. A kernel whose guest panics, hangs or
# outlives --timeout is killed and reported, never left running.
#
# Prints a summary table (kernel, result, exit status, tests, seconds) and exits
# 0 only if COMMAND exited 0 under every kernel; 1 if any kernel failed; 2 on a
# usage or setup error. Docs: docs/vmtest.md.
#
# Environment:
#   VMTEST_CACHE        cache of .debs, unpacked kernels, logs
#                       (default /var/cache/microscope-vmtest)
#   VMTEST_KERNELS      default for --kernels (default "6.1 6.12")
#   VMTEST_TIMEOUT      default for --timeout, seconds per kernel (default 600)
#   VMTEST_FLAVOUR      Debian kernel flavour (default cloud-amd64)
#   VMTEST_MODULES      modules loaded before the root is mounted
#                       (default "virtio_pci fuse virtiofs overlay")
#   VMTEST_APPEND       extra kernel command line
#   VMTEST_ACCEL, VMTEST_CPU, VMTEST_SMP, VMTEST_MEM
#                       qemu settings (default tcg,thread=multi / max / 2 / 2G)
#   VMTEST_PASSENV      names of extra variables passed into the guest command
#   VMTEST_APT_SOURCES  a sources.list file with extra archives (e.g. backports),
#                       used through a throwaway apt configuration in the cache
#   VIRTIOFSD           path of virtiofsd (default: searched)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KERNELS=${VMTEST_KERNELS:-6.1 6.12}
TIMEOUT=${VMTEST_TIMEOUT:-600}
CACHE=${VMTEST_CACHE:-/var/cache/microscope-vmtest}
FLAVOUR=${VMTEST_FLAVOUR:-cloud-amd64}
MODULES=${VMTEST_MODULES:-virtio_pci fuse virtiofs overlay}
ACCEL=${VMTEST_ACCEL:-tcg,thread=multi}
CPU=${VMTEST_CPU:-max}
SMP=${VMTEST_SMP:-2}
MEM=${VMTEST_MEM:-2G}
KEEP_LOGS=0

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}
say() { printf 'vmtest: %s\n' "$*" >&2; }
die() {
	say "error: $*"
	exit 2
}

while (($#)); do
	case $1 in
	--kernels) KERNELS=${2:?--kernels needs a value}; shift 2 ;;
	--kernels=*) KERNELS=${1#*=}; shift ;;
	--timeout) TIMEOUT=${2:?--timeout needs a value}; shift 2 ;;
	--timeout=*) TIMEOUT=${1#*=}; shift ;;
	--keep-logs) KEEP_LOGS=1; shift ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	*) say "unknown argument: $1"; usage 2 ;;
	esac
done
(($#)) || { say "no command given"; usage 2; }
if ! [[ $TIMEOUT =~ ^[0-9]+$ ]] || ((TIMEOUT == 0)); then
	die "--timeout must be a positive number of seconds"
fi
read -ra KERNEL_LIST <<<"$KERNELS"
((${#KERNEL_LIST[@]})) || die "no kernels given"

# ---------------------------------------------------------------- host tools
VIRTIOFSD=${VIRTIOFSD:-}
find_virtiofsd() {
	local c
	for c in "$VIRTIOFSD" /usr/libexec/virtiofsd /usr/lib/qemu/virtiofsd \
		"$(command -v virtiofsd 2>/dev/null || true)"; do
		[[ -n $c && -x $c ]] && { VIRTIOFSD=$c; return 0; }
	done
	return 1
}

ensure_tools() {
	local missing=() t
	for t in qemu-system-x86_64 cpio depmod modprobe xz zstd dpkg apt-get unshare flock timeout; do
		command -v "$t" >/dev/null 2>&1 || missing+=("$t")
	done
	find_virtiofsd || missing+=(virtiofsd)
	((${#missing[@]})) || return 0
	((EUID == 0)) || die "missing ${missing[*]}; install: apt-get install qemu-system-x86 cpio kmod xz-utils zstd"
	say "installing host tools (missing: ${missing[*]})"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		qemu-system-x86 cpio kmod xz-utils zstd util-linux coreutils >&2 ||
		{ apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends qemu-system-x86 cpio kmod xz-utils zstd >&2; } ||
		die "could not install host tools"
	find_virtiofsd || die "virtiofsd not found after installing qemu-system-x86"
}

# ---------------------------------------------------------------- apt
# All apt calls go through these, so an optional throwaway configuration
# (VMTEST_APT_SOURCES) applies everywhere and the host's sources stay untouched.
APT_OPTS=()
APT_UPDATED=0
setup_apt() {
	[[ -n ${VMTEST_APT_SOURCES:-} ]] || return 0
	[[ -r $VMTEST_APT_SOURCES ]] || die "VMTEST_APT_SOURCES=$VMTEST_APT_SOURCES is not readable"
	local a=$CACHE/apt
	mkdir -p "$a/lists/partial" "$a/archives/partial"
	{
		[[ -r /etc/apt/sources.list ]] && cat /etc/apt/sources.list
		cat "$VMTEST_APT_SOURCES"
	} >"$a/sources.list"
	APT_OPTS=(-o "Dir::Etc::sourcelist=$a/sources.list" -o "Dir::State::lists=$a/lists"
		-o "Dir::Cache::archives=$a/archives" -o "Dir::Cache::pkgcache=$a/pkgcache.bin"
		-o "Dir::Cache::srcpkgcache=$a/srcpkgcache.bin")
	# Refresh the throwaway lists at most once a day.
	if [[ -z $(find "$a/lists" -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1) ]]; then
		apt_update
	fi
}
apt_update() {
	((APT_UPDATED == 0)) || return 0
	APT_UPDATED=1
	((EUID == 0)) || { say "not root: cannot run apt-get update"; return 0; }
	say "apt-get update"
	apt-get "${APT_OPTS[@]}" update -q >&2 || say "apt-get update failed; using the lists as they are"
}
apt_candidate() { # PACKAGE -> candidate version, or nothing
	apt-cache "${APT_OPTS[@]}" policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}
apt_fetch() { # PACKAGE DIR -> path of the downloaded .deb on stdout
	local pkg=$1 dir=$2 tmp deb
	tmp=$(mktemp -d "$dir/.dl.XXXXXX")
	# apt drops privileges to _apt for downloads; let it write here.
	if id _apt >/dev/null 2>&1; then chown _apt "$tmp" 2>/dev/null || true; fi
	(cd "$tmp" && apt-get "${APT_OPTS[@]}" download -q "$pkg" >&2) || {
		rm -rf "$tmp"
		return 1
	}
	deb=$(find "$tmp" -maxdepth 1 -name '*.deb' | head -1)
	[[ -n $deb ]] || { rm -rf "$tmp"; return 1; }
	mv "$deb" "$dir/" && rm -rf "$tmp"
	printf '%s\n' "$dir/$(basename "$deb")"
}

# ---------------------------------------------------------------- kernels
# resolve_kernel SPEC -> "PACKAGE VERSION". SPEC is a series ("6.1": the
# newest linux-image-6.1.*-FLAVOUR) or an exact kernel release
# ("6.1.0-47-cloud-amd64"). apt-cache is slow here (it rebuilds its cache from
# the lists on every call), so the package names are listed once.
apt_lists_stamp() { # newest modification time among apt's lists
	local lists=/var/lib/apt/lists
	[[ -n ${VMTEST_APT_SOURCES:-} ]] && lists=$CACHE/apt/lists
	find "$lists" -maxdepth 1 -type f -name '*_dists_*' -printf '%T@\n' 2>/dev/null | sort -n | tail -1
}
KNOWN_IMAGES=
load_known_images() { # in the main shell, so the list and APT_UPDATED stick
	local try spec stamp all=1
	# Nothing to list when every kernel is remembered for these lists.
	stamp=$(apt_lists_stamp)
	for spec in "${KERNEL_LIST[@]}"; do
		grep -qs "^$stamp " "$CACHE/resolved/$spec-$FLAVOUR" || all=0
	done
	[[ -n $stamp ]] && ((all)) && return 0
	for try in 1 2; do
		KNOWN_IMAGES=$(apt-cache "${APT_OPTS[@]}" search --names-only "^linux-image-.*-${FLAVOUR}\$" \
			2>/dev/null | awk '{print $1}' | sort -uV)
		[[ -n $KNOWN_IMAGES ]] && return 0
		((try == 1)) && apt_update
	done
}
resolve_kernel() {
	local spec=$1 pkg ver memo stamp line
	# Remembered per state of apt's lists: apt-cache takes seconds per call.
	memo=$CACHE/resolved/$spec-$FLAVOUR
	stamp=$(apt_lists_stamp)
	if [[ -n $stamp && -r $memo ]] && read -r line <"$memo" && [[ $line == "$stamp "* ]]; then
		printf '%s\n' "${line#"$stamp" }"
		return 0
	fi
	[[ -n $KNOWN_IMAGES ]] || return 1
	if [[ $spec =~ ^[0-9]+\.[0-9]+$ ]]; then
		pkg=$(grep -E "^linux-image-${spec//./\\.}\\.[0-9][^ ]*-${FLAVOUR}\$" <<<"$KNOWN_IMAGES" | tail -1)
	else
		spec=${spec#linux-image-}
		pkg=$(grep -Fx "linux-image-$spec" <<<"$KNOWN_IMAGES")
	fi
	[[ -n $pkg ]] || return 1
	ver=$(apt_candidate "$pkg")
	[[ -n $ver ]] || return 1
	if [[ -n $stamp ]]; then
		mkdir -p "$CACHE/resolved" && printf '%s %s %s\n' "$stamp" "$pkg" "$ver" >"$memo.tmp" &&
			mv "$memo.tmp" "$memo"
	fi
	printf '%s %s\n' "$pkg" "$ver"
}

# fetch_kernel SPEC: sets KDIR (unpacked package), KVER (its uname -r), VMLINUZ.
# Reuses the cache; falls back to the newest cached kernel of the series when
# apt cannot resolve it (offline).
fetch_kernel() {
	local spec=$1 pkg ver dir deb
	local r
	if r=$(resolve_kernel "$spec"); then
		read -r pkg ver <<<"$r"
		dir=$CACHE/kernels/${pkg}_${ver}
		if [[ ! -f $dir/.ready ]]; then
			say "fetching $pkg $ver"
			deb=$(apt_fetch "$pkg" "$CACHE/debs") || die "apt-get download $pkg failed"
			rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
			dpkg -x "$deb" "$dir.tmp" || die "dpkg -x $deb failed"
			rm -rf "$dir" && mv "$dir.tmp" "$dir"
		fi
	else
		dir=$(find "$CACHE/kernels" -mindepth 1 -maxdepth 1 -type d \
			-name "linux-image-${spec}*-${FLAVOUR}_*" 2>/dev/null | sort -V | tail -1)
		[[ -n $dir && -d $dir/lib/modules ]] ||
			die "no package linux-image-${spec}*-${FLAVOUR} known to apt and none cached" \
				"(run apt-get update; for a series outside the host's sources see VMTEST_APT_SOURCES)"
		say "apt cannot resolve $spec; using cached $(basename "$dir")"
	fi
	KVER=$(find "$dir/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -1)
	[[ -n $KVER ]] || die "$dir has no lib/modules/<version>"
	if [[ ! -f $dir/.ready ]]; then
		# The .deb ships no modules.dep; build it where modprobe -d will look.
		depmod -b "$dir" "$KVER" || die "depmod failed for $KVER"
		touch "$dir/.ready"
	fi
	KDIR=$dir
	VMLINUZ=$dir/boot/vmlinuz-$KVER
	[[ -r $VMLINUZ ]] || die "no $VMLINUZ"
}

BUSYBOX=
fetch_busybox() {
	local dir=$CACHE/busybox deb
	if [[ ! -x $dir/bin/busybox ]]; then
		say "fetching busybox-static"
		deb=$(apt_fetch busybox-static "$CACHE/debs") || die "apt-get download busybox-static failed"
		if ! { rm -rf "$dir.tmp" && mkdir -p "$dir.tmp" && dpkg -x "$deb" "$dir.tmp" &&
			rm -rf "$dir" && mv "$dir.tmp" "$dir"; }; then
			die "unpacking busybox-static failed"
		fi
	fi
	BUSYBOX=$dir/bin/busybox
}

# ---------------------------------------------------------------- initramfs
# build_initramfs OUT DIR: the busybox /init, the modules MODULES need (in
# dependency order, decompressed: busybox insmod reads only plain .ko), and
# this run's command.
build_initramfs() {
	local out=$1 stage=$2 m line path name
	mkdir -p "$stage/bin" "$stage/vmtest/modules"
	cp "$BUSYBOX" "$stage/bin/busybox"
	cp "$HERE/init.sh" "$stage/init"
	chmod 0755 "$stage/init" "$stage/bin/busybox"
	: >"$stage/vmtest/modules.list"
	local -A seen=()
	for m in $MODULES; do
		local deps
		deps=$(modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" 2>&1) ||
			die "module $m not found for $KVER: $deps"
		while read -r line; do
			[[ $line == insmod\ * ]] || continue # "builtin NAME": nothing to load
			path=${line#insmod }
			path=${path%% *}
			name=$(basename "$path")
			name=${name%.xz}
			name=${name%.zst}
			name=${name%.gz}
			[[ -n ${seen[$name]:-} ]] && continue
			seen[$name]=1
			case $path in
			*.ko.xz) xz -dc "$path" >"$stage/vmtest/modules/$name" ;;
			*.ko.zst) zstd -qdc "$path" >"$stage/vmtest/modules/$name" ;;
			*.ko.gz) gzip -dc "$path" >"$stage/vmtest/modules/$name" ;;
			*) cp "$path" "$stage/vmtest/modules/$name" ;;
			esac
			printf '%s\n' "$name" >>"$stage/vmtest/modules.list"
		done <<<"$deps"
	done
	printf 'VMTEST_MODDIR=%q\n' "$KDIR/lib/modules/$KVER" >"$stage/vmtest/env.sh"
	write_cmd "$stage/vmtest/cmd.sh"
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$out" ||
		die "cpio failed"
}

CMD=("$@")
write_cmd() {
	local v
	{
		printf '#!/bin/bash\n'
		printf 'export PATH=%q HOME=%q LANG=C.UTF-8 LC_ALL=C.UTF-8\n' "$PATH" "${HOME:-/root}"
		printf 'export VMTEST=1 VMTEST_KERNEL=%q\n' "$KVER"
		for v in CI TERM ${VMTEST_PASSENV:-}; do
			[[ -n ${!v+x} ]] && printf 'export %s=%q\n' "$v" "${!v}"
		done
		printf 'cd -- %q || exit 125\n' "$PWD"
		printf 'exec'
		printf ' %q' "${CMD[@]}"
		printf '\n'
	} >"$1"
}

# ---------------------------------------------------------------- cleanup
PIDS=()
RUNDIR=
# Every pid in PIDS is an unreaped child of this shell.
alive() { # PID: running, i.e. neither gone nor a zombie
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $st && $st != Z* ]]
}
# shellcheck disable=SC2317 # called from traps
cleanup() {
	local p i
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do
		for ((i = 0; i < 30; i++)); do alive "$p" || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	PIDS=()
}
# shellcheck disable=SC2317 # called from traps
on_exit() {
	cleanup
	if [[ -n $RUNDIR && -d $RUNDIR && $KEEP_LOGS == 0 && ${FAILED:-1} == 0 ]]; then
		rm -rf "$RUNDIR"
	fi
}
trap on_exit EXIT
trap 'say "interrupted"; exit 130' INT
trap 'say "terminated"; exit 143' TERM

# ---------------------------------------------------------------- one kernel
# The share: a read-only bind of / (plus the mounts holding the working
# directory and the cache, if they are separate) made in a private mount
# namespace, so the guest cannot write to the host even through virtio-fs.
share_extras() {
	local p m
	for p in "$PWD" "$CACHE"; do
		m=$(findmnt -n -o TARGET -T "$p" 2>/dev/null || echo /)
		[[ $m != / ]] && printf '%s\n' "$m"
	done | sort -u
}

start_virtiofsd() { # SOCK SHAREDIR LOG
	local sock=$1 share=$2 log=$3 extras
	mkdir -p "$share"
	mapfile -t extras < <(share_extras)
	# shellcheck disable=SC2016
	unshare -m --propagation private -- bash -c '
		set -e
		share=$1 vfsd=$2 sock=$3; shift 3
		mount --bind / "$share"
		mount -o remount,bind,ro "$share"
		for m in "$@"; do
			mount --bind "$m" "$share$m"
			mount -o remount,bind,ro "$share$m"
		done
		exec "$vfsd" --socket-path="$sock" -o source="$share" -o cache=always \
			-o sandbox=chroot -o log_level=warn' \
		_ "$share" "$VIRTIOFSD" "$sock" "${extras[@]}" >"$log" 2>&1 &
	VFS_PID=$!
	PIDS+=("$VFS_PID")
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -S $sock ]] && return 0
		kill -0 "$VFS_PID" 2>/dev/null || break
		sleep 0.1
	done
	say "virtiofsd did not start:"
	sed 's/^/  /' "$log" >&2
	return 1
}

# Results, indexed like KERNEL_LIST.
R_KVER=() R_RESULT=() R_EXIT=() R_TESTS=() R_SECS=() R_NOTE=()

run_kernel() { # INDEX
	local idx=$1 dir t0 t1 rc=0 status result exit_status note="" short=""
	KDIR=${K_DIR[idx]} KVER=${K_VER[idx]} VMLINUZ=${K_VMLINUZ[idx]}
	dir=$RUNDIR/$idx-$KVER
	mkdir -p "$dir"
	build_initramfs "$dir/initramfs.cpio" "$dir/initramfs"
	rm -rf "$dir/initramfs"
	local console=$dir/console.log out=$dir/stdout err=$dir/stderr st=$dir/status
	: >"$console" && : >"$out" && : >"$err" && : >"$st"

	printf '=== vmtest: %s (timeout %ss) ===\n' "$KVER" "$TIMEOUT"
	t0=$(date +%s%N)
	start_virtiofsd "$dir/vfs.sock" "$dir/share" "$dir/virtiofsd.log" || die "virtiofsd failed"

	local append="console=ttyS0 panic=-1 rdinit=/init loglevel=4 ${VMTEST_APPEND:-}"
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
		-nodefaults -no-user-config -nographic -monitor none -no-reboot \
		-accel "$ACCEL" -cpu "$CPU" -smp "$SMP" -m "$MEM" \
		-object "memory-backend-memfd,id=mem,size=$MEM,share=on" -numa node,memdev=mem \
		-chardev "socket,id=vfs,path=$dir/vfs.sock" \
		-device vhost-user-fs-pci,chardev=vfs,tag=hostroot \
		-kernel "$VMLINUZ" -initrd "$dir/initramfs.cpio" -append "$append" \
		-serial "file:$console" -serial "file:$out" -serial "file:$err" -serial "file:$st" \
		</dev/null >"$dir/qemu.log" 2>&1 &
	local qpid=$!
	PIDS+=("$qpid")
	# Stream the guest's output as it arrives; tail exits once qemu has.
	tail -n +1 -f --pid="$qpid" "$out" &
	local tout=$!
	tail -n +1 -f --pid="$qpid" "$err" >&2 &
	local terr=$!
	PIDS+=("$tout" "$terr")
	wait "$qpid" || rc=$?
	wait "$tout" "$terr" 2>/dev/null || true
	t1=$(date +%s%N)
	# Keep the next header on a line of its own.
	[[ -s $out && $(tail -c 1 "$out" | od -An -c | tr -d ' ') != '\n' ]] && echo
	PIDS=("$VFS_PID") # the rest are reaped
	cleanup
	rm -f "$dir/initramfs.cpio"

	status=$(tr -d '\r\0' <"$st" | head -1)
	# timeout(1) exits 124, or 137 when it had to KILL; a KILL from elsewhere
	# (the OOM killer) also gives 137, but sooner.
	if [[ $rc == 124 ]] || [[ $rc == 137 ]] && (((t1 - t0) / 1000000000 >= TIMEOUT)); then
		result=TIMEOUT exit_status=-
		note="killed after ${TIMEOUT}s" short="killed after ${TIMEOUT}s"
	elif [[ $status =~ ^rc=([0-9]+)$ ]]; then
		exit_status=${BASH_REMATCH[1]}
		if ((exit_status == 0)); then result=PASS; else result=FAIL note="exit status $exit_status"; fi
	elif [[ $status == init-error:* ]]; then
		result=FAIL exit_status=-
		note="guest $status" short="init failed"
	else
		result=FAIL exit_status=-
		if grep -q 'Kernel panic' "$console"; then
			note="kernel panic: $(grep -m1 'Kernel panic' "$console" | tr -d '\r')" short="kernel panic"
		else
			note="guest ended without an exit status (qemu status $rc)" short="no exit status"
		fi
	fi
	if [[ $result != PASS ]]; then
		say "$KVER: $result${note:+ — $note}"
		if [[ $exit_status == - ]]; then
			say "last lines of the guest console ($console):"
			tail -n 25 "$console" | tr -d '\r' | sed 's/^/  | /' >&2
			[[ -s $dir/qemu.log ]] && sed 's/^/  qemu: /' "$dir/qemu.log" >&2
		fi
	fi
	# A closing "N passed, N failed[, N skipped]" line from a test runner.
	local tests
	tests=$(tr -d '\r' <"$out" | grep -E '^([A-Za-z]+: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' |
		tail -1 | sed -E 's/^[A-Za-z]+: //') || true
	R_KVER[idx]=$KVER R_RESULT[idx]=$result R_EXIT[idx]=$exit_status
	R_TESTS[idx]=${tests:--} R_NOTE[idx]=$short R_SECS[idx]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
}

# ---------------------------------------------------------------- main
((EUID == 0)) || die "must run as root (virtiofsd, the read-only bind mount of /, apt-get download)"
ensure_tools
mkdir -p "$CACHE/debs" "$CACHE/kernels" "$CACHE/runs"
# Fetching and unpacking write the shared cache: one run at a time does it.
exec 9>"$CACHE/.lock"
flock 9
setup_apt
fetch_busybox
load_known_images
K_DIR=() K_VER=() K_VMLINUZ=()
for i in "${!KERNEL_LIST[@]}"; do
	fetch_kernel "${KERNEL_LIST[$i]}"
	K_DIR[i]=$KDIR K_VER[i]=$KVER K_VMLINUZ[i]=$VMLINUZ
done
flock -u 9

# Keep the logs of the last few runs only.
find "$CACHE/runs" -mindepth 1 -maxdepth 1 -type d -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
RUNDIR=$(mktemp -d "$CACHE/runs/$(date +%Y%m%d-%H%M%S).XXXX")
FAILED=0
for i in "${!KERNEL_LIST[@]}"; do
	run_kernel "$i"
	[[ ${R_RESULT[$i]} == PASS ]] || FAILED=1
done

printf '\n%-28s %-8s %-5s %-30s %8s  %s\n' kernel result exit tests seconds note
for i in "${!KERNEL_LIST[@]}"; do
	printf '%-28s %-8s %-5s %-30s %8s  %s\n' "${R_KVER[$i]}" "${R_RESULT[$i]}" "${R_EXIT[$i]}" \
		"${R_TESTS[$i]}" "${R_SECS[$i]}" "${R_NOTE[$i]}"
done
# One closing line for CI, counting kernels.
npass=0
for r in "${R_RESULT[@]}"; do [[ $r == PASS ]] && npass=$((npass + 1)); done
printf 'kernels: %d passed, %d failed\n' "$npass" $((${#R_RESULT[@]} - npass))
if ((FAILED)); then
	say "logs: $RUNDIR"
	exit 1
fi
exit 0
