/* SPDX-License-Identifier: MIT */
/*
 * Analysis: pure, deterministic queries over a validated capture.
 *
 * Nothing here reads clocks, process memory or files.  Every id and every
 * order in a result depends only on the capture's rows and the query, never
 * on hash iteration order, so reports, tests and diffs are reproducible.
 *
 * Ownership.  A struct analysis_names borrows its struct capture; trees
 * borrow their names; flat tables and summaries borrow the names too.  Free
 * results before what they borrow.  All returned arrays and strings are
 * owned by the result that holds them unless a function says otherwise.
 *
 * Keys.  Frames are grouped at function granularity: every frame maps to a
 * key, which is (kind, display name); frames with equal keys merge.  The
 * display name is:
 *   - a frame with a function name: the name ("main", "do_syscall_64");
 *   - an unnamed frame in a module: "<module basename>+0x<address>", address
 *     in lowercase hex as the frame stores it ("libfoo.so+0x1a2b"); a module
 *     with no path is "[kernel]", "[vdso]", "[anon]" or "[unknown]" by kind;
 *   - an unnamed frame with no module: "[unknown]+0x<address>";
 *   - an interpreted frame (CAPTURE_FRAME_F_INTERPRETED): "function (file:line)",
 *     so an interpreted frame is keyed by its file, function and line;
 *   - a truncation frame (CAPTURE_FRAME_F_TRUNCATION): its bracketed reason,
 *     "[stack copy exhausted]" ("[truncated]" if it has none);
 *   - a sample with no stack: the synthetic frame "[empty stack]";
 *   - a per-thread root: "<comm>-<tid>" ("worker-4242"; comm "[unknown]" if
 *     empty), "[no thread]" for samples without a thread.
 * Kernel frames keep their name but get key kind ANALYSIS_KEY_KERNEL, so a
 * kernel and a user function of one name stay apart.  Presenters mark them
 * perf-style: the report prints "name [k]", folded stacks "name_[k]" (the
 * stackcollapse-perf.pl --kernel convention that flamegraph.pl colors).
 * Inlined calls (CAPTURE_FRAME_F_INLINE) get ANALYSIS_KEY_INLINE and are
 * marked "name [i]" and "name_[i]" (flamegraph.pl's inline annotation).
 *
 * Weights are in the query event's unit (capture_event.unit): "samples",
 * "nanoseconds", ...  "total" of a function counts each sample once even
 * when the function recurses; "self" counts samples whose innermost frame
 * it is.
 */
#ifndef MS_ANALYSIS_H
#define MS_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

/* ---- names and keys ------------------------------------------------------ */

enum analysis_key_kind {
	ANALYSIS_KEY_FUNCTION = 0,   /* user-space code (or an unnamed address) */
	ANALYSIS_KEY_KERNEL = 1,     /* a frame with CAPTURE_FRAME_F_KERNEL */
	ANALYSIS_KEY_TRUNCATION = 2, /* a truncation reason, or "[empty stack]" */
	ANALYSIS_KEY_THREAD = 3,     /* a per-thread root */
	ANALYSIS_KEY_INLINE = 4,     /* a frame with CAPTURE_FRAME_F_INLINE (user code) */
};

/*
 * Granularity: what a key stands for (report --granularity).
 *   FRAME     as recorded, the exporters' labels (capture/frame_label.h):
 *             named native frames by function, interpreted frames by line,
 *             unnamed frames by address ("libfoo.so+0x1a2b");
 *   FUNCTION  one key per function: interpreted frames "function (file)"
 *             whatever their line, unnamed frames one key per module
 *             ("libfoo.so+?", "[unknown]+?" without a module);
 *   LINE      named native frames with a source line "name (file.c:12)"
 *             (file basename), interpreted frames "function (file:line)",
 *             others as FUNCTION but unnamed frames by address;
 *   ADDRESS   named native frames "name (module+0xaddress)", unnamed
 *             "module+0xaddress", interpreted frames as LINE;
 *   MODULE    one key per module (perf report --sort dso): a native frame
 *             its module's basename ("libc.so.6", "[vdso]", "[unknown]"
 *             without one), every kernel frame "[kernel]" (kind KERNEL),
 *             an interpreted frame its source file as recorded
 *             ("/src/app.py": a Python module is its file), inlined calls
 *             their module like any frame (kind FUNCTION).  Consecutive
 *             frames of one module collapse into one: the names' row_keys
 *             fold a stack row whose key is its caller's, so a stack reads
 *             "app;libc.so.6;[kernel]" and a module's self is the sum of
 *             its functions' selves.
 * Truncation frames keep their reason at every granularity.
 */
enum analysis_granularity {
	ANALYSIS_GRANULARITY_FRAME = 0,
	ANALYSIS_GRANULARITY_FUNCTION = 1,
	ANALYSIS_GRANULARITY_LINE = 2,
	ANALYSIS_GRANULARITY_ADDRESS = 3,
	ANALYSIS_GRANULARITY_MODULE = 4,
};

