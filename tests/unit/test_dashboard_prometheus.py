"""The dashboard's history document from Prometheus (topology.dashboard.prometheus): its
queries name only catalogued metrics and keep one topology's series, and canned query_range
answers turn into the document the page charts."""

import re
from typing import Any

import pytest

from topology.dashboard import prometheus
from topology.telemetry.names import series_names

OWNER = "demo"
START, STEP = 1_732_349_900.0, 10.0
END = START + 3 * STEP  # four steps: START, +10, +20, +30
EW = {"flow": "east->west", "source": "east", "target": "west"}
WE = {"flow": "west->east", "source": "west", "target": "east"}
METRIC = re.compile(r"\btopo_[A-Za-z0-9_:]*")


def matrix(*series: tuple[dict[str, str], dict[float, str]]) -> dict[str, Any]:
    """A query_range answer's `data`: each series' labels and its values by offset from START."""
    return {
        "resultType": "matrix",
        "result": [
            {"metric": labels, "values": [[START + at, value] for at, value in values.items()]}
            for labels, values in series
        ],
    }


def every_step(value: str) -> dict[float, str]:
    return {0: value, 10: value, 20: value, 30: value}


RESULTS = {
    "info": matrix(({}, every_step("1"))),
    "state": matrix(
        ({**EW, "state": "starting"}, {0: "1"}),
        ({**EW, "state": "running"}, {10: "1", 20: "1", 30: "1"}),
        ({**WE, "state": "waiting for topics"}, {20: "1", 30: "1"}),
    ),
    "records": matrix((EW, {0: "0", 10: "1200", 20: "1500", 30: "40"})),
    "bytes": matrix((EW, {0: "0", 10: "123456", 20: "150000", 30: "4000"})),
    "lag_records": matrix((EW, {0: "7", 10: "0", 20: "0", 30: "3"})),
    "lag_seconds": matrix((EW, {0: "2.5", 10: "0", 20: "0", 30: "0.25"})),
    "latency_p50_seconds": matrix((EW, {0: "NaN", 10: "0.6", 20: "0.5", 30: "0.55"})),
    "latency_p99_seconds": matrix((EW, {0: "NaN", 10: "1.1", 20: "0.9", 30: "+Inf"})),
    "heartbeat_p99_seconds": matrix((EW, {10: "0.9", 20: "0.8", 30: "0.85"})),
    "topics_synced": matrix((EW, every_step("2")), (WE, {20: "0", 30: "0"})),
    "errors": matrix((EW, {30: "1"})),
    "restarts": matrix((EW, {30: "1"})),
    "last_restart": matrix((EW, {0: "0", 10: "0", 20: "0", 30: "1732349925.5"})),
    "topic_records": matrix(
        ({**EW, "topic": "orders"}, {10: "1000", 20: "1200", 30: "30"}),
        ({**EW, "topic": "payments"}, {10: "200", 20: "300", 30: "10"}),
    ),
    "topic_bytes": matrix(
        ({**EW, "topic": "orders"}, {10: "100000", 20: "120000", 30: "3000"}),
        ({**EW, "topic": "payments"}, {10: "23456", 20: "30000", 30: "1000"}),
    ),
    "topic_lag_records": matrix(({**EW, "topic": "orders"}, {10: "0", 20: "0", 30: "3"})),
    "topic_latency_mean_seconds": matrix(
        ({**EW, "topic": "orders"}, {10: "0.5", 20: "NaN", 30: "0.4"}),
        ({**EW, "topic": "payments"}, {10: "0.7", 20: "0.6", 30: "NaN"}),
    ),
    "group_checkpoint_age_seconds": matrix(({**EW, "group": "billing"}, {20: "12.5", 30: "2"})),
    "objective_bound": matrix(({**EW, "objective": "lag_seconds"}, {20: "1", 30: "1"})),
    "objective_breached": matrix(({**EW, "objective": "lag_seconds"}, {20: "0", 30: "1"})),
}


