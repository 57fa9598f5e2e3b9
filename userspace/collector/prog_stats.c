// SPDX-License-Identifier: MIT
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "prog_stats.h"

int prog_stats__add(struct bpf_object *obj, const struct bpf_program *counted, uint64_t *run_ns,
		    uint64_t *run_cnt)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj)
	{
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			return -errno;
		*run_ns += info.run_time_ns;
		if (prog == counted && run_cnt)
			*run_cnt += info.run_cnt;
	}
	return 0;
}