/*
 * How frames become keys.  fold_inline: inlined calls
 * (CAPTURE_FRAME_F_INLINE) get no key of their own; frame_keys holds
 * ANALYSIS_KEY_FOLDED for them and every query charges their cost to the
 * frame that holds them (the out-of-line function they were inlined into),
 * as perf report's symbol column does.
 */
struct analysis_key_options {
	enum analysis_granularity granularity;
	bool fold_inline;
};

/* frame_keys value of a frame folded into its caller (fold_inline). */
#define ANALYSIS_KEY_FOLDED CAPTURE_NONE

struct analysis_key {
	const char *name; /* display name, NUL-terminated, owned by the names */
	uint32_t kind;	  /* ANALYSIS_KEY_* */
	uint32_t rank;	  /* position in display order: name bytes, then kind, then id */
	/* The lowest frame id with this key: the function's identity (its
	 * recorded name, and file for an interpreted frame) apart from the
	 * display name.  CAPTURE_NONE for threads and the synthetic keys. */
	uint32_t frame;
};

/*
 * The display names and keys of one capture, computed once and shared by
 * every query on it.  Key ids are dense and assigned in a fixed order:
 * frames in frame-id order, then threads in thread-id order, then
 * "[no thread]", "[empty stack]" and "[clipped by the recording window]".
 */
struct analysis_names {
	const struct capture *capture; /* borrowed */
	const struct analysis_key *keys;
	uint32_t nkeys;
	const uint32_t *frame_keys;  /* [capture->nframes] frame id -> key */
	const uint32_t *thread_keys; /* [capture->nthreads] thread id -> key */
	uint32_t no_thread_key;	     /* root for samples with thread CAPTURE_NONE */
	uint32_t empty_stack_key;    /* leaf for samples with stack CAPTURE_NONE */
	uint32_t clipped_key;	     /* leaf below an off-CPU interval cut by the window */
	/* [capture->nstacks] stack row -> key, ANALYSIS_KEY_FOLDED for a row
	 * that adds nothing to its caller's (MODULE: a frame of its caller's
	 * module); NULL when every row is its frame's key.  Read it through
	 * analysis_names__row_key. */
	const uint32_t *row_keys;
	struct analysis_key_options options; /* how the keys were made */
	/* private */
	void *storage;
};

/*
 * Compute display names and keys for every frame and thread of c (which
 * must outlive the result).  Cost: O(frames + threads) plus one sort of the
 * keys.  Returns NULL and sets errno (ENOMEM) on failure.
 */
struct analysis_names *analysis_names__new(const struct capture *c);
/*
 * As analysis_names__new, at o's granularity and inline folding (the
 * plain constructor is FRAME granularity, inline calls shown).  frame_keys
 * may hold ANALYSIS_KEY_FOLDED when o->fold_inline.
 */
struct analysis_names *analysis_names__new_opts(const struct capture *c,
						const struct analysis_key_options *o);
/* Accepts NULL. */
void analysis_names__free(struct analysis_names *n);

/* "function", "line", "address" or "module" into *g: 0, or -EINVAL. */
int analysis_granularity__parse(const char *name, enum analysis_granularity *g);

/*
 * The key of the names' capture's stack row s: its frame's key, or
 * ANALYSIS_KEY_FOLDED when the row charges its caller's node (an inlined
 * call under fold_inline; a frame of its caller's module at MODULE).
 */
static inline uint32_t analysis_names__row_key(const struct analysis_names *n, uint32_t s)
{
	return n->row_keys ? n->row_keys[s] : n->frame_keys[n->capture->stacks[s].frame];
}

/* Frame f's key name at granularity g (rules above) into buf, like snprintf. */
size_t analysis__frame_key_name(const struct capture *c, const struct capture_frame *f,
				enum analysis_granularity g, char *buf, size_t size);

/*
 * Write frame's display name (rules above, without the kernel mark) into
 * buf of size bytes, NUL-terminated and truncated to fit.  Returns the
 * length the full name has, like snprintf.
 */
size_t analysis__frame_name(const struct capture *c, const struct capture_frame *f, char *buf,
			    size_t size);

/* ---- looks (look.c) ------------------------------------------------------ */

enum analysis_look_kind {
	ANALYSIS_LOOK_LOGICAL = 0, /* as recorded: interpreted frames spliced (default) */
	ANALYSIS_LOOK_NATIVE = 1,  /* interpreted frames dropped */
	ANALYSIS_LOOK_PYTHON = 2,  /* from the outermost interpreted frame in, interpreter hidden */
};

struct analysis_look;
struct analysis_select;

/* "logical", "native" or "python" into *look: 0, or -EINVAL. */
int analysis_look__parse(const char *name, enum analysis_look_kind *look);

/*
 * A view of c (which must outlive it) under look: same frames, threads,
 * strings and sample order; stacks rebuilt (rules in look.c).  Returns 0 or
 * -ENOMEM; *out is NULL on failure.  Every query takes the view's capture
 * (analysis_look__capture) like any other.
 */
