// SPDX-License-Identifier: MIT
/*
 * zstd-compressed debug sections (SHF_COMPRESSED with ch_type
 * ELFCOMPRESS_ZSTD, gABI 2022; objcopy --compress-debug-sections=zstd,
 * gcc >= 13 -gz=zstd) for libelf/libdw 0.188, which decompress only zlib:
 * the file's non-allocated sections are copied into one in-memory ELF image
 * in which every zstd section is decompressed (SHF_COMPRESSED cleared), and
 * that image is what libdw reads (elf_memory).  zlib-compressed (gABI) and
 * .zdebug (zlib-gnu) sections are copied as they are: libdw reads those.
 *
 * The image keeps the file's ELF header and section header table (same
 * indexes, names and links), minus the program headers; allocated sections
 * (code, data) become SHT_NOBITS, as in an objcopy --only-keep-debug file,
 * since DWARF lookups never read them.
 *
 * The file is untrusted: each section's declared decompressed size
 * (Elf64_Chdr.ch_size) is checked against SYM_MAX_DEBUG_SECTION and the
 * image's total against SYM_MAX_DEBUG_IMAGE before anything is allocated,
 * and a section must decompress to exactly its declared size.  Only ELF64
 * files in the host's byte order are rewritten (the chdr is read in place).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "userspace/symbols/symbols_internal.h"

/* ch_type of a compressed section's raw bytes, or 0 if too short. */
static uint32_t chdr_type(const Elf_Data *raw)
{
	uint32_t type;

	if (!raw || !raw->d_buf || raw->d_size < sizeof(Elf64_Chdr))
		return 0;
	memcpy(&type, raw->d_buf, sizeof(type));
	return type;
}

bool debug_zstd__present(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
		    sh.sh_type == SHT_NOBITS)
			continue;
		if (chdr_type(elf_rawdata(scn, NULL)) == ELFCOMPRESS_ZSTD)
			return true;
	}
	return false;
}

/* Decompresses z's frames into out (exactly z->size bytes).  0 or -EINVAL. */
static int inflate_section(ZSTD_DCtx *dctx, const struct debug_sec *z, uint8_t *out)
{
	const uint8_t *src = z->raw + sizeof(Elf64_Chdr);
	size_t n = ZSTD_decompressDCtx(dctx, out, z->size, src, z->raw_size - sizeof(Elf64_Chdr));

	if (ZSTD_isError(n) || n != z->size)
		return -EINVAL;
	return 0;
}

int debug_zstd__image(Elf *elf, void **image, size_t *size)
{
	struct debug_layout l;
	ZSTD_DCtx *dctx = NULL;
	uint8_t *img = NULL;
	Elf64_Ehdr eh;
	int err;

	*image = NULL;
	*size = 0;
	err = debug_layout__plan(elf, 1u << ELFCOMPRESS_ZSTD, &l);
	if (err)
		return err;
	img = calloc(1, l.size);
	dctx = ZSTD_createDCtx();
	if (!img || !dctx) {
		err = -ENOMEM;
		goto cleanup;
	}
	debug_layout__ehdr(&l, &eh);
	memcpy(img, &eh, sizeof(eh));
	for (size_t i = 0; i < l.shnum; i++) {
		const struct debug_sec *z = &l.secs[i];
		Elf64_Shdr sh;

		debug_layout__shdr(elf, &l, i, &sh);
		if (i > 0 && z->ch_type) {
			err = inflate_section(dctx, z, img + z->offset);
			if (err)
				goto cleanup;
		} else if (i > 0 && z->raw) {
			memcpy(img + z->offset, z->raw, z->size);
		}
		memcpy(img + l.shoff + i * sizeof(Elf64_Shdr), &sh, sizeof(sh));
	}
	*image = img;
	*size = l.size;
	img = NULL;
	err = 0;
cleanup:
	ZSTD_freeDCtx(dctx);
	free(img);
	debug_layout__release(&l);
	return err;
}
