// SPDX-License-Identifier: MIT
/*
 * The jitdump reader (jitdump.h).  Every field is read with memcpy at a
 * checked offset; every length is checked against the record before use.
 * perf's own reader (tools/perf/util/jitdump.c) is the model for what a
 * record holds: like it, a debug-info record belongs to the next code load
 * of its address and only the last one waits.
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
#include "jitdump.h"

static const char *const state_names[] = {
#define JITDUMP_STATE_NAME(id, name, text) name,
	JITDUMP_STATES(JITDUMP_STATE_NAME)
#undef JITDUMP_STATE_NAME
};

static const char *const state_texts[] = {
#define JITDUMP_STATE_TEXT(id, name, text) text,
	JITDUMP_STATES(JITDUMP_STATE_TEXT)
#undef JITDUMP_STATE_TEXT
};

const char *jitdump_state__name(unsigned int state)
{
	return state < JITDUMP_STATE_COUNT ? state_names[state] : NULL;
}

const char *jitdump_state__text(unsigned int state)
{
	return state < JITDUMP_STATE_COUNT ? state_texts[state] : NULL;
}

void jitdump__init(struct jitdump *d)
{
	memset(d, 0, sizeof(*d));
	d->state = JITDUMP_UNREAD;
}

void jitdump__release(struct jitdump *d)
{
	if (d->kept)
		close(d->fd);
	free(d->debug);
	jitdump__init(d);
}

bool jitdump__is_marker(const char *path)
{
	const char *base = strrchr(path, '/');
	size_t len;

	base = base ? base + 1 : path;
	len = strlen(base);
	if (len < strlen("jit-0.dump") || strncmp(base, "jit-", 4) ||
	    strcmp(base + len - 5, ".dump"))
		return false;
	for (const char *p = base + 4; p < base + len - 5; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static uint32_t get_u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Header: false when it ends the file's reading (state set, counted). */
static bool parse_header(struct jitdump *d, struct jit_funcs *f, const uint8_t *h,
			 uint32_t expect_pid)
{
	uint32_t magic = get_u32(h), version = get_u32(h + 4), size = get_u32(h + 8);

	if (magic != JITDUMP_MAGIC || version != JITDUMP_VERSION || size < JITDUMP_HEADER_SIZE ||
	    size > JITDUMP_HEADER_MAX) {
		d->state = JITDUMP_BAD;
		jit_funcs__problem(f, JIT_PROBLEM_BAD_HEADER);
		return false;
	}
	d->pid = get_u32(h + 20);
	if (expect_pid && d->pid != expect_pid) {
		d->state = JITDUMP_FOREIGN;
		jit_funcs__problem(f, JIT_PROBLEM_BAD_HEADER);
		return false;
	}
	d->arch_timestamp = get_u64(h + 32) & JITDUMP_FLAGS_ARCH_TIMESTAMP;
	return true;
}

/* Could these bytes be a file name?  Well-formed UTF-8 (RFC 3629: no
 * overlong forms, surrogates or code points past U+10FFFF) without control
 * characters: V8 11 writes a freed buffer's bytes for a script's name, and
 * a byte over 0x7f there seldom starts a well-formed sequence. */
static bool is_text(const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint8_t c = s[i];
		size_t n;
		uint8_t lo = 0x80, hi = 0xbf;

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
			lo = c == 0xe0 ? 0xa0 : 0x80;
			hi = c == 0xed ? 0x9f : 0xbf;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
			lo = c == 0xf0 ? 0x90 : 0x80;
			hi = c == 0xf4 ? 0x8f : 0xbf;
		} else {
			return false;
		}
		if (len - i - 1 < n || s[i + 1] < lo || s[i + 1] > hi)
			return false;
		for (size_t k = 2; k <= n; k++)
			if (s[i + k] < 0x80 || s[i + k] > 0xbf)
				return false;
		i += n + 1;
	}
	return true;
}

/*
 * The pending debug-info record's entries for a load at code_addr, as
 * source-line entries of the next function (entries out of address order
 * are left out).  A malformed entry ends them (counted).  0 or -ENOMEM.
 */
