// SPDX-License-Identifier: MIT
/*
 * The collector's off-CPU part (offcpu.h): loads bpf/offcpu.bpf.c beside the
 * sampler, sharing its "targets" map, and handles the recording's edges
 * (start snapshot of sleeping threads, stop sweep of open intervals).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/records.h"
#include "offcpu.h"
#include "prog_stats.h"
#include "skel/offcpu.skel.h"

/* Slots for at most this many threads at once (map_full counts the rest). */
#define OFFCPU_MAX_THREADS 16384

struct offcpu {
	struct offcpu_bpf *skel;
	struct bpf_link *links[4];
	int nlinks;
	bool copies;
	__u64 snapshot_slots; /* START_UNKNOWN slots opened at start */
	__u64 swept_open;     /* END_UNKNOWN records emitted at stop */
	__u64 swept_copy;     /* records still waiting for a copy at stop */
	__u64 snapshot_errors;
};

static void __attribute__((format(printf, 3, 4))) oerrf(char *err, size_t errlen, const char *fmt,
							...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

struct offcpu *offcpu__new(const struct record_options *o, const struct offcpu_shared_maps *maps,
			   __u32 ring_bytes, int nr_possible, bool have_find_vma, char *err,
			   size_t errlen)
{
	struct offcpu *oc = calloc(1, sizeof(*oc));
	__u32 copy = o->call_graph == MS_CALL_GRAPH_FP ? 0 : o->stack_size;
	int ret;

	if (!oc)
		return NULL;
	oc->skel = offcpu_bpf__open();
	if (!oc->skel) {
		ret = -errno;
		oerrf(err, errlen, "opening the off-CPU BPF program: %s", strerror(-ret));
		goto fail;
	}
	oc->copies = copy > 0;
	oc->skel->rodata->system_wide = o->system_wide;
	oc->skel->rodata->min_ns = o->off_cpu_min_ns;
	oc->skel->rodata->stack_copy_bytes = copy;
	oc->skel->rodata->have_find_vma = have_find_vma;
	oc->skel->rodata->wakeup_bytes = ring_bytes / 4;
	oc->skel->rodata->self_tgid = o->include_self ? 0 : (__u32)getpid();
	oc->skel->rodata->cgroup_filter = o->ncgroup_ids > 0;
	ret = bpf_map__reuse_fd(oc->skel->maps.targets, maps->targets);
	if (!ret)
		ret = bpf_map__reuse_fd(oc->skel->maps.scope_cgroups, maps->scope);
	if (!ret)
		ret = bpf_map__reuse_fd(oc->skel->maps.py_procs, maps->py_procs);
	if (!ret)
		ret = bpf_map__reuse_fd(oc->skel->maps.py_threads, maps->py_threads);
	if (!ret)
		ret = bpf_map__reuse_fd(oc->skel->maps.py_exits, maps->py_exits);
	if (!ret)
		ret = bpf_map__set_max_entries(oc->skel->maps.offcpu_events, ring_bytes);
	if (!ret)
		ret = bpf_map__set_max_entries(oc->skel->maps.offcpu_pending, OFFCPU_MAX_THREADS);
	if (!ret)
		ret = bpf_map__set_max_entries(oc->skel->maps.offcpu_copywait, OFFCPU_MAX_THREADS);
	if (!ret)
		ret = bpf_map__set_max_entries(oc->skel->maps.copy_scratch,
					       oc->copies ? (__u32)nr_possible : 1);
	if (ret) {
		oerrf(err, errlen, "configuring the off-CPU BPF maps: %s", strerror(-ret));
		goto fail;
	}
	if (!oc->copies)
		bpf_program__set_autoload(oc->skel->progs.handle_sys_exit, false);
	ret = offcpu_bpf__load(oc->skel);
	if (ret) {
		oerrf(err, errlen,
		      "loading the off-CPU BPF program: %s (it needs tp_btf programs and "
		      "hash maps without preallocation in them: Linux 6.1 or later)",
		      strerror(-ret));
		goto fail;
	}
	return oc;
fail:
	offcpu__free(oc);
	errno = -ret;
	return NULL;
}

int offcpu__ring_fd(const struct offcpu *oc)
{
	return bpf_map__fd(oc->skel->maps.offcpu_events);
}

int offcpu__attach(struct offcpu *oc, char *err, size_t errlen)
{
	struct bpf_program *progs[] = {
		oc->skel->progs.handle_thread_exit,
		oc->skel->progs.handle_waking,
		oc->copies ? oc->skel->progs.handle_sys_exit : NULL,
		oc->skel->progs.handle_switch,
	};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_link *l;

		if (!progs[i])
			continue;
		l = bpf_program__attach(progs[i]);
		if (!l) {
			int ret = -errno;

			oerrf(err, errlen, "attaching %s: %s", bpf_program__name(progs[i]),
			      strerror(-ret));
			return ret;
		}
		oc->links[oc->nlinks++] = l;
	}
	return 0;
}