def flow(**numbers: Any) -> dict[str, Any]:
    """A flow's entry of a sample: what Prometheus had not yet, 0 or None."""
    return {
        "state": "unknown",
        "records": 0,
        "bytes": 0,
        "lag_records": 0,
        "lag_seconds": 0.0,
        "latency_p50_seconds": None,
        "latency_p99_seconds": None,
        "heartbeat_p99_seconds": None,
        "topics_synced": 0,
        "errors": 0,
        "restarts": 0,
        "last_restart": None,
        "objectives": [],
        **numbers,
    }


def judged(breached: bool) -> dict[str, Any]:
    """The lag_seconds objective (bound 1 s) as Prometheus has it: no measure, no since."""
    return {
        "objective": "lag_seconds",
        "bound": 1.0,
        "value": None,
        "since": None,
        "breached": breached,
    }


def topic(records: int, size: int, lag: int, mean: float | None) -> dict[str, Any]:
    return {"records": records, "bytes": size, "lag_records": lag, "latency_mean_seconds": mean}


EXPECTED_SAMPLES = [
    {
        "time": START,
        "flows": {
            "east->west": flow(state="starting", lag_records=7, lag_seconds=2.5, topics_synced=2),
        },
        "topics": {},
        "groups": {},
    },
    {
        "time": START + 10,
        "flows": {
            "east->west": flow(
                state="running",
                records=1200,
                bytes=123456,
                latency_p50_seconds=0.6,
                latency_p99_seconds=1.1,
                heartbeat_p99_seconds=0.9,
                topics_synced=2,
            ),
        },
        "topics": {
            "east->west": {
                "orders": topic(1000, 100000, 0, 0.5),
                "payments": topic(200, 23456, 0, 0.7),
            }
        },
        "groups": {},
    },
    {
        "time": START + 20,
        "flows": {
            "east->west": flow(
                state="running",
                records=1500,
                bytes=150000,
                latency_p50_seconds=0.5,
                latency_p99_seconds=0.9,
                heartbeat_p99_seconds=0.8,
                topics_synced=2,
                objectives=[judged(breached=False)],
            ),
            "west->east": flow(state="waiting for topics"),
        },
        "topics": {
            "east->west": {
                "orders": topic(1200, 120000, 0, None),
                "payments": topic(300, 30000, 0, 0.6),
            }
        },
        "groups": {"east->west": {"billing": 12.5}},
    },
    {
        "time": START + 30,
        "flows": {
            "east->west": flow(
                state="running",
                records=40,
                bytes=4000,
                lag_records=3,
                lag_seconds=0.25,
                latency_p50_seconds=0.55,
                heartbeat_p99_seconds=0.85,
                topics_synced=2,
                errors=1,
                restarts=1,
                last_restart=1732349925.5,
                objectives=[judged(breached=True)],
            ),
            "west->east": flow(state="waiting for topics"),
        },
        "topics": {
            "east->west": {
                "orders": topic(30, 3000, 3, 0.4),
                "payments": topic(10, 1000, 0, None),
            }
        },
        "groups": {"east->west": {"billing": 2.0}},
    },
]


def test_range_answers_become_the_history_document() -> None:
    document = prometheus.history(OWNER, RESULTS, START, END, STEP, now=END + 5)
    assert document == {
        "owner": OWNER,
        "origin": "prometheus",
        "step_seconds": STEP,
        "now": END + 5,
        "stale": False,
        "graph": [
            {"flow": "east->west", "source": "east", "target": "west", "state": "running"},
            {
                "flow": "west->east",
                "source": "west",
                "target": "east",
                "state": "waiting for topics",
            },
        ],
        "samples": EXPECTED_SAMPLES,
    }


@pytest.mark.parametrize(
    ("info", "now", "stale"),
    [
        (every_step("1"), END + STEP + prometheus.STALE_AFTER, False),
        (every_step("1"), END + STEP + prometheus.STALE_AFTER + 1, True),
        ({0: "1", 10: "1"}, END + 5, False),  # within a step and STALE_AFTER
        ({0: "1"}, END + 5, True),  # no longer scraped: the driver is gone
        ({}, END + 5, True),
    ],
)
def test_status_is_stale_when_the_owners_driver_was_not_scraped_lately(
    info: dict[float, str], now: float, stale: bool
) -> None:
    results = {**RESULTS, "info": matrix(({}, info)) if info else matrix()}
    assert prometheus.history(OWNER, results, START, END, STEP, now)["stale"] is stale


