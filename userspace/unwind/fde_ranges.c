/* SPDX-License-Identifier: MIT */
/*
 * The code ranges of a CFI section's FDEs, for unwind_module.c: each FDE's
 * initial location and range decoded with its CIE's 'R' pointer encoding
 * (LSB 5.0 "DWARF Extensions", DW_EH_PE_*; DWARF 5 section 6.4.1).
 */
#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "userspace/unwind/unwind_internal.h"
#include "userspace/unwind/unwind_table.h"

/* An FDE claiming more than this many bytes of code is treated as malformed. */
#define UNWIND_MAX_FDE_RANGE (1ull << 30)

struct cie_enc {
	uint64_t off;
	uint8_t enc; /* DW_EH_PE_* of FDE addresses; 0xff: CIE unusable */
};

/* ---- pointer encodings (LSB 5.0 "DWARF Extensions", DW_EH_PE_*) ---- */

static bool read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *p = *pp;
	while (p < end) {
		uint8_t b = *p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return true;
		}
	}
	return false;
}

static bool read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *p = *pp;
	while (p < end) {
		uint8_t b = *p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~0ull << shift;
			*pp = p;
			*out = (int64_t)v;
			return true;
		}
	}
	return false;
}

/* Reads one encoded value at *pp; field_addr is its own vaddr (for pcrel). */
static bool read_encoded(uint8_t enc, bool apply, const uint8_t **pp, const uint8_t *end,
			 uint64_t field_addr, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;
	size_t size;
	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = 8;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = 2;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = 4;
		break;
	case DW_EH_PE_uleb128:
		if (!read_uleb(&p, end, &v))
			return false;
		size = 0;
		break;
	case DW_EH_PE_sleb128: {
		int64_t s;
		if (!read_sleb(&p, end, &s))
			return false;
		v = (uint64_t)s;
		size = 0;
		break;
	}
	default:
		return false;
	}
	if (size) {
		if ((size_t)(end - p) < size)
			return false;
		switch (enc & 0x0f) {
		case DW_EH_PE_udata2: {
			uint16_t x;
			memcpy(&x, p, 2);
			v = x;
			break;
		}
		case DW_EH_PE_sdata2: {
			int16_t x;
			memcpy(&x, p, 2);
			v = (uint64_t)(int64_t)x;
			break;
		}
		case DW_EH_PE_udata4: {
			uint32_t x;
			memcpy(&x, p, 4);
			v = x;
			break;
		}
		case DW_EH_PE_sdata4: {
			int32_t x;
			memcpy(&x, p, 4);
			v = (uint64_t)(int64_t)x;
			break;
		}
		default:
			memcpy(&v, p, 8);
			break;
		}
		p += size;
	}
	if (apply) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr:
			break;
		case DW_EH_PE_pcrel:
			v += field_addr;
			break;
		default: /* textrel, datarel, funcrel, aligned: not used for x86-64 FDEs */
			return false;
		}
	}
	*pp = p;
	*out = v;
	return true;
}

/* FDE address encoding of a CIE ('R' in a 'z' augmentation; absptr without). */
static uint8_t cie_fde_encoding(const Dwarf_CIE *cie, bool eh_frame)
{
	const char *a = cie->augmentation;
	if (!eh_frame || a[0] == '\0')
		return DW_EH_PE_absptr;
	if (a[0] != 'z')
		return 0xff;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			return p < end ? *p : 0xff;
		case 'L':
			if (p >= end)
				return 0xff;
			p++;
			break;
		case 'P': {
			if (p >= end)
				return 0xff;
			uint8_t pe = *p++;
			uint64_t ignored;
			if ((pe & 0x70) == DW_EH_PE_aligned)
				return 0xff;
			if (!read_encoded(pe & 0x0f, false, &p, end, 0, &ignored))
				return 0xff;
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return DW_EH_PE_absptr;
		}
	}
	return DW_EH_PE_absptr;
}

static uint8_t cie_lookup(struct vec *cies, const unsigned char *e_ident, Elf_Data *data,
			  bool eh_frame, uint64_t off)
{
	struct cie_enc *c = cies->p;
	for (size_t i = cies->n; i-- > 0;)
		if (c[i].off == off)
			return c[i].enc;
	Dwarf_Off next;
	Dwarf_CFI_Entry e;
	uint8_t enc = 0xff;
	if (dwarf_next_cfi(e_ident, data, eh_frame, off, &next, &e) == 0 && dwarf_cfi_cie_p(&e))
		enc = cie_fde_encoding(&e.cie, eh_frame);
	struct cie_enc *n = unwind_vec__push(cies, sizeof(*n));
	if (n) {
		n->off = off;
		n->enc = enc;
	}
	return enc;
}

int unwind_fde__ranges(Elf_Data *data, uint64_t sec_addr, bool eh_frame,
		       const unsigned char *e_ident, struct vec *out, size_t *nfdes)
{
	struct vec cies = {0};
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int err = 0;
	while (dwarf_next_cfi(e_ident, data, eh_frame, off, &next, &e) == 0) {
		if (!dwarf_cfi_cie_p(&e)) {
			uint8_t enc = cie_lookup(&cies, e_ident, data, eh_frame, e.fde.CIE_pointer);
			const uint8_t *p = e.fde.start;
			uint64_t lo, len;
			uint64_t field = sec_addr + (uint64_t)(p - (const uint8_t *)data->d_buf);
			(*nfdes)++;
			if (enc != 0xff && read_encoded(enc, true, &p, e.fde.end, field, &lo) &&
			    read_encoded(enc & 0x0f, false, &p, e.fde.end, 0, &len) && len > 0 &&
			    len <= UNWIND_MAX_FDE_RANGE && lo + len > lo && (eh_frame || lo != 0)) {
				struct fde_range *r = unwind_vec__push(out, sizeof(*r));
				if (!r) {
					err = -ENOMEM;
					break;
				}
				r->lo = lo;
				r->hi = lo + len;
			}
		}
		if (next <= off)
			break;
		off = next;
	}
	free(cies.p);
	return err;
}
