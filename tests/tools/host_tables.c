// SPDX-License-Identifier: MIT
/*
 * host_tables CAPTURE: the host-attribution facts of a capture as text, one
 * row per line, tab-separated, for tests/e2e/test_host.py:
 *   process PID PPID COMM PIDNS NS_PID      (NS_PID: its main thread's ns_tid)
 *   thread TID NS_TID PID COMM
 *   cgroup ROW CGROUP_ID PATH CONTAINER RUNTIME
 *   sample PID TID CGROUP_ROW WEIGHT LEAF PY  (CGROUP_ROW -1 if none; LEAF the
 *                                            innermost frame's name; PY 1 if the
 *                                            stack holds an interpreted frame)
 * Samples are in the capture's order (by time).
 */
#include <stdio.h>

#include "analysis/analysis.h"
#include "capture/capture.h"

int main(int argc, char **argv)
{
	struct capture *c = NULL;
	char err[512], leaf[512];

	if (argc != 2) {
		fprintf(stderr, "usage: host_tables CAPTURE\n");
		return 2;
	}
	if (capture__open(argv[1], &c, err, sizeof(err))) {
		fprintf(stderr, "host_tables: %s\n", err);
		return 1;
	}
	for (uint32_t p = 0; p < c->nprocesses; p++) {
		const struct capture_process *pr = &c->processes[p];
		uint32_t ns_pid = 0;

		for (uint32_t t = 0; t < c->nthreads; t++)
			if (c->threads[t].process == p && c->threads[t].tid == pr->pid)
				ns_pid = c->threads[t].ns_tid;
		printf("process\t%u\t%u\t%s\t%llu\t%u\n", pr->pid, pr->ppid,
		       capture__string(c, pr->comm), (unsigned long long)pr->pidns, ns_pid);
	}
	for (uint32_t t = 0; t < c->nthreads; t++) {
		const struct capture_thread *th = &c->threads[t];

		printf("thread\t%u\t%u\t%u\t%s\n", th->tid, th->ns_tid, c->processes[th->process].pid,
		       capture__string(c, th->comm));
	}
	for (uint32_t g = 0; g < c->ncgroups; g++)
		printf("cgroup\t%u\t%llu\t%s\t%s\t%s\n", g,
		       (unsigned long long)c->cgroups[g].cgroup_id,
		       capture__string(c, c->cgroups[g].path),
		       capture__string(c, c->cgroups[g].container),
		       capture__string(c, c->cgroups[g].runtime));
	for (uint32_t i = 0; i < c->nsamples; i++) {
		const struct capture_sample *s = &c->samples[i];
		const struct capture_thread *th = s->thread == CAPTURE_NONE ? NULL
									    : &c->threads[s->thread];
		uint32_t cg = capture__sample_cgroup(c, i);

		int py = 0;

		for (uint32_t st = s->stack; st != CAPTURE_NONE; st = c->stacks[st].parent)
			if (c->frames[c->stacks[st].frame].flags & CAPTURE_FRAME_F_INTERPRETED)
				py = 1;
		leaf[0] = '\0';
		if (s->stack != CAPTURE_NONE)
			analysis__frame_name(c, &c->frames[c->stacks[s->stack].frame], leaf,
					     sizeof(leaf));
		printf("sample\t%u\t%u\t%d\t%llu\t%s\t%d\n", th ? c->processes[th->process].pid : 0,
		       th ? th->tid : 0, cg == CAPTURE_NONE ? -1 : (int)cg,
		       (unsigned long long)s->weight, leaf, py);
	}
	capture__free(c);
	return 0;
}
