/* SPDX-License-Identifier: MIT */
/*
 * Compiling the CFI of one ELF file into a struct unwind_module.
 *
 * The FDEs of a section are enumerated with dwarf_next_cfi() (their ranges
 * decoded by fde_ranges.c from the CIE's 'R' pointer encoding, LSB
 * "Exception Frames" / DWARF 5 section 6.4.1).  Every FDE start and end is a boundary; between
 * two boundaries libdw picks the same FDE for every address, so the table is
 * built by asking libdw (dwarf_cfi_addrframe + dwarf_frame_info) for the row
 * at an address, recording it up to the row's end or the next boundary, and
 * continuing there.  The table therefore holds exactly libdw's answers.
 */
#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "userspace/unwind/unwind_internal.h"
#include "userspace/unwind/unwind_table.h"

const uint8_t unwind_slot_reg[UNWIND_SLOTS] = {
    UNWIND_REG_RA, UNWIND_REG_SP, UNWIND_REG_BP, UNWIND_REG_BX, 12, 13, 14, 15};

/* Where separate debug files live, by build ID (Debian's -dbg packages). */
#define UNWIND_DEBUG_ROOT "/usr/lib/debug/.build-id"

struct builder {
	struct vec rows; /* struct brow */
	struct vec full; /* struct unwind_full */
	struct vec ops;	 /* Dwarf_Op */
	size_t fdes;
	struct dense *dense; /* rows go here instead of rows, when set */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* ---- one libdw answer -> rules ---- */

static int copy_ops(struct builder *b, const Dwarf_Op *ops, size_t nops, struct unwind_rule *r)
{
	if (nops == 0 || nops > UINT16_MAX || b->ops.n + nops > UINT32_MAX)
		return -EINVAL;
	r->op = (uint32_t)b->ops.n;
	r->nops = (uint16_t)nops;
	for (size_t i = 0; i < nops; i++) {
		Dwarf_Op *o = unwind_vec__push(&b->ops, sizeof(*o));
		if (!o)
			return -ENOMEM;
		*o = ops[i];
	}
	return 0;
}

static int frame_rules(struct builder *b, Dwarf_Frame *f, struct unwind_full *out)
{
	Dwarf_Op *ops, mem[3];
	size_t nops;
	int err;

	memset(out, 0, sizeof(*out));
	int ra = dwarf_frame_info(f, NULL, NULL, NULL);
	out->ra_reg = (ra >= 0 && ra < UNWIND_NREGS) ? (uint8_t)ra : 0xff;

	if (dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0) {
		out->cfa.kind = UNWIND_CFA_INVALID;
	} else if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number < UNWIND_NREGS) {
		out->cfa.kind = UNWIND_CFA_REG_OFFSET;
		out->cfa.reg = (uint8_t)ops[0].number;
		out->cfa.off = (int64_t)ops[0].number2;
	} else {
		out->cfa.kind = UNWIND_CFA_EXPR;
		err = copy_ops(b, ops, nops, &out->cfa);
		if (err == -ENOMEM)
			return err;
		if (err)
			out->cfa.kind = UNWIND_CFA_INVALID;
	}

