// SPDX-License-Identifier: MIT
/* Why loading BPF or opening a CPU-wide perf event failed, in words a user
 * can act on (collector_internal.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collector_internal.h"

static int read_int_file(const char *path, int *val)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", val) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

static bool cap_effective(int cap)
{
	unsigned long long caps = 0;
	char line[256];
	bool found = false;
	FILE *f;

	f = fopen("/proc/self/status", "re");
	if (!f)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			found = true;
			break;
		}
	fclose(f);
	if (!found)
		return geteuid() == 0;
	return caps & (1ull << cap);
}

bool collector__may_load_bpf(void)
{
	return cap_effective(CAP_SYS_ADMIN_BIT) ||
	       (cap_effective(CAP_BPF_BIT) && cap_effective(CAP_PERFMON_BIT));
}

/*
 * Name the likely cause of a failure to load BPF (bpf = true) or to open a
 * CPU-wide perf event (bpf = false) into buf.
 */
void collector__diagnose(int err, bool bpf, const char *what, char *buf, size_t len)
{
	bool admin = cap_effective(CAP_SYS_ADMIN_BIT);
	bool has_bpf = admin || cap_effective(CAP_BPF_BIT);
	bool has_perfmon = admin || cap_effective(CAP_PERFMON_BIT);
	int val;

	if (!buf || !len)
		return;
	if (bpf && access(BTF_VMLINUX, R_OK)) {
		snprintf(buf, len,
			 "%s: no kernel BTF at " BTF_VMLINUX " (kernel built without "
			 "CONFIG_DEBUG_INFO_BTF); the CO-RE sampler cannot be loaded",
			 what);
		return;
	}
	if (err != -EPERM && err != -EACCES) {
		snprintf(buf, len, "%s: %s", what, strerror(-err));
		return;
	}
	if (bpf && (!has_bpf || !has_perfmon)) {
		if (!read_int_file("/proc/sys/kernel/unprivileged_bpf_disabled", &val) && val)
			snprintf(buf, len,
				 "%s: %s: BPF programs need CAP_BPF and CAP_PERFMON (run as root); "
				 "kernel.unprivileged_bpf_disabled=%d also forbids bpf() without "
				 "CAP_BPF",
				 what, strerror(-err), val);
		else
			snprintf(buf, len,
				 "%s: %s: BPF programs need CAP_BPF and CAP_PERFMON (run as root)",
				 what, strerror(-err));
		return;
	}
	if (!bpf && !has_perfmon) {
		if (!read_int_file("/proc/sys/kernel/perf_event_paranoid", &val))
			snprintf(buf, len,
				 "%s: %s: kernel.perf_event_paranoid=%d forbids CPU-wide events "
				 "without CAP_PERFMON (run as root, or set it to -1)",
				 what, strerror(-err), val);
		else
			snprintf(buf, len,
				 "%s: %s: CPU-wide perf events need CAP_PERFMON (run as root)",
				 what, strerror(-err));
		return;
	}
	if (bpf && err == -EACCES) {
		snprintf(buf, len,
			 "%s: the kernel verifier rejected the program (its log is printed above)",
			 what);
		return;
	}
	snprintf(buf, len,
		 "%s: %s although CAP_BPF/CAP_PERFMON are held: a security module, kernel "
		 "lockdown (/sys/kernel/security/lockdown) or a seccomp filter (a container's: "
		 "allow bpf and perf_event_open) may forbid it",
		 what, strerror(-err));
}
