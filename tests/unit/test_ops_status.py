"""The status document of `topo status --json` and its text (topology.ops.status), built from
specs and a status record fed to a Book the way the run log feeds it."""

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from topology.core import runstate
from topology.core.jobs import JobSpec
from topology.core.runstate import Book, Entry
from topology.ops import status
from topology.ops.status import STALE_AFTER

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "status.schema.json").read_text()
)
OWNER = "prod"
T0 = 1_700_000_000.0  # unix seconds: when the broker stamped the status record


def spec(source: str, target: str, delivery: str = "at-least-once") -> JobSpec:
    return JobSpec(
        flow=f"{source}->{target}",
        source=source,
        target=target,
        topics={"include": [".*"], "exclude": []},
        naming="prefix",
        separator=".",
        heartbeats=True,
        provenance=True,
        delivery=delivery,
        start="earliest",
        record_filter=None,
    )


SPECS = [spec("east", "west"), spec("west", "east", "exactly-once")]
CHANGE = {
    "at": T0 - 30,
    "cluster": "west",
    "action": "update",
    "resource": "topic_config",
    "name": "east.orders",
    "reason": "east changed the config of orders",
    "what": "retention.ms: 604800000 -> 86400000",
    "outcome": "done",
    "detail": "",
}
FAILED = {
    **CHANGE,
    "action": "create",
    "resource": "topic",
    "name": "east.payments",
    "reason": "east has a new topic payments",
    "what": "partitions: 6",
    "outcome": "failed",
    "detail": "policy violation",
}


def published(state: str = "running", flows: list[dict[str, Any]] | None = None) -> Entry:
    """The newest status record, as the Book has it after replaying it."""
    value = {
        "owner": OWNER,
        "mode": "continuous",
        "state": state,
        "host": "runner-1",
        "driver_pid": 4242,
        "runner": "local",
        "master": "local[2]",
        "jobs_published_at": T0 - 600,
        "started_at": T0 - 3725,
        "updated_at": T0 - 0.5,
        "flows": flows if flows is not None else [EAST_WEST],
        "changes": [CHANGE, FAILED],
    }
    book = Book()
    book.feed(
        runstate.record_key(OWNER, "status"), runstate.encode(value), int(T0 * 1000), offset=0
    )
    entry = book.status(OWNER)
    assert entry is not None
    return entry


EAST_WEST = {
    "flow": "east->west",
    "state": "running",
    "topics": 3,
    "records": 1_234_567,
    "bytes": 2_500_000,
    "lag": 12,
    "records_per_second": 250.5,
    "bytes_per_second": 1_500_000.0,
    "restarts": 1,
    "error": None,
}
LATENCY = {"east->west": {"p50": 40, "max": 95, "newest_age_s": 1.2}}


def valid(document: dict[str, Any]) -> dict[str, Any]:
    errors = [e.message for e in Draft202012Validator(SCHEMA).iter_errors(document)]
    assert errors == []
    return document


def test_without_any_status_no_driver_and_every_flow_not_running() -> None:
    document = valid(status.document(OWNER, SPECS, None, False, {}, T0))
    assert document["owner"] == OWNER
    assert document["running"] is False
    assert document["driver"] is None
    assert [f["flow"] for f in document["flows"]] == ["east->west", "west->east"]
    assert {f["state"] for f in document["flows"]} == {"not running"}
    assert document["changes"] == []
    first = status.text(document, T0).splitlines()[0]
    assert first == f"Replication of {OWNER} is not running (`topo apply FILE` starts it)."


def test_not_running_shows_the_last_driver_and_none_of_its_numbers() -> None:
    entry = published(state="stopped")
    document = valid(status.document(OWNER, SPECS, entry, False, LATENCY, T0 + 60))
    assert document["running"] is False
    assert document["driver"]["state"] == "stopped"
    assert document["driver"]["host"] == "runner-1"
    for flow in document["flows"]:  # a stopped driver's numbers are not the flows' state
        assert flow["state"] == "not running"
        assert (flow["records"], flow["lag"], flow["latency_ms"]) == (0, None, None)
    text = status.text(document, T0 + 60)
    assert text.splitlines()[0] == (
        f"Replication of {OWNER} is not running (`topo apply FILE` starts it). "
        "Its last driver (runner-1, pid 4242) was stopped."
    )


