// SPDX-License-Identifier: MIT
/*
 * Reading one ELF file or image through libelf: its build ID, its PT_LOAD
 * program headers, its function symbols (.symtab, .dynsym), and the
 * .symtab of its separate debug file.
 *
 * Files are read with ELF_C_READ (pread of the parts needed, bounded by the
 * file's size) rather than mmap, so a file truncated while being read gives
 * a libelf error instead of SIGBUS.  Every count and offset in the file is
 * untrusted; libelf bounds-checks section data and string offsets, and we
 * check what we index ourselves.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

static const char *libelf_why(void)
{
	const char *msg = elf_errmsg(-1);

	return msg ? msg : "unknown libelf error";
}

static bool range_inside(uint64_t offset, uint64_t len, uint64_t size)
{
	return offset <= size && len <= size - offset;
}

static int elf_file__bad(struct elf_file *f, const char *why)
{
	f->why = why ? why : libelf_why();
	f->why_kind = SYM_ERR_BAD_ELF;
	return -EINVAL;
}

/*
 * libelf reads headers lazily and treats some out-of-file tables as
 * absent; a truncated or overwritten file must not pass for a stripped one,
 * so check every table and segment against the size once, here.
 */
static int elf_file__validate(struct elf_file *f, const GElf_Ehdr *ehdr)
{
	size_t phnum, shnum, i;
	GElf_Phdr ph;
	GElf_Shdr sh;

	if (ehdr->e_shoff && !range_inside(ehdr->e_shoff, ehdr->e_shentsize, f->size))
		return elf_file__bad(f, "section headers past end of file");
	if (elf_getphdrnum(f->elf, &phnum))
		return elf_file__bad(f, NULL);
	if (phnum && !range_inside(ehdr->e_phoff, (uint64_t)phnum * ehdr->e_phentsize, f->size))
		return elf_file__bad(f, "program headers past end of file");
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return elf_file__bad(f, NULL);
		if (ph.p_type == PT_LOAD && !f->debug_only &&
		    !range_inside(ph.p_offset, ph.p_filesz, f->size))
			return elf_file__bad(f, "PT_LOAD segment past end of file");
	}
	if (elf_getshdrnum(f->elf, &shnum))
		return elf_file__bad(f, NULL);
	/* libelf drops a section header table that does not fit: use the
	 * header's count unless it is 0 (extended numbering, ELF gABI). */
	if (ehdr->e_shnum)
		shnum = shnum > ehdr->e_shnum ? shnum : ehdr->e_shnum;
	if (shnum && !range_inside(ehdr->e_shoff, (uint64_t)shnum * ehdr->e_shentsize, f->size))
		return elf_file__bad(f, "section headers past end of file");
	for (i = 1; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(f->elf, i);

		if (!scn || !gelf_getshdr(scn, &sh))
			return elf_file__bad(f, NULL);
		if (sh.sh_type != SHT_NOBITS && !range_inside(sh.sh_offset, sh.sh_size, f->size))
			return elf_file__bad(f, "section past end of file");
	}
	return 0;
}

static int elf_file__check(struct elf_file *f)
{
	GElf_Ehdr ehdr;

	if (!f->elf) {
		f->why = libelf_why();
		f->why_kind = SYM_ERR_BAD_ELF;
		return -EINVAL;
	}
	if (elf_kind(f->elf) != ELF_K_ELF) {
		f->why = "no ELF header";
		f->why_kind = SYM_ERR_NOT_ELF;
		return -EINVAL;
	}
	if (!gelf_getehdr(f->elf, &ehdr))
		return elf_file__bad(f, NULL);
	return elf_file__validate(f, &ehdr);
}

int elf_file__open_fd(struct elf_file *f, int fd)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	if (fstat(fd, &st))
		return elf_file__bad(f, "cannot stat");
	f->size = (uint64_t)st.st_size;
	f->elf = elf_begin(fd, ELF_C_READ, NULL);
	return elf_file__check(f);
}

