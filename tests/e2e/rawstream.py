"""Read and write saved raw streams (userspace/stream/stream.h) in tests:
a 16-byte file header, then per chunk struct ms_chunk {u32 kind, source,
len, reserved; u64 time} and len payload bytes zero-padded to 8.  From
stream version 3, reserved holds the chunk's CRC-32 (zlib crc32 of the
header with reserved 0, then the padded payload)."""
import os
import struct
import zlib

CHUNK = struct.Struct("<IIIIQ")
HEADER_BYTES = 16
META, BPF, PERF, ROUND, COUNTER, END, PROCESS, DUTY = range(1, 9)


def path_of(raw):
    return os.path.join(raw, "stream.msraw") if os.path.isdir(raw) else raw


def read(raw):
    """(header bytes, [[kind, source, time, payload bytes], ...])."""
    with open(path_of(raw), "rb") as f:
        data = f.read()
    header, off, chunks = data[:HEADER_BYTES], HEADER_BYTES, []
    while off < len(data):
        kind, source, length, _, time = CHUNK.unpack_from(data, off)
        off += CHUNK.size
        chunks.append([kind, source, time, data[off:off + length]])
        off += (length + 7) & ~7
    return header, chunks


def version(header):
    """The stream version of a file header (0 written before the field: 1)."""
    return int.from_bytes(header[12:16], "little") or 1


def write(path, header, chunks):
    """Chunks with their checksums when the header's version has them."""
    with open(path, "wb") as f:
        f.write(header)
        for kind, source, time, payload in chunks:
            padded = payload + b"\0" * (((len(payload) + 7) & ~7) - len(payload))
            crc = 0
            if version(header) >= 3:
                crc = zlib.crc32(CHUNK.pack(kind, source, len(payload), 0, time) + padded)
            f.write(CHUNK.pack(kind, source, len(payload), crc, time))
            f.write(padded)


def meta(chunks):
    """[(key, value), ...] of the META chunks, in order."""
    out = []
    for kind, _, _, payload in chunks:
        if kind == META:
            key, _, value = payload.decode().partition("=")
            out.append((key, value))
    return out
