// SPDX-License-Identifier: MIT
/* The targets' state at start-up from /proc, as the records the kernel would
 * have sent had it watched them from their start (collector_internal.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bpf/abi/records.h"
#include "../stream/meta.h"

#include "collector_internal.h"

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

/* A pid field of /proc/PID/status (key "\nPPid:", "\nTgid:"), or 0. */
static pid_t proc__status_pid(pid_t pid, const char *key)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, key);
	return p ? (pid_t)strtol(p + strlen(key), NULL, 10) : 0;
}

static pid_t proc__ppid(pid_t pid)
{
	return proc__status_pid(pid, "\nPPid:");
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
int collector__snapshot_process(struct collector *c, pid_t pid, __u64 time)
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

int collector__snapshot_all(struct collector *c, __u64 time)
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


/* The process a thread id belongs to ("Tgid:" in /proc/PID/status), or 0. */
pid_t collector__proc_tgid(pid_t pid)
{
	return proc__status_pid(pid, "\nTgid:");
}
