// SPDX-License-Identifier: MIT
/*
 * Kernel symbols from /proc/kallsyms and the kernel build ID from
 * /sys/kernel/notes.
 *
 * kallsyms lines are "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]"
 * (kernel/kallsyms.c, s_show()).  Text symbols are types t/T (local/global)
 * and w/W (weak); kallsyms gives no sizes, so each symbol covers up to the
 * next one of the same owner (core kernel, or one module), see
 * sym_builder__finish().  Without CAP_SYSLOG, or with kernel.kptr_restrict
 * set, every address reads as zero: that is recorded as the module's error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

/* FNV-1a of a module name, never 0 (0 is the core kernel). */
static uint32_t owner_tag(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h ? h : 1;
}

/*
 * One kallsyms text symbol while loading, and the table entry it becomes:
 * 16 bytes either way, so the table is written over the loaded array in
 * place.  kallsyms gives no sizes and no section ends, so of the table's
 * rules (sym_builder__finish) only one entry per address (the best name),
 * the end at the next entry of the same owner or SYM_UNSIZED_TAIL, and the
 * parent links apply.  Loading 121k symbols (a 6 MiB table) through the
 * generic builder's 40-byte candidates, sort keys and copies peaked at
 * 22.9 MiB of RSS, this at 8.0 (docs/recorder-memory.md).
 */
union ksym {
	struct {
		uint64_t start;
		uint32_t name_rank; /* name offset << KSYM_RANK_BITS | enum sym_rank */
		uint32_t owner;	    /* 0 core kernel, else owner_tag of its module */
	} in;
	struct sym_entry out;
};
_Static_assert(sizeof(union ksym) == 16 && sizeof(struct sym_entry) == 16,
	       "a table entry is written over its loaded symbol");
#define KSYM_RANK_BITS 3
#define KSYM_NAMES_MAX (UINT32_MAX >> KSYM_RANK_BITS)
_Static_assert((SYM_RANK_GLOBAL | SYM_RANK_TYPED) < (1u << KSYM_RANK_BITS), "ranks fit");

