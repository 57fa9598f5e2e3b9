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
	"var details, matchedtxt, searching = false;\n"
	"function init(evt) {\n"
	"  details = document.getElementById('details').firstChild;\n"
	"  matchedtxt = document.getElementById('matched');\n"
	"  document.querySelectorAll('g.f').forEach(function (g) {\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      details.nodeValue = g.querySelector('title').textContent; });\n"
	"    g.addEventListener('mouseout', function () { details.nodeValue = ' '; });\n"
	"  });\n"
	"  window.addEventListener('keydown', function (e) {\n"
	"    if ((e.ctrlKey || e.metaKey) && e.keyCode === 70) { e.preventDefault(); search_prompt(); }\n"
	"  });\n"
	"}\n"
	"function reset_search() {\n"
	"  document.querySelectorAll('g.f rect').forEach(function (r) {\n"
	"    if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill')); });\n"
	"  matchedtxt.firstChild.nodeValue = ' '; searching = false;\n"
	"}\n"
	"function search_prompt() {\n"
	"  if (searching) { reset_search(); return; }\n"
	"  var term = prompt('Search for (regular expression):', '');\n"
	"  if (term) search(term);\n"
	"}\n"
	"function search(term) {\n"
	"  var re, total = parseFloat(document.getElementById('root').getAttribute('data-total'));\n"
	"  try { re = new RegExp(term); } catch (e) { alert('bad regular expression: ' + e); return; }\n"
	"  reset_search();\n"
	"  var spans = [];\n"
	"  document.querySelectorAll('g.f').forEach(function (g) {\n"
	"    var r = g.querySelector('rect');\n"
	"    if (!re.test(g.getAttribute('data-name'))) return;\n"
	"    r.setAttribute('data-fill', r.getAttribute('fill'));\n"
	"    r.setAttribute('fill', 'rgb(230,0,230)');\n"
	"    spans.push([parseFloat(r.getAttribute('x')), parseFloat(r.getAttribute('width')),\n"
	"                parseFloat(g.getAttribute('data-total'))]);\n"
	"  });\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var sum = 0, end = -1;\n"
	"  spans.forEach(function (s) { if (s[0] >= end) { sum += s[2]; end = s[0] + s[1]; } });\n"
	"  searching = true;\n"
	"  matchedtxt.firstChild.nodeValue = 'Matched: ' + (total ? (100 * sum / total).toFixed(1) : '0') + '%';\n"
	"}\n"
	"]]></script>\n";

int analysis_tree__flamegraph_svg(const struct analysis_tree *t, const char *title,
				  const char *unit, char **text, size_t *len)
{
	const struct analysis_node *nodes = t->nodes;
	const struct analysis_key *keys = t->names->keys;
	double *xs = NULL, scale;
	uint32_t maxdepth = 0, i, n, skipped = 0, too_deep = 0;
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
		"</style>\n%s"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"rgb(248,248,240)\"/>\n"
		"<text id=\"title\" x=\"%.0f\" y=\"24\">",
		FG_WIDTH, height, FG_WIDTH, height, fg_script, FG_WIDTH / 2);
	xml_text(out, title, 200);
	fprintf(out,
		"</text>\n"
		"<text id=\"search\" x=\"%.0f\" y=\"24\" text-anchor=\"end\" "
		"onclick=\"search_prompt()\">Search</text>\n"
		"<text id=\"matched\" x=\"%.0f\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%.0f\" y=\"%u\"> </text>\n",
		FG_WIDTH - FG_PAD, FG_WIDTH - FG_PAD, height - 10, FG_PAD, height - 10);

	for (i = 0; i < t->nnodes; i++) {
		const struct analysis_node *nd = &nodes[i];
		const char *name = i == 0 ? "all" : keys[nd->key].name;
		double w = (double)nd->total * scale, x = FG_PAD + xs[i];
		unsigned y = height - FG_BOTTOM - (nd->depth + 1) * FG_ROW;
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
		else
			color(&keys[nd->key], fill, sizeof(fill));
		fprintf(out, "<g class=\"f\"%s data-total=\"%" PRIu64 "\" data-name=\"",
			i == 0 ? " id=\"root\"" : "", nd->total);
		xml_text(out, name, SIZE_MAX);
		fputs("\"><title>", out);
		xml_text(out, name, SIZE_MAX);
		if (i > 0 && keys[nd->key].kind == ANALYSIS_KEY_KERNEL)
			fputs(" [k]", out);
		fprintf(out, " (%" PRIu64 " %s, %.2f%%; self %" PRIu64 ")</title>", nd->total,
			unit, total ? 100.0 * (double)nd->total / (double)total : 0.0, nd->self);
		fprintf(out,
			"<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
			"rx=\"2\" ry=\"2\"/>",
			x, y, w, FG_ROW - 1, fill);
		chars = (size_t)((w - 6) / FG_CHAR_PX);
		if (chars >= 3) {
			size_t nlen = strlen(name);

			fprintf(out, "<text x=\"%.2f\" y=\"%u\">", x + 3, y + 11);
			if (nlen <= chars) {
				xml_text(out, name, nlen);
			} else {
				xml_text(out, name, chars - 2);
				fputs("..", out);
			}
			fputs("</text>", out);
		}
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
	return err;
}
