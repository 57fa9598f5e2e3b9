// SPDX-License-Identifier: MIT
/* Publishing outputs and reading inputs with a bound (file_io.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file_io.h"

int file__stream_error(void)
{
	return errno > 0 ? -errno : -EIO;
}

int file__write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int file__fsync_parent(const char *path)
{
	char *copy = strdup(path);
	int fd = -1, err;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	/* Some file systems cannot fsync a directory; the rename still happened. */
	err = fsync(fd) && errno != EINVAL ? -errno : 0;

cleanup:
	if (fd >= 0)
		close(fd);
	free(copy);
	return err;
}

/* ---- temporaries removed on fatal signals -------------------------------- */

#define FILE_OUT_SLOTS 8
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
#define NSIGNALS (sizeof(cleanup_signals) / sizeof(cleanup_signals[0]))

/* Temporaries that exist now; read by the handler (async-signal-safe). */
static char *volatile cleanup_tmp[FILE_OUT_SLOTS];
static int handlers_installed;

static void file_out__on_signal(int sig)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	int saved = errno;
	size_t i;

	for (i = 0; i < FILE_OUT_SLOTS; i++) {
		char *t = cleanup_tmp[i];

		if (t)
			unlink(t);
	}
	/* die of the signal, as without us (it is delivered when we return) */
	sigaction(sig, &dfl, NULL);
	raise(sig);
	errno = saved;
}

static void install_handlers(void)
{
	size_t i;

	if (handlers_installed)
		return;
	handlers_installed = 1;
	for (i = 0; i < NSIGNALS; i++) {
		struct sigaction old, sa = {.sa_handler = file_out__on_signal};

		/* a command with its own handler (record) or an ignored signal keeps it */
		if (sigaction(cleanup_signals[i], NULL, &old) || old.sa_handler != SIG_DFL ||
		    (old.sa_flags & SA_SIGINFO))
			continue;
		sigemptyset(&sa.sa_mask);
		sigaction(cleanup_signals[i], &sa, NULL);
	}
}

