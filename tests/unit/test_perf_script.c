// SPDX-License-Identifier: MIT
/*
 * Unit tests of the perf script importer's detection and header parse
 * (capture/formats/perf_script_import.c) on text perf 6.1 printed for
 * `perf record -g` of tests/fixtures/spinner, three samples each, with
 * the -F field sets users pass: with and without time, event and period,
 * with callchains and with -G (no callchain: comm padded to 16 columns).
 * A folded file whose first line reads like a timeless header ("comm
 * 21799") must stay folded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "capture/capture.h"
#include "capture/formats/formats.h"

#define SPIN "/work/build/fixtures/spinner"
#define LD "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"

/* -F comm,tid,ip,sym: before, read as folded ("spinner" x 21799). */
static const char comm_tid_ip_sym[] =
	"spinner 21799 \n"
	"\t            9069 do_lookup_x\n"
	"\n"
	"spinner 21799 \n"
	"\t            13d2 spin_forever_work\n"
	"\t            110d main\n"
	"\t           2724a __libc_start_call_main\n"
	"\n"
	"spinner 21799 \n"
	"\t            13cf spin_forever_work\n"
	"\t            110d main\n"
	"\t           2724a __libc_start_call_main\n"
	"\n";

/* -F comm,pid,tid,ip,sym,dso: before, 'folded: not a folded file'. */
static const char comm_pid_tid_ip_sym_dso[] =
	"spinner 21799/21799 \n"
	"\t            9069 do_lookup_x (" LD ")\n"
	"\n"
	"spinner 21799/21799 \n"
	"\t            13d2 spin_forever_work (" SPIN ")\n"
	"\t            110d main (" SPIN ")\n"
	"\t           2724a __libc_start_call_main (" LIBC ")\n"
	"\n"
	"spinner 21799/21799 \n"
	"\t            13cf spin_forever_work (" SPIN ")\n"
	"\t            110d main (" SPIN ")\n"
	"\t           2724a __libc_start_call_main (" LIBC ")\n"
	"\n";

/* -F comm,pid,tid,time,ip,sym,dso: a time, no event. */
static const char with_time[] =
	"spinner 21799/21799 33353.391577: \n"
	"\t            9069 do_lookup_x (" LD ")\n"
	"\n"
	"spinner 21799/21799 33353.392573: \n"
	"\t            13d2 spin_forever_work (" SPIN ")\n"
	"\t            110d main (" SPIN ")\n"
	"\n"
	"spinner 21799/21799 33353.393577: \n"
	"\t            13cf spin_forever_work (" SPIN ")\n"
	"\t            110d main (" SPIN ")\n"
	"\n";

/* -F comm,pid,tid,period,event,ip,sym,dso */
static const char period_event[] =
	"spinner 21799/21799    1001001 cpu-clock:pppH: \n"
	"\t            9069 do_lookup_x (" LD ")\n"
	"\n"
	"spinner 21799/21799    1001001 cpu-clock:pppH: \n"
	"\t            13d2 spin_forever_work (" SPIN ")\n"
	"\n"
	"spinner 21799/21799    1001001 cpu-clock:pppH: \n"
	"\t            13cf spin_forever_work (" SPIN ")\n"
	"\n";

/* -F comm,tid,ip,sym,dso,period */
static const char period_only[] =
	"spinner 21799    1001001 \n"
	"\t            9069 do_lookup_x (" LD ")\n"
	"\n"
	"spinner 21799    1001001 \n"
	"\t            13d2 spin_forever_work (" SPIN ")\n"
	"\n"
	"spinner 21799    1001001 \n"
	"\t            13cf spin_forever_work (" SPIN ")\n"
	"\n";

/* -G -F comm,tid,ip,sym: one line per sample, comm padded. */
static const char hidden_chain[] =
	"         spinner 21799      7f6929e51069 do_lookup_x\n"
	"         spinner 21799      5630370393d2 spin_forever_work\n"
	"         spinner 21799      5630370393cf spin_forever_work\n";

/* -G -F comm,pid,tid,ip,sym,dso */
static const char hidden_chain_dso[] =
	"         spinner 21799/21799      7f6929e51069 do_lookup_x (" LD ")\n"
	"         spinner 21799/21799      5630370393d2 spin_forever_work (" SPIN ")\n"
	"         spinner 21799/21799      5630370393cf spin_forever_work (" SPIN ")\n";

