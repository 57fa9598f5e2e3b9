/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Constants the BPF programs need that are #defines in the kernel's uapi
 * and errno headers, so vmlinux.h (BTF) does not carry them: flags of
 * include/uapi/linux/bpf.h and errno values of
 * include/uapi/asm-generic/errno-base.h.  Shared by bpf/sampler.bpf.c and
 * bpf/offcpu.bpf.c; include after vmlinux.h.
 */
#ifndef MS_BPF_UAPI_DEFS_H
#define MS_BPF_UAPI_DEFS_H

#ifndef BPF_F_USER_STACK
#define BPF_F_USER_STACK (1ULL << 8)
#endif
#ifndef BPF_RB_NO_WAKEUP
#define BPF_RB_NO_WAKEUP (1ULL << 0)
#define BPF_RB_FORCE_WAKEUP (1ULL << 1)
#endif
#ifndef BPF_RB_AVAIL_DATA
#define BPF_RB_AVAIL_DATA 0
#endif
#ifndef BPF_NOEXIST
#define BPF_NOEXIST 1
#endif
#ifndef BPF_F_NO_PREALLOC
#define BPF_F_NO_PREALLOC (1U << 0)
#endif
#ifndef ENOENT
#define ENOENT 2
#endif
#ifndef EEXIST
#define EEXIST 17
#endif

/* x86-64 base page size (arch/x86/include/asm/page_types.h). */
#define PAGE_BYTES 4096

#endif
