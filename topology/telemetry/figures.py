"""The running replication's numbers, as the metrics endpoint and the history need them.

Pure (no I/O, no clock of its own): the driver hands it what it learns (each copy's progress,
`progress.FlowProgress`; restarts, errors, the changes it made,
checkpoint rounds, heartbeat latencies) with the time, and `snapshot()` gives a consistent copy
for a scrape or a history sample. Counters only grow, for the driver's life; they start at 0
with each driver, as Prometheus counters do. Thread-safe: the main loop, the offsets round and
the telemetry thread write, the HTTP server reads.
"""

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from topology.core.progress import LATENCY_BUCKETS

if TYPE_CHECKING:
    from topology.core.objectives import Judged
    from topology.core.progress import FlowProgress, Loss

LOSSES_KEPT = 20  # the newest losses of a flow that its status shows


@dataclass
class Histogram:
    """Cumulative bucket counts over fixed upper bounds, with the count and sum."""

    bounds: tuple[float, ...]
    cumulative: list[int] = field(default_factory=list)
    count: int = 0
    total: float = 0.0

    def __post_init__(self) -> None:
        if not self.cumulative:
            self.cumulative = [0] * len(self.bounds)

    def add(self, cumulative: Sequence[int], count: int, total: float) -> None:
        for index, value in enumerate(cumulative):
            self.cumulative[index] += int(value)
        self.count += count
        self.total += total

    def observe(self, values: Sequence[float]) -> None:
        self.add([sum(1 for v in values if v <= b) for b in self.bounds], len(values), sum(values))

    def copied(self) -> "Histogram":
        return replace(self, cumulative=list(self.cumulative))


@dataclass
class TopicFigures:
    records: int = 0
    bytes: int = 0
    latency_count: int = 0  # records whose latency was measured
    latency_sum: float = 0.0  # seconds
    newest_ms: int | None = None  # source timestamp of the newest record copied
    lag: int | None = None


@dataclass
class FlowFigures:
    source: str
    target: str
    state: str = "starting"
    states: set[str] = field(default_factory=set)
    topics: dict[str, TopicFigures] = field(default_factory=dict)
    latency: Histogram = field(default_factory=lambda: Histogram(LATENCY_BUCKETS))
    heartbeat: Histogram = field(default_factory=lambda: Histogram(LATENCY_BUCKETS))
    synced: int = 0
    partitions: int = 0
    discovered: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)
    last_restart: float | None = None
    checkpoints: dict[str, int] = field(default_factory=dict)  # group -> newest, unix ms
    beats: bool = False  # the flow copies heartbeats
    newest_beat_ms: int | None = None  # emitted time of the newest heartbeat seen copied
    judged: tuple["Judged", ...] = ()  # the flow's objectives as last judged
    # Records the source no longer held when the copy came to them: (topic, kind) -> records
    # (retention) and -> losses found; the newest losses found, with when (LOSSES_KEPT).
    lost: dict[tuple[str, str], int] = field(default_factory=dict)
    losses_found: dict[tuple[str, str], int] = field(default_factory=dict)
    losses: list[tuple[float, "Loss"]] = field(default_factory=list)

    def topic(self, name: str) -> TopicFigures:
        return self.topics.setdefault(name, TopicFigures())

    def copied(self) -> "FlowFigures":
        """A copy that later changes to this one do not reach, as a snapshot needs: every
        container copied, every value in them immutable (what copy.deepcopy would give, at a
        fraction of its cost for hundreds of topics every 2 s)."""
        return replace(
            self,
            states=set(self.states),
            topics={name: replace(figures) for name, figures in self.topics.items()},
            latency=self.latency.copied(),
            heartbeat=self.heartbeat.copied(),
            errors=dict(self.errors),
            restarts=dict(self.restarts),
            checkpoints=dict(self.checkpoints),
            lost=dict(self.lost),
            losses_found=dict(self.losses_found),
            losses=list(self.losses),
        )

    @property
    def records(self) -> int:
        return sum(t.records for t in self.topics.values())

    @property
    def bytes(self) -> int:
        return sum(t.bytes for t in self.topics.values())

    @property
    def lag(self) -> int | None:
        known = [t.lag for t in self.topics.values() if t.lag is not None]
        return sum(known) if known else None


