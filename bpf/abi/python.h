/* SPDX-License-Identifier: MIT */
/*
 * CPython walking: the per-process layout userspace gives the sampler, the
 * thread-state map's values, and the frames the walk appends to a sample
 * (struct ms_sample.py_len entries after the stack copy, innermost first).
 *
 * Offsets come from userspace/runtimes/py_layout.c: per-minor-version tables
 * for 3.10-3.12 (checked against the builds' DWARF in tests), and the
 * interpreter's own _Py_DebugOffsets (validated) from 3.13 on.  A field the
 * version lacks is MS_PY_NO_FIELD.  Fixed width only; pinned by asserts.
 */
#ifndef MS_ABI_PYTHON_H
#define MS_ABI_PYTHON_H

#ifndef __BPF__
#include <linux/types.h>
#endif

#include "records.h"

#define MS_PY_NO_FIELD 0xffff

/* ms_sample.py_status: how the walk of this sample went. */
#define MS_PY_NONE 0	      /* not a CPython process (or --python off): no walk */
#define MS_PY_OK 1	      /* walked to the outermost frame */
#define MS_PY_NO_THREAD 2     /* no thread state names this thread: runs no Python (yet) */
#define MS_PY_AMBIGUOUS 3     /* several thread states name this thread: frames unknown */
#define MS_PY_SEARCH_BOUND 4  /* the thread-state search hit its bound: frames unknown */
#define MS_PY_READ_FAULT 5    /* a read of interpreter memory failed mid-walk */
#define MS_PY_DEPTH 6	      /* more than MS_PY_MAX_FRAMES frames: outermost ones cut */
#define MS_PY_NO_NAMESPACE 7  /* the thread's id in the process's pid namespace is unknown */
#define MS_PY_STATUS_COUNT 8

/* ms_py_layout.frame_kind */
#define MS_PY_FRAMES_OBJECTS 1 /* 3.10: PyFrameObject chain, f_lasti is an int (code units) */
#define MS_PY_FRAMES_INTERP 2  /* 3.11+: _PyInterpreterFrame chain, instruction pointer */

/* ms_py_layout.flags */
#define MS_PY_L_EVERY_FRAME_ENTRY (1u << 0) /* 3.10: one eval activation per frame */
#define MS_PY_L_TID_IS_PTHREAD (1u << 1)    /* no native_thread_id: match thread_id with the
					       thread's FS base (pthread_self on x86-64 glibc) */

/*
 * One CPython process, in the "py_procs" map (tgid -> layout).  Offsets are
 * bytes into the named CPython structure.
 */
struct ms_py_layout {
	__u32 version_hex; /* PY_VERSION_HEX, e.g. 0x030b07f0 */
	__u32 flags;	   /* MS_PY_L_* */
	__u64 runtime;	   /* address of _PyRuntime in the process */
	__u64 pidns_dev;   /* the process's pid namespace (stat of /proc/PID/ns/pid) */
	__u64 pidns_ino;
	__u16 rt_interp_head;	  /* _PyRuntimeState.interpreters.head */
	__u16 interp_next;	  /* PyInterpreterState.next */
	__u16 interp_threads_head; /* PyInterpreterState.threads.head (3.10: tstate_head) */
	__u16 ts_next;		  /* PyThreadState.next */
	__u16 ts_native_tid;	  /* PyThreadState.native_thread_id (3.11+), or NO_FIELD */
	__u16 ts_thread_id;	  /* PyThreadState.thread_id (pthread_t) */
	__u16 ts_frame;		  /* 3.10 frame, 3.11/3.12 cframe, 3.13 current_frame */
	__u16 cframe_frame;	  /* _PyCFrame.current_frame, or NO_FIELD (ts_frame is the frame) */
	__u16 fr_previous;	  /* f_back / previous */
	__u16 fr_code;		  /* f_code / f_executable */
	__u16 fr_instr;		  /* f_lasti (int) / prev_instr / instr_ptr */
	__u16 fr_is_entry;	  /* 3.11 is_entry (u8), or NO_FIELD */
	__u16 fr_owner;		  /* owner (u8), or NO_FIELD */
	__u16 fr_read;		  /* bytes of a frame the walker reads (covers every field) */
	__u16 code_firstlineno;	  /* co_firstlineno (int) */
	__u16 code_name;	  /* co_name (PyObject *) */
	__u16 code_adaptive;	  /* co_code_adaptive (3.11+), or NO_FIELD */
	__u8 frame_kind;	  /* MS_PY_FRAMES_* */
	__u8 cstack_owner;	  /* owner value of C-stack shim frames (3.12+), or 0xff */
	__u32 reserved;
};
_Static_assert(sizeof(struct ms_py_layout) == 72, "ms_py_layout size");

/*
 * The "py_threads" map: kernel tid -> the thread's state as last refreshed.
 * exits is the "py_exits" count of that tid (threads of CPython processes
 * with that id that exited, counted by the sampler's exit handler) that
 * userspace read before it read the interpreter's thread list: an entry
 * whose count is no longer current belongs to a thread that exited since,
 * and is not used for a thread that reuses the id.
 */
struct ms_py_thread {
	__u64 tstate; /* PyThreadState address */
	__u64 exits;
	__u32 tgid;
	__u32 ns_tid; /* the thread's id in its own pid namespace */
};
_Static_assert(sizeof(struct ms_py_thread) == 24, "ms_py_thread size");

/* ms_py_frame.flags */
#define MS_PY_F_ENTRY (1u << 0) /* the outermost frame one interpreter activation runs */

/*
 * One interpreted frame: its code object, the instruction offset in bytes
 * from the start of its bytecode (-1 as 0xffffffff: before the first), and a
 * fingerprint that userspace checks before naming the code object, so a
 * freed and reused object is not misnamed: ms_py__fingerprint() of
 * co_firstlineno, the co_name pointer and that name's cached str hash (an
 * object of the same size often reuses both addresses; the hash tells
 * "gen_0" from "gen_1").
 */
/* PyASCIIObject.hash (Include/cpython/unicodeobject.h, 3.10-3.13): after
 * ob_refcnt, ob_type and length.  co_name is interned, so it is computed. */
#define MS_PY_UNICODE_HASH_OFF 24

static inline __u32 ms_py__fingerprint(__s32 firstlineno, __u64 name, __u64 name_hash)
{
	return (__u32)firstlineno ^ (__u32)name ^ (__u32)name_hash ^ (__u32)(name_hash >> 32);
}

struct ms_py_frame {
	__u64 code;
	__u32 instr;
	__u32 fingerprint;
	__u32 flags; /* MS_PY_F_* */
	__u32 reserved;
};
_Static_assert(sizeof(struct ms_py_frame) == MS_PY_FRAME_BYTES, "ms_py_frame size");

#endif /* MS_ABI_PYTHON_H */
