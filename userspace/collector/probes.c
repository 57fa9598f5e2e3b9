// SPDX-License-Identifier: MIT
/*
 * Probe rings (probes.h).  One reused buffer of MS_PROBE_READ_SLOTS_MAX
 * slots (2 MiB) holds what a round reads from one process; records are
 * decoded from it into one struct ms_probe on the stack and emitted.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpf/abi/records.h"
#include "sdk/c/microscope_probes.h"
#include "probes.h"
#include "../options/record_options.h"
#include "../stream/memory_policy.h"
#include "userspace/elfscan/elfscan.h"

/* A slot left unfinished this long (ns) is skipped: its writer died
 * between reserving and publishing it (a writer preempted for a while
 * must not lose its record, so this is far above a scheduling delay). */
#define MS_PROBE_STALL_NS (1000ull * 1000 * 1000)
/* A control block found while the loader is still mapping the library (its
 * first segment mapped over the whole span, the data segment not yet):
 * what is read there is not the block.  It is looked for again, at most
 * this many times (MS_PROBE_RETRY_NS apart), before it counts as bad. */
#define MS_PROBE_EARLY_TRIES 10
/* Files known not to hold the SDK (by device and inode): a Python
 * executable is looked at every MS_PROBE_RETRY_NS until ctypes loads it. */
#define PROBE_NEG_CACHE 64
#define PROBE_SYMBOL "microscope_probes_control"

_Static_assert(MS_PROBE_NAME_MAX == MICROSCOPE_PROBES_NAME_MAX, "site name sizes");
_Static_assert(MS_PROBE_ZONE_BEGIN == MICROSCOPE_PROBES_ZONE_BEGIN &&
		       MS_PROBE_ZONE_END == MICROSCOPE_PROBES_ZONE_END &&
		       MS_PROBE_MARK == MICROSCOPE_PROBES_MARK,
	       "probe kinds");
_Static_assert(MS_PROBE_SITES_MAX >= MICROSCOPE_PROBES_SITES_MAX, "the SDK's site table fits");
_Static_assert(MS_PROBE_RING_SLOTS_MAX >= MICROSCOPE_PROBES_RING_MAX, "the SDK's ring fits");
_Static_assert(MS_MAX_PROBE_PREFIXES * (MS_MAX_PROBE_PREFIX + 1) + 1 <=
		       MICROSCOPE_PROBES_SELECT_BYTES,
	       "a selection fits the SDK's select buffer");

enum probe_state { PROBE_SEARCHING, PROBE_ACTIVE, PROBE_DONE };

struct probe_proc {
	uint32_t pid;
	enum probe_state state;
	uint64_t next_try; /* SEARCHING: CLOCK_MONOTONIC ns of the next look */
	uint32_t early_tries; /* SEARCHING: blocks found not valid yet */
	uint64_t ctl;	   /* address of the control block */
	/* SEARCHING, forked without exec: the parent's ring and site table,
	 * which the control block at ctl (the parent's address) must name to
	 * be the child's copy; 0 otherwise */
	uint64_t fork_ring, fork_sites;
	uint64_t ring, sites;
	uint32_t slots;
	uint32_t known_sites; /* sites emitted */
	uint64_t tail;	      /* next index to read */
	uint64_t stall_index; /* the unfinished slot reading stopped at, and since when */
	uint64_t stall_since;
	uint64_t dropped, timeouts, sites_refused; /* the control block's, last read */
	bool enabled;		    /* enable = 1 written at least once */
	uint32_t gen;		    /* control blocks found in this pid before (records.h) */
	uint8_t selected[MS_PROBE_SITES_MAX / 8]; /* sites recorded (with a selection) */
};

struct probe_neg {
	uint64_t dev, ino;
};

