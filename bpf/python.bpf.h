/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPython frame walker, included by bpf/sampler.bpf.c (frames of a
 * sample) and bpf/offcpu.bpf.c (frames of a thread at switch-out; the maps
 * below are the sampler's, shared by bpf_map__reuse_fd).  For a process in
 * "py_procs" it finds the current thread's PyThreadState and appends one
 * struct ms_py_frame per interpreted frame (innermost first) to the record
 * under construction (bpf/abi/python.h).  The includer defines PY_OUT_LIMIT,
 * the largest byte offset of a frame in its output buffer (the buffer has
 * room for a frame there).
 *
 * Thread identity.  "py_threads" (kernel tid -> state, refreshed by
 * userspace about every 20 ms from the interpreter's thread list) is used
 * only when the entry is this very thread (same tgid, and no thread of that
 * id exited since userspace read "py_exits", so a reused tid is not taken
 * for its predecessor) and the state still names the
 * thread: native_thread_id equals the thread's id in the process's pid
 * namespace (bpf_get_ns_current_pid_tgid), or, before 3.11, thread_id equals
 * the thread's FS base (pthread_self() on x86-64 glibc).  Otherwise the
 * walker searches every interpreter's thread states for the one that names
 * the thread, at most PY_SEARCH_MAX of them: none, several, or a search past
 * the bound gives a status (MS_PY_*) and no frames, never another thread's.
 * A thread state proven through the maps is remembered per CPU (py_buf
 * threads) and used again without them while neither py_threads_gen (a
 * thread of a CPython process started or exited, after its map changes)
 * nor py_threads_written (userspace changed py_threads) has moved since:
 * the maps would give the same entry, and its state is checked to name the
 * thread at every walk all the same.
 *
 * Bounds: the frame loop runs under bpf_loop (Linux 5.17) for at most
 * 2 * MS_PY_MAX_FRAMES steps (shim frames take a step but no slot); every
 * read of the target is bpf_probe_read_user, which fails cleanly on a bad
 * address (MS_PY_READ_FAULT).
 *
 * Cost (issue 16): each read of the target costs a fixed price (the helper,
 * the user-access checks, a cold cache line) well above its bytes, so the
 * walk reads in blocks.  3.11+ frames lie one above the other in the
 * thread's data stack, each caller below its callee, so a caller found just
 * below its callee brings in the rest of its page below it too (up to
 * PY_WINDOW_BYTES, never past the page's start: a present page is present
 * whole, so the window fails only where the frame itself would), where its
 * own callers usually are (py__frame_at); a thread state's id and frame
 * fields come in one copy; a code object's first line and name come in one
 * copy; and a code object seen earlier in the same walk (recursion, a
 * function on the stack twice) is not read again.  bench/py_deep.py's 50
 * frames take 3 frame reads instead of 50, and 2 thread-state reads
 * instead of 3.
 */
#ifndef MS_PYTHON_BPF_H
#define MS_PYTHON_BPF_H

#include "bpf/abi/python.h"

#ifndef PY_OUT_LIMIT
#error "define PY_OUT_LIMIT (the largest frame offset in the walk's output) first"
#endif

#define PY_SEARCH_MAX 64     /* thread states looked at when the map cannot prove one */
#define PY_INTERP_MAX 4	     /* interpreters looked at */
#define PY_FRAME_READ_MAX 128 /* bytes of a frame's head the walker uses */
#define PY_PAGE_BYTES 4096    /* a window never starts below its frame's page */
#define PY_WINDOW_BYTES 4096  /* bytes of a thread's data stack read at once (3.11+) */
#define PY_TS_READ_MAX 256    /* bytes of a thread state read at once (its id and frame) */
#define PY_CODE_READ_MAX 128  /* bytes of a code object read at once */
#define PY_CODE_CACHE 16      /* code objects remembered within one walk (power of 2) */
#define PY_THREAD_SLOTS 8     /* threads remembered per CPU across walks (power of 2) */

/* CPython processes: tgid -> layout (written by userspace/runtimes/py_procs.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct ms_py_layout);
} py_procs SEC(".maps");

/* Bumped when a thread of a process in py_procs starts or exits, so the
 * tracker looks at thread counts only after one did. */
__u64 py_threads_gen = 0;

/*
 * Changed by userspace (the CPython tracker, through the mmap'd .bss) after
 * each change it makes to py_threads; 0: no tracker does, so nothing is
 * remembered across walks (see py__thread_state).
 */
__u64 py_threads_written = 0;

/* Kernel tid -> its PyThreadState as of the last refresh. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ms_py_thread);
} py_threads SEC(".maps");

/* Kernel tid -> threads of CPython processes with that id that exited (LRU:
 * a lost count reads as 0, which only makes a stale entry fail its check). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} py_exits SEC(".maps");

/*
 * Per-CPU walk scratch.  win holds win_len bytes of the target from
 * win_base: a frame's head and (3.11+) what lies below it in its page; ts
 * a thread state's id and frame fields; code a code object's fields the
 * walk uses, read in one copy.  The cache maps a code object's
 * address to its fingerprint for the rest of one walk only: every frame of
 * one walk runs at once, so its code objects are all alive and an address
 * names one object throughout (a cache kept across walks could hand a
 * freed object's fingerprint to a new one at the same address; the
 * fingerprint exists to catch exactly that).
 */
struct py_buf {
	__u8 win[PY_WINDOW_BYTES + 8]; /* 8 of slack: reads bounded by one compare */
	__u8 code[PY_CODE_READ_MAX];
	__u8 ts[PY_TS_READ_MAX];
	__u64 cache_code[PY_CODE_CACHE];
	__u32 cache_fp[PY_CODE_CACHE];
	struct py_thread_slot {
		__u32 tid, tgid;
		__u64 threads_gen, written; /* py_threads_gen, py_threads_written then */
		__u64 tstate;
	} threads[PY_THREAD_SLOTS];
	/* Window state: here rather than in struct py_walk (the stack), where
	 * the verifier would track each value and multiply the states of the
	 * bpf_loop callback it explores. */
	__u64 win_base; /* target address of win[0] */
	__u64 win_len;	/* valid bytes in win (0: none) */
	__u64 callee;	/* the frame read last (0: none yet) */
	/* Frames written: here too, or each count was a callback state of its
	 * own (an offset, so precise), the body verified once per frame. */
	__u32 n;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_buf);
} py_buf SEC(".maps");

/* Walk state shared with the bpf_loop callback. */
struct py_walk {
	const struct ms_py_layout *l;
	struct py_buf *buf;
	__u8 *out;   /* the sample scratch (map value) */
	__u32 off;   /* byte offset of the first ms_py_frame in out */
	__u64 frame; /* next frame to read, 0 at the end */
	__u32 code_lo;	/* code object bytes [code_lo, code_lo + code_len) are read */
	__u32 code_len;
	__u32 status;
};

static __always_inline __u64 py__read_ptr(__u64 addr, __u16 off, bool *fault)
{
	__u64 v = 0;

	if (off == MS_PY_NO_FIELD || bpf_probe_read_user(&v, sizeof(v), (const void *)(addr + off)))
		*fault = true;
	return v;
}

static __always_inline __u64 py__win64(const struct py_buf *b, __u32 off)
{
	if (off > PY_WINDOW_BYTES) /* not "> 2^n - 1": clang would test it with a mask */
		return 0;
	return *(const __u64 *)&b->win[off];
}

static __always_inline __u32 py__win32(const struct py_buf *b, __u32 off)
{
	if (off > PY_WINDOW_BYTES)
		return 0;
	return *(const __u32 *)&b->win[off];
}

static __always_inline __u32 py__win8(const struct py_buf *b, __u32 off)
{
	if (off > PY_WINDOW_BYTES)
		return 0;
	return b->win[off];
}

/*
 * Make the head of frame w->frame (rd bytes) readable in b->win; its offset
 * there, or -1 if it cannot be read.  A frame outside the window is read
 * alone, unless (3.11+) it lies at most PY_WINDOW_BYTES below the frame
 * read last, its callee: then both are in the thread's data stack, where
 * its own callers lie below it too, and it brings in the window ending at
 * its head, from max(its page's start, head's end - PY_WINDOW_BYTES).  A
 * frame elsewhere (a generator's, 3.12's shim on the C stack, 3.10's frame
 * objects) costs no more than its head.
 */
static __always_inline long py__frame_at(struct py_walk *w, struct py_buf *b, __u32 rd)
{
	__u64 f = w->frame, hi = f + rd, lo = f, len;

	if (f >= b->win_base && hi <= b->win_base + b->win_len)
		return (long)(f - b->win_base);
	if (w->l->frame_kind == MS_PY_FRAMES_INTERP && f < b->callee &&
	    b->callee - f <= PY_WINDOW_BYTES) {
		lo = f & ~(__u64)(PY_PAGE_BYTES - 1);
		if (hi - lo > PY_WINDOW_BYTES)
			lo = hi - PY_WINDOW_BYTES;
	}
	len = hi - lo;
	if (len > PY_WINDOW_BYTES) /* cannot happen; bounds the verifier */
		return -1;
	b->win_len = 0;
	if (bpf_probe_read_user(b->win, len, (const void *)lo)) {
		/* Cannot happen where the head alone is readable (same page);
		 * cheaper to retry than to prove: the head alone. */
		lo = f;
		len = rd;
		if (bpf_probe_read_user(b->win, len, (const void *)lo))
			return -1;
	}
	b->win_base = lo;
	b->win_len = len;
	return (long)(f - lo);
}

/* The fingerprint of code object code (ms_py__fingerprint): from this
 * walk's cache, or read (its fields in one copy, then its name's hash) and
 * cached.  0 and *fault set when a read fails. */
static __always_inline __u32 py__code_fp(struct py_walk *w, struct py_buf *b, __u64 code,
					 bool *fault)
{
	const struct ms_py_layout *l = w->l;
	__u32 slot = (__u32)(code >> 4) & (PY_CODE_CACHE - 1), len = w->code_len, o;
	__u64 name = 0, name_hash = 0;
	__s32 fl = 0;
	__u32 fp;

	if (b->cache_code[slot] == code)
		return b->cache_fp[slot];
	if (len > PY_CODE_READ_MAX)
		len = PY_CODE_READ_MAX;
	if (!len || bpf_probe_read_user(b->code, len, (const void *)(code + w->code_lo))) {
		*fault = true;
		return 0;
	}
	o = l->code_firstlineno - w->code_lo;
	if (o <= PY_CODE_READ_MAX - 4)
		fl = *(const __s32 *)&b->code[o];
	o = l->code_name - w->code_lo;
	if (o <= PY_CODE_READ_MAX - 8)
		name = *(const __u64 *)&b->code[o];
	if (bpf_probe_read_user(&name_hash, sizeof(name_hash),
				(const void *)(name + MS_PY_UNICODE_HASH_OFF))) {
		*fault = true;
		return 0;
	}
	fp = ms_py__fingerprint(fl, name, name_hash);
	b->cache_code[slot] = code;
	b->cache_fp[slot] = fp;
	return fp;
}

/* One frame: read it, emit it (or note a shim), move to its caller. */
static long py__step(__u32 i, void *vctx)
{
	struct py_walk *w = vctx;
	const struct ms_py_layout *l = w->l;
	struct py_buf *b = w->buf;
	struct ms_py_frame *f;
	__u32 rd = l->fr_read, o, owner = 0, flags = 0, instr = 0xffffffff, fp;
	__u64 code, ptr, base;
	bool fault = false;
	long at;

	if (!w->frame) {
		w->status = MS_PY_OK;
		return 1;
	}
	if (rd > PY_FRAME_READ_MAX)
		rd = PY_FRAME_READ_MAX;
	at = py__frame_at(w, b, rd);
	if (at < 0 || at > PY_WINDOW_BYTES) {
		w->status = MS_PY_READ_FAULT;
		return 1;
	}
	b->callee = w->frame;
	code = py__win64(b, at + l->fr_code);
	if (l->fr_owner != MS_PY_NO_FIELD)
		owner = py__win8(b, at + l->fr_owner);
	w->frame = py__win64(b, at + l->fr_previous);
	if (l->cstack_owner != 0xff && owner == l->cstack_owner) {
		/* A shim frame _PyEval_EvalFrameDefault pushes (3.12+): the frame
		 * inside it is the first its activation runs. */
		if (b->n > 0) {
			o = w->off + (b->n - 1) * MS_PY_FRAME_BYTES;
			if (o <= PY_OUT_LIMIT) {
				f = (struct ms_py_frame *)(w->out + o);
				f->flags |= MS_PY_F_ENTRY;
			}
		}
		return 0;
	}
	if (b->n >= MS_PY_MAX_FRAMES) {
		w->status = MS_PY_DEPTH;
		return 1;
	}
	if (l->frame_kind == MS_PY_FRAMES_OBJECTS) {
		int lasti = (int)py__win32(b, at + l->fr_instr);

		if (lasti >= 0)
			instr = (__u32)lasti * 2;
	} else {
		ptr = py__win64(b, at + l->fr_instr);
		base = code + l->code_adaptive;
		if (ptr >= base && ptr - base < (1u << 30))
			instr = (__u32)(ptr - base);
	}
	if (l->flags & MS_PY_L_EVERY_FRAME_ENTRY)
		flags |= MS_PY_F_ENTRY;
	else if (l->fr_is_entry != MS_PY_NO_FIELD && py__win8(b, at + l->fr_is_entry))
		flags |= MS_PY_F_ENTRY;
	fp = py__code_fp(w, b, code, &fault);
	if (fault) {
		w->status = MS_PY_READ_FAULT;
		return 1;
	}
	o = w->off + b->n * MS_PY_FRAME_BYTES;
	if (o > PY_OUT_LIMIT) /* cannot happen; bounds the verifier */
		return 1;
	f = (struct ms_py_frame *)(w->out + o);
	f->code = code;
	f->instr = instr;
	f->fingerprint = fp;
	f->flags = flags;
	f->reserved = 0;
	b->n++;
	return 0;
}

/* Does the thread state at ts name this thread? */
static __always_inline bool py__names(const struct ms_py_layout *l, __u64 ts, __u64 id, bool *fault)
{
	__u16 field = (l->flags & MS_PY_L_TID_IS_PTHREAD) ? l->ts_thread_id : l->ts_native_tid;
	__u64 v = py__read_ptr(ts, field, fault);

	if (!(l->flags & MS_PY_L_TID_IS_PTHREAD))
		v &= 0xffffffffull; /* native_thread_id is an unsigned long holding a pid_t */
	return !*fault && v == id;
}

/*
 * Does the thread state at ts name this thread (id)?  If so, *frame is its
 * frame field (ts_frame).  Both fields in one copy when they lie within
 * PY_TS_READ_MAX bytes (3.10-3.13 do), else one read each.
 */
static __always_inline bool py__names_frame(const struct ms_py_layout *l, struct py_buf *b,
					    __u64 ts, __u64 id, __u64 *frame, bool *fault)
{
	__u64 field = (l->flags & MS_PY_L_TID_IS_PTHREAD) ? l->ts_thread_id : l->ts_native_tid;
	__u64 fr = l->ts_frame, lo = field < fr ? field : fr, len, o, v;

	len = (field > fr ? field : fr) + 8 - lo;
	if (field == MS_PY_NO_FIELD || fr == MS_PY_NO_FIELD || len > PY_TS_READ_MAX) {
		if (!py__names(l, ts, id, fault))
			return false;
		*frame = py__read_ptr(ts, l->ts_frame, fault);
		return !*fault;
	}
	if (bpf_probe_read_user(b->ts, len, (const void *)(ts + lo))) {
		*fault = true;
		return false;
	}
	o = field - lo;
	if (o > PY_TS_READ_MAX - 8) /* cannot happen; bounds the verifier */
		return false;
	v = *(const __u64 *)&b->ts[o];
	if (!(l->flags & MS_PY_L_TID_IS_PTHREAD))
		v &= 0xffffffffull; /* as in py__names */
	if (v != id)
		return false;
	o = fr - lo;
	if (o > PY_TS_READ_MAX - 8) /* cannot happen; bounds the verifier */
		return false;
	*frame = *(const __u64 *)&b->ts[o];
	return true;
}

/* Search state shared with the bpf_loop callback. */
struct py_search {
	const struct ms_py_layout *l;
	__u64 id;
	__u64 interp;	/* interpreter being searched */
	__u64 ts;	/* next thread state of interp, 0: move to the next interpreter */
	__u64 found;
	__u32 matches;
	__u32 interps;
	__u32 status;	/* MS_PY_OK once the lists ended within the bound */
};

/* One step of the search: look at one thread state or move to the next interpreter. */
static long py__search_step(__u32 i, void *vctx)
{
	struct py_search *s = vctx;
	const struct ms_py_layout *l = s->l;
	bool fault = false;

	if (!s->ts) {
		if (s->interps++)
			s->interp = py__read_ptr(s->interp, l->interp_next, &fault);
		if (fault) {
			s->status = MS_PY_READ_FAULT;
			return 1;
		}
		if (!s->interp) {
			s->status = MS_PY_OK;
			return 1;
		}
		if (s->interps > PY_INTERP_MAX)
			return 1; /* status stays MS_PY_SEARCH_BOUND */
		s->ts = py__read_ptr(s->interp, l->interp_threads_head, &fault);
		if (fault) {
			s->status = MS_PY_READ_FAULT;
			return 1;
		}
		return 0;
	}
	if (py__names(l, s->ts, s->id, &fault)) {
		s->matches++;
		s->found = s->ts;
	}
	fault = false;
	s->ts = py__read_ptr(s->ts, l->ts_next, &fault);
	if (fault) {
		s->status = MS_PY_READ_FAULT;
		return 1;
	}
	return 0;
}

/*
 * The thread state that names this thread, or 0 with *status set; *frame is
 * its frame field (ts_frame).  id is the thread's id in the process's pid
 * namespace, or its FS base before 3.11.
 */
static __always_inline __u64 py__thread_state(const struct ms_py_layout *l, struct py_buf *b,
					      __u32 tgid, __u32 tid, __u64 id, __u64 *frame,
					      __u32 *status)
{
	/* Read before the maps: a change after this makes the slot stale. */
	__u64 gen = py_threads_gen, written = py_threads_written;
	struct py_thread_slot *slot = &b->threads[tid & (PY_THREAD_SLOTS - 1)];
	const struct ms_py_thread *t;
	const __u64 *exits;
	struct py_search s = {};
	bool fault = false;

	if (written && slot->tid == tid && slot->tgid == tgid && slot->threads_gen == gen &&
	    slot->written == written) {
		if (py__names_frame(l, b, slot->tstate, id, frame, &fault))
			return slot->tstate;
		fault = false;
	}
	t = bpf_map_lookup_elem(&py_threads, &tid);
	exits = bpf_map_lookup_elem(&py_exits, &tid);
	if (t && t->tgid == tgid && t->exits == (exits ? *exits : 0)) {
		if (py__names_frame(l, b, t->tstate, id, frame, &fault)) {
			slot->tid = tid;
			slot->tgid = tgid;
			slot->threads_gen = gen;
			slot->written = written;
			slot->tstate = t->tstate;
			return t->tstate;
		}
	}
	fault = false;
	s.l = l;
	s.id = id;
	s.interp = py__read_ptr(l->runtime, l->rt_interp_head, &fault);
	if (fault) {
		*status = MS_PY_READ_FAULT;
		return 0;
	}
	s.interps = 1;
	s.ts = s.interp ? py__read_ptr(s.interp, l->interp_threads_head, &fault) : 0;
	s.status = MS_PY_SEARCH_BOUND;
	if (!s.interp)
		s.status = MS_PY_OK;
	else if (fault)
		s.status = MS_PY_READ_FAULT;
	else
		bpf_loop(PY_SEARCH_MAX + PY_INTERP_MAX, py__search_step, &s, 0);
	if (s.status != MS_PY_OK) {
		*status = s.status;
		return 0;
	}
	if (s.matches != 1) {
		*status = s.matches ? MS_PY_AMBIGUOUS : MS_PY_NO_THREAD;
		return 0;
	}
	*frame = py__read_ptr(s.found, l->ts_frame, &fault);
	if (fault) {
		*status = MS_PY_READ_FAULT;
		return 0;
	}
	return s.found;
}

/*
 * Walk the CPython frames of the current thread (task) into out + off.
 * Returns the frames written (<= MS_PY_MAX_FRAMES) in the low 16 bits and
 * the walk's status (MS_PY_*) in bits 16-31 (0: not a CPython process, no
 * walk).  out is the record under construction (a map value); frame i goes
 * to out + off + i * MS_PY_FRAME_BYTES, and every such offset up to
 * MS_PY_MAX_FRAMES frames is <= PY_OUT_LIMIT.
 */
static __noinline __u32 py__walk(__u8 *out, __u32 off, struct task_struct *task)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid, st = MS_PY_NONE, *status = &st;
	const struct ms_py_layout *l = bpf_map_lookup_elem(&py_procs, &tgid);
	struct bpf_pidns_info ns = {};
	struct py_walk w = {};
	__u32 zero = 0, n;
	bool fault = false;
	__u64 ts, id, fp;

	if (!l)
		return 0;
	if (l->flags & MS_PY_L_TID_IS_PTHREAD) {
		id = BPF_CORE_READ(task, thread.fsbase);
	} else {
		if (bpf_get_ns_current_pid_tgid(l->pidns_dev, l->pidns_ino, &ns, sizeof(ns)))
			return MS_PY_NO_NAMESPACE << 16;
		id = ns.pid;
	}
	w.buf = bpf_map_lookup_elem(&py_buf, &zero);
	if (!w.buf)
		return 0;
	ts = py__thread_state(l, w.buf, tgid, tid, id, &fp, status);
	if (!ts)
		return st << 16;
	if (fp && l->cframe_frame != MS_PY_NO_FIELD)
		fp = py__read_ptr(fp, l->cframe_frame, &fault);
	if (fault)
		return MS_PY_READ_FAULT << 16;
	w.l = l;
	w.out = out;
	w.off = off;
	w.frame = fp;
	w.status = MS_PY_DEPTH;
	/* the code object's fields in one copy: [code_lo, code_lo + code_len) */
	w.code_lo = l->code_firstlineno < l->code_name ? l->code_firstlineno : l->code_name;
	w.code_len = (l->code_firstlineno + 4 > l->code_name + 8 ? l->code_firstlineno + 4
								  : l->code_name + 8) -
		     w.code_lo;
	if (w.code_len > PY_CODE_READ_MAX)
		return MS_PY_READ_FAULT << 16; /* no layout has them that far apart */
	for (int i = 0; i < PY_CODE_CACHE; i++)
		w.buf->cache_code[i] = 0;
	w.buf->win_base = 0;
	w.buf->win_len = 0; /* the target ran since the last walk */
	w.buf->callee = 0;
	w.buf->n = 0;
	bpf_loop(2 * MS_PY_MAX_FRAMES, py__step, &w, 0);
	n = w.buf->n;
	if (n > MS_PY_MAX_FRAMES)
		n = MS_PY_MAX_FRAMES;
	return (w.status << 16) | n;
}

/* A thread of a CPython process exits: its py_threads entry can no longer
 * name it; count the exit so entries written before it fail their check. */
/* A thread started in process tgid (sched_process_fork, same tgid). */
static __always_inline void py__thread_start(__u32 tgid)
{
	if (bpf_map_lookup_elem(&py_procs, &tgid))
		__sync_fetch_and_add(&py_threads_gen, 1);
}

static __always_inline void py__thread_exit(__u32 tgid, __u32 tid)
{
	__u64 one = 1, *n;

	if (!bpf_map_lookup_elem(&py_procs, &tgid))
		return;
	bpf_map_delete_elem(&py_threads, &tid);
	n = bpf_map_lookup_elem(&py_exits, &tid);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&py_exits, &tid, &one, BPF_NOEXIST);
	/* after the maps: a walk that read the old value and then the old
	 * entries remembers nothing past this (py__thread_state) */
	__sync_fetch_and_add(&py_threads_gen, 1);
}

#endif /* MS_PYTHON_BPF_H */
