/* SPDX-License-Identifier: MIT */
/*
 * Text from untrusted sources (process names, symbol names, paths, imported
 * profiles) written where its bytes could do harm: a terminal (escape
 * sequences: any process can name itself ESC ] ... with prctl), XML and
 * JSON (invalid UTF-8 makes the document unreadable).  Every exporter and
 * the terminal report go through these.
 */
#ifndef MS_CAPTURE_TEXT_H
#define MS_CAPTURE_TEXT_H

#include <stddef.h>
#include <stdio.h>

/*
 * Length of the valid UTF-8 sequence at s[avail] (1-4; RFC 3629: no
 * overlong forms, surrogates or code points above U+10FFFF), 0 if the
 * bytes are invalid, or -1 if they are a valid beginning cut by avail.
 */
int text__utf8_len(const unsigned char *s, size_t avail);

/*
 * Write at most max characters of s as XML character data or attribute
 * text: & < > " escaped, control characters (XML 1.0 forbids them) as a
 * space, each invalid UTF-8 byte as U+FFFD.  Returns characters written.
 */
size_t text__xml(FILE *out, const char *s, size_t max);

/*
 * A stream that forwards to under what is safe on a terminal: newline and
 * tab as they are, every other C0 control byte, DEL and C1 control
 * (U+0080-U+009F) as a visible "\xHH", every invalid UTF-8 byte as
 * "\xHH".  Sequences split across writes are handled.  Closing it flushes
 * under but does not close it.  NULL with errno on failure.
 */
FILE *text__terminal_stream(FILE *under);

#endif
