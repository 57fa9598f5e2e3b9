// SPDX-License-Identifier: MIT
/* record -a: processes mapping the probes SDK (record_probes.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "record_probes.h"

void record_probes__init(struct record_probes *rp)
{
	memset(rp, 0, sizeof(*rp));
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &rp->sideband);
}

/* Queue pid once. */
static void record_probes__queue(struct record_probes *rp, pid_t pid)
{
	for (uint32_t i = 0; i < rp->npending; i++)
		if (rp->pending[i] == pid)
			return;
	if (rp->npending == RECORD_PROBES_PENDING) {
		rp->dropped++;
		return;
	}
	rp->pending[rp->npending++] = pid;
}

static void exe__key(struct record_probes_exe *k, const struct stat *st)
{
	*k = (struct record_probes_exe){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_sec = st->st_mtim.tv_sec,
		.mtime_nsec = st->st_mtim.tv_nsec,
	};
}

static bool exe__same(const struct record_probes_exe *a, const struct record_probes_exe *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/*
 * Does pid's executable define the control block?  A file of the same
 * identity gives the same answer; an answer is kept only when the path
 * still names that file after the read.  A process without an executable
 * (a kernel thread, a zombie) is not.
 */
static bool record_probes__exe_has(struct record_probes *rp, pid_t pid)
{
	struct record_probes_exe key, again;
	char path[64];
	struct stat st;
	int has;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st))
		return false;
	exe__key(&key, &st);
	for (uint32_t i = 0; i < rp->nexes; i++)
		if (exe__same(&rp->exes[i], &key))
			return rp->exes[i].has;
	rp->exe_reads++;
	has = collector__file_has_probes(path);
	if (has < 0 || stat(path, &st))
		return false;
	exe__key(&again, &st);
	if (!exe__same(&key, &again))
		return false;
	key.has = has;
	if (rp->nexes < RECORD_PROBES_EXE_CACHE) {
		rp->exes[rp->nexes++] = key;
	} else {
		rp->exes[rp->next_exe] = key;
		rp->next_exe = (rp->next_exe + 1) % RECORD_PROBES_EXE_CACHE;
	}
	return has;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void record_probes__exe(struct record_probes *rp, pid_t pid, bool at_start)
{
	uint64_t t0 = thread_cpu_ns(), reads = rp->exe_reads;

	if (pid > 0 && record_probes__exe_has(rp, pid)) {
		rp->by_exe++;
		record_probes__queue(rp, pid);
	}
	if (at_start)
		rp->exe_reads_at_start += rp->exe_reads - reads;
	rp->exe_cpu_ns += thread_cpu_ns() - t0;
}

/* A new process forked by one looked in, or queued to be: queue it too. */
static void record_probes__fork(struct record_probes *rp, const struct collector *col,
				const struct perf_task *t)
{
	pid_t pid = (pid_t)t->f.pid, ppid = (pid_t)t->f.ppid;

	if (pid == ppid) /* a thread */
		return;
	for (uint32_t i = 0; i < rp->npending; i++) {
		if (rp->pending[i] == ppid) { /* not handed over yet: search it alike */
			record_probes__queue(rp, pid);
			return;
		}
	}
	if (!collector__probes_has(col, ppid))
		return;
	if (rp->nforks == RECORD_PROBES_PENDING) {
		rp->dropped++;
		return;
	}
	rp->forks[rp->nforks][0] = pid;
	rp->forks[rp->nforks++][1] = ppid;
}

void record_probes__chunk(struct record_probes *rp, const struct collector *col,
			  const struct ms_chunk *c, const void *payload)
{
	struct perf_mmap2 r;
	struct perf_comm cr;
	struct perf_task t;
	const char *base;
	uint32_t type;

	if (c->kind == MS_CHUNK_PROCESS && c->len >= sizeof(struct ms_process_info)) {
		/* the snapshot of a process running at start */
		record_probes__exe(rp, (pid_t)((const struct ms_process_info *)payload)->pid, true);
		return;
	}
	if (c->kind != MS_CHUNK_PERF || c->len < 8)
		return;
	type = ((const uint32_t *)payload)[0];
	if (type == PERF_RECORD_FORK) {
		if (!perf_rec__parse_task(&rp->sideband, payload, c->len, &t))
			record_probes__fork(rp, col, &t);
		return;
	}
	if (type == PERF_RECORD_COMM) {
		if (!perf_rec__parse_comm(&rp->sideband, payload, c->len, &cr) &&
		    (cr.misc & PERF_RECORD_MISC_COMM_EXEC))
			record_probes__exe(rp, (pid_t)cr.f.pid, false);
		return;
	}
	if (type != PERF_RECORD_MMAP2 ||
	    perf_rec__parse_mmap2(&rp->sideband, payload, c->len, &r) || !r.filename_len)
		return;
	base = memrchr(r.filename, '/', r.filename_len);
	base = base ? base + 1 : r.filename;
	if (!memmem(base, r.filename_len - (size_t)(base - r.filename), "microscope_probes", 17))
		return;
	record_probes__queue(rp, (pid_t)r.f.pid);
}

int record_probes__flush(struct record_probes *rp, struct collector *col)
{
	int err = 0;

	for (uint32_t i = 0; i < rp->npending; i++) {
		err = collector__probe_process(col, rp->pending[i]);
		if (err == -ENOSPC)
			err = 0; /* counted by the collector (probes.procs_full) */
		if (err)
			break;
	}
	rp->npending = 0;
	for (uint32_t i = 0; !err && i < rp->nforks; i++) {
		err = collector__probe_fork(col, rp->forks[i][1], rp->forks[i][0]);
		if (err == -ENOSPC || err == -ENOENT)
			err = 0; /* counted (probes.procs_full), or the parent is done */
	}
	rp->nforks = 0;
	return err;
}
