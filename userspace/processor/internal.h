/* SPDX-License-Identifier: MIT */
/*
 * Processor state shared by its files (processor.c: intake and ordering;
 * tasks.c: processes, threads, mappings; stacks.c: frames and stacks;
 * modules.c: the stacks' modules and their CFI).
 * Private to userspace/processor/.
 */
#ifndef MS_PROCESSOR_INTERNAL_H
#define MS_PROCESSOR_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>

#include "../../bpf/abi/records.h"
#include "../../bpf/abi/python.h"
#include "../../bpf/abi/sample_parts.h"
#include "../../bpf/abi/offcpu_parts.h"
#include "../../capture/merge.h"
#include "../runtimes/jit_funcs.h"
#include "../runtimes/jitdump.h"
#include "../runtimes/perf_map.h"
#include "../runtimes/py_code.h"
#include "../runtimes/py_procs.h"
#include "../stream/meta.h"
#include "../stream/perf_records.h"
#include "../unwind/unwind.h"
#include "hashmap.h"
#include "kunwind_maps.h"
#include "problems.h"
#include "processor.h"

/* Deepest user stack a DWARF unwind may produce (frames). */
#define MS_UNWIND_MAX_DEPTH 512

/* Call-graph policy (meta "call_graph"). */
#define MS_CG_AUTO 0
#define MS_CG_FP 1
#define MS_CG_DWARF 2

/* One executable mapping of a process: [start, end) at file offset pgoff. */
struct proc_mapping {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint32_t module; /* index into processor.modules, or CAPTURE_NONE (anonymous) */
	uint32_t reserved;
};

struct proc_state {
	uint32_t pid;
	uint32_t row; /* capture process row */
	bool tracked; /* a target, a target's descendant, or system-wide */
	bool have_info; /* namespaces and start time known (MS_CHUNK_PROCESS or parent) */
	bool exited;
	uint64_t exit_time; /* its EXIT record's time, once exited by one */
	struct proc_mapping *maps; /* sorted by start, non-overlapping */
	uint32_t nmaps;
	uint32_t maps_cap;
	uint32_t maps_gen; /* bumped at every change of maps */
	uint32_t ku_gen;   /* maps_gen last told to the in-kernel unwinder */
	bool ku_told;	   /* ku_gen is valid */
	uint32_t ku_cookie; /* the address space maps are of (ms_kunwind.module of a
			     * NO_PROC/NO_MAPPING sample), 0 unknown; reset at exec */
	struct jit_state *jit; /* code with no file (jit.c); NULL until needed */
};

struct thread_state {
	uint32_t tid;
	uint32_t row;  /* capture thread row */
	uint32_t proc; /* index into processor.procs */
	bool exited;   /* its EXIT record was seen */
	uint64_t exit_time; /* that record's time */
};

/* A module as the processor knows it: its capture row and frame caches. */
struct module_state {
	struct sym_module *sym;
	uint32_t row;		 /* capture module row */
	uint32_t kind;		 /* CAPTURE_MODULE_* */
	struct u64map frames[2]; /* [is_return_address]: ELF address + 1 -> frame row */
	struct unwind_module *cfi; /* compiled CFI, opened the first time a sample needs it */
	bool cfi_tried;
	uint32_t first_pid; /* a process that mapped it, for /proc/PID/root */
	bool deferred;	    /* frames stored unsymbolized for `microscope symbolize` */
	bool dwarf_checked; /* its DWARF problem (if any) was recorded */
	bool jit_desc_checked; /* searched for __jit_debug_descriptor (jit.c) */
	uint64_t jit_desc_vaddr; /* its ELF address; 0 none */
	/* "[MODULE: no symbols: REASON]" frame row, made on first need, or NONE */
	uint32_t unreadable_mark;
};

/* Inline frames kept per address at most (deeper chains keep the outermost). */
#define MS_MAX_INLINE_DEPTH 16

/* A record held for ordering: bytes live in processor.held_bytes. */
struct held_record {
	uint64_t time;
	uint64_t seq;
	uint64_t offset; /* into held_bytes */
	uint32_t len;
	uint32_t kind; /* MS_CHUNK_BPF, MS_CHUNK_PERF or MS_CHUNK_DUTY */
	uint32_t source;
	uint32_t reserved;
};

struct attribution;
struct pins;

