// SPDX-License-Identifier: MIT
/* Capture files and segment directories as command input (input.h). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "capture/segment_dir.h"
#include "input.h"
#include "userspace/options/record_options.h"

static void note_line(void *ctx, const char *line)
{
	fprintf(stderr, "microscope %s: note: %s\n", (const char *)ctx, line);
}

int cli_input__open(const char *cmd, const char *path, struct capture **out, char *err,
		    size_t errlen)
{
	return segment_dir__open_path(path, out, err, errlen, note_line, (void *)cmd);
}

int cli_input__read_dir(const char *cmd, const char *path, void **bytes, size_t *len, char *err,
			size_t errlen)
{
	if (!segment_dir__is_dir(path))
		return -ENOTDIR;
	return segment_dir__read(path, 0, UINT64_MAX, bytes, len, err, errlen, note_line,
				 (void *)cmd);
}

/* Exactly n decimal digits at *p, in [lo, hi]: their value, or -1. */
static int fixed_digits(const char **p, int n, int lo, int hi)
{
	int v = 0, i;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return -1;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return v < lo || v > hi ? -1 : v;
}

static bool leap_year(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/*
 * "HH:MM[:SS][Z]" at p into tm, to the end of the string: hours 00-23,
 * minutes and seconds 00-59 (no leap second: UTC as time_t counts it).
 */
static int parse_clock(const char *p, struct tm *tm)
{
	if ((tm->tm_hour = fixed_digits(&p, 2, 0, 23)) < 0 || *p++ != ':' ||
	    (tm->tm_min = fixed_digits(&p, 2, 0, 59)) < 0)
		return -EINVAL;
	tm->tm_sec = 0;
	if (*p == ':' && (++p, (tm->tm_sec = fixed_digits(&p, 2, 0, 59)) < 0))
		return -EINVAL;
	if (*p == 'Z')
		p++;
	return *p ? -EINVAL : 0;
}

int cli_input__parse_when(const char *s, uint64_t now_ns, uint64_t *ns)
{
	static const int mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	const char *p = s;
	struct tm tm;
	char *e;
	uint64_t d;
	time_t t;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '-') {
		if (record_options__parse_duration(s + 1, &d) || d > now_ns)
			return -EINVAL;
		*ns = now_ns - d;
		return 0;
	}
	if (s[0] == '@') {
		unsigned long long v;

		if (!isdigit((unsigned char)s[1]))
			return -EINVAL;
		errno = 0;
		v = strtoull(s + 1, &e, 10);
		if (errno || *e || v > UINT64_MAX / 1000000000u)
			return -EINVAL;
		*ns = (uint64_t)v * 1000000000u;
		return 0;
	}
	memset(&tm, 0, sizeof(tm));
	if (strlen(s) > 2 && s[2] == ':') {
		/* HH:MM[:SS] today (UTC) */
		t = (time_t)(now_ns / 1000000000u);
		gmtime_r(&t, &tm);
	} else {
		/* YYYY-MM-DD, a real calendar day (no 2026-02-30), then T or a space */
		if ((tm.tm_year = fixed_digits(&p, 4, 1970, 9999)) < 0 || *p++ != '-' ||
		    (tm.tm_mon = fixed_digits(&p, 2, 1, 12)) < 0 || *p++ != '-' ||
		    (tm.tm_mday = fixed_digits(&p, 2, 1, 31)) < 0 || (*p != 'T' && *p != ' '))
			return -EINVAL;
		if (tm.tm_mday > mdays[tm.tm_mon - 1] + (tm.tm_mon == 2 && leap_year(tm.tm_year)))
			return -EINVAL;
		tm.tm_year -= 1900;
		tm.tm_mon--;
		p++;
	}
	if (parse_clock(p, &tm))
		return -EINVAL;
	t = timegm(&tm);
	if (t < 0)
		return -EINVAL;
	*ns = (uint64_t)t * 1000000000u;
	return 0;
}

