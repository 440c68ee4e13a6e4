"""The bounded history `topo dashboard` charts when no Prometheus is at hand.

Pure: the driver adds a Figures snapshot every few seconds; two tiers keep samples, one every
10 s for the last hour and one every minute for the last 24 hours (about 1,800 samples in all,
each with at most TOPICS_KEPT topics per flow, those that copied the most bytes);
`document()` gives the samples of a time range as the history document the dashboard reads
(docs/metrics.md). The driver saves `to_dict()` to its state
folder every minute and at stop, and reads it back when it starts, so the history outlives a
dashboard's and a driver's restart.

A sample holds the counters as they were (records and bytes copied, errors, restarts), the
gauges (lag, topics synced, state, checkpoint age per group) and, over the interval since the
tier's previous sample, the p50 and p99 latency (from the histograms' differences), the
heartbeat p99, and each topic's mean latency.
"""

from collections import deque
from collections.abc import Mapping
from typing import Any

from topology.telemetry.figures import Histogram, Snapshot, difference, quantile

TIERS = ((10.0, 360), (60.0, 1440))  # (seconds between samples, samples kept)
TOPICS_KEPT = 50  # per flow and sample: the topics that copied the most bytes
FORMAT = 1


class Tier:
    def __init__(self, step: float, kept: int) -> None:
        self.step = step
        self.samples: deque[dict[str, Any]] = deque(maxlen=kept)
        self.previous: dict[str, dict[str, Histogram]] = {}  # flow -> histograms last sampled
        self.topics_previous: dict[tuple[str, str], tuple[int, float]] = {}

    def due(self, now: float) -> bool:
        return not self.samples or now - self.samples[-1]["time"] >= self.step - 0.5

    def add(self, snapshot: Snapshot) -> None:
        self.samples.append(self._sample(snapshot))

    def _sample(self, snapshot: Snapshot) -> dict[str, Any]:
        flows: dict[str, Any] = {}
        topics: dict[str, Any] = {}
        groups: dict[str, Any] = {}
        for flow, figures in snapshot.flows.items():
            before = self.previous.get(flow, {})
            latency = difference(figures.latency, before.get("latency"))
            beats = difference(figures.heartbeat, before.get("heartbeat"))
            self.previous[flow] = {
                "latency": figures.latency,
                "heartbeat": figures.heartbeat,
            }
            lags = [snapshot.lag_seconds(t) for t in figures.topics.values()]
            known = [x for x in lags if x is not None]
            flows[flow] = {
                "state": figures.state,
                "records": figures.records,
                "bytes": figures.bytes,
                "lag_records": figures.lag,
                "lag_seconds": _round(max(known)) if known else None,
                "latency_p50_seconds": _round(_q(latency, 0.5)),
                "latency_p99_seconds": _round(_q(latency, 0.99)),
                "heartbeat_p99_seconds": _round(_q(beats, 0.99)),
                "topics_synced": figures.synced,
                "errors": sum(figures.errors.values()),
                "restarts": sum(figures.restarts.values()),
                "last_restart": figures.last_restart,
                "objectives": [judged.to_dict() for judged in figures.judged],
            }
            topics[flow] = {}
            busiest = sorted(figures.topics.items(), key=lambda item: (-item[1].bytes, item[0]))
            for name, topic in busiest[:TOPICS_KEPT]:
                count, total = self.topics_previous.get((flow, name), (0, 0.0))
                if topic.latency_count < count:  # a new driver: its counters started again
                    count, total = 0, 0.0
                self.topics_previous[(flow, name)] = (topic.latency_count, topic.latency_sum)
                measured = topic.latency_count - count
                topics[flow][name] = {
                    "records": topic.records,
                    "bytes": topic.bytes,
                    "lag_records": topic.lag,
                    "latency_mean_seconds": (
                        _round((topic.latency_sum - total) / measured) if measured else None
                    ),
                }
            groups[flow] = {
                group: _round(max(0.0, snapshot.time - newest / 1000))
                for group, newest in figures.checkpoints.items()
            }
        return {"time": round(snapshot.time, 3), "flows": flows, "topics": topics, "groups": groups}


class History:
    def __init__(self) -> None:
        self.tiers = [Tier(step, kept) for step, kept in TIERS]

    def add(self, snapshot: Snapshot) -> bool:
        """Sample the tiers that are due; True when the coarsest one took a sample (the
        moment to save)."""
        taken = False
        for tier in self.tiers:
            if tier.due(snapshot.time):
                tier.add(snapshot)
                taken = tier is self.tiers[-1]
        return taken

    def samples(self, since: float, until: float) -> tuple[float, list[dict[str, Any]]]:
        """The step and samples of [since, until]: from the finest tier that holds the range,
        or would (its retention reaches back to `since`: a driver younger than the range)."""
        for tier in self.tiers:
            newest = tier.samples[-1]["time"] if tier.samples else until
            reaches = newest - tier.step * ((tier.samples.maxlen or 0) + 1)  # a step's slack
            if since >= reaches or tier is self.tiers[-1]:
                return tier.step, [s for s in tier.samples if since <= s["time"] <= until]
        raise AssertionError("unreachable")

    def to_dict(self) -> dict[str, Any]:
        return {"format": FORMAT, "tiers": self.saved()}

    @classmethod
    def from_dict(cls, data: Any, now: float) -> "History":
        """A saved history (an unreadable or other-format one is dropped: it only charts)."""
        history = cls()
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            return history
        saved = data.get("tiers")
        if not isinstance(saved, list) or len(saved) != len(history.tiers):
            return history
        for tier, samples in zip(history.tiers, saved, strict=True):
            kept_for = tier.step * (tier.samples.maxlen or 0)
            for sample in samples if isinstance(samples, list) else []:
                if _well_formed(sample) and now - float(sample["time"]) <= kept_for:
                    tier.samples.append(sample)
        return history

    def saved(self) -> list[list[dict[str, Any]]]:
        """The samples as they are now (samples are never changed once taken: a copy of the
        lists is enough to serialise them outside any lock)."""
        return [list(tier.samples) for tier in self.tiers]


def _well_formed(sample: Any) -> bool:
    return (
        isinstance(sample, dict)
        and isinstance(sample.get("time"), int | float)
        and all(isinstance(sample.get(key), dict) for key in ("flows", "topics", "groups"))
    )


def document(
    owner: str,
    history: History,
    graph: list[dict[str, Any]],
    since: float,
    until: float,
    now: float,
    stale: bool = False,
) -> dict[str, Any]:
    """The history document (docs/metrics.md): what /history serves and the dashboard charts."""
    step, samples = history.samples(since, until)
    return {
        "owner": owner,
        "origin": "driver",
        "step_seconds": step,
        "now": now,
        "stale": stale,
        "graph": graph,
        "samples": samples,
    }


def _q(histogram: Histogram, q: float) -> float | None:
    return quantile(histogram.bounds, histogram.cumulative, histogram.count, q)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)
