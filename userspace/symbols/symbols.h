/* SPDX-License-Identifier: MIT */
/*
 * Immediate symbolization: ELF symbols for modules, kernel symbols.
 *
 * A struct symbolizer caches one struct sym_module per module identity
 * (build ID when there is one, else device+inode+size+mtime), loaded once
 * and kept for the life of the symbolizer; lookups after the first load
 * allocate nothing.  Modules are read through libelf: .symtab and .dynsym
 * of the file itself, plus the .symtab of a separate debug file found under
 * /usr/lib/debug/.build-id/xx/rest.debug whose build ID matches
 * (Debian's -dbg packages).  The kernel's symbols come from /proc/kallsyms.
 *
 * Pinning: symbolizer__file() opens the file when the mapping is first seen
 * (through /proc/PID/map_files/START-END when it exists, which survives the
 * file's deletion while the process lives) and loads its symbols before
 * returning, so a process that exits or a file deleted before the samples
 * are processed still gets names.
 *
 * Every file read is untrusted: a malformed ELF gives a module with no
 * symbols and a reason (sym_module__error), never a crash.
 */
#ifndef MS_SYMBOLS_H
#define MS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct symbolizer;
struct sym_module;

/* Returns NULL and sets errno on failure. */
struct symbolizer *symbolizer__new(void);
/* Frees every module.  Accepts NULL. */
void symbolizer__free(struct symbolizer *s);

/*
 * Find or pin the module for a file mapping.
 *   open_path: what to open now, e.g. "/proc/1234/map_files/7f00-7f10", or
 *              NULL to use path directly (prefixed by "/proc/PID/root" when
 *              pid != 0 and that exists).
 *   path:      the path as the process saw it (MMAP2 filename).
 *   build_id, build_id_len: the mapping's build ID if known (a capture's
 *              module row), else NULL/0.
 * The build ID, when both the record and the file have one, must match; a
 * mismatching file is not used (the module then has no symbols and its error
 * says why).  Returns a module owned by the symbolizer, or NULL with errno
 * (ENOMEM only; unreadable files still give a module).
 */
struct sym_module *symbolizer__file(struct symbolizer *s, uint32_t pid, const char *open_path,
				    const char *path, const uint8_t *build_id, size_t build_id_len);

/*
 * symbolizer__file for a mapping known by the mapped file's device and inode
 * (MMAP2 without attr.build_id: maj, min, ino; include/uapi/linux/
 * perf_event.h), the build ID then being the file's own ELF note.
 *   open_path: /proc/PID/map_files/START-END (the mapped file itself), used
 *              when it opens; or NULL.
 *   path:      the path as the process saw it.  Used (through /proc/PID/root
 *              when pid != 0 and that exists) only when open_path does not
 *              open AND its device is maj:min and inode ino; a different file
 *              there gives a module without symbols whose error says
 *              "not the mapped file".
 * Returns as symbolizer__file (NULL with errno ENOMEM only).
 */
struct sym_module *symbolizer__mapped_file(struct symbolizer *s, uint32_t pid,
					   const char *open_path, const char *path, uint32_t maj,
					   uint32_t min, uint64_t ino);

/*
 * Free m and every cache key naming it: its owner knows no process maps it
 * any more (a long recording's modules follow the live processes).  The
 * vdso and the kernel are kept.  A later mapping of the same file loads it
 * again.  Returns 0, -ENOENT (not this symbolizer's) or -ENOMEM (m kept).
 */
int symbolizer__forget(struct symbolizer *s, struct sym_module *m);

/* The vdso of this kernel (read from this process's own vdso image). */
struct sym_module *symbolizer__vdso(struct symbolizer *s);

/* The kernel (/proc/kallsyms, loaded on first use). */
struct sym_module *symbolizer__kernel(struct symbolizer *s);

/*
 * Map a file offset inside the module (mapping pgoff + address - start) to
 * the ELF virtual address (via the PT_LOAD program header that contains it).
 * Returns false if no PT_LOAD contains it or the ELF could not be read; then
 * *vaddr is set to file_offset.  For the kernel, returns the input.
 */
bool sym_module__to_vaddr(struct sym_module *m, uint64_t file_offset, uint64_t *vaddr);

/*
 * The function containing vaddr (ELF virtual address; kernel: runtime
 * address).  Returns the symbol name (owned by the module, valid for the
 * symbolizer's life) and sets *offset to vaddr - symbol start, or returns
 * NULL if no symbol covers it.  Symbols with size 0 cover up to the next
 * symbol.  Allocates nothing, but for the kernel's table from the cache
 * (symbolizer__set_kallsyms_cache), which an address outside it replaces
 * once by the live one (names handed out before stay valid).
 */
const char *sym_module__lookup(struct sym_module *m, uint64_t vaddr, uint64_t *offset);

