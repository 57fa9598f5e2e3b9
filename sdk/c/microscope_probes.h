/* SPDX-License-Identifier: MIT */
/*
 * microscope probes: zones and marks a program writes for `microscope
 * record` to collect (docs/probes.md).
 *
 *	static struct microscope_site *work;
 *	work = microscope_probes_define("work");   // once; thread-safe
 *	microscope_zone_begin(work);
 *	...
 *	microscope_zone_end(work);
 *	microscope_mark(work, 42);
 *
 * Link build/libmicroscope_probes.a (or -lmicroscope_probes and the .so).
 * The header is C11 and C++11 (tests/fixtures/zones_cxx.cc).
 *
 * Protocol (the one definition; the recorder, userspace/collector/probes.c,
 * includes this header).  The library holds one process-global control
 * block, the exported symbol microscope_probes_control, which the recorder
 * finds in the ELF symbol table of the module that defines it:
 *   - the SDK writes magic, abi, size, the ring's address and size and the
 *     site table's address at start-up (a constructor), site_count as sites
 *     are defined (store-release after the site row), head and dropped as
 *     records are written;
 *   - the recorder (with process_vm_writev) writes heartbeat_ns
 *     (CLOCK_MONOTONIC of its last drain), timeout_ns, tail (slots before
 *     it were read), then enable = ON | ALL (every site, also those
 *     defined later), or ON with each selected site's own on word set to
 *     1 (record --probes: sites chosen by name); enable = 0 when it stops;
 *   - with a selection, when select is not 0, the recorder first writes
 *     its name prefixes there (each NUL-terminated, one after the other,
 *     an empty one last, within select_size bytes) and adds SELECT to
 *     enable: a site defined from then on is switched on by the SDK
 *     itself when its name starts with one of them, before the site is
 *     published, so its first zone is written (the recorder's own on
 *     words reach only sites it has read).
 * A writer with enable == 0 does nothing but that one relaxed load; with
 * ON but not ALL it also skips a site whose on word is 0.  An
 * enabled writer whose heartbeat is older than timeout_ns (reader killed or
 * stuck) sets enable = 0 and counts it in timeouts.  A writer that finds
 * the ring full (head - tail == ring_slots) drops its record and counts it
 * in dropped; nothing ever blocks.
 *
 * Ring slot i (index mod ring_slots) holds struct microscope_probes_record;
 * its seq is written last (store-release) as ((i + 1) << 16) | check, check
 * being microscope_probes_check() of the other fields, so a reader that
 * copies a slot while it is rewritten sees a mismatch and reads it later.
 * Times are CLOCK_MONOTONIC ns, the clock of microscope's samples.
 */
#ifndef MICROSCOPE_PROBES_H
#define MICROSCOPE_PROBES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MICROSCOPE_PROBES_MAGIC 0x31424f5250534d53ull /* "SMPROBE1" little-endian */
/* ABI 2: MICROSCOPE_PROBES_AFTER_DROP in a record's kind byte, and the
 * select buffer and sites_refused in a 136-byte control block.  ABI 1 (a
 * 128-byte block, never released) is not read. */
#define MICROSCOPE_PROBES_ABI 2
#define MICROSCOPE_PROBES_ABI_MIN 2

/* control.enable bits */
#define MICROSCOPE_PROBES_ON 1ull  /* a recorder reads this process */
#define MICROSCOPE_PROBES_ALL 2ull /* every site, without looking at its on word */
#define MICROSCOPE_PROBES_SELECT 4ull /* the prefixes in select are the recorder's */

/* The select buffer: room for 16 prefixes of a name's longest and the end. */
#define MICROSCOPE_PROBES_SELECT_BYTES 1024

/* Record kinds (site_kind & MICROSCOPE_PROBES_KIND_MASK). */
#define MICROSCOPE_PROBES_ZONE_BEGIN 1
#define MICROSCOPE_PROBES_ZONE_END 2
#define MICROSCOPE_PROBES_MARK 3
#define MICROSCOPE_PROBES_KIND_MASK 0x7fu
/* site_kind flag: the first record this thread wrote after it dropped one
 * or more (ring full).  Zone pairing then forgets the thread's open
 * begins: their ends may be among the dropped. */
#define MICROSCOPE_PROBES_AFTER_DROP 0x80u

/* Site table: at most this many sites; names longer than
 * MICROSCOPE_PROBES_NAME_MAX - 1 bytes are truncated. */
#define MICROSCOPE_PROBES_SITES_MAX 1024
#define MICROSCOPE_PROBES_NAME_MAX 56
/* Ring slots by default; MICROSCOPE_PROBES_RING_SLOTS in the environment
 * (a power of two, 16 .. 2^22) chooses another size at start-up. */
#define MICROSCOPE_PROBES_RING_DEFAULT 65536
#define MICROSCOPE_PROBES_RING_MIN 16
#define MICROSCOPE_PROBES_RING_MAX (1u << 22)
/* Set by `microscope record -- CMD` in CMD's environment: "PID:START", the
 * recorder's pid and start time (field 22 of /proc/PID/stat), and with
 * record --probes ":PREFIX,PREFIX...".  While that process runs, the SDK
 * turns writing on (ON | ALL, or ON | SELECT with the prefixes in its
 * select buffer; reader_pid = PID, heartbeat = its own start) in its
 * constructor, before the recorder finds it; the recorder then reads the
 * ring from its start (tail 0). */
