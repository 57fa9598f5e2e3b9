// SPDX-License-Identifier: MIT
/*
 * The collector (collector.h): owns the sampler skeleton, the per-CPU perf
 * events and every ring; frames what it drains as stream chunks.
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
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <sched.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/kunwind.h"
#include "bpf/abi/records.h"
#include "bpf_ring.h"
#include "collector.h"
#include "offcpu.h"
#include "probes.h"
#include "prog_stats.h"
#include "../stream/memory_policy.h"
#include "../stream/meta.h"
#include "../stream/perf_records.h"
#include "skel/sampler.skel.h"

#define BTF_VMLINUX	"/sys/kernel/btf/vmlinux"
/* A sample the in-kernel unwinder stopped for want of tables wakes the
 * drain loop at most this often (bpf/kunwind.bpf.h ku_wake_ns): the tables
 * a starting process needs are written a few ms after its first samples,
 * not a drain interval (up to 100 ms) later.  Only while samples stop so. */
#define KU_WAKE_NS	(2 * 1000000ull)
/* Tests: --call-graph auto behaves as if the kernel refused the in-kernel
 * unwinder (it copies stacks, and says why in META). */
#define KU_TEST_REFUSE_ENV "MICROSCOPE_TEST_KUNWIND_REFUSE"
#define SNAP_BUF_BYTES	(MS_PERF_RECORD_MAX)
#define EPOLL_BATCH	16

/* Capability numbers (include/uapi/linux/capability.h). */
#define CAP_SYS_ADMIN_BIT 21
#define CAP_PERFMON_BIT	  38
#define CAP_BPF_BIT	  39

/* One side-band perf ring: a dummy event on one CPU. */
struct perf_ring {
	int fd;
	__u32 cpu;
	void *base;	  /* metadata page, then data pages */
	size_t map_bytes; /* whole mapping */
	char *data;
	__u64 data_size; /* bytes, power of two */
};

struct collector {
	struct record_options opts; /* pointers inside are borrowed */
	stream_sink_fn sink;
	void *sink_ctx;

	struct sampler_bpf *skel;
	struct sampler_bpf *py_skel; /* handle_sample_py's load (collector__load_python_walk) */
	struct offcpu *offcpu; /* --off-cpu, else NULL */
	struct probe_rings *probes; /* probes SDK rings of targets; NULL under -a */
	struct bpf_ring *rb;	  /* the sampler's ring */
	struct bpf_ring *rb_off;  /* the off-CPU ring (--off-cpu), or NULL */
	uint32_t offcpu_ring_bytes; /* its size (the sampler's: opts.ringbuf_bytes) */
	struct bpf_link *fork_link;
	struct bpf_link *exit_link;
	struct bpf_link *exec_link; /* -a with Python frames: CPython processes join at exec */
	int epoll_fd;
	long page_size;

	int nr_possible;	 /* possible CPUs (per-CPU map value count) */
	int nr_online;		 /* CPUs with events */
	int *online;		 /* [nr_online] CPU ids */
	int *sample_fds;	 /* [nr_online], -1 once owned by a link */
	int *period_fds;	 /* [nr_online] dups of the sampling fds for PERF_EVENT_IOC_PERIOD,
				    -1 if none; ours to close */
	__u32 duty_factor;	 /* sampling period multiplier in force (1 = requested rate) */
	struct bpf_link **links; /* [nr_online] */
	struct perf_ring *rings; /* [nr_online] */

	pid_t *targets;
	size_t ntargets, targets_cap;

	const char *event_name; /* "cpu-clock" or "cycles" */
	char event_note[160];
	bool build_ids;
	bool started, stopped;
	__u64 start_ns;
	__u64 sampling_ns;		/* CLOCK_MONOTONIC ns just before sampling was attached */
	volatile __u64 halt_ns;		/* set by collector__halt_sampling before halted */
	volatile sig_atomic_t halted;	/* sampling events disabled (signal-safe stop) */

	/* Counters reported at stop. */
	__u64 bpf_records, perf_records;
	__u64 lost_records, lost_events;
	__u64 ring_errors;     /* malformed perf ring headers: rest of ring skipped */
	__u64 snapshot_errors; /* /proc files of a live target that could not be read */
	__u64 snapshot_exited; /* processes or threads gone between listing and reading */
	bool have_find_vma;    /* the kernel has bpf_find_vma (stack copy bounds) */
	bool kunwind;	       /* the sampler unwinds user stacks in the kernel */
	char ku_refused[192];  /* --call-graph auto: why it does not (META) */

