"""Write and read whole topics with their full record shape; used by the demo and tests.

A `Record` carries everything replication must keep: key, value, headers (in order, with
duplicates), timestamp and partition.
"""

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from confluent_kafka import (
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from topology.core.errors import KafkaUnavailableError, TopicNotFoundError
from topology.core.naming import READ_GROUPS
from topology.kafka import client

Headers = tuple[tuple[str, bytes | None], ...]


@dataclass(frozen=True)
class Record:
    topic: str
    partition: int
    key: bytes | None
    value: bytes | None
    headers: Headers = ()
    timestamp_ms: int | None = None  # None: the producer's clock
    offset: int | None = None  # known only for records read back
    # Read back: the broker stamped `timestamp_ms` when the record arrived (the topic's
    # message.timestamp.type is LogAppendTime), not the producer. Not part of its content.
    appended: bool = field(default=False, compare=False)

    def content(self) -> tuple[int, bytes | None, bytes | None, Headers, int | None]:
        """What replication must preserve: everything except the topic name and offset."""
        return (self.partition, self.key, self.value, self.headers, self.timestamp_ms)


def create_topic(
    config: dict[str, str], name: str, partitions: int, timeout: float = 30, exist_ok: bool = False
) -> None:
    last_error = client.LastError()
    admin = AdminClient(client.quiet(config, last_error, admin=True))
    with client.failures_named(config, f"creating topic {name}", (last_error, admin)):
        futures = admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=timeout)
        try:
            futures[name].result(timeout=timeout)
        except KafkaException as problem:
            if not (exist_ok and problem.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS):
                raise


def delete_topic_if_exists(config: dict[str, str], name: str, timeout: float = 30) -> None:
    last_error = client.LastError()
    admin = AdminClient(client.quiet(config, last_error, admin=True))
    with client.failures_named(config, f"deleting topic {name}", (last_error, admin)):
        if name not in admin.list_topics(timeout=timeout).topics:
            return
        admin.delete_topics([name], request_timeout=timeout)[name].result(timeout=timeout)
        deadline = time.monotonic() + timeout  # deletion is asynchronous on the broker
        while name in admin.list_topics(timeout=timeout).topics and time.monotonic() < deadline:
            time.sleep(0.2)


def produce(config: dict[str, str], records: Iterable[Record], timeout: float = 30) -> None:
    """Write records to their topic and partition; return once every one is acknowledged."""
    producer = Producer({**client.quiet(config), "acks": "all", "enable.idempotence": "true"})
    failures: list[str] = []

    def on_delivery(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    for record in records:
        producer.produce(
            record.topic,
            value=record.value,
            key=record.key,
            partition=record.partition,
            headers=list(record.headers),
            timestamp=record.timestamp_ms or 0,
            on_delivery=on_delivery,
        )
    if producer.flush(timeout) or failures:
        raise KafkaUnavailableError(f"records not acknowledged: {failures[:3] or 'timed out'}")


def read_topic(
    config: dict[str, str], topic: str, timeout: float = 30, last: int | None = None
) -> list[Record]:
    """Every record in `topic` now (or only each partition's `last` ones), ordered by
    partition then offset (read_committed)."""
    last_error = client.LastError()
    with client.failures_named(config, f"reading topic {topic}"):
        consumer = Consumer(
            {
                **client.quiet(config, last_error),
                "group.id": f"{READ_GROUPS}{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
                **client.READ_TO_END,
            }
        )
    try:
        with client.failures_named(config, f"reading topic {topic}", (last_error, consumer)):
            return _consume_to_end(consumer, topic, timeout, last)
    finally:
        consumer.close()


def _consume_to_end(
    consumer: Consumer, topic: str, timeout: float, last: int | None
) -> list[Record]:
    metadata = consumer.list_topics(topic, timeout=timeout).topics[topic]
    if metadata.error is not None:
        if metadata.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:  # not "missing"
            raise KafkaUnavailableError(f"cannot read topic {topic}: {metadata.error}")
        raise TopicNotFoundError(f"cannot read topic {topic}: {metadata.error}")
    starts = {}
    for partition in metadata.partitions:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout)
        if high > low:
            starts[partition] = low if last is None else max(low, high - last)
    consumer.assign([TopicPartition(topic, p, start) for p, start in starts.items()])
    found: list[Record] = []
    pending = set(starts)  # a partition is done when the consumer reports reaching its end
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is None:
            continue
        error = message.error()
        if error is None:
            found.append(_record(message))
        elif error.code() == KafkaError._PARTITION_EOF:
            pending.discard(message.partition())
        else:
            raise KafkaUnavailableError(f"reading {topic} failed: {error}")
    if pending:
        raise KafkaUnavailableError(f"timed out reading {topic} (partitions {sorted(pending)})")
    return sorted(found, key=lambda r: (r.partition, r.offset or 0))


def _record(message: Message) -> Record:
    kind, timestamp = message.timestamp()
    topic, partition = message.topic(), message.partition()
    assert topic is not None and partition is not None  # set on every data message
    headers = message.headers() or []
    pairs = headers.items() if isinstance(headers, dict) else headers
    return Record(
        topic=topic,
        partition=partition,
        key=message.key(),
        value=message.value(),
        headers=tuple((k, v.encode() if isinstance(v, str) else v) for k, v in pairs),
        timestamp_ms=timestamp,
        offset=message.offset(),
        appended=kind == TIMESTAMP_LOG_APPEND_TIME,
    )
