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
 * A unit's first lookup compiles its line table (dwarf_linetab.c: the
 * answers of dwarf_getsrc_die, delta-packed) and its scope table
 * (dwarf_scopes.c: a walk of the unit's DIEs per address cost about a
 * millisecond on libpython's large units), names interned in the module's
 * own set.  A lookup (sym_module__frames) is then two binary searches: the
 * line, and the chain of inlined_subroutine scopes inside the subprogram
 * (DWARF 5 section 3.3.8): the innermost function gets the line of the
 * address, each caller the DW_AT_call_file/call_line of the inlined call
 * below it.  The processor caches the resulting frame rows per (module,
 * address), so each address is looked up once.
 *
 * Memory (the budget, dwarf_cache.c): libdw's Dwarf is ended once it
 * holds DW_SCRATCH_MAX of decoded lines and DIE caches past its begin, and
 * begun again at the next unit's first lookup; the debug file is mapped,
 * not read (compressed sections decompressed once into an unnamed file,
 * debug_inflate.c), its pages dropped after each use.  The budget closes
 * that file state; the unit index and the compiled tables stay, so only a
 * unit not compiled yet opens the file again.
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
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/symbols/dwarf_linetab.h"
#include "userspace/symbols/dwarf_scopes.h"
#include "userspace/symbols/symbols_internal.h"

/* More compilation units than this is treated as malformed. */
#define DW_MAX_UNITS (1u << 22)
/* Range entries kept per module at most. */
#define DW_MAX_RANGES (1u << 24)
/* What libdw may hold, past the open, of the units' decoded line tables
 * and DIE caches before its Dwarf is ended (and begun again at the next
 * unit's first lookup), bytes: our tables replace them. */
#define DW_SCRATCH_MAX (1u << 20)
/* The unit index walks every unit's header and its unit DIE, a page or more
 * each across the whole .debug_info (libc's debug file: 7 MiB resident at
 * the end of the walk, on top of the recorder's rings): the mapped pages
 * are given back every this many bytes of .debug_info walked. */
#define DW_INDEX_DROP_BYTES (1u << 20)
/* libdw 0.188's Dwarf_Line, bytes: the least a decoded row takes. */
#define DW_LIBDW_ROW_BYTES 40u

struct dw_range {
	uint64_t lo, hi; /* [lo, hi) */
	uint32_t unit;
	uint32_t reserved;
};

struct dw_unit {
	Dwarf_Off cu_off; /* the unit DIE (skeleton or normal unit: line table, ranges) */
	bool skeleton;	  /* scopes are searched in its split unit when there is one */
	bool built;	  /* lines and scopes compiled (at the unit's first lookup) */
	struct dw_linetab *lines; /* dwarf_linetab.h, or NULL */
	struct dw_scopes *scopes; /* dwarf_scopes.h, or NULL */
};

/* elf stays open with the module's DWARF; dw (libdw's state: units, DIE
 * caches, decoded line tables) only while a unit's tables are compiled,
 * ended once it holds DW_SCRATCH_MAX more than at its begin.  Names handed
 * out live in names. */
struct sym_dwarf {
	Elf *elf;
	void *image; /* debug_zstd__image() that elf reads, or NULL; owned */
	void *map;   /* the debug file (or image_fd) mapped read-only, that elf reads, or NULL */
	size_t map_size;
	int image_fd; /* the decompressed image of a compressed file (debug_inflate.c, or
		       * debug_cache.c's), or -1; kept closed */
	size_t image_size; /* the image's bytes, from image_fd's start */
	Dwarf *dw;   /* NULL between unit builds once ended */
	size_t scratch; /* heap bytes dw took for unit builds since its begin */
	size_t floor;	/* heap bytes of the sections elf decompressed (not mapped) */
	struct dw_names *names;
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

bool sym_dwarf__file_open(const struct sym_dwarf *d)
{
	return d && d->elf;
}

void sym_dwarf__close_file(struct sym_dwarf *d)
{
	if (!d)
		return;
	if (d->dw)
		dwarf_end(d->dw);
	if (d->elf)
		elf_end(d->elf);
	if (d->map)
		munmap(d->map, d->map_size);
	free(d->image);
	d->dw = NULL;
	d->elf = NULL;
	d->map = NULL;
	d->image = NULL;
	d->scratch = d->floor = 0;
}

void sym_dwarf__free(struct sym_dwarf *d)
{
	if (!d)
		return;
	sym_dwarf__close_file(d);
	if (d->image_fd >= 0)
		close(d->image_fd);
	for (size_t i = 0; d->units && i < d->nunits; i++) {
		dw_linetab__free(d->units[i].lines);
		dw_scopes__free(d->units[i].scopes);
	}
	dw_names__free(d->names);
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
 * Bytes of the debug sections libdw decompresses into the heap at open (the
 * others are read from the file's mapping): the least an open costs,
 * whatever the heap in use says (another allocator, such as a sanitizer's,
 * leaves mallinfo2 unchanged).  Before dwarf_begin_elf, which decompresses.
 */
static size_t debug_sections_heap_bytes(Elf *elf)
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
	}
	return total;
}

/* How elf's sections are compressed: 0 not at all, 1 gABI style
 * (SHF_COMPRESSED: zlib, zstd or unknown), 2 some GNU style (.zdebug_*,
 * which libelf decompresses only in place, writing the section headers). */
static int compression_of(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int kind = 0;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 2; /* cannot tell: read it */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strncmp(name, ".zdebug", 7))
			return 2;
		if (sh.sh_flags & SHF_COMPRESSED)
			kind = 1;
	}
	return kind;
}

