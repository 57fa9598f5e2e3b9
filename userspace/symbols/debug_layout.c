// SPDX-License-Identifier: MIT
/*
 * The layout of a debug file rewritten with its compressed sections
 * decompressed (symbols_internal.h, debug_layout__plan): what
 * debug_zstd.c builds in memory and debug_inflate.c writes to a file.
 *
 * The image keeps the file's ELF header and section header table (same
 * indexes, names and links) minus the program headers; allocated sections
 * become SHT_NOBITS, and so do the debug sections no lookup reads
 * (unread_sections: the image serves dwarf_lines.c's lines and scopes
 * only), empty, neither copied nor decompressed.  The file is untrusted: its byte order must be the
 * host's, the section count is bounded by SYM_MAX_DEBUG_SECTIONS, each
 * declared decompressed size by SYM_MAX_DEBUG_SECTION and the image by
 * SYM_MAX_DEBUG_IMAGE, all checked before the caller allocates or writes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/symbols/symbols_internal.h"

/* Host byte order as an e_ident[EI_DATA] value. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

/*
 * Debug sections that libdw never reads for dwarf_lines.c: the unit index
 * (unit headers, unit DIEs, DW_AT_ranges), line tables (dwarf_getsrclines)
 * and scope walks (DIE attributes, dwarf_ranges, DW_AT_call_file) read
 * .debug_info, .debug_abbrev, .debug_line, .debug_str, .debug_line_str,
 * .debug_str_offsets, .debug_addr, .debug_ranges and .debug_rnglists;
 * location lists are only skipped over as attribute values, and
 * .debug_aranges would serve dwarf_addrdie, which is not called (the index
 * is built from the units).  libc's Debian debug file: 1.5 MiB of its
 * 10 MiB decompressed (.debug_loclists 1.4 MiB).  .debug_frame is not
 * here: a file whose only DWARF it is must still open as it did.  Images
 * outlive the recording (debug_cache.c): a change to this list or to the
 * layout bumps DEBUG_LAYOUT_VERSION (symbols_internal.h).
 */
static const char *const unread_sections[] = {
    ".debug_loclists",	   ".debug_loc",      ".debug_aranges",	 ".debug_macro",
    ".debug_macinfo",	   ".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
    ".debug_gnu_pubtypes", ".debug_names",    ".gdb_index",
};

static bool is_unread(const char *name)
{
	for (size_t i = 0; name && i < sizeof(unread_sections) / sizeof(unread_sections[0]); i++)
		if (!strcmp(name, unread_sections[i]))
			return true;
	return false;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a <= 1)
		return v;
	return (v + a - 1) / a * a;
}

/* Plans one section: what is copied or decompressed, its size and
 * alignment (nothing for an unread one).  0 or -EINVAL. */
static int plan_section(Elf_Scn *scn, const Elf64_Shdr *sh, const char *name, uint32_t kinds,
			struct debug_sec *z)
{
	Elf_Data *raw;
	Elf64_Chdr ch;

	z->align = sh->sh_addralign ? sh->sh_addralign : 1;
	if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_ALLOC) || sh->sh_size == 0)
		return 0;
	raw = elf_rawdata(scn, NULL);
	if (!raw || !raw->d_buf || raw->d_size != sh->sh_size)
		return -EINVAL;
	z->raw = raw->d_buf;
	z->raw_size = raw->d_size;
	z->size = sh->sh_size;
	if (!(sh->sh_flags & SHF_COMPRESSED)) {
		if (is_unread(name))
			*z = (struct debug_sec){.align = 1, .unread = true};
		return 0;
	}
	if (z->raw_size < sizeof(ch))
		return -EINVAL;
	memcpy(&ch, z->raw, sizeof(ch));
	if (ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != ELFCOMPRESS_ZSTD)
		return -EINVAL; /* unread or not: the caller reports the file */
	if (is_unread(name)) {
		*z = (struct debug_sec){.align = 1, .unread = true};
		return 0;
	}
	if (!(kinds & (1u << ch.ch_type)))
		return 0; /* copied compressed: libelf reads that kind itself */
	if (ch.ch_size > SYM_MAX_DEBUG_SECTION || ch.ch_addralign > 4096)
		return -EINVAL;
	z->ch_type = ch.ch_type;
	z->size = ch.ch_size;
	z->align = ch.ch_addralign ? ch.ch_addralign : 1;
	return 0;
}

int debug_layout__plan(Elf *elf, uint32_t kinds, struct debug_layout *l)
{
	size_t i, shstrndx;
	uint64_t off;
	int err = -EINVAL;

	memset(l, 0, sizeof(*l));
	l->eh = elf64_getehdr(elf);
	if (!l->eh || l->eh->e_ident[EI_DATA] != HOST_ELFDATA || elf_getshdrnum(elf, &l->shnum) ||
	    l->shnum == 0 || l->shnum > SYM_MAX_DEBUG_SECTIONS || elf_getshdrstrndx(elf, &shstrndx))
		goto cleanup;
	l->secs = calloc(l->shnum, sizeof(*l->secs));
	if (!l->secs) {
		err = -ENOMEM;
		goto cleanup;
	}
	off = sizeof(Elf64_Ehdr);
	for (i = 1; i < l->shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;

		if (!sh)
			goto cleanup;
		err = plan_section(scn, sh, elf_strptr(elf, shstrndx, sh->sh_name), kinds,
				   &l->secs[i]);
		if (err)
			goto cleanup;
		err = -EINVAL;
		off = align_up(off, l->secs[i].align);
		l->secs[i].offset = off;
		off += l->secs[i].size;
		if (off > SYM_MAX_DEBUG_IMAGE)
			goto cleanup;
	}
	l->shoff = align_up(off, 8);
	l->size = l->shoff + l->shnum * sizeof(Elf64_Shdr);
	if (l->size > SYM_MAX_DEBUG_IMAGE)
		goto cleanup;
	return 0;
cleanup:
	debug_layout__release(l);
	return err;
}

void debug_layout__ehdr(const struct debug_layout *l, Elf64_Ehdr *out)
{
	*out = *l->eh;
	out->e_phoff = 0;
	out->e_phnum = 0;
	out->e_phentsize = 0;
	out->e_shoff = l->shoff;
	out->e_shentsize = sizeof(Elf64_Shdr);
}

void debug_layout__shdr(Elf *elf, const struct debug_layout *l, size_t i, Elf64_Shdr *out)
{
	const struct debug_sec *z = &l->secs[i];

	*out = *elf64_getshdr(elf_getscn(elf, i));
	if (i == 0)
		return;
	if (out->sh_type != SHT_NOBITS && (out->sh_flags & SHF_ALLOC))
		out->sh_type = SHT_NOBITS;
	out->sh_offset = z->offset;
	if (z->unread) {
		out->sh_type = SHT_NOBITS;
		out->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		out->sh_size = 0;
	} else if (z->ch_type) {
		out->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
		out->sh_size = z->size;
		out->sh_addralign = z->align;
	}
}

void debug_layout__release(struct debug_layout *l)
{
	free(l->secs);
	memset(l, 0, sizeof(*l));
}
