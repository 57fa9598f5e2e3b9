#!/usr/bin/env python3
"""Build the hostile-input corpus (issue 14) into a directory.

    python3 tests/bombs/make_bombs.py BASE.msc OUT_DIR

BASE.msc is any small valid capture (the e2e test converts a folded file).
Every bomb is a few KB to ~600 KB on disk and claims or expands to 256 MiB -
16 GiB; docs/capture-format.md ("Limits") says which limit stops each.
Standard library only.  Written at test time rather than committed, so the
repository holds the recipe, not 2 MB of binary.

Prints one line per file: NAME KIND (what microscope must do with it).
"""
import gzip
import os
import struct
import sys
import zlib

CHUNK = struct.Struct("<IHBBIIQQQ")  # tag flags compression reserved row_size crc rows raw stored
FILE_HEADER = 24


def tag(s):
    return struct.unpack("<I", s.encode())[0]


def read_chunks(data):
    """[(header fields list, payload)] of a one-segment capture, seal included."""
    pos, out = FILE_HEADER, []
    while pos < len(data):
        h = list(CHUNK.unpack_from(data, pos))
        payload = data[pos + CHUNK.size:pos + CHUNK.size + h[8]]
        out.append((h, payload))
        pos += CHUNK.size + h[8]
    return out


def write_capture(header, chunks):
    """Reassemble: crcs of payloads, the seal's count, headers crc and size."""
    body, hcrc = b"", 0
    for h, payload in chunks[:-1]:
        h = list(h)
        h[5] = zlib.crc32(payload)
        h[8] = len(payload)
        raw = CHUNK.pack(*h)
        hcrc = zlib.crc32(raw, hcrc)
        body += raw + payload
    seal_h, _ = chunks[-1]
    seal = struct.pack("<IIQ", len(chunks) - 1, hcrc, len(body) + CHUNK.size + 16)
    seal_h = list(seal_h)
    seal_h[5] = zlib.crc32(seal)
    return header + body + CHUNK.pack(*seal_h) + seal


def zstd_rle_frame(content_size, raw_blocks=0):
    """A valid zstd frame (RFC 8878) of content_size zero bytes: RLE blocks of
    128 KiB, 4 bytes each (the 32768x ratio bombs use), after raw_blocks raw
    blocks of 128 KiB (to bring the ratio down to a chosen value)."""
    out = bytearray(struct.pack("<I", 0xFD2FB528))
    out.append(0xE0)  # 8-byte content size, single segment
    out += struct.pack("<Q", content_size)
    left, block = content_size, 128 << 10
    while left:
        n = min(left, block)
        last = 1 if n == left else 0
        if raw_blocks:
            out += (last | 0 << 1 | n << 3).to_bytes(3, "little") + bytes(n)
            raw_blocks -= 1
        else:
            out += (last | 1 << 1 | n << 3).to_bytes(3, "little") + b"\0"
        left -= n
    return bytes(out)


def capture_bomb(base, table_tag, row_size, raw_size, frame):
    chunks = read_chunks(base)
    for h, payload in chunks:
        if h[0] == tag(table_tag):
            h[1], h[2], h[6], h[7] = 0, 1, raw_size // row_size, raw_size
            chunks[chunks.index((h, payload))] = (h, frame)
            break
    return write_capture(base[:FILE_HEADER], chunks)


TABLES = ["STRS", "MODS", "PROC", "THRD", "MAPS", "FRMS", "STKS", "EVTS", "SMPL", "CNTR", "META"]
ROW_SIZE = {"STRS": 4, "MODS": 32, "PROC": 48, "THRD": 16, "MAPS": 40, "FRMS": 32, "STKS": 8,
            "EVTS": 16, "SMPL": 32, "CNTR": 16, "META": 8}


def capture_from_rows(strings, rows):
    """A capture with uncompressed tables: strings (list of bytes, [0] == b"")
    and rows {tag: [packed row bytes]}."""
    data = b"".join(x + b"\0" for x in strings)
    offs, o = [], 0
    for x in strings:
        offs.append(o)
        o += len(x) + 1
    offs.append(o)
    payloads = {"STRS": struct.pack("<%dI" % len(offs), *offs) + data}
    counts = {"STRS": len(strings)}
    for t in TABLES[1:]:
        payloads[t] = b"".join(rows.get(t, []))
        counts[t] = len(rows.get(t, []))
    header = b"\x89MSC\r\n\x1a\n" + struct.pack("<HHII", 1, 1, 0, 0)
    header += struct.pack("<I", zlib.crc32(header))
    segm = struct.pack("<QQ", 0, 0)
    chunks = [([tag("SEGM"), 0, 0, 0, 16, 0, 1, 16, 16], segm)]
    for t in TABLES:
        chunks.append(([tag(t), 0, 0, 0, ROW_SIZE[t], 0, counts[t], len(payloads[t]), 0],
                       payloads[t]))
    chunks.append(([tag("SEAL"), 0, 0, 0, 16, 0, 1, 16, 16], b""))
    return write_capture(header, chunks)


