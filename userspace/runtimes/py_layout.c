// SPDX-License-Identifier: MIT
/*
 * CPython layouts: per-version tables (3.10-3.12), the validated
 * _Py_DebugOffsets of 3.13, and reading version and _PyRuntime from the ELF.
 * Offsets were taken from the x86-64 release builds (pyenv 3.10.13, 3.11.7,
 * 3.12.1; gdb ptype/o) and are checked against their DWARF by
 * tests/unit/test_python.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "py_layout.h"
#include "userspace/elfscan/elfscan.h"

#define NF MS_PY_NO_FIELD

static void layout__common(struct py_layout *l, uint32_t version_hex)
{
	memset(l, 0, sizeof(*l));
	l->bpf.version_hex = version_hex;
	l->bpf.cstack_owner = 0xff;
	l->bytes_size = 16; /* PyVarObject.ob_size */
	l->bytes_sval = 32; /* after ob_shash */
	l->unicode_length = 16;
	l->unicode_state = 32;
}

int py_layout__from_table(uint32_t version_hex, struct py_layout *l)
{
	struct ms_py_layout *b = &l->bpf;
	uint32_t minor = (version_hex >> 16) & 0xff;

	if ((version_hex >> 24) != 3)
		return -ENOTSUP;
	layout__common(l, version_hex);
	switch (minor) {
	case 10:
		*b = (struct ms_py_layout){
			.version_hex = version_hex,
			.flags = MS_PY_L_EVERY_FRAME_ENTRY | MS_PY_L_TID_IS_PTHREAD,
			.rt_interp_head = 32, .interp_next = 0, .interp_threads_head = 8,
			.ts_next = 8, .ts_native_tid = NF, .ts_thread_id = 176, .ts_frame = 24,
			.cframe_frame = NF, .fr_previous = 24, .fr_code = 32, .fr_instr = 96,
			.fr_is_entry = NF, .fr_owner = NF, .fr_read = 104,
			.code_firstlineno = 40, .code_name = 112, .code_adaptive = NF,
			.frame_kind = MS_PY_FRAMES_OBJECTS, .cstack_owner = 0xff,
		};
		l->code_qualname = NF;
		l->code_filename = 104;
		l->code_linetable = 120;
		l->code_size = 176;
		l->ascii_size = 48;
		l->compact_size = 72;
		l->lines = PY_LINES_LNOTAB310;
		return 0;
	case 11:
		*b = (struct ms_py_layout){
			.version_hex = version_hex,
			.rt_interp_head = 40, .interp_next = 0, .interp_threads_head = 16,
			.ts_next = 8, .ts_native_tid = 160, .ts_thread_id = 152, .ts_frame = 56,
			.cframe_frame = 8, .fr_previous = 48, .fr_code = 32, .fr_instr = 56,
			.fr_is_entry = 68, .fr_owner = 69, .fr_read = 72,
			.code_firstlineno = 72, .code_name = 120, .code_adaptive = 184,
			.frame_kind = MS_PY_FRAMES_INTERP, .cstack_owner = 0xff,
		};
		l->code_qualname = 128;
		l->code_filename = 112;
		l->code_linetable = 136;
		l->code_size = 192;
		l->ascii_size = 48;
		l->compact_size = 72;
		l->lines = PY_LINES_LOCATIONS;
		return 0;
	case 12:
		*b = (struct ms_py_layout){
			.version_hex = version_hex,
			.rt_interp_head = 40, .interp_next = 0, .interp_threads_head = 72,
			.ts_next = 8, .ts_native_tid = 144, .ts_thread_id = 136, .ts_frame = 56,
			.cframe_frame = 0, .fr_previous = 8, .fr_code = 0, .fr_instr = 56,
			.fr_is_entry = NF, .fr_owner = 70, .fr_read = 72,
			.code_firstlineno = 68, .code_name = 120, .code_adaptive = 192,
			.frame_kind = MS_PY_FRAMES_INTERP,
			.cstack_owner = 3, /* FRAME_OWNED_BY_CSTACK, pycore_frame.h */
		};
		l->code_qualname = 128;
		l->code_filename = 112;
		l->code_linetable = 136;
		l->code_size = 200;
		l->ascii_size = 40;
		l->compact_size = 56;
		l->lines = PY_LINES_LOCATIONS;
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* ---- 3.13 _Py_DebugOffsets ------------------------------------------------ */

/* Offsets of the fields of the 3.13 _Py_DebugOffsets we use (its own layout,
 * pycore_runtime.h of 3.13; every field a uint64_t). */
enum {
	DO_COOKIE = 0, DO_VERSION = 8, DO_FREE_THREADED = 16,
	DO_RT_SIZE = 24, DO_RT_INTERP_HEAD = 40,
	DO_IS_SIZE = 48, DO_IS_NEXT = 64, DO_IS_THREADS_HEAD = 72,
	DO_TS_SIZE = 152, DO_TS_NEXT = 168, DO_TS_CURRENT_FRAME = 184, DO_TS_THREAD_ID = 192,
	DO_TS_NATIVE_THREAD_ID = 200,
	DO_FR_SIZE = 224, DO_FR_PREVIOUS = 232, DO_FR_EXECUTABLE = 240, DO_FR_INSTR_PTR = 248,
	DO_FR_OWNER = 264,
	DO_CO_SIZE = 272, DO_CO_FILENAME = 280, DO_CO_NAME = 288, DO_CO_QUALNAME = 296,
	DO_CO_LINETABLE = 304, DO_CO_FIRSTLINENO = 312, DO_CO_ADAPTIVE = 344,
	DO_BYTES_SIZE = 512, DO_BYTES_OB_SIZE = 520, DO_BYTES_SVAL = 528,
	DO_UNI_SIZE = 536, DO_UNI_STATE = 544, DO_UNI_LENGTH = 552, DO_UNI_ASCII_SIZE = 560,
};

struct do_check {
	const uint8_t *img;
	char *why;
	size_t why_len;
	int err;
};

static uint64_t do__u64(const struct do_check *c, size_t off)
{
	uint64_t v;

	memcpy(&v, c->img + off, sizeof(v));
	return v;
}

static void do__fail(struct do_check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return;
	c->err = -EINVAL;
	if (c->why && c->why_len) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->why_len, fmt, ap);
		va_end(ap);
	}
}

