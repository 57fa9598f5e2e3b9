// SPDX-License-Identifier: MIT
/*
 * The collector (collector.h): owns the sampler skeleton, the per-CPU perf
 * events and every ring; frames what it drains as stream chunks.  This file
 * is its lifetime (new, start, poll, stop, free) and the sampler's load;
 * events.c opens, attaches and drains the perf events, snapshot.c reads the
 * targets' /proc state, meta.c writes META and COUNTER chunks, diagnose.c
 * words failures (collector_internal.h holds what they share).
 *
 * Ownership: a sampling perf fd belongs to its bpf_link once attached
 * (bpf_link__destroy disables and closes it); before that, to sample_fds[].
 * Dummy-event fds and their mmap'd rings belong to rings[].  Nothing is
 * pinned, so process death releases everything as collector__free does.
 *
 * The drain path allocates nothing: BPF records are handed to the sink in
 * place (borrowed from the ring, libbpf ring_buffer callback); perf records
 * are handed in place unless they wrap around the ring's end, in which case
 * they are copied into one reused buffer (perf records are at most 64 KiB,
 * perf_event_header.size is a __u16).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/kunwind.h"
#include "bpf/abi/records.h"
#include "bpf_ring.h"
#include "collector_internal.h"
#include "offcpu.h"
#include "probes.h"
#include "prog_stats.h"
#include "../stream/memory_policy.h"
#include "../stream/meta.h"
#include "../stream/perf_records.h"
#include "skel/sampler.skel.h"


__u64 collector__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}


/* Format an error message into err (which may be NULL). */
void collector__errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int collector__emit(struct collector *c, __u32 kind, __u32 source, __u64 time,
		     const void *payload, size_t len)
{
	struct ms_chunk chunk = {.kind = kind, .source = source, .len = (__u32)len, .time = time};

	if (len > MS_CHUNK_MAX_PAYLOAD)
		return -E2BIG;
	return c->sink(c->sink_ctx, &chunk, payload);
}

