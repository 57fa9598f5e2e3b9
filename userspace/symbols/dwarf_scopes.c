// SPDX-License-Identifier: MIT
/*
 * A compilation unit's code scopes compiled once into a flat table
 * (dwarf_scopes.h).  The walk visits the DIEs libdw's own scope search
 * (libdw_visit_scopes.c, may_have_scopes) visits: units, modules,
 * namespaces, class/structure/union types, lexical and try/catch blocks,
 * with statements, and the code DIEs (DW_TAG_subprogram, DW_TAG_entry_point,
 * DW_TAG_inlined_subroutine) that have addresses, following
 * DW_TAG_imported_unit into the partial unit it names (DWARF 5 section
 * 3.2.5, dwz output).  Each code DIE with addresses becomes a node whose
 * parent is the nearest enclosing node; their ranges (dwarf_ranges: low/high
 * pc or DW_AT_ranges) are swept into non-overlapping segments naming the
 * innermost node.  Scopes are properly nested in valid DWARF; a range
 * poking out of its enclosing one is clipped to it.
 *
 * All of it is untrusted: DIE visits, nesting depth and imports are bounded,
 * so damaged or cyclic DWARF gives a partial table, never a hang.
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/symbols/dwarf_scopes.h"

#define SC_MAX_VISITS (1u << 24) /* DIEs visited per unit at most */
#define SC_MAX_DEPTH 256	  /* DIE nesting followed at most */
#define SC_MAX_IMPORTS 4096	  /* imported units followed per unit at most */

struct sc_range {
	uint64_t lo, hi;
	int32_t node;
	uint32_t depth;
};

struct sc_build {
	struct dw_scopes *s;
	struct sc_range *r;	/* every node's ranges, clipped to its parent's */
	size_t nr, rcap;
	struct sc_range *tmp;	/* one DIE's raw ranges */
	size_t tcap;
	uint32_t *first, *count; /* per node: its slice of r (sorted by lo) */
	uint32_t ncap, visits, imports;
};

/* DWARF name of a subprogram or inlined call: linkage name first (as
 * eu-addr2line), following abstract_origin and specification. */
static const char *die_function_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
	return name;
}

static const char *call_file(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Die cu;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx))
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nfiles))
		return NULL;
	if (idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_partial_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
		return true;
	default:
		return false;
	}
}

static bool is_code(int tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

static int raw_cmp(const void *pa, const void *pb)
{
	const struct sc_range *a = pa, *b = pb;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static int push_range(struct sc_range **r, size_t *n, size_t *cap, struct sc_range v)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 256;
		struct sc_range *nr = realloc(*r, nc * sizeof(**r));

		if (!nr)
			return -ENOMEM;
		*r = nr;
		*cap = nc;
	}
	(*r)[(*n)++] = v;
	return 0;
}

/*
 * Adds die as a node under parent with its ranges clipped to the parent's
 * (libdw searches a scope's children only when the scope contains the
 * address).  Returns the node index, -1 when no address is left (the DIE
 * and its children are skipped, as libdw prunes them), or -ENOMEM.
 */
static int64_t add_node(struct sc_build *b, Dwarf_Die *die, int tag, int32_t parent,
			uint32_t depth)
{
	struct dw_scopes *s = b->s;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t first = b->nr, ntmp = 0;
	Dwarf_Attribute a;
	Dwarf_Word cl;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (hi > lo && push_range(&b->tmp, &ntmp, &b->tcap, (struct sc_range){ lo, hi }))
			return -ENOMEM;
	}
	if (!ntmp)
		return -1;
	qsort(b->tmp, ntmp, sizeof(*b->tmp), raw_cmp);
	for (size_t i = 0; i < ntmp; i++) {
		struct sc_range r = b->tmp[i];

		r.node = (int32_t)s->nnodes;
		r.depth = depth;
		if (parent < 0) {
			if (push_range(&b->r, &b->nr, &b->rcap, r))
				return -ENOMEM;
			continue;
		}
		/* r intersected with each of the parent's ranges (sorted, few). */
		for (uint32_t j = 0; j < b->count[parent]; j++) {
			struct sc_range p = b->r[b->first[parent] + j], c = r;

			if (p.lo >= r.hi)
				break;
			if (c.lo < p.lo)
				c.lo = p.lo;
			if (c.hi > p.hi)
				c.hi = p.hi;
			if (c.hi > c.lo && push_range(&b->r, &b->nr, &b->rcap, c))
				return -ENOMEM;
		}
	}
	if (b->nr == first)
		return -1;
	if (s->nnodes == b->ncap) {
		uint32_t n = b->ncap ? 2 * b->ncap : 64;
		struct dw_scope_node *nn = realloc(s->nodes, n * sizeof(*nn));
		uint32_t *nf = realloc(b->first, n * sizeof(*nf));

		if (nf)
			b->first = nf;
		if (nn)
			s->nodes = nn;
		nf = nf ? realloc(b->count, n * sizeof(*nf)) : NULL;
		if (!nn || !nf)
			return -ENOMEM;
		b->count = nf;
		b->ncap = n;
	}
	b->first[s->nnodes] = (uint32_t)first;
	b->count[s->nnodes] = (uint32_t)(b->nr - first);
	s->nodes[s->nnodes] = (struct dw_scope_node){
		.parent = parent,
		.inlined = tag == DW_TAG_inlined_subroutine,
		.hidden = !is_code(tag),
	};
	if (is_code(tag))
		s->nodes[s->nnodes].function = die_function_name(die);
	if (tag == DW_TAG_inlined_subroutine) {
		s->nodes[s->nnodes].call_file = call_file(die);
		if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &cl) && cl <= UINT32_MAX)
			s->nodes[s->nnodes].call_line = (uint32_t)cl;
	}
	return s->nnodes++;
}

