// SPDX-License-Identifier: MIT
/*
 * MiniDebugInfo: Fedora's and others' stripped binaries carry a small
 * xz-compressed ELF image in the section .gnu_debugdata holding a .symtab of
 * the functions .dynsym lacks (GDB manual, "MiniDebugInfo").  It has no
 * DWARF, so it gives names, never lines.
 *
 * The section is untrusted: liblzma decodes it with a memory limit, the
 * output is capped at MINIDEBUG_MAX_IMAGE bytes, and the image is then read
 * like any other ELF (elf_file__open_memory checks its tables).
 */
#include <errno.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/symbols/symbols_internal.h"

/* Largest decompressed image accepted (bytes). */
#define MINIDEBUG_MAX_IMAGE (256u << 20)
/* liblzma decoder memory limit (bytes). */
#define MINIDEBUG_MEMLIMIT (128u << 20)

static Elf_Data *section_named(struct elf_file *f, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (!f->elf || elf_getshdrstrndx(f->elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return elf_rawdata(scn, NULL);
	}
	return NULL;
}

/* xz-decodes in[0..len) into a malloc'd *out of *out_len bytes.  0, -EINVAL,
 * -ENOMEM. */
static int xz_decode(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = len * 4 > 65536 ? len * 4 : 65536;
	uint8_t *buf = NULL;
	lzma_ret ret;
	int err = -EINVAL;

	if (lzma_stream_decoder(&strm, MINIDEBUG_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	strm.next_in = in;
	strm.avail_in = len;
	strm.next_out = buf;
	strm.avail_out = cap;
	for (;;) {
		ret = lzma_code(&strm, LZMA_FINISH);
		if (ret == LZMA_STREAM_END)
			break;
		if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
			goto cleanup;
		if (strm.avail_out == 0) {
			size_t used = cap;
			uint8_t *nb;

			if (cap >= MINIDEBUG_MAX_IMAGE)
				goto cleanup;
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nb;
			strm.next_out = buf + used;
			strm.avail_out = cap - used;
		} else if (ret == LZMA_BUF_ERROR) {
			goto cleanup; /* truncated input */
		}
	}
	*out = buf;
	*out_len = cap - strm.avail_out;
	buf = NULL;
	err = 0;
cleanup:
	lzma_end(&strm);
	free(buf);
	return err;
}

int minidebug__add_symbols(struct elf_file *f, struct sym_builder *b)
{
	Elf_Data *d = section_named(f, ".gnu_debugdata");
	struct elf_file img = {.fd = -1};
	size_t n0 = b->n, names0 = b->names_len, len = 0;
	uint8_t *image = NULL;
	int err;

	if (!d || !d->d_buf || !d->d_size)
		return 0;
	err = xz_decode(d->d_buf, d->d_size, &image, &len);
	if (err)
		return err == -ENOMEM ? err : 0;
	err = elf_file__open_debug_memory(&img, image, len);
	free(image);
	if (err) {
		elf_file__release(&img);
		return err == -ENOMEM ? err : 0;
	}
	err = elf_file__add_symbols(&img, SHT_SYMTAB, b);
	elf_file__release(&img);
	if (err == -ENOMEM)
		return err;
	if (err) {
		b->n = n0;
		b->names_len = names0;
		return 0;
	}
	return b->n > n0 ? 1 : 0;
}