struct ksym_load {
	union ksym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

static int ksym_load__add(struct ksym_load *l, uint64_t addr, const char *name, size_t len,
			  uint32_t rank, uint32_t owner)
{
	void *p;

	if (l->n >= SYM_MAX_SYMBOLS || len >= KSYM_NAMES_MAX - l->names_len)
		return -E2BIG;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16384;

		p = realloc(l->v, cap * sizeof(*l->v));
		if (!p)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	if (l->names_cap - l->names_len < len + 1) {
		size_t cap = l->names_cap ? l->names_cap : 262144;

		while (cap - l->names_len < len + 1)
			cap *= 2;
		p = realloc(l->names, cap);
		if (!p)
			return -ENOMEM;
		l->names = p;
		l->names_cap = cap;
	}
	l->v[l->n].in.start = addr;
	l->v[l->n].in.name_rank = (uint32_t)l->names_len << KSYM_RANK_BITS | rank;
	l->v[l->n].in.owner = owner;
	l->n++;
	memcpy(l->names + l->names_len, name, len);
	l->names[l->names_len + len] = '\0';
	l->names_len += len + 1;
	return 0;
}

/* By address, then the best name first (higher rank, then sym_name_cmp). */
static int ksym_cmp(const void *pa, const void *pb, void *arg)
{
	const union ksym *a = pa, *b = pb;
	const char *names = arg;
	uint32_t ra = a->in.name_rank & ((1u << KSYM_RANK_BITS) - 1);
	uint32_t rb = b->in.name_rank & ((1u << KSYM_RANK_BITS) - 1);

	if (a->in.start != b->in.start)
		return a->in.start < b->in.start ? -1 : 1;
	if (ra != rb)
		return ra > rb ? -1 : 1;
	return sym_name_cmp(names + (a->in.name_rank >> KSYM_RANK_BITS),
			    names + (b->in.name_rank >> KSYM_RANK_BITS));
}

/* Sorts l, keeps one symbol per address and turns them into m's table in
 * place (the names arena moves to m whole: the few names of dropped
 * duplicates stay in it).  Returns 0 or -ENOMEM. */
static int ksym_load__finish(struct ksym_load *l, struct sym_module *m)
{
	uint64_t *starts = NULL;
	void *p;
	size_t i, k = 0;

	qsort_r(l->v, l->n, sizeof(*l->v), ksym_cmp, l->names);
	for (i = 0; i < l->n; i++) /* one per address: the first, the best */
		if (!k || l->v[i].in.start != l->v[k - 1].in.start)
			l->v[k++] = l->v[i];
	starts = malloc(k * sizeof(*starts));
	if (!starts)
		return -ENOMEM;
	for (i = 0; i < k; i++) {
		uint64_t start = l->v[i].in.start, end;
		uint32_t name = l->v[i].in.name_rank >> KSYM_RANK_BITS, owner = l->v[i].in.owner;
		struct sym_entry *e = &l->v[i].out;

		/* l->v[i + 1] is still a loaded symbol, l->v[< i] entries. */
		end = start > UINT64_MAX - SYM_UNSIZED_TAIL ? UINT64_MAX : start + SYM_UNSIZED_TAIL;
		if (i + 1 < k && (l->v[i + 1].in.owner == owner || l->v[i + 1].in.start < end))
			end = l->v[i + 1].in.start;
		starts[i] = start;
		e->end = end;
		e->name = name;
		/* the enclosing chain, as sym_builder__finish's rule 4 */
		e->parent = i ? (uint32_t)(i - 1) : SYM_NO_PARENT;
		while (e->parent != SYM_NO_PARENT && l->v[e->parent].out.end <= start)
			e->parent = l->v[e->parent].out.parent;
	}
	p = realloc(l->v, k * sizeof(*l->v));
	m->syms = p ? p : (void *)l->v;
	m->starts = starts;
	m->nr_syms = k;
	p = realloc(l->names, l->names_len);
	m->names = p ? p : l->names;
	m->names_len = l->names_len;
	memset(l, 0, sizeof(*l));
	return 0;
}

/* The read size: /proc/kallsyms is 4-5 MB; stdio's 4 KiB reads made over a
 * thousand read calls and getline copied every line once more. */
#define KALLSYMS_CHUNK (1u << 20)

struct kallsyms_parse {
	struct ksym_load l;
	uint64_t stext;
	size_t text;
	bool nonzero;
	struct kallsyms_info *info; /* NULL: a plain load */
	int run;		    /* info->owners index of the last [owner] line */
	uint64_t probe_best;	    /* highest text address <= info->probe so far */
	bool probe_seen;
};

/* The index in k->info->owners of the owner named [mod, mod + len), added if
 * new; -1 when it cannot be kept (too long a name, too many owners, no
 * memory): its symbols then belong to no known owner. */
static int kallsyms__owner(struct kallsyms_parse *k, const char *mod, size_t len)
{
	struct kallsyms_info *in = k->info;
	struct kallsyms_owner *o;
	size_t i;

	if (k->run >= 0 && strlen(in->owners[k->run].name) == len &&
	    !memcmp(in->owners[k->run].name, mod, len))
		return k->run;
	if (len >= KALLSYMS_OWNER_NAME)
		return -1;
	for (i = 0; i < in->nr_owners; i++)
		if (strlen(in->owners[i].name) == len && !memcmp(in->owners[i].name, mod, len))
			return k->run = (int)i;
	if (in->nr_owners >= KALLSYMS_OWNERS_MAX)
		return -1;
	if (in->nr_owners == in->cap_owners) {
		size_t cap = in->cap_owners ? 2 * in->cap_owners : 64;

		o = realloc(in->owners, cap * sizeof(*o));
		if (!o)
			return -1;
		in->owners = o;
		in->cap_owners = cap;
	}
	o = &in->owners[in->nr_owners];
	memset(o, 0, sizeof(*o));
	memcpy(o->name, mod, len);
	return k->run = (int)in->nr_owners++;
}

/* The core kernel's section bounds among the names (kallsyms_info). */
static void kallsyms__marker(struct kallsyms_info *in, const char *name, size_t len, uint64_t addr)
{
	if (len == 5 && !memcmp(name, "_text", 5))
		in->text = addr;
	else if (len == 6 && !memcmp(name, "_etext", 6))
		in->etext = addr;
	else if (len == 10 && !memcmp(name, "_sinittext", 10))
		in->sinittext = addr;
	else if (len == 10 && !memcmp(name, "_einittext", 10))
		in->einittext = addr;
}

/* One line [p, end) without its newline.  Returns 0, -E2BIG or -ENOMEM. */
static int kallsyms__line(struct kallsyms_parse *k, const char *p, const char *end)
{
	const char *name, *name_end;
	uint32_t rank, owner = 0;
	uint64_t addr = 0;
	int digits = 0, idx = -1;
	char type;

	while (p < end && digits < 16) {
		char c = *p;
		int v;

		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = c - 'A' + 10;
		else
			break;
		addr = addr << 4 | (uint64_t)v;
		digits++;
		p++;
	}
	if (!digits || end - p < 3 || p[0] != ' ' || p[2] != ' ')
		return 0; /* malformed line */
	type = p[1];
	name = p + 3;
	name_end = name;
	while (name_end < end && *name_end != '\t' && *name_end != ' ')
		name_end++;
	if (name_end == name)
		return 0;
	if (name_end - name == 6 && !memcmp(name, "_stext", 6))
		k->stext = addr;
	if (k->info && *name == '_')
		kallsyms__marker(k->info, name, (size_t)(name_end - name), addr);

	switch (type) {
	case 'T':
		rank = SYM_RANK_GLOBAL | SYM_RANK_TYPED;
		break;
	case 'W':
	case 'w':
		rank = SYM_RANK_WEAK | SYM_RANK_TYPED;
		break;
	case 't':
		rank = SYM_RANK_LOCAL | SYM_RANK_TYPED;
		break;
	default:
		return 0;
	}
	if (name_end < end && *name_end == '\t' && name_end + 1 < end && name_end[1] == '[') {
		const char *mod = name_end + 2, *mod_end = mod;

		while (mod_end < end && *mod_end != ']')
			mod_end++;
		owner = owner_tag(mod, (size_t)(mod_end - mod));
		if (k->info)
			idx = kallsyms__owner(k, mod, (size_t)(mod_end - mod));
	}
	if (k->info && idx >= 0 && (type == 't' || type == 'T')) {
		struct kallsyms_owner *o = &k->info->owners[idx];

		if (!o->text || addr < o->first)
			o->first = addr;
		if (!o->text || addr > o->last)
			o->last = addr;
		o->text = true;
	}
	if (k->info && addr <= k->info->probe && (!k->probe_seen || addr >= k->probe_best)) {
		k->probe_best = addr;
		k->probe_seen = true;
		k->info->probe_owner = owner ? idx : KALLSYMS_PROBE_CORE;
	}
	k->text++;
	k->nonzero |= addr != 0;
	return ksym_load__add(&k->l, addr, name, (size_t)(name_end - name), rank, owner);
}

int kallsyms__load(struct sym_module *m, const char *path, uint64_t *stext)
{
	return kallsyms__load_info(m, path, stext, NULL);
}

void kallsyms_info__release(struct kallsyms_info *info)
{
	free(info->owners);
	info->owners = NULL;
	info->nr_owners = info->cap_owners = 0;
}

int kallsyms__load_info(struct sym_module *m, const char *path, uint64_t *stext,
			struct kallsyms_info *info)
{
	struct kallsyms_parse k = {.info = info, .run = -1};
	size_t have = 0;
	char *buf = NULL;
	int fd, err = 0;

