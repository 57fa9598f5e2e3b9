"""Saved raw ring streams (issue 2 acceptance): `record --save-raw DIR`
keeps the bytes drained from each ring; `record --replay DIR -o FILE` feeds
them through the real processor again.  Replaying the same stream twice
must give byte-identical captures."""
import os

import helpers as H
import rawstream as R


def _saved():
    """The ratio fixture (30 % of its usual work) recorded with --save-raw,
    once per test run."""
    raw = os.path.join(H.SESSION_TMP, "rec-replay-raw")
    env = dict(os.environ, MS_FIXTURE_SCALE="0.3")
    rec = H.cached_record("replay", [H.fixture("ratio")], save_raw=raw, env=env)
    files = [os.path.join(d, f) for d, _, fs in os.walk(raw) for f in fs]
    size = sum(os.path.getsize(f) for f in files)
    H.log("raw stream: %d files, %d bytes in %s" % (len(files), size, raw))
    assert files and size > 0, "record --save-raw %s saved nothing" % raw
    return rec, raw


def _replay(raw, name):
    out = H.tmp_path(name)
    H.record(output=out, extra=["--replay", raw], timeout=120)
    with open(out, "rb") as f:
        return out, f.read()


def _first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def test_replay_twice_is_byte_identical():
    _, raw = _saved()
    p1, one = _replay(raw, "replay1.msc")
    p2, two = _replay(raw, "replay2.msc")
    assert one == two, "replays differ: %d vs %d bytes, first difference at offset %d" % (
        len(one), len(two), _first_difference(one, two))
    prof = H.folded(p1)
    assert H.count_containing(prof, "leaf_a") > 0, \
        "the replayed capture has no leaf_a samples:\n%s" % H.show_stacks(prof)


def test_replay_gives_the_live_profile():
    """The processor is the same live and replayed, so are the stacks."""
    rec, raw = _saved()
    live = H.folded(rec.capture)
    path, _ = _replay(raw, "replay.msc")
    again = H.folded(path)
    only_live = {k: v for k, v in live.items() if again.get(k) != v}
    only_replay = {k: v for k, v in again.items() if live.get(k) != v}
    assert not only_live and not only_replay, \
        "live %d samples / replay %d samples; stacks that differ:\nlive:\n%s\nreplay:\n%s" % (
            H.total(live), H.total(again), H.show_stacks(only_live), H.show_stacks(only_replay))


def _header_with_version(header, version):
    return header[:12] + version.to_bytes(4, "little")


def test_replay_refuses_another_stream_version():
    """A stream of a newer version is refused, naming its version and the
    ones this build replays; no capture is written."""
    _, raw = _saved()
    header, chunks = R.read(raw)
    assert R.version(header) == 3, "the writer's stream version"
    path = H.tmp_path("v99.msraw")
    R.write(path, _header_with_version(header, 99), chunks)
    out = H.tmp_path("v99.msc")
    rec = H.record(output=out, extra=["--replay", path], expect_status=None)
    assert rec.returncode != 0, "a version-99 stream replayed (status 0)"
    assert "raw stream version 99; this build replays stream versions 1 to 3" in rec.stderr, \
        rec.stderr
    assert not os.path.exists(out), "a capture was written from a refused stream"


def test_replay_of_a_version_1_stream_gives_the_same_profile():
    """A stream written before the version field (0 there, no META
    perf.sample_type: the trailer is assumed TID|TIME|CPU) replays to the
    same samples and stacks as the version-3 stream it came from (no
    chunk checksums: reserved fields 0)."""
    _, raw = _saved()
    header, chunks = R.read(raw)
    old = [c for c in chunks if not (c[0] == R.META and c[3].startswith(b"perf.sample_type="))]
    assert len(old) == len(chunks) - 1, "the stream has no META perf.sample_type"
    path = H.tmp_path("v1.msraw")
    R.write(path, _header_with_version(header, 0), old)
    out = H.tmp_path("v1.msc")
    H.record(output=out, extra=["--replay", path], timeout=120)
    now, _ = _replay(raw, "v3.msc")
    a, b = H.folded(out), H.folded(now)
    assert H.total(a) > 0 and a == b, "version 1 %d samples, version 3 %d samples" % (
        H.total(a), H.total(b))


def test_replay_of_a_damaged_stream_keeps_the_chunks_before_the_damage():
    """A chunk of an unknown kind half-way: the replay says where, writes
    the capture of the chunks before it (data already good is not lost)
    and exits 1, the status of a damaged input."""
    _, raw = _saved()
    header, chunks = R.read(raw)
    samples = [i for i, c in enumerate(chunks) if c[0] in (R.BPF, R.PERF)]
    cut = samples[len(samples) // 2]
    damaged = chunks[:cut] + [[99, 0, 0, b"\x01" * 8]] + chunks[cut:]
    path = H.tmp_path("damaged.msraw")
    R.write(path, header, damaged)
    out = H.tmp_path("damaged.msc")
    r = H.run([H.BIN, "record", "--replay", path, "-o", out])
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "unknown chunk kind" in r.stderr and "before the damage" in r.stderr, r.stderr
    whole = H.folded(_replay(raw, "undamaged.msc")[0])
    kept = H.folded(out)
    assert 0 < H.total(kept) < H.total(whole), (H.total(kept), H.total(whole))
    assert H.count_containing(kept, "leaf_a") > 0, H.show_stacks(kept)


def test_replay_finds_a_flipped_byte_by_its_chunk_checksum():
    """One bit flipped inside a sample's payload half-way through a saved
    stream (before: replayed as if recorded so, the sample's stack or
    registers silently changed): the chunk's CRC-32 says where, the capture
    keeps the chunks before it, and the status is 1.  Relabelled as an
    older version (whose chunks carry no checksum), the same file is
    refused at its first chunk: nonzero reserved field."""
    _, raw = _saved()
    path = R.path_of(raw)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    header, chunks = R.read(raw)
    samples = [i for i, c in enumerate(chunks) if c[0] == R.BPF and len(c[3]) > 64]
    target = samples[len(samples) // 2]
    off = R.HEADER_BYTES
    for kind, source, time, payload in chunks[:target]:
        off += R.CHUNK.size + ((len(payload) + 7) & ~7)
    data[off + R.CHUNK.size + 40] ^= 0x04  # inside the sample record, past its header
    damaged = H.tmp_path("flipped.msraw")
    with open(damaged, "wb") as f:
        f.write(bytes(data))
    out = H.tmp_path("flipped.msc")
    r = H.run([H.BIN, "record", "--replay", damaged, "-o", out])
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "offset %d: malformed raw stream: chunk checksum mismatch" % off in r.stderr, r.stderr
    assert "before the damage" in r.stderr, r.stderr
    whole = H.folded(_replay(raw, "unflipped.msc")[0])
    kept = H.folded(out)
    assert 0 < H.total(kept) < H.total(whole), (H.total(kept), H.total(whole))
    old = H.tmp_path("relabelled.msraw")
    with open(old, "wb") as f:
        f.write(bytes(data[:12]) + (2).to_bytes(4, "little") + bytes(data[16:]))
    r = H.run([H.BIN, "record", "--replay", old, "-o", H.tmp_path("relabelled.msc")])
    assert r.returncode == 1 and "offset 16: malformed raw stream: nonzero reserved" in r.stderr, \
        (r.returncode, r.stderr)
