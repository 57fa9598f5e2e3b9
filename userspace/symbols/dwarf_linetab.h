/* SPDX-License-Identifier: MIT */
/*
 * A compilation unit's line table compiled once into a compact table of our
 * own, so that libdw's decoded lines (about 50 bytes a row, kept until
 * dwarf_end) can be released: the open DWARF of a busy system-wide
 * recording held 51 MiB of them (docs/recorder-memory.md).
 *
 * The table answers what dwarf_getsrc_die + dwarf_lineno + dwarf_linesrc
 * answer for an address (the reference tests/unit/test_dwarf_linetab.c
 * compares with, address by address): the row with the largest address not
 * above it, unless that row ends a sequence; its line when positive, with
 * its file name.  It keeps only the addresses where that answer changes,
 * sorted, in blocks of DW_LT_BLOCK rows: the first row's address and byte
 * offset, then per row varints of the address delta, the file's index and
 * the zigzag line delta (libpython3.11: 0.8 MB for libdw's 620,836 rows).
 *
 * Names (file names here, function and call-file names of the scope tables)
 * are interned in a struct dw_names, which owns them: their pointers stay
 * valid until dw_names__free, whatever happens to the Dwarf they came from.
 */
#ifndef MS_DWARF_LINETAB_H
#define MS_DWARF_LINETAB_H

#include <elfutils/libdw.h>
#include <stddef.h>
#include <stdint.h>

/* Rows per block: a lookup decodes at most this many. */
#define DW_LT_BLOCK 32u
/* Rows of one unit's table at most (a larger one is treated as damaged). */
#define DW_LT_MAX_ROWS (1u << 26)

struct dw_names;

/* A new empty set, or NULL (out of memory). */
struct dw_names *dw_names__new(void);
/* Frees the set and every string it handed out.  Accepts NULL. */
void dw_names__free(struct dw_names *n);
/* *out = the set's copy of s (NULL for NULL): one copy per distinct
 * string, never moved.  Returns 0 or -ENOMEM. */
int dw_names__intern(struct dw_names *n, const char *s, const char **out);
/* Heap bytes the set holds. */
size_t dw_names__bytes(const struct dw_names *n);

struct dw_lt_block {
	uint64_t addr; /* the block's first row */
	uint32_t off;  /* its first row's bytes in dw_linetab.bytes */
	uint32_t rows; /* rows in the block, 1..DW_LT_BLOCK */
};

struct dw_linetab {
	struct dw_lt_block *blocks; /* ascending addresses */
	uint32_t nblocks;
	uint32_t nfiles;
	uint32_t nbytes;
	uint8_t *bytes;	    /* per row: varint address delta (not for a block's first row),
			     * varint file index, zigzag varint line delta */
	const char **files; /* [0] = NULL (no line, or no file name); others interned */
};

/*
 * Compiles the line table of cu (a compile, partial or skeleton unit DIE)
 * into *out (the caller's: dw_linetab__free), names interned in names;
 * *nrows = libdw's rows (what it now holds decoded).  Returns 0, -ENOENT
 * (no usable line table: *out NULL), -E2BIG (over DW_LT_MAX_ROWS) or
 * -ENOMEM.
 */
int dw_linetab__build(Dwarf_Die *cu, struct dw_names *names, struct dw_linetab **out,
		      size_t *nrows);
/* Accepts NULL. */
void dw_linetab__free(struct dw_linetab *t);
/* The line of addr (0: none) and its file name (interned, or NULL); t may
 * be NULL. */
void dw_linetab__find(const struct dw_linetab *t, uint64_t addr, const char **file,
		      uint32_t *line);
/* Heap bytes the table holds. */
size_t dw_linetab__bytes(const struct dw_linetab *t);

#endif
