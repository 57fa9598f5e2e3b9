// SPDX-License-Identifier: MIT
/*
 * Code with no file, as the processor names it (seed: "Anonymous executable
 * memory ...").  Per process, the functions its perf map and jitdump file
 * describe (userspace/runtimes/jit_funcs.h) are read while recording, and
 * only when a sample lands in anonymous code no function read so far
 * covers; a read that found nothing new is not made again for JIT_QUIET_NS
 * of the samples' time unless the process maps something.  A mapping over
 * a function read before it ends the function.  They are also read at each
 * drain round, before its records are released (jit__round): a process
 * that mapped executable anonymous memory since, and every JIT_PROMPT_NS
 * one whose files are being read, so functions are read close to when they
 * were written however far processing lags.  A function names only the
 * samples of its own time (runtimes/jit_funcs.h, "Time"), dated with the
 * mappings recorded as drained (jit_maplog.c); a frame in code that only
 * a function of another time covers stays unnamed (jit.unnamed_time).
 *
 * Each anonymous mapping a function lies in becomes a module of its own
 * (CAPTURE_MODULE_JIT, path the file that named it), its frames named now:
 * no build ID proves a map later.  A frame in no function stays an
 * anonymous frame of no module, except in a process that announced a
 * jitdump file: a writer may hold its records in a buffer until it exits
 * (V8 keeps up to 2 MiB), so such a frame gets a row of its own, named when
 * the capture is sealed from the whole file read again from its start: the
 * load that named its address over all the times of its samples, or none
 * when the name changed in between (jitdump records carry their times, so
 * no sample is named by a later load).  Nothing is read when replaying a stream
 * (processor__read_processes): the pid then names another process, if any.
 *
 * Objects registered through the GDB JIT interface (gdb_jit.h) are read the
 * same way, only for a process one of whose modules holds a
 * __jit_debug_descriptor, and copied only when the list's bytes changed;
 * their symbols name their functions and their own CFI unwinds them.
 *
 * No call-frame information describes perf-map code, so each function's frames
 * are proved from its code (userspace/unwind/frame_proof.h), read from the
 * process right after the read that found the function, within the code
 * budget; the DWARF unwinder gets the proof as the function's module, and
 * an address the proof does not reach ends the unwind with no CFI.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../runtimes/gdb_jit.h"
#include "../runtimes/jit_policy.h"
#include "../unwind/frame_proof.h"
#include "internal.h"

/* Replaced functions are kept this long (ns of samples' time) behind the
 * sample being processed, for records that arrive out of order. */
#define JIT_HISTORY_SLACK_NS (1000ull * 1000 * 1000)

