// SPDX-License-Identifier: MIT
/*
 * The probes SDK (microscope_probes.h states the protocol).  Nothing here
 * blocks or allocates on the writing path: a record is a slot reserved by
 * compare-and-swap on head (never past tail + ring_slots, so the reader
 * never meets a gap), filled, and published by its seq word.  The ring is
 * an anonymous mapping made at start-up: its pages cost nothing until a
 * recorder enables writing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "microscope_probes.h"

__attribute__((visibility("default"), used)) struct microscope_probes_control
	microscope_probes_control = {
		.magic = MICROSCOPE_PROBES_MAGIC,
		.abi = MICROSCOPE_PROBES_ABI,
		.size = sizeof(struct microscope_probes_control),
		.record_size = sizeof(struct microscope_probes_record),
		.site_max = MICROSCOPE_PROBES_SITES_MAX,
		.site_size = sizeof(struct microscope_site),
	};

static struct microscope_site sites[MICROSCOPE_PROBES_SITES_MAX];
/* Written by the recorder (process_vm_writev), read at define time. */
static char select_prefixes[MICROSCOPE_PROBES_SELECT_BYTES];
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread uint32_t my_tid;
/* This thread dropped a record since it last wrote one: its next record
 * carries MICROSCOPE_PROBES_AFTER_DROP. */
static __thread uint32_t my_dropped;

#define CTL (&microscope_probes_control)

static uint32_t ring_slots_wanted(void)
{
	const char *s = getenv("MICROSCOPE_PROBES_RING_SLOTS");
	unsigned long n;
	char *end;

	if (!s || !*s)
		return MICROSCOPE_PROBES_RING_DEFAULT;
	n = strtoul(s, &end, 10);
	if (*end || n < MICROSCOPE_PROBES_RING_MIN || n > MICROSCOPE_PROBES_RING_MAX ||
	    (n & (n - 1)))
		return MICROSCOPE_PROBES_RING_DEFAULT;
	return (uint32_t)n;
}

/* A forked child starts with writing off: its ring is its own copy, read
 * only once a recorder finds the child (and starts at its head). */
static void microscope_probes__child(void)
{
	__atomic_store_n(&CTL->enable, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&CTL->heartbeat_ns, 0, __ATOMIC_RELAXED);
}

static uint64_t mono_ns(void);

