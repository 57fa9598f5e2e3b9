// SPDX-License-Identifier: MIT
/* report --diff and convert --diff: open both sides alike (diff.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/no_event.h"
#include "cli_util.h"
#include "diff.h"
#include "input.h"

int cli_diff_window__set(struct cli_diff_window *w, bool since, const char *when)
{
	struct cli_input_range r = w->range;
	uint64_t ns;

	if (!r.until_ns) /* the zero value: every segment */
		r = CLI_INPUT_ALL;
	if (!cli_input__set_range(&r, since, when)) {
		w->range = r;
		return 0;
	}
	if (cli__parse_time_ns(when, &ns))
		return -EINVAL;
	*(since ? &w->start_ns : &w->end_ns) = ns;
	*(since ? &w->start_set : &w->end_set) = true;
	return 0;
}

int cli_diff_window__check(const struct cli_diff_window *w)
{
	if (w->start_set && w->end_set && w->end_ns <= w->start_ns)
		return -EINVAL;
	if (w->range.until_ns && w->range.until_ns <= w->range.since_ns)
		return -EINVAL;
	return 0;
}

struct diff_side {
	const char *path;
	struct capture *c;
	struct analysis_look *look;
	const struct capture *view;
	struct analysis_names *names;
	struct analysis_tree *tree;
	struct analysis_flat *flat;
	struct analysis_filter *filter;
	uint32_t event;
	bool bad_event; /* --event names none of its events, or a wall-clock range
			 * was given for a file: usage errors (status 2) */
};

static void diff_side__release(struct diff_side *s)
{
	analysis_flat__free(s->flat);
	analysis_tree__free(s->tree);
	analysis_names__free(s->names);
	analysis_filter__free(s->filter);
	analysis_look__free(s->look);
	capture__free(s->c);
	memset(s, 0, sizeof(*s));
}

/* Open path (a directory's segments in range) and choose its event;
 * message on stderr on failure. */
static int diff_side__open(struct diff_side *s, const char *path, struct cli_input_range range,
			   const struct cli_diff_options *o)
{
	char err[512] = "";
	int rc;

	memset(s, 0, sizeof(*s));
	s->path = path;
	rc = cli_input__open_range(o->cmd, path, range, &s->c, err, sizeof(err));
	if (rc) {
		if (err[0])
			fprintf(stderr, "microscope %s: %s\n", o->cmd, err);
		else
			fprintf(stderr, "microscope %s: %s: %s\n", o->cmd, path,
				strerror(-rc));
		s->bad_event = rc == -EDOM; /* a range for a file: a usage error too */
		return rc;
	}
	/* a recording that took no sample compares as empty (no_event.h) */
	rc = capture__ensure_event(&s->c, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "microscope %s: %s: %s\n", o->cmd, path, err);
		return rc;
	}
	if (o->event) {
		rc = cli_input__find_event(o->cmd, path, s->c, o->event, &s->event);
		s->bad_event = rc != 0;
		if (rc)
			return rc;
	} else {
		s->event = analysis__default_event(s->c);
		if (s->event == CAPTURE_NONE) {
			fprintf(stderr, "microscope %s: %s: no events to compare\n", o->cmd,
				path);
			return -ENOENT;
		}
	}
	s->view = s->c;
	if (o->look != ANALYSIS_LOOK_LOGICAL) {
		if (analysis_look__new(s->c, o->look, &s->look))
			goto oom;
		s->view = analysis_look__capture(s->look);
	}
	return 0;
oom:
	fprintf(stderr, "microscope %s: %s: out of memory\n", o->cmd, path);
	return -ENOMEM;
}

/* Keys, tree (and, with sort, the flat table) of one side, over the
 * samples of its window w. */
