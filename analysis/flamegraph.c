// SPDX-License-Identifier: MIT
/*
 * Flame graph SVG of a call tree, in the style of Brendan Gregg's
 * flamegraph.pl: the root at the bottom, each node a box as wide as its
 * total, children left to right in display order.  Self-contained: inline
 * style and a small script (hover details, regex search), no external
 * resources.  Deterministic: colors come from a hash of the name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/text.h"
#include "internal.h"

#define FG_WIDTH 1200.0
#define FG_PAD 10.0
#define FG_ROW 16
#define FG_TOP 48
#define FG_BOTTOM 28
#define FG_MIN_PX 0.1
#define FG_CHAR_PX 7.0
/* Deeper levels are left out (a 1M-deep stack would be a 16 Mpx tall image). */
#define FG_MAX_DEPTH 4096
/* The same figures as text for the script. */
#define FG_WIDTH_S "1200"
#define FG_PAD_S "10"
#define FG_CHAR_PX_S "7"
/* Deeper graphs are drawn as icicles (root at the top), so the first
 * screen of a very deep stack shows the root and the hot paths, not the
 * empty space above the tallest tower. */
#define FG_ICICLE_DEPTH 40

/* XML text: escaped, control characters as spaces, invalid UTF-8 as U+FFFD. */
static void xml_text(FILE *out, const char *s, size_t max)
{
	text__xml(out, s, max);
}

static void color(const struct analysis_key *k, char *buf, size_t size)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *s;
	unsigned v1, v2;

	for (s = k->name; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	v1 = (unsigned)(h % 55);
	v2 = (unsigned)((h >> 16) % 80);
	switch (k->kind) {
	case ANALYSIS_KEY_KERNEL: /* orange, as flamegraph.pl colors "_[k]" */
		snprintf(buf, size, "rgb(%u,%u,%u)", 200 + v1 % 55, 120 + v2, 30);
		break;
	case ANALYSIS_KEY_TRUNCATION:
		snprintf(buf, size, "rgb(%u,%u,%u)", 160 + v1, 160 + v1, 160 + v1);
		break;
	case ANALYSIS_KEY_THREAD:
		snprintf(buf, size, "rgb(%u,%u,%u)", 90 + v1, 140 + v1, 220);
		break;
	default: /* warm: red to yellow */
		snprintf(buf, size, "rgb(%u,%u,%u)", 200 + v1, 50 + v2 * 2, 40 + v1 / 2);
	}
}

