// SPDX-License-Identifier: MIT
/*
 * C++ (Itanium ABI) demangling for display, through libstdc++'s C entry
 * point __cxa_demangle (cxxabi.h).  libstdc++ is opened with dlopen at the
 * first mangled name, not linked: its relocated tables were 1 MiB of every
 * command's RSS, a recording's among them (docs/recorder-memory.md).
 * Without it names are shown raw.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/demangle.h"

/* libstdc++ <cxxabi.h>, declared here to stay in C: returns a malloc'd
 * string, or NULL with *status -1 (memory), -2 (not a mangled name) or -3. */
typedef char *cxa_demangle_fn(const char *mangled, char *out, size_t *len, int *status);

static cxa_demangle_fn *cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void cxa__load(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);

	if (h)
		cxa_demangle = (cxa_demangle_fn *)dlsym(h, "__cxa_demangle");
}

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
		pthread_once(&cxa_once, cxa__load);
		if (len < sizeof(raw) && cxa_demangle) {
			memcpy(raw, name, len);
			raw[len] = '\0';
			suffix = at ? at : "";
			d = cxa_demangle(raw, NULL, NULL, &status);
		}
	}
	if (d && status == 0)
		n = snprintf(buf, size, "%s%s", d, suffix);
	else
		n = snprintf(buf, size, "%s", name);
	free(d);
	return n < 0 ? 0 : (size_t)n;
}