#define MICROSCOPE_PROBES_RECORDER_ENV "MICROSCOPE_PROBES_RECORDER"
/* Reader timeout when the recorder gives none (ns). */
#define MICROSCOPE_PROBES_TIMEOUT_DEFAULT_NS 2000000000ull

struct microscope_probes_control {
	uint64_t magic;	       /* MICROSCOPE_PROBES_MAGIC */
	uint32_t abi;	       /* MICROSCOPE_PROBES_ABI */
	uint32_t size;	       /* sizeof(struct microscope_probes_control) */
	uint64_t enable;       /* recorder: MICROSCOPE_PROBES_*; recorder or writer: 0 off */
	uint64_t ring;	       /* address of ring_slots records, 0 before start-up */
	uint32_t ring_slots;   /* power of two */
	uint32_t record_size;  /* sizeof(struct microscope_probes_record) */
	uint64_t head;	       /* writers: next index to write */
	uint64_t tail;	       /* recorder: next index to read */
	uint64_t heartbeat_ns; /* recorder: CLOCK_MONOTONIC of its last drain */
	uint64_t timeout_ns;   /* recorder: heartbeat age that turns writing off, 0 default */
	uint64_t dropped;      /* writers: records dropped, ring full */
	uint64_t sites;	       /* address of the site table */
	uint32_t site_count;   /* sites defined */
	uint32_t site_max;     /* MICROSCOPE_PROBES_SITES_MAX */
	uint32_t site_size;    /* sizeof(struct microscope_site) */
	uint32_t timeouts;     /* writers: times writing was turned off after reader loss */
	uint64_t reader_pid;   /* recorder: its pid, 0 none */
	uint64_t select;       /* address of select_size bytes for the recorder's prefixes, 0 none */
	uint64_t select_size;  /* MICROSCOPE_PROBES_SELECT_BYTES */
	uint64_t sites_refused; /* writers: defines refused, the site table full */
};

struct microscope_probes_record {
	uint64_t seq;	    /* ((index + 1) << 16) | check, written last */
	uint64_t time_ns;   /* CLOCK_MONOTONIC */
	uint64_t value;	    /* mark value; 0 for zones */
	uint32_t tid;	    /* gettid() */
	uint32_t site_kind; /* site id << 8 | [AFTER_DROP] | MICROSCOPE_PROBES_* kind */
};

struct microscope_site {
	char name[MICROSCOPE_PROBES_NAME_MAX]; /* NUL-terminated */
	uint32_t id;			       /* index in the site table */
	uint32_t on;			       /* recorder: 1 records this site (without ALL) */
};

/* C11 and C++11 (the header compiles as either, inside extern "C") */
#ifdef __cplusplus
#define MICROSCOPE_PROBES_ASSERT static_assert
#else
#define MICROSCOPE_PROBES_ASSERT _Static_assert
#endif
MICROSCOPE_PROBES_ASSERT(sizeof(struct microscope_probes_control) == 136, "control size");
MICROSCOPE_PROBES_ASSERT(sizeof(struct microscope_probes_record) == 32, "record size");
MICROSCOPE_PROBES_ASSERT(sizeof(struct microscope_site) == 64, "site size");

/* The 16-bit check of a record's fields (seq's low bits). */
static inline uint64_t microscope_probes_check(uint64_t time_ns, uint64_t value, uint32_t tid,
					       uint32_t site_kind)
{
	uint64_t x = time_ns ^ (value * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)tid << 32 | site_kind);

	x ^= x >> 32;
	x ^= x >> 16;
	return x & 0xffff;
}

extern struct microscope_probes_control microscope_probes_control;

/*
 * The site called name (defined on first use; the same pointer for the
 * same name).  Thread-safe.  Names are cut to MICROSCOPE_PROBES_NAME_MAX - 1
 * (55) bytes: two names alike in those bytes are one site.  NULL when the
 * table is full (MICROSCOPE_PROBES_SITES_MAX, 1024 sites; counted in
 * sites_refused, the recorder's probes.sites_refused); every call taking a
 * site accepts NULL and does nothing.
 */
struct microscope_site *microscope_probes_define(const char *name);
/* A zone of site begins / ends on the calling thread. */
void microscope_zone_begin(struct microscope_site *site);
void microscope_zone_end(struct microscope_site *site);
/* A point event with a value. */
void microscope_mark(struct microscope_site *site, uint64_t value);
/* 1 while a recorder reads this process, else 0 (one relaxed load). */
int microscope_probes_enabled(void);
/* Records dropped because the ring was full; times writing turned off
 * after the recorder stopped answering. */
uint64_t microscope_probes_dropped(void);
uint32_t microscope_probes_timeouts(void);
/* Defines refused because the site table was full. */
uint64_t microscope_probes_sites_refused(void);

#ifdef __cplusplus
}
#endif
#endif
