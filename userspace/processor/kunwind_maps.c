/* SPDX-License-Identifier: MIT */
/*
 * Loading compiled CFI into the in-kernel unwinder's maps (kunwind_maps.h).
 * The kernel's row is the unwinder's compact row byte for byte
 * (unwind_module__table), full rows of the shapes it steps rewritten
 * (unwind_module__kernel_row: lazy PLT, signal trampoline), so a module
 * loads as two array copies (its starts and its rows) into windows of the
 * mmapable arrays (BPF_MAP_UPDATE_BATCH where a map cannot be mapped),
 * then its descriptor, last, with a syscall, so that the sampler never
 * sees a descriptor whose rows are not written yet.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kunwind_maps.h"

_Static_assert(UNWIND_ROW_BYTES == sizeof(struct ms_ku_row), "rows are the same bytes");
_Static_assert(UNWIND_KROW_PLT == MS_KU_ROW_PLT && UNWIND_KROW_SIGFRAME == MS_KU_ROW_SIGFRAME,
	       "kernel row kinds are the same flags");

/* Rows written per batch call (bounds the key array). */
#define KU_BATCH 8192
/* Bytes between two ku_starts values in the mapped array (__u32 values,
 * 8-byte aligned: the kernel's round_up(value_size, 8)). */
#define KU_STARTS_ELEM 8

/* The rows of a module loaded: [from, from + n) of its table, the starts
 * less sub (a window's first start: the descriptor's base moves up by it). */
struct ku_slice {
	uint32_t from, n, sub;
};

struct kunwind_maps {
	struct kunwind_fds fds;
	uint32_t next_row;   /* first free row */
	uint8_t *tried;	     /* [modules_cap] */
	uint32_t keys[KU_BATCH];
	uint32_t starts[KU_BATCH];	 /* a batch of starts, less the slice's sub */
	struct ms_ku_row rows[KU_BATCH]; /* the kernel's form of a batch of rows */
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

/*
 * Elements [first, first + n) of the mmapable array map fd (elem bytes
 * apart: an array's values are 8-byte aligned) mapped writable; *base is
 * element first.  Returns the mapping to unmap (*len bytes), or NULL (the
 * map is not mmapable: write with updates).
 */
static void *map_window(int fd, uint32_t first, uint32_t n, size_t elem, uint8_t **base,
			size_t *len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t from = (uint64_t)first * elem, to = from + (uint64_t)n * elem;
	uint64_t off = from & ~(uint64_t)(page - 1);
	void *p;

	*len = (size_t)(((to - off) + page - 1) & ~(uint64_t)(page - 1));
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		return NULL;
	*base = (uint8_t *)p + (from - off);
	return p;
}

/* Starts and rows [done, done + n) of slice sl of m (t: its table) at
 * indexes first + done.. of the mmapable arrays.  Returns 0, or -EOPNOTSUPP
 * when a map cannot be mapped. */
static int copy_chunk(struct kunwind_maps *km, uint32_t first, const struct unwind_module *m,
		      const struct unwind_table_view *t, const struct ku_slice *sl, uint32_t done,
		      uint32_t n)
{
	size_t slen, rlen;
	uint8_t *sbase, *rbase;
	void *sp, *rp = NULL;
	int err = -EOPNOTSUPP;

	sp = map_window(km->fds.starts, first + done, n, KU_STARTS_ELEM, &sbase, &slen);
	if (sp)
		rp = map_window(km->fds.rows, first + done, n, sizeof(struct ms_ku_row), &rbase,
				&rlen);
	if (rp) {
		for (uint32_t i = 0; i < n; i++) {
			uint32_t start = t->starts[sl->from + done + i] - sl->sub;

			memcpy(sbase + (size_t)i * KU_STARTS_ELEM, &start, sizeof(start));
			unwind_module__kernel_row(m, sl->from + done + i,
						  (struct ms_ku_row *)rbase + i);
		}
		err = 0;
		munmap(rp, rlen);
	}
	if (sp)
		munmap(sp, slen);
	return err;
}

/* The module's rows through windows of KU_BATCH rows (the recorder's RSS
 * grows by one window at most, as with the update buffers).  Returns 0, or
 * -EOPNOTSUPP when a map cannot be mapped (nothing written then). */
static int copy_rows(struct kunwind_maps *km, uint32_t first, const struct unwind_module *m,
		     const struct unwind_table_view *t, const struct ku_slice *sl)
{
	int err = 0;

	for (uint32_t done = 0; !err && done < sl->n; done += KU_BATCH) {
		uint32_t cnt = sl->n - done < KU_BATCH ? sl->n - done : KU_BATCH;

		err = copy_chunk(km, first, m, t, sl, done, cnt);
		if (err && done) /* mapped before: a failure now is not the map's kind */
			err = -ENOMEM;
	}
	return err;
}

/* Slice sl of m (t: its table), starts and rows in the kernel's form, at
 * indexes first.. of ku_starts and ku_rows, with map updates. */
static int write_rows(struct kunwind_maps *km, uint32_t first, const struct unwind_module *m,
		      const struct unwind_table_view *t, const struct ku_slice *sl)
{
	int err = 0;

	for (uint32_t done = 0; !err && done < sl->n;) {
		uint32_t cnt = sl->n - done < KU_BATCH ? sl->n - done : KU_BATCH;

		for (uint32_t i = 0; i < cnt; i++) {
			km->starts[i] = t->starts[sl->from + done + i] - sl->sub;
			unwind_module__kernel_row(m, sl->from + done + i, &km->rows[i]);
		}
		err = write_array(km, km->fds.starts, first + done, km->starts,
				  sizeof(km->starts[0]), cnt);
		if (!err)
			err = write_array(km, km->fds.rows, first + done, km->rows,
					  sizeof(km->rows[0]), cnt);
		done += cnt;
	}
	return err;
}

/*
 * The window of n rows (n >= 2, < t->nrows) of table t around ELF vaddr
 * want: the row holding want in its middle where the table allows, its
 * last row the window's sentinel (its start ends the window's last row).
 */
static struct ku_slice window_around(const struct unwind_table_view *t, uint64_t want, uint32_t n)
{
	uint64_t off = want > t->base ? want - t->base : 0;
	uint32_t lo = 0, hi = t->nrows - 1, from;

