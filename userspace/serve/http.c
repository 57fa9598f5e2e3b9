// SPDX-License-Identifier: MIT
/*
 * The HTTP side of `microscope serve` on libmicrohttpd: a fixed routing
 * table (the API endpoints and the built-in assets), GET/HEAD only,
 * ETags and If-None-Match, gzip for clients that take it (gzip.c),
 * bounded concurrency (serve.h's policy).
 *
 * Who owns what: serve__run owns the profiles and the daemon; handler
 * threads only read the profiles (immutable after load) and own each
 * response they build.  A request path is only ever compared with the
 * routing table; it never reaches the file system.
 *
 * libmicrohttpd is opened with dlopen when serve starts, not linked: it
 * brings GnuTLS, whose libraries every other command (a recording among
 * them) would carry as RSS (docs/recorder-memory.md).
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "internal.h"
#include "serve.h"
#include "web_assets.h"

extern char **environ;

/* libmicrohttpd's entry points (mhd__load; all or none). */
static struct {
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_get_connection_values_n) *get_connection_values_n;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_stop_daemon) *stop_daemon;
} mhd;

/* Opens libmicrohttpd and resolves its entry points.  0 or -ENOTSUP. */
static int mhd__load(void)
{
	void *h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);

#define MHD_SYM(f) (mhd.f = (__typeof__(mhd.f))dlsym(h, "MHD_" #f))
	if (!h)
		return -ENOTSUP;
	if (!(MHD_SYM(lookup_connection_value) && MHD_SYM(create_response_from_buffer) &&
	      MHD_SYM(add_response_header) && MHD_SYM(queue_response) &&
	      MHD_SYM(destroy_response) && MHD_SYM(get_connection_values_n) &&
	      MHD_SYM(start_daemon) && MHD_SYM(get_daemon_info) &&
	      MHD_SYM(stop_daemon)))
		return -ENOTSUP;
#undef MHD_SYM
	return 0;
}

struct server {
	struct serve_live live;	       /* the capture or segment directory served */
	const char *source_dir;	       /* --source-dir, or NULL */
	struct serve_profile *base;    /* --diff, or NULL */
	bool loopback_only;
	uint16_t port;
};

static const char security_headers[][2][64] = {
	{ "X-Content-Type-Options", "nosniff" },
	{ "X-Frame-Options", "DENY" },
	{ "Referrer-Policy", "no-referrer" },
};

static bool addr_is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
			return true;
		if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
			return in6->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	const struct server *s = cls;

	if (!s->loopback_only)
		return MHD_YES;
	return addr && addr_is_loopback(addr) ? MHD_YES : MHD_NO;
}

/*
 * With the default loopback bind, a Host header naming another site is a
 * DNS-rebinding page talking to us: only loopback names are accepted.
 */
static bool host_allowed(const struct server *s, struct MHD_Connection *conn)
{
	const char *host = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	static const char *const names[] = { "127.0.0.1", "localhost", "[::1]" };
	size_t i, n;

	if (!s->loopback_only)
		return true;
	if (!host)
		return false;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		n = strlen(names[i]);
		if (!strncmp(host, names[i], n) && (host[n] == '\0' || host[n] == ':'))
			return true;
	}
	return false;
}

static enum MHD_Result queue(struct MHD_Connection *conn, unsigned status, const void *body,
			     size_t len, enum MHD_ResponseMemoryMode mode, const char *type,
			     const char *etag, const char *cache)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	char gz_etag[96];
	bool gz = false;
	void *packed;
	size_t i, plen;

	/* A tagged answer of some size goes gzipped to a client that takes it,
	 * under its own tag; both representations say they vary by it. */
	if (status == MHD_HTTP_OK && etag && len >= SERVE_GZIP_MIN &&
	    serve_gzip__accepted(mhd.lookup_connection_value(conn, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_ACCEPT_ENCODING)) &&
	    !serve_gzip__etag(etag, gz_etag, sizeof(gz_etag)) &&
	    !serve_gzip__compress(body, len, &packed, &plen)) {
		if (plen < len) {
			if (mode == MHD_RESPMEM_MUST_FREE)
				free((void *)body);
			body = packed;
			len = plen;
			mode = MHD_RESPMEM_MUST_FREE;
			etag = gz_etag;
			gz = true;
		} else {
			free(packed);
		}
	}
	r = mhd.create_response_from_buffer(len, (void *)body, mode);
	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free((void *)body);
		return MHD_NO;
	}
	for (i = 0; i < sizeof(security_headers) / sizeof(security_headers[0]); i++)
		mhd.add_response_header(r, security_headers[i][0], security_headers[i][1]);
	mhd.add_response_header(r, "Content-Security-Policy", serve_csp);
	if (type)
		mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (etag)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ETAG, etag);
	if (etag && status == MHD_HTTP_OK)
		mhd.add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gz)
		mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	if (cache)
		mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		mhd.add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = mhd.queue_response(conn, status, r);
	mhd.destroy_response(r);
	return ret;
}