def test_nothing_scraped_yet_is_an_empty_history() -> None:
    document = prometheus.history(OWNER, {}, START, END, STEP, now=END)
    assert (document["graph"], document["samples"], document["stale"]) == ([], [], True)


def test_points_off_the_range_are_left_out_and_a_state_not_1_is_not_current() -> None:
    results = {
        "records": matrix((EW, {-10: "5", 0: "1", 30.004: "9", 40: "10"})),
        "state": matrix(({**EW, "state": "failed"}, {0: "0", 30: "0"})),
    }
    samples = prometheus.history(OWNER, results, START, END, STEP, now=END)["samples"]
    assert [(s["time"], s["flows"]["east->west"]["records"]) for s in samples] == [
        (START, 1),
        (END, 9),
    ]
    assert {s["flows"]["east->west"]["state"] for s in samples} == {"unknown"}


def test_an_instant_answer_is_refused() -> None:
    with pytest.raises(ValueError, match="matrix"):
        prometheus.history(OWNER, {"records": {"resultType": "vector", "result": []}}, 0, 1, 1, 1)


def test_every_query_names_only_catalogued_metrics() -> None:
    known = series_names()
    for name, query in prometheus.queries(OWNER).items():
        named = set(METRIC.findall(query))
        assert named, name
        assert named <= known, (name, named - known)


def test_every_query_has_a_result_the_history_reads() -> None:
    names = set(prometheus.queries(OWNER))
    assert names == set(RESULTS)


def test_every_query_keeps_the_series_of_the_owners_driver_only() -> None:
    join = 'on(job, instance) group_left() max by (job, instance) (topo_info{owner="demo"})'
    for name, query in prometheus.queries(OWNER).items():
        if name == "info":
            assert query == 'max(topo_info{owner="demo"})'
            continue
        selectors = METRIC.findall(query.replace(join, ""))
        assert query.count(join) == len(selectors) > 0, (name, query)


def test_the_queries_read_as_promql() -> None:
    queries = prometheus.queries(OWNER)
    mine = 'on(job, instance) group_left() max by (job, instance) (topo_info{owner="demo"})'
    assert (
        queries["records"] == f"sum by (flow, source, target) (topo_records_copied_total * {mine})"
    )
    assert queries["latency_p99_seconds"] == (
        "histogram_quantile(0.99, sum by (flow, source, target, le) "
        f"(rate(topo_replication_latency_seconds_bucket[1m]) * {mine}))"
    )
    assert queries["state"] == (
        f"max by (flow, source, target, state) (topo_flow_state * {mine}) == 1"
    )
    assert "[5m]" in prometheus.queries(OWNER, window="5m")["latency_p99_seconds"]


def test_an_owner_is_quoted_as_a_promql_string() -> None:
    assert prometheus.queries('a"b\\c')["info"] == 'max(topo_info{owner="a\\"b\\\\c"})'


def test_range_parameters() -> None:
    assert prometheus.range_params("up", START, END, STEP) == {
        "query": "up",
        "start": "1732349900",
        "end": "1732349930",
        "step": "10",
    }
    assert prometheus.range_params("up", 0.5, 1.25, 0.25)["start"] == "0.5"


@pytest.mark.parametrize(
    ("start", "end", "step"), [(10, 0, 1), (0, 10, 0), (0, 86_400, 5), (0, 10, -1)]
)
def test_a_range_prometheus_would_refuse_is_refused(start: float, end: float, step: float) -> None:
    with pytest.raises(ValueError):
        prometheus.range_params("up", start, end, step)


def test_series_without_a_flow_or_topic_label_do_not_break_the_history() -> None:
    """Prometheus drops empty labels: the driver's own errors have no flow, and a series
    without a topic label must not break the topics' history."""
    results = {
        "errors": matrix(({"kind": "offsets"}, {0: "1"}), (EW, {0: "2"})),
        "topic_records": matrix((EW, {0: "7"})),
    }
    samples = prometheus.history(OWNER, results, START, END, STEP, now=END)["samples"]
    assert samples[0]["flows"]["east->west"]["errors"] == 2
    assert samples[0]["topics"]["east->west"][""]["records"] == 7