	/* starts[lo] <= off < starts[hi], or lo the last row below the sentinel */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->starts[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	from = lo > n / 2 ? lo - n / 2 : 0;
	if (from > t->nrows - n)
		from = t->nrows - n;
	return (struct ku_slice){.from = from, .n = n, .sub = t->starts[from]};
}

int kunwind_maps__load_module(struct kunwind_maps *km, uint32_t module,
			      const struct unwind_module *m, uint64_t want)
{
	uint32_t left = km->fds.rows_cap - km->next_row;
	struct ms_ku_module desc = {0};
	struct unwind_table_view t = {0};
	struct ku_slice sl;
	int err;

	if (module >= km->fds.modules_cap)
		return -E2BIG;
	if (km->tried[module])
		return -EALREADY;
	if (m)
		unwind_module__table(m, &t);
	if (t.nrows > left && want == KUNWIND_WANT_NONE)
		return -ENOSPC; /* not tried: a sample stopping in it says where */
	km->tried[module] = 1;
	if (t.nrows < 2)
		return 0; /* no CFI: the descriptor stays "not loaded"; userspace unwinds */
	sl = (struct ku_slice){.n = t.nrows};
	if (t.nrows > left) {
		if (left < KUNWIND_WINDOW_MIN) {
			km->st.modules_full++;
			return -ENOSPC;
		}
		sl = window_around(&t, want, left);
	}
	err = copy_rows(km, km->next_row, m, &t, &sl);
	if (err == -EOPNOTSUPP)
		err = write_rows(km, km->next_row, m, &t, &sl);
	if (err)
		return err;
	desc.base = t.base + sl.sub;
	desc.first = km->next_row;
	desc.nrows = sl.n;
	if (bpf_map_update_elem(km->fds.modules, &module, &desc, BPF_ANY))
		return -errno;
	km->next_row += sl.n;
	km->st.rows = km->next_row;
	km->st.modules_loaded++;
	if (sl.n < t.nrows) {
		km->st.modules_partial++;
		km->st.rows_left_out += t.nrows - sl.n;
	}
	return 0;
}

int kunwind_maps__set_proc(struct kunwind_maps *km, uint32_t tgid, uint32_t mm_cookie,
			   const struct ms_ku_mapping *maps, uint32_t n)
{
	struct ms_ku_proc *v;
	int err = 0;

	if (n > MS_KU_PROC_MAPS)
		return -EINVAL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->n = n;
	v->mm_cookie = mm_cookie;
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
	st->rows_cap = km->fds.rows_cap;
}
