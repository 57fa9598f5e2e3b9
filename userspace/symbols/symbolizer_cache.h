/* SPDX-License-Identifier: MIT */
/*
 * Private to symbolizer.c and symbolizer_files.c: the symbolizer's state and
 * its module cache (keys and lookups: symbolizer.c), which the user-space
 * file lookups (symbolizer_files.c) fill.
 */
#ifndef MS_SYMBOLS_SYMBOLIZER_CACHE_H
#define MS_SYMBOLS_SYMBOLIZER_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "userspace/symbols/symbols_internal.h"

enum cache_kind {
	CACHE_BUILD_ID = 1,
	CACHE_FILE,
	CACHE_MISMATCH,
	CACHE_FAILED,
};

struct cache_key {
	enum cache_kind kind;
	const uint8_t *build_id; /* BUILD_ID, MISMATCH, FAILED */
	size_t build_id_len;
	const struct sym_file_key *file; /* FILE, MISMATCH */
	const char *tried;		 /* FAILED */
};

struct cache_slot {
	uint64_t hash;
	struct sym_module *m; /* NULL: empty */
	enum cache_kind kind;
};

struct symbolizer {
	struct sym_module *modules; /* every module, newest first; owned */
	struct cache_slot *slots;
	size_t nr_slots; /* power of two, or 0 */
	size_t nr_used;
	struct sym_module *vdso;
	struct sym_module *kernel;
	uint64_t kaslr_offset;
	char kernel_build_id[2 * SYM_BUILD_ID_MAX + 1];
	struct sym_config cfg;
	char why[1024];			/* symbolizer__by_build_id's last reason */
	size_t nr_pinned;		/* modules holding a pin_fd */
	struct sym_dwarf_lru dwarf_lru; /* open DWARF under a budget (dwarf_cache.c) */
	char *kcache_dir;		/* the kernel table's cache directory, or NULL: none */
	struct symbolizer_kcache_stats kcache;
};

/* The identity of the file st describes (CACHE_FILE's key). */
struct sym_file_key sym_file_key__of(const struct stat *st);
bool sym_build_id__equal(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);
/* The module cached under k, or NULL. */
struct sym_module *symbolizer__find(struct symbolizer *s, const struct cache_key *k);
/* Adds m under k.  On -ENOMEM m stays usable, just not found again. */
int symbolizer__insert(struct symbolizer *s, const struct cache_key *k, struct sym_module *m);
/* A new module on the symbolizer's list (freed with it). */
struct sym_module *symbolizer__add_module(struct symbolizer *s, const char *path);

#endif
