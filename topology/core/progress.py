"""What a flow's copy did since its last report: one typed value, `FlowProgress`, whichever
engine copies (topo's copy loop or a Spark query), read here from what each reports and fed to
both `topo status` (`jobprogress.FlowStatus`) and the metrics (`telemetry.figures`).

The copy loop reports a small versioned record of its own (`CopyLoop.report()` in topo's jar,
format `LOOP_REPORT_FORMAT`): per source partition its position (every record before it was
copied or filtered out, and committed), the end the source had, the records, bytes and latency
copied since the last report and the newest source timestamp; the latency buckets; each copy
slot's state and failure. A Spark query's progress (a batch that ran) is read into the same
value. Pure: text and dicts in, values out.
"""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from topology.core.errors import TopoError
from topology.core.flow_status import (
    batch_ran,
    duration,
    lag,
    latest_offsets,
    processed,
    progress_metrics,
)

LOOP_REPORT_FORMAT = 1
# The latency buckets (seconds) copies are counted in, by the loop and the Spark queries alike,
# and exported as the metrics' histogram (telemetry/names.py).
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)

OBSERVED = "topo"  # the name of the observed metrics in each Spark batch's progress
# Without per-topic figures (metrics off), a query observes its records and bytes alone:
OBSERVED_RECORDS = "records"
OBSERVED_BYTES = "bytes"
# With them, CopyFigures (topology/resources/java/.../CopyFigures.java) alone: the records, their
# bytes, the latency sum (ms), one cumulative count per LATENCY_BUCKETS bound, then per topic (in
# the query's order) its records, bytes, latency sum (ms) and newest source timestamp (ms, or empty)
OBSERVED_FIGURES = "figures"
PER_TOPIC = 4
ALL_TOPICS = ""  # the topic label of counts Spark gives only per flow (real-time mode)


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
    interval_s: float | None  # a Spark batch's duration; None for the loop (no batches)
    records: int
    bytes: int
    latency_ms: int  # the sum of every copy's latency
    buckets: tuple[int, ...]  # cumulative, one per LATENCY_BUCKETS bound
    topics: Mapping[str, TopicCopied]  # by source topic; ALL_TOPICS when per flow only
    positions: Mapping[tuple[str, int], int]  # (topic, partition) -> next offset to copy
    ends: Mapping[tuple[str, int], int]  # (topic, partition) -> the source's end, when known
    slots: tuple[Slot, ...] = ()
    losses: tuple[Loss, ...] = ()  # found since the last report (the copy loop's only)
    latency_known: bool = True  # the buckets and latency are measured (not a bare row count)

    @property
    def lag(self) -> int | None:
        """Records the sources held beyond the positions, over every partition; None when an
        end is not known."""
        if any(key not in self.ends for key in self.positions):
            return None
        return sum(max(0, self.ends[key] - at) for key, at in self.positions.items())


@dataclass(frozen=True)
class Unpacked:
    records: int
    bytes: int
    latency_ms: int
    buckets: list[int]  # cumulative, one per LATENCY_BUCKETS bound
    topics: list[tuple[int, int, int, int | None]]  # records, bytes, latency ms, newest ms


def unpacked(packed: str, topics: int) -> Unpacked | None:
    """CopyFigures' output read back; None when it does not have the expected shape. Its topics
    are those of the query (`topics` of them), or none when it observed per flow only."""
    fields = packed.split(",")
    head = 3 + len(LATENCY_BUCKETS)
    if len(fields) not in (head, head + PER_TOPIC * topics):
        return None
    try:
        numbers = [int(field) if field else None for field in fields]
    except ValueError:
        return None
    per_topic = [numbers[at : at + PER_TOPIC] for at in range(head, len(numbers), PER_TOPIC)]
    return Unpacked(
        records=numbers[0] or 0,
        bytes=numbers[1] or 0,
        latency_ms=numbers[2] or 0,
        buckets=[n or 0 for n in numbers[3:head]],
        topics=[(r or 0, b or 0, lat or 0, newest) for r, b, lat, newest in per_topic],
    )


def counted(observed: Mapping[str, Any], rows: int) -> tuple[int, int]:
    """A batch's records and bytes copied, from its observed metrics; its input `rows` when it
    observed nothing (real-time mode). (CopyFigures' first two numbers are read whatever
    topics followed them: a batch of a query since restarted over other topics still counts.)"""
    packed = observed.get(OBSERVED_FIGURES)
    if packed:
        head = packed.split(",", 2)[:2]
        if len(head) == 2 and all(field.isdigit() for field in head):
            return int(head[0]), int(head[1])
    records = observed.get(OBSERVED_RECORDS)
    return int(rows if records is None else records), int(observed.get(OBSERVED_BYTES) or 0)


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
        interval_s=None,
        records=sum(t.records for t in topics.values()),
        bytes=sum(t.bytes for t in topics.values()),
        latency_ms=int(data["latency_sum_ms"]),
        buckets=buckets,
        topics=topics,
        positions=positions,
        ends=ends,
        slots=slots,
        losses=losses,
    )


def from_query(progress: Mapping[str, Any], topics: Sequence[str]) -> FlowProgress | None:
    """A Spark query's report of a batch that ran, as the same value (None for a trigger that
    found no data): its observed figures per topic when it counted them (`topics`, the query's
    source topics in the order it numbered them), else per flow."""
    if not batch_ran(progress):
        return None
    observed = progress_metrics(progress, OBSERVED)
    rows = int(progress.get("numInputRows") or 0)
    packed = observed.get(OBSERVED_FIGURES)
    values = unpacked(packed, len(topics)) if packed else None
    copied: dict[str, TopicCopied] = {}
    if values is None or not values.topics:
        records, size = counted(observed, rows)
        copied[ALL_TOPICS] = TopicCopied(records, size)
    else:
        for name, (records, size, latency_ms, newest) in zip(topics, values.topics, strict=True):
            if records:
                copied[name] = TopicCopied(records, size, latency_ms, newest)
    records, size = counted(observed, rows)
    positions = processed(progress)
    waiting = lag(progress)
    return FlowProgress(
        run=str(progress.get("runId")),
        sequence=int(progress.get("batchId", -1)),
        interval_s=duration(progress),
        records=records,
        bytes=size,
        latency_ms=values.latency_ms if values is not None else 0,
        buckets=tuple(values.buckets) if values is not None else (0,) * len(LATENCY_BUCKETS),
        topics=copied,
        positions=positions,
        # the batch's ends as Spark saw them (its latestOffset), only when it said them all
        ends=latest_offsets(progress) if waiting is not None else {},
        latency_known=values is not None,
    )
