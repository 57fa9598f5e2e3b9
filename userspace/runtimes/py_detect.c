// SPDX-License-Identifier: MIT
/*
 * Detecting CPython in a process (py_procs.c tracks it afterwards): the
 * interpreter module found in /proc/PID/maps, its ELF read for Py_Version
 * and _PyRuntime (py_layout__read_elf, cached by file identity), the
 * layout taken from the runtime's debug offsets or the version table, and
 * written to py_procs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "py_procs.h"
#include "py_procs_internal.h"

static void elf_result__key(struct py_elf_result *r, const struct stat *st)
{
	r->dev = st->st_dev;
	r->ino = st->st_ino;
	r->size = (uint64_t)st->st_size;
	r->mtime_sec = st->st_mtim.tv_sec;
	r->mtime_nsec = st->st_mtim.tv_nsec;
}

static bool elf_result__same(const struct py_elf_result *a, const struct py_elf_result *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_sec == b->mtime_sec && a->mtime_nsec == b->mtime_nsec;
}

/*
 * py_layout__read_elf through the cache: a file of the same device, inode,
 * size and mtime gives the same answer.  -ESRCH: path names no file (a
 * process without an executable: a kernel thread, a zombie).  A result is kept only when the
 * path still names that file after the read (not an I/O error of a file
 * replaced or gone meanwhile).
 */
static int tracker__read_elf(struct py_tracker *t, const char *path, uint32_t *version,
			     uint64_t *runtime_vaddr, uint64_t *load_vaddr)
{
	struct py_elf_result key = {0}, again = {0}, *r;
	struct stat st;
	int err;

	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno; /* not "no _PyRuntime" */
	elf_result__key(&key, &st);
	for (uint32_t i = 0; i < t->elf_cached; i++) {
		r = &t->elf_cache[i];
		if (!elf_result__same(r, &key))
			continue;
		if (!r->err) {
			*version = r->version;
			*runtime_vaddr = r->runtime_vaddr;
			*load_vaddr = r->load_vaddr;
		}
		return r->err;
	}
	t->elf_reads++;
	err = py_layout__read_elf(path, version, runtime_vaddr, load_vaddr);
	if (stat(path, &st))
		return err;
	elf_result__key(&again, &st);
	if (!elf_result__same(&key, &again) || (err && err != -ENOENT && err != -ENOTSUP))
		return err;
	key.err = err;
	if (!err) {
		key.version = *version;
		key.runtime_vaddr = *runtime_vaddr;
		key.load_vaddr = *load_vaddr;
	}
	if (t->elf_cached < PY_ELF_CACHE) {
		t->elf_cache[t->elf_cached++] = key;
	} else {
		t->elf_cache[t->elf_next] = key;
		t->elf_next = (t->elf_next + 1) % PY_ELF_CACHE;
	}
	return err;
}

int py_tracker__runs_cpython(struct py_tracker *t, const char *path)
{
	uint64_t runtime_vaddr, load_vaddr;
	uint32_t version;
	int err;

	if (!t)
		return -EINVAL;
	err = tracker__read_elf(t, path, &version, &runtime_vaddr, &load_vaddr);
	if (err == -ESRCH)
		return -ENOENT;
	return !err;
}

/*
 * Find the interpreter module in /proc/PID/maps and fill the layout.  A
 * candidate is a mapping named as libpython or a python executable, or the
 * process's own executable whatever its name (a program linking a static
 * libpython): the maps line naming what /proc/PID/exe links to.
 */
int py_proc__detect(struct py_tracker *t, struct py_proc *pp)
{
	char path[64], line[4608], file[4096], root[4200], why[256], module[400] = "";
	char exe_link[64], exe[4096];
	uint64_t runtime_vaddr = 0, load_vaddr = 0, base = 0;
	uint32_t version = 0;
	bool found = false;
	struct stat st;
	ssize_t exe_len;
	FILE *f;
	int err = -ENOENT;

	snprintf(exe_link, sizeof(exe_link), "/proc/%d/exe", pp->pid);
	exe_len = readlink(exe_link, exe, sizeof(exe) - 1);
	exe[exe_len > 0 ? exe_len : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", pp->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8];
		bool is_exe;
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &n) < 4 ||
		    !n)
			continue;
		if (sscanf(line + n, "%4095[^\n]", file) != 1 || file[0] != '/')
			continue;
		is_exe = exe[0] && !strcmp(file, exe);
		if (!is_exe && !py_module__is_candidate(file))
			continue;
		if (off != 0)
			continue;
		if (is_exe)
			snprintf(root, sizeof(root), "%s", exe_link);
		else
			snprintf(root, sizeof(root), "/proc/%d/root%s", pp->pid, file);
		err = tracker__read_elf(t, root, &version, &runtime_vaddr, &load_vaddr);
		if (err)
			err = tracker__read_elf(t, file, &version, &runtime_vaddr, &load_vaddr);
		if (err)
			continue;
		base = s - load_vaddr;
		found = true;
		snprintf(module, sizeof(module), "%.399s", file);
		/* libpython wins over an executable that only links it. */
		if (strstr(file, "libpython"))
			break;
	}
	fclose(f);
	if (!found)
		return err == -ENOTSUP ? err : -ENOENT;
	if (((version >> 16) & 0xff) >= 13) {
		uint8_t img[PY_DEBUG_OFFSETS_313_SIZE];

		err = py_mem__read(pp->pid, base + runtime_vaddr, img, sizeof(img));
		if (err)
			return err;
		err = py_layout__from_debug_offsets(img, sizeof(img), version, &pp->layout, why,
						    sizeof(why));
		if (err) {
			fprintf(stderr, "microscope record: pid %d: CPython 0x%x: %s\n", pp->pid,
				version, why);
			pp->failed = true;
			t->errors++;
			return err;
		}
	} else {
		err = py_layout__from_table(version, &pp->layout);
		if (err) {
			fprintf(stderr,
				"microscope record: pid %d: CPython %u.%u has no known layout "
				"(3.10-3.13 are supported); no Python frames\n",
				pp->pid, version >> 24, (version >> 16) & 0xff);
			pp->failed = true;
			t->errors++;
			return err;
		}
	}
	pp->layout.bpf.runtime = base + runtime_vaddr;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", pp->pid);
	if (stat(path, &st))
		return -errno;
	pp->layout.bpf.pidns_dev = st.st_dev;
	pp->layout.bpf.pidns_ino = st.st_ino;
	if (t->first && !t->first_done) {
		err = t->first(t->first_ctx);
		if (err) {
			fprintf(
			    stderr,
			    "microscope record: pid %d: loading the CPython walk: %s; no Python "
			    "frames\n",
			    pp->pid, strerror(-err));
			pp->failed = true;
			t->errors++;
			return err;
		}
		t->first_done = true;
	}
	if (bpf_map_update_elem(t->procs_fd, &(uint32_t){(uint32_t)pp->pid}, &pp->layout.bpf,
				BPF_ANY))
		return -errno;
	pp->active = true;
	if (!t->describe[0])
		snprintf(t->describe, sizeof(t->describe), "%u.%u.%u at %s", version >> 24,
			 (version >> 16) & 0xff, (version >> 8) & 0xff, module);
	return 0;
}
