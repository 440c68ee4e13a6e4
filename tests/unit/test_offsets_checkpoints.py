"""topology.core.offsets.checkpoints: the checkpoint and progress records and the rules for writing
them; and the `topo-offsets` header of topology.core.jobs that every copy carries. Pure values."""

import json

import pytest

from topology.core.jobs import OFFSETS_HEADER, hop_offsets, stamped_offsets
from topology.core.offsets.checkpoints import (
    Checkpoint,
    Progress,
    decode_checkpoint,
    decode_progress,
    encode_checkpoint,
    encode_progress,
    latest_checkpoints,
    latest_progress,
    to_commit,
    to_emit,
)


def checkpoint(
    upstream: int = 100,
    downstream: int = 40,
    *,
    group: str = "billing",
    partition: int = 0,
    target_topic: str = "east.orders",
    exact: bool = True,
    complete: bool = True,
    at_ms: int = 0,
) -> Checkpoint:
    return Checkpoint(
        group=group,
        topic="orders",
        partition=partition,
        upstream_offset=upstream,
        target_topic=target_topic,
        downstream_offset=downstream,
        exact=exact,
        complete=complete,
        at_ms=at_ms,
    )


# encoding


def test_a_checkpoint_round_trips_through_its_record() -> None:
    original = checkpoint(exact=False, complete=False, at_ms=1_700_000_000_000)
    key, value = encode_checkpoint(original)
    assert json.loads(key) == {"group": "billing", "topic": "orders", "partition": 0}
    assert decode_checkpoint(value) == original


def test_a_checkpoints_key_is_stable_so_compaction_keeps_the_latest() -> None:
    first, _ = encode_checkpoint(checkpoint(100, 40))
    later, _ = encode_checkpoint(checkpoint(250, 90, at_ms=5))
    other, _ = encode_checkpoint(checkpoint(100, 40, partition=1))
    assert first == later == b'{"group":"billing","partition":0,"topic":"orders"}'
    assert other != first


def test_progress_round_trips_through_its_record() -> None:
    original = Progress("east->west", "orders", 3, 1_234, at_ms=99)
    key, value = encode_progress(original)
    assert key == b'{"flow":"east->west","partition":3,"topic":"orders"}'
    assert decode_progress(value) == original


@pytest.mark.parametrize(
    "value",
    [
        None,
        b"",
        b"not json",
        b"\xff\xfe\x00",
        b"[1, 2]",
        b"42",
        b"null",
        b"{}",
        b'{"group": "billing"}',  # fields missing
        b'{"flow": "east->west", "topic": "orders", "partition": 0, "next_offset": 1, "x": 1}',
    ],
)
def test_bad_or_empty_records_decode_to_none(value: bytes | None) -> None:
    assert decode_checkpoint(value) is None
    assert decode_progress(value) is None


def test_a_checkpoint_does_not_decode_as_progress_nor_the_reverse() -> None:
    _, checkpoint_value = encode_checkpoint(checkpoint())
    _, progress_value = encode_progress(Progress("east->west", "orders", 0, 5))
    assert decode_progress(checkpoint_value) is None
    assert decode_checkpoint(progress_value) is None


# reading the logs


def test_the_latest_checkpoint_of_each_group_topic_and_partition_wins() -> None:
    found = [
        checkpoint(100, 40),
        checkpoint(10, 4, partition=1),
        checkpoint(120, 50),
        checkpoint(7, 3, group="shipping"),
        checkpoint(90, 30),  # a rewind, written later: it is the latest
    ]
    assert latest_checkpoints(found) == {
        ("billing", "orders", 0): checkpoint(90, 30),
        ("billing", "orders", 1): checkpoint(10, 4, partition=1),
        ("shipping", "orders", 0): checkpoint(7, 3, group="shipping"),
    }
    assert latest_checkpoints([]) == {}


def test_progress_is_the_furthest_recorded_for_the_flow_asked_about() -> None:
    found = [
        Progress("east->west", "orders", 0, 10),
        Progress("east->west", "orders", 0, 30),
        Progress("east->west", "orders", 0, 20),  # an older write, read later
        Progress("east->west", "orders", 1, 5),
        Progress("east->west", "payments", 0, 8),
        Progress("central->west", "orders", 0, 999),  # another flow into the same cluster
    ]
    assert latest_progress(found, "east->west") == {
        ("orders", 0): 30,
        ("orders", 1): 5,
        ("payments", 0): 8,
    }
    assert latest_progress(found, "central->west") == {("orders", 0): 999}
    assert latest_progress(found, "west->east") == {}