struct processor {
	struct capture_builder *b;
	struct attribution *attribution; /* attribution.c; NULL until the first sample */
	struct pins *pins;		 /* pins.c; NULL until the first pin */
	struct symbolizer *sym;

	/* ordering */
	struct held_record *held; /* held[held_first, nheld) wait; [held_first, held_sorted) in order */
	size_t nheld, held_cap;
	size_t held_first, held_sorted;
	struct held_record *held_tmp; /* merge scratch: the unsorted tail */
	size_t held_tmp_cap;
	uint8_t *held_bytes;
	size_t held_len, held_bytes_cap;
	size_t held_live; /* bytes of held_bytes still held (the rest: released records) */
	uint64_t seq;
	uint64_t prev_round; /* T_{k-1}; records before it may be released */
	bool have_round;
	uint64_t last_released; /* time of the last released record */
	uint64_t round_budget_ns; /* processor__set_round_budget; 0 = none */
	uint64_t max_lag_ns;	  /* records older than newest round - this are always released */
	uint64_t hold_back_ns;	  /* processor__set_hold_back (tests: forced lag) */
	uint64_t lag_max_seen_ns; /* largest (round time - oldest record still held) after a release */
	size_t held_peak;	  /* largest held_live (counter processor.held_peak_kib) */
	size_t cfi_bytes;	  /* compiled CFI tables held now (stacks__module_cfi) */
	size_t cfi_peak;	  /* largest cfi_bytes (counter unwind.cfi_peak_kib) */
	uint64_t lag_sum_ns, lag_rounds; /* for the mean of the same */
	uint64_t oldest_released; /* time of the oldest record released since the last round, 0 */
	uint64_t first_round, end_time;
	/* processor__set_window: records after first_round + window_ns are
	 * dropped (samples, off-CPU intervals starting later) or cut there
	 * (intervals ending later); 0: no window */
	uint64_t window_ns;
	uint64_t after_window_samples, after_window_offcpu, cut_offcpu;

	/* tasks */
	struct proc_state *procs;
	uint32_t nprocs, procs_cap;
	struct u64map pid_to_proc; /* pid + 1 -> procs index */
	struct thread_state *threads;
	uint32_t nthreads, threads_cap;
	struct u64map tid_to_thread; /* tid + 1 -> threads index */
	bool system_wide;
	/* sample_id trailer of the side-band records (meta perf.sample_type) */
	struct perf_sample_id_layout sideband_id;
	/* the sampling event's name (meta "event"; "cpu-clock" in streams without it) */
	char event_name[32];

	/* modules and frames */
	struct module_state *modules;
	uint32_t nmodules, modules_cap;
	struct u64map sym_to_module; /* (uintptr_t)sym_module -> modules index */
	uint32_t kernel_module;	     /* modules index or CAPTURE_NONE */
	/* module of the frames last appended to the stack being built (the
	 * run an unreadable module's mark heads), or CAPTURE_NONE */
	uint32_t stack_run_module;
	struct u64map anon_frames;   /* address + 1 -> frame row (no module) */
	uint32_t truncation_frames[5];

