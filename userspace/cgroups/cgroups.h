/* SPDX-License-Identifier: MIT */
/*
 * cgroup v2 and container resolution for host recordings (record --cgroup,
 * --container, and the capture's cgroups table).
 *
 * Everything here reads files only (mountinfo, /proc/PID/cgroup, the cgroup
 * v2 tree) under roots the caller passes, so that tests run it on fake
 * /proc and /sys trees.  What it reads is untrusted text: lines are parsed
 * within bounds, over-long ones are skipped, and every walk is bounded by
 * the limits below.
 *
 * Identity: a cgroup's id is the kernfs node id of its directory, which is
 * the directory's inode number on the cgroup2 file system (64-bit kernels,
 * Linux 5.5+), the value bpf_get_current_cgroup_id() returns.  Paths are
 * relative to the v2 root and start with "/" ("/" is the root itself), as
 * the "0::" line of /proc/PID/cgroup shows them.
 *
 * Containers are recognized from cgroup directory names the common runtimes
 * create (see cgroup_path__container); a container's cgroup is the
 * directory whose name carries the container id or machine name; its
 * sub-cgroups belong to it.
 */
#ifndef MS_CGROUPS_H
#define MS_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Limits (policy). */
#define CGROUP_PATH_MAX 1024	   /* bytes of a cgroup path, NUL included */
#define CGROUP_CONTAINER_ID_MAX 128 /* bytes of a container id or name, NUL included */
#define CGROUP_TREE_MAX_DIRS 65536 /* directories visited by one tree walk */
#define CGROUP_TREE_MAX_DEPTH 32   /* levels below the root a walk descends */
#define CGROUP_PROC_MAX 1000000	   /* /proc entries one container scan reads */
#define CGROUP_ID_PREFIX_MIN 4	   /* hex digits of the shortest id prefix matched */
#define CONTAINER_STATE_MAX 65536  /* containers read from the runtimes' state files */
#define CONTAINER_NAME_IDS_MAX 8   /* containers one name may stand for */
#define CONTAINERS_LISTED_MAX 16   /* running containers an error message names */

/* The runtime names cgroup_path__container reports. */
#define CGROUP_RUNTIME_DOCKER "docker"
#define CGROUP_RUNTIME_CONTAINERD "containerd"
#define CGROUP_RUNTIME_CRIO "cri-o"
#define CGROUP_RUNTIME_PODMAN "podman"
#define CGROUP_RUNTIME_NSPAWN "systemd-nspawn"
#define CGROUP_RUNTIME_LXC "lxc"

struct cgroup_container {
	const char *runtime;		   /* CGROUP_RUNTIME_*, static; NULL if none */
	char id[CGROUP_CONTAINER_ID_MAX];  /* container id (lowercase hex) or machine name */
	size_t path_len;		   /* bytes of the path up to and with the container's dir */
};

/*
 * The innermost container that cgroup v2 path (relative to the root,
 * "/system.slice/docker-<id>.scope/...") belongs to, from the directory
 * names the runtimes create:
 *   docker-<hex>.scope, docker/<hex>                 docker (systemd, cgroupfs drivers)
 *   cri-containerd-<hex>.scope, kubepods.../<hex>    containerd (CRI)
 *   crio-<hex>.scope                                 cri-o
 *   libpod-<hex>.scope, libpod_parent/libpod-<hex>   podman
 *   machine-<name>.scope (systemd-escaped name)      systemd-nspawn (and other machined guests)
 *   lxc.payload.<name>                               lxc
 * where <hex> is 12 to 64 hex digits.  Conmon cgroups (libpod-conmon-,
 * crio-conmon-) are not containers.  Returns true and fills *out (path_len:
 * the prefix of path naming the container's cgroup), or false.
 */
bool cgroup_path__container(const char *path, struct cgroup_container *out);

/*
 * The mount point of the cgroup v2 hierarchy from a mountinfo file
 * ("/proc/self/mountinfo"): /sys/fs/cgroup on pure v2 hosts,
 * /sys/fs/cgroup/unified on hybrid ones.  Returns 0, -ENOENT when no
 * cgroup2 file system is mounted (a v1-only host), -ENAMETOOLONG, or the
 * -errno of opening the file.
 */
int cgroup_root__find(const char *mountinfo, char *root, size_t len);

/*
 * Resolve a --cgroup argument: an absolute path inside the v2 tree rooted at
 * root ("/sys/fs/cgroup/unified/machine.slice"), or a path relative to that
 * root ("/machine.slice", "machine.slice").  Writes the cgroup path relative
 * to the root (rel, "/machine.slice") and its id.  Returns 0, -ENOENT (no
 * such directory), -EACCES (unreadable), -ENOTDIR, -EXDEV (outside the v2
 * tree, e.g. a v1 hierarchy) or -ENAMETOOLONG.
 */
int cgroup__resolve(const char *root, const char *arg, char *rel, size_t len, uint64_t *id);

/* The id of the cgroup directory dir (its inode number).  Returns 0 or -errno. */
int cgroup__id(const char *dir, uint64_t *id);

/*
 * Visit every cgroup of the v2 tree at root, the root included, in
 * directory order: fn(ctx, id, rel) with rel relative to root ("/" for the
 * root).  At most CGROUP_TREE_MAX_DIRS directories and
 * CGROUP_TREE_MAX_DEPTH levels (*truncated set when more were skipped; may
 * be NULL).  fn returns 0 to go on or -errno to stop with that error.
 * Returns 0 or -errno.
 */