/* A structure size at off: within [min, max] bytes. */
static uint64_t do__size(struct do_check *c, size_t off, const char *name, uint64_t min,
			 uint64_t max)
{
	uint64_t v = do__u64(c, off);

	if (v < min || v > max)
		do__fail(c, "%s size %llu outside %llu..%llu", name, (unsigned long long)v,
			 (unsigned long long)min, (unsigned long long)max);
	return v;
}

/* A field offset at off of width bytes inside a structure of size bytes,
 * aligned to its width and below limit (the u16 or read window it goes to). */
static uint16_t do__field(struct do_check *c, size_t off, const char *name, uint64_t width,
			  uint64_t size, uint64_t limit)
{
	uint64_t v = do__u64(c, off);

	if (v > size || width > size - v)
		do__fail(c, "%s at %llu spans past its structure (%llu bytes)", name,
			 (unsigned long long)v, (unsigned long long)size);
	else if (v % width)
		do__fail(c, "%s at %llu is not %llu-aligned", name, (unsigned long long)v,
			 (unsigned long long)width);
	else if (v + width > limit)
		do__fail(c, "%s at %llu is beyond %llu", name, (unsigned long long)v,
			 (unsigned long long)limit);
	return c->err ? 0 : (uint16_t)v;
}

int py_layout__from_debug_offsets(const uint8_t *img, size_t len, uint32_t version_hex,
				  struct py_layout *l, char *why, size_t why_len)
{
	struct do_check c = { .img = img, .why = why, .why_len = why_len };
	struct ms_py_layout *b = &l->bpf;
	uint64_t version, rt, is, ts, fr, co, by, un;