	/* samples */
	uint32_t event_row;
	uint32_t duty_factor; /* sampling period multiplier in force: each sample's weight */
	struct duty_change {
		uint64_t time_ns;
		uint32_t factor;
	} *duty_changes; /* MS_CHUNK_DUTY in time order -> meta budget.duty_changes */
	uint32_t nduty_changes, duty_changes_cap;
	uint64_t samples;
	uint64_t first_sample_time, last_sample_time;
	uint64_t sample_time; /* time of the sample being processed */
	/* code with no file (jit.c) */
	bool read_processes; /* processor__read_processes: live, may read /proc */
	uint64_t jit_reads;
	uint64_t jit_read_cpu_ns, jit_late_cpu_ns; /* thread CPU spent reading, naming late */
	/* frames named at seal time (jit.c): serial making their rows unique,
	 * frames named, left unnamed, not kept (JIT_LATE_FRAMES_MAX), lookups cut */
	uint32_t jit_late_serial;
	/* probe sites (probes.c): the SDK's (pid, site) -> capture site row */
	struct probe_site_state {
		uint32_t pid, site; /* the SDK's numbering */
		uint32_t name;	    /* string */
		uint32_t row;	    /* capture probe site row, NONE before its first record */
		uint32_t proc_row;  /* that row's process */
	} *probe_sites;
	uint32_t nprobe_sites, probe_sites_cap;
	struct u64map probe_site_map; /* (pid << 32 | site) + 1 -> probe_sites index */
	/* executable anonymous mappings as drained (jit_maplog.c) */
	struct jit_maplog_entry *jit_maplog;
	uint64_t jit_maplog_n, jit_maplog_floor;
	uint64_t jit_unnamed_time; /* frames in JIT code no function names at their time */
	/* processes that mapped executable anonymous memory since the last round */
	uint32_t jit_wanted[64];
	uint32_t njit_wanted;
	uint64_t jit_prompt_reads;
	uint64_t jit_late_named, jit_late_unnamed, jit_late_full, jit_history_cut;
	uint64_t own_pidns, own_mntns; /* our namespaces' inodes, 0 until needed */
	uint32_t stack_scratch[(MS_UNWIND_MAX_DEPTH + MS_MAX_STACK_DEPTH) * 2 + 8];
	/* Frame rows of each (module, address): ranges of chain_rows, packed in
	 * module_state.frames values as offset << 8 | count (outermost first). */
	uint32_t *chain_rows;
	uint32_t nchain_rows, chain_rows_cap;
	bool symbolize_deferred; /* meta "symbolize" = "deferred" */
	bool symbolize_forced;	 /* processor__force_symbolize: stream meta ignored */
	uint32_t nmodule_problems; /* meta "symbols.problem.N" rows written */
	uint64_t unwind_pcs[MS_UNWIND_MAX_DEPTH];
	uint8_t unwind_flags[MS_UNWIND_MAX_DEPTH];
	uint32_t call_graph; /* MS_CG_* from meta "call_graph" */
	bool stack_copy_on;  /* meta "stack_size" > 0 */
	uint64_t stack_size; /* meta "stack_size": bytes a whole copy holds at most */
	uint32_t trunc_rows[UNWIND_REASON__COUNT]; /* frame row per unwind reason */
	uint64_t unwind_reasons[UNWIND_REASON__COUNT]; /* DWARF unwinds by ending */
	uint64_t unwind_fp_fallback; /* auto: CFI could not start, FP chain used */
	/* Samples whose copy ring pressure cut or skipped (MS_SAMPLE_F_COPY_CUT,
	 * _SKIPPED), and those of them finished from the frame-pointer chain
	 * where the short copy ran out (kunwind.c) */
	uint64_t degraded_cut, degraded_skipped, degraded_fp_spliced;
	/* Of them, cut here while held past half the held budget (kunwind.c
	 * kunwind__held_cut), into held_cut_buf (MS_SAMPLE_MAX_SIZE bytes,
	 * allocated at the first cut) */
	uint64_t degraded_held_cut;
	uint8_t *held_cut_buf;
	uint64_t unwind_fp_steps;	  /* DWARF unwinds' frame-pointer steps (no CFI there) */
	uint64_t unwind_fp_step_samples; /* ... samples with at least one */
	uint64_t exec_replaced;	     /* samples in execve with no user part (EXEC_REPLACED) */
	uint64_t fp_not_kept;	     /* FP chains cut at a frame without a frame pointer */
	uint64_t fp_not_kept_leaf;   /* ... of them at the interrupted (innermost) frame */

	/* In-kernel unwinding (kunwind.c): the sampler's tables (NULL when
	 * replaying: nothing is loaded, the samples still carry their pcs) */
	struct kunwind_maps *kunwind;
	bool verify_unwind;			      /* meta "verify_unwind" */
	uint64_t ku_status[3];			      /* [MS_KU_DONE], [MS_KU_RESUME] */
	uint64_t ku_cause[MS_KU_STOP_COUNT];	      /* samples by where the kernel stopped */
	uint64_t ku_kernel_frames, ku_user_frames;     /* frames unwound on each side */
	uint64_t ku_verified;			      /* samples compared with the copy path */
	uint64_t ku_verify_no_copy;		      /* not compared: no bytes copied */
	uint64_t ku_load_errors;		      /* table writes that failed */
	/* Targeted recordings: tables written at drain time (kunwind_live.c) */
	bool ku_eager;
	struct kunwind_live *ku_live; /* NULL until the first write */
	uint64_t ku_live_reads;	      /* /proc/PID/maps reads written */
	uint64_t verify_pcs[MS_UNWIND_MAX_DEPTH];
	uint8_t verify_flags[MS_UNWIND_MAX_DEPTH];

