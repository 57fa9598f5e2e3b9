// SPDX-License-Identifier: MIT
/*
 * Manual check of the sampler's user stack copy (not part of `make test`).
 * Reads a raw stream (`microscope record --save-raw DIR`) and checks every
 * sample record:
 *   - hdr.size == align8(sizeof(ms_sample) + 8 * (kstack_len + ustack_len)
 *     + stack_copy_len) and <= MS_SAMPLE_MAX_SIZE, stack_copy_len a multiple
 *     of 8 and <= the META stack_size;
 *   - frame-pointer cross-check: where regs.bp points into the copy, the
 *     return address the copy holds at bp + 8 must equal the kernel's
 *     frame-pointer callchain entry ips[kstack_len + 1] (only meaningful for
 *     code built with frame pointers, and when the sample hit a function
 *     after its prologue);
 *   - with -m MAPS (a copy of /proc/PID/maps of the target taken while it
 *     ran) and -p PID: sp + stack_copy_len never passes the end of the
 *     mapping holding sp, and MS_SAMPLE_F_STACK_END copies end exactly there.
 * Prints the copy-length distribution, bytes per sample, flags and the
 * stack counters.  Exit status 0 when every check passed.
 *
 *   stack_copy_check [-m MAPS -p PID] DIR-or-stream.msraw
 *
 * Build: gcc -std=gnu11 -O2 -g -I. -o build-stack/stack_copy_check \
 *            tests/manual/stack_copy_check.c
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/abi/records.h"
#include "userspace/stream/stream.h"

struct mapping {
	uint64_t start, end;
	char name[64];
};

static struct mapping maps[4096];
static int nmaps;

static int load_maps(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && nmaps < 4096) {
		struct mapping *m = &maps[nmaps];
		int pos = 0;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &m->start, &m->end, &pos) < 2)
			continue;
		snprintf(m->name, sizeof(m->name), "%s", line + pos);
		m->name[strcspn(m->name, "\n")] = '\0';
		nmaps++;
	}
	fclose(f);
	return 0;
}

static const struct mapping *find_map(uint64_t addr)
{
	for (int i = 0; i < nmaps; i++)
		if (maps[i].start <= addr && addr < maps[i].end)
			return &maps[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const char *maps_path = NULL, *path;
	char file[4096];
	uint32_t maps_pid = 0, stack_size = UINT32_MAX;
	uint64_t samples = 0, bad = 0, with_copy = 0, copy_bytes = 0, rec_bytes = 0;
	uint64_t fp_checked = 0, fp_match = 0, fp_mismatch = 0, fp_outside = 0;
	uint64_t vma_checked = 0, vma_past_end = 0, vma_end_exact = 0, vma_end_wrong = 0;
	uint64_t vma_no_map = 0, flag_end = 0, flag_fault = 0, flag_novma = 0, user_regs = 0;
	uint64_t hist[18] = {0}; /* copy length in KiB buckets, [17] = 64 KiB */
	uint32_t min_len = UINT32_MAX, max_len = 0;
	struct stat st;
	unsigned char *buf;
	size_t n, off;
	FILE *f;
	int opt;

	while ((opt = getopt(argc, argv, "m:p:")) != -1) {
		if (opt == 'm')
			maps_path = optarg;
		else if (opt == 'p')
			maps_pid = (uint32_t)strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: stack_copy_check [-m MAPS -p PID] DIR|FILE\n");
		return 2;
	}
	path = argv[optind];
	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		snprintf(file, sizeof(file), "%s/" MS_RAW_FILE, path);
	else
		snprintf(file, sizeof(file), "%s", path);
	if (maps_path && load_maps(maps_path)) {
		perror(maps_path);
		return 2;
	}
	f = fopen(file, "rb");
	if (!f || stat(file, &st)) {
		perror(file);
		return 2;
	}
	buf = malloc((size_t)st.st_size);
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n < 16 || memcmp(buf, MS_RAW_MAGIC, 8)) {
		fprintf(stderr, "%s: not a raw stream\n", file);
		return 2;
	}
	for (off = 16; off + sizeof(struct ms_chunk) <= n;) {
		struct ms_chunk c;
		const unsigned char *p;

		memcpy(&c, buf + off, sizeof(c));
		p = buf + off + sizeof(c);
		if (c.len > n - off - sizeof(c)) {
			fprintf(stderr, "truncated chunk at %zu\n", off);
			return 1;
		}
		off += sizeof(c) + ((c.len + 7u) & ~7u);
		if (c.kind == MS_CHUNK_META) {
			printf("meta   %.*s\n", (int)c.len, (const char *)p);
			if (c.len > 11 && !memcmp(p, "stack_size=", 11))
				stack_size = (uint32_t)strtoul((const char *)p + 11, NULL, 10);
			continue;
		}
		if (c.kind == MS_CHUNK_COUNTER) {
			printf("count  %.*s\n", (int)c.len, (const char *)p);
			continue;
		}
		if (c.kind != MS_CHUNK_BPF)
			continue;

		const struct ms_sample *s = (const void *)p;
		uint32_t ips, want;

		if (c.len < sizeof(*s) || s->hdr.type != MS_REC_SAMPLE)
			continue;
		samples++;
		ips = 8u * (s->kstack_len + s->ustack_len);
		want = (uint32_t)((sizeof(*s) + ips + s->stack_copy_len + 7) & ~7ul);
		if (s->hdr.size != c.len || c.len != want || c.len > MS_SAMPLE_MAX_SIZE ||
		    s->stack_copy_len % 8 || s->stack_copy_len > stack_size) {
			if (bad++ < 5)
				printf("BAD record: len %u size %u k %u u %u copy %u\n", c.len,
				       s->hdr.size, s->kstack_len, s->ustack_len, s->stack_copy_len);
			continue;
		}
		rec_bytes += c.len + 8; /* + BPF_RINGBUF_HDR_SZ in the ring */
		user_regs += !!(s->flags & MS_SAMPLE_F_USER_REGS);
		flag_end += !!(s->flags & MS_SAMPLE_F_STACK_END);
		flag_fault += !!(s->flags & MS_SAMPLE_F_STACK_FAULT);
		flag_novma += !!(s->flags & MS_SAMPLE_F_STACK_NO_VMA);
		if (!s->stack_copy_len)
			continue;
		with_copy++;
		copy_bytes += s->stack_copy_len;
		hist[s->stack_copy_len / 4096 > 17 ? 17 : s->stack_copy_len / 4096]++;
		if (s->stack_copy_len < min_len)
			min_len = s->stack_copy_len;
		if (s->stack_copy_len > max_len)
			max_len = s->stack_copy_len;

		const unsigned char *copy = p + sizeof(*s) + ips;
		uint64_t sp = s->regs.sp, bp = s->regs.bp;

		/* Frame-pointer cross-check against bpf_get_stack's walk. */
		if (s->ustack_len >= 2) {
			if (bp >= sp && bp + 16 <= sp + s->stack_copy_len) {
				uint64_t ret;

				memcpy(&ret, copy + (bp - sp) + 8, 8);
				fp_checked++;
				if (ret == s->ips[s->kstack_len + 1]) {
					fp_match++;
				} else if (fp_mismatch++ < 5) {
					printf("fp mismatch: tid %u ip %#lx sp %#lx bp %#lx "
					       "[bp+8] %#lx ips[1] %#lx\n",
					       s->tid, (unsigned long)s->regs.ip, (unsigned long)sp,
					       (unsigned long)bp, (unsigned long)ret,
					       (unsigned long)s->ips[s->kstack_len + 1]);
				}
			} else {
				fp_outside++;
			}
		}
		/* The copy against the target's mappings. */
		if (nmaps && s->pid == maps_pid) {
			const struct mapping *m = find_map(sp);

			vma_checked++;
			if (!m) {
				vma_no_map++;
			} else {
				if (sp + s->stack_copy_len > m->end) {
					if (vma_past_end++ < 5)
						printf("past end: sp %#lx len %u map %#lx-%#lx %s\n",
						       (unsigned long)sp, s->stack_copy_len,
						       (unsigned long)m->start,
						       (unsigned long)m->end, m->name);
				}
				if (s->flags & MS_SAMPLE_F_STACK_END) {
					if (((sp + s->stack_copy_len + 7) & ~7ul) >= (m->end & ~7ul) &&
					    sp + s->stack_copy_len <= m->end)
						vma_end_exact++;
					else
						vma_end_wrong++;
				}
			}
		}
	}
	printf("samples %lu bad %lu user_regs %lu with_copy %lu\n", samples, bad, user_regs,
	       with_copy);
	printf("flags: stack_end %lu stack_fault %lu stack_no_vma %lu\n", flag_end, flag_fault,
	       flag_novma);
	if (with_copy)
		printf("copy: min %u max %u mean %.0f bytes\n", min_len, max_len,
		       (double)copy_bytes / with_copy);
	if (samples)
		printf("bytes per sample in the ring (record + 8): %.0f\n",
		       (double)rec_bytes / samples);
	for (int i = 0; i < 18; i++)
		if (hist[i])
			printf("  copy %2d..%2d KiB: %lu\n", i * 4, i * 4 + 4, hist[i]);
	printf("fp check: checked %lu match %lu mismatch %lu (bp outside copy: %lu)\n", fp_checked,
	       fp_match, fp_mismatch, fp_outside);
	if (nmaps)
		printf("maps check (pid %u): checked %lu past_end %lu no_map %lu end_exact %lu "
		       "end_wrong %lu\n",
		       maps_pid, vma_checked, vma_past_end, vma_no_map, vma_end_exact,
		       vma_end_wrong);
	free(buf);
	return bad || fp_mismatch || vma_past_end || vma_end_wrong ? 1 : 0;
}
