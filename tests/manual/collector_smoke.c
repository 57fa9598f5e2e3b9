// SPDX-License-Identifier: MIT
/*
 * Manual smoke test of the collector (not part of `make test`; needs root).
 *
 *   collector_smoke [-s SECONDS] [-F HZ] [-e cycles] [-w DIR] [-r RINGBUF_BYTES]
 *                   [-P PERF_PAGES] [-d POLL_DELAY_MS] launch [CMD ARGS...]
 *   collector_smoke [-s SECONDS] pid PID [PID2]    PID2 is added 0.3 s after start
 *   collector_smoke [-s SECONDS] all
 *   collector_smoke burn          the default workload: burns CPU in the main
 *                                 thread, a second thread and a forked child,
 *                                 and dlopen()s libzstd after 200 ms to
 *                                 compress in it
 *
 * Records, counts chunks by kind and perf records by type, prints a few
 * samples (tid, first user ip), the MMAP2 records of the target, the
 * counters, and finally checks that no program of ours is left in
 * `bpftool prog show` and no perf/BPF fd is left open.  With -w DIR the
 * stream is also written to DIR and replayed; the replay must see the same
 * number of chunks.  Exit status 0 when every check passed.
 *
 * Build (from the repository root, after generating the skeleton):
 *   gcc -std=gnu11 -O2 -g -D_GNU_SOURCE -I. -Ibuild-collector -o build-collector/collector_smoke \
 *       tests/manual/collector_smoke.c userspace/collector/{collector,stream,launch}.c \
 *       userspace/options/record_options.c -lbpf -lelf -lz -ldl -lpthread
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/abi/records.h"
#include "userspace/collector/collector.h"
#include "userspace/options/record_options.h"
#include "userspace/stream/perf_records.h"

#define MAX_CPUS 1024
#define MAX_TIDS 256

struct tid_count {
	__u32 pid, tid;
	__u64 samples, with_ustack;
};

struct smoke {
	pid_t target; /* 0 in system-wide mode */
	__u64 chunks[MS_CHUNK_END + 1];
	__u64 perf_types[32];
	__u64 mmap2_build_id, mmap2_target, mmap2_target_build_id, snapshot_records;
	__u64 samples, samples_target, samples_kernel, samples_ustack, samples_regs;
	__u64 samples_per_cpu[MAX_CPUS];
	__u64 first_time, last_time;
	struct tid_count tids[MAX_TIDS];
	int ntids, printed;
	bool saw_dlopen;
	__u64 dl_start, dl_end;
	__u64 user_ips[1 << 16];
	size_t nuser_ips;
	struct stream_writer *writer;
};

static void count_tid(struct smoke *s, const struct ms_sample *m)
{
	int i;

	for (i = 0; i < s->ntids; i++)
		if (s->tids[i].tid == m->tid)
			break;
	if (i == s->ntids) {
		if (s->ntids == MAX_TIDS)
			return;
		s->tids[s->ntids++] = (struct tid_count){.pid = m->pid, .tid = m->tid};
	}
	s->tids[i].samples++;
	if (m->ustack_len)
		s->tids[i].with_ustack++;
}

static void on_sample(struct smoke *s, const struct ms_sample *m, __u32 len)
{
	if (len < sizeof(*m) || m->hdr.type != MS_REC_SAMPLE || m->hdr.size != len ||
	    len != sizeof(*m) + 8u * (m->kstack_len + m->ustack_len)) {
		printf("  BAD sample record: len %u\n", len);
		return;
	}
	s->samples++;
	if (m->cpu < MAX_CPUS)
		s->samples_per_cpu[m->cpu]++;
	if (!s->first_time)
		s->first_time = m->time_ns;
	s->last_time = m->time_ns;
	if (m->flags & MS_SAMPLE_F_KERNEL_MODE)
		s->samples_kernel++;
	if (m->ustack_len)
		s->samples_ustack++;
	if (m->flags & MS_SAMPLE_F_USER_REGS)
		s->samples_regs++;
	count_tid(s, m);
	if (s->target && m->pid != (__u32)s->target && m->tid != (__u32)s->target)
		return;
	s->samples_target++;
	if ((m->flags & MS_SAMPLE_F_USER_REGS) && s->nuser_ips < sizeof(s->user_ips) / 8)
		s->user_ips[s->nuser_ips++] = m->regs.ip;
	if (s->printed++ < 6)
		printf("  sample pid %u tid %u cpu %u period %llu k=%u u=%u flags %#x "
		       "ips[user0] %#llx regs.ip %#llx\n",
		       m->pid, m->tid, m->cpu, (unsigned long long)m->period, m->kstack_len,
		       m->ustack_len, m->flags,
		       m->ustack_len ? (unsigned long long)m->ips[m->kstack_len] : 0ull,
		       (unsigned long long)m->regs.ip);
}

