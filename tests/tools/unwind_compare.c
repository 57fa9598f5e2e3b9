// SPDX-License-Identifier: MIT
/*
 * unwind_compare: per-sample agreement of microscope's DWARF unwinder with
 * libdw's (libdwfl's dwfl_getthread_frames) over the *same bytes*: the
 * registers and user stack copy of every sample of a raw stream saved by
 * `microscope record --save-raw DIR`.
 *
 *	unwind_compare [-v] [-p PID] DIR|FILE
 *
 * The stream's chunks are read with stream__replay and put in time order
 * (the perf side-band records' sample_id time, the samples' time_ns; the
 * /proc snapshot first).  Executable MMAP2 records build each process's
 * mappings (an exec COMM clears them), so a sample is unwound with the
 * mappings in force at its time.  Both unwinders get the same module list:
 * each mapped file at the load bias computed from the mapping and the
 * file's PT_LOAD headers; the [vdso] mapping is served by this process's
 * own vdso image written to a temporary file (one kernel, one vdso).
 *
 *   ours:  unwind__stack_ex (userspace/unwind), modules from
 *          unwind_module__open(path), as the processor opens them.
 *   libdw: dwfl_report_elf per mapping, dwfl_attach_state with callbacks
 *          that serve the sample's registers and only its copied bytes
 *          (memory_read fails outside [sp, sp + len)).
 *
 * A sample agrees when both give the same pcs and activation flags.  One
 * documented difference is tolerated and counted apart: where we stop with
 * [no CFI for pc], libdwfl may go on with a frame-pointer guess (we never
 * guess; unwind.h); then our frames must be a prefix of libdw's.
 *
 * Prints one line per disagreeing sample (both stacks with -v) and ends with
 *	summary samples=N compared=N same=N differ=N nocfi_prefix=N skipped=N
 *	        frames=N reasons=[reason]:N,...
 * Exits 0 when differ=0 and compared>0, 1 otherwise, 2 on usage/IO errors.
 *
 * Built by tests/e2e/test_dwarf.py against BUILD/libmicroscope.a:
 *	cc -O2 -g -D_GNU_SOURCE -I. -IBUILD tests/tools/unwind_compare.c
 *	   BUILD/libmicroscope.a -ldw -lelf -lz -o unwind_compare
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bpf/abi/records.h"
#include "userspace/stream/perf_records.h"
#include "userspace/stream/stream.h"
#include "userspace/unwind/unwind.h"

#define MAX_FRAMES    256


/* ------------------------------------------------------------------ events */

enum ev_kind { EV_MMAP, EV_EXEC, EV_SAMPLE };

struct event {
	enum ev_kind kind;
	uint64_t time;
	uint64_t seq; /* stream order, for a stable sort */
	uint32_t pid;
	/* EV_MMAP */
	uint64_t addr, len, pgoff;
	char *path;
	/* EV_SAMPLE: the whole record (struct ms_sample + ips + copy) */
	void *rec;
};

static struct event *events;
static size_t nevents, cap_events;
static uint32_t only_pid;
static int verbose;

static struct event *new_event(void)
{
	if (nevents == cap_events) {
		cap_events = cap_events ? 2 * cap_events : 1024;
		events = realloc(events, cap_events * sizeof(*events));
		if (!events) {
			perror("realloc");
			exit(2);
		}
	}
	memset(&events[nevents], 0, sizeof(events[0]));
	events[nevents].seq = nevents;
	return &events[nevents++];
}

/* The trailer of the collector's side-band records (stream/perf_records.h). */
static struct perf_sample_id_layout sideband;