/* Identity: build ID bytes (NULL if none) and length; file size in bytes. */
const uint8_t *sym_module__build_id(const struct sym_module *m, size_t *len);
uint64_t sym_module__size(const struct sym_module *m);
/* For a file without a build ID: a 64-bit FNV-1a hash of its whole content
 * (never 0), its identity in captures; 0 when it has a build ID or could not
 * be read. */
uint64_t sym_module__content_hash(const struct sym_module *m);
/* Display path as given at first sight. */
const char *sym_module__path(const struct sym_module *m);
/* NULL if symbols loaded fine, else a reason ("no such file", "bad ELF: ...",
 * "build ID mismatch: mapping 12ab.. file 34cd.."). */
const char *sym_module__error(const struct sym_module *m);
/* Number of function symbols loaded. */
size_t sym_module__symbol_count(const struct sym_module *m);
/* Symbol number index (0 <= index < sym_module__symbol_count, ascending
 * address order): returns its name and sets [*start, *end) (ELF virtual
 * addresses; kernel: runtime addresses), or returns NULL past the end.
 * start/end may be NULL. */
const char *sym_module__symbol(const struct sym_module *m, size_t index, uint64_t *start,
			       uint64_t *end);
/* Path of the separate debug file whose .symtab was merged (build-ID tree
 * under /usr/lib/debug), or NULL if none was found.  Owned by the module. */
const char *sym_module__debug_path(const struct sym_module *m);

/*
 * One frame of an address's inline chain (sym_module__frames): function
 * name, source file and line (0 unknown).  Strings are owned by the module
 * (libdw's or the symbol table's): the symbol table's live as long as the
 * symbolizer, DWARF's until the next sym_module__frames or
 * sym_module__dwarf_error call of any module, which may close the DWARF of
 * modules used less recently (symbolizer__set_dwarf_budget): copy them.
 */
struct sym_frame {
	const char *function; /* NULL if unknown */
	const char *file;     /* NULL if unknown */
	uint32_t line;
	bool inlined; /* an inlined call (DW_TAG_inlined_subroutine) */
};

/*
 * The frames at vaddr (ELF virtual address), innermost first, at most max:
 * each inlined call its own frame with the line inside it, its caller with
 * the call site's line (DW_AT_call_file/DW_AT_call_line), ending with the
 * out-of-line function.  Without DWARF: one frame with the symbol's name and
 * no line.  Returns the count (0: nothing known).  Opens the module's DWARF
 * on first use; never fails otherwise (problems: sym_module__dwarf_error).
 */
size_t sym_module__frames(struct sym_module *m, uint64_t vaddr, struct sym_frame *out, size_t max);
/* Why the module's lines or inline frames are missing or partial (".dwp not
 * supported", "zstd-compressed sections", "damaged DWARF: ..."), or NULL.
 * Opens the DWARF if that was not tried yet. */
const char *sym_module__dwarf_error(struct sym_module *m);
/*
 * A new read-only descriptor (O_CLOEXEC, the caller closes it) of the very
 * file the module's symbols were read from and verified (build ID against
 * the mapping's, or device/inode when it has none): the descriptor pinned at
 * first sight when the module's path in our mount namespace leads elsewhere
 * (read through /proc/PID/map_files: deleted, replaced, memfd, another
 * mount namespace), else its path, reopened and checked to be the same file
 * (device, inode, size, mtime).  Returns the fd, or -ENOENT (no such file:
 * kernel, vdso, refused or unreadable module, pin limit reached), -ESTALE
 * (the path now holds another file), or another -errno of open().
 */
int sym_module__open_file(const struct sym_module *m);
/*
 * The ELF virtual address of the data object (STT_OBJECT) name in the file
 * the module was read from (sym_module__open_file; .symtab, then .dynsym).
 * 0, -ENOENT (no such object, or no file), or another -errno.
 */
int sym_module__data_symbol(const struct sym_module *m, const char *name, uint64_t *vaddr);
/* True when the module's names came from MiniDebugInfo (.gnu_debugdata). */
bool sym_module__minidebuginfo(const struct sym_module *m);

/* Adds a directory searched for separate debug files before /usr/lib/debug
 * (DIR/.build-id/xx/rest.debug, DIR/<debuglink>, DIR/<module dir>/<debuglink>).
 * Affects modules loaded afterwards.  Returns 0 or -ENOMEM. */
int symbolizer__add_debug_dir(struct symbolizer *s, const char *dir);
/* Lets later lookups ask debuginfod servers (libdebuginfod: DEBUGINFOD_URLS,
 * its cache) for debug files by build ID, after every local place failed.
 * Never used while recording.  Returns 0, or -ENOTSUP when no URL is set
 * or libdebuginfod cannot be opened (it is loaded with dlopen). */
