"""Read and write saved raw streams (userspace/stream/stream.h) in tests:
a 16-byte file header, then per chunk struct ms_chunk {u32 kind, source,
len, reserved; u64 time} and len payload bytes zero-padded to 8."""
import os
import struct

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


def write(path, header, chunks):
    with open(path, "wb") as f:
        f.write(header)
        for kind, source, time, payload in chunks:
            f.write(CHUNK.pack(kind, source, len(payload), 0, time))
            f.write(payload + b"\0" * (((len(payload) + 7) & ~7) - len(payload)))


def meta(chunks):
    """[(key, value), ...] of the META chunks, in order."""
    out = []
    for kind, _, _, payload in chunks:
        if kind == META:
            key, _, value = payload.decode().partition("=")
            out.append((key, value))
    return out
