// SPDX-License-Identifier: MIT
#include <string.h>

#include "record_options.h"

void record_options__init(struct record_options *o)
{
	memset(o, 0, sizeof(*o));
	o->freq_hz = MS_DEFAULT_FREQ_HZ;
	o->event = MS_EVENT_CPU_CLOCK;
	o->output = MS_DEFAULT_OUTPUT;
	o->ringbuf_bytes = 16u << 20;
	o->perf_pages = 64;
}
