#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Layering check (make check): every #include "..." in our C sources must
point down the layers ARCHITECTURE.md declares, never sideways or up.

LAYERS below is that declaration, folder by folder: what each folder may
include besides itself.  A folder that holds C sources but is not declared
fails the check, so a new folder gets its row here (and in ARCHITECTURE.md).
Includes that resolve to no file of the tree (generated headers: vmlinux.h,
skel/*.skel.h, the protobuf-c output) are not ours to check.

Usage: tests/tools/layering.py [ROOT]   (exit 1 and one line per violation)
"""
import os
import re
import sys

# folder -> folders it may include (its own folder is always allowed)
LAYERS = {
    "bpf": ["bpf/abi"],
    "bpf/abi": [],
    "capture": [],
    "capture/formats": ["capture"],
    "analysis": ["capture"],
    # userspace: the stream is the collector->processor contract, included
    # by both and including neither (ARCHITECTURE.md, "Data flow")
    "userspace/stream": ["bpf/abi", "capture"],
    "userspace/options": ["bpf/abi"],
    # collector/probes.c reads the probes SDK's control block and ring, whose
    # one definition is the SDK's public header (like bpf/abi for BPF)
    "userspace/collector": ["userspace/stream", "userspace/options", "bpf/abi", "capture",
                            "sdk/c", "userspace/elfscan"],
    # libelf questions asked of whole files (elfscan.h), below both users
    "userspace/elfscan": [],
    "userspace/runtimes": ["bpf/abi", "userspace/elfscan"],
    # cgroup v2 and container names from /proc and /sys (docs/host.md)
    "userspace/cgroups": [],
    "userspace/symbols": ["capture"],
    "userspace/unwind": ["capture"],
    "userspace/processor": ["userspace/stream", "userspace/unwind", "userspace/symbols",
                            "userspace/runtimes", "userspace/cgroups", "bpf/abi", "capture"],
    "userspace/budget": ["userspace/stream"],
    "userspace/deferred": ["userspace/symbols", "capture"],
    # microscope serve: HTTP and the typed query API over analysis (issue 20)
    "userspace/serve": ["analysis", "capture"],
    "userspace/cli": ["userspace/collector", "userspace/processor", "userspace/stream",
                      "userspace/budget", "userspace/deferred", "userspace/runtimes",
                      "userspace/symbols", "userspace/unwind", "userspace/options",
                      "userspace/serve", "userspace/cgroups", "bpf/abi", "capture", "capture/formats", "analysis"],
}
CHECKED_ROOTS = ("bpf", "capture", "analysis", "userspace")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def resolve(root, src_dir, name):
    """The repository-relative path an include names, or None if not ours."""
    for base in (src_dir, root):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path):
            return os.path.relpath(path, root)
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    bad = []
    for top in CHECKED_ROOTS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                src = os.path.join(dirpath, f)
                folder = os.path.relpath(dirpath, root)
                rel = os.path.relpath(src, root)
                if folder not in LAYERS:
                    bad.append(f"{rel}: folder {folder}/ is not declared in "
                               "tests/tools/layering.py (ARCHITECTURE.md's layers)")
                    continue
                with open(src, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                for m in INCLUDE.finditer(text):
                    target = resolve(root, dirpath, m.group(1))
                    if target is None:
                        continue
                    tfolder = os.path.dirname(target)
                    if tfolder == folder or tfolder in LAYERS[folder]:
                        continue
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{rel}:{line}: includes {target}: {folder}/ may include "
                               f"only {', '.join(LAYERS[folder]) or 'itself'}")
    for b in bad:
        print("layering:", b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
