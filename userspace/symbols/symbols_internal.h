/* SPDX-License-Identifier: MIT */
/*
 * Private to userspace/symbols/ (and tests/unit/test_symbols.c).
 *
 * Ownership: a struct sym_module is created and freed by symbolizer.c and
 * filled exactly once by one loader (elf_module.c for files and the vdso,
 * kallsyms.c for the kernel).  After loading it is read-only: its symbol
 * table (starts[] ascending and distinct, struct sym_entry beside it) and the
 * names arena it points into never move, so names handed out stay valid for
 * the symbolizer's life.  One exception: the kernel's table loaded from the
 * cache (kallsyms_cache.c) is replaced once by the live one when a lookup
 * falls outside it; the cached names arena is kept until the module is freed.
 *
 * A loader that fails leaves the module with no symbols, no PT_LOADs and an
 * error (sym_module__fail()); it never leaves a half-filled table.
 */
#ifndef MS_SYMBOLS_INTERNAL_H
#define MS_SYMBOLS_INTERNAL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "userspace/symbols/symbols.h"

/* Longest build ID kept, bytes (libdwfl's limit; GNU ld's SHA-1 is 20). */
#define SYM_BUILD_ID_MAX 64
/* At most this many modules keep a pinned descriptor (pin_fd). */
#define SYM_MAX_PINNED 512
/* A symbol table larger than this is treated as malformed. */
#define SYM_MAX_SYMBOLS (1u << 26)
/* A size-0 symbol with no following symbol of its owner covers this many
 * bytes at most (bytes). */
#define SYM_UNSIZED_TAIL 4096
/* Lookups follow at most this many enclosing symbols (nested ranges). */
#define SYM_MAX_NESTING 32
/* zstd-compressed debug sections (debug_zstd.c): one section decompresses to
 * at most this many bytes, the whole in-memory debug image to at most
 * SYM_MAX_DEBUG_IMAGE bytes, from at most SYM_MAX_DEBUG_SECTIONS sections. */
#define SYM_MAX_DEBUG_SECTION (1ull << 30)
#define SYM_MAX_DEBUG_IMAGE (2ull << 30)
#define SYM_MAX_DEBUG_SECTIONS (1u << 16)
/* Elf64_Chdr.ch_type of zstd (gABI 2022; glibc >= 2.37 names it). */
#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* Why a module has no symbols: enum and text from one table. */
#define SYM_ERRORS(X)                                                                              \
	X(SYM_ERR_OPEN, "cannot open")                                                             \
	X(SYM_ERR_NOT_FILE, "not a regular file")                                                  \
	X(SYM_ERR_NOT_ELF, "not an ELF file")                                                      \
	X(SYM_ERR_BAD_ELF, "bad ELF")                                                              \
	X(SYM_ERR_BUILD_ID_MISMATCH, "build ID mismatch")                                          \
	X(SYM_ERR_NO_VDSO, "no vdso")                                                              \
	X(SYM_ERR_KALLSYMS, "cannot read kallsyms")                                                \
	X(SYM_ERR_KPTR_RESTRICT,                                                                   \
	  "kallsyms addresses are hidden (kernel.kptr_restrict or not root)")                      \
	X(SYM_ERR_NOMEM, "out of memory")                                                          \
	X(SYM_ERR_NOT_FOUND, "no file with this build ID found")

enum sym_error {
	SYM_ERR_NONE = 0,
#define SYM_ERR_ENUM(name, text) name,
	SYM_ERRORS(SYM_ERR_ENUM)
#undef SYM_ERR_ENUM
};

/* Static text of an error kind ("" for SYM_ERR_NONE). */
const char *sym_error__text(enum sym_error e);

/* Identity of an opened file when it has no build ID. */
struct sym_file_key {
	uint64_t dev;
	uint64_t ino;
	uint64_t size; /* bytes */
	int64_t mtime_sec;
	int64_t mtime_nsec;
};