def test_running_merges_the_reported_flows_by_name() -> None:
    entry = published()
    document = valid(status.document(OWNER, SPECS, entry, True, LATENCY, T0 + 1))
    assert document["running"] is True
    east, west = document["flows"]
    assert east == {
        "flow": "east->west",
        "source": "east",
        "target": "west",
        "delivery": "at-least-once",
        "state": "running",
        "topics": 3,
        "records": 1_234_567,
        "bytes": 2_500_000,
        "lag": 12,
        "records_per_second": 250.5,
        "bytes_per_second": 1_500_000.0,
        "latency_ms": {"p50": 40, "max": 95, "newest_age_s": 1.2},
        "restarts": 1,
        "error": None,
        "mm2": [],
        "objectives": [],
        "losses": [],
    }
    assert west["flow"] == "west->east"  # the driver reports nothing for it
    assert west["delivery"] == "exactly-once"
    assert west["state"] == "not running"
    assert (west["topics"], west["records"], west["lag"], west["latency_ms"]) == (0, 0, None, None)
    assert document["driver"] == {
        "host": "runner-1",
        "pid": 4242,
        "runner": "local",
        "master": "local[2]",
        "state": "running",
        "started_at": T0 - 3725,
        "updated_at": T0 - 0.5,
        "stale": False,
        "metrics_url": None,  # the published status names none
    }


def test_a_flow_the_topology_no_longer_has_is_not_shown() -> None:
    entry = published(flows=[EAST_WEST, {**EAST_WEST, "flow": "gone->west"}])
    document = status.document(OWNER, SPECS, entry, True, {}, T0)
    assert [f["flow"] for f in document["flows"]] == ["east->west", "west->east"]


@pytest.mark.parametrize(
    ("after", "stale"), [(0.0, False), (STALE_AFTER, False), (STALE_AFTER + 0.1, True)]
)
def test_a_status_is_stale_after_15_s_by_the_broker_timestamp(after: float, stale: bool) -> None:
    # updated_at (the driver's clock) is older than the broker's timestamp: only the latter counts
    entry = published()
    document = valid(status.document(OWNER, SPECS, entry, True, {}, T0 + after))
    assert STALE_AFTER == 15.0
    assert document["driver"]["stale"] is stale
    warning = "NO RECENT STATUS: the driver may be stuck" in status.text(document, T0 + after)
    assert warning is stale


def test_the_changes_are_passed_through() -> None:
    for running in (True, False):
        document = valid(status.document(OWNER, SPECS, published(), running, {}, T0))
        assert document["changes"] == [CHANGE, FAILED]


def test_the_text_of_a_running_replication() -> None:
    document = status.document(OWNER, SPECS, published(), True, LATENCY, T0 + 1)
    text = status.text(document, T0 + 1)
    lines = text.splitlines()
    assert lines[0] == (
        f"Replication of {OWNER}: running on runner-1 (local, local[2], pid 4242, up 1h02m)"
    )
    header = lines[2].split()
    assert header == [
        "FLOW",
        "STATE",
        "TOPICS",
        "RECORDS",
        "BYTES",
        "LAG",
        "RECORDS/S",
        "MB/S",
        "LATENCY",
        "OBJECTIVES",
    ]
    assert lines[3].split() == [
        "east->west",
        "running",
        "3",
        "1,234,567",
        "2.5",
        "MB",
        "12",
        "250.5",
        "1.50",
        "40",
        "ms",
        "-",
    ]
    assert lines[4].startswith("west->east  not running")
    assert lines[4].split()[-1] == "-"
    assert "Changes the driver made to follow the sources (newest last):" in lines
    changes = text.split("(newest last):\n", 1)[1].splitlines()
    assert changes[0].endswith(
        "west: update topic_config east.orders (retention.ms: 604800000 -> 86400000): "
        "east changed the config of orders"
    )
    assert changes[1].endswith(
        "west: create topic east.payments (partitions: 6): east has a new topic payments "
        "[FAILED: policy violation]"
    )