@dataclass
class Snapshot:
    time: float
    owner: str
    info: dict[str, str]
    started_at: float
    flows: dict[str, FlowFigures]
    changes: dict[tuple[str, str, str, str], int]
    rounds: int
    checkpoints_written: int
    groups_synced: dict[str, int]
    errors: dict[str, int]

    def heartbeat_age(self, flow: FlowFigures) -> float | None:
        """Seconds since the newest heartbeat copied was emitted (since the driver started
        while none was); None for a flow that copies none."""
        if not flow.beats:
            return None
        newest = self.started_at if flow.newest_beat_ms is None else flow.newest_beat_ms / 1000
        return max(0.0, self.time - newest)

    def checkpoint_age(self, flow: FlowFigures) -> float | None:
        """Seconds since the newest checkpoint written for any of the flow's groups; None
        before one was."""
        if not flow.checkpoints:
            return None
        return max(0.0, self.time - max(flow.checkpoints.values()) / 1000)

    def flow_lag_seconds(self, flow: FlowFigures) -> float | None:
        """The most any of the flow's topics is behind in time."""
        known = [s for s in map(self.lag_seconds, flow.topics.values()) if s is not None]
        return max(known) if known else None

    def lag_seconds(self, topic: TopicFigures) -> float | None:
        """How far behind in time: now minus the newest copied record's source timestamp while
        records wait; 0 when none wait; None when unknown (nothing copied yet)."""
        if topic.lag == 0:
            return 0.0
        if topic.lag is None or topic.newest_ms is None:
            return None
        return max(0.0, self.time - topic.newest_ms / 1000)


