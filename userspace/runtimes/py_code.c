// SPDX-License-Identifier: MIT
/*
 * Code objects named from the live process (py_code.h).  Strings: compact
 * PyUnicodeObject (Include/cpython/unicodeobject.h): state bits 2-4 kind,
 * bit 5 compact, bit 6 ascii; compact ASCII data follows PyASCIIObject,
 * other compact data follows PyCompactUnicodeObject.  Bytes: ob_size and
 * ob_sval of PyBytesObject.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "py_code.h"
#include "py_procs.h"

struct py_code_entry {
	uint64_t code;
	uint32_t fp;
	int32_t pid;
	bool ok;
	struct py_code c;
};

struct py_namer {
	struct py_code_entry *e;
	uint32_t n, cap;
	uint32_t *slots; /* open addressing: entry index + 1, 0 empty */
	uint32_t nslots;
};

struct py_namer *py_namer__new(void)
{
	return calloc(1, sizeof(struct py_namer));
}

void py_namer__free(struct py_namer *n)
{
	if (!n)
		return;
	for (uint32_t i = 0; i < n->n; i++) {
		free(n->e[i].c.qualname);
		free(n->e[i].c.filename);
		free(n->e[i].c.linetable);
	}
	free(n->e);
	free(n->slots);
	free(n);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t key_hash(pid_t pid, uint64_t code, uint32_t fp)
{
	return mix(code ^ mix(((uint64_t)(uint32_t)pid << 32) | fp));
}

static int namer__grow(struct py_namer *n)
{
	uint32_t ns = n->nslots ? 2 * n->nslots : 1024;
	uint32_t *s = calloc(ns, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < n->n; i++) {
		uint64_t h = key_hash(n->e[i].pid, n->e[i].code, n->e[i].fp);

		for (uint32_t j = h & (ns - 1);; j = (j + 1) & (ns - 1)) {
			if (!s[j]) {
				s[j] = i + 1;
				break;
			}
		}
	}
	free(n->slots);
	n->slots = s;
	n->nslots = ns;
	return 0;
}

static void py_namer_entries__free(struct py_code_entry *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		free(e[i].c.qualname);
		free(e[i].c.filename);
		free(e[i].c.linetable);
	}
}

void py_namer__retain(struct py_namer *n, bool (*keep)(void *ctx, pid_t pid), void *ctx)
{
	uint32_t out = 0;

	if (!n)
		return;
	for (uint32_t i = 0; i < n->n; i++) {
		if (keep(ctx, n->e[i].pid)) {
			n->e[out++] = n->e[i];
			continue;
		}
		free(n->e[i].c.qualname);
		free(n->e[i].c.filename);
		free(n->e[i].c.linetable);
	}
	if (out == n->n)
		return;
	n->n = out;
	/* rehash what is left into a table sized for it (never fails: emptied) */
	free(n->slots);
	n->slots = NULL;
	n->nslots = 0;
	if (!n->n)
		return;
	n->nslots = 512; /* namer__grow doubles it: at most half full */
	while (n->nslots < 2 * n->n)
		n->nslots *= 2;
	n->nslots /= 2;
	if (namer__grow(n)) {
		/* out of memory: forget everything rather than lose the index */
		py_namer_entries__free(n->e, n->n);
		n->n = 0;
		n->nslots = 0;
	}
}

/* Append UTF-8 of code point cp to out (room checked by the caller: 4 bytes). */
static size_t utf8_put(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | (cp >> 12));
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp > 0x10ffff)
		cp = 0xfffd;
	out[0] = (char)(0xf0 | (cp >> 18));
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A str object as a malloc'd UTF-8 string, or NULL. */
static char *read_str(pid_t pid, const struct py_layout *l, uint64_t obj)
{
	uint8_t hdr[128];
	uint32_t state, kind;
	uint64_t length;
	uint8_t *raw = NULL;
	char *out = NULL;
	size_t o = 0;

	if (l->ascii_size > sizeof(hdr) || py_mem__read(pid, obj, hdr, l->ascii_size))
		return NULL;
	memcpy(&state, hdr + l->unicode_state, 4);
	memcpy(&length, hdr + l->unicode_length, 8);
	kind = (state >> 2) & 7;
	if (!(state & (1u << 5)) || length > PY_STRING_MAX || (kind != 1 && kind != 2 && kind != 4))
		return NULL; /* not compact, or implausible */
	if (state & (1u << 6))
		kind = 0; /* ASCII */
	raw = malloc(length * (kind ? kind : 1) + 1);
	out = malloc(length * 4 + 1);
	if (!raw || !out)
		goto fail;
	if (length && py_mem__read(pid, obj + (kind ? l->compact_size : l->ascii_size), raw,
				   length * (kind ? kind : 1)))
		goto fail;
	for (uint64_t i = 0; i < length; i++) {
		uint32_t cp;

		if (kind == 0 || kind == 1) {
			cp = raw[i];
			if (kind == 0 && cp >= 0x80)
				goto fail;
		} else if (kind == 2) {
			uint16_t v;

			memcpy(&v, raw + 2 * i, 2);
			cp = v;
		} else {
			memcpy(&cp, raw + 4 * i, 4);
		}
		if (!cp)
			cp = 0xfffd; /* keep strings NUL-free */
		o += utf8_put(out + o, cp);
	}
	out[o] = '\0';
	free(raw);
	return out;
fail:
	free(raw);
	free(out);
	return NULL;
}

static uint8_t *read_bytes(pid_t pid, const struct py_layout *l, uint64_t obj, uint32_t *len)
{
	uint64_t size;
	uint8_t *b;

	if (py_mem__read(pid, obj + l->bytes_size, &size, sizeof(size)) || size > PY_LINETABLE_MAX)
		return NULL;
	b = malloc(size ? size : 1);
	if (!b)
		return NULL;
	if (size && py_mem__read(pid, obj + l->bytes_sval, b, size)) {
		free(b);
		return NULL;
	}
	*len = (uint32_t)size;
	return b;
}

