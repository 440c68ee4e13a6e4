"""Reads a MirrorMaker 2 flow's state off its clusters for a handover (`start: mm2`): its
committed source positions from MM2's offsets topic and whether it runs from its status
topic, both on the target, and the source partitions' ends (topology/core/mm2/positions.py says
what they mean)."""

from collections.abc import Collection

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from topology.core.errors import KafkaUnavailableError, TopicNotFoundError
from topology.core.mm2 import positions
from topology.core.mm2.positions import Handover, Names
from topology.kafka import client, records
from topology.kafka.ends import PartitionEnds


def handover(
    flow: str,
    source: str,
    names: Names,
    source_config: dict[str, str],
    target_config: dict[str, str],
    topics: Collection[str],
    timeout: float = 30,
) -> Handover:
    """MM2's state for `flow` (from `source`; its Connect topics on the target `names`); the
    source ends are asked for the partitions of `topics` (the ones the flow copies now) only."""
    resume = resumes(target_config, source, names, timeout)
    mine = [partition for partition in resume if partition[0] in topics]
    ends = PartitionEnds(source_config).of(mine, timeout=timeout) if mine else {}
    alive = running(target_config, names, timeout)
    return Handover(flow, names.offsets_topic, names.status_topic, alive, resume, ends)


def resumes(
    config: dict[str, str], source: str, names: Names, timeout: float
) -> dict[tuple[str, int], int]:
    """Where MM2 resumes each partition of `source` it copied, by its offsets topic on this
    cluster (`positions.resume_positions`)."""
    found = _read(config, names.offsets_topic, timeout)
    return positions.resume_positions(found, source, names.connector)


def running(config: dict[str, str], names: Names, timeout: float) -> tuple[str, ...]:
    """The parts of MM2's source connector that run now, by its status topic on this, its
    flow's target, cluster (`positions.running`)."""
    return positions.running(status_records(config, names, timeout), names.connector)


Pair = tuple[bytes | None, bytes | None]


def status_records(config: dict[str, str], names: Names, timeout: float) -> list[Pair]:
    """The records of MM2's status topic (`names`) on this cluster; [] when it is missing."""
    return _read(config, names.status_topic, timeout)


def _read(config: dict[str, str], topic: str, timeout: float) -> list[Pair]:
    try:
        return [(r.key, r.value) for r in records.read_topic(config, topic, timeout=timeout)]
    except TopicNotFoundError:
        return []


OFFSETS_PARTITIONS = 25  # Connect's default offset.storage.partitions


def write_positions(
    config: dict[str, str], names: Names, entries: list[Pair], timeout: float = 30
) -> str:
    """Write MM2 offsets records (`positions.offset_record`) to MM2's offsets topic (`names`)
    on this, its flow's target, cluster (made as Connect makes it when missing: compacted, 25
    partitions, the cluster's replication factor); the topic's name. Each goes to the
    partition Java's default partitioner picks for its key, where MM2's own commits of that
    key are: the newest of them is the one MM2 reads."""
    topic = names.offsets_topic
    admin = AdminClient(client.quiet(config, admin=True))
    with client.failures_named(config, f"creating MM2's offsets topic {topic}"):
        made = NewTopic(topic, OFFSETS_PARTITIONS, -1, config={"cleanup.policy": "compact"})
        future = admin.create_topics([made], request_timeout=timeout)[topic]
        try:
            future.result(timeout)
        except KafkaException as problem:
            error = problem.args[0] if problem.args else None
            if not (
                isinstance(error, KafkaError) and error.code() == KafkaError.TOPIC_ALREADY_EXISTS
            ):
                raise
    settings = {
        **client.quiet(config),
        "acks": "all",
        "enable.idempotence": "true",
        "partitioner": "murmur2_random",
    }
    producer = Producer(settings)
    failures: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    for key, value in entries:
        producer.produce(topic, key=key, value=value, on_delivery=delivered)
    if producer.flush(timeout) or failures:
        raise KafkaUnavailableError(
            f"writing MM2's positions to {topic} failed: {failures[:1] or 'timed out'}"
        )
    return topic