static int on_perf(const uint8_t *rec, uint32_t len, uint32_t source)
{
	struct perf_event_header h;
	struct perf_mmap2 m;
	struct perf_comm cm;

	if (!sideband.size)
		perf_sample_id__layout(MS_SIDEBAND_SAMPLE_TYPE, &sideband);
	if (perf_rec__header(rec, len, &h))
		return 0;
	if (h.type == PERF_RECORD_MMAP2 && !perf_rec__parse_mmap2(&sideband, rec, len, &m)) {
		size_t plen = m.filename_len;

		if (!(m.f.prot & PROT_EXEC))
			return 0;
		struct event *e = new_event();
		e->kind = EV_MMAP;
		e->time = source != MS_SOURCE_SNAPSHOT ? m.id.time : 0;
		e->pid = m.f.pid;
		e->addr = m.f.addr;
		e->len = m.f.len;
		e->pgoff = m.f.pgoff;
		e->path = strndup(m.filename, plen);
		if (plen > 10 && !strcmp(e->path + plen - 10, " (deleted)"))
			e->path[plen - 10] = '\0';
	} else if (h.type == PERF_RECORD_COMM && !perf_rec__parse_comm(&sideband, rec, len, &cm) &&
		   (cm.misc & PERF_RECORD_MISC_COMM_EXEC)) {
		struct event *e = new_event();
		e->kind = EV_EXEC;
		e->time = source != MS_SOURCE_SNAPSHOT ? cm.id.time : 0;
		e->pid = cm.f.pid;
	}
	return 0;
}

static int on_bpf(const uint8_t *rec, uint32_t len)
{
	struct ms_sample s;

	if (len < sizeof(s))
		return 0;
	memcpy(&s, rec, sizeof(s));
	if (s.hdr.type != MS_REC_SAMPLE || s.hdr.size > len || s.arch != MS_ARCH_X86_64 ||
	    s.kstack_len > MS_MAX_STACK_DEPTH || s.ustack_len > MS_MAX_STACK_DEPTH ||
	    s.stack_copy_len > MS_STACK_COPY_MAX ||
	    sizeof(s) + 8ull * (s.kstack_len + s.ustack_len) + s.stack_copy_len > len)
		return 0;
	struct event *e = new_event();
	e->kind = EV_SAMPLE;
	e->time = s.time_ns;
	e->pid = s.pid;
	e->rec = malloc(len);
	if (!e->rec) {
		perror("malloc");
		exit(2);
	}
	memcpy(e->rec, rec, len);
	return 0;
}

static int sink(void *ctx, const struct ms_chunk *c, const void *payload)
{
	if (c->kind == MS_CHUNK_PERF)
		return on_perf(payload, c->len, c->source);
	if (c->kind == MS_CHUNK_BPF)
		return on_bpf(payload, c->len);
	return 0;
}

static int cmp_events(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---------------------------------------------------------------- modules */

/* One opened ELF file: our compiled CFI, libdw needs only the path. */
struct file {
	char *path; /* as mapped ("[vdso]" is replaced by vdso_path) */
	char *open_path;
	struct unwind_module *cfi;
	bool tried;
};

static struct file **files; /* each allocated once: mappings point at them */
static size_t nfiles;
static char vdso_path[64];

static struct file *file_for(const char *path)
{
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i]->path, path))
			return files[i];
	files = realloc(files, (nfiles + 1) * sizeof(*files));
	struct file *f = calloc(1, sizeof(*f));
	if (!files || !f) {
		perror("realloc");
		exit(2);
	}
	files[nfiles++] = f;
	f->path = strdup(path);
	f->open_path = strdup(strcmp(path, "[vdso]") ? path : vdso_path);
	return f;
}

/* Write this process's vdso to a temporary file (the kernel maps the same
 * image into every process). */
static void dump_vdso(void)
{
	uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t s, e, len = 0;
	int fd;

	if (!base || !maps)
		return;
	while (fgets(line, sizeof(line), maps))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &s, &e) == 2 && s == base &&
		    strstr(line, "[vdso]"))
			len = e - s;
	fclose(maps);
	snprintf(vdso_path, sizeof(vdso_path), "/tmp/unwind_compare-vdso-XXXXXX");
	fd = mkstemp(vdso_path);
	if (fd < 0 || !len || write(fd, (const void *)base, len) != (ssize_t)len) {
		perror("vdso");
		exit(2);
	}
	close(fd);
}

/* Load bias of @path mapped at [start, ...) from file offset pgoff: runtime
 * address - ELF virtual address, from the PT_LOAD that holds pgoff. */
