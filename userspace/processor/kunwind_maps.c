/* SPDX-License-Identifier: MIT */
/*
 * Loading compiled CFI into the in-kernel unwinder's maps (kunwind_maps.h).
 * The kernel's row is the unwinder's compact row byte for byte
 * (unwind_module__table),
 * so a module loads as two array copies (its starts and its rows) written
 * with BPF_MAP_UPDATE_BATCH, then its descriptor, last, so that the
 * sampler never sees a descriptor whose rows are not written yet.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kunwind_maps.h"

_Static_assert(UNWIND_ROW_BYTES == sizeof(struct ms_ku_row), "rows are the same bytes");

/* Rows written per batch call (bounds the key array). */
#define KU_BATCH 8192

struct kunwind_maps {
	struct kunwind_fds fds;
	uint32_t next_row;   /* first free row */
	uint8_t *tried;	     /* [modules_cap] */
	uint32_t keys[KU_BATCH];
	struct kunwind_stats st;
};

struct kunwind_maps *kunwind_maps__new(const struct kunwind_fds *fds)
{
	struct kunwind_maps *km;

	if (fds->rows < 0 || fds->starts < 0 || fds->modules < 0 || fds->procs < 0 ||
	    !fds->rows_cap || !fds->modules_cap) {
		errno = EINVAL;
		return NULL;
	}
	km = calloc(1, sizeof(*km));
	if (!km)
		return NULL;
	km->fds = *fds;
	km->tried = calloc(fds->modules_cap, 1);
	if (!km->tried) {
		free(km);
		errno = ENOMEM;
		return NULL;
	}
	return km;
}

void kunwind_maps__free(struct kunwind_maps *km)
{
	if (!km)
		return;
	free(km->tried);
	free(km);
}

bool kunwind_maps__tried(const struct kunwind_maps *km, uint32_t module)
{
	return module >= km->fds.modules_cap || km->tried[module];
}

/* Write n values of size bytes each at indexes first.. of array map fd. */
static int write_array(struct kunwind_maps *km, int fd, uint32_t first, const void *vals,
		       size_t size, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);

	for (uint32_t done = 0; done < n;) {
		uint32_t cnt = n - done < KU_BATCH ? n - done : KU_BATCH;

		for (uint32_t i = 0; i < cnt; i++)
			km->keys[i] = first + done + i;
		if (bpf_map_update_batch(fd, km->keys, (const uint8_t *)vals + (size_t)done * size,
					 &cnt, &opts))
			return -errno;
		done += cnt;
	}
	return 0;
}

int kunwind_maps__load_module(struct kunwind_maps *km, uint32_t module,
			      const struct unwind_module *m)
{
	struct ms_ku_module desc = {0};
	struct unwind_table_view t = {0};
	int err;

	if (module >= km->fds.modules_cap)
		return -E2BIG;
	if (km->tried[module])
		return -EALREADY;
	km->tried[module] = 1;
	if (m)
		unwind_module__table(m, &t);
	if (t.nrows < 2)
		return 0; /* no CFI: the descriptor stays "not loaded"; userspace unwinds */
	if (t.nrows > km->fds.rows_cap - km->next_row) {
		km->st.modules_full++;
		return -ENOSPC;
	}
	err = write_array(km, km->fds.starts, km->next_row, t.starts, sizeof(uint32_t), t.nrows);
	if (!err) {
		/* the module keeps its rows as indexes into its distinct rows */
		void *rows = malloc((size_t)t.nrows * sizeof(struct ms_ku_row));

		if (!rows)
			return -ENOMEM;
		unwind_module__rows(m, 0, t.nrows, rows);
		err = write_array(km, km->fds.rows, km->next_row, rows, sizeof(struct ms_ku_row),
				  t.nrows);
		free(rows);
	}
	if (err)
		return err;
	desc.base = t.base;
	desc.first = km->next_row;
	desc.nrows = t.nrows;
	if (bpf_map_update_elem(km->fds.modules, &module, &desc, BPF_ANY))
		return -errno;
	km->next_row += t.nrows;
	km->st.rows = km->next_row;
	km->st.modules_loaded++;
	return 0;
}

int kunwind_maps__set_proc(struct kunwind_maps *km, uint32_t tgid, const struct ms_ku_mapping *maps,
			   uint32_t n)
{
	struct ms_ku_proc *v;
	int err = 0;

	if (n > MS_KU_PROC_MAPS)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->n = n;
	memcpy(v->maps, maps, n * sizeof(*maps));
	if (bpf_map_update_elem(km->fds.procs, &tgid, v, BPF_ANY))
		err = -errno;
	else
		km->st.proc_updates++;
	free(v);
	return err;
}

void kunwind_maps__stats(const struct kunwind_maps *km, struct kunwind_stats *st)
{
	*st = km->st;
}
