"""topology.kafka.inventory against real lab clusters: what observe sees, and how it fails.

ACLs and authentication are tested in test_changes.py, on its one SASL cluster.
"""

import socket
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER
from topology.core.errors import KafkaUnavailableError, TopoError
from topology.core.naming import STATE_TOPIC
from topology.core.observed import Owned
from topology.core.plan.values import Action, Change, Resource
from topology.kafka import changes, inventory, records
from topology.kafka.records import Record

pytestmark = pytest.mark.kafka
OWNER = "itest-inventory"


def create_topic(config: dict[str, str], name: str, partitions: int, **configs: str) -> None:
    admin = AdminClient({**config})
    topic = NewTopic(name, num_partitions=partitions, replication_factor=1, config=configs)
    admin.create_topics([topic])[name].result(10)


def ensure_state_topic(config: dict[str, str]) -> None:
    """topo's state topic, as apply creates it; shared by every test on the cluster."""
    if STATE_TOPIC not in AdminClient({**config}).list_topics(timeout=10).topics:
        after = {
            "partitions": 1,
            "replication_factor": 1,
            "configs": {"cleanup.policy": "compact"},
            "purpose": "state",
        }
        changes.execute(
            config, Change(Action.CREATE, Resource.TOPIC, "c", STATE_TOPIC, "test", after=after)
        )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_topics_show_partitions_replication_and_only_their_own_configs(
    source: dict[str, str], topic_name: str
) -> None:
    create_topic(source, topic_name, 2, **{"retention.ms": "3600000"})
    create_topic(source, f"{topic_name}-plain", 1)

    # A topic the controller made is in the broker's metadata a moment later, not at once.
    cluster = inventory.observe("src", source)
    deadline = time.monotonic() + 15
    while f"{topic_name}-plain" not in cluster.topics and time.monotonic() < deadline:
        time.sleep(0.5)
        cluster = inventory.observe("src", source)

    assert cluster.name == "src"
    assert cluster.brokers == 1
    assert cluster.default_replication_factor == 1
    topic = cluster.topics[topic_name]
    assert (topic.name, topic.partitions, topic.replication_factor) == (topic_name, 2, 1)
    assert dict(topic.configs) == {"retention.ms": "3600000"}  # no broker default shows
    assert dict(cluster.topics[f"{topic_name}-plain"].configs) == {}
    assert "__consumer_offsets" not in cluster.topics


def test_a_cluster_without_an_authorizer_has_no_acls(source: dict[str, str]) -> None:
    assert inventory.observe("src", source).acls is None


def test_groups_show_their_committed_offsets(source: dict[str, str], topic_name: str) -> None:
    create_topic(source, topic_name, 2)
    records.produce(source, [Record(topic_name, p, None, b"v") for p in (0, 0, 0, 1)])
    group = f"itest-group-{uuid.uuid4().hex[:8]}"
    own = f"itest-own-{uuid.uuid4().hex[:8]}"  # as topo's progress groups, by prefix
    for committer in (group, own):
        consumer = Consumer({**source, "group.id": committer, "enable.auto.commit": False})
        try:  # offsets committed by a group that never subscribed: an EMPTY group
            consumer.commit(offsets=[TopicPartition(topic_name, 0, 3)], asynchronous=False)
        finally:
            consumer.close()

    groups = inventory.observe("src", source).groups
    found = groups[group]

    assert found.group_id == group
    assert found.state == "EMPTY"
    assert dict(found.offsets) == {(topic_name, 0): 3}  # partition 1 has no commit
    assert dict(groups[own].offsets) == {(topic_name, 0): 3}
    # the offset rounds leave topo's own groups unread: the others are read as before
    observers = inventory.Observers({"src": source})
    skipped = observers.observe_all(settings=False, skip_groups="itest-own-")["src"].groups
    assert own not in skipped
    assert dict(skipped[group].offsets) == {(topic_name, 0): 3}