struct probe_rings {
	int targets_fd;
	/* record --probes: name prefixes, none = every site */
	char prefixes[MS_MAX_PROBE_PREFIXES][MS_MAX_PROBE_PREFIX + 1];
	uint32_t nprefixes;
	/* the same, as the SDK's select buffer takes them (microscope_probes.h) */
	char select[MS_MAX_PROBE_PREFIXES * (MS_MAX_PROBE_PREFIX + 1) + 1];
	uint32_t select_len;
	bool stopped;
	uint64_t last_walk;
	struct probe_proc procs[MS_PROBE_PROCS_MAX];
	uint32_t nprocs;
	struct probe_neg neg[PROBE_NEG_CACHE];
	uint32_t nneg, neg_next;
	struct microscope_probes_record *buf; /* MS_PROBE_READ_SLOTS_MAX */
	struct microscope_site site_buf[64];
	/* counters */
	uint64_t processes, records, sites, dropped, timeouts, bad_control, bad_site, bad_record,
		torn, procs_full, not_selected, sites_refused, forks;
};

struct probe_rings *probe_rings__new(int targets_fd, const char *select)
{
	struct probe_rings *pr = calloc(1, sizeof(*pr));

	if (!pr)
		return NULL;
	pr->targets_fd = targets_fd;
	while (select && *select) {
		size_t len = strcspn(select, ",");

		if (!len || len > MS_MAX_PROBE_PREFIX || pr->nprefixes == MS_MAX_PROBE_PREFIXES) {
			free(pr);
			errno = EINVAL;
			return NULL;
		}
		memcpy(pr->prefixes[pr->nprefixes++], select, len);
		memcpy(pr->select + pr->select_len, select, len);
		pr->select_len += (uint32_t)len + 1; /* its NUL: zeroed by calloc */
		select += len + (select[len] == ',');
	}
	pr->select_len++; /* the empty prefix that ends them */
	pr->buf = malloc((size_t)MS_PROBE_READ_SLOTS_MAX * sizeof(*pr->buf));
	if (!pr->buf) {
		free(pr);
		errno = ENOMEM;
		return NULL;
	}
	return pr;
}

void probe_rings__free(struct probe_rings *pr)
{
	if (!pr)
		return;
	free(pr->buf);
	free(pr);
}

static int mem_read(uint32_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == n ? 0 : -EFAULT;
}

static int mem_write(uint32_t pid, uint64_t addr, const void *buf, size_t n)
{
	struct iovec local = { (void *)buf, n }, remote = { (void *)(uintptr_t)addr, n };
	ssize_t got = process_vm_writev((pid_t)pid, &local, 1, &remote, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == n ? 0 : -EFAULT;
}

/* The symbol's address relative to the file's first PT_LOAD of offset 0
 * (what the mapping of file offset 0 starts at).  0 or -ENOENT. */
static int elf__find_control(int fd, uint64_t *rel)
{
	uint64_t load, value = 0;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	Elf *e;
	int err = -ENOENT;

	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF)
		goto cleanup;
	while (!value && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB))
			continue;
		/* Most files looked at do not hold the SDK (under -a, every
		 * executable of the host): a table whose names lack the symbol
		 * is not converted symbol by symbol. */
		if (!elfscan__strtab_has(e, sh.sh_link, PROBE_SYMBOL))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
			    sym.st_size != sizeof(struct microscope_probes_control))
				continue;
			name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, PROBE_SYMBOL)) {
				value = sym.st_value;
				break;
			}
		}
	}
	if (!value)
		goto cleanup;
	load = elfscan__first_load(e);
	if (load == UINT64_MAX || value < (load & ~0xfffull))
		goto cleanup;
	*rel = value - (load & ~0xfffull);
	err = 0;
cleanup:
	elf_end(e);
	return err;
}

int probes__file_has_control(const char *path)
{
	uint64_t rel;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = elf__find_control(fd, &rel);
	close(fd);
	return !err;
}

static bool neg__has(const struct probe_rings *pr, uint64_t dev, uint64_t ino)
{
	for (uint32_t i = 0; i < pr->nneg; i++)
		if (pr->neg[i].dev == dev && pr->neg[i].ino == ino)
			return true;
	return false;
}

