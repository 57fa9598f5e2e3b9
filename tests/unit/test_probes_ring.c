// SPDX-License-Identifier: MIT
/*
 * The probes ring protocol under real concurrency, in one process: the SDK
 * (sdk/c/microscope_probes.c, compiled into this test) written by
 * WRITERS threads at once, read by the collector's reader
 * (collector/probes.c) from this same process with process_vm_readv, as
 * it reads a target.  Every begin/end call either reaches the reader or is
 * counted dropped (records + dropped == calls); each thread's records come
 * in the order it wrote them, begin and end alternating; nothing is torn.
 * A small ring (1024 slots) makes writers wait on the reader and drop.
 * Then the SDK's safety: writing stops by itself once the reader's
 * heartbeat is older than its timeout, and the reader's stop switches it
 * off.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/abi/records.h"
#include "sdk/c/microscope_probes.c"
#include "userspace/collector/probes.h"

#define WRITERS 4
#define PAIRS 200000

struct seen {
	uint32_t tid;
	uint64_t n, last_time;
	uint32_t last_kind;
	uint64_t bad_order;
};

static struct seen seen[WRITERS];
static uint32_t nseen;
static uint64_t nsites, records;
static volatile int writers_done;
static struct microscope_site *site_of[WRITERS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int emit(void *ctx, const void *rec, size_t len)
{
	const struct ms_rec_header *h = rec;
	const struct ms_probe *r = rec;
	struct seen *s = NULL;

	(void)ctx;
	if (h->type == MS_REC_PROBE_SITE) {
		nsites++;
		return 0;
	}
	assert_int_equal(len, sizeof(*r));
	assert_int_equal(r->pid, getpid());
	records++;
	for (uint32_t i = 0; i < nseen; i++)
		if (seen[i].tid == r->tid)
			s = &seen[i];
	if (!s) {
		assert_true(nseen < WRITERS);
		s = &seen[nseen++];
		s->tid = r->tid;
		s->last_kind = MS_PROBE_ZONE_END;
	}
	/* a thread's own records in its order: times not decreasing; a begin
	 * after an end unless records were dropped between them */
	if (r->time_ns < s->last_time)
		s->bad_order++;
	s->last_time = r->time_ns;
	s->last_kind = r->kind;
	s->n++;
	return 0;
}

static int counter(void *ctx, const char *name, uint64_t value)
{
	(void)ctx;
	print_message("%s %llu\n", name, (unsigned long long)value);
	return 0;
}

static void *writer(void *arg)
{
	struct microscope_site *s = arg;

	for (int i = 0; i < PAIRS; i++) {
		microscope_zone_begin(s);
		microscope_zone_end(s);
	}
	__atomic_add_fetch(&writers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_concurrent_writers(void **state)
{
	struct probe_rings *pr = probe_rings__new(-1, NULL);
	pthread_t th[WRITERS];
	uint64_t rounds = 0;
	char name[16];

	(void)state;
	assert_non_null(pr);
	assert_int_equal(CTL->ring_slots, 1024); /* MICROSCOPE_PROBES_RING_SLOTS, main() */
	for (int i = 0; i < WRITERS; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		site_of[i] = microscope_probes_define(name);
		assert_non_null(site_of[i]);
	}
	assert_ptr_equal(microscope_probes_define("w1"), site_of[1]);
	assert_int_equal(probe_rings__add_pid(pr, (uint32_t)getpid(), now_ns()), 0);
	/* the first round finds the control block and switches writing on */
	assert_true(probe_rings__drain(pr, now_ns(), emit, NULL) >= 0);
	assert_int_equal(microscope_probes_enabled(), 1);
	assert_int_equal(nsites, WRITERS);
	for (int i = 0; i < WRITERS; i++)
		assert_int_equal(pthread_create(&th[i], NULL, writer, site_of[i]), 0);
	while (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) < WRITERS) {
		assert_true(probe_rings__drain(pr, now_ns(), emit, NULL) >= 0);
		rounds++;
		usleep(100); /* a recorder's rounds are apart; the writers run meanwhile */
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(probe_rings__stop(pr, now_ns(), emit, NULL), 0);
	assert_int_equal(probe_rings__counters(pr, counter, NULL), 0);
	assert_int_equal(microscope_probes_enabled(), 0);
	print_message("rounds %llu, records %llu, dropped %llu\n", (unsigned long long)rounds,
		      (unsigned long long)records, (unsigned long long)microscope_probes_dropped());
	/*
	 * Writers that find the reader's heartbeat older than its timeout (2 s)
	 * switch writing off and stop counting: that is the protocol (tested
	 * below), and a loaded machine can starve this reader that long (the
	 * two failures seen were under a full suite and three CPU burners).
	 * The exact accounting holds only for a run without a timeout.
	 */
	if (microscope_probes_timeouts()) {
		print_message("the reader was starved past its timeout (%u): accounting not checked\n",
			      microscope_probes_timeouts());
		probe_rings__free(pr);
		skip();
	}
	assert_int_equal(records + microscope_probes_dropped(), 2ull * WRITERS * PAIRS);
	assert_true(records > 0);
	/* on a loaded machine a writer may have had every record dropped */
	assert_true(nseen >= 1 && nseen <= WRITERS);
	for (uint32_t i = 0; i < nseen; i++)
		assert_int_equal(seen[i].bad_order, 0);
	probe_rings__free(pr);
}

/* A reader that stops answering: the writer switches itself off once the
 * heartbeat is older than the timeout the reader wrote. */
static void test_reader_loss_turns_writing_off(void **state)
{
	struct microscope_site *s = microscope_probes_define("late");
	uint32_t before = microscope_probes_timeouts();

	(void)state;
	CTL->timeout_ns = 1000000; /* 1 ms */
	CTL->heartbeat_ns = now_ns();
	__atomic_store_n(&CTL->enable, MICROSCOPE_PROBES_ON | MICROSCOPE_PROBES_ALL,
			 __ATOMIC_RELEASE);
	usleep(5000);
	microscope_zone_begin(s);
	assert_int_equal(microscope_probes_enabled(), 0);
	assert_int_equal(microscope_probes_timeouts(), before + 1);
	microscope_zone_end(s); /* off: nothing, no second count */
	assert_int_equal(microscope_probes_timeouts(), before + 1);
}

int main(int argc, char **argv)
{
	/* the ring is sized at start-up (the SDK's constructor): run again
	 * with a small one */
	if (!getenv("MICROSCOPE_PROBES_RING_SLOTS")) {
		setenv("MICROSCOPE_PROBES_RING_SLOTS", "1024", 1);
		execv("/proc/self/exe", argv);
		return 1;
	}
	(void)argc;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent_writers),
		cmocka_unit_test(test_reader_loss_turns_writing_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
