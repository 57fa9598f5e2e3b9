/* SPDX-License-Identifier: MIT */
/*
 * Sampling duty changes of a recording made with record --budget: meta key
 * "budget.duty_changes", value "TIME:FACTOR[,TIME:FACTOR...]" where TIME is
 * CLOCK_MONOTONIC ns (decimal u64, non-decreasing) at which the sampling
 * period became FACTOR (decimal, 1..4294967295) times the event's period.
 * Samples stamped at or after TIME carry weight FACTOR until the next change
 * (docs/capture-format.md, "Sampling duty").
 */
#ifndef MS_CAPTURE_DUTY_H
#define MS_CAPTURE_DUTY_H

#include <stddef.h>
#include <stdint.h>

#define CAPTURE_META_DUTY_CHANGES "budget.duty_changes"

struct capture_duty_change {
	uint64_t time_ns;
	uint32_t factor;
	uint32_t reserved;
};

/*
 * Parse text (the meta value) into out[0..max) (out may be NULL with max 0
 * to only check and count).  Returns the number of changes (all of them,
 * even past max), or -EBADMSG with a reason in err ("entry 3: factor 0").
 */
int capture_duty__parse(const char *text, struct capture_duty_change *out, uint32_t max,
			char *err, size_t errlen);

#endif
