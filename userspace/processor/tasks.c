// SPDX-License-Identifier: MIT
/*
 * Processes, threads and mappings from perf side-band records (and the
 * records the collector synthesizes from /proc at attach).
 *
 * Layouts and their parsing: stream/perf_records.h, with the sample_id
 * trailer of the sample_type META perf.sample_type names.
 *
 * Perf has no munmap record: a range is known to be unmapped only when a
 * later MMAP2 overlaps it (the overlapped part is dropped) or the process
 * execs (COMM with PERF_RECORD_MISC_COMM_EXEC drops every mapping).
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "internal.h"

static uint32_t new_process_row(struct processor *p, uint32_t pid, uint32_t ppid, uint64_t time)
{
	struct capture_process row = {
		.pid = pid,
		.ppid = ppid,
		.start_time_ns = time,
		.comm = 0,
		.exe = 0,
	};
	return capture_builder__add_process(p->b, &row);
}

/* The live process state for pid, or NULL. */
struct proc_state *tasks__find_process(struct processor *p, uint32_t pid)
{
	uint64_t *idx = u64map__get(&p->pid_to_proc, (uint64_t)pid + 1);

	return idx && !p->procs[*idx].exited ? &p->procs[*idx] : NULL;
}

/* Whether records about pid concern the recording. */
static bool is_tracked(struct processor *p, uint32_t pid)
{
	struct proc_state *ps = tasks__find_process(p, pid);

	return p->system_wide || (ps && ps->tracked);
}

/* The current process state for pid, creating one (untracked) if needed. */
struct proc_state *tasks__process(struct processor *p, uint32_t pid, uint64_t time)
{
	uint64_t *idx = u64map__get(&p->pid_to_proc, (uint64_t)pid + 1);
	struct proc_state *ps;

	if (idx && !p->procs[*idx].exited)
		return &p->procs[*idx];
	if (array__reserve((void **)&p->procs, &p->procs_cap, p->nprocs + 1, sizeof(*p->procs)))
		return NULL;
	ps = &p->procs[p->nprocs];
	memset(ps, 0, sizeof(*ps));
	ps->pid = pid;
	ps->tracked = p->system_wide;
	ps->row = new_process_row(p, pid, 0, time);
	if (u64map__put(&p->pid_to_proc, (uint64_t)pid + 1, p->nprocs))
		return NULL;
	p->nprocs++;
	return ps;
}

struct thread_state *tasks__thread(struct processor *p, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint64_t *idx = u64map__get(&p->tid_to_thread, (uint64_t)tid + 1);
	struct proc_state *ps;
	struct thread_state *ts;

	if (idx) {
		ts = &p->threads[*idx];
		/* Same tid in a live process of the same pid: the same thread. */
		if (p->procs[ts->proc].pid == pid && !p->procs[ts->proc].exited && !ts->exited)
			return ts;
	}
	ps = tasks__process(p, pid, time);
	if (!ps)
		return NULL;
	if (array__reserve((void **)&p->threads, &p->threads_cap, p->nthreads + 1,
			   sizeof(*p->threads)))
		return NULL;
	ts = &p->threads[p->nthreads];
	ts->tid = tid;
	ts->proc = ps - p->procs;
	ts->exited = false;
	struct capture_thread row = { .tid = tid, .process = ps->row };
	struct capture_process *prow = capture_builder__process(p->b, ps->row);

	if (prow)
		row.comm = prow->comm;
	ts->row = capture_builder__add_thread(p->b, &row);
	if (u64map__put(&p->tid_to_thread, (uint64_t)tid + 1, p->nthreads))
		return NULL;
	p->nthreads++;
	return ts;
}

/*
 * How long after its EXIT record a task can still be sampled: perf writes
 * the record early in do_exit, and the exit path (unmapping the address
 * space, closing files) runs on after it.
 */
#define TASK_EXIT_PATH_NS (1000ull * 1000 * 1000)

static bool in_exit_path(bool exited, uint64_t exit_time, uint64_t time)
{
	return !exited || (time >= exit_time && time - exit_time <= TASK_EXIT_PATH_NS);
}

/*
 * The thread a sample or off-CPU interval of (pid, tid) at time belongs to:
 * a live one, or one sampled on its exit path, still the latest of its pid
 * (no FORK has replaced it), rather than a new unnamed process of the same
 * pid.  *known says whether the process was seen before.
 */
