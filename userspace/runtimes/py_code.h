/* SPDX-License-Identifier: MIT */
/*
 * Naming CPython code objects as samples are processed: qualified name,
 * file name, first line and line table, read from the live process
 * (process_vm_readv) and cached by (pid, address, fingerprint).  A code
 * object whose fingerprint (co_firstlineno ^ low 32 bits of co_name, as the
 * BPF walker computed it) no longer matches was freed and its memory reused:
 * it is unreadable, never misnamed.
 */
#ifndef MS_PY_CODE_H
#define MS_PY_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "py_layout.h"

#define PY_STRING_MAX 1024	   /* longest name or file name read (characters) */
#define PY_LINETABLE_MAX (1u << 20) /* longest line table read (bytes) */

struct py_code {
	char *qualname; /* owned; "" if unreadable */
	char *filename; /* owned */
	int32_t firstlineno;
	uint8_t lines;	   /* PY_LINES_* */
	uint8_t *linetable; /* owned, nlinetable bytes */
	uint32_t nlinetable;
};

struct py_namer;

/* NULL + errno on failure. */
struct py_namer *py_namer__new(void);
/* Accepts NULL. */
void py_namer__free(struct py_namer *n);

/*
 * The code object at code in process pid whose walker fingerprint was fp.
 * Returns the cached entry, or NULL when it cannot be read or its
 * fingerprint differs (cached as such).  Valid until py_namer__free or
 * py_namer__retain.
 */
const struct py_code *py_namer__code(struct py_namer *n, pid_t pid, const struct py_layout *l,
				     uint64_t code, uint32_t fp);

/*
 * Forget the code objects of every process keep(ctx, pid) says is gone,
 * so a long recording's cache follows its live processes.  Pointers from
 * py_namer__code are invalid afterwards.
 */
#include <stdbool.h>
void py_namer__retain(struct py_namer *n, bool (*keep)(void *ctx, pid_t pid), void *ctx);

/*
 * The source line of the instruction at byte offset instr of a code object
 * (first line firstlineno) from its line table (table, len bytes, format
 * lines: PY_LINES_*).  Rules: 3.10 Objects/lnotab_notes.txt (co_linetable:
 * byte-delta, signed line-delta pairs, -128 = no line); 3.11+
 * Objects/locations.md.  instr == UINT32_MAX (before the first instruction)
 * gives firstlineno.  Returns the line, or -1 when the table has none for
 * that offset or is malformed.
 */
int py_lines__lookup(const uint8_t *table, size_t len, uint8_t lines, int32_t firstlineno,
		     uint32_t instr);

#endif
