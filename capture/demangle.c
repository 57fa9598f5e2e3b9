// SPDX-License-Identifier: MIT
/*
 * C++ (Itanium ABI) demangling for display, through libstdc++'s C entry
 * point __cxa_demangle (cxxabi.h; linked with -lstdc++).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/demangle.h"

/* libstdc++ <cxxabi.h>, declared here to stay in C: returns a malloc'd
 * string, or NULL with *status -1 (memory), -2 (not a mangled name) or -3. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* Longest raw name we try to demangle (bytes); longer ones are shown raw. */
#define DEMANGLE_MAX_INPUT 4096

size_t capture__demangle(const char *name, char *buf, size_t size)
{
	char raw[DEMANGLE_MAX_INPUT];
	const char *at, *suffix = "";
	char *d = NULL;
	size_t len;
	int status = 0, n;

	if (name[0] == '_' && name[1] == 'Z') {
		at = strchr(name, '@');
		len = at ? (size_t)(at - name) : strlen(name);
		if (len < sizeof(raw)) {
			memcpy(raw, name, len);
			raw[len] = '\0';
			suffix = at ? at : "";
			d = __cxa_demangle(raw, NULL, NULL, &status);
		}
	}
	if (d && status == 0)
		n = snprintf(buf, size, "%s%s", d, suffix);
	else
		n = snprintf(buf, size, "%s", name);
	free(d);
	return n < 0 ? 0 : (size_t)n;
}
