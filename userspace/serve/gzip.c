// SPDX-License-Identifier: MIT
/*
 * Content-Encoding: gzip for `microscope serve`'s answers (zlib): whether
 * a request's Accept-Encoding takes it, the compressed body, and the ETag
 * of that representation (a different tag than the identity body's, so a
 * cache never confuses the two).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "internal.h"
#include "serve.h"

/*
 * Accept-Encoding names gzip (or "*") without q=0: "gzip, deflate, br"
 * yes; "identity", "gzip;q=0", "gzip; q=0.000" no.
 */
bool serve_gzip__accepted(const char *accept)
{
	const char *p = accept, *end, *q;
	size_t n;

	while (p && *p) {
		p += strspn(p, " \t,");
		end = p + strcspn(p, ",");
		n = strcspn(p, ";, \t");
		if ((n == 4 && !strncasecmp(p, "gzip", 4)) || (n == 1 && *p == '*')) {
			q = strchr(p, ';');
			if (!q || q > end)
				return true;
			q += strspn(q + 1, " \t") + 1;
			if (strncasecmp(q, "q=", 2))
				return true;
			q += 2;
			/* q=0, q=0., q=0.0... refuse; anything else (0.5, 1) takes it. */
			if (*q != '0')
				return true;
			for (q++, q += (*q == '.'); q < end && *q == '0'; q++)
				;
			if (q < end && *q >= '1' && *q <= '9')
				return true;
			return false;
		}
		p = *end ? end + 1 : end;
	}
	return false;
}

int serve_gzip__compress(const void *in, size_t len, void **out, size_t *outlen)
{
	z_stream z = { 0 };
	unsigned char *buf;
	size_t cap;
	int rc = -ENOMEM;

	*out = NULL;
	if (len > (size_t)UINT32_MAX)
		return -EFBIG;
	/* windowBits 15 + 16: a gzip header; memLevel 8: 256 KiB of state, held
	 * by at most SERVE_THREADS answers at once. */
	if (deflateInit2(&z, SERVE_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	cap = deflateBound(&z, len);
	buf = malloc(cap);
	if (!buf)
		goto cleanup;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = buf;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		rc = -EIO;
		goto cleanup;
	}
	*outlen = cap - z.avail_out;
	*out = buf;
	buf = NULL;
	rc = 0;
cleanup:
	free(buf);
	deflateEnd(&z);
	return rc;
}

int serve_gzip__etag(const char *etag, char *out, size_t outlen)
{
	size_t n = strlen(etag);

	/* "tag" -> "tag-gz" */
	if (n < 2 || etag[n - 1] != '"' || n + 4 > outlen)
		return -EINVAL;
	memcpy(out, etag, n - 1);
	memcpy(out + n - 1, "-gz\"", 5);
	return 0;
}
