/* SPDX-License-Identifier: MIT */
/*
 * CPython structure layouts: what the BPF walker needs (struct ms_py_layout,
 * bpf/abi/python.h) plus what userspace needs to name code objects.
 *
 * 3.10, 3.11 and 3.12 come from tables per minor version (offsets of the
 * release builds on x86-64; tests/unit/test_python.c checks them against the
 * DWARF of the interpreters on the build machine).  3.13 comes from the
 * interpreter's own _Py_DebugOffsets at the start of _PyRuntime
 * (Include/internal/pycore_runtime.h), validated as untrusted input.
 * Free-threaded builds and other versions are refused (-ENOTSUP).
 */
#ifndef MS_PY_LAYOUT_H
#define MS_PY_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../bpf/abi/python.h"

/* py_layout.lines */
#define PY_LINES_LNOTAB310 1 /* 3.10 co_linetable: (byte delta, signed line delta) pairs */
#define PY_LINES_LOCATIONS 2 /* 3.11+ location table (Objects/locations.md) */

struct py_layout {
	struct ms_py_layout bpf;
	uint16_t code_qualname;	 /* co_qualname, or MS_PY_NO_FIELD (3.10: co_name is used) */
	uint16_t code_filename;	 /* co_filename */
	uint16_t code_linetable; /* co_linetable (bytes) */
	uint16_t code_size;	 /* bytes of a code object to read (covers every field) */
	uint16_t unicode_state;	 /* PyASCIIObject.state */
	uint16_t unicode_length; /* PyASCIIObject.length */
	uint16_t ascii_size;	 /* sizeof(PyASCIIObject): compact ASCII data follows */
	uint16_t compact_size;	 /* sizeof(PyCompactUnicodeObject): other compact data follows */
	uint16_t bytes_size;	 /* PyBytesObject.ob_size */
	uint16_t bytes_sval;	 /* PyBytesObject.ob_sval */
	uint8_t lines;		 /* PY_LINES_* */
};

/* Size of the 3.13 _Py_DebugOffsets block this reader knows (bytes). */
#define PY_DEBUG_OFFSETS_313_SIZE 584

/*
 * The layout of CPython version_hex (PY_VERSION_HEX) for 3.10-3.12 into *l
 * (bpf.version_hex set; runtime and pid namespace left 0).  Returns 0, or
 * -ENOTSUP for another minor version.
 */
int py_layout__from_table(uint32_t version_hex, struct py_layout *l);

/*
 * Validate a 3.13 _Py_DebugOffsets block (img, len bytes: the first bytes of
 * _PyRuntime, read from the target) and fill *l from it.  version_hex is the
 * version the binary states (Py_Version), which the block must repeat.
 * Checks: length, cookie "xdebugpy", version 3.13.x and equal to
 * version_hex, not free-threaded, every structure size in a plausible range,
 * every used field inside its structure and aligned to its width, and every
 * offset the BPF walker takes fitting its u16 and its read window.
 * Returns 0, or -EINVAL with why (if not NULL, why_len bytes) naming the
 * first check that failed; -ENOTSUP for another version.
 */
int py_layout__from_debug_offsets(const uint8_t *img, size_t len, uint32_t version_hex,
				  struct py_layout *l, char *why, size_t why_len);

/*
 * The CPython in an ELF file: its PY_VERSION_HEX (from the Py_Version
 * symbol's bytes; for 3.10, which lacks it, from a libpython3.N soname or
 * file name) and the ELF address of _PyRuntime.  Returns 0, -ENOENT when
 * the file has no _PyRuntime symbol (not an interpreter), -ENOTSUP when the
 * version cannot be read, or -errno for I/O.
 */
int py_layout__read_elf(const char *path, uint32_t *version_hex, uint64_t *runtime_vaddr,
			uint64_t *first_load_vaddr);

/* Does the ELF file at path need a libpython3.N shared library (DT_NEEDED)?
 * False for any other file and on any error. */
bool py_layout__links_libpython(const char *path);

#endif
