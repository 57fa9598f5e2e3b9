// SPDX-License-Identifier: MIT
/* Segment directory names and the directory reader (segment_dir.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"
#include "capture/format.h"
#include "capture/merge.h"
#include "capture/segment_dir.h"

#define SEGMENT_PREFIX "seg-"
#define SEGMENT_SUFFIX ".msc"
#define SEGMENT_TEMP   ".tmp."
/* file_out (file_io.h) names its temporaries PATH.tmp.XXXXXX (mkostemp);
 * older recorders used PATH.tmp.PID: either is a tag of letters and digits. */
#define SEGMENT_TEMP_TAG_MAX 16
/* "seg-" 8 digits "T" 6 digits "Z-" 8 digits ".msc" */
#define SEGMENT_NAME_LEN 33
#define SEGMENT_BASE_LEN 29 /* without ".msc" */

const char *const segment_export_suffixes[][2] = {
	{ "pprof", ".pb.gz" },
	{ "speedscope", ".speedscope.json" },
	{ "folded", ".folded" },
	{ NULL, NULL },
};

int segment_name__format(char *buf, size_t len, uint64_t realtime_ns, uint64_t sequence)
{
	time_t t = (time_t)(realtime_ns / 1000000000u);
	struct tm tm;
	int n;

	if (len < SEGMENT_NAME_LEN + 1 || sequence > 99999999u || !gmtime_r(&t, &tm) ||
	    tm.tm_year + 1900 > 9999)
		return -EINVAL;
	n = snprintf(buf, len, SEGMENT_PREFIX "%04d%02d%02dT%02d%02d%02dZ-%08" PRIu64 SEGMENT_SUFFIX,
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		     tm.tm_sec, sequence);
	return n == SEGMENT_NAME_LEN ? 0 : -EINVAL;
}

/* Does s start with exactly n digits?  Their value into *v. */
static bool digits(const char *s, int n, uint64_t *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return true;
}

/* The first SEGMENT_BASE_LEN bytes of name have the segment shape. */
static bool segment_shape(const char *name, uint64_t *sequence)
{
	uint64_t v;

	return strlen(name) >= SEGMENT_BASE_LEN && !strncmp(name, SEGMENT_PREFIX, 4) &&
	       digits(name + 4, 8, &v) && name[12] == 'T' && digits(name + 13, 6, &v) &&
	       !strncmp(name + 19, "Z-", 2) && digits(name + 21, 8, sequence);
}

/* Length of the owned suffix (".msc" or an export's) at s, or 0. */
static size_t owned_suffix(const char *s)
{
	if (!strncmp(s, SEGMENT_SUFFIX, strlen(SEGMENT_SUFFIX)))
		return strlen(SEGMENT_SUFFIX);
	for (int i = 0; segment_export_suffixes[i][0]; i++)
		if (!strncmp(s, segment_export_suffixes[i][1], strlen(segment_export_suffixes[i][1])))
			return strlen(segment_export_suffixes[i][1]);
	return 0;
}

bool segment_name__is_segment(const char *name, uint64_t *sequence)
{
	return strlen(name) == SEGMENT_NAME_LEN && segment_shape(name, sequence) &&
	       !strcmp(name + SEGMENT_BASE_LEN, SEGMENT_SUFFIX);
}

bool segment_name__is_temp(const char *name)
{
	uint64_t seq;
	const char *p;
	size_t suffix, n;

	if (!segment_shape(name, &seq))
		return false;
	suffix = owned_suffix(name + SEGMENT_BASE_LEN);
	p = name + SEGMENT_BASE_LEN + suffix;
	if (!suffix || strncmp(p, SEGMENT_TEMP, strlen(SEGMENT_TEMP)))
		return false;
	p += strlen(SEGMENT_TEMP);
	n = strlen(p);
	if (!n || n > SEGMENT_TEMP_TAG_MAX)
		return false;
	for (; *p; p++)
		if (!isalnum((unsigned char)*p))
			return false;
	return true;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void segment_dir__free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n && names; i++)
		free(names[i]);
	free(names);
}

