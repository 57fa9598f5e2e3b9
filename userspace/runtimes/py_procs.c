// SPDX-License-Identifier: MIT
/*
 * The CPython tracker (py_procs.h).  Detection reads /proc/PID/maps for a
 * libpython or python executable mapping, the module's ELF for Py_Version
 * and _PyRuntime (py_layout__read_elf), and places _PyRuntime through the
 * mapping of file offset 0.  The thread map is refreshed from every
 * interpreter's thread list (at most PY_INTERPS interpreters,
 * PY_THREADS_MAX states), each state's native_thread_id proved against the
 * process's own /proc/PID/task entries (NSpid) before its kernel tid is
 * written.  3.10 states carry only pthread_t: the BPF walker finds them by
 * search, so no map entries are written for them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "py_procs.h"
#include "py_procs_internal.h"

#define PY_INTERPS 4
#define PY_THREADS_MAX 1024
#define PY_TASKS_MAX 4096
#define PY_RETRY_FAST_NS (5ull * 1000 * 1000)
#define PY_RETRY_SLOW_NS (1000ull * 1000 * 1000)
/* A process gone from "targets" is forgotten this long after (ns): longer
 * than the processor holds samples back (cli/record_session.h's max lag). */
#define PY_FORGET_NS (30ull * 1000 * 1000 * 1000)
/* A recorded process not (yet) running CPython is tried every
 * PY_RETRY_FAST_NS (as often as the caller polls) for this long after the
 * first try (start-up under emulation is slow), then every
 * PY_RETRY_SLOW_NS.  A time, not a count of tries: how often the caller
 * polls depends on its wakeups (py_tracker__due). */
#define PY_FAST_NS (10ull * 1000 * 1000 * 1000)
/* A process whose thread count has not changed is refreshed this often
 * (ns); one whose count changed, at every refresh for PY_HOT_NS after. */
#define PY_FULL_REFRESH_NS (1000ull * 1000 * 1000)
#define PY_HOT_NS (200ull * 1000 * 1000)
/* /proc/PID/task directories held open (fstat instead of a path walk per
 * refresh); processes beyond this many are looked at by path. */
#define PY_TASK_FDS 64

int py_mem__read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	ssize_t got;

	if (!addr)
		return -EFAULT;
	got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (got < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)got == n ? 0 : -EFAULT;
}

static int mem__u64(pid_t pid, uint64_t addr, uint64_t *v)
{
	return py_mem__read(pid, addr, v, sizeof(*v));
}

bool py_module__is_candidate(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	if (!strncmp(base, "libpython3.", 11) && strstr(base, ".so"))
		return true;
	return !strncmp(base, "python3", 7);
}

struct py_tracker *py_tracker__new(int procs_fd, int threads_fd, int targets_fd, int exits_fd)
{
	struct py_tracker *t = calloc(1, sizeof(*t));
	struct stat st;

	if (!t)
		return NULL;
	t->procs_fd = procs_fd;
	t->threads_fd = threads_fd;
	t->targets_fd = targets_fd;
	t->exits_fd = exits_fd;
	if (!stat("/proc/self/ns/pid", &st))
		t->self_pidns = st.st_ino;
	return t;
}

void py_tracker__on_first_process(struct py_tracker *t, int (*first)(void *ctx), void *ctx)
{
	t->first = first;
	t->first_ctx = ctx;
}

void py_tracker__free(struct py_tracker *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->nprocs; i++) {
		free(t->procs[i].tids);
		if (t->procs[i].task_fd >= 0)
			close(t->procs[i].task_fd);
	}
	free(t->procs);
	free(t->tasks);
	free(t);
}

static struct py_proc *tracker__proc(struct py_tracker *t, pid_t pid, bool add)
{
	for (uint32_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid)
			return &t->procs[i];
	if (!add)
		return NULL;
	if (t->nprocs == t->procs_cap) {
		uint32_t cap = t->procs_cap ? 2 * t->procs_cap : 8;
		struct py_proc *n = realloc(t->procs, cap * sizeof(*n));

		if (!n)
			return NULL;
		t->procs = n;
		t->procs_cap = cap;
	}
	memset(&t->procs[t->nprocs], 0, sizeof(t->procs[0]));
	t->procs[t->nprocs].pid = pid;
	t->procs[t->nprocs].task_fd = -1;
	return &t->procs[t->nprocs++];
}

const struct py_layout *py_tracker__layout(const struct py_tracker *t, pid_t pid)
{
	if (!t)
		return NULL;
	for (uint32_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].pid == pid && t->procs[i].active)
			return &t->procs[i].layout;
	return NULL;
}