/* The state letter of /proc/PID/task/TID/stat (fs/proc/array.c,
 * task_state_array) as MS_OFFCPU_STATE_*, or -1 for running, dead or unknown. */
static int state_of_letter(char c)
{
	switch (c) {
	case 'S':
		return MS_OFFCPU_STATE_SLEEP;
	case 'D':
	case 'I': /* TASK_IDLE: uninterruptible without load */
		return MS_OFFCPU_STATE_DISK;
	case 'T':
	case 't':
		return MS_OFFCPU_STATE_STOPPED;
	case 'P':
		return MS_OFFCPU_STATE_OTHER;
	default: /* R, Z, X */
		return -1;
	}
}

static int snapshot_thread(struct offcpu *oc, pid_t pid, pid_t tid, __u64 now_ns)
{
	struct ms_offcpu_slot slot;
	char path[96], buf[512], *p;
	ssize_t n;
	int fd, state;
	__u32 key = (__u32)tid;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* exited */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ') {
		oc->snapshot_errors++;
		return 0;
	}
	state = state_of_letter(p[2]);
	if (state < 0)
		return 0;
	memset(&slot, 0, sizeof(slot));
	slot.phase = MS_OFFCPU_PHASE_OPEN;
	slot.rec.start_ns = now_ns;
	slot.rec.pid = (__u32)pid;
	slot.rec.tid = (__u32)tid;
	slot.rec.flags = MS_OFFCPU_F_START_UNKNOWN;
	slot.rec.state = (__u32)state;
	slot.rec.arch = MS_ARCH_X86_64;
	/* BPF_NOEXIST: a thread that switched since the attach has a slot. */
	if (!bpf_map__update_elem(oc->skel->maps.offcpu_pending, &key, sizeof(key), &slot,
				  sizeof(slot), BPF_NOEXIST))
		oc->snapshot_slots++;
	return 0;
}

static int snapshot_process(struct offcpu *oc, pid_t pid, __u64 now_ns)
{
	char path[64];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

		if (tid > 0)
			snapshot_thread(oc, pid, tid, now_ns);
	}
	closedir(dir);
	return 0;
}

int offcpu__snapshot(struct offcpu *oc, const pid_t *pids, size_t n, bool system_wide,
		     __u64 now_ns)
{
	struct dirent *de;
	DIR *dir;

	if (!system_wide) {
		for (size_t i = 0; i < n; i++)
			snapshot_process(oc, pids[i], now_ns);
		return 0;
	}
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (isdigit((unsigned char)de->d_name[0]))
			snapshot_process(oc, (pid_t)strtol(de->d_name, NULL, 10), now_ns);
	}
	closedir(dir);
	return 0;
}

void offcpu__detach(struct offcpu *oc)
{
	if (!oc)
		return;
	for (int i = oc->nlinks - 1; i >= 0; i--)
		bpf_link__destroy(oc->links[i]);
	oc->nlinks = 0;
}

static int u32_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static int offcpu__sweep_map(struct offcpu *oc, int fd, __u64 stop_ns, offcpu_emit_fn emit,
			     void *ctx)
{
	struct ms_offcpu_slot *slot = NULL;
	__u32 *keys = NULL, key, next, n = 0, cap = 0;
	void *prev = NULL;
	int err = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (n == cap) {
			__u32 *k;

			cap = cap ? 2 * cap : 256;
			k = realloc(keys, cap * sizeof(*k));
			if (!k) {
				err = -ENOMEM;
				goto cleanup;
			}
			keys = k;
		}
		keys[n++] = next;
		key = next;
		prev = &key;
		if (n > 4 * OFFCPU_MAX_THREADS) /* a map that keeps changing: stop */
			break;
	}
	qsort(keys, n, sizeof(*keys), u32_cmp);
	slot = malloc(sizeof(*slot));
	if (!slot) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (__u32 i = 0; i < n && !err; i++) {
		__u32 nips, py;

		if (bpf_map_lookup_elem(fd, &keys[i], slot))
			continue;
		if (slot->phase == MS_OFFCPU_PHASE_OPEN) {
			slot->rec.time_ns = stop_ns;
			slot->rec.flags |= MS_OFFCPU_F_END_UNKNOWN;
			oc->swept_open++;
		} else if (slot->phase == MS_OFFCPU_PHASE_COPY) {
			slot->rec.flags |= MS_OFFCPU_F_NO_COPY_CHANCE;
			oc->swept_copy++;
		} else {
			continue;
		}
		nips = (__u32)slot->rec.kstack_len + slot->rec.ustack_len +
		       slot->rec.waker_kstack_len + slot->rec.waker_ustack_len;
		if (nips > MS_OFFCPU_MAX_IPS)
			continue;
		py = 0;
		if (slot->rec.flags & MS_OFFCPU_F_PYTHON) {
			if (slot->py.py_len > MS_PY_MAX_FRAMES)
				continue;
			/* the CPython part right after the callchains, as the
			 * record carries it */
			py = sizeof(slot->py) + (__u32)slot->py.py_len * MS_PY_FRAME_BYTES;
			memmove((__u8 *)&slot->rec + sizeof(slot->rec) + nips * 8, &slot->py, py);
		}
		slot->rec.hdr.type = MS_REC_OFFCPU;
		slot->rec.hdr.size = sizeof(struct ms_offcpu) + nips * 8 + py;
		slot->rec.stack_copy_len = 0;
		err = emit(ctx, &slot->rec, slot->rec.hdr.size);
	}
