// SPDX-License-Identifier: MIT
/*
 * userspace/symbols/dwarf_lines.c: source lines and inline chains from
 * this test binary's own DWARF (built with -g), and damaged DWARF: a copy of
 * the binary whose debug sections are overwritten with garbage, moved past
 * the file's end, or cut short must give a per-module problem or no lines,
 * never a crash (run under ASan/UBSan by `make check`).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "userspace/symbols/symbols.h"
#include "userspace/symbols/symbols_internal.h"

static char tmpdir[] = "/tmp/test_dwarf_lines.XXXXXX";

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t dl_inner(uint64_t x)
{
	x ^= x << 13; /* DL_INNER_LINE */
	x ^= x >> 7;
	return x;
}

/* The marker: its loop body is dl_inner, inlined. */
__attribute__((noinline, used)) uint64_t dl_marker(uint64_t n)
{
	uint64_t x = n | 1;

	for (uint64_t i = 0; i < n; i++)
		x = dl_inner(x + i); /* DL_CALL_LINE */
	sink = x;
	return x;
}

static void copy_self(const char *dst)
{
	char cmd[PATH_MAX * 3], self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = '\0';
	/* Not "cp /proc/self/exe": in the shell that is cp itself. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", self, dst);
	assert_int_equal(system(cmd), 0);
}

/* Line number of the first line of this file containing tag. */
static int line_of(const char *tag)
{
	FILE *f = fopen(__FILE__, "r");
	char buf[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, tag) && !strstr(buf, "line_of")) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return -1;
}

static void test_own_lines_and_inlines(void **state)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m = symbolizer__file(s, 0, "/proc/self/exe", "/proc/self/exe", NULL, 0);
	uint64_t start = 0, end = 0, a;
	int inner_line = line_of("DL_INNER_LINE"), call_line = line_of("DL_CALL_LINE");
	bool seen_chain = false;
	size_t i;

	assert_non_null(m);
	assert_null(sym_module__error(m));
	for (i = 0; i < sym_module__symbol_count(m); i++) {
		const char *n = sym_module__symbol(m, i, &start, &end);

		if (!strcmp(n, "dl_marker"))
			break;
	}
	assert_true(i < sym_module__symbol_count(m));
	for (a = start; a < end; a++) {
		struct sym_frame f[8];
		size_t n = sym_module__frames(m, a, f, 8);

		assert_true(n >= 1);
		assert_string_equal(f[n - 1].function, "dl_marker");
		if (n == 2 && f[0].line == (uint32_t)inner_line) {
			assert_string_equal(f[0].function, "dl_inner");
			assert_true(f[0].inlined);
			assert_false(f[1].inlined);
			assert_int_equal(f[1].line, (uint32_t)call_line);
			assert_non_null(strstr(f[1].file, "test_dwarf_lines.c"));
			seen_chain = true;
		}
	}
	assert_true(seen_chain);
	assert_null(sym_module__dwarf_error(m));
	symbolizer__free(s);
}

struct scn_loc {
	uint64_t offset, size, shdr_offset; /* shdr_offset: file offset of its header */
};

/* File offset/size of section name in path, and where its header is. */
static bool find_section(const char *path, const char *name, struct scn_loc *out)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	bool found = false;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_getshdrstrndx(e, &shstrndx) || !gelf_getehdr(e, &eh)) {
		print_message("elf: %d %s\n", fd, elf_errmsg(-1));
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		gelf_getshdr(scn, &sh);
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			out->offset = sh.sh_offset;
			out->size = sh.sh_size;
			out->shdr_offset = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize;
			found = true;
			break;
		}
	}
out:
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

/* Looks up every address of dl_marker and a sweep of the text. */
static void exercise(const char *path, int *problems, int *lines)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m = symbolizer__file(s, 0, path, path, NULL, 0);
	uint64_t start, end;
	size_t i;

	assert_non_null(m);
	for (i = 0; i < sym_module__symbol_count(m); i += 7) {
		struct sym_frame f[16];

		sym_module__symbol(m, i, &start, &end);
		for (uint64_t a = start; a < end && a < start + 64; a += 5)
			if (sym_module__frames(m, a, f, 16) && f[0].line)
				(*lines)++;
	}
	if (sym_module__error(m) || sym_module__dwarf_error(m))
		(*problems)++;
	symbolizer__free(s);
}