static const char fg_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var details, matchedtxt, resetbtn, searching = false, zoomed = null;\n"
	"var W = " FG_WIDTH_S ", PAD = " FG_PAD_S ", CHAR = " FG_CHAR_PX_S ";\n"
	"function frames() { return document.querySelectorAll('g.f'); }\n"
	"function init(evt) {\n"
	"  details = document.getElementById('details').firstChild;\n"
	"  matchedtxt = document.getElementById('matched');\n"
	"  resetbtn = document.getElementById('unzoom');\n"
	"  frames().forEach(function (g) {\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      details.nodeValue = g.querySelector('title').textContent; });\n"
	"    g.addEventListener('mouseout', function () { details.nodeValue = ' '; });\n"
	"    g.addEventListener('click', function () { zoom(g); });\n"
	"  });\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.keyCode === 70) { e.preventDefault(); search_prompt(); }\n"
	"    if (e.key === 'Escape') unzoom();\n"
	"  });\n"
	"}\n"
	/* a label that fits w px: the name, or its start and '..' */
	"function label(g, w) {\n"
	"  var t = g.querySelector('text'), name = g.getAttribute('data-name');\n"
	"  if (!t) return;\n"
	"  var chars = Math.floor((w - 6) / CHAR);\n"
	"  t.textContent = chars < 3 ? '' : name.length <= chars ? name : name.slice(0, chars - 2) + '..';\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
	"  if (t) t.setAttribute('x', (x + 3).toFixed(2));\n"
	"  label(g, w);\n"
	"}\n"
	/* zoom: g spans the full width; its descendants scale with it; its
	 * ancestors span the width too (faded); everything else hides */
	"function zoom(g) {\n"
	"  var x0 = parseFloat(g.getAttribute('data-x')), w0 = parseFloat(g.getAttribute('data-w'));\n"
	"  var d0 = parseInt(g.getAttribute('data-depth'), 10), scale = (W - 2 * PAD) / w0;\n"
	"  frames().forEach(function (f) {\n"
	"    var x = parseFloat(f.getAttribute('data-x')), w = parseFloat(f.getAttribute('data-w'));\n"
	"    var d = parseInt(f.getAttribute('data-depth'), 10);\n"
	"    var inside = x >= x0 - 1e-6 && x + w <= x0 + w0 + 1e-6;\n"
	"    f.classList.remove('parent');\n"
	"    if (d >= d0 && inside) { f.style.display = ''; place(f, PAD + (x - x0) * scale, w * scale); }\n"
	"    else if (d < d0 && x <= x0 + 1e-6 && x + w >= x0 + w0 - 1e-6) {\n"
	"      f.style.display = ''; f.classList.add('parent'); place(f, PAD, W - 2 * PAD); }\n"
	"    else f.style.display = 'none';\n"
	"  });\n"
	"  zoomed = g;\n"
	"  resetbtn.style.display = '';\n"
	"}\n"
	"function unzoom() {\n"
	"  frames().forEach(function (f) {\n"
	"    f.style.display = ''; f.classList.remove('parent');\n"
	"    place(f, parseFloat(f.getAttribute('data-x')), parseFloat(f.getAttribute('data-w')));\n"
	"  });\n"
	"  zoomed = null;\n"
	"  resetbtn.style.display = 'none';\n"
	"}\n"
	"function reset_search() {\n"
	"  frames().forEach(function (g) {\n"
	"    var r = g.querySelector('rect');\n"
	"    g.classList.remove('match');\n"
	"    if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill')); });\n"
	"  matchedtxt.firstChild.nodeValue = ' '; matchedtxt.setAttribute('data-count', '0');\n"
	"  searching = false;\n"
	"}\n"
	"function search_prompt() {\n"
	"  if (searching) { reset_search(); return; }\n"
	"  var term = prompt('Search for (regular expression):', '');\n"
	"  if (term) search(term);\n"
	"}\n"
	/* highlight the frames whose name matches; the share counts each
	 * sample once (overlapping matches on one path are not added twice) */
	"function search(term) {\n"
	"  var re, total = parseFloat(document.getElementById('root').getAttribute('data-total'));\n"
	"  try { re = new RegExp(term); } catch (e) { alert('bad regular expression: ' + e); return; }\n"
	"  reset_search();\n"
	"  var spans = [], count = 0;\n"
	"  frames().forEach(function (g) {\n"
	"    var r = g.querySelector('rect');\n"
	"    if (!re.test(g.getAttribute('data-name'))) return;\n"
	"    r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"    g.classList.add('match');\n"
	"    count++;\n"
	"    spans.push([parseFloat(g.getAttribute('data-x')), parseFloat(g.getAttribute('data-w')),\n"
	"                parseFloat(g.getAttribute('data-total'))]);\n"
	"  });\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var sum = 0, end = -1;\n"
	"  spans.forEach(function (s) { if (s[0] >= end) { sum += s[2]; end = s[0] + s[1]; } });\n"
	"  searching = true;\n"
	"  matchedtxt.setAttribute('data-count', String(count));\n"
	"  matchedtxt.firstChild.nodeValue = 'Matched: ' + count + ' frame' + (count === 1 ? '' : 's') +\n"
	"    ', ' + (total ? (100 * sum / total).toFixed(1) : '0') + '%';\n"
	"}\n"
	"]]></script>\n";

/*
 * Differential colors: the change of a node's total share, red where it
 * grew and blue where it shrank, saturated at the largest change drawn.
 */
static void diff_color(double delta, double max, char *buf, size_t size)
{
	double f = max > 0 ? delta / max : 0;
	unsigned v;

	if (f > 1)
		f = 1;
	if (f < -1)
		f = -1;
	v = (unsigned)(210.0 * (1.0 - (f < 0 ? -f : f)));
	if (f >= 0)
		snprintf(buf, size, "rgb(255,%u,%u)", 45 + v, 45 + v);
	else
		snprintf(buf, size, "rgb(%u,%u,255)", 45 + v, 45 + v);
}

