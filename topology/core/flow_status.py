"""A replication job's numbers, from its copy loop's reports: records, bytes, lag, rates.

Pure: the driver hands each report (`progress.FlowProgress`) to a FlowStatus, and publishes
`to_dict()` in its status for `topo status`.
"""

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from topology.core.jobs import JobSpec
from topology.core.lag_look import Reported

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
    # The source's ends the copy's newest report gave, and when: the metrics' lag counts them.
    reported: Reported | None = None

    def add(self, made: "FlowProgress", at: float, monotonic: float) -> None:
        """What the copy did since its last report (`progress.FlowProgress`)."""
        self.records += made.records
        self.bytes += made.bytes
        self.lag = made.lag
        self.processed.update(made.positions)
        self.reported = Reported(monotonic, made.ends)  # one value: read on another thread
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


def first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:500] if lines else "unknown error"
