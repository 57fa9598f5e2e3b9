// SPDX-License-Identifier: MIT
/*
 * Interpreted frames in samples: the CPython frames the BPF walker appended
 * to a sample (struct ms_py_frame, innermost first) are named from the live
 * process (userspace/runtimes/py_code.c) and spliced into the native stack.
 *
 * Splice rule (root first): the walker marks the outermost frame each
 * activation of _PyEval_EvalFrameDefault runs (MS_PY_F_ENTRY), which cuts
 * the interpreted frames into segments; segment j (outermost first) goes
 * just before the j-th activation (outermost first), as a debugger places
 * them.  Where segments and activations differ in number, or the walk did
 * not reach the outermost frame, the interpreted frames follow the native
 * ones and the stack ends in "[python frames unplaced]".  A sample in the
 * evaluation loop whose walk found no frames ends in "[python frames
 * unknown]" (never another thread's frames); a thread with no activation
 * runs no Python and gets no mark.
 */
#include <string.h>

#include "../runtimes/py_roles.h"
#include "internal.h"

enum { PY_MARK_UNPLACED, PY_MARK_UNKNOWN, PY_MARK_UNREADABLE };

static const char *const py_mark_names[] = {
	[PY_MARK_UNPLACED] = "[python frames unplaced]",
	[PY_MARK_UNKNOWN] = "[python frames unknown]",
	[PY_MARK_UNREADABLE] = "[python code unreadable]",
};

uint32_t python__native_flags(const char *name)
{
	return py_role__of(name) != PY_ROLE_NONE ? CAPTURE_FRAME_F_INTERPRETER : 0;
}

bool python__module_has_eval(const struct sym_module *m)
{
	size_t n = sym_module__symbol_count(m);

	for (size_t i = 0; i < n; i++)
		if (py_role__of(sym_module__symbol(m, i, NULL, NULL)) == PY_ROLE_EVAL)
			return true;
	return false;
}

static uint32_t py_mark(struct processor *p, int which)
{
	if (p->py_marks[which] == CAPTURE_NONE) {
		struct capture_frame row = {
			.module = CAPTURE_NONE,
			.flags = CAPTURE_FRAME_F_TRUNCATION |
				 (which == PY_MARK_UNREADABLE ? CAPTURE_FRAME_F_INTERPRETED : 0),
			.function = capture_builder__string(p->b, py_mark_names[which]),
		};
		p->py_marks[which] = capture_builder__add_frame(p->b, &row);
	}
	return p->py_marks[which];
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x | 1; /* never 0, the map's empty key */
}

/* The frame row of one interpreted frame of process pid. */
static uint32_t py_frame_row(struct processor *p, uint32_t pid, const struct ms_py_frame *f)
{
	const struct py_layout *l = py_tracker__layout(p->py, (pid_t)pid);
	const struct py_code *code;
	uint64_t key, *cached;
	int line;

	if (!l || (!p->py_namer && !(p->py_namer = py_namer__new())))
		code = NULL;
	else
		code = py_namer__code(p->py_namer, (pid_t)pid, l, f->code, f->fingerprint);
	if (!code) {
		processor__problem(p, MS_PROBLEM_PY_CODE_UNREADABLE);
		return py_mark(p, PY_MARK_UNREADABLE);
	}
	line = py_lines__lookup(code->linetable, code->nlinetable, code->lines, code->firstlineno,
				f->instr);
	if (line < 0)
		line = 0;
	key = mix((uint64_t)(uintptr_t)code * 31 + (uint32_t)line);
	cached = u64map__get(&p->py_frames, key);
	if (cached)
		return (uint32_t)*cached;
	struct capture_frame row = {
		.module = CAPTURE_NONE,
		.flags = CAPTURE_FRAME_F_INTERPRETED,
		.function = capture_builder__string(p->b, code->qualname),
		.file = capture_builder__string(p->b, code->filename),
		.line = (uint32_t)line,
		.first_line = code->firstlineno > 0 ? (uint32_t)code->firstlineno : 0,
	};
	uint32_t id = capture_builder__add_frame(p->b, &row);

	if (id != CAPTURE_NONE && u64map__put(&p->py_frames, key, id))
		return CAPTURE_NONE;
	return id;
}

static bool is_eval(struct processor *p, uint32_t row)
{
	uint64_t *role = u64map__get(&p->frame_role, (uint64_t)row + 1);

	return role && *role == PY_ROLE_EVAL;
}

/* out[n++] = the row of interpreted frame f, or -ENOMEM from the caller. */
#define PUSH_PY(f)                                                                                 \
	do {                                                                                       \
		uint32_t id_ = py_frame_row(p, s->pid, (f));                                       \
		if (id_ == CAPTURE_NONE)                                                           \
			return -ENOMEM;                                                            \
		out[n++] = id_;                                                                    \
	} while (0)

