/* SPDX-License-Identifier: MIT */
/*
 * The variable-length parts of a struct ms_sample (records.h), located once:
 * the kernel callchain, the user callchain, the in-kernel unwind's state
 * (MS_SAMPLE_F_KUNWIND only), the copied user stack bytes and the CPython
 * frames that follow the fixed part, in that order (records.h
 * gives the layout; python.h the frame).  Userspace only; every reader of
 * a sample's parts goes through ms_sample__parts() instead of computing
 * offsets of its own.
 *
 * The parts point into the record, which the caller keeps alive (borrowed).
 */
#ifndef MS_ABI_SAMPLE_PARTS_H
#define MS_ABI_SAMPLE_PARTS_H

#ifdef __BPF__
#error "bpf/abi/sample_parts.h is for userspace"
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "kunwind.h"
#include "python.h"
#include "records.h"

struct ms_sample_parts {
	const __u64 *kips;		/* nk kernel return addresses, innermost first */
	const __u64 *uips;		/* nu user return addresses, innermost first */
	const struct ms_kunwind *ku;	/* NULL unless MS_SAMPLE_F_KUNWIND */
	const __u8 *stack_copy;		/* copy_len bytes from copy_sp upward */
	__u64 copy_sp;			/* runtime address of stack_copy[0] */
	const struct ms_py_frame *py;	/* npy CPython frames, innermost first */
	__u32 nk, nu, copy_len, npy;
};

/*
 * Locate the parts of sample s, a record of len bytes (untrusted).  Checks
 * the type tag, hdr.size == len, 8-byte alignment of s and len, the
 * architecture, every length against its limit (MS_MAX_STACK_DEPTH,
 * MS_STACK_COPY_MAX, MS_PY_MAX_FRAMES), the in-kernel unwind's status and
 * cause, and that the parts end within len.
 * Returns 0, or -EBADMSG (out untouched) when any check fails.
 */
static inline int ms_sample__parts(const struct ms_sample *s, __u32 len,
				   struct ms_sample_parts *out)
{
	size_t ips, copy, end, ku;

	if (((uintptr_t)s & 7) || len < sizeof(*s) || len % 8 || s->hdr.type != MS_REC_SAMPLE ||
	    s->hdr.size != len || s->arch != MS_ARCH_X86_64 ||
	    s->kstack_len > MS_MAX_STACK_DEPTH || s->ustack_len > MS_MAX_STACK_DEPTH ||
	    s->stack_copy_len > MS_STACK_COPY_MAX || s->py_len > MS_PY_MAX_FRAMES)
		return -EBADMSG;
	ips = ((size_t)s->kstack_len + s->ustack_len) * 8;
	copy = ((size_t)s->stack_copy_len + 7) & ~(size_t)7;
	ku = (s->flags & MS_SAMPLE_F_KUNWIND) ? sizeof(struct ms_kunwind) : 0;
	end = sizeof(*s) + ips + ku + copy + (size_t)s->py_len * sizeof(struct ms_py_frame);
	if (end > len)
		return -EBADMSG;
	out->kips = s->ips;
	out->uips = s->ips + s->kstack_len;
	out->ku = NULL;
	out->copy_sp = s->regs.sp;
	out->stack_copy = (const __u8 *)(s->ips + s->kstack_len + s->ustack_len);
	if (ku) {
		out->ku = (const struct ms_kunwind *)out->stack_copy;
		if ((out->ku->status != MS_KU_DONE && out->ku->status != MS_KU_RESUME) ||
		    out->ku->cause >= MS_KU_STOP_COUNT || s->ustack_len == 0)
			return -EBADMSG;
		out->copy_sp = out->ku->copy_sp;
		out->stack_copy += ku;
	}
	out->py = (const struct ms_py_frame *)(out->stack_copy + copy);
	out->nk = s->kstack_len;
	out->nu = s->ustack_len;
	out->copy_len = s->stack_copy_len;
	out->npy = s->py_len;
	return 0;
}

#endif
