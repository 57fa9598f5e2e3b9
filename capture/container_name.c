// SPDX-License-Identifier: MIT
/* Container names as tools show them (capture.h: capture__container_name). */
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"

#define SHORT_ID_LEN 12 /* docker's short container ids */

bool capture__container_name(const struct capture *c, uint32_t cg, char *buf, size_t size,
			     const char **runtime)
{
	const char *id;
	size_t n;

	if (size)
		buf[0] = '\0';
	if (runtime)
		*runtime = "";
	if (cg == CAPTURE_NONE || cg >= c->ncgroups)
		return false;
	id = capture__string(c, c->cgroups[cg].container);
	if (!id[0])
		return false;
	n = strlen(id);
	if (n > SHORT_ID_LEN && strspn(id, "0123456789abcdef") == n)
		n = SHORT_ID_LEN;
	snprintf(buf, size, "%.*s", (int)n, id);
	if (runtime)
		*runtime = capture__string(c, c->cgroups[cg].runtime);
	return true;
}