struct thread_state *tasks__sample_thread(struct processor *p, uint32_t pid, uint32_t tid,
					  uint64_t time, bool *known)
{
	uint64_t *tidx = u64map__get(&p->tid_to_thread, (uint64_t)tid + 1);
	uint64_t *pidx = u64map__get(&p->pid_to_proc, (uint64_t)pid + 1);

	if (tidx && pidx && p->threads[*tidx].proc == *pidx) {
		struct thread_state *ts = &p->threads[*tidx];
		struct proc_state *ps = &p->procs[*pidx];

		if (in_exit_path(ps->exited, ps->exit_time, time) &&
		    in_exit_path(ts->exited, ts->exit_time, time)) {
			*known = true;
			return ts;
		}
	}
	*known = tasks__find_process(p, pid) != NULL;
	return tasks__thread(p, pid, tid, time);
}

/*
 * The process pid was at time: live, or exited no longer than an exit path
 * before (a thread that wakes another as it exits, pthread_join's futex,
 * does so after perf wrote its EXIT record), or NULL.
 */
struct proc_state *tasks__process_at(struct processor *p, uint32_t pid, uint64_t time)
{
	uint64_t *idx = u64map__get(&p->pid_to_proc, (uint64_t)pid + 1);
	struct proc_state *ps = idx ? &p->procs[*idx] : NULL;

	return ps && in_exit_path(ps->exited, ps->exit_time, time) ? ps : NULL;
}

const struct proc_mapping *tasks__find_mapping(const struct proc_state *ps, uint64_t addr)
{
	uint32_t lo = 0, hi = ps->nmaps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ps->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ps->nmaps && ps->maps[lo].start <= addr && addr < ps->maps[lo].end)
		return &ps->maps[lo];
	return NULL;
}

static int maps_reserve(struct proc_state *ps, uint32_t extra)
{
	return array__reserve((void **)&ps->maps, &ps->maps_cap, ps->nmaps + extra,
			      sizeof(*ps->maps));
}

/* Insert [m.start, m.end), trimming or splitting whatever it overlaps. */
static int maps_insert(struct proc_state *ps, const struct proc_mapping *m)
{
	uint32_t i, out = 0;
	int err = maps_reserve(ps, 2);

	if (err)
		return err;
	/* Rebuild in place into a compact list without the overlapped parts. */
	struct proc_mapping tail = { 0 };
	bool have_tail = false;

	for (i = 0; i < ps->nmaps; i++) {
		struct proc_mapping cur = ps->maps[i];

		if (cur.end <= m->start || cur.start >= m->end) {
			ps->maps[out++] = cur;
			continue;
		}
		if (cur.start < m->start) {
			struct proc_mapping left = cur;

			left.end = m->start;
			ps->maps[out++] = left;
		}
		if (cur.end > m->end) {
			tail = cur;
			tail.pgoff += m->end - cur.start;
			tail.start = m->end;
			have_tail = true;
		}
	}
	ps->nmaps = out;
	ps->maps_gen++;
	/* Insert m and tail in sorted position. */
	for (int k = 0; k < 1 + have_tail; k++) {
		const struct proc_mapping *ins = k ? &tail : m;
		uint32_t pos = ps->nmaps;

		while (pos > 0 && ps->maps[pos - 1].start > ins->start) {
			ps->maps[pos] = ps->maps[pos - 1];
			pos--;
		}
		ps->maps[pos] = *ins;
		ps->nmaps++;
	}
	return 0;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && !memcmp(s + len - n, suffix, n);
}

/*
 * True when the file at path in OUR mount namespace is the one mapped (same
 * device and inode as /proc/PID/map_files/..., or, when that is gone, as the
 * MMAP2 record's maj:min and ino), so a later `microscope symbolize`, which
 * runs where we run, can find it by path.  memfd: files never are, nor a
 * file of another mount namespace (a container) whose path here holds
 * another file or nothing: those are symbolized while recording.
 */
