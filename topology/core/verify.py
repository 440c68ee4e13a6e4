"""`topo verify`: proof that a target partition holds its source partition's records.

One replicated partition is compared as two ordered streams, never held whole in memory:
- what the source should have copied (`Held`): its records in the window both sides still
  hold, read committed (aborted transactions are not there), those the flow's rules keep (the
  loop rules of `jobs.forwards`, the user's filter);
- what the target holds of this source (`Copy`): the copies whose `topo-offsets` stamp names
  the source last, in target order, each with the source offset it is a copy of.
Both are folded into a count and an order-sensitive digest of each record's key, value,
headers (without topo's own) and timestamp, and walked in step: the first source offset where
they part is named with what went wrong (altered, missing, duplicated, unexpected). Records at
or after the flow's progress are not compared: they are counted as not copied yet.

Compacted topics: each side compacts on its own, so a copy whose source record was compacted
away, and a source record the target compacted away under a later copy of the same key, are
not differences.
"""

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from topology.core.jobs import OFFSETS_HEADER, PROVENANCE_HEADER

TOPO_HEADERS = frozenset({PROVENANCE_HEADER, OFFSETS_HEADER})

Header = tuple[str, bytes | None]


@dataclass(frozen=True)
class Content:
    """What a copy must keep of its source record."""

    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]  # without topo's own
    timestamp_ms: int

    @staticmethod
    def of(
        key: bytes | None, value: bytes | None, headers: Iterable[Header], timestamp_ms: int
    ) -> "Content":
        own = tuple((name, data) for name, data in headers if name not in TOPO_HEADERS)
        return Content(key, value, own, timestamp_ms)

    def feed(self, digest: Any) -> None:
        """Into `digest`, unambiguously (lengths before bytes, None apart from empty)."""
        for part in (self.key, self.value):
            digest.update(b"-" if part is None else len(part).to_bytes(8, "big") + part)
        digest.update(len(self.headers).to_bytes(4, "big"))
        for name, data in self.headers:
            encoded = name.encode()
            digest.update(len(encoded).to_bytes(4, "big") + encoded)
            digest.update(b"-" if data is None else len(data).to_bytes(8, "big") + data)
        digest.update(self.timestamp_ms.to_bytes(8, "big", signed=True))


@dataclass(frozen=True)
class Stored:
    """A record as read from a partition."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    timestamp_ms: int

    def content(self) -> Content:
        return Content.of(self.key, self.value, self.headers, self.timestamp_ms)

    def last(self, name: str) -> bytes | None:
        """The last value of header `name` (topo's stamps: the newest hop's)."""
        return next((value for key, value in reversed(self.headers) if key == name), None)


@dataclass(frozen=True)
class Held:
    offset: int  # on the source
    content: Content


@dataclass(frozen=True)
class Copy:
    source_offset: int
    offset: int  # on the target
    content: Content


class Kind(StrEnum):
    ALTERED = "altered"  # the copy of this source record differs from it
    MISSING = "missing"  # the source record has no copy
    DUPLICATED = "duplicated"  # the source record is copied more than once
    UNEXPECTED = "unexpected"  # a copy of a record the source does not have or the flow drops


@dataclass(frozen=True)
class Difference:
    kind: Kind
    source_offset: int
    target_offset: int | None
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "source_offset": self.source_offset,
            "target_offset": self.target_offset,
            "detail": self.detail,
        }


@dataclass
class Side:
    """One side's fold: how many records, and their digest in order."""

    records: int = 0
    digest: Any = field(default_factory=hashlib.sha256)

    def add(self, content: Content) -> None:
        self.records += 1
        content.feed(self.digest)

    def to_dict(self) -> dict[str, Any]:
        return {"records": self.records, "sha256": self.digest.hexdigest()}


@dataclass
class Comparison:
    source: Side = field(default_factory=Side)
    target: Side = field(default_factory=Side)
    first: Difference | None = None
    differences: int = 0

    def differ(self, found: Difference) -> None:
        self.differences += 1
        if self.first is None:
            self.first = found