static int diff_side__query(struct diff_side *s, const struct analysis_key_options *keys,
			    const struct cli_diff_options *o, bool flat,
			    const struct cli_diff_window *w)
{
	struct analysis_query q;

	analysis_query__init(&q, s->event);
	if (w->start_set)
		q.start_ns = analysis__start_ns(s->view) + w->start_ns;
	if (w->end_set)
		q.end_ns = analysis__start_ns(s->view) + w->end_ns;
	if (o->filter_spec && (o->filter_spec->focus || o->filter_spec->ignore ||
			       o->filter_spec->hide)) {
		char err[256];
		int rc = analysis_filter__new(s->view, o->filter_spec, &s->filter, err,
					      sizeof(err));

		if (rc) {
			fprintf(stderr, "microscope %s: %s\n", o->cmd,
				rc == -EINVAL ? err : strerror(-rc));
			return rc;
		}
		q.filter = s->filter;
	}
	s->names = analysis_names__new_opts(s->view, keys);
	if (!s->names)
		goto fail;
	s->tree = analysis_tree__new(s->names, &q);
	if (!s->tree)
		goto fail;
	if (flat && !(s->flat = analysis_flat__new(s->tree, o->sort)))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "microscope %s: %s: %s\n", o->cmd, s->path, strerror(errno));
	return -errno;
}

/* A side that selects none of its samples says so, as report's --since does
 * (the table would show every function at 0% there). */
static void diff_side__warn_empty(const struct diff_side *s, const struct cli_diff_options *o,
				  const char *side, const char *window)
{
	if (s->tree->nodes[0].total || !s->c->nsamples)
		return;
	fprintf(stderr, "microscope %s: none of %s %s's %" PRIu32 " samples is selected: check "
		"--event, %s and --focus/--ignore options\n", o->cmd, side, s->path,
		s->c->nsamples, window);
}

/* The row's share (self or total, as sorted) in base and new are both
 * under --min-percent. */
static bool diff_row__hidden(const struct analysis_diff_row *r, const struct cli_diff_options *o)
{
	bool self = o->sort == ANALYSIS_SORT_SELF;
	double bs = self ? r->base_self_share : r->base_total_share;
	double ns = self ? r->new_self_share : r->new_total_share;

	return o->min_percent > 0 && 100 * bs < o->min_percent && 100 * ns < o->min_percent;
}

/* Open both sides and refuse incomparable ones. */
static int diff_open(struct diff_side *b, struct diff_side *n, const struct cli_diff_options *o)
{
	struct cli_input_range brange = o->base_window.range, nrange = o->new_window.range;
	char why[256];

	if (!brange.until_ns) /* the zero value: every segment */
		brange = CLI_INPUT_ALL;
	if (!nrange.until_ns)
		nrange = CLI_INPUT_ALL;
	if (diff_side__open(b, o->base, brange, o) || diff_side__open(n, o->new_, nrange, o))
		return -EINVAL;
	if (analysis__diff_check(b->c, b->event, n->c, n->event, why, sizeof(why))) {
		fprintf(stderr, "microscope %s: cannot compare %s with %s: %s (choose one event "
			"both have with --event)\n", o->cmd, o->base, o->new_, why);
		return -EINVAL;
	}
	return 0;
}

/* The "window" line of side's time bounds, if any; other whole says so. */
static void print_window(const char *side, const char *opts, const struct cli_diff_window *w,
			 const char *other, const struct cli_diff_window *ow)
{
	if (!w->start_set && !w->end_set)
		return;
	printf("  window     %s's samples from %.3f s", side, w->start_set ? w->start_ns / 1e9 : 0.0);
	if (w->end_set)
		printf(" to %.3f s", w->end_ns / 1e9);
	printf(" of its recording (%s)%s%s%s\n", opts, ow->start_set || ow->end_set ? "" : "; ",
	       ow->start_set || ow->end_set ? "" : other,
	       ow->start_set || ow->end_set ? "" : " whole");
}

