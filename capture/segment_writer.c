// SPDX-License-Identifier: MIT
/* Publishing segments into a locked directory, with retention (segment_writer.h). */
#include <errno.h>
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/file_io.h"
#include "capture/format.h"
#include "capture/merge.h"
#include "capture/segment_dir.h"
#include "capture/segment_writer.h"

struct segment_writer {
	char *dir;
	int dir_fd;
	int lock_fd;
	struct segment_policy policy;
	uint64_t next_sequence;
	uint64_t published, deleted;
	uint64_t write_failed, samples_dropped;
	bool last_failed; /* the last publish could not write its segment */
	char id[SEGMENT_ID_LEN + 1]; /* the directory's (segment_dir.h) */
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Take the directory's lock; -EBUSY with the holder's pid in err. */
static int writer__lock(struct segment_writer *w, char *err, size_t errlen)
{
	char pid[32] = "";
	ssize_t n;
	int len;

	w->lock_fd = openat(w->dir_fd, SEGMENT_LOCK_NAME,
			    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (w->lock_fd < 0) {
		int e = errno;

		snprintf(err, errlen, "%s/%s: %s", w->dir, SEGMENT_LOCK_NAME, strerror(e));
		return -e;
	}
	if (flock(w->lock_fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		n = pread(w->lock_fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (e == EWOULDBLOCK) {
			snprintf(err, errlen, "%s: another recorder (pid %s) writes there", w->dir,
				 pid[0] ? pid : "unknown");
			return -EBUSY;
		}
		snprintf(err, errlen, "%s/%s: lock: %s", w->dir, SEGMENT_LOCK_NAME, strerror(e));
		return -e;
	}
	len = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(w->lock_fd, 0) || pwrite(w->lock_fd, pid, (size_t)len, 0) != len) {
		int e = errno;

		snprintf(err, errlen, "%s/%s: %s", w->dir, SEGMENT_LOCK_NAME, strerror(e));
		return -e;
	}
	return 0;
}

/* Delete stale temporaries (we hold the lock: no writer is alive) and find
 * the next sequence number. */
static int writer__scan(struct segment_writer *w, char *err, size_t errlen)
{
	int fd = dup(w->dir_fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: %s", w->dir, strerror(-rc));
		return rc;
	}
	rewinddir(d);
	while ((errno = 0, de = readdir(d))) {
		uint64_t seq;

		if (segment_name__is_segment(de->d_name, &seq)) {
			if (seq + 1 > w->next_sequence)
				w->next_sequence = seq + 1;
		} else if (segment_name__is_temp(de->d_name)) {
			if (unlinkat(w->dir_fd, de->d_name, 0) && errno != ENOENT) {
				rc = -errno;
				snprintf(err, errlen, "%s/%s: removing a stale temporary: %s",
					 w->dir, de->d_name, strerror(-rc));
				break;
			}
		}
	}
	if (!rc && errno) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", w->dir, strerror(-rc));
	}
	closedir(d);
	return rc;
}

/* The directory's id: the one a recorder made before, else a new random one,
 * published atomically (we hold the lock: no other writer makes one). */
static int writer__id(struct segment_writer *w, char *err, size_t errlen)
{
	static const char hex[] = "0123456789abcdef";
	static const char tmp[] = SEGMENT_ID_NAME ".tmp";
	unsigned char raw[SEGMENT_ID_LEN / 2];
	char line[SEGMENT_ID_LEN + 1];
	int rc = segment_dir__id(w->dir_fd, w->id), fd = -1;

	if (rc != -ENOENT && rc != -EINVAL) {
		if (rc)
			snprintf(err, errlen, "%s/%s: %s", w->dir, SEGMENT_ID_NAME, strerror(-rc));
		return rc;
	}
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s: a directory id: getrandom: %s", w->dir, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		w->id[2 * i] = hex[raw[i] >> 4];
		w->id[2 * i + 1] = hex[raw[i] & 15];
	}
	w->id[SEGMENT_ID_LEN] = '\0';
	memcpy(line, w->id, SEGMENT_ID_LEN);
	line[SEGMENT_ID_LEN] = '\n';
	fd = openat(w->dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, line, sizeof(line)) != (ssize_t)sizeof(line) || fsync(fd) ||
	    renameat(w->dir_fd, tmp, w->dir_fd, SEGMENT_ID_NAME)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "%s/%s: %s", w->dir, SEGMENT_ID_NAME, strerror(-rc));
		if (fd >= 0)
			unlinkat(w->dir_fd, tmp, 0);
	} else {
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

int segment_writer__open(const char *dir, const struct segment_policy *policy,
			 struct segment_writer **out, char *err, size_t errlen)
{
	struct segment_writer *w = calloc(1, sizeof(*w));
	int rc;

	*out = NULL;
	if (w)
		w->dir_fd = w->lock_fd = -1;
	if (!w || !(w->dir = strdup(dir))) {
		free(w);
		snprintf(err, errlen, "%s: %s", dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	w->policy = *policy;
	if (mkdir(dir, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, errlen, "%s: cannot create the directory: %s", dir, strerror(-rc));
		goto cleanup;
	}
	w->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dir_fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
		goto cleanup;
	}
	{
		struct stat st;

		/* Others could plant a symlink under a segment's name. */
		if (fstat(w->dir_fd, &st)) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
			goto cleanup;
		}
		if (st.st_mode & (S_IWGRP | S_IWOTH)) {
			rc = -EPERM;
			snprintf(err, errlen,
				 "%s: writable by other users (mode %04o): use a directory only "
				 "its owner can write",
				 dir, (unsigned)(st.st_mode & 07777));
			goto cleanup;
		}
	}
	rc = writer__lock(w, err, errlen);
	if (!rc)
		rc = writer__scan(w, err, errlen);
	if (!rc)
		rc = writer__id(w, err, errlen);
	if (!rc && w->next_sequence > 99999999u) {
		rc = -ERANGE;
		snprintf(err, errlen, "%s: segment sequence numbers exhausted", dir);
	}
cleanup:
	if (rc) {
		segment_writer__free(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* One segment file's name, publication time and size, for retention. */
struct seg_file {
	char name[SEGMENT_NAME_MAX];
	uint64_t mtime_ns, size;
};

/* Delete the exports written beside segment name, if any. */
static int writer__unlink_exports(struct segment_writer *w, const char *name)
{
	char other[SEGMENT_NAME_MAX + 32];
	size_t base = strlen(name) - strlen(".msc");

	for (int i = 0; segment_export_suffixes[i][0]; i++) {
		snprintf(other, sizeof(other), "%.*s%s", (int)base, name,
			 segment_export_suffixes[i][1]);
		if (unlinkat(w->dir_fd, other, 0) && errno != ENOENT)
			return -errno;
	}
	return 0;
}

/* Delete the oldest segments beyond the policy; the newest always stays. */
static int writer__retain(struct segment_writer *w)
{
	const struct segment_policy *p = &w->policy;
	struct seg_file *files = NULL;
	char **names = NULL;
	size_t n = 0, nf = 0;
	uint64_t now = clock_ns(CLOCK_REALTIME), bytes = 0;
	int rc;

	if (!p->retain_ns && !p->retain_bytes)
		return 0;
	rc = segment_dir__list(w->dir, &names, &n);
	if (rc)
		return rc;
	files = calloc(n ? n : 1, sizeof(*files));
	if (!files) {
		rc = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat st;

		if (fstatat(w->dir_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue; /* gone already, or not ours to judge */
		snprintf(files[nf].name, sizeof(files[nf].name), "%s", names[i]);
		files[nf].mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
				     (uint64_t)st.st_mtim.tv_nsec;
		files[nf].size = (uint64_t)st.st_size;
		nf++;
	}
	/* Newest first (names sort by time); index 0 of the reversed walk is kept. */
	for (size_t k = 0; k < nf; k++) {
		struct seg_file *f = &files[nf - 1 - k];
		bool old = p->retain_ns && now > f->mtime_ns && now - f->mtime_ns >= p->retain_ns;
		bool big = p->retain_bytes && bytes + f->size > p->retain_bytes;

		bytes += f->size;
		if (!k || (!old && !big))
			continue;
		if (unlinkat(w->dir_fd, f->name, 0) && errno != ENOENT) {
			rc = -errno;
			goto cleanup;
		}
		w->deleted++;
		rc = writer__unlink_exports(w, f->name);
		if (rc)
			goto cleanup;
	}
cleanup:
	free(files);
	segment_dir__free_names(names, n);
	return rc;
}

/* Stamp the segment meta: [start, end) on the grid, never widened (the
 * segments of a recording never overlap); the last one (end UINT64_MAX)
 * ends at its last row.  Rows older than start (released after their
 * segment was cut: a drain starved past the release lag) keep their own
 * times and are counted in segment.late_records.  Returns the end stamped
 * (CLOCK_MONOTONIC ns). */
static uint64_t segment__stamp(struct capture_builder *seg, const char *dir_id, uint64_t sequence,
			       uint64_t start_ns, uint64_t end_ns)
{
	struct capture v;
	char buf[32];
	uint64_t real, first, last, late = 0;

	capture_builder__view(seg, &v);
	if (capture_builder__time_range(seg, &first, &last)) {
		if (end_ns == UINT64_MAX)
			end_ns = last >= start_ns ? last + 1 : start_ns;
		for (uint32_t i = 0; i < v.nsamples; i++)
			late += v.samples[i].time_ns < start_ns;
		for (uint32_t i = 0; i < v.nintervals; i++)
			late += v.intervals[i].end_ns < start_ns;
	} else if (end_ns == UINT64_MAX) {
		end_ns = start_ns;
	}
	if (late) {
		snprintf(buf, sizeof(buf), "%" PRIu64, late);
		capture_builder__set_meta(seg, SEGMENT_META_LATE, buf);
	}
	real = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC) + start_ns;
	snprintf(buf, sizeof(buf), "%" PRIu64, sequence);
	capture_builder__set_meta(seg, SEGMENT_META_SEQUENCE, buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, start_ns);
	capture_builder__set_meta(seg, SEGMENT_META_START, buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, end_ns);
	capture_builder__set_meta(seg, SEGMENT_META_END, buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, real);
	capture_builder__set_meta(seg, SEGMENT_META_REALTIME, buf);
	capture_builder__set_meta(seg, SEGMENT_META_DIRECTORY, dir_id);
	snprintf(buf, sizeof(buf), "%" PRIu64, end_ns - start_ns);
	capture_builder__set_meta(seg, "duration_ns", buf);
	snprintf(buf, sizeof(buf), "%" PRIu32, v.nsamples);
	capture_builder__set_meta(seg, "samples", buf);
	snprintf(buf, sizeof(buf), "%" PRIu32, v.nintervals);
	capture_builder__set_meta(seg, "intervals", buf);
	return end_ns;
}

/* The published file's mtime becomes the CLOCK_REALTIME end of what it
 * covers, so retention ages a segment by its data, not by when the release
 * lag let it be written (the last segments of a stop are written at once). */
static void segment__date(struct segment_writer *w, const char *name, uint64_t end_ns)
{
	uint64_t real = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC) + end_ns;
	struct timespec t[2] = {
		{ .tv_nsec = UTIME_OMIT },
		{ .tv_sec = (time_t)(real / 1000000000u), .tv_nsec = (long)(real % 1000000000u) },
	};

	(void)utimensat(w->dir_fd, name, t, AT_SYMLINK_NOFOLLOW); /* else: aged from now */
}

/* Hand the published segment to the policy's callback, read back from memory. */
static int segment__announce(struct segment_writer *w, struct capture_builder *seg,
			     const char *path, char *err, size_t errlen)
{
	struct capture *c = NULL;
	void *bytes = NULL;
	size_t len;
	int rc;

	if (!w->policy.published)
		return 0;
	rc = capture_builder__serialize(seg, &bytes, &len);
	if (!rc)
		rc = capture__open_mem(bytes, len, path, &c, err, errlen);
	if (!rc) {
		rc = w->policy.published(w->policy.ctx, path, c);
		if (rc)
			snprintf(err, errlen, "%s: export: %s", path, strerror(-rc));
	}
	capture__free(c);
	free(bytes);
	return rc;
}

int segment_writer__publish(struct segment_writer *w, struct capture_builder *src,
			    uint64_t start_ns, uint64_t end_ns, char *err, size_t errlen)
{
	struct capture_builder *seg = capture_builder__new();
	char name[SEGMENT_NAME_MAX], *path = NULL;
	uint64_t real = clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC) + start_ns;
	int rc;

	err[0] = '\0';
	if (!seg) {
		rc = -ENOMEM;
		goto cleanup;
	}
	rc = segment_name__format(name, sizeof(name), real, w->next_sequence);
	if (rc) {
		snprintf(err, errlen, "%s: segment sequence numbers exhausted", w->dir);
		goto cleanup;
	}
	if (asprintf(&path, "%s/%s", w->dir, name) < 0) {
		path = NULL;
		rc = -ENOMEM;
		goto cleanup;
	}
	rc = capture_builder__take(src, seg, end_ns);
	if (rc) {
		snprintf(err, errlen, "%s: moving the samples: %s", path, strerror(-rc));
		goto cleanup;
	}
	end_ns = segment__stamp(seg, w->id, w->next_sequence, start_ns, end_ns);
	rc = capture_builder__write(seg, path);
	if (rc) {
		/* Never published (file_out removed its temporary).  Its counters
		 * go back to src for the next segment, with the loss; its sequence
		 * number stays used, so readers note the gap. */
		struct capture v;
		uint32_t lost = capture_builder__view(seg, &v) ? 0 : v.nsamples;

		snprintf(err, errlen, "%s", capture_builder__error(seg));
		w->last_failed = true;
		w->write_failed++;
		w->samples_dropped += lost;
		w->next_sequence++;
		(void)capture_builder__move_counters(seg, src);
		capture_builder__add_counter(src, "segment.write_errors", 1);
		capture_builder__add_counter(src, "segment.samples_lost", lost);
		(void)writer__retain(w); /* it may free the space for the next */
		goto cleanup;
	}
	w->last_failed = false;
	segment__date(w, name, end_ns);
	w->next_sequence++;
	w->published++;
	rc = segment__announce(w, seg, path, err, errlen);
	if (rc)
		goto cleanup;
	rc = writer__retain(w);
	if (rc)
		snprintf(err, errlen, "%s: retention: %s", w->dir, strerror(-rc));
cleanup:
	if (rc && !err[0])
		snprintf(err, errlen, "%s: %s", w->dir, strerror(-rc));
	free(path);
	capture_builder__free(seg);
	return rc;
}

uint64_t segment_writer__published(const struct segment_writer *w) { return w->published; }

uint64_t segment_writer__deleted(const struct segment_writer *w) { return w->deleted; }

bool segment_writer__write_failed(const struct segment_writer *w, uint64_t *segments,
				  uint64_t *samples)
{
	if (segments)
		*segments = w->write_failed;
	if (samples)
		*samples = w->samples_dropped;
	return w->last_failed;
}

void segment_writer__free(struct segment_writer *w)
{
	if (!w)
		return;
	if (w->lock_fd >= 0)
		close(w->lock_fd); /* releases the flock */
	if (w->dir_fd >= 0)
		close(w->dir_fd);
	free(w->dir);
	free(w);
}