const char *py_tracker__describe(const struct py_tracker *t)
{
	return t && t->describe[0] ? t->describe : NULL;
}

uint64_t py_tracker__errors(const struct py_tracker *t)
{
	return t ? t->errors : 0;
}

/* The process's threads: kernel tid, innermost NSpid, py_exits count. */
static int proc__tasks(struct py_tracker *t, pid_t pid)
{
	char path[96], buf[2048];
	struct dirent *de;
	DIR *d;

	t->ntasks = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && t->ntasks < PY_TASKS_MAX) {
		struct py_task task = { 0 };
		char *p;
		FILE *f;

		task.tid = (uint32_t)strtoul(de->d_name, &p, 10);
		if (*p || !task.tid)
			continue;
		task.ns_tid = task.tid;
		snprintf(path, sizeof(path), "/proc/%d/task/%u/status", pid, task.tid);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(buf, sizeof(buf), f)) {
			if (!strncmp(buf, "NSpid:", 6)) {
				char *tok, *save = NULL, *last = NULL;

				for (tok = strtok_r(buf + 6, " \t\n", &save); tok;
				     tok = strtok_r(NULL, " \t\n", &save))
					last = tok;
				if (last)
					task.ns_tid = (uint32_t)strtoul(last, NULL, 10);
			}
		}
		fclose(f);
		/* Before the thread list is read: an exit after this invalidates the entry. */
		if (bpf_map_lookup_elem(t->exits_fd, &task.tid, &task.exits))
			task.exits = 0;
		if (t->ntasks == t->tasks_cap) {
			uint32_t cap = t->tasks_cap ? 2 * t->tasks_cap : 64;
			struct py_task *nt = realloc(t->tasks, cap * sizeof(*nt));

			if (!nt)
				break;
			t->tasks = nt;
			t->tasks_cap = cap;
		}
		t->tasks[t->ntasks++] = task;
	}
	closedir(d);
	return 0;
}

/* py_threads changed (the system calls that did it are done): the walker
 * forgets the thread states it remembers (bpf/python.bpf.h). */
static void tracker__written(struct py_tracker *t)
{
	if (t->threads_written)
		__atomic_fetch_add(t->threads_written, 1, __ATOMIC_SEQ_CST);
}

