"""The Prometheus collector: the metrics of names.CATALOGUE, rendered from a Figures snapshot
at each scrape (prometheus_client's custom-collector interface)."""

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector

from topology.core.runstate import FlowState
from topology.telemetry.figures import FlowFigures, Histogram, Snapshot
from topology.telemetry.names import BY_NAME

STATES = tuple(state.value for state in FlowState if state is not FlowState.STOPPING)


def _family(name: str) -> Any:
    metric = BY_NAME[name]
    labels = list(metric.labels)
    documentation = metric.help
    if metric.kind == "counter":  # prometheus_client appends _total itself
        return CounterMetricFamily(name.removesuffix("_total"), documentation, labels=labels)
    if metric.kind == "gauge":
        return GaugeMetricFamily(name, documentation, labels=labels)
    if metric.kind == "histogram":
        return HistogramMetricFamily(name, documentation, labels=labels)
    return SummaryMetricFamily(name, documentation, labels=labels)


def _buckets(histogram: Histogram) -> list[tuple[str, float]]:
    found = [
        (repr(float(b)), float(c))
        for b, c in zip(histogram.bounds, histogram.cumulative, strict=True)
    ]
    return [*found, ("+Inf", float(histogram.count))]


class FiguresCollector(Collector):
    def __init__(self, snapshot: Callable[[], Snapshot]) -> None:
        self._snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        now = self._snapshot()
        families: dict[str, Any] = {name: _family(name) for name in BY_NAME}
        info = now.info
        families["topo_info"].add_metric(
            [now.owner, info.get("mode", ""), info.get("runner", ""), info.get("host", "")], 1
        )
        families["topo_start_time_seconds"].add_metric([], now.started_at)
        for flow, figures in now.flows.items():
            self._flow(families, now, flow, figures)
        for (cluster, resource, action, outcome), count in sorted(now.changes.items()):
            families["topo_changes_total"].add_metric([cluster, resource, action, outcome], count)
        for kind, count in sorted(now.errors.items()):
            families["topo_errors_total"].add_metric(["", "", "", kind], count)
        families["topo_checkpoint_rounds_total"].add_metric([], now.rounds)
        families["topo_checkpoints_written_total"].add_metric([], now.checkpoints_written)
        for group, count in sorted(now.groups_synced.items()):
            families["topo_groups_synced_total"].add_metric([group], count)
        yield from families.values()

    @staticmethod
    def _flow(families: dict[str, Any], now: Snapshot, flow: str, figures: FlowFigures) -> None:
        labels = [flow, figures.source, figures.target]
        add = {name: family.add_metric for name, family in families.items()}
        add["topo_flow_up"](labels, 1 if figures.state == "running" else 0)
        for state in sorted(figures.states | {figures.state}):
            add["topo_flow_state"]([*labels, state], 1 if state == figures.state else 0)
        for name, topic in sorted(figures.topics.items()):
            at = [*labels, name]
            add["topo_records_copied_total"](at, topic.records)
            add["topo_bytes_copied_total"](at, topic.bytes)
            if topic.lag is not None:
                add["topo_replication_lag_records"](at, topic.lag)
            behind = now.lag_seconds(topic)
            if behind is not None:
                add["topo_replication_lag_seconds"](at, behind)
            if topic.latency_count:
                families["topo_topic_replication_latency_seconds"].add_metric(
                    at, count_value=topic.latency_count, sum_value=topic.latency_sum
                )
        for name, histogram in (
            ("topo_replication_latency_seconds", figures.latency),
            ("topo_heartbeat_latency_seconds", figures.heartbeat),
        ):
            families[name].add_metric(
                labels, buckets=_buckets(histogram), sum_value=histogram.total
            )
        add["topo_topics_synced"](labels, figures.synced)
        add["topo_partitions_followed"](labels, figures.partitions)
        add["topo_topics_discovered_total"](labels, figures.discovered)
        for kind, count in sorted(figures.errors.items()):
            add["topo_errors_total"]([*labels, kind], count)
        for reason, count in sorted(figures.restarts.items()):
            add["topo_restarts_total"]([*labels, reason], count)
        if figures.last_restart is not None:
            add["topo_last_restart_time_seconds"](labels, figures.last_restart)
        for group, newest_ms in sorted(figures.checkpoints.items()):
            age = max(0.0, now.time - newest_ms / 1000)
            add["topo_checkpoint_age_seconds"]([*labels, group], age)
        for (source_topic, kind), count in sorted(figures.losses_found.items()):
            add["topo_losses_total"]([*labels, source_topic, kind], count)
            add["topo_records_lost_total"](
                [*labels, source_topic, kind], figures.lost.get((source_topic, kind), 0)
            )
        beat_age = now.heartbeat_age(figures)
        if beat_age is not None:
            add["topo_heartbeat_age_seconds"](labels, beat_age)
        for judged in figures.judged:
            add["topo_objective"]([*labels, judged.objective], judged.bound)
            add["topo_objective_breached"]([*labels, judged.objective], int(judged.breached))
