"""The dashboard's history document from Prometheus: the PromQL for every series the page
charts, the parameters of their range queries, and the conversion of the answers.

Pure: no HTTP here. The caller asks Prometheus `GET /api/v1/query_range` with
`range_params(query, start, end, step)` for each of `queries(owner)`, then hands `history`
the `data` object of each answer under the query's name. The queries name only the metrics of
topology/telemetry/names.py.

Which topology: one Prometheus may scrape several drivers, and the driver's metrics carry no
owner label; only `topo_info{owner="..."}` names the topology a driver replicates. Prometheus
gives every series it scrapes the `job` and `instance` labels of its scrape target, so each
query keeps the series scraped from the same target as the owner's `topo_info`:

    topo_flow_up * on(job, instance) group_left() max by (job, instance) (topo_info{owner="demo"})

`topo_info` is always 1, so the values are unchanged; `max by (job, instance)` keeps one series
per target even while a restarted driver's old `topo_info` (another host label) is still seen.
A bare `on()` would not do: it keeps every driver's series as soon as the owner's driver is up.
This assumes a driver is one scrape target and relabelling keeps `job` and `instance` (the
defaults do); no Prometheus job per topology is needed.

Counters stay cumulative, as in the driver's own history (the page takes their rates, a value
that went down being a reset). A series a flow has not exported yet (prometheus_client makes a
labelled series at its first update) reads 0 for a count, None for a latency. A sample is made
for each step at which any flow, topic or group has a value.
"""

import math
from collections.abc import Iterator, Mapping
from typing import Any

WINDOW = "1m"  # the range of rate(): latency quantiles and means
STALE_AFTER = 15.0  # seconds past the range's newest step without the owner's topo_info
MAX_POINTS = 11_000  # points per series Prometheus answers in one range query
UNKNOWN = "unknown"  # the state of a flow no topo_flow_state series names

FLOW = "flow, source, target"
TOPIC = "flow, source, target, topic"
# The history document's fields of a flow and of a topic, each with its query's name (the same
# name) and whether Prometheus not having it means 0 (a count) or None (a latency, a time).
FLOW_COUNTS = ("records", "bytes", "lag_records", "topics_synced", "errors", "restarts")
FLOW_TIMES = (
    "latency_p50_seconds",
    "latency_p99_seconds",
    "heartbeat_p99_seconds",
    "last_restart",
)
TOPIC_COUNTS = ("records", "bytes", "lag_records")
TOPIC_PREFIX = "topic_"
GROUP_AGE = "group_checkpoint_age_seconds"
# Each declared objective's bound and whether the driver judged it breached (docs/objectives.md).
OBJECTIVE_BOUND = "objective_bound"
OBJECTIVE_BREACHED = "objective_breached"


def queries(owner: str, window: str = WINDOW) -> dict[str, str]:
    """The PromQL of each series of the history document, by name: `info` (the owner's driver
    is scraped), `state`, the flow fields, `topic_` + the topic fields, and the groups' age."""
    info = f'max by (job, instance) (topo_info{{owner="{_quoted(owner)}"}})'

    def mine(series: str) -> str:
        return f"{series} * on(job, instance) group_left() {info}"

    def rate(series: str) -> str:
        return mine(f"rate({series}[{window}])")

    def quantile(q: float, histogram: str) -> str:
        buckets = rate(f"{histogram}_bucket")
        return f"histogram_quantile({q}, sum by ({FLOW}, le) ({buckets}))"

    def mean(summary: str, by: str) -> str:
        spent, copied = rate(f"{summary}_sum"), rate(f"{summary}_count")
        return f"sum by ({by}) ({spent}) / sum by ({by}) ({copied})"

    return {
        "info": f'max(topo_info{{owner="{_quoted(owner)}"}})',
        "state": f"max by ({FLOW}, state) ({mine('topo_flow_state')}) == 1",
        "records": f"sum by ({FLOW}) ({mine('topo_records_copied_total')})",
        "bytes": f"sum by ({FLOW}) ({mine('topo_bytes_copied_total')})",
        "lag_records": f"sum by ({FLOW}) ({mine('topo_replication_lag_records')})",
        "lag_seconds": f"max by ({FLOW}) ({mine('topo_replication_lag_seconds')})",
        "latency_p50_seconds": quantile(0.5, "topo_replication_latency_seconds"),
        "latency_p99_seconds": quantile(0.99, "topo_replication_latency_seconds"),
        "heartbeat_p99_seconds": quantile(0.99, "topo_heartbeat_latency_seconds"),
        "topics_synced": f"sum by ({FLOW}) ({mine('topo_topics_synced')})",
        "errors": f"sum by ({FLOW}) ({mine('topo_errors_total')})",
        "restarts": f"sum by ({FLOW}) ({mine('topo_restarts_total')})",
        "last_restart": f"max by ({FLOW}) ({mine('topo_last_restart_time_seconds')})",
        "topic_records": f"sum by ({TOPIC}) ({mine('topo_records_copied_total')})",
        "topic_bytes": f"sum by ({TOPIC}) ({mine('topo_bytes_copied_total')})",
        "topic_lag_records": f"sum by ({TOPIC}) ({mine('topo_replication_lag_records')})",
        "topic_latency_mean_seconds": mean("topo_topic_replication_latency_seconds", TOPIC),
        GROUP_AGE: f"max by ({FLOW}, group) ({mine('topo_checkpoint_age_seconds')})",
        OBJECTIVE_BOUND: f"max by ({FLOW}, objective) ({mine('topo_objective')})",
        OBJECTIVE_BREACHED: f"max by ({FLOW}, objective) ({mine('topo_objective_breached')})",
    }


