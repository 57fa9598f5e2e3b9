/* SPDX-License-Identifier: MIT */
/*
 * Targeted recordings (-p, record -- CMD): the in-kernel unwinder's table of
 * a process is written at drain time, from the process's live
 * /proc/PID/maps, as soon as a drained sample says the kernel lacked it
 * (NO_PROC, NO_MAPPING), rather than when the ordered sample is processed.
 * Ordered processing runs behind the rings (the watermark, and a start-up
 * whose first samples are unwound, symbolized and their modules compiled
 * in userspace), so the lazy path left a starting process without tables
 * for hundreds of ms; from the drain the tables follow its first sample
 * within a wakeup (KU_WAKE_NS).
 *
 * Policy: eager only for targeted recordings, where the recorded processes
 * are few and all wanted; -a stays lazy (kunwind.c, in time order), since
 * every process of the machine would be read.  The live maps are the
 * newest the process has, so for a process told here the ordered path
 * writes nothing (kunwind__live_owns): it would replace them with older
 * ones.  A process is read again when a sample taken after the last write
 * still stopped for want of its table (an exec, a new mapping: its pc is
 * in none of the executable ranges read), never for samples taken before
 * it, so a burst of samples waiting in the ring costs one read.
 *
 * A -p target's rows are loaded before sampling starts (its maps are
 * known; the table itself waits for a sample, which names the address
 * space: kunwind__live_prepare), and so are those of the command's
 * executable (kunwind__live_prepare_command: the file execvp will run, the
 * CLI's cli__command_file,
 * same module as its mapping's by device and inode).
 *
 * Bounded: eager rows only while the row array is half empty
 * (KU_EAGER_ROWS_DIV); KU_LIVE_PROCS processes remembered (slots reused in
 * turn: a process forgotten so is the ordered path's again), one
 * allocation at the first use; a read allocates nothing else (stack
 * buffers).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../runtimes/jitdump.h"
#include "internal.h"

/* Processes whose table the drain wrote (a targeted recording's). */
#define KU_LIVE_PROCS 32

struct ku_live_range {
	uint64_t start, end;
};

struct ku_live_proc {
	uint32_t tgid, cookie; /* cookie 0: slot unused */
	uint64_t told_ns;      /* CLOCK_MONOTONIC after the last write */
	uint32_t nranges;
	struct ku_live_range ranges[MS_KU_PROC_MAPS]; /* executable mappings read */
};

struct kunwind_live {
	uint32_t next; /* slot reused next when none is free */
	struct ku_live_proc procs[KU_LIVE_PROCS];
	/* Modules whose rows the round's end loads, in order (kunwind__round) */
	uint32_t npending;
	uint32_t pending[MS_KU_PROC_MAPS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct ku_live_proc *live_find(struct kunwind_live *kl, uint32_t tgid)
{
	for (uint32_t i = 0; i < KU_LIVE_PROCS; i++)
		if (kl->procs[i].cookie && kl->procs[i].tgid == tgid)
			return &kl->procs[i];
	return NULL;
}

bool kunwind__live_owns(const struct processor *p, uint32_t tgid)
{
	return p->ku_live && live_find(p->ku_live, tgid);
}

/* The module of an executable mapping line's file, as on_mmap2 makes it
 * (the same symbolizer and module, so the ordered records find it). */
static uint32_t live_module(struct processor *p, uint32_t tgid, uint64_t start, uint64_t end,
			    uint32_t maj, uint32_t min, uint64_t ino, char *path)
{
	char open_path[4300];
	struct sym_module *sym;
	size_t plen = strlen(path);
	uint32_t kind = CAPTURE_MODULE_FILE;

	if (!strcmp(path, "[vdso]")) {
		kind = CAPTURE_MODULE_VDSO;
		sym = symbolizer__vdso(p->sym);
	} else {
		if (path[0] != '/' || path[1] == '/' || jitdump__is_marker(path))
			return CAPTURE_NONE;
		if (plen > 10 && !strcmp(path + plen - 10, " (deleted)"))
			path[plen - 10] = '\0';
		if (pins__path(p, maj, min, ino, open_path, sizeof(open_path)))
			snprintf(open_path, sizeof(open_path), "/proc/%u/map_files/%llx-%llx", tgid,
				 (unsigned long long)start, (unsigned long long)end);
		sym = symbolizer__mapped_file(p->sym, tgid, open_path, path, maj, min, ino);
	}
	if (!sym)
		return CAPTURE_NONE;
	return stacks__module_for_sym(p, sym, kind, path);
}

/*
 * Read /proc/tgid/maps into lp's ranges and maps (the table's form).
 * Returns the number of table mappings, or -errno when the file cannot be
 * read (the process is gone).
 */
static int live_read(struct processor *p, struct ku_live_proc *lp, struct ms_ku_mapping *maps)
{
	char fname[64], line[4400], path[4200];
	uint32_t n = 0;
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%u/maps", lp->tgid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;
	lp->nranges = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff, ino;
		unsigned int maj, min;
		char perms[8];
		uint32_t module;
		int off = 0;

		path[0] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff, &maj,
			   &min, &ino, &off) < 7 || perms[2] != 'x' || end <= start)
			continue;
		if (off > 0)
			sscanf(line + off, "%4199[^\n]", path);
		if (lp->nranges < MS_KU_PROC_MAPS)
			lp->ranges[lp->nranges++] = (struct ku_live_range){start, end};
		if (n >= MS_KU_PROC_MAPS)
			continue;
		module = live_module(p, lp->tgid, start, end, maj, min, ino, path);
		n += kunwind__table_mapping(p, module, start, end, pgoff, &maps[n]);
	}
	fclose(f);
	return (int)n;
}