static struct capture *import(const char *text)
{
	struct capture_builder *b = capture_builder__new();
	struct formats_note note = { "" };
	struct capture *c = NULL;
	char err[256] = "";
	void *buf = NULL;
	size_t len = 0;

	assert_non_null(b);
	assert_true(perf_script__detect(text, strlen(text)));
	if (perf_script__import(text, strlen(text), b, &note, err, sizeof(err)))
		fail_msg("import failed: %s", err);
	assert_int_equal(capture_builder__serialize(b, &buf, &len), 0);
	assert_int_equal(capture__open_mem(buf, len, "test", &c, err, sizeof(err)), 0);
	free(buf);
	capture_builder__free(b);
	return c;
}

/* Three samples of thread 21799 (pid 21799) "spinner", event name and period as given,
 * the second sample's leaf spin_forever_work; frames of depth leaf-first. */
static void check(const char *text, const char *event, uint64_t period, uint32_t depth)
{
	struct capture *c = import(text);
	const struct capture_thread *t;
	uint32_t n = 0, s;

	assert_int_equal(c->nsamples, 3);
	assert_int_equal(c->nthreads, 1);
	t = &c->threads[c->samples[1].thread];
	assert_int_equal(t->tid, 21799);
	assert_int_equal(c->processes[t->process].pid, 21799);
	assert_string_equal(capture__string(c, t->comm), "spinner");
	assert_int_equal(c->nevents, 1);
	assert_string_equal(capture__string(c, c->events[0].name), event);
	assert_int_equal(c->events[0].period, period);
	for (uint32_t i = 0; i < c->nsamples; i++)
		assert_int_equal(c->samples[i].weight, 1);
	s = c->samples[1].stack;
	assert_string_equal(capture__string(c, c->frames[c->stacks[s].frame].function),
			    "spin_forever_work");
	for (; s != CAPTURE_NONE; s = c->stacks[s].parent)
		n++;
	assert_int_equal(n, depth);
	capture__free(c);
}

static void test_field_sets(void **state)
{
	(void)state;
	check(comm_tid_ip_sym, "samples", 0, 3);
	check(comm_pid_tid_ip_sym_dso, "samples", 0, 3);
	check(with_time, "samples", 0, 2);
	check(period_event, "cpu-clock", 1001001, 1);
	check(period_only, "samples", 1001001, 1);
	check(hidden_chain, "samples", 0, 1);
	check(hidden_chain_dso, "samples", 0, 1);
}

static void test_times_kept(void **state)
{
	struct capture *c = import(with_time);

	(void)state;
	assert_int_equal(c->samples[0].time_ns, 33353391577000ull);
	assert_int_equal(c->samples[2].time_ns, 33353393577000ull);
	capture__free(c);
}

/* A decimal sample address without a period (a non-PIE binary) stays the address
 * (perf prints it ' ' "%16" PRIx64 after the "%5d " TID: 12 spaces before 6 digits). */
static void test_decimal_address_is_no_period(void **state)
{
	static const char text[] = "         spinner 21799            401136 main (" SPIN ")\n";
	struct capture *c = import(text);

	(void)state;
	assert_int_equal(c->events[0].period, 0);
	assert_int_equal(c->frames[c->stacks[c->samples[0].stack].frame].address, 0x401136);
	assert_string_equal(capture__string(c, c->frames[c->stacks[c->samples[0].stack].frame].function),
			    "main");
	capture__free(c);
}

/* A first sample without a callchain line: the next sample's frame decides. */
static void test_first_sample_without_frames(void **state)
{
	static const char text[] = "spinner 21799 \n"
				   "\n"
				   "spinner 21799 \n"
				   "\t            13d2 spin_forever_work\n"
				   "\n";
	struct capture *c = import(text);

	(void)state;
	assert_int_equal(c->nsamples, 2);
	assert_int_equal(c->samples[0].stack, CAPTURE_NONE);
	capture__free(c);
}

/* -F pid,tid,time,ip,sym,dso,addr (perf 6.1, threads4): no COMM, ADDR "%16" PRIx64 after
 * the time.  Before: not detected, read as folded (each header a stack of weight 0). */
