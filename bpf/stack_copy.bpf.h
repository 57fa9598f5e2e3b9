/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Copying a user stack from sp upward, bounded by the VMA that holds sp
 * (bpf_find_vma, Linux 5.17) or, without it, page by page until a page
 * faults.  Used by the sampler for every sample (bpf/sampler.bpf.c,
 * stack__copy, documents why each bound exists) and by bpf/offcpu.bpf.c in
 * the thread's own context at its next syscall exit.
 *
 * The includer includes bpf/uapi_defs.bpf.h (PAGE_BYTES), defines the rodata
 * settings `const volatile __u32 have_find_vma` (bpf_find_vma exists; probed
 * by the collector) and `stack_copy_bytes` (no copy is longer), and
 * includes vmlinux.h and the libbpf BPF headers first.
 */
#ifndef MS_BPF_STACK_COPY_H
#define MS_BPF_STACK_COPY_H

#include "bpf/abi/records.h"

#define SC_COPY_MAX_PAGES (MS_STACK_COPY_MAX / PAGE_BYTES + 1)

/* stack_copy__user() outcome bits, mapped by the caller onto its record's flags. */
#define SC_END (1u << 0)    /* bounded by the end of the VMA holding sp */
#define SC_FAULT (1u << 1)  /* stopped at a page that could not be read */
#define SC_NO_VMA (1u << 2) /* VMA unknown: bounded by reading page by page */

struct sc_vma_end_ctx {
	__u64 start, end;
};

static long sc_vma__end(struct task_struct *task, struct vm_area_struct *vma,
			struct sc_vma_end_ctx *ctx)
{
	ctx->start = vma->vm_start;
	ctx->end = vma->vm_end;
	return 0;
}

/*
 * The stack VMA a thread's last copy found (the caller keeps one per thread
 * slot and CPU): bpf_find_vma costs about 7.5 us a call in a perf event's
 * interrupt on the 2-vCPU VM (its mmap lock's unlock goes through an
 * irq_work), 4x a whole in-kernel unwind, and a thread's stack VMA stays
 * put: its end never moves (the stack grows down from it), so while sp
 * is inside [start, end) of the same address space the bound is the same.
 * Were the stack unmapped since, the copy would read past its end only into
 * a page that faults (the one-shot read fails; the page-by-page retry stops
 * there, as the path without bpf_find_vma does) or into a mapping that
 * happens to follow it, bytes the unwinder never reaches.
 */
struct sc_vma_cache {
	__u64 mm; /* the mm_struct's address, a number; 0: empty */
	__u64 start, end;
	__u32 tid, reserved;
};

/* The last 8 bytes of dst's room (MS_STACK_COPY_MAX + PAGE_BYTES), past
 * anything copied: sc_copy_pages keeps its progress there. */
#define SC_DONE_OFF (MS_STACK_COPY_MAX + PAGE_BYTES - 8)

/* Copy up to len (<= MS_STACK_COPY_MAX) bytes from sp into dst, a page at a
 * time, stopping at the first unreadable page; dst has MS_STACK_COPY_MAX +
 * PAGE_BYTES bytes of room.  Returns the bytes copied.  The progress is
 * read back from memory at every page, so the verifier sees it as one
 * range there (bounded again below), not as the range each earlier page's
 * branches left: with len unknown (a copy bounded by the VMA, retried page
 * by page), the loop was verified ~80 times per page.  len is at most the
 * includer's stack_copy_bytes, so the loop runs for the pages that many
 * bytes can span, a constant to the verifier (rodata): it goes through 5
 * pages for the default 16 KiB, not SC_COPY_MAX_PAGES (sampler: 6.0k -> 1.9k
 * verified instructions). */
static __always_inline __u32 sc_copy_pages(__u8 *dst, __u64 sp, __u32 len)
{
	__u64 *spill = (__u64 *)(dst + SC_DONE_OFF);
	__u32 pages = (stack_copy_bytes + PAGE_BYTES - 1) / PAGE_BYTES + 1;
	__u64 done = 0, chunk, rem;
	int i;

	if (pages > SC_COPY_MAX_PAGES)
		pages = SC_COPY_MAX_PAGES;
	for (i = 0; i < pages; i++) {
		*spill = done;
		done = *(volatile __u64 *)spill;
		if (done >= len)
			break;
		rem = len - done;
		chunk = PAGE_BYTES - ((sp + done) & (PAGE_BYTES - 1));
		if (chunk > rem)
			chunk = rem;
		barrier_var(chunk);
		barrier_var(done);
		if (chunk > PAGE_BYTES || done > MS_STACK_COPY_MAX) /* cannot happen */
			break;
		if (bpf_probe_read_user(dst + done, chunk, (const void *)(sp + done)))
			break;
		done += chunk;
	}
	/* read back, done has no bound the verifier knows (it never exceeds
	 * len): the callers' uses of the result need one */
	return done > MS_STACK_COPY_MAX ? 0 : (__u32)done;
}

