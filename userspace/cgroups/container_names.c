// SPDX-License-Identifier: MIT
/*
 * Container ids from cgroup directory names (cgroups.h:
 * cgroup_path__container).  The names are those the runtimes create:
 *   docker: moby daemon/cgroups (systemd driver "docker-<id>.scope",
 *     cgroupfs driver "/docker/<id>");
 *   containerd CRI: "cri-containerd-<id>.scope", or "<id>" under a
 *     kubepods cgroup (cgroupfs driver);
 *   cri-o: "crio-<id>.scope" ("crio-conmon-<id>.scope" is its monitor);
 *   podman: "libpod-<id>.scope" ("libpod-conmon-<id>.scope" is conmon),
 *     "libpod_parent/libpod-<id>" with cgroupfs;
 *   systemd-nspawn and other machined guests: "machine-<name>.scope" with
 *     the name escaped as systemd unit names are (systemd.unit(5): "-" is
 *     "\x2d");
 *   lxc 4+: "lxc.payload.<name>".
 */
#include <stdio.h>
#include <string.h>

#include "cgroups.h"

#define HEX_ID_MIN 12
#define HEX_ID_MAX 64

/* n bytes at s are an id: 12..64 lowercase hex digits. */
static bool is_hex_id(const char *s, size_t n)
{
	if (n < HEX_ID_MIN || n > HEX_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool has_prefix(const char *s, size_t n, const char *prefix)
{
	size_t p = strlen(prefix);

	return n >= p && !memcmp(s, prefix, p);
}

static bool has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t x = strlen(suffix);

	return n >= x && !memcmp(s + n - x, suffix, x);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Copy n bytes of a systemd-escaped name into out, undoing "\xNN".  False
 * when it does not fit or is empty. */
static bool unescape(const char *s, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '\\' && i + 3 < n && s[i + 1] == 'x' && hexval(s[i + 2]) >= 0 &&
		    hexval(s[i + 3]) >= 0) {
			c = (char)(hexval(s[i + 2]) << 4 | hexval(s[i + 3]));
			i += 3;
		}
		if (!c || o + 1 >= outlen)
			return false;
		out[o++] = c;
	}
	out[o] = '\0';
	return o > 0;
}

/* The id or name in directory name s[0, n) with its parent's name
 * parent[0, pn) (pn 0 at the root) and whether an ancestor is a kubepods
 * cgroup; fills out->runtime and out->id. */
static bool name__container(const char *s, size_t n, const char *parent, size_t pn, bool kube,
			    struct cgroup_container *out)
{
	static const struct {
		const char *prefix, *runtime;
	} scopes[] = {
		{ "docker-", CGROUP_RUNTIME_DOCKER },
		{ "cri-containerd-", CGROUP_RUNTIME_CONTAINERD },
		{ "crio-", CGROUP_RUNTIME_CRIO },
		{ "libpod-", CGROUP_RUNTIME_PODMAN },
	};
	const char *id = NULL, *runtime = NULL;
	size_t idn = 0;

	if (has_suffix(s, n, ".scope")) {
		size_t body = n - strlen(".scope");

		for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
			size_t p = strlen(scopes[i].prefix);

			if (has_prefix(s, body, scopes[i].prefix) && is_hex_id(s + p, body - p)) {
				id = s + p;
				idn = body - p;
				runtime = scopes[i].runtime;
				break;
			}
		}
		if (!id && has_prefix(s, body, "machine-")) {
			if (!unescape(s + 8, body - 8, out->id, sizeof(out->id)))
				return false;
			out->runtime = CGROUP_RUNTIME_NSPAWN;
			return true;
		}
	} else if (pn == 6 && !memcmp(parent, "docker", 6) && is_hex_id(s, n)) {
		id = s, idn = n, runtime = CGROUP_RUNTIME_DOCKER;
	} else if (pn == 13 && !memcmp(parent, "libpod_parent", 13) && has_prefix(s, n, "libpod-") &&
		   is_hex_id(s + 7, n - 7)) {
		id = s + 7, idn = n - 7, runtime = CGROUP_RUNTIME_PODMAN;
	} else if (kube && is_hex_id(s, n)) {
		id = s, idn = n, runtime = CGROUP_RUNTIME_CONTAINERD;
	} else if (has_prefix(s, n, "lxc.payload.") && n > 12) {
		if (!unescape(s + 12, n - 12, out->id, sizeof(out->id)))
			return false;
		out->runtime = CGROUP_RUNTIME_LXC;
		return true;
	}
	if (!id || idn >= sizeof(out->id))
		return false;
	memcpy(out->id, id, idn);
	out->id[idn] = '\0';
	out->runtime = runtime;
	return true;
}

bool cgroup_path__container(const char *path, struct cgroup_container *out)
{
	const char *s = path, *parent = "";
	size_t pn = 0;
	bool kube = false, found = false;
	struct cgroup_container c;

	memset(out, 0, sizeof(*out));
	while (*s) {
		const char *e;
		size_t n;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		e = strchr(s, '/');
		n = e ? (size_t)(e - s) : strlen(s);
		memset(&c, 0, sizeof(c));
		if (name__container(s, n, parent, pn, kube, &c)) {
			c.path_len = (size_t)(s - path) + n;
			*out = c; /* innermost wins: keep going */
			found = true;
		}
		if (has_prefix(s, n, "kubepods"))
			kube = true;
		parent = s;
		pn = n;
		s += n;
	}
	return found;
}