def test_the_text_shows_a_flows_error_and_no_changes_section_without_changes() -> None:
    flows = [{**EAST_WEST, "state": "restarting", "error": "broker down"}]
    entry = published(flows=flows)
    value = {**entry.value, "changes": []}
    document = status.document(OWNER, SPECS, Entry(value, 0, entry.timestamp_ms), True, {}, T0)
    text = status.text(document, T0)
    assert "east->west: broker down" in text.splitlines()
    assert "Changes the driver made" not in text


def test_only_the_newest_changes_are_in_the_text() -> None:
    entry = published()
    many = [{**CHANGE, "name": f"t{i}"} for i in range(status.CHANGES_SHOWN + 3)]
    document = status.document(
        OWNER, SPECS, Entry({**entry.value, "changes": many}, 0, entry.timestamp_ms), True, {}, T0
    )
    assert len(document["changes"]) == status.CHANGES_SHOWN + 3
    text = status.text(document, T0)
    assert " t2 " not in text and " t3 " in text and f" t{status.CHANGES_SHOWN + 2} " in text


def test_latency_is_the_median_the_max_and_the_age_of_the_newest() -> None:
    assert status.latency([30, 10, 20, 90], int((T0 - 2.04) * 1000), T0) == {
        "p50": 25,
        "max": 90,
        "newest_age_s": 2.0,
    }


def test_latency_without_arrival_times_is_only_the_age_of_the_newest() -> None:
    # (copies in a topic that keeps the producer's time, as one MM2 created does)
    assert status.latency([], int((T0 - 3) * 1000), T0) == {
        "p50": None,
        "max": None,
        "newest_age_s": 3.0,
    }


MM2_RUNS = (
    "connector on worker 10.0.3.7:8083 (RUNNING)",
    "task 0 on worker 10.0.3.7:8083 (RUNNING)",
)


def test_a_flow_mm2_runs_while_topo_does_not_is_run_by_mm2_with_its_heartbeats() -> None:
    beats: dict[str, dict[str, float | None]]
    beats = {
        "east->west": {"p50": None, "max": None, "newest_age_s": 0.8},
        "west->east": {"p50": 3, "max": 9, "newest_age_s": 0.5},
    }
    document = valid(
        status.document(OWNER, SPECS, None, False, beats, T0, {"east->west": MM2_RUNS})
    )
    east, west = document["flows"]
    assert (east["state"], east["mm2"], east["latency_ms"]) == (
        "run by MM2",
        list(MM2_RUNS),
        beats["east->west"],
    )
    # neither topo nor MM2 copies west->east: its old heartbeats are not its latency
    assert (west["state"], west["mm2"], west["latency_ms"]) == ("not running", [], None)
    lines = status.text(document, T0).splitlines()
    assert lines[0].endswith("MirrorMaker 2 copies 1 of its 2 flows.")
    assert lines[3].split()[:2] == ["east->west", "run"]
    assert lines[3].endswith("newest 1s ago  -")
    assert f"east->west: MirrorMaker 2 copies it ({', '.join(MM2_RUNS)})" in lines


def test_mm2_beside_a_running_flow_is_said_with_the_flows_own_state() -> None:
    document = valid(
        status.document(
            OWNER, SPECS, published(), True, LATENCY, T0 + 1, {"east->west": MM2_RUNS[:1]}
        )
    )
    east = document["flows"][0]
    assert (east["state"], east["mm2"]) == ("running", [MM2_RUNS[0]])
    assert (
        f"east->west: MirrorMaker 2 also runs east->west ({MM2_RUNS[0]}): a topic both copy is "
        "copied twice"
    ) in status.text(document, T0 + 1).splitlines()


@pytest.mark.parametrize(
    ("count", "shown"),
    [(0, "0 B"), (999, "999 B"), (1_500, "1.5 kB"), (2_500_000, "2.5 MB"), (3e9, "3.0 GB")],
)
def test_sizes(count: int, shown: str) -> None:
    assert status.size(int(count)) == shown


def test_durations() -> None:
    assert status.duration(65) == "1m05s"
    assert status.duration(3725) == "1h02m"