	for (int reg = 0; reg < UNWIND_NREGS; reg++) {
		struct unwind_rule *r = &out->regs[reg];
		if (dwarf_frame_register(f, reg, mem, &ops, &nops) != 0) {
			r->kind = UNWIND_RULE_INVALID;
			continue;
		}
		if (nops == 0) {
			/* libdw: ops == NULL is "same value", ops == mem "undefined". */
			r->kind = ops == NULL ? UNWIND_RULE_SAME : UNWIND_RULE_UNDEF;
			continue;
		}
		if (ops[0].atom == DW_OP_call_frame_cfa) {
			size_t i = 1;
			int64_t off = 0;
			if (i < nops && ops[i].atom == DW_OP_plus_uconst)
				off = (int64_t)ops[i++].number;
			if (i == nops) {
				r->kind = UNWIND_RULE_OFFSET;
				r->off = off;
				continue;
			}
			if (i + 1 == nops && ops[i].atom == DW_OP_stack_value) {
				r->kind = UNWIND_RULE_VAL_OFFSET;
				r->off = off;
				continue;
			}
		}
		if (nops == 1 && ops[0].atom == DW_OP_regx && ops[0].number < UNWIND_NREGS) {
			r->kind = UNWIND_RULE_REGISTER;
			r->reg = (uint8_t)ops[0].number;
			continue;
		}
		r->kind = UNWIND_RULE_EXPR;
		err = copy_ops(b, ops, nops, r);
		if (err == -ENOMEM)
			return err;
		if (err)
			r->kind = UNWIND_RULE_INVALID;
	}
	if (unwind__libdw_abi_slip()) {
		if (out->regs[0].kind == UNWIND_RULE_SAME)
			out->regs[0].kind = UNWIND_RULE_UNDEF;
		if (out->regs[UNWIND_REG_BX].kind == UNWIND_RULE_UNDEF)
			out->regs[UNWIND_REG_BX].kind = UNWIND_RULE_SAME;
	}
	return 0;
}

bool unwind_full__compact_slots(const struct unwind_full *f, struct unwind_row *row)
{
	uint32_t slots = 0;

	/* per row of every module compiled: a mask, not a search per register */
	for (int i = 0; i < UNWIND_SLOTS; i++)
		slots |= 1u << unwind_slot_reg[i];
	for (int reg = 0; reg < UNWIND_NREGS; reg++)
		if (!(slots & (1u << reg)) && f->regs[reg].kind != UNWIND_RULE_UNDEF)
			return false;
	for (int i = 0; i < UNWIND_SLOTS; i++) {
		const struct unwind_rule *r = &f->regs[unwind_slot_reg[i]];

		switch (r->kind) {
		case UNWIND_RULE_UNDEF:
		case UNWIND_RULE_SAME:
			break;
		case UNWIND_RULE_OFFSET:
		case UNWIND_RULE_VAL_OFFSET:
			if (!unwind_fits_off8(r->off))
				return false;
			row->off8[i] = (int8_t)(r->off / 8);
			break;
		default:
			return false;
		}
		row->kinds |= (uint16_t)(r->kind << (2 * i));
	}
	return true;
}

/* The compact form of a full answer, if it has one. */
static bool full_to_compact(const struct unwind_full *f, struct unwind_row *row)
{
	if (f->ra_reg != UNWIND_REG_RA || f->cfa.kind != UNWIND_CFA_REG_OFFSET ||
	    f->cfa.off < INT32_MIN || f->cfa.off > INT32_MAX)
		return false;
	memset(row, 0, sizeof(*row));
	row->cfa_reg = f->cfa.reg;
	row->cfa_off = (int32_t)f->cfa.off;
	return unwind_full__compact_slots(f, row);
}