static void patch(const char *path, uint64_t off, const void *bytes, size_t len)
{
	int fd = open(path, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, bytes, len, (off_t)off), (ssize_t)len);
	close(fd);
}

static void test_damaged_dwarf(void **state)
{
	static const char *const sections[] = {".debug_info", ".debug_abbrev", ".debug_line",
					       ".debug_str", ".debug_rnglists", ".debug_aranges"};
	char path[PATH_MAX];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	int problems = 0, lines = 0, cases = 0;

	snprintf(path, sizeof(path), "%s/damaged", tmpdir);
	for (size_t sidx = 0; sidx < sizeof(sections) / sizeof(sections[0]); sidx++) {
		for (int variant = 0; variant < 6; variant++) {
			struct scn_loc loc;
			uint8_t junk[4096];
			struct stat st;

			copy_self(path);
			if (!find_section(path, sections[sidx], &loc) || !loc.size) {
				print_message("no section %s in %s\n", sections[sidx], path);
				break;
			}
			stat(path, &st);
			for (size_t k = 0; k < sizeof(junk); k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				junk[k] = (uint8_t)x;
			}
			switch (variant) {
			case 0: /* garbage over the start */
				patch(path, loc.offset, junk, loc.size < 64 ? loc.size : 64);
				break;
			case 1: /* garbage all through (up to 4 KiB) */
				patch(path, loc.offset, junk, loc.size < 4096 ? loc.size : 4096);
				break;
			case 2: { /* sh_offset past the end of the file */
				uint64_t off = (uint64_t)st.st_size + 4096;

				patch(path, loc.shdr_offset + offsetof(Elf64_Shdr, sh_offset), &off, 8);
				break;
			}
			case 3: { /* sh_size reaching past the end */
				uint64_t size = (uint64_t)st.st_size;

				patch(path, loc.shdr_offset + offsetof(Elf64_Shdr, sh_size), &size, 8);
				break;
			}
			case 4: /* the file cut inside the section */
				assert_int_equal(truncate(path, (off_t)(loc.offset + loc.size / 2)), 0);
				break;
			case 5: { /* a few bytes flipped in the middle */
				for (int k = 0; k < 8; k++) {
					x ^= x << 13, x ^= x >> 7, x ^= x << 17;
					patch(path, loc.offset + x % loc.size, &junk[k], 1);
				}
				break;
			}
			}
			exercise(path, &problems, &lines);
			cases++;
		}
	}
	print_message("damaged DWARF: %d cases, %d with a module problem, %d lines found\n", cases,
		      problems, lines);
	assert_true(cases >= 24);
	assert_true(problems > 0);
}

/* Every address of dl_marker as "function:line:inlined;..." chains, one
 * string per address, into out (cap bytes).  Returns the addresses seen. */
static int marker_chains(const char *path, char *out, size_t cap, char **error)
{
	struct symbolizer *s = symbolizer__new();
	struct sym_module *m = symbolizer__file(s, 0, path, path, NULL, 0);
	uint64_t start = 0, end = 0;
	size_t i, used = 0;
	int n = 0;

	assert_non_null(m);
	for (i = 0; i < sym_module__symbol_count(m); i++)
		if (!strcmp(sym_module__symbol(m, i, &start, &end), "dl_marker"))
			break;
	assert_true(i < sym_module__symbol_count(m));
	out[0] = '\0';
	for (uint64_t a = start; a < end; a++, n++) {
		struct sym_frame f[8];
		size_t k = sym_module__frames(m, a, f, 8);

		for (size_t j = 0; j < k && used + 128 < cap; j++)
			used += (size_t)snprintf(out + used, cap - used, "%s:%u:%d;", f[j].function,
						 f[j].line, f[j].inlined);
		if (used + 2 < cap)
			out[used++] = '\n', out[used] = '\0';
	}
	*error = sym_module__dwarf_error(m) ? strdup(sym_module__dwarf_error(m)) : NULL;
	symbolizer__free(s);
	return n;
}