int symbolizer__enable_debuginfod(struct symbolizer *s);
/*
 * Open DWARF (libelf's debug sections, libdw's line tables and DIE caches,
 * our unit and scope tables) kept at most this many heap bytes: past it
 * the DWARF of the least recently used modules is closed and reopened when
 * a new address of theirs needs lines.  The module in use stays open even
 * alone over it.  0 (the default): unbounded.
 */
void symbolizer__set_dwarf_budget(struct symbolizer *s, size_t bytes);
struct symbolizer_dwarf_stats {
	uint64_t opened;   /* modules whose DWARF was opened */
	uint64_t reopened; /* opens again after the budget closed them */
	uint64_t closed;   /* closes by the budget */
	size_t bytes;	   /* heap bytes open DWARF holds now */
	size_t peak;	   /* largest such figure */
};
void symbolizer__dwarf_stats(const struct symbolizer *s, struct symbolizer_dwarf_stats *out);
/*
 * Cache the static part of the kernel's symbol table (core kernel and init
 * text, loaded modules) in directory dir (created 0700 if missing; refused
 * when it is a symbolic link, not the effective user's, or writable by
 * group or others), keyed by boot, kernel build and /proc/modules, so that
 * later symbolizers in this boot skip parsing /proc/kallsyms.  A kernel
 * address outside those parts (BPF programs and trampolines, ftrace and
 * kprobe trampolines, a module loaded since) reads /proc/kallsyms whole,
 * once.  NULL (the default): no cache.  Call before the kernel's first use.
 * 0 or -ENOMEM.
 */
int symbolizer__set_kallsyms_cache(struct symbolizer *s, const char *dir);
struct symbolizer_kcache_stats {
	uint64_t hit;	   /* the table came from the cache */
	uint64_t miss;	   /* no cache file, or one of another boot/kernel/module set */
	uint64_t bad;	   /* a cache file that broke a rule: rebuilt */
	uint64_t unusable; /* the directory was refused, or the file not written */
	/* After a hit, the address outside the cached parts that made the
	 * symbolizer read /proc/kallsyms live, by what that read found there: */
	uint64_t outside_bpf;	  /* a [bpf] symbol: program, trampoline, dispatcher */
	uint64_t outside_other;	  /* another owner ([__builtin__ftrace], a new module) */
	uint64_t outside_unknown; /* no symbol, the core kernel's, or the read failed */
};
void symbolizer__kcache_stats(const struct symbolizer *s, struct symbolizer_kcache_stats *out);
/*
 * Keep the decompressed images of compressed debug sections (Debian's
 * /usr/lib/debug/.build-id files) in directory dir (created 0700 if
 * missing, refused under the same rules as symbolizer__set_kallsyms_cache),
 * at most max_bytes of them (least recently used evicted), keyed by build
 * ID and the debug file's device, inode, size and modification time, so
 * that later symbolizers map them rather than decompressing again.  A
 * cached image that fails validation is made again.  NULL (the default):
 * no cache.  0 or -ENAMETOOLONG.
 */
int symbolizer__set_debug_cache(struct symbolizer *s, const char *dir, uint64_t max_bytes);
struct symbolizer_debug_cache_stats {
	uint64_t hit;	   /* an image mapped from the cache: nothing decompressed */
	uint64_t miss;	   /* no image, or one of another key: decompressed and cached */
	uint64_t bad;	   /* an image file that broke a rule: decompressed and replaced */
	uint64_t evicted;  /* images unlinked to keep the directory under its limit */
	uint64_t unusable; /* the directory was refused, or an image not written */
};
void symbolizer__debug_cache_stats(const struct symbolizer *s,
				   struct symbolizer_debug_cache_stats *out);
/* Files debuginfod delivered so far. */
uint64_t symbolizer__debuginfod_fetched(const struct symbolizer *s);

/*
 * Deferred symbolization: the module with this build ID, found on this host
 * (path itself, then debug files: --debug-dir, /usr/lib/debug, debuginfod).
 * Its identity is proved by the build ID: a file at path with another ID is
 * refused and *why says so, naming both IDs.  Returns a module (owned by
 * s) with symbols, or NULL with *why set (static or owned by s until the
 * next call) and errno (ENOENT, ENOMEM).
 */
struct sym_module *symbolizer__by_build_id(struct symbolizer *s, const char *path,
					   const uint8_t *build_id, size_t build_id_len,
					   const char **why);

/* Kernel: KASLR offset (_stext in kallsyms minus _stext in the vmlinux
 * link address 0xffffffff81000000 when known, else 0) and the kernel build
 * ID from /sys/kernel/notes as lowercase hex ("" if unknown). */
uint64_t symbolizer__kaslr_offset(struct symbolizer *s);
const char *symbolizer__kernel_build_id(struct symbolizer *s);

#endif
