#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Boot systemd (Debian bookworm, built with debootstrap) in systemd-nspawn and
# run contrib/microscope.service under it, for a host whose PID 1 is not
# systemd (this project's CI machines).  `make unit-check` runs it; it needs
# root, network access to the Debian archive the first time (about 90 s) and
# the packages debootstrap and systemd-container.
#
# What it checks, under the unit's own [Service] settings (DynamicUser, its
# capabilities, its hardening):
#   - a probe service with those settings holds exactly the unit's ambient
#     capabilities, reads /proc/kallsyms with real addresses and another
#     process's maps, and cannot write /etc or /proc/sys;
#   - microscope.service itself refuses to record (status 2, no restart
#     loop): nspawn always gives the container a pid namespace of its own, in
#     which a recorder cannot name what the kernel samples.
# Recording under the unit on a systemd host is not covered here.
set -eu

BIN=${1:?usage: systemd_unit_nspawn.sh BUILD/microscope [ROOTFS]}
ROOT=${2:-/var/lib/machines/microscope-unit-check}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
UNIT="$REPO/contrib/microscope.service"

for tool in debootstrap systemd-nspawn; do
	command -v $tool >/dev/null || {
		echo "systemd_unit_nspawn: $tool is missing (apt-get install debootstrap systemd-container)" >&2
		exit 77
	}
done
if [ ! -x "$ROOT/usr/lib/systemd/systemd" ]; then
	mkdir -p "$(dirname "$ROOT")"
	debootstrap --variant=minbase --include=systemd,systemd-sysv,dbus \
		bookworm "$ROOT" http://deb.debian.org/debian >"$ROOT.log" 2>&1 || {
		echo "systemd_unit_nspawn: debootstrap failed, see $ROOT.log" >&2
		exit 1
	}
fi
# the binary's libraries, from the host (same Debian release)
mkdir -p "$ROOT/usr/local/bin" "$ROOT/usr/local/lib"
cp "$BIN" "$ROOT/usr/local/bin/microscope"
ldd "$BIN" | awk '$3 ~ /^\// { print $3 }' | while read -r lib; do
	[ -e "$ROOT$lib" ] || cp -L "$lib" "$ROOT/usr/local/lib/"
done
echo /usr/local/lib >"$ROOT/etc/ld.so.conf.d/local.conf"
chroot "$ROOT" ldconfig

SYS="$ROOT/etc/systemd/system"
WANTS="$SYS/multi-user.target.wants"
mkdir -p "$WANTS"
cp "$UNIT" "$SYS/microscope.service"
ln -sf /etc/systemd/system/microscope.service "$WANTS/microscope.service"
# the probe: the unit's settings, another command
sed -e 's#^ExecStart=.*#ExecStart=/bin/sh -c "grep CapAmb /proc/self/status; grep -m1 -w T /proc/kallsyms; head -c 40 /proc/1/maps; echo; touch /etc/x || echo etc-ro; echo 1 > /proc/sys/kernel/printk_ratelimit || echo sys-ro"#' \
	-e '/--continuous/d' -e 's/^StateDirectory=.*/StateDirectory=unitprobe/' \
	-e 's#^Type=simple#Type=oneshot\nStandardOutput=file:/var/lib/unitprobe.out#' \
	-e '/^Restart/d' "$UNIT" >"$SYS/unitprobe.service"
ln -sf /etc/systemd/system/unitprobe.service "$WANTS/unitprobe.service"
cat >"$SYS/unitcheck-stop.service" <<'EOF'
[Unit]
After=microscope.service unitprobe.service
[Service]
Type=oneshot
ExecStart=/bin/sh -c 'sleep 20; systemctl show microscope -p NRestarts -p ExecMainStatus -p ActiveState > /var/lib/unitcheck.show; journalctl -u microscope --no-pager > /var/lib/unitcheck.journal; systemctl poweroff'
[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/unitcheck-stop.service "$WANTS/unitcheck-stop.service"
rm -f "$ROOT"/var/lib/unitprobe.out "$ROOT"/var/lib/unitcheck.*

timeout 180 systemd-nspawn -q -b -D "$ROOT" --register=no --keep-unit --capability=all \
	--private-users=no --system-call-filter='bpf perf_event_open' --console=pipe \
	>"$ROOT.boot.log" 2>&1 || true

fail=0
check() { # what, pattern, file
	if grep -Eq "$2" "$3" 2>/dev/null; then
		echo "ok   $1"
	else
		echo "FAIL $1 (no /$2/ in $3)"
		fail=1
	fi
}
AMB=$(printf '%016x' $(( (1<<2) | (1<<19) | (1<<24) | (1<<34) | (1<<38) | (1<<39) )))
out="$ROOT/var/lib/unitprobe.out"
# nspawn's own bounding set lacks CAP_SYS_RESOURCE (bit 24): accept either
check "ambient capabilities as the unit lists them" "CapAmb:.*(${AMB}|000000c400080004)" "$out"
check "/proc/kallsyms readable with addresses" "^ffffffff[0-9a-f]{8} [Tt] " "$out"
check "another process's maps readable" "^[0-9a-f]{6,}-" "$out"
check "/etc read-only" "^etc-ro" "$out"
check "/proc/sys read-only" "^sys-ro" "$out"
check "microscope.service refused in nspawn's pid namespace" "ExecMainStatus=2" "$ROOT/var/lib/unitcheck.show"
check "no restart loop on status 2" "NRestarts=0" "$ROOT/var/lib/unitcheck.show"
check "the refusal names the way out" "pid namespace of its own" "$ROOT/var/lib/unitcheck.journal"
exit $fail
