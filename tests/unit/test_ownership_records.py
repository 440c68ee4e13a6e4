"""The one encoding of topo's ownership records (topology.kafka.changes), read back as written."""

import json

import pytest

from topology.core.errors import TopoError
from topology.core.observed import Acl, Owned, acl_key
from topology.kafka.changes import (
    acl_binding,
    acl_from_binding,
    owned_from_record,
    ownership_record,
    tombstone,
)

READ = Acl("TOPIC", "east.orders", "LITERAL", "User:alice", "*", "READ", "ALLOW")


@pytest.mark.parametrize(
    "owned",
    [
        Owned("topic", "east.orders", ("east->west",), owner="prod"),
        Owned("topic", "ünïcode", ("a->c", "b->c")),
        Owned("acl", acl_key(READ), ("east->west",), acl=READ, owner="prod"),
    ],
)
def test_a_record_reads_back_as_what_was_written(owned: Owned) -> None:
    key, value = ownership_record(owned)
    assert key == owned.key.encode()
    assert json.loads(value) == owned.to_dict()
    assert owned_from_record(key, value) == (owned.key, owned)


def test_a_tombstone_forgets_its_key() -> None:
    key, value = tombstone("topic:east.orders")
    assert (key, value) == (b"topic:east.orders", None)
    assert owned_from_record(key, value) == ("topic:east.orders", None)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b"{}"),
        (b"topic:x", b"{not json"),
        (b"topic:x", b'{"kind": "topic"}'),
        (b"topic:x", b"[]"),
        (b"topic:y", ownership_record(Owned("topic", "x", ()))[1]),  # under another key
    ],
)
def test_a_record_topo_did_not_write_is_a_value_error(key: bytes | None, value: bytes) -> None:
    with pytest.raises(ValueError):
        owned_from_record(key, value)


@pytest.mark.parametrize(
    "acl",
    [
        READ,
        Acl("CLUSTER", "kafka-cluster", "LITERAL", "User:mm2", "*", "ALL", "ALLOW"),
        Acl("GROUP", "east-", "PREFIXED", "User:bob", "10.0.0.1", "DESCRIBE_CONFIGS", "DENY"),
        Acl("TRANSACTIONAL_ID", "tx", "LITERAL", "User:bob", "*", "IDEMPOTENT_WRITE", "ALLOW"),
    ],
)
def test_an_acl_survives_the_trip_through_librdkafkas_terms(acl: Acl) -> None:
    assert acl_from_binding(acl_binding(acl)) == acl


def test_the_cluster_resource_is_librdkafkas_broker() -> None:
    acl = Acl("CLUSTER", "kafka-cluster", "LITERAL", "User:mm2", "*", "ALL", "ALLOW")
    assert getattr(acl_binding(acl).restype, "name", None) == "BROKER"


def test_an_unknown_acl_term_is_one_clear_error() -> None:
    acl = Acl("TOPIC", "x", "LITERAL", "User:a", "*", "SNOOZE", "ALLOW")
    with pytest.raises(TopoError, match="SNOOZE is not a Kafka ACL term"):
        acl_binding(acl)
