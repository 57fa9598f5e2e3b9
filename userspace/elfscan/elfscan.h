/* SPDX-License-Identifier: MIT */
/*
 * Small libelf questions asked of a whole executable or library before any
 * symbol is converted: whether a symbol table's strings can name a symbol
 * (so the many files that cannot are skipped cheaply), and where the file's
 * first PT_LOAD of offset 0 starts.  Used by the CPython detection
 * (runtimes/py_layout.c) and the probes control-block search
 * (collector/probes.c); one definition for both.
 */
#ifndef MS_ELFSCAN_H
#define MS_ELFSCAN_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

/* Does the string table of section ndx hold name followed by a NUL?  (Not
 * necessarily at a string's start: linkers share a string's tail between
 * names, "x_PyRuntime" holding "_PyRuntime".) */
bool elfscan__strtab_has(Elf *e, size_t ndx, const char *name);

/* The lowest p_vaddr of a PT_LOAD of file offset 0, or UINT64_MAX if none. */
uint64_t elfscan__first_load(Elf *e);

#endif
