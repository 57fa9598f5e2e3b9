// SPDX-License-Identifier: MIT
/* Which processes the CPython tracker is given under -a (record_python.h). */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "record_python.h"

void record_python__init(struct record_python *rp)
{
	memset(rp, 0, sizeof(*rp));
	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &rp->sideband);
}

/* A path whose file name is libpython3.N...so... */
static bool is_libpython(const char *path, size_t len)
{
	const char *base = memrchr(path, '/', len);

	base = base ? base + 1 : path;
	len -= (size_t)(base - path);
	return len > 14 && !strncmp(base, "libpython3.", 11) && memmem(base, len, ".so", 3);
}

/* Does /proc/PID/maps map a libpython3 shared library? */
static bool maps_libpython(long pid)
{
	char path[64], line[4608];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');

		if (file)
			found = is_libpython(file, strcspn(file, "\n"));
	}
	fclose(f);
	return found;
}

enum py_evidence { PY_NONE, PY_COMM, PY_EXE, PY_LIBPYTHON };

/*
 * Why process pid runs CPython, cheapest evidence first: its comm, its
 * executable's symbols (cached by file identity), a libpython mapping.
 * A process without an executable (a kernel thread, a zombie) maps
 * nothing: its maps are not read.
 */
static enum py_evidence process__evidence(struct py_tracker *py, long pid)
{
	char path[64], comm[32];
	bool python;
	FILE *f;
	int is;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return PY_NONE;
	python = fgets(comm, sizeof(comm), f) && !strncmp(comm, "python", 6);
	fclose(f);
	if (python)
		return PY_COMM;
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	is = py_tracker__runs_cpython(py, path);
	if (is > 0)
		return PY_EXE;
	if (is == -ENOENT)
		return PY_NONE;
	return maps_libpython(pid) ? PY_LIBPYTHON : PY_NONE;
}

/* Count a process added for the evidence found. */
static void record_python__count(struct record_python *rp, enum py_evidence ev)
{
	if (ev == PY_EXE)
		rp->by_exe++;
	else if (ev == PY_LIBPYTHON)
		rp->embedded++;
}

int record_python__scan(struct record_python *rp, struct py_tracker *py, struct collector *col)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		enum py_evidence ev;

		if (*end || pid <= 0)
			continue;
		ev = process__evidence(py, pid);
		if (ev == PY_NONE)
			continue;
		err = collector__add_target(col, (pid_t)pid);
		if (err == -ESRCH)
			err = 0;
		else if (!err)
			record_python__count(rp, ev);
	}
	closedir(d);
	return err;
}

/* Queue pid once. */
static void record_python__queue(struct record_python *rp, pid_t pid, bool by_exe)
{
	for (uint32_t i = 0; i < rp->npending; i++)
		if (rp->pending[i].pid == pid)
			return;
	if (rp->npending == RECORD_PY_PENDING) {
		rp->dropped++;
		return;
	}
	rp->pending[rp->npending++] = (struct record_python_pending){ pid, by_exe };
}

void record_python__chunk(struct record_python *rp, struct py_tracker *py,
			  const struct ms_chunk *c, const void *payload)
{
	struct perf_mmap2 r;
	struct perf_comm cr;
	char path[64];
	uint32_t type;

	if (c->kind != MS_CHUNK_PERF || c->source == MS_SOURCE_SNAPSHOT || c->len < 8)
		return;
	type = ((const uint32_t *)payload)[0];
	if (type == PERF_RECORD_COMM) {
		if (perf_rec__parse_comm(&rp->sideband, payload, c->len, &cr) ||
		    !(cr.misc & PERF_RECORD_MISC_COMM_EXEC) || !strncmp(cr.comm, "python", 6))
			return;
		snprintf(path, sizeof(path), "/proc/%u/exe", cr.f.pid);
		if (py_tracker__runs_cpython(py, path) > 0)
			record_python__queue(rp, (pid_t)cr.f.pid, true);
		return;
	}
	if (type != PERF_RECORD_MMAP2 ||
	    perf_rec__parse_mmap2(&rp->sideband, payload, c->len, &r) || !(r.f.prot & PROT_EXEC) ||
	    !is_libpython(r.filename, r.filename_len))
		return;
	record_python__queue(rp, (pid_t)r.f.pid, false);
}

int record_python__flush(struct record_python *rp, struct collector *col)
{
	int err = 0;

	for (uint32_t i = 0; i < rp->npending && !err; i++) {
		const struct record_python_pending *p = &rp->pending[i];

		err = collector__add_target(col, p->pid);
		if (err == -ESRCH)
			err = 0;
		else if (!err)
			record_python__count(rp, p->by_exe ? PY_EXE : PY_LIBPYTHON);
	}
	rp->npending = 0;
	return err;
}
