/* SPDX-License-Identifier: MIT */
/*
 * The variable-length parts of a struct ms_offcpu (records.h), located once:
 * the thread's kernel and user callchains, the waker's, the copied user
 * stack bytes and, with MS_OFFCPU_F_PYTHON, the CPython frames at
 * switch-out, in that order.  Userspace only; every reader of an interval's
 * parts goes through ms_offcpu__parts() (as sample_parts.h for samples).
 *
 * The parts point into the record, which the caller keeps alive (borrowed).
 */
#ifndef MS_ABI_OFFCPU_PARTS_H
#define MS_ABI_OFFCPU_PARTS_H

#ifdef __BPF__
#error "bpf/abi/offcpu_parts.h is for userspace"
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "python.h"
#include "records.h"

struct ms_offcpu_parts {
	const __u64 *ips;	      /* kstack, ustack, waker kstack, waker ustack */
	const __u8 *stack_copy;	      /* copy_len bytes from regs.sp upward */
	const struct ms_py_frame *py; /* npy CPython frames, innermost first */
	__u32 nips, copy_len, npy;
	__u32 py_status; /* MS_PY_*; MS_PY_NONE without MS_OFFCPU_F_PYTHON */
};

/*
 * Locate the parts of interval r, a record of len bytes (untrusted): checks
 * 8-byte alignment of r and len, every length against its limit
 * (MS_MAX_STACK_DEPTH, MS_STACK_COPY_MAX, MS_PY_MAX_FRAMES), a multiple of 8
 * for the copy, the CPython part's status (< MS_PY_STATUS_COUNT; frames only
 * with a status other than NONE; reserved 0) and that the parts fill len
 * exactly.  Does not look at hdr.type or hdr.size (the caller dispatched on
 * them).  Returns 0, or -EBADMSG (out untouched) when any check fails.
 */
static inline int ms_offcpu__parts(const struct ms_offcpu *r, __u32 len,
				   struct ms_offcpu_parts *out)
{
	size_t nips, end;
	struct ms_offcpu_py py = {0};

	if (((uintptr_t)r & 7) || len < sizeof(*r) || len % 8 ||
	    r->kstack_len > MS_MAX_STACK_DEPTH || r->ustack_len > MS_MAX_STACK_DEPTH ||
	    r->waker_kstack_len > MS_MAX_STACK_DEPTH || r->waker_ustack_len > MS_MAX_STACK_DEPTH ||
	    r->stack_copy_len % 8 || r->stack_copy_len > MS_STACK_COPY_MAX)
		return -EBADMSG;
	nips = (size_t)r->kstack_len + r->ustack_len + r->waker_kstack_len + r->waker_ustack_len;
	end = sizeof(*r) + nips * 8 + r->stack_copy_len;
	if (r->flags & MS_OFFCPU_F_PYTHON) {
		if (end + sizeof(py) > len)
			return -EBADMSG;
		memcpy(&py, (const __u8 *)r + end, sizeof(py));
		if (py.py_len > MS_PY_MAX_FRAMES || py.py_status >= MS_PY_STATUS_COUNT ||
		    (py.py_len && py.py_status == MS_PY_NONE) || py.reserved)
			return -EBADMSG;
		end += sizeof(py) + (size_t)py.py_len * sizeof(struct ms_py_frame);
	}
	if (end != len)
		return -EBADMSG;
	out->ips = (const __u64 *)(r + 1);
	out->nips = (__u32)nips;
	out->stack_copy = (const __u8 *)(out->ips + nips);
	out->copy_len = r->stack_copy_len;
	out->py = (const struct ms_py_frame *)(out->stack_copy + r->stack_copy_len +
					       sizeof(struct ms_offcpu_py));
	out->npy = py.py_len;
	out->py_status = py.py_status;
	return 0;
}

#endif
