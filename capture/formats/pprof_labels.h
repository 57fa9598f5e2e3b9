/* SPDX-License-Identifier: MIT */
/*
 * pprof sample labels (proto field 3, Label) as capture rows: the labels
 * pprof__export writes (pprof_labels.c names them) become each sample's
 * thread, its process and its cgroup again, so a capture exported and
 * imported back still splits by process, thread and container.  Labels of
 * other keys, or of a known key in the other form (a string "pid"), are
 * counted in dropped, their first key kept for the note.
 *
 * The pprof_labels owns its lookup tables; the rows it adds are b's.
 */
#ifndef MS_CAPTURE_FORMATS_PPROF_LABELS_H
#define MS_CAPTURE_FORMATS_PPROF_LABELS_H

#include <stdint.h>

#include "capture/capture.h"
#include "capture/formats/keymap.h"
#include "capture/formats/profile.pb-c.h"

/* Label keys (export and import share them). */
#define PPROF_LABEL_PID		 "pid"		/* num: process id (initial pid namespace) */
#define PPROF_LABEL_TID		 "tid"		/* num: thread id */
#define PPROF_LABEL_THREAD	 "thread"	/* str: the thread's comm */
#define PPROF_LABEL_COMM	 "comm"		/* str: the process's comm */
#define PPROF_LABEL_CONTAINER	 "container"	/* str: the container as tools show it */
#define PPROF_LABEL_CONTAINER_ID "container_id" /* str: its full id, when shortened */
#define PPROF_LABEL_RUNTIME	 "runtime"	/* str: docker, podman, ... */
#define PPROF_LABEL_CGROUP	 "cgroup"	/* str: cgroup v2 path */
#define PPROF_LABEL_CGROUP_ID	 "cgroup_id"	/* num: kernel cgroup id */
#define PPROF_LABEL_CLIPPED	 "clipped"	/* str: "recording window" */

struct pprof_labels {
	struct capture_builder *b;	       /* borrowed */
	const Perftools__Profiles__Profile *p; /* borrowed */
	struct keymap processes;	       /* (pid, 0) -> processes row */
	struct keymap threads; /* (pid << 32 | tid, thread comm string) -> threads row */
	struct keymap cgroups; /* (cgroup id, path | container << 32) -> cgroups row */
	uint64_t dropped;      /* labels not carried */
	uint64_t clipped;      /* of those, clipped="recording window" marks */
	int64_t first_unknown; /* string index of the first key not read, or -1 */
};

void pprof_labels__init(struct pprof_labels *pl, struct capture_builder *b,
			const Perftools__Profiles__Profile *p);
/*
 * Sample s's labels: *thread (a threads row, its process added too) when
 * it has pid and tid, else CAPTURE_NONE; *cgroup (a cgroups row) when it
 * has any cgroup or container label, else CAPTURE_NONE.  Returns 0,
 * -EBADMSG (a string index out of the table; err says which sample) or
 * -ENOMEM.
 */
int pprof_labels__sample(struct pprof_labels *pl, const Perftools__Profiles__Sample *s,
			 size_t index, uint32_t *thread, uint32_t *cgroup, char *err,
			 size_t errlen);
void pprof_labels__release(struct pprof_labels *pl);

#endif
