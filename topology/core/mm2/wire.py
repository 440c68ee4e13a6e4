"""MirrorMaker 2's record formats, both ways: heartbeats, checkpoints and offset-syncs. Pure.

MM2 writes these records with Kafka's protocol types (connect-mirror-client's `Heartbeat` and
`Checkpoint`, connect-mirror's `OffsetSync`): big-endian integers, and strings as a signed
16-bit byte length followed by UTF-8. Heartbeat and checkpoint values start with a version
(16 bits, 0 today); offset-sync values have none.

- heartbeat (`heartbeats`): key (source alias, target alias), value (version, emit time ms);
- checkpoint (`<source>.checkpoints.internal` on the target): key (group, topic on the target,
  partition), value (version, offset on the source, offset on the target, metadata);
- offset-sync (`mm2-offset-syncs.<cluster>.internal`): key (topic on the source, partition),
  value (offset on the source, offset on the target).

Decoding is strict: a record that is not exactly in this shape (topo's earlier JSON records,
say) gives None rather than a wrong value.
"""

import struct
from dataclasses import dataclass

VERSION = 0
_INT16, _INT32, _INT64 = struct.Struct(">h"), struct.Struct(">i"), struct.Struct(">q")


@dataclass(frozen=True)
class Heartbeat:
    source: str
    target: str
    timestamp_ms: int


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str  # the topic on the target (MM2 names it after the remote topic)
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""


@dataclass(frozen=True)
class OffsetSync:
    topic: str  # the topic on the source
    partition: int
    upstream_offset: int
    downstream_offset: int


def encode_heartbeat(beat: Heartbeat) -> tuple[bytes, bytes]:
    key = _string(beat.source) + _string(beat.target)
    return key, _INT16.pack(VERSION) + _INT64.pack(beat.timestamp_ms)


def decode_heartbeat(key: bytes | None, value: bytes | None) -> Heartbeat | None:
    keys = _Reader(key)
    values = _Reader(value)
    source, target = keys.string(), keys.string()
    version, timestamp = values.int16(), values.int64()
    if not (keys.done() and values.done()) or version != VERSION:
        return None
    assert source is not None and target is not None and timestamp is not None
    return Heartbeat(source, target, timestamp)


def encode_checkpoint(checkpoint: Checkpoint) -> tuple[bytes, bytes]:
    key = _string(checkpoint.group) + _string(checkpoint.topic) + _INT32.pack(checkpoint.partition)
    value = (
        _INT16.pack(VERSION)
        + _INT64.pack(checkpoint.upstream_offset)
        + _INT64.pack(checkpoint.downstream_offset)
        + _string(checkpoint.metadata)
    )
    return key, value


def decode_checkpoint(key: bytes | None, value: bytes | None) -> Checkpoint | None:
    keys = _Reader(key)
    values = _Reader(value)
    group, topic, partition = keys.string(), keys.string(), keys.int32()
    version, upstream, downstream = values.int16(), values.int64(), values.int64()
    metadata = values.string()
    if not (keys.done() and values.done()) or version != VERSION:
        return None
    assert group is not None and topic is not None and partition is not None
    assert upstream is not None and downstream is not None and metadata is not None
    return Checkpoint(group, topic, partition, upstream, downstream, metadata)


def encode_offset_sync(sync: OffsetSync) -> tuple[bytes, bytes]:
    key = _string(sync.topic) + _INT32.pack(sync.partition)
    return key, _INT64.pack(sync.upstream_offset) + _INT64.pack(sync.downstream_offset)


def decode_offset_sync(key: bytes | None, value: bytes | None) -> OffsetSync | None:
    keys = _Reader(key)
    values = _Reader(value)
    topic, partition = keys.string(), keys.int32()
    upstream, downstream = values.int64(), values.int64()
    if not (keys.done() and values.done()):
        return None
    assert topic is not None and partition is not None
    assert upstream is not None and downstream is not None
    return OffsetSync(topic, partition, upstream, downstream)


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    if len(data) > 0x7FFF:
        raise ValueError(f"a string of {len(data)} bytes is longer than MM2's format allows")
    return _INT16.pack(len(data)) + data


class _Reader:
    """Reads fields in order; after the first field that does not fit, every read is None and
    `done()` is False."""

    def __init__(self, data: bytes | None) -> None:
        self._data = data or b""
        self._at = 0
        self._broken = data is None

    def _take(self, size: int) -> bytes | None:
        if self._broken or size < 0 or self._at + size > len(self._data):
            self._broken = True
            return None
        taken = self._data[self._at : self._at + size]
        self._at += size
        return taken

    def _number(self, form: struct.Struct) -> int | None:
        taken = self._take(form.size)
        return None if taken is None else int(form.unpack(taken)[0])

    def int16(self) -> int | None:
        return self._number(_INT16)

    def int32(self) -> int | None:
        return self._number(_INT32)

    def int64(self) -> int | None:
        return self._number(_INT64)

    def string(self) -> str | None:
        size = self.int16()
        taken = None if size is None else self._take(size)
        if taken is None:
            return None
        try:
            return taken.decode("utf-8")
        except UnicodeDecodeError:
            self._broken = True
            return None

    def done(self) -> bool:
        return not self._broken and self._at == len(self._data)
