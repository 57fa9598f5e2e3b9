// SPDX-License-Identifier: MIT
/* Recording presets: named bundles of RecordOptions (record_options.h). */
#include <errno.h>
#include <string.h>

#include "record_options.h"

struct preset {
	const char *name;
	uint32_t freq_hz;
	uint32_t call_graph;
	uint32_t stack_size; /* bytes */
	double budget_pct;   /* percent of one CPU (record --budget) */
	bool off_cpu;	     /* --off-cpu */
	bool system_wide;    /* -a unless a command or -p is given */
	uint64_t segment_ns; /* --segment, 0 = MS_DEFAULT_SEGMENT_NS */
	uint32_t drain_wait_ms; /* record_options.drain_wait_ms */
	uint32_t py_wake_ms;	/* record_options.py_wake_ms */
};

static const struct preset presets[] = {
	{ "light", 99, MS_CALL_GRAPH_FP, 0, 1, false },
	{ "default", MS_DEFAULT_FREQ_HZ, MS_CALL_GRAPH_AUTO, 16384, 25, false },
	{ "detailed", 999, MS_CALL_GRAPH_DWARF, 65536, 50, true },
	/* Always on: the recorder sleeps until records fill a quarter of a
	 * ring, something changes or a second passed (about 1 wakeup a second
	 * on an idle host instead of 50); Python samples wake it 4 times a
	 * second at most, so code objects living less than about 0.25 s
	 * may be named "[python code unreadable]". */
	{ "production", 97, MS_CALL_GRAPH_AUTO, 16384, 1, false, true, 60ull * 1000000000, 1000,
	  250 },
};

const char *const record_options__preset_names[] = { "light", "default", "detailed", "production",
						     NULL };

int record_options__apply_preset(struct record_options *o, const char *name, uint32_t explicit)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		const struct preset *p = &presets[i];

		if (strcmp(p->name, name))
			continue;
		if (!(explicit & MS_OPT_SET_FREQ))
			o->freq_hz = p->freq_hz;
		if (!(explicit & MS_OPT_SET_CALL_GRAPH))
			o->call_graph = p->call_graph;
		if (!(explicit & MS_OPT_SET_STACK_SIZE))
			o->stack_size = p->stack_size;
		if (!(explicit & MS_OPT_SET_BUDGET))
			o->budget_pct = p->budget_pct;
		if (!(explicit & MS_OPT_SET_OFF_CPU))
			o->off_cpu = p->off_cpu;
		if (p->system_wide && !o->argv && !o->npids && !o->replay)
			o->system_wide = true;
		if (!(explicit & MS_OPT_SET_SEGMENT))
			o->segment_ns = p->segment_ns ? p->segment_ns : MS_DEFAULT_SEGMENT_NS;
		o->drain_wait_ms = p->drain_wait_ms;
		o->py_wake_ms = p->py_wake_ms;
		o->preset = p->name;
		return 0;
	}
	return -EINVAL;
}