	struct perf_sample_id_layout sideband_id; /* trailer of MS_SIDEBAND_SAMPLE_TYPE */
	char *copy_buf; /* [MS_PERF_RECORD_MAX]: wrap-around perf records */
	char *snap_buf; /* [SNAP_BUF_BYTES]: synthesized records, META text */
	char *line;	/* getline buffer for /proc files */
	size_t line_cap;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}


static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Format an error message into err (which may be NULL). */
static void __attribute__((format(printf, 3, 4)))
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int collector__emit(struct collector *c, __u32 kind, __u32 source, __u64 time,
			   const void *payload, size_t len)
{
	struct ms_chunk chunk = {.kind = kind, .source = source, .len = (__u32)len, .time = time};

	if (len > MS_CHUNK_MAX_PAYLOAD)
		return -E2BIG;
	return c->sink(c->sink_ctx, &chunk, payload);
}

static int __attribute__((format(printf, 3, 4)))
collector__emit_text(struct collector *c, __u32 kind, const char *fmt, ...)
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

/* ---- diagnosis of permission and environment failures ---- */

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

/*
 * Name the likely cause of a failure to load BPF (bpf = true) or to open a
 * CPU-wide perf event (bpf = false) into buf.
 */
static void diagnose(int err, bool bpf, const char *what, char *buf, size_t len)
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

/* ---- CPUs ---- */

/* Parse a CPU list such as "0-3,5" (Documentation/admin-guide/cputopology.rst). */
static int parse_cpu_list(const char *s, int *out, int max)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -EINVAL;
			s = end;
		}
		for (; a <= b; a++) {
			if (n >= max)
				return -E2BIG;
			out[n++] = (int)a;
		}
		if (*s == ',')
			s++;
	}
	return n;
}

static int collector__find_cpus(struct collector *c)
{
	char buf[4096];
	ssize_t n;
	int fd, i;

	c->nr_possible = libbpf_num_possible_cpus();
	if (c->nr_possible <= 0)
		return c->nr_possible < 0 ? c->nr_possible : -ENODEV;
	c->online = calloc((size_t)c->nr_possible, sizeof(*c->online));
	if (!c->online)
		return -ENOMEM;
	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			c->nr_online = parse_cpu_list(buf, c->online, c->nr_possible);
			if (c->nr_online > 0)
				return 0;
		}
	}
	for (i = 0; i < c->nr_possible; i++) /* fall back: every possible CPU */
		c->online[i] = i;
	c->nr_online = c->nr_possible;
	return 0;
}

/* ---- ring draining ---- */

static int on_bpf_record(void *ctx, const void *data, size_t size)
{
	struct collector *c = ctx;

	c->bpf_records++;
	return collector__emit(c, MS_CHUNK_BPF, 0, 0, data, size);
}

/*
 * Drain one perf ring: every record between data_tail and data_head
 * (load-acquire of data_head pairs with the kernel's store; the store-release
 * of data_tail tells the kernel the space is free; perf_event.h, "struct
 * perf_event_mmap_page").  Returns the records emitted or -errno.
 */