/* Walk the interpreters' thread lists and rewrite the process's py_threads entries. */
static void proc__refresh(struct py_tracker *t, struct py_proc *pp)
{
	const struct ms_py_layout *l = &pp->layout.bpf;
	uint64_t interp = 0, ts, id;
	uint32_t seen = 0, *ntids = NULL, nn = 0;
	bool changed = false;

	if (l->flags & MS_PY_L_TID_IS_PTHREAD)
		return; /* 3.10: found by search in BPF */
	if (proc__tasks(t, pp->pid))
		return;
	for (uint32_t i = 0; i < t->ntasks; i++)
		t->tasks[i].tstate = 0;
	if (mem__u64(pp->pid, l->runtime + l->rt_interp_head, &interp))
		return;
	for (int k = 0; k < PY_INTERPS && interp; k++) {
		if (mem__u64(pp->pid, interp + l->interp_threads_head, &ts))
			break;
		while (ts && seen++ < PY_THREADS_MAX) {
			if (mem__u64(pp->pid, ts + l->ts_native_tid, &id))
				break;
			for (uint32_t i = 0; i < t->ntasks; i++) {
				if (t->tasks[i].ns_tid != (uint32_t)id)
					continue;
				t->tasks[i].tstate = t->tasks[i].tstate ? 1 : ts;
			}
			if (mem__u64(pp->pid, ts + l->ts_next, &ts))
				break;
		}
		if (mem__u64(pp->pid, interp + l->interp_next, &interp))
			break;
	}
	ntids = malloc((t->ntasks + 1) * sizeof(*ntids));
	if (!ntids)
		return;
	for (uint32_t i = 0; i < t->ntasks; i++) {
		struct py_task *task = &t->tasks[i];
		struct ms_py_thread v = {
			.tstate = task->tstate,
			.exits = task->exits,
			.tgid = (uint32_t)pp->pid,
			.ns_tid = task->ns_tid,
		};
		struct ms_py_thread old;

		if (task->tstate <= 1) /* none, or several: the walker decides */
			continue;
		/* an unchanged entry is not written: the walker keeps what it remembers */
		if (!bpf_map_lookup_elem(t->threads_fd, &task->tid, &old) &&
		    !memcmp(&old, &v, sizeof(v))) {
			ntids[nn++] = task->tid;
			continue;
		}
		if (!bpf_map_update_elem(t->threads_fd, &task->tid, &v, BPF_ANY))
			ntids[nn++] = task->tid;
		changed = true;
	}
	/* Forget tids written last time and not now. */
	for (uint32_t i = 0; i < pp->ntids; i++) {
		bool keep = false;

		for (uint32_t j = 0; j < nn && !keep; j++)
			keep = ntids[j] == pp->tids[i];
		if (!keep) {
			bpf_map_delete_elem(t->threads_fd, &pp->tids[i]);
			changed = true;
		}
	}
	free(pp->tids);
	pp->tids = ntids;
	pp->ntids = nn;
	if (changed)
		tracker__written(t);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Whether a known process's thread map needs rewriting now.  Its threads
 * and their states change only when it runs; a thread starting or ending
 * changes the thread count, which one stat() of /proc/PID/task gives (its
 * link count is 2 + the threads, fs/proc/base.c proc_task_getattr).  So an
 * idle process costs one stat() per refresh period, and a full refresh
 * every PY_FULL_REFRESH_NS catches a state swapped without a count change.
 */
static bool proc__refresh_due(struct py_tracker *t, struct py_proc *pp, uint64_t now_ns)
{
	char path[64];
	struct stat st;

	/* No thread of a Python process started or exited lately (the
	 * sampler counts them; an exit's thread leaves the count a moment
	 * after, hence the window): the counts are as last seen. */
	if (t->threads_gen && pp->task_nlink && now_ns >= t->threads_hot_until)
		goto decide;

	/* fstat of the open directory asks the same getattr (the count is
	 * taken at each call) without walking /proc/PID/task's path.  Once
	 * the process is gone it keeps its last count: its exit clears its
	 * entries and the full refresh finds no tasks. */
	if (pp->task_fd < 0 && t->task_fds < PY_TASK_FDS) {
		snprintf(path, sizeof(path), "/proc/%d/task", pp->pid);
		pp->task_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pp->task_fd < 0)
			return false; /* gone: its exit clears its entries */
		t->task_fds++;
	}
	if (pp->task_fd >= 0) {
		if (fstat(pp->task_fd, &st))
			return false;
	} else {
		snprintf(path, sizeof(path), "/proc/%d/task", pp->pid);
		if (stat(path, &st))
			return false; /* gone: its exit clears its entries */
	}
	if (st.st_nlink != pp->task_nlink) {
		pp->task_nlink = st.st_nlink;
		pp->hot_until = now_ns + PY_HOT_NS;
	}
decide:
	if (now_ns < pp->hot_until || now_ns >= pp->next_full) {
		pp->next_full = now_ns + PY_FULL_REFRESH_NS;
		t->refreshes++;
		return true;
	}
	t->skipped++;
	return false;
}

/* Forget the processes that left "targets" (they exited) PY_FORGET_NS
 * ago: their layout (the processor may still name their last samples
 * until then), thread-map entries and tids, so a long system-wide run
 * keeps only live interpreters. */
static void tracker__prune(struct py_tracker *t, uint64_t now_ns)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->nprocs; i++) {
		struct py_proc *pp = &t->procs[i];
		uint32_t key = (uint32_t)pp->pid;

		if (pp->seen != t->pass && !pp->gone_ns)
			pp->gone_ns = now_ns ? now_ns : 1;
		if (pp->seen == t->pass || now_ns - pp->gone_ns < PY_FORGET_NS) {
			t->procs[n++] = *pp;
			continue;
		}
		if (pp->task_fd >= 0) {
			close(pp->task_fd);
			t->task_fds--;
		}
		if (pp->active) {
			bpf_map_delete_elem(t->procs_fd, &key);
			for (uint32_t j = 0; j < pp->ntids; j++)
				bpf_map_delete_elem(t->threads_fd, &pp->tids[j]);
			tracker__written(t);
		}
		free(pp->tids);
	}
	t->nprocs = n;
}

void py_tracker__watch(struct py_tracker *t, const volatile uint64_t *targets_gen,
		       const volatile uint64_t *threads_gen, volatile uint64_t *threads_written)
{
	if (!t)
		return;
	t->targets_gen = targets_gen;
	t->threads_gen = threads_gen;
	t->threads_written = threads_written;
	if (threads_written && !*threads_written)
		*threads_written = 1; /* the walker may remember thread states from now on */
}

