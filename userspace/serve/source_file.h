/* SPDX-License-Identifier: MIT */
/*
 * Private to userspace/serve: which source files the source view
 * (/api/source) shows, and reading one.  The one statement of the policy.
 *
 * The file names come from the capture, and a capture is hostile input (it
 * can be a converted pprof naming /etc/shadow); serve often runs as root.
 * So a name is shown only when the file it reaches is one anybody on the
 * host could read anyway, or one below the directory the user offered:
 *
 *  1. the name is absolute, or relative (DWARF's names are relative to the
 *     build's directory, which the capture does not keep) and then read below
 *     --source-dir with no ".." component;
 *  2. it is a regular file (stat'ed before it is opened, so no device or
 *     FIFO is ever opened; checked again on the descriptor), of at most
 *     SERVE_MAX_SOURCE_BYTES, holding no NUL byte;
 *  3. the file actually opened (its path read back from /proc/self/fd, so
 *     symbolic links are followed but every rule applies to their target: a
 *     "x.c" linking to /etc/shadow is /etc/shadow) has a source file name
 *     extension of SERVE_SOURCE_EXTENSIONS (source_file.c);
 *  4. and either it lies below --source-dir (real paths compared: the user
 *     vouches for that tree, whatever the files' modes), or it is readable by
 *     every user: mode o+r, and every directory above it o+x.  So secrets
 *     (0600/0640 files, anything under a 0700 home) are never served.
 *
 * Otherwise the text is left out and the answer says why, beginning
 * "source not served: " (the page shows it).  The CLI never reads source
 * files (report and convert print the capture's file:line only).
 */
#ifndef MS_SERVE_SOURCE_FILE_H
#define MS_SERVE_SOURCE_FILE_H

#include <stddef.h>

/*
 * The whole text of the file path names (below dir, the --source-dir or
 * NULL, if relative) into *buf (malloc'd, NUL-terminated, *len bytes) when
 * the policy above allows it.  Returns 0; or -errno with *buf NULL and *why
 * a static message saying why ("source not served: ..."); -ENOMEM alone
 * leaves *why unset.
 */
int serve_source__read(const char *dir, const char *path, char **buf, size_t *len,
		       const char **why);

#endif
