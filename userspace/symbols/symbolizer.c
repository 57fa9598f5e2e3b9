// SPDX-License-Identifier: MIT
/*
 * The symbolizer: a cache of modules, each loaded once when first seen.
 *
 * Cache keys (one open-addressing table; a slot's kind says which key):
 *   BUILD_ID  file's build ID          -> a module that loaded fine
 *   FILE      dev, inode, size, mtime  -> the module read from that file
 *   MISMATCH  file key + mapping's ID  -> a refused file (build ID mismatch)
 *   FAILED    path tried + mapping's ID-> a file that could not be opened
 * A module may sit under several keys; keys compare against the module's
 * own fields, so slots hold no copies.  A module lives until its owner
 * says nothing maps it any more (symbolizer__forget).
 *
 * User-space files are opened and proved in symbolizer_files.c.
 *
 * Not thread-safe: one symbolizer belongs to one thread (the processor).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "userspace/symbols/symbolizer_cache.h"
#include "userspace/symbols/symbols_internal.h"

/* x86-64 kernels are linked with _stext at __START_KERNEL_map +
 * CONFIG_PHYSICAL_START (arch/x86/include/asm/page_64_types.h) with the
 * default 16 MiB physical start; other configurations read as offset 0. */
#define X86_64_STEXT_LINK_ADDR 0xffffffff81000000ull

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t cache_key__hash(const struct cache_key *k)
{
	uint64_t h = fnv1a(0xcbf29ce484222325ull, &k->kind, sizeof(k->kind));

	if (k->kind != CACHE_FILE)
		h = fnv1a(h, k->build_id, k->build_id_len);
	if (k->kind == CACHE_FILE || k->kind == CACHE_MISMATCH)
		h = fnv1a(h, k->file, sizeof(*k->file)); /* five u64/i64: no padding */
	if (k->kind == CACHE_FAILED)
		h = fnv1a(h, k->tried, strlen(k->tried));
	return h;
}

/* The identity of the file st describes (CACHE_FILE's key). */
struct sym_file_key sym_file_key__of(const struct stat *st)
{
	return (struct sym_file_key){
		.dev = st->st_dev,
		.ino = st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_sec = st->st_mtim.tv_sec,
		.mtime_nsec = st->st_mtim.tv_nsec,
	};
}

static bool file_key__equal(const struct sym_file_key *a, const struct sym_file_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

bool sym_build_id__equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && (!alen || !memcmp(a, b, alen));
}

static bool cache_key__matches(const struct cache_key *k, const struct sym_module *m)
{
	switch (k->kind) {
	case CACHE_BUILD_ID:
		return sym_build_id__equal(m->build_id, m->build_id_len, k->build_id,
					   k->build_id_len);
	case CACHE_FILE:
		return m->has_file_key && file_key__equal(&m->file_key, k->file);
	case CACHE_MISMATCH:
		return m->has_file_key && file_key__equal(&m->file_key, k->file) &&
		       sym_build_id__equal(m->build_id, m->build_id_len, k->build_id,
					   k->build_id_len);
	case CACHE_FAILED:
		return m->tried && !strcmp(m->tried, k->tried) &&
		       sym_build_id__equal(m->build_id, m->build_id_len, k->build_id,
					   k->build_id_len);
	}
	return false;
}

struct sym_module *symbolizer__find(struct symbolizer *s, const struct cache_key *k)
{
	uint64_t h = cache_key__hash(k);
	size_t i, mask = s->nr_slots - 1;

	if (!s->nr_slots)
		return NULL;
	for (i = h & mask; s->slots[i].m; i = (i + 1) & mask) {
		const struct cache_slot *slot = &s->slots[i];

		if (slot->hash == h && slot->kind == k->kind && cache_key__matches(k, slot->m))
			return slot->m;
	}
	return NULL;
}

static void slots__put(struct cache_slot *slots, size_t nr_slots, const struct cache_slot *in)
{
	size_t i, mask = nr_slots - 1;

	for (i = in->hash & mask; slots[i].m; i = (i + 1) & mask)
		;
	slots[i] = *in;
}

