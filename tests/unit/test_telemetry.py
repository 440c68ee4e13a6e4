"""The driver's figures, their Prometheus rendering, the history, readiness and log lines:
pure parts, checked exactly (the integration test scrapes a real driver)."""

import json
import re
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from topology.core.progress import LATENCY_BUCKETS, FlowProgress, TopicCopied
from topology.telemetry import logline
from topology.telemetry.collector import FiguresCollector
from topology.telemetry.figures import Figures, Histogram, difference, quantile
from topology.telemetry.health import readiness
from topology.telemetry.history import History, document
from topology.telemetry.names import CATALOGUE, series_names

FLOW = "east->west"


def _figures() -> Figures:
    return Figures(
        "demo",
        {"mode": "continuous", "runner": "local", "host": "h"},
        {FLOW: ("east", "west")},
        100.0,
    )


def _copied(
    figures: Figures, latencies_ms: list[int], topics: dict[str, tuple[int, int, int, int | None]]
) -> None:
    """A copy loop's report of these copies (their latencies; per topic its records, bytes,
    latency sum and newest source timestamp), given to the figures as the driver gives it."""
    buckets = tuple(sum(1 for v in latencies_ms if v <= bound * 1000) for bound in LATENCY_BUCKETS)
    made = FlowProgress(
        run="r",
        sequence=0,
        records=sum(t[0] for t in topics.values()),
        bytes=sum(t[1] for t in topics.values()),
        latency_ms=sum(latencies_ms),
        buckets=buckets,
        topics={name: TopicCopied(*t) for name, t in topics.items()},
        positions={},
        ends={},
    )
    figures.progress(FLOW, made)


def _scrape(figures: Figures, now: float) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    registry = CollectorRegistry()
    registry.register(FiguresCollector(lambda: figures.snapshot(now)))
    text = generate_latest(registry).decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_a_report_is_counted_per_topic_with_its_latencies_and_lag() -> None:
    figures = _figures()
    figures.state(FLOW, "running")
    _copied(
        figures, [40, 300, 2000], {"orders": (2, 20, 340, 5000), "payments": (1, 7, 2000, 4000)}
    )
    figures.lag(FLOW, {"orders": 4, "payments": 0})
    found = _scrape(figures, 10.0)
    labels = {"flow": FLOW, "source": "east", "target": "west"}

    def value(name: str, **more: str) -> float:
        return found[(name, frozenset({**labels, **more}.items()))]

    assert value("topo_records_copied_total", topic="orders") == 2
    assert value("topo_bytes_copied_total", topic="payments") == 7
    assert value("topo_replication_lag_records", topic="orders") == 4
    assert value("topo_replication_lag_seconds", topic="orders") == 5.0  # 10 s - 5,000 ms
    assert value("topo_replication_lag_seconds", topic="payments") == 0
    assert value("topo_replication_latency_seconds_bucket", le="0.05") == 1
    assert value("topo_replication_latency_seconds_bucket", le="0.5") == 2
    assert value("topo_replication_latency_seconds_bucket", le="+Inf") == 3
    assert value("topo_replication_latency_seconds_sum") == 2.34
    assert value("topo_topic_replication_latency_seconds_sum", topic="orders") == 0.34
    assert value("topo_flow_up") == 1 and value("topo_flow_state", state="running") == 1


def test_the_mean_latency_of_a_topic_is_its_copies_and_its_lag_in_seconds_its_newest() -> None:
    figures = _figures()
    _copied(figures, [100, 200, 300], {"orders": (3, 30, 600, 7000)})
    found = _scrape(figures, 10.0)
    labels = {"flow": FLOW, "source": "east", "target": "west", "topic": "orders"}

    def value(name: str) -> float:
        return found[(name, frozenset(labels.items()))]

    assert value("topo_records_copied_total") == 3
    assert value("topo_bytes_copied_total") == 30
    assert value("topo_topic_replication_latency_seconds_sum") == 0.6
    assert value("topo_topic_replication_latency_seconds_count") == 3
    figures.lag(FLOW, {"orders": 2})
    assert _scrape(figures, 10.0)[("topo_replication_lag_seconds", frozenset(labels.items()))] == 3


def test_every_exported_series_is_in_the_catalogue_and_documented() -> None:
    figures = _figures()
    _copied(figures, [10], {"t": (1, 1, 10, 1)})
    figures.error(FLOW, "query")
    figures.error(None, "offsets")
    figures.restart(FLOW, "retry", 5.0)
    figures.change("west", "topic", "create", "done")
    figures.offsets_round(2, {"billing": 3})
    figures.checkpoints(FLOW, {"billing": 1000})
    figures.heartbeats(FLOW, [0.2], 1000)
    exported = {name for name, _labels in _scrape(figures, 10.0)}
    assert exported <= series_names()
    page = (Path(__file__).parents[2] / "docs" / "metrics.md").read_text()
    documented = set(re.findall(r"^\| `(topo_[a-z_]+)` \|", page, re.MULTILINE))
    assert documented == {metric.name for metric in CATALOGUE}
    assert all(m.name.endswith("_total") for m in CATALOGUE if m.kind == "counter")


def test_quantiles_interpolate_within_buckets_as_histogram_quantile_does() -> None:
    assert quantile((1.0, 2.0), (0, 0), 0, 0.5) is None
    assert quantile((1.0, 2.0), (2, 4), 4, 0.5) == 1.0
    assert quantile((1.0, 2.0), (2, 4), 4, 0.75) == 1.5
    assert quantile((1.0, 2.0), (2, 4), 6, 0.99) == 2.0  # beyond the highest bound
    older = Histogram((1.0,), [1], 1, 0.5)
    newer = Histogram((1.0,), [3], 4, 5.0)
    assert difference(newer, older) == Histogram((1.0,), [2], 3, 4.5)
    assert difference(older, newer) is older  # went down: a new driver


