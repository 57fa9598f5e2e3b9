// SPDX-License-Identifier: MIT
/*
 * Typed META keys (meta.h): the table, checked emitters and the parser.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meta.h"

const struct ms_meta_key ms_meta_keys[MS_META__COUNT] = {
#define MS_META_ROW(id, k, t, u, m) [MS_META_##id] = { .key = k, .type = MS_META_T_##t, .unit = u, .meaning = m },
	MS_META_KEYS(MS_META_ROW)
#undef MS_META_ROW
};

static const char *const type_names[] = {
#define MS_META_TYPE_NAME(id, name) [MS_META_T_##id] = name,
	MS_META_TYPES(MS_META_TYPE_NAME)
#undef MS_META_TYPE_NAME
};

const char *ms_meta_type__name(enum ms_meta_type t)
{
	return (size_t)t < sizeof(type_names) / sizeof(type_names[0]) ? type_names[t] : "?";
}

enum ms_meta_id ms_meta__lookup(const char *key, size_t len)
{
	for (int i = 0; i < MS_META__COUNT; i++)
		if (strlen(ms_meta_keys[i].key) == len && !memcmp(ms_meta_keys[i].key, key, len))
			return (enum ms_meta_id)i;
	return MS_META_UNKNOWN;
}

/* Parse value as type t into u64/number; false if it is not one. */
static bool value__parse(enum ms_meta_type t, const char *v, uint64_t *u64, double *number)
{
	char *end;

	switch (t) {
	case MS_META_T_TEXT:
		return true;
	case MS_META_T_U64:
	case MS_META_T_HEX:
		if (t == MS_META_T_HEX ? strncmp(v, "0x", 2) : !isdigit((unsigned char)v[0]))
			return false;
		if (t == MS_META_T_HEX && !isxdigit((unsigned char)v[2]))
			return false;
		errno = 0;
		*u64 = strtoull(v, &end, t == MS_META_T_HEX ? 16 : 10);
		return !errno && !*end;
	case MS_META_T_BOOL:
		if (strcmp(v, "0") && strcmp(v, "1"))
			return false;
		*u64 = v[0] == '1';
		return true;
	case MS_META_T_NUMBER:
		if (!v[0] || isspace((unsigned char)v[0]))
			return false;
		errno = 0;
		*number = strtod(v, &end);
		return !errno && !*end;
	}
	return false;
}

bool ms_meta__valid(enum ms_meta_type t, const char *value)
{
	uint64_t u;
	double d;

	return value && value__parse(t, value, &u, &d);
}

int ms_meta__emit(stream_sink_fn sink, void *ctx, enum ms_meta_id id, const char *value)
{
	struct ms_chunk c = { .kind = MS_CHUNK_META };
	const char *key;
	size_t klen, vlen;
	char *buf;
	int err;

	if ((unsigned)id >= MS_META__COUNT || !ms_meta__valid(ms_meta_keys[id].type, value))
		return -EINVAL;
	key = ms_meta_keys[id].key;
	klen = strlen(key);
	vlen = strlen(value);
	if (klen + 1 + vlen > MS_CHUNK_MAX_PAYLOAD)
		return -E2BIG;
	buf = malloc(klen + 1 + vlen);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, key, klen);
	buf[klen] = '=';
	memcpy(buf + klen + 1, value, vlen);
	c.len = (uint32_t)(klen + 1 + vlen);
	err = sink(ctx, &c, buf);
	free(buf);
	return err;
}

int ms_meta__emit_u64(stream_sink_fn sink, void *ctx, enum ms_meta_id id, uint64_t v)
{
	char buf[32];

	if ((unsigned)id >= MS_META__COUNT)
		return -EINVAL;
	switch (ms_meta_keys[id].type) {
	case MS_META_T_U64:
		snprintf(buf, sizeof(buf), "%" PRIu64, v);
		break;
	case MS_META_T_HEX:
		snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
		break;
	case MS_META_T_BOOL:
		snprintf(buf, sizeof(buf), "%d", v != 0);
		break;
	default:
		return -EINVAL;
	}
	return ms_meta__emit(sink, ctx, id, buf);
}

int ms_meta__emit_number(stream_sink_fn sink, void *ctx, enum ms_meta_id id, double v)
{
	char buf[64];

	if ((unsigned)id >= MS_META__COUNT || ms_meta_keys[id].type != MS_META_T_NUMBER)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%g", v);
	return ms_meta__emit(sink, ctx, id, buf);
}

int ms_meta__parse(const void *payload, uint32_t len, struct ms_meta *out)
{
	const char *s = payload, *eq;
	size_t klen, vlen;

	memset(out, 0, sizeof(*out));
	out->id = MS_META_UNKNOWN;
	/* an empty chunk comes with payload NULL (stream__replay) */
	if (!len || !s || memchr(s, '\0', len))
		return -EBADMSG;
	eq = memchr(s, '=', len);
	if (!eq || eq == s || (size_t)(eq - s) >= sizeof(out->key))
		return -EBADMSG;
	klen = (size_t)(eq - s);
	vlen = len - klen - 1;
	memcpy(out->key, s, klen);
	out->key[klen] = '\0';
	out->value = malloc(vlen + 1);
	if (!out->value)
		return -ENOMEM;
	memcpy(out->value, eq + 1, vlen);
	out->value[vlen] = '\0';
	out->id = ms_meta__lookup(s, klen);
	if (out->id != MS_META_UNKNOWN &&
	    !value__parse(ms_meta_keys[out->id].type, out->value, &out->u64, &out->number)) {
		ms_meta__release(out);
		return -EBADMSG;
	}
	return 0;
}

void ms_meta__release(struct ms_meta *m)
{
	free(m->value);
	m->value = NULL;
}