int analysis_look__new(const struct capture *c, enum analysis_look_kind look,
		       struct analysis_look **out);
const struct capture *analysis_look__capture(const struct analysis_look *l);
/* Accepts NULL. */
void analysis_look__free(struct analysis_look *l);

/* ---- filters (filter.c) ----------------------------------------------------- */

/*
 * pprof's filters, as POSIX extended regular expressions (NULL: unset):
 * focus keeps samples whose stack has a frame that matches; ignore drops
 * samples whose stack has one; hide removes matching frames from stacks
 * (their cost goes to the caller).  A frame matches when its
 * function-granularity key name ("leaf (app.py)", "libfoo.so+?") or its
 * as-recorded label ("leaf (app.py:6)", "libfoo.so+0x1a2b") does.
 * Samples with an empty stack pass unless focus is set.
 */
struct analysis_filter_spec {
	const char *focus, *ignore, *hide;
};

struct analysis_filter {
	const struct capture *capture; /* borrowed: the capture (or look view) it is for */
	uint8_t *stack_pass;   /* [nstacks] a sample with this stack passes focus/ignore */
	uint8_t *stack_bits;   /* [nstacks] private */
	uint8_t *frame_hidden; /* [nframes] hide matched, or NULL without hide */
	bool empty_pass;
};

/* Whether spec's patterns compile: 0, or -EINVAL with err as
 * analysis_filter__new says it (for a usage error before any input is read). */
int analysis_filter__check(const struct analysis_filter_spec *spec, char *err, size_t size);

/*
 * Compile spec and bind it to c (which must outlive it).  Returns 0,
 * -EINVAL with err saying which pattern is bad and why, or -ENOMEM.
 */
int analysis_filter__new(const struct capture *c, const struct analysis_filter_spec *spec,
			 struct analysis_filter **out, char *err, size_t size);
/* Accepts NULL. */
void analysis_filter__free(struct analysis_filter *f);
/* Whether a sample with stack (CAPTURE_NONE: empty) passes f (NULL: all do). */
bool analysis_filter__stack(const struct analysis_filter *f, uint32_t stack);

/*
 * The recording's start as analysis sees it: the earliest sample time or
 * interval start (an interval cut by the start begins at it); 0 if none.
 * --since/--until and interval times are relative to it.
 */
uint64_t analysis__start_ns(const struct capture *c);

/* ---- selections (select.c) -------------------------------------------------- */

/*
 * A selection narrows a query to some threads and some stacks by what they
 * are rather than by pattern (analysis_filter), computed once per query
 * over the capture's tables so matching a sample costs two array loads.
 *   process: keep only threads of this process row (CAPTURE_NONE: all);
 *            thread-less samples are then dropped.
 *   module:  keep stacks with a frame in a module whose path basename is
 *            module ("[kernel]", "[vdso]", "[anon]" by kind); NULL: all.
 *            The empty stack has no frame: it fails.
 */
struct analysis_select_spec {
	uint32_t process;
	uint32_t reserved;
	const char *module;
};

struct analysis_select {
	const uint8_t *threads; /* [nthreads] nonzero: kept; NULL: every thread */
	const uint8_t *stacks;	/* [nstacks + 1] nonzero: kept; the last is the empty stack; NULL: all */
	uint32_t nstacks;	/* the capture's, for the empty stack's slot */
	bool keep_no_thread;	/* samples with thread CAPTURE_NONE */
	/* private */
	void *storage;
};

/* A spec that keeps everything. */
void analysis_select_spec__init(struct analysis_select_spec *spec);

/*
 * Build the selection of spec over c (which must outlive it).  Cost:
 * O(threads + modules + stacks).  Returns 0, -EINVAL (process out of
 * range) or -ENOMEM; *out is NULL on failure.
 */
int analysis_select__new(const struct capture *c, const struct analysis_select_spec *spec,
			 struct analysis_select **out);
/* Accepts NULL. */
void analysis_select__free(struct analysis_select *f);

/* Whether f keeps a row of thread and stack (either may be CAPTURE_NONE); NULL f keeps all. */
bool analysis_select__keeps(const struct analysis_select *f, uint32_t thread, uint32_t stack);

/* ---- queries ------------------------------------------------------------- */

/*
 * Which samples a result covers and how stacks are rooted.  A sample
 * matches when its event is event, its thread is thread (unless thread is
 * CAPTURE_NONE: all threads) and start_ns <= time_ns < end_ns (end_ns 0: no
 * upper bound).
 */