static void neg__add(struct probe_rings *pr, uint64_t dev, uint64_t ino)
{
	if (pr->nneg < PROBE_NEG_CACHE) {
		pr->neg[pr->nneg++] = (struct probe_neg){ dev, ino };
	} else {
		pr->neg[pr->neg_next] = (struct probe_neg){ dev, ino };
		pr->neg_next = (pr->neg_next + 1) % PROBE_NEG_CACHE;
	}
}

/* Where pid's control block is: 0 and *addr, -ENOENT (not there yet),
 * -ESRCH (gone). */
static int proc__find(struct probe_rings *pr, uint32_t pid, uint64_t *addr)
{
	char path[64], line[4608], exe[4096], file[4096];
	ssize_t exe_len;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	exe_len = readlink(path, exe, sizeof(exe) - 1);
	exe[exe_len > 0 ? exe_len : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -ENOENT;
	while (err == -ENOENT && fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		const char *base;
		uint64_t rel;
		struct stat st;
		int n = 0, fd;

		file[0] = '\0';
		if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &start, &end, &off, &maj, &min,
			   &ino, &n) < 6 || off || !ino || !n)
			continue;
		snprintf(file, sizeof(file), "%s", line + n);
		file[strcspn(file, "\n")] = '\0';
		base = strrchr(file, '/');
		base = base ? base + 1 : file;
		if (strcmp(file, exe) && !strstr(base, "microscope_probes"))
			continue;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%llx-%llx", pid, start, end);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || neg__has(pr, st.st_dev, st.st_ino)) {
			close(fd);
			continue;
		}
		if (!elf__find_control(fd, &rel)) {
			*addr = start + rel;
			err = 0;
		} else {
			neg__add(pr, st.st_dev, st.st_ino);
		}
		close(fd);
	}
	fclose(f);
	return err;
}

static struct probe_proc *rings__proc(struct probe_rings *pr, uint32_t pid, uint64_t now_ns)
{
	for (uint32_t i = 0; i < pr->nprocs; i++)
		if (pr->procs[i].pid == pid)
			return &pr->procs[i];
	if (pr->nprocs == MS_PROBE_PROCS_MAX) {
		/* reuse a finished slot, else count */
		for (uint32_t i = 0; i < pr->nprocs; i++) {
			if (pr->procs[i].state == PROBE_DONE) {
				pr->procs[i] = (struct probe_proc){ .pid = pid, .next_try = now_ns };
				return &pr->procs[i];
			}
		}
		pr->procs_full++;
		return NULL;
	}
	pr->procs[pr->nprocs] = (struct probe_proc){ .pid = pid, .next_try = now_ns };
	return &pr->procs[pr->nprocs++];
}

/* Is the control block one this build reads, within the policy limits? */
static bool control__valid(const struct microscope_probes_control *c)
{
	return c->magic == MICROSCOPE_PROBES_MAGIC && c->abi >= MICROSCOPE_PROBES_ABI_MIN &&
	       c->abi <= MICROSCOPE_PROBES_ABI &&
	       c->size == sizeof(*c) && c->record_size == sizeof(struct microscope_probes_record) &&
	       c->site_size == sizeof(struct microscope_site) &&
	       c->site_max <= MS_PROBE_SITES_MAX && c->site_count <= c->site_max &&
	       (!c->ring || (c->ring_slots >= MICROSCOPE_PROBES_RING_MIN &&
			     c->ring_slots <= MS_PROBE_RING_SLOTS_MAX &&
			     !(c->ring_slots & (c->ring_slots - 1))));
}

static void proc__done(struct probe_rings *pr, struct probe_proc *pp)
{
	(void)pr;
	pp->state = PROBE_DONE;
}

/* Does name start with one of the selected prefixes (any, without a selection)? */
static bool rings__selects(const struct probe_rings *pr, const char *name)
{
	if (!pr->nprefixes)
		return true;
	for (uint32_t i = 0; i < pr->nprefixes; i++)
		if (!strncmp(name, pr->prefixes[i], strlen(pr->prefixes[i])))
			return true;
	return false;
}

