/* SPDX-License-Identifier: MIT */
/*
 * `microscope serve`: an HTTP server over one capture or segment
 * directory (and optionally a second capture to diff against) for the
 * browser pages in web/.
 *
 * The contract with the CLI: the CLI parses options into struct
 * serve_options and calls serve__run(), which loads the captures, serves
 * until SIGINT or SIGTERM and returns.  What the server answers:
 *   - /api/<endpoint>?key=value...  typed queries (query.h, docs/api.md),
 *     answered by analysis/ over the loaded captures; JSON; 400 with a
 *     {"error": "..."} body for a bad query;
 *   - the built-in front-end assets (a fixed table compiled into the
 *     binary, web_assets.h), "/" being index.html;
 *   - 404 for every other path: no request path ever reaches the file
 *     system.  Only GET and HEAD; every response carries an ETag; it is
 *     immutable for a capture file; for a segment directory (reread every
 *     SERVE_RESCAN_S when its segments change, live.c) it is revalidated.
 */
#ifndef MS_SERVE_H
#define MS_SERVE_H

#include <stdbool.h>
#include <stdint.h>

/* Policy: concurrency bounds (libmicrohttpd options). */
#define SERVE_THREADS 2		      /* worker threads: queries computed at once */
#define SERVE_CONNECTION_LIMIT 256    /* open connections; more are refused */
#define SERVE_CONNECTION_MEMORY 65536 /* bytes per connection (request line + headers) */
#define SERVE_CONNECTION_TIMEOUT 15   /* seconds of inactivity */
#define SERVE_MMAP_THRESHOLD (256 << 20) /* bytes: smaller query arrays stay in the heap */
#define SERVE_RESCAN_S 2	      /* seconds between looks at a segment directory */
#define SERVE_FIRST_SEGMENT_MS 200    /* ms between looks for a directory's first segment */
/* Policy: Content-Encoding gzip for clients that accept it (gzip.c). */
#define SERVE_GZIP_MIN 1024	      /* bytes: smaller answers go as they are */
#define SERVE_GZIP_LEVEL 1	      /* zlib level: JSON shrinks 5-8x at 1-3 ms per 300 KB */

struct serve_options {
	const char *capture;   /* path of the capture, or of a segment directory, to serve */
	const char *diff;      /* path of a capture to diff against (the base), or NULL */
	const char *bind;      /* numeric IPv4/IPv6 address; "127.0.0.1" by default */
	const char *source_dir; /* relative source paths of the capture are read below it, or NULL */
	uint16_t port;	       /* 0: any free port */
	bool open;	       /* start a browser (xdg-open) on the URL */
	bool loopback_only;    /* refuse peers that are not loopback (set unless --bind) */
};

/*
 * Load the captures and serve until SIGINT/SIGTERM.  Prints
 * "microscope serve: http://ADDR:PORT/" on stdout once listening.  A
 * segment directory with no segment yet is first waited for (a note on
 * stderr; SIGINT/SIGTERM then return 0 without serving).
 * Returns 0, or -errno with a message on stderr (a capture that does not
 * open, an address that cannot be bound).
 */
int serve__run(const struct serve_options *opts);

#endif
