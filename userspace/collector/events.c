// SPDX-License-Identifier: MIT
/* The perf events (collector_internal.h): the CPUs, the sampling event and
 * its choice, the per-CPU side-band rings (dummy events) and their
 * draining, and the sampling events' attachment to the sampler. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/abi/records.h"
#include "collector_internal.h"
#include "../stream/memory_policy.h"
#include "../stream/meta.h"
#include "skel/sampler.skel.h"

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Parse a CPU list such as "0-3,5" (Documentation/admin-guide/cputopology.rst). */
static int parse_cpu_list(const char *s, int *out, int max)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -EINVAL;
			s = end;
		}
		for (; a <= b; a++) {
			if (n >= max)
				return -E2BIG;
			out[n++] = (int)a;
		}
		if (*s == ',')
			s++;
	}
	return n;
}

int collector__find_cpus(struct collector *c)
{
	char buf[4096];
	ssize_t n;
	int fd, i;

	c->nr_possible = libbpf_num_possible_cpus();
	if (c->nr_possible <= 0)
		return c->nr_possible < 0 ? c->nr_possible : -ENODEV;
	c->online = calloc((size_t)c->nr_possible, sizeof(*c->online));
	if (!c->online)
		return -ENOMEM;
	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			c->nr_online = parse_cpu_list(buf, c->online, c->nr_possible);
			if (c->nr_online > 0)
				return 0;
		}
	}
	for (i = 0; i < c->nr_possible; i++) /* fall back: every possible CPU */
		c->online[i] = i;
	c->nr_online = c->nr_possible;
	return 0;
}
/*
 * Drain one perf ring: every record between data_tail and data_head
 * (load-acquire of data_head pairs with the kernel's store; the store-release
 * of data_tail tells the kernel the space is free; perf_event.h, "struct
 * perf_event_mmap_page").  Returns the records emitted or -errno.
 */
int collector__drain_perf(struct collector *c, struct perf_ring *r)
{
	struct perf_event_mmap_page *pc = r->base;
	__u64 head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
	__u64 tail = pc->data_tail;
	__u64 mask = r->data_size - 1;
	int n = 0, err = 0;

	while (tail < head) {
		struct perf_event_header hdr;
		__u64 avail = head - tail, off = tail & mask;
		const char *rec;

		if (avail > r->data_size || avail < sizeof(hdr))
			goto corrupt;
		/* records are 8-aligned, so the header never wraps; check anyway */
		if (off + sizeof(hdr) > r->data_size)
			goto corrupt;
		memcpy(&hdr, r->data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > avail)
			goto corrupt;
		if (off + hdr.size <= r->data_size) {
			rec = r->data + off;
		} else {
			size_t first = r->data_size - off;

			memcpy(c->copy_buf, r->data + off, first);
			memcpy(c->copy_buf + first, r->data, hdr.size - first);
			rec = c->copy_buf;
		}
		if (hdr.type == PERF_RECORD_LOST) {
			struct perf_lost lost;

			if (!perf_rec__parse_lost(&c->sideband_id, rec, hdr.size, &lost)) {
				c->lost_records++;
				c->lost_events += lost.f.lost;
			}
		}
		c->perf_records++;
		err = collector__emit(c, MS_CHUNK_PERF, r->cpu, 0, rec, hdr.size);
		tail += hdr.size;
		if (err)
			break;
		n++;
	}
	__atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
	return err ? err : n;
corrupt:
	/* A header the kernel cannot have written: skip what is there. */
	c->ring_errors++;
	__atomic_store_n(&pc->data_tail, head, __ATOMIC_RELEASE);
	return n;
}
static void attr__init_sampling(struct perf_event_attr *a, const struct record_options *o,
				bool cycles)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a->config = cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = o->freq_hz;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->exclude_idle = 1; /* the sampler drops the idle task anyway */
	a->disabled = 1;     /* enabled by bpf_program__attach_perf_event */
}

/*
 * No attr.build_id: with it the kernel flags the mmap event's header, shared
 * by every listener, PERF_RECORD_MISC_MMAP_BUILD_ID (perf_event_mmap_output),
 * and other tools asking for maj/min/ino (perf record) misparse their
 * records and crash.  The processor reads build IDs from the mapped files.
 */
