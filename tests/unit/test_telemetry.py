"""The driver's figures, their Prometheus rendering, the history, readiness and log lines:
pure parts, checked exactly (the integration test scrapes a real driver)."""

import json
import re
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from topology.core.progress import LATENCY_BUCKETS, OBSERVED, counted, from_query, unpacked
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


def _batch(
    latencies_ms: list[int], topics: dict[int, tuple[int, int, int, int | None]], size: int = 0
) -> dict[str, object]:
    """Observed metrics as a query gives them: CopyFigures' output packed as its Java source
    packs it (`size`: the batch's bytes, when it has no per-topic figures)."""
    size = size or sum(figures[1] for figures in topics.values())
    packed: list[int | None] = [len(latencies_ms), size, sum(latencies_ms)]
    packed += [sum(1 for v in latencies_ms if v <= bound * 1000) for bound in LATENCY_BUCKETS]
    for index in range(len(topics)):
        packed += list(topics[index])
    text = ",".join("" if n is None else str(n) for n in packed)
    return {"figures": text}


def _ran(
    figures: Figures, observed: dict[str, Any], topics: list[str], rows: int, seconds: float
) -> None:
    """A Spark batch that ran with these observed metrics, read as `progress.from_query`
    reads it and given to the figures as the driver gives every copy's progress."""
    progress = {
        "runId": "r",
        "batchId": 0,
        "numInputRows": rows,
        "sources": [],
        "durationMs": {"addBatch": 1, "triggerExecution": seconds * 1000},
        "observedMetrics": {OBSERVED: observed},
    }
    made = from_query(progress, topics)
    assert made is not None
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


def test_a_batch_is_counted_per_topic_with_its_latencies_and_lag() -> None:
    figures = _figures()
    figures.state(FLOW, "running")
    _ran(
        figures,
        _batch([40, 300, 2000], {0: (2, 20, 340, 5000), 1: (1, 7, 2000, 4000)}),
        ["orders", "payments"],
        3,
        0.7,
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
    assert value("topo_batch_duration_seconds_count") == 1
    assert value("topo_flow_up") == 1 and value("topo_flow_state", state="running") == 1


def test_a_query_of_one_topic_gives_the_topic_the_batchs_figures() -> None:
    figures = _figures()
    observed = _batch([100, 200, 300], {0: (3, 30, 600, 7000)})
    _ran(figures, observed, ["orders"], 3, 0.1)
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


def test_a_query_of_too_many_topics_counts_per_flow_and_keeps_its_latencies() -> None:
    figures = _figures()
    observed = _batch([100, 3000], {}, size=12)  # CopyFigures of no topics
    _ran(figures, observed, [f"t{i}" for i in range(60)], 2, 0.1)
    found = _scrape(figures, 10.0)
    labels = {"flow": FLOW, "source": "east", "target": "west"}
    assert found[("topo_records_copied_total", frozenset({**labels, "topic": ""}.items()))] == 2
    assert found[("topo_bytes_copied_total", frozenset({**labels, "topic": ""}.items()))] == 12
    bucket = frozenset({**labels, "le": "0.1"}.items())
    assert found[("topo_replication_latency_seconds_bucket", bucket)] == 1
    assert found[("topo_replication_latency_seconds_sum", frozenset(labels.items()))] == 3.1


def test_figures_of_an_unexpected_shape_are_not_read_as_topics() -> None:
    assert unpacked("1,2,3", 1) is None
    assert unpacked("x,0,0" + ",0" * len(LATENCY_BUCKETS), 0) is None
    values = unpacked("1,10,5" + ",1" * len(LATENCY_BUCKETS) + ",1,10,5,", 1)
    assert values is not None and values.topics == [(1, 10, 5, None)]
    assert (values.records, values.bytes, values.latency_ms) == (1, 10, 5)


def test_a_batch_counts_from_whichever_figures_its_query_observed() -> None:
    head = "7,700,0" + ",7" * len(LATENCY_BUCKETS)
    assert counted({"figures": head + ",7,700,0,1"}, 9) == (7, 700)
    assert counted({"figures": head + ",7,700,0,1,0,0,0,"}, 9) == (7, 700)  # a query since
    assert counted({"records": 0, "bytes": 0}, 9) == (0, 0)  # restarted; all filtered out
    assert counted({}, 9) == (9, 0)  # real-time mode: nothing observed


def test_every_exported_series_is_in_the_catalogue_and_documented() -> None:
    figures = _figures()
    _ran(figures, _batch([10], {0: (1, 1, 10, 1)}), ["t"], 1, 0.1)
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
            _ran(figures, _batch([100] * 9 + [3000], {0: (10, 100, 3900, 1)}), ["t"], 10, 1)
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


def test_a_topic_the_query_no_longer_reads_has_no_lag_and_filtered_batches_count_zero() -> None:
    figures = _figures()
    figures.lag(FLOW, {"gone": 500, "kept": 1})
    figures.lag(FLOW, {"kept": 0})
    snapshot = figures.snapshot(1.0)
    assert snapshot.flows[FLOW].topics["gone"].lag is None and snapshot.flows[FLOW].lag == 0
    _ran(figures, {"records": 0, "bytes": 0}, [], 42, 0.1)  # all 42 filtered out
    assert figures.snapshot(1.0).flows[FLOW].records == 0


def test_a_damaged_saved_history_is_dropped_sample_by_sample() -> None:
    good = {"time": 100.0, "flows": {}, "topics": {}, "groups": {}}
    saved = {"format": 1, "tiers": [[{"time": None}, "x", {"time": "soon"}, good], []]}
    assert History.from_dict(saved, 110.0).samples(0, 1e9)[1] == [good]