/*
 * zstd-compressed debug sections (objcopy --compress-debug-sections=zstd;
 * libelf 0.188 cannot read them: debug_zstd.c decompresses them into an
 * in-memory image): the same lines and inline chains as the plain build.
 * Then hostile ones: a chdr claiming 1 TiB, or a damaged zstd frame, give a
 * per-module problem, never a crash or an allocation of the claimed size.
 */
static void test_zstd_debug_sections(void **state)
{
	static char plain_chains[1 << 16], zstd_chains[1 << 16];
	char plain[PATH_MAX], zst[PATH_MAX], cmd[3 * PATH_MAX], *err = NULL;
	struct scn_loc loc;
	uint32_t ch_type;
	uint64_t huge = 1ull << 40;
	int fd, problems = 0, lines = 0;

	snprintf(plain, sizeof(plain), "%s/plain", tmpdir);
	snprintf(zst, sizeof(zst), "%s/zstd", tmpdir);
	copy_self(plain);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zstd '%s' '%s'", plain, zst);
	assert_int_equal(system(cmd), 0);
	assert_true(find_section(zst, ".debug_info", &loc));
	fd = open(zst, O_RDONLY);
	assert_int_equal(pread(fd, &ch_type, 4, (off_t)loc.offset), 4);
	close(fd);
	assert_int_equal(ch_type, 2); /* ELFCOMPRESS_ZSTD: objcopy did compress */

	assert_true(marker_chains(plain, plain_chains, sizeof(plain_chains), &err) > 0);
	assert_null(err);
	assert_true(marker_chains(zst, zstd_chains, sizeof(zstd_chains), &err) > 0);
	if (err)
		fail_msg("zstd build: %s", err);
	assert_string_equal(zstd_chains, plain_chains);
	assert_non_null(strstr(zstd_chains, "dl_inner:"));

	/* ch_size (Elf64_Chdr offset 8) claiming 1 TiB */
	patch(zst, loc.offset + 8, &huge, 8);
	exercise(zst, &problems, &lines);
	assert_int_equal(problems, 1);
	/* a damaged frame: the bytes after the chdr */
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zstd '%s' '%s'", plain, zst);
	assert_int_equal(system(cmd), 0);
	patch(zst, loc.offset + sizeof(Elf64_Chdr), "\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
	exercise(zst, &problems, &lines);
	assert_int_equal(problems, 2);
}

/*
 * zlib-compressed debug sections (a Debian debug file's; libelf would
 * decompress them into the heap, debug_inflate.c writes them into an
 * unnamed file that is mapped): the same lines and inline chains as the
 * plain build.  A damaged stream (the bytes after .debug_info's chdr)
 * leaves the module without lines, never crashes.
 */
static void test_zlib_debug_sections(void **state)
{
	static char plain_chains[1 << 16], zlib_chains[1 << 16];
	char plain[PATH_MAX], zl[PATH_MAX], cmd[3 * PATH_MAX], *err = NULL;
	struct scn_loc loc;
	uint32_t ch_type;
	int fd, problems = 0, lines = 0;

	(void)state;
	snprintf(plain, sizeof(plain), "%s/plain-z", tmpdir);
	snprintf(zl, sizeof(zl), "%s/zlib", tmpdir);
	copy_self(plain);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'", plain, zl);
	assert_int_equal(system(cmd), 0);
	assert_true(find_section(zl, ".debug_info", &loc));
	fd = open(zl, O_RDONLY);
	assert_int_equal(pread(fd, &ch_type, 4, (off_t)loc.offset), 4);
	close(fd);
	assert_int_equal(ch_type, 1); /* ELFCOMPRESS_ZLIB: objcopy did compress */

	assert_true(marker_chains(plain, plain_chains, sizeof(plain_chains), &err) > 0);
	assert_null(err);
	assert_true(marker_chains(zl, zlib_chains, sizeof(zlib_chains), &err) > 0);
	if (err)
		fail_msg("zlib build: %s", err);
	assert_string_equal(zlib_chains, plain_chains);
	assert_non_null(strstr(zlib_chains, "dl_inner:"));

	patch(zl, loc.offset + sizeof(Elf64_Chdr) + 64, "\xde\xad\xbe\xef\xde\xad\xbe\xef", 8);
	exercise(zl, &problems, &lines);
	assert_int_equal(lines, 0);
}

/* The image debug_inflate__file makes of path: *fd, *size, mapped at *map;
 * its return value. */
static int inflate_image(const char *path, int *fd, size_t *size, void **map)
{
	int in = open(path, O_RDONLY);
	struct stat st;
	void *p;
	Elf *e;
	int err;

	assert_true(in >= 0);
	assert_int_equal(fstat(in, &st), 0);
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in, 0);
	assert_true(p != MAP_FAILED);
	e = elf_memory(p, (size_t)st.st_size);
	assert_non_null(e);
	err = debug_inflate__file(e, p, (size_t)st.st_size, fd, size);
	elf_end(e);
	munmap(p, (size_t)st.st_size);
	close(in);
	*map = NULL;
	if (!err) {
		*map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, *fd, 0);
		assert_true(*map != MAP_FAILED);
	}
	return err;
}

