#!/bin/busybox sh
# shellcheck shell=dash
# PID 1 of the vmtest guest (busybox initramfs built by vmtest/run.sh).
#
# Loads the modules listed in /vmtest/modules.list, mounts the host's root
# (shared read-only over virtio-fs, tag "hostroot") under a tmpfs overlay,
# mounts the kernel's pseudo file systems, chroots into it and runs
# /vmtest/cmd.sh (written by run.sh for this run) with
#   stdout -> /dev/ttyS1, stderr -> /dev/ttyS2  (raw mode: bytes pass unchanged)
# then writes "rc=N" (or "init-error: WHY") to /dev/ttyS3 and powers off.
# /dev/ttyS0 is the kernel console; everything this script logs goes there.
# Nothing here may block forever: the host's per-kernel timeout is the backstop.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /lower /rw /newroot
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

log() {
	local up
	read -r up _ </proc/uptime
	echo "vmtest-init: [$up] $*" >/dev/console
}

status() {
	# The status port is read by the host only after qemu exits; one line.
	echo "$*" >/dev/ttyS3
}

die() {
	log "FATAL: $*"
	status "init-error: $*"
	sync
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
}

for p in /dev/ttyS1 /dev/ttyS2 /dev/ttyS3; do
	[ -c "$p" ] || die "serial port $p missing (need 4 UARTs)"
	stty -F "$p" raw -echo || die "stty $p"
done

while read -r m; do
	[ -n "$m" ] || continue
	insmod "/vmtest/modules/$m" || die "insmod $m"
done </vmtest/modules.list

mount -t virtiofs -o ro hostroot /lower || die "mount virtiofs hostroot"
mount -t tmpfs -o mode=0755 tmpfs /rw || die "mount tmpfs /rw"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot ||
	die "mount overlay"

R=/newroot
for d in proc sys dev run tmp; do mkdir -p "$R/$d"; done
mount -t proc proc "$R/proc" || die "mount proc"
mount -t sysfs sysfs "$R/sys" || die "mount sysfs"
mount -t devtmpfs devtmpfs "$R/dev" || die "mount devtmpfs"
mkdir -p "$R/dev/pts" "$R/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts" || log "devpts failed"
mount -t tmpfs tmpfs "$R/dev/shm" || log "/dev/shm failed"
mount -t tmpfs -o mode=0755 tmpfs "$R/run" || die "mount /run"
mount -t debugfs debugfs "$R/sys/kernel/debug" || log "debugfs failed"
if [ -d "$R/sys/kernel/tracing" ]; then
	mount -t tracefs tracefs "$R/sys/kernel/tracing" || log "tracefs failed"
fi
mount -t bpf bpf "$R/sys/fs/bpf" || die "mount bpffs"
mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup" || log "cgroup2 failed"

# The guest kernel's own modules (visible read-only through the share) in the
# place modprobe looks, so commands can load more of them.
# shellcheck source=/dev/null
. /vmtest/env.sh
if [ -n "$VMTEST_MODDIR" ] && [ -d "$R$VMTEST_MODDIR" ]; then
	if ! { mkdir -p "$R/lib/modules/$(uname -r)" &&
		mount -o bind "$R$VMTEST_MODDIR" "$R/lib/modules/$(uname -r)"; }; then
		log "binding guest modules failed"
	fi
fi

ifconfig lo 127.0.0.1 up 2>/dev/null || log "lo up failed"
hostname vmtest

mkdir -p "$R/run/vmtest"
cp /vmtest/cmd.sh "$R/run/vmtest/cmd.sh" || die "copy cmd.sh"
log "running command on $(uname -r)"

chroot "$R" /bin/bash /run/vmtest/cmd.sh </dev/null >/dev/ttyS1 2>/dev/ttyS2
rc=$?
log "command exited with status $rc"

# Reopening and closing each port waits until its transmit buffer has drained
# (tty closing_wait), so no output is lost to the poweroff below.
stty -F /dev/ttyS1 raw
stty -F /dev/ttyS2 raw
log "drained"
status "rc=$rc"
log "status sent"
sync
log "synced"
poweroff -f
sleep 5
echo o >/proc/sysrq-trigger