int elf_file__open_debug_fd(struct elf_file *f, int fd)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->debug_only = true;
	if (fstat(fd, &st))
		return elf_file__bad(f, "cannot stat");
	f->size = (uint64_t)st.st_size;
	f->elf = elf_begin(fd, ELF_C_READ, NULL);
	return elf_file__check(f);
}

bool elf_file__has_section(struct elf_file *f, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (!f->elf || elf_getshdrstrndx(f->elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return true;
	}
	return false;
}

static bool elf_file__has_dwarf(struct elf_file *f)
{
	return elf_file__has_section(f, ".debug_info") || elf_file__has_section(f, ".zdebug_info");
}

/* Keeps a descriptor of f for reading its DWARF later (dwarf_lines.c). */
static int elf_module__keep_dwarf(struct sym_module *m, struct elf_file *f, const char *path)
{
	int fd;

	if (m->dwarf_fd >= 0 || f->fd < 0 || !elf_file__has_dwarf(f))
		return 0;
	fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return errno == ENOMEM ? -ENOMEM : 0;
	m->dwarf_path = strdup(path ? path : m->path);
	if (!m->dwarf_path) {
		close(fd);
		return -ENOMEM;
	}
	m->dwarf_fd = fd;
	return 0;
}

static int elf_file__open_image(struct elf_file *f, const void *image, size_t size, bool debug)
{
	memset(f, 0, sizeof(*f));
	f->debug_only = debug;
	f->fd = -1;
	f->image = malloc(size ? size : 1);
	if (!f->image) {
		f->why = "out of memory";
		f->why_kind = SYM_ERR_NOMEM;
		return -ENOMEM;
	}
	memcpy(f->image, image, size);
	f->size = size;
	f->elf = elf_memory(f->image, size);
	return elf_file__check(f);
}

int elf_file__open_memory(struct elf_file *f, const void *image, size_t size)
{
	return elf_file__open_image(f, image, size, false);
}

int elf_file__open_debug_memory(struct elf_file *f, const void *image, size_t size)
{
	return elf_file__open_image(f, image, size, true);
}

void elf_file__release(struct elf_file *f)
{
	if (!f)
		return;
	if (f->elf)
		elf_end(f->elf);
	free(f->image);
	if (f->owns_fd)
		close(f->fd);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

ssize_t elf_file__build_id(struct elf_file *f, uint8_t *out)
{
	const void *bits;
	ssize_t len;

	/* Section notes, else PT_NOTE segments when there are no sections. */
	len = dwelf_elf_gnu_build_id(f->elf, &bits);
	if (len < 0) {
		f->why = "malformed build ID note";
		f->why_kind = SYM_ERR_BAD_ELF;
		return -EINVAL;
	}
	if (len == 0)
		return 0;
	if (len > SYM_BUILD_ID_MAX) {
		f->why = "build ID longer than 64 bytes";
		f->why_kind = SYM_ERR_BAD_ELF;
		return -EINVAL;
	}
	memcpy(out, bits, (size_t)len);
	return len;
}

static int elf_file__read_loads(struct elf_file *f, struct sym_module *m)
{
	struct sym_load *loads = NULL;
	size_t phnum, i, n = 0;
	GElf_Phdr ph;
	int err = 0;

	if (elf_getphdrnum(f->elf, &phnum)) {
		f->why = libelf_why();
		f->why_kind = SYM_ERR_BAD_ELF;
		return -EINVAL;
	}
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &ph)) {
			f->why = libelf_why();
			f->why_kind = SYM_ERR_BAD_ELF;
			err = -EINVAL;
			goto cleanup;
		}
		if (ph.p_type == PT_LOAD)
			n++;
	}
	if (!n)
		goto cleanup;
	loads = calloc(n, sizeof(*loads));
	if (!loads) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0, n = 0; i < phnum; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		loads[n].offset = ph.p_offset;
		loads[n].filesz = ph.p_filesz;
		loads[n].memsz = ph.p_memsz;
		loads[n].vaddr = ph.p_vaddr;
		loads[n].align = ph.p_align;
		n++;
	}
	m->loads = loads;
	m->nr_loads = n;
	loads = NULL;
