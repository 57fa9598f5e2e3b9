// SPDX-License-Identifier: MIT
/*
 * Messages of the capture reader and validator (see capture/message.h).
 */
#include <stdarg.h>
#include <stdio.h>

#include "capture/message.h"

int capture_msg__fail(char *err, size_t errlen, const char *name, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return ret;
	n = snprintf(err, errlen, "%s: ", name);
	if (n >= 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return ret;
}

const char *capture_msg__printable(const char *s, char buf[52])
{
	size_t i;

	for (i = 0; s[i] && i < 48; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s[i])
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}

const char *capture_msg__tag(uint32_t tag, char buf[16])
{
	char c[4];
	int i;

	for (i = 0; i < 4; i++) {
		c[i] = (char)(tag >> (8 * i));
		if (c[i] < 0x20 || c[i] >= 0x7f) {
			snprintf(buf, 16, "0x%08x", tag);
			return buf;
		}
	}
	snprintf(buf, 16, "'%c%c%c%c'", c[0], c[1], c[2], c[3]);
	return buf;
}