/*
 * Copy want (<= MS_STACK_COPY_MAX, multiple of 8) bytes of the current
 * task's user stack from sp into dst (room for MS_STACK_COPY_MAX +
 * PAGE_BYTES bytes).  Sets SC_* bits in *out.  Returns the bytes copied, a
 * multiple of 8.  cache (or NULL): a VMA cache entry of this CPU for the
 * thread, used when it is the thread's and refreshed.
 */
static __noinline __u32 stack_copy__user(__u8 *dst, __u64 sp, __u32 want, __u32 *out,
					 struct sc_vma_cache *cache)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct sc_vma_end_ctx vma = {};
	__u32 len, copy, tid = 0;
	__u64 mm = 0;
	long err;

	if (!dst || !out)
		return 0;
	if (want > MS_STACK_COPY_MAX)
		want = MS_STACK_COPY_MAX;
	if (cache && have_find_vma) {
		mm = (__u64)BPF_CORE_READ(task, mm);
		tid = (__u32)bpf_get_current_pid_tgid();
		if (mm && cache->mm == mm && cache->tid == tid && sp >= cache->start &&
		    sp < cache->end) {
			vma.end = cache->end;
			err = 0;
			goto bounded;
		}
	}
	err = have_find_vma ? bpf_find_vma(task, sp, sc_vma__end, &vma, 0) : -38 /* ENOSYS */;
	if (cache && mm && !err && vma.start <= sp && sp < vma.end) {
		cache->mm = mm;
		cache->tid = tid;
		cache->start = vma.start;
		cache->end = vma.end;
	}
bounded:
	if (err == -2 /* ENOENT: sp is in no mapping */) {
		*out |= SC_FAULT;
		return 0;
	}
	if (err || vma.end <= sp) {
		*out |= SC_NO_VMA;
		len = want;
		copy = sc_copy_pages(dst, sp, len) & ~7u;
	} else {
		len = want;
		if (vma.end - sp < want) {
			len = (__u32)(vma.end - sp) & ~7u;
			*out |= SC_END;
		}
		barrier_var(len); /* keep the bound below: clang proves it from want */
		if (len > MS_STACK_COPY_MAX) /* cannot happen; bounds the verifier */
			len = MS_STACK_COPY_MAX;
		copy = len;
		if (bpf_probe_read_user(dst, len, (const void *)sp))
			copy = sc_copy_pages(dst, sp, len) & ~7u;
	}
	if (copy < len)
		*out |= SC_FAULT;
	return copy;
}

/*
 * The copy size under ring pressure: a sample whose full copy would push a
 * ring that is filling faster than it drains into dropping samples takes a
 * short copy (cut_bytes) once used >= ring / 2, and none (the callchain
 * only) once used >= 3 * ring / 4.  The reader is woken at ring / 4
 * (wakeup_bytes), so a ring past half full is one the reader is not
 * keeping up with: a starved recorder on a loaded host (a 16 MiB ring of
 * 16 KiB copies on 2 CPUs at 999 Hz lasts 0.5 s).  Keeping the sample
 * with a shallower stack beats losing it whole (perf record -g keeps them
 * all, as frame-pointer chains).  Sets MS_SAMPLE_F_COPY_CUT or
 * MS_SAMPLE_F_COPY_SKIPPED in *flags.  used: the ring's unread bytes
 * (bpf_ringbuf_query BPF_RB_AVAIL_DATA); ring: its size; cut_bytes: 0
 * turns this off.  Returns the bytes to copy, at most want.
 */
static __always_inline __u32 stack_copy__pressure_want(__u64 used, __u64 ring, __u32 cut_bytes,
							__u32 want, __u32 *flags)
{
	if (!cut_bytes || !ring || used < ring / 2)
		return want;
	if (used >= ring / 2 + ring / 4) {
		*flags |= MS_SAMPLE_F_COPY_SKIPPED;
		return 0;
	}
	if (want <= cut_bytes)
		return want;
	*flags |= MS_SAMPLE_F_COPY_CUT;
	return cut_bytes;
}

/*
 * The registers CFI unwinding starts from (struct ms_regs_x86_64), from the
 * task's user pt_regs (a BTF pointer from bpf_task_pt_regs: direct,
 * CO-RE relocated, fault-safe loads, no helper call per register).
 */
static __always_inline void user_regs__copy(struct ms_regs_x86_64 *dst,
					    const struct pt_regs *uregs)
{
	dst->ip = uregs->ip;
	dst->sp = uregs->sp;
	dst->bp = uregs->bp;
	dst->bx = uregs->bx;
	dst->r12 = uregs->r12;
	dst->r13 = uregs->r13;
	dst->r14 = uregs->r14;
	dst->r15 = uregs->r15;
}

#endif