/* {"error": msg} with status. */
static enum MHD_Result queue_error(struct MHD_Connection *conn, unsigned status, const char *msg)
{
	char *body = NULL;
	json_t *o = json_pack("{s:s,s:i}", "error", msg, "status", (int)status);

	if (o)
		body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!body)
		return queue(conn, status, "", 0, MHD_RESPMEM_PERSISTENT, NULL, NULL, NULL);
	return queue(conn, status, body, strlen(body), MHD_RESPMEM_MUST_FREE,
		     "application/json", NULL, "no-store");
}

/*
 * The tag of If-None-Match that names this answer: its identity tag or its
 * gzip one (buf), or NULL.  A 304 carries the tag the client holds.
 */
static const char *etag_matches(struct MHD_Connection *conn, const char *etag, char *buf,
				size_t size)
{
	const char *inm = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, "If-None-Match");

	if (!inm)
		return NULL;
	if (strstr(inm, etag) || !strcmp(inm, "*"))
		return etag;
	if (!serve_gzip__etag(etag, buf, size) && strstr(inm, buf))
		return buf;
	return NULL;
}

struct arg_state {
	struct serve_query *q;
	char err[256];
	int rc;
	unsigned n;
};

static enum MHD_Result arg_cb(void *cls, enum MHD_ValueKind kind, const char *key,
			      size_t key_size, const char *value, size_t value_size)
{
	struct arg_state *st = cls;

	if (++st->n > SERVE_MAX_PARAMS) {
		snprintf(st->err, sizeof(st->err), "more than %d parameters", SERVE_MAX_PARAMS);
		st->rc = -EINVAL;
		return MHD_NO;
	}
	if ((key && strlen(key) != key_size) || (value && strlen(value) != value_size)) {
		snprintf(st->err, sizeof(st->err), "a parameter holds a NUL byte");
		st->rc = -EINVAL;
		return MHD_NO;
	}
	st->rc = serve_query__set(st->q, key, value, st->err, sizeof(st->err));
	return st->rc ? MHD_NO : MHD_YES;
}

static enum MHD_Result handle_api(struct server *s, struct MHD_Connection *conn,
				  enum serve_endpoint ep)
{
	static const char immutable[] = "public, max-age=31536000, immutable";
	struct serve_query q;
	struct arg_state st = { .q = &q };
	struct serve_app app = { .base = s->base, .source_dir = s->source_dir };
	/* A segment directory's answers change as segments come: revalidate. */
	const char *cache = immutable, *held;
	char etag[80], gz_etag[96], err[256];
	enum MHD_Result ret;
	char *body;
	size_t len;
	int rc;

	serve_query__init(&q, ep);
	mhd.get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, arg_cb, &st);
	if (!st.rc)
		st.rc = serve_query__finish(&q, st.err, sizeof(st.err));
	if (st.rc)
		return queue_error(conn, MHD_HTTP_BAD_REQUEST, st.err);
	/* One profile for the ETag and the answer, even if a rescan replaces it. */
	app.profile = serve_live__profile(&s->live);
	app.live = app.profile->segments > 0;
	if (app.live)
		cache = "no-cache";
	serve_api__etag(&app, &q, etag, sizeof(etag));
	held = etag_matches(conn, etag, gz_etag, sizeof(gz_etag));
	if (held) {
		ret = queue(conn, MHD_HTTP_NOT_MODIFIED, "", 0, MHD_RESPMEM_PERSISTENT, NULL, held,
			    cache);
		goto out;
	}
	rc = serve_api__answer(&app, &q, &body, &len, err, sizeof(err));
	if (rc == -EINVAL)
		ret = queue_error(conn, MHD_HTTP_BAD_REQUEST, err);
	else if (rc == -ENOENT)
		ret = queue_error(conn, MHD_HTTP_NOT_FOUND, err);
	else if (rc)
		ret = queue_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, err);
	else
		ret = queue(conn, MHD_HTTP_OK, body, len, MHD_RESPMEM_MUST_FREE,
			    "application/json", etag, cache);