/*
 * V8 (src/diagnostics/perf-jit.cc) writes each source position kElfHeaderSize
 * (0x40) bytes after the code it describes, for the perf inject of its day
 * (which put the code after a 64-byte ELF header and took positions as they
 * came); perf since "perf inject: Fix GEN_ELF_TEXT_OFFSET for jit" adds the
 * header itself, and Java agents write the code's own addresses.  V8's loads
 * are told by their names' code-kind prefixes.
 */
#define V8_POSITION_SKEW 0x40

static bool is_v8_name(const uint8_t *name, size_t len)
{
	static const char *const kinds[] = { "JS:", "LazyCompile:", "Function:", "Script:",
					      "Eval:" };

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (len >= strlen(kinds[i]) && !memcmp(name, kinds[i], strlen(kinds[i])))
			return true;
	return false;
}

/*
 * V8's load names carry their script ("JS:*leaf /srv/app.js:2:14"), and
 * Node 20 often writes a freed buffer's bytes as a position's file name:
 * a V8 position whose file the load's name does not hold is such garbage
 * (counted as bad text; its line is kept).
 */
static bool v8_file_ok(const uint8_t *load, size_t load_len, const uint8_t *file, size_t len)
{
	return len && len <= load_len && memmem(load, load_len, file, len);
}

static int add_lines(struct jitdump *d, struct jit_funcs *f, uint64_t code_addr,
		     const uint8_t *load, size_t load_len)
{
	bool v8 = is_v8_name(load, load_len);
	uint64_t skew = v8 ? V8_POSITION_SKEW : 0;
	const uint8_t *p = d->debug, *end;
	const char *file = "";
	size_t file_len = 0;
	uint64_t n, last = 0;
	int err = 0;

	if (!p || get_u64(p) != code_addr)
		return 0;
	end = p + d->debug_len;
	n = get_u64(p + 8);
	p += 16;
	jit_funcs__begin_lines(f);
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *name, *nul;

		/* entry: u64 addr, u32 line, u32 discriminator, name NUL */
		if (end - p < 17 || !(nul = memchr(p + 16, '\0', (size_t)(end - p - 16)))) {
			jit_funcs__problem(f, JIT_PROBLEM_BAD_RECORD);
			break;
		}
		uint64_t addr = get_u64(p);
		uint32_t line = get_u32(p + 8);

		name = p + 16;
		/* "\xff\0": the same file as the entry before. */
		if (!(nul - name == 1 && name[0] == 0xff)) {
			file = (const char *)name;
			file_len = (size_t)(nul - name);
			if (!is_text(name, file_len) ||
			    (v8 && !v8_file_ok(load, load_len, name, file_len))) {
				jit_funcs__problem(f, JIT_PROBLEM_BAD_TEXT);
				file_len = 0;
			}
			if (file_len > JIT_NAME_MAX)
				file_len = JIT_NAME_MAX;
		}
		p = nul + 1;
		addr = addr - code_addr >= skew ? addr - skew : code_addr;
		if (addr < last)
			continue;
		last = addr;
		err = jit_funcs__add_line(f, addr, line, file, file_len);
		if (err)
			break;
	}
	free(d->debug);
	d->debug = NULL;
	return err == -ENOSPC ? 0 : err;
}

static int on_load(struct jitdump *d, struct jit_funcs *f, const uint8_t *r, uint32_t size,
		   uint64_t time, uint64_t read_ns)
{
	/* u32 pid, u32 tid, u64 vma, u64 code_addr, u64 code_size, u64 code_index, name */
	const uint8_t *body = r + JITDUMP_RECORD_PREFIX, *nul;
	size_t body_len = size - JITDUMP_RECORD_PREFIX;
	uint64_t code_addr, code_size;
	int err;

	if (body_len < 41 || !(nul = memchr(body + 40, '\0', body_len - 40))) {
		jit_funcs__problem(f, JIT_PROBLEM_BAD_RECORD);
		return 0;
	}
	code_addr = get_u64(body + 16);
	code_size = get_u64(body + 24);
	/* The code bytes follow the name inside the record. */
	if (code_size > (uint64_t)(body + body_len - (nul + 1))) {
		jit_funcs__problem(f, JIT_PROBLEM_BAD_RECORD);
		return 0;
	}
	err = add_lines(d, f, code_addr, body + 40, (size_t)(nul - (body + 40)));
	if (err)
		return err;
	return jit_funcs__add(f, code_addr, code_size, (const char *)body + 40,
			      (size_t)(nul - (body + 40)), read_ns, d->arch_timestamp ? 0 : time,
			      JIT_FN_JITDUMP);
}