/* Names of dir passing keep(), sorted. */
static int list_names(const char *dir, bool temps, char ***names, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t len = 0, cap = 0;
	int err = 0;

	*names = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((errno = 0, de = readdir(d))) {
		uint64_t seq;
		if (temps ? !segment_name__is_temp(de->d_name)
			  : !segment_name__is_segment(de->d_name, &seq))
			continue;
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			char **nv = reallocarray(v, ncap, sizeof(*v));

			if (!nv) {
				err = -ENOMEM;
				goto cleanup;
			}
			v = nv;
			cap = ncap;
		}
		v[len] = strdup(de->d_name);
		if (!v[len]) {
			err = -ENOMEM;
			goto cleanup;
		}
		len++;
	}
	if (errno)
		err = -errno;
cleanup:
	closedir(d);
	if (err) {
		segment_dir__free_names(v, len);
		return err;
	}
	if (len)
		qsort(v, len, sizeof(*v), name_cmp);
	*names = v;
	*n = len;
	return 0;
}

int segment_dir__list(const char *dir, char ***names, size_t *n)
{
	return list_names(dir, false, names, n);
}

int segment_dir__id(int dir_fd, char *id)
{
	char buf[SEGMENT_ID_LEN + 2];
	ssize_t n;
	int fd = openat(dir_fd, SEGMENT_ID_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return -EIO;
	if (n == SEGMENT_ID_LEN + 1 && buf[SEGMENT_ID_LEN] == '\n')
		n--;
	if (n != SEGMENT_ID_LEN)
		return -EINVAL;
	for (int i = 0; i < SEGMENT_ID_LEN; i++)
		if (!isxdigit((unsigned char)buf[i]) || isupper((unsigned char)buf[i]))
			return -EINVAL;
	memcpy(id, buf, SEGMENT_ID_LEN);
	id[SEGMENT_ID_LEN] = '\0';
	return 0;
}

/* segment_dir__id of the directory at path. */
static int segment_dir__id_path(const char *dir, char *id)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc;

	if (fd < 0)
		return -errno;
	rc = segment_dir__id(fd, id);
	close(fd);
	return rc;
}

static void notef(segment_note_fn note, void *ctx, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void notef(segment_note_fn note, void *ctx, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!note)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	note(ctx, line);
}

/* A decimal meta value of c, or false. */
static bool meta_u64(const struct capture *c, const char *key, uint64_t *v)
{
	const char *s = capture__meta(c, key);
	char *end;

	if (!s || !*s)
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

/* CLOCK_REALTIME ns to c's CLOCK_MONOTONIC, clamped to [0, UINT64_MAX]. */
static uint64_t to_monotonic(uint64_t real_ns, uint64_t start_ns, uint64_t realtime_ns)
{
	if (real_ns == UINT64_MAX)
		return UINT64_MAX;
	if (realtime_ns >= start_ns) {
		uint64_t off = realtime_ns - start_ns;

		return real_ns > off ? real_ns - off : 0;
	}
	return real_ns > UINT64_MAX - (start_ns - realtime_ns) ? UINT64_MAX
							       : real_ns + (start_ns - realtime_ns);
}

/* "2026-12-02T14:17:00Z" for CLOCK_REALTIME ns (seconds, truncated). */
static void format_utc(uint64_t real_ns, char *buf, size_t size)
{
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "@%" PRIu64, real_ns / 1000000000u);
}

/* Recordings told apart in one directory (a restarted recorder continues
 * its sequence); past this many, a recording seen again is not detected. */
#define DIR_RECORDINGS_MAX 64