out:
	serve_profile__put(app.profile);
	return ret;
}

static const struct serve_asset *find_asset(const char *url)
{
	size_t i;

	if (!strcmp(url, "/"))
		url = "/index.html";
	for (i = 0; i < serve_nassets; i++)
		if (!strcmp(url, serve_assets[i].path))
			return &serve_assets[i];
	return NULL;
}

/*
 * Before decoding: a path with an encoded NUL ("/index.html%00.js") would
 * decode to a shorter, different path; it is refused instead.  The value
 * returned becomes the request's context.
 */
/* libmicrohttpd's own messages: kept (the last one names why listening
 * failed) and, once serving, printed with our prefix. */
static char mhd_last_error[256];
static volatile int mhd_serving;

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	size_t n;

	(void)cls;
	vsnprintf(mhd_last_error, sizeof(mhd_last_error), fmt, ap);
	n = strlen(mhd_last_error);
	while (n && (mhd_last_error[n - 1] == '\n' || mhd_last_error[n - 1] == '.'))
		mhd_last_error[--n] = '\0';
	if (mhd_serving)
		fprintf(stderr, "microscope serve: %s\n", mhd_last_error);
}

/* *con_cls of a request: its path checked by uri_check (ok or bad), then
 * headers seen by the handler's first call (headers_seen). */
static int path_ok, path_bad, headers_seen;

