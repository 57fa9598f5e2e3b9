/* SPDX-License-Identifier: MIT */
/*
 * Messages of the capture reader and validator (capture/reader.c,
 * capture/validate.c): "NAME: what was wrong" into a caller's buffer, with
 * untrusted bytes from the file made printable first.
 */
#ifndef MS_CAPTURE_MESSAGE_H
#define MS_CAPTURE_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

/* Write "name: " and the formatted text into err (if any); returns ret. */
__attribute__((format(printf, 5, 6))) int
capture_msg__fail(char *err, size_t errlen, const char *name, int ret, const char *fmt, ...);

/* s for a message: at most 48 bytes, non-printable bytes as '?'. */
const char *capture_msg__printable(const char *s, char buf[52]);

/* A chunk tag as text, e.g. "'STKS'", or its hex value when not printable. */
const char *capture_msg__tag(uint32_t tag, char buf[16]);

#endif