cleanup:
	free(loads);
	return err;
}

/* What a symbol's section tells about it. */
struct scn_info {
	uint64_t end; /* sh_addr + sh_size: unsized symbols stop here */
	bool known;
	bool exec;
};

static int elf_file__scn_infos(struct elf_file *f, struct scn_info **out, size_t *count)
{
	struct scn_info *info;
	size_t shnum, i;
	GElf_Shdr sh;

	if (elf_getshdrnum(f->elf, &shnum)) {
		f->why = libelf_why();
		f->why_kind = SYM_ERR_BAD_ELF;
		return -EINVAL;
	}
	info = calloc(shnum ? shnum : 1, sizeof(*info));
	if (!info)
		return -ENOMEM;
	for (i = 0; i < shnum; i++) {
		Elf_Scn *scn = elf_getscn(f->elf, i);

		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		info[i].known = true;
		info[i].exec = (sh.sh_flags & SHF_EXECINSTR) != 0;
		info[i].end =
		    sh.sh_addr > UINT64_MAX - sh.sh_size ? UINT64_MAX : sh.sh_addr + sh.sh_size;
	}
	*out = info;
	*count = shnum;
	return 0;
}

static uint32_t sym_rank(const GElf_Sym *sym)
{
	uint32_t rank;

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		rank = SYM_RANK_GLOBAL;
		break;
	case STB_WEAK:
		rank = SYM_RANK_WEAK;
		break;
	default:
		rank = SYM_RANK_LOCAL;
		break;
	}
	if (GELF_ST_TYPE(sym->st_info) != STT_NOTYPE)
		rank |= SYM_RANK_TYPED;
	return rank;
}

static int elf_file__add_table(struct elf_file *f, Elf_Scn *scn, const GElf_Shdr *sh,
			       const struct scn_info *info, size_t shnum, struct sym_builder *b)
{
	Elf_Data *data;
	GElf_Sym sym;
	size_t i;
	int err;

	data = elf_getdata(scn, NULL);
	if (!data) {
		f->why = libelf_why();
		f->why_kind = SYM_ERR_BAD_ELF;
		return -EINVAL;
	}
	/* Room for every entry and the whole string table (section sizes were
	 * checked against the file size, so this is bounded by it). */
	if (sh->sh_link < shnum) {
		size_t entsize = gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT);
		Elf_Scn *strscn = elf_getscn(f->elf, sh->sh_link);
		GElf_Shdr strsh;

		if (strscn && gelf_getshdr(strscn, &strsh) && entsize) {
			err = sym_builder__reserve(b, data->d_size / entsize, strsh.sh_size);
			if (err == -ENOMEM)
				return err;
		}
	}
	/* Entry 0 is the reserved null symbol; gelf_getsym stops at d_size. */
	for (i = 1; gelf_getsym(data, (int)i, &sym); i++) {
		int type = GELF_ST_TYPE(sym.st_info);
		uint64_t limit = UINT64_MAX;
		bool exec = false;
		const char *name;

		if (i > SYM_MAX_SYMBOLS || i > INT32_MAX) {
			f->why = "symbol table too large";
			f->why_kind = SYM_ERR_BAD_ELF;
			return -EINVAL;
		}
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_name == 0)
			continue;
		if (sym.st_shndx < SHN_LORESERVE) {
			if (sym.st_shndx >= shnum || !info[sym.st_shndx].known)
				continue;
			exec = info[sym.st_shndx].exec;
			limit = info[sym.st_shndx].end;
		} else if (sym.st_shndx != SHN_XINDEX) {
			continue; /* SHN_ABS, SHN_COMMON: not code */
		}
		/* Untyped symbols count only in code: hand-written assembly. */
		if (type == STT_NOTYPE && !exec)
			continue;
		name = elf_strptr(f->elf, sh->sh_link, sym.st_name);
		/* ".L..", ".annobin_..", "$x": assembler and tool markers */
		if (!name || !name[0] || name[0] == '.' || name[0] == '$')
			continue;
		err = sym_builder__add(b, sym.st_value, sym.st_size, limit, name, strlen(name),
				       sym_rank(&sym), 0);
		if (err == -E2BIG) {
			f->why = "symbol table too large";
			f->why_kind = SYM_ERR_BAD_ELF;
			return -EINVAL;
		}
		if (err)
			return err;
	}
	return 0;
}