def chrome_alternating(depth=10000, samples=2000):
    """Two `depth`-deep stacks that differ at the root, sampled alternately:
    every sample reopens a whole stack in B/E slices (issue 14 item 7)."""
    strings = [b"", b"a", b"b", b"f", b"cpu-clock", b"samples"]
    frames = [struct.pack("<IIQIIII", 0xFFFFFFFF, 0, 0, s, 0, 0, 0) for s in (1, 2, 3)]
    stacks, leaves = [], []
    for root in (0, 1):
        parent = 0xFFFFFFFF
        for d in range(depth):
            stacks.append(struct.pack("<II", parent, root if d == 0 else 2))
            parent = len(stacks) - 1
        leaves.append(parent)
    events = [struct.pack("<IIQ", 4, 5, 1000000)]
    smpl = [struct.pack("<QIIIIQ", 1000000 * (i + 1), 0xFFFFFFFF, 0, leaves[i % 2], 0, 1)
            for i in range(samples)]
    return capture_from_rows(strings, {"FRMS": frames, "STKS": stacks, "EVTS": events,
                                       "SMPL": smpl})


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, value):
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    return varint(num << 3 | 2) + varint(len(value)) + value


def pprof_inline_bomb(lines=10000, refs=10000):
    """One location with `lines` inline lines, one sample naming it `refs` times
    (issue 14: 225 bytes compressed, 10^8 frames of stack)."""
    p = field(1, field(1, 1) + field(2, 2))
    locs = b"".join(varint(1) for _ in range(refs))
    p += field(2, field(1, locs) + field(2, 1))  # packed location ids, value 1
    p += field(4, field(1, 1) + b"".join(field(4, field(1, 1) + field(2, i + 1))
                                         for i in range(lines)))
    p += field(5, field(1, 1) + field(2, 3))
    for s in (b"", b"samples", b"count", b"f"):
        p += field(6, s)
    return gzip.compress(p, 9)


def pprof_strings_bomb(mib=256):
    """Valid protobuf inflating to `mib` MiB of empty string_table entries
    (2 bytes each on the wire, a pointer and an allocation each in memory)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = b"\x32\x00" * (1 << 19)
    out = z.compress(field(6, b""))
    for _ in range(mib):
        out += z.compress(piece)
    return out + z.flush()


def gzip_zero_bomb(mib=1024):
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = bytes(1 << 20)
    out = b"".join(z.compress(piece) for _ in range(mib))
    return out + z.flush()


def main():
    base_path, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with open(base_path, "rb") as f:
        base = f.read()
    files = {
        # capture tables: zstd RLE frames of zeros, 32768x
        "capture-2gib.msc": capture_bomb(base, "SMPL", 32, 2 << 30, zstd_rle_frame(2 << 30)),
        "capture-16gib.msc": capture_bomb(base, "STKS", 8, 16 << 30, zstd_rle_frame(16 << 30)),
        "capture-256mib.msc": capture_bomb(base, "SMPL", 32, 256 << 20,
                                           zstd_rle_frame(256 << 20)),
        # within the inflation ratio (about 900x): stopped by --max-memory only
        "capture-256mib-ratio900.msc": capture_bomb(base, "SMPL", 32, 256 << 20,
                                                    zstd_rle_frame(256 << 20, raw_blocks=2)),
        "pprof-inline.pb.gz": pprof_inline_bomb(),
        "pprof-strings.pb.gz": pprof_strings_bomb(),
        "pprof-zeros.pb.gz": gzip_zero_bomb(256),
        "chrome-alternating.msc": chrome_alternating(),
        "deep.folded": (";".join(["f"] * 1000000) + " 1\n").encode(),
        "deep-distinct.folded": (";".join("f%d" % i for i in range(1000000)) + " 1\n").encode(),
    }
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(name, len(data))
    sparse = os.path.join(out, "sparse-2gib.msc")
    with open(sparse, "wb") as f:
        f.truncate(2 << 30)
    print("sparse-2gib.msc", 2 << 30)


if __name__ == "__main__":
    main()
