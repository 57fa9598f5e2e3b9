// SPDX-License-Identifier: MIT
/*
 * A module's data object by name (symbols.h, sym_module__data_symbol): the
 * names tables hold functions only, so the file the module was read from
 * is read again, its .symtab then .dynsym searched for an STT_OBJECT.
 * Used once per process to find a JIT's __jit_debug_descriptor.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

/* Symbols searched at most per table (a bound on damaged files). */
#define DATA_SYMBOL_MAX (1u << 22)

int sym_module__data_symbol(const struct sym_module *m, const char *name, uint64_t *vaddr)
{
	int fd = sym_module__open_file(m), err = -ENOENT;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return fd;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -ENOEXEC;
	}
	for (int pass = 0; pass < 2 && err == -ENOENT; pass++) {
		uint32_t want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		scn = NULL;
		while (err == -ENOENT && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want || !sh.sh_entsize)
				continue;
			data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			size_t n = data->d_size / sh.sh_entsize;

			for (size_t i = 0; i < n && i < DATA_SYMBOL_MAX; i++) {
				GElf_Sym sym;
				const char *s;

				if (!gelf_getsym(data, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_OBJECT || !sym.st_value)
					continue;
				s = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (s && !strcmp(s, name)) {
					*vaddr = sym.st_value;
					err = 0;
					break;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}
