// SPDX-License-Identifier: MIT
/*
 * `microscope snapshot PID`: ask a `record --window` recorder to write its
 * current window (SIGUSR1; record_rolling.h).  Refuses any process that is
 * not a microscope recorder with --window, so a stray PID is never sent a
 * signal whose default action would end it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

static const char snapshot_usage[] =
	"usage: microscope snapshot PID\n"
	"\n"
	"Make the `microscope record --window DURATION` running as PID write its\n"
	"current window to window-START-END.msc beside its -o file, without\n"
	"stopping the recording (the same as sending it SIGUSR1).\n";

/* Is pid a microscope recorder started with --window?  Reads its cmdline. */
static int recorder_has_window(pid_t pid, bool *yes)
{
	char path[64], buf[8192];
	ssize_t n;
	int fd;

	*yes = false;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	/* argv[0] ends in "microscope", argv[1] is "record", a later one "--window" */
	{
		size_t a0 = strlen(buf);
		const char *base = strrchr(buf, '/');

		base = base ? base + 1 : buf;
		if (strcmp(base, "microscope") || (ssize_t)a0 + 1 >= n ||
		    strcmp(buf + a0 + 1, "record"))
			return 0;
		for (const char *p = buf; p < buf + n; p += strlen(p) + 1)
			if (!strcmp(p, "--window") || !strncmp(p, "--window=", 9))
				*yes = true;
	}
	return 0;
}

int cmd_snapshot(int argc, char **argv)
{
	bool yes;
	char *end;
	long pid;
	int err;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(snapshot_usage, stdout);
		return 0;
	}
	if (argc != 2) {
		fputs(snapshot_usage, stderr);
		return 2;
	}
	pid = strtol(argv[1], &end, 10);
	if (*end || end == argv[1] || pid <= 0 || pid > 0x3fffffff) {
		fprintf(stderr, "microscope snapshot: bad pid '%s'\n", argv[1]);
		return 2;
	}
	err = recorder_has_window((pid_t)pid, &yes);
	if (err == -ENOENT) {
		fprintf(stderr, "microscope snapshot: no process %ld (the pid of a running "
				"`microscope record --window`)\n",
			pid);
		return 1;
	}
	if (err) {
		fprintf(stderr, "microscope snapshot: pid %ld: %s\n", pid, strerror(-err));
		return 1;
	}
	if (!yes) {
		fprintf(stderr, "microscope snapshot: pid %ld is not a `microscope record --window`\n",
			pid);
		return 1;
	}
	if (kill((pid_t)pid, SIGUSR1)) {
		fprintf(stderr, "microscope snapshot: pid %ld: %s\n", pid, strerror(errno));
		return 1;
	}
	return 0;
}