static void on_perf(struct smoke *s, const struct ms_chunk *c, const void *p)
{
	struct perf_sample_id_layout l;
	struct perf_event_header h;
	struct perf_mmap2 m;

	perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &l);
	if (c->source == MS_SOURCE_SNAPSHOT)
		s->snapshot_records++;
	if (perf_rec__header(p, c->len, &h))
		return;
	if (h.type < 32)
		s->perf_types[h.type]++;
	if (h.type == PERF_RECORD_MMAP2 && !perf_rec__parse_mmap2(&l, p, c->len, &m)) {
		bool bid = h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID;

		s->mmap2_build_id += bid;
		if (s->target && m.f.pid == (__u32)s->target) {
			s->mmap2_target++;
			s->mmap2_target_build_id += bid;
			if (strstr(m.filename, "libzstd")) {
				s->saw_dlopen = true;
				if (!s->dl_start || m.f.addr < s->dl_start)
					s->dl_start = m.f.addr;
				if (m.f.addr + m.f.len > s->dl_end)
					s->dl_end = m.f.addr + m.f.len;
			}
			printf("  mmap2 %-8s pid %u build_id %s %s\n",
			       c->source == MS_SOURCE_SNAPSHOT ? "snapshot" : "live", m.f.pid,
			       bid ? "yes" : "no ", m.filename);
		}
	}
}

static int sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	struct smoke *s = ctx;

	if (c->kind <= MS_CHUNK_END)
		s->chunks[c->kind]++;
	switch (c->kind) {
	case MS_CHUNK_META:
	case MS_CHUNK_COUNTER:
		printf("  %s %.*s\n", c->kind == MS_CHUNK_META ? "meta" : "counter", (int)c->len,
		       (const char *)payload);
		break;
	case MS_CHUNK_BPF:
		on_sample(s, payload, c->len);
		break;
	case MS_CHUNK_PERF:
		on_perf(s, c, payload);
		break;
	}
	return s->writer ? stream_writer__sink(s->writer, c, payload) : 0;
}

static __u64 replay_count;
static int count_sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	replay_count++;
	return 0;
}

/* ---- the default workload ---- */

static volatile double sink_value;

static __attribute__((noinline)) double burn_leaf(double x)
{
	int i;

	for (i = 0; i < 1000; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

static __attribute__((noinline)) void burn_for(double seconds)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		sink_value = burn_leaf(sink_value);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 < seconds);
}

static void *burn_thread(void *arg)
{
	burn_for(*(double *)arg);
	return NULL;
}

static int burn_main(double seconds)
{
	size_t (*compress)(void *, size_t, const void *, size_t, int);
	static char src[1 << 16], dst[1 << 17];
	struct timespec a, b;
	pthread_t th;
	void *lib;
	pid_t child;

	if (pthread_create(&th, NULL, burn_thread, &seconds))
		return 1;
	child = fork();
	if (child == 0) {
		burn_for(seconds);
		_exit(0);
	}
	burn_for(0.2);
	lib = dlopen("libzstd.so.1", RTLD_NOW);
	compress = lib ? (void *)dlsym(lib, "ZSTD_compress") : NULL;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		src[(unsigned)sink_value % sizeof(src)]++;
		if (compress)
			sink_value += (double)compress(dst, sizeof(dst), src, sizeof(src), 3);
		sink_value = burn_leaf(sink_value);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 <
		 seconds - 0.2);
	pthread_join(th, NULL);
	waitpid(child, NULL, 0);
	return 0;
}

/* ---- leftovers ---- */

static int count_our_programs(bool verbose)
{
	char line[512];
	int n = 0;
	FILE *f = popen("bpftool prog show 2>/dev/null", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "handle_sample") || strstr(line, "handle_fork") ||
		    strstr(line, "handle_exit")) {
			n++;
			if (verbose)
				printf("  still listed: %s", line);
		}
	pclose(f);
	return n;
}

static int count_event_fds(void)
{
	char path[PATH_MAX], target[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strstr(target, "perf_event") || strstr(target, "bpf"))
			n++;
	}
	closedir(d);
	return n;
}

static double elapsed(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) * 1e-9;
}