static int collector__drain_perf(struct collector *c, struct perf_ring *r)
{
	struct perf_event_mmap_page *pc = r->base;
	__u64 head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = pc->data_tail;
	__u64 mask = r->data_size - 1;
	int n = 0, err = 0;

	while (tail < head) {
		struct perf_event_header hdr;
		__u64 avail = head - tail, off = tail & mask;
		const char *rec;

		if (avail > r->data_size || avail < sizeof(hdr))
			goto corrupt;
		/* records are 8-aligned, so the header never wraps; check anyway */
		if (off + sizeof(hdr) > r->data_size)
			goto corrupt;
		memcpy(&hdr, r->data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > avail)
			goto corrupt;
		if (off + hdr.size <= r->data_size) {
			rec = r->data + off;
		} else {
			size_t first = r->data_size - off;

			memcpy(c->copy_buf, r->data + off, first);
			memcpy(c->copy_buf + first, r->data, hdr.size - first);
			rec = c->copy_buf;
		}
		if (hdr.type == PERF_RECORD_LOST) {
			struct perf_lost lost;

			if (!perf_rec__parse_lost(&c->sideband_id, rec, hdr.size, &lost)) {
				c->lost_records++;
				c->lost_events += lost.f.lost;
			}
		}
		c->perf_records++;
		err = collector__emit(c, MS_CHUNK_PERF, r->cpu, 0, rec, hdr.size);
		tail += hdr.size;
		if (err)
			break;
		n++;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
	return err ? err : n;
corrupt:
	/* A header the kernel cannot have written: skip what is there. */
	c->ring_errors++;
	__atomic_store_n(&pc->data_tail, head, __ATOMIC_RELEASE);
	return n;
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

/* ---- /proc snapshot ---- */

/* The trailer of a synthesized record: the time of the snapshot, this CPU. */
static struct perf_sample_id sample_id__snapshot(pid_t pid, pid_t tid, __u64 time)
{
	int cpu = sched_getcpu();

	return (struct perf_sample_id){
		.pid = (__u32)pid,
		.tid = (__u32)tid,
		.time = time,
		.cpu = cpu < 0 ? 0 : (__u32)cpu,
	};
}

/* Emit a record built into snap_buf (size from a perf_rec__build_* call). */
static int snapshot__emit(struct collector *c, int size)
{
	if (size < 0)
		return 0; /* did not fit: a /proc line longer than a perf record, skipped */
	c->perf_records++;
	return collector__emit(c, MS_CHUNK_PERF, MS_SOURCE_SNAPSHOT, 0, c->snap_buf, (size_t)size);
}

static int snapshot__comm(struct collector *c, pid_t pid, pid_t tid, const char *comm, __u64 time)
{
	struct perf_sample_id id = sample_id__snapshot(pid, tid, time);

	return snapshot__emit(c, perf_rec__build_comm(c->snap_buf, SNAP_BUF_BYTES, &c->sideband_id,
						      0, (__u32)pid, (__u32)tid, comm, &id));
}

static int snapshot__fork(struct collector *c, pid_t pid, pid_t ppid, pid_t tid, __u64 time)
{
	struct perf_sample_id id = sample_id__snapshot(pid, tid, time);
	/* As perf synthesizes it: the main thread's parent is the parent
	 * process; other threads were spawned by the main thread. */
	struct perf_rec_task t = {
		.pid = (__u32)pid,
		.tid = (__u32)tid,
		.ppid = (__u32)(pid == tid ? ppid : pid),
		.ptid = (__u32)(pid == tid ? ppid : pid),
		.time = time,
	};

	return snapshot__emit(c, perf_rec__build_task(c->snap_buf, SNAP_BUF_BYTES, &c->sideband_id,
						      PERF_RECORD_FORK, &t, &id));
}

/* Read a small /proc file into buf (NUL-terminated, trailing newline cut). */
static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static pid_t proc__ppid(pid_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\nPPid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : 0;
}

/* One line of /proc/PID/maps (fs/proc/task_mmu.c, show_map_vma) as MMAP2. */
static int snapshot__mapping(struct collector *c, pid_t pid, const char *line, __u64 time)
{
	struct perf_sample_id id = sample_id__snapshot(pid, pid, time);
	struct perf_rec_mmap2 r = { .header.misc = PERF_RECORD_MISC_USER };
	unsigned long long start, end, pgoff, ino;
	unsigned int maj, min;
	char perms[8];
	const char *path;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
		   &min, &ino, &pos) < 7 ||
	    !pos)
		return 0;
	if (strlen(perms) < 4 || perms[2] != 'x' || end <= start)
		return 0;
	path = line + pos;
	if (!*path)
		path = "//anon"; /* perf's name for anonymous executable memory */
	r.pid = r.tid = (__u32)pid;
	r.addr = start;
	r.len = end - start;
	r.pgoff = pgoff;
	r.maj = maj;
	r.min = min;
	r.ino = ino;
	if (path[0] == '/') {
		/* As stat(2) sees the mapped file, like the processor's check of
		 * a path against the record when map_files is gone. */
		char mf[96];
		struct stat st;

		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%llx-%llx", pid, start, end);
		if (!stat(mf, &st)) {
			r.maj = major(st.st_dev);
			r.min = minor(st.st_dev);
			r.ino = st.st_ino;
		}
	}
	r.prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
	r.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	return snapshot__emit(c, perf_rec__build_mmap2(c->snap_buf, SNAP_BUF_BYTES - 8,
						       &c->sideband_id, &r, path, &id));
}

static int snapshot__maps(struct collector *c, pid_t pid, __u64 time)
{
	char path[64];
	ssize_t n;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((n = getline(&c->line, &c->line_cap, f)) > 0) {
		if (c->line[n - 1] == '\n')
			c->line[n - 1] = '\0';
		err = snapshot__mapping(c, pid, c->line, time);
		if (err)
			break;
	}
	fclose(f);
	return err;
}

