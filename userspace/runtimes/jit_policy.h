/* SPDX-License-Identifier: MIT */
/*
 * Limits on code with no file (perf maps, jitdump): every bound the readers
 * in this folder hold, stated once.  The target process writes these files,
 * so nothing in them is trusted: a limit reached is a counted problem
 * (jit_funcs.h, JIT_PROBLEMS), never a crash, an unbounded allocation or an
 * unbounded read.  Rules: the seed's paragraphs on anonymous executable
 * memory (profiler-design.txt).
 */
#ifndef MS_JIT_POLICY_H
#define MS_JIT_POLICY_H

/* Bytes of one perf map or jitdump file read at once; the next read goes on
 * from there. */
#define JIT_READ_MAX (16u << 20)

/* Bytes of functions' code kept per process (sum of the sizes of the
 * functions given code); a function past it is named but has no code, so no
 * frame proof. */
#define JIT_CODE_MAX (64ull << 20)

/* Largest size one function may claim: a line or record claiming more is
 * a problem ("huge"), not a function that would swallow its neighbours. */
#define JIT_FUNC_SIZE_MAX (64ull << 20)

/* Functions kept per process (live ones; replaced ones are dropped).  At
 * the limit a line is dropped (counted "funcs_full") unless at least
 * JIT_FUNCS_ROOM functions wait to be committed: only then is the table
 * sorted to find what they replace, so a read costs at most one sort per
 * JIT_FUNCS_ROOM lines, not one per line. */
#define JIT_FUNCS_MAX (1u << 20)
#define JIT_FUNCS_ROOM (JIT_FUNCS_MAX / 16)

/* Bytes of function names and source file names kept per process. */
#define JIT_NAMES_MAX (64u << 20)

/* Longest perf map line (bytes, newline included); a longer one is
 * malformed and skipped up to its newline. */
#define JIT_LINE_MAX 8192

/* Longest name kept from a jitdump record (bytes); a longer one is cut. */
#define JIT_NAME_MAX 4096

/* Source-line entries (jitdump debug info) kept per process. */
#define JIT_LINES_MAX (1u << 20)

/* Largest jitdump record (bytes); a record claiming more ends the file's
 * reading (its length cannot be trusted to find the next one). */
#define JIT_RECORD_MAX JIT_READ_MAX

/* Proved frame-layout rows kept per process (frames proved from JIT code:
 * a few per function); a function past it has none, so no frames. */
#define JIT_PROOF_ROWS_MAX (1u << 20)

/* Objects registered through the GDB JIT interface read per process, and
 * the largest one read (bytes); their images count against JIT_CODE_MAX. */
#define JIT_GDB_OBJECTS_MAX 4096
#define JIT_GDB_IMAGE_MAX (16u << 20)

/* A jitdump writer may buffer its records (V8 holds up to 2 MiB in stdio
 * until it exits), so a frame in code no record read yet names is named
 * when the capture is sealed, from the whole file read again from its
 * start (jitdump.h, jitdump__history): at most JIT_HISTORY_READ_MAX bytes,
 * JIT_LATE_FRAMES_MAX frames per process waiting, each lookup examining at
 * most JIT_HISTORY_SCAN_MAX loads. */
#define JIT_HISTORY_READ_MAX (256u << 20)
#define JIT_LATE_FRAMES_MAX (1u << 16)
#define JIT_HISTORY_SCAN_MAX 4096u

/* Replaced functions kept per process to name the samples taken before
 * their replacement (dropped once processing passed them); and how many
 * neighbours a commit examines to find what replaced a function, and how
 * many mappings over one range in one read's window it weighs (more: the
 * window is named by nobody). */
#define JIT_OLD_FUNCS_MAX (1u << 16)
#define JIT_OVERLAP_SCAN 64u
#define JIT_MAPPED_MAX 16u

/* A read that found nothing new is not made again for this much of the
 * samples' time (ns) unless the process maps something. */
#define JIT_QUIET_NS (20ull * 1000 * 1000)

/* Files being read are read on at drain rounds at most this often (ns of
 * wall time), whether or not a sample needs it: a function rewritten in
 * place between two such reads leaves that window unnamed (counted), and
 * each read costs the recorder ~0.1 ms. */
#define JIT_PROMPT_NS (100ull * 1000 * 1000)

/* A map whose file was made more than this before its process began (ns)
 * was written by an earlier process with the same pid.  The slack covers
 * the start time's clock-tick resolution (/proc/PID/stat field 22). */
#define JIT_STALE_SLACK_NS (20ull * 1000 * 1000)

#endif