static bool code__read(pid_t pid, const struct py_layout *l, uint64_t code, uint32_t fp,
		       struct py_code *c)
{
	uint8_t buf[512];
	uint64_t name, name_hash, qualname, filename, linetable;
	int32_t firstlineno;

	if (l->code_size > sizeof(buf) || py_mem__read(pid, code, buf, l->code_size))
		return false;
	memcpy(&firstlineno, buf + l->bpf.code_firstlineno, 4);
	memcpy(&name, buf + l->bpf.code_name, 8);
	if (py_mem__read(pid, name + MS_PY_UNICODE_HASH_OFF, &name_hash, sizeof(name_hash)) ||
	    ms_py__fingerprint(firstlineno, name, name_hash) != fp)
		return false; /* freed and reused since the sample */
	qualname = name;
	if (l->code_qualname != MS_PY_NO_FIELD)
		memcpy(&qualname, buf + l->code_qualname, 8);
	memcpy(&filename, buf + l->code_filename, 8);
	memcpy(&linetable, buf + l->code_linetable, 8);
	c->qualname = read_str(pid, l, qualname);
	c->filename = read_str(pid, l, filename);
	c->linetable = read_bytes(pid, l, linetable, &c->nlinetable);
	c->firstlineno = firstlineno;
	c->lines = l->lines;
	if (!c->qualname || !c->filename) {
		free(c->qualname);
		free(c->filename);
		free(c->linetable);
		memset(c, 0, sizeof(*c));
		return false;
	}
	return true;
}

const struct py_code *py_namer__code(struct py_namer *n, pid_t pid, const struct py_layout *l,
				     uint64_t code, uint32_t fp)
{
	uint64_t h = key_hash(pid, code, fp);
	struct py_code_entry *e;
	uint32_t j;

	if (n->nslots) {
		for (j = h & (n->nslots - 1); n->slots[j]; j = (j + 1) & (n->nslots - 1)) {
			e = &n->e[n->slots[j] - 1];
			if (e->code == code && e->fp == fp && e->pid == pid)
				return e->ok ? &e->c : NULL;
		}
	}
	if ((n->n + 1) * 2 > n->nslots && namer__grow(n))
		return NULL;
	if (n->n == n->cap) {
		uint32_t cap = n->cap ? 2 * n->cap : 256;
		struct py_code_entry *ne = realloc(n->e, cap * sizeof(*ne));

		if (!ne)
			return NULL;
		n->e = ne;
		n->cap = cap;
	}
	e = &n->e[n->n];
	memset(e, 0, sizeof(*e));
	e->code = code;
	e->fp = fp;
	e->pid = pid;
	e->ok = code__read(pid, l, code, fp, &e->c);
	for (j = h & (n->nslots - 1); n->slots[j]; j = (j + 1) & (n->nslots - 1))
		;
	n->slots[j] = ++n->n;
	return e->ok ? &e->c : NULL;
}

/* Objects/locations.md: 6-bit chunks, bit 6 continues. */
static bool loc__varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0, shift = 0;

	while (*i < len && shift < 32) {
		uint8_t b = t[(*i)++];

		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static bool loc__svarint(const uint8_t *t, size_t len, size_t *i, int32_t *out)
{
	uint32_t v;

	if (!loc__varint(t, len, i, &v))
		return false;
	*out = (v & 1) ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
	return true;
}

int py_lines__lookup(const uint8_t *t, size_t len, uint8_t lines, int32_t firstlineno,
		     uint32_t instr)
{
	int64_t line = firstlineno, addr = 0;
	size_t i = 0;

	if (instr == UINT32_MAX)
		return firstlineno;
	if (lines == PY_LINES_LNOTAB310) {
		while (i + 1 < len) {
			uint8_t sdelta = t[i];
			int8_t ldelta = (int8_t)t[i + 1];
			bool none = ldelta == -128;

			i += 2;
			if (!none)
				line += ldelta;
			if ((uint64_t)addr <= instr && instr < (uint64_t)(addr + sdelta))
				return none ? -1 : (int)line;
			addr += sdelta;
		}
		return -1;
	}
	if (lines != PY_LINES_LOCATIONS)
		return -1;
	while (i < len) {
		uint8_t first = t[i++];
		uint32_t code, units, skip;
		int32_t delta = 0;
		bool none = false;

		if (!(first & 0x80))
			return -1; /* entries start with bit 7 set */
		code = (first >> 3) & 15;
		units = (first & 7) + 1;
		switch (code) {
		case 15: /* no location */
			none = true;
			break;
		case 14: /* long form: line delta, end line delta, column, end column */
			if (!loc__svarint(t, len, &i, &delta) || !loc__varint(t, len, &i, &skip) ||
			    !loc__varint(t, len, &i, &skip) || !loc__varint(t, len, &i, &skip))
				return -1;
			break;
		case 13: /* no column */
			if (!loc__svarint(t, len, &i, &delta))
				return -1;
			break;
		case 10:
		case 11:
		case 12: /* one-line form: delta code - 10, two column bytes */
			delta = (int32_t)code - 10;
			if (i + 2 > len)
				return -1;
			i += 2;
			break;
		default: /* short form 0-9: same line, one column byte */
			if (i + 1 > len)
				return -1;
			i += 1;
			break;
		}
		line += delta;
		if ((uint64_t)addr <= instr && instr < (uint64_t)(addr + 2 * units))
			return none ? -1 : (int)line;
		addr += 2 * units;
	}
	return -1;
}