	*stext = 0;
	if (info)
		info->probe_owner = KALLSYMS_PROBE_NONE;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		sym_module__fail(m, SYM_ERR_KALLSYMS, "%s: %s", path, strerror(errno));
		return 0;
	}
	buf = malloc(KALLSYMS_CHUNK);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		ssize_t got = read(fd, buf + have, KALLSYMS_CHUNK - have);
		char *p = buf, *end, *nl;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			sym_module__fail(m, SYM_ERR_KALLSYMS, "%s: read error", path);
			goto cleanup;
		}
		end = buf + have + got;
		/* At the end of the file a last line without a newline counts too. */
		while (p < end && ((nl = memchr(p, '\n', (size_t)(end - p))) || !got)) {
			if (!nl)
				nl = end;
			err = kallsyms__line(&k, p, nl);
			if (err == -E2BIG) {
				sym_module__fail(m, SYM_ERR_KALLSYMS, "%s: too many symbols", path);
				err = 0;
				goto cleanup;
			}
			if (err)
				goto cleanup;
			p = nl + (nl < end);
		}
		if (!got)
			break;
		have = (size_t)(end - p);
		if (have == KALLSYMS_CHUNK) { /* a 1 MiB line: not kallsyms */
			sym_module__fail(m, SYM_ERR_KALLSYMS, "%s: line too long", path);
			goto cleanup;
		}
		memmove(buf, p, have);
	}
	if (!k.text) {
		sym_module__fail(m, SYM_ERR_KALLSYMS, "%s: no text symbols", path);
		goto cleanup;
	}
	if (!k.nonzero) {
		sym_module__fail(m, SYM_ERR_KPTR_RESTRICT, NULL);
		goto cleanup;
	}
	err = ksym_load__finish(&k.l, m);
cleanup:
	if (k.nonzero) /* kptr_restrict reads every address, _stext too, as 0 */
		*stext = k.stext;
	if (err)
		sym_module__fail(m, SYM_ERR_NOMEM, NULL);
	free(k.l.v);
	free(k.l.names);
	free(buf);
	close(fd);
	return err;
}

ssize_t kernel_notes__build_id(const char *path, uint8_t *out)
{
	uint8_t buf[65536];
	size_t n = 0, off = 0;
	ssize_t found = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf), f);
	if (ferror(f))
		found = -EIO;
	fclose(f);
	if (found)
		return found;

	/* Elf64_Nhdr and Elf32_Nhdr are both three 32-bit words; name and
	 * descriptor are each padded to 4 bytes (kernel: include/linux/elfnote.h). */
	while (n - off >= 12) {
		uint32_t namesz, descsz, type;
		size_t name_pad, desc_pad;

		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		name_pad = ((size_t)namesz + 3) & ~(size_t)3;
		desc_pad = ((size_t)descsz + 3) & ~(size_t)3;
		if (name_pad > n - off || desc_pad > n - off - name_pad)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + off, "GNU", 4) &&
		    descsz > 0 && descsz <= SYM_BUILD_ID_MAX) {
			memcpy(out, buf + off + name_pad, descsz);
			found = descsz;
			break;
		}
		off += name_pad + desc_pad;
	}
	return found;
}
