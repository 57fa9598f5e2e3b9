// SPDX-License-Identifier: MIT
/* The meta "budget.duty_changes" list (duty.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "duty.h"

/* A decimal u64 at *p, advancing p; false if none or it overflows. */
static bool parse_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*v = x;
	return true;
}

int capture_duty__parse(const char *text, struct capture_duty_change *out, uint32_t max,
			char *err, size_t errlen)
{
	const char *p = text;
	uint64_t prev = 0;
	int n = 0;

	if (!*p) {
		snprintf(err, errlen, "empty list");
		return -EBADMSG;
	}
	for (;;) {
		uint64_t t, f;

		if (!parse_u64(&p, &t) || *p++ != ':' || !parse_u64(&p, &f)) {
			snprintf(err, errlen, "entry %d: not TIME:FACTOR", n);
			return -EBADMSG;
		}
		if (!f || f > UINT32_MAX) {
			snprintf(err, errlen, "entry %d: factor %llu out of range (1..4294967295)", n,
				 (unsigned long long)f);
			return -EBADMSG;
		}
		if (t < prev) {
			snprintf(err, errlen, "entry %d: time %llu before the previous entry's", n,
				 (unsigned long long)t);
			return -EBADMSG;
		}
		if (n == INT32_MAX) {
			snprintf(err, errlen, "too many entries");
			return -EBADMSG;
		}
		if ((uint32_t)n < max)
			out[n] = (struct capture_duty_change){ .time_ns = t, .factor = (uint32_t)f };
		prev = t;
		n++;
		if (!*p)
			return n;
		if (*p++ != ',') {
			snprintf(err, errlen, "entry %d: junk after it", n - 1);
			return -EBADMSG;
		}
	}
}