	if (why && why_len)
		why[0] = '\0';
	if (!img || len < PY_DEBUG_OFFSETS_313_SIZE) {
		do__fail(&c, "debug offsets truncated: %zu of %d bytes", img ? len : 0,
			 PY_DEBUG_OFFSETS_313_SIZE);
		return c.err;
	}
	if (memcmp(img + DO_COOKIE, "xdebugpy", 8)) {
		do__fail(&c, "no _Py_DebugOffsets cookie");
		return c.err;
	}
	version = do__u64(&c, DO_VERSION);
	if ((version >> 16) != 0x030d) {
		do__fail(&c, "debug offsets of version 0x%llx; this reader knows 3.13",
			 (unsigned long long)version);
		return (version >> 24) == 3 && ((version >> 16) & 0xff) > 13 ? -ENOTSUP : c.err;
	}
	if (version_hex && version != version_hex) {
		do__fail(&c, "debug offsets say version 0x%llx, the binary 0x%x",
			 (unsigned long long)version, version_hex);
		return c.err;
	}
	if (do__u64(&c, DO_FREE_THREADED)) {
		do__fail(&c, "free-threaded CPython is not supported");
		return -ENOTSUP;
	}
	layout__common(l, (uint32_t)version);
	rt = do__size(&c, DO_RT_SIZE, "runtime state", 64, 16u << 20);
	is = do__size(&c, DO_IS_SIZE, "interpreter state", 64, 16u << 20);
	ts = do__size(&c, DO_TS_SIZE, "thread state", 64, 64u << 10);
	fr = do__size(&c, DO_FR_SIZE, "interpreter frame", 32, 4096);
	co = do__size(&c, DO_CO_SIZE, "code object", 64, 4096);
	by = do__size(&c, DO_BYTES_SIZE, "bytes object", 24, 4096);
	un = do__size(&c, DO_UNI_SIZE, "unicode object", 24, 4096);
	if (c.err)
		return c.err;
	b->rt_interp_head = do__field(&c, DO_RT_INTERP_HEAD, "interpreters.head", 8, rt, 0xffff);
	b->interp_next = do__field(&c, DO_IS_NEXT, "interpreter.next", 8, is, 0xffff);
	b->interp_threads_head =
		do__field(&c, DO_IS_THREADS_HEAD, "interpreter.threads.head", 8, is, 0xffff);
	b->ts_next = do__field(&c, DO_TS_NEXT, "thread.next", 8, ts, 0xffff);
	b->ts_frame = do__field(&c, DO_TS_CURRENT_FRAME, "thread.current_frame", 8, ts, 0xffff);
	b->ts_thread_id = do__field(&c, DO_TS_THREAD_ID, "thread.thread_id", 8, ts, 0xffff);
	b->ts_native_tid =
		do__field(&c, DO_TS_NATIVE_THREAD_ID, "thread.native_thread_id", 8, ts, 0xffff);
	/* Frame fields must fall inside the walker's one read of a frame. */
	b->fr_previous = do__field(&c, DO_FR_PREVIOUS, "frame.previous", 8, fr, 128);
	b->fr_code = do__field(&c, DO_FR_EXECUTABLE, "frame.executable", 8, fr, 128);
	b->fr_instr = do__field(&c, DO_FR_INSTR_PTR, "frame.instr_ptr", 8, fr, 128);
	b->fr_owner = do__field(&c, DO_FR_OWNER, "frame.owner", 1, fr, 128);
	b->code_firstlineno = do__field(&c, DO_CO_FIRSTLINENO, "code.firstlineno", 4, co, co);
	b->code_name = do__field(&c, DO_CO_NAME, "code.name", 8, co, co);
	b->code_adaptive = do__field(&c, DO_CO_ADAPTIVE, "code.co_code_adaptive", 2, co, co + 1);
	l->code_qualname = do__field(&c, DO_CO_QUALNAME, "code.qualname", 8, co, co);
	l->code_filename = do__field(&c, DO_CO_FILENAME, "code.filename", 8, co, co);
	l->code_linetable = do__field(&c, DO_CO_LINETABLE, "code.linetable", 8, co, co);
	l->bytes_size = do__field(&c, DO_BYTES_OB_SIZE, "bytes.ob_size", 8, by, by);
	l->bytes_sval = do__field(&c, DO_BYTES_SVAL, "bytes.ob_sval", 1, by, by);
	l->unicode_state = do__field(&c, DO_UNI_STATE, "unicode.state", 4, un, un);
	l->unicode_length = do__field(&c, DO_UNI_LENGTH, "unicode.length", 8, un, un);
	l->ascii_size = do__field(&c, DO_UNI_ASCII_SIZE, "unicode.asciiobject_size", 8, 4096, 4096);
	if (c.err)
		return c.err;
	/* asciiobject_size is a size, not an offset: the header must hold state and length. */
	l->ascii_size = (uint16_t)do__u64(&c, DO_UNI_ASCII_SIZE);
	if (l->ascii_size < l->unicode_state + 4 || l->ascii_size < l->unicode_length + 8 ||
	    l->ascii_size > un) {
		do__fail(&c, "unicode.asciiobject_size %u does not hold its fields", l->ascii_size);
		return c.err;
	}
	l->compact_size = l->ascii_size + 16; /* + utf8_length, utf8 (3.12+) */
	b->version_hex = (uint32_t)version;
	b->cframe_frame = NF;
	b->fr_is_entry = NF;
	b->fr_read = 8;
	if (b->fr_previous + 8 > b->fr_read)
		b->fr_read = b->fr_previous + 8;
	if (b->fr_code + 8 > b->fr_read)
		b->fr_read = b->fr_code + 8;
	if (b->fr_instr + 8 > b->fr_read)
		b->fr_read = b->fr_instr + 8;
	if (b->fr_owner + 1 > b->fr_read)
		b->fr_read = b->fr_owner + 1;
	b->frame_kind = MS_PY_FRAMES_INTERP;
	b->cstack_owner = 3; /* FRAME_OWNED_BY_CSTACK, pycore_frame.h of 3.13 */
	l->code_size = (uint16_t)co;
	l->lines = PY_LINES_LOCATIONS;
	return 0;
}