/* The start time (field 22 of /proc/PID/stat) of pid, 0 if unknown. */
static unsigned long long proc_start(long pid)
{
	char path[64], stat[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	stat[n] = 0;
	p = strrchr(stat, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

/* "a,b" (record --probes) into the select buffer as the recorder writes
 * it: each prefix NUL-terminated, then an empty one.  -1 (the buffer left
 * empty) for an empty or too long prefix, or no room. */
static int select__copy(const char *s)
{
	size_t at = 0;

	while (*s) {
		size_t len = strcspn(s, ",");

		if (!len || len >= MICROSCOPE_PROBES_NAME_MAX ||
		    at + len + 2 > sizeof(select_prefixes)) {
			memset(select_prefixes, 0, sizeof(select_prefixes));
			return -1;
		}
		memcpy(select_prefixes + at, s, len);
		at += len;
		select_prefixes[at++] = '\0';
		s += len + (s[len] == ',');
	}
	select_prefixes[at] = '\0';
	return at ? 0 : -1;
}

/* Started by `microscope record -- CMD` (MICROSCOPE_PROBES_RECORDER_ENV
 * naming a recorder still running): write from now on, the heartbeat
 * timeout counted from now, records waiting in the ring until it reads;
 * every site, or with ":PREFIXES" (record --probes) the sites whose name
 * starts with one of them. */
static void microscope_probes__preenable(void)
{
	const char *s = getenv(MICROSCOPE_PROBES_RECORDER_ENV);
	uint64_t on = MICROSCOPE_PROBES_ON | MICROSCOPE_PROBES_ALL;
	unsigned long long start;
	long pid;
	char *end;

	if (!s || !*s)
		return;
	pid = strtol(s, &end, 10);
	if (pid <= 0 || *end != ':')
		return;
	start = strtoull(end + 1, &end, 10);
	if ((*end && *end != ':') || !start || proc_start(pid) != start)
		return;
	if (*end == ':') {
		if (select__copy(end + 1))
			return;
		on = MICROSCOPE_PROBES_ON | MICROSCOPE_PROBES_SELECT;
	}
	CTL->reader_pid = (uint64_t)pid;
	__atomic_store_n(&CTL->heartbeat_ns, mono_ns(), __ATOMIC_RELAXED);
	/* the prefixes before the SELECT bit that publishes them */
	__atomic_store_n(&CTL->enable, on, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void microscope_probes__init(void)
{
	uint32_t n = ring_slots_wanted();
	void *ring = mmap(NULL, (size_t)n * sizeof(struct microscope_probes_record),
			  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (ring == MAP_FAILED)
		return; /* ring stays 0: a recorder finds nothing to enable */
	pthread_atfork(NULL, NULL, microscope_probes__child);
	CTL->sites = (uint64_t)(uintptr_t)sites;
	CTL->select = (uint64_t)(uintptr_t)select_prefixes;
	CTL->select_size = sizeof(select_prefixes);
	CTL->ring_slots = n;
	__atomic_store_n(&CTL->ring, (uint64_t)(uintptr_t)ring, __ATOMIC_RELEASE);
	microscope_probes__preenable();
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * At exit, while a recorder reads: wait until it has read what was
 * written (tail == head), so the last zones of a short program are not
 * lost with its memory.  Bounded by the reader's heartbeat: a reader that
 * stops answering for its timeout turns writing off and ends the wait.
 */
__attribute__((destructor)) static void microscope_probes__fini(void)
{
	struct microscope_probes_control *c = &microscope_probes_control;
	const struct timespec nap = { 0, 1000000 };

	uint64_t on;

	while ((on = __atomic_load_n(&c->enable, __ATOMIC_RELAXED))) {
		uint64_t head = __atomic_load_n(&c->head, __ATOMIC_ACQUIRE);
		uint64_t tail = __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE);
		uint64_t hb = __atomic_load_n(&c->heartbeat_ns, __ATOMIC_RELAXED);
		uint64_t timeout = __atomic_load_n(&c->timeout_ns, __ATOMIC_RELAXED);

		if (tail >= head)
			break;
		if (mono_ns() > hb + (timeout ? timeout : MICROSCOPE_PROBES_TIMEOUT_DEFAULT_NS)) {
			if (__atomic_compare_exchange_n(&c->enable, &on, 0, false, __ATOMIC_RELAXED,
							__ATOMIC_RELAXED))
				__atomic_fetch_add(&c->timeouts, 1, __ATOMIC_RELAXED);
			break;
		}
		nanosleep(&nap, NULL);
	}
}

/*
 * Does the recorder's published selection take name?  The buffer is the
 * recorder's to write: read within its size whatever it holds (a prefix
 * running to the end is not one).
 */
static bool selected(const char *name)
{
	uint64_t on = __atomic_load_n(&CTL->enable, __ATOMIC_ACQUIRE);
	const char *p = select_prefixes, *end = select_prefixes + sizeof(select_prefixes);

	if ((on & (MICROSCOPE_PROBES_ON | MICROSCOPE_PROBES_SELECT)) !=
	    (MICROSCOPE_PROBES_ON | MICROSCOPE_PROBES_SELECT))
		return false;
	while (p < end && *p) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul)
			return false;
		if (!strncmp(name, p, (size_t)(nul - p)))
			return true;
		p = nul + 1;
	}
	return false;
}

struct microscope_site *microscope_probes_define(const char *name)
{
	struct microscope_site *s = NULL;
	uint32_t n;

	if (!name)
		return NULL;
	pthread_mutex_lock(&sites_lock);
	n = CTL->site_count;
	for (uint32_t i = 0; i < n; i++) {
		if (!strncmp(sites[i].name, name, MICROSCOPE_PROBES_NAME_MAX - 1)) {
			s = &sites[i];
			goto out;
		}
	}
	if (n < MICROSCOPE_PROBES_SITES_MAX) {
		s = &sites[n];
		strncpy(s->name, name, MICROSCOPE_PROBES_NAME_MAX - 1);
		s->id = n;
		/* chosen by the recorder's prefixes: on before it is published */
		if (selected(s->name))
			__atomic_store_n(&s->on, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&CTL->site_count, n + 1, __ATOMIC_RELEASE);
	} else {
		/* the table is full: counted, the recorder reports it */
		__atomic_fetch_add(&CTL->sites_refused, 1, __ATOMIC_RELAXED);
	}
out:
	pthread_mutex_unlock(&sites_lock);
	return s;
}

/* The writing path, taken only while enabled. */
static __attribute__((noinline)) void probes__write(const struct microscope_site *site,
						    uint32_t kind, uint64_t value, uint64_t on)
{
	struct microscope_probes_control *c = CTL;
	struct microscope_probes_record *slot;
	uint64_t now, hb, timeout, head, tail;
	uint32_t slots = c->ring_slots, site_kind;
	struct timespec ts;

	if (!site || !slots || !c->ring)
		return;
	if (!(on & MICROSCOPE_PROBES_ALL) && !__atomic_load_n(&site->on, __ATOMIC_RELAXED))
		return; /* not a site the recorder selected */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	hb = __atomic_load_n(&c->heartbeat_ns, __ATOMIC_RELAXED);
	timeout = __atomic_load_n(&c->timeout_ns, __ATOMIC_RELAXED);
	if (!timeout)
		timeout = MICROSCOPE_PROBES_TIMEOUT_DEFAULT_NS;
	if (now > hb + timeout) {
		/* the reader is gone or stuck: off, once */
		if (__atomic_compare_exchange_n(&c->enable, &on, 0, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			__atomic_fetch_add(&c->timeouts, 1, __ATOMIC_RELAXED);
		return;
	}
	head = __atomic_load_n(&c->head, __ATOMIC_RELAXED);
	do {
		tail = __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE);
		if (head - tail >= slots) {
			__atomic_fetch_add(&c->dropped, 1, __ATOMIC_RELAXED);
			my_dropped = MICROSCOPE_PROBES_AFTER_DROP;
			return;
		}
	} while (!__atomic_compare_exchange_n(&c->head, &head, head + 1, true, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	site_kind = site->id << 8 | my_dropped | kind;
	my_dropped = 0;
	slot = (struct microscope_probes_record *)(uintptr_t)c->ring + (head & (slots - 1));
	slot->time_ns = now;
	slot->value = value;
	slot->tid = my_tid;
	slot->site_kind = site_kind;
	__atomic_store_n(&slot->seq,
			 (head + 1) << 16 | microscope_probes_check(now, value, my_tid, site_kind),
			 __ATOMIC_RELEASE);
}

void microscope_zone_begin(struct microscope_site *site)
{
	uint64_t on = __atomic_load_n(&CTL->enable, __ATOMIC_RELAXED);

	if (__builtin_expect(on != 0, 0))
		probes__write(site, MICROSCOPE_PROBES_ZONE_BEGIN, 0, on);
}

void microscope_zone_end(struct microscope_site *site)
{
	uint64_t on = __atomic_load_n(&CTL->enable, __ATOMIC_RELAXED);

	if (__builtin_expect(on != 0, 0))
		probes__write(site, MICROSCOPE_PROBES_ZONE_END, 0, on);
}

void microscope_mark(struct microscope_site *site, uint64_t value)
{
	uint64_t on = __atomic_load_n(&CTL->enable, __ATOMIC_RELAXED);

	if (__builtin_expect(on != 0, 0))
		probes__write(site, MICROSCOPE_PROBES_MARK, value, on);
}

int microscope_probes_enabled(void)
{
	return __atomic_load_n(&CTL->enable, __ATOMIC_RELAXED) != 0;
}

uint64_t microscope_probes_dropped(void)
{
	return __atomic_load_n(&CTL->dropped, __ATOMIC_RELAXED);
}

uint64_t microscope_probes_sites_refused(void)
{
	return __atomic_load_n(&CTL->sites_refused, __ATOMIC_RELAXED);
}

uint32_t microscope_probes_timeouts(void)
{
	return __atomic_load_n(&CTL->timeouts, __ATOMIC_RELAXED);
}