static bool file_is_mapped(const char *map_file, const char *path,
			   const struct perf_rec_mmap2 *m)
{
	struct stat a, b;

	if (!strncmp(path, "/memfd:", 7))
		return false;
	if (stat(path, &b))
		return false;
	if (!stat(map_file, &a))
		return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	return major(b.st_dev) == m->maj && minor(b.st_dev) == m->min && (uint64_t)b.st_ino == m->ino;
}

/*
 * /proc/PID/map_files/START-END of a mapping.  The exact range may be gone
 * by the time the record is processed (the kernel maps an ELF image's whole
 * span first, then trims it; mprotect splits ranges), so when it is, take
 * any current range overlapping [start, end) whose link names the same file
 * ("path" or "path (deleted)"), or is the file of inode ino (a file of
 * another mount namespace, whose link names it as our namespace reaches
 * it, e.g. by the source of a bind mount).  out keeps the exact name when
 * none does.
 */
static void map_file_path(uint32_t pid, uint64_t start, uint64_t end, const char *path,
			  uint64_t ino, char *out, size_t size)
{
	char dir[64], link[4200], target[4200];
	struct dirent *de;
	DIR *d;

	snprintf(out, size, "/proc/%u/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
	if (!access(out, F_OK))
		return;
	snprintf(dir, sizeof(dir), "/proc/%u/map_files", pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned long long s, e;
		ssize_t n;
		size_t plen = strlen(path);

		if (sscanf(de->d_name, "%llx-%llx", &s, &e) != 2 || e <= start || s >= end)
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, path, plen) ||
		    (target[plen] && strcmp(target + plen, " (deleted)"))) {
			struct stat st;

			if (stat(link, &st) || (uint64_t)st.st_ino != ino)
				continue;
		}
		snprintf(out, size, "%s", link);
		break;
	}
	closedir(d);
}

void tasks__drained(struct processor *p, const uint8_t *rec, uint32_t len)
{
	struct perf_event_header h;
	struct perf_mmap2 r;
	char path[4096], map_file[4300];
	size_t plen;

	if (len < sizeof(h))
		return;
	memcpy(&h, rec, sizeof(h));
	if (h.type != PERF_RECORD_MMAP2 || perf_rec__parse_mmap2(&p->sideband_id, rec, len, &r) ||
	    !(r.f.prot & PROT_EXEC) || !r.f.len || r.f.addr + r.f.len < r.f.addr ||
	    r.filename_len >= sizeof(path) || r.filename[0] != '/' ||
	    !strncmp(r.filename, "/memfd:", 7)) /* symbolized while recording anyway */
		return;
	plen = r.filename_len;
	memcpy(path, r.filename, plen);
	path[plen] = '\0';
	if (ends_with(path, plen, " (deleted)"))
		path[plen - strlen(" (deleted)")] = '\0';
	else if (pins__host_reaches(p, path, r.f.maj, r.f.min, r.f.ino))
		return;
	map_file_path(r.f.pid, r.f.addr, r.f.addr + r.f.len, path, r.f.ino, map_file,
		      sizeof(map_file));
	pins__pin(p, r.f.pid, map_file, path, r.f.maj, r.f.min, r.f.ino);
}

