// SPDX-License-Identifier: MIT
/*
 * Reading a source file for the source view, under the policy stated in
 * source_file.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "query.h"
#include "source_file.h"

/* Source file name extensions shown (case matters: .S is preprocessed assembly, .C C++). */
#define SERVE_SOURCE_EXTENSIONS                                                                  \
	"c", "h", "cc", "cpp", "cxx", "c++", "C", "hh", "hpp", "hxx", "h++", "H", "inl", "inc",   \
		"ipp", "tcc", "tpp", "def", "S", "s", "asm", "py", "pyx", "pxd", "pxi", "pyi",    \
		"rs", "go", "js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx", "java", "kt",   \
		"scala", "swift", "m", "mm", "rb", "pl", "pm", "php", "lua", "zig", "d", "f",     \
		"f90", "f95", "cs", "y", "l", "cu", "cuh", "hs", "ml", "ex", "erl", "dart", "jl", \
		"nim", "v", "cob"

static const char *const source_extensions[] = { SERVE_SOURCE_EXTENSIONS };

/* Is the last component of path named like a source file? */
static bool source_name(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t i;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	if (!dot || dot == base)
		return false;
	for (i = 0; i < sizeof(source_extensions) / sizeof(source_extensions[0]); i++)
		if (!strcmp(dot + 1, source_extensions[i]))
			return true;
	return false;
}

/* Does path have a ".." component? */
static bool has_dotdot(const char *path)
{
	const char *p = path;

	for (;;) {
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))
			return true;
		p = strchr(p, '/');
		if (!p)
			return false;
		p++;
	}
}

/* Is real (an absolute real path) below the directory dir names? */
static bool below(const char *dir, const char *real)
{
	char *rd = dir ? realpath(dir, NULL) : NULL;
	size_t n;
	bool in;

	if (!rd)
		return false;
	n = strlen(rd);
	in = n == 1 ? real[0] == '/' : !strncmp(real, rd, n) && real[n] == '/';
	free(rd);
	return in;
}

/* Can every user reach real (an absolute real path): each directory above it o+x? */
static bool reachable_by_all(const char *real)
{
	char dir[PATH_MAX];
	struct stat st;
	size_t i, n = strlen(real);

	if (n >= sizeof(dir))
		return false;
	for (i = 1; i < n; i++) {
		if (real[i] != '/')
			continue;
		memcpy(dir, real, i);
		dir[i] = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode) || !(st.st_mode & S_IXOTH))
			return false;
	}
	return !stat("/", &st) && (st.st_mode & S_IXOTH);
}

/* Where fd really is (readlink of /proc/self/fd/N) into real. */
static int fd_path(int fd, char *real, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, real, size - 1);
	if (n <= 0 || (size_t)n >= size - 1 || real[0] != '/')
		return -ENOENT;
	real[n] = '\0';
	return 0;
}

int serve_source__read(const char *dir, const char *path, char **buf, size_t *len,
		       const char **why)
{
	char full[PATH_MAX], real[PATH_MAX];
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	*buf = NULL;
	if (path[0] != '/') {
		if (!dir) {
			*why = "source not served: a relative path (the build's directory is not "
			       "recorded): serve --source-dir DIR reads it below DIR";
			return -ENOENT;
		}
		if (has_dotdot(path) ||
		    (size_t)snprintf(full, sizeof(full), "%s/%s", dir, path) >= sizeof(full)) {
			*why = "source not served: a relative path that leaves --source-dir";
			return -EINVAL;
		}
		path = full;
	}
	/* Where not every user can look, not even whether the file exists is
	 * told: the answer is the one a file there that exists gets. */
	if (!below(dir, path) && !reachable_by_all(path)) {
		*why = "source not served: not readable by every user of this host (serve "
		       "--source-dir DIR shows the files below DIR)";
		return -EACCES;
	}
	/* Not even opened unless a regular file (opening a device can act). */
	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		*why = "source not served: no regular file there on this host";
		return -ENOENT;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*why = "source not served: cannot be read on this host";
		return -errno;
	}
	err = -EACCES;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*why = "source not served: not a regular file on this host";
		goto cleanup;
	}
	if (fd_path(fd, real, sizeof(real))) {
		*why = "source not served: its place on this host cannot be told";
		goto cleanup;
	}
	if (!source_name(real)) {
		*why = "source not served: not named like a source file (.c, .h, .cpp, .py, .rs, "
		       ".go, ...)";
		goto cleanup;
	}
	if (!below(dir, real) && (!(st.st_mode & S_IROTH) || !reachable_by_all(real))) {
		*why = "source not served: not readable by every user of this host (serve "
		       "--source-dir DIR shows the files below DIR)";
		goto cleanup;
	}
	if (st.st_size > SERVE_MAX_SOURCE_BYTES) {
		*why = "source not served: larger than the source view shows";
		err = -EFBIG;
		goto cleanup;
	}
	err = -ENOMEM;
	*buf = malloc((size_t)st.st_size + 1);
	if (!*buf)
		goto cleanup;
	while (got < (size_t)st.st_size) {
		n = read(fd, *buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	err = 0;
	if (memchr(*buf, '\0', got)) {
		*why = "source not served: not text";
		err = -EINVAL;
		goto cleanup;
	}
	(*buf)[got] = '\0';
	*len = got;
cleanup:
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	close(fd);
	return err;
}