struct dir_span {
	uint32_t read;
	uint64_t start_ns, end_ns, realtime_ns; /* of the first and last segment read */
	/* Recorders whose segments were read: a recording is one meta
	 * start_time_ns (CLOCK_MONOTONIC when it started: segments carry no
	 * other recording id), a restart or another command starts a new one. */
	uint32_t recordings;
	uint64_t recording_start_ns;
	uint64_t covered_ns; /* the union of the segments' spans (span__union) */
	uint64_t (*spans)[3]; /* recording, CLOCK_MONOTONIC [start, end) of each segment read */
	size_t nspans, spans_cap;
	/* Readable segments the range left out, and the CLOCK_REALTIME span
	 * they cover (to say where the data is when the range holds none). */
	uint32_t outside;
	uint64_t outside_first_ns, outside_last_ns;
	/* the recording of the last segment taken as this directory's, read or
	 * outside the time range */
	uint64_t cur_rec;
	bool cur_set;
	uint64_t rec_ids[DIR_RECORDINGS_MAX];
	uint64_t rec_end_ns[DIR_RECORDINGS_MAX]; /* its last segment's end */
	uint64_t rec_covered_ns[DIR_RECORDINGS_MAX]; /* durations read, per recording */
	uint32_t nrec_ids;
	uint32_t foreign; /* segments of another recording or directory, skipped */
	uint64_t prev_seq; /* of the last segment of this directory, when any_seq */
	bool any_seq;
	char dir_id[SEGMENT_ID_LEN + 1];
	int dir_id_rc; /* of segment_dir__id: 0 when dir_id is the directory's */
	/* The recorder writes its counters and budget figures once, at stop,
	 * into its last segment: they are the whole recording's (from its
	 * start_time_ns to its last segment's end), deleted segments' too. */
	uint32_t counter_segments;
	uint32_t whole_counter_segments; /* of older recorders: every counter at stop */
	uint32_t counters_rec; /* index in rec_ids of the last such segment's recording */
};

/*
 * Meta is merged last-wins, so freq_hz is the last recording's: say each
 * event's own requested rate as "event.N.freq_hz" (N its index in b), the
 * rate of the recording whose segment c brought it (recordings at
 * different rates have events of different periods: different rows).
 */
static void event_rates(struct capture_builder *b, const struct capture *c)
{
	const char *freq = capture__meta(c, "freq_hz");
	struct capture v;
	char key[48];
	bool *used;

	if (!freq || !c->nevents || capture_builder__view(b, &v))
		return;
	used = calloc(c->nevents, sizeof(*used)); /* a segment may carry others' rows */
	if (!used)
		return;
	for (uint32_t i = 0; i < c->nsamples; i++)
		if (c->samples[i].event < c->nevents)
			used[c->samples[i].event] = true;
	for (uint32_t i = 0; i < c->nintervals; i++)
		if (c->intervals[i].event < c->nevents)
			used[c->intervals[i].event] = true;
	for (uint32_t i = 0; i < c->nevents; i++) {
		const struct capture_event *e = &c->events[i];

		if (!used[i])
			continue;

		for (uint32_t j = 0; j < v.nevents; j++) {
			const struct capture_event *m = &v.events[j];

			if (m->period != e->period ||
			    strcmp(capture__string(&v, m->name), capture__string(c, e->name)) ||
			    strcmp(capture__string(&v, m->unit), capture__string(c, e->unit)))
				continue;
			snprintf(key, sizeof(key), "event.%" PRIu32 ".freq_hz", j);
			capture_builder__set_meta(b, key, freq);
			break;
		}
	}
	free(used);
}

/* The index of recording rec in span->rec_ids, adding it; DIR_RECORDINGS_MAX
 * when full. */
static uint32_t span__recording(struct dir_span *span, uint64_t rec, bool *seen)
{
	uint32_t i;

	for (i = 0; i < span->nrec_ids; i++)
		if (span->rec_ids[i] == rec) {
			*seen = true;
			return i;
		}
	*seen = false;
	if (span->nrec_ids == DIR_RECORDINGS_MAX)
		return DIR_RECORDINGS_MAX;
	span->rec_ids[span->nrec_ids] = rec;
	span->rec_covered_ns[span->nrec_ids] = 0;
	span->rec_end_ns[span->nrec_ids] = 0;
	return span->nrec_ids++;
}

/* Segment seq of this directory comes next (read, or damaged, or removed
 * while reading): note a gap in the sequence before it. */
static void span__next(struct dir_span *span, const char *dir, uint64_t seq,
		       segment_note_fn note, void *ctx)
{
	if (span->any_seq && seq == span->prev_seq + 2)
		notef(note, ctx, "%s: segment %" PRIu64 " missing", dir, span->prev_seq + 1);
	else if (span->any_seq && seq > span->prev_seq + 2)
		notef(note, ctx, "%s: segments %" PRIu64 " to %" PRIu64 " missing", dir,
		      span->prev_seq + 1, seq - 1);
	span->prev_seq = seq;
	span->any_seq = true;
}