int collector__emit_text(struct collector *c, __u32 kind, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(c->snap_buf, SNAP_BUF_BYTES, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (n >= SNAP_BUF_BYTES)
		n = SNAP_BUF_BYTES - 1; /* truncated text is still key=value */
	return collector__emit(c, kind, 0, 0, c->snap_buf, (size_t)n);
}

/* ---- ring draining ---- */

static int on_bpf_record(void *ctx, const void *data, size_t size)
{
	struct collector *c = ctx;

	c->bpf_records++;
	return collector__emit(c, MS_CHUNK_BPF, 0, 0, data, size);
}

static int collector__drain(struct collector *c)
{
	int total = 0, n, i;

	/* Side-band first: the few MMAP2/COMM/FORK records reach the sink
	 * before the sample backlog, while their processes most likely live
	 * (the processor pins container files from them, processor/pins.c). */
	for (i = 0; i < c->nr_online; i++) {
		if (!c->rings[i].base)
			continue;
		n = collector__drain_perf(c, &c->rings[i]);
		if (n < 0)
			return n;
		total += n;
	}
	n = bpf_ring__drain(c->rb);
	if (n < 0)
		return n;
	total += n;
	if (c->rb_off) {
		n = bpf_ring__drain(c->rb_off);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

/* ---- lifetime ---- */

/* Load bpf/offcpu.bpf.c sharing the sampler's target, scope and CPython
 * maps (offcpu_shared_maps); its ring joins
 * a reader of its own (bpf_ring.h) and the epoll set. */
static int collector__open_offcpu(struct collector *c, char *err, size_t errlen)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct offcpu_shared_maps maps = {
		.targets = bpf_map__fd(c->skel->maps.targets),
		.scope = bpf_map__fd(c->skel->maps.scope_cgroups),
		.py_procs = bpf_map__fd(c->skel->maps.py_procs),
		.py_threads = bpf_map__fd(c->skel->maps.py_threads),
		.py_exits = bpf_map__fd(c->skel->maps.py_exits),
	};
	int ret;

	c->offcpu = offcpu__new(&c->opts, &maps, c->offcpu_ring_bytes, c->nr_possible,
				c->have_find_vma, err, errlen);
	if (!c->offcpu)
		return -errno;
	ev.data.fd = offcpu__ring_fd(c->offcpu);
	c->rb_off = bpf_ring__new(ev.data.fd, c->offcpu_ring_bytes, on_bpf_record, c);
	if (!c->rb_off) {
		ret = -errno;
		collector__errf(err, errlen, "off-CPU ring buffer: %s", strerror(-ret));
		return ret;
	}
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		ret = -errno;
		collector__errf(err, errlen, "epoll_ctl: %s", strerror(-ret));
		return ret;
	}
	return 0;
}

/* libbpf's messages silenced (a load allowed to fail: auto's in-kernel try). */
static int print_nothing(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/*
 * Open the sampler into c->skel, set its rodata and map sizes for o (the
 * in-kernel unwinder on when kunwind), and load it; quiet: without
 * libbpf's messages (the verifier's log).  Returns 0, or -errno with err
 * set and c->skel NULL.
 */
static int collector__load_sampler(struct collector *c, const struct record_options *o,
				   bool kunwind, bool quiet, char *err, size_t errlen)
{
	libbpf_print_fn_t old_print = NULL;
	int ret;

	c->skel = sampler_bpf__open();
	if (!c->skel) {
		ret = -errno;
		collector__diagnose(ret, true, "opening the BPF sampler", err, errlen);
		return ret;
	}
	/* Automatic: sized for this load's records (auto's in-kernel try, then
	 * its fallback, each get their own).  Copies are the exception with
	 * the in-kernel unwinder only where the recorded processes are few:
	 * -a and cgroup scopes hand every process's samples over until its
	 * mappings are told, which takes seconds on a busy host (a 2 s -a lost
	 * 2.9k samples to a 4 MiB ring); --verify-unwind copies every stack;
	 * off-CPU records always carry their copies. */
	if (!o->ringbuf_bytes) {
		c->opts.ringbuf_bytes = ms_ringbuf_auto_bytes(
			o->freq_hz, (uint32_t)c->nr_online, record_options__stack_copy_bytes(o),
			kunwind && !o->verify_unwind && !o->system_wide && !o->ncgroup_ids);
		c->offcpu_ring_bytes =
			ms_ringbuf_auto_bytes(o->freq_hz, (uint32_t)c->nr_online,
					      record_options__stack_copy_bytes(o), false);
	} else {
		c->offcpu_ring_bytes = o->ringbuf_bytes;
	}
	c->skel->rodata->system_wide = o->system_wide;
	c->skel->rodata->self_tgid = o->include_self ? 0 : (__u32)getpid();
	c->skel->rodata->cgroup_filter = o->ncgroup_ids > 0;
	c->skel->rodata->python_exec_targets = o->system_wide && o->python == MS_PYTHON_BPF;
	c->skel->rodata->wakeup_bytes = c->opts.ringbuf_bytes / 4;
	c->skel->rodata->py_wake_ns = (__u64)o->py_wake_ms * 1000000;
	c->skel->rodata->stack_copy_bytes = record_options__stack_copy_bytes(o);
	/* CO-RE fallback chosen at load time, logged in META (bpf.find_vma). */
	c->have_find_vma =
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1;
	c->skel->rodata->have_find_vma = c->have_find_vma;
	ret = bpf_map__set_max_entries(c->skel->maps.samples, c->opts.ringbuf_bytes);
	if (ret) {
		collector__errf(err, errlen, "BPF ring buffer size: %s", strerror(-ret));
		goto cleanup;
	}
	/* In-kernel unwinding: its tables at their policy sizes (a single
	 * entry each when off, so nothing is allocated). */
	c->skel->rodata->kunwind_mode = !kunwind ? 0
				       : o->verify_unwind ? MS_KU_MODE_VERIFY
							  : MS_KU_MODE_ON;
	c->skel->rodata->ku_wake_ns = kunwind ? KU_WAKE_NS : 0;
	c->skel->rodata->ku_fp_chain = kunwind && o->call_graph == MS_CALL_GRAPH_AUTO;
	c->skel->rodata->ring_bytes = c->opts.ringbuf_bytes;
	c->skel->rodata->pressure_copy_bytes =
		kunwind && !o->verify_unwind ? MS_PRESSURE_COPY_BYTES : 0;
	if (kunwind && getrandom((void *)&c->skel->rodata->ku_cookie_key,
				 sizeof(c->skel->rodata->ku_cookie_key), 0) < 0)
		c->skel->rodata->ku_cookie_key = collector__now_ns(); /* only needs to be unknown outside */
	if (!ret)
		ret = bpf_map__set_max_entries(c->skel->maps.ku_rows, kunwind ? MS_KU_ROWS_MAX : 1);
	if (!ret)
		ret = bpf_map__set_max_entries(c->skel->maps.ku_starts,
					       kunwind ? MS_KU_ROWS_MAX : 1);
	if (!ret)
		ret = bpf_map__set_max_entries(c->skel->maps.ku_modules,
					       kunwind ? MS_KU_MODULES_MAX : 1);
	if (!ret)
		ret = bpf_map__set_max_entries(c->skel->maps.ku_procs, kunwind ? MS_KU_PROCS_MAX : 1);
	if (ret) {
		collector__errf(err, errlen, "BPF unwinder table sizes: %s", strerror(-ret));
		goto cleanup;
	}
	/* One scratch record per possible CPU (indexed by CPU id). */
	ret = bpf_map__set_max_entries(c->skel->maps.scratch, (__u32)c->nr_possible);
	if (ret) {
		collector__errf(err, errlen, "BPF scratch map size: %s", strerror(-ret));
		goto cleanup;
	}
	if (quiet)
		old_print = libbpf_set_print(print_nothing);
	ret = sampler_bpf__load(c->skel);
	if (quiet)
		libbpf_set_print(old_print);
	if (ret) {
		collector__diagnose(ret, true, "loading the BPF sampler", err, errlen);
		goto cleanup;
	}
	c->kunwind = kunwind;
cleanup:
	if (ret) {
		sampler_bpf__destroy(c->py_skel);
	sampler_bpf__destroy(c->skel);
		c->skel = NULL;
	}
	return ret;
}

/*
 * Open and load the sampler (collector.h).  The sink receives every chunk
 * from collector__start on; sink_ctx is passed through.  Returns NULL and
 * sets errno (with err naming the cause) on failure.
 */
struct collector *collector__new(const struct record_options *o, stream_sink_fn sink, void *ctx,
				 char *err, size_t errlen)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct collector *c = NULL;
	long page_size = sysconf(_SC_PAGESIZE);
	bool kunwind;
	int ret, i;

	if (err && errlen)
		err[0] = '\0';
	/* The limits the CLI enforced already (options/record_options.h): one
	 * validator, so a caller that skipped it gets the same message. */
	ret = record_options__check(o, err, errlen);
	if (ret)
		goto cleanup;
	if (access(BTF_VMLINUX, R_OK)) {
		ret = -ENOENT;
		collector__diagnose(ret, true, "loading the BPF sampler", err, errlen);
		goto cleanup;
	}
	/* Without the capabilities the load fails anyway: say why before
	 * libbpf prints its own guesses (RLIMIT_MEMLOCK, CONFIG_BPF_SYSCALL). */
	if (!collector__may_load_bpf()) {
		ret = -EPERM;
		collector__diagnose(ret, true, "loading the BPF sampler", err, errlen);
		goto cleanup;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		ret = -ENOMEM;
		goto cleanup;
	}
	c->opts = *o;
	/* Host-wide, the side-band rings carry every exec's MMAP2/COMM/FORK/
	 * EXIT and must absorb the seconds the drain can run behind. */
	if (o->system_wide && c->opts.perf_pages < MS_PERF_PAGES_SYSTEM_WIDE)
		c->opts.perf_pages = MS_PERF_PAGES_SYSTEM_WIDE;
	c->sink = sink;
	c->sink_ctx = ctx;
	c->page_size = page_size;
	c->epoll_fd = -1;
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &c->sideband_id);
	c->copy_buf = malloc(MS_PERF_RECORD_MAX);
	c->snap_buf = malloc(SNAP_BUF_BYTES);
	if (!c->copy_buf || !c->snap_buf) {
		ret = -ENOMEM;
		goto cleanup;
	}
	ret = collector__find_cpus(c);
	if (ret) {
		collector__errf(err, errlen, "cannot determine the CPUs: %s", strerror(-ret));
		goto cleanup;
	}
	c->sample_fds = malloc((size_t)c->nr_online * sizeof(*c->sample_fds));
	c->period_fds = malloc((size_t)c->nr_online * sizeof(*c->period_fds));
	c->duty_factor = 1;
	c->links = calloc((size_t)c->nr_online, sizeof(*c->links));
	c->rings = calloc((size_t)c->nr_online, sizeof(*c->rings));
	if (!c->sample_fds || !c->period_fds || !c->links || !c->rings) {
		ret = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < c->nr_online; i++) {
		c->sample_fds[i] = -1;
		c->period_fds[i] = -1;
		c->rings[i].fd = -1;
	}

	/* --call-graph auto unwinds in the kernel where the kernel loads the
	 * unwinder, else copies stacks (the reason kept for META). */
	kunwind = o->call_graph == MS_CALL_GRAPH_DWARF_KERNEL ||
		  (o->call_graph == MS_CALL_GRAPH_AUTO && record_options__stack_copy_bytes(o));
	if (kunwind && o->call_graph == MS_CALL_GRAPH_AUTO) {
		ret = getenv(KU_TEST_REFUSE_ENV)
			      ? -E2BIG
			      : collector__load_sampler(c, o, true, true, NULL, 0);
		if (ret)
			snprintf(c->ku_refused, sizeof(c->ku_refused), "%s (%s)%s",
				 ret == -E2BIG		       ? "too large for this kernel's verifier"
				 : ret == -EINVAL || ret == -EACCES ? "the verifier rejected it"
								   : "its load failed",
				 strerror(-ret),
				 getenv(KU_TEST_REFUSE_ENV) ? ", " KU_TEST_REFUSE_ENV " set" : "");
		kunwind = ret == 0;
	}
	if (!c->skel) {
		ret = collector__load_sampler(c, o, kunwind, false, err, errlen);
		if (ret)
			goto cleanup;
	}
	for (i = 0; i < (int)o->ncgroup_ids; i++) {
		__u8 one = 1;

		if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.scope_cgroups), &o->cgroup_ids[i],
					&one, BPF_ANY)) {
			ret = -errno;
			collector__errf(err, errlen, "BPF cgroup filter: %s", strerror(-ret));
			goto cleanup;
		}
	}
	c->rb = bpf_ring__new(bpf_map__fd(c->skel->maps.samples), c->opts.ringbuf_bytes,
			      on_bpf_record, c);
	if (!c->rb) {
		ret = -errno;
		collector__errf(err, errlen, "BPF ring buffer: %s", strerror(-ret));
		goto cleanup;
	}
	c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epoll_fd < 0) {
		ret = -errno;
		collector__errf(err, errlen, "epoll_create1: %s", strerror(-ret));
		goto cleanup;
	}
	ev.data.fd = bpf_map__fd(c->skel->maps.samples);
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		ret = -errno;
		collector__errf(err, errlen, "epoll_ctl: %s", strerror(-ret));
		goto cleanup;
	}
	if (o->off_cpu) {
		ret = collector__open_offcpu(c, err, errlen);
		if (ret)
			goto cleanup;
	}
	ret = 0;
