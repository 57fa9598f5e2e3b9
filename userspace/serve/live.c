// SPDX-License-Identifier: MIT
/*
 * The served profile of `serve CAPTURE|DIR`: a capture file loaded once,
 * or a segment directory (capture/segment_dir.h, continuous mode) read as
 * one logical profile and read again when its complete segments change,
 * so new segments appear (and retired ones go) without a restart.
 *
 * Who owns what: struct serve_live holds one reference to the current
 * profile; each request takes its own (serve_live__profile) and puts it
 * when answered, so a replaced profile is freed by the last request that
 * still reads it.  Rescans run on serve__run's main thread only, never on
 * a request's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "capture/no_event.h"
#include "capture/segment_dir.h"
#include "internal.h"
#include "serve.h"

static void note_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "microscope serve: %s\n", line);
}

/* FNV-1a of the complete segments' names (name order = time order); 0 for a file. */
static int dir_signature(const char *path, uint64_t *sig, uint32_t *count)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char **names = NULL;
	size_t n = 0, i;
	const unsigned char *b;
	int rc;

	rc = segment_dir__list(path, &names, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		for (b = (const unsigned char *)names[i]; *b; b++) {
			h ^= *b;
			h *= 0x100000001b3ull;
		}
		h ^= '/';
		h *= 0x100000001b3ull;
	}
	segment_dir__free_names(names, n);
	*sig = h;
	*count = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	return 0;
}

/* Read path (file or directory) into a new profile. */
static int load(const char *path, bool quiet, struct serve_profile **out, uint32_t segments,
		char *err, size_t errlen)
{
	struct capture *c;
	int rc;

	*out = NULL;
	rc = segment_dir__open_path(path, &c, err, errlen, quiet ? NULL : note_line, NULL);
	if (rc)
		return rc;
	/* a capture with no event (no sample taken) serves empty views */
	rc = capture__ensure_event(&c, err, errlen);
	if (rc) {
		capture__free(c);
		return rc;
	}
	rc = serve_profile__new(c, path, out);
	if (rc) {
		snprintf(err, errlen, "%s: out of memory building the views", path);
		return rc;
	}
	(*out)->segments = segments;
	return 0;
}

int serve_live__open(struct serve_live *l, const char *path, char *err, size_t errlen)
{
	uint32_t count = 0;
	int rc;

	memset(l, 0, sizeof(*l));
	l->path = path;
	pthread_mutex_init(&l->lock, NULL);
	if (segment_dir__is_dir(path)) {
		rc = dir_signature(path, &l->signature, &count);
		if (rc) {
			snprintf(err, errlen, "%s: cannot list the segments: %s", path,
				 strerror(-rc));
			return rc;
		}
	}
	return load(path, false, &l->current, count, err, errlen);
}

/* Sleep one look's time; 1 when a signal of stop came, else 0 or -errno. */
static int wait_look(const sigset_t *stop)
{
	struct timespec poll = { .tv_nsec = SERVE_FIRST_SEGMENT_MS * 1000000L };
	int rc = sigtimedwait(stop, NULL, &poll);

	if (rc > 0)
		return 1;
	if (rc < 0 && errno != EAGAIN && errno != EINTR)
		return -errno;
	return 0;
}

/* Could record --continuous make path (a directory, not a capture file,
 * in a directory that exists: it makes only the last component)? */
static bool may_appear(const char *path)
{
	size_t len = strlen(path);
	char parent[PATH_MAX];
	const char *slash;

	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len >= 4 && !memcmp(path + len - 4, ".msc", 4))
		return false; /* a capture file's name: a typo, not a recording to come */
	slash = memrchr(path, '/', len);
	if (!slash)
		return true; /* in the current directory */
	if (slash == path)
		return true; /* in / */
	if ((size_t)(slash - path) >= sizeof(parent))
		return false;
	memcpy(parent, path, (size_t)(slash - path));
	parent[slash - path] = '\0';
	return segment_dir__is_dir(parent);
}

/* A path that does not exist yet (the recording that makes it starts
 * moments later): wait until it does.  0 once it exists (or at once when
 * it cannot appear: the open names the error), 1 when stopped, -errno. */
static int wait_created(const char *path, const sigset_t *stop)
{
	struct stat st;
	int rc;

	if (!stat(path, &st) || errno != ENOENT || !may_appear(path))
		return 0;
	fprintf(stderr, "microscope serve: %s does not exist yet: waiting for it (record "
		"--continuous %s makes it); Ctrl-C to stop\n", path, path);
	for (;;) {
		rc = wait_look(stop);
		if (rc)
			return rc;
		if (!stat(path, &st))
			return 0;
		if (errno != ENOENT)
			return -errno;
	}
}

int serve_live__wait_first(const char *path, const sigset_t *stop)
{
	uint64_t sig;
	uint32_t count;
	bool said = false;
	int rc;

	rc = wait_created(path, stop);
	if (rc)
		return rc;
	if (!segment_dir__is_dir(path))
		return 0;
	for (;;) {
		rc = dir_signature(path, &sig, &count);
		if (rc) {
			fprintf(stderr, "microscope serve: %s: cannot list the segments: %s\n",
				path, strerror(-rc));
			return rc;
		}
		if (count) {
			if (said)
				fprintf(stderr, "microscope serve: %s: its first segment is here\n",
					path);
			return 0;
		}
		if (!said) {
			fprintf(stderr, "microscope serve: %s: no segment yet: waiting for the "
				"first (record --continuous publishes one when it closes, after "
				"--segment); Ctrl-C to stop\n", path);
			said = true;
		}
		rc = wait_look(stop);
		if (rc)
			return rc;
	}
}

struct serve_profile *serve_live__profile(struct serve_live *l)
{
	struct serve_profile *p;

	pthread_mutex_lock(&l->lock);
	p = serve_profile__get(l->current);
	pthread_mutex_unlock(&l->lock);
	return p;
}

int serve_live__rescan(struct serve_live *l)
{
	struct serve_profile *fresh = NULL, *old;
	char err[512];
	uint64_t sig;
	uint32_t count;
	int rc;

	if (!segment_dir__is_dir(l->path))
		return 0;
	rc = dir_signature(l->path, &sig, &count);
	if (rc || sig == l->signature)
		return rc;
	/* Read outside the lock: requests go on with the current profile. */
	rc = load(l->path, true, &fresh, count, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "microscope serve: rereading %s: %s (still serving the last read)\n",
			l->path, err);
		return rc;
	}
	/* Its first answers are built before requests see it. */
	serve_profile__warm(fresh);
	pthread_mutex_lock(&l->lock);
	old = l->current;
	l->current = fresh;
	l->signature = sig;
	l->reloads++;
	pthread_mutex_unlock(&l->lock);
	serve_profile__put(old);
	return 1;
}

void serve_live__release(struct serve_live *l)
{
	serve_profile__put(l->current);
	l->current = NULL;
	pthread_mutex_destroy(&l->lock);
}