# writing checkpoints


def test_the_first_checkpoint_of_a_partition_is_emitted() -> None:
    new = checkpoint(100, 40)
    assert to_emit(None, new) == new


def test_an_unchanged_checkpoint_is_not_emitted_again() -> None:
    assert to_emit(checkpoint(100, 40), checkpoint(100, 40)) is None
    assert to_emit(checkpoint(100, 40, at_ms=1), checkpoint(100, 40, at_ms=2)) is None


def test_a_checkpoint_that_moves_forward_is_emitted() -> None:
    new = checkpoint(150, 60)
    assert to_emit(checkpoint(100, 40), new) == new
    upstream_only = checkpoint(110, 40)  # a gap upstream: the same copy is next
    assert to_emit(checkpoint(100, 40), upstream_only) == upstream_only


def test_a_checkpoint_whose_flags_change_is_emitted() -> None:
    now_complete = checkpoint(100, 40, complete=True)
    assert to_emit(checkpoint(100, 40, complete=False), now_complete) == now_complete
    inexact = checkpoint(100, 40, exact=False)
    assert to_emit(checkpoint(100, 40), inexact) == inexact


def test_a_checkpoint_whose_target_topic_changes_is_emitted() -> None:
    new = checkpoint(100, 40, target_topic="orders")
    assert to_emit(checkpoint(100, 40), new) == new


def test_a_checkpoint_never_moves_backwards_downstream_unless_the_group_rewound() -> None:
    assert to_emit(checkpoint(100, 40), checkpoint(100, 39)) is None
    assert to_emit(checkpoint(100, 40), checkpoint(120, 30)) is None


def test_a_group_that_rewound_on_the_source_gets_its_lower_checkpoint() -> None:
    rewound = checkpoint(20, 5)
    assert to_emit(checkpoint(100, 40), rewound) == rewound


# committing translated offsets


def test_group_sync_commits_only_where_the_target_group_is_missing_or_behind() -> None:
    translated = {("orders", 0): 40, ("orders", 1): 50, ("orders", 2): 60, ("orders", 3): 70}
    current = {("orders", 0): 10, ("orders", 1): 50, ("orders", 2): 90, ("payments", 0): 3}
    assert to_commit(translated, current) == {("orders", 0): 40, ("orders", 3): 70}


def test_group_sync_commits_nothing_when_the_group_is_ahead_everywhere() -> None:
    assert to_commit({("orders", 0): 5}, {("orders", 0): 6}) == {}
    assert to_commit({}, {("orders", 0): 6}) == {}
    assert to_commit({("orders", 0): 0}, {}) == {("orders", 0): 0}


# the topo-offsets header


def test_the_offsets_header_is_named_topo_offsets() -> None:
    assert OFFSETS_HEADER == "topo-offsets"


def test_each_hop_appends_the_records_offset_on_its_source() -> None:
    on_west = stamped_offsets(None, "east", 41)
    assert on_west == "east:41"
    on_central = stamped_offsets(on_west, "west", 17)
    assert on_central == "east:41,west:17"
    assert stamped_offsets("", "east", 0) == "east:0"


@pytest.mark.parametrize(
    ("value", "offsets"),
    [
        ("east:41,west:17", {"east": 41, "west": 17}),
        (b"east:41,west:17", {"east": 41, "west": 17}),
        ("east:0", {"east": 0}),
        ("dc-1.eu:12", {"dc-1.eu": 12}),
        (None, {}),
        ("", {}),
        (b"", {}),
        ("east", {}),
        ("east:", {}),
        (":41", {}),
        ("east:-1", {}),
        ("east:x,west:17", {"west": 17}),
        (b"east:41,\xff:3", {"east": 41, "\ufffd": 3}),
    ],
)
def test_the_offsets_header_is_read_by_cluster(
    value: str | bytes | None, offsets: dict[str, int]
) -> None:
    assert hop_offsets(value) == offsets


def test_the_offsets_header_reads_back_what_the_hops_wrote() -> None:
    value = stamped_offsets(stamped_offsets(stamped_offsets(None, "a", 7), "b", 3), "c", 0)
    assert hop_offsets(value) == {"a": 7, "b": 3, "c": 0}
    assert hop_offsets(value.encode()) == {"a": 7, "b": 3, "c": 0}


def test_a_header_with_non_decimal_digits_is_ignored_not_raised() -> None:
    assert hop_offsets("east:²,west:17") == {"west": 17}
