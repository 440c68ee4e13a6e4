"""`topo reset`'s decisions, pure: where a paused flow's positions move, and what that costs.

A flow's positions are the next source offset its copy slots copy, per source partition,
committed in its progress group on the target (keyed by the topic's name there). A reset moves
them: to each partition's start (`earliest`), its end (`latest`), the first record at or after a
time (`DATETIME`, as the source's timestamps say), or one offset (`OFFSET`, held within what the
partition holds, as Kafka's own reset tool does). Each move says what it costs: the records
copied again (moved back) or never copied (moved forward). A partition without a position yet
counts from where the flow would start it (`start: latest`: its end; else its start).
"""

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from topology.core import naming
from topology.core.errors import TopoError


@dataclass(frozen=True)
class To:
    """Where the positions go: `kind` is earliest, latest, time or offset; `value` the time (ms)
    or the offset."""

    kind: str
    value: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value}


def parse_to(text: str) -> To:
    """`earliest`, `latest`, a whole number (an offset) or an ISO 8601 date and time (a time
    without a zone is UTC); anything else is one TopoError line."""
    given = text.strip()
    if given in ("earliest", "latest"):
        return To(given)
    if given.isascii() and given.isdigit():
        return To("offset", int(given))
    try:
        when = datetime.datetime.fromisoformat(given.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise TopoError(
            f"--to {text!r} is not earliest, latest, an offset or an ISO 8601 date and time "
            "(such as 2026-11-28T09:30:00Z)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return To("time", round(when.timestamp() * 1000))


@dataclass(frozen=True)
class Seen:
    """One source partition as read before the reset: its committed position (None: none yet),
    the offsets the source holds (`start` to `end`, the next offset written) and, for a reset to
    a time, the first offset at or after it (None: no record is that new)."""

    topic: str
    remote: str  # its name on the target: the progress group's key
    partition: int
    position: int | None
    start: int
    end: int
    at_time: int | None = None


@dataclass(frozen=True)
class Move:
    topic: str
    remote: str
    partition: int
    before: int | None
    after: int
    again: int  # records already copied that are copied again
    skipped: int  # records never copied
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "remote_topic": self.remote,
            "partition": self.partition,
            "before": self.before,
            "after": self.after,
            "again": self.again,
            "skipped": self.skipped,
            "note": self.note,
        }


def move(seen: Seen, to: To, start_latest: bool) -> Move:
    """Where one partition's position goes, and what it costs."""
    note = None
    if to.kind == "earliest":
        after = seen.start
    elif to.kind == "latest":
        after = seen.end
    elif to.kind == "time":
        after = seen.end if seen.at_time is None else seen.at_time
        if seen.at_time is None:
            note = "no record that new: its end"
    else:
        wanted = int(to.value or 0)
        after = min(max(wanted, seen.start), seen.end)
        if after != wanted:
            note = f"offset {wanted} is past its {'start' if wanted < seen.start else 'end'}"
    if seen.position is None:
        from_here = seen.end if start_latest else seen.start
        note = note or "no position yet"
    else:
        from_here = min(max(seen.position, seen.start), seen.end)
    return Move(
        seen.topic,
        seen.remote,
        seen.partition,
        seen.position,
        after,
        again=max(0, from_here - after),
        skipped=max(0, after - from_here),
        note=note,
    )


@dataclass(frozen=True)
class Reset:
    """A reset of one flow's positions, as shown before it is confirmed and as committed."""

    flow: str
    delivery: str
    target: str
    group: str
    to: To
    moves: tuple[Move, ...]

    @property
    def again(self) -> int:
        return sum(m.again for m in self.moves)

    @property
    def skipped(self) -> int:
        return sum(m.skipped for m in self.moves)

    def changed(self) -> dict[tuple[str, int], int]:
        """The positions to commit, by the target's topic name and partition: every partition
        whose position changes, or that has none yet."""
        return {(m.remote, m.partition): m.after for m in self.moves if m.before != m.after}

    def to_dict(self) -> dict[str, Any]:
        return {
            "flow": self.flow,
            "delivery": self.delivery,
            "target": self.target,
            "group": self.group,
            "to": self.to.to_dict(),
            "partitions": [m.to_dict() for m in self.moves],
            "again": self.again,
            "skipped": self.skipped,
            "changed": len(self.changed()),
        }


def reset(
    flow: str,
    delivery: str,
    target: str,
    group: str,
    to: To,
    seen: Iterable[Seen],
    start_latest: bool,
) -> Reset:
    moves = tuple(
        move(s, to, start_latest) for s in sorted(seen, key=lambda s: (s.topic, s.partition))
    )
    return Reset(flow, delivery, target, group, to, moves)


def chosen_topics(
    copied: Mapping[str, str], asked: Iterable[str], flow: str, separator: str = "."
) -> dict[str, str]:
    """The flow's topics (source name -> its name on the target) a reset moves: those `asked`
    (by their source name), else every one but heartbeats (topo's own, copied so that their
    arrival says the path works: replaying them says nothing); one the flow does not copy is an
    error naming those it does."""
    names = list(asked)
    unknown = [name for name in names if name not in copied]
    if unknown:
        have = ", ".join(sorted(copied)) or "none"
        raise TopoError(f"flow {flow} does not copy topic {unknown[0]} (it copies: {have})")
    if names:
        return {name: copied[name] for name in names}
    return {
        name: remote for name, remote in copied.items() if not naming.is_heartbeats(name, separator)
    }