/* One function: [starts[i], end), name at names + name.  parent is the
 * nearest earlier entry whose range contains starts[i] (SYM_NO_PARENT if
 * none).  Starts live in their own array so the binary search touches 8
 * bytes per step, not 24. */
struct sym_entry {
	uint64_t end;
	uint32_t name;
	uint32_t parent;
};
#define SYM_NO_PARENT UINT32_MAX

/* One PT_LOAD: file bytes [offset, offset + filesz) are at vaddr. */
struct sym_load {
	uint64_t offset;
	uint64_t filesz;
	uint64_t memsz;
	uint64_t vaddr;
	uint64_t align;
};

struct sym_module {
	char *path;  /* display path, as first seen */
	char *tried; /* failed modules: the path whose open failed */
	char *error; /* NULL when fine; else "<kind text>[: detail]" */
	enum sym_error error_kind;
	char *debug_path; /* separate debug file whose .symtab was merged */
	uint8_t build_id[SYM_BUILD_ID_MAX];
	size_t build_id_len;
	uint64_t size; /* file or image size, bytes; 0 for the kernel */
	uint64_t content_hash; /* FNV-1a of the file when it has no build ID, else 0 */
	struct sym_file_key file_key;
	bool has_file_key;
	bool is_kernel;

	struct sym_load *loads;
	size_t nr_loads;
	uint64_t *starts; /* ascending, distinct */
	struct sym_entry *syms;
	size_t nr_syms;
	char *names; /* arena: every name NUL-terminated */
	size_t names_len;

	const struct sym_config *cfg; /* the symbolizer's search settings; not owned */
	/* DWARF (dwarf_lines.c): read lazily from dwarf_fd (a dup of the debug
	 * file's or the module's own descriptor; -1 when neither has DWARF). */
	int dwarf_fd;
	char *dwarf_path; /* file dwarf_fd reads, for messages; owned */
	bool dwarf_tried;
	struct sym_dwarf *dwarf; /* NULL until opened, when closed, or when unusable */
	char *dwarf_error;	 /* why lines/inlines are missing or partial, or NULL */
	bool dwarf_ok;		 /* an open succeeded: a closed DWARF is reopened on need */
	/* Open DWARF under the symbolizer's byte budget (dwarf_cache.c). */
	struct sym_dwarf_lru *lru; /* the symbolizer's; not owned */
	struct sym_module *lru_prev, *lru_next; /* on lru's list while dwarf's file is open */
	size_t dwarf_bytes; /* heap bytes the open DWARF file state took (malloc deltas) */
	size_t dwarf_last_bytes; /* what it took when the budget last closed it */
	size_t dwarf_table_bytes; /* our unit index and tables (kept when the file closes) */
	bool minidebuginfo;	 /* names came from .gnu_debugdata */
	/* A dup of the descriptor the module was read from, kept when its path
	 * in our mount namespace does not lead to that file (deleted, replaced,
	 * memfd, another mount namespace), so the unwinder reads the same
	 * verified file (sym_module__open_file); -1 otherwise. */
	int pin_fd;
	/* The kernel's table when it came from the cache (kallsyms_cache.c):
	 * its static ranges, and the live read outside them; else NULL. */
	struct kallsyms_static *kstatic;

	struct sym_module *next; /* the symbolizer's list of all modules */
};

/* Where separate debug files are looked for (debug_file.c).  Owned by the
 * symbolizer. */
struct sym_config {
	char **debug_dirs; /* --debug-dir roots, searched before /usr/lib/debug */
	size_t ndebug_dirs;
	bool debuginfod; /* ask libdebuginfod (DEBUGINFOD_URLS) as a last resort */
	void *debuginfod_client; /* debuginfod_client *, created on first use */
	uint64_t debuginfod_fetched; /* files libdebuginfod returned */
};

/* Whether libdebuginfod could be opened (dlopen, once). (debug_file.c) */
bool debug_file__debuginfod_usable(void);
/* Frees the settings' strings and the debuginfod client. (debug_file.c) */
void sym_config__release(struct sym_config *cfg);