static int on_mmap2(struct processor *p, const uint8_t *rec, uint32_t len, uint32_t source,
		    uint64_t time)
{
	struct perf_mmap2 r;
	char path[4096], open_path[4300];
	size_t plen;
	struct proc_state *ps;
	struct sym_module *sym = NULL;
	uint32_t kind = CAPTURE_MODULE_FILE, module = CAPTURE_NONE;

	if (perf_rec__parse_mmap2(&p->sideband_id, rec, len, &r) || r.filename_len >= sizeof(path) ||
	    r.f.addr + r.f.len < r.f.addr || !r.f.len) {
		processor__problem(p, MS_PROBLEM_BAD_PERF_RECORD);
		return 0;
	}
	plen = r.filename_len;

	if (!(r.f.prot & PROT_EXEC))
		return 0;
	if (source != MS_SOURCE_SNAPSHOT && !is_tracked(p, r.f.pid))
		return 0;
	ps = tasks__process(p, r.f.pid, time);
	if (!ps)
		return -ENOMEM;
	ps->tracked = true;

	memcpy(path, r.filename, plen);
	path[plen] = '\0';
	bool deleted = ends_with(path, plen, " (deleted)");

	if (deleted)
		path[plen - strlen(" (deleted)")] = '\0';

	/* perf names anonymous memory "//anon" (a JIT's code among it). */
	bool file = path[0] == '/' && path[1] != '/';

	if (jit__mapped(p, ps, r.f.addr, r.f.addr + r.f.len, file ? path : NULL, time))
		return -ENOMEM;
	if (!strcmp(path, "[vdso]")) {
		kind = CAPTURE_MODULE_VDSO;
		sym = symbolizer__vdso(p->sym);
	} else if (file && jitdump__is_marker(path)) {
		kind = CAPTURE_MODULE_ANON; /* a jitdump file's marker: no code */
	} else if (file) {
		if (pins__path(p, r.f.maj, r.f.min, r.f.ino, open_path, sizeof(open_path)))
			map_file_path(r.f.pid, r.f.addr, r.f.addr + r.f.len, path, r.f.ino,
				      open_path, sizeof(open_path));
		sym = symbolizer__mapped_file(p->sym, r.f.pid, open_path, path, r.f.maj, r.f.min,
					      r.f.ino);
	} else {
		kind = CAPTURE_MODULE_ANON; /* [heap], //anon, [stack], JIT code */
	}
	if (sym) {
		module = stacks__module_for_sym(p, sym, kind, path);
		if (module == CAPTURE_NONE)
			return -ENOMEM;
		if (p->symbolize_deferred && kind == CAPTURE_MODULE_FILE)
			stacks__module_findable(p, module,
						!deleted && file_is_mapped(open_path, path, &r.f));
		struct capture_mapping row = {
			.process = ps->row,
			.module = p->modules[module].row,
			.start = r.f.addr,
			.end = r.f.addr + r.f.len,
			.pgoff = r.f.pgoff,
			.time_ns = time,
		};
		capture_builder__add_mapping(p->b, &row);
	}
	struct proc_mapping pm = {
		.start = r.f.addr,
		.end = r.f.addr + r.f.len,
		.pgoff = r.f.pgoff,
		.module = module,
	};
	int err = maps_insert(ps, &pm);

	if (!err)
		kunwind__mapped(p, ps, &pm);
	return err;
}

static int on_comm(struct processor *p, const uint8_t *rec, uint32_t len, uint32_t source,
		   uint64_t time)
{
	struct perf_comm r;
	uint32_t pid, tid;
	const char *comm;

	if (perf_rec__parse_comm(&p->sideband_id, rec, len, &r)) {
		processor__problem(p, MS_PROBLEM_BAD_PERF_RECORD);
		return 0;
	}
	pid = r.f.pid;
	tid = r.f.tid;
	comm = r.comm;
	if (source != MS_SOURCE_SNAPSHOT && !is_tracked(p, pid))
		return 0;
	struct thread_state *ts = tasks__thread(p, pid, tid, time);

	if (!ts)
		return -ENOMEM;
	struct proc_state *ps = &p->procs[ts->proc];

	ps->tracked = true;
	uint32_t sid = capture_builder__string(p->b, comm);
	struct capture_thread *trow = capture_builder__thread(p->b, ts->row);

	if (trow)
		trow->comm = sid;
	if (pid == tid) {
		struct capture_process *prow = capture_builder__process(p->b, ps->row);

		if (prow)
			prow->comm = sid;
	}
	if (r.misc & PERF_RECORD_MISC_COMM_EXEC) {
		ps->nmaps = 0; /* exec replaced the address space */
		ps->maps_gen++;
		ps->ku_told = false; /* the sampler forgot the process at exec */
		ps->ku_cookie = 0;
	}
	return 0;
}

