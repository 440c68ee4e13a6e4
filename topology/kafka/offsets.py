"""Kafka I/O for offset translation: looking at a partition's stamped copies, a group's
committed offsets and members, committing offsets, and topo's checkpoint and progress logs."""

import contextlib
import time
import uuid
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient

from topology.core.errors import ActiveGroupError, KafkaUnavailableError, TopicNotFoundError
from topology.core.jobs import OFFSETS_HEADER, hop_offsets
from topology.core.mm2 import wire
from topology.core.naming import OFFSETS_GROUPS
from topology.core.offsets import checkpoints
from topology.core.offsets.checkpoints import Checkpoint, CheckpointKey
from topology.core.verify import Stored
from topology.kafka import client, records

BACK_STEP = 500  # records read per step when looking backwards for a copy


class PartitionReader:
    """Reads single partitions at chosen offsets (read_committed); never joins a group."""

    def __init__(self, config: dict[str, str], timeout: float = 30) -> None:
        self.config = config
        self.timeout = timeout
        self.last_error = client.LastError()
        with client.failures_named(config, "reading offsets"):
            self.consumer = Consumer(
                {
                    **client.quiet(config, self.last_error),
                    "group.id": f"{OFFSETS_GROUPS}{uuid.uuid4().hex}",
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                    **client.READ_TO_END,
                    # A probe needs a few records, not librdkafka's default megabytes.
                    "max.partition.fetch.bytes": 65536,
                    "queued.min.messages": 100,
                }
            )

    def close(self) -> None:
        self.consumer.close()

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        """The partition's first offset and its end (the next offset to be written)."""
        with client.failures_named(
            self.config,
            f"reading {topic} [{partition}]'s offsets",
            (self.last_error, self.consumer),
        ):
            low, high = self.consumer.get_watermark_offsets(
                TopicPartition(topic, partition), self.timeout
            )
        return int(low), int(high)

    def offset_at(self, topic: str, partition: int, ms: int) -> int | None:
        """The first offset whose timestamp is at or after `ms` (None: no record that new)."""
        with client.failures_named(
            self.config,
            f"looking up {topic} [{partition}]'s offset at a time",
            (self.last_error, self.consumer),
        ):
            [found] = self.consumer.offsets_for_times(
                [TopicPartition(topic, partition, ms)], self.timeout
            )
        if found.error is not None:
            raise KafkaUnavailableError(
                f"looking up {topic} [{partition}]'s offset at a time failed: {found.error}"
            )
        return None if found.offset < 0 else int(found.offset)

    def first_stamped(
        self, topic: str, partition: int, offset: int, cluster: str, before: int | None = None
    ) -> tuple[int, int] | None:
        """The first record at or after `offset` copied from `cluster`: (its offset here, its
        offset on `cluster`), or None when none is there up to the end (or `before`)."""
        if before is not None and before <= offset:
            return None
        # Closed on return: its `finally` unassigns the partition, which would otherwise go on
        # being fetched until the generator is collected
        with contextlib.closing(self._read(topic, partition, offset, before)) as read:
            for message_offset, stamps in read:
                if cluster in stamps:
                    return message_offset, stamps[cluster]
        return None

    def last_stamped_before(
        self, topic: str, partition: int, offset: int, cluster: str, after: int | None = None
    ) -> tuple[int, int] | None:
        """The last record before `offset` copied from `cluster`, or None back to the start
        (or back to just after `after`)."""
        low, _high = self.bounds(topic, partition)
        if after is not None:
            low = max(low, after + 1)
        end = offset
        while end > low:
            start = max(low, end - BACK_STEP)
            found = [
                (o, s[cluster]) for o, s in self._read(topic, partition, start, end) if cluster in s
            ]
            if found:
                return found[-1]
            end = start
        return None

    def offsets(self, topic: str, partition: int, start: int, end: int) -> list[int]:
        """The offsets of the committed records from `start` to before `end`."""
        if end <= start:
            return []
        return [offset for offset, _stamps in self._read(topic, partition, start, end)]

    def records(
        self, topic: str, partition: int, start: int, end: int
    ) -> Generator[Stored, None, None]:
        """Each committed record from `start` to before `end`, in order, as it is stored."""
        if end <= start:
            return
        with contextlib.closing(self._messages(topic, partition, start, end)) as read:
            for message in read:
                _kind, at = message.timestamp()
                offset = message.offset()
                assert offset is not None
                headers = tuple(message.headers() or ())
                yield Stored(offset, message.key(), message.value(), headers, int(at))

    def timestamp(self, topic: str, partition: int, offset: int) -> int | None:
        """The timestamp (ms) of the first committed record at or after `offset`; None when
        there is none up to the end."""
        with contextlib.closing(self._messages(topic, partition, offset, None)) as read:
            for message in read:
                _kind, at = message.timestamp()
                return int(at)
        return None

    def _read(
        self, topic: str, partition: int, start: int, end: int | None
    ) -> Generator[tuple[int, dict[str, int]], None, None]:
        """(offset, source offsets by cluster) of each record from `start` to `end` or the end."""
        with contextlib.closing(self._messages(topic, partition, start, end)) as read:
            for message in read:
                here = message.offset()
                assert here is not None
                yield here, _stamps(message.headers())

    def _messages(
        self, topic: str, partition: int, start: int, end: int | None
    ) -> Generator[Any, None, None]:
        """Each committed record from `start` to `end` or the end."""
        doing = f"reading {topic} [{partition}] at offset {start}"
        with client.failures_named(self.config, doing, (self.last_error, self.consumer)):
            self.consumer.assign([TopicPartition(topic, partition, start)])
            deadline = time.monotonic() + self.timeout
            try:
                while time.monotonic() < deadline:
                    message = self.consumer.poll(0.5)
                    if message is None:
                        continue
                    error = message.error()
                    if error is not None:
                        if error.code() == KafkaError._PARTITION_EOF:
                            return
                        raise KafkaUnavailableError(f"{doing} failed: {error}")
                    here = message.offset()
                    assert here is not None
                    if end is not None and here >= end:
                        return
                    yield message
                    deadline = time.monotonic() + self.timeout
                raise KafkaUnavailableError(f"{doing}: no answer in {self.timeout:.0f}s")
            finally:
                self.consumer.unassign()