class Figures:
    def __init__(
        self,
        owner: str,
        info: Mapping[str, str],
        flows: Mapping[str, tuple[str, str]],
        started_at: float,
    ) -> None:
        self.owner = owner
        self.info = dict(info)
        self.started_at = started_at
        self._flows = {
            flow: FlowFigures(source, target) for flow, (source, target) in flows.items()
        }
        self._changes: dict[tuple[str, str, str, str], int] = {}
        self._rounds = 0
        self._checkpoints_written = 0
        self._groups_synced: dict[str, int] = {}
        self._errors: dict[str, int] = {}  # not of one flow: kind -> count
        self._lock = threading.Lock()

    def progress(self, flow: str, made: "FlowProgress") -> None:
        """What the flow's copy did since its last report (`progress.FlowProgress`): per topic,
        and its latencies."""
        with self._lock:
            figures = self._flows[flow]
            for name, copied in made.topics.items():
                topic = figures.topic(name)
                topic.records += copied.records
                topic.bytes += copied.bytes
                topic.latency_count += copied.records
                topic.latency_sum += copied.latency_ms / 1000
                if copied.newest_ms is not None:
                    topic.newest_ms = max(copied.newest_ms, topic.newest_ms or 0)
            figures.latency.add(made.buckets, made.records, made.latency_ms / 1000)

    def lag(self, flow: str, per_topic: Mapping[str, int]) -> None:
        """The lag of each topic the copy reads now; a topic it no longer reads has none."""
        if not per_topic:
            return
        with self._lock:
            figures = self._flows[flow]
            for name, topic in figures.topics.items():
                if name not in per_topic:
                    topic.lag = None
            for name, waiting in per_topic.items():
                figures.topic(name).lag = waiting

    def judged_of(self, flow: str) -> tuple["Judged", ...]:
        """The flow's objectives as last judged; none before the first judgement."""
        with self._lock:
            return self._flows[flow].judged

    def lag_of(self, flow: str) -> int | None:
        """The flow's lag over its topics, as last measured; None before it was."""
        with self._lock:
            return self._flows[flow].lag

    def state(self, flow: str, state: str) -> None:
        with self._lock:
            figures = self._flows[flow]
            figures.state = state
            figures.states.add(state)

    def topics(self, flow: str, synced: int, partitions: int) -> None:
        with self._lock:
            figures = self._flows[flow]
            figures.synced, figures.partitions = synced, partitions

    def discovered(self, flow: str, count: int) -> None:
        with self._lock:
            self._flows[flow].discovered += count

    def restart(self, flow: str, reason: str, now: float) -> None:
        with self._lock:
            figures = self._flows[flow]
            figures.restarts[reason] = figures.restarts.get(reason, 0) + 1
            figures.last_restart = now

    def error(self, flow: str | None, kind: str) -> None:
        """An error of one flow, or (None) of the driver's shared work."""
        with self._lock:
            errors = self._errors if flow is None else self._flows[flow].errors
            errors[kind] = errors.get(kind, 0) + 1

    def change(self, cluster: str, resource: str, action: str, outcome: str) -> None:
        key = (cluster, resource, action, outcome)
        with self._lock:
            self._changes[key] = self._changes.get(key, 0) + 1

    def offsets_round(self, written: int, committed: Mapping[str, int]) -> None:
        with self._lock:
            self._rounds += 1
            self._checkpoints_written += written
            for group in committed:
                self._groups_synced[group] = self._groups_synced.get(group, 0) + 1

    def checkpoints(self, flow: str, newest_ms: Mapping[str, int]) -> None:
        """The newest checkpoint written per consumer group of the flow (unix ms)."""
        with self._lock:
            self._flows[flow].checkpoints.update(newest_ms)

    def heartbeats(self, flow: str, latencies_s: Sequence[float], newest_ms: int) -> None:
        """Heartbeats seen copied to the target: their latencies, the newest one's emit time."""
        with self._lock:
            figures = self._flows[flow]
            figures.heartbeat.observe(latencies_s)
            figures.newest_beat_ms = max(newest_ms, figures.newest_beat_ms or 0)

    def lost(self, flow: str, losses: Sequence["Loss"], now: float) -> list["Loss"]:
        """Losses a flow's copy found, counted once each (a copy stopped by `on_loss: stop`
        finds the same one at each restart); the new ones."""
        new = []
        with self._lock:
            figures = self._flows[flow]
            seen = {loss for _at, loss in figures.losses}
            for loss in losses:
                if loss in seen:
                    continue
                seen.add(loss)
                new.append(loss)
                key = (loss.topic, loss.kind)
                figures.lost[key] = figures.lost.get(key, 0) + (loss.records or 0)
                figures.losses_found[key] = figures.losses_found.get(key, 0) + 1
                figures.losses.append((now, loss))
            del figures.losses[:-LOSSES_KEPT]
        return new

    def losses_of(self, flow: str) -> list[tuple[float, "Loss"]]:
        with self._lock:
            return list(self._flows[flow].losses)

    def objectives(self, flow: str, judged: tuple["Judged", ...]) -> None:
        with self._lock:
            self._flows[flow].judged = judged

    def expect_heartbeats(self, flow: str) -> None:
        with self._lock:
            self._flows[flow].beats = True

    def snapshot(self, now: float) -> Snapshot:
        with self._lock:
            return Snapshot(
                time=now,
                owner=self.owner,
                info=dict(self.info),
                started_at=self.started_at,
                flows={flow: f.copied() for flow, f in self._flows.items()},
                changes=dict(self._changes),
                rounds=self._rounds,
                checkpoints_written=self._checkpoints_written,
                groups_synced=dict(self._groups_synced),
                errors=dict(self._errors),
            )


def quantile(
    bounds: Sequence[float], cumulative: Sequence[int], count: int, q: float
) -> float | None:
    """The q-quantile of a histogram's observations, as Prometheus' histogram_quantile
    estimates it: linear within the bucket it falls in; the highest finite bound when it falls
    beyond. None without observations."""
    if count <= 0:
        return None
    rank = q * count
    lower, below = 0.0, 0
    for bound, at_most in zip(bounds, cumulative, strict=True):
        if at_most >= rank:
            inside = at_most - below
            share = (rank - below) / inside if inside else 1.0
            return lower + (bound - lower) * share
        lower, below = bound, at_most
    return bounds[-1] if bounds else None


def difference(newer: Histogram, older: Histogram | None) -> Histogram:
    """The observations between two readings of one histogram (all of `newer` without an
    older one, or when it went down: a new driver)."""
    if older is None or newer.count < older.count:
        return newer
    return Histogram(
        newer.bounds,
        [a - b for a, b in zip(newer.cumulative, older.cumulative, strict=True)],
        newer.count - older.count,
        newer.total - older.total,
    )