static bool proc__selected(const struct probe_rings *pr, const struct probe_proc *pp,
			   uint32_t site)
{
	return !pr->nprefixes || (site < MS_PROBE_SITES_MAX &&
				  (pp->selected[site / 8] & (1u << (site % 8))));
}

/* New sites [known_sites, count). */
static int proc__sites(struct probe_rings *pr, struct probe_proc *pp, uint32_t count,
		       uint64_t now_ns, probe_emit_fn emit, void *ctx)
{
	const uint32_t batch = sizeof(pr->site_buf) / sizeof(pr->site_buf[0]);
	struct ms_probe_site rec;
	int err;

	while (pp->known_sites < count) {
		uint32_t n = count - pp->known_sites < batch ? count - pp->known_sites : batch;

		err = mem_read(pp->pid, pp->sites + (uint64_t)pp->known_sites * sizeof(pr->site_buf[0]),
			       pr->site_buf, n * sizeof(pr->site_buf[0]));
		if (err)
			return err;
		for (uint32_t i = 0; i < n; i++) {
			const struct microscope_site *s = &pr->site_buf[i];

			memset(&rec, 0, sizeof(rec));
			rec.hdr.type = MS_REC_PROBE_SITE;
			rec.hdr.size = sizeof(rec);
			rec.time_ns = now_ns;
			uint32_t id = pp->known_sites + i;

			rec.pid = pp->pid;
			rec.site = pp->gen << 16 | id;
			if (s->id != id || !memchr(s->name, '\0', sizeof(s->name)))
				pr->bad_site++; /* still emitted: its records need a name */
			memcpy(rec.name, s->name, sizeof(rec.name) - 1);
			if (s->id != id)
				snprintf(rec.name, sizeof(rec.name), "[bad site %u]", id);
			if (!rings__selects(pr, rec.name)) {
				pr->not_selected++;
				continue;
			}
			if (pr->nprefixes) {
				uint32_t on = 1;
				uint64_t at = pp->sites + (uint64_t)id * sizeof(*s) +
					      offsetof(struct microscope_site, on);

				/* the SDK writes this site's records from now on */
				err = mem_write(pp->pid, at, &on, sizeof(on));
				if (err)
					return err;
				pp->selected[id / 8] |= 1u << (id % 8);
			}
			err = emit(ctx, &rec, sizeof(rec));
			if (err)
				return err;
			pr->sites++;
		}
		pp->known_sites += n;
	}
	return 0;
}

/* Slots [tail, head): read, check, emit; tail moves past what was read. */
static int proc__records(struct probe_rings *pr, struct probe_proc *pp, uint64_t head,
			 uint64_t now_ns, probe_emit_fn emit, void *ctx)
{
	uint64_t avail = head - pp->tail, n = avail, i;
	uint64_t mask = pp->slots - 1, first;
	struct ms_probe rec = { .hdr = { MS_REC_PROBE, sizeof(rec) }, .pid = pp->pid };
	int emitted = 0, err;

	if (n > MS_PROBE_READ_SLOTS_MAX)
		n = MS_PROBE_READ_SLOTS_MAX;
	if (!n)
		return 0;
	first = pp->tail & mask;
	{
		uint64_t a = n < pp->slots - first ? n : pp->slots - first;
		size_t rs = sizeof(struct microscope_probes_record);

		err = mem_read(pp->pid, pp->ring + first * rs, pr->buf, a * rs);
		if (!err && n > a)
			err = mem_read(pp->pid, pp->ring, pr->buf + a, (n - a) * rs);
		if (err)
			return err;
	}
	for (i = 0; i < n; i++) {
		const struct microscope_probes_record *r = &pr->buf[i];
		uint64_t index = pp->tail + 1;
		uint32_t kind = r->site_kind & MICROSCOPE_PROBES_KIND_MASK, site = r->site_kind >> 8;

		if (r->seq >> 16 != index ||
		    (r->seq & 0xffff) != microscope_probes_check(r->time_ns, r->value, r->tid,
								  r->site_kind) ||
		    site >= pp->known_sites) {
			/* unfinished, being rewritten, or of a site not read yet */
			if (!pp->stall_since || pp->stall_index != pp->tail) {
				pp->stall_index = pp->tail;
				pp->stall_since = now_ns;
				break;
			}
			if (now_ns - pp->stall_since < MS_PROBE_STALL_NS)
				break;
			pr->torn++;
			pp->tail++;
			pp->stall_since = 0;
			continue;
		}
		pp->tail++;
		if (kind < MS_PROBE_ZONE_BEGIN || kind > MS_PROBE_MARK || !r->tid ||
		    !proc__selected(pr, pp, site)) {
			pr->bad_record++;
			continue;
		}
		rec.time_ns = r->time_ns;
		rec.value = r->value;
		rec.tid = r->tid;
		rec.site = pp->gen << 16 | site;
		rec.kind = kind | (r->site_kind & MICROSCOPE_PROBES_AFTER_DROP ? MS_PROBE_F_AFTER_DROP
									   : 0);
		err = emit(ctx, &rec, sizeof(rec));
		if (err)
			return err;
		emitted++;
	}
	pr->records += emitted;
	return emitted;
}

