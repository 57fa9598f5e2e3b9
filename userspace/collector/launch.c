// SPDX-License-Identifier: MIT
/*
 * Launching the recorded command behind a gate (collector.h).
 *
 * The child is forked first so that its pid can be put into the in-kernel
 * target filter and its /proc state snapshotted before it runs any of the
 * command's code.  It blocks reading the gate (a socket pair, so that
 * releasing a child that died meanwhile is EPIPE rather than SIGPIPE);
 * launcher__release writes one byte and the child execvp's.  If the recorder
 * dies first, the child reads end-of-file and exits 127 without exec.  An exec failure is reported
 * through a second pipe whose write end is O_CLOEXEC: a successful exec closes it (the parent reads
 * end-of-file), a failure writes errno first.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collector.h"
#include "sdk/c/microscope_probes.h"

extern char **environ;

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child: signal state as a freshly started program expects it. */
static void child__reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;
	int sig;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL); /* fails harmlessly for reserved signals */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void child__report(int fd, int err)
{
	ssize_t n;

	do
		n = write(fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
}

static void __attribute__((noreturn)) child__run(int gate_fd, int error_fd, char **argv,
						 char **envp)
{
	ssize_t n;
	char c;

	child__reset_signals();
	do
		n = read(gate_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1) /* the recorder went away without releasing: do not run */
		_exit(127);
	close(gate_fd);
	execvpe(argv[0], argv, envp);
	child__report(error_fd, errno);
	_exit(127);
}

/*
 * Fork the child that will run argv (NULL-terminated, argv[0] looked up in
 * PATH) and leave it waiting at the gate.  Fills l (pid, gate_fd, error_fd;
 * the caller owns both fds until launcher__release).  Returns 0 or -errno.
 */
int launcher__spawn(struct launcher *l, char **argv)
{
	return launcher__spawn_env(l, argv, NULL);
}

/* environ with NAME=VALUE set (put first, any other NAME= left out); made
 * before the fork: the child of a threaded recorder must not allocate. */
static char **env__with(const char *assign)
{
	size_t n = 0, k = 0, name = strcspn(assign, "=") + 1;
	char **envp;

	while (environ && environ[n])
		n++;
	envp = calloc(n + 2, sizeof(*envp));
	if (!envp)
		return NULL;
	envp[k++] = (char *)assign;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], assign, name))
			envp[k++] = environ[i];
	return envp;
}

int launcher__spawn_env(struct launcher *l, char **argv, const char *assign)
{
	int gate[2] = {-1, -1}, error[2] = {-1, -1};
	char **envp = NULL;
	pid_t pid;
	int err;

	l->pid = -1;
	l->gate_fd = -1;
	l->error_fd = -1;
	if (!argv || !argv[0])
		return -EINVAL;
	envp = assign ? env__with(assign) : environ;
	if (!envp)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) || pipe2(error, O_CLOEXEC)) {
		err = -errno;
		goto cleanup;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		goto cleanup;
	}
	if (pid == 0) {
		close(gate[1]);
		close(error[0]);
		child__run(gate[0], error[1], argv, envp);
	}
	l->pid = pid;
	l->gate_fd = gate[1];
	l->error_fd = error[0];
	gate[1] = -1;
	error[0] = -1;
	err = 0;
cleanup:
	if (envp != environ)
		free(envp);
	close_fd(&gate[0]);
	close_fd(&gate[1]);
	close_fd(&error[0]);
	close_fd(&error[1]);
	return err;
}

/*
 * Open the gate and wait until the child has exec'd (or failed to).  Closes
 * both fds.  Returns 0 once the exec succeeded, the exec's -errno (the child
 * then exits 127 and must still be reaped by the caller), -ECHILD when the
 * child died before it could exec, or -errno from the pipes.
 */
int launcher__release(struct launcher *l)
{
	char go = 1;
	int child_errno = 0;
	ssize_t n;
	int err = 0;

	if (l->gate_fd < 0 || l->error_fd < 0)
		return -EBADF;
	do
		n = send(l->gate_fd, &go, 1, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != 1) {
		err = n < 0 && errno != EPIPE ? -errno : -ECHILD;
		goto cleanup;
	}
	close_fd(&l->gate_fd);
	do
		n = read(l->error_fd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		err = -errno;
	else if (n == sizeof(child_errno))
		err = child_errno > 0 ? -child_errno : -ENOEXEC;
	else if (n != 0)
		err = -EPROTO;
cleanup:
	close_fd(&l->gate_fd);
	close_fd(&l->error_fd);
	return err;
}

/*
 * MICROSCOPE_PROBES_RECORDER=PID:START for the recorded command: this
 * recorder's pid and start time (/proc/self/stat field 22, clock ticks
 * since boot), so the probes SDK in the command (and in children that
 * inherit it, while the same recorder runs) writes from its start-up;
 * ":SELECT" (record --probes) limits that to the sites it selects.
 */
int launcher__probes_env(char *buf, size_t size, const char *select)
{
	char stat[1024], *p;
	unsigned long long start;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	n = read(fd, stat, sizeof(stat) - 1);
	if (n < 0)
		err = -errno;
	close(fd);
	if (err)
		return err;
	stat[n] = 0;
	/* after the comm's closing parenthesis: field 3 onwards */
	p = strrchr(stat, ')');
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return -EINVAL;
	n = snprintf(buf, size, "%s=%d:%llu%s%s", MICROSCOPE_PROBES_RECORDER_ENV, (int)getpid(),
		     start, select ? ":" : "", select ? select : "");
	return n > 0 && (size_t)n < size ? 0 : -ENOSPC;
}
