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
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collector.h"

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

static void __attribute__((noreturn)) child__run(int gate_fd, int error_fd, char **argv)
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
	execvp(argv[0], argv);
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
	int gate[2] = {-1, -1}, error[2] = {-1, -1};
	pid_t pid;
	int err;

	l->pid = -1;
	l->gate_fd = -1;
	l->error_fd = -1;
	if (!argv || !argv[0])
		return -EINVAL;
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
		child__run(gate[0], error[1], argv);
	}
	l->pid = pid;
	l->gate_fd = gate[1];
	l->error_fd = error[0];
	gate[1] = -1;
	error[0] = -1;
	err = 0;
cleanup:
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
