// SPDX-License-Identifier: MIT
/* ELF questions shared by the CPython detection and the probes search (elfscan.h). */
#include <string.h>

#include "elfscan.h"

bool elfscan__strtab_has(Elf *e, size_t ndx, const char *name)
{
	Elf_Scn *scn = elf_getscn(e, ndx);
	Elf_Data *d = scn ? elf_rawdata(scn, NULL) : NULL;

	return d && d->d_buf && memmem(d->d_buf, d->d_size, name, strlen(name) + 1);
}

uint64_t elfscan__first_load(Elf *e)
{
	uint64_t load = UINT64_MAX;
	size_t nph;

	if (elf_getphdrnum(e, &nph))
		return UINT64_MAX;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0 &&
		    ph.p_vaddr < load)
			load = ph.p_vaddr;
	}
	return load;
}
