// SPDX-License-Identifier: MIT
/*
 * The recording settings (userspace/options/record_options.h): the one
 * validator both the CLI and the collector call, its limits at their edges,
 * and the presets against flags the command line set.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "userspace/options/record_options.h"
#include "userspace/cli/record_wake.h"

/* -F: 1 and MS_MAX_FREQ_HZ pass; 0 and one above are refused, and the
 * message states the shared range (the CLI prints exactly this text). */
static void test_freq_limit(void **state)
{
	struct record_options o;
	char err[256];

	record_options__init(&o);
	assert_int_equal(MS_MAX_FREQ_HZ, 20000);
	o.freq_hz = MS_MAX_FREQ_HZ;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	o.freq_hz = MS_MIN_FREQ_HZ;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);

	o.freq_hz = MS_MAX_FREQ_HZ + 1;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "bad frequency 20001 Hz (1..20000 Hz: above that the sampler "
				 "itself would take the CPUs)");
	/* 100000 (the collector's old ceiling) is refused too. */
	o.freq_hz = 100000;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	o.freq_hz = 0;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad frequency 0 Hz"));
	/* No message buffer: still refused. */
	assert_int_equal(record_options__check(&o, NULL, 0), -EINVAL);
}

/* Defaults and every preset pass; their stack copies obey the limit. */
static void test_defaults_and_presets_pass(void **state)
{
	struct record_options o;
	char err[256];

	record_options__init(&o);
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	for (size_t i = 0; record_options__preset_names[i]; i++) {
		record_options__init(&o);
		assert_int_equal(record_options__apply_preset(&o, record_options__preset_names[i], 0),
				 0);
		assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	}
}

/* The stack copy and call-graph rules, with and without an explicit flag. */
static void test_stack_rules(void **state)
{
	struct record_options o;
	char err[256];

	record_options__init(&o);
	o.stack_size = MS_MAX_STACK_SIZE + 8;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bad stack size 65544"));
	o.stack_size = 12; /* not a multiple of 8 */
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);

	record_options__init(&o);
	o.call_graph = MS_CALL_GRAPH_DWARF;
	o.stack_size = 0;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "dwarf needs a stack copy"));

	/* fp with the default 16 KiB left over is fine (nothing is copied);
	 * an explicit --stack-size with fp is a mistake the user is told of. */
	record_options__init(&o);
	o.call_graph = MS_CALL_GRAPH_FP;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	o.explicit = MS_OPT_SET_STACK_SIZE;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no effect with --call-graph fp (from the preset)"));
	o.explicit |= MS_OPT_SET_CALL_GRAPH;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no effect with --call-graph fp (given)"));
	o.stack_size = 0;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
}

/* The other limits, each at its edge. */
static void test_other_limits(void **state)
{
	struct record_options o;
	char err[256];

	record_options__init(&o);
	o.budget_pct = 100;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	o.budget_pct = 100.5;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);

	record_options__init(&o);
	o.off_cpu_min_ns = MS_MAX_OFF_CPU_MIN_US * 1000;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);
	o.off_cpu_min_ns += 1000;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);

	record_options__init(&o);
	o.perf_pages = 48;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	record_options__init(&o);
	o.ringbuf_bytes = 3u << 20;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	o.ringbuf_bytes = 4u << 20;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), 0);

	record_options__init(&o);
	o.event = 2;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	record_options__init(&o);
	o.python = 2;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
	record_options__init(&o);
	o.symbolize = 2;
	assert_int_equal(record_options__check(&o, err, sizeof(err)), -EINVAL);
}

/* How long record's drain loop may sleep (cli/record_wake.c): the
 * production preset's 1 s whatever the tracker, other presets' 20 ms with
 * a CPython tracker and 100 ms without; never while records wait behind
 * processing; at most the status line's period, and at most
 * RECORD_WAIT_UNWATCHED_MS when a process's end has no pidfd. */
static void test_drain_wait(void **state)
{
	struct record_options o;
	struct record_wake w;
	const uint64_t now = 5000000000ull;

	(void)state;
	record_options__init(&o);
	assert_int_equal(record_options__apply_preset(&o, "default", 0), 0);
	record_wake__init(&w, &o, true);
	assert_int_equal(record_wake__wait_ms(&w, false, NULL, 0, now), RECORD_WAIT_PY_MS);
	record_wake__init(&w, &o, false);
	assert_int_equal(record_wake__wait_ms(&w, false, NULL, 0, now), RECORD_WAIT_MS);

	record_options__init(&o);
	assert_int_equal(record_options__apply_preset(&o, "production", 0), 0);
	assert_int_equal(o.drain_wait_ms, 1000);
	assert_int_equal(o.py_wake_ms, 250);
	record_wake__init(&w, &o, true);
	assert_int_equal(record_wake__wait_ms(&w, false, NULL, 0, now), 1000);
	assert_int_equal(record_wake__wait_ms(&w, true, NULL, 0, now), 0);
	assert_int_equal(record_wake__wait_ms(&w, false, NULL, 250, now), 250);
	w.unwatched = true;
	assert_int_equal(record_wake__wait_ms(&w, false, NULL, 0, now), RECORD_WAIT_UNWATCHED_MS);
	record_wake__release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_freq_limit),
		cmocka_unit_test(test_defaults_and_presets_pass),
		cmocka_unit_test(test_stack_rules),
		cmocka_unit_test(test_other_limits),
		cmocka_unit_test(test_drain_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
