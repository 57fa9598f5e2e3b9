/* SPDX-License-Identifier: MIT */
/*
 * The recorder's memory policy, in one place (docs/recorder-memory.md).
 *
 * The recorder's resident memory is bounded by design, whatever the rate,
 * the stack copy size, the CPU count or how far processing falls behind:
 *
 *   BPF rings     sized from the rate, the CPU count and the mode's record
 *                 (ms_ringbuf_auto_bytes below) to hold MS_RINGBUF_WINDOW_MS
 *                 of samples, between MS_RINGBUF_AUTO_MIN and _MAX.  The
 *                 kernel maps a ring's data twice (for records that wrap)
 *                 and makes every mapped page resident; the reader maps it
 *                 once (collector/bpf_ring.c), so a ring counts once in RSS.
 *                 A full ring drops new samples in the kernel, counted
 *                 (sampler.ringbuf_full).
 *   drain rounds  one round reads at most what the ring held when it began
 *                 (collector/bpf_ring.h), never an open-ended stream.
 *   held records  records waiting for the time-order watermark, including
 *                 the stack bytes awaiting unwinding, take at most
 *                 MS_HELD_BYTES_MAX; a sample that would exceed it is
 *                 dropped whole and counted (processor.held_budget_full).
 *                 Side-band records (mappings, tasks, duty changes) are
 *                 always kept: they are small and later samples need them.
 *   open DWARF    the modules' DWARF file state (libelf/libdw, decompressed
 *                 sections) takes at most MS_SYMBOLS_DWARF_BYTES_MAX; past
 *                 it the least recently used are closed, keeping their
 *                 compiled line and scope tables, and reopened when a unit
 *                 not compiled yet needs them.
 */
#ifndef MS_STREAM_MEMORY_POLICY_H
#define MS_STREAM_MEMORY_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/abi/kunwind.h"
#include "bpf/abi/records.h"

/* Automatic BPF ring size (bytes, powers of two). */
#define MS_RINGBUF_AUTO_MIN (2u << 20)
#define MS_RINGBUF_AUTO_MAX (16u << 20)
/* The automatic ring holds this much time of the largest records at the
 * requested rate on every recorded CPU: what the reader must survive while
 * processing stalls (a module's CFI and line tables read at its first
 * sample; -a at 999 Hz with 16 KiB copies lost samples with 250 ms).  The
 * largest ring, 16 MiB (mapped once: 16 MiB of RSS), holds about 500 ms
 * of that on 2 CPUs; 32 MiB took a system-wide -F 4999 over the ceiling
 * (docs/recorder-memory.md). */
#define MS_RINGBUF_WINDOW_MS 500u
/* With the in-kernel unwinder (--call-graph dwarf-kernel, and auto where
 * the kernel loads it) recording a command or -p processes (not -a or a
 * cgroup scope, whose processes are handed over until their mappings are
 * told: collector.c) a sample whose stack the kernel unwound whole
 * carries no stack copy; one the kernel hands over to userspace (a module
 * not in the kernel's tables yet: the first samples of a process, JIT
 * code, a process past MS_KU_PROCS_MAX) carries the copy.  The ring is
 * sized for 1 in this many samples handed over with a full copy (bench
 * work at 999 Hz: 3.5-4.6 %, mostly the process's first samples), not for
 * every sample copying: a recording made of handed-over samples has a
 * shorter window (deepstack hands over all of its samples: 4 MiB at 999
 * Hz on 2 CPUs still lost none), and what the full ring drops is counted
 * (bpf.ringbuf_full). */
#define MS_RINGBUF_KU_HANDOVER_DIV 16u

/*
 * A sample's stack copy under ring pressure (bpf/stack_copy.bpf.h
 * stack_copy__pressure_want): cut to this many bytes once the ring is half
 * full, skipped at three quarters, rather than the sample lost whole.  With
 * the in-kernel unwinder only (not --verify-unwind, which wants every copy
 * whole, nor --call-graph dwarf, whose --stack-size is the user's ask): a
 * sample it hands over carries the frame-pointer chain too (auto), which
 * finishes what the short copy cannot.  -a beside 5 CPU-bound processes
 * in the recorder's autogroup on 2 CPUs, 999 Hz: every sample handed over
 * with 16 KiB (no process's table loaded yet), the 16 MiB ring full in
 * 0.5 s, 9 samples in 10 lost.  2 KiB holds the innermost frames, where
 * frame pointers are most often missing (leaf functions, libc).
 */