struct analysis_query {
	uint32_t event;	 /* -> events */
	uint32_t thread; /* -> threads, or CAPTURE_NONE for every thread */
	bool per_thread; /* put a thread root ("comm-tid") above each stack */
	uint64_t start_ns;
	uint64_t end_ns;
	/* Off-CPU intervals (capture_interval) whose event is event match like
	 * samples, by thread and start_ns.  Those cut by the recording's edges
	 * (START/END_UNKNOWN) count their part inside the window (their weight,
	 * the capture's rule) under an extra leaf "[clipped by the recording
	 * window]" (names->clipped_key) unless this is set.  Default: counted. */
	bool complete_only;
	/* Stack filters (focus, ignore, hide) bound to the queried capture, or NULL. */
	const struct analysis_filter *filter;
	/*
	 * The wall view as one tree: with wall set, samples of wall_event (a
	 * CPU event counted in samples) join event's off-CPU intervals, each
	 * weighing wall_event's period in ns (events[wall_event].period: an
	 * estimate of on-CPU time, stated by whoever shows it).
	 */
	bool wall;
	uint32_t wall_event;
	/* Threads (by process) and stacks (by module) kept, or NULL: all.
	 * Borrowed; built over the queried capture (analysis_select__new). */
	const struct analysis_select *select;
};

/* All samples of event, all threads, no thread roots, no time bounds. */
void analysis_query__init(struct analysis_query *q, uint32_t event);

/* Returns 0, or -EINVAL if q names an event or thread c does not have. */
int analysis_query__check(const struct capture *c, const struct analysis_query *q);

/* Whether sample s is one that q covers.  q must have passed check. */
bool analysis_query__match(const struct analysis_query *q, const struct capture_sample *s);

/* Whether off-CPU interval v is one that q covers (by its start).  q must have passed check. */
bool analysis_query__match_interval(const struct analysis_query *q,
				    const struct capture_interval *v);

/*
 * Find the event named name: 0 and *event set, -ENOENT if none is, or
 * -ENOTUNIQ if several are (segments of recordings at different rates: one
 * event per name and period).  "NAME#N" names the Nth event called NAME in
 * the events table (N from 1), as analysis__event_label writes it.
 */
int analysis__find_event(const struct capture *c, const char *name, uint32_t *event);

/* event's name for display and --event: "NAME", or "NAME#N" when other
 * events share its name (N from 1, in events-table order).  Truncated to
 * size bytes. */
void analysis__event_label(const struct capture *c, uint32_t event, char *buf, size_t size);

/*
 * The event a report shows by default: the lowest-id event that has
 * samples; event 0 if none has; CAPTURE_NONE if the capture has no events.
 */
uint32_t analysis__default_event(const struct capture *c);

/* ---- call tree ------------------------------------------------------------- */

/*
 * A top-down call tree node.  Children of a node have distinct keys and
 * are linked in display order: total descending, then key rank (name).
 */
struct analysis_node {
	uint32_t key;	       /* -> names->keys; CAPTURE_NONE for the root */
	uint32_t parent;       /* node id; CAPTURE_NONE for the root */
	uint32_t first_child;  /* node id, CAPTURE_NONE for a leaf */
	uint32_t next_sibling; /* node id, CAPTURE_NONE for the last child */
	uint32_t depth;	       /* 0 for the root, 1 for outermost frames */
	uint32_t nchildren;
	uint64_t self;	  /* weight of samples whose stack ends here */
	uint64_t total;	  /* weight of samples whose stack passes through here */
	uint64_t samples; /* number of samples whose stack passes through here */
};

struct analysis_tree {
	const struct analysis_names *names; /* borrowed */
	struct analysis_query query;
	const struct analysis_node *nodes; /* [nnodes]; nodes[0] is the root */
	uint32_t nnodes;		   /* >= 1 */
	/* private */
	void *storage;
};

/*
 * Build the top-down call tree of q's samples.  The root's total is the
 * weight of all matched samples.  A node id is smaller than its children's.
 * Cost: one pass over the samples, then work proportional to the distinct
 * stacks (per thread when q->per_thread), not to the samples.
 * Returns NULL and sets errno: EINVAL for a bad query, ENOMEM.
 */
struct analysis_tree *analysis_tree__new(const struct analysis_names *n,
					 const struct analysis_query *q);
/* Accepts NULL. */
void analysis_tree__free(struct analysis_tree *t);

/*
 * Folded stacks ("root;caller;leaf weight\n", the stackcollapse format
 * flamegraph.pl, inferno and speedscope read) of t: one line per distinct
 * path of display names that has self weight, weights summed, lines sorted
 * bytewise (as LC_ALL=C sort).  In names ';' becomes ':' and '\n', '\r'
 * become ' '; kernel names get "_[k]".  *text is malloc'd (caller frees),
 * NUL-terminated, *len bytes long without the NUL.  Returns 0 or -ENOMEM.
 */
int analysis_tree__folded(const struct analysis_tree *t, char **text, size_t *len);

/*
 * Flame graph of t as a self-contained SVG document (flamegraph.pl style:
 * root "all" at the bottom, box width proportional to total weight,
 * children in display order; hover shows name, total in unit, percent and
 * self; "Search" or Ctrl-F highlights names matching a regular expression
 * and shows how many frames matched and their share, also as the count in
 * #matched's data-count; a click on a box zooms so that it spans the full
 * width with its descendants scaled alike and its ancestors faded, "Reset
 * Zoom" or Escape undoes it).  Deeper than 40 levels it is an icicle (root
 * at the top) so the first screen shows the root and the hot paths.  Each
 * box is a g.f with data-name, data-total, data-x, data-w (px) and
 * data-depth.  Boxes narrower than 0.1 px and levels deeper than 4096
 * are left out; names are XML-escaped, control characters as spaces,
 * invalid UTF-8 as U+FFFD (capture/text.h).
 * title is shown at the top.  *text is malloc'd (caller frees), *len bytes.
 * Returns 0 or -ENOMEM.
 */