static int add_row(struct builder *b, uint64_t start, uint64_t end, Dwarf_Frame *f, bool signal,
		   uint8_t source_flag)
{
	struct unwind_full full;
	int err = frame_rules(b, f, &full);
	if (err)
		return err;
	struct unwind_row row;
	if (!full_to_compact(&full, &row)) {
		if (b->full.n >= INT32_MAX)
			return -EFBIG;
		memset(&row, 0, sizeof(row));
		row.flags = UNWIND_ROW_FULL;
		row.cfa_off = (int32_t)b->full.n;
		struct unwind_full *slot = unwind_vec__push(&b->full, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		*slot = full;
	}
	row.flags |= (signal ? UNWIND_ROW_SIGNAL : 0) | source_flag;
	if (b->dense)
		return unwind_dense__push(b->dense, start, end, &row);
	struct brow *br = unwind_vec__push(&b->rows, sizeof(*br));
	if (!br)
		return -ENOMEM;
	br->start = start;
	br->end = end;
	br->row = row;
	return 0;
}

/*
 * Rows of one CFI section (every address libdw answers for).  Rows go to
 * b->rows, possibly after rows of another section; they never overlap each
 * other.
 */
static int compile_section(struct builder *b, Dwarf_CFI *cfi, Elf_Data *data, uint64_t sec_addr,
			   bool eh_frame, const unsigned char *e_ident)
{
	struct vec ranges = {0};
	uint64_t *bounds = NULL;
	int err = unwind_fde__ranges(data, sec_addr, eh_frame, e_ident, &ranges, &b->fdes);
	if (err)
		goto out;
	size_t nr = ranges.n, nb = 0;
	if (nr == 0)
		goto out;
	bounds = malloc(2 * nr * sizeof(*bounds));
	if (!bounds) {
		err = -ENOMEM;
		goto out;
	}
	const struct fde_range *fr = ranges.p;
	for (size_t i = 0; i < nr; i++) {
		bounds[nb++] = fr[i].lo;
		bounds[nb++] = fr[i].hi;
	}
	qsort(bounds, nb, sizeof(*bounds), cmp_u64);
	size_t u = 0;
	for (size_t i = 0; i < nb; i++)
		if (u == 0 || bounds[u - 1] != bounds[i])
			bounds[u++] = bounds[i];
	nb = u;

	uint8_t source = eh_frame ? 0 : UNWIND_ROW_DEBUG_FRAME;
	for (size_t i = 0; i + 1 < nb; i++) {
		uint64_t addr = bounds[i], stop = bounds[i + 1];
		while (addr < stop) {
			Dwarf_Frame *f = NULL;
			if (dwarf_cfi_addrframe(cfi, addr, &f) != 0)
				break; /* no FDE here: a gap */
			Dwarf_Addr rs, re;
			bool signal = false;
			if (dwarf_frame_info(f, &rs, &re, &signal) < 0 || re <= addr || rs > addr) {
				free(f);
				break;
			}
			uint64_t end = re < stop ? re : stop;
			err = add_row(b, addr, end, f, signal, source);
			free(f);
			if (err)
				goto out;
			addr = end;
		}
	}
out:
	free(bounds);
	free(ranges.p);
	return err;
}

/* ---- ELF plumbing ---- */

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, shdr))
			continue;
		const char *n = elf_strptr(elf, shstrndx, shdr->sh_name);
		if (n && strcmp(n, name) == 0)
			return shdr->sh_type == SHT_NOBITS ? NULL : scn;
	}
	return NULL;
}

static int compile_eh_frame(struct builder *b, Elf *elf)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = find_section(elf, ".eh_frame", &shdr);
	if (!scn)
		return 0;
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	if (!cfi)
		return 0;
	int err = compile_section(b, cfi, data, shdr.sh_addr, true,
				  (const unsigned char *)elf_getident(elf, NULL));
	dwarf_cfi_end(cfi);
	return err;
}

/* .debug_frame of elf, if it has one. */
static int compile_debug_frame(struct builder *b, Elf *elf, bool *found)
{
	GElf_Shdr shdr;
	Elf_Scn *scn = find_section(elf, ".debug_frame", &shdr);
	*found = false;
	if (!scn || shdr.sh_size == 0)
		return 0;
	Dwarf *dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dbg)
		return 0;
	int err = 0;
	Dwarf_CFI *cfi = dwarf_getcfi(dbg);
	/* libdw decompresses the sections it reads (SHF_COMPRESSED, -gz); make
	 * sure the raw data we enumerate is the decompressed one too. */
	if (cfi && gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED) &&
	    elf_compress(scn, 0, 0) < 0)
		cfi = NULL;
	Elf_Data *data = cfi ? elf_getdata(scn, NULL) : NULL;
	if (data && data->d_buf) {
		*found = true;
		err = compile_section(b, cfi, data, 0, false,
				      (const unsigned char *)elf_getident(elf, NULL));
	}
	dwarf_end(dbg); /* owns cfi */
	return err;
}