/* Moves look back this many staged functions for the code they move. */
#define MOVE_LOOKBACK 64

static int on_move(struct jitdump *d, struct jit_funcs *f, const uint8_t *r, uint32_t size,
		   uint64_t time, uint64_t read_ns)
{
	/* u32 pid, u32 tid, u64 vma, u64 old_code_addr, u64 new_code_addr, u64 code_size, ... */
	const uint8_t *body = r + JITDUMP_RECORD_PREFIX;
	const struct jit_fn *old = NULL;
	uint64_t old_addr, new_addr, code_size;
	char name[JIT_NAME_MAX + 1];

	if (size - JITDUMP_RECORD_PREFIX < 48) {
		jit_funcs__problem(f, JIT_PROBLEM_BAD_RECORD);
		return 0;
	}
	old_addr = get_u64(body + 16);
	new_addr = get_u64(body + 24);
	code_size = get_u64(body + 32);
	for (uint32_t i = f->nstaged; i > 0 && f->nstaged - i < MOVE_LOOKBACK && !old; i--)
		if (f->staged[i - 1].start == old_addr)
			old = &f->staged[i - 1];
	if (!old)
		old = jit_funcs__find(f, old_addr, 0);
	if (!old || old->start != old_addr) {
		jit_funcs__problem(f, JIT_PROBLEM_MOVE_UNKNOWN);
		return 0;
	}
	/* The old code stays named until a later function replaces it. */
	snprintf(name, sizeof(name), "%s", jit_funcs__name(f, old));
	return jit_funcs__add(f, new_addr, code_size, name, strlen(name), read_ns,
			      d->arch_timestamp ? 0 : time, JIT_FN_JITDUMP);
}

static int on_debug(struct jitdump *d, struct jit_funcs *f, const uint8_t *r, uint32_t size)
{
	/* u64 code_addr, u64 nr_entry, entries */
	size_t body_len = size - JITDUMP_RECORD_PREFIX;
	uint8_t *copy;

	if (body_len < 16 || get_u64(r + JITDUMP_RECORD_PREFIX + 8) > body_len / 17) {
		jit_funcs__problem(f, JIT_PROBLEM_BAD_RECORD);
		return 0;
	}
	if (d->debug)
		jit_funcs__problem(f, JIT_PROBLEM_DEBUG_UNUSED);
	copy = malloc(body_len);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, r + JITDUMP_RECORD_PREFIX, body_len);
	free(d->debug);
	d->debug = copy;
	d->debug_len = (uint32_t)body_len;
	return 0;
}