#define MS_PRESSURE_COPY_BYTES 2048u

/*
 * The recorder's nice value under -a and -p (record.c record__prioritize;
 * not with a command, which would inherit it): its CPU share among the
 * CPU-bound processes of its own autogroup (the shell's session it was
 * started from).  At nice 0 beside 5 of them on 2 CPUs it got 5-7 % of a
 * CPU, fell 15 s behind its rings and sealed 17-40 s after a 10 s -a; at
 * -5 (weight 3121 against 1024 each) 2 s.  Its own cost stays what
 * --budget allows.
 */
#define MS_RECORDER_NICE (-5)

/*
 * The bytes one sample takes in the ring, for sizing: the ring header
 * (BPF_RINGBUF_HDR_SZ, 8), the sample with two full callchains, and the
 * user stack copy of copy_bytes (--stack-size; 0 with frame pointers), or
 * with the in-kernel unwinder its hand-over state and the copy's share.
 */
static inline uint64_t ms_ringbuf_record_bytes(uint32_t copy_bytes, bool kunwind)
{
	uint64_t head = 8 + sizeof(struct ms_sample) + 2ull * MS_MAX_STACK_DEPTH * 8;

	if (kunwind)
		return head + MS_KUNWIND_BYTES + copy_bytes / MS_RINGBUF_KU_HANDOVER_DIV;
	return head + copy_bytes;
}

/* The automatic BPF ring size (bytes, a power of two): MS_RINGBUF_WINDOW_MS
 * of such records at freq_hz on every one of nr_cpus CPUs, at least
 * MS_RINGBUF_AUTO_MIN and at most MS_RINGBUF_AUTO_MAX. */
static inline uint32_t ms_ringbuf_auto_bytes(uint32_t freq_hz, uint32_t nr_cpus,
					     uint32_t copy_bytes, bool kunwind)
{
	uint64_t want = (uint64_t)(nr_cpus ? nr_cpus : 1) * freq_hz *
			ms_ringbuf_record_bytes(copy_bytes, kunwind) * MS_RINGBUF_WINDOW_MS / 1000;
	uint64_t size = MS_RINGBUF_AUTO_MIN;

	while (size < want && size < MS_RINGBUF_AUTO_MAX)
		size <<= 1;
	return (uint32_t)size;
}

/* Bytes of sample records (with their stack copies) held for ordering.  A
 * drain round reads what the ring held when it began (the watermark rule),
 * so the budget is at least the largest automatic ring: a ring filled
 * during a stall is read in one round and kept whole.  It is also the
 * start-up backlog's room: 16 MiB lost a third of a 2 s -a at 999 Hz
 * (docs). */
#define MS_HELD_BYTES_MAX (32u << 20)
_Static_assert(MS_HELD_BYTES_MAX >= MS_RINGBUF_AUTO_MAX,
	       "a full automatic ring fits the held budget");

/* Open DWARF file state of the modules being symbolized (libdw's Dwarf,
 * debug sections decompressed into the heap where they could not be
 * mapped; measured as heap deltas), bytes: past it the least recently used
 * modules' file state is closed, their compiled per-unit line and scope
 * tables kept (counted apart, about a byte per libdw line row), and
 * reopened when a unit not compiled yet needs it (counters
 * symbolizer.dwarf_reopened, _closed, _peak_kib).  The replay of a busy
 * system-wide recording held 117 MiB of DWARF when libdw's line tables and
 * decompressed sections stayed in the heap, 15 MiB since they do not
 * (docs/recorder-memory.md), so the budget is rarely reached; 64 MiB cost
 * that replay 55 reopens and 3x its CPU when a reopen also rebuilt the
 * tables and decompressed again.  Not within MS_RECORDER_BASE_BYTES. */