cleanup:
	free(slot);
	free(keys);
	return err;
}

int offcpu__sweep(struct offcpu *oc, __u64 stop_ns, offcpu_emit_fn emit, void *ctx)
{
	int err = offcpu__sweep_map(oc, bpf_map__fd(oc->skel->maps.offcpu_copywait), stop_ns,
				    emit, ctx);

	if (!err)
		err = offcpu__sweep_map(oc, bpf_map__fd(oc->skel->maps.offcpu_pending), stop_ns,
					emit, ctx);
	return err;
}

/* Runs of the off-CPU programs the kernel skipped (struct bpf_prog_info
 * recursion_misses, Linux 5.12+: a program already running on that CPU). */
static __u64 offcpu__prog_misses(struct offcpu *oc)
{
	struct bpf_program *progs[] = {
		oc->skel->progs.handle_thread_exit,
		oc->skel->progs.handle_waking,
		oc->skel->progs.handle_sys_exit,
		oc->skel->progs.handle_switch,
	};
	__u64 sum = 0;

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(progs[i]);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

int offcpu__counters(struct offcpu *oc, offcpu_counter_fn counter, void *ctx)
{
	static const char *const names[] = { MS_OFFCPU_STATS_NAMES };
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	__u64 sums[MS_OFFCPU_STATS_COUNT] = { 0 };
	struct ms_offcpu_stats *per_cpu;
	__u32 zero = 0;

	_Static_assert(sizeof(names) / sizeof(names[0]) == MS_OFFCPU_STATS_COUNT, "names");
	if (ncpu <= 0)
		return ncpu ? ncpu : -ENODEV;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map__lookup_elem(oc->skel->maps.offcpu_stats, &zero, sizeof(zero), per_cpu,
				 (size_t)ncpu * sizeof(*per_cpu), 0)) {
		err = -errno;
		goto cleanup;
	}
	for (int cpu = 0; cpu < ncpu; cpu++) {
		const __u64 *v = (const __u64 *)&per_cpu[cpu];

		for (int i = 0; i < MS_OFFCPU_STATS_COUNT; i++)
			sums[i] += v[i];
	}
	for (int i = 0; !err && i < MS_OFFCPU_STATS_COUNT; i++)
		err = counter(ctx, names[i], sums[i]);
	if (!err)
		err = counter(ctx, "offcpu.snapshot_open", oc->snapshot_slots);
	if (!err)
		err = counter(ctx, "offcpu.swept_open", oc->swept_open);
	if (!err)
		err = counter(ctx, "offcpu.swept_no_copy", oc->swept_copy);
	if (!err)
		err = counter(ctx, "offcpu.snapshot_errors", oc->snapshot_errors);
	if (!err)
		err = counter(ctx, "offcpu.prog_misses", offcpu__prog_misses(oc));
cleanup:
	free(per_cpu);
	return err;
}

void offcpu__free(struct offcpu *oc)
{
	if (!oc)
		return;
	offcpu__detach(oc);
	offcpu_bpf__destroy(oc->skel);
	free(oc);
}

/*
 * Cumulative run time (ns) of the off-CPU programs (offcpu.h), from
 * struct bpf_prog_info (include/uapi/linux/bpf.h): counted only while BPF
 * stats are enabled (budget/monitor.c holds the BPF_ENABLE_STATS fd).
 */
int offcpu__bpf_run_ns(struct offcpu *oc, __u64 *run_ns)
{
	uint64_t ns = 0;
	int err = oc && oc->skel ? prog_stats__add(oc->skel->obj, NULL, &ns, NULL) : 0;

	*run_ns = ns;
	return err;
}