/* One recorded process in a pass: detect it, or refresh its thread map. */
static void tracker__visit(struct py_tracker *t, struct py_proc *pp, uint64_t now_ns, bool refresh)
{
	pp->seen = t->pass;
	pp->gone_ns = 0;
	if (pp->failed)
		return;
	if (!pp->active) {
		if (!pp->first_try)
			pp->first_try = now_ns ? now_ns : 1;
		pp->slow = now_ns >= pp->first_try && now_ns - pp->first_try >= PY_FAST_NS;
		if (!pp->slow)
			t->undetected++;
		if (now_ns < pp->next_try)
			return;
		pp->next_try = now_ns + (pp->slow ? PY_RETRY_SLOW_NS : PY_RETRY_FAST_NS);
		if (py_proc__detect(t, pp))
			return;
		(void)proc__refresh_due(t, pp, now_ns);
		proc__refresh(t, pp); /* just detected: fill its thread map now */
		return;
	}
	if (refresh && proc__refresh_due(t, pp, now_ns))
		proc__refresh(t, pp);
}

/*
 * The processes of the last walk when "targets" has not changed since
 * (its generation counter says so): walking a hash map costs a system call
 * per entry plus a scan of all its buckets, 50 times a second, for the
 * same answer.
 */
static void tracker__revisit(struct py_tracker *t, uint64_t now_ns, bool refresh)
{
	uint64_t last = t->pass++;

	for (uint32_t i = 0; i < t->nprocs; i++)
		if (t->procs[i].seen == last)
			tracker__visit(t, &t->procs[i], now_ns, refresh);
}

int py_tracker__poll(struct py_tracker *t, uint64_t now_ns)
{
	uint32_t key, next, *prev = NULL;
	uint64_t cpu0, gen;
	int active = 0;

	if (!t)
		return 0;
	/* Detection of a new process is not held to the refresh period: the
	 * samples taken before it are all "[python frames unknown]".  A poll
	 * with nothing to do (most rounds: the drain loop polls twice a round)
	 * is not timed: the CPU clock is a system call each read. */
	if (t->last_refresh && now_ns - t->last_refresh < PY_REFRESH_NS && !t->undetected) {
		for (uint32_t i = 0; i < t->nprocs; i++)
			active += t->procs[i].active;
		return active;
	}
	cpu0 = thread_cpu_ns();
	bool refresh = !t->last_refresh || now_ns - t->last_refresh >= PY_REFRESH_NS;

	if (refresh)
		t->last_refresh = now_ns;
	t->undetected = 0;
	if (t->threads_gen && *t->threads_gen != t->threads_seen) {
		t->threads_seen = *t->threads_gen;
		t->threads_hot_until = now_ns + PY_HOT_NS;
	}
	gen = t->targets_gen ? *t->targets_gen : 0;
	if (t->targets_gen && t->walked && gen == t->walked_gen) {
		tracker__revisit(t, now_ns, refresh);
		tracker__prune(t, now_ns);
		goto count;
	}
	/* The generation is read before the walk: a change during it is
	 * walked again next time. */
	t->walked_gen = gen;
	t->walked = true;
	t->walks++;
	t->pass++;
	while (!bpf_map_get_next_key(t->targets_fd, prev, &next)) {
		struct py_proc *pp;

		key = next;
		prev = &key;
		pp = tracker__proc(t, (pid_t)key, true);
		if (pp)
			tracker__visit(t, pp, now_ns, refresh);
	}
	tracker__prune(t, now_ns);
count:
	for (uint32_t i = 0; i < t->nprocs; i++)
		active += t->procs[i].active;
	t->cpu_ns += thread_cpu_ns() - cpu0;
	return active;
}

uint64_t py_tracker__due(const struct py_tracker *t)
{
	uint64_t period, due = UINT64_MAX;

	if (!t)
		return UINT64_MAX;
	period = t->last_refresh + PY_REFRESH_NS;
	if (!t->threads_gen || t->last_refresh < t->threads_hot_until)
		due = period;
	for (uint32_t i = 0; i < t->nprocs; i++) {
		const struct py_proc *pp = &t->procs[i];

		if (pp->failed || pp->gone_ns)
			continue;
		if (!pp->active && !pp->slow) {
			uint64_t next = pp->next_try > period ? pp->next_try : period;

			due = next < due ? next : due;
		} else if (pp->active && pp->hot_until > t->last_refresh && period < due) {
			due = period;
		}
	}
	return due;
}

uint64_t py_tracker__walks(const struct py_tracker *t)
{
	return t ? t->walks : 0;
}

uint64_t py_tracker__elf_reads(const struct py_tracker *t)
{
	return t ? t->elf_reads : 0;
}

void py_tracker__costs(const struct py_tracker *t, uint64_t *cpu_ns, uint64_t *refreshes,
		       uint64_t *skipped)
{
	*cpu_ns = t ? t->cpu_ns : 0;
	*refreshes = t ? t->refreshes : 0;
	*skipped = t ? t->skipped : 0;
}
