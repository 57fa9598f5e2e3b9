// SPDX-License-Identifier: MIT
/*
 * Source lines and inline chains from a module's DWARF (libdw).
 *
 * A module's DWARF is opened lazily, the first time a frame of it needs a
 * line, from the descriptor kept at load time (m->dwarf_fd: the separate
 * debug file, or the module itself when it carries .debug_info), so a file
 * deleted meanwhile still reads.  At open, every compilation unit's address
 * ranges go into one sorted table (ranges[]: lo, hi, unit), built from the
 * units themselves rather than .debug_aranges, which clang does not emit.
 * For split DWARF (DWARF 5 skeleton units, GCC/clang -gsplit-dwarf) libdw
 * opens the .dwo next to DW_AT_comp_dir/DW_AT_dwo_name; the unit's scopes
 * are searched in the split unit, its lines in the skeleton's line table.
 *
 * A lookup (sym_module__frames) is one binary search, dwarf_getsrc_die for
 * the line, and the chain of inlined_subroutine scopes inside the
 * subprogram (DWARF 5 section 3.3.8) from the unit's scope table
 * (dwarf_scopes.c, compiled once per unit: a walk of the unit's DIEs per
 * address cost about a millisecond on libpython's large units): the innermost function
 * gets the line of the address, each caller the DW_AT_call_file/call_line
 * of the inlined call below it.  The processor caches the resulting frame
 * rows per (module, address), so each address is looked up once.
 *
 * What libdw 0.188 cannot read is reported per module
 * (sym_module__dwarf_error): split units whose .dwo is missing or packed in
 * a .dwp (libdw 0.188 has no .debug_cu_index reader), compressed sections
 * of a kind neither libelf nor debug_zstd.c reads, and damaged DWARF.  Names
 * from the symbol table still come through.  zstd-compressed sections
 * (ELFCOMPRESS_ZSTD, which libelf reads only from 0.189 on) are decompressed
 * into an in-memory image (debug_zstd.c) that libdw then reads.
 */
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/symbols/dwarf_scopes.h"
#include "userspace/symbols/symbols_internal.h"

/* More compilation units than this is treated as malformed. */
#define DW_MAX_UNITS (1u << 22)
/* Range entries kept per module at most. */
#define DW_MAX_RANGES (1u << 24)

struct dw_range {
	uint64_t lo, hi; /* [lo, hi) */
	uint32_t unit;
	uint32_t reserved;
};

struct dw_unit {
	Dwarf_Die cu;	 /* skeleton or normal unit: line table, ranges */
	Dwarf_Die scope; /* where scopes are searched: the split unit when there is one */
	struct dw_scopes *scopes; /* compiled at the unit's first lookup (dwarf_scopes.h) */
	bool scopes_tried;
};

struct sym_dwarf {
	Elf *elf;
	void *image; /* debug_zstd__image() that elf reads, or NULL; owned */
	Dwarf *dw;
	struct dw_unit *units;
	size_t nunits;
	struct dw_range *ranges;
	size_t nranges;
};

static int range_cmp(const void *pa, const void *pb)
{
	const struct dw_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

void sym_dwarf__free(struct sym_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	free(d->image);
	for (size_t i = 0; d->units && i < d->nunits; i++)
		dw_scopes__free(d->units[i].scopes);
	free(d->units);
	free(d->ranges);
	free(d);
}

/* Sets the module's DWARF problem text (first one wins). */
static void dwarf_problem(struct sym_module *m, const char *fmt, const char *arg)
{
	char buf[4608];

	if (m->dwarf_error)
		return;
	snprintf(buf, sizeof(buf), fmt, arg ? arg : "");
	m->dwarf_error = strdup(buf);
}

/*
 * Compressed sections whose ch_type is neither zlib (libelf) nor zstd
 * (debug_zstd.c): libdw would silently treat them as absent.  Returns true
 * when the file has any.
 */
static bool has_unsupported_compression(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *raw;
		uint32_t type;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
			continue;
		if (sh.sh_type == SHT_NOBITS)
			continue;
		raw = elf_rawdata(scn, NULL);
		if (!raw || !raw->d_buf || raw->d_size < 4)
			return true; /* damaged: cannot tell, report it */
		memcpy(&type, raw->d_buf, 4); /* ch_type: first word of Elf32/64_Chdr */
		if (type != ELFCOMPRESS_ZLIB && type != ELFCOMPRESS_ZSTD)
			return true;
	}
	return false;
}

static int units_add_ranges(struct sym_dwarf *d, Dwarf_Die *cu, uint32_t unit, size_t *cap)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
		if (hi <= lo)
			continue;
		if (d->nranges >= DW_MAX_RANGES)
			return -E2BIG;
		if (d->nranges == *cap) {
			size_t n = *cap ? 2 * *cap : 64;
			struct dw_range *r = realloc(d->ranges, n * sizeof(*r));

			if (!r)
				return -ENOMEM;
			d->ranges = r;
			*cap = n;
		}
		d->ranges[d->nranges++] = (struct dw_range){.lo = lo, .hi = hi, .unit = unit};
	}
	return 0;
}