int analysis_tree__flamegraph_svg(const struct analysis_tree *t, const char *title,
				  const char *unit, char **text, size_t *len);

/*
 * Differential flame graph: t's boxes (widths from t, the new profile)
 * colored by the change of each node's total share against base, the node
 * on the same path of key names in base (share 0 if base has none): red
 * grew, blue shrank, white unchanged, saturated at the largest change.
 * Hover adds "+N.NN points vs base"; each box carries data-delta (a
 * fraction).  Paths only in base are not drawn.  Returns 0 or -ENOMEM.
 */
int analysis_tree__diff_svg(const struct analysis_tree *t, const struct analysis_tree *base,
			    const char *title, const char *unit, char **text, size_t *len);

/* ---- tree shape (analysis/shape.c) ---------------------------------------- */

/*
 * The function tree of every stack row of a capture (keys merged as in
 * analysis_tree, no thread roots), built once per names; a query's weights
 * are then laid on it in one pass over the samples (analysis_shape__weigh)
 * instead of building a tree per query.  Node 0 is the root; a parent's id
 * is smaller than its children's.  Ids depend only on the capture, so they
 * are the same for every query.  Children are not linked: presenters order
 * them (total descending, then key rank) as analysis_tree does.
 */
struct analysis_shape_node {
	uint32_t key;	 /* -> names->keys; CAPTURE_NONE for the root */
	uint32_t parent; /* node id; CAPTURE_NONE for the root */
};

struct analysis_shape {
	const struct analysis_names *names; /* borrowed */
	const struct analysis_shape_node *nodes;
	uint32_t nnodes;
	const uint32_t *stack_node; /* [nstacks + 1] stack row -> node; the last: empty stack */
	/* private */
	void *storage;
};

/* Cost: O(stack rows) hash probes.  Returns 0 or -ENOMEM (*out NULL). */
int analysis_shape__new(const struct analysis_names *n, struct analysis_shape **out);
/* Accepts NULL. */
void analysis_shape__free(struct analysis_shape *sh);

/* A query's weights on a shape: arrays of shape->nnodes, malloc'd. */
struct analysis_weights {
	uint64_t *self;	 /* weight of matched rows whose stack ends at the node */
	uint64_t *total; /* self plus the children's totals */
	uint64_t samples; /* matched samples and intervals */
};

/*
 * Weigh q's samples (and intervals, like analysis_tree) on sh: equal to the
 * self/total of analysis_tree__new(sh->names, q) node for node.  q must not
 * ask for per_thread or wall, nor hide frames.  Cost: one pass over the samples and intervals plus
 * O(nodes).  Returns 0, -EINVAL (a bad query, or per_thread) or -ENOMEM
 * (w released).
 */
int analysis_shape__weigh(const struct analysis_shape *sh, const struct analysis_query *q,
			  struct analysis_weights *w);
/* Accepts a zeroed or released value. */
void analysis_weights__release(struct analysis_weights *w);

/* ---- flat table ------------------------------------------------------------ */

enum analysis_sort {
	ANALYSIS_SORT_SELF = 0,
	ANALYSIS_SORT_TOTAL = 1,
};

struct analysis_flat_row {
	uint32_t key; /* -> names->keys */
	uint32_t reserved;
	uint64_t self;	/* weight of samples whose innermost frame has this key */
	uint64_t total; /* weight of samples with this key anywhere, each once */
};

/* Per-function costs: one row per key with nonzero total (thread roots excluded). */
struct analysis_flat {
	const struct analysis_names *names; /* borrowed */
	struct analysis_flat_row *rows;	    /* [nrows], sorted */
	uint32_t nrows;
	uint64_t total_weight; /* the tree root's total: the base for percentages */
};

/*
 * Flat self/total table of t, sorted by sort's column descending, ties by
 * key rank (name).  Returns NULL and sets errno (ENOMEM).
 */
struct analysis_flat *analysis_flat__new(const struct analysis_tree *t, enum analysis_sort sort);
/* Accepts NULL. */
void analysis_flat__free(struct analysis_flat *f);

/* ---- diff (analysis/diff.c) ------------------------------------------------ */

/*
 * Whether two captures' events can be compared: same event name and unit
 * (the period may differ: shares are normalized by each side's total); an
 * event named "folded" (a folded-stacks import, which names no event)
 * compares with any event of its unit.
 * Returns 0, or -EINVAL with why (NUL-terminated, truncated to size) saying
 * what differs, e.g. "events differ: cpu-clock (samples) vs off-cpu
 * (nanoseconds)".
 */
