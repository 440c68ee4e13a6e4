"""MM2's record formats, byte for byte as Kafka's protocol types lay them out (the same bytes
connect-mirror-client's Heartbeat and Checkpoint and connect-mirror's OffsetSync write)."""

import json

import pytest

from topology.core.mm2 import wire


def test_a_heartbeat_is_two_aliases_then_a_version_and_its_time() -> None:
    key, value = wire.encode_heartbeat(wire.Heartbeat("east", "west", 1_700_000_000_123))
    assert key == b"\x00\x04east\x00\x04west"
    assert value == b"\x00\x00" + (1_700_000_000_123).to_bytes(8, "big")
    assert wire.decode_heartbeat(key, value) == wire.Heartbeat("east", "west", 1_700_000_000_123)


def test_a_checkpoint_is_group_topic_partition_then_version_offsets_and_metadata() -> None:
    checkpoint = wire.Checkpoint("billing", "east.orders", 3, 120, 118, "")
    key, value = wire.encode_checkpoint(checkpoint)
    assert key == b"\x00\x07billing\x00\x0beast.orders\x00\x00\x00\x03"
    assert value == (
        b"\x00\x00" + (120).to_bytes(8, "big") + (118).to_bytes(8, "big") + b"\x00\x00"
    )
    assert wire.decode_checkpoint(key, value) == checkpoint


def test_an_offset_sync_has_no_version() -> None:
    sync = wire.OffsetSync("orders", 0, 2**40, 7)
    key, value = wire.encode_offset_sync(sync)
    assert key == b"\x00\x06orders\x00\x00\x00\x00"
    assert value == (2**40).to_bytes(8, "big") + (7).to_bytes(8, "big")
    assert wire.decode_offset_sync(key, value) == sync


def test_names_are_utf8_counted_in_bytes() -> None:
    key, value = wire.encode_heartbeat(wire.Heartbeat("zürich", "w", -1))
    assert key.startswith(b"\x00\x07z\xc3\xbcrich")
    assert wire.decode_heartbeat(key, value) == wire.Heartbeat("zürich", "w", -1)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (json.dumps({"source": "east", "target": "west"}).encode(), b'{"emitted_ms": 1}'),
        (b"\x00\x04east\x00\x04west", b"\x00\x01" + bytes(8)),  # a version MM2 does not write
        (b"\x00\x04east\x00\x04west", b"\x00\x00" + bytes(7)),  # cut short
        (b"\x00\x04east\x00\x04west\x00", b"\x00\x00" + bytes(8)),  # a byte too many
        (b"\x00\x04east\x00\x04we\xff\xfe", b"\x00\x00" + bytes(8)),  # not UTF-8
        (None, b"\x00\x00" + bytes(8)),
    ],
)
def test_anything_else_is_not_read_as_a_heartbeat(key: bytes | None, value: bytes) -> None:
    assert wire.decode_heartbeat(key, value) is None


def test_a_json_checkpoint_or_a_truncated_sync_is_not_read() -> None:
    assert wire.decode_checkpoint(b'{"group":"g"}', b'{"upstream_offset":1}') is None
    assert wire.decode_offset_sync(b"\x00\x01t\x00\x00\x00\x00", bytes(15)) is None


def test_a_name_longer_than_the_format_allows_is_refused() -> None:
    with pytest.raises(ValueError, match="longer than MM2's format allows"):
        wire.encode_checkpoint(wire.Checkpoint("g" * 40_000, "t", 0, 0, 0))


def test_topo_reads_heartbeats_in_mm2s_format_and_its_earlier_json() -> None:
    from topology.kafka.heartbeats import Heartbeat, parse

    key, value = wire.encode_heartbeat(wire.Heartbeat("east", "west", 1_000))
    assert parse(key, value, 1_250) == Heartbeat("east", "west", 1_000, 1_250)
    earlier = (b'{"source": "east", "target": "west"}', b'{"emitted_ms": 1000}')
    assert parse(*earlier, 1_250) == Heartbeat("east", "west", 1_000, 1_250)
    assert parse(b"x", b"y", 1_250) is None


def test_a_heartbeat_read_without_an_arrival_time_tells_no_latency() -> None:
    from topology.kafka import heartbeats

    key, value = wire.encode_heartbeat(wire.Heartbeat("east", "west", 1_000))
    stamped = heartbeats.parse(key, value, 1_040)
    assert stamped is not None and stamped.latency_ms == 40
    # a copy topic that keeps the producer's time (one MM2 made): its timestamp is the emit time
    kept = heartbeats.parse(key, value, None)
    assert kept is not None and (kept.emitted_ms, kept.latency_ms) == (1_000, None)
