/* SPDX-License-Identifier: MIT */
/*
 * The GDB JIT interface (GDB manual, "JIT Compilation Interface"): a
 * process exports struct jit_descriptor __jit_debug_descriptor { u32
 * version (1), u32 action_flag, jit_code_entry *relevant_entry,
 * *first_entry } and a doubly linked list of struct jit_code_entry { next,
 * prev, const char *symfile_addr, u64 symfile_size }, each entry an
 * in-memory ELF object whose sections lie at the addresses its code runs
 * at (LLVM's JITs, CPython 3.15's).
 *
 * The descriptor and list are read from the live process (process_vm_readv)
 * and the objects copied only when their bytes changed since the last read,
 * or when a mapping was made since (gdb_jit__remapped): code can be
 * unregistered, its region remapped and an object registered again at the
 * same address.  An object no longer listed has its functions ended; an
 * object listed whose functions are not live (ended by a mapping, or
 * unlisted before) is copied again: the same bytes make its functions live
 * again, other bytes make a new object.  An object is whole while all the
 * functions its last staging made live still are.
 * Objects are kept append-only (an index never changes), bounded by
 * JIT_GDB_OBJECTS_MAX, JIT_GDB_IMAGE_MAX each and JIT_CODE_MAX in all; their
 * function symbols become functions of the process's table (JIT_FN_GDB,
 * jit_fn.object), their call-frame information is the caller's to compile
 * (unwind_module__open_image over gdb_jit.objs[i].image).  Everything read
 * is untrusted: a bad descriptor, entry or image is counted (GDB_BAD).
 */
#ifndef MS_GDB_JIT_H
#define MS_GDB_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "jit_funcs.h"
#include "jit_proc.h"

#define GDB_JIT_DESCRIPTOR "__jit_debug_descriptor"

struct gdb_jit_object {
	uint64_t addr, size; /* the symfile in the process */
	uint8_t *image;	     /* owned copy of size bytes */
	uint32_t nfuncs;     /* its functions live after the read that staged it */
	bool listed;	     /* in the list last read */
	bool staged;	     /* its functions staged by the read under way */
};

struct gdb_jit {
	uint64_t descriptor; /* runtime address of __jit_debug_descriptor */
	uint64_t hash;	     /* of the descriptor and entries last read; 0 none */
	struct gdb_jit_object *objs;
	uint32_t nobjs, objs_cap;
	uint64_t image_bytes;
	uint64_t reads;	     /* reads that found the list changed */
	uint64_t restaged;   /* objects whose functions were made live again */
	bool remapped;	     /* a mapping was made since the last read */
	uint64_t last_read_ns; /* when the list was last read (0: never): objects
				  found listed now were registered after it */
};

void gdb_jit__init(struct gdb_jit *g, uint64_t descriptor);

/* The process mapped something: the next read walks the list even when its
 * bytes did not change, and copies again the objects whose functions the
 * mapping ended. */
void gdb_jit__remapped(struct gdb_jit *g);
void gdb_jit__release(struct gdb_jit *g);

/*
 * Read the descriptor of live target t; when its list changed, copy every
 * object not copied before and stage its function symbols into f (read at
 * read_ns), then commit.  *added: functions made live.  0 (also for a
 * target that cannot be read, or a malformed list: counted) or -ENOMEM.
 */
int gdb_jit__read(struct gdb_jit *g, struct jit_funcs *f, const struct jit_target *t,
		  uint64_t read_ns, uint32_t *added);

/*
 * Stage the function symbols of ELF image (size bytes) as functions of
 * object index object: .symtab (else .dynsym) STT_FUNC symbols with a size,
 * at st_value (plus the section's address in a relocatable object).  0, or
 * -ENOEXEC (not a 64-bit ELF; counted by the caller), or -ENOMEM.
 */
int gdb_jit__stage_symbols(struct jit_funcs *f, const uint8_t *image, size_t size,
			   uint32_t object, uint64_t read_ns);

#endif