def compare(
    expected: Iterable[Held],
    copies: Iterable[Copy],
    superseded: Mapping[bytes | None, int] | None = None,
) -> Comparison:
    """Walk the source's expected records and the target's copies in step (both in source
    order, as a flow writes each partition in order).

    `superseded`, for a compacted topic: per key, the newest source offset the target holds a
    copy of; a source record with no copy whose key has a later copy is then compacted away on
    the target, and a copy of a source record the source no longer has, compacted away there:
    neither is a difference, and neither is counted on either side."""
    found = Comparison()
    wanted: Iterator[Held] = iter(expected)
    pending = next(wanted, None)
    newest = -1  # the newest source offset matched so far
    for copy in copies:
        if copy.source_offset <= newest:
            found.target.add(copy.content)
            found.differ(
                Difference(
                    Kind.DUPLICATED,
                    copy.source_offset,
                    copy.offset,
                    f"a second copy of source offset {copy.source_offset}",
                )
            )
            continue
        while pending is not None and pending.offset < copy.source_offset:
            if not _compacted_away(pending, superseded):
                found.source.add(pending.content)
                found.differ(
                    Difference(Kind.MISSING, pending.offset, None, "no copy on the target")
                )
            pending = next(wanted, None)
        if pending is None or pending.offset > copy.source_offset:
            if superseded is not None:
                continue  # its source record was compacted away on the source
            found.target.add(copy.content)
            found.differ(
                Difference(
                    Kind.UNEXPECTED,
                    copy.source_offset,
                    copy.offset,
                    "a copy of a record the source does not hold or the flow drops",
                )
            )
            newest = copy.source_offset
            continue
        found.source.add(pending.content)
        found.target.add(copy.content)
        if copy.content != pending.content:
            found.differ(
                Difference(
                    Kind.ALTERED,
                    pending.offset,
                    copy.offset,
                    _how_altered(pending.content, copy.content),
                )
            )
        newest = pending.offset
        pending = next(wanted, None)
    while pending is not None:
        if not _compacted_away(pending, superseded):
            found.source.add(pending.content)
            found.differ(Difference(Kind.MISSING, pending.offset, None, "no copy on the target"))
        pending = next(wanted, None)
    return found


def _compacted_away(held: Held, superseded: Mapping[bytes | None, int] | None) -> bool:
    if superseded is None or held.content.key is None:
        return False
    return superseded.get(held.content.key, -1) > held.offset


def _how_altered(source: Content, copy: Content) -> str:
    parts = [
        name
        for name, differs in (
            ("key", source.key != copy.key),
            ("value", source.value != copy.value),
            ("headers", source.headers != copy.headers),
            ("timestamp", source.timestamp_ms != copy.timestamp_ms),
        )
        if differs
    ]
    return "its " + " and ".join(parts) + " differ"


class Verdict(StrEnum):
    PROVEN = "proven"
    DIFFERS = "differs"
    BEHIND = "behind"  # no difference, but records are still to copy
    ERROR = "error"


@dataclass
class PartitionProof:
    flow: str
    topic: str
    partition: int
    target_topic: str
    window: tuple[int, int]  # the source offsets compared: [start, end)
    comparison: Comparison = field(default_factory=Comparison)
    behind: int = 0  # source offsets at or after the window's end: not copied yet
    unstamped: int = 0  # target records without this source's stamp (other origins, MM2's)
    compacted: bool = False
    error: str | None = None

    @property
    def verdict(self) -> Verdict:
        if self.error is not None:
            return Verdict.ERROR
        if self.comparison.differences:
            return Verdict.DIFFERS
        return Verdict.BEHIND if self.behind else Verdict.PROVEN

    def to_dict(self) -> dict[str, Any]:
        first = self.comparison.first
        return {
            "flow": self.flow,
            "topic": self.topic,
            "partition": self.partition,
            "target_topic": self.target_topic,
            "verdict": self.verdict.value,
            "window": {"start": self.window[0], "end": self.window[1]},
            "source": self.comparison.source.to_dict(),
            "target": self.comparison.target.to_dict(),
            "differences": self.comparison.differences,
            "first_difference": None if first is None else first.to_dict(),
            "not_copied": self.behind,
            "other_records": self.unstamped,
            "compacted": self.compacted,
            "error": self.error,
        }


EXIT_PROVEN, EXIT_DIFFERS, EXIT_BEHIND = 0, 1, 2


def exit_code(proofs: Iterable[PartitionProof]) -> int:
    """0 every partition proven; 1 a difference or an error anywhere; 2 otherwise behind."""
    verdicts = {proof.verdict for proof in proofs}
    if verdicts & {Verdict.DIFFERS, Verdict.ERROR}:
        return EXIT_DIFFERS
    return EXIT_BEHIND if Verdict.BEHIND in verdicts else EXIT_PROVEN
