// SPDX-License-Identifier: MIT
/*
 * The perf map reader (perf_map.h).  A line is "START SIZE NAME\n": START
 * and SIZE hexadecimal with an optional 0x, at most 16 digits, separated by
 * blanks; NAME the rest of the line (a trailing '\r' dropped), not empty.
 * perf's own reader (tools/perf/util/symbol.c, dso__load_perf_map) is the
 * model; unlike it, a bad line is counted and skipped, never the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit_policy.h"
#include "jit_proc.h"
#include "perf_map.h"

static const char *const state_names[] = {
#define PERF_MAP_STATE_NAME(id, name, text) name,
	PERF_MAP_STATES(PERF_MAP_STATE_NAME)
#undef PERF_MAP_STATE_NAME
};

static const char *const state_texts[] = {
#define PERF_MAP_STATE_TEXT(id, name, text) text,
	PERF_MAP_STATES(PERF_MAP_STATE_TEXT)
#undef PERF_MAP_STATE_TEXT
};

const char *perf_map_state__name(unsigned int state)
{
	return state < PERF_MAP_STATE_COUNT ? state_names[state] : NULL;
}

const char *perf_map_state__text(unsigned int state)
{
	return state < PERF_MAP_STATE_COUNT ? state_texts[state] : NULL;
}

void perf_map__init(struct perf_map *m)
{
	memset(m, 0, sizeof(*m));
	m->state = PERF_MAP_UNREAD;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A hex number at *p (optional 0x, 1..16 digits) ending at a blank. */
static bool hex_field(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	int digits = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	*v = 0;
	for (; s < end && !is_blank(*s); s++, digits++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return false;
		if (digits == 16)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	if (!digits || s == end)
		return false;
	while (s < end && is_blank(*s))
		s++;
	*p = s;
	return true;
}

/* One line without its newline.  0, or -ENOMEM. */
static int parse_line(struct jit_funcs *f, const char *s, const char *end, uint64_t read_ns,
		      uint64_t since_ns)
{
	uint64_t start, size;

	if (end > s && end[-1] == '\r')
		end--;
	if (!hex_field(&s, end, &start) || !hex_field(&s, end, &size) || s == end) {
		jit_funcs__problem(f, JIT_PROBLEM_MALFORMED);
		return 0;
	}
	return jit_funcs__add(f, start, size, s, (size_t)(end - s), read_ns, since_ns, 0);
}

ssize_t perf_map__parse(struct perf_map *m, struct jit_funcs *f, const char *buf, size_t len,
			uint64_t read_ns)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - (buf + pos)) : len - pos;

		if (m->skipping) {
			pos += line_len + (nl ? 1 : 0);
			if (nl)
				m->skipping = false;
			continue;
		}
		if (line_len + 1 > JIT_LINE_MAX) {
			/* Over-long: malformed, whether or not its end is here. */
			jit_funcs__problem(f, JIT_PROBLEM_MALFORMED);
			m->lines++;
			pos += line_len + (nl ? 1 : 0);
			m->skipping = !nl;
			continue;
		}
		if (!nl)
			break; /* incomplete: the writer is still at it */
		m->lines++;
		int err = parse_line(f, buf + pos, nl, read_ns, m->since_ns);

		if (err)
			return err;
		pos += line_len + 1;
	}
	m->offset += pos;
	return (ssize_t)pos;
}

#define READ_CHUNK (256u << 10)

/* Read on from m->offset: at most JIT_READ_MAX bytes.  0 or -errno. */
static int read_file(struct perf_map *m, struct jit_funcs *f, int fd, uint64_t read_ns)
{
	char *buf = malloc(READ_CHUNK);
	size_t have = 0, total = 0;
	bool eof = false;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	m->since_ns = m->eof_ns;
	while (total < JIT_READ_MAX) {
		size_t want = READ_CHUNK - have;
		ssize_t got, used;

		if (want > JIT_READ_MAX - total)
			want = JIT_READ_MAX - total;
		got = pread(fd, buf + have, want, (off_t)(m->offset + have));
		if (got < 0) {
			err = errno == EINTR ? 0 : -errno;
			if (!err)
				continue;
			break;
		}
		if (!got) {
			eof = true;
			break;
		}
		total += (size_t)got;
		have += (size_t)got;
		used = perf_map__parse(m, f, buf, have, read_ns);
		if (used < 0) {
			err = (int)used;
			break;
		}
		/* The rest is one incomplete line shorter than JIT_LINE_MAX. */
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
	}
	free(buf);
	if (eof && !err)
		m->eof_ns = read_ns;
	return err;
}

int perf_map__read(struct perf_map *m, struct jit_funcs *f, const struct jit_target *t,
		   uint64_t read_ns, uint32_t *added)
{
	char path[64];
	uint64_t dev = 0, ino = 0;
	int root_fd, fd, err, n;

	*added = 0;
	if (m->state == PERF_MAP_STALE || m->state == PERF_MAP_NOT_OWNED)
		return 0; /* its verdict holds for the process's life */
	snprintf(path, sizeof(path), "tmp/perf-%d.map", (int)t->ns_pid);
	root_fd = jit_target__root(t);
	if (root_fd < 0) {
		m->state = PERF_MAP_UNREADABLE;
		return 0;
	}
	fd = jit_file__open(root_fd, path, t, &dev, &ino);
	close(root_fd);
	if (fd == -ENOENT) {
		m->state = m->state == PERF_MAP_READING ? PERF_MAP_READING : PERF_MAP_ABSENT;
		return 0;
	}
	if (fd == -ESTALE || fd == -EPERM) {
		m->state = fd == -ESTALE ? PERF_MAP_STALE : PERF_MAP_NOT_OWNED;
		jit_funcs__problem(f, fd == -ESTALE ? JIT_PROBLEM_STALE : JIT_PROBLEM_NOT_OWNED);
		return 0;
	}
	if (fd < 0) {
		m->state = PERF_MAP_UNREADABLE;
		return 0;
	}
	struct stat st;

	if (m->dev != dev || m->ino != ino || fstat(fd, &st) || (uint64_t)st.st_size < m->offset) {
		/* Another file than the one read so far, or this one cut
		 * short and rewritten: from its start. */
		m->offset = 0;
		m->skipping = false;
		m->eof_ns = 0;
		m->dev = dev;
		m->ino = ino;
	}
	m->state = PERF_MAP_READING;
	err = read_file(m, f, fd, read_ns);
	close(fd);
	if (err == -ENOMEM)
		return err;
	n = jit_funcs__commit(f);
	if (n < 0)
		return n;
	*added = (uint32_t)n;
	return 0;
}
