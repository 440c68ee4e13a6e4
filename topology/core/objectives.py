"""A flow's objectives judged against what is measured (docs/objectives.md). Pure: the running
driver feeds each flow's measures with the time (`Watch.update`) and shows what it returns on
/readyz, in `topo status`, on /metrics and on the dashboard; `topo export alerts` writes the same
rules for Prometheus (`topology.core.render.alerts`).

A measure past its bound is *over*; an objective is *breached* once its measure has stayed over
for the objective's `for_seconds` on end, as an alerting rule with `for:` fires. `since` is when
the measure went over. An objective whose measure is unknown (nothing copied yet, no consumer
group checkpointed) is neither.
"""

from collections import deque
from dataclasses import dataclass

from topology.core.model import Objectives

# The objectives whose bound is a floor: breached below it, the others above it.
FLOORS = frozenset({"min_records_per_second"})
RATE_WINDOW = 60.0  # seconds of copied records the throughput is measured over (rate()[1m])
UNITS = {
    "lag_seconds": "s",
    "lag_records": " records",
    "heartbeat_age_seconds": "s",
    "checkpoint_age_seconds": "s",
    "min_records_per_second": " records/s",
}


@dataclass(frozen=True)
class Measures:
    """One flow's measures at one time; None where unknown."""

    lag_seconds: float | None = None
    lag_records: int | None = None
    heartbeat_age_seconds: float | None = None
    checkpoint_age_seconds: float | None = None
    records_copied: int = 0  # since the driver started: the throughput is its rate


@dataclass(frozen=True)
class Judged:
    objective: str
    bound: float
    value: float | None  # the measure now; None when unknown
    since: float | None  # when the measure went over its bound (unix time); None while within
    breached: bool  # over for the objective's for_seconds on end

    def to_dict(self) -> dict[str, object]:
        return {
            "objective": self.objective,
            "bound": self.bound,
            "value": self.value,
            "since": self.since,
            "breached": self.breached,
        }

    def describe(self) -> str:
        """`lag_seconds 45s, bound 30s`: the measure against its bound."""
        unit = UNITS.get(self.objective, "")
        value = "unknown" if self.value is None else f"{_number(self.value)}{unit}"
        relation = "at least" if self.objective in FLOORS else "at most"
        return f"{self.objective} {value} ({relation} {_number(self.bound)}{unit})"


def over(objective: str, bound: float, value: float | None) -> bool:
    if value is None:
        return False
    return value < bound if objective in FLOORS else value > bound


class Watch:
    """Since when each of one flow's objectives has been over its bound, and the flow's
    throughput over the last RATE_WINDOW seconds."""

    def __init__(self, objectives: Objectives) -> None:
        self.objectives = objectives
        self.bounds = objectives.declared()
        self._since: dict[str, float] = {}
        self._copied: deque[tuple[float, int]] = deque()
        self._floored = "min_records_per_second" in self.bounds

    def update(self, now: float, measures: Measures) -> tuple[Judged, ...]:
        """Each declared objective judged at `now` (unix time)."""
        rate = self._rate(now, measures.records_copied) if self._floored else None
        values = {
            "lag_seconds": measures.lag_seconds,
            "lag_records": None if measures.lag_records is None else float(measures.lag_records),
            "heartbeat_age_seconds": measures.heartbeat_age_seconds,
            "checkpoint_age_seconds": measures.checkpoint_age_seconds,
            # A floor on throughput holds while records wait to be copied: an idle source
            # copies nothing and breaks no promise.
            "min_records_per_second": rate if measures.lag_records else None,
        }
        found = []
        for objective, bound in self.bounds.items():
            value = values[objective]
            if over(objective, bound, value):
                since = self._since.setdefault(objective, now)
                breached = now - since >= self.objectives.for_seconds
            else:
                self._since.pop(objective, None)
                since, breached = None, False
            found.append(Judged(objective, bound, value, since, breached))
        return tuple(found)

    def _rate(self, now: float, copied: int) -> float | None:
        """Records a second over the window; None until the window holds half a window."""
        samples = self._copied
        if samples and copied < samples[-1][1]:
            samples.clear()  # the counters started again
        samples.append((now, copied))
        while len(samples) > 1 and now - samples[1][0] >= RATE_WINDOW:
            samples.popleft()
        first_time, first_count = samples[0]
        if now - first_time < RATE_WINDOW / 2:
            return None
        return (copied - first_count) / (now - first_time)


def breached(judged: tuple[Judged, ...]) -> list[Judged]:
    return [each for each in judged if each.breached]


def _number(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:.1f}"
