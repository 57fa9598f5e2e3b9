/* SPDX-License-Identifier: MIT */
/*
 * Building a module's CFI table (unwind_internal.h, struct unwind_module)
 * from compiled rows: unwind_module.c compiles (the FDEs' ranges from
 * fde_ranges.c), unwind_table.c lays out.
 *
 * Rows reach the table one of two ways: .eh_frame's, when the module has
 * no .debug_frame rows, straight into a growing table as they arrive
 * (struct unwind_dense); otherwise all rows are built first (struct
 * unwind_brow, 32 bytes each) and clipped and laid out at the end
 * (unwind_table__finish).  Either way the table's rows are then kept as
 * indexes into the module's distinct rows.
 */
#ifndef MS_UNWIND_UNWIND_TABLE_H
#define MS_UNWIND_UNWIND_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "userspace/unwind/unwind_internal.h"

/* One growable array. */
struct vec {
	void *p;
	size_t n, cap;
};

/* Room for one more element of elem bytes at the end; NULL without memory. */
void *unwind_vec__push(struct vec *v, size_t elem);
/* Give back the unused tail of a finished array (it stays as it is if
 * realloc fails: the shrink is only a saving). */
void unwind__shrink(void **p, size_t bytes);

/* A row while building: [start, end) in ELF vaddrs. */
struct brow {
	uint64_t start, end;
	struct unwind_row row;
};

/*
 * The table written as rows arrive (ascending, from .eh_frame alone): gaps
 * become NONE rows, equal neighbours merge, as unwind_table__finish() does
 * for built rows, without holding 32 bytes a row until the end.
 */
struct dense {
	uint32_t *starts;
	struct unwind_row *rows;
	size_t k, cap;
	uint64_t base, at;
	struct unwind_row last;
	bool started;
};

/* One row [start, end), at or after the previous one's start.  0 or -errno. */
int unwind_dense__push(struct dense *d, uint64_t start, uint64_t end, const struct unwind_row *row);
/* The streamed table into m (d's arrays are taken or freed).  0 or -errno. */
int unwind_dense__finish(struct unwind_module *m, struct dense *d);
/* The table of m from built rows: .eh_frame's first n_eh, then
 * .debug_frame's (rows is emptied).  0 or -errno. */
int unwind_table__finish(struct unwind_module *m, struct vec *rows, size_t n_eh);
/* Bytes of m's table: starts, row indexes, distinct rows, page index. */
size_t unwind_table__bytes(const struct unwind_module *m);

/* The code an FDE covers: ELF vaddrs [lo, hi). */
struct fde_range {
	uint64_t lo, hi;
};

/*
 * Ranges of every FDE of a CFI section (data, at ELF vaddr sec_addr;
 * .eh_frame when eh_frame, else .debug_frame), in section order, appended to
 * out (struct fde_range); FDEs with an unusable CIE or a malformed range are
 * counted in *nfdes but give no range (fde_ranges.c).  0 or -errno.
 */
int unwind_fde__ranges(Elf_Data *data, uint64_t sec_addr, bool eh_frame,
		       const unsigned char *e_ident, struct vec *out, size_t *nfdes);

#endif