/* Adds the function symbols of every section of the given type (SHT_SYMTAB
 * or SHT_DYNSYM).  Returns 0, -EINVAL (f->why set), or -ENOMEM. */
int elf_file__add_symbols(struct elf_file *f, GElf_Word type, struct sym_builder *b)
{
	struct scn_info *info = NULL;
	Elf_Scn *scn = NULL;
	size_t shnum = 0;
	GElf_Shdr sh;
	int err;

	err = elf_file__scn_infos(f, &info, &shnum);
	if (err)
		goto cleanup;
	while ((scn = elf_nextscn(f->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		err = elf_file__add_table(f, scn, &sh, info, shnum, b);
		if (err)
			goto cleanup;
	}
cleanup:
	free(info);
	return err;
}

/* Merges the .symtab of the separate debug file, if one matches.  A broken
 * debug file is skipped (its candidates rolled back), never fatal. */
static int elf_module__add_debug_file(struct sym_module *m, struct elf_file *f,
				      struct sym_builder *b)
{
	struct debug_query q = {
	    .build_id = m->build_id,
	    .build_id_len = m->build_id_len,
	    .path = m->path,
	    .cfg = m->cfg,
	};
	size_t n0 = b->n, names0 = b->names_len;
	struct elf_file dbg;
	char *path = NULL;
	int err;

	GElf_Word crc;

	q.debuglink = f->elf ? dwelf_elf_gnu_debuglink(f->elf, &crc) : NULL;
	if (q.debuglink)
		q.debuglink_crc = crc;
	err = debug_file__find(&q, &dbg, &path);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	err = elf_file__add_symbols(&dbg, SHT_SYMTAB, b);
	if (!err)
		err = elf_module__keep_dwarf(m, &dbg, path);
	elf_file__release(&dbg);
	if (err) {
		b->n = n0;
		b->names_len = names0;
		free(path);
		return err == -EINVAL ? 0 : err;
	}
	m->debug_path = path;
	return 0;
}

int elf_module__load(struct sym_module *m, struct elf_file *f)
{
	struct sym_builder b;
	int err;

	sym_builder__init(&b);
	err = elf_file__read_loads(f, m);
	if (err)
		goto cleanup;
	err = elf_file__add_symbols(f, SHT_SYMTAB, &b);
	if (err)
		goto cleanup;
	err = elf_file__add_symbols(f, SHT_DYNSYM, &b);
	if (err)
		goto cleanup;
	err = elf_file__add_plt(f, &b);
	if (err)
		goto cleanup;
	err = elf_module__add_debug_file(m, f, &b);
	if (err)
		goto cleanup;
	/* No separate debug file with DWARF: the module's own, if any. */
	if (!f->debug_only || m->dwarf_fd < 0) {
		err = elf_module__keep_dwarf(m, f, m->tried ? m->tried : m->path);
		if (err)
			goto cleanup;
	}
	if (!m->debug_path) {
		err = minidebug__add_symbols(f, &b);
		if (err < 0)
			goto cleanup;
		m->minidebuginfo = err > 0;
		err = 0;
	}
	err = sym_builder__finish(&b, m);
cleanup:
	sym_builder__release(&b);
	if (err == -EINVAL) {
		sym_module__fail(m, f->why_kind, "%s", f->why);
		err = 0;
	} else if (err) {
		sym_module__fail(m, SYM_ERR_NOMEM, NULL);
	}
	return err;
}