/* fd's file (its first want bytes, or all of it when want is 0) mapped
 * read-only into *map, *size bytes, read by the Elf returned (elf_memory),
 * or NULL. */
static Elf *map_fd(int fd, size_t want, void **map, size_t *size)
{
	struct stat st;
	Elf *elf;
	void *p;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size < want)
		return NULL;
	if (want)
		st.st_size = (off_t)want;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	elf = elf_memory(p, (size_t)st.st_size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		munmap(p, (size_t)st.st_size);
		return NULL;
	}
	*map = p;
	*size = (size_t)st.st_size;
	return elf;
}

/*
 * The debug file mapped read-only and read in place (elf_memory), not into
 * the heap: libdw reads its sections where they lie, and
 * sym_dwarf__drop_pages gives back the pages a lookup touched (clean file
 * pages, read again on need), so its DWARF costs the heap only our tables
 * and libdw's state.  (A file truncated in place while mapped would fault
 * the reader, as it would any tool mapping it, libdwfl's among them.)  A
 * file with compressed sections is decompressed once into an unnamed file
 * on disk (debug_inflate__file), or found already made in the debug cache
 * (debug_cache.c) when the symbolizer has one, mapped the same way, and
 * kept for the reopens; where that cannot be, and for GNU-style .zdebug sections, it
 * is read (ELF_C_READ) and libelf decompresses into the heap (a mapped one
 * would have its section headers written, and its compressed bytes would
 * stay resident).
 */
static Elf *sym_dwarf__map(const struct sym_module *m, struct sym_dwarf *d, int fd)
{
	size_t size = 0, isize;
	void *p = NULL;
	int ifd, kind;
	Elf *elf;

	if (d->image_fd >= 0) {
		elf = map_fd(d->image_fd, d->image_size, &d->map, &d->map_size);
		return elf ? elf : elf_begin(fd, ELF_C_READ, NULL);
	}
	elf = map_fd(fd, 0, &p, &size);
	kind = elf ? compression_of(elf) : 2;
	if (elf && kind == 0) {
		d->map = p;
		d->map_size = size;
		return elf;
	}
	if (elf && kind == 1 &&
	    (m->lru ? debug_cache__image(&m->lru->dcache, fd, m->build_id, m->build_id_len, elf, p,
					 size, &ifd, &isize)
		    : debug_inflate__file(elf, p, size, &ifd, &isize)) == 0) {
		elf_end(elf);
		munmap(p, size);
		d->image_fd = ifd;
		d->image_size = isize;
		elf = map_fd(ifd, isize, &d->map, &d->map_size);
		return elf ? elf : elf_begin(fd, ELF_C_READ, NULL);
	}
	if (elf) {
		elf_end(elf);
		munmap(p, size);
	}
	return elf_begin(fd, ELF_C_READ, NULL);
}

/* The mapped file's pages leave our resident set (never written: nothing
 * is lost). */