static bool load_bias(const char *open_path, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	int fd = open(open_path, O_RDONLY | O_CLOEXEC);
	Elf *elf;
	GElf_Ehdr eh;
	size_t n;
	bool ok = false;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && gelf_getehdr(elf, &eh) && !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n && !ok; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			uint64_t align = ph.p_align ? ph.p_align : 1;
			uint64_t off0 = ph.p_offset & ~(align - 1) & ~0xfffull;
			if (pgoff >= off0 && pgoff < ph.p_offset + ph.p_filesz) {
				/* runtime(start) holds file offset pgoff, which is at
				 * vaddr pgoff - p_offset + p_vaddr. */
				*bias = start - (pgoff - ph.p_offset + ph.p_vaddr);
				ok = true;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return ok;
}

/* ------------------------------------------------------------ per process */

struct mapping {
	uint64_t start, end, bias;
	struct file *file;
};

struct proc {
	uint32_t pid;
	struct mapping *maps;
	size_t nmaps;
	Dwfl *dwfl; /* built lazily for the current mappings */
	bool stale; /* mappings changed since dwfl was built */
};

static struct proc *procs;
static size_t nprocs;

static struct proc *proc_for(uint32_t pid)
{
	for (size_t i = 0; i < nprocs; i++)
		if (procs[i].pid == pid)
			return &procs[i];
	procs = realloc(procs, (nprocs + 1) * sizeof(*procs));
	if (!procs) {
		perror("realloc");
		exit(2);
	}
	memset(&procs[nprocs], 0, sizeof(procs[0]));
	procs[nprocs].pid = pid;
	return &procs[nprocs++];
}

static void add_mapping(struct proc *p, const struct event *e)
{
	struct file *f;
	uint64_t bias;

	if (e->path[0] != '/' && strcmp(e->path, "[vdso]"))
		return; /* anonymous executable memory: neither unwinder has CFI */
	f = file_for(e->path);
	if (!load_bias(f->open_path, e->addr, e->pgoff, &bias))
		return;
	/* A new mapping replaces what it overlaps. */
	size_t k = 0;
	for (size_t i = 0; i < p->nmaps; i++)
		if (p->maps[i].end <= e->addr || p->maps[i].start >= e->addr + e->len)
			p->maps[k++] = p->maps[i];
	p->nmaps = k;
	p->maps = realloc(p->maps, (p->nmaps + 1) * sizeof(*p->maps));
	if (!p->maps) {
		perror("realloc");
		exit(2);
	}
	p->maps[p->nmaps++] = (struct mapping){e->addr, e->addr + e->len, bias, f};
	p->stale = true;
}

static const struct mapping *find_mapping(const struct proc *p, uint64_t pc)
{
	for (size_t i = 0; i < p->nmaps; i++)
		if (pc >= p->maps[i].start && pc < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

/* ---------------------------------------------------------------- ours */

static bool our_find(void *ctx, uint64_t pc, struct unwind_map *map)
{
	const struct mapping *m = find_mapping(ctx, pc);

	if (!m)
		return false;
	if (!m->file->tried) {
		m->file->tried = true;
		m->file->cfi = unwind_module__open(m->file->open_path);
	}
	if (!m->file->cfi)
		return false;
	map->module = m->file->cfi;
	map->bias = m->bias;
	map->start = m->start;
	map->end = m->end;
	return true;
}

/* ---------------------------------------------------------------- libdw */

struct ref {
	const struct unwind_regs *regs;
	const uint8_t *stack;
	size_t len;
	uint32_t tid;
	uint64_t pcs[MAX_FRAMES];
	bool act[MAX_FRAMES];
	size_t n;
};

static struct ref *ref_cur;

static pid_t ref_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return ref_cur ? (pid_t)ref_cur->tid : 1;
}

static bool ref_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool ref_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct ref *r = ref_cur;
	uint64_t off = addr - r->regs->sp;

	if (addr < r->regs->sp || r->len < 8 || off > r->len - 8)
		return false;
	memcpy(result, r->stack + off, 8);
	return true;
}

static bool ref_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_regs *r = ref_cur->regs;
	const struct {
		int reg;
		uint64_t val;
	} set[] = {{3, r->bx},	 {6, r->bp},   {7, r->sp},   {12, r->r12},
		   {13, r->r13}, {14, r->r14}, {15, r->r15}, {16, r->ip}};

	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		Dwarf_Word v = set[i].val;

		if (!dwfl_thread_state_registers(thread, set[i].reg, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks ref_callbacks = {
    .next_thread = ref_next_thread,
    .get_thread = ref_get_thread,
    .memory_read = ref_memory_read,
    .set_initial_registers = ref_set_initial_registers,
};

static int ref_frame(Dwfl_Frame *state, void *arg)
{
	struct ref *r = arg;
	Dwarf_Addr pc;
	bool act;

	if (!dwfl_frame_pc(state, &pc, &act) || r->n == MAX_FRAMES)
		return DWARF_CB_ABORT;
	r->pcs[r->n] = pc;
	r->act[r->n] = act;
	r->n++;
	return DWARF_CB_OK;
}

static Dwfl *build_dwfl(struct proc *p)
{
	static const Dwfl_Callbacks cb = {
	    .find_elf = dwfl_build_id_find_elf,
	    .find_debuginfo = dwfl_standard_find_debuginfo,
	};
	static struct ref dummy;
	Dwfl *d = dwfl_begin(&cb);

	if (!d)
		return NULL;
	dwfl_report_begin(d);
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct mapping *m = &p->maps[i];
		bool dup = false;

		/* One module per file and bias (a file's several executable
		 * mappings are one module for libdwfl). */
		for (size_t j = 0; j < i && !dup; j++)
			dup = p->maps[j].file == m->file && p->maps[j].bias == m->bias;
		if (dup)
			continue;
		if (!dwfl_report_elf(d, m->file->path, m->file->open_path, -1, m->bias, true))
			fprintf(stderr, "libdw: cannot report %s at bias %#" PRIx64 ": %s\n",
				m->file->open_path, m->bias, dwfl_errmsg(-1) ?: "?");
	}
	dwfl_report_end(d, NULL, NULL);
	if (!dwfl_attach_state(d, NULL, (pid_t)p->pid, &ref_callbacks, &dummy)) {
		fprintf(stderr, "libdw: dwfl_attach_state: %s\n", dwfl_errmsg(-1) ?: "?");
		dwfl_end(d);
		return NULL;
	}
	return d;
}

/* ---------------------------------------------------------------- compare */

static const char *name_of(Dwfl *d, uint64_t pc, bool act)
{
	uint64_t a = act ? pc : pc - 1;
	Dwfl_Module *mod = d ? dwfl_addrmodule(d, a) : NULL;
	const char *name = mod ? dwfl_module_addrname(mod, a) : NULL;

	return name ? name : "??";
}

static void print_stacks(Dwfl *d, const uint64_t *pcs, const uint8_t *flags, size_t n,
			 enum unwind_reason why, const struct ref *r)
{
	fprintf(stderr, "    ours (%zu frames, %s):\n", n, unwind_reason__name(why));
	for (size_t i = 0; i < n; i++) {
		bool act = flags[i] & UNWIND_FRAME_ACTIVATION;

		fprintf(stderr, "      #%-3zu %#" PRIx64 "%s %s\n", i, pcs[i], act ? "*" : " ",
			name_of(d, pcs[i], act));
	}
	fprintf(stderr, "    libdw (%zu frames):\n", r->n);
	for (size_t i = 0; i < r->n; i++)
		fprintf(stderr, "      #%-3zu %#" PRIx64 "%s %s\n", i, r->pcs[i],
			r->act[i] ? "*" : " ", name_of(d, r->pcs[i], r->act[i]));
}

int main(int argc, char **argv)
{
	size_t samples = 0, compared = 0, same = 0, differ = 0, nocfi_prefix = 0, skipped = 0;
	size_t frames = 0, reasons[UNWIND_REASON__COUNT] = {0};
	static struct ref ref;
	static uint64_t pcs[MAX_FRAMES];
	static uint8_t flags[MAX_FRAMES];
	int opt, err;

	while ((opt = getopt(argc, argv, "vp:")) != -1) {
		if (opt == 'v')
			verbose = 1;
		else if (opt == 'p')
			only_pid = (uint32_t)strtoul(optarg, NULL, 10);
		else
			goto usage;
	}
	if (optind != argc - 1)
		goto usage;
	elf_version(EV_CURRENT);
	dump_vdso();
	err = stream__replay(argv[optind], sink, NULL);
	if (err) {
		fprintf(stderr, "unwind_compare: cannot read %s: %s\n", argv[optind],
			strerror(-err));
		unlink(vdso_path);
		return 2;
	}
	qsort(events, nevents, sizeof(*events), cmp_events);

	for (size_t i = 0; i < nevents; i++) {
		struct event *e = &events[i];
		struct proc *p = proc_for(e->pid);

		if (e->kind == EV_MMAP) {
			add_mapping(p, e);
			continue;
		}
		if (e->kind == EV_EXEC) {
			p->nmaps = 0;
			p->stale = true;
			continue;
		}
		const struct ms_sample *s = e->rec;
		const uint8_t *copy = (const uint8_t *)(s->ips + s->kstack_len + s->ustack_len);
		struct unwind_regs regs;
		enum unwind_reason why;

		if (only_pid && s->pid != only_pid)
			continue;
		samples++;
		if (!(s->flags & MS_SAMPLE_F_USER_REGS) || !s->stack_copy_len ||
		    !find_mapping(p, s->regs.ip)) {
			skipped++; /* no copy, or a pc in no file mapping (exec in flight) */
			continue;
		}
		if (!p->dwfl || p->stale) {
			if (p->dwfl)
				dwfl_end(p->dwfl);
			p->dwfl = build_dwfl(p);
			p->stale = false;
		}
		memcpy(&regs, &s->regs, sizeof(regs));
		size_t n = unwind__stack_ex(&regs, copy, s->stack_copy_len, our_find, p, pcs, flags,
					    MAX_FRAMES, &why);
		ref.regs = &regs;
		ref.stack = copy;
		ref.len = s->stack_copy_len;
		ref.tid = s->tid;
		ref.n = 0;
		ref_cur = &ref;
		if (p->dwfl)
			dwfl_getthread_frames(p->dwfl, (pid_t)s->tid, ref_frame, &ref);
		compared++;
		frames += n;
		reasons[why]++;

		bool prefix = n <= ref.n;
		for (size_t k = 0; prefix && k < n; k++)
			prefix = pcs[k] == ref.pcs[k] &&
				 ((flags[k] & UNWIND_FRAME_ACTIVATION) != 0) == ref.act[k];
		if (prefix && n == ref.n) {
			same++;
			continue;
		}
		if (prefix && why == UNWIND_NO_CFI) {
			nocfi_prefix++;
			if (verbose) {
				fprintf(stderr,
					"sample %zu (pid %u tid %u): libdw goes on after our %s\n",
					samples, s->pid, s->tid, unwind_reason__name(why));
				print_stacks(p->dwfl, pcs, flags, n, why, &ref);
			}
			continue;
		}
		differ++;
		fprintf(stderr, "sample %zu (pid %u tid %u, copy %u bytes): DIFFERS from libdw\n",
			samples, s->pid, s->tid, s->stack_copy_len);
		if (verbose || differ <= 10)
			print_stacks(p->dwfl, pcs, flags, n, why, &ref);
	}

	printf("summary samples=%zu compared=%zu same=%zu differ=%zu nocfi_prefix=%zu "
	       "skipped=%zu frames=%zu reasons=",
	       samples, compared, same, differ, nocfi_prefix, skipped, frames);
	bool first = true;
	for (int r = 0; r < UNWIND_REASON__COUNT; r++) {
		if (!reasons[r])
			continue;
		printf("%s%s:%zu", first ? "" : ",", unwind_reason__name(r), reasons[r]);
		first = false;
	}
	printf("\n");
	unlink(vdso_path);
	return differ == 0 && compared > 0 ? 0 : 1;

usage:
	fprintf(stderr, "usage: unwind_compare [-v] [-p PID] DIR|FILE\n");
	return 2;
}