static void *uri_check(void *cls, const char *uri, struct MHD_Connection *conn)
{
	size_t n = strcspn(uri, "?");
	const char *p;

	for (p = uri; p + 2 < uri + n; p++)
		if (p[0] == '%' && p[1] == '0' && p[2] == '0')
			return &path_bad;
	return &path_ok;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
			       const char *method, const char *version, const char *upload_data,
			       size_t *upload_data_size, void **con_cls)
{
	struct server *s = cls;
	const struct serve_asset *a;
	enum serve_endpoint ep;
	const char *held;
	char gz_etag[96];

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return queue_error(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD");
	/* A body is never read: refused as soon as one shows. */
	if (*upload_data_size)
		return queue_error(conn, MHD_HTTP_CONTENT_TOO_LARGE, "requests carry no body");
	if (*con_cls == &path_bad)
		return queue_error(conn, MHD_HTTP_BAD_REQUEST, "a NUL byte in the path");
	/* The first call comes with the headers; answered on the next, once
	 * the request is whole: a response queued before that makes
	 * libmicrohttpd close the connection ("Connection: close" on every
	 * answer), so a page's requests each paid a new connection. */
	if (*con_cls == &path_ok) {
		*con_cls = &headers_seen;
		return MHD_YES;
	}
	if (!host_allowed(s, conn))
		return queue_error(conn, MHD_HTTP_FORBIDDEN, "Host is not a loopback name");
	if (!serve_query__endpoint(url, &ep))
		return handle_api(s, conn, ep);
	a = find_asset(url);
	if (!a)
		return queue_error(conn, MHD_HTTP_NOT_FOUND, "no such page");
	held = etag_matches(conn, a->etag, gz_etag, sizeof(gz_etag));
	if (held)
		return queue(conn, MHD_HTTP_NOT_MODIFIED, "", 0, MHD_RESPMEM_PERSISTENT, NULL,
			     held, NULL);
	return queue(conn, MHD_HTTP_OK, a->data, a->len, MHD_RESPMEM_PERSISTENT, a->content_type,
		     a->etag, a->immutable ? "public, max-age=31536000, immutable" : "no-cache");
}

static void open_browser(const char *url)
{
	char *argv[] = { "xdg-open", (char *)url, NULL };
	pid_t pid;
	int rc = posix_spawnp(&pid, "xdg-open", NULL, NULL, argv, environ);

	if (rc) {
		fprintf(stderr, "microscope serve: --open: cannot run xdg-open (%s); open %s\n",
			strerror(rc), url);
		return;
	}
	waitpid(pid, NULL, 0);
}

int serve__run(const struct serve_options *opts)
{
	struct serve_profile *base = NULL;
	struct server srv = { .loopback_only = opts->loopback_only };
	struct timespec rescan = { .tv_sec = SERVE_RESCAN_S };
	bool live = false;
	struct sockaddr_storage ss = { 0 };
	struct MHD_Daemon *d = NULL;
	const union MHD_DaemonInfo *info;
	const char *bind = opts->bind ? opts->bind : "127.0.0.1";
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	char err[512], url[128];
	sigset_t set;
	int sig, rc;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, bind, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(opts->port);
	} else if (inet_pton(AF_INET6, bind, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(opts->port);
		flags |= MHD_USE_IPv6;
	} else {
		fprintf(stderr, "microscope serve: --bind: '%s' is not a numeric IP address\n",
			bind);
		return -EINVAL;
	}
	rc = mhd__load();
	if (rc) {
		const char *why = dlerror();

		fprintf(stderr, "microscope serve: cannot open libmicrohttpd.so.12: %s\n",
			why ? why : "entry points missing");
		return rc;
	}
	/* SIGINT/SIGTERM are taken by sigwait below; the daemon's threads inherit the mask. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* A live directory's first segment may be seconds away. */
	rc = serve_live__wait_first(opts->capture, &set);
	if (rc) {
		rc = rc > 0 ? 0 : rc; /* stopped while waiting: not a failure */
		goto cleanup;
	}
	rc = serve_live__open(&srv.live, opts->capture, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "microscope serve: %s\n", err);
		goto cleanup;
	}
	live = true;
	if (opts->diff) {
		rc = serve_profile__open(opts->diff, &base, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "microscope serve: --diff: %s\n", err);
			goto cleanup;
		}
	}
	srv.base = base;
	srv.source_dir = opts->source_dir;
	/* Queries allocate and free the same large arrays again and again: keep
	 * them in the heap rather than mapping fresh, zeroed pages each time
	 * (page faults were a fifth of a large query's CPU time).  Bounded: at
	 * most SERVE_THREADS queries hold such arrays at once. */
	mallopt(M_MMAP_THRESHOLD, SERVE_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, 2 * SERVE_MMAP_THRESHOLD);
	serve_profile__warm(srv.live.current);

	d = mhd.start_daemon(flags, opts->port, accept_policy, &srv, handler, &srv,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_THREAD_POOL_SIZE, (unsigned)SERVE_THREADS,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)SERVE_CONNECTION_LIMIT,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SERVE_CONNECTION_MEMORY,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)SERVE_CONNECTION_TIMEOUT,
			     MHD_OPTION_URI_LOG_CALLBACK, uri_check, NULL,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_END);
	if (!d) {
		rc = -EADDRNOTAVAIL;
		fprintf(stderr, "microscope serve: cannot listen on %s port %u: %s%s\n", bind,
			(unsigned)opts->port, mhd_last_error[0] ? mhd_last_error : "refused",
			errno == EADDRINUSE || strstr(mhd_last_error, "in use")
				? " (another server has it: choose another --port, or leave it out "
				  "for any free one)"
				: "");
		goto cleanup;
	}
	mhd_serving = 1;
	info = mhd.get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	srv.port = info ? info->port : opts->port;
	snprintf(url, sizeof(url), "http://%s%s%s:%u/", (flags & MHD_USE_IPv6) ? "[" : "", bind,
		 (flags & MHD_USE_IPv6) ? "]" : "", (unsigned)srv.port);
	printf("microscope serve: %s\n", url);
	fflush(stdout);
	if (opts->open)
		open_browser(url);
	/* Until SIGINT/SIGTERM; a segment directory is looked at again every
	 * SERVE_RESCAN_S seconds (on this thread: requests are never delayed). */
	for (;;) {
		sig = sigtimedwait(&set, NULL, &rescan);
		if (sig == SIGINT || sig == SIGTERM)
			break;
		if (sig < 0 && errno == EAGAIN)
			serve_live__rescan(&srv.live);
	}
	rc = 0;
cleanup:
	if (d)
		mhd.stop_daemon(d);
	serve_profile__free(base);
	if (live)
		serve_live__release(&srv.live);
	return rc;
}