	/* CPython (userspace/runtimes/): layouts from the recording's tracker
	 * (NULL when replaying: interpreted frames are then unreadable) */
	const struct py_tracker *py;
	struct py_namer *py_namer;
	struct u64map py_frames;  /* hash(code entry, line) -> frame row */
	struct u64map frame_role; /* frame row + 1 -> enum py_role */
	uint32_t py_marks[4];
	uint32_t py_tail; /* reason frame python__splice wants at the stack's end, or NONE */
	uint32_t splice_scratch[(MS_UNWIND_MAX_DEPTH + MS_MAX_STACK_DEPTH) * 2 + 8 + 2 * MS_PY_MAX_FRAMES + 16];
	uint64_t py_status[MS_PY_STATUS_COUNT]; /* samples by walk status */
	uint64_t offcpu_py_status[MS_PY_STATUS_COUNT]; /* off-CPU intervals by walk status */

	uint64_t problems[MS_PROBLEM_COUNT];

	/* off-CPU intervals (offcpu.c) */
	uint32_t offcpu_event_row;   /* CAPTURE_NONE until the first interval */
	uint32_t offcpu_marks[4];    /* marker frame rows, CAPTURE_NONE until made */
	uint64_t intervals;
	/* waker stack copies waiting for their interval (offcpu.c): at most
	 * OFFCPU_WAKER_COPIES, each buffer MS_STACK_COPY_MAX bytes, made once */
	struct offcpu_waker_copy *waker_copies;
	uint32_t nwaker_copies, next_waker_copy;
};

/* Truncation reasons (processor.truncation_frames index). */
#define MS_TRUNC_USER_DEPTH 0
#define MS_TRUNC_USER_UNAVAILABLE 1
#define MS_TRUNC_NO_STACK_COPY 2
#define MS_TRUNC_FP_LEFT_CODE 3 /* frame-pointer chain left mapped code */
#define MS_TRUNC_FP_NOT_KEPT 4	/* a frame without its frame pointer: next caller unproven */

/*
 * Grow *arr (elements of size bytes, capacity *cap) to hold at least need
 * elements, doubling from 16.  Returns 0 or -ENOMEM (*arr unchanged).
 */
static inline int array__reserve(void **arr, uint32_t *cap, uint32_t need, size_t size)
{
	uint32_t ncap = *cap ? *cap : 16;
	void *n;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*arr, (size_t)ncap * size);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

static inline void processor__problem(struct processor *p, enum ms_problem k)
{
	p->problems[k]++;
}

/* tasks.c */
int tasks__perf_record(struct processor *p, const uint8_t *rec, uint32_t len, uint32_t source);
struct proc_state *tasks__find_process(struct processor *p, uint32_t pid);
struct proc_state *tasks__process_at(struct processor *p, uint32_t pid, uint64_t time);
struct proc_state *tasks__process(struct processor *p, uint32_t pid, uint64_t time);
struct thread_state *tasks__thread(struct processor *p, uint32_t pid, uint32_t tid, uint64_t time);
struct thread_state *tasks__sample_thread(struct processor *p, uint32_t pid, uint32_t tid,
					  uint64_t time, bool *known);
const struct proc_mapping *tasks__find_mapping(const struct proc_state *ps, uint64_t addr);
void tasks__release(struct processor *p);
/* Free the processes that exited and the threads that exited or were
 * replaced (compact.c).  Returns 0 or -ENOMEM (nothing dropped). */
int tasks__drop_exited(struct processor *p);

int tasks__process_info(struct processor *p, const struct ms_process_info *info);

/* probes.c: MS_REC_PROBE_SITE as it is drained (not held: records of the
 * site are older than it); MS_REC_PROBE in time order.  Malformed ones are
 * counted (MS_PROBLEM_BAD_PROBE).  0 or -ENOMEM. */
int probes__site(struct processor *p, const uint8_t *rec, uint32_t len);
int probes__record(struct processor *p, const uint8_t *rec, uint32_t len);
void probes__release(struct processor *p);

/* python.c */
/* The CPython walk of one record (a sample, or an off-CPU interval at
 * switch-out): its process, status (MS_PY_*) and frames, innermost first. */
struct py_walk_parts {
	uint32_t pid;
	uint32_t status;
	const struct ms_py_frame *py;
	uint32_t npy;
};
/* Should a stack of process pid with this walk status get its interpreted
 * frames spliced (and, where they are missing, a mark)?  A walk that
 * happened, or a process whose layout the tracker knows. */