/*
 * Bytes of the debug sections libdw reads into memory at open (compressed
 * ones at their decompressed size): the least an open costs, whatever the
 * heap in use says (another allocator, such as a sanitizer's, leaves
 * mallinfo2 unchanged).
 */
static size_t debug_sections_bytes(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, total = 0;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Chdr ch;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strncmp(name, ".debug_", 7))
			continue;
		if ((sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			total += ch.ch_size;
		else
			total += sh.sh_size;
	}
	return total;
}

/* A .dwp next to the module or its debug file, if one exists. */
static bool dwp_exists(const char *path, char *out, size_t size)
{
	struct stat st;
	int n;

	if (!path || !path[0])
		return false;
	n = snprintf(out, size, "%s.dwp", path);
	return n > 0 && (size_t)n < size && !stat(out, &st) && S_ISREG(st.st_mode);
}

static int sym_dwarf__index(struct sym_module *m, struct sym_dwarf *d)
{
	Dwarf_CU *cu = NULL, *next;
	size_t units_cap = 0, ranges_cap = 0, missing_split = 0;
	const char *first_dwo = NULL;
	int err = 0, rc;

	for (;;) {
		Dwarf_Half version;
		uint8_t unit_type;
		Dwarf_Die cudie, subdie;

		memset(&subdie, 0, sizeof(subdie));
		rc = dwarf_get_units(d->dw, cu, &next, &version, &unit_type, &cudie, &subdie);
		if (rc != 0) {
			if (rc < 0)
				dwarf_problem(m, "damaged DWARF: %s", dwarf_errmsg(-1));
			break;
		}
		cu = next;
		if (unit_type != DW_UT_compile && unit_type != DW_UT_skeleton &&
		    unit_type != DW_UT_partial)
			continue; /* type units hold no code */
		if (d->nunits >= DW_MAX_UNITS) {
			dwarf_problem(m, "damaged DWARF: %s", "too many units");
			break;
		}
		if (d->nunits == units_cap) {
			size_t n = units_cap ? 2 * units_cap : 16;
			struct dw_unit *u = realloc(d->units, n * sizeof(*u));

			if (!u) {
				err = -ENOMEM;
				goto cleanup;
			}
			d->units = u;
			units_cap = n;
		}
		d->units[d->nunits] = (struct dw_unit){ .cu = cudie, .scope = cudie };
		if (unit_type == DW_UT_skeleton) {
			if (dwarf_tag(&subdie) == DW_TAG_compile_unit)
				d->units[d->nunits].scope = subdie;
			else if (!missing_split++)
				first_dwo = dwarf_formstring(dwarf_attr(&cudie, DW_AT_dwo_name,
									&(Dwarf_Attribute){0}));
		}
		err = units_add_ranges(d, &cudie, (uint32_t)d->nunits, &ranges_cap);
		if (err == -E2BIG) {
			dwarf_problem(m, "damaged DWARF: %s", "too many address ranges");
			err = 0;
			break;
		}
		if (err)
			goto cleanup;
		d->nunits++;
	}
	if (missing_split) {
		char dwp[4200];

		if (dwp_exists(m->dwarf_path, dwp, sizeof(dwp)) ||
		    dwp_exists(m->path, dwp, sizeof(dwp)))
			dwarf_problem(m,
				      "split DWARF in a .dwp package (%s) is not supported by "
				      "libdw 0.188: no inline frames",
				      dwp);
		else
			dwarf_problem(m, "split DWARF unit %s not found: no inline frames",
				      first_dwo ? first_dwo : "(unnamed .dwo)");
	}
	if (d->nranges)
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), range_cmp);
cleanup:
	return err;
}

/* Opens m's DWARF the first time, and again after the budget closed it
 * (dwarf_cache.c); no-op while open or when it was unusable.  Returns 0 or
 * -ENOMEM. */
static int sym_module__open_dwarf(struct sym_module *m)
{
	bool reopen = m->dwarf_tried;
	struct sym_dwarf *d;
	size_t before, after, floor;
	int err = 0;

	if (m->dwarf || (m->dwarf_tried && !m->dwarf_ok))
		return 0;
	m->dwarf_tried = true;
	if (m->dwarf_fd < 0)
		return 0;
	if (reopen)
		sym_dwarf_lru__make_room(m);
	before = sym_heap__in_use();
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->elf = elf_begin(m->dwarf_fd, ELF_C_READ, NULL);
	if (!d->elf || elf_kind(d->elf) != ELF_K_ELF) {
		dwarf_problem(m, "bad debug file: %s", elf_errmsg(-1));
		goto fail;
	}
	if (has_unsupported_compression(d->elf)) {
		dwarf_problem(m, "compressed debug sections of an unknown kind (neither zlib nor "
				 "zstd)%s", "");
		goto fail;
	}
	if (debug_zstd__present(d->elf)) {
		size_t size;

		err = debug_zstd__image(d->elf, &d->image, &size);
		if (err == -ENOMEM)
			goto fail;
		err = 0;
		elf_end(d->elf);
		d->elf = d->image ? elf_memory(d->image, size) : NULL;
		if (!d->elf || elf_kind(d->elf) != ELF_K_ELF) {
			dwarf_problem(m, "zstd-compressed debug sections could not be read: "
					 "damaged or over the size limit%s", "");
			goto fail;
		}
	}
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		dwarf_problem(m, "no usable DWARF: %s", dwarf_errmsg(-1));
		goto fail;
	}
	err = sym_dwarf__index(m, d);
	if (err)
		goto fail;
	m->dwarf = d;
	m->dwarf_ok = true;
	sym_dwarf_lru__touch(m);
	after = sym_heap__in_use();
	floor = debug_sections_bytes(d->elf);
	sym_dwarf_lru__grow(m, after > before + floor ? after - before : floor);
	if (m->lru) {
		if (reopen)
			m->lru->reopened++;
		else
			m->lru->opened++;
	}
	return 0;