#define MS_SYMBOLS_DWARF_BYTES_MAX (96u << 20)

/* The debug cache's images together (symbols/debug_cache.c), bytes on
 * disk, not memory: the decompressed debug sections of the compressed debug
 * files recordings met (libc's image 8.5 MiB, python3.11's 16.5 MiB), past
 * which the least recently used images are evicted (counter
 * symbolizer.debug_cache_evicted).  An image is mapped, its pages are page
 * cache, given back after each use, as debug_inflate.c's unnamed file's. */
#define MS_DEBUG_CACHE_BYTES_MAX (512ull << 20)

/* What the rest takes at most: program and libraries (about 6 MiB: what a
 * recording does not use is opened with dlopen where used), BPF
 * objects, the capture builder, and the symbol, line and CFI tables of the
 * modules sampled.  The tables grow with the modules a recording meets and
 * have no budget of their own (docs/recorder-memory.md): a busy host's -a
 * (node, clang, cc1, python3.11 running) held 4-15 MiB of compiled CFI
 * (counter unwind.cfi_peak_kib; 14-53 MiB before rows were indexes into a
 * module's distinct rows); libLLVM's table is 6.4 MiB and takes about 30
 * MiB more while it is compiled. */
#define MS_RECORDER_BASE_BYTES (112u << 20)
/* The recorder's malloc: buffers from this size up are mapped on their own
 * and returned to the kernel when freed (glibc would otherwise raise its
 * threshold after the first such free and carve later ones from the heap,
 * which then keeps start-up's freed tables, kallsyms' 10 MB among them, as
 * RSS), and a heap top of this much free is trimmed. */
#define MS_RECORDER_MMAP_THRESHOLD (256u << 10)
/* The documented ceiling of the recorder's RSS (docs/recorder-memory.md):
 * the sampler's largest ring (mapped once), the held budget and the rest,
 * 160 MiB (--off-cpu adds its own ring: 16 MiB more). */
#define MS_RECORDER_RSS_CEILING_MIB 160u
_Static_assert(((MS_RINGBUF_AUTO_MAX + MS_HELD_BYTES_MAX + MS_RECORDER_BASE_BYTES) >> 20) ==
		       MS_RECORDER_RSS_CEILING_MIB,
	       "MS_RECORDER_RSS_CEILING_MIB is the sum of its parts");

/* In-kernel unwinder tables (bpf/abi/kunwind.h), allocated by the kernel at
 * load with --call-graph dwarf-kernel only: rows of compiled CFI of all
 * loaded modules (20 bytes each: 10 MiB; libc has about 9k rows, a CPython
 * about 40k), and module slots (16 bytes each).  A module that does not fit
 * is unwound in userspace. */
#define MS_KU_ROWS_MAX (512u << 10)
#define MS_KU_MODULES_MAX 16384u
/* Processes whose mappings the in-kernel unwinder holds (a preallocated
 * hash, as perf_event programs require: 4 KiB each, 4 MiB); the samples of
 * others are unwound in userspace. */
#define MS_KU_PROCS_MAX 1024u

/* Probe rings (sdk/c/microscope_probes.h, collector/probes.c): processes
 * whose rings are read (more are counted, probes.procs_full); slots read
 * from one process per drain round (32 bytes each: one reused 2 MiB
 * buffer; the rest waits for the next round, the SDK counting what its
 * ring cannot hold); the largest ring and site table accepted from a
 * control block (larger is probes.bad_control); how often a process not
 * (yet) holding the SDK is looked at again (ns: /proc/PID/maps, then the
 * ELF symbol table of a candidate module); the heartbeat age after which
 * the SDK stops writing (ns: above the longest drain sleep, 1 s in the
 * production preset). */
#define MS_PROBE_PROCS_MAX 256u
#define MS_PROBE_READ_SLOTS_MAX 65536u
#define MS_PROBE_RING_SLOTS_MAX (1u << 22)
#define MS_PROBE_SITES_MAX 1024u
#define MS_PROBE_RETRY_NS (200ull * 1000 * 1000)
#define MS_PROBE_TIMEOUT_NS (2000ull * 1000 * 1000)

#endif