static const char no_comm_addr[] =
	"11772/11777 42569.401827:                0\n"
	"\t            169b spin_3 (/x/threads4)\n"
	"\t            172c worker_main (/x/threads4)\n"
	"\t           891f5 start_thread (" LIBC ")\n"
	"\n"
	"11772/11774 42569.401869:                0\n"
	"\t            1588 spin_0 (/x/threads4)\n"
	"\t            172c worker_main (/x/threads4)\n"
	"\t           891f5 start_thread (" LIBC ")\n"
	"\n";

/* -F ip,sym: the header is empty, a sample is a run of callchain lines. */
static const char headerless[] =
	"\n"
	"\t            169e spin_3\n"
	"\t            172c worker_main\n"
	"\t           891f5 start_thread\n"
	"\n"
	"\n"
	"\t            15db spin_1\n"
	"\t            172c worker_main\n"
	"\t           891f5 start_thread\n"
	"\n"
	"\n"
	"\t            15e8 spin_1\n"
	"\t           891f5 start_thread\n"
	"\n";

/* -F tid,ip,sym: a lone right-aligned TID. */
static const char tid_only[] =
	" 9524 \n"
	"\t            169e spin_3\n"
	"\t            172c worker_main\n"
	"\n"
	" 9522 \n"
	"\t            15db spin_1\n"
	"\t            172c worker_main\n"
	"\n"
	" 9524 \n"
	"\t            16a1 spin_3\n"
	"\n";

/* -G -F comm,pid,tid,ip,sym,dso with a 4-digit TID: "%5d/%-5d " pads the TID on its
 * right, so the IP's field starts one column later (perf 6.1, tests/fixtures/ratio). */
static const char padded_tid[] =
	"           ratio  5102/5102       559912fa34d2 leaf_a (/x/ratio)\n"
	"           ratio  5102/5102       559912fa34c8 leaf_a (/x/ratio)\n"
	"           ratio  5102/5103       559912fa34bb leaf_b (/x/ratio)\n";

static struct capture *import_ok(const char *text)
{
	return import(text);
}

static const char *leaf(const struct capture *c, uint32_t sample)
{
	return capture__string(c, c->frames[c->stacks[c->samples[sample].stack].frame].function);
}

static const char *root(const struct capture *c, uint32_t sample)
{
	uint32_t s = c->samples[sample].stack;

	while (c->stacks[s].parent != CAPTURE_NONE)
		s = c->stacks[s].parent;
	return capture__string(c, c->frames[c->stacks[s].frame].function);
}

static void test_no_comm_with_addr(void **state)
{
	struct capture *c = import_ok(no_comm_addr);
	const struct capture_thread *t;

	(void)state;
	assert_int_equal(c->nsamples, 2);
	assert_int_equal(c->nthreads, 2);
	t = &c->threads[c->samples[1].thread];
	assert_int_equal(t->tid, 11774);
	assert_int_equal(c->processes[t->process].pid, 11772);
	assert_int_equal(c->samples[1].time_ns, 42569401869000ull);
	assert_string_equal(leaf(c, 0), "spin_3");
	assert_string_equal(leaf(c, 1), "spin_0");
	assert_string_equal(root(c, 1), "start_thread");
	capture__free(c);
}

static void test_headerless(void **state)
{
	struct capture *c = import_ok(headerless);

	(void)state;
	assert_int_equal(c->nsamples, 3);
	assert_int_equal(c->samples[0].thread, CAPTURE_NONE);
	assert_string_equal(leaf(c, 0), "spin_3");
	assert_string_equal(leaf(c, 1), "spin_1");
	assert_string_equal(leaf(c, 2), "spin_1");
	assert_string_equal(root(c, 2), "start_thread");
	assert_int_not_equal(c->samples[1].stack, c->samples[2].stack);
	capture__free(c);
}

static void test_tid_only(void **state)
{
	struct capture *c = import_ok(tid_only);

	(void)state;
	assert_int_equal(c->nsamples, 3);
	assert_int_equal(c->nthreads, 2);
	assert_int_equal(c->samples[0].thread, c->samples[2].thread);
	assert_int_equal(c->threads[c->samples[1].thread].tid, 9522);
	assert_string_equal(leaf(c, 1), "spin_1");
	capture__free(c);
}

