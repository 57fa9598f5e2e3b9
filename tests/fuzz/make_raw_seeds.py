#!/usr/bin/env python3
"""Write each seed capture of tests/fuzz/capture_reader/ again with its
tables uncompressed (NAME-raw.msc), and as bare tables (NAME.tables, the
harness's table mode: 'T', u32 strings count, u32 length per table, the
bytes), so that the fuzzer mutates rows, not zstd frames.  Needs the zstd
command.  Run when seeds change:

    python3 tests/fuzz/make_raw_seeds.py tests/fuzz/capture_reader
"""
import glob
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bombs"))
import make_bombs as M  # noqa: E402


def main():
    d = sys.argv[1]
    for path in sorted(glob.glob(os.path.join(d, "*.msc"))):
        if path.endswith("-raw.msc"):
            continue
        with open(path, "rb") as f:
            data = f.read()
        chunks = M.read_chunks(data)
        for i, (h, payload) in enumerate(chunks):
            if h[2] == 1:  # zstd
                raw = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True,
                                     check=True).stdout
                h[2] = 0
                chunks[i] = (h, raw)
        out = path[:-4] + "-raw.msc"
        with open(out, "wb") as f:
            f.write(M.write_capture(data[:M.FILE_HEADER], chunks))
        print(out)
        order = M.TABLES + ["OFFC"]
        by_tag = {struct.pack("<I", h[0]).decode("latin-1"): (h, p) for h, p in chunks}
        lens, body, nstrings = [], b"", by_tag["STRS"][0][6]
        for t in order:
            payload = by_tag[t][1] if t in by_tag else b""
            lens.append(len(payload))
            body += payload
        out = path[:-4] + ".tables"
        with open(out, "wb") as f:
            f.write(b"T" + struct.pack("<I%dI" % len(lens), nstrings, *lens) + body)
        print(out)


if __name__ == "__main__":
    main()
