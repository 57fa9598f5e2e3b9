// SPDX-License-Identifier: MIT
/*
 * Code with no file, as the processor names it (seed: "Anonymous executable
 * memory ...").  Per process, the functions its perf map and jitdump file
 * describe (userspace/runtimes/jit_funcs.h) are read while recording, and
 * only when a sample lands in anonymous code no function read so far
 * covers; a read that found nothing new is not made again for JIT_QUIET_NS
 * of the samples' time unless the process maps something.  A mapping over
 * a function read before it ends the function.
 *
 * Each anonymous mapping a function lies in becomes a module of its own
 * (CAPTURE_MODULE_JIT, path the file that named it), its frames named now:
 * no build ID proves a map later.  A frame in no function stays an
 * anonymous frame of no module.  Nothing is read when replaying a stream
 * (processor__read_processes): the pid then names another process, if any.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../runtimes/jit_policy.h"
#include "internal.h"

struct jit_state {
	struct jit_funcs funcs;
	struct perf_map map;
	struct jitdump dump;
	char *dump_path; /* the marker mapping's file name; NULL: none seen */
	uint64_t dump_start, dump_end;
	uint64_t quiet_until; /* samples' time before which no read is made */
	bool mapped;	      /* the process mapped something since the last read */
	struct u64map frames; /* address + 1 -> function seq << 32 | frame row */
	struct u64map modules; /* mapping start + 1 -> capture module row */
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct jit_state *state(struct proc_state *ps)
{
	if (!ps->jit) {
		ps->jit = calloc(1, sizeof(*ps->jit));
		if (!ps->jit)
			return NULL;
		jit_funcs__init(&ps->jit->funcs);
		perf_map__init(&ps->jit->map);
		jitdump__init(&ps->jit->dump);
	}
	return ps->jit;
}

int jit__mapped(struct processor *p, struct proc_state *ps, uint64_t start, uint64_t end,
		const char *path, uint64_t time)
{
	struct jit_state *js = ps->jit;

	if (path && jitdump__is_marker(path)) {
		char *copy = strdup(path);

		js = state(ps);
		if (!js || !copy) {
			free(copy);
			return -ENOMEM;
		}
		free(js->dump_path);
		js->dump_path = copy;
		js->dump_start = start;
		js->dump_end = end;
	}
	if (!js)
		return 0;
	jit_funcs__map(&js->funcs, start, end, time);
	js->mapped = true;
	return 0;
}

/* Inode of our own namespace of kind ("pid", "mnt"); 0 unknown. */
static uint64_t own_ns(const char *kind)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* Starts further apart than this are two processes (the capture's start
 * comes from a fork record or /proc; clocks and tick resolution differ). */
#define SAME_START_NS (200ull * 1000 * 1000)

/*
 * Whose files to read for ps: the live process, when its start matches
 * the one recorded (else the pid is another process's now); else, when it
 * exited in our own pid and mount namespaces, its files through our root
 * (any owner: its uid is gone; still checked against its start).  A
 * process gone from another namespace cannot be read: -ESRCH.
 */
static int target(struct processor *p, struct proc_state *ps, struct jit_target *t)
{
	const struct capture_process *row = capture_builder__process(p->b, ps->row);
	uint64_t start = row ? row->start_time_ns : 0;

	if (!jit_target__live((pid_t)ps->pid, t) &&
	    (!start || (t->start_boot_ns < start + SAME_START_NS &&
			start < t->start_boot_ns + SAME_START_NS))) {
		int root = jit_target__root(t);

		/* A zombie keeps its /proc entry but has no root any more. */
		if (root >= 0) {
			close(root);
			return 0;
		}
	}
	if (!p->own_pidns) {
		p->own_pidns = own_ns("pid");
		p->own_mntns = own_ns("mnt");
	}
	if (!row || !row->pidns || row->pidns != p->own_pidns || row->mntns != p->own_mntns)
		return -ESRCH;
	*t = (struct jit_target){
		.pid = (pid_t)ps->pid,
		.ns_pid = (pid_t)ps->pid,
		.any_owner = true,
		.own_root = true,
		.start_boot_ns = start,
	};
	return 0;
}

/* Read on the process's map and jitdump file, if the rules allow a read
 * now (time: the sample's).  True when the read found new functions. */
static bool read_on(struct processor *p, struct proc_state *ps, struct jit_state *js,
		    uint64_t time)
{
	uint32_t from_map = 0, from_dump = 0;
	uint64_t now = monotonic_ns();
	struct jit_target t;

	if (!p->read_processes || (time < js->quiet_until && !js->mapped))
		return false;
	js->mapped = false;
	p->jit_reads++;
	if (target(p, ps, &t)) {
		js->quiet_until = time + JIT_QUIET_NS;
		return false;
	}
	if (perf_map__read(&js->map, &js->funcs, &t, now, &from_map))
		return false;
	if (js->dump_path && jitdump__read(&js->dump, &js->funcs, &t, js->dump_start,
					   js->dump_end, js->dump_path, now, &from_dump))
		return false;
	js->quiet_until = from_map || from_dump ? 0 : time + JIT_QUIET_NS;
	return from_map || from_dump;
}