int cli_diff__report(const struct cli_diff_options *o)
{
	struct diff_side b, n;
	struct analysis_diff d = { 0 };
	const char *unit;
	uint32_t i, shown, kept, printed;
	bool self = o->sort == ANALYSIS_SORT_SELF;
	int status = 1;

	memset(&b, 0, sizeof(b));
	memset(&n, 0, sizeof(n));
	if (diff_open(&b, &n, o) || diff_side__query(&b, &o->keys, o, true, &o->base_window) ||
	    diff_side__query(&n, &o->keys, o, true, &o->new_window))
		goto cleanup;
	diff_side__warn_empty(&b, o, "BASE", "--base-since/--base-until");
	diff_side__warn_empty(&n, o, "NEW", "--since/--until");
	unit = capture__string(n.c, n.c->events[n.event].unit);
	if (analysis_diff__init(&d, b.flat, n.flat, o->sort, !strcmp(unit, "samples"))) {
		fprintf(stderr, "microscope report: --diff: out of memory\n");
		goto cleanup;
	}
	printf("microscope report --diff: %s -> %s\n", o->base, o->new_);
	printf("  event      %s (unit %s)\n", capture__string(n.c, n.c->events[n.event].name),
	       unit);
	printf("  base       %" PRIu64 " %s\n", d.base_weight, unit);
	printf("  new        %" PRIu64 " %s\n", d.new_weight, unit);
	print_window("new", "--since/--until", &o->new_window, "base", &o->base_window);
	print_window("base", "--base-since/--base-until", &o->base_window, "new",
		     &o->new_window);
	printf("  shares     of each profile's own total; delta in percentage points\n");
	if (d.counted)
		printf("  marked *   significant: two-proportion z test on sample counts, "
		       "|z| >= %.2f (p < 0.001)\n", ANALYSIS_DIFF_Z_SIGNIFICANT);
	else
		printf("  marked     nothing: the unit is not a count of samples, so no test\n");
	for (i = 0, kept = 0; i < d.nrows; i++)
		kept += !diff_row__hidden(&d.rows[i], o);
	shown = kept < o->limit ? kept : o->limit;
	printf("\nfunctions by change of %s share (top %" PRIu32 " of %" PRIu32, self ? "self" : "total",
	       shown, kept);
	if (o->min_percent > 0)
		printf("; %" PRIu32 " under %g%% in both hidden", d.nrows - kept, o->min_percent);
	printf(")\n");
	printf("  %7s  %7s  %7s  %6s  %s\n", "base%", "new%", "delta", "z", "function");
	for (i = 0, printed = 0; i < d.nrows && printed < shown; i++) {
		const struct analysis_diff_row *r = &d.rows[i];
		double bs = self ? r->base_self_share : r->base_total_share;
		double ns = self ? r->new_self_share : r->new_total_share;
		double dl = self ? r->delta_self : r->delta_total;

		if (diff_row__hidden(r, o))
			continue;
		printed++;
		printf("  %6.1f%%  %6.1f%%  %+7.1f  %6.1f%s %s%s\n", 100 * bs, 100 * ns, 100 * dl,
		       r->z, r->significant ? "*" : " ", r->name,
		       r->kind == ANALYSIS_KEY_KERNEL ? " [k]"
		       : r->kind == ANALYSIS_KEY_INLINE ? " [i]" : "");
	}
	status = fflush(stdout) || ferror(stdout) ? 1 : 0;
cleanup:
	if (b.bad_event || n.bad_event)
		status = 2;
	analysis_diff__release(&d);
	diff_side__release(&b);
	diff_side__release(&n);
	return status;
}

int cli_diff__svg(const struct cli_diff_options *o, char **text, size_t *len)
{
	struct analysis_key_options keys = o->keys;
	struct diff_side b, n;
	char title[600];
	int status = 1;

	memset(&b, 0, sizeof(b));
	memset(&n, 0, sizeof(n));
	keys.fold_inline = false;
	if (diff_open(&b, &n, o) || diff_side__query(&b, &keys, o, false, &o->base_window) ||
	    diff_side__query(&n, &keys, o, false, &o->new_window))
		goto cleanup;
	diff_side__warn_empty(&b, o, "BASE", "--base-since/--base-until");
	diff_side__warn_empty(&n, o, "NEW", "--since/--until");
	snprintf(title, sizeof(title), "Differential flame graph: %s vs base %s (red grew, blue "
		 "shrank)", o->new_, o->base);
	if (analysis_tree__diff_svg(n.tree, b.tree, title,
				    capture__string(n.c, n.c->events[n.event].unit), text, len)) {
		fprintf(stderr, "microscope %s: --diff: out of memory\n", o->cmd);
		goto cleanup;
	}
	status = 0;
cleanup:
	if (b.bad_event || n.bad_event)
		status = 2;
	diff_side__release(&b);
	diff_side__release(&n);
	return status;
}