/* Visits the children of die (recursively, depth-bounded). */
static int walk(struct sc_build *b, Dwarf_Die *die, int32_t parent, uint32_t depth)
{
	Dwarf_Die child;
	int rc;

	if (depth >= SC_MAX_DEPTH)
		return 0;
	rc = dwarf_child(die, &child);
	while (rc == 0) {
		int tag = dwarf_tag(&child);
		int err = 0;

		if (++b->visits > SC_MAX_VISITS)
			return 0;
		if (tag == DW_TAG_imported_unit) {
			Dwarf_Attribute a;
			Dwarf_Die unit;

			/* libdw follows imports without an address test */
			if (b->imports++ < SC_MAX_IMPORTS &&
			    dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &a), &unit))
				err = walk(b, &unit, parent, depth + 1);
		} else if (is_code(tag) || may_have_scopes(tag)) {
			int64_t node = add_node(b, &child, tag, parent, depth);

			if (node < -1)
				return (int)node;
			if (node >= 0 && dwarf_haschildren(&child) > 0)
				err = walk(b, &child, (int32_t)node, depth + 1);
		}
		if (err)
			return err;
		rc = dwarf_siblingof(&child, &child);
	}
	return 0;
}

static int range_cmp(const void *pa, const void *pb)
{
	const struct sc_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi > b->hi ? -1 : 1; /* the enclosing one first */
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

/* Appends the segment starting at lo (merged with the last if same node). */
static int seg_emit(struct dw_scopes *s, uint32_t *cap, uint64_t lo, int32_t node)
{
	if (s->nsegs && s->segs[s->nsegs - 1].node == node)
		return 0;
	if (s->nsegs && s->segs[s->nsegs - 1].lo == lo) {
		s->segs[s->nsegs - 1].node = node; /* empty segment: replaced */
		if (s->nsegs > 1 && s->segs[s->nsegs - 2].node == node)
			s->nsegs--;
		return 0;
	}
	if (s->nsegs == *cap) {
		uint32_t n = *cap ? 2 * *cap : 64;
		struct dw_scope_seg *ns = realloc(s->segs, n * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		s->segs = ns;
		*cap = n;
	}
	s->segs[s->nsegs++] = (struct dw_scope_seg){ .lo = lo, .node = node };
	return 0;
}

static int sweep(struct sc_build *b)
{
	struct dw_scopes *s = b->s;
	struct sc_range *stack = NULL;
	uint32_t segcap = 0;
	size_t top = 0;
	int err = 0;

	if (!b->nr)
		return 0;
	qsort(b->r, b->nr, sizeof(*b->r), range_cmp);
	stack = malloc(b->nr * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	for (size_t i = 0; i <= b->nr && !err; i++) {
		bool last = i == b->nr;
		struct sc_range r = last ? (struct sc_range){ .lo = UINT64_MAX } : b->r[i];

		/* Close the scopes that end before r starts. */
		while (top && stack[top - 1].hi <= r.lo) {
			top--;
			err = err ?: seg_emit(s, &segcap, stack[top].hi,
					      top ? stack[top - 1].node : -1);
		}
		if (last || err)
			break;
		if (top && r.hi > stack[top - 1].hi)
			r.hi = stack[top - 1].hi; /* pokes out of its enclosing scope */
		if (r.hi <= r.lo)
			continue;
		err = seg_emit(s, &segcap, r.lo, r.node);
		stack[top++] = r;
	}
	free(stack);
	return err;
}

int dw_scopes__build(Dwarf_Die *unit, struct dw_scopes **out)
{
	struct dw_scopes *s = calloc(1, sizeof(*s));
	struct sc_build b = { .s = s };
	int err;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	err = walk(&b, unit, -1, 0);
	if (!err)
		err = sweep(&b);
	free(b.r);
	free(b.tmp);
	free(b.first);
	free(b.count);
	if (err) {
		dw_scopes__free(s);
		return err;
	}
	/* Give back the room the arrays grew in (up to half of them): the
	 * table lives as long as the module's DWARF. */
	if (s->nnodes) {
		struct dw_scope_node *nn = realloc(s->nodes, s->nnodes * sizeof(*nn));

		if (nn)
			s->nodes = nn;
	}
	if (s->nsegs) {
		struct dw_scope_seg *ns = realloc(s->segs, s->nsegs * sizeof(*ns));

		if (ns)
			s->segs = ns;
	}
	*out = s;
	return 0;
}

void dw_scopes__free(struct dw_scopes *s)
{
	if (!s)
		return;
	free(s->nodes);
	free(s->segs);
	free(s);
}

int32_t dw_scopes__innermost(const struct dw_scopes *s, uint64_t addr)
{
	size_t lo = 0, hi = s ? s->nsegs : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->segs[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? s->segs[lo - 1].node : -1;
}

size_t dw_scopes__bytes(const struct dw_scopes *s)
{
	if (!s)
		return 0;
	return sizeof(*s) + (size_t)s->nnodes * sizeof(*s->nodes) +
	       (size_t)s->nsegs * sizeof(*s->segs);
}