struct jit_state {
	struct jit_funcs funcs;
	struct processor *p; /* for funcs.mapped: the drained mappings of pid */
	uint32_t pid;
	struct perf_map map;
	struct jitdump dump;
	char *dump_path; /* the marker mapping's file name; NULL: none seen */
	uint64_t dump_start, dump_end;
	uint64_t quiet_until; /* samples' time before which no read is made */
	uint64_t prompt_ns;   /* when jit__round last read (CLOCK_MONOTONIC) */
	bool prompt_due;      /* mapped executable anonymous memory: read at the round */
	bool mapped;	      /* the process mapped something since the last read */
	struct u64map frames; /* address + 1 -> function seq << 32 | frame row */
	struct u64map modules; /* mapping start + 1 -> capture module row */
	/* frame proofs: rows of each function proved, by its seq */
	struct unwind_proof_row *proof_rows;
	uint32_t nproof_rows, proof_rows_cap;
	struct u64map proofs;	  /* seq -> first row << 16 | rows */
	struct u64map proof_mods; /* seq -> struct unwind_module * (made on first unwind) */
	uint64_t proved_seq;	  /* functions up to this seq had their chance */
	uint64_t proved, unproved; /* functions with a proof, without (no code, none) */
	/* the GDB JIT interface: objects, and their compiled CFI by index + 1 */
	struct gdb_jit gdb;
	bool gdb_looked; /* the modules were searched for a descriptor */
	bool mapped_gdb; /* mapped something since: search again if none was found */
	struct u64map gdb_mods;
	/* frames named at seal time: (ip << 1 | is_return) + 1 -> index */
	struct jit_late {
		uint64_t ip, first_ns, last_ns;
		uint32_t row;
		bool is_return;
	} *late;
	uint32_t nlate, late_cap;
	struct u64map late_index;
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* This thread's CPU time (ns): what reads cost the recorder. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* jit_mapped_fn over the mappings drained (jit_maplog.c). */
static int drained_mappings(void *ctx, uint64_t start, uint64_t end, uint64_t after,
			    uint64_t upto, uint64_t *times, uint32_t max)
{
	const struct jit_state *js = ctx;

	return jit__mappings(js->p, js->pid, start, end, after, upto, times, max);
}

static struct jit_state *state(struct processor *p, struct proc_state *ps)
{
	if (!ps->jit) {
		ps->jit = calloc(1, sizeof(*ps->jit));
		if (!ps->jit)
			return NULL;
		jit_funcs__init(&ps->jit->funcs);
		ps->jit->p = p;
		ps->jit->pid = ps->pid;
		ps->jit->funcs.mapped = drained_mappings;
		ps->jit->funcs.mapped_ctx = ps->jit;
		ps->jit->prompt_ns = monotonic_ns(); /* periodic reads from now on */
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

		js = state(p, ps);
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
	gdb_jit__remapped(&js->gdb);
	js->mapped = true;
	js->mapped_gdb = true;
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

/* Rows a function's proof may hold (entry sequences are short). */
#define PROOF_ROWS_PER_FN 16

/*
 * Prove the frames of the functions this read made live, reading their
 * first bytes from the live process (an exited one: none, so no frames).
 * Functions past the code budget or JIT_PROOF_ROWS_MAX get none.
 */
static int prove_new(struct jit_state *js, const struct jit_target *t)
{
	uint8_t code[FRAME_PROOF_CODE_MAX];
	uint64_t top = js->proved_seq;

	for (uint32_t i = 0; i < js->funcs.n; i++) {
		const struct jit_fn *fn = &js->funcs.fns[i];
		size_t len = fn->end - fn->start < sizeof(code) ? fn->end - fn->start : sizeof(code);
		int n;

		if (fn->seq <= js->proved_seq)
			continue;
		top = fn->seq > top ? fn->seq : top;
		if (fn->flags & JIT_FN_GDB)
			continue; /* its object's CFI describes it */
		if ((fn->flags & JIT_FN_NO_CODE) || t->own_root ||
		    js->nproof_rows + PROOF_ROWS_PER_FN > JIT_PROOF_ROWS_MAX) {
			js->unproved++;
			continue;
		}
		if (array__reserve((void **)&js->proof_rows, &js->proof_rows_cap,
				   js->nproof_rows + PROOF_ROWS_PER_FN, sizeof(*js->proof_rows)))
			return -ENOMEM;
		if (jit_target__read(t, fn->start, code, len)) {
			js->unproved++;
			continue;
		}
		n = frame_proof__prove(code, len, fn->start, fn->end,
				       js->proof_rows + js->nproof_rows, PROOF_ROWS_PER_FN);
		if (n <= 0) {
			js->unproved++;
			continue;
		}
		js->proved++;
		if (u64map__put(&js->proofs, fn->seq, (uint64_t)js->nproof_rows << 16 | (uint32_t)n))
			return -ENOMEM;
		js->nproof_rows += (uint32_t)n;
	}
	js->proved_seq = top;
	return 0;
}

/*
 * The runtime address of a __jit_debug_descriptor in ps's file modules, or
 * 0.  Each module is searched once (its file's symbol tables); a process
 * whose modules hold none is never read.
 */
static uint64_t gdb_descriptor(struct processor *p, struct proc_state *ps)
{
	for (uint32_t i = 0; i < ps->nmaps; i++) {
		const struct proc_mapping *m = &ps->maps[i];
		struct module_state *ms;
		uint64_t at;

		if (m->module == CAPTURE_NONE)
			continue;
		ms = &p->modules[m->module];
		if (ms->kind != CAPTURE_MODULE_FILE || !ms->sym)
			continue;
		if (!ms->jit_desc_checked) {
			ms->jit_desc_checked = true;
			if (sym_module__data_symbol(ms->sym, GDB_JIT_DESCRIPTOR, &ms->jit_desc_vaddr))
				ms->jit_desc_vaddr = 0;
		}
		/* One load bias for every segment: that of this mapping. */
		if (ms->jit_desc_vaddr && sym_module__to_vaddr(ms->sym, m->pgoff, &at))
			return ms->jit_desc_vaddr + (m->start - at);
	}
	return 0;
}

/* Read on the process's map and jitdump file, if the rules allow a read
 * now (time: the sample's).  True when the read found new functions. */
static bool read_on(struct processor *p, struct proc_state *ps, struct jit_state *js,
		    uint64_t time)
{
	uint32_t from_map = 0, from_dump = 0, from_gdb = 0;
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
	if (!js->gdb.descriptor && (!js->gdb_looked || js->mapped_gdb)) {
		js->gdb_looked = true;
		js->gdb.descriptor = gdb_descriptor(p, ps);
	}
	js->mapped_gdb = false;
	if (js->gdb.descriptor && gdb_jit__read(&js->gdb, &js->funcs, &t, now, &from_gdb))
		return false;
	from_map += from_dump + from_gdb;
	js->quiet_until = from_map ? 0 : time + JIT_QUIET_NS;
	if (from_map && prove_new(js, &t))
		return false;
	return from_map;
}

/* A read at a drain round (jit__round): perf map, jitdump file, GDB JIT
 * list, and frame proofs of what they add, while the process lives. */
static void prompt_read(struct processor *p, struct proc_state *ps, struct jit_state *js,
			uint64_t now)
{
	uint32_t from_map = 0, from_dump = 0, from_gdb = 0;
	uint64_t cpu = thread_cpu_ns();
	struct jit_target t;

	js->prompt_due = false;
	js->prompt_ns = now;
	if (target(p, ps, &t) || t.own_root)
		return; /* gone: reads as samples are processed name what they can */
	p->jit_prompt_reads++;
	/* Modules processed so far (each searched once) may hold a GDB JIT
	 * descriptor: its list is then read at the rounds too. */
	if (!js->gdb.descriptor)
		js->gdb.descriptor = gdb_descriptor(p, ps);
	if (!perf_map__read(&js->map, &js->funcs, &t, now, &from_map) &&
	    (!js->dump_path || !jitdump__read(&js->dump, &js->funcs, &t, js->dump_start,
					      js->dump_end, js->dump_path, now, &from_dump)) &&
	    (!js->gdb.descriptor || !gdb_jit__read(&js->gdb, &js->funcs, &t, now, &from_gdb)) &&
	    from_map + from_dump + from_gdb) {
		js->quiet_until = 0;
		(void)prove_new(js, &t); /* -ENOMEM: those functions get no frames */
	}
	p->jit_read_cpu_ns += thread_cpu_ns() - cpu;
}

void jit__round(struct processor *p, uint64_t round_ns)
{
	uint64_t now = monotonic_ns();

	/* A round stamped after now is not of this clock (a test's stream):
	 * a read now would date lines before records still to come. */
	if (!p->read_processes || round_ns > now)
		return;
	for (uint32_t i = 0; i < p->njit_wanted; i++) {
		struct proc_state *ps = tasks__find_process(p, p->jit_wanted[i]);
		struct jit_state *js = ps && ps->tracked ? state(p, ps) : NULL;

		if (js)
			js->prompt_due = true;
	}
	p->njit_wanted = 0;
	for (uint32_t i = 0; i < p->nprocs; i++) {
		struct proc_state *ps = &p->procs[i];
		struct jit_state *js = ps->jit;

		if (!js || ps->exited)
			continue;
		if (js->prompt_due || ((js->map.state == PERF_MAP_READING || js->dump_path ||
					js->gdb.descriptor) &&
				       now >= js->prompt_ns + JIT_PROMPT_NS))
			prompt_read(p, ps, js, now);
	}
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
	if (fn->flags & JIT_FN_GDB)
		snprintf(path, sizeof(path), "[gdb-jit]");
	else if (fn->flags & JIT_FN_JITDUMP)
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

/* The function covering address at for the sample being processed,
 * reading on if the rules allow.  0, -ENOENT or -ENOMEM. */
static int lookup(struct processor *p, struct proc_state *ps, uint64_t at, struct jit_state **jsp,
		  const struct jit_fn **fnp)
{
	uint64_t time = p->sample_time;
	struct jit_state *js;

	if (!ps || (!p->read_processes && !ps->jit))
		return -ENOENT;
	js = state(p, ps);
	if (!js)
		return -ENOMEM;
	*jsp = js;
	/* Samples come in time order: history older than this is done with. */
	js->funcs.floor_ns = time > JIT_HISTORY_SLACK_NS ? time - JIT_HISTORY_SLACK_NS : 0;
	*fnp = jit_funcs__find(&js->funcs, at, time);
	if (!*fnp && p->read_processes) {
		uint64_t cpu = thread_cpu_ns();
		bool found = read_on(p, ps, js, time);

		p->jit_read_cpu_ns += thread_cpu_ns() - cpu;
		if (found)
			*fnp = jit_funcs__find(&js->funcs, at, time);
	}
	return *fnp ? 0 : -ENOENT;
}

bool jit__unwind_find(struct processor *p, struct proc_state *ps, uint64_t pc,
		      struct unwind_map *map)
{
	const struct jit_fn *fn;
	struct jit_state *js;
	uint64_t *v;

	if (lookup(p, ps, pc, &js, &fn))
		return false;
	if ((fn->flags & JIT_FN_GDB) && fn->object < js->gdb.nobjs) {
		/* The object's own CFI: compiled once per object. */
		const struct gdb_jit_object *o = &js->gdb.objs[fn->object];

		v = u64map__get(&js->gdb_mods, (uint64_t)fn->object + 1);
		if (!v) {
			struct unwind_module *m = unwind_module__open_image(o->image, o->size);

			if (!m || u64map__put(&js->gdb_mods, (uint64_t)fn->object + 1,
					      (uint64_t)(uintptr_t)m)) {
				unwind_module__free(m);
				return false;
			}
			v = u64map__get(&js->gdb_mods, (uint64_t)fn->object + 1);
		}
		map->module = (struct unwind_module *)(uintptr_t)*v;
		map->bias = 0;
		map->start = fn->start;
		map->end = fn->end;
		return true;
	}
	v = u64map__get(&js->proof_mods, fn->seq);
	if (!v) {
		uint64_t *rows = u64map__get(&js->proofs, fn->seq);
		struct unwind_module *m;

		/* No rows: a module without CFI, so the unwind ends "no CFI". */
		m = unwind_module__from_proof(rows ? js->proof_rows + (*rows >> 16) : NULL,
					      rows ? (size_t)(*rows & 0xffff) : 0);
		if (!m)
			return false;
		if (u64map__put(&js->proof_mods, fn->seq, (uint64_t)(uintptr_t)m)) {
			unwind_module__free(m);
			return false;
		}
		v = u64map__get(&js->proof_mods, fn->seq);
	}
	map->module = (struct unwind_module *)(uintptr_t)*v;
	map->bias = 0;
	map->start = fn->start;
	map->end = fn->end;
	return true;
}

/*
 * The row of a frame at ip that no record read so far names, in a process
 * that announced a jitdump file: one row per (ip, is_return) and process,
 * made unique by a serial number in its line until jit__finish names it or
 * clears it; the times of the samples using it are kept.  -ENOENT when it
 * is not to wait (no jitdump file, JIT_LATE_FRAMES_MAX reached: counted),
 * 0, or -ENOMEM.
 */
static int late_frame(struct processor *p, struct jit_state *js, uint64_t ip, bool is_return,
		      uint32_t *row)
{
	uint64_t key = (ip << 1 | is_return) + 1, *at, time = p->sample_time;
	struct jit_late *l;

	if (!js->dump_path || !p->read_processes || ip >> 63)
		return -ENOENT;
	at = u64map__get(&js->late_index, key);
	if (at) {
		l = &js->late[*at];
		l->first_ns = time < l->first_ns ? time : l->first_ns;
		l->last_ns = time > l->last_ns ? time : l->last_ns;
		*row = l->row;
		return 0;
	}
	if (js->nlate >= JIT_LATE_FRAMES_MAX) {
		p->jit_late_full++;
		return -ENOENT;
	}
	if (array__reserve((void **)&js->late, &js->late_cap, js->nlate + 1, sizeof(*js->late)))
		return -ENOMEM;
	struct capture_frame frame = {
		.module = CAPTURE_NONE,
		.flags = CAPTURE_FRAME_F_UNSYMBOLIZED,
		.address = ip,
		.line = ++p->jit_late_serial,
	};
	*row = capture_builder__add_frame(p->b, &frame);
	if (*row == CAPTURE_NONE || u64map__put(&js->late_index, key, js->nlate))
		return -ENOMEM;
	js->late[js->nlate++] = (struct jit_late){
		.ip = ip, .first_ns = time, .last_ns = time, .row = *row, .is_return = is_return,
	};
	return 0;
}

int jit__frame(struct processor *p, struct proc_state *ps, uint64_t ip, bool is_return,
	       uint32_t *row)
{
	uint64_t at = is_return && ip ? ip - 1 : ip;
	const struct jit_fn *fn;
	struct jit_state *js = NULL;
	int err = lookup(p, ps, at, &js, &fn);

	if (err == -ENOENT && js && jit_funcs__covers(&js->funcs, at))
		p->jit_unnamed_time++; /* code named, but not at this time: not misnamed */
	if (err == -ENOENT && js)
		return late_frame(p, js, ip, is_return, row);
	if (err)
		return err;
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

/*
 * Name the late frames of ps from the whole jitdump file, read again from
 * its start (opened now if no read found it yet: the process may have
 * exited).  A frame no load names over all its samples' times gets its
 * line back (0): a frame of no module.  0 or -ENOMEM.
 */
static int name_late(struct processor *p, struct proc_state *ps, struct jit_state *js)
{
	struct jit_funcs h;
	struct jit_history x;
	struct jit_target t;
	uint64_t now = monotonic_ns();
	uint32_t added;
	int err;

	uint64_t cpu = thread_cpu_ns();

	if (!js->dump.kept && p->read_processes && !target(p, ps, &t)) {
		err = jitdump__read(&js->dump, &js->funcs, &t, js->dump_start, js->dump_end,
				    js->dump_path, now, &added);
		if (err)
			return err;
	}
	jit_funcs__init(&h);
	memset(&x, 0, sizeof(x));
	err = jitdump__history(&js->dump, &h, js->dump.pid, now);
	if (err >= 0)
		err = jit_history__init(&x, &h);
	for (uint32_t i = 0; err >= 0 && i < js->nlate; i++) {
		const struct jit_late *l = &js->late[i];
		uint64_t at = l->is_return && l->ip ? l->ip - 1 : l->ip;
		const struct jit_fn *fn = jit_history__find(&x, at, l->first_ns, l->last_ns);
		uint32_t module = CAPTURE_NONE, name = 0, file = 0, line = 0;
		const char *file_name = "";
		struct capture_frame *row;

		if (fn) {
			p->sample_time = l->first_ns;
			module = jit_module(p, ps, js, fn);
			if (module == CAPTURE_NONE) {
				err = -ENOMEM;
				break;
			}
			jit_funcs__line(&h, fn, at, &line, &file_name);
			name = capture_builder__string(p->b, jit_funcs__name(&h, fn));
			file = capture_builder__string(p->b, file_name);
			p->jit_late_named++;
		} else {
			p->jit_late_unnamed++;
		}
		row = capture_builder__frame(p->b, l->row);
		if (!row)
			continue;
		row->line = line;
		if (fn) {
			row->module = module;
			row->flags &= ~CAPTURE_FRAME_F_UNSYMBOLIZED;
			row->function = name;
			row->file = file;
		}
	}
	p->jit_history_cut += x.cut;
	jit_history__release(&x);
	jit_funcs__release(&h);
	p->jit_late_cpu_ns += thread_cpu_ns() - cpu;
	return err < 0 ? err : 0;
}

void jit__forget_rows(struct proc_state *ps)
{
	if (!ps->jit)
		return;
	u64map__release(&ps->jit->frames);
	u64map__release(&ps->jit->modules);
	/* late frames' rows went with the segment cut: those frames stay
	 * unnamed there (a later segment's samples make new ones) */
	u64map__release(&ps->jit->late_index);
	ps->jit->nlate = 0;
}

int jit__name_late(struct processor *p)
{
	int err = 0;

	for (uint32_t i = 0; i < p->nprocs && !err; i++)
		if (p->procs[i].jit && p->procs[i].jit->nlate)
			err = name_late(p, &p->procs[i], p->procs[i].jit);
	return err;
}

void jit__finish(struct processor *p)
{
	uint64_t totals[JIT_PROBLEM_COUNT] = { 0 }, proved = 0, unproved = 0;
	char key[96], value[256];

	if (jit__name_late(p))
		capture_builder__add_counter(p->b, "jit.late_no_memory", 1);
	for (uint32_t i = 0; i < p->nprocs; i++) {
		const struct jit_state *js = p->procs[i].jit;
		uint32_t pid = p->procs[i].pid;

		if (!js)
			continue;
		for (int k = 0; k < JIT_PROBLEM_COUNT; k++)
			totals[k] += js->funcs.problems[k];
		proved += js->proved;
		unproved += js->unproved;
		if (js->map.state != PERF_MAP_UNREAD && js->map.state != PERF_MAP_ABSENT) {
			snprintf(key, sizeof(key), "jit.perf_map.%" PRIu32, pid);
			snprintf(value, sizeof(value),
				 "%s: %s (%" PRIu64 " lines; %" PRIu64
				 " functions past the code budget: named, no frames)",
				 perf_map_state__name(js->map.state),
				 perf_map_state__text(js->map.state), js->map.lines,
				 js->funcs.problems[JIT_PROBLEM_NO_CODE]);
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
	if (p->jit_prompt_reads)
		capture_builder__add_counter(p->b, "jit.prompt_reads", p->jit_prompt_reads);
	if (p->jit_reads) {
		capture_builder__add_counter(p->b, "jit.reads", p->jit_reads);
		capture_builder__add_counter(p->b, "jit.read_cpu_ms", p->jit_read_cpu_ns / 1000000);
	}
	if (proved)
		capture_builder__add_counter(p->b, "jit.frames_proved", proved);
	if (unproved)
		capture_builder__add_counter(p->b, "jit.frames_unproved", unproved);
	if (p->jit_late_cpu_ns)
		capture_builder__add_counter(p->b, "jit.late_cpu_ms", p->jit_late_cpu_ns / 1000000);
	if (p->jit_unnamed_time)
		capture_builder__add_counter(p->b, "jit.unnamed_time", p->jit_unnamed_time);
	if (p->jit_late_named)
		capture_builder__add_counter(p->b, "jit.late_named", p->jit_late_named);
	if (p->jit_late_unnamed)
		capture_builder__add_counter(p->b, "jit.late_unnamed", p->jit_late_unnamed);
	if (p->jit_late_full)
		capture_builder__add_counter(p->b, "jit.late_full", p->jit_late_full);
	if (p->jit_history_cut)
		capture_builder__add_counter(p->b, "jit.history_cut", p->jit_history_cut);
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
	for (uint32_t i = 0; i < js->proof_mods.cap; i++)
		if (js->proof_mods.keys[i])
			unwind_module__free((struct unwind_module *)(uintptr_t)js->proof_mods.vals[i]);
	u64map__release(&js->proof_mods);
	for (uint32_t i = 0; i < js->gdb_mods.cap; i++)
		if (js->gdb_mods.keys[i])
			unwind_module__free((struct unwind_module *)(uintptr_t)js->gdb_mods.vals[i]);
	u64map__release(&js->gdb_mods);
	gdb_jit__release(&js->gdb);
	u64map__release(&js->proofs);
	free(js->proof_rows);
	u64map__release(&js->late_index);
	free(js->late);
	free(js);
	ps->jit = NULL;
}