int main(int argc, char **argv)
{
	static char *default_cmd[] = {"/proc/self/exe", "burn", NULL};
	static struct smoke s;
	struct record_options o;
	struct launcher l = {.pid = -1};
	struct collector *c = NULL;
	const char *raw_dir = NULL;
	double seconds = 1.5;
	int poll_delay_ms = 0;
	pid_t late_pid = 0;
	char err[512] = "";
	struct timespec t0;
	int opt, ret, i, failures = 0, left;

	if (argc >= 2 && !strcmp(argv[1], "burn"))
		return burn_main(argc >= 3 ? atof(argv[2]) : 1.2);

	record_options__init(&o);
	while ((opt = getopt(argc, argv, "+s:F:e:w:r:P:d:")) != -1) {
		switch (opt) {
		case 's':
			seconds = atof(optarg);
			break;
		case 'F':
			o.freq_hz = (uint32_t)atoi(optarg);
			break;
		case 'e':
			o.event = !strcmp(optarg, "cycles") ? MS_EVENT_CYCLES : MS_EVENT_CPU_CLOCK;
			break;
		case 'w':
			raw_dir = optarg;
			break;
		case 'r':
			o.ringbuf_bytes = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'd':
			poll_delay_ms = atoi(optarg);
			break;
		case 'P':
			o.perf_pages = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr,
			"usage: %s [-s S] [-F HZ] [-e cycles] [-w DIR] launch [CMD...] | "
			"pid PID | all\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[optind], "all")) {
		o.system_wide = true;
	} else if (!strcmp(argv[optind], "pid") && optind + 1 < argc) {
		s.target = atoi(argv[optind + 1]);
		if (optind + 2 < argc)
			late_pid = atoi(argv[optind + 2]);
	} else if (!strcmp(argv[optind], "launch")) {
		o.argv = optind + 1 < argc ? &argv[optind + 1] : default_cmd;
	} else {
		fprintf(stderr, "unknown mode %s\n", argv[optind]);
		return 2;
	}
	if (raw_dir) {
		s.writer = stream_writer__new(raw_dir);
		if (!s.writer) {
			perror("stream_writer__new");
			return 1;
		}
	}

	c = collector__new(&o, sink, &s, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "collector__new: %s (%s)\n", err, strerror(errno));
		return 1;
	}
	if (o.argv) {
		ret = launcher__spawn(&l, o.argv);
		if (ret) {
			fprintf(stderr, "launcher__spawn: %s\n", strerror(-ret));
			goto out;
		}
		s.target = l.pid;
	}
	if (s.target) {
		ret = collector__add_target(c, s.target);
		if (ret) {
			fprintf(stderr, "add_target %d: %s\n", s.target, strerror(-ret));
			goto out;
		}
	}
	ret = collector__start(c, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "collector__start: %s (%s)\n", err, strerror(-ret));
		goto out;
	}
	if (o.argv) {
		ret = launcher__release(&l);
		if (ret)
			fprintf(stderr, "launcher__release: %s\n", strerror(-ret));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (elapsed(&t0) < seconds) {
		if (poll_delay_ms) /* let the rings fill up: tests LOST accounting */
			usleep((useconds_t)poll_delay_ms * 1000);
		if (late_pid && elapsed(&t0) > 0.3) {
			ret = collector__add_target(c, late_pid);
			printf("  late add_target %d: %s\n", late_pid, ret ? strerror(-ret) : "ok");
			late_pid = 0;
		}
		ret = collector__poll(c, 100);
		if (ret < 0) {
			fprintf(stderr, "collector__poll: %s\n", strerror(-ret));
			break;
		}
		if (o.argv && l.pid > 0 && waitpid(l.pid, NULL, WNOHANG) == l.pid) {
			l.pid = -1;
			break;
		}
	}
	ret = collector__stop(c);
	if (ret)
		fprintf(stderr, "collector__stop: %s\n", strerror(-ret));
out:
	collector__free(c);
	if (l.pid > 0) {
		kill(l.pid, SIGKILL);
		waitpid(l.pid, NULL, 0);
	}

	printf("chunks: META %llu BPF %llu PERF %llu ROUND %llu COUNTER %llu END %llu\n",
	       (unsigned long long)s.chunks[MS_CHUNK_META],
	       (unsigned long long)s.chunks[MS_CHUNK_BPF],
	       (unsigned long long)s.chunks[MS_CHUNK_PERF],
	       (unsigned long long)s.chunks[MS_CHUNK_ROUND],
	       (unsigned long long)s.chunks[MS_CHUNK_COUNTER],
	       (unsigned long long)s.chunks[MS_CHUNK_END]);
	printf(
	    "perf records: MMAP2 %llu (build id %llu; target %llu, with build id %llu) COMM %llu "
	    "FORK %llu EXIT %llu LOST %llu; from snapshot %llu\n",
	    (unsigned long long)s.perf_types[PERF_RECORD_MMAP2],
	    (unsigned long long)s.mmap2_build_id, (unsigned long long)s.mmap2_target,
	    (unsigned long long)s.mmap2_target_build_id,
	    (unsigned long long)s.perf_types[PERF_RECORD_COMM],
	    (unsigned long long)s.perf_types[PERF_RECORD_FORK],
	    (unsigned long long)s.perf_types[PERF_RECORD_EXIT],
	    (unsigned long long)s.perf_types[PERF_RECORD_LOST],
	    (unsigned long long)s.snapshot_records);
	double span = s.last_time > s.first_time ? (double)(s.last_time - s.first_time) * 1e-9 : 0;
	printf("samples: %llu (target %llu, kernel mode %llu, with user stack %llu, user regs "
	       "%llu) over %.2f s\n",
	       (unsigned long long)s.samples, (unsigned long long)s.samples_target,
	       (unsigned long long)s.samples_kernel, (unsigned long long)s.samples_ustack,
	       (unsigned long long)s.samples_regs, span);
	for (i = 0; i < MAX_CPUS; i++)
		if (s.samples_per_cpu[i])
			printf("  cpu %d: %llu samples, %.0f/s\n", i,
			       (unsigned long long)s.samples_per_cpu[i],
			       span > 0 ? (double)s.samples_per_cpu[i] / span : 0);
	for (i = 0; i < s.ntids && i < 12; i++)
		printf("  pid %u tid %u: %llu samples (%llu with user stack)\n", s.tids[i].pid,
		       s.tids[i].tid, (unsigned long long)s.tids[i].samples,
		       (unsigned long long)s.tids[i].with_ustack);
	if (s.ntids > 12)
		printf("  ... %d threads in all\n", s.ntids);

	if (!s.chunks[MS_CHUNK_END] || !s.samples_target) {
		printf("FAIL: no END or no target samples\n");
		failures++;
	}
	if (o.argv == default_cmd) {
		int pids = 0;

		for (i = 0; i < s.ntids; i++)
			pids += s.tids[i].pid != (__u32)s.target;
		if (s.ntids < 3 || !pids) {
			printf("FAIL: expected samples from the main thread, a thread and the "
			       "forked child (%d threads, %d of other processes)\n",
			       s.ntids, pids);
			failures++;
		}
		size_t in_lib = 0, k;

		for (k = 0; k < s.nuser_ips; k++)
			in_lib += s.user_ips[k] >= s.dl_start && s.user_ips[k] < s.dl_end;
		printf(
		    "dlopen'ed libzstd: MMAP2 %s [%#llx, %#llx), %zu target samples with user ip "
		    "inside it\n",
		    s.saw_dlopen ? "seen" : "MISSING", (unsigned long long)s.dl_start,
		    (unsigned long long)s.dl_end, in_lib);
		if (!s.saw_dlopen || !in_lib) {
			printf("FAIL: no MMAP2 for the dlopen'ed libzstd, or no sample in it\n");
			failures++;
		}
	}
	/* The kernel frees programs after an RCU grace period (tp_btf ones after
	 * an RCU-tasks-trace one): allow it a moment, and say how long it took. */
	left = count_our_programs(true);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (left > 0 && elapsed(&t0) < 5) {
		usleep(20000);
		left = count_our_programs(false);
	}
	printf("bpftool: %d of our programs left (%.2f s after free); %d perf/bpf fds left\n", left,
	       elapsed(&t0), count_event_fds());
	if (left != 0 || count_event_fds() != 0) {
		printf("FAIL: leftovers\n");
		failures++;
	}
	if (s.writer) {
		ret = stream_writer__free(s.writer);
		if (!ret)
			ret = stream__replay(raw_dir, count_sink, NULL);
		__u64 total = 0;

		for (i = 0; i <= MS_CHUNK_END; i++)
			total += s.chunks[i];
		printf("replay: %s, %llu chunks (recorded %llu)\n", ret ? strerror(-ret) : "ok",
		       (unsigned long long)replay_count, (unsigned long long)total);
		if (ret || replay_count != total)
			failures++;
	}
	printf("%s\n", failures ? "SMOKE FAILED" : "SMOKE OK");
	return failures ? 1 : 0;
}