/* Adds m under k.  On -ENOMEM m stays usable, just not found again. */
int symbolizer__insert(struct symbolizer *s, const struct cache_key *k, struct sym_module *m)
{
	struct cache_slot slot = {.hash = cache_key__hash(k), .m = m, .kind = k->kind};

	if (2 * (s->nr_used + 1) > s->nr_slots) {
		size_t n = s->nr_slots ? 2 * s->nr_slots : 64, i;
		struct cache_slot *slots = calloc(n, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (i = 0; i < s->nr_slots; i++)
			if (s->slots[i].m)
				slots__put(slots, n, &s->slots[i]);
		free(s->slots);
		s->slots = slots;
		s->nr_slots = n;
	}
	slots__put(s->slots, s->nr_slots, &slot);
	s->nr_used++;
	return 0;
}

/* A new module on the symbolizer's list (freed with it). */
struct sym_module *symbolizer__add_module(struct symbolizer *s, const char *path)
{
	struct sym_module *m = sym_module__new(path);

	if (!m)
		return NULL;
	m->cfg = &s->cfg;
	m->lru = &s->dwarf_lru;
	m->next = s->modules;
	s->modules = m;
	return m;
}

int symbolizer__forget(struct symbolizer *s, struct sym_module *m)
{
	struct cache_slot *slots = NULL;
	struct sym_module **link;
	size_t i;

	if (!m || m == s->vdso || m == s->kernel)
		return 0;
	for (link = &s->modules; *link && *link != m; link = &(*link)->next)
		;
	if (!*link)
		return -ENOENT;
	/* Every key naming m goes: the table is rebuilt without them. */
	if (s->nr_slots) {
		slots = calloc(s->nr_slots, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		for (i = 0; i < s->nr_slots; i++) {
			if (!s->slots[i].m)
				continue;
			if (s->slots[i].m == m)
				s->nr_used--;
			else
				slots__put(slots, s->nr_slots, &s->slots[i]);
		}
		free(s->slots);
		s->slots = slots;
	}
	*link = m->next;
	if (m->pin_fd >= 0 && s->nr_pinned)
		s->nr_pinned--;
	sym_module__free(m);
	return 0;
}

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *s;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		errno = ENOMEM;
	return s;
}

void symbolizer__free(struct symbolizer *s)
{
	struct sym_module *m, *next;

	if (!s)
		return;
	for (m = s->modules; m; m = next) {
		next = m->next;
		sym_module__free(m);
	}
	free(s->slots);
	sym_config__release(&s->cfg);
	free(s->kcache_dir);
	free(s);
}

int symbolizer__add_debug_dir(struct symbolizer *s, const char *dir)
{
	char **v = realloc(s->cfg.debug_dirs, (s->cfg.ndebug_dirs + 1) * sizeof(*v));
	char *copy;
	size_t len;

	if (!v)
		return -ENOMEM;
	s->cfg.debug_dirs = v;
	copy = strdup(dir);
	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	v[s->cfg.ndebug_dirs++] = copy;
	return 0;
}

int symbolizer__enable_debuginfod(struct symbolizer *s)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (!urls || !urls[strspn(urls, " ")] || !debug_file__debuginfod_usable())
		return -ENOTSUP;
	s->cfg.debuginfod = true;
	return 0;
}

struct sym_dwarf_lru *symbolizer__dwarf_lru(struct symbolizer *s) { return &s->dwarf_lru; }

void symbolizer__set_dwarf_budget(struct symbolizer *s, size_t bytes)
{
	s->dwarf_lru.budget = bytes;
	sym_dwarf_lru__trim(&s->dwarf_lru, NULL);
}

void symbolizer__dwarf_stats(const struct symbolizer *s, struct symbolizer_dwarf_stats *out)
{
	*out = (struct symbolizer_dwarf_stats){
	    .opened = s->dwarf_lru.opened,
	    .reopened = s->dwarf_lru.reopened,
	    .closed = s->dwarf_lru.closed,
	    .bytes = s->dwarf_lru.bytes,
	    .peak = s->dwarf_lru.peak,
	};
}

uint64_t symbolizer__debuginfod_fetched(const struct symbolizer *s)
{
	return s->cfg.debuginfod_fetched;
}

struct sym_module *symbolizer__vdso(struct symbolizer *s)
{
	struct sym_module *m;

	if (s->vdso)
		return s->vdso;
	m = symbolizer__add_module(s, "[vdso]");
	if (!m || vdso__load(m)) {
		errno = ENOMEM;
		return NULL;
	}
	s->vdso = m;
	return m;
}

int symbolizer__set_kallsyms_cache(struct symbolizer *s, const char *dir)
{
	char *copy = dir ? strdup(dir) : NULL;

	if (dir && !copy)
		return -ENOMEM;
	free(s->kcache_dir);
	s->kcache_dir = copy;
	return 0;
}

void symbolizer__kcache_stats(const struct symbolizer *s, struct symbolizer_kcache_stats *out)
{
	*out = s->kcache;
}

struct sym_module *symbolizer__kernel(struct symbolizer *s)
{
	struct sym_module *m;
	uint64_t stext = 0;
	ssize_t len;

	if (s->kernel)
		return s->kernel;
	m = symbolizer__add_module(s, "[kernel.kallsyms]");
	if (!m)
		return NULL;
	m->is_kernel = true;
	if (kallsyms__load_cached(m, &kallsyms_cache__proc, s->kcache_dir, &stext, &s->kcache)) {
		errno = ENOMEM;
		return NULL;
	}
	len = kernel_notes__build_id("/sys/kernel/notes", m->build_id);
	if (len > 0) {
		m->build_id_len = (size_t)len;
		sym_hex(m->build_id, m->build_id_len, s->kernel_build_id);
	}
#if defined(__x86_64__)
	if (stext >= X86_64_STEXT_LINK_ADDR)
		s->kaslr_offset = stext - X86_64_STEXT_LINK_ADDR;
#endif
	s->kernel = m;
	return m;
}

uint64_t symbolizer__kaslr_offset(struct symbolizer *s)
{
	symbolizer__kernel(s);
	return s->kaslr_offset;
}

const char *symbolizer__kernel_build_id(struct symbolizer *s)
{
	symbolizer__kernel(s);
	return s->kernel_build_id;
}
