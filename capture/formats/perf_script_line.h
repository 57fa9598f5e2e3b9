/* SPDX-License-Identifier: MIT */
/*
 * The lines of `perf script` text (private to perf_script_import.c and
 * perf_script_line.c).  perf prints a sample as a header line of the -F
 * fields it was asked for, in this order (tools/perf/builtin-script.c,
 * perf_sample__fprintf_start and process_event), each with its printf width:
 *	[COMM]      "%s " with a callchain, else "%16s " (may hold spaces)
 *	[PID[/TID]] "%5d/%-5d ", "%5d " (perf >= 6.2: %7d)
 *	[CPU]       "[%03d] "
 *	[TIME]      "%12s: " (SECONDS.USECS) or "%5lu.%09llu: " (--ns)
 *	[PERIOD]    "%10" PRIu64 " "
 *	[EVENT]     "%*s: " (the name, right-aligned to the longest)
 *	[ADDR]      "%16" PRIx64
 *	[IP ...]    with a callchain: '\n' then one line per frame,
 *	            "\t%16" PRIx64 " SYM[+0xOFF] (DSO)" innermost first, then a
 *	            blank line; without one: ' ' "%16" PRIx64 " SYM (DSO)" and
 *	            the end of the line
 * The widths tell the bare numbers apart: a PID/TID field is 5 to 7
 * columns wide, a period 10, an address 16, the sample's own IP 16 after
 * ADDR and 17 after any other field (its ' ' and the previous field's).
 */
#ifndef MS_CAPTURE_FORMATS_PERF_SCRIPT_LINE_H
#define MS_CAPTURE_FORMATS_PERF_SCRIPT_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The header fields perf printed (a "shape": every header of one event has the same). */
enum ps_field {
	PS_F_COMM = 1u << 0,
	PS_F_PID = 1u << 1, /* PID or PID/TID */
	PS_F_TID = 1u << 2, /* PID/TID, or a lone number that could be either */
	PS_F_CPU = 1u << 3,
	PS_F_TIME = 1u << 4,
	PS_F_PERIOD = 1u << 5,
	PS_F_EVENT = 1u << 6,
	PS_F_ADDR = 1u << 7,
};

struct ps_header {
	unsigned fields; /* enum ps_field bits */
	const char *comm;
	size_t comm_len;
	uint32_t pid, tid;
	uint64_t time_ns;
	uint64_t period; /* 0 if absent */
	const char *event; /* the name up to its first ':' */
	size_t event_len;
	const char *ip; /* the sample's own "IP SYM (DSO)" (no callchain), or NULL */
	size_t ip_len;
	bool extra; /* text after the fields that is no IP (weight, a tracepoint's, ...) */
	const char *rest; /* that text (trimmed; to the line's end), or NULL */
};

/*
 * Parse line[len] (no '\n') as a sample header into *h.  False for a
 * blank line or one that starts with a TAB (a callchain line).  Any other
 * line parses: what precedes the first field is COMM, so a header of COMM
 * alone (-F comm,ip,sym) or text that is no header at all gives fields ==
 * PS_F_COMM (the caller's shape and callchain checks decide).
 */
bool ps_header__parse(const char *line, size_t len, struct ps_header *h);

/* Whether line[len] is a callchain line: TAB, spaces, a hex IP, then a space or the end. */
bool ps_line__is_frame(const char *line, size_t len);

/* Whether h has a field no folded line has: a time, CPU, its own IP, or an
 * event name ending the line (a folded "frame: 3" has one and a count). */
bool ps_header__is_distinct(const struct ps_header *h);

/* The names of the fields in shape (enum ps_field bits), "comm,tid,time", into buf. */
void ps_shape__name(unsigned shape, char *buf, size_t size);

bool ps__parse_u64(const char *s, size_t n, unsigned base, uint64_t *v);

#endif
