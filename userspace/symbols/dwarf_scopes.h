/* SPDX-License-Identifier: MIT */
/*
 * A compilation unit's code scopes (subprograms, entry points, inlined
 * calls) compiled once into a flat table, so that finding the inline chain
 * of an address is a binary search and a walk up parent links instead of a
 * walk of the unit's DIE tree per address (dwarf_getscopes +
 * dwarf_getscopes_die, which this reproduces: see dwarf_scopes.c).
 */
#ifndef MS_DWARF_SCOPES_H
#define MS_DWARF_SCOPES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dw_scope_node {
	const char *function;  /* DWARF name (libdw's string: dwarf_lines.c interns it), or NULL */
	const char *call_file; /* inlined: DW_AT_call_file's name, or NULL */
	uint32_t call_line;    /* inlined: DW_AT_call_line, or 0 */
	int32_t parent;	       /* enclosing node, or -1 */
	bool inlined;	       /* DW_TAG_inlined_subroutine */
	bool hidden;	       /* not code (lexical block, ...): skipped in chains */
};

struct dw_scope_seg {
	uint64_t lo;  /* the segment runs to the next one's lo */
	int32_t node; /* innermost node, or -1 (no code scope) */
};

struct dw_scopes {
	struct dw_scope_node *nodes;
	uint32_t nnodes;
	struct dw_scope_seg *segs; /* sorted by lo */
	uint32_t nsegs;
};

/*
 * Compile the scopes under unit (a compile, partial or split unit DIE) into
 * *out (owned by the caller: dw_scopes__free).  Returns 0 or -ENOMEM;
 * damaged DWARF gives a partial table.
 */
int dw_scopes__build(Dwarf_Die *unit, struct dw_scopes **out);

/* Accepts NULL. */
void dw_scopes__free(struct dw_scopes *s);
/* Heap bytes the table holds (0 for NULL). */
size_t dw_scopes__bytes(const struct dw_scopes *s);

/* The innermost code scope containing addr, or -1.  s may be NULL. */
int32_t dw_scopes__innermost(const struct dw_scopes *s, uint64_t addr);

#endif