static void test_padded_tid(void **state)
{
	struct capture *c = import_ok(padded_tid);

	(void)state;
	assert_int_equal(c->nsamples, 3);
	assert_int_equal(c->nthreads, 2);
	assert_int_equal(c->threads[c->samples[2].thread].tid, 5103);
	assert_string_equal(leaf(c, 0), "leaf_a");
	assert_string_equal(leaf(c, 2), "leaf_b");
	assert_int_equal(c->frames[c->stacks[c->samples[2].stack].frame].address, 0x559912fa34bb);
	capture__free(c);
}

/* A COMM ending in ':' followed by a TID is a COMM, not an event name. */
static void test_comm_with_colon(void **state)
{
	static const char text[] = "dbus: 21799 33353.391577: \n"
				   "\t            13d2 spin_forever_work\n"
				   "\n";
	struct capture *c = import_ok(text);

	(void)state;
	assert_int_equal(c->threads[c->samples[0].thread].tid, 21799);
	assert_string_equal(capture__string(c, c->threads[c->samples[0].thread].comm), "dbus:");
	assert_string_equal(capture__string(c, c->events[0].name), "samples");
	capture__free(c);
}

/* What cannot be read is an error naming the line, never a profile. */
static void expect_error(const char *text, const char *want)
{
	struct capture_builder *b = capture_builder__new();
	struct formats_note note = { "" };
	char err[512] = "";

	assert_non_null(b);
	assert_int_equal(perf_script__import(text, strlen(text), b, &note, err, sizeof(err)),
			 -EBADMSG);
	if (!strstr(err, want))
		fail_msg("error \"%s\" lacks \"%s\"", err, want);
	capture_builder__free(b);
}

static void test_errors_name_the_line(void **state)
{
	(void)state;
	/* a folded line among headers: its fields differ from the event's first header's */
	expect_error("spinner 21799 33353.391577: \n\t 13d2 a\n\nmain;work 3\n",
		     "line 4 \"main;work 3\": a sample header of fields comm where line 1's "
		     "has comm,tid,time");
	/* -F tid,time: no IP anywhere */
	expect_error(" 9524 42544.971745: \n 9522 42544.976984: \n",
		     "line 1 \" 9524 42544.971745:\": perf script samples (fields tid,time) "
		     "without an instruction pointer");
	/* a callchain line after the blank line that ended its sample */
	expect_error("spinner 21799 33353.391577: \n\t 13d2 a\n\n\t 13d3 b\n",
		     "line 4 \"\\t 13d3 b\": a callchain line with no sample header before it");
	/* a header in headerless (-F ip,sym) output */
	expect_error("\n\t 13d2 a\n\nspinner 21799 33353.391577: \n",
		     "line 4 \"spinner 21799 33353.391577:");
	/* forced on folded text */
	expect_error("main;work 3\nmain;rest 1\n", "line 1 \"main;work 3\": not perf script output");
}

/* The folded importer refuses what perf script detection accepts. */
static void test_folded_refuses_perf_script(void **state)
{
	const char *texts[] = { no_comm_addr, headerless, tid_only, with_time, hidden_chain };
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct capture_builder *b = capture_builder__new();
		struct formats_note note = { "" };

		err[0] = '\0';
		assert_true(perf_script__detect(texts[i], strlen(texts[i])));
		assert_int_equal(folded__import(texts[i], strlen(texts[i]), b, &note, err,
						sizeof(err)),
				 -EBADMSG);
		assert_non_null(strstr(err, "perf script"));
		capture_builder__free(b);
	}
}

static void test_folded_stays_folded(void **state)
{
	static const char *const folded[] = {
		"spinner 21799\nmain;work 3\n",
		"main 12\n",
		"main;foo 5\nmain;bar 2\n",
		"# comment\nspinner 21799\n\nmain 1\n",
		"a 1\nb 2\nc 3\n\tmain 4\n", /* a tab-led line that is no frame */
		"Interpreter: 3\nmain;run 2\n", /* a frame name ending in ':' and a count */
		"bash;main;foo 12\nbash-1234/1235;main 5\n",
		"java;Foo.bar(int, long) 12\n",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(folded) / sizeof(folded[0]); i++)
		if (perf_script__detect(folded[i], strlen(folded[i])))
			fail_msg("folded text %zu detected as perf script", i);
}

