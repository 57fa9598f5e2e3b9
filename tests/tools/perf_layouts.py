#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Perf record layout lint (make check): the layouts of the perf side-band
records (MMAP2, COMM, FORK/EXIT, LOST) and of their sample_id trailer are
defined, built and parsed in userspace/stream/perf_records.[ch] only; the
collector (which drains and synthesizes them) uses those helpers too.  Any
other C file that defines such a layout or reads a record at a fixed byte
offset fails here: use the perf_rec__* / perf_sample_id__* helpers.

Usage: tests/tools/perf_layouts.py [ROOT]   (exit 1 and one line per hit)
"""
import os
import re
import sys

ALLOWED = ("userspace/stream/", "userspace/collector/")
SKIP_DIRS = {"build", ".git", "node_modules"}
PATTERNS = [
    # the old hard-coded trailer: 24 bytes, time at len - 16
    (re.compile(r"\bSAMPLE_ID_LEN\b"), "a hard-coded sample_id trailer length"),
    (re.compile(r"\blen\s*-\s*16\b"), "the trailer's time read at a fixed offset (len - 16)"),
    # fixed-offset reads of MMAP2's filename / a record's body
    (re.compile(r"\b(rec|buf|p|payload)\s*\+\s*72\b"), "MMAP2's filename at a fixed offset (72)"),
    (re.compile(r"\b(rec|buf)\s*\+\s*(8|12|16|24|32|40|48|64)\s*[,)]"),
     "a perf record field read or written at a fixed byte offset"),
    # private definitions of the layouts
    (re.compile(r"struct\s+(sample_id|perf_mmap2_fixed|perf_task_body|rec_mmap2|rec_comm|"
                r"rec_fork|rec_lost)\s*\{"), "a private perf record layout"),
    (re.compile(r"struct\s+perf_event_header\s*\*\s*\w+\s*=\s*\(?"),
     "a record read through a cast perf_event_header pointer"),
]


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    bad = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/") + "/"
        if rel_dir.startswith(ALLOWED):
            continue
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if "perf_event" not in text and "PERF_RECORD" not in text:
                continue  # only files that deal with perf records at all
            for pat, why in PATTERNS:
                for m in pat.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append(f"{os.path.relpath(path, root)}:{line}: {why}: "
                               f"'{m.group(0)}' (use userspace/stream/perf_records.h)")
    for b in bad:
        print("perf-layouts:", b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
