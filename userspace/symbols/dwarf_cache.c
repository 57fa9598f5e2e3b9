// SPDX-License-Identifier: MIT
/*
 * Open DWARF under a byte budget (symbols_internal.h, struct sym_dwarf_lru).
 *
 * A module's DWARF costs what libelf read or decompressed of its debug
 * sections, libdw's decoded line tables and DIE caches, and our unit index
 * and scope tables: tens of MiB for a large library, for as long as it is
 * open.  Its cost is measured, not estimated: the heap in use before and
 * after what allocates it (the open, and each unit's first lookup, which
 * decodes the unit's lines and compiles its scopes); an open counts at
 * least the size of the debug sections it reads (decompressed), which
 * holds under an allocator mallinfo2 does not see (sanitizers).  When the open DWARF
 * of all modules exceeds the budget, the least recently used modules'
 * DWARF is closed; a closed module reopens at the next new address that
 * needs lines (the processor caches frames per address, so an address is
 * looked up once), counted as reopened.  The most recently used module
 * stays open even alone over the budget.
 */
#include <malloc.h>

#include "userspace/symbols/symbols_internal.h"

size_t sym_heap__in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void lru__unlink(struct sym_dwarf_lru *lru, struct sym_module *m)
{
	if (m->lru_prev)
		m->lru_prev->lru_next = m->lru_next;
	else if (lru->head == m)
		lru->head = m->lru_next;
	if (m->lru_next)
		m->lru_next->lru_prev = m->lru_prev;
	else if (lru->tail == m)
		lru->tail = m->lru_prev;
	m->lru_prev = m->lru_next = NULL;
}

void sym_dwarf_lru__touch(struct sym_module *m)
{
	struct sym_dwarf_lru *lru = m->lru;

	if (!lru || lru->head == m)
		return;
	lru__unlink(lru, m);
	m->lru_next = lru->head;
	if (lru->head)
		lru->head->lru_prev = m;
	lru->head = m;
	if (!lru->tail)
		lru->tail = m;
}

void sym_dwarf_lru__grow(struct sym_module *m, size_t bytes)
{
	m->dwarf_bytes += bytes;
	if (!m->lru)
		return;
	m->lru->bytes += bytes;
	if (m->lru->bytes + m->lru->table_bytes > m->lru->peak)
		m->lru->peak = m->lru->bytes + m->lru->table_bytes;
}

void sym_dwarf_lru__grow_tables(struct sym_module *m, size_t bytes)
{
	m->dwarf_table_bytes += bytes;
	if (!m->lru)
		return;
	m->lru->table_bytes += bytes;
	if (m->lru->bytes + m->lru->table_bytes > m->lru->peak)
		m->lru->peak = m->lru->bytes + m->lru->table_bytes;
}

void sym_dwarf_lru__give_back(struct sym_module *m, size_t bytes)
{
	if (bytes > m->dwarf_bytes)
		bytes = m->dwarf_bytes;
	m->dwarf_bytes -= bytes;
	if (m->lru)
		m->lru->bytes -= bytes < m->lru->bytes ? bytes : m->lru->bytes;
}

void sym_module__close_dwarf_file(struct sym_module *m)
{
	struct sym_dwarf_lru *lru = m->lru;

	if (!sym_dwarf__file_open(m->dwarf))
		return;
	sym_dwarf__close_file(m->dwarf);
	if (lru) {
		lru__unlink(lru, m);
		lru->bytes -= m->dwarf_bytes < lru->bytes ? m->dwarf_bytes : lru->bytes;
	}
	m->dwarf_last_bytes = m->dwarf_bytes;
	m->dwarf_bytes = 0;
}

void sym_module__close_dwarf(struct sym_module *m)
{
	struct sym_dwarf_lru *lru = m->lru;

	if (!m->dwarf)
		return;
	sym_module__close_dwarf_file(m);
	sym_dwarf__free(m->dwarf);
	m->dwarf = NULL;
	if (lru && lru->libdw_owner == m)
		lru->libdw_owner = NULL;
	if (lru)
		lru->table_bytes -= m->dwarf_table_bytes < lru->table_bytes ? m->dwarf_table_bytes
									    : lru->table_bytes;
	m->dwarf_table_bytes = 0;
}

/* Closes least recently used DWARF other than keep's while more than
 * budget - room bytes are open. */
static void lru__shrink(struct sym_dwarf_lru *lru, const struct sym_module *keep, size_t room)
{
	size_t target = room < lru->budget ? lru->budget - room : 0;
	bool closed = false;

	while (lru->bytes > target && lru->tail && lru->tail != keep) {
		sym_module__close_dwarf_file(lru->tail);
		lru->closed++;
		closed = true;
	}
	/* libdw's many small blocks were carved from the heap: give their
	 * pages back now rather than keep them as RSS for the next open. */
	if (closed)
		malloc_trim(0);
}

void sym_dwarf_lru__trim(struct sym_dwarf_lru *lru, const struct sym_module *keep)
{
	if (lru && lru->budget)
		lru__shrink(lru, keep, 0);
}

void sym_dwarf_lru__make_room(struct sym_module *m)
{
	if (m->lru && m->lru->budget)
		lru__shrink(m->lru, m, m->dwarf_last_bytes);
}