int analysis__diff_check(const struct capture *base, uint32_t base_event,
			 const struct capture *new_, uint32_t new_event, char *why, size_t size);

/* |z| at or above this marks a change significant: p < 0.001, two-sided. */
#define ANALYSIS_DIFF_Z_SIGNIFICANT 3.29

struct analysis_diff_row {
	const char *name;  /* the key's display name (borrowed from either side's names) */
	uint32_t kind;	   /* ANALYSIS_KEY_* */
	uint32_t reserved;
	uint64_t base_self, base_total; /* weights in the base profile, 0 if absent */
	uint64_t new_self, new_total;
	double base_self_share, base_total_share; /* fractions of each side's total */
	double new_self_share, new_total_share;
	double delta_self, delta_total; /* new share - base share (fractions) */
	/* Two-proportion z of the sorted column's shares, pooled variance;
	 * 0 when either total is 0 or the unit is not a count of samples. */
	double z;
	bool significant; /* |z| >= ANALYSIS_DIFF_Z_SIGNIFICANT */
};

struct analysis_diff {
	struct analysis_diff_row *rows; /* [nrows] by |delta| of sort's column desc, then name */
	uint32_t nrows;
	uint64_t base_weight, new_weight; /* the two totals shares are of */
	bool counted; /* weights count samples, so z is computed */
};

/*
 * Compare two flat tables (same granularity) key by key, matching keys by
 * (display name, kind).  sort picks the column deltas are sorted and tested
 * by.  counted: the weights are sample counts (unit "samples"), so the
 * two-proportion test fits them.  Returns 0 or -ENOMEM (d released).
 */
int analysis_diff__init(struct analysis_diff *d, const struct analysis_flat *base,
			const struct analysis_flat *new_, enum analysis_sort sort, bool counted);
/* Accepts a zeroed or released value. */
void analysis_diff__release(struct analysis_diff *d);

/* ---- summary --------------------------------------------------------------- */

enum analysis_counter_class {
	ANALYSIS_COUNTER_INFO = 0,    /* e.g. "bpf.samples_seen" */
	ANALYSIS_COUNTER_LOST = 1,    /* data lost: name contains "lost" or "ringbuf_full" */
	ANALYSIS_COUNTER_PROBLEM = 2, /* see analysis__counter_class */
};

/*
 * Classify a counter by its name.  LOST: contains "lost" or
 * "ringbuf_full".  INFO: "processor.frame_no_symbol" (stripped code is the
 * target's, not a recording fault).  PROBLEM: starts with "processor.", "unwind.",
 * "symbols.", "collector." or "capture.", or ends with "_err", "_error",
 * "_errors" or "_full" (bpf/abi/records.h's kstack_err, filter_full).
 * Everything else is INFO.
 */
enum analysis_counter_class analysis__counter_class(const char *name);

struct analysis_count {
	uint32_t id; /* a key id or a counter id, as the field says */
	uint32_t reserved;
	uint64_t value;
};

struct analysis_summary {
	uint64_t samples;     /* samples the query matched */
	uint64_t weight;      /* their summed weight, in the event's unit */
	uint64_t first_ns;    /* earliest matched sample time; 0 if none */
	uint64_t last_ns;     /* latest matched sample time; 0 if none */
	uint64_t duration_ns; /* meta "duration_ns" if present, else last_ns - first_ns */
	bool duration_from_meta;
	uint32_t threads; /* distinct threads with samples; thread-less samples count as one */
	/*
	 * Effective sampling rate per thread-second in Hz: over threads with
	 * two or more samples, sum(samples - 1) / sum(last - first time).  For
	 * a CPU-bound thread it approaches the requested frequency; 0 when not
	 * computable.
	 */
	double rate_hz;
	uint64_t empty_stacks; /* weight of matched samples with no stack */
	uint64_t truncated;    /* weight of matched samples whose stack holds a truncation frame */
	/* Per reason (id = truncation key, value = samples), by value desc then name.
	 * A stack's reason is its innermost truncation frame. */
	struct analysis_count *truncations;
	uint32_t ntruncations;
	/* Whole-capture counters with nonzero values (id = counter id), in name order. */
	uint64_t lost;
	struct analysis_count *lost_counters;
	uint32_t nlost_counters;
	uint64_t problems;
	struct analysis_count *problem_counters;
	uint32_t nproblem_counters;
};

/*
 * Fill s for q's samples over n's capture.  Returns 0, -EINVAL for a bad
 * query or -ENOMEM; on error s needs no release (it is left released).
 */
int analysis_summary__init(struct analysis_summary *s, const struct analysis_names *n,
			   const struct analysis_query *q);
/* Free s's arrays; accepts a zeroed or released summary. */
void analysis_summary__release(struct analysis_summary *s);

/* ---- off-CPU intervals (analysis/offcpu.c) ------------------------------- */

/*
 * Off-CPU intervals of one thread (or all: thread CAPTURE_NONE), complete
 * ones (both switch-out and switch-in seen) apart from incomplete ones (cut
 * by the recording's start or stop; their weight is only the part inside
 * the window and is never added to complete totals).
 */
