"""What a flow's copy did since its last report: one typed value, `FlowProgress`, read from the
copy loop's report and fed to both `topo status` (`flow_status.FlowStatus`) and the metrics
(`telemetry.figures`).

The copy loop reports a small versioned record of its own (`CopyLoop.report()` in topo's jar,
format `LOOP_REPORT_FORMAT`): per source partition whose position or end moved since the last
report (every partition in a run's first report), or that copied records: its position (every
record before it was copied or filtered out, and committed), the end the source had, the
records, bytes and latency copied since the last report and the newest source timestamp; the
latency buckets; each copy slot's state and failure; the partitions it no longer reads. So a
report's size follows what moved, not how many partitions the flow reads. Pure: text in, values
out.
"""

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from topology.core.errors import TopoError

LOOP_REPORT_FORMAT = 2  # 2: only the partitions that moved (1 named every one)
# The latency buckets (seconds) copies are counted in, by the loop, and exported as the
# metrics' histogram (telemetry/names.py).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


class ReportError(TopoError):
    """A copy loop's report this topo cannot read: another format, or not a report."""


@dataclass(frozen=True)
class TopicCopied:
    """What was copied of one source topic since the last report."""

    records: int = 0
    bytes: int = 0
    latency_ms: int = 0  # the sum of the copies' latencies
    newest_ms: int | None = None  # the newest copied record's source timestamp


@dataclass(frozen=True)
class Slot:
    """One copy slot (a thread of the loop, a task later) and how it is."""

    slot: int
    state: str  # running | stopped | failed
    failure: str | None = None


@dataclass(frozen=True)
class Loss:
    """Records a copy will never have. Of a source partition: `retention`, offsets `start` to
    `end` - 1 were removed before they were copied (`records` of them); `reset`, the partition's
    log ends at `start`, behind the copy at `end` (the topic was deleted and made again, or
    truncated). Of a whole topic (`partition` -1, `detail` its new topic id): `recreated`, the
    source topic was deleted and made again; `target`, the copy's topic on the target was,
    under the copy. Where the count is unknown, `records` is None."""

    topic: str
    partition: int
    kind: str  # retention | reset | recreated | target
    start: int = 0
    end: int = 0
    detail: str = ""

    @property
    def records(self) -> int | None:
        return self.end - self.start if self.kind == "retention" else None

    def describe(self) -> str:
        where = f"{self.topic}-{self.partition}"
        if self.kind == "retention":
            return (
                f"{self.records:,} records of {where} (offsets {self.start} to {self.end - 1}) "
                "were removed from the source by retention before they were copied"
            )
        if self.kind == "recreated":
            return (
                f"topic {self.topic} on the source was deleted and made again (its topic id "
                "changed): what the old one held that was not copied yet is gone"
            )
        if self.kind == "target":
            return (
                f"topic {self.topic} on the target was deleted and made again under the copy "
                "(its topic id changed): the copies it held are gone; `topo verify` shows what "
                "is missing"
            )
        return (
            f"{where} on the source ends at offset {self.start}, behind the copy at {self.end}: "
            "the topic was deleted and made again, or its log truncated"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "kind": self.kind,
            "from": self.start,
            "to": self.end,
            "records": self.records,
        }


@dataclass(frozen=True)
class FlowProgress:
    run: str  # the copy's run: positions counted once per run and sequence
    sequence: int  # the report's number in its run, increasing
    records: int
    bytes: int
    latency_ms: int  # the sum of every copy's latency
    buckets: tuple[int, ...]  # cumulative, one per LATENCY_BUCKETS bound
    topics: Mapping[str, TopicCopied]  # by source topic
    # Of the partitions that moved since the run's last report:
    positions: Mapping[tuple[str, int], int]  # (topic, partition) -> next offset to copy
    ends: Mapping[tuple[str, int], int]  # (topic, partition) -> the source's end, when known
    slots: tuple[Slot, ...] = ()
    losses: tuple[Loss, ...] = ()  # found since the last report
    gone: frozenset[tuple[str, int]] = frozenset()  # no longer read since the last report


def read_loop_report(text: str, buckets: int = len(LATENCY_BUCKETS)) -> FlowProgress:
    """A copy loop's report (its JSON text, with `buckets` latency bounds); ReportError for
    another format or shape."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ReportError("a copy loop report that is not JSON") from None
    if not isinstance(data, Mapping) or data.get("format") != LOOP_REPORT_FORMAT:
        found = data.get("format") if isinstance(data, Mapping) else None
        raise ReportError(
            f"copy loop report format {found!r} is not {LOOP_REPORT_FORMAT}: topo's jar and "
            "this topo are of different versions"
        )
    try:
        return _loop(data, buckets)
    except (KeyError, TypeError, ValueError) as problem:
        why = f"{type(problem).__name__}: {problem}"
        raise ReportError(f"malformed copy loop report ({why})") from None


def _loop(data: Mapping[str, Any], bounds: int) -> FlowProgress:
    buckets = tuple(int(n) for n in data["latency_buckets"])
    if len(buckets) != bounds:
        raise ValueError(f"{len(buckets)} latency buckets, not {bounds}")
    topics: dict[str, TopicCopied] = {}
    positions: dict[tuple[str, int], int] = {}
    ends: dict[tuple[str, int], int] = {}
    for item in data["partitions"]:
        key = (str(item["topic"]), int(item["partition"]))
        if item.get("position") is not None:  # none before its first commit
            positions[key] = int(item["position"])
        if item.get("end") is not None:
            ends[key] = int(item["end"])
        if int(item["records"]):
            before = topics.get(key[0], TopicCopied())
            newest = item.get("newest_timestamp_ms")
            newest_ms = before.newest_ms
            if newest is not None:
                newest_ms = max(int(newest), newest_ms if newest_ms is not None else int(newest))
            topics[key[0]] = TopicCopied(
                before.records + int(item["records"]),
                before.bytes + int(item["bytes"]),
                before.latency_ms + int(item["latency_sum_ms"]),
                newest_ms,
            )
    slots = tuple(
        Slot(int(s["slot"]), str(s["state"]), None if s["failure"] is None else str(s["failure"]))
        for s in data["slots"]
    )
    losses = tuple(
        Loss(str(x["topic"]), int(x["partition"]), str(x["kind"]), int(x["from"]), int(x["to"]))
        for x in data.get("losses", ())  # absent from reports of a jar before losses existed
    )
    return FlowProgress(
        run=str(data["run"]),
        sequence=int(data["sequence"]),
        records=sum(t.records for t in topics.values()),
        bytes=sum(t.bytes for t in topics.values()),
        latency_ms=int(data["latency_sum_ms"]),
        buckets=buckets,
        topics=topics,
        positions=positions,
        ends=ends,
        slots=slots,
        losses=losses,
        gone=frozenset((str(x["topic"]), int(x["partition"])) for x in data["gone"]),
    )