bool python__wants_splice(struct processor *p, uint32_t pid, uint32_t status);
/* Splice the walk's interpreted frames into the native user frames
 * user[0..nuser) (root first); writes out, returns its length, or -ENOMEM.
 * Sets p->py_tail to the mark the stack must end in, or CAPTURE_NONE. */
int python__splice(struct processor *p, const struct py_walk_parts *w, uint32_t *user,
		   uint32_t nuser, uint32_t *out);
void python__release(struct processor *p);
void python__drained(struct processor *p, const void *rec, uint32_t len);
uint32_t python__native_flags(const char *name);
/* True when m has a symbol _PyEval_EvalFrameDefault (libpython, a python
 * executable): deferred captures symbolize it while recording, since
 * python__splice places interpreted frames by the names of its activations.
 * Reads every symbol of m once (call it once per module; only with a
 * CPython tracker). */
bool python__module_has_eval(const struct sym_module *m);

/* modules.c: the stacks' modules (rows, deferral, DWARF problem, CFI) */
struct stacks_unwind_ctx {
	struct processor *p;
	struct proc_state *ps;
};
/* unwind_find_fn over ctx (a struct stacks_unwind_ctx): the module of pc
 * in the process's mappings as of the sample's time, or a JIT's. */
bool stacks__unwind_find(void *ctx, uint64_t pc, struct unwind_map *map);
/* The module's compiled CFI, opened on first need (NULL if it has none). */
struct unwind_module *stacks__module_cfi(struct processor *p, struct module_state *ms);
/* Free a module's compiled CFI, counted out of p->cfi_bytes. */
void stacks__module_cfi_free(struct processor *p, struct module_state *ms);
uint32_t stacks__module_for_sym(struct processor *p, struct sym_module *sym, uint32_t kind,
				const char *path);
/* Records the module's DWARF problem (once per module) as a counted problem
 * and meta "symbols.problem.ID". */
void stacks__module_check_dwarf(struct processor *p, struct module_state *ms);
/* Deferred mode: a module that can be found again later (by build ID) keeps
 * its frames unsymbolized; others are symbolized now and flagged
 * CAPTURE_MODULE_F_RECORD_TIME.  findable_later: the file at its path is
 * the one mapped (not deleted, replaced, memfd). */
void stacks__module_findable(struct processor *p, uint32_t module, bool findable_later);

/* stacks.c */
/* Append the user frames p->unwind_pcs/unwind_flags[0..depth) (root first,
 * after a truncation mark unless reason is the outermost frame) to out.
 * Counts reason.  Returns 0 or -ENOMEM. */
int stacks__emit_unwound(struct processor *p, struct proc_state *ps, size_t depth,
			 enum unwind_reason reason, uint32_t *out, uint32_t *n);
int stacks__sample(struct processor *p, const struct ms_sample *s, uint32_t len);
void stacks__release(struct processor *p);

/* attribution.c: record sample's cgroup (a cgroups row, made on first
 * sight) and its thread's namespace tid and process's pid namespace.
 * sample: the capture sample row.  Returns 0 or -ENOMEM. */
int attribution__sample(struct processor *p, struct thread_state *ts, uint32_t sample,
			const struct ms_sample *s);
/* Accepts NULL. */
void attribution__free(struct attribution *a);
/* The builder ids a holds (its cgroup paths' strings), for compact.c.
 * Accepts NULL. */
void attribution__refs(struct attribution *a, capture_ref_fn ref, void *ctx);
/* Forget a's cgroup rows (made again on demand).  Accepts NULL. */
void attribution__forget_rows(struct attribution *a);

/* pins.c: keep map_file (a /proc/PID/map_files link of a mapping of path,
 * maj:min:ino as its MMAP2 record says; else path in process pid's mount
 * namespace) open unless path reaches the same file here.  Best effort: failures leave symbolization as it was. */
void pins__pin(struct processor *p, uint32_t pid, const char *map_file, const char *path,
	       uint32_t maj, uint32_t min, uint64_t ino);
/* True when pins__pin found path, as it is now, to be the file of this
 * maj:min:ino record before: nothing to pin, one stat(). */
bool pins__host_reaches(struct processor *p, const char *path, uint32_t maj, uint32_t min,
			uint64_t ino);
/* "/proc/self/fd/N" of the pinned file for maj:min:ino into out: 0, or -ENOENT. */
int pins__path(const struct processor *p, uint32_t maj, uint32_t min, uint64_t ino, char *out,
	       size_t size);