bool python__wants_splice(struct processor *p, uint32_t pid, uint32_t status)
{
	/* A stack of a process whose layout the tracker knows, walked before
	 * the layout was known (status NONE), still gets "[python frames
	 * unknown]" where its native stack runs the evaluation loop.  With no
	 * layout for the process (an unsupported version, refused layout,
	 * --python off) nothing was to be walked: its native stack is the
	 * whole story and gets no mark. */
	return status != MS_PY_NONE || (p->py && py_tracker__layout(p->py, (pid_t)pid));
}

int python__splice(struct processor *p, const struct py_walk_parts *s, uint32_t *user,
		   uint32_t nuser, uint32_t *out)
{
	const struct ms_py_frame *py = s->py;
	uint32_t m = s->npy, nact = 0, nseg = 0, n = 0, seg_end[MS_PY_MAX_FRAMES + 1];
	int i;

	p->py_tail = CAPTURE_NONE;
	for (uint32_t k = 0; k < nuser; k++)
		nact += is_eval(p, user[k]);
	/* Segments outermost first: seg_end[j] is the py index (innermost-first
	 * numbering) one below segment j's innermost frame. */
	for (i = (int)m - 1; i >= 0; i--) {
		if (i == (int)m - 1 || (py[i].flags & MS_PY_F_ENTRY)) {
			if (nseg)
				seg_end[nseg - 1] = (uint32_t)i;
			nseg++;
		}
	}
	if (nseg)
		seg_end[nseg - 1] = UINT32_MAX; /* the last segment runs to index 0 */

	if (!m) {
		memcpy(out, user, nuser * sizeof(*out));
		if (nact) {
			processor__problem(p, MS_PROBLEM_PY_UNKNOWN);
			p->py_tail = py_mark(p, s->status == MS_PY_OK ? PY_MARK_UNPLACED
									 : PY_MARK_UNKNOWN);
			if (p->py_tail == CAPTURE_NONE)
				return -ENOMEM;
		}
		return (int)nuser;
	}
	if (s->status == MS_PY_OK && nseg == nact) {
		uint32_t j = 0;
		int next = (int)m - 1;

		for (uint32_t k = 0; k < nuser; k++) {
			if (is_eval(p, user[k]) && j < nseg) {
				int stop = seg_end[j] == UINT32_MAX ? -1 : (int)seg_end[j];

				for (; next > stop; next--)
					PUSH_PY(&py[next]);
				j++;
			}
			out[n++] = user[k];
		}
		return (int)n;
	}
	processor__problem(p, MS_PROBLEM_PY_UNPLACED);
	memcpy(out, user, nuser * sizeof(*out));
	n = nuser;
	for (i = (int)m - 1; i >= 0; i--)
		PUSH_PY(&py[i]);
	p->py_tail = py_mark(p, PY_MARK_UNPLACED);
	return p->py_tail == CAPTURE_NONE ? -ENOMEM : (int)n;
}
#undef PUSH_PY

/*
 * A BPF record just drained (untrusted; a sample or an off-CPU interval,
 * its parts located by ms_sample__parts or ms_offcpu__parts, which refuse a
 * misaligned or malformed one): read the code objects of its interpreted frames into
 * the namer's cache now, while the program most likely still runs, rather
 * than when the ordered record is processed a watermark later.
 */
void python__drained(struct processor *p, const void *rec, uint32_t len)
{
	const struct ms_rec_header *h = rec;
	const struct ms_py_frame *py;
	const struct py_layout *l;
	uint32_t pid, npy;

	if (!p->py || len < sizeof(struct ms_rec_header) || ((uintptr_t)rec & 7))
		return;
	if (h->type == MS_REC_SAMPLE) {
		struct ms_sample_parts parts;

		if (ms_sample__parts(rec, len, &parts))
			return;
		pid = ((const struct ms_sample *)rec)->pid;
		py = parts.py;
		npy = parts.npy;
	} else if (h->type == MS_REC_OFFCPU && h->size == len) {
		struct ms_offcpu_parts parts;

		if (ms_offcpu__parts(rec, len, &parts))
			return;
		pid = ((const struct ms_offcpu *)rec)->pid;
		py = parts.py;
		npy = parts.npy;
	} else {
		return;
	}
	if (!npy)
		return;
	l = py_tracker__layout(p->py, (pid_t)pid);
	if (!l || (!p->py_namer && !(p->py_namer = py_namer__new())))
		return;
	for (uint32_t i = 0; i < npy; i++)
		py_namer__code(p->py_namer, (pid_t)pid, l, py[i].code, py[i].fingerprint);
}

void python__release(struct processor *p)
{
	py_namer__free(p->py_namer);
	p->py_namer = NULL;
	u64map__release(&p->py_frames);
	u64map__release(&p->frame_role);
}
