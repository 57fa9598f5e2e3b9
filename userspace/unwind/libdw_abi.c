/* SPDX-License-Identifier: MIT */
/*
 * libdw's x86-64 ABI default rules: probing whether they have rax and rbx
 * swapped (unwind__libdw_abi_slip, used by unwind_module.c's rows).
 */
#include <elf.h>
#include <elfutils/libdw.h>
#include <libelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/unwind/unwind_internal.h"

/*
 * elfutils' x86-64 backend (backends/x86_64_cfi.c, x86_64_abi_cfi) gives the
 * ABI's initial rules as "same value" for DWARF registers 0, 6, 12-16: its
 * comment says %rbx, but rbx is register 3 and register 0 is rax.  So for
 * every row where the CFI does not mention them, libdw answers rax "same
 * value" and rbx "undefined", the reverse of the psABI (section 3.2.1: rbx is
 * callee-saved, rax is not).  libdwfl's unwinder then loses rbx in every
 * frame that does not save it, and cannot unwind frames whose CFA is based on
 * rbx (ld.so's _dl_runtime_resolve_* use CFA = rbx + 16) unless the frame
 * below saved rbx.  The slip is probed once, on a synthetic one-FDE .eh_frame
 * with no rules for either register; when libdw shows it, compiled rows take
 * the psABI's defaults for these two registers instead: rax undefined when
 * libdw says same value, rbx same value when libdw says undefined.  (An
 * explicit DW_CFA_same_value for rax or DW_CFA_undefined for rbx would be
 * read the same way; neither is emitted by GCC or found in glibc.)
 */
static bool abi_slip;
static pthread_once_t abi_slip_once = PTHREAD_ONCE_INIT;

static void probe_abi_slip(void)
{
	/* ELF header, .eh_frame at 64 (48 bytes, vaddr 0x2000), .shstrtab, section headers. */
	static const uint8_t eh_frame[48] = {
	    /* CIE: length 20, id 0, version 1, "zR", code 1, data -8, ra 16,
	     * augmentation size 1, pcrel|sdata4, DW_CFA_def_cfa rsp 8,
	     * DW_CFA_offset rip 1 (CFA - 8), nop nop */
	    20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0,
	    0,
	    /* FDE: length 20, CIE pointer 28, pc 0x1000 (pcrel from 0x2000 + 32),
	     * range 16, augmentation size 0, nops */
	    20, 0, 0, 0, 28, 0, 0, 0, 0xe0, 0xef, 0xff, 0xff, 16, 0, 0, 0, 0, 0, 0, 0,
	    /* terminator */
	    0, 0, 0, 0};
	static const char strtab[] = "\0.eh_frame\0.shstrtab";
	union {
		uint8_t b[64 + sizeof(eh_frame) + 24 + 3 * sizeof(Elf64_Shdr)];
		Elf64_Ehdr align;
	} img;
	memset(&img, 0, sizeof(img));
	size_t str_off = 64 + sizeof(eh_frame), sh_off = str_off + 24;
	Elf64_Ehdr eh = {
	    .e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT},
	    .e_type = ET_DYN,
	    .e_machine = EM_X86_64,
	    .e_version = EV_CURRENT,
	    .e_shoff = sh_off,
	    .e_ehsize = sizeof(Elf64_Ehdr),
	    .e_shentsize = sizeof(Elf64_Shdr),
	    .e_shnum = 3,
	    .e_shstrndx = 2,
	};
	Elf64_Shdr sh[3] = {
	    {0},
	    {.sh_name = 1,
	     .sh_type = SHT_PROGBITS,
	     .sh_flags = SHF_ALLOC,
	     .sh_addr = 0x2000,
	     .sh_offset = 64,
	     .sh_size = sizeof(eh_frame),
	     .sh_addralign = 8},
	    {.sh_name = 11,
	     .sh_type = SHT_STRTAB,
	     .sh_offset = str_off,
	     .sh_size = sizeof(strtab),
	     .sh_addralign = 1},
	};
	memcpy(img.b, &eh, sizeof(eh));
	memcpy(img.b + 64, eh_frame, sizeof(eh_frame));
	memcpy(img.b + str_off, strtab, sizeof(strtab));
	memcpy(img.b + sh_off, sh, sizeof(sh));

	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)img.b, sizeof(img.b));
	Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	Dwarf_Frame *f = NULL;
	if (cfi && dwarf_cfi_addrframe(cfi, 0x1004, &f) == 0) {
		Dwarf_Op mem[3], *ops;
		size_t nops;
		bool rax_same =
		    dwarf_frame_register(f, 0, mem, &ops, &nops) == 0 && nops == 0 && ops == NULL;
		bool rbx_undef = dwarf_frame_register(f, UNWIND_REG_BX, mem, &ops, &nops) == 0 &&
				 nops == 0 && ops != NULL;
		abi_slip = rax_same && rbx_undef;
		free(f);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
}

bool unwind__libdw_abi_slip(void)
{
	pthread_once(&abi_slip_once, probe_abi_slip);
	return abi_slip;
}