/* One round for an active process (or a found one not yet enabled). */
static int proc__drain(struct probe_rings *pr, struct probe_proc *pp, uint64_t now_ns, bool stop,
		       probe_emit_fn emit, void *ctx)
{
	struct microscope_probes_control c;
	struct {
		uint64_t tail, heartbeat_ns, timeout_ns;
	} back;
	uint64_t on = stop ? 0
		      : pr->nprefixes ? MICROSCOPE_PROBES_ON
				      : MICROSCOPE_PROBES_ON | MICROSCOPE_PROBES_ALL;
	uint64_t pid = (uint64_t)getpid();
	int n = 0, err;
	bool forked = false;

	_Static_assert(offsetof(struct microscope_probes_control, heartbeat_ns) ==
			       offsetof(struct microscope_probes_control, tail) + 8 &&
		       offsetof(struct microscope_probes_control, timeout_ns) ==
			       offsetof(struct microscope_probes_control, tail) + 16,
		       "tail, heartbeat, timeout written at once");
	err = mem_read(pp->pid, pp->ctl, &c, sizeof(c));
	if (err)
		goto gone;
	if (pp->fork_ring) {
		bool copy = c.magic == MICROSCOPE_PROBES_MAGIC && c.ring == pp->fork_ring &&
			    c.sites == pp->fork_sites;

		pp->fork_ring = pp->fork_sites = 0;
		if (!copy) { /* not the parent's copy (it exec'd since): look for it */
			pp->ctl = 0;
			pp->next_try = now_ns;
			return 0;
		}
		pr->forks++;
		forked = true;
	}
	if (!control__valid(&c)) {
		if (pp->state == PROBE_SEARCHING && pp->early_tries++ < MS_PROBE_EARLY_TRIES) {
			pp->ctl = 0; /* found again at the next look */
			pp->next_try = now_ns + MS_PROBE_RETRY_NS;
			return 0;
		}
		pr->bad_control++;
		proc__done(pr, pp);
		return 0;
	}
	if (!c.ring)
		return 0; /* its constructor has not run yet */
	if (pp->state == PROBE_SEARCHING) {
		pp->state = PROBE_ACTIVE;
		pp->ring = c.ring;
		pp->slots = c.ring_slots;
		pp->sites = c.sites;
		/* what an earlier reader left is not ours; what the SDK wrote
		 * for us before we found it (started by us, reader_pid ours:
		 * MICROSCOPE_PROBES_RECORDER_ENV) is, but not in a child forked
		 * without exec: its ring is a copy of its parent's, whose
		 * records up to the fork are the parent's (read a second time
		 * they were the child's, with their old times late) */
		pp->tail = !forked && c.enable && c.reader_pid == pid ? c.tail : c.head;
		pr->processes++;
	}
	if (c.ring != pp->ring || c.ring_slots != pp->slots || c.sites != pp->sites ||
	    c.head < pp->tail || c.head - pp->tail > pp->slots) {
		pr->bad_control++;
		proc__done(pr, pp);
		return 0;
	}
	if (c.dropped >= pp->dropped)
		pr->dropped += c.dropped - pp->dropped;
	pp->dropped = c.dropped;
	if (c.timeouts >= pp->timeouts)
		pr->timeouts += c.timeouts - pp->timeouts;
	pp->timeouts = c.timeouts;
	if (c.sites_refused >= pp->sites_refused)
		pr->sites_refused += c.sites_refused - pp->sites_refused;
	pp->sites_refused = c.sites_refused;
	err = proc__sites(pr, pp, c.site_count, now_ns, emit, ctx);
	if (err)
		goto gone;
	n = proc__records(pr, pp, c.head, now_ns, emit, ctx);
	if (n < 0) {
		err = n;
		goto gone;
	}
	back.tail = pp->tail;
	back.heartbeat_ns = now_ns;
	back.timeout_ns = MS_PROBE_TIMEOUT_NS;
	err = mem_write(pp->pid, pp->ctl + offsetof(struct microscope_probes_control, tail), &back,
			sizeof(back));
	if (!err && !pp->enabled)
		err = mem_write(pp->pid, pp->ctl + offsetof(struct microscope_probes_control, reader_pid),
				&pid, sizeof(pid));
	/* the prefixes before the SELECT bit that tells the SDK to read them */
	if (!err && !stop && pr->nprefixes && c.select && c.select_size >= pr->select_len) {
		if (!pp->enabled)
			err = mem_write(pp->pid, c.select, pr->select, pr->select_len);
		on |= MICROSCOPE_PROBES_SELECT;
	}
	/* on after the heartbeat: a writer never sees on with a stale one */
	if (!err && (c.enable != on || stop))
		err = mem_write(pp->pid, pp->ctl + offsetof(struct microscope_probes_control, enable),
				&on, sizeof(on));
	if (err)
		goto gone;
	pp->enabled = true;
	return n;
gone:
	/* an emitter's error stops the recording; the process's is its end,
	 * or (the control block unmapped: an exec, a dlclose) a new search */
	if (err == -EFAULT) {
		uint32_t pid = pp->pid, gen = pp->gen + (pp->state == PROBE_ACTIVE);

		*pp = (struct probe_proc){ .pid = pid, .gen = gen & 0xffff,
					   .next_try = now_ns + MS_PROBE_RETRY_NS };
		return 0;
	}
	if (err == -ESRCH || err == -EPERM || err == -ENOMEM) {
		proc__done(pr, pp);
		return 0;
	}
	return err;
}