static void sym_dwarf__drop_pages(struct sym_dwarf *d)
{
	if (d->map)
		madvise(d->map, d->map_size, MADV_DONTNEED);
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
	Dwarf_Off dropped_at = 0;
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
		if (dwarf_dieoffset(&cudie) - dropped_at >= DW_INDEX_DROP_BYTES) {
			sym_dwarf__drop_pages(d);
			dropped_at = dwarf_dieoffset(&cudie);
		}
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
		d->units[d->nunits] = (struct dw_unit){
		    .cu_off = dwarf_dieoffset(&cudie), .skeleton = unit_type == DW_UT_skeleton};
		if (unit_type == DW_UT_skeleton) {
			if (dwarf_tag(&subdie) != DW_TAG_compile_unit && !missing_split++)
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
/* Opens d's file state: the debug file (mapped, or read when compressed;
 * zstd sections decompressed into an image) and libdw's Dwarf.  Returns 0,
 * 1 when unusable (m's problem says why) or -ENOMEM. */
static int sym_dwarf__open_file(struct sym_module *m, struct sym_dwarf *d)
{
	int err = 0;

	d->elf = sym_dwarf__map(m, d, m->dwarf_fd);
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
		d->floor = size;
	}
	d->floor += debug_sections_heap_bytes(d->elf);
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw) {
		dwarf_problem(m, "no usable DWARF: %s", dwarf_errmsg(-1));
		goto fail;
	}
	return 0;
fail:
	sym_dwarf__close_file(d);
	return err ? err : 1;
}

/* Opens m's DWARF the first time: its file state and the unit index; no-op
 * after (a closed file state reopens at a unit's first lookup,
 * sym_dwarf__build_unit) or when unusable.  Returns 0 or -ENOMEM. */
