// SPDX-License-Identifier: MIT
/*
 * The GDB JIT interface reader (gdb_jit.h).  The list is walked from
 * first_entry by next_entry, at most JIT_GDB_OBJECTS_MAX entries (a longer
 * or cyclic list is malformed); an entry's prev is not trusted or used.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "gdb_jit.h"
#include "jit_policy.h"

struct gdb_descriptor {
	uint32_t version;
	uint32_t action_flag;
	uint64_t relevant_entry;
	uint64_t first_entry;
};

struct gdb_entry {
	uint64_t next_entry;
	uint64_t prev_entry;
	uint64_t symfile_addr;
	uint64_t symfile_size;
};

void gdb_jit__init(struct gdb_jit *g, uint64_t descriptor)
{
	memset(g, 0, sizeof(*g));
	g->descriptor = descriptor;
}

void gdb_jit__release(struct gdb_jit *g)
{
	for (uint32_t i = 0; i < g->nobjs; i++)
		free(g->objs[i].image);
	free(g->objs);
	gdb_jit__init(g, 0);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

int gdb_jit__stage_symbols(struct jit_funcs *f, const uint8_t *image, size_t size,
			   uint32_t object, uint64_t read_ns)
{
	Elf *elf;
	GElf_Ehdr eh;
	int err = -ENOEXEC;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, size);
	if (!elf)
		return -ENOEXEC;
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		goto cleanup;
	for (int pass = 0; pass < 2 && err; pass++) {
		uint32_t want = pass ? SHT_DYNSYM : SHT_SYMTAB;
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize ||
			    !(data = elf_getdata(scn, NULL)))
				continue;
			err = 0;
			for (size_t i = 0; i < data->d_size / sh.sh_entsize && !err; i++) {
				GElf_Sym sym;
				GElf_Shdr ss;
				const char *name;
				uint64_t at;

				if (!gelf_getsym(data, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
				    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
					continue;
				name = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (!name)
					continue;
				at = sym.st_value;
				if (eh.e_type == ET_REL) {
					Elf_Scn *s = elf_getscn(elf, sym.st_shndx);

					if (!s || !gelf_getshdr(s, &ss))
						continue;
					at += ss.sh_addr;
				}
				err = jit_funcs__add_object(f, at, sym.st_size, name, strlen(name),
							    read_ns, object);
			}
			if (err)
				goto cleanup;
		}
	}
cleanup:
	elf_end(elf);
	return err;
}

void gdb_jit__remapped(struct gdb_jit *g)
{
	g->remapped = true;
}

/* Append object (addr, size, image: owned on success) as index *index.
 * 0, or -ENOMEM (image not taken). */
static int append(struct gdb_jit *g, uint64_t addr, uint64_t size, uint8_t *image,
		  uint32_t *index)
{
	if (g->nobjs == g->objs_cap) {
		uint32_t cap = g->objs_cap ? g->objs_cap * 2 : 8;
		void *n = realloc(g->objs, cap * sizeof(*g->objs));

		if (!n)
			return -ENOMEM;
		g->objs = n;
		g->objs_cap = cap;
	}
	g->objs[g->nobjs] = (struct gdb_jit_object){ .addr = addr, .size = size, .image = image };
	*index = g->nobjs++;
	g->image_bytes += size;
	return 0;
}

/*
 * The object at (addr, size).  One with live functions (alive[i], i <
 * nalive) is not
 * copied again.  Else its bytes are copied: the same bytes as an object
 * kept make that object's functions live again, other bytes a new object.
 * Index in *index, or UINT32_MAX when over a bound or unreadable (counted).
 * 0 or -ENOMEM.
 */
static int object(struct gdb_jit *g, struct jit_funcs *f, const struct jit_target *t,
		  uint64_t addr, uint64_t size, uint64_t read_ns, const bool *alive,
		  uint32_t nalive, uint32_t *index)
{
	uint8_t *image;
	int err;

	*index = UINT32_MAX;
	for (uint32_t i = 0; i < nalive; i++)
		if (alive[i] && g->objs[i].addr == addr && g->objs[i].size == size) {
			*index = i;
			return 0;
		}
	if (!size || size > JIT_GDB_IMAGE_MAX) {
		jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
		return 0;
	}
	image = malloc(size);
	if (!image)
		return -ENOMEM;
	if (jit_target__read(t, addr, image, size)) {
		jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
		free(image);
		return 0;
	}
	for (uint32_t i = 0; i < g->nobjs; i++) {
		struct gdb_jit_object *o = &g->objs[i];

		if (o->addr != addr || o->size != size || memcmp(o->image, image, size))
			continue;
		/* Registered again (or remapped) with the same bytes. */
		free(image);
		err = gdb_jit__stage_symbols(f, o->image, o->size, i, read_ns);
		if (err == -ENOMEM)
			return err;
		if (err)
			jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
		g->restaged++;
		o->staged = true;
		*index = i;
		return 0;
	}
	if (g->nobjs >= JIT_GDB_OBJECTS_MAX || g->image_bytes + size > JIT_CODE_MAX) {
		jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
		free(image);
		return 0;
	}
	err = gdb_jit__stage_symbols(f, image, size, g->nobjs, read_ns);
	if (err == -ENOMEM) {
		free(image);
		return err;
	}
	if (err)
		jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
	err = append(g, addr, size, image, index);
	if (err)
		free(image);
	else
		g->objs[*index].staged = true;
	return err;
}

