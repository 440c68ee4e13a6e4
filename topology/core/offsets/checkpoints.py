"""The records topo keeps about offsets, and the rules for writing them. Pure.

- A checkpoint: a group's committed offset on the source and where it resumes on the target,
  per partition. Written twice on the target: to `topo-checkpoints.<source>.internal` as
  topo's JSON (with the source topic and whether the translation is exact, which topo's
  failover needs), and to `<source>.checkpoints.internal`, MM2's topic, in MM2's format
  (`mm2_checkpoint`), for MM2 and its clients.
- Progress (`topo-offset-syncs.<source>.internal` on the target): how far a flow has processed
  each source partition (copied, or dropped by its filter). It is what says whether a group's
  committed offset has been replicated yet.

topo's are JSON, keyed so that a compacted topic keeps the latest of each (MM2's are keyed the
same way: group, topic, partition).
"""

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from topology.core.mm2 import wire

CheckpointKey = tuple[str, str, int]  # group, source topic, partition


@dataclass(frozen=True)
class Checkpoint:
    group: str
    topic: str  # the topic on the source
    partition: int
    upstream_offset: int  # committed on the source
    target_topic: str
    downstream_offset: int  # where the group resumes on the target
    exact: bool = True
    complete: bool = True  # everything before upstream_offset had reached the target
    at_ms: int = 0

    @property
    def key(self) -> CheckpointKey:
        return (self.group, self.topic, self.partition)


@dataclass(frozen=True)
class Progress:
    flow: str  # "east->west"
    topic: str  # the source topic
    partition: int
    next_offset: int  # every source record before it has been copied (or filtered out)
    at_ms: int = 0

    @property
    def key(self) -> tuple[str, int]:
        return (self.topic, self.partition)


def encode_checkpoint(checkpoint: Checkpoint) -> tuple[bytes, bytes]:
    key = {"group": checkpoint.group, "topic": checkpoint.topic, "partition": checkpoint.partition}
    return _json(key), _json(asdict(checkpoint))


def mm2_checkpoint(checkpoint: Checkpoint) -> tuple[bytes, bytes]:
    """The checkpoint as MM2 writes it: keyed by the topic on the target, no metadata."""
    return wire.encode_checkpoint(
        wire.Checkpoint(
            group=checkpoint.group,
            topic=checkpoint.target_topic,
            partition=checkpoint.partition,
            upstream_offset=checkpoint.upstream_offset,
            downstream_offset=checkpoint.downstream_offset,
        )
    )


def decode_checkpoint(value: bytes | None) -> Checkpoint | None:
    data = _parse(value)
    try:
        return Checkpoint(**data) if data else None
    except TypeError:
        return None


def encode_progress(progress: Progress) -> tuple[bytes, bytes]:
    key = {"flow": progress.flow, "topic": progress.topic, "partition": progress.partition}
    return _json(key), _json(asdict(progress))


def decode_progress(value: bytes | None) -> Progress | None:
    data = _parse(value)
    try:
        return Progress(**data) if data else None
    except TypeError:
        return None


def latest_checkpoints(found: Iterable[Checkpoint]) -> dict[CheckpointKey, Checkpoint]:
    """The last checkpoint of each (group, topic, partition), in topic order."""
    return {checkpoint.key: checkpoint for checkpoint in found}


def latest_progress(found: Iterable[Progress], flow: str) -> dict[tuple[str, int], int]:
    """The flow's processed position per source (topic, partition): the furthest recorded."""
    reached: dict[tuple[str, int], int] = {}
    for progress in found:
        if progress.flow == flow:
            reached[progress.key] = max(reached.get(progress.key, 0), progress.next_offset)
    return reached


def to_emit(previous: Checkpoint | None, new: Checkpoint) -> Checkpoint | None:
    """The checkpoint to write now, or None. Checkpoints never move backwards unless the group
    itself rewound on the source (MM2 since 3.8 keeps the same rule)."""
    if previous is None:
        return new
    same = (previous.upstream_offset, previous.downstream_offset, previous.target_topic)
    flags_same = (previous.exact, previous.complete) == (new.exact, new.complete)
    if same == (new.upstream_offset, new.downstream_offset, new.target_topic) and flags_same:
        return None
    rewound = new.upstream_offset < previous.upstream_offset
    if new.downstream_offset < previous.downstream_offset and not rewound:
        return None
    return new


def to_commit(
    translated: Mapping[tuple[str, int], int], current: Mapping[tuple[str, int], int]
) -> dict[tuple[str, int], int]:
    """What group offset sync commits on the target: only partitions where the translated
    offset is ahead of what the group has there, so a target group is never rewound."""
    return {
        partition: offset
        for partition, offset in translated.items()
        if partition not in current or offset > current[partition]
    }


def _json(data: Mapping[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _parse(value: bytes | None) -> dict[str, Any] | None:
    if not value:
        return None
    try:
        data = json.loads(value)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
