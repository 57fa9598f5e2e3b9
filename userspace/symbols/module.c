// SPDX-License-Identifier: MIT
/*
 * struct sym_module: lifetime, failure recording, and the read-only
 * accessors of symbols.h (identity, file offset to vaddr, lookup).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "userspace/symbols/symbols_internal.h"

// clang-format off
static const char *const sym_error_texts[] = {
	[SYM_ERR_NONE] = "",
#define SYM_ERR_TEXT(name, text) [name] = text,
	SYM_ERRORS(SYM_ERR_TEXT)
#undef SYM_ERR_TEXT
};
// clang-format on

const char *sym_error__text(enum sym_error e)
{
	if ((size_t)e >= sizeof(sym_error_texts) / sizeof(sym_error_texts[0]))
		return "unknown error";
	return sym_error_texts[e];
}

void sym_hex(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}

struct sym_module *sym_module__new(const char *path)
{
	struct sym_module *m;

	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->dwarf_fd = -1;
	m->pin_fd = -1;
	m->path = strdup(path ? path : "");
	if (!m->path) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void sym_module__free(struct sym_module *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->tried);
	free(m->error);
	free(m->debug_path);
	free(m->loads);
	free(m->starts);
	free(m->syms);
	free(m->names);
	kallsyms_static__free(m->kstatic);
	sym_module__close_dwarf(m);
	if (m->dwarf_fd >= 0)
		close(m->dwarf_fd);
	if (m->pin_fd >= 0)
		close(m->pin_fd);
	free(m->dwarf_path);
	free(m->dwarf_error);
	free(m);
}

void sym_module__fail(struct sym_module *m, enum sym_error kind, const char *fmt, ...)
{
	char detail[512];
	const char *text = sym_error__text(kind);
	va_list ap;
	size_t len;

	free(m->loads);
	free(m->starts);
	free(m->syms);
	free(m->names);
	free(m->debug_path);
	m->loads = NULL;
	m->nr_loads = 0;
	m->starts = NULL;
	m->syms = NULL;
	m->nr_syms = 0;
	m->names = NULL;
	m->names_len = 0;
	m->debug_path = NULL;
	sym_module__close_dwarf(m);
	m->dwarf_ok = false;
	if (m->dwarf_fd >= 0)
		close(m->dwarf_fd);
	m->dwarf_fd = -1;
	if (m->pin_fd >= 0)
		close(m->pin_fd);
	m->pin_fd = -1;

	free(m->error);
	m->error = NULL;
	m->error_kind = kind;
	if (!fmt)
		return; /* sym_module__error() falls back to the kind's text */

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	len = strlen(text) + 2 + strlen(detail) + 1;
	m->error = malloc(len);
	if (m->error)
		snprintf(m->error, len, "%s: %s", text, detail);
}

bool sym_module__to_vaddr(struct sym_module *m, uint64_t file_offset, uint64_t *vaddr)
{
	const struct sym_load *l;
	size_t i;

	*vaddr = file_offset;
	if (!m)
		return false;
	if (m->is_kernel)
		return true;
	for (i = 0; i < m->nr_loads; i++) {
		l = &m->loads[i];
		if (file_offset >= l->offset && file_offset - l->offset < l->filesz) {
			*vaddr = l->vaddr + (file_offset - l->offset);
			return true;
		}
	}
	/*
	 * The mapping covers whole pages: bytes in the page holding a
	 * segment's first or last file byte are mapped at the same delta
	 * (the ELF gABI requires p_offset == p_vaddr modulo the page size).
	 */
	for (i = 0; i < m->nr_loads; i++) {
		uint64_t lo, hi;

		l = &m->loads[i];
		lo = l->offset & ~(uint64_t)4095;
		hi = l->offset + l->filesz;
		if (hi < l->offset || hi > UINT64_MAX - 4095)
			continue;
		hi = (hi + 4095) & ~(uint64_t)4095;
		if (file_offset >= lo && file_offset < hi) {
			*vaddr = l->vaddr + (file_offset - l->offset);
			return true;
		}
	}
	return false;
}

const char *sym_module__lookup(struct sym_module *m, uint64_t vaddr, uint64_t *offset)
{
	size_t i;

	if (!m)
		return NULL;
	/* The kernel's cached static table: elsewhere the live one decides. */
	if (m->kstatic && !kallsyms_static__covers(m->kstatic, vaddr))
		kallsyms_static__go_live(m, vaddr);
	i = sym_table__find(m, vaddr);
	if (i == SIZE_MAX)
		return NULL;
	if (offset)
		*offset = vaddr - m->starts[i];
	return m->names + m->syms[i].name;
}

const char *sym_module__symbol(const struct sym_module *m, size_t index, uint64_t *start,
			       uint64_t *end)
{
	if (!m || index >= m->nr_syms)
		return NULL;
	if (start)
		*start = m->starts[index];
	if (end)
		*end = m->syms[index].end;
	return m->names + m->syms[index].name;
}

const uint8_t *sym_module__build_id(const struct sym_module *m, size_t *len)
{
	*len = m ? m->build_id_len : 0;
	return m && m->build_id_len ? m->build_id : NULL;
}

uint64_t sym_module__size(const struct sym_module *m) { return m ? m->size : 0; }

uint64_t sym_module__content_hash(const struct sym_module *m) { return m ? m->content_hash : 0; }

const char *sym_module__path(const struct sym_module *m) { return m ? m->path : NULL; }

const char *sym_module__error(const struct sym_module *m)
{
	if (!m)
		return NULL;
	if (m->error)
		return m->error;
	return m->error_kind == SYM_ERR_NONE ? NULL : sym_error__text(m->error_kind);
}

size_t sym_module__symbol_count(const struct sym_module *m) { return m ? m->nr_syms : 0; }

const char *sym_module__debug_path(const struct sym_module *m) { return m ? m->debug_path : NULL; }

bool sym_module__minidebuginfo(const struct sym_module *m) { return m && m->minidebuginfo; }

int sym_module__open_file(const struct sym_module *m)
{
	struct stat st;
	int fd;

	if (!m || !m->has_file_key || m->is_kernel ||
	    m->error_kind == SYM_ERR_BUILD_ID_MISMATCH)
		return -ENOENT;
	if (m->pin_fd >= 0) {
		fd = fcntl(m->pin_fd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -errno : fd;
	}
	if (m->path[0] != '/')
		return -ENOENT;
	fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != m->file_key.dev ||
	    (uint64_t)st.st_ino != m->file_key.ino || (uint64_t)st.st_size != m->file_key.size ||
	    st.st_mtim.tv_sec != m->file_key.mtime_sec ||
	    st.st_mtim.tv_nsec != m->file_key.mtime_nsec) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}