/* ---- ELF ------------------------------------------------------------------ */

static bool elf__read_at(Elf *e, uint64_t addr, void *out, size_t n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		if (addr < sh.sh_addr || addr - sh.sh_addr + n > sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr + n > d->d_size)
			return false;
		memcpy(out, (const uint8_t *)d->d_buf + (addr - sh.sh_addr), n);
		return true;
	}
	return false;
}

/* 3.N from a "libpython3.N" soname or file name, or an executable named python3.N. */
static uint32_t version_from_name(const char *s)
{
	const char *p = s ? strstr(s, "libpython3.") : NULL;
	const char *base = s ? strrchr(s, '/') : NULL;
	unsigned minor;

	if (p)
		p += strlen("libpython3.");
	else if (s && !strncmp(base ? base + 1 : s, "python3.", 8))
		p = (base ? base + 1 : s) + 8;
	if (!p || sscanf(p, "%u", &minor) != 1 || minor > 99)
		return 0;
	return 0x03000000u | (minor << 16);
}

int py_layout__read_elf(const char *path, uint32_t *version_hex, uint64_t *runtime_vaddr,
			uint64_t *first_load_vaddr)
{
	uint64_t runtime = 0, pyver_addr = 0, load = UINT64_MAX;
	uint32_t version = 0;
	Elf_Scn *scn = NULL;
	const char *soname = NULL;
	GElf_Shdr sh;
	Elf *e = NULL;
	int fd, err = 0;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOENT;
		goto cleanup;
	}
	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNAMIC && (d = elf_getdata(scn, NULL))) {
			for (size_t i = 0; sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Dyn dyn;

				if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_SONAME)
					soname = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			}
		}
		if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
			continue;
		/* Most files asked about are not interpreters (under -a, every
		 * executable of the host): a table whose names lack _PyRuntime
		 * is not converted symbol by symbol. */
		if (!elfscan__strtab_has(e, sh.sh_link, "_PyRuntime"))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "_PyRuntime"))
				runtime = sym.st_value;
			else if (!strcmp(name, "Py_Version"))
				pyver_addr = sym.st_value;
		}
	}
	load = elfscan__first_load(e);
	if (!runtime) {
		err = -ENOENT;
		goto cleanup;
	}
	if (pyver_addr) {
		uint64_t v = 0;

		if (elf__read_at(e, pyver_addr, &v, sizeof(v)))
			version = (uint32_t)v;
	}
	if (!version)
		version = version_from_name(soname);
	if (!version)
		version = version_from_name(path);
	if (!version || (version >> 24) != 3) {
		err = -ENOTSUP;
		goto cleanup;
	}
	*version_hex = version;
	*runtime_vaddr = runtime;
	*first_load_vaddr = load == UINT64_MAX ? 0 : load;
cleanup:
	elf_end(e);
	close(fd);
	return err;
}

/*
 * Does the ELF file at path name a libpython3 shared library in its
 * DT_NEEDED entries (an interpreter built --enable-shared, as pyenv's are,
 * or a program embedding CPython)?  Its _PyRuntime is in that library,
 * which py_layout__read_elf of the executable does not see.
 */
bool py_layout__links_libpython(const char *path)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	bool found = false;
	Elf *e = NULL;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto cleanup;
	while (!found && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; !found && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			found = name && !strncmp(name, "libpython3.", 11);
		}
	}
cleanup:
	elf_end(e);
	close(fd);
	return found;
}
