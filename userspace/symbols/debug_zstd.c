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

/* Host byte order as an e_ident[EI_DATA] value. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_ELFDATA ELFDATA2LSB
#else
#define HOST_ELFDATA ELFDATA2MSB
#endif

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

static uint64_t align_up(uint64_t v, uint64_t a)
{
	if (a <= 1)
		return v;
	return (v + a - 1) / a * a;
}

/* Output size and alignment of one section (0 size for NOBITS/allocated). */
struct zsec {
	const Elf_Data *raw; /* file bytes, NULL when nothing is copied */
	uint64_t size;	     /* bytes in the image */
	uint64_t align;
	uint64_t offset;     /* in the image */
	bool zstd;	     /* raw is a zstd chdr + frames: decompress */
};

/* Plans section @i: what is copied, and its size.  0 or -EINVAL. */
static int plan_section(Elf_Scn *scn, const Elf64_Shdr *sh, struct zsec *z)
{
	Elf64_Chdr ch;

	z->align = sh->sh_addralign ? sh->sh_addralign : 1;
	if (sh->sh_type == SHT_NOBITS || (sh->sh_flags & SHF_ALLOC) || sh->sh_size == 0)
		return 0;
	z->raw = elf_rawdata(scn, NULL);
	if (!z->raw || !z->raw->d_buf || z->raw->d_size != sh->sh_size)
		return -EINVAL;
	z->size = sh->sh_size;
	if (!(sh->sh_flags & SHF_COMPRESSED) || chdr_type(z->raw) != ELFCOMPRESS_ZSTD)
		return 0;
	memcpy(&ch, z->raw->d_buf, sizeof(ch));
	if (ch.ch_size > SYM_MAX_DEBUG_SECTION || ch.ch_addralign > 4096)
		return -EINVAL;
	z->zstd = true;
	z->size = ch.ch_size;
	z->align = ch.ch_addralign ? ch.ch_addralign : 1;
	return 0;
}

/* Decompresses z's frames into out (exactly z->size bytes).  0 or -EINVAL. */
static int inflate_section(ZSTD_DCtx *dctx, const struct zsec *z, uint8_t *out)
{
	const uint8_t *src = (const uint8_t *)z->raw->d_buf + sizeof(Elf64_Chdr);
	size_t n = ZSTD_decompressDCtx(dctx, out, z->size, src, z->raw->d_size - sizeof(Elf64_Chdr));

	if (ZSTD_isError(n) || n != z->size)
		return -EINVAL;
	return 0;
}

int debug_zstd__image(Elf *elf, void **image, size_t *size)
{
	Elf64_Ehdr *eh = elf64_getehdr(elf);
	size_t shnum = 0, i;
	struct zsec *secs = NULL;
	ZSTD_DCtx *dctx = NULL;
	uint8_t *img = NULL;
	uint64_t off, shoff;
	int err = -EINVAL;

	*image = NULL;
	*size = 0;
	if (!eh || eh->e_ident[EI_DATA] != HOST_ELFDATA || elf_getshdrnum(elf, &shnum) ||
	    shnum == 0 || shnum > SYM_MAX_DEBUG_SECTIONS)
		goto cleanup;
	secs = calloc(shnum, sizeof(*secs));
	if (!secs) {
		err = -ENOMEM;
		goto cleanup;
	}
	off = sizeof(Elf64_Ehdr);
	for (i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;

		if (!sh)
			goto cleanup;
		err = plan_section(scn, sh, &secs[i]);
		if (err)
			goto cleanup;
		err = -EINVAL;
		off = align_up(off, secs[i].align);
		secs[i].offset = off;
		off += secs[i].size;
		if (off > SYM_MAX_DEBUG_IMAGE)
			goto cleanup;
	}
	shoff = align_up(off, 8);
	off = shoff + shnum * sizeof(Elf64_Shdr);
	if (off > SYM_MAX_DEBUG_IMAGE)
		goto cleanup;

	img = calloc(1, off);
	dctx = ZSTD_createDCtx();
	if (!img || !dctx) {
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(img, eh, sizeof(*eh));
	((Elf64_Ehdr *)img)->e_phoff = 0;
	((Elf64_Ehdr *)img)->e_phnum = 0;
	((Elf64_Ehdr *)img)->e_phentsize = 0;
	((Elf64_Ehdr *)img)->e_shoff = shoff;
	((Elf64_Ehdr *)img)->e_shentsize = sizeof(Elf64_Shdr);
	for (i = 0; i < shnum; i++) {
		Elf64_Shdr sh = *elf64_getshdr(elf_getscn(elf, i));
		struct zsec *z = &secs[i];

		if (i > 0) {
			if (sh.sh_type != SHT_NOBITS && (sh.sh_flags & SHF_ALLOC))
				sh.sh_type = SHT_NOBITS;
			sh.sh_offset = z->offset;
			if (z->zstd) {
				err = inflate_section(dctx, z, img + z->offset);
				if (err)
					goto cleanup;
				sh.sh_flags &= ~(uint64_t)SHF_COMPRESSED;
				sh.sh_size = z->size;
				sh.sh_addralign = z->align;
			} else if (z->raw) {
				memcpy(img + z->offset, z->raw->d_buf, z->size);
			}
		}
		memcpy(img + shoff + i * sizeof(Elf64_Shdr), &sh, sizeof(sh));
	}
	*image = img;
	*size = off;
	img = NULL;
	err = 0;
cleanup:
	ZSTD_freeDCtx(dctx);
	free(img);
	free(secs);
	return err;
}