static int compile_separate_debug_frame(struct builder *b, Elf *elf)
{
	const void *id;
	ssize_t len = dwelf_elf_gnu_build_id(elf, &id);
	if (len < 2 || len > 64)
		return 0;
	char path[sizeof(UNWIND_DEBUG_ROOT) + 2 + 1 + 2 * 64 + sizeof(".debug") + 1];
	int n =
	    snprintf(path, sizeof(path), "%s/%02x/", UNWIND_DEBUG_ROOT, ((const uint8_t *)id)[0]);
	for (ssize_t i = 1; i < len; i++)
		n += snprintf(path + n, sizeof(path) - (size_t)n, "%02x", ((const uint8_t *)id)[i]);
	snprintf(path + n, sizeof(path) - (size_t)n, ".debug");

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int err = 0;
	Elf *delf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (delf && elf_kind(delf) == ELF_K_ELF) {
		const void *did;
		ssize_t dlen = dwelf_elf_gnu_build_id(delf, &did);
		bool found;
		if (dlen == len && memcmp(did, id, (size_t)len) == 0)
			err = compile_debug_frame(b, delf, &found);
	}
	elf_end(delf);
	close(fd);
	return err;
}

/* m's entry code without CFI, from e_entry (see unwind_module.entry_lo). */
static void find_entry(struct unwind_module *m, uint64_t entry)
{
	uint64_t hi = entry + UNWIND_ENTRY_SPAN;

	if (entry == 0 || hi < entry)
		return;
	for (uint32_t i = 0; i + 1 < m->nrows; i++) {
		uint64_t lo = m->base + m->starts[i], end = m->base + m->starts[i + 1];

		if (unwind_module__row_i(m, i)->flags & UNWIND_ROW_NONE || end <= entry)
			continue;
		if (lo <= entry)
			return; /* CFI covers the entry point: its rules decide */
		hi = lo < hi ? lo : hi;
		break;
	}
	m->entry_lo = entry;
	m->entry_hi = hi;
}

static void reverse_brows(struct brow *r, size_t n)
{
	for (size_t i = 0; i < n / 2; i++) {
		struct brow t = r[i];

		r[i] = r[n - 1 - i];
		r[n - 1 - i] = t;
	}
}

static struct unwind_module *compile_elf(Elf *elf, bool separate_debug)
{
	struct dense dense = {0};
	struct builder b = {0};
	struct unwind_module *m = NULL;
	int err = 0;
	GElf_Ehdr ehdr;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr)) {
		err = -ENOEXEC;
		goto out;
	}
	if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_machine != EM_X86_64) {
		err = -ENOTSUP;
		goto out;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		err = -ENOMEM;
		goto out;
	}
	/* .debug_frame first: without any of its rows (most modules) the
	 * .eh_frame rows arrive sorted and go straight into the table. */
	bool found = false;
	err = compile_debug_frame(&b, elf, &found);
	if (!err && !found && separate_debug)
		err = compile_separate_debug_frame(&b, elf);
	if (err)
		goto out;
	size_t n_dbg = b.rows.n;
	if (!n_dbg)
		b.dense = &dense;
	err = compile_eh_frame(&b, elf);
	if (err)
		goto out;
	if (b.dense) {
		err = unwind_dense__finish(m, &dense);
	} else {
		/* [debug rows, eh rows] -> [eh rows, debug rows], as finish() takes them */
		struct brow *r = b.rows.p;
		size_t n = b.rows.n;

		reverse_brows(r, n);
		reverse_brows(r, n - n_dbg);
		reverse_brows(r + (n - n_dbg), n_dbg);
		err = unwind_table__finish(m, &b.rows, n - n_dbg);
	}
	if (err)
		goto out;
	unwind__shrink(&b.full.p, b.full.n * sizeof(*m->full));
	unwind__shrink(&b.ops.p, b.ops.n * sizeof(*m->ops));
	m->full = b.full.p;
	m->nfull = b.full.n;
	m->ops = b.ops.p;
	m->nops = b.ops.n;
	b.full.p = b.ops.p = NULL;
	if (separate_debug && (ehdr.e_type == ET_EXEC || ehdr.e_type == ET_DYN))
		find_entry(m, ehdr.e_entry);
	m->stats.fdes = b.fdes;
	m->stats.rows = m->nrows;
	m->stats.full_rows = 0;
	for (uint32_t i = 0; i < m->nrows; i++)
		m->stats.full_rows += (unwind_module__row_i(m, i)->flags & UNWIND_ROW_FULL) != 0;
	m->stats.bytes =
	    unwind_table__bytes(m) + m->nfull * sizeof(*m->full) + m->nops * sizeof(*m->ops);