ssize_t jitdump__parse(struct jitdump *d, struct jit_funcs *f, const uint8_t *buf, size_t len,
		       uint32_t expect_pid, uint64_t read_ns)
{
	size_t pos = 0;
	int err = 0;

	if (d->state == JITDUMP_UNREAD)
		d->state = JITDUMP_READING;
	if (!d->header_read && d->state == JITDUMP_READING) {
		if (len < JITDUMP_HEADER_SIZE)
			return 0;
		if (!parse_header(d, f, buf, expect_pid))
			return 0;
		/* The header's own size may exceed the 40 bytes we know. */
		if (get_u32(buf + 8) > len)
			return 0;
		pos = get_u32(buf + 8);
		d->header_read = true;
	}
	while (d->state == JITDUMP_READING && len - pos >= JITDUMP_RECORD_PREFIX) {
		const uint8_t *r = buf + pos;
		uint32_t id = get_u32(r), size = get_u32(r + 4);
		uint64_t time = get_u64(r + 8);

		if (size < JITDUMP_RECORD_PREFIX || size > JIT_RECORD_MAX) {
			/* No length to trust: nothing after it can be found. */
			d->state = JITDUMP_BAD;
			jit_funcs__problem(f, JIT_PROBLEM_BAD_RECORD);
			break;
		}
		if (size > len - pos)
			break; /* the writer is still at it */
		switch (id) {
		case JIT_CODE_LOAD:
			err = on_load(d, f, r, size, time, read_ns);
			break;
		case JIT_CODE_MOVE:
			err = on_move(d, f, r, size, time, read_ns);
			break;
		case JIT_CODE_DEBUG_INFO:
			err = on_debug(d, f, r, size);
			break;
		case JIT_CODE_CLOSE:
			d->state = JITDUMP_CLOSED;
			break;
		case JIT_CODE_UNWINDING_INFO:
			break;
		default:
			jit_funcs__problem(f, JIT_PROBLEM_UNKNOWN_RECORD);
			break;
		}
		if (err)
			return err;
		d->records++;
		pos += size;
	}
	d->offset += pos;
	return (ssize_t)pos;
}

static int open_file(const struct jit_target *t, uint64_t start, uint64_t end, const char *path,
		     uint64_t *dev, uint64_t *ino)
{
	char mapped[96];
	int fd, err, root_fd;

	/* The very file the marker maps, wherever its root is (live only: an
	 * exited process's pid may be another's now). */
	snprintf(mapped, sizeof(mapped), "/proc/%d/map_files/%llx-%llx", (int)t->pid,
		 (unsigned long long)start, (unsigned long long)end);
	fd = t->own_root ? -1 : open(mapped, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		err = jit_file__check(fd, t, dev, ino);
		if (err) {
			close(fd);
			return err;
		}
		return fd;
	}
	root_fd = jit_target__root(t);
	if (root_fd < 0)
		return root_fd;
	fd = jit_file__open(root_fd, path, t, dev, ino);
	close(root_fd);
	return fd;
}

int jitdump__read(struct jitdump *d, struct jit_funcs *f, const struct jit_target *t,
		  uint64_t start, uint64_t end, const char *path, uint64_t read_ns, uint32_t *added)
{
	uint64_t dev = 0, ino = 0;
	uint8_t *buf = NULL;
	size_t want, have = 0;
	struct stat st;
	int fd = -1, err = 0, n;

	*added = 0;
	if (d->state != JITDUMP_UNREAD && d->state != JITDUMP_READING &&
	    d->state != JITDUMP_UNREADABLE)
		return 0; /* its verdict holds for the file's life */
	if (d->kept) {
		fd = d->fd;
		goto read;
	}
	fd = open_file(t, start, end, path, &dev, &ino);
	if (fd < 0) {
		d->state = fd == -ESTALE ? JITDUMP_STALE
			   : fd == -EPERM ? JITDUMP_NOT_OWNED
					  : JITDUMP_UNREADABLE;
		if (fd == -ESTALE || fd == -EPERM)
			jit_funcs__problem(f, fd == -ESTALE ? JIT_PROBLEM_STALE
							    : JIT_PROBLEM_NOT_OWNED);
		return 0;
	}
	if (d->header_read && (d->dev != dev || d->ino != ino)) {
		/* Another file under the marker: a new log from its header. */
		free(d->debug);
		jitdump__init(d);
	}
	d->dev = dev;
	d->ino = ino;
	d->fd = fd;
	d->kept = true;
read:
	if (fstat(fd, &st) || (uint64_t)st.st_size <= d->offset)
		goto cleanup;
	want = (uint64_t)st.st_size - d->offset;
	if (want > JIT_READ_MAX)
		want = JIT_READ_MAX;
	buf = malloc(want);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	while (have < want) {
		ssize_t got = pread(fd, buf + have, want - have, (off_t)(d->offset + have));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
	}
	if (d->state == JITDUMP_UNREADABLE)
		d->state = JITDUMP_READING;
	n = (int)jitdump__parse(d, f, buf, have, (uint32_t)t->ns_pid, read_ns);
	if (n < 0) {
		err = n;
		goto cleanup;
	}
	n = jit_funcs__commit(f);
	if (n < 0) {
		err = n;
		goto cleanup;
	}
	*added = (uint32_t)n;
cleanup:
	free(buf); /* fd stays open in d (jitdump__release closes it) */
	return err;
}