static int sym_module__open_dwarf(struct sym_module *m)
{
	size_t before, after, floor, index;
	struct sym_dwarf *d;
	int err;

	if (m->dwarf || m->dwarf_tried)
		return 0;
	m->dwarf_tried = true;
	if (m->dwarf_fd < 0)
		return 0;
	before = sym_heap__in_use();
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->image_fd = -1;
	d->names = dw_names__new();
	if (!d->names) {
		err = -ENOMEM;
		goto fail;
	}
	err = sym_dwarf__open_file(m, d);
	if (!err)
		err = sym_dwarf__index(m, d);
	if (err)
		goto fail;
	/* libdw's state of every unit walked: begun again at a unit's build */
	dwarf_end(d->dw);
	d->dw = NULL;
	malloc_trim(0);
	sym_dwarf__drop_pages(d);
	m->dwarf = d;
	m->dwarf_ok = true;
	sym_dwarf_lru__touch(m);
	after = sym_heap__in_use();
	floor = d->floor;
	/* the unit index stays when the file state closes */
	index = d->nunits * sizeof(*d->units) + d->nranges * sizeof(*d->ranges);
	sym_dwarf_lru__grow_tables(m, index);
	after = after > before + index ? after - index : before;
	sym_dwarf_lru__grow(m, after > before + floor ? after - before : floor);
	if (m->lru)
		m->lru->opened++;
	return 0;
fail:
	sym_dwarf__free(d);
	return err > 0 ? 0 : err;
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

/* Ends libdw's state of d (what it decoded for the units built since its
 * begin, now in our tables) and gives its bytes back to the budget. */
static void sym_dwarf__end_libdw(struct sym_module *m, struct sym_dwarf *d)
{
	size_t before = sym_heap__in_use(), after, freed, scratch = d->scratch;

	dwarf_end(d->dw);
	d->dw = NULL;
	d->scratch = 0;
	/* libdw's blocks were carved from the heap: give their pages back
	 * rather than keep them as RSS. */
	malloc_trim(0);
	after = sym_heap__in_use();
	freed = before > after ? before - after : 0;
	if (freed < scratch)
		freed = scratch; /* what was counted, when the heap is not seen */
	if (m->dwarf_bytes < d->floor + freed)
		freed = m->dwarf_bytes > d->floor ? m->dwarf_bytes - d->floor : 0;
	sym_dwarf_lru__give_back(m, freed);
}

/* The scope table's names, from libdw's strings to d's own. */
static int scopes__intern(struct dw_scopes *s, struct dw_names *names)
{
	int err = 0;

	for (uint32_t i = 0; s && !err && i < s->nnodes; i++) {
		err = dw_names__intern(names, s->nodes[i].function, &s->nodes[i].function);
		if (!err)
			err = dw_names__intern(names, s->nodes[i].call_file, &s->nodes[i].call_file);
	}
	return err;
}

/*
 * A unit's first lookup: compiles its line table and its scope table (in
 * the split unit for a skeleton whose .dwo was found), names interned, from
 * libdw's state (begun again if it was ended).  Out of memory or damaged
 * DWARF leaves a table missing: names then come from the symbol table.  The
 * heap this took counts in the budget; libdw's part of it is given back
 * (sym_dwarf__end_libdw) once over DW_SCRATCH_MAX.
 */
static void sym_dwarf__build_unit(struct sym_module *m, struct sym_dwarf *d, struct dw_unit *u)
{
	size_t before = sym_heap__in_use(), names0 = dw_names__bytes(d->names), after, ours, grew;
	Dwarf_Die cu, sub, *scope = &cu;
	size_t rows = 0;

	u->built = true;
	if (!d->elf) {
		/* closed by the budget: open again, within it */
		sym_dwarf_lru__make_room(m);
		if (sym_dwarf__open_file(m, d))
			return; /* names from symbols */
		after = sym_heap__in_use();
		sym_dwarf_lru__touch(m);
		sym_dwarf_lru__grow(m, after > before + d->floor ? after - before : d->floor);
		if (m->lru)
			m->lru->reopened++;
		before = sym_heap__in_use();
	}
	if (!d->dw)
		d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw || !dwarf_offdie(d->dw, u->cu_off, &cu))
		goto out;
	memset(&sub, 0, sizeof(sub));
	if (u->skeleton && !dwarf_cu_info(cu.cu, NULL, NULL, NULL, &sub, NULL, NULL, NULL) &&
	    dwarf_tag(&sub) == DW_TAG_compile_unit)
		scope = &sub;
	if (dw_linetab__build(&cu, d->names, &u->lines, &rows))
		u->lines = NULL; /* no line table, or out of memory: no lines */
	if (dw_scopes__build(scope, &u->scopes) || scopes__intern(u->scopes, d->names)) {
		dw_scopes__free(u->scopes);
		u->scopes = NULL; /* out of memory: names from symbols */
	}
out:
	after = sym_heap__in_use();
	ours = dw_linetab__bytes(u->lines) + dw_scopes__bytes(u->scopes) +
	       (dw_names__bytes(d->names) - names0);
	sym_dwarf_lru__grow_tables(m, ours);
	/* The rest is libdw's, at least what its rows take (a heap mallinfo2
	 * does not see, as a sanitizer's or valgrind's, measures nothing). */
	grew = after > before + ours ? after - before - ours : 0;
	if (grew < rows * DW_LIBDW_ROW_BYTES)
		grew = rows * DW_LIBDW_ROW_BYTES;
	sym_dwarf_lru__grow(m, grew);
	d->scratch += grew;
	sym_dwarf__drop_pages(d);
	if (d->dw && d->scratch > DW_SCRATCH_MAX)
		sym_dwarf__end_libdw(m, d);
	/* One module at a time keeps libdw's state between builds. */
	if (m->lru && m->lru->libdw_owner != m) {
		struct sym_module *o = m->lru->libdw_owner;

		if (o && o->dwarf && o->dwarf->dw)
			sym_dwarf__end_libdw(o, o->dwarf);
		m->lru->libdw_owner = d->dw ? m : NULL;
	}
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
		if (sym_dwarf__file_open(m->dwarf))
			sym_dwarf_lru__touch(m);
		u = sym_dwarf__unit(m->dwarf, vaddr);
	}
	if (u) {
		if (!u->built)
			sym_dwarf__build_unit(m, m->dwarf, u);
		/* The line as dwarf_getsrc_die gives it, from the unit's
		 * compact table. */
		dw_linetab__find(u->lines, vaddr, &file, &line);
		/* The innermost code scope at vaddr, then its physical nesting
		 * (as dwarf_getscopes + dwarf_getscopes_die, eu-addr2line -i),
		 * from the unit's scope table. */
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