/* Merge one segment into b if it overlaps the range.  Returns 0 (also when
 * skipped, with a note), or -ENOMEM. */
static int merge_segment(struct capture_builder *b, const char *dir, const char *name,
			 uint64_t since, uint64_t until, struct dir_span *span,
			 segment_note_fn note, void *ctx)
{
	char path[4096], why[512];
	struct capture *c = NULL;
	uint64_t start = 0, end = UINT64_MAX, real = 0, lo = 0, hi = UINT64_MAX, rec, seq, name_seq;
	const char *dir_id;
	uint32_t ri;
	bool seen;
	int err;

	segment_name__is_segment(name, &name_seq);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
		span__next(span, dir, name_seq, note, ctx);
		notef(note, ctx, "%s/%s: path too long: skipped", dir, name);
		return 0;
	}
	err = capture__open(path, &c, why, sizeof(why));
	if (err && err != -ENOMEM)
		span__next(span, dir, name_seq, note, ctx); /* one of ours, unreadable */
	if (err == -ENOENT) {
		notef(note, ctx, "%s: removed while reading (retention): skipped", path);
		return 0;
	}
	if (err == -ENOMEM)
		return err;
	if (err) {
		if (why[0]) /* the reader's message starts with the path */
			notef(note, ctx, "damaged segment %s: skipped", why);
		else
			notef(note, ctx, "%s: damaged: %s: skipped", path, strerror(-err));
		return 0;
	}
	/* A file of another directory or recording under a segment's name: no
	 * segment meta, a sequence its name does not say, or a recording that
	 * ended before another began in this directory. */
	if (!meta_u64(c, SEGMENT_META_SEQUENCE, &seq) || seq != name_seq) {
		notef(note, ctx, "%s: not a segment of this directory (%s): skipped", path,
		      capture__meta(c, SEGMENT_META_SEQUENCE) ? "its meta names another sequence"
							   : "no segment meta");
		span->foreign++;
		goto cleanup;
	}
	dir_id = capture__meta(c, SEGMENT_META_DIRECTORY);
	if (!span->dir_id_rc && dir_id && strcmp(dir_id, span->dir_id)) {
		notef(note, ctx, "%s: a segment of another directory (%s %s, this one's %s): "
		      "skipped", path, SEGMENT_META_DIRECTORY, dir_id, span->dir_id);
		span->foreign++;
		goto cleanup;
	}
	if (!meta_u64(c, "start_time_ns", &rec))
		rec = 0;
	ri = span__recording(span, rec, &seen);
	if (span->cur_set && rec != span->cur_rec && seen) {
		notef(note, ctx, "%s: a segment of another recording (started at %" PRIu64
		      " ns) among this one's: skipped", path, rec);
		span->foreign++;
		goto cleanup;
	}
	span->cur_rec = rec;
	span->cur_set = true;
	span__next(span, dir, seq, note, ctx);
	if (meta_u64(c, SEGMENT_META_START, &start) && meta_u64(c, SEGMENT_META_END, &end) &&
	    meta_u64(c, SEGMENT_META_REALTIME, &real)) {
		lo = to_monotonic(since, start, real);
		hi = to_monotonic(until, start, real);
	} else if (since || until != UINT64_MAX) {
		notef(note, ctx, "%s: no segment times, cannot select by time: skipped", path);
		goto cleanup;
	}
	if (ri < DIR_RECORDINGS_MAX && end != UINT64_MAX && end > span->rec_end_ns[ri])
		span->rec_end_ns[ri] = end; /* read or not: the recording went on */
	if (end <= lo || start >= hi) { /* outside the range: not selected */
		uint64_t real_end = end != UINT64_MAX && end > start ? real + (end - start) : real;

		if (!span->outside++ || real < span->outside_first_ns)
			span->outside_first_ns = real;
		if (real_end > span->outside_last_ns)
			span->outside_last_ns = real_end;
		goto cleanup;
	}
	err = capture_builder__merge(b, c, lo, hi);
	if (err == -EINVAL) { /* cannot happen after validation; never a wrong total */
		notef(note, ctx, "%s: inconsistent references: skipped", path);
		err = -EINVAL;
		goto cleanup;
	}
	if (err)
		goto cleanup;
	event_rates(b, c);
	/* What the range selected of it, not the whole segment (below) */
	if (c->ncounters && ri < DIR_RECORDINGS_MAX) {
		const char *kind = capture__meta(c, SEGMENT_META_COUNTERS);

		span->counter_segments++;
		span->counters_rec = ri;
		if (!kind || strcmp(kind, "segment"))
			span->whole_counter_segments++;
	}
	if (lo > start) {
		real += lo - start;
		start = lo;
	}
	if (hi < end)
		end = hi;
	if (!span->read++) {
		span->start_ns = start;
		span->realtime_ns = real;
	}
	span->end_ns = end;
	if (end != UINT64_MAX && end > start) {
		if (span->nspans == span->spans_cap) {
			size_t cap = span->spans_cap ? span->spans_cap * 2 : 64;
			uint64_t(*v)[3] = reallocarray(span->spans, cap, sizeof(*v));

			if (!v) {
				err = -ENOMEM;
				goto cleanup;
			}
			span->spans = v;
			span->spans_cap = cap;
		}
		span->spans[span->nspans][0] = rec;
		span->spans[span->nspans][1] = start;
		span->spans[span->nspans][2] = end;
		span->nspans++;
		if (ri < DIR_RECORDINGS_MAX)
			span->rec_covered_ns[ri] += end - start;
	}
	if (span->recordings == 0 || rec != span->recording_start_ns) {
		span->recordings++;
		span->recording_start_ns = rec;
	}