/* Live functions of each object in f: counts[i] (nobjs entries, calloc'd;
 * NULL when there is no object).  -ENOMEM. */
static int live_counts(const struct gdb_jit *g, const struct jit_funcs *f, uint32_t **counts)
{
	*counts = NULL;
	if (!g->nobjs)
		return 0;
	*counts = calloc(g->nobjs, sizeof(**counts));
	if (!*counts)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->n; i++) {
		const struct jit_fn *fn = &f->fns[i];

		if ((fn->flags & JIT_FN_GDB) && !(fn->flags & JIT_FN_ENDED) && fn->object < g->nobjs)
			(*counts)[fn->object]++;
	}
	return 0;
}

/* alive[i]: object i is whole (all its functions live), nobjs entries
 * (calloc'd; NULL when there is no object).  -ENOMEM. */
static int alive_objects(const struct gdb_jit *g, const struct jit_funcs *f, bool **alive)
{
	uint32_t *counts;
	int err = live_counts(g, f, &counts);

	*alive = NULL;
	if (err || !g->nobjs)
		return err;
	*alive = calloc(g->nobjs, sizeof(**alive));
	if (*alive)
		for (uint32_t i = 0; i < g->nobjs; i++)
			(*alive)[i] = counts[i] >= g->objs[i].nfuncs;
	free(counts);
	return *alive ? 0 : -ENOMEM;
}

/* After a commit: the live functions of each object staged by this read. */
static int count_staged(struct gdb_jit *g, const struct jit_funcs *f)
{
	uint32_t *counts;
	int err = live_counts(g, f, &counts);

	if (err)
		return err;
	for (uint32_t i = 0; i < g->nobjs; i++)
		if (g->objs[i].staged) {
			g->objs[i].nfuncs = counts[i];
			g->objs[i].staged = false;
		}
	free(counts);
	return 0;
}

int gdb_jit__read(struct gdb_jit *g, struct jit_funcs *f, const struct jit_target *t,
		  uint64_t read_ns, uint32_t *added)
{
	struct gdb_descriptor d;
	struct gdb_entry e;
	uint64_t h, at;
	uint32_t n = 0, index, before = g->nobjs, from = f->nstaged;
	uint64_t since;
	bool *alive = NULL, whole = true;
	int err;

	*added = 0;
	if (!g->descriptor || jit_target__read(t, g->descriptor, &d, sizeof(d)))
		return 0;
	if (d.version != 1) {
		jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
		return 0;
	}
	/* The list's bytes first: nothing is copied when they did not change
	 * and nothing was mapped since. */
	h = fnv(0xcbf29ce484222325ull, &d.first_entry, sizeof(d.first_entry));
	for (at = d.first_entry; at && n <= JIT_GDB_OBJECTS_MAX; at = e.next_entry, n++) {
		if (jit_target__read(t, at, &e, sizeof(e))) {
			jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
			return 0;
		}
		h = fnv(h, &e, sizeof(e));
	}
	if (n > JIT_GDB_OBJECTS_MAX) {
		jit_funcs__problem(f, JIT_PROBLEM_GDB_BAD);
		return 0;
	}
	since = g->last_read_ns;
	g->last_read_ns = read_ns;
	if (h == g->hash && !g->remapped)
		return 0;
	if (h != g->hash)
		g->reads++;
	g->hash = h;
	g->remapped = false;
	err = alive_objects(g, f, &alive);
	if (err)
		return err;
	for (uint32_t i = 0; i < g->nobjs; i++)
		g->objs[i].listed = false;
	for (at = d.first_entry; at; at = e.next_entry) {
		if (jit_target__read(t, at, &e, sizeof(e))) {
			whole = false;
			break; /* changed under us: the next read sees the new list */
		}
		err = object(g, f, t, e.symfile_addr, e.symfile_size, read_ns, alive, before, &index);
		if (err)
			goto cleanup;
		if (index != UINT32_MAX)
			g->objs[index].listed = true;
		if (!n--) {
			whole = false;
			break;
		}
	}
	/* Unregistered: its code is gone (a later registration brings it back). */
	for (uint32_t i = 0; whole && i < before; i++)
		if (!g->objs[i].listed && alive[i])
			jit_funcs__end_object(f, i, since, read_ns);
	/* Registered since the last read: they name samples from then on. */
	for (uint32_t i = from; i < f->nstaged; i++)
		f->staged[i].since_ns = since;
	err = jit_funcs__commit(f);
	if (err >= 0) {
		*added = (uint32_t)err;
		err = count_staged(g, f);
	}
cleanup:
	free(alive);
	return err;
}