/* The child of base node b whose key has name and kind; CAPTURE_NONE if none. */
static uint32_t base_child(const struct analysis_tree *base, uint32_t b, const struct analysis_key *k)
{
	uint32_t n;

	if (b == CAPTURE_NONE)
		return CAPTURE_NONE;
	for (n = base->nodes[b].first_child; n != CAPTURE_NONE; n = base->nodes[n].next_sibling) {
		const struct analysis_key *bk = &base->names->keys[base->nodes[n].key];

		if (bk->kind == k->kind && !strcmp(bk->name, k->name))
			return n;
	}
	return CAPTURE_NONE;
}

/*
 * delta[i]: new node i's total share minus the share of the base node on
 * the same path of names (0 share when the base has no such path).
 */
static int diff_deltas(const struct analysis_tree *t, const struct analysis_tree *base,
		       double **out, double *max)
{
	uint32_t *match = malloc(((size_t)t->nnodes + 1) * sizeof(*match));
	double *delta = calloc((size_t)t->nnodes + 1, sizeof(*delta));
	uint64_t nt = t->nodes[0].total, bt = base->nodes[0].total;
	uint32_t i;

	if (!match || !delta) {
		free(match);
		free(delta);
		return -ENOMEM;
	}
	*max = 0;
	match[0] = 0;
	for (i = 1; i < t->nnodes; i++) {
		const struct analysis_node *nd = &t->nodes[i];
		uint32_t b = base_child(base, match[nd->parent], &t->names->keys[nd->key]);
		double ns = nt ? (double)nd->total / (double)nt : 0;
		double bs = b != CAPTURE_NONE && bt ? (double)base->nodes[b].total / (double)bt : 0;

		match[i] = b;
		delta[i] = ns - bs;
		if (delta[i] > *max)
			*max = delta[i];
		if (-delta[i] > *max)
			*max = -delta[i];
	}
	free(match);
	*out = delta;
	return 0;
}

static int flamegraph(const struct analysis_tree *t, const struct analysis_tree *base,
		      const char *title, const char *unit, char **text, size_t *len);

int analysis_tree__flamegraph_svg(const struct analysis_tree *t, const char *title,
				  const char *unit, char **text, size_t *len)
{
	return flamegraph(t, NULL, title, unit, text, len);
}

int analysis_tree__diff_svg(const struct analysis_tree *t, const struct analysis_tree *base,
			    const char *title, const char *unit, char **text, size_t *len)
{
	return flamegraph(t, base, title, unit, text, len);
}