int probe_rings__add_pid(struct probe_rings *pr, uint32_t pid, uint64_t now_ns)
{
	return rings__proc(pr, pid, now_ns) ? 0 : -ENOSPC;
}

bool probe_rings__has(const struct probe_rings *pr, uint32_t pid)
{
	for (uint32_t i = 0; pr && i < pr->nprocs; i++)
		if (pr->procs[i].pid == pid)
			return pr->procs[i].state != PROBE_DONE;
	return false;
}

int probe_rings__add_child(struct probe_rings *pr, uint32_t ppid, uint32_t pid, uint64_t now_ns)
{
	const struct probe_proc *parent = NULL;
	struct probe_proc *pp;
	uint64_t ctl, ring, sites;

	for (uint32_t i = 0; i < pr->nprocs && !parent; i++)
		if (pr->procs[i].pid == ppid && pr->procs[i].state != PROBE_DONE)
			parent = &pr->procs[i];
	if (!parent || pid == ppid)
		return -ENOENT;
	/* copied before rings__proc may reuse a slot */
	ctl = parent->state == PROBE_ACTIVE ? parent->ctl : 0;
	ring = parent->ring;
	sites = parent->sites;
	pp = rings__proc(pr, pid, now_ns);
	if (!pp)
		return -ENOSPC;
	if (pp->state == PROBE_DONE) /* the pid of a process gone: a new one */
		*pp = (struct probe_proc){ .pid = pid, .next_try = now_ns,
					   .gen = (pp->gen + 1) & 0xffff };
	if (pp->state != PROBE_SEARCHING || pp->ctl || !ctl)
		return 0; /* known already, or searched for as any other */
	pp->ctl = ctl;
	pp->fork_ring = ring;
	pp->fork_sites = sites;
	pp->next_try = now_ns;
	return 0;
}

