// SPDX-License-Identifier: MIT
/*
 * The /api/ query parser and answerer (userspace/serve/).  Input: a path
 * line ("/api/flat") and a query string ("limit=3&focus=a%3Bb"), split and
 * percent-decoded the way libmicrohttpd hands them over.  Every query the
 * parser accepts is answered over a small capture built here (two threads,
 * a call graph, off-CPU intervals with a task waker and an irq waker), and
 * invariants checked: an answer is valid JSON, a refusal has a message.
 */
#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "capture/capture.h"
#include "fuzz.h"
#include "userspace/serve/internal.h"

static struct serve_profile *profile, *base;

static uint32_t frame(struct capture_builder *b, const char *fn, uint32_t flags)
{
	struct capture_frame f = { .module = CAPTURE_NONE, .flags = flags,
				   .function = capture_builder__string(b, fn) };

	return capture_builder__add_frame(b, &f);
}

static struct serve_profile *build(int variant)
{
	struct capture_builder *b = capture_builder__new();
	struct capture_process pr = { .pid = 100 };
	struct capture_thread th = { .tid = 100 };
	struct capture_event cpu = { .period = 1000000 }, off = { .period = 1 };
	struct serve_profile *p = NULL;
	struct capture *c = NULL;
	uint32_t ev_cpu, ev_off, t0, t1, fm, fa, fb, fk, s_a, s_b, s_k, i;
	char err[256];
	void *buf = NULL;
	size_t len;

	if (!b)
		return NULL;
	pr.comm = capture_builder__string(b, "app");
	capture_builder__add_process(b, &pr);
	th.comm = pr.comm;
	t0 = capture_builder__add_thread(b, &th);
	th.tid = 101;
	th.comm = capture_builder__string(b, "worker");
	t1 = capture_builder__add_thread(b, &th);
	cpu.name = capture_builder__string(b, "cpu-clock");
	cpu.unit = capture_builder__string(b, "samples");
	ev_cpu = capture_builder__add_event(b, &cpu);
	off.name = capture_builder__string(b, "off-cpu");
	off.unit = capture_builder__string(b, "nanoseconds");
	ev_off = capture_builder__add_event(b, &off);
	fm = frame(b, "main", 0);
	fa = frame(b, variant ? "a" : "changed", 0);
	fb = frame(b, "b", 0);
	fk = frame(b, "schedule", CAPTURE_FRAME_F_KERNEL);
	s_a = capture_builder__add_stack(b, capture_builder__add_stack(b, CAPTURE_NONE, fm), fa);
	s_b = capture_builder__add_stack(b, capture_builder__add_stack(b, CAPTURE_NONE, fm), fb);
	s_k = capture_builder__add_stack(b, s_b, fk);
	for (i = 0; i < 40; i++) {
		struct capture_sample s = { .time_ns = 1000 + i * 1000, .thread = i & 1 ? t1 : t0,
					    .cpu = 0, .stack = i % 3 ? s_a : s_b, .event = ev_cpu,
					    .weight = 1 };

		if (i == 7)
			s.stack = CAPTURE_NONE;
		capture_builder__add_sample(b, &s);
	}
	for (i = 0; i < 4; i++) {
		struct capture_interval v = {
			.start_ns = 2000 + i * 5000, .end_ns = 4000 + i * 5000, .weight = 2000,
			.thread = t0, .event = ev_off, .stack = s_k,
			.flags = i == 3 ? CAPTURE_INTERVAL_F_END_UNKNOWN : 0,
			.state = i % CAPTURE_OFFCPU_STATE_COUNT,
			.cause = i == 0 ? CAPTURE_OFFCPU_CAUSE_TASK : CAPTURE_OFFCPU_CAUSE_HARDIRQ,
			.waker_thread = i == 0 ? t1 : CAPTURE_NONE, .waker_stack = s_b, .cpu = 0,
		};

		capture_builder__add_interval(b, &v);
	}
	if (!capture_builder__serialize(b, &buf, &len) &&
	    !capture__open_mem(buf, len, "fuzz.msc", &c, err, sizeof(err)))
		serve_profile__new(c, variant ? "fuzz-base.msc" : "fuzz.msc", &p);
	free(buf);
	capture_builder__free(b);
	return p;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* In place: '+' is a space, %XX a byte (as libmicrohttpd's unescaper). */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (*s == '+') {
			*w++ = ' ';
		} else if (*s == '%' && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
			*w++ = (char)(hexval(s[1]) << 4 | hexval(s[2]));
			s += 2;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct serve_app app = { 0 };
	struct serve_query q;
	enum serve_endpoint ep;
	char *text, *nl, *pair, *save = NULL, err[256], canon[4096];
	char *body = NULL;
	size_t len;
	int rc = 0;

	if (!profile) {
		profile = build(0);
		base = build(1);
		FUZZ_INVARIANT(profile && base, "cannot build the fuzz captures");
	}
	if (size > 16384)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	if (serve_query__endpoint(text, &ep))
		goto cleanup;
	serve_query__init(&q, ep);
	for (pair = nl ? strtok_r(nl + 1, "&\n", &save) : NULL; pair && !rc;
	     pair = strtok_r(NULL, "&\n", &save)) {
		char *eq = strchr(pair, '=');

		if (eq)
			*eq = '\0';
		unescape(pair);
		if (eq)
			unescape(eq + 1);
		err[0] = '\0';
		rc = serve_query__set(&q, pair, eq ? eq + 1 : NULL, err, sizeof(err));
		FUZZ_INVARIANT(!rc || (rc == -EINVAL && err[0]), "refusal without a message");
	}
	if (rc)
		goto cleanup;
	rc = serve_query__finish(&q, err, sizeof(err));
	if (rc)
		goto cleanup;
	len = serve_query__canonical(&q, canon, sizeof(canon));
	FUZZ_INVARIANT(len < sizeof(canon), "canonical form of %zu bytes", len);
	app.profile = profile;
	app.base = (size & 1) ? base : NULL;
	err[0] = '\0';
	rc = serve_api__answer(&app, &q, &body, &len, err, sizeof(err));
	FUZZ_INVARIANT(rc == 0 || rc == -EINVAL || rc == -ENOENT, "answer returned %d", rc);
	FUZZ_INVARIANT(rc == 0 || err[0], "error %d without a message", rc);
	if (!rc) {
		json_t *j = json_loadb(body, len, 0, NULL);

		FUZZ_INVARIANT(j && json_is_object(j), "answer is not a JSON object: %.200s", body);
		json_decref(j);
	}
cleanup:
	free(body);
	free(text);
	return 0;
}
