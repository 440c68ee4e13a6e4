"""A replication job's numbers, from its copy loop's reports: records, bytes, lag, rates.

Pure: the driver hands each report (`progress.FlowProgress`) to a FlowStatus, and publishes
`to_dict()` in its status for `topo status`.
"""

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topology.core.jobs import JobSpec

if TYPE_CHECKING:
    from topology.core.progress import FlowProgress

RATE_WINDOW = 10.0  # seconds of reports the "recent throughput" figures cover


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
    # How far each source (topic, partition) has been processed: copied, or filtered out.
    processed: dict[tuple[str, int], int] = field(default_factory=dict)
    # The copy's run, and per partition it reads the source's end it reported last and when
    # (monotonic seconds): the lag counts them. Each report names only what moved.
    run: str = ""
    reported: dict[tuple[str, int], tuple[float, int]] = field(default_factory=dict)
    reading: set[tuple[str, int]] = field(default_factory=set)  # the run's partitions
    # The lag kept as reports arrive, so that a report costs what it names, not every
    # partition the run reads: per partition read with a known end, the records beyond its
    # position; their sum; the partitions read whose end is not known yet.
    waiting: dict[tuple[str, int], int] = field(default_factory=dict)
    waiting_sum: int = 0
    unknown: set[tuple[str, int]] = field(default_factory=set)
    # The partitions whose position moved since its progress was last recorded on the target
    # (`spark/offset_rounds.py` takes them, and puts back what it could not write).
    unrecorded: set[tuple[str, int]] = field(default_factory=set)

    def add(self, made: "FlowProgress", at: float, monotonic: float) -> None:
        """What the copy did since its last report (`progress.FlowProgress`)."""
        self.records += made.records
        self.bytes += made.bytes
        self.processed.update(made.positions)
        self.unrecorded.update(made.positions)
        if made.run != self.run:  # a new copy: what the old one reported is not its
            self.run, self.reported, self.reading = made.run, {}, set()
            self.waiting, self.waiting_sum, self.unknown = {}, 0, set()
        self.reported.update((key, (monotonic, end)) for key, end in made.ends.items())
        self.reading.update(made.positions)
        self.reading -= made.gone
        for key in {*made.positions, *made.ends, *made.gone}:
            self._count(key)
        self.lag = None if self.unknown else self.waiting_sum
        if made.records:
            self.last_batch_at = at
            self.window.append((monotonic, made.records, made.bytes))

    def _count(self, key: tuple[str, int]) -> None:
        """One partition's part of the lag, after a report that named it: the records the
        source held beyond its position, as its copy reported them (not known: the lag is not)."""
        self.waiting_sum -= self.waiting.pop(key, 0)
        self.unknown.discard(key)
        if key not in self.reading:
            return
        told = self.reported.get(key)
        if told is None:
            self.unknown.add(key)
            return
        self.waiting[key] = max(0, told[1] - self.processed[key])
        self.waiting_sum += self.waiting[key]

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


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:500] if lines else "unknown error"