struct analysis_offcpu {
	uint32_t *complete;   /* interval ids, longest first (ties: start, id) */
	uint32_t ncomplete;
	uint32_t *incomplete; /* interval ids, by thread then start */
	uint32_t nincomplete;
	uint64_t complete_ns;
	uint64_t incomplete_ns; /* observed part inside the window */
	uint64_t state_ns[CAPTURE_OFFCPU_STATE_COUNT]; /* complete intervals */
	uint32_t state_count[CAPTURE_OFFCPU_STATE_COUNT];
	uint64_t cause_ns[CAPTURE_OFFCPU_CAUSE_COUNT]; /* complete intervals */
	uint32_t cause_count[CAPTURE_OFFCPU_CAUSE_COUNT];
};

/* Fill o from c's intervals of thread (CAPTURE_NONE: all).  Returns 0,
 * -EINVAL (thread out of range) or -ENOMEM; on error o is released. */
int analysis_offcpu__init(struct analysis_offcpu *o, const struct capture *c, uint32_t thread);
/* The same for the intervals q covers (analysis_query__match_interval: its
 * event, thread, window by start and filter), as the off-CPU tables count
 * them.  Returns 0, -EINVAL (q fails analysis_query__check) or -ENOMEM. */
int analysis_offcpu__init_query(struct analysis_offcpu *o, const struct capture *c,
				const struct analysis_query *q);
/* Accepts a zeroed or released value. */
void analysis_offcpu__release(struct analysis_offcpu *o);

/* "runnable", "sleep (S)", "disk (D)", "stopped (T)", "other"; "?" out of range. */
const char *analysis__offcpu_state_name(uint32_t state);
/* "-", "task", "hardirq", "softirq", "nmi"; "?" out of range. */
const char *analysis__offcpu_cause_name(uint32_t cause);

/*
 * The frame that blocked in an off-CPU stack: the innermost frame that is
 * neither kernel nor a truncation mark (the user function that waited);
 * for a stack with none, the innermost kernel frame that is not the
 * scheduler's own or its wakeup plumbing (schedule*, __schedule,
 * try_to_wake_up, __wake_up*, hrtimer_wakeup, ...).  A key
 * id of n, or CAPTURE_NONE.
 */
uint32_t analysis__blocking_key(const struct analysis_names *n, uint32_t stack);

enum analysis_offcpu_by {
	ANALYSIS_OFFCPU_BY_BLOCKER = 0,	      /* id: key of analysis__blocking_key */
	ANALYSIS_OFFCPU_BY_WAKER_THREAD = 1,   /* id: the waker's thread */
	ANALYSIS_OFFCPU_BY_WAKER_FUNCTION = 2, /* id: blocking key of the waker's stack */
	ANALYSIS_OFFCPU_BY_STATE = 3,	      /* id: CAPTURE_OFFCPU_STATE_* */
};

struct analysis_offcpu_group {
	uint32_t id;	/* as the grouping says; CAPTURE_NONE: none (no waker, no user frame) */
	uint32_t count; /* intervals */
	uint64_t ns;	/* their summed weight */
	uint64_t clipped_ns; /* part of ns from intervals cut by the window (inside it) */
	/* By waker thread, a row of id CAPTURE_NONE is per cause
	 * (CAPTURE_OFFCPU_CAUSE_NONE: no wakeup seen; _HARDIRQ, _SOFTIRQ:
	 * woken from an interrupt, which has no waker thread); else 0. */
	uint32_t cause;
};

/* Off-CPU nanoseconds of q's intervals (q->event is the off-CPU event) per group. */
struct analysis_offcpu_table {
	struct analysis_offcpu_group *rows; /* by ns descending, then id */
	uint32_t nrows;
	uint64_t total_ns;
	uint64_t clipped_ns; /* part of total_ns cut by the window (q->complete_only unset) */
};

/* Returns 0, -EINVAL (bad query or by) or -ENOMEM (t released). */
int analysis_offcpu_table__init(struct analysis_offcpu_table *t, const struct analysis_names *n,
				const struct analysis_query *q, enum analysis_offcpu_by by);
void analysis_offcpu_table__release(struct analysis_offcpu_table *t);

/*
 * The wall view: per thread, on-CPU time estimated from CPU samples and
 * off-CPU time measured by intervals, in separate columns.  The conversion
 * from samples to time is stated, never implied: on_cpu_ns = samples x
 * period of the CPU event (its capture_event.period, ns per sample for
 * cpu-clock), and it is 0 with period_known false when the CPU event's
 * unit is not samples of a clock.
 */