/* Section name of the image at map (size bytes): its header in *sh and
 * its bytes, or NULL when absent. */
static const uint8_t *image_section(const void *map, size_t size, const char *name, GElf_Shdr *sh)
{
	Elf *e = elf_memory((char *)map, size);
	Elf_Scn *scn = NULL;
	const uint8_t *bytes = NULL;
	size_t shstrndx;

	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;

		gelf_getshdr(scn, sh);
		n = elf_strptr(e, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name)) {
			bytes = (const uint8_t *)map + sh->sh_offset;
			break;
		}
	}
	elf_end(e);
	return bytes;
}

/*
 * The image of a zlib-compressed file (debug_inflate.c, debug_layout.c):
 * .debug_info decompressed to the plain file's very bytes; the sections no
 * lookup reads (.debug_loclists, .debug_aranges) left out, empty NOBITS,
 * though this binary (-O2 -g) has both.  The zlib stream is inflated raw:
 * a wrong Adler-32 trailer changes nothing (the lines are the plain
 * build's), while a header that is not deflate's refuses the image and the
 * module has no lines.
 */
static void test_zlib_image_sections(void **state)
{
	static char plain_chains[1 << 16], chains[1 << 16];
	char plain[PATH_MAX], zl[PATH_MAX], cmd[3 * PATH_MAX], *err = NULL;
	struct scn_loc info, plain_info;
	const uint8_t *bytes;
	int fd, pfd, problems = 0, lines = 0;
	uint8_t *want;
	size_t size;
	GElf_Shdr sh;
	void *map;

	(void)state;
	snprintf(plain, sizeof(plain), "%s/plain-img", tmpdir);
	snprintf(zl, sizeof(zl), "%s/zlib-img", tmpdir);
	copy_self(plain);
	snprintf(cmd, sizeof(cmd), "objcopy --compress-debug-sections=zlib '%s' '%s'", plain, zl);
	assert_int_equal(system(cmd), 0);
	assert_true(find_section(plain, ".debug_info", &plain_info));
	assert_true(find_section(zl, ".debug_info", &info));
	want = malloc(plain_info.size);
	assert_non_null(want);
	pfd = open(plain, O_RDONLY);
	assert_int_equal(pread(pfd, want, plain_info.size, (off_t)plain_info.offset),
			 (ssize_t)plain_info.size);
	close(pfd);

	assert_int_equal(inflate_image(zl, &fd, &size, &map), 0);
	bytes = image_section(map, size, ".debug_info", &sh);
	assert_non_null(bytes);
	assert_int_equal(sh.sh_type, SHT_PROGBITS);
	assert_int_equal(sh.sh_flags & SHF_COMPRESSED, 0);
	assert_int_equal(sh.sh_size, plain_info.size);
	assert_memory_equal(bytes, want, plain_info.size);
	for (int k = 0; k < 2; k++) {
		const char *name = k ? ".debug_aranges" : ".debug_loclists";
		struct scn_loc there;

		assert_true(find_section(zl, name, &there) && there.size > 0);
		assert_non_null(image_section(map, size, name, &sh));
		assert_int_equal(sh.sh_type, SHT_NOBITS);
		assert_int_equal(sh.sh_size, 0);
	}
	munmap(map, size);
	close(fd);

	/* the Adler-32 (the section's last 4 bytes) wrong: same bytes, lines */
	patch(zl, info.offset + info.size - 4, "\x01\x02\x03\x04", 4);
	assert_int_equal(inflate_image(zl, &fd, &size, &map), 0);
	bytes = image_section(map, size, ".debug_info", &sh);
	assert_non_null(bytes);
	assert_memory_equal(bytes, want, plain_info.size);
	munmap(map, size);
	close(fd);
	assert_true(marker_chains(plain, plain_chains, sizeof(plain_chains), &err) > 0);
	assert_null(err);
	assert_true(marker_chains(zl, chains, sizeof(chains), &err) > 0);
	if (err)
		fail_msg("zlib build, wrong checksum: %s", err);
	assert_string_equal(chains, plain_chains);

	/* CM 7 instead of deflate's 8 (FCHECK kept valid: 0x77 0x09) */
	patch(zl, info.offset + sizeof(Elf64_Chdr), "\x77\x09", 2);
	assert_int_equal(inflate_image(zl, &fd, &size, &map), -EINVAL);
	exercise(zl, &problems, &lines);
	assert_int_equal(lines, 0);
	free(want);
}