cleanup:
	capture__free(c);
	return err;
}

static int span_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The time the segments read cover: the union of their spans within each
 * recording (segments of older recorders could overlap), summed over the
 * recordings (one recorder at a time writes a directory: they follow one
 * another; their monotonic times do not compare across reboots). */
static uint64_t span__union(struct dir_span *span)
{
	uint64_t total = 0, end = 0;

	qsort(span->spans, span->nspans, sizeof(*span->spans), span_cmp);
	for (size_t i = 0; i < span->nspans; i++) {
		const uint64_t *x = span->spans[i];
		uint64_t a;

		if (i && x[0] != span->spans[i - 1][0])
			end = 0; /* another recording */
		a = x[1] > end ? x[1] : end;
		if (x[2] > a)
			total += x[2] - a;
		if (x[2] > end)
			end = x[2];
	}
	return total;
}

int segment_dir__read(const char *dir, uint64_t since_realtime_ns, uint64_t until_realtime_ns,
		      void **bytes, size_t *len, char *err, size_t errlen, segment_note_fn note,
		      void *ctx)
{
	struct capture_builder *b = NULL;
	struct dir_span span = {0};
	char **names = NULL, **temps = NULL, buf[64];
	size_t n = 0, ntemps = 0;
	int rc;

	*bytes = NULL;
	*len = 0;
	if (errlen)
		err[0] = '\0';
	rc = list_names(dir, false, &names, &n);
	if (!rc)
		rc = list_names(dir, true, &temps, &ntemps);
	if (rc) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
		goto cleanup;
	}
	for (size_t i = 0; i < ntemps; i++)
		if (strstr(temps[i], SEGMENT_SUFFIX SEGMENT_TEMP)) /* not an export's */
			notef(note, ctx, "%s/%s: being written: skipped", dir, temps[i]);
	b = capture_builder__new();
	if (!b) {
		rc = -ENOMEM;
		goto cleanup;
	}
	span.dir_id_rc = segment_dir__id_path(dir, span.dir_id);
	for (size_t i = 0; i < n; i++) {
		rc = merge_segment(b, dir, names[i], since_realtime_ns, until_realtime_ns, &span,
				   note, ctx);
		if (rc == -EINVAL) {
			/* b may hold part of that segment: start over without it */
			snprintf(err, errlen, "%s/%s: inconsistent segment", dir, names[i]);
			goto cleanup;
		}
		if (rc)
			goto cleanup;
	}
	if (!span.read && span.outside) {
		char from[32], to[32];

		rc = -ERANGE;
		format_utc(span.outside_first_ns, from, sizeof(from));
		format_utc(span.outside_last_ns, to, sizeof(to));
		snprintf(err, errlen,
			 "%s: the time range holds no data: none of the %" PRIu32 " readable "
			 "segment%s (%s to %s) falls in it",
			 dir, span.outside, span.outside == 1 ? "" : "s", from, to);
		goto cleanup;
	}
	if (!span.read) {
		rc = -ENOENT;
		snprintf(err, errlen, "%s: no readable segments", dir);
		goto cleanup;
	}
	snprintf(buf, sizeof(buf), "%" PRIu32, span.read);
	capture_builder__set_meta(b, "segments", buf);
	snprintf(buf, sizeof(buf), "%" PRIu32, capture_builder__sample_count(b));
	capture_builder__set_meta(b, "samples", buf);
	if (span.foreign) {
		snprintf(buf, sizeof(buf), "%" PRIu32, span.foreign);
		capture_builder__set_meta(b, "segments.foreign_skipped", buf);
	}
	if (span.counter_segments) {
		/* Some counters are whole recordings' (peaks, lag, kunwind; all
		 * of them from older recorders): say which span they cover when
		 * the samples read are less of it. */
		uint32_t ri = span.counters_rec;
		uint64_t whole = span.rec_end_ns[ri] > span.rec_ids[ri]
					 ? span.rec_end_ns[ri] - span.rec_ids[ri] : 0;

		snprintf(buf, sizeof(buf), "%" PRIu64, whole);
		capture_builder__set_meta(b, "segments.counters_span_ns", buf);
		snprintf(buf, sizeof(buf), "%" PRIu64, span.rec_covered_ns[ri]);
		capture_builder__set_meta(b, "segments.counters_read_ns", buf);
		if (!span.whole_counter_segments)
			capture_builder__set_meta(b, "segments.counters", "segment");
	}
	span.covered_ns = span__union(&span);
	if (span.recordings > 1)
		notef(note, ctx,
		      "%s: segments of %" PRIu32 " recordings (a restarted recorder or another "
		      "command) read as one profile; its duration is the time their segments "
		      "cover",
		      dir, span.recordings);
	if (span.recordings > 1 && span.covered_ns) {
		/* Monotonic times of different recordings do not subtract. */
		snprintf(buf, sizeof(buf), "%" PRIu64, span.covered_ns);
		capture_builder__set_meta(b, "duration_ns", buf);
	} else if (span.end_ns != UINT64_MAX && span.end_ns > span.start_ns) {
		snprintf(buf, sizeof(buf), "%" PRIu64, span.start_ns);
		capture_builder__set_meta(b, SEGMENT_META_START, buf);
		snprintf(buf, sizeof(buf), "%" PRIu64, span.end_ns);
		capture_builder__set_meta(b, SEGMENT_META_END, buf);
		snprintf(buf, sizeof(buf), "%" PRIu64, span.realtime_ns);
		capture_builder__set_meta(b, SEGMENT_META_REALTIME, buf);
		snprintf(buf, sizeof(buf), "%" PRIu64, span.end_ns - span.start_ns);
		capture_builder__set_meta(b, "duration_ns", buf);
	}
	rc = capture_builder__serialize(b, bytes, len);
	if (rc)
		snprintf(err, errlen, "%s: %s", dir, capture_builder__error(b));
cleanup:
	free(span.spans);
	capture_builder__free(b);
	segment_dir__free_names(names, n);
	segment_dir__free_names(temps, ntemps);
	return rc;
}

int segment_dir__open(const char *dir, uint64_t since_realtime_ns, uint64_t until_realtime_ns,
		      struct capture **out, char *err, size_t errlen, segment_note_fn note,
		      void *ctx)
{
	void *bytes;
	size_t len;
	int rc = segment_dir__read(dir, since_realtime_ns, until_realtime_ns, &bytes, &len, err,
				   errlen, note, ctx);

	*out = NULL;
	if (!rc)
		rc = capture__open_mem(bytes, len, dir, out, err, errlen);
	free(bytes);
	return rc;
}

bool segment_dir__is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

int segment_dir__open_path(const char *path, struct capture **out, char *err, size_t errlen,
			   segment_note_fn note, void *ctx)
{
	if (segment_dir__is_dir(path))
		return segment_dir__open(path, 0, UINT64_MAX, out, err, errlen, note, ctx);
	return capture__open(path, out, err, errlen);
}
