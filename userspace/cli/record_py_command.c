// SPDX-License-Identifier: MIT
/*
 * Will the recorded command run CPython (record_python.h)?  Asked before
 * the command runs, so that the sampler's CPython walk (a load of about a
 * quarter second on the 2-vCPU VM, little of it CPU) is in place when the
 * interpreter's first samples are taken, rather than loaded when the
 * tracker first meets the process, with every sample until then
 * "[python frames unknown]".
 *
 * A guess, never a proof: a wrong yes costs the load, a wrong no the first
 * samples' Python frames (the tracker still loads it on detection).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtimes/py_layout.h"
#include "cli_util.h"
#include "record_python.h"

/* Programs followed from the command: binfmt_script's own nesting bound
 * (fs/exec.c, search_binary_handler: more than 5 levels is -ELOOP). */
#define PY_COMMAND_DEPTH 5
/* Bytes of a shell script (or of a -c string) looked through. */
#define PY_SCRIPT_BYTES 8192

static bool follows(const char *file, char *const *args, int depth);

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* An interpreter: its _PyRuntime, or a libpython3 it needs (pyenv's builds). */
static bool is_cpython(const char *file)
{
	uint64_t runtime, first_load;
	uint32_t version;

	return !py_layout__read_elf(file, &version, &runtime, &first_load) ||
	       py_layout__links_libpython(file);
}

static bool is_shell(const char *file)
{
	static const char *const shells[] = { "sh", "bash", "dash", "ash", "ksh", "mksh", "zsh" };
	const char *b = base_name(file);

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (!strcmp(b, shells[i]))
			return true;
	return false;
}

/* A shell variable assignment word ("NAME=value"). */
static bool is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');

	if (!eq || eq == w || (*w >= '0' && *w <= '9'))
		return false;
	for (const char *c = w; c < eq; c++)
		if (!(*c == '_' || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9')))
			return false;
	return true;
}

/*
 * The program one shell command runs (text, len bytes: a line, or a part
 * between ; & |), into word: its first word after assignments and the
 * prefixes that run what follows (exec, env and its options, nohup,
 * command).  False for a word with expansions or quoting inside, or none.
 */
static bool command_program(const char *text, size_t len, char *word, size_t size)
{
	size_t i = 0;

	while (i < len) {
		size_t start, n;
		const char *w;

		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		if (i == len || text[i] == '#')
			return false;
		start = i;
		while (i < len && text[i] != ' ' && text[i] != '\t')
			i++;
		w = text + start;
		n = i - start;
		if (n >= 2 && (w[0] == '"' || w[0] == '\'') && w[n - 1] == w[0]) {
			w++; /* "/path/to/python3" */
			n -= 2;
		}
		if (!n || n >= size || memchr(w, '$', n) || memchr(w, '`', n) || memchr(w, '"', n) ||
		    memchr(w, '\'', n) || memchr(w, '(', n) || memchr(w, '{', n))
			return false;
		memcpy(word, w, n);
		word[n] = '\0';
		if (is_assignment(word) || !strcmp(word, "exec") || !strcmp(word, "env") ||
		    !strcmp(word, "nohup") || !strcmp(word, "command") ||
		    (word[0] == '-' && word[1]))
			continue;
		return true;
	}
	return false;
}

/* Any command of shell text (a script's bytes, a -c string; text[len] is
 * readable and 0) runs CPython. */
static bool text_runs_cpython(const char *text, size_t len, int depth)
{
	char word[PATH_MAX], file[PATH_MAX];
	size_t i = 0;

	while (i < len) {
		size_t n = strcspn(text + i, "\n;&|");

		if (n > len - i)
			n = len - i;
		if (command_program(text + i, n, word, sizeof(word)) &&
		    cli__command_file(word, file) && follows(file, NULL, depth + 1))
			return true;
		i += n + 1;
	}
	return false;
}

/* A script's "#!" line: its interpreter and optional argument (the rest of
 * the line, one argument, as binfmt_script passes it).  False otherwise. */
static bool script_interpreter(const char *file, char *interp, size_t isize, char *arg,
			       size_t asize)
{
	char line[256];
	size_t n, p = 2, q;
	FILE *f = fopen(file, "re");

	if (!f)
		return false;
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	if (n < 3 || line[0] != '#' || line[1] != '!')
		return false;
	line[strcspn(line, "\n")] = '\0';
	p += strspn(line + p, " \t");
	q = p + strcspn(line + p, " \t");
	if (q == p || q - p >= isize)
		return false;
	memcpy(interp, line + p, q - p);
	interp[q - p] = '\0';
	q += strspn(line + q, " \t");
	snprintf(arg, asize, "%s", line + q);
	return true;
}

/* A script's bytes (at most PY_SCRIPT_BYTES) run CPython. */
static bool script_runs_cpython(const char *file, int depth)
{
	char *text = malloc(PY_SCRIPT_BYTES + 1);
	bool yes = false;
	size_t n;
	FILE *f;

	if (!text)
		return false;
	f = fopen(file, "re");
	if (f) {
		n = fread(text, 1, PY_SCRIPT_BYTES, f);
		fclose(f);
		text[n] = '\0';
		yes = text_runs_cpython(text, n, depth);
	}
	free(text);
	return yes;
}

/*
 * file runs CPython: it is an interpreter; or a script whose "#!"
 * interpreter (/usr/bin/env NAME: NAME in PATH) is one, or a shell whose
 * commands start one; or a shell (args: its arguments, NULL for a script)
 * given "-c STRING" or a script file whose commands start one.
 */
static bool follows(const char *file, char *const *args, int depth)
{
	char interp[PATH_MAX], arg[256], word[PATH_MAX], next[PATH_MAX];

	if (depth > PY_COMMAND_DEPTH)
		return false;
	if (is_cpython(file))
		return true;
	if (script_interpreter(file, interp, sizeof(interp), arg, sizeof(arg))) {
		bool env = !strcmp(base_name(interp), "env");

		if (env ? !(command_program(arg, strlen(arg), word, sizeof(word)) &&
			    cli__command_file(word, next))
			: !realpath(interp, next))
			return false;
		if (follows(next, NULL, depth + 1))
			return true;
		return is_shell(next) && script_runs_cpython(file, depth);
	}
	if (!args || !is_shell(file))
		return false;
	for (; *args && (*args)[0] == '-' && (*args)[1] != '-'; args++)
		if (strchr(*args, 'c') && args[1]) /* -c, -ec, -xc ... STRING */
			return text_runs_cpython(args[1], strlen(args[1]), depth);
	if (*args && !strcmp(*args, "--"))
		args++;
	return *args && (*args)[0] != '-' && script_runs_cpython(*args, depth); /* sh FILE */
}

bool record_python__command(char *const *argv)
{
	char file[PATH_MAX];

	return argv && argv[0] && cli__command_file(argv[0], file) && follows(file, argv + 1, 0);
}