/* Rows are loaded before samples ask while the row array is less than
 * this share full (1/KU_EAGER_ROWS_DIV), so that modules mapped but never
 * sampled (a command that starts many programs) cannot fill it: the rest
 * waits for a sample's NO_ROWS. */
#define KU_EAGER_ROWS_DIV 2

static bool eager_rows_room(const struct processor *p)
{
	struct kunwind_stats st;

	kunwind_maps__stats(p->kunwind, &st);
	return st.rows < st.rows_cap / KU_EAGER_ROWS_DIV;
}

/* Queue module's rows for the round's end (a full queue: the NO_ROWS path
 * loads them when a sample asks). */
static void live_want_rows(struct kunwind_live *kl, struct processor *p, uint32_t module)
{
	if (kunwind_maps__tried(p->kunwind, module) || kl->npending >= MS_KU_PROC_MAPS)
		return;
	for (uint32_t i = 0; i < kl->npending; i++)
		if (kl->pending[i] == module)
			return;
	kl->pending[kl->npending++] = module;
}

void kunwind__round(struct processor *p)
{
	struct kunwind_live *kl = p->ku_live;

	if (!kl)
		return;
	for (uint32_t i = 0; i < kl->npending && eager_rows_room(p); i++)
		kunwind__load_module(p, kl->pending[i], KUNWIND_WANT_NONE);
	kl->npending = 0;
}

static bool live_covers(const struct ku_live_proc *lp, uint64_t pc)
{
	for (uint32_t i = 0; i < lp->nranges; i++)
		if (pc >= lp->ranges[i].start && pc < lp->ranges[i].end)
			return true;
	return false;
}

void kunwind__live_drained(struct processor *p, const struct ms_sample *s,
			   const struct ms_sample_parts *parts)
{
	const struct ms_kunwind *ku = parts->ku;
	struct ms_ku_mapping maps[MS_KU_PROC_MAPS];
	struct ku_live_proc *lp;
	/* where the kernel stopped: its last pc (KU_FP_CHAIN: the first,
	 * the frame-pointer chain follows) */
	size_t last = (s->flags & MS_SAMPLE_F_KU_FP_CHAIN) ? 0 : parts->nu - 1;
	uint64_t pc = parts->uips[last] & ~MS_KU_PC_SIGNAL;
	int n;

	if (!p->ku_live) {
		p->ku_live = calloc(1, sizeof(*p->ku_live));
		if (!p->ku_live)
			return;
	}
	lp = live_find(p->ku_live, s->pid);
	if (lp && lp->cookie == ku->module) {
		/* a sample from before the last write, or one the ranges read
		 * explain (JIT code: no table mapping) */
		if (s->time_ns < lp->told_ns)
			return;
		if (ku->cause == MS_KU_STOP_NO_MAPPING && (live_covers(lp, pc) || live_covers(lp, pc - 1)))
			return;
	}
	if (!lp) {
		lp = &p->ku_live->procs[p->ku_live->next];
		p->ku_live->next = (p->ku_live->next + 1) % KU_LIVE_PROCS;
	}
	lp->tgid = s->pid;
	lp->cookie = ku->module;
	n = live_read(p, lp, maps);
	if (n < 0) {
		lp->cookie = 0; /* gone: the ordered path has what it had */
		return;
	}
	if (kunwind_maps__set_proc(p->kunwind, lp->tgid, lp->cookie, maps, (uint32_t)n))
		p->ku_load_errors++;
	p->ku_live_reads++;
	lp->told_ns = mono_ns();
	/* Then, at the round's end, the rows of every module mapped (each
	 * once): the process's next samples find them without a round trip
	 * each, which a start-up whose ordered processing stalls (a large
	 * module's first symbolization) would delay by hundreds of ms.  The
	 * module of the sample's pc first.  Not now: the tables of the
	 * round's other samples (the image after an exec) come first. */
	for (int i = 0; i < n; i++)
		if (pc - maps[i].start < maps[i].end - maps[i].start)
			live_want_rows(p->ku_live, p, maps[i].module);
	for (int i = 0; i < n; i++)
		live_want_rows(p->ku_live, p, maps[i].module);
}

void kunwind__live_prepare(struct processor *p, uint32_t tgid)
{
	struct ms_ku_mapping maps[MS_KU_PROC_MAPS];
	struct ku_live_proc lp = {.tgid = tgid};
	int n;

	if (!p->kunwind || !p->ku_eager)
		return;
	n = live_read(p, &lp, maps);
	for (int i = 0; i < n && eager_rows_room(p); i++)
		kunwind__load_module(p, maps[i].module, KUNWIND_WANT_NONE);
}

void kunwind__live_prepare_command(struct processor *p, const char *real)
{
	unsigned char magic[4];
	struct sym_module *sym;
	struct stat st;
	uint32_t module;
	int fd;

	if (!p->kunwind || !p->ku_eager || !real)
		return;
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* an ELF file only (a script's interpreter is known at its exec) */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || read(fd, magic, 4) != 4 ||
	    memcmp(magic, "\177ELF", 4)) {
		close(fd);
		return;
	}
	close(fd);
	sym = symbolizer__mapped_file(p->sym, 0, real, real, major(st.st_dev), minor(st.st_dev),
				      (uint64_t)st.st_ino);
	if (!sym)
		return;
	module = stacks__module_for_sym(p, sym, CAPTURE_MODULE_FILE, real);
	if (module != CAPTURE_NONE && eager_rows_room(p))
		kunwind__load_module(p, module, KUNWIND_WANT_NONE);
}

void kunwind__live_release(struct processor *p)
{
	free(p->ku_live);
	p->ku_live = NULL;
}