def range_params(query: str, start: float, end: float, step: float) -> dict[str, str]:
    """The URL parameters of `GET /api/v1/query_range` for `query` from `start` to `end`
    (unix seconds) every `step` seconds; ValueError for a range Prometheus would refuse."""
    if step <= 0 or end < start:
        raise ValueError(f"no range from {start} to {end} every {step} s")
    if (end - start) / step + 1 > MAX_POINTS:
        raise ValueError(f"{start} to {end} every {step} s is over {MAX_POINTS} points")
    return {"query": query, "start": _number(start), "end": _number(end), "step": _number(step)}


def history(
    owner: str,
    results: Mapping[str, Mapping[str, Any]],
    start: float,
    end: float,
    step: float,
    now: float,
) -> dict[str, Any]:
    """The history document of `owner` from the `data` of each range query of `queries` (by
    name; a missing one reads as no series) asked from `start` to `end` every `step`."""
    table = _Table(start, end, step)
    for name in (*FLOW_COUNTS, "lag_seconds", *FLOW_TIMES):
        for labels, points in _series(results, name):
            table.flow(labels, name, points)
    for labels, points in _series(results, "state"):
        table.state(labels, points)
    for name in (*(TOPIC_PREFIX + field for field in TOPIC_COUNTS), "topic_latency_mean_seconds"):
        for labels, points in _series(results, name):
            table.topic(labels, name.removeprefix(TOPIC_PREFIX), points)
    for labels, points in _series(results, GROUP_AGE):
        table.group(labels, points)
    for field, name in (("bound", OBJECTIVE_BOUND), ("breached", OBJECTIVE_BREACHED)):
        for labels, points in _series(results, name):
            table.objective(labels, field, points)
    scraped = [i for _, points in _series(results, "info") for i, value in table.on(points)]
    newest = table.time(max(scraped)) if scraped else None
    return {
        "owner": owner,
        "origin": "prometheus",
        "step_seconds": step,
        "now": now,
        "stale": newest is None or now - newest > step + STALE_AFTER,
        "graph": table.graph(),
        "samples": table.samples(),
    }