def _stamps(headers: Any) -> dict[str, int]:
    """The `topo-offsets` stamps of a record's headers (a list of pairs from librdkafka)."""
    values = [value for key, value in headers or [] if key == OFFSETS_HEADER]
    return hop_offsets(values[-1]) if values else {}


@dataclass(frozen=True)
class GroupState:
    state: str  # as the broker says: STABLE, EMPTY, DEAD, ...
    members: int


class Groups:
    """A cluster's consumer groups: committed offsets, members, and committing offsets."""

    def __init__(self, config: dict[str, str], timeout: float = 30) -> None:
        self.config = config
        self.timeout = timeout
        self.admin = AdminClient(client.quiet(config, admin=True))

    def offsets(self, group: str) -> dict[tuple[str, int], int]:
        with client.failures_named(self.config, f"reading group {group}'s offsets"):
            answer = self.admin.list_consumer_group_offsets(
                [ConsumerGroupTopicPartitions(group)], request_timeout=self.timeout
            )[group].result(self.timeout)
        return {
            (tp.topic, tp.partition): tp.offset
            for tp in answer.topic_partitions or []
            if tp.error is None and tp.offset >= 0
        }

    def state(self, group: str) -> GroupState:
        with client.failures_named(self.config, f"describing group {group}"):
            described = self.admin.describe_consumer_groups([group], request_timeout=self.timeout)[
                group
            ].result(self.timeout)
        state = getattr(described.state, "name", str(described.state))
        return GroupState(state, len(described.members or []))

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        """Commit `offsets` for `group`. The broker refuses while the group has members."""
        partitions = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
        try:
            with client.failures_named(self.config, f"committing group {group}'s offsets"):
                answer = self.admin.alter_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group, partitions)],
                    request_timeout=self.timeout,
                )[group].result(self.timeout)
        except KafkaUnavailableError as problem:
            if "UNKNOWN_MEMBER_ID" in str(problem) or "member" in str(problem).lower():
                raise ActiveGroupError(
                    f"group {group} is active on {self.config.get('bootstrap.servers')}"
                ) from None
            raise
        failed = [tp for tp in answer.topic_partitions or [] if tp.error is not None]
        if failed:
            raise KafkaUnavailableError(
                f"committing group {group}'s offset of {failed[0].topic} [{failed[0].partition}] "
                f"failed: {failed[0].error}"
            )


def read_log(config: dict[str, str], topic: str) -> list[bytes | None]:
    """The values of a topo log topic (checkpoints, progress) in order; [] when it is missing."""
    try:
        return [record.value for record in records.read_topic(config, topic)]
    except TopicNotFoundError:
        return []


def read_mm2_syncs(config: dict[str, str], topic: str) -> list[wire.OffsetSync]:
    """MM2's offset-syncs in `topic`, in the order it wrote them; [] when it is missing."""
    try:
        found = records.read_topic(config, topic)
    except TopicNotFoundError:
        return []
    syncs = (wire.decode_offset_sync(record.key, record.value) for record in found)
    return [sync for sync in syncs if sync is not None]


def read_mm2_checkpoints(
    config: dict[str, str], topic: str
) -> dict[tuple[str, str, int], wire.Checkpoint]:
    """The newest checkpoint in MM2's format per (group, topic, partition) in `topic`."""
    try:
        found = records.read_topic(config, topic)
    except TopicNotFoundError:
        return {}
    newest = {}
    for record in found:
        checkpoint = wire.decode_checkpoint(record.key, record.value)
        if checkpoint is not None:
            newest[(checkpoint.group, checkpoint.topic, checkpoint.partition)] = checkpoint
    return newest


def read_checkpoints(config: dict[str, str], topic: str) -> dict[CheckpointKey, Checkpoint]:
    """The latest checkpoint of each group, topic and partition in a checkpoints topic."""
    found = (checkpoints.decode_checkpoint(value) for value in read_log(config, topic))
    return checkpoints.latest_checkpoints(c for c in found if c is not None)


def read_progress(config: dict[str, str], topic: str, flow: str) -> dict[tuple[str, int], int]:
    """How far `flow` has processed each source (topic, partition), from its progress log."""
    found = (checkpoints.decode_progress(value) for value in read_log(config, topic))
    return checkpoints.latest_progress((p for p in found if p is not None), flow)


class LogWriter:
    """Appends keyed records to topo's log topics on one cluster."""

    def __init__(self, config: dict[str, str]) -> None:
        self.config = config
        self.producer = Producer({**client.quiet(config), "acks": "all", "linger.ms": 5})
        self.failed: list[str] = []

    def write(self, topic: str, entries: Iterable[tuple[bytes, bytes]]) -> None:
        def on_delivery(error: object, _message: object) -> None:
            if error is not None:
                self.failed.append(str(error))

        for key, value in entries:
            self.producer.produce(topic, key=key, value=value, on_delivery=on_delivery)
            self.producer.poll(0)

    def flush(self, timeout: float = 30) -> None:
        left = self.producer.flush(timeout)
        if left or self.failed:
            reason = self.failed[0] if self.failed else f"{left} record(s) not acknowledged"
            self.failed = []
            raise KafkaUnavailableError(
                f"writing to {self.config.get('bootstrap.servers', '?')} failed: {reason}"
            )
