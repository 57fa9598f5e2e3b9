// SPDX-License-Identifier: MIT
/*
 * Pinned files: the executable files of short-lived processes in other
 * mount namespaces (containers), opened at drain time while the process
 * still lives, so that the processor, which works through the backlog
 * later, symbolizes them from the file the process mapped, even when the
 * process has exited and the same path on the host holds another file.
 *
 * tasks__drained sees each MMAP2 record as it leaves the ring (before
 * ordering) and calls pins__pin; a file that the host reaches under the
 * same path (same device and inode) is not pinned: the normal path lookup
 * finds it.  At most PINS_MAX files stay open (policy: descriptors are a
 * shared budget); more are counted as "processor.pins_full" and symbolized
 * as before (through /proc/PID while it lives).  Keyed by the record's
 * maj:min:ino, which on_mmap2 looks up with the same record fields.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define PINS_MAX 256
/* Files found to be reached by their host path, remembered so that the
 * next process mapping one costs a stat() instead of opening its
 * map_files link (forgotten all at once when this many). */
#define PINS_HOST_MAX 4096

struct pins {
	struct u64map index; /* key__of(maj, min, ino) -> fd + 1 */
	uint32_t n;
	struct u64map host; /* host__key(record, path) -> host__val(host path's stat) */
};

static uint64_t key__of(uint32_t maj, uint32_t min, uint64_t ino)
{
	/* mixed, never 0 (u64map's empty key) */
	return u64map__hash(ino ^ ((uint64_t)maj << 44) ^ ((uint64_t)min << 24)) | 1;
}

static uint64_t host__key(uint32_t maj, uint32_t min, uint64_t ino, const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		h = (h ^ *c) * 0x100000001b3ull;
	return u64map__hash(key__of(maj, min, ino) ^ h) | 1;
}

static uint64_t host__val(const struct stat *st)
{
	return u64map__hash((uint64_t)st->st_dev * 0x9e3779b97f4a7c15ull ^ (uint64_t)st->st_ino) |
	       1;
}

bool pins__host_reaches(struct processor *p, const char *path, uint32_t maj, uint32_t min,
			uint64_t ino)
{
	const uint64_t *v;
	struct stat host;

	if (!p->pins || !(v = u64map__get(&p->pins->host, host__key(maj, min, ino, path))))
		return false;
	/* The path still names the file it named when the mapped one was
	 * found to be it. */
	return !stat(path, &host) && host__val(&host) == *v;
}

void pins__pin(struct processor *p, uint32_t pid, const char *map_file, const char *path,
	       uint32_t maj, uint32_t min, uint64_t ino)
{
	struct pins *s = p->pins;
	struct stat mapped, host;
	uint64_t key = key__of(maj, min, ino);
	char in_ns[4200];
	int fd;

	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return; /* best effort: symbolized through /proc/PID as before */
		p->pins = s;
	}
	if (u64map__get(&s->index, key))
		return;
	/* The mapping's own link; while the process is still inside exec (the
	 * record drained at once) its range may not be listed yet: then the
	 * path as the process's mount namespace resolves it, if it is the
	 * mapped inode. */
	fd = open(map_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(in_ns, sizeof(in_ns), "/proc/%u/root%s", pid, path);
		fd = open(in_ns, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &mapped) || (uint64_t)mapped.st_ino != ino)) {
			close(fd);
			fd = -1;
		}
	}
	if (fd < 0)
		return; /* gone already: as before */
	if (fstat(fd, &mapped)) {
		close(fd);
		return;
	}
	if (!stat(path, &host) && host.st_dev == mapped.st_dev && host.st_ino == mapped.st_ino) {
		close(fd); /* the host path is the mapped file */
		if (s->host.len >= PINS_HOST_MAX)
			u64map__release(&s->host);
		(void)u64map__put(&s->host, host__key(maj, min, ino, path), host__val(&host));
		return;
	}
	if (s->n == PINS_MAX || u64map__put(&s->index, key, (uint64_t)fd + 1)) {
		close(fd);
		processor__problem(p, MS_PROBLEM_PINS_FULL);
		return;
	}
	s->n++;
}

int pins__path(const struct processor *p, uint32_t maj, uint32_t min, uint64_t ino, char *out,
	       size_t size)
{
	const uint64_t *v = p->pins ? u64map__get(&p->pins->index, key__of(maj, min, ino)) : NULL;

	if (!v)
		return -ENOENT;
	snprintf(out, size, "/proc/self/fd/%d", (int)(*v - 1));
	return 0;
}

void pins__free(struct pins *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->index.cap; i++)
		if (s->index.keys[i])
			close((int)(s->index.vals[i] - 1));
	u64map__release(&s->index);
	u64map__release(&s->host);
	free(s);
}