/* The JIT module over the mapping holding fn (the function's own range
 * when the recording saw no mapping there), made on first use. */
static uint32_t jit_module(struct processor *p, struct proc_state *ps, struct jit_state *js,
			   const struct jit_fn *fn)
{
	const struct proc_mapping *m = tasks__find_mapping(ps, fn->start);
	uint64_t start = m ? m->start : fn->start, end = m ? m->end : fn->end;
	uint64_t *cached = u64map__get(&js->modules, start + 1);
	char path[64];

	if (cached)
		return (uint32_t)*cached;
	if (fn->flags & JIT_FN_JITDUMP)
		snprintf(path, sizeof(path), "jit-%u.dump", js->dump.pid);
	else
		snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", ps->pid);
	struct capture_module row = {
		.path = capture_builder__string(p->b, path),
		.build_id = 0,
		.kind = CAPTURE_MODULE_JIT,
		.flags = CAPTURE_MODULE_F_SYMBOLIZED | CAPTURE_MODULE_F_RECORD_TIME,
		.size = end - start,
	};
	uint32_t module = capture_builder__add_module(p->b, &row);

	if (module == CAPTURE_NONE || u64map__put(&js->modules, start + 1, module))
		return CAPTURE_NONE;
	struct capture_mapping map = {
		.process = ps->row,
		.module = module,
		.start = start,
		.end = end,
		.pgoff = 0,
		.time_ns = p->sample_time,
	};
	capture_builder__add_mapping(p->b, &map);
	return module;
}

int jit__frame(struct processor *p, struct proc_state *ps, uint64_t ip, bool is_return,
	       uint32_t *row)
{
	uint64_t time = p->sample_time, at = is_return && ip ? ip - 1 : ip;
	const struct jit_fn *fn;
	struct jit_state *js;

	if (!ps || (!p->read_processes && !ps->jit))
		return -ENOENT;
	js = state(ps);
	if (!js)
		return -ENOMEM;
	fn = jit_funcs__find(&js->funcs, at, time);
	if (!fn && read_on(p, ps, js, time))
		fn = jit_funcs__find(&js->funcs, at, time);
	if (!fn)
		return -ENOENT;
	uint64_t *cached = u64map__get(&js->frames, ip + 1);

	if (cached && *cached >> 32 == (fn->seq & 0xffffffffu)) {
		*row = (uint32_t)*cached;
		return 0;
	}
	uint32_t module = jit_module(p, ps, js, fn), line = 0;
	const char *file = "";

	if (module == CAPTURE_NONE)
		return -ENOMEM;
	jit_funcs__line(&js->funcs, fn, at, &line, &file);
	struct capture_frame frame = {
		.module = module,
		.address = ip,
		.function = capture_builder__string(p->b, jit_funcs__name(&js->funcs, fn)),
		.file = capture_builder__string(p->b, file),
		.line = line,
	};
	*row = capture_builder__add_frame(p->b, &frame);
	if (*row == CAPTURE_NONE ||
	    u64map__put(&js->frames, ip + 1, (fn->seq & 0xffffffffu) << 32 | *row))
		return -ENOMEM;
	return 0;
}

void jit__finish(struct processor *p)
{
	uint64_t totals[JIT_PROBLEM_COUNT] = { 0 };
	char key[96], value[256];

	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct jit_state *js = p->procs[i].jit;
		uint32_t pid = p->procs[i].pid;

		if (!js)
			continue;
		for (int k = 0; k < JIT_PROBLEM_COUNT; k++)
			totals[k] += js->funcs.problems[k];
		if (js->map.state != PERF_MAP_UNREAD && js->map.state != PERF_MAP_ABSENT) {
			snprintf(key, sizeof(key), "jit.perf_map.%" PRIu32, pid);
			snprintf(value, sizeof(value), "%s: %s (%" PRIu64 " lines)",
				 perf_map_state__name(js->map.state),
				 perf_map_state__text(js->map.state), js->map.lines);
			capture_builder__set_meta(p->b, key, value);
		}
		if (js->dump_path && js->dump.state != JITDUMP_UNREAD) {
			snprintf(key, sizeof(key), "jit.jitdump.%" PRIu32, pid);
			snprintf(value, sizeof(value), "%s: %s (%" PRIu64 " records)",
				 jitdump_state__name(js->dump.state),
				 jitdump_state__text(js->dump.state), js->dump.records);
			capture_builder__set_meta(p->b, key, value);
		}
	}
	for (int k = 0; k < JIT_PROBLEM_COUNT; k++)
		if (totals[k]) {
			snprintf(key, sizeof(key), "jit.%s", jit_problem__name((unsigned int)k));
			capture_builder__add_counter(p->b, key, totals[k]);
		}
	if (p->jit_reads)
		capture_builder__add_counter(p->b, "jit.reads", p->jit_reads);
}

void jit__release(struct proc_state *ps)
{
	struct jit_state *js = ps->jit;

	if (!js)
		return;
	jit_funcs__release(&js->funcs);
	jitdump__release(&js->dump);
	free(js->dump_path);
	u64map__release(&js->frames);
	u64map__release(&js->modules);
	free(js);
	ps->jit = NULL;
}
