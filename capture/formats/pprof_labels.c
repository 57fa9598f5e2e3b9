// SPDX-License-Identifier: MIT
/* pprof sample labels as threads, processes and cgroups (pprof_labels.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "capture/formats/pprof_labels.h"

void pprof_labels__init(struct pprof_labels *pl, struct capture_builder *b,
			const Perftools__Profiles__Profile *p)
{
	memset(pl, 0, sizeof(*pl));
	pl->b = b;
	pl->p = p;
	pl->first_unknown = -1;
}

void pprof_labels__release(struct pprof_labels *pl)
{
	keymap__release(&pl->processes);
	keymap__release(&pl->threads);
	keymap__release(&pl->cgroups);
}

/* What one sample's labels say; string fields are pprof string indexes (0: "" / none). */
struct sample_labels {
	bool has_pid, has_tid, has_cgroup_id;
	uint64_t pid, tid, cgroup_id;
	int64_t thread, comm, container, container_id, runtime, cgroup;
};

static bool str_ok(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (uint64_t)i < p->n_string_table;
}

/* Read label l into sl; false if microscope does not read it (dropped). */
static bool label_read(struct pprof_labels *pl, const Perftools__Profiles__Label *l,
		       struct sample_labels *sl)
{
	const char *key = pl->p->string_table[l->key];
	bool num = !l->str, str = l->str && !l->num;

	if (!strcmp(key, PPROF_LABEL_PID) && num && l->num > 0 && l->num <= UINT32_MAX) {
		sl->has_pid = true;
		sl->pid = (uint64_t)l->num;
	} else if (!strcmp(key, PPROF_LABEL_TID) && num && l->num > 0 && l->num <= UINT32_MAX) {
		sl->has_tid = true;
		sl->tid = (uint64_t)l->num;
	} else if (!strcmp(key, PPROF_LABEL_CGROUP_ID) && num && l->num > 0) {
		sl->has_cgroup_id = true;
		sl->cgroup_id = (uint64_t)l->num;
	} else if (!strcmp(key, PPROF_LABEL_THREAD) && str) {
		sl->thread = l->str;
	} else if (!strcmp(key, PPROF_LABEL_COMM) && str) {
		sl->comm = l->str;
	} else if (!strcmp(key, PPROF_LABEL_CONTAINER) && str) {
		sl->container = l->str;
	} else if (!strcmp(key, PPROF_LABEL_CONTAINER_ID) && str) {
		sl->container_id = l->str;
	} else if (!strcmp(key, PPROF_LABEL_RUNTIME) && str) {
		sl->runtime = l->str;
	} else if (!strcmp(key, PPROF_LABEL_CGROUP) && str) {
		sl->cgroup = l->str;
	} else {
		if (!strcmp(key, PPROF_LABEL_CLIPPED))
			pl->clipped++; /* no sample field holds it */
		else if (pl->first_unknown < 0)
			pl->first_unknown = l->key;
		return false;
	}
	return true;
}

static uint32_t thread_row(struct pprof_labels *pl, const struct sample_labels *sl)
{
	const Perftools__Profiles__Profile *p = pl->p;
	uint32_t comm = capture_builder__string(pl->b, p->string_table[sl->thread]);
	uint32_t process, thread;

	if (comm == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (keymap__get(&pl->threads, sl->pid << 32 | sl->tid, comm, &thread))
		return thread;
	if (!keymap__get(&pl->processes, sl->pid, 0, &process)) {
		process = capture_builder__add_process(
		    pl->b, &(struct capture_process){
			       .pid = (uint32_t)sl->pid,
			       .comm = capture_builder__string(pl->b, p->string_table[sl->comm]),
			       .exe = capture_builder__string(pl->b, ""),
			   });
		if (process == CAPTURE_NONE || keymap__put(&pl->processes, sl->pid, 0, process))
			return CAPTURE_NONE;
	}
	thread = capture_builder__add_thread(pl->b, &(struct capture_thread){
							.tid = (uint32_t)sl->tid,
							.process = process,
							.comm = comm,
						    });
	if (thread == CAPTURE_NONE ||
	    keymap__put(&pl->threads, sl->pid << 32 | sl->tid, comm, thread))
		return CAPTURE_NONE;
	return thread;
}

static uint32_t cgroup_row(struct pprof_labels *pl, const struct sample_labels *sl)
{
	const Perftools__Profiles__Profile *p = pl->p;
	struct capture_builder *b = pl->b;
	uint32_t path = capture_builder__string(b, p->string_table[sl->cgroup]);
	uint32_t container = capture_builder__string(
	    b, p->string_table[sl->container_id ? sl->container_id : sl->container]);
	uint32_t runtime = capture_builder__string(b, p->string_table[sl->runtime]);
	uint64_t id = sl->has_cgroup_id ? sl->cgroup_id : 0;
	uint32_t row;

	if (path == CAPTURE_NONE || container == CAPTURE_NONE || runtime == CAPTURE_NONE)
		return CAPTURE_NONE;
	if (keymap__get(&pl->cgroups, id, path | (uint64_t)container << 32, &row))
		return row;
	row = capture_builder__add_cgroup(b, &(struct capture_cgroup){
						 .cgroup_id = id,
						 .path = path,
						 .container = container,
						 .runtime = runtime,
					     });
	if (row == CAPTURE_NONE ||
	    keymap__put(&pl->cgroups, id, path | (uint64_t)container << 32, row))
		return CAPTURE_NONE;
	return row;
}

int pprof_labels__sample(struct pprof_labels *pl, const Perftools__Profiles__Sample *s,
			 size_t index, uint32_t *thread, uint32_t *cgroup, char *err, size_t errlen)
{
	struct sample_labels sl = {0};
	size_t i;

	*thread = CAPTURE_NONE;
	*cgroup = CAPTURE_NONE;
	for (i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		if (!str_ok(pl->p, l->key) || !str_ok(pl->p, l->str) ||
		    !str_ok(pl->p, l->num_unit)) {
			snprintf(err, errlen,
				 "sample %zu: label %zu has a string index out of the table", index,
				 i);
			return -EBADMSG;
		}
		if (!label_read(pl, l, &sl))
			pl->dropped++;
	}
	if (sl.has_pid && sl.has_tid) {
		*thread = thread_row(pl, &sl);
		if (*thread == CAPTURE_NONE)
			return -ENOMEM;
	} else {
		/* half a thread's identity: its labels say nothing alone */
		pl->dropped += sl.has_pid + sl.has_tid + !!sl.thread + !!sl.comm;
	}
	if (sl.cgroup || sl.container || sl.container_id || sl.runtime || sl.has_cgroup_id) {
		*cgroup = cgroup_row(pl, &sl);
		if (*cgroup == CAPTURE_NONE)
			return -ENOMEM;
	}
	return 0;
}