def test_the_history_keeps_tiers_samples_intervals_and_survives_a_save() -> None:
    figures, history = _figures(), History()
    figures.state(FLOW, "running")
    for second in range(0, 130, 2):
        if second == 20:
            _copied(figures, [100] * 9 + [3000], {"t": (10, 100, 3900, 1)})
        history.add(figures.snapshot(1000.0 + second))
    step, fine = history.samples(1000.0, 1130.0)
    assert step == 10.0 and [s["time"] for s in fine][:3] == [1000.0, 1010.0, 1020.0]
    flow = fine[2]["flows"][FLOW]
    assert flow["records"] == 10 and flow["latency_p50_seconds"] == 0.078  # 0.05 + 5/9 of 0.05
    assert flow["latency_p99_seconds"] == 4.75  # 0.9 of the way through 2.5 to 5 s
    assert fine[2]["topics"][FLOW]["t"]["latency_mean_seconds"] == 0.39
    assert fine[3]["flows"][FLOW]["latency_p50_seconds"] is None  # nothing copied since
    step, coarse = history.samples(1130.0 - 7200, 1130.0)  # beyond the fine tier's hour
    assert step == 60.0 and [s["time"] for s in coarse] == [1000.0, 1060.0, 1120.0]
    saved = json.loads(json.dumps(history.to_dict()))
    assert History.from_dict(saved, 1130.0).samples(1000.0, 1130.0)[1] == fine
    assert History.from_dict(saved, 1000.0 + 7 * 3600).samples(0, 1e9)[1] == coarse
    assert History.from_dict(saved, 1000.0 + 25 * 3600).samples(0, 1e9)[1] == []
    assert History.from_dict({"format": 99}, 0).samples(0, 1e9)[1] == []
    graph = [{"flow": FLOW, "source": "east", "target": "west", "state": "running"}]
    made = document("demo", history, graph, 1100.0, 1130.0, 1131.0)
    assert made["origin"] == "driver"
    assert [s["time"] for s in made["samples"]] == [1100.0, 1110.0, 1120.0]


def test_ready_while_running_keeping_up_and_heartbeats_arrive() -> None:
    figures = _figures()
    figures.expect_heartbeats(FLOW)
    assert readiness(figures.snapshot(100.0), 10) == {"ready": False, "unready": {FLOW: "starting"}}
    figures.state(FLOW, "running")
    assert readiness(figures.snapshot(100.0), 10)["unready"] == {FLOW: "no heartbeat copied yet"}
    figures.heartbeats(FLOW, [0.1], 95_000)
    assert readiness(figures.snapshot(100.0), 10) == {"ready": True, "unready": {}}
    assert readiness(figures.snapshot(130.0), 10)["unready"] == {
        FLOW: "no heartbeat copied for 35s"
    }
    figures.lag(FLOW, {"t": 11})
    assert readiness(figures.snapshot(100.0), 10)["unready"] == {
        FLOW: "11 records behind (more than 10)"
    }
    figures.state(FLOW, "paused")  # asked to wait: its lag and silence are no problem
    assert readiness(figures.snapshot(130.0), 10) == {"ready": True, "unready": {}}


def test_log_lines_are_text_or_one_json_object_naming_the_flow() -> None:
    assert logline.line("hello", "text", 0.0, event="driver") == "topo: hello"
    found = json.loads(
        logline.line(f"{FLOW}: 5 records", "json", 1.5, event="progress", flows=[FLOW])
    )
    assert found == {
        "time": "1970-01-01T00:00:01.500Z",
        "level": "info",
        "flow": FLOW,
        "event": "progress",
        "message": f"{FLOW}: 5 records",
    }
    other = json.loads(logline.line("offsets: 2 written", "json", 0, event="driver", flows=[FLOW]))
    assert other["flow"] is None


def test_a_topic_the_copy_no_longer_reads_has_no_lag_and_a_report_of_nothing_counts_zero() -> None:
    figures = _figures()
    figures.lag(FLOW, {"gone": 500, "kept": 1})
    figures.lag(FLOW, {"kept": 0})
    snapshot = figures.snapshot(1.0)
    assert snapshot.flows[FLOW].topics["gone"].lag is None and snapshot.flows[FLOW].lag == 0
    _copied(figures, [], {})  # every record it read filtered out
    assert figures.snapshot(1.0).flows[FLOW].records == 0


def test_a_damaged_saved_history_is_dropped_sample_by_sample() -> None:
    good = {"time": 100.0, "flows": {}, "topics": {}, "groups": {}}
    saved = {"format": 1, "tiers": [[{"time": None}, "x", {"time": "soon"}, good], []]}
    assert History.from_dict(saved, 110.0).samples(0, 1e9)[1] == [good]


def test_a_snapshot_holds_its_own_copy_of_every_container_of_a_flows_figures() -> None:
    import copy
    import dataclasses

    from topology.telemetry.figures import FlowFigures, TopicFigures

    flow = FlowFigures("a", "b", states={"running"}, errors={"copy": 1})
    flow.topic("t").records = 3
    flow.latency.observe([0.1])
    copied = flow.copied()
    assert copied == copy.deepcopy(flow)
    for spec in dataclasses.fields(FlowFigures):  # a new mutable field must be copied too
        value = getattr(flow, spec.name)
        if isinstance(value, (list, dict, set, Histogram)):
            assert getattr(copied, spec.name) is not value, spec.name
    assert copied.latency.cumulative is not flow.latency.cumulative
    assert copied.topics["t"] is not flow.topics["t"]
    flow.topic("t").records = 9
    assert copied.topics["t"] == TopicFigures(records=3)