static uint64_t ns_inode(pid_t pid, const char *ns)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", pid, ns);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* Namespaces, NSpid and start time of pid as a MS_CHUNK_PROCESS chunk. */
static int snapshot__process_info(struct collector *c, pid_t pid)
{
	struct ms_process_info info = { .pid = (uint32_t)pid };
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;

	info.pidns = ns_inode(pid, "pid");
	info.mntns = ns_inode(pid, "mnt");
	info.cgroupns = ns_inode(pid, "cgroup");
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (!read_small(path, buf, sizeof(buf)) && (p = strrchr(buf, ')'))) {
		/* fields after "comm)": state is field 3, starttime field 22 */
		if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
				  "%*d %*d %*d %llu",
			   &start) == 1) {
			long hz = sysconf(_SC_CLK_TCK);

			if (hz > 0)
				info.start_time_ns = start * (1000000000ull / (unsigned long long)hz);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			if (!strncmp(buf, "NSpid:", 6)) {
				/* the last field is the innermost namespace's pid */
				char *last = strrchr(buf, '\t');

				info.ns_pid = last ? (uint32_t)strtoul(last + 1, NULL, 10) : 0;
				break;
			}
		}
		fclose(f);
	}
	return collector__emit(c, MS_CHUNK_PROCESS, MS_SOURCE_SNAPSHOT, 0, &info, sizeof(info));
}

/*
 * A /proc read of a target that failed: a process or thread that exited
 * between the listing and the read (ENOENT, ESRCH) is the normal race of a
 * busy host, counted apart from a file that could not be read.
 */
static void snapshot__count(struct collector *c, int err)
{
	if (err == -ENOENT || err == -ESRCH)
		c->snapshot_exited++;
	else
		c->snapshot_errors++;
}

/*
 * Synthesize FORK and COMM for every thread of pid and MMAP2 for each of its
 * executable mappings.  A process that exits meanwhile is counted, not an
 * error; only sink errors are returned.
 */
static int collector__snapshot_process(struct collector *c, pid_t pid, __u64 time)
{
	char path[96], comm[64];
	pid_t ppid = proc__ppid(pid);
	struct dirent *de;
	DIR *dir;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir) {
		snapshot__count(c, -errno);
		return 0;
	}
	err = snapshot__process_info(c, pid);
	while (!err && (de = readdir(dir))) {
		pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
		err = read_small(path, comm, sizeof(comm));
		if (err) {
			snapshot__count(c, err);
			err = 0;
			continue;
		}
		err = snapshot__fork(c, pid, ppid, tid, time);
		if (!err)
			err = snapshot__comm(c, pid, tid, comm, time);
		if (err)
			break;
	}
	closedir(dir);
	if (err)
		return err;
	err = snapshot__maps(c, pid, time);
	if (err == -ENOENT || err == -ESRCH || err == -EACCES) {
		snapshot__count(c, err);
		err = 0;
	}
	return err;
}

