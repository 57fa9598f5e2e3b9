/* SPDX-License-Identifier: MIT */
/*
 * The front end's built files (web/, built by vite), compiled into the
 * binary by web/embed.py as $(OUTPUT)/gen/web_assets.c.  The table is the
 * only set of non-API paths the server answers; nothing is read from disk.
 */
#ifndef MS_SERVE_WEB_ASSETS_H
#define MS_SERVE_WEB_ASSETS_H

#include <stddef.h>

struct serve_asset {
	const char *path;	   /* request path, "/index.html", "/assets/index-1a2b.js" */
	const char *content_type;  /* "text/html; charset=utf-8", ... */
	const unsigned char *data;
	size_t len;
	const char *etag;	   /* quoted content hash */
	int immutable;		   /* name carries a content hash: cache forever */
};

extern const struct serve_asset serve_assets[];
extern const size_t serve_nassets;
/* The Content-Security-Policy of every answer: index.html's inline script
 * is allowed by its hash (web/embed.py inlines it). */
extern const char serve_csp[];

#endif
