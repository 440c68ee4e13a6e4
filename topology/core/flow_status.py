"""A replication job's numbers, from Spark's progress reports: records, bytes, lag, rates.

Pure: the driver hands each finished batch's progress report (a dict) to a FlowStatus, and
publishes `to_dict()` in its status for `topo status`.
"""

import ast
import json
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topology.core.jobs import JobSpec

if TYPE_CHECKING:
    from topology.core.progress import FlowProgress

RATE_WINDOW = 10.0  # seconds of batches the "recent throughput" figures cover


@dataclass
class FlowStatus:
    spec: JobSpec
    state: str = "starting"
    topics: int = 0
    records: int = 0
    bytes: int = 0
    lag: int | None = None
    restarts: int = 0
    error: str | None = None
    last_batch_at: float | None = None
    retry_at: float = 0.0
    window: deque[tuple[float, int, int]] = field(default_factory=deque)
    seen: dict[str, int] = field(default_factory=dict)  # run id -> last batch id counted
    # How far each source (topic, partition) has been processed: copied, or filtered out.
    processed: dict[tuple[str, int], int] = field(default_factory=dict)

    def add(self, made: "FlowProgress", at: float, monotonic: float) -> None:
        """What the copy did since its last report (`progress.FlowProgress`)."""
        self.records += made.records
        self.bytes += made.bytes
        self.lag = made.lag
        self.processed.update(made.positions)
        if made.records:
            self.last_batch_at = at
            self.window.append((monotonic, made.records, made.bytes))

    def to_dict(self, now: float) -> dict[str, Any]:
        while self.window and self.window[0][0] < now - RATE_WINDOW:
            self.window.popleft()
        span = RATE_WINDOW if self.window else 1.0
        return {
            "flow": self.spec.flow,
            "source": self.spec.source,
            "target": self.spec.target,
            "delivery": self.spec.delivery,
            "state": self.state,
            "topics": self.topics,
            "records": self.records,
            "bytes": self.bytes,
            "lag": self.lag,
            "records_per_second": round(sum(r for _t, r, _b in self.window) / span, 1),
            "bytes_per_second": round(sum(b for _t, _r, b in self.window) / span, 1),
            "restarts": self.restarts,
            "error": self.error,
            "last_batch_at": self.last_batch_at,
        }


def progress_metrics(progress: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The batch's observed metrics (records, bytes); PySpark gives them as a Row."""
    found = (progress.get("observedMetrics") or {}).get(name)
    if found is None:
        return {}
    return dict(found.asDict()) if hasattr(found, "asDict") else dict(found)


def batch_ran(progress: Mapping[str, Any]) -> bool:
    """Whether the report is of a batch that ran. Spark also reports triggers that found no
    data (when a query starts idle, then every 10 s of idleness), under the id of the next
    batch, which has not run: counting it as seen would skip that batch when it does run."""
    return "addBatch" in (progress.get("durationMs") or {})


def processed(progress: Mapping[str, Any]) -> dict[tuple[str, int], int]:
    """The next source offset per (topic, partition) once the batch is done: every record
    before it was copied or filtered out (the batch's end offsets)."""
    return _per_partition(progress, "endOffset")


def latest_offsets(progress: Mapping[str, Any]) -> dict[tuple[str, int], int]:
    """The source's end per (topic, partition) as the batch saw it (its latest offsets)."""
    return _per_partition(progress, "latestOffset")


def _per_partition(progress: Mapping[str, Any], which: str) -> dict[tuple[str, int], int]:
    found: dict[tuple[str, int], int] = {}
    for source in progress.get("sources") or []:
        for topic, partitions in (_offsets(source.get(which)) or {}).items():
            for partition, offset in partitions.items():
                found[(topic, int(partition))] = int(offset)
    return found


def lag_to_ends(
    read: Mapping[tuple[str, int], int], ends: Mapping[tuple[str, int], int]
) -> dict[str, int]:
    """Records waiting per source topic: each partition's end (as the source says now) minus
    the flow's read position in it (`processed`). A partition whose end is not known is left
    out; so is a topic none of whose ends is known (its lag is unknown, not 0)."""
    found: dict[str, int] = {}
    for (topic, partition), position in read.items():
        end = ends.get((topic, partition))
        if end is not None:
            found[topic] = found.get(topic, 0) + max(0, end - position)
    return found


def lag(progress: Mapping[str, Any]) -> int | None:
    """Records the source holds beyond what the batch read, over every partition."""
    total = 0
    for source in progress.get("sources") or []:
        end, latest = _offsets(source.get("endOffset")), _offsets(source.get("latestOffset"))
        if latest is None or end is None:
            return None
        for topic, partitions in latest.items():
            for partition, offset in partitions.items():
                total += max(0, int(offset) - int(end.get(topic, {}).get(partition, offset)))
    return total


def duration(progress: Mapping[str, Any]) -> float | None:
    """The batch's time from trigger to commit, in seconds."""
    took = (progress.get("durationMs") or {}).get("triggerExecution")
    return None if took is None else float(took) / 1000


def _offsets(value: Any) -> dict[str, dict[str, int]] | None:
    """A Kafka source's offsets in a progress report: JSON from Spark, but PySpark's progress
    dicts carry them as a Python repr ("{'orders': {'0': 16}}")."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            try:
                value = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                return None
    return value if isinstance(value, dict) else None


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:500] if lines else "unknown error"