struct analysis_wall_row {
	uint32_t thread;	  /* -> threads */
	uint32_t intervals;	  /* complete */
	uint32_t incomplete;	  /* cut by the window's edges */
	uint32_t reserved;
	uint64_t samples;	  /* CPU samples */
	uint64_t on_cpu_ns;	  /* samples x period_ns: an estimate */
	uint64_t off_cpu_ns;	  /* complete intervals */
	uint64_t incomplete_ns;	  /* incomplete intervals, the part inside the window */
	uint64_t state_ns[CAPTURE_OFFCPU_STATE_COUNT]; /* complete only, by state: they sum to
							* off_cpu_ns (the rule of report --off-cpu) */
	uint64_t first_ns, last_ns; /* first and last time the thread was seen */
};

struct analysis_wall {
	struct analysis_wall_row *rows; /* by off_cpu_ns + on_cpu_ns descending, then thread */
	uint32_t nrows;
	uint32_t cpu_event;  /* the samples' event, CAPTURE_NONE if none */
	uint32_t offcpu_event; /* CAPTURE_NONE if the capture has no intervals */
	bool period_known;
	uint64_t period_ns;  /* ns per CPU sample used for on_cpu_ns */
};

/* Returns 0 or -ENOMEM (w released). */
int analysis_wall__init(struct analysis_wall *w, const struct capture *c);
/* The same over the samples taken and the intervals begun in [start_ns,
 * end_ns) (CLOCK_MONOTONIC ns; an end_ns of 0: no end), as a query's
 * window selects them. */
int analysis_wall__init_window(struct analysis_wall *w, const struct capture *c,
			       uint64_t start_ns, uint64_t end_ns);
void analysis_wall__release(struct analysis_wall *w);

/*
 * Per-thread lanes over [start_ns, end_ns) in nbuckets equal buckets: CPU
 * samples per bucket (on-CPU density) and off-CPU nanoseconds per bucket
 * (each interval's overlap with the bucket; incomplete intervals count
 * their part inside the window).  Lanes are in thread-id order, one per
 * thread with samples or intervals.
 */
struct analysis_lane {
	uint32_t thread;
	uint32_t reserved;
	uint64_t *samples;    /* [nbuckets] */
	uint64_t *off_cpu_ns; /* [nbuckets] */
};
struct analysis_lanes {
	uint64_t start_ns, bucket_ns;
	uint32_t nbuckets, nlanes;
	struct analysis_lane *lanes;
};
/* Returns 0, -EINVAL (empty range or nbuckets 0) or -ENOMEM (l released). */
int analysis_lanes__init(struct analysis_lanes *l, const struct capture *c, uint64_t start_ns,
			 uint64_t end_ns, uint32_t nbuckets);
void analysis_lanes__release(struct analysis_lanes *l);

/*
 * The function of each lane's buckets: tops[lane * nbuckets + bucket] is
 * the key (of n) that is the innermost frame, inlined calls folded when n
 * folds them, of the most of q's samples in that bucket (ties: display
 * order); CAPTURE_NONE where the bucket has none.  l must come from n's
 * capture.  What report --timeline draws and a browser lane view asks.
 * Returns 0, -EINVAL for a bad query, or -ENOMEM.
 */
int analysis_lanes__top_keys(const struct analysis_lanes *l, const struct analysis_names *n,
			     const struct analysis_query *q, uint32_t *tops);

/* ---- source lines (analysis/source.c) ------------------------------------ */

/*
 * Per-line costs of one function, for a source view.  A function's frames
 * are those whose function name is exactly function (truncation marks
 * excepted; inlined copies included: their line is in the inlined
 * function's file).  For each matched sample or interval (q, as a tree
 * counts them) whose stack holds such a frame, the innermost one is
 * charged: its (file, line) gets the weight in total, and in self too when
 * it is the stack's innermost frame.  So the lines' totals add up to
 * total, each row counted once however deep the recursion.
 */
struct analysis_source_line {
	uint32_t file; /* string id: the frame's source file ("" if unknown) */
	uint32_t line; /* 0 if unknown */
	uint64_t self, total;
};

struct analysis_source {
	struct analysis_source_line *lines; /* [nlines] by file name, then line */
	uint32_t nlines;
	uint64_t total;	 /* weight of the rows through the function */
	uint64_t weight; /* weight of every row q matched */
};

/*
 * function: the frames' recorded name (capture_frame.function, exact);
 * file: their source file too (exact), or NULL for any file, as an
 * interpreted function is one per (name, file).  When no frame is named
 * function and file is NULL, function is taken as a display name at
 * FUNCTION granularity ("leaf (/src/app.py)", a demangled C++ name), the
 * form /api/source took before rows carried their identity.
 * Returns 0, -EINVAL (a bad query) or -ENOMEM (s released).
 */
int analysis_source__init(struct analysis_source *s, const struct capture *c,
			  const struct analysis_query *q, const char *function, const char *file);
/* Accepts a zeroed or released value. */
void analysis_source__release(struct analysis_source *s);

/*
 * Write stack's display names root first, separated by ';', kernel names
 * followed by " [k]", into buf (NUL-terminated, truncated to fit); "" for
 * CAPTURE_NONE.  Returns the length written.
 */
size_t analysis__stack_path(const struct analysis_names *n, uint32_t stack, char *buf,
			    size_t size);

#endif