/* One address's frames, copied (DWARF strings may go when DWARF closes). */
struct frames_copy {
	size_t n;
	char function[4][128], file[4][256];
	uint32_t line[4];
	bool inlined[4];
};

static void frames_copy(struct sym_module *m, uint64_t a, struct frames_copy *out)
{
	struct sym_frame f[4];

	memset(out, 0, sizeof(*out));
	out->n = sym_module__frames(m, a, f, 4);
	for (size_t k = 0; k < out->n; k++) {
		snprintf(out->function[k], sizeof(out->function[k]), "%s",
			 f[k].function ? f[k].function : "");
		snprintf(out->file[k], sizeof(out->file[k]), "%s", f[k].file ? f[k].file : "");
		out->line[k] = f[k].line;
		out->inlined[k] = f[k].inlined;
	}
}

/* Start and end of the function named name in m, asserted found. */
static void function_range(struct sym_module *m, const char *name, uint64_t *start, uint64_t *end)
{
	size_t i;

	for (i = 0; i < sym_module__symbol_count(m); i++)
		if (!strcmp(sym_module__symbol(m, i, start, end), name))
			return;
	fail_msg("no symbol %s", name);
}

/*
 * The DWARF budget (symbolizer__set_dwarf_budget): two modules with DWARF
 * (this binary and a copy with another build ID) looked up in turn under a
 * budget of 1 byte close each other's DWARF file state at every turn, and
 * reopen it at each first lookup of a unit (functions of NUNITS distinct
 * source files), counted; lookups in units already compiled need no
 * reopen (their line and scope tables stay).  Frames are those of an
 * unbounded symbolizer throughout; unbounded, nothing closes.
 */