fail:
	sym_dwarf__free(d);
	return err;
}

/* Innermost unit range containing addr, or NULL. */
static struct dw_unit *sym_dwarf__unit(struct sym_dwarf *d, uint64_t addr)
{
	size_t lo = 0, hi = d->nranges, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges may overlap (broken DWARF, partial units): scan back a bit. */
	for (i = lo; i-- > 0 && lo - i <= 16;)
		if (addr >= d->ranges[i].lo && addr < d->ranges[i].hi)
			return &d->units[d->ranges[i].unit];
	return NULL;
}

size_t sym_module__frames(struct sym_module *m, uint64_t vaddr, struct sym_frame *out, size_t max)
{
	const char *file = NULL, *sym_name;
	struct dw_unit *u = NULL;
	uint32_t line = 0;
	size_t n = 0;
	int32_t node;

	if (!m || !max)
		return 0;
	sym_name = sym_module__lookup(m, vaddr, NULL);
	if (!m->is_kernel && sym_module__open_dwarf(m) == 0 && m->dwarf) {
		sym_dwarf_lru__touch(m);
		u = sym_dwarf__unit(m->dwarf, vaddr);
	}
	if (u) {
		/* A unit's first lookup decodes its lines and compiles its
		 * scopes: bytes the open DWARF now holds. */
		size_t before = u->scopes_tried ? 0 : sym_heap__in_use(), after;
		Dwarf_Line *l = dwarf_getsrc_die(&u->cu, vaddr);
		int ln;

		if (l && !dwarf_lineno(l, &ln) && ln > 0) {
			line = (uint32_t)ln;
			file = dwarf_linesrc(l, NULL, NULL);
		}
		/* The innermost code scope at vaddr, then its physical nesting
		 * (as dwarf_getscopes + dwarf_getscopes_die, eu-addr2line -i),
		 * from the unit's scope table compiled at its first lookup. */
		if (!u->scopes_tried) {
			u->scopes_tried = true;
			if (dw_scopes__build(&u->scope, &u->scopes))
				u->scopes = NULL; /* out of memory: names from symbols */
			after = sym_heap__in_use();
			sym_dwarf_lru__grow(m, after > before ? after - before : 0);
		}
		node = dw_scopes__innermost(u->scopes, vaddr);
		for (uint32_t hops = 0; node >= 0 && n < max && hops < u->scopes->nnodes; hops++) {
			const struct dw_scope_node *sn = &u->scopes->nodes[node];

			if (sn->hidden) {
				node = sn->parent;
				continue;
			}
			out[n].function = sn->function;
			out[n].file = file;
			out[n].line = line;
			out[n].inlined = sn->inlined;
			n++;
			if (!sn->inlined)
				break;
			/* The caller is at the inlined call's site. */
			file = sn->call_file;
			line = sn->call_line;
			node = sn->parent;
		}
		/* Only inlined scopes (no subprogram found): the symbol names the
		 * outermost function, at the last call site. */
		if (n && out[n - 1].inlined && n < max) {
			out[n] = (struct sym_frame){
			    .function = sym_name, .file = file, .line = line};
			n++;
		}
		if (!n && (sym_name || file)) {
			out[0] = (struct sym_frame){.function = sym_name, .file = file, .line = line};
			n = 1;
		}
	} else if (sym_name) {
		out[0] = (struct sym_frame){.function = sym_name};
		n = 1;
	}
	/* The out-of-line function is named by its symbol when one covers the
	 * address (the name the linker and every other tool use: qsort_r, not
	 * DWARF's __GI___qsort_r; foo.part.0), by DWARF otherwise. */
	if (n && sym_name)
		out[n - 1].function = sym_name;
	/* Over the budget: others' DWARF closes, never the one the strings
	 * just handed out live in. */
	sym_dwarf_lru__trim(m->lru, m);
	return n;
}

const char *sym_module__dwarf_error(struct sym_module *m)
{
	if (!m)
		return NULL;
	sym_module__open_dwarf(m);
	sym_dwarf_lru__trim(m->lru, m);
	return m->dwarf_error;
}