class _Table:
    """The values of the range queries by step: the index of `start + index * step`."""

    def __init__(self, start: float, end: float, step: float) -> None:
        self.start, self.step = start, step
        self.steps = math.floor((end - start) / step + 1e-9) + 1
        self.ends: dict[str, tuple[str, str]] = {}  # flow -> (source, target)
        self.flows: dict[str, dict[int, dict[str, float | None]]] = {}
        self.states: dict[str, dict[int, str]] = {}
        self.topics: dict[tuple[str, str], dict[int, dict[str, float | None]]] = {}
        self.groups: dict[tuple[str, str], dict[int, float | None]] = {}
        self.objectives: dict[tuple[str, str], dict[int, dict[str, float | None]]] = {}

    def time(self, index: int) -> float:
        return round(self.start + index * self.step, 3)

    def on(self, points: list[list[Any]]) -> Iterator[tuple[int, float | None]]:
        """Each point as (step index, value), None for NaN or an infinity, off-grid dropped."""
        for stamp, text in points:
            index = round((float(stamp) - self.start) / self.step)
            if 0 <= index < self.steps:
                value = float(text)
                yield index, value if math.isfinite(value) else None

    def _flow(self, labels: Mapping[str, str]) -> str:
        flow = labels["flow"]
        self.ends.setdefault(flow, (labels.get("source", "?"), labels.get("target", "?")))
        return flow

    def flow(self, labels: Mapping[str, str], field: str, points: list[list[Any]]) -> None:
        rows = self.flows.setdefault(self._flow(labels), {})
        for index, value in self.on(points):
            rows.setdefault(index, {})[field] = value

    def state(self, labels: Mapping[str, str], points: list[list[Any]]) -> None:
        flow = self._flow(labels)
        rows = self.flows.setdefault(flow, {})
        for index, value in self.on(points):
            rows.setdefault(index, {})
            if value == 1:
                states = self.states.setdefault(flow, {})
                state = labels.get("state", "unknown")
                states[index] = min(states.get(index, state), state)

    def topic(self, labels: Mapping[str, str], field: str, points: list[list[Any]]) -> None:
        rows = self.topics.setdefault((self._flow(labels), labels.get("topic", "")), {})
        for index, value in self.on(points):
            rows.setdefault(index, {})[field] = value

    def group(self, labels: Mapping[str, str], points: list[list[Any]]) -> None:
        rows = self.groups.setdefault((self._flow(labels), labels.get("group", "")), {})
        for index, value in self.on(points):
            rows[index] = value

    def objective(self, labels: Mapping[str, str], field: str, points: list[list[Any]]) -> None:
        key = (self._flow(labels), labels.get("objective", ""))
        rows = self.objectives.setdefault(key, {})
        for index, value in self.on(points):
            rows.setdefault(index, {})[field] = value

    def graph(self) -> list[dict[str, Any]]:
        """Every flow seen, with the newest state it had in the range."""
        return [
            {
                "flow": flow,
                "source": source,
                "target": target,
                "state": self._state(flow, max(self.states.get(flow, {}), default=-1)),
            }
            for flow, (source, target) in sorted(self.ends.items())
        ]

    def _state(self, flow: str, index: int) -> str:
        return self.states.get(flow, {}).get(index, UNKNOWN)

    def samples(self) -> list[dict[str, Any]]:
        indices = {i for rows in self.flows.values() for i in rows}
        indices |= {i for rows in self.topics.values() for i in rows}
        indices |= {i for rows in self.groups.values() for i in rows}
        return [self._sample(index) for index in sorted(indices)]

    def _sample(self, index: int) -> dict[str, Any]:
        flows = {
            flow: self._flow_entry(flow, index, rows[index])
            for flow, rows in sorted(self.flows.items())
            if index in rows
        }
        topics: dict[str, dict[str, Any]] = {}
        for (flow, topic), rows in sorted(self.topics.items()):
            if index in rows:
                values = rows[index]
                topics.setdefault(flow, {})[topic] = {
                    **{field: _count(values.get(field)) for field in TOPIC_COUNTS},
                    "latency_mean_seconds": values.get("latency_mean_seconds"),
                }
        groups: dict[str, dict[str, float | None]] = {}
        for (flow, group), ages in sorted(self.groups.items()):
            if index in ages:
                groups.setdefault(flow, {})[group] = ages[index]
        return {"time": self.time(index), "flows": flows, "topics": topics, "groups": groups}

    def _flow_entry(
        self, flow: str, index: int, values: Mapping[str, float | None]
    ) -> dict[str, Any]:
        restart = values.get("last_restart")
        return {
            "state": self._state(flow, index),
            **{field: _count(values.get(field)) for field in FLOW_COUNTS},
            "lag_seconds": values.get("lag_seconds") or 0.0,
            **{field: values.get(field) for field in FLOW_TIMES},
            "last_restart": restart if restart else None,  # 0: never restarted
            # As the driver judged them; Prometheus keeps no measure or since beside them.
            "objectives": [
                {
                    "objective": objective,
                    "bound": rows[index].get("bound"),
                    "value": None,
                    "since": None,
                    "breached": rows[index].get("breached") == 1,
                }
                for (of, objective), rows in sorted(self.objectives.items())
                if of == flow and index in rows and rows[index].get("bound") is not None
            ],
        }


def _series(
    results: Mapping[str, Mapping[str, Any]], name: str
) -> Iterator[tuple[Mapping[str, str], list[list[Any]]]]:
    """The (labels, [[unix time, "value"], ...]) of each series of one range query's answer."""
    data = results.get(name)
    if not data:
        return
    if data.get("resultType") != "matrix":
        raise ValueError(f"{name}: a range query answers a matrix, not {data.get('resultType')}")
    for series in data.get("result", []):
        labels = series.get("metric", {})
        if name != "info" and not labels.get("flow"):
            continue  # the driver's own errors (an empty flow label, which Prometheus drops)
        yield labels, series.get("values", [])


def _count(value: float | None) -> int:
    return 0 if value is None else int(value)


def _quoted(value: str) -> str:
    """A PromQL string literal's contents: backslashes and double quotes escaped."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