static void attr__init_dummy(struct perf_event_attr *a, __u64 ring_bytes)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = MS_SIDEBAND_SAMPLE_TYPE;
	a->sample_id_all = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (__u32)(ring_bytes / 4);
}

/* Choose the sampling event: cycles if asked for and the CPU has it. */
int collector__pick_event(struct collector *c, char *err, size_t errlen)
{
	struct perf_event_attr a;
	long fd;

	c->event_name = "cpu-clock";
	if (c->opts.event != MS_EVENT_CYCLES)
		return 0;
	attr__init_sampling(&a, &c->opts, true);
	fd = sys_perf_event_open(&a, -1, c->online[0]);
	if (fd >= 0) {
		close((int)fd);
		c->event_name = "cycles";
		return 0;
	}
	if (errno == EACCES || errno == EPERM) {
		collector__diagnose(-errno, false, "perf_event_open(cycles)", err, errlen);
		return -errno;
	}
	snprintf(c->event_note, sizeof(c->event_note),
		 "cycles unavailable (%s: no hardware PMU counter); fell back to cpu-clock",
		 strerror(errno));
	return 0;
}

int collector__open_rings(struct collector *c, char *err, size_t errlen)
{
	struct epoll_event ev = {.events = EPOLLIN};
	__u64 ring_bytes = (__u64)c->opts.perf_pages * (__u64)c->page_size;
	struct perf_event_attr a;
	int i, ret;

	c->build_ids = false;
	for (i = 0; i < c->nr_online; i++) {
		struct perf_ring *r = &c->rings[i];
		long fd;

		attr__init_dummy(&a, ring_bytes);
		fd = sys_perf_event_open(&a, -1, c->online[i]);
		if (fd < 0) {
			ret = -errno;
			collector__diagnose(ret, false, "perf_event_open(dummy side-band event)", err, errlen);
			return ret;
		}
		r->fd = (int)fd;
		r->cpu = (__u32)c->online[i];
		r->map_bytes = (size_t)(ring_bytes + (__u64)c->page_size);
		r->base = mmap(NULL, r->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->base == MAP_FAILED) {
			ret = -errno;
			r->base = NULL;
			collector__errf(err, errlen, "mmap of the perf ring (%llu bytes) on CPU %u: %s%s",
			     (unsigned long long)r->map_bytes, r->cpu, strerror(-ret),
			     ret == -EPERM ? " (kernel.perf_event_mlock_kb exceeded?)" : "");
			return ret;
		}
		r->data = (char *)r->base + c->page_size;
		r->data_size = ring_bytes;
		ev.data.fd = r->fd;
		if (epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, r->fd, &ev)) {
			ret = -errno;
			collector__errf(err, errlen, "epoll_ctl: %s", strerror(-ret));
			return ret;
		}
	}
	return 0;
}


int collector__attach_sampling(struct collector *c, char *err, size_t errlen)
{
	bool cycles = !strcmp(c->event_name, "cycles");
	struct perf_event_attr a;
	int i, ret;

	for (i = 0; i < c->nr_online; i++) {
		long fd;

		attr__init_sampling(&a, &c->opts, cycles);
		fd = sys_perf_event_open(&a, -1, c->online[i]);
		if (fd < 0) {
			ret = -errno;
			collector__diagnose(ret, false, "perf_event_open(sampling event)", err, errlen);
			return ret;
		}
		c->sample_fds[i] = (int)fd;
		/* Our own reference for PERF_EVENT_IOC_PERIOD: the link closes its fd. */
		c->period_fds[i] = fcntl((int)fd, F_DUPFD_CLOEXEC, 0);
		if (c->period_fds[i] < 0) {
			ret = -errno;
			collector__errf(err, errlen, "dup of the sampling event on CPU %d: %s", c->online[i],
			     strerror(-ret));
			return ret;
		}
		c->links[i] =
		    bpf_program__attach_perf_event(c->skel->progs.handle_sample, c->sample_fds[i]);
		if (!c->links[i]) {
			ret = -errno;
			collector__errf(err, errlen, "attaching the sampler to CPU %d: %s", c->online[i],
			     strerror(-ret));
			return ret;
		}
		c->sample_fds[i] = -1; /* the link owns it now */
	}
	return 0;
}