/* Accepts NULL. */
void pins__free(struct pins *s);
/* tasks.c: a perf record as it leaves the ring, before ordering: pins the
 * file of an executable MMAP2 while its process lives. */
void tasks__drained(struct processor *p, const uint8_t *rec, uint32_t len);

/* A stack given as parts (stacks__build): kernel and user return addresses
 * (innermost first), and for a CFI unwind the user registers and copied
 * stack bytes.  root_mark: a marker frame row put above the outermost frame,
 * or CAPTURE_NONE. */
struct stack_parts {
	const uint64_t *kips;
	uint32_t k;
	const uint64_t *uips;
	uint32_t u;
	bool user;	 /* build a user part (false: kernel frames only) */
	bool ustack_err; /* the user chain could not be read */
	bool copy_wanted; /* a copy was expected: mark an FP stand-in [no stack copy] */
	const struct ms_regs_x86_64 *regs; /* NULL: no registers */
	const uint8_t *copy;
	uint32_t copy_len;
	uint32_t root_mark;
	bool k_returns; /* the innermost kernel address is a return address too */
	/* the thread's CPython walk, spliced into the user part as in a
	 * sample; NULL: none (a waker, an interval without one) */
	const struct py_walk_parts *py;
};
/* Append the stack of sp (root first) to the builder; *stack is its row
 * (CAPTURE_NONE if empty).  ps NULL: kernel frames only.  Returns 0 or
 * -ENOMEM. */
int stacks__build(struct processor *p, struct proc_state *ps, const struct stack_parts *sp,
		  uint32_t *stack);
/* A marker frame row named name, made once into *slot (CAPTURE_NONE at first). */
uint32_t stacks__marker(struct processor *p, uint32_t *slot, const char *name);
/* The kernel symbol of ip (looked up at ip - 1 for a return address), or NULL. */
const char *stacks__kernel_name(struct processor *p, uint64_t ip, bool is_return);

/* kunwind.c */
/* The user frames of a sample the kernel unwound (parts->ku set): its pcs,
 * then userspace's unwind from where the kernel stopped; with
 * verify_unwind, compared with the copy path's unwind (problem
 * KUNWIND_MISMATCH).  Loads what the kernel lacked.  Returns 1 (frames
 * appended), 0 (auto where CFI found no caller and the sample carries the
 * frame-pointer chain, MS_SAMPLE_F_KU_FP_CHAIN: the caller takes that
 * chain, as for a copied stack) or -ENOMEM. */
int kunwind__user_stack(struct processor *p, struct proc_state *ps, const struct ms_sample *s,
			const struct ms_sample_parts *parts, uint32_t *out, uint32_t *n);
/*
 * Held records past half the held budget (MS_HELD_BYTES_MAX): a sample of
 * the in-kernel unwinder's recording (not --verify-unwind) whose copy is
 * longer than MS_PRESSURE_COPY_BYTES is kept with its copy cut to that,
 * or to none when even that does not fit room (bytes left in the budget), flagged MS_SAMPLE_F_COPY_CUT or
 * _SKIPPED, as the sampler does under ring pressure: degraded rather than
 * lost.  *rec, *len (untrusted) are replaced by the cut record in
 * p->held_cut_buf.  Returns true when it cut.
 */
bool kunwind__held_cut(struct processor *p, const void **rec, uint32_t *len, uint64_t room);
/* Counters "kunwind.*". */
void kunwind__finish(struct processor *p);
/* ps mapped m (in time order): a process the kernel's table was told of is
 * told again when m is a file's code (dlopen), before a sample has to ask. */
void kunwind__mapped(struct processor *p, struct proc_state *ps, const struct proc_mapping *m);
/* A BPF record as drained, before ordering: loads the rows a sample that
 * stopped at a module without them wants (untrusted record); in a targeted
 * recording (ku_eager) also the table of a process it stopped without. */
void kunwind__drained(struct processor *p, const void *rec, uint32_t len);
/* Load the rows of module (once; a failed load is counted); want: the ELF
 * vaddr a sample stopped at in it, or KUNWIND_WANT_NONE (kunwind_maps.h:
 * a module larger than the rows left then waits for a sample's address). */
void kunwind__load_module(struct processor *p, uint32_t module, uint64_t want);

/* kunwind.c: the table row of a mapping [start, end) at pgoff of module
 * (a file or the vDSO with its load address known) into *out; false for
 * any other. */