typedef int (*cgroup_visit_fn)(void *ctx, uint64_t id, const char *rel);
int cgroup_tree__walk(const char *root, cgroup_visit_fn fn, void *ctx, bool *truncated);

/*
 * The cgroup v2 path of process pid (the "0::" line of
 * proc_root/PID/cgroup), relative to the reader's cgroup namespace root.
 * Returns 0, -ENOENT (no such process, or no v2 line: v1-only), -EACCES,
 * -ENAMETOOLONG.
 */
int cgroup__of_pid(const char *proc_root, int pid, char *rel, size_t len);

/*
 * Containers matching query, found through the cgroups of the processes
 * in proc_root: a container matches when its id equals query, or starts
 * with query of at least CGROUP_ID_PREFIX_MIN hex digits (docker's short
 * ids), or its name (machine name) equals query, or (state_root not NULL)
 * the runtimes' state files under state_root name it query
 * (container_state__ids); every container when query is NULL.  Writes the
 * distinct container cgroup paths (relative to the v2 root, at most max of
 * them, each CGROUP_PATH_MAX bytes) to paths and their runtimes (static
 * strings) to runtimes (may be NULL).  Returns how many matched (possibly
 * more than max; only max are written), or -errno when proc_root cannot be
 * read.
 */
int cgroup_containers__find(const char *proc_root, const char *state_root, const char *query,
			    char (*paths)[CGROUP_PATH_MAX], const char **runtimes, int max);

/*
 * The running containers (as cgroup_containers__find(query NULL) finds
 * them), "NAME (RUNTIME ID), ..." with docker and podman names from
 * state_root (may be NULL) and 64-digit ids shortened to 12, at most
 * CONTAINERS_LISTED_MAX of them (then "and N more"), into buf (len bytes,
 * truncated); "none" when there are none.  Returns how many are running, or
 * -errno when proc_root cannot be read (buf then says so).
 */
int cgroup_containers__describe(const char *proc_root, const char *state_root, char *buf,
				size_t len);

/* query could only be an id prefix too short to match: 1 to
 * CGROUP_ID_PREFIX_MIN - 1 hex digits. */
bool cgroup_query__short_prefix(const char *query);

/*
 * The (id, name) pairs the runtimes' state files under state_root ("" or
 * NULL: the host's own; tests pass a fake tree) hold, untrusted input read
 * within bounds (container_state.c):
 *   podman (root): STATE/var/lib/containers/storage/overlay-containers/
 *     containers.json and STATE/run/containers/storage/overlay-containers/
 *     containers.json ("id", "names");
 *   docker: STATE/var/lib/docker/containers/<id>/config.v2.json ("ID",
 *     "Name": "/name").
 * Rootless podman keeps its state in each user's home and is not read.
 * fn(ctx, runtime (CGROUP_RUNTIME_*), id (hex), name) for each, at most
 * CONTAINER_STATE_MAX containers; fn returns 0 to go on or -errno to stop.
 * Files that are missing or malformed are skipped.  Returns 0 or -errno.
 */
typedef int (*container_state_fn)(void *ctx, const char *runtime, const char *id,
				  const char *name);
int container_state__each(const char *state_root, container_state_fn fn, void *ctx);

/* The ids of the containers named name (container_state__each), at most
 * max written to ids.  Returns how many (possibly more than max) or -errno. */
int container_state__ids(const char *state_root, const char *name,
			 char (*ids)[CGROUP_CONTAINER_ID_MAX], int max);

/* The name of container id, into name (len bytes).  False if none is known. */
bool container_state__name(const char *state_root, const char *id, char *name, size_t len);

/* Pid namespaces below the one given to --pid-ns that a walk climbs. */
#define PID_NS_MAX_DEPTH 32

/* Pids are at most this (PID_MAX_LIMIT, include/linux/threads.h): longer
 * digit strings given to --pid-ns are container ids. */
#define PID_NS_PID_MAX 4194304

/*
 * record --pid-ns REF: open the pid namespace REF names:
 *  - a host pid (digits, at most PID_NS_PID_MAX): its process's namespace,
 *    proc_root/PID/ns/pid;
 *  - a path (it holds a '/') of a namespace file: /proc/PID/ns/pid, or a
 *    bind mount of one;
 *  - otherwise a container id, short id or name, matched as --container
 *    matches (cgroup_containers__find, names from state_root): the pid namespace of its
 *    processes, the outermost one other than the reader's own (a runtime
 *    may leave a process of its own in the container's cgroup; one that
 *    forks into nested namespaces keeps the container's outermost).
 * Returns an fd (the caller closes it), or -errno with a message in err:
 * the file's open error, -EINVAL when it is not a pid namespace, -ENOENT
 * when no container matches (err lists the running ones), -E2BIG when
 * several do (err names them), -ESRCH when the container has no process in
 * a pid namespace of its own, -EINVAL when its processes are in several
 * unrelated ones.
 */
int pid_ns__open(const char *proc_root, const char *state_root, const char *ref, char *err,
		 size_t errlen);

/*
 * The host pid (as proc_root shows it) of the process whose pid is ns_pid
 * in the pid namespace ns_fd (pid_ns__open), found among the processes of
 * proc_root whose own namespace is that one or nested below it (at most
 * PID_NS_MAX_DEPTH levels).  Returns 0 and *host, or -ESRCH (none), -EINVAL
 * (several: contradictory evidence), -errno, each with a message in err.
 */
int pid_ns__host_pid(const char *proc_root, int ns_fd, pid_t ns_pid, pid_t *host, char *err,
		     size_t errlen);

#endif