/* Import buf[len] (NULs allowed); the status, *out the capture on success. */
static int import_len(const char *buf, size_t len, struct capture **out, char *err, size_t errlen)
{
	struct capture_builder *b = capture_builder__new();
	struct formats_note note = { "" };
	void *bytes = NULL;
	size_t n = 0;
	int rc;

	assert_non_null(b);
	rc = perf_script__import(buf, len, b, &note, err, errlen);
	if (!rc) {
		assert_int_equal(capture_builder__serialize(b, &bytes, &n), 0);
		assert_int_equal(capture__open_mem(bytes, n, "test", out, err, errlen), 0);
		free(bytes);
	}
	capture_builder__free(b);
	return rc;
}

/*
 * One NUL byte damages one line, not the file (before: the whole text was
 * refused as binary): a callchain line with one is skipped (its sample
 * keeps the other frames), a header with one takes its sample's frames
 * along; both counted.  Binary data and perf.data itself are refused.
 */
static void test_nul_line_skipped(void **state)
{
	const char *text = comm_pid_tid_ip_sym_dso;
	size_t len = strlen(text);
	char *buf = malloc(len + 1), err[512];
	struct capture *c = NULL;
	char *at;

	(void)state;
	assert_non_null(buf);
	/* in sample 2's "main" frame: 3 samples, sample 2 two frames deep */
	memcpy(buf, text, len + 1);
	at = strstr(strstr(buf, "13d2"), "main");
	at[1] = '\0';
	assert_true(perf_script__detect(buf, len));
	assert_int_equal(import_len(buf, len, &c, err, sizeof(err)), 0);
	assert_int_equal(c->nsamples, 3);
	assert_string_equal(leaf(c, 1), "spin_forever_work");
	assert_string_equal(root(c, 1), "__libc_start_call_main");
	assert_int_equal(capture__counter(c, "perf_script.nul_lines"), 1);
	assert_int_equal(capture__counter(c, "perf_script.skipped_lines"), 0);
	assert_int_equal(c->stacks[c->stacks[c->samples[1].stack].parent].parent, CAPTURE_NONE);
	capture__free(c);
	/* in sample 2's header: 2 samples, its 3 frame lines skipped with it */
	memcpy(buf, text, len + 1);
	at = strstr(strstr(buf, "\n\n") + 2, "/21799");
	at[2] = '\0';
	assert_int_equal(import_len(buf, len, &c, err, sizeof(err)), 0);
	assert_int_equal(c->nsamples, 2);
	assert_string_equal(leaf(c, 0), "do_lookup_x");
	assert_string_equal(leaf(c, 1), "spin_forever_work");
	assert_int_equal(capture__counter(c, "perf_script.nul_lines"), 1);
	assert_int_equal(capture__counter(c, "perf_script.skipped_lines"), 3);
	capture__free(c);
	/* in the first line: still perf script, 2 samples */
	memcpy(buf, text, len + 1);
	buf[3] = '\0';
	assert_true(perf_script__detect(buf, len));
	assert_int_equal(import_len(buf, len, &c, err, sizeof(err)), 0);
	assert_int_equal(c->nsamples, 2);
	capture__free(c);
	free(buf);
	/* binary: many NULs */
	{
		char bin[256];

		memset(bin, 'x', sizeof(bin));
		for (size_t i = 0; i < sizeof(bin); i += 16)
			bin[i] = '\0';
		assert_int_equal(import_len(bin, sizeof(bin), &c, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "binary data"));
		memcpy(bin, "PERFILE2", 8);
		assert_true(perf_script__is_perf_data(bin, sizeof(bin)));
		assert_int_equal(import_len(bin, sizeof(bin), &c, err, sizeof(err)), -EBADMSG);
		assert_non_null(strstr(err, "looks like perf.data"));
		assert_non_null(strstr(err, "perf script -i"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_field_sets),
		cmocka_unit_test(test_times_kept),
		cmocka_unit_test(test_decimal_address_is_no_period),
		cmocka_unit_test(test_first_sample_without_frames),
		cmocka_unit_test(test_folded_stays_folded),
		cmocka_unit_test(test_no_comm_with_addr),
		cmocka_unit_test(test_headerless),
		cmocka_unit_test(test_tid_only),
		cmocka_unit_test(test_padded_tid),
		cmocka_unit_test(test_comm_with_colon),
		cmocka_unit_test(test_errors_name_the_line),
		cmocka_unit_test(test_folded_refuses_perf_script),
		cmocka_unit_test(test_nul_line_skipped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