static bool range_is_all(struct cli_input_range r)
{
	return !r.since_ns && r.until_ns == UINT64_MAX;
}

int cli_input__open_range(const char *cmd, const char *path, struct cli_input_range range,
			  struct capture **out, char *err, size_t errlen)
{
	*out = NULL;
	if (segment_dir__is_dir(path))
		return segment_dir__open(path, range.since_ns, range.until_ns, out, err, errlen,
					 note_line, (void *)cmd);
	if (!range_is_all(range)) {
		snprintf(err, errlen, "%s: --since and --until select segments of a directory "
				      "(record --continuous); this is a file",
			 path);
		return -EDOM; /* a usage error */
	}
	int rc = capture__open(path, out, err, errlen);
	size_t n = strlen(err);

	/* another tool's profile (pprof, folded, perf script) is read by
	 * convert, which makes a capture of it */
	if (rc == -EBADMSG && strstr(err, "bad magic") && n + 1 < errlen)
		snprintf(err + n, errlen - n,
			 "; a pprof, folded or perf script file is imported first: "
			 "microscope convert %s -o FILE.msc", path);
	return rc;
}

int cli_input__read_dir_range(const char *cmd, const char *path, struct cli_input_range range,
			      void **bytes, size_t *len, char *err, size_t errlen)
{
	if (!segment_dir__is_dir(path)) {
		if (range_is_all(range))
			return -ENOTDIR;
		snprintf(err, errlen, "%s: --since and --until select segments of a directory "
				      "(record --continuous); this is a file",
			 path);
		return -EDOM; /* a usage error */
	}
	return segment_dir__read(path, range.since_ns, range.until_ns, bytes, len, err, errlen,
				 note_line, (void *)cmd);
}

int cli_input__set_range(struct cli_input_range *r, bool since, const char *when)
{
	struct timespec now;
	uint64_t ns;

	clock_gettime(CLOCK_REALTIME, &now);
	if (cli_input__parse_when(when, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
				  &ns))
		return -EINVAL;
	*(since ? &r->since_ns : &r->until_ns) = ns;
	return 0;
}

int cli_input__find_event(const char *cmd, const char *path, const struct capture *c,
			  const char *name, uint32_t *event)
{
	uint64_t *n; /* per event: samples, then intervals */
	uint32_t same = 0;
	char label[256];
	int rc = analysis__find_event(c, name, event);

	if (!rc)
		return 0;
	for (uint32_t i = 0; i < c->nevents; i++)
		same += !strcmp(capture__string(c, c->events[i].name), name);
	if (rc == -ENOTUNIQ)
		fprintf(stderr, "microscope %s: %s: %" PRIu32 " events are named '%s'; choose one:",
			cmd, path, same, name);
	else
		fprintf(stderr, "microscope %s: %s: no event '%s'%s; events:", cmd, path, name,
			strcmp(name, "off-cpu") ? "" : " (record with --off-cpu)");
	n = calloc(c->nevents ? 2 * (size_t)c->nevents : 1, sizeof(*n));
	for (uint32_t i = 0; n && i < c->nsamples; i++)
		n[2 * c->samples[i].event]++;
	for (uint32_t i = 0; n && i < c->nintervals; i++)
		n[2 * c->intervals[i].event + 1]++;
	for (uint32_t i = 0; i < c->nevents; i++) {
		analysis__event_label(c, i, label, sizeof(label));
		fprintf(stderr, "%s --event %s", i ? "," : "", label);
		if (n && n[2 * i + 1])
			fprintf(stderr, " (%" PRIu64 " intervals)", n[2 * i + 1]);
		else if (n)
			fprintf(stderr, " (%" PRIu64 " samples, period %" PRIu64 ")", n[2 * i],
				c->events[i].period);
	}
	fprintf(stderr, "%s\n", c->nevents ? "" : " none");
	free(n);
	return rc;
}