static int collector__snapshot_all(struct collector *c, __u64 time)
{
	struct dirent *de;
	DIR *dir;
	int err = 0;

	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t pid = (pid_t)strtol(de->d_name, NULL, 10);

		if (pid <= 0 || !isdigit((unsigned char)de->d_name[0]))
			continue;
		err = collector__snapshot_process(c, pid, time);
		if (err)
			break;
	}
	closedir(dir);
	return err;
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
		errf(err, errlen, "off-CPU ring buffer: %s", strerror(-ret));
		return ret;
	}
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		ret = -errno;
		errf(err, errlen, "epoll_ctl: %s", strerror(-ret));
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
		diagnose(ret, true, "opening the BPF sampler", err, errlen);
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
		errf(err, errlen, "BPF ring buffer size: %s", strerror(-ret));
		goto cleanup;
	}
	/* In-kernel unwinding: its tables at their policy sizes (a single
	 * entry each when off, so nothing is allocated). */
	c->skel->rodata->kunwind_mode = !kunwind ? 0
				       : o->verify_unwind ? MS_KU_MODE_VERIFY
							  : MS_KU_MODE_ON;
	c->skel->rodata->ku_wake_ns = kunwind ? KU_WAKE_NS : 0;
	c->skel->rodata->ku_fp_chain = kunwind && o->call_graph == MS_CALL_GRAPH_AUTO;
	if (kunwind && getrandom((void *)&c->skel->rodata->ku_cookie_key,
				 sizeof(c->skel->rodata->ku_cookie_key), 0) < 0)
		c->skel->rodata->ku_cookie_key = now_ns(); /* only needs to be unknown outside */
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
		errf(err, errlen, "BPF unwinder table sizes: %s", strerror(-ret));
		goto cleanup;
	}
	/* One scratch record per possible CPU (indexed by CPU id). */
	ret = bpf_map__set_max_entries(c->skel->maps.scratch, (__u32)c->nr_possible);
	if (ret) {
		errf(err, errlen, "BPF scratch map size: %s", strerror(-ret));
		goto cleanup;
	}
	if (quiet)
		old_print = libbpf_set_print(print_nothing);
	ret = sampler_bpf__load(c->skel);
	if (quiet)
		libbpf_set_print(old_print);
	if (ret) {
		diagnose(ret, true, "loading the BPF sampler", err, errlen);
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
		diagnose(ret, true, "loading the BPF sampler", err, errlen);
		goto cleanup;
	}
	/* Without the capabilities the load fails anyway: say why before
	 * libbpf prints its own guesses (RLIMIT_MEMLOCK, CONFIG_BPF_SYSCALL). */
	if (!cap_effective(CAP_SYS_ADMIN_BIT) &&
	    (!cap_effective(CAP_BPF_BIT) || !cap_effective(CAP_PERFMON_BIT))) {
		ret = -EPERM;
		diagnose(ret, true, "loading the BPF sampler", err, errlen);
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
		errf(err, errlen, "cannot determine the CPUs: %s", strerror(-ret));
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
			errf(err, errlen, "BPF cgroup filter: %s", strerror(-ret));
			goto cleanup;
		}
	}
	c->rb = bpf_ring__new(bpf_map__fd(c->skel->maps.samples), c->opts.ringbuf_bytes,
			      on_bpf_record, c);
	if (!c->rb) {
		ret = -errno;
		errf(err, errlen, "BPF ring buffer: %s", strerror(-ret));
		goto cleanup;
	}
	c->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epoll_fd < 0) {
		ret = -errno;
		errf(err, errlen, "epoll_create1: %s", strerror(-ret));
		goto cleanup;
	}
	ev.data.fd = bpf_map__fd(c->skel->maps.samples);
	if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, ev.data.fd, &ev)) {
		ret = -errno;
		errf(err, errlen, "epoll_ctl: %s", strerror(-ret));
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

/* The process a thread id belongs to ("Tgid:" in /proc/PID/status), or 0. */
static pid_t proc__tgid(pid_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\nTgid:");
	return p ? (pid_t)strtol(p + 6, NULL, 10) : 0;
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
	return probe_rings__add_pid(c->probes, (uint32_t)pid, now_ns());
}

bool collector__probes_has(const struct collector *c, pid_t pid)
{
	return c && c->probes && pid > 0 && probe_rings__has(c->probes, (uint32_t)pid);
}

int collector__probe_fork(struct collector *c, pid_t ppid, pid_t pid)
{
	if (!c->probes || ppid <= 0 || pid <= 0)
		return -EINVAL;
	return probe_rings__add_child(c->probes, (uint32_t)ppid, (uint32_t)pid, now_ns());
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
	tgid = proc__tgid(pid);
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
	return collector__snapshot_process(c, pid, now_ns());
}

static void attr__init_sampling(struct perf_event_attr *a, const struct record_options *o,
				bool cycles)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a->config = cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = o->freq_hz;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_idle = 1; /* the sampler drops the idle task anyway */
	a->disabled = 1;     /* enabled by bpf_program__attach_perf_event */
}

/*
 * No attr.build_id: with it the kernel flags the mmap event's header, shared
 * by every listener, PERF_RECORD_MISC_MMAP_BUILD_ID (perf_event_mmap_output),
 * and other tools asking for maj/min/ino (perf record) misparse their
 * records and crash.  The processor reads build IDs from the mapped files.
 */
static void attr__init_dummy(struct perf_event_attr *a, __u64 ring_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = MS_SIDEBAND_SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (__u32)(ring_bytes / 4);
}

/* Choose the sampling event: cycles if asked for and the CPU has it. */
static int collector__pick_event(struct collector *c, char *err, size_t errlen)
{
	struct perf_event_attr a;
	long fd;

	c->event_name = "cpu-clock";
	if (c->opts.event != MS_EVENT_CYCLES)
		return 0;
	attr__init_sampling(&a, &c->opts, true);
	fd = sys_perf_event_open(&a, -1, c->online[0]);
	if (fd >= 0) {
		close((int)fd);
		c->event_name = "cycles";
		return 0;
	}
	if (errno == EACCES || errno == EPERM) {
		diagnose(-errno, false, "perf_event_open(cycles)", err, errlen);
		return -errno;
	}
	snprintf(c->event_note, sizeof(c->event_note),
		 "cycles unavailable (%s: no hardware PMU counter); fell back to cpu-clock",
		 strerror(errno));
	return 0;
}