bool kunwind__table_mapping(const struct processor *p, uint32_t module, uint64_t start,
			    uint64_t end, uint64_t pgoff, struct ms_ku_mapping *out);

/* kunwind_live.c */
/* A drained sample of a targeted recording that stopped for want of its
 * process's table (NO_PROC, NO_MAPPING; parts checked): write the table
 * from /proc/PID/maps unless a write after the sample's time covers it. */
void kunwind__live_drained(struct processor *p, const struct ms_sample *s,
			   const struct ms_sample_parts *parts);
/* True when the drain writes tgid's table (the ordered path must not). */
bool kunwind__live_owns(const struct processor *p, uint32_t tgid);
/* Load the rows of every module tgid maps now (a -p target, before
 * sampling; targeted recordings only). */
void kunwind__live_prepare(struct processor *p, uint32_t tgid);
/* Load the rows of the executable file at path (absolute, no symbolic
 * links: the command of a targeted recording, before it runs); nothing for
 * a file that is not ELF or not found. */
void kunwind__live_prepare_command(struct processor *p, const char *path);
/* A drain round ended: load the rows the round's tables want. */
void kunwind__round(struct processor *p);
void kunwind__live_release(struct processor *p);

/* jit.c */
/* A mapping [start, end) of ps made at time (path: its file name, NULL if
 * anonymous): ends the JIT functions read before it, allows a read at the
 * next unnamed sample, and notes a jitdump marker.  0 or -ENOMEM. */
int jit__mapped(struct processor *p, struct proc_state *ps, uint64_t start, uint64_t end,
		const char *path, uint64_t time);
/* The frame row of user address ip of ps in code a JIT named (is_return:
 * a return address), reading the process's map or jitdump file on if the
 * rules allow.  0 and *row set, -ENOENT (no function covers it) or
 * -ENOMEM. */
/* jit_maplog.c: note an executable anonymous mapping as it is drained;
 * the mappings of pid over [start, end) in (after, upto] (jit_mapped_fn). */
void jit__drained(struct processor *p, const void *rec, uint32_t len);
int jit__mappings(struct processor *p, uint32_t pid, uint64_t start, uint64_t end,
		  uint64_t after, uint64_t upto, uint64_t *times, uint32_t max);
/*
 * At each drain round, before records are released: read on the perf maps,
 * jitdump files and GDB JIT lists of tracked live processes that mapped
 * executable anonymous memory since the last round, or whose files are
 * being read (at most every JIT_PROMPT_NS), so a function is read close to
 * when it was written, whatever the processing lag, and its code is proved
 * while the process lives.  round_ns: the round's time (samples' clock).
 */
void jit__round(struct processor *p, uint64_t round_ns);
int jit__frame(struct processor *p, struct proc_state *ps, uint64_t ip, bool is_return,
	       uint32_t *row);
/* unwind_find for a pc in anonymous memory: the proved frames of the JIT
 * function covering it (a module without CFI when nothing was proved), or
 * false when no function covers it. */
bool jit__unwind_find(struct processor *p, struct proc_state *ps, uint64_t pc,
		      struct unwind_map *map);
/* Name every process's late jitdump frames from the files as they are now
 * (at the seal, and before a segment or slice is cut).  0 or -ENOMEM. */
int jit__name_late(struct processor *p);
/* Is time past the --duration window (processor__set_window)? */
static inline bool processor__after_window(const struct processor *p, uint64_t time)
{
	return p->window_ns && p->have_round && time > p->first_round &&
	       time - p->first_round > p->window_ns;
}

/* Counters "jit.*" and meta "jit.perf_map.PID" / "jit.jitdump.PID". */
void jit__finish(struct processor *p);
void jit__release(struct proc_state *ps);
/* Forget ps's cached JIT frame and module rows (made again on demand). */
void jit__forget_rows(struct proc_state *ps);
/* offcpu.c */
int offcpu__record(struct processor *p, const struct ms_offcpu *r, uint32_t len);
/* Keep the waker's stack copy of r (MS_REC_OFFCPU_WAKER) for its interval.
 * A bad record is a counted problem.  Returns 0 or -ENOMEM. */
int offcpu__waker(struct processor *p, const struct ms_offcpu_waker *r, uint32_t len);
/* Free the waker copies; accepts a processor without any. */
void offcpu__release(struct processor *p);

#endif