out:
	free(b.rows.p);
	free(b.full.p);
	free(b.ops.p);
	free(dense.starts);
	free(dense.rows);
	if (err) {
		unwind_module__free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

struct unwind_module *unwind_module__from_proof(const struct unwind_proof_row *rows, size_t n)
{
	struct builder b = {0};
	struct unwind_module *m = calloc(1, sizeof(*m));
	int err = m ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < n; i++) {
		const struct unwind_proof_row *p = &rows[i];
		struct unwind_row row = {.cfa_reg = p->cfa_bp ? UNWIND_REG_BP : UNWIND_REG_SP,
					 .cfa_off = p->cfa_off};
		struct brow *br;

		if (p->start >= p->end || (i && p->start < rows[i - 1].end) || p->cfa_off % 8 ||
		    p->bp_off % 8 || p->bp_off / 8 < INT8_MIN || p->bp_off / 8 > INT8_MAX) {
			err = -EINVAL;
			break;
		}
		for (int s = 0; s < UNWIND_SLOTS; s++) {
			enum unwind_rule_kind kind = UNWIND_RULE_UNDEF;
			int off = 0;

			switch (unwind_slot_reg[s]) {
			case UNWIND_REG_RA:
				kind = UNWIND_RULE_OFFSET;
				off = -8;
				break;
			case UNWIND_REG_SP:
				kind = UNWIND_RULE_VAL_OFFSET;
				break;
			case UNWIND_REG_BP:
				kind = p->bp_saved ? UNWIND_RULE_OFFSET : UNWIND_RULE_SAME;
				off = p->bp_saved ? p->bp_off : 0;
				break;
			}
			row.kinds |= (uint16_t)(kind << (2 * s));
			row.off8[s] = (int8_t)(off / 8);
		}
		br = unwind_vec__push(&b.rows, sizeof(*br));
		if (!br) {
			err = -ENOMEM;
			break;
		}
		br->start = p->start;
		br->end = p->end;
		br->row = row;
	}
	/* No rows: a module with no CFI (nrows 0). */
	if (!err && b.rows.n)
		err = unwind_table__finish(m, &b.rows, b.rows.n);
	if (!err) {
		m->stats.rows = m->nrows;
		m->stats.bytes = unwind_table__bytes(m);
	}
	free(b.rows.p);
	if (err) {
		unwind_module__free(m);
		errno = -err;
		return NULL;
	}
	return m;
}

struct unwind_module *unwind_module__open_fd(int fd)
{
	if (fd < 0) {
		errno = EBADF;
		return NULL;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct unwind_module *m;
	if (!elf) {
		m = NULL;
		errno = ENOEXEC;
	} else {
		m = compile_elf(elf, true);
	}
	int saved = errno;
	elf_end(elf);
	errno = saved;
	return m;
}

struct unwind_module *unwind_module__open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct unwind_module *m = unwind_module__open_fd(fd);
	int saved = errno;
	close(fd);
	errno = saved;
	return m;
}

