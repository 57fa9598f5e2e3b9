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
static bool maps_libpython(const char *pid)
{
	char path[64], line[4608];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
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

int record_python__scan(struct record_python *rp, struct collector *col)
{
	char path[64], comm[32];
	struct dirent *de;
	DIR *d = opendir("/proc");
	int err = 0;

	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		bool python = false, embedded = false;
		FILE *f;

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		python = fgets(comm, sizeof(comm), f) && !strncmp(comm, "python", 6);
		fclose(f);
		if (!python)
			embedded = python = maps_libpython(de->d_name);
		if (!python)
			continue;
		err = collector__add_target(col, (pid_t)pid);
		if (err == -ESRCH)
			err = 0;
		else if (!err && embedded)
			rp->embedded++;
	}
	closedir(d);
	return err;
}

void record_python__chunk(struct record_python *rp, const struct ms_chunk *c,
			  const void *payload)
{
	struct perf_mmap2 r;

	if (c->kind != MS_CHUNK_PERF || c->source == MS_SOURCE_SNAPSHOT || c->len < 8 ||
	    ((const uint32_t *)payload)[0] != PERF_RECORD_MMAP2 ||
	    perf_rec__parse_mmap2(&rp->sideband, payload, c->len, &r) || !(r.f.prot & PROT_EXEC) ||
	    !is_libpython(r.filename, r.filename_len))
		return;
	for (uint32_t i = 0; i < rp->npending; i++)
		if (rp->pending[i] == (pid_t)r.f.pid)
			return;
	if (rp->npending == RECORD_PY_PENDING) {
		rp->dropped++;
		return;
	}
	rp->pending[rp->npending++] = (pid_t)r.f.pid;
}

int record_python__flush(struct record_python *rp, struct collector *col)
{
	int err = 0;

	for (uint32_t i = 0; i < rp->npending && !err; i++) {
		err = collector__add_target(col, rp->pending[i]);
		if (err == -ESRCH)
			err = 0;
		else if (!err)
			rp->embedded++;
	}
	rp->npending = 0;
	return err;
}