def test_ownership_records_are_read_back_and_a_deleted_topic_is_forgotten(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    after = {"partitions": 1, "replication_factor": 1, "configs": {}, "purpose": "replica"}
    create = Change(
        Action.CREATE,
        Resource.TOPIC,
        "src",
        topic_name,
        "test",
        after=after,
        edges=("west->src", "east->src"),
    )
    changes.execute(source, create, owner=OWNER)

    cluster = inventory.observe("src", source)
    assert cluster.owns_topic(topic_name) == Owned(
        "topic", topic_name, ("east->src", "west->src"), owner=OWNER
    )
    assert topic_name in cluster.topics
    assert STATE_TOPIC in cluster.topics

    delete = Change(Action.DELETE, Resource.TOPIC, "src", topic_name, "test", before=after)
    changes.execute(source, delete, owner=OWNER)

    cluster = inventory.observe("src", source)
    assert topic_name not in cluster.topics
    assert cluster.owns_topic(topic_name) is None
    written = [
        r
        for r in records.read_topic(source, STATE_TOPIC)
        if r.key == b"topic:" + topic_name.encode()
    ]
    assert [r.value is None for r in written] == [False, True]  # the record, then its tombstone


def test_the_last_record_of_a_key_wins(source: dict[str, str], topic_name: str) -> None:
    ensure_state_topic(source)
    first = Owned("topic", topic_name, ("a->b",), owner=OWNER)
    second = Owned("topic", topic_name, ("a->b", "c->b"), owner=OWNER)
    gone = Owned("topic", f"{topic_name}-gone", ("a->b",), owner=OWNER)
    producer = Producer({**source})
    for key, value in (
        changes.ownership_record(first),
        changes.ownership_record(gone),
        changes.ownership_record(second),
        changes.tombstone(gone.key),
    ):
        producer.produce(STATE_TOPIC, key=key, value=value, partition=0)
    assert producer.flush(10) == 0

    owned = inventory.observe("src", source).owned
    assert owned[first.key] == second
    assert gone.key not in owned


def test_a_record_topo_did_not_write_is_one_clear_error(target: dict[str, str]) -> None:
    ensure_state_topic(target)
    key = f"topic:itest-junk-{uuid.uuid4().hex[:8]}"
    producer = Producer({**target})
    producer.produce(STATE_TOPIC, key=key.encode(), value=b"{not json", partition=0)
    assert producer.flush(10) == 0
    try:
        with pytest.raises(TopoError, match=rf"cluster dst \(.*\): record \d+ of {STATE_TOPIC}"):
            inventory.observe("dst", target)
    finally:
        producer.produce(STATE_TOPIC, key=key.encode(), value=None, partition=0)
        assert producer.flush(10) == 0
    inventory.observe("dst", target)  # the tombstone makes the state readable again


def test_an_unreachable_cluster_is_named_with_its_bootstrap_quickly() -> None:
    bootstrap = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(KafkaUnavailableError) as failure:
        inventory.observe("west", {"bootstrap.servers": bootstrap}, timeout=5)
    assert time.monotonic() - started < 3  # a refused connection is not waited out
    message = str(failure.value)
    assert message.startswith(f"cluster west ({bootstrap}) is unreachable: ")
    assert "Connection refused" in message
    assert "\n" not in message


def test_a_silent_cluster_fails_within_the_timeout() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        bootstrap = f"127.0.0.1:{silent.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(KafkaUnavailableError, match=rf"cluster quiet \({bootstrap}\)"):
            inventory.observe("quiet", {"bootstrap.servers": bootstrap}, timeout=2)
        assert time.monotonic() - started < 4


def test_a_setting_librdkafka_rejects_is_one_line() -> None:
    config = {"bootstrap.servers": "127.0.0.1:9", "no.such.setting": "1"}
    with pytest.raises(KafkaUnavailableError, match=r"^cluster x \(127.0.0.1:9\): .*no.such"):
        inventory.observe("x", config)


def test_observe_all_reads_every_cluster_and_reports_a_failure_as_it_is(
    lab: dict[str, dict[str, str]],
) -> None:
    configs = {"src": lab[SOURCE_CLUSTER], "dst": lab[TARGET_CLUSTER]}
    found = inventory.observe_all(configs, timeout=10)
    assert set(found) == {"src", "dst"}
    assert found["src"].name == "src" and found["dst"].name == "dst"

    down = {"bootstrap.servers": f"127.0.0.1:{free_port()}"}
    with pytest.raises(KafkaUnavailableError, match=r"^cluster gone \("):
        inventory.observe_all({**configs, "gone": down}, timeout=5)
    assert inventory.observe_all({}) == {}


def test_topic_configs_asked_for_in_several_requests_are_all_read(
    source: dict[str, str], topic_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_topic(source, f"{topic_name}-a", 1, **{"retention.ms": "1000000"})
    create_topic(source, f"{topic_name}-b", 1, **{"retention.ms": "2000000"})
    monkeypatch.setattr(inventory, "_CONFIGS_PER_REQUEST", 1)
    topics = inventory.observe("src", source).topics
    assert topics[f"{topic_name}-a"].configs == {"retention.ms": "1000000"}
    assert topics[f"{topic_name}-b"].configs == {"retention.ms": "2000000"}


def test_kept_observers_look_again_with_the_same_client_and_connect_anew_after_a_failure(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    down = {"bootstrap.servers": f"127.0.0.1:{free_port()}"}
    configs = {"src": source, "gone": down}
    observers = inventory.Observers(configs, timeout=5)

    with pytest.raises(KafkaUnavailableError, match=r"^cluster gone \("):
        observers.observe_all(settings=False)
    kept = observers._kept["src"].admin
    assert "gone" not in observers._kept  # no client kept for a cluster that did not answer

    del configs["gone"]
    create_topic(source, topic_name, 2)
    group = f"itest-group-{uuid.uuid4().hex[:8]}"
    consumer = Consumer({**source, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic_name, 1, 0)], asynchronous=False)
    finally:
        consumer.close()
    deadline = time.monotonic() + 10  # the controller's topic reaches the broker's metadata
    while topic_name not in (found := observers.observe_all(settings=False)["src"]).topics:
        assert time.monotonic() < deadline
        time.sleep(0.2)

    assert observers._kept["src"].admin is kept  # the same client, round after round
    assert found.topics[topic_name].partitions == 2
    assert dict(found.groups[group].offsets) == {(topic_name, 1): 0}
    assert found.owned == {}  # the offset rounds never read topo's state topic
    assert STATE_TOPIC in observers.observe_all()["src"].topics  # with settings: everything


def test_copied_beats_are_read_as_they_arrive(target: dict[str, str], topic_name: str) -> None:
    from topology.core.mm2 import wire
    from topology.kafka import heartbeats

    topic = f"src.{topic_name}"  # a copy of src's heartbeats, stamped on arrival as topo's are
    create_topic(target, topic, 1, **{"message.timestamp.type": "LogAppendTime"})

    def beats(times: range) -> list[Record]:
        return [
            Record(topic, 0, *wire.encode_heartbeat(wire.Heartbeat("src", "dst", at)))
            for at in times
        ]

    reader = heartbeats.CopiedBeats(target, topic)
    assert heartbeats.CopiedBeats(target, f"{topic}-none").since_last() == []  # not there yet
    records.produce(target, beats(range(1000, 1025)))
    first = reader.since_last()
    assert first is not None
    # The first look: the partition's last HISTORY, oldest first, each stamped by the broker.
    assert [b.emitted_ms for b in first] == list(range(1025 - heartbeats.HISTORY, 1025))
    assert all(b.source == "src" and b.target == "dst" for b in first)
    assert all(b.arrived_ms is not None and b.arrived_ms > 1025 for b in first)
    consumer = reader.consumer
    assert reader.since_last() == []  # nothing since

    records.produce(target, beats(range(2000, 2003)))
    again = reader.since_last()
    assert again is not None and [b.emitted_ms for b in again] == [2000, 2001, 2002]
    assert reader.consumer is consumer  # one consumer, kept from look to look
    assert reader.consumer is not None and reader.consumer.assignment() == []  # holds nothing

    unreachable = heartbeats.CopiedBeats({"bootstrap.servers": f"127.0.0.1:{free_port()}"}, topic)
    assert unreachable.since_last(timeout=2) is None  # the target away: no look, no client kept
    assert unreachable.consumer is None
    reader.close()