static int flamegraph(const struct analysis_tree *t, const struct analysis_tree *base,
		      const char *title, const char *unit, char **text, size_t *len)
{
	const struct analysis_node *nodes = t->nodes;
	const struct analysis_key *keys = t->names->keys;
	double *xs = NULL, *delta = NULL, dmax = 0, scale;
	uint32_t maxdepth = 0, i, n, skipped = 0, too_deep = 0;
	bool icicle;
	uint64_t total = nodes[0].total;
	unsigned height;
	FILE *out;
	char fill[32];
	int err = -ENOMEM;

	*text = NULL;
	*len = 0;
	xs = calloc(t->nnodes, sizeof(*xs));
	if (!xs)
		return -ENOMEM;
	if (base && diff_deltas(t, base, &delta, &dmax))
		goto cleanup;
	out = open_memstream(text, len);
	if (!out)
		goto cleanup;
	scale = total ? (FG_WIDTH - 2 * FG_PAD) / (double)total : 0;
	for (i = 0; i < t->nnodes; i++) {
		double x;

		if (nodes[i].depth > maxdepth && nodes[i].depth <= FG_MAX_DEPTH &&
		    nodes[i].total * scale >= FG_MIN_PX)
			maxdepth = nodes[i].depth;
		x = xs[i];
		for (n = nodes[i].first_child; n != CAPTURE_NONE; n = nodes[n].next_sibling) {
			xs[n] = x;
			x += (double)nodes[n].total * scale;
		}
	}
	height = (maxdepth + 1) * FG_ROW + FG_TOP + FG_BOTTOM;
	icicle = maxdepth > FG_ICICLE_DEPTH;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%u\" onload=\"init(evt)\" "
		"viewBox=\"0 0 %.0f %u\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style type=\"text/css\">\n"
		"text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
		"#title { text-anchor: middle; font-size: 17px; }\n"
		"#search { cursor: pointer; opacity: 0.6; }\n"
		"#search:hover { opacity: 1; }\n"
		"g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		"g.f.parent rect { opacity: 0.5; }\n"
		"#unzoom { cursor: pointer; }\n"
		"</style>\n%s"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,240)\"/>\n"
		"<text id=\"title\" x=\"%.0f\" y=\"24\">",
		FG_WIDTH, height, FG_WIDTH, height, fg_script, FG_WIDTH / 2);
	xml_text(out, title, 200);
	fprintf(out,
		"</text>\n"
		"<text id=\"search\" x=\"%.0f\" y=\"24\" text-anchor=\"end\" "
		"onclick=\"search_prompt()\">Search</text>\n"
		"<text id=\"unzoom\" x=\"%.0f\" y=\"24\" onclick=\"unzoom()\" "
		"style=\"display:none\">Reset Zoom</text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%u\"> </text>\n",
		FG_WIDTH - FG_PAD, FG_PAD, FG_WIDTH - FG_PAD, height - 10, FG_PAD, height - 10);
	if (!total) /* a valid, empty graph that says so */
		fprintf(out, "<text id=\"empty\" x=\"%.0f\" y=\"%u\" text-anchor=\"middle\">"
			"No samples</text>\n", FG_WIDTH / 2, (unsigned)(FG_TOP + FG_ROW / 2));

	for (i = 0; i < t->nnodes; i++) {
		const struct analysis_node *nd = &nodes[i];
		const char *name = i == 0 ? "all" : keys[nd->key].name;
		double w = (double)nd->total * scale, x = FG_PAD + xs[i];
		unsigned y = icicle ? FG_TOP + nd->depth * FG_ROW
				    : height - FG_BOTTOM - (nd->depth + 1) * FG_ROW;
		size_t chars;

		if (w < FG_MIN_PX) {
			skipped++;
			continue;
		}
		if (nd->depth > FG_MAX_DEPTH) {
			too_deep++;
			continue;
		}
		if (i == 0)
			snprintf(fill, sizeof(fill), "rgb(200,200,200)");
		else if (delta)
			diff_color(delta[i], dmax, fill, sizeof(fill));
		else
			color(&keys[nd->key], fill, sizeof(fill));
		fprintf(out,
			"<g class=\"f\"%s data-total=\"%" PRIu64 "\" data-x=\"%.2f\" "
			"data-w=\"%.2f\" data-depth=\"%" PRIu32 "\"",
			i == 0 ? " id=\"root\"" : "", nd->total, x, w, nd->depth);
		if (delta)
			fprintf(out, " data-delta=\"%.5f\"", delta[i]);
		fputs(" data-name=\"", out);
		xml_text(out, name, SIZE_MAX);
		fputs("\"><title>", out);
		xml_text(out, name, SIZE_MAX);
		if (i > 0 && keys[nd->key].kind == ANALYSIS_KEY_KERNEL)
			fputs(" [k]", out);
		fprintf(out, " (%" PRIu64 " %s, %.2f%%; self %" PRIu64, nd->total, unit,
			total ? 100.0 * (double)nd->total / (double)total : 0.0, nd->self);
		if (delta)
			fprintf(out, "; %+.2f points vs base", 100.0 * delta[i]);
		fputs(")</title>", out);
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
			"rx=\"2\" ry=\"2\"/>",
			x, y, w, FG_ROW - 1, fill);
		/* every box has its text element, empty when too narrow: a zoom
		 * widens boxes and labels them */
		chars = w > 6 ? (size_t)((w - 6) / FG_CHAR_PX) : 0;
		fprintf(out, "<text x=\"%.2f\" y=\"%u\">", x + 3, y + 11);
		if (chars >= 3) {
			size_t nlen = strlen(name);

			if (nlen <= chars) {
				xml_text(out, name, nlen);
			} else {
				xml_text(out, name, chars - 2);
				fputs("..", out);
			}
		}
		fputs("</text>", out);
		fputs("</g>\n", out);
	}
	if (skipped)
		fprintf(out, "<!-- %" PRIu32 " nodes narrower than %.1f px not drawn -->\n", skipped,
			FG_MIN_PX);
	if (too_deep)
		fprintf(out, "<!-- %" PRIu32 " nodes deeper than %u levels not drawn -->\n",
			too_deep, FG_MAX_DEPTH);
	fputs("</svg>\n", out);
	if (fclose(out)) {
		free(*text);
		*text = NULL;
		*len = 0;
		goto cleanup;
	}
	err = 0;
cleanup:
	free(xs);
	free(delta);
	return err;
}