static int on_fork(struct processor *p, const uint8_t *rec, uint32_t len, uint32_t source,
		   uint64_t time)
{
	struct perf_task r;
	struct perf_rec_task t;

	if (perf_rec__parse_task(&p->sideband_id, rec, len, &r)) {
		processor__problem(p, MS_PROBLEM_BAD_PERF_RECORD);
		return 0;
	}
	t = r.f;
	if (source == MS_SOURCE_SNAPSHOT) {
		/* An existing thread of a target (pid may equal ppid for threads). */
		struct thread_state *ts = tasks__thread(p, t.pid, t.tid, time);

		if (!ts)
			return -ENOMEM;
		struct proc_state *ps = &p->procs[ts->proc];

		ps->tracked = true;
		struct capture_process *prow = capture_builder__process(p->b, ps->row);

		if (prow && t.pid == t.tid && t.ppid != t.pid)
			prow->ppid = t.ppid;
		if (prow && !ps->have_info)
			prow->start_time_ns = 0; /* started before the recording, time unknown */
		return 0;
	}
	if (t.pid != t.ppid) {
		/* A new process: it inherits its parent's address space. */
		uint64_t *pidx = u64map__get(&p->pid_to_proc, (uint64_t)t.ppid + 1);
		bool parent_tracked = pidx && p->procs[*pidx].tracked && !p->procs[*pidx].exited;
		/* an index, not a pointer into the map: tasks__process below may grow it */
		uint64_t parent_idx = pidx ? *pidx : UINT64_MAX;
		uint64_t *old = u64map__get(&p->pid_to_proc, (uint64_t)t.pid + 1);

		if (!parent_tracked && !p->system_wide)
			return 0;
		if (old)
			p->procs[*old].exited = true; /* pid reuse */
		struct proc_state *ps = tasks__process(p, t.pid, time);

		if (!ps)
			return -ENOMEM;
		ps->tracked = true;
		struct capture_process *prow = capture_builder__process(p->b, ps->row);

		if (prow)
			prow->ppid = t.ppid;
		if (parent_idx != UINT64_MAX) {
			struct proc_state *parent = &p->procs[parent_idx];

			if (maps_reserve(ps, parent->nmaps))
				return -ENOMEM;
			memcpy(ps->maps, parent->maps, parent->nmaps * sizeof(*ps->maps));
			ps->nmaps = parent->nmaps;
			ps->maps_gen++;
			if (prow) {
				struct capture_process *pp = capture_builder__process(p->b, parent->row);

				if (pp) {
					/* fork keeps the parent's namespaces (unless clone flags
					 * said otherwise, which perf does not report) */
					prow->comm = pp->comm;
					prow->pidns = pp->pidns;
					prow->mntns = pp->mntns;
					prow->cgroupns = pp->cgroupns;
				}
			}
		}
	} else if (!is_tracked(p, t.pid)) {
		return 0;
	}
	return tasks__thread(p, t.pid, t.tid, time) ? 0 : -ENOMEM;
}

static int on_exit_record(struct processor *p, const uint8_t *rec, uint32_t len, uint64_t time)
{
	struct perf_task r;
	struct perf_rec_task t;

	if (perf_rec__parse_task(&p->sideband_id, rec, len, &r)) {
		processor__problem(p, MS_PROBLEM_BAD_PERF_RECORD);
		return 0;
	}
	t = r.f;
	if (t.pid == t.tid) {
		uint64_t *idx = u64map__get(&p->pid_to_proc, (uint64_t)t.pid + 1);

		if (idx && !p->procs[*idx].exited) {
			p->procs[*idx].exited = true;
			p->procs[*idx].exit_time = time;
		}
	} else {
		uint64_t *idx = u64map__get(&p->tid_to_thread, (uint64_t)t.tid + 1);

		if (idx && p->procs[p->threads[*idx].proc].pid == t.pid && !p->threads[*idx].exited) {
			p->threads[*idx].exited = true;
			p->threads[*idx].exit_time = time;
		}
	}
	return 0;
}

/*
 * Identity facts from /proc at attach: namespaces, start time, and the pid
 * as the process's own pid namespace numbers it (its main thread's ns_tid,
 * which samples set too: a process never sampled, asleep or a zombie, keeps
 * it as well).
 */
int tasks__process_info(struct processor *p, const struct ms_process_info *info)
{
	struct proc_state *ps;
	struct capture_process *prow;

	if (info->ns_pid) {
		struct thread_state *ts = tasks__thread(p, info->pid, info->pid, 0);
		struct capture_thread *trow;

		if (!ts)
			return -ENOMEM;
		trow = capture_builder__thread(p->b, ts->row);
		if (trow)
			trow->ns_tid = info->ns_pid;
	}
	ps = tasks__process(p, info->pid, 0);
	if (!ps)
		return -ENOMEM;
	ps->tracked = true;
	ps->have_info = true;
	prow = capture_builder__process(p->b, ps->row);
	if (prow) {
		prow->pidns = info->pidns;
		prow->mntns = info->mntns;
		prow->cgroupns = info->cgroupns;
		prow->start_time_ns = info->start_time_ns;
	}
	return 0;
}