cleanup:
	if (ret) {
		collector__free(c);
		errno = -ret;
		return NULL;
	}
	return c;
}


/*
 * Put the process pid into the kernel filter (a thread id stands for its
 * process) and remember it for the snapshot; after start, snapshot it at
 * once.  Adding a process twice only puts it back into the filter when its
 * exit took it out (its pid reused, found again under -a).  Returns 0,
 * -ESRCH if there is no such process, or -errno.
 */
int collector__probe_process(struct collector *c, pid_t pid)
{
	if (!c->probes || pid <= 0)
		return -EINVAL;
	return probe_rings__add_pid(c->probes, (uint32_t)pid, collector__now_ns());
}

bool collector__probes_has(const struct collector *c, pid_t pid)
{
	return c && c->probes && pid > 0 && probe_rings__has(c->probes, (uint32_t)pid);
}

int collector__probe_fork(struct collector *c, pid_t ppid, pid_t pid)
{
	if (!c->probes || ppid <= 0 || pid <= 0)
		return -EINVAL;
	return probe_rings__add_child(c->probes, (uint32_t)ppid, (uint32_t)pid, collector__now_ns());
}

int collector__file_has_probes(const char *path)
{
	return probes__file_has_control(path);
}

int collector__add_target(struct collector *c, pid_t pid)
{
	__u8 one = 1;
	pid_t tgid;
	__u32 key;
	size_t i;
	pid_t *t;

	if (pid <= 0)
		return -EINVAL;
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	tgid = collector__proc_tgid(pid);
	if (tgid > 0)
		pid = tgid;
	key = (__u32)pid;
	for (i = 0; i < c->ntargets; i++) {
		if (c->targets[i] != pid)
			continue;
		/* Added before: its exit took it out of "targets" (handle_exit)
		 * and -a may find the pid again, reused by a new process. */
		if (!bpf_map__update_elem(c->skel->maps.targets, &key, sizeof(key), &one,
					  sizeof(one), BPF_NOEXIST) &&
		    c->skel->bss)
			__sync_fetch_and_add(&c->skel->bss->targets_gen, 1);
		return 0;
	}
	if (c->ntargets == c->targets_cap) {
		size_t cap = c->targets_cap ? 2 * c->targets_cap : 8;

		t = realloc(c->targets, cap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		c->targets = t;
		c->targets_cap = cap;
	}
	if (bpf_map__update_elem(c->skel->maps.targets, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	if (c->skel->bss) /* tell the CPython tracker the map changed */
		__sync_fetch_and_add(&c->skel->bss->targets_gen, 1);
	c->targets[c->ntargets++] = pid;
	if (!c->started || c->opts.system_wide) /* system-wide: all of /proc at start */
		return 0;
	return collector__snapshot_process(c, pid, collector__now_ns());
}

/*
 * Start recording (collector.h): attach the fork/exit tracking, open the
 * side-band rings, emit META and the /proc snapshot, then attach sampling.
 * Returns 0 or -errno with err set.  On failure collector__free still
 * releases whatever was created.
 */
int collector__start(struct collector *c, char *err, size_t errlen)
{
	size_t i;
	int ret;

	if (err && errlen)
		err[0] = '\0';
	if (c->started)
		return -EALREADY;
	if (!c->opts.system_wide && !c->ntargets) {
		collector__errf(err, errlen, "no target process: add one or record system-wide");
		return -EINVAL;
	}
	c->started = true;
	c->start_ns = collector__now_ns();
	ret = collector__pick_event(c, err, errlen);
	if (ret)
		return ret;
	/* -a: only for the CPython tracker's thread starts (py_threads_gen). */
	if (!c->opts.system_wide || c->opts.python == MS_PYTHON_BPF) {
		c->fork_link = bpf_program__attach(c->skel->progs.handle_fork);
		if (!c->fork_link) {
			ret = -errno;
			collector__errf(err, errlen, "attaching sched_process_fork: %s", strerror(-ret));
			return ret;
		}
	}
	if (c->opts.system_wide && c->opts.python == MS_PYTHON_BPF) {
		c->exec_link = bpf_program__attach(c->skel->progs.handle_exec);
		if (!c->exec_link) {
			ret = -errno;
			collector__errf(err, errlen, "attaching sched_process_exec: %s", strerror(-ret));
			return ret;
		}
	}
	if (!c->opts.system_wide || c->exec_link) {
		c->exit_link = bpf_program__attach(c->skel->progs.handle_exit);
		if (!c->exit_link) {
			ret = -errno;
			collector__errf(err, errlen, "attaching sched_process_exit: %s", strerror(-ret));
			return ret;
		}
	}
	ret = collector__open_rings(c, err, errlen);
	if (ret)
		return ret;
	/* Probes SDK rings (probes.h) of the recorded processes; under -a of
	 * the processes collector__probe_process names. */
	c->probes = probe_rings__new(c->opts.system_wide ? -1 : bpf_map__fd(c->skel->maps.targets),
				     c->opts.probes);
	if (!c->probes) {
		ret = -errno;
		collector__errf(err, errlen, "probe rings: %s", strerror(-ret));
		return ret;
	}
	if (c->offcpu) {
		ret = offcpu__attach(c->offcpu, err, errlen);
		if (!ret)
			ret = offcpu__snapshot(c->offcpu, c->targets, c->ntargets,
					       c->opts.system_wide, collector__now_ns());
		if (ret) {
			if (!err || !err[0])
				collector__errf(err, errlen, "off-CPU start snapshot: %s", strerror(-ret));
			return ret;
		}
	}
	ret = collector__emit_meta(c);
	if (ret) {
		collector__errf(err, errlen, "writing recording metadata: %s", strerror(-ret));
		return ret;
	}
	if (c->opts.system_wide)
		ret = collector__snapshot_all(c, c->start_ns);
	for (i = 0; !ret && !c->opts.system_wide && i < c->ntargets; i++)
		ret = collector__snapshot_process(c, c->targets[i], c->start_ns);
	if (ret) {
		collector__errf(err, errlen, "/proc snapshot: %s", strerror(-ret));
		return ret;
	}
	/* The recording window (meta duration_ns, from the first ROUND to END)
	 * starts here, when sampling does: not before the BPF load and the
	 * snapshots above.  A ROUND now, then a drain, keeps the watermark rule
	 * (stream.h): whatever the rings hold from before it is delivered next. */
	c->sampling_ns = collector__now_ns();
	ret = collector__attach_sampling(c, err, errlen);
	if (ret)
		return ret;
	ret = collector__emit(c, MS_CHUNK_ROUND, 0, c->sampling_ns, NULL, 0);
	if (!ret) {
		ret = collector__drain(c);
		ret = ret < 0 ? ret : 0;
	}
	if (ret)
		collector__errf(err, errlen, "draining the first round: %s", strerror(-ret));
	return ret;
}

/*
 * Stop sampling now (collector.h): async-signal-safe (clock_gettime and
 * ioctl only), so a SIGALRM/SIGINT handler can end the sampling window on
 * time even while the drain loop is busy processing.  Disables every
 * per-CPU sampling event (PERF_EVENT_IOC_DISABLE, include/uapi/linux/
 * perf_event.h); collector__stop still tears everything down, and stamps
 * END with the time taken here.
 */
void collector__halt_sampling(struct collector *c)
{
	int i;

	if (!c || !c->started || c->stopped || c->halted || !c->period_fds)
		return;
	c->halt_ns = collector__now_ns();
	for (i = 0; i < c->nr_online; i++)
		if (c->period_fds[i] >= 0)
			ioctl(c->period_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	c->halted = 1;
}

uint64_t collector__halted_at(const struct collector *c)
{
	return c && c->halted ? c->halt_ns : 0;
}

/* A probe record (collector/probes.h) as a MS_CHUNK_BPF chunk. */
static int collector__emit_probe(void *ctx, const void *rec, size_t len)
{
	return collector__emit(ctx, MS_CHUNK_BPF, MS_SOURCE_PROBES, 0, rec, len);
}

/*
 * Wait up to timeout_ms (-1: forever) for a ring to signal, then emit ROUND
 * (CLOCK_MONOTONIC ns, taken before draining) and drain every ring.  Returns
 * the records emitted, 0 on EINTR, or -errno (sink errors pass through).
 */
int collector__poll(struct collector *c, int timeout_ms)
{
	struct epoll_event events[EPOLL_BATCH];
	int n, err;

	if (!c->started || c->stopped)
		return -EINVAL;
	n = epoll_wait(c->epoll_fd, events, EPOLL_BATCH, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	__u64 round_ns = collector__now_ns();
	err = collector__emit(c, MS_CHUNK_ROUND, 0, round_ns, NULL, 0);
	if (err)
		return err;
	n = collector__drain(c);
	if (n < 0)
		return n;
	/* After the ROUND, as the rings: what the SDK stamped before it is
	 * delivered before the next one (stream.h's watermark rule). */
	err = probe_rings__drain(c->probes, round_ns, collector__emit_probe, c);
	return err < 0 ? err : n + err;
}

int collector__wake_on(struct collector *c, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = fd};

	if (!c || c->epoll_fd < 0 || fd < 0)
		return -EINVAL;
	return epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}


static int collector__emit_record(void *ctx, const void *rec, size_t len)
{
	struct collector *c = ctx;

	c->bpf_records++;
	return collector__emit(c, MS_CHUNK_BPF, 0, 0, rec, len);
}

/*
 * Stop (collector.h): destroy the sampling links (disabling and closing the
 * events), disable the side-band events, emit a last ROUND, drain, emit the
 * COUNTER chunks and END.  Returns 0 or -errno.
 */
int collector__stop(struct collector *c)
{
	__u64 stop_ns;
	int i, n, err;

	if (!c->started || c->stopped)
		return -EINVAL;
	c->stopped = true;
	offcpu__detach(c->offcpu);
	stop_ns = c->halted ? c->halt_ns : collector__now_ns();
	for (i = 0; i < c->nr_online; i++) {
		bpf_link__destroy(c->links[i]);
		c->links[i] = NULL;
	}
	bpf_link__destroy(c->fork_link);
	bpf_link__destroy(c->exit_link);
	bpf_link__destroy(c->exec_link);
	c->fork_link = c->exit_link = c->exec_link = NULL;
	for (i = 0; i < c->nr_online; i++)
		if (c->rings[i].fd >= 0)
			ioctl(c->rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);

	err = collector__emit(c, MS_CHUNK_ROUND, 0, collector__now_ns(), NULL, 0);
	if (err)
		return err;
	n = collector__drain(c);
	if (n < 0)
		return n;
	/* the last records, then writing switched off in every target */
	err = probe_rings__stop(c->probes, collector__now_ns(), collector__emit_probe, c);
	if (err)
		return err;
	if (c->offcpu) {
		err = offcpu__sweep(c->offcpu, stop_ns, collector__emit_record, c);
		if (err)
			return err;
	}
	err = collector__emit_counters(c);
	if (err)
		return err;
	/* END carries when sampling stopped, not when the drain above ended:
	 * the recording window is first ROUND .. END (meta duration_ns). */
	return collector__emit(c, MS_CHUNK_END, 0, stop_ns, NULL, 0);
}

/* Release every program, link, map, perf fd and ring.  Accepts NULL. */
void collector__free(struct collector *c)
{
	int i;

	if (!c)
		return;
	for (i = 0; c->links && i < c->nr_online; i++)
		bpf_link__destroy(c->links[i]);
	for (i = 0; c->sample_fds && i < c->nr_online; i++)
		if (c->sample_fds[i] >= 0)
			close(c->sample_fds[i]);
	for (i = 0; c->period_fds && i < c->nr_online; i++)
		if (c->period_fds[i] >= 0)
			close(c->period_fds[i]);
	bpf_link__destroy(c->fork_link);
	bpf_link__destroy(c->exit_link);
	bpf_link__destroy(c->exec_link);
	for (i = 0; c->rings && i < c->nr_online; i++) {
		if (c->rings[i].base)
			munmap(c->rings[i].base, c->rings[i].map_bytes);
		if (c->rings[i].fd >= 0)
			close(c->rings[i].fd);
	}
	bpf_ring__free(c->rb_off);
	bpf_ring__free(c->rb);
	offcpu__free(c->offcpu);
	probe_rings__free(c->probes);
	if (c->epoll_fd >= 0)
		close(c->epoll_fd);
	sampler_bpf__destroy(c->skel);
	free(c->links);
	free(c->sample_fds);
	free(c->period_fds);
	free(c->rings);
	free(c->online);
	free(c->targets);
	free(c->copy_buf);
	free(c->snap_buf);
	free(c->line);
	free(c);
}

/*
 * Sampling duty (collector.h).  cpu-clock events were opened with attr.freq,
 * which the kernel turns into a fixed period of NSEC_PER_SEC / freq ns and
 * clears attr.freq (perf_swevent_init_hrtimer, kernel/events/core.c), so
 * PERF_EVENT_IOC_PERIOD takes a period in ns there; on a hardware event still
 * in frequency mode it takes the new frequency (__perf_event_period).  Either
 * way the running event is stopped and restarted with the new value.
 */
int collector__set_duty(struct collector *c, uint32_t factor)
{
	bool freq_mode = c->event_name && !strcmp(c->event_name, "cycles");
	__u64 base = 1000000000ull / (c->opts.freq_hz ? c->opts.freq_hz : 1);
	__u64 value = freq_mode ? c->opts.freq_hz / factor : base * factor;
	struct ms_duty duty = {.factor = factor};
	__u64 t;
	int i;

	if (!c->started || c->stopped || !factor)
		return -EINVAL;
	if (!value)
		value = 1;
	t = collector__now_ns();
	for (i = 0; i < c->nr_online; i++) {
		if (c->period_fds[i] < 0)
			continue;
		if (ioctl(c->period_fds[i], PERF_EVENT_IOC_PERIOD, &value))
			return -errno;
	}
	c->duty_factor = factor;
	duty.period = freq_mode ? 0 : value;
	return collector__emit(c, MS_CHUNK_DUTY, 0, t, &duty, sizeof(duty));
}

/*
 * BPF run statistics (collector.h): run_time_ns and run_cnt of every program
 * of the sampler object, from struct bpf_prog_info (include/uapi/linux/bpf.h),
 * which the kernel fills only while BPF stats are enabled.
 */
int collector__bpf_stats(struct collector *c, uint64_t *run_ns, uint64_t *sampler_runs)
{
	int err;

	*run_ns = 0;
	*sampler_runs = 0;
	err = prog_stats__add(c->skel->obj, c->skel->progs.handle_sample, run_ns, sampler_runs);
	if (err)
		return err;
	if (c->offcpu) {
		/* the off-CPU programs are recorder work too (record --off-cpu) */
		__u64 off_ns = 0;

		err = offcpu__bpf_run_ns(c->offcpu, &off_ns);
		if (err)
			return err;
		*run_ns += off_ns;
	}
	return 0;
}

/*
 * The CPython walk (collector.h): handle_sample_py from a second open of the
 * sampler object, every map of which is the loaded sampler's (.rodata too,
 * frozen: the verifier reads the same settings), with only that program
 * loaded; then its fd goes into py_walker, where handle_sample tail-calls it.
 */
int collector__load_python_walk(struct collector *c)
{
	struct sampler_bpf *w = NULL;
	struct bpf_program *prog;
	struct bpf_map *map;
	__u32 key = 0;
	int fd, ret = 0;

	if (c->py_skel)
		return 0;
	w = sampler_bpf__open();
	if (!w)
		return -errno;
	bpf_object__for_each_map(map, w->obj) {
		struct bpf_map *orig = bpf_object__find_map_by_name(c->skel->obj, bpf_map__name(map));

		ret = orig ? bpf_map__reuse_fd(map, bpf_map__fd(orig)) : -ENOENT;
		if (ret)
			goto cleanup;
	}
	bpf_object__for_each_program(prog, w->obj) {
		ret = bpf_program__set_autoload(prog, prog == w->progs.handle_sample_py);
		if (ret)
			goto cleanup;
	}
	ret = sampler_bpf__load(w);
	if (ret)
		goto cleanup;
	fd = bpf_program__fd(w->progs.handle_sample_py);
	if (bpf_map_update_elem(bpf_map__fd(c->skel->maps.py_walker), &key, &fd, BPF_ANY)) {
		ret = -errno;
		goto cleanup;
	}
	c->py_skel = w;
	w = NULL;
cleanup:
	sampler_bpf__destroy(w);
	return ret;
}

bool collector__kunwind(const struct collector *c)
{
	return c && c->kunwind;
}

int collector__map_fd(struct collector *c, const char *name)
{
	struct bpf_map *m;

	if (!c || !c->skel || !c->skel->obj)
		return -ENOENT;
	m = bpf_object__find_map_by_name(c->skel->obj, name);
	return m ? bpf_map__fd(m) : -ENOENT;
}

int collector__scope_set(struct collector *c, uint64_t id, bool in)
{
	__u8 one = 1;
	int fd;

	if (!c || !c->skel)
		return -ENOENT;
	fd = bpf_map__fd(c->skel->maps.scope_cgroups);
	if (in ? bpf_map_update_elem(fd, &id, &one, BPF_ANY) : bpf_map_delete_elem(fd, &id))
		return errno == ENOSPC ? -E2BIG : -errno;
	return 0;
}

const volatile uint64_t *collector__targets_gen(const struct collector *c)
{
	return c && c->skel && c->skel->bss ? (const volatile uint64_t *)&c->skel->bss->targets_gen
					    : NULL;
}

const volatile uint64_t *collector__py_threads_gen(const struct collector *c)
{
	return c && c->skel && c->skel->bss
		       ? (const volatile uint64_t *)&c->skel->bss->py_threads_gen
		       : NULL;
}

volatile uint64_t *collector__py_threads_written(const struct collector *c)
{
	return c && c->skel && c->skel->bss
		       ? (volatile uint64_t *)&c->skel->bss->py_threads_written
		       : NULL;
}

uint64_t collector__lost(const struct collector *c)
{
	return c ? c->lost_events : 0;
}
