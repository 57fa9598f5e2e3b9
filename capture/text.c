// SPDX-License-Identifier: MIT
/* Untrusted text made safe for terminals, XML and JSON (text.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

int text__utf8_len(const unsigned char *s, size_t avail)
{
	size_t n, i;

	if (!avail)
		return -1;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if (i >= avail)
			return -1;
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		/* overlong 3/4-byte forms, surrogates, > U+10FFFF: known from s[1] */
		if (i == 1 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
			       (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
			return 0;
	}
	return (int)n;
}

size_t text__xml(FILE *out, const char *str, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t chars = 0, left = strlen(str);

	while (left && chars < max) {
		int n = text__utf8_len(s, left);

		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			if (n <= 0) {
				fputs("\xef\xbf\xbd", out); /* U+FFFD */
				n = 1;
			} else if (*s < 0x20 || *s == 0x7f ||
				   (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
				fputc(' ', out); /* XML 1.0 forbids C0; C1 and DEL are discouraged */
			} else {
				fwrite(s, 1, (size_t)n, out);
			}
		}
		if (n <= 0)
			n = 1;
		s += n;
		left -= (size_t)n;
		chars++;
	}
	return chars;
}

/* ---- terminal ------------------------------------------------------------- */

struct term {
	FILE *under;
	unsigned char pend[4]; /* the start of a UTF-8 sequence cut by a write */
	size_t npend;
};

static void term__escape(struct term *t, unsigned char b)
{
	fprintf(t->under, "\\x%02x", b);
}

/* Emit s[len]; an incomplete sequence at the end stays pending when more may come. */
static void term__emit(struct term *t, const unsigned char *s, size_t len, int final)
{
	while (len) {
		int n = text__utf8_len(s, len);

		if (n < 0 && !final && len < sizeof(t->pend)) {
			memcpy(t->pend, s, len);
			t->npend = len;
			return;
		}
		if (n <= 0) {
			term__escape(t, *s);
			n = 1;
		} else if (n == 1 && ((*s < 0x20 && *s != '\n' && *s != '\t') || *s == 0x7f)) {
			term__escape(t, *s);
		} else if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) {
			term__escape(t, s[1]); /* C1 control: CSI, OSC... as 8-bit codes */
		} else {
			fwrite(s, 1, (size_t)n, t->under);
		}
		s += n;
		len -= (size_t)n;
	}
}

static ssize_t term__write(void *cookie, const char *buf, size_t size)
{
	struct term *t = cookie;
	const unsigned char *s = (const unsigned char *)buf;
	size_t done = 0;

	/* complete a pending sequence byte by byte first */
	while (t->npend && done < size) {
		unsigned char tmp[4];
		size_t n = t->npend;
		int len;

		memcpy(tmp, t->pend, n);
		tmp[n] = s[done];
		len = text__utf8_len(tmp, n + 1);
		if (len < 0 && n + 1 < sizeof(tmp)) {
			t->pend[n] = s[done++];
			t->npend = n + 1;
			continue;
		}
		t->npend = 0;
		if (len > 0) {
			done++;
			term__emit(t, tmp, n + 1, 1);
		} else {
			term__emit(t, tmp, n, 1); /* escapes the invalid start; s[done] stays */
		}
	}
	term__emit(t, s + done, size - done, 0);
	return ferror(t->under) ? -1 : (ssize_t)size;
}

static int term__close(void *cookie)
{
	struct term *t = cookie;
	int err;

	if (t->npend)
		term__emit(t, t->pend, t->npend, 1);
	err = fflush(t->under);
	free(t);
	return err;
}

FILE *text__terminal_stream(FILE *under)
{
	cookie_io_functions_t io = {.write = term__write, .close = term__close};
	struct term *t = calloc(1, sizeof(*t));
	FILE *f;

	if (!t)
		return NULL;
	t->under = under;
	f = fopencookie(t, "w", io);
	if (!f)
		free(t);
	return f;
}
