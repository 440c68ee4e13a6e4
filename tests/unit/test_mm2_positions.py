"""MM2's committed source positions read from its Connect offsets topic, as MM2's worker writes
them (JSON key [connector, {cluster, partition, topic}], value {"offset": N}), and the
startingOffsets a handover gives Spark."""

import json

from topology.core.mm2 import positions
from topology.core.mm2.positions import Handover
from topology.core.model import Mm2State


def _key(
    topic: str, partition: int, cluster: str = "east", name: str = "MirrorSourceConnector"
) -> bytes:
    where = {"cluster": cluster, "partition": partition, "topic": topic}
    return json.dumps([name, where], separators=(",", ":")).encode()


def _value(offset: int) -> bytes:
    return json.dumps({"offset": offset}).encode()


def test_the_position_is_the_offset_after_the_last_record_mm2_copied() -> None:
    found = positions.resume_positions([(_key("orders", 0), _value(41))], "east")
    assert found == {("orders", 0): 42}


def test_a_later_commit_replaces_an_earlier_one_and_a_tombstone_forgets_it() -> None:
    records = [
        (_key("orders", 0), _value(10)),
        (_key("orders", 1), _value(5)),
        (_key("orders", 0), _value(99)),
        (_key("orders", 1), None),
    ]
    assert positions.resume_positions(records, "east") == {("orders", 0): 100}


def test_other_sources_connectors_and_shapes_are_left_out() -> None:
    records = [
        (_key("orders", 0, cluster="west"), _value(7)),  # another flow's position
        (b'["MirrorCheckpointConnector",{"cluster":"east"}]', _value(3)),
        (b"not json", _value(1)),
        (_key("orders", 2), b'{"offset": "12"}'),  # not a number: no position
        (_key("orders", 3), b'{"offset": -1}'),
        (None, _value(1)),
        (_key("payments", 0, name="east->north.MirrorSourceConnector"), _value(8)),
        (_key("payments", 0), _value(4)),
    ]
    assert positions.resume_positions(records, "east") == {("payments", 0): 5}


def test_on_a_connect_cluster_only_the_named_connectors_positions_are_read() -> None:
    # A Connect cluster's offsets topic holds every connector's: two MM2 flows from east.
    records = [
        (_key("orders", 0, name="east->west.MirrorSourceConnector"), _value(8)),
        (_key("orders", 0, name="east->north.MirrorSourceConnector"), _value(30)),
    ]
    found = positions.resume_positions(records, "east", "east->west.MirrorSourceConnector")
    assert found == {("orders", 0): 9}
    key, value = positions.offset_record("east", "orders", 0, 9, "east->west.MirrorSourceConnector")
    assert (key, json.loads(value)) == (records[0][0], {"offset": 8})


def test_mm2s_default_names_are_dedicated_modes_per_source() -> None:
    assert positions.names("east", "west") == positions.Names(
        "mm2-offsets.east.internal", "mm2-status.east.internal", "MirrorSourceConnector"
    )


def test_a_connect_clusters_names_are_filled_in_with_the_flows_clusters() -> None:
    state = Mm2State(
        "connect-offsets", "connect-status", "{source}->{target}.MirrorSourceConnector"
    )
    assert positions.names("east", "west", state) == positions.Names(
        "connect-offsets", "connect-status", "east->west.MirrorSourceConnector"
    )


def _status(name: str, state: str, worker: str = "localhost/east->west/1") -> tuple[bytes, bytes]:
    value = {"state": state, "trace": None, "worker_id": worker, "generation": 3}
    return name.encode(), json.dumps(value).encode()


def test_mm2_runs_while_its_source_connector_or_a_task_is_running_by_its_newest_status() -> None:
    """As MM2 4.3.1 writes them: RUNNING while it runs, UNASSIGNED once stopped cleanly."""
    started = [
        _status("status-connector-MirrorSourceConnector", "RUNNING"),
        _status("status-task-MirrorSourceConnector-0", "RUNNING"),
        _status("status-connector-MirrorHeartbeatConnector", "RUNNING"),
        (b"status-topic-east.orders:connector-MirrorSourceConnector", b'{"topic": {}}'),
    ]
    assert positions.running(started) == (
        "connector on worker localhost/east->west/1 (RUNNING)",
        "task 0 on worker localhost/east->west/1 (RUNNING)",
    )
    stopped = [
        *started,
        _status("status-connector-MirrorSourceConnector", "UNASSIGNED"),
        _status("status-task-MirrorSourceConnector-0", "UNASSIGNED"),
    ]
    assert positions.running(stopped) == ()
    paused = [*stopped, _status("status-task-MirrorSourceConnector-0", "PAUSED")]
    assert positions.running(paused) == ("task 0 on worker localhost/east->west/1 (PAUSED)",)
    failed = [*stopped, _status("status-task-MirrorSourceConnector-0", "FAILED")]
    assert positions.running(failed) == ()
    assert positions.running([(b"status-task-MirrorSourceConnector-1", None)]) == ()
    # on a Connect cluster: its status topic holds other connectors' (other flows') states
    named = "east->west.MirrorSourceConnector"
    assert positions.running(started, named) == ()
    assert positions.running([_status(f"status-task-{named}-2", "RUNNING")], named) == (
        "task 2 on worker localhost/east->west/1 (RUNNING)",
    )
    # another connector whose name starts with this one's is not this one
    assert positions.running([_status(f"status-task-{named}-backup-0", "RUNNING")], named) == ()


def test_waiting_records_are_the_source_end_beyond_the_position() -> None:
    handover = Handover(
        "east->west",
        "mm2-offsets.east.internal",
        "mm2-status.east.internal",
        (),
        positions={("orders", 0): 40, ("orders", 1): 7},
        ends={("orders", 0): 55, ("orders", 1): 7},
    )
    assert handover.waiting(("orders", 0)) == 15
    assert handover.waiting(("orders", 1)) == 0
    assert handover.waiting(("orders", 2)) is None


def test_spark_is_given_every_partition_earliest_where_mm2_has_no_position() -> None:
    resume = {"orders": {0: 42, 2: 7}}
    assert positions.starting_offsets(resume, {"orders": 3, "new": 1}) == {
        "new": {"0": -2},
        "orders": {"0": 42, "1": -2, "2": 7},
    }


def test_the_record_mm2_resumes_from_is_byte_for_byte_what_its_connector_commits() -> None:
    """As MM2 4.3.1 wrote it on the lab for the record at offset 9 (resume at 10)."""
    key, value = positions.offset_record("src", "rp13b137df-keyed", 0, 10)
    assert (
        key
        == b'["MirrorSourceConnector",{"cluster":"src","partition":0,"topic":"rp13b137df-keyed"}]'
    )
    assert value == b'{"offset":9}'
    assert positions.resume_positions([(key, value)], "src") == {("rp13b137df-keyed", 0): 10}


def test_mm2_further_on_than_topo_is_found_where_both_have_a_position() -> None:
    theirs = {("orders", 0): 50, ("orders", 1): 10, ("other", 0): 99}
    ours = {("orders", 0): 40, ("orders", 1): 12}
    assert positions.further_on(theirs, ours) == [(("orders", 0), 50, 40)]
