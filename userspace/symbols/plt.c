// SPDX-License-Identifier: MIT
/*
 * Names for PLT entries ("func@plt", as perf and gdb show them): the
 * entries have no symbols, but each R_X86_64_JUMP_SLOT relocation in
 * .rela.plt names the function its entry jumps to through one .got.plt
 * slot.  Per the x86-64 psABI (section "Procedure Linkage Table"), entry j
 * uses .got.plt slot 3 + j; entries are 16 bytes each in .plt.sec when
 * present (IBT layout), else in .plt after its 16-byte header.  x86-64 only.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "userspace/symbols/symbols_internal.h"

#define PLT_ENTRY 16

/* The section called name (not NOBITS), or NULL. */
static Elf_Scn *find_scn(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int elf_file__add_plt(struct elf_file *f, struct sym_builder *b)
{
	GElf_Shdr rsh, psh, gsh, dsh;
	Elf_Scn *rscn, *pscn, *gscn, *dscn;
	Elf_Data *rdata, *ddata;
	GElf_Ehdr eh;
	size_t shstrndx, i, first;
	char name[512];

	if (!f->elf || !gelf_getehdr(f->elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(f->elf, &shstrndx))
		return 0;
	rscn = find_scn(f->elf, shstrndx, ".rela.plt", &rsh);
	if (!rscn || rsh.sh_type != SHT_RELA)
		return 0;
	first = 0;
	pscn = find_scn(f->elf, shstrndx, ".plt.sec", &psh);
	if (!pscn) {
		pscn = find_scn(f->elf, shstrndx, ".plt", &psh);
		first = 1; /* the header stub */
	}
	gscn = find_scn(f->elf, shstrndx, ".got.plt", &gsh);
	dscn = elf_getscn(f->elf, rsh.sh_link);
	if (!pscn || !gscn || !dscn || !gelf_getshdr(dscn, &dsh) || dsh.sh_type != SHT_DYNSYM)
		return 0;
	rdata = elf_getdata(rscn, NULL);
	ddata = elf_getdata(dscn, NULL);
	if (!rdata || !ddata)
		return 0;
	for (i = 0; i < SYM_MAX_SYMBOLS && i <= INT32_MAX; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		uint64_t slot, addr;
		const char *fn;
		int n, err;

		if (!gelf_getrela(rdata, (int)i, &r))
			break;
		if (GELF_R_TYPE(r.r_info) != R_X86_64_JUMP_SLOT || !GELF_R_SYM(r.r_info) ||
		    GELF_R_SYM(r.r_info) > INT32_MAX ||
		    !gelf_getsym(ddata, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		/* .got.plt entries 0..2 are reserved for the dynamic linker. */
		if (r.r_offset < gsh.sh_addr + 3 * 8 || (r.r_offset - gsh.sh_addr) % 8)
			continue;
		slot = (r.r_offset - gsh.sh_addr) / 8 - 3 + first;
		if (slot >= psh.sh_size / PLT_ENTRY)
			continue;
		addr = psh.sh_addr + slot * PLT_ENTRY;
		fn = elf_strptr(f->elf, dsh.sh_link, sym.st_name);
		if (!fn || !fn[0])
			continue;
		n = snprintf(name, sizeof(name), "%s@plt", fn);
		if (n < 0 || (size_t)n >= sizeof(name))
			continue;
		err = sym_builder__add(b, addr, PLT_ENTRY, psh.sh_addr + psh.sh_size, name,
				       (size_t)n, SYM_RANK_LOCAL, 0);
		if (err == -ENOMEM)
			return err;
		if (err)
			return 0;
	}
	return 0;
}
