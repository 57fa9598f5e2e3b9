/* SPDX-License-Identifier: MIT */
/*
 * Loading compiled CFI into the sampler's in-kernel unwinder tables
 * (bpf/abi/kunwind.h): each module's rows once, into one bounded row array
 * (a bump allocator: a module larger than the rows left gets a window of
 * them around the address a sample stopped at, all that is left; where
 * fewer than KUNWIND_WINDOW_MIN are left it is not loaded, counted; frames
 * outside what is loaded are unwound in userspace), and each process's executable
 * mappings.  The processor calls it when a sample says what the kernel
 * lacked (struct ms_kunwind cause); the recorder owns it (it holds the map
 * descriptors, borrowed from the collector, valid while it lives).
 *
 * Not thread-safe; the processor's thread only.
 */
#ifndef MS_PROCESSOR_KUNWIND_MAPS_H
#define MS_PROCESSOR_KUNWIND_MAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "../../bpf/abi/kunwind.h"
#include "../unwind/unwind.h"

struct kunwind_maps;

/* Descriptors of the maps "ku_rows", "ku_starts", "ku_modules" and
 * "ku_procs", and their capacities (entries). */
struct kunwind_fds {
	int rows, starts, modules, procs;
	uint32_t rows_cap, modules_cap;
};

/* NULL with errno EINVAL (a descriptor < 0 or a capacity 0) or ENOMEM. */
struct kunwind_maps *kunwind_maps__new(const struct kunwind_fds *fds);
void kunwind_maps__free(struct kunwind_maps *km);

/* True when module's rows were loaded or refused (do not ask again). */
bool kunwind_maps__tried(const struct kunwind_maps *km, uint32_t module);

/* want of a load no sample asked for (a module mapped, loaded before its
 * first sample) */
#define KUNWIND_WANT_NONE UINT64_MAX
/* Fewest rows a window holds (fewer left: the module is refused). */
#define KUNWIND_WINDOW_MIN 256u

/*
 * Load the compact rows of m as module index module; want is the ELF vaddr
 * a sample stopped at in it, or KUNWIND_WANT_NONE.  A module with no rows
 * or full rows only is loaded as it is (the kernel then stops at its
 * frames).  A module larger than the rows left is loaded as the window of
 * them around want (the kernel stops outside it: counted in stats), or
 * without want, not at all and not marked tried (-ENOSPC, not counted).
 * Returns 0, -EALREADY (tried before), -E2BIG (module index beyond the
 * modules map), -ENOSPC (the row array is full: counted in stats), or
 * -errno of the map update.
 */
int kunwind_maps__load_module(struct kunwind_maps *km, uint32_t module,
			      const struct unwind_module *m, uint64_t want);

/* Replace the executable mappings of process tgid (n <= MS_KU_PROC_MAPS,
 * sorted by start, disjoint), those of its address space mm_cookie
 * (ms_kunwind.module of a sample that asked).  Returns 0 or -errno of the
 * map update. */
int kunwind_maps__set_proc(struct kunwind_maps *km, uint32_t tgid, uint32_t mm_cookie,
			   const struct ms_ku_mapping *maps, uint32_t n);

struct kunwind_stats {
	uint64_t modules_loaded; /* modules whose rows are in the kernel */
	uint64_t modules_full;	 /* modules refused: the row array was full */
	uint64_t modules_partial; /* modules loaded as a window of their rows */
	uint64_t rows_left_out;	  /* rows of those windows left out */
	uint64_t rows;		 /* rows in use */
	uint64_t proc_updates;	 /* ku_procs writes */
	uint64_t rows_cap;	 /* rows the array holds */
};
void kunwind_maps__stats(const struct kunwind_maps *km, struct kunwind_stats *st);

#endif