static int collector__open_rings(struct collector *c, char *err, size_t errlen)
{
	struct epoll_event ev = {.events = EPOLLIN};
	__u64 ring_bytes = (__u64)c->opts.perf_pages * (__u64)c->page_size;
	struct perf_event_attr a;
	int i, ret;

	c->build_ids = false;
	for (i = 0; i < c->nr_online; i++) {
		struct perf_ring *r = &c->rings[i];
		long fd;

		attr__init_dummy(&a, ring_bytes);
		fd = sys_perf_event_open(&a, -1, c->online[i]);
		if (fd < 0) {
			ret = -errno;
			diagnose(ret, false, "perf_event_open(dummy side-band event)", err, errlen);
			return ret;
		}
		r->fd = (int)fd;
		r->cpu = (__u32)c->online[i];
		r->map_bytes = (size_t)(ring_bytes + (__u64)c->page_size);
		r->base = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->base == MAP_FAILED) {
			ret = -errno;
			r->base = NULL;
			errf(err, errlen, "mmap of the perf ring (%llu bytes) on CPU %u: %s%s",
			     (unsigned long long)r->map_bytes, r->cpu, strerror(-ret),
			     ret == -EPERM ? " (kernel.perf_event_mlock_kb exceeded?)" : "");
			return ret;
		}
		r->data = (char *)r->base + c->page_size;
		r->data_size = ring_bytes;
		ev.data.fd = r->fd;
		if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, r->fd, &ev)) {
			ret = -errno;
			errf(err, errlen, "epoll_ctl: %s", strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static const char *collector__mode(const struct collector *c)
{
	if (c->opts.system_wide)
		return "system-wide";
	return c->opts.argv ? "launch" : "pid";
}

/* META command: argv joined with POSIX shell quoting where needed ("a b 'c d'"). */
static int collector__meta_command(struct collector *c)
{
	size_t cap = SNAP_BUF_BYTES - 1, n = 0;
	char *out = c->snap_buf;
	char **arg;

	for (arg = c->opts.argv; *arg && n < cap; arg++) {
		const char *p = *arg;
		bool plain = *p != '\0';

		for (; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("@%_+=:,./-", *p))
				plain = false;
		if (arg != c->opts.argv && n < cap)
			out[n++] = ' ';
		if (plain) {
			for (p = *arg; *p && n < cap; p++)
				out[n++] = *p;
			continue;
		}
		if (n < cap)
			out[n++] = '\'';
		for (p = *arg; *p && n + 4 < cap; p++) {
			if (*p == '\'') {
				memcpy(out + n, "'\\''", 4);
				n += 4;
			} else {
				out[n++] = *p;
			}
		}
		if (n < cap)
			out[n++] = '\'';
	}
	out[n] = '\0';
	return ms_meta__emit(c->sink, c->sink_ctx, MS_META_COMMAND, out);
}

/*
 * The recording's META chunks (stream/meta.h names every key, its type and
 * unit).  Returns 0 or the first error (-EINVAL for a value that is not of
 * its key's type, or the sink's).
 */
static int collector__emit_meta(struct collector *c)
{
	struct utsname u;
	char pids[MS_MAX_PIDS * 12 + 1] = "";
	__u32 copy_bytes = record_options__stack_copy_bytes(&c->opts);
	size_t i, n = 0;
	int err = 0;

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "unknown");
	for (i = 0; i < c->ntargets && n < sizeof(pids) - 12; i++)
		n += (size_t)snprintf(pids + n, sizeof(pids) - n, "%s%d", i ? "," : "",
				      c->targets[i]);

#define META_TEXT(id, v)                                                                           \
	do {                                                                                       \
		if (!err)                                                                          \
			err = ms_meta__emit(c->sink, c->sink_ctx, MS_META_##id, (v));              \
	} while (0)
#define META_U64(id, v)                                                                            \
	do {                                                                                       \
		if (!err)                                                                          \
			err = ms_meta__emit_u64(c->sink, c->sink_ctx, MS_META_##id, (__u64)(v));   \
	} while (0)
	META_U64(ABI_VERSION, MS_ABI_VERSION);
	META_TEXT(KERNEL_RELEASE, u.release);
	META_TEXT(MODE, collector__mode(c));
	META_TEXT(EVENT, c->event_name);
	META_TEXT(EVENT_REQUESTED, c->opts.event == MS_EVENT_CYCLES ? "cycles" : "cpu-clock");
	if (c->event_note[0])
		META_TEXT(EVENT_NOTE, c->event_note);
	META_U64(FREQ_HZ, c->opts.freq_hz);
	if (c->opts.probes)
		META_TEXT(PROBES_SELECT, c->opts.probes);
	META_TEXT(CLOCK, "CLOCK_MONOTONIC");
	META_TEXT(CALL_GRAPH, record_options__call_graph_name(c->opts.call_graph));
	if (c->kunwind)
		META_TEXT(KERNEL_UNWIND, "yes");
	else if (c->ku_refused[0])
		META_TEXT(KERNEL_UNWIND, c->ku_refused);
	if (c->opts.verify_unwind)
		META_U64(VERIFY_UNWIND, 1);
	META_TEXT(BPF_FIND_VMA, c->have_find_vma ? "yes" : "no (stack copies bounded page by page)");
	/* Bytes copied per sample at most: 0 with --call-graph fp. */
	META_U64(STACK_SIZE, copy_bytes);
	if (copy_bytes != c->opts.stack_size)
		META_U64(STACK_SIZE_REQUESTED, c->opts.stack_size);
	META_U64(RINGBUF_BYTES, c->opts.ringbuf_bytes);
	META_U64(PERF_PAGES, c->opts.perf_pages);
	META_U64(PERF_RING_BYTES, (__u64)c->opts.perf_pages * (__u64)c->page_size);
	META_U64(PAGE_SIZE, c->page_size);
	META_U64(NR_CPUS, c->nr_online);
	META_U64(NR_CPUS_POSSIBLE, c->nr_possible);
	META_U64(MMAP2_BUILD_ID, c->build_ids);
	META_U64(PERF_SAMPLE_TYPE, MS_SIDEBAND_SAMPLE_TYPE);
	if (c->ntargets && !c->opts.system_wide)
		META_TEXT(PIDS, pids);
	META_U64(START_TIME_NS, c->start_ns);
	META_U64(OFF_CPU, c->offcpu != NULL);
	if (c->offcpu)
		META_U64(OFF_CPU_MIN_NS, c->opts.off_cpu_min_ns);
#undef META_TEXT
#undef META_U64
	if (!err && c->opts.argv && c->opts.argv[0])
		err = collector__meta_command(c);
	return err;
}

static int collector__attach_sampling(struct collector *c, char *err, size_t errlen)
{
	bool cycles = !strcmp(c->event_name, "cycles");
	struct perf_event_attr a;
	int i, ret;

	for (i = 0; i < c->nr_online; i++) {
		long fd;

		attr__init_sampling(&a, &c->opts, cycles);
		fd = sys_perf_event_open(&a, -1, c->online[i]);
		if (fd < 0) {
			ret = -errno;
			diagnose(ret, false, "perf_event_open(sampling event)", err, errlen);
			return ret;
		}
		c->sample_fds[i] = (int)fd;
		/* Our own reference for PERF_EVENT_IOC_PERIOD: the link closes its fd. */
		c->period_fds[i] = fcntl((int)fd, F_DUPFD_CLOEXEC, 0);
		if (c->period_fds[i] < 0) {
			ret = -errno;
			errf(err, errlen, "dup of the sampling event on CPU %d: %s", c->online[i],
			     strerror(-ret));
			return ret;
		}
		c->links[i] =
		    bpf_program__attach_perf_event(c->skel->progs.handle_sample, c->sample_fds[i]);
		if (!c->links[i]) {
			ret = -errno;
			errf(err, errlen, "attaching the sampler to CPU %d: %s", c->online[i],
			     strerror(-ret));
			return ret;
		}
		c->sample_fds[i] = -1; /* the link owns it now */
	}
	return 0;
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
		errf(err, errlen, "no target process: add one or record system-wide");
		return -EINVAL;
	}
	c->started = true;
	c->start_ns = now_ns();
	ret = collector__pick_event(c, err, errlen);
	if (ret)
		return ret;
	/* -a: only for the CPython tracker's thread starts (py_threads_gen). */
	if (!c->opts.system_wide || c->opts.python == MS_PYTHON_BPF) {
		c->fork_link = bpf_program__attach(c->skel->progs.handle_fork);
		if (!c->fork_link) {
			ret = -errno;
			errf(err, errlen, "attaching sched_process_fork: %s", strerror(-ret));
			return ret;
		}
	}
	if (c->opts.system_wide && c->opts.python == MS_PYTHON_BPF) {
		c->exec_link = bpf_program__attach(c->skel->progs.handle_exec);
		if (!c->exec_link) {
			ret = -errno;
			errf(err, errlen, "attaching sched_process_exec: %s", strerror(-ret));
			return ret;
		}
	}
	if (!c->opts.system_wide || c->exec_link) {
		c->exit_link = bpf_program__attach(c->skel->progs.handle_exit);
		if (!c->exit_link) {
			ret = -errno;
			errf(err, errlen, "attaching sched_process_exit: %s", strerror(-ret));
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
		errf(err, errlen, "probe rings: %s", strerror(-ret));
		return ret;
	}
	if (c->offcpu) {
		ret = offcpu__attach(c->offcpu, err, errlen);
		if (!ret)
			ret = offcpu__snapshot(c->offcpu, c->targets, c->ntargets,
					       c->opts.system_wide, now_ns());
		if (ret) {
			if (!err || !err[0])
				errf(err, errlen, "off-CPU start snapshot: %s", strerror(-ret));
			return ret;
		}
	}
	ret = collector__emit_meta(c);
	if (ret) {
		errf(err, errlen, "writing recording metadata: %s", strerror(-ret));
		return ret;
	}
	if (c->opts.system_wide)
		ret = collector__snapshot_all(c, c->start_ns);
	for (i = 0; !ret && !c->opts.system_wide && i < c->ntargets; i++)
		ret = collector__snapshot_process(c, c->targets[i], c->start_ns);
	if (ret) {
		errf(err, errlen, "/proc snapshot: %s", strerror(-ret));
		return ret;
	}
	/* The recording window (meta duration_ns, from the first ROUND to END)
	 * starts here, when sampling does: not before the BPF load and the
	 * snapshots above.  A ROUND now, then a drain, keeps the watermark rule
	 * (stream.h): whatever the rings hold from before it is delivered next. */
	c->sampling_ns = now_ns();
	ret = collector__attach_sampling(c, err, errlen);
	if (ret)
		return ret;
	ret = collector__emit(c, MS_CHUNK_ROUND, 0, c->sampling_ns, NULL, 0);
	if (!ret) {
		ret = collector__drain(c);
		ret = ret < 0 ? ret : 0;
	}
	if (ret)
		errf(err, errlen, "draining the first round: %s", strerror(-ret));
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
	c->halt_ns = now_ns();
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

static int collector__probe_counter(void *ctx, const char *name, uint64_t value)
{
	return collector__emit_text(ctx, MS_CHUNK_COUNTER, "%s=%llu", name,
				    (unsigned long long)value);
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
	__u64 round_ns = now_ns();
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

static int collector__counter(void *ctx, const char *name, __u64 value)
{
	return collector__emit_text(ctx, MS_CHUNK_COUNTER, "%s=%llu", name,
				    (unsigned long long)value);
}

static int collector__emit_record(void *ctx, const void *rec, size_t len)
{
	struct collector *c = ctx;

	c->bpf_records++;
	return collector__emit(c, MS_CHUNK_BPF, 0, 0, rec, len);
}

static int collector__emit_counters(struct collector *c)
{
	static const char *const names[] = {MS_STATS_NAMES};
	struct ms_stats *per_cpu = NULL;
	__u64 sums[MS_STATS_COUNT] = {0};
	__u32 zero = 0;
	int cpu, i, err = 0;

	_Static_assert(sizeof(names) / sizeof(names[0]) == MS_STATS_COUNT, "MS_STATS_NAMES");
	per_cpu = calloc((size_t)c->nr_possible, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map__lookup_elem(c->skel->maps.ms_stats, &zero, sizeof(zero), per_cpu,
				 (size_t)c->nr_possible * sizeof(*per_cpu), 0)) {
		err = -errno;
		goto cleanup;
	}
	for (cpu = 0; cpu < c->nr_possible; cpu++) {
		const __u64 *v = (const __u64 *)&per_cpu[cpu];

		for (i = 0; i < MS_STATS_COUNT; i++)
			sums[i] += v[i];
	}
	for (i = 0; !err && i < MS_STATS_COUNT; i++)
		err = collector__emit_text(c, MS_CHUNK_COUNTER, "%s=%llu", names[i],
					   (unsigned long long)sums[i]);
#define COUNTER(name, v)                                                                           \
	do {                                                                                       \
		if (!err)                                                                          \
			err = collector__emit_text(c, MS_CHUNK_COUNTER, name "=%llu",              \
						   (unsigned long long)(v));                       \
	} while (0)
	COUNTER("bpf.lost_no_scratch", c->skel->bss->scratch_missing);
	COUNTER("perf.lost_records", c->lost_records);
	COUNTER("perf.lost_events", c->lost_events);
	COUNTER("perf.ring_errors", c->ring_errors);
	COUNTER("collector.bpf_records", c->bpf_records);
	COUNTER("collector.perf_records", c->perf_records);
	COUNTER("collector.snapshot_errors", c->snapshot_errors);
	COUNTER("collector.snapshot_exited", c->snapshot_exited);
#undef COUNTER
	if (!err && c->offcpu)
		err = offcpu__counters(c->offcpu, collector__counter, c);
	if (!err)
		err = probe_rings__counters(c->probes, collector__probe_counter, c);
cleanup:
	free(per_cpu);
	return err;
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
	stop_ns = c->halted ? c->halt_ns : now_ns();
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

	err = collector__emit(c, MS_CHUNK_ROUND, 0, now_ns(), NULL, 0);
	if (err)
		return err;
	n = collector__drain(c);
	if (n < 0)
		return n;
	/* the last records, then writing switched off in every target */
	err = probe_rings__stop(c->probes, now_ns(), collector__emit_probe, c);
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
	t = now_ns();
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
