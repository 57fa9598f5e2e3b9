// SPDX-License-Identifier: MIT
/*
 * The vdso: the kernel maps the same image into every process of an ABI,
 * so our own copy (getauxval(AT_SYSINFO_EHDR), auxv(3)) names the code
 * sampled in any 64-bit target.  The image is a complete ELF shared object;
 * its size is where its last program or section header or segment ends,
 * bounded by our [vdso] mapping.
 */
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "userspace/symbols/symbols_internal.h"

/* Sanity bound on the image (bytes); today's vdso is two to four pages. */
#define VDSO_MAX_SIZE (1u << 20)

/* Size of our [vdso] mapping in bytes, 0 if not found. */
static uint64_t vdso_mapping_size(uint64_t base)
{
	unsigned long long start, end;
	uint64_t size = 0;
	char line[512];
	FILE *f;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[vdso]"))
			continue;
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && start == base && end > start)
			size = end - start;
		break;
	}
	fclose(f);
	return size;
}

static uint64_t max_u64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Extent of a native-class ELF image from its own headers (trusted: it is
 * the kernel's image mapped into this process). */
static uint64_t vdso_image_size(const unsigned char *image, uint64_t limit)
{
	const ElfW(Ehdr) *eh = (const void *)image;
	uint64_t size;
	size_t i;

	if (limit < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return 0;
	size = max_u64(sizeof(*eh), eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize);
	size = max_u64(size, eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize);
	if (size > limit || eh->e_phentsize != sizeof(ElfW(Phdr)))
		return 0;
	for (i = 0; i < eh->e_phnum; i++) {
		const ElfW(Phdr) *ph = (const void *)(image + eh->e_phoff + i * sizeof(*ph));

		size = max_u64(size, ph->p_offset + ph->p_filesz);
	}
	return size <= limit ? size : 0;
}

int vdso__load(struct sym_module *m)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	uint64_t limit, size;
	struct elf_file f;
	ssize_t len;
	int err;

	if (!base) {
		sym_module__fail(m, SYM_ERR_NO_VDSO, "AT_SYSINFO_EHDR is 0");
		return 0;
	}
	limit = vdso_mapping_size(base);
	if (!limit || limit > VDSO_MAX_SIZE)
		limit = VDSO_MAX_SIZE;
	size = vdso_image_size((const unsigned char *)base, limit);
	if (!size) {
		sym_module__fail(m, SYM_ERR_BAD_ELF, "vdso image headers out of bounds");
		return 0;
	}

	err = elf_file__open_memory(&f, (const void *)base, size);
	if (err == -ENOMEM)
		goto cleanup;
	if (err) {
		sym_module__fail(m, f.why_kind, "%s", f.why);
		err = 0;
		goto cleanup;
	}
	m->size = size;
	len = elf_file__build_id(&f, m->build_id);
	m->build_id_len = len > 0 ? (size_t)len : 0;
	err = elf_module__load(m, &f);
cleanup:
	if (err)
		sym_module__fail(m, SYM_ERR_NOMEM, NULL);
	elf_file__release(&f);
	return err;
}