static void test_dwarf_budget_reopens(void **state)
{
	/* one function of each of these source files (compilation units) */
	static const char *const fns[] = {
	    "dl_marker",	  /* tests/unit/test_dwarf_lines.c */
	    "sym_module__frames", /* userspace/symbols/dwarf_lines.c */
	    "dw_scopes__build",	  /* userspace/symbols/dwarf_scopes.c */
	    "dw_linetab__build",  /* userspace/symbols/dwarf_linetab.c */
	    "sym_builder__finish", /* userspace/symbols/sym_table.c */
	    "debug_file__find",	  /* userspace/symbols/debug_file.c */
	};
	enum { NUNITS = sizeof(fns) / sizeof(fns[0]) };
	struct symbolizer *ref = symbolizer__new(), *s = symbolizer__new();
	struct symbolizer_dwarf_stats st;
	struct sym_module *r, *m1, *m2;
	uint64_t start[NUNITS], end[NUNITS];
	char path[PATH_MAX];
	struct scn_loc note;
	uint8_t b;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/other-build-id", tmpdir);
	copy_self(path);
	assert_true(find_section(path, ".note.gnu.build-id", &note));
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	/* Elf64_Nhdr (12 bytes) and "GNU\0", then the ID: flip its first byte. */
	assert_int_equal(pread(fd, &b, 1, (off_t)note.offset + 16), 1);
	b ^= 0xff;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)note.offset + 16), 1);
	close(fd);

	r = symbolizer__file(ref, 0, "/proc/self/exe", "/proc/self/exe", NULL, 0);
	m1 = symbolizer__file(s, 0, "/proc/self/exe", "/proc/self/exe", NULL, 0);
	m2 = symbolizer__file(s, 0, path, path, NULL, 0);
	assert_non_null(r);
	assert_non_null(m1);
	assert_non_null(m2);
	assert_ptr_not_equal(m1, m2);
	symbolizer__set_dwarf_budget(s, 1);
	for (int k = 0; k < NUNITS; k++)
		function_range(r, fns[k], &start[k], &end[k]);
	/* Two passes over the units: the first compiles each unit in each
	 * module, the second looks up other addresses of the same units. */
	for (int pass = 0; pass < 2; pass++) {
		for (int k = 0; k < NUNITS; k++) {
			uint64_t a = start[k] + (pass ? (end[k] - start[k]) / 2 : 0);
			struct frames_copy want, got1, got2;

			frames_copy(r, a, &want);
			frames_copy(m1, a, &got1);
			frames_copy(m2, a, &got2);
			assert_true(want.n >= 1);
			assert_true(want.line[0] > 0);
			assert_string_equal(want.function[want.n - 1], fns[k]);
			assert_memory_equal(&got1, &want, sizeof(want));
			assert_memory_equal(&got2, &want, sizeof(want));
		}
		/* m1 opens, m2 opens and closes m1's file, then each new
		 * unit closes the other's file and reopens its own; the
		 * second pass reopens nothing, and its first lookup's trim
		 * closes the one file left open, over the budget. */
		symbolizer__dwarf_stats(s, &st);
		assert_int_equal(st.opened, 2);
		assert_int_equal(st.reopened, 2 * NUNITS - 2);
		assert_int_equal(st.closed, 2 * NUNITS - 1 + pass);
	}
	assert_int_equal(st.bytes, 0);
	assert_true(st.peak > 0);
	symbolizer__dwarf_stats(ref, &st);
	assert_int_equal(st.opened, 1);
	assert_int_equal(st.reopened, 0);
	assert_int_equal(st.closed, 0);
	/* A budget set later closes what is over it, the most recent too. */
	symbolizer__set_dwarf_budget(ref, 1);
	symbolizer__dwarf_stats(ref, &st);
	assert_int_equal(st.closed, 1);
	assert_int_equal(st.bytes, 0);
	/* and its tables still answer, file closed */
	{
		struct frames_copy want, got;

		frames_copy(m1, start[0], &want);
		frames_copy(r, start[0], &got);
		assert_memory_equal(&got, &want, sizeof(want));
		symbolizer__dwarf_stats(ref, &st);
		assert_int_equal(st.reopened, 0);
	}
	symbolizer__free(s);
	symbolizer__free(ref);
}

static int group_setup(void **state) { return mkdtemp(tmpdir) ? 0 : -1; }

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_own_lines_and_inlines),
	    cmocka_unit_test(test_damaged_dwarf),
	    cmocka_unit_test(test_zstd_debug_sections),
	    cmocka_unit_test(test_zlib_debug_sections),
	    cmocka_unit_test(test_zlib_image_sections),
	    cmocka_unit_test(test_dwarf_budget_reopens),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