struct unwind_module *unwind_module__open_image(const void *image, size_t size)
{
	elf_version(EV_CURRENT);
	/* elf_memory() wants a writable buffer; libelf only writes on ELF_C_RDWR. */
	Elf *elf = elf_memory((char *)image, size);
	if (!elf) {
		errno = ENOEXEC;
		return NULL;
	}
	struct unwind_module *m = compile_elf(elf, false);
	int saved = errno;
	elf_end(elf);
	errno = saved;
	return m;
}

void unwind_module__free(struct unwind_module *m)
{
	if (!m)
		return;
	free(m->starts);
	free(m->palette);
	free(m->idx16);
	free(m->idx32);
	free(m->page_first);
	free(m->full);
	free(m->ops);
	free(m);
}

enum unwind_fp_state unwind_module__fp_state(const struct unwind_module *m, uint64_t vaddr)
{
	const struct unwind_row *row = m ? unwind_module__row(m, vaddr) : NULL;
	const struct unwind_full *f;

	if (!row)
		return UNWIND_FP_UNKNOWN;
	if (!(row->flags & UNWIND_ROW_FULL))
		return row->cfa_reg == UNWIND_REG_BP ? UNWIND_FP_KEPT : UNWIND_FP_NOT_KEPT;
	f = &m->full[row->cfa_off];
	return f->cfa.kind == UNWIND_CFA_REG_OFFSET && f->cfa.reg == UNWIND_REG_BP
		   ? UNWIND_FP_KEPT
		   : UNWIND_FP_NOT_KEPT;
}

void unwind_module__stats(const struct unwind_module *m, struct unwind_module_stats *st)
{
	*st = m->stats;
}

bool unwind_module__rules_at(const struct unwind_module *m, uint64_t vaddr,
			     struct unwind_rules *out)
{
	uint32_t i = unwind_module__row_index(m, vaddr);
	if (i == UINT32_MAX)
		return false;
	const struct unwind_row *row = unwind_module__row_i(m, i);
	if (row->flags & UNWIND_ROW_NONE)
		return false;
	memset(out, 0, sizeof(*out));
	out->start = m->base + m->starts[i];
	out->end = m->base + m->starts[i + 1];
	out->signal = (row->flags & UNWIND_ROW_SIGNAL) != 0;
	out->debug_frame = (row->flags & UNWIND_ROW_DEBUG_FRAME) != 0;
	out->ops = m->ops;
	if (row->flags & UNWIND_ROW_FULL) {
		const struct unwind_full *f = &m->full[row->cfa_off];
		out->full = true;
		out->ra_reg = f->ra_reg;
		out->cfa = f->cfa;
		memcpy(out->regs, f->regs, sizeof(out->regs));
		return true;
	}
	out->ra_reg = UNWIND_REG_RA;
	out->cfa.kind = UNWIND_CFA_REG_OFFSET;
	out->cfa.reg = row->cfa_reg;
	out->cfa.off = row->cfa_off;
	for (int reg = 0; reg < UNWIND_NREGS; reg++)
		out->regs[reg].kind = UNWIND_RULE_UNDEF;
	for (int s = 0; s < UNWIND_SLOTS; s++) {
		struct unwind_rule *r = &out->regs[unwind_slot_reg[s]];
		r->kind = (row->kinds >> (2 * s)) & 3;
		if (r->kind == UNWIND_RULE_OFFSET || r->kind == UNWIND_RULE_VAL_OFFSET)
			r->off = (int64_t)row->off8[s] * 8;
	}
	return true;
}

void unwind_module__table(const struct unwind_module *m, struct unwind_table_view *out)
{
	_Static_assert(sizeof(struct unwind_row) == UNWIND_ROW_BYTES, "unwind_row size");
	out->base = m->base;
	out->nrows = m->nrows;
	out->starts = m->starts;
}

void unwind_module__rows(const struct unwind_module *m, uint32_t first, uint32_t n, void *out)
{
	struct unwind_row *o = out;

	for (uint32_t i = 0; i < n; i++)
		o[i] = *unwind_module__row_i(m, first + i);
}