int tasks__perf_record(struct processor *p, const uint8_t *rec, uint32_t len, uint32_t source)
{
	struct perf_event_header h;
	struct perf_sample_id id;
	struct perf_lost lost;

	if (perf_rec__header(rec, len, &h)) {
		processor__problem(p, MS_PROBLEM_BAD_RECORD_SIZE);
		return 0;
	}
	/* a record too short for its trailer is refused by its parser below */
	perf_sample_id__read(&p->sideband_id, rec, len, &id);
	switch (h.type) {
	case PERF_RECORD_MMAP2:
		return on_mmap2(p, rec, len, source, id.time);
	case PERF_RECORD_COMM:
		return on_comm(p, rec, len, source, id.time);
	case PERF_RECORD_FORK:
		return on_fork(p, rec, len, source, id.time);
	case PERF_RECORD_EXIT:
		return on_exit_record(p, rec, len, id.time);
	case PERF_RECORD_LOST:
		if (!perf_rec__parse_lost(&p->sideband_id, rec, len, &lost))
			capture_builder__add_counter(p->b, "perf.lost_sideband_records", lost.f.lost);
		else
			processor__problem(p, MS_PROBLEM_BAD_PERF_RECORD);
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_MMAP:
		return 0;
	default:
		processor__problem(p, MS_PROBLEM_UNKNOWN_PERF_RECORD);
		return 0;
	}
}

void tasks__release(struct processor *p)
{
	for (uint32_t i = 0; i < p->nprocs; i++) {
		free(p->procs[i].maps);
		jit__release(&p->procs[i]);
	}
	free(p->procs);
	free(p->threads);
	u64map__release(&p->pid_to_proc);
	u64map__release(&p->tid_to_thread);
}

int tasks__drop_exited(struct processor *p)
{
	uint32_t *to = malloc((p->nprocs ? p->nprocs : 1) * sizeof(*to));
	bool *live = malloc((p->nthreads ? p->nthreads : 1) * sizeof(*live));
	struct u64map pids = { 0 }, tids = { 0 };
	uint32_t n = 0;
	int err = 0;

	if (!to || !live) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* A thread is live when its tid still names it and nothing ended it. */
	for (uint32_t i = 0; i < p->nthreads; i++) {
		uint64_t *idx = u64map__get(&p->tid_to_thread, (uint64_t)p->threads[i].tid + 1);

		live[i] = idx && *idx == i && !p->threads[i].exited &&
			  !p->procs[p->threads[i].proc].exited;
	}
	for (uint32_t i = 0; i < p->nprocs; i++) {
		to[i] = CAPTURE_NONE;
		if (p->procs[i].exited)
			continue;
		if (u64map__put(&pids, (uint64_t)p->procs[i].pid + 1, n)) {
			err = -ENOMEM;
			goto cleanup;
		}
		to[i] = n++;
	}
	n = 0;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		if (!live[i])
			continue;
		if (u64map__put(&tids, (uint64_t)p->threads[i].tid + 1, n++)) {
			err = -ENOMEM;
			goto cleanup;
		}
	}
	/* Nothing can fail from here on: move the live ones down. */
	n = 0;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		if (!live[i])
			continue;
		p->threads[n] = p->threads[i];
		p->threads[n++].proc = to[p->threads[i].proc];
	}
	p->nthreads = n;
	n = 0;
	for (uint32_t i = 0; i < p->nprocs; i++) {
		if (to[i] == CAPTURE_NONE) {
			free(p->procs[i].maps);
			jit__release(&p->procs[i]);
			continue;
		}
		p->procs[n++] = p->procs[i];
	}
	p->nprocs = n;
	u64map__release(&p->pid_to_proc);
	u64map__release(&p->tid_to_thread);
	p->pid_to_proc = pids;
	p->tid_to_thread = tids;
	pids = (struct u64map){ 0 };
	tids = (struct u64map){ 0 };
cleanup:
	u64map__release(&pids);
	u64map__release(&tids);
	free(to);
	free(live);
	return err;
}
