// SPDX-License-Identifier: MIT
/* Option helpers shared by the subcommands (cli_util.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "../options/record_options.h"

int cli__parse_time_ns(const char *s, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = { { "", 1e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 } };
	char *end;
	double v;
	size_t i;

	/* decimal only, as every option's number (record_options.h) */
	if (record_options__parse_decimal(s, &v, &end))
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].scale;
		if (v >= 1.8e19)
			return -EINVAL;
		*ns = (uint64_t)(v + 0.5);
		return 0;
	}
	return -EINVAL;
}

/* Levenshtein distance, capped: strings here are option and command names. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 64;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);

			cur[j] = del < ins ? del : ins;
			if (sub < cur[j])
				cur[j] = sub;
		}
		memcpy(prev, cur, (lb + 1) * sizeof(*prev));
	}
	return prev[lb];
}

const char *cli__closest(const char *word, const char *const *candidates, size_t n)
{
	const char *best = NULL, *prefixed = NULL;
	size_t best_d = SIZE_MAX, nprefixed = 0, i, lw = strlen(word);

	for (i = 0; i < n; i++) {
		size_t d = edit_distance(word, candidates[i]);

		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
		if (lw && !strncmp(candidates[i], word, lw)) {
			prefixed = candidates[i];
			nprefixed++;
		}
	}
	if (best && best_d <= 2 && best_d * 2 < lw)
		return best;
	return nprefixed == 1 ? prefixed : NULL;
}

void cli__option_hint(const char *arg, const struct option *longopts, char *buf, size_t size)
{
	const char *names[64];
	char word[64];
	const char *hit;
	size_t n = 0, len;

	if (size)
		buf[0] = '\0';
	if (strncmp(arg, "--", 2))
		return;
	arg += 2;
	len = strcspn(arg, "=");
	if (len >= sizeof(word))
		return;
	memcpy(word, arg, len);
	word[len] = '\0';
	for (; longopts[n].name && n < 64; n++)
		names[n] = longopts[n].name;
	hit = cli__closest(word, names, n);
	if (hit)
		snprintf(buf, size, " (did you mean '--%s'?)", hit);
}

int cli__keep_previous(const char *path)
{
	char old[4096];
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISREG(st.st_mode))
		return 0; /* a device, FIFO or symlink is not a previous capture */
	if ((size_t)snprintf(old, sizeof(old), "%s.old", path) >= sizeof(old))
		return -ENAMETOOLONG;
	if (unlink(old) && errno != ENOENT)
		return -errno;
	/* A hard link keeps the old bytes under FILE.old while the new capture
	 * is renamed over FILE; where links are refused, move it instead. */
	if (!link(path, old))
		return 0;
	return rename(path, old) ? -errno : 0;
}

bool cli__command_file(const char *argv0, char *out)
{
	const char *path = getenv("PATH"), *dir, *end;
	char cand[PATH_MAX];

	if (strchr(argv0, '/'))
		return realpath(argv0, out) != NULL;
	if (!path || !*path)
		path = "/bin:/usr/bin";
	for (dir = path; dir; dir = *end ? end + 1 : NULL) {
		int n;

		end = strchrnul(dir, ':');
		n = snprintf(cand, sizeof(cand), "%.*s/%s", (int)(end - dir), end > dir ? dir : ".",
			     argv0);
		if (n > 0 && (size_t)n < sizeof(cand) && !access(cand, X_OK) &&
		    realpath(cand, out))
			return true;
	}
	return false;
}

bool cli__cache_dir(const char *name, char *out, size_t size)
{
	const char *env = getenv(name), *base;
	int n;

	static const char *const off[] = {"0", "off", "no", "none", "false", "disable", "disabled"};

	for (size_t i = 0; env && i < sizeof(off) / sizeof(off[0]); i++)
		if (!strcasecmp(env, off[i]))
			return false;
	if (env && *env && *env != '/') {
		/* OFF or a typo was a relative directory made in the cwd */
		fprintf(stderr,
			"microscope: %s=%s is neither off (0, off, no, none, false) nor an absolute "
			"directory: that cache is not used\n",
			name, env);
		return false;
	}
	if (env && *env)
		n = snprintf(out, size, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(out, size, "/var/cache/microscope");
	else if ((base = getenv("XDG_CACHE_HOME")) && *base == '/')
		n = snprintf(out, size, "%s/microscope", base);
	else if ((base = getenv("HOME")) && *base == '/')
		n = snprintf(out, size, "%s/.cache/microscope", base);
	else
		return false;
	return n > 0 && (size_t)n < size;
}
