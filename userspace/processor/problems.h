/* SPDX-License-Identifier: MIT */
/*
 * Problems the processor counts instead of crashing or dropping silently.
 * One X-macro table makes the enum and the counter names stored in the
 * capture ("processor.<name>").
 */
#ifndef MS_PROCESSOR_PROBLEMS_H
#define MS_PROCESSOR_PROBLEMS_H

#define MS_PROBLEMS(X)                                                                             \
	X(BAD_CHUNK, "bad_chunk", "stream chunk of unknown kind or bad length")                    \
	X(BAD_RECORD_SIZE, "bad_record_size", "record size field disagrees with its chunk")         \
	X(UNKNOWN_BPF_RECORD, "unknown_bpf_record", "BPF record of unknown type")                  \
	X(BAD_SAMPLE, "bad_sample", "sample with inconsistent stack lengths or arch")              \
	X(BAD_PERF_RECORD, "bad_perf_record", "perf record too short for its type")                \
	X(UNKNOWN_PERF_RECORD, "unknown_perf_record", "perf record of an unhandled type")          \
	X(LATE_RECORD, "late_record", "record arrived after the watermark passed its time")        \
	X(SAMPLE_UNKNOWN_PROCESS, "sample_unknown_process", "sample of a process never announced") \
	X(CGROUP_UNRESOLVED, "cgroup_unresolved", "cgroup id not found in the cgroup v2 tree")     \
	X(PINS_FULL, "pins_full", "container file not kept open: the pinned-file limit was reached") \
	X(FRAME_NO_MAPPING, "frame_no_mapping", "user address outside every known mapping")        \
	X(FRAME_NO_SYMBOL, "frame_no_symbol", "address no symbol covers")                          \
	X(MODULE_UNREADABLE, "module_unreadable", "module whose symbols could not be read")        \
	X(MODULE_NO_CFI, "module_no_cfi", "module whose call-frame information could not be read") \
	X(BAD_META, "bad_meta", "metadata or counter chunk that is not key=value")                  \
	X(BAD_OFFCPU, "bad_offcpu", "off-CPU interval with inconsistent lengths, times or codes") \
	X(PY_CODE_UNREADABLE, "py_code_unreadable",                                                \
	  "interpreted frame whose code object could not be read or was freed since")              \
	X(PY_UNPLACED, "py_unplaced",                                                              \
	  "interpreted segments and evaluation-loop activations differ in number")                 \
	X(PY_UNKNOWN, "py_unknown", "sample in the evaluation loop whose Python frames are unknown") \
	X(MODULE_DEBUG_PARTIAL, "module_debug_partial",                                            \
	  "module whose lines or inline frames could not be read (meta symbols.problem.N)")   \
	X(FP_LEFT_CODE, "fp_left_code",                                                            \
	  "frame-pointer chain cut where it left mapped code (one per stack)")                      \
	X(HELD_BUDGET_FULL, "held_budget_full",                                                    \
	  "sample dropped whole: processing fell behind and held records filled their budget")     \
	X(KUNWIND_MISMATCH, "kunwind_mismatch",                                                    \
	  "--verify-unwind: the in-kernel unwind and the copy path's differ")                      \
	X(BAD_PROBE, "bad_probe",                                                                  \
	  "probe record or site with a bad size, kind, site or name, or of a site never named")

enum ms_problem {
#define MS_PROBLEM_ENUM(id, name, text) MS_PROBLEM_##id,
	MS_PROBLEMS(MS_PROBLEM_ENUM)
#undef MS_PROBLEM_ENUM
	MS_PROBLEM_COUNT
};

#endif
