"""One typed progress value: the copy loop's versioned report (the very record
`CopyLoopReportTest.java` checks its Java side against), read into `progress.FlowProgress`, and
fed to `topo status` and the metrics alike."""

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.core.flow_status import FlowStatus
from topology.core.jobs import JobSpec
from topology.core.progress import (
    FlowProgress,
    Loss,
    ReportError,
    Slot,
    TopicCopied,
    read_loop_report,
)
from topology.telemetry.figures import Figures

VECTOR = Path(__file__).parents[1] / "java" / "loop-report.json"
FLOW = "east->west"


def loop_report() -> str:
    return VECTOR.read_text()


def test_the_copy_loops_report_is_read_into_flow_progress() -> None:
    made = read_loop_report(loop_report(), buckets=3)
    assert (made.run, made.sequence) == ("run-1", 7)
    assert (made.records, made.bytes, made.latency_ms, made.buckets) == (3, 340, 2105, (1, 2, 2))
    assert made.topics == {
        "orders": TopicCopied(2, 300, 105, 1_700_000_000_000),
        "clicks": TopicCopied(1, 40, 2000, 1_700_000_000_500),
    }
    # a partition without a committed position yet has none (and no lag counted for it)
    assert made.positions == {("orders", 0): 42, ("orders", 1): 10}
    assert made.ends == {("orders", 0): 50, ("orders", 1): 10}
    assert made.slots == (
        Slot(0, "running"),
        Slot(1, "failed", "KafkaException: the target refused a write"),
    )
    assert made.losses == (
        Loss("orders", 1, "retention", 4, 10),
        Loss("clicks", 0, "reset", 0, 12),
    )
    assert [loss.records for loss in made.losses] == [6, None]
    assert made.losses[0].describe() == (
        "6 records of orders-1 (offsets 4 to 9) were removed from the source by retention "
        "before they were copied"
    )
    assert made.losses[1].describe().startswith("clicks-0 on the source ends at offset 0, behind")
    assert made.gone == {("clicks", 1)}
    older = json.loads(loop_report())
    del older["losses"]  # a jar from before losses were reported
    assert read_loop_report(json.dumps(older), buckets=3).losses == ()


def test_a_report_of_another_format_or_shape_is_refused_in_one_line() -> None:
    good = json.loads(loop_report())
    for data, says in (
        ({**good, "format": 1}, "copy loop report format 1 is not 2"),
        ({**good, "partitions": [{"topic": "t"}]}, "malformed copy loop report"),
        ({**good, "latency_buckets": [1]}, "1 latency buckets, not 3"),
    ):
        with pytest.raises(ReportError, match=says):
            read_loop_report(json.dumps(data), buckets=3)
    with pytest.raises(ReportError, match="not JSON"):
        read_loop_report("{", buckets=3)


def _spec() -> JobSpec:
    return JobSpec(
        FLOW,
        "east",
        "west",
        {"include": [".*"], "exclude": []},
        "prefix",
        ".",
        True,
        True,
        "at-least-once",
        "earliest",
        None,
    )


def test_status_and_metrics_are_fed_from_the_same_value() -> None:
    made = read_loop_report(loop_report(), buckets=3)
    status = FlowStatus(_spec())
    status.add(made, at=100.0, monotonic=5.0)
    status.add(made, at=101.0, monotonic=6.0)
    assert (status.records, status.bytes, status.lag) == (6, 680, 8)
    assert status.processed == {("orders", 0): 42, ("orders", 1): 10}
    figures = Figures("o", {}, {FLOW: ("east", "west")}, 0.0)
    figures.progress(FLOW, made)
    flow = figures.snapshot(1.0).flows[FLOW]
    assert flow.records == 3 and flow.bytes == 340
    assert flow.topics["orders"].newest_ms == 1_700_000_000_000
    assert flow.topics["clicks"].latency_sum == 2.0


def test_status_merges_reports_of_what_moved_and_forgets_an_old_runs_ends() -> None:
    status = FlowStatus(_spec())
    first = read_loop_report(loop_report(), buckets=3)  # orders-0 at 42 of 50, orders-1 at 10
    status.add(first, at=100.0, monotonic=5.0)
    assert status.lag == 8
    moved = json.loads(loop_report())
    moved["sequence"] = 8
    moved["partitions"] = [  # only orders-0 moved; orders-1 keeps what was reported
        {**moved["partitions"][1], "position": 49, "end": 52, "records": 0}
    ]
    status.add(read_loop_report(json.dumps(moved), buckets=3), at=101.0, monotonic=6.0)
    assert status.lag == 3
    assert status.reported == {("orders", 0): (6.0, 52), ("orders", 1): (5.0, 10)}
    # orders-1 no longer read (its topic deleted, say): not counted, whatever it held
    moved["sequence"] = 9
    moved["gone"] = [{"topic": "orders", "partition": 1}]
    status.reported[("orders", 1)] = (5.0, 99)
    status.add(read_loop_report(json.dumps(moved), buckets=3), at=101.5, monotonic=6.5)
    assert status.lag == 3
    moved["gone"] = []
    # A new run (the copy restarted) names its partitions afresh, the old run's ends
    # forgotten: until orders-1's end is reported again, the lag is not known.
    moved["run"] = "run-2"
    moved["partitions"].append({**moved["partitions"][0], "partition": 1, "position": 10})
    moved["partitions"][1]["end"] = None
    status.add(read_loop_report(json.dumps(moved), buckets=3), at=102.0, monotonic=7.0)
    assert status.lag is None and status.reported == {("orders", 0): (7.0, 52)}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["run-1", "run-1", "run-1", "run-2"]),
            st.dictionaries(st.tuples(st.just("t"), st.integers(0, 5)), st.integers(0, 100)),
            st.dictionaries(st.tuples(st.just("t"), st.integers(0, 5)), st.integers(0, 120)),
            st.frozensets(st.tuples(st.just("t"), st.integers(0, 5)), max_size=2),
        ),
        max_size=12,
    )
)
def test_the_lag_kept_report_by_report_is_the_lag_counted_afresh(
    reports: list[
        tuple[str, dict[tuple[str, int], int], dict[tuple[str, int], int], frozenset[Any]]
    ],
) -> None:
    """A report costs what it names: the lag kept as reports arrive equals the lag counted
    over every partition read, after any sequence of runs, moves, ends and partitions gone."""
    status = FlowStatus(_spec())
    for number, (run, positions, ends, gone) in enumerate(reports):
        made = FlowProgress(run, number, 0, 0, 0, (), {}, positions, ends, gone=gone)
        status.add(made, at=float(number), monotonic=float(number))
        afresh: int | None = 0
        for key in status.reading:
            told = status.reported.get(key)
            if told is None:
                afresh = None
                break
            afresh = (afresh or 0) + max(0, told[1] - status.processed[key])
        assert status.lag == afresh