static void block_signals(sigset_t *old)
{
	sigset_t set;
	size_t i;

	sigemptyset(&set);
	for (i = 0; i < NSIGNALS; i++)
		sigaddset(&set, cleanup_signals[i]);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* Forget o's temporary (it was renamed or removed). */
static void unregister_tmp(struct file_out *o)
{
	if (o->slot >= 0)
		cleanup_tmp[o->slot] = NULL;
	o->slot = -1;
}

/* ---- publication ---------------------------------------------------------- */

__attribute__((format(printf, 4, 5))) static int out_fail(char *msg, size_t msglen, int err,
							  const char *fmt, ...)
{
	va_list ap;

	if (msg && msglen) {
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}

int file_out__open(struct file_out *o, const char *path, char *msg, size_t msglen)
{
	struct stat st;
	sigset_t old;
	int err, fd, i;

	*o = (struct file_out){.fd = -1, .slot = -1};
	if (msg && msglen)
		msg[0] = '\0';
	if (!path || !*path)
		return out_fail(msg, msglen, -EINVAL, "empty output path");
	if (!lstat(path, &st)) {
		struct stat target;

		/* a link to a device, FIFO or socket (-o /dev/stdout) is written through */
		if (S_ISLNK(st.st_mode) && !stat(path, &target) &&
		    (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode) ||
		     S_ISSOCK(target.st_mode))) {
			fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
			if (fd < 0)
				return out_fail(msg, msglen, -errno, "%s: open: %s", path,
						strerror(errno));
			if (!fstat(fd, &target) && !S_ISREG(target.st_mode) &&
			    !S_ISDIR(target.st_mode)) {
				o->fd = fd;
				o->path = strdup(path);
				if (!o->path) {
					file_out__abort(o);
					return out_fail(msg, msglen, -ENOMEM, "out of memory");
				}
				return 0;
			}
			close(fd); /* swapped for a file meanwhile: refused below */
		}
		if (S_ISLNK(st.st_mode))
			return out_fail(msg, msglen, -ELOOP,
					"%s: is a symbolic link; refusing to write through it "
					"(remove it or name its target)",
					path);
		if (S_ISDIR(st.st_mode))
			return out_fail(msg, msglen, -EISDIR, "%s: is a directory", path);
		if (!S_ISREG(st.st_mode)) {
			/* -o /dev/null, a FIFO: written through, never replaced */
			fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
			if (fd < 0)
				return out_fail(msg, msglen, -errno, "%s: open: %s", path,
						strerror(errno));
			if (!fstat(fd, &st) && !S_ISREG(st.st_mode)) {
				o->fd = fd;
				o->path = strdup(path);
				if (!o->path) {
					file_out__abort(o);
					return out_fail(msg, msglen, -ENOMEM, "out of memory");
				}
				return 0;
			}
			close(fd); /* became a regular file meanwhile: publish as one */
		}
	}
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		o->tmp = NULL;
		file_out__abort(o);
		return out_fail(msg, msglen, -ENOMEM, "out of memory");
	}
	install_handlers();
	/* no signal between creating the temporary and registering it */
	block_signals(&old);
	for (i = 0; i < FILE_OUT_SLOTS && cleanup_tmp[i]; i++)
		;
	fd = mkostemp(o->tmp, O_CLOEXEC); /* O_EXCL, mode 0600 */
	err = fd < 0 ? -errno : 0;
	if (fd >= 0 && i < FILE_OUT_SLOTS) {
		cleanup_tmp[i] = o->tmp;
		o->slot = i;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (err) {
		char *copy = strdup(path);
		const char *dir = copy ? dirname(copy) : ".";

		if (err == -ENOENT && access(dir, F_OK))
			out_fail(msg, msglen, err, "%s: directory %s does not exist", path, dir);
		else
			out_fail(msg, msglen, err, "%s: cannot create a file in %s: %s", path, dir,
				 strerror(-err));
		free(copy);
		free(o->tmp);
		o->tmp = NULL;
		file_out__abort(o);
		return err;
	}
	o->fd = fd;
	return 0;
}

int file_out__commit(struct file_out *o, char *msg, size_t msglen)
{
	const char *step = "fsync";
	int err = 0;

	if (!o->tmp) {
		step = "close";
		err = close(o->fd) ? -errno : 0;
		o->fd = -1;
		goto cleanup;
	}
	if (fsync(o->fd)) {
		err = -errno;
		goto cleanup;
	}
	step = "close";
	err = close(o->fd) ? -errno : 0;
	o->fd = -1;
	if (err)
		goto cleanup;
	step = "rename";
	if (rename(o->tmp, o->path)) {
		err = -errno;
		goto cleanup;
	}
	unregister_tmp(o);
	free(o->tmp);
	o->tmp = NULL; /* published: nothing to remove any more */
	step = "fsync the directory of";
	err = file__fsync_parent(o->path);

cleanup:
	if (err)
		out_fail(msg, msglen, err, "%s: %s %s: %s", o->path, step,
			 o->tmp ? o->tmp : o->path, strerror(-err));
	file_out__abort(o);
	return err;
}

FILE *file_out__stream(struct file_out *o)
{
	int fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

void file_out__abort(struct file_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->tmp)
		unlink(o->tmp);
	unregister_tmp(o);
	free(o->tmp);
	o->tmp = NULL;
	free(o->path);
	o->path = NULL;
}

/* ---- bounded input --------------------------------------------------------- */

int file__read_bounded(const char *path, uint64_t max, const void *pre, size_t npre, void **out,
		       size_t *len, char *msg, size_t msglen)
{
	const int is_stdin = !strcmp(path, "-");
	size_t cap, n = 0;
	struct stat st;
	char *buf = NULL, *nb;
	int fd, err = 0;

	*out = NULL;
	*len = 0;
	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return out_fail(msg, msglen, -errno, "%s: open: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		err = out_fail(msg, msglen, -errno, "%s: stat: %s", path, strerror(errno));
		goto cleanup;
	}
	if (S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > max) {
			err = out_fail(msg, msglen, -EFBIG,
				       "%s: %llu bytes exceed the memory limit of %llu bytes "
				       "(--max-memory)",
				       path, (unsigned long long)st.st_size,
				       (unsigned long long)max);
			goto cleanup;
		}
		cap = (size_t)st.st_size + 1;
	} else if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		cap = npre + (1 << 16);
	} else {
		err = out_fail(msg, msglen, -EINVAL,
			       "%s: not a regular file, pipe or socket (refusing to read a %s)",
			       path, S_ISDIR(st.st_mode) ? "directory" :
			       S_ISCHR(st.st_mode) ? "character device" :
			       S_ISBLK(st.st_mode) ? "block device" : "special file");
		goto cleanup;
	}
	if (!is_stdin) /* opened non-blocking for a FIFO's sake; read blocking */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (npre > max) {
		err = out_fail(msg, msglen, -EFBIG, "%s: input exceeds the memory limit of %llu "
			       "bytes (--max-memory)", path, (unsigned long long)max);
		goto cleanup;
	}
	if (npre) {
		buf = malloc(cap);
		if (!buf) {
			err = out_fail(msg, msglen, -ENOMEM, "%s: out of memory", path);
			goto cleanup;
		}
		memcpy(buf, pre, npre);
		n = npre;
	}
	for (;;) {
		ssize_t r;

		if (!buf || n + 1 >= cap) {
			if (buf)
				cap = cap > max / 2 ? (size_t)max + 2 : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				err = out_fail(msg, msglen, -ENOMEM, "%s: out of memory", path);
				goto cleanup;
			}
			buf = nb;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = out_fail(msg, msglen, -errno, "%s: read: %s", path, strerror(errno));
			goto cleanup;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			err = out_fail(msg, msglen, -EFBIG,
				       "%s: input exceeds the memory limit of %llu bytes "
				       "(--max-memory)",
				       path, (unsigned long long)max);
			goto cleanup;
		}
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	buf = NULL;
cleanup:
	if (!is_stdin)
		close(fd);
	free(buf);
	return err;
}

int file__read_head(const char *path, void *head, size_t n, size_t *got)
{
	struct stat st;
	ssize_t r;
	int fd, err = 0;

	*got = 0;
	if (!strcmp(path, "-")) {
		while (*got < n) {
			r = read(STDIN_FILENO, (char *)head + *got, n - *got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				return -errno;
			if (!r)
				break;
			*got += (size_t)r;
		}
		return 1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ESPIPE;
		goto cleanup;
	}
	do
		r = pread(fd, head, n, 0);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		err = -errno;
	else
		*got = (size_t)r;
cleanup:
	close(fd);
	return err;
}