/* Targets not known yet join as SEARCHING (at most every MS_PROBE_RETRY_NS). */
static void rings__walk(struct probe_rings *pr, uint64_t now_ns)
{
	uint32_t key, next, *prev = NULL;

	if (pr->targets_fd < 0 || (pr->last_walk && now_ns - pr->last_walk < MS_PROBE_RETRY_NS))
		return;
	pr->last_walk = now_ns;
	while (!bpf_map_get_next_key(pr->targets_fd, prev, &next)) {
		key = next;
		prev = &key;
		(void)rings__proc(pr, key, now_ns);
	}
}

static int rings__round(struct probe_rings *pr, uint64_t now_ns, bool stop, probe_emit_fn emit,
			void *ctx)
{
	int total = 0, n;

	rings__walk(pr, now_ns);
	for (uint32_t i = 0; i < pr->nprocs; i++) {
		struct probe_proc *pp = &pr->procs[i];

		if (pp->state == PROBE_DONE)
			continue;
		if (pp->state == PROBE_SEARCHING) {
			int err;

			if (stop || now_ns < pp->next_try)
				continue;
			pp->next_try = now_ns + MS_PROBE_RETRY_NS;
			/* a forked child: its control block is at its parent's address */
			err = pp->fork_ring ? 0 : proc__find(pr, pp->pid, &pp->ctl);
			if (err == -ESRCH)
				proc__done(pr, pp);
			if (err)
				continue;
		}
		n = proc__drain(pr, pp, now_ns, stop, emit, ctx);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

int probe_rings__drain(struct probe_rings *pr, uint64_t now_ns, probe_emit_fn emit, void *ctx)
{
	if (!pr || pr->stopped)
		return 0;
	return rings__round(pr, now_ns, false, emit, ctx);
}

int probe_rings__stop(struct probe_rings *pr, uint64_t now_ns, probe_emit_fn emit, void *ctx)
{
	int n;

	if (!pr || pr->stopped)
		return 0;
	n = rings__round(pr, now_ns, true, emit, ctx);
	pr->stopped = true;
	return n < 0 ? n : 0;
}

int probe_rings__counters(const struct probe_rings *pr, probe_counter_fn counter, void *ctx)
{
	if (!pr || (!pr->processes && !pr->bad_control))
		return 0; /* no SDK anywhere: no probes.* rows */
	const struct {
		const char *name;
		uint64_t v;
	} c[] = {
		{ "probes.processes", pr->processes }, { "probes.records", pr->records },
		{ "probes.sites", pr->sites },	       { "probes.dropped", pr->dropped },
		{ "probes.timeouts", pr->timeouts },   { "probes.bad_control", pr->bad_control },
		{ "probes.bad_site", pr->bad_site },   { "probes.bad_record", pr->bad_record },
		{ "probes.torn", pr->torn },	       { "probes.procs_full", pr->procs_full },
		{ "probes.sites_not_selected", pr->not_selected },
		{ "probes.sites_refused", pr->sites_refused },
		{ "probes.forks", pr->forks },
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(c) / sizeof(c[0]); i++)
		if (c[i].v || i < 4)
			err = counter(ctx, c[i].name, c[i].v);
	return err;
}