/* dwarf_lines.c: a module's DWARF is its file state (the debug file mapped
 * or read, decompressed sections, libdw's Dwarf) and our unit index and
 * compiled tables (lines, scopes, names).  The budget closes the file
 * state only: lookups in units already compiled need nothing else, and a
 * unit's first lookup opens it again. */
struct sym_dwarf;
void sym_dwarf__free(struct sym_dwarf *d);
/* True while d's file state is open (d may be NULL). */
bool sym_dwarf__file_open(const struct sym_dwarf *d);
/* Ends d's file state; its index and tables stay. */
void sym_dwarf__close_file(struct sym_dwarf *d);

/* debug_cache.c (its functions below, with debug_inflate.c's). */
struct debug_cache {
	char dir[PATH_MAX]; /* "" when off */
	uint64_t max_bytes; /* the directory's images together, at most */
	struct symbolizer_debug_cache_stats stats;
};

/*
 * dwarf_cache.c: the modules whose DWARF is open (libelf's section data,
 * libdw's decoded line tables and DIE caches, our unit index and scope
 * tables), most recently used first, with the heap bytes each took.  Past
 * the budget the least recently used are closed (sym_module__close_dwarf);
 * a closed module reopens at the next address that needs its lines.  The
 * symbol tables are never closed.  The recorder is single-threaded, so the
 * difference of the heap in use around an open or a unit's first lookup is
 * what they took.
 */
struct sym_dwarf_lru {
	struct sym_module *head, *tail; /* open DWARF files, most recently used first */
	size_t bytes;			/* heap bytes of all open DWARF file states */
	size_t table_bytes;		/* heap bytes of all unit indexes and tables */
	size_t peak;			/* largest bytes + table_bytes seen */
	struct sym_module *libdw_owner; /* the one module whose libdw state outlives its builds */
	size_t budget;			/* bytes; 0: unbounded */
	uint64_t opened, reopened, closed;
	struct debug_cache dcache; /* decompressed debug images kept across runs */
};
/* Heap bytes in use now (malloc arena and mapped chunks). */
size_t sym_heap__in_use(void);
/* m was used: first on the list (put there if it was not). */
void sym_dwarf_lru__touch(struct sym_module *m);
/* m's open DWARF file state took bytes more. */
void sym_dwarf_lru__grow(struct sym_module *m, size_t bytes);
/* m's unit index and tables took bytes more (not under the budget). */
void sym_dwarf_lru__grow_tables(struct sym_module *m, size_t bytes);
/* m's open DWARF gave bytes back (libdw's state ended, its tables kept). */
void sym_dwarf_lru__give_back(struct sym_module *m, size_t bytes);
/* Closes least recently used DWARF other than keep's while over budget. */
void sym_dwarf_lru__trim(struct sym_dwarf_lru *lru, const struct sym_module *keep);
/* Before reopening m: closes least recently used DWARF until what m took
 * last time fits in the budget, so a reopen does not overshoot it. */
void sym_dwarf_lru__make_room(struct sym_module *m);
/* Closes m's DWARF file state, if open, and takes it off the list. */
void sym_module__close_dwarf_file(struct sym_module *m);
/* Frees all of m's DWARF (file state, index and tables). */
void sym_module__close_dwarf(struct sym_module *m);

/* module.c */
struct sym_module *sym_module__new(const char *path);
void sym_module__free(struct sym_module *m);
/* Drops symbols and PT_LOADs and records why (detail may be NULL; printf
 * style).  Never fails: without memory the kind's static text is used. */