int jitdump__history(const struct jitdump *d, struct jit_funcs *h, uint32_t expect_pid,
		     uint64_t read_ns)
{
	struct jitdump r;
	uint8_t *buf = NULL;
	uint64_t total = 0;
	struct stat st;
	int err = 0;

	if (!d->kept || fstat(d->fd, &st))
		return 0;
	jitdump__init(&r);
	buf = malloc(JIT_READ_MAX);
	if (!buf)
		return -ENOMEM;
	while (r.state == JITDUMP_READING || r.state == JITDUMP_UNREAD) {
		size_t want = JIT_READ_MAX, have = 0;
		ssize_t used;

		if ((uint64_t)st.st_size <= r.offset || total >= JIT_HISTORY_READ_MAX)
			break;
		if (want > (uint64_t)st.st_size - r.offset)
			want = (size_t)((uint64_t)st.st_size - r.offset);
		while (have < want) {
			ssize_t got = pread(d->fd, buf + have, want - have, (off_t)(r.offset + have));

			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				break;
			have += (size_t)got;
		}
		used = jitdump__parse(&r, h, buf, have, expect_pid, read_ns);
		if (used < 0) {
			err = (int)used;
			goto cleanup;
		}
		if (!used)
			break; /* a partial record at the end, or a bad header */
		total += (uint64_t)used;
	}
	err = (int)h->nstaged; /* h was empty */
cleanup:
	free(buf);
	free(r.debug);
	return err;
}

static int by_start_cmp(const void *a, const void *b)
{
	const struct jit_fn *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int jit_history__init(struct jit_history *x, const struct jit_funcs *h)
{
	memset(x, 0, sizeof(*x));
	x->h = h;
	if (!h->nstaged)
		return 0;
	x->by_start = malloc((size_t)h->nstaged * sizeof(*x->by_start));
	if (!x->by_start)
		return -ENOMEM;
	memcpy(x->by_start, h->staged, (size_t)h->nstaged * sizeof(*x->by_start));
	x->n = h->nstaged;
	qsort(x->by_start, x->n, sizeof(*x->by_start), by_start_cmp);
	for (uint32_t i = 0; i < x->n; i++)
		if (x->by_start[i].end - x->by_start[i].start > x->max_size)
			x->max_size = x->by_start[i].end - x->by_start[i].start;
	return 0;
}

void jit_history__release(struct jit_history *x)
{
	free(x->by_start);
	memset(x, 0, sizeof(*x));
}

/* Is load a made later than load b (time, then file order)? */
static bool later(const struct jit_fn *a, const struct jit_fn *b)
{
	if (a->since_ns != b->since_ns)
		return a->since_ns > b->since_ns;
	return a->seq > b->seq;
}

const struct jit_fn *jit_history__find(struct jit_history *x, uint64_t addr, uint64_t first_ns,
				       uint64_t last_ns)
{
	const struct jit_fn *best = NULL;
	uint32_t lo = 0, hi = x->n, seen = 0;

	/* Loads starting at or before addr: those in reach of max_size. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (x->by_start[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (int pass = 0; pass < 2 && (!pass || best); pass++)
		for (uint32_t i = lo; i > 0; i--) {
			const struct jit_fn *fn = &x->by_start[i - 1];

			if (addr - fn->start >= x->max_size)
				break;
			if (++seen > 2 * JIT_HISTORY_SCAN_MAX) {
				x->cut++;
				return NULL;
			}
			if (addr >= fn->end)
				continue;
			if (!pass) {
				/* The latest made at or before first_ns. */
				if (fn->since_ns <= first_ns && (!best || later(fn, best)))
					best = fn;
			} else if (fn != best && later(fn, best) && fn->since_ns <= last_ns) {
				return NULL; /* another load named it before last_ns */
			}
		}
	return best;
}