void sym_module__fail(struct sym_module *m, enum sym_error kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Lowercase hex of len bytes into out (2 * len + 1 bytes). */
void sym_hex(const uint8_t *bytes, size_t len, char *out);

/* sym_table.c: collects candidate symbols, then sorts, dedupes and fills a
 * module's table and names arena (see sym_builder__finish for the rules). */
enum sym_rank {
	SYM_RANK_LOCAL = 0,
	SYM_RANK_WEAK = 2,
	SYM_RANK_GLOBAL = 4,
	SYM_RANK_TYPED = 1, /* or-ed in: STT_FUNC/STT_GNU_IFUNC beat STT_NOTYPE */
};

struct sym_candidate {
	uint64_t start;
	uint64_t size;	/* bytes; 0 = unknown, covers up to the next symbol */
	uint64_t limit; /* an unsized symbol ends here at most (section end) */
	uint32_t name;	/* offset in the builder's arena */
	uint32_t owner; /* kernel: 0 core, else a module tag; files: 0 */
	uint32_t rank;	/* enum sym_rank bits; higher wins */
};

struct sym_builder {
	struct sym_candidate *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

void sym_builder__init(struct sym_builder *b);
void sym_builder__release(struct sym_builder *b);
/* Makes room for that many more candidates and name bytes (a hint: add
 * still grows as needed).  Returns 0, -ENOMEM, or -E2BIG past the limits. */
int sym_builder__reserve(struct sym_builder *b, size_t symbols, size_t name_bytes);
/* Adds one candidate; name is copied (len bytes, no NUL needed).  Returns 0,
 * -ENOMEM, or -E2BIG past SYM_MAX_SYMBOLS / a 4 GiB arena. */
int sym_builder__add(struct sym_builder *b, uint64_t start, uint64_t size, uint64_t limit,
		     const char *name, size_t len, uint32_t rank, uint32_t owner);
/* Moves the deduplicated table into m (replacing nothing: m must have no
 * symbols yet) and resets b.  Returns 0 or -ENOMEM. */
int sym_builder__finish(struct sym_builder *b, struct sym_module *m);
/* Which of two names at one address a table keeps, after rank: fewer
 * leading underscores, then shorter, then strcmp (<0: a). */
int sym_name_cmp(const char *a, const char *b);
/* Index of the innermost entry of m covering addr, or SIZE_MAX. */
size_t sym_table__find(const struct sym_module *m, uint64_t addr);

/* elf_module.c: one ELF file or in-memory image. */
struct elf_file {
	Elf *elf;
	void *image;   /* owned copy for in-memory images, else NULL */
	uint64_t size; /* file or image size, bytes */
	int fd;	       /* closed by elf_file__release when owns_fd */
	bool owns_fd;
	bool debug_only; /* a separate debug file: PT_LOADs may lie past its end */
	const char *why; /* static text of the last failure */
	enum sym_error why_kind;
};

/* Begins reading fd (not taken: keep it open until elf_file__release,
 * or set owns_fd after success to hand it over).  Checks that the headers,
 * PT_LOAD segments and sections lie inside the file (a truncated file is
 * refused).  Returns 0, or -EINVAL with f->why/why_kind set. */
int elf_file__open_fd(struct elf_file *f, int fd);
/* Same for a separate debug file (objcopy --only-keep-debug keeps program
 * headers whose segments are not in the file): PT_LOADs are not checked. */
int elf_file__open_debug_fd(struct elf_file *f, int fd);
/* Same for a copy of size bytes at image.  -ENOMEM, -EINVAL. */
int elf_file__open_memory(struct elf_file *f, const void *image, size_t size);
/* Same for a debug-only image (MiniDebugInfo): PT_LOADs are not checked. */
int elf_file__open_debug_memory(struct elf_file *f, const void *image, size_t size);
void elf_file__release(struct elf_file *f);
/* Build ID from the NT_GNU_BUILD_ID note into out (SYM_BUILD_ID_MAX bytes).
 * Returns its length, 0 when there is none, or -EINVAL if malformed. */
ssize_t elf_file__build_id(struct elf_file *f, uint8_t *out);
/* Reads the PT_LOADs, .symtab/.dynsym of f, and the .symtab of a separate
 * debug file matching m's build ID, into m.  On failure m gets an error and
 * no symbols; returns 0 (also when m got an error) or -ENOMEM. */
int elf_module__load(struct sym_module *m, struct elf_file *f);
/* plt.c: a "func@plt" entry for each PLT stub of f that .rela.plt names
 * (x86-64).  Unusable or missing sections add nothing.  Returns 0 or -ENOMEM. */
int elf_file__add_plt(struct elf_file *f, struct sym_builder *b);

/* debug_file.c: separate debug files. */
struct debug_query {
	const uint8_t *build_id;
	size_t build_id_len;
	const char *path;      /* module's display path: .gnu_debuglink's directory */
	const char *debuglink; /* .gnu_debuglink file name, or NULL */
	uint32_t debuglink_crc;
	const struct sym_config *cfg; /* may be NULL: /usr/lib/debug only */
};
/* Finds and opens the separate debug file for q whose build ID equals
 * q->build_id.  On success *out is open (release it) and *found_path is a
 * malloc'd path.  Returns 0, -ENOENT if none, -ENOMEM. */
int debug_file__find(const struct debug_query *q, struct elf_file *out, char **found_path);

/* minidebug.c: the .symtab of the xz-compressed ELF image in
 * .gnu_debugdata (GDB manual, "MiniDebugInfo"), added to b.  Returns 1 if
 * symbols were added, 0 if there is no such section or it is unusable,
 * -ENOMEM. */
int minidebug__add_symbols(struct elf_file *f, struct sym_builder *b);
/* Adds the function symbols of every section of type (SHT_SYMTAB,
 * SHT_DYNSYM) in f.  0, -EINVAL (f->why set), -ENOMEM. (elf_module.c) */
int elf_file__add_symbols(struct elf_file *f, GElf_Word type, struct sym_builder *b);
/* True if f has a section named name. */
bool elf_file__has_section(struct elf_file *f, const char *name);

/* debug_layout.c: a debug file rewritten with compressed sections
 * decompressed (what debug_zstd.c and debug_inflate.c build). */
struct debug_sec {
	const uint8_t *raw; /* the file's bytes, NULL when nothing is copied */
	uint64_t raw_size;
	uint64_t size;	    /* bytes in the image */
	uint64_t align;
	uint64_t offset;    /* in the image */
	uint32_t ch_type;   /* ELFCOMPRESS_* to decompress, or 0: copied */
	bool unread;	    /* a section no lookup reads: empty SHT_NOBITS in the image */
};
struct debug_layout {
	const Elf64_Ehdr *eh; /* the file's */
	size_t shnum;
	struct debug_sec *secs; /* shnum, [0] unused */
	uint64_t shoff;		/* the image's section header table */
	uint64_t size;		/* the image's bytes */
};
/* Plans the image of elf with the compressed sections of the kinds in kinds
 * (a bit 1 << ELFCOMPRESS_*) decompressed and those of the other known kind
 * copied as they are; debug sections lookups never read (location lists,
 * .debug_aranges, name indexes) left out, empty.  0, -EINVAL (not a host-order ELF64, an unknown
 * compression, a declared size past SYM_MAX_DEBUG_SECTION or
 * SYM_MAX_DEBUG_IMAGE) or -ENOMEM; l is released on error. */
int debug_layout__plan(Elf *elf, uint32_t kinds, struct debug_layout *l);
/* The image's ELF header, and its section header i (0 <= i < shnum). */
void debug_layout__ehdr(const struct debug_layout *l, Elf64_Ehdr *out);
void debug_layout__shdr(Elf *elf, const struct debug_layout *l, size_t i, Elf64_Shdr *out);
void debug_layout__release(struct debug_layout *l);

/* debug_zstd.c: zstd-compressed debug sections, which libelf 0.188 cannot
 * decompress. */
/* True when elf has a section compressed with ELFCOMPRESS_ZSTD. */
bool debug_zstd__present(Elf *elf);
/* A malloc'd in-memory ELF image (*image, *size bytes; the caller frees it
 * after elf_end of the Elf read from it) of elf's non-allocated sections
 * with every zstd section decompressed, for elf_memory() and libdw.  Returns
 * 0, -EINVAL (not a host-order ELF64, a declared size past
 * SYM_MAX_DEBUG_SECTION/SYM_MAX_DEBUG_IMAGE, corrupt data) or -ENOMEM. */
int debug_zstd__image(Elf *elf, void **image, size_t *size);

/* debug_inflate.c: elf's non-allocated sections, zlib and zstd ones
 * decompressed, written as an ELF image into an unnamed 0600 file on a disk
 * file system (/var/tmp, else /tmp; never tmpfs), for the caller to map
 * read-only: *fd (the caller's to close) and *size bytes.  Returns 0,
 * -ENOENT (no such file system), -EINVAL (not a host-order ELF64, a
 * compression of another kind, a declared size past SYM_MAX_DEBUG_SECTION
 * or SYM_MAX_DEBUG_IMAGE, corrupt data), -ENOMEM or a write's -errno.
 * map, map_size: the read-only file mapping elf reads (or NULL), whose
 * pages each section's data is read from are given back once written (the
 * compressed libc debug file: 3.4 MiB resident otherwise). */
int debug_inflate__file(Elf *elf, const void *map, size_t map_size, int *fd, size_t *size);
/* The same image written into fd (an empty file open for writing) from
 * offset 0: *size bytes; the same errors. */
int debug_inflate__into(Elf *elf, const void *map, size_t map_size, int fd, size_t *size);

/*
 * debug_cache.c: debug_inflate's images kept across recordings in a cache
 * directory (cache_dir.c's rules), keyed by the module's build ID, the
 * debug file's device, inode, size and modification time, and
 * DEBUG_LAYOUT_VERSION; see its top comment for the file.  Owned by the
 * symbolizer (in its struct sym_dwarf_lru, which every module reaches).
 */
/* Bump when what debug_layout.c puts in an image changes (sections left
 * out, their order or alignment). */
#define DEBUG_LAYOUT_VERSION 1u
/*
 * The decompressed image of the debug file src_fd (read by elf through
 * the read-only mapping map, map_size bytes) whose module has the build ID
 * build_id: the cached one when its key matches, else made by
 * debug_inflate__into in the cache and published (evicting the least
 * recently used images past c->max_bytes), else (directory refused,
 * no O_TMPFILE) by debug_inflate__file.  *fd (the caller closes it) holds
 * the image in its first *size bytes.  Counts into c->stats.  Returns 0 or
 * debug_inflate__file's errors.
 */
int debug_cache__image(struct debug_cache *c, int src_fd, const uint8_t *build_id,
		       size_t build_id_len, Elf *elf, const void *map, size_t map_size, int *fd,
		       size_t *size);
/* Unlinks the least recently used images (by modification time, which a
 * hit renews) of the cache directory dirfd, other than keep (or NULL),
 * while all of them take more than max_bytes; counts c->stats.evicted.
 * 0 or -errno. */
int debug_cache__evict(struct debug_cache *c, int dirfd, const char *keep, uint64_t max_bytes);
/* The symbolizer's budget list, where its debug cache lives (symbolizer.c). */
struct sym_dwarf_lru *symbolizer__dwarf_lru(struct symbolizer *s);

/* kallsyms.c */
/* Loads text symbols (t T w W, module symbols included) from a kallsyms
 * file into m and sets *stext to _stext's address (0 if absent).  Sets m's
 * error when the file is unreadable or shows only zero addresses.  Returns 0
 * or -ENOMEM. */
int kallsyms__load(struct sym_module *m, const char *path, uint64_t *stext);
/* Owner names ("mymod", "bpf", "__builtin__ftrace") kept shorter than this
 * (bytes, NUL included; module names are at most 55), and at most this many
 * owners: the symbols of others have no known owner. */
#define KALLSYMS_OWNER_NAME 64
#define KALLSYMS_OWNERS_MAX 4096
/* One owner of bracketed kallsyms lines ("ADDR TYPE NAME\t[OWNER]"). */
struct kallsyms_owner {
	char name[KALLSYMS_OWNER_NAME];
	uint64_t first, last; /* lowest and highest address of its t/T symbols */
	bool text;	      /* it has one */
};
#define KALLSYMS_PROBE_NONE (-3) /* no text symbol at or below the probe */
#define KALLSYMS_PROBE_CORE (-2) /* the nearest one below is the core kernel's */
/* What a kallsyms load saw besides the table (kallsyms__load_info). */
struct kallsyms_info {
	uint64_t text, etext, sinittext, einittext; /* core kernel bounds, 0 if absent */
	struct kallsyms_owner *owners;		    /* malloc'd: kallsyms_info__release */
	size_t nr_owners, cap_owners;
	uint64_t probe;	 /* in: an address to classify */
	int probe_owner; /* out: owners index of the text symbol nearest below
			  * probe, KALLSYMS_PROBE_CORE/_NONE, or -1 (an owner
			  * not kept) */
};
/* kallsyms__load, and when info is not NULL (zeroed but for probe) fills
 * it.  Returns 0 or -ENOMEM (info then still released by the caller). */
int kallsyms__load_info(struct sym_module *m, const char *path, uint64_t *stext,
			struct kallsyms_info *info);
void kallsyms_info__release(struct kallsyms_info *info);
/* The GNU build ID from a kernel note blob such as /sys/kernel/notes
 * (a sequence of Elf64_Nhdr notes, 4-byte aligned).  Returns its length
 * (bytes written to out, at most SYM_BUILD_ID_MAX), 0 if none, or -errno. */
ssize_t kernel_notes__build_id(const char *path, uint8_t *out);

/* cache_dir.c: the rules of the symbolizer's persistent caches (see its
 * top comment). */
/* Opens (creating it 0700 if missing; its parent must exist) the cache
 * directory path.  Returns a descriptor (the caller closes it), -ELOOP (a
 * symbolic link), -EPERM (not owned by the effective user, or writable by
 * group or others) or another -errno. */
int cache_dir__open(const char *path);
/* Opens name in the cache directory dirfd (openat, O_NOFOLLOW; flags:
 * O_RDONLY or O_RDWR) and *st its fstat: a descriptor, -EINVAL (a symbolic
 * link, not a regular file, another user's, any group or other bit set),
 * -ENOENT or another -errno. */
int cache_dir__open_file(int dirfd, const char *name, int flags, struct stat *st);
/* An unnamed 0600 file (O_TMPFILE) in the cache directory dirfd, to be
 * published: a descriptor or -errno (-EOPNOTSUPP on a file system
 * without O_TMPFILE). */
int cache_dir__tmpfile(int dirfd);
/* Publishes fd (cache_dir__tmpfile's, written) as name in dirfd:
 * fsync'ed, linked under a temporary name and renamed over name, so a
 * reader sees the old file or the whole new one.  0 or -errno. */
int cache_dir__publish(int dirfd, int fd, const char *name);

/* kallsyms_cache.c: the static part of the kernel's table (core text, init
 * text, live modules) cached per boot, module set and kernel build; see its
 * top comment for the file and the rules it is checked against. */
#define KCACHE_BOOT_ID_LEN 40  /* the boot_id's 36 characters, NUL-padded */
#define KCACHE_BUILD_ID_LEN SYM_BUILD_ID_MAX
/* A /proc/modules larger than this is not cached (bytes; ~100 a module). */
#define KCACHE_MODULES_MAX (1u << 20)
/* The files the key and the table come from (tests give their own). */
struct kallsyms_cache_paths {
	const char *kallsyms; /* /proc/kallsyms */
	const char *modules;  /* /proc/modules */
	const char *boot_id;  /* /proc/sys/kernel/random/boot_id */
	const char *notes;    /* /sys/kernel/notes */
	const char *sys_module; /* /sys/module (NAME/notes/.note.gnu.build-id) */
};
extern const struct kallsyms_cache_paths kallsyms_cache__proc;
struct kallsyms_cache_key {
	char boot_id[KCACHE_BOOT_ID_LEN];
	uint8_t build_id[KCACHE_BUILD_ID_LEN]; /* the kernel's, zero-padded */
	uint32_t build_id_len;		       /* 0: none found */
	char *modules; /* malloc'd: "NAME SIZE STATE ADDR BUILDID\n" each */
	size_t modules_len;
};
void kallsyms_cache_key__release(struct kallsyms_cache_key *key);
/* 0 when the first address of the kallsyms file at path is not 0 (reads
 * one line); -EPERM when it is (kptr_restrict, no CAP_SYSLOG), or -errno. */
int kallsyms_cache__visible(const char *path);
/* The key of this boot, kernel and module set (name, size, state, load
 * address and build ID of each module); kallsyms must show addresses.  0, -EPERM
 * (addresses read as 0: kptr_restrict; never cache then), -E2BIG, -EINVAL
 * or another -errno; the caller releases the key either way. */
int kallsyms_cache__key(struct kallsyms_cache_key *key, const struct kallsyms_cache_paths *paths);
/* The static part of a full table (m, from kallsyms__load_info with info):
 * its address ranges (core text [_text or _stext, _etext), init text, and
 * each Live module of key's list: from its first text symbol to the end of
 * the page of its last, within [address, address + size)), and the entries
 * that start in them, with their names. */
struct kallsyms_static_table {
	uint64_t (*ranges)[2]; /* [lo, hi), ascending, disjoint */
	size_t nr_ranges;
	uint64_t *starts;
	struct sym_entry *syms;
	size_t nr_syms;
	char *names;
	size_t names_len;
};
void kallsyms_static_table__release(struct kallsyms_static_table *t);
/* 0, -EINVAL (no core text bounds: nothing to cache) or -ENOMEM. */
int kallsyms_cache__static_table(struct kallsyms_static_table *t, const struct sym_module *m,
				 uint64_t stext, const struct kallsyms_info *info,
				 const struct kallsyms_cache_key *key);
/* Reads the cache in dirfd into t and *stext when its key is key.  0;
 * -ENOENT (no file), -ESTALE (another key or version), -EINVAL (a file that
 * breaks a rule), -ENOMEM, or another -errno; t is empty unless 0. */
int kallsyms_cache__read(int dirfd, const struct kallsyms_cache_key *key,
			 struct kallsyms_static_table *t, uint64_t *stext);
/* Publishes t and stext under key in dirfd, atomically, 0600.  0, -EINVAL
 * (nothing to cache) or -errno. */
int kallsyms_cache__write(int dirfd, const struct kallsyms_cache_key *key,
			  const struct kallsyms_static_table *t, uint64_t stext);
/* Loads the kernel's table into m through the cache in dir (NULL: none).
 * A hit gives m the cached static table and a struct kallsyms_static
 * (m->kstatic): a lookup outside its ranges then reads paths->kallsyms
 * whole (kallsyms_static__go_live), so names of BPF programs, trampolines
 * and anything loaded since are never the cache's.  Else m gets the full
 * table from paths->kallsyms, whose static part is cached (never when the
 * load failed or addresses read as 0).  Counts into stats, which must
 * outlive m.  Returns 0 or -ENOMEM. */
int kallsyms__load_cached(struct sym_module *m, const struct kallsyms_cache_paths *paths,
			  const char *dir, uint64_t *stext, struct symbolizer_kcache_stats *stats);
/* Whether m's table names vaddr as the live kallsyms would: true unless m
 * came from the cache and vaddr is outside its static ranges. */
bool kallsyms_static__covers(const struct kallsyms_static *ks, uint64_t vaddr);
/* Replaces m's cached table by the live one (once), counting why vaddr
 * needed it.  On failure m keeps the cached table. */
void kallsyms_static__go_live(struct sym_module *m, uint64_t vaddr);
void kallsyms_static__free(struct kallsyms_static *ks);

/* vdso.c: loads this process's vdso image into m. Returns 0 or -ENOMEM. */
int vdso__load(struct sym_module *m);

#endif
