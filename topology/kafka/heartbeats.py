"""Heartbeats: what each replication job writes every second, and how status reads them back.

A heartbeat is a small record in a cluster's `heartbeats` topic, in MM2's own format
(topology/core/mm2/wire.py): key (source alias, target alias: the flow that wrote it), value (its
emit time). MM2 and tools built on its client read them; topo reads MM2's heartbeats too, and
the JSON ones topo wrote before it used MM2's format. Like MM2's, they are copied onward under
a prefix (`east.heartbeats` on west), whatever the flow's topic filter says. Every heartbeat
topic and copy topo creates is stamped by its broker on arrival (LogAppendTime), so a copy's
timestamp minus its emit time is the flow's end-to-end latency. A copy MM2 created keeps the
producer's time (MM2 does not copy `message.timestamp.type`): its arrival is unknown, and only
how old the newest heartbeat is tells whether the flow copies.
"""

import contextlib
import json
import time
import uuid
from dataclasses import dataclass

from confluent_kafka import (
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from topology.core.errors import KafkaUnavailableError, TopoError
from topology.core.jobs import JobSpec
from topology.core.mm2 import wire
from topology.core.naming import HEARTBEATS, READ_GROUPS, heartbeats_copy
from topology.kafka import client

HISTORY = 20  # records read back per partition: the recent latencies status shows


@dataclass(frozen=True)
class Heartbeat:
    source: str
    target: str
    emitted_ms: int
    # The broker's append time on the cluster it was read from; None where the topic keeps
    # the producer's time (CreateTime), which for a copy is the emit time again.
    arrived_ms: int | None

    @property
    def latency_ms(self) -> int | None:
        return None if self.arrived_ms is None else self.arrived_ms - self.emitted_ms


class Emitter:
    """One producer per cluster; `beat` never blocks, `flush` waits for what was sent."""

    def __init__(self, configs: dict[str, dict[str, str]]) -> None:
        self._producers = {
            name: Producer({**client.quiet(config), "linger.ms": 0, "acks": "all"})
            for name, config in configs.items()
        }

    def beat(self, cluster: str, source: str, target: str) -> None:
        producer = self._producers[cluster]
        key, value = wire.encode_heartbeat(wire.Heartbeat(source, target, int(time.time() * 1000)))
        # BufferError: the cluster is unreachable and the queue full; a missing beat is the signal.
        with contextlib.suppress(BufferError):
            producer.produce(HEARTBEATS, key=key, value=value)
        producer.poll(0)

    def flush(self, timeout: float = 5) -> None:
        for producer in self._producers.values():
            producer.flush(timeout)


def copied(target: dict[str, str], spec: JobSpec, timeout: float = 5) -> list[Heartbeat] | None:
    """The recent heartbeats of the flow's source as copied to its target (`target` is the
    target's client config): each partition's last `HISTORY`, oldest emitted first; empty while
    the copy topic does not exist; None when the target cannot be read now. What `topo status`
    reads: one look of a `CopiedBeats` made for it."""
    reader = CopiedBeats(target, heartbeats_copy(spec.source, spec.separator))
    try:
        return reader.since_last(timeout)
    finally:
        reader.close()


class CopiedBeats:
    """One flow's heartbeats as copied to its target, read as they arrive: what the running
    driver's metrics look at every few seconds. One consumer is kept for the driver's life and
    each look reads from where the last one stopped (the first look, each partition's last
    `HISTORY`). Between looks the consumer holds no partition, so it fetches nothing."""

    def __init__(self, target: dict[str, str], topic: str) -> None:
        self.config = target
        self.topic = topic  # heartbeats_copy(spec.source, spec.separator)
        self.last_error = client.LastError()
        self.consumer: Consumer | None = None
        self.next: dict[int, int] = {}  # partition -> the next offset to read

    def since_last(self, timeout: float = 5) -> list[Heartbeat] | None:
        """The heartbeats copied since the last look, oldest emitted first; [] while the copy
        topic does not exist; None when the target cannot be read now (the next look
        connects anew)."""
        doing = f"reading topic {self.topic}"
        try:
            with client.failures_named(self.config, doing):
                if self.consumer is None:
                    self.consumer = Consumer(self._settings())
            with client.failures_named(self.config, doing, (self.last_error, self.consumer)):
                messages = self._read(self.consumer, time.monotonic() + timeout)
        except TopoError:
            self.close()
            return None
        beats = (_parsed(message) for message in messages)
        return sorted((b for b in beats if b is not None), key=lambda h: h.emitted_ms)

    def close(self) -> None:
        consumer, self.consumer, self.next = self.consumer, None, {}
        if consumer is not None:
            with contextlib.suppress(KafkaException, RuntimeError):
                consumer.close()

    def _settings(self) -> dict[str, object]:
        return {
            **client.quiet(self.config, self.last_error),
            # Offsets come from assign(); the group id is never used to commit.
            "group.id": f"{READ_GROUPS}{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "auto.offset.reset": "earliest",
            **client.READ_TO_END,
        }

    def _read(self, consumer: Consumer, deadline: float) -> list[Message]:
        left = max(0.1, deadline - time.monotonic())
        metadata = consumer.list_topics(self.topic, timeout=left).topics[self.topic]
        if metadata.error is not None:
            if metadata.error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
                raise KafkaUnavailableError(f"cannot read topic {self.topic}: {metadata.error}")
            self.next = {}  # not there (yet, or any more)
            return []
        pending: set[int] = set()
        for partition in sorted(metadata.partitions):
            left = max(0.1, deadline - time.monotonic())
            where = TopicPartition(self.topic, partition)
            low, high = consumer.get_watermark_offsets(where, timeout=left, cached=False)
            start = self.next.get(partition)
            if start is None or not low <= start <= high:  # new, or its topic made again
                start = max(low, high - HISTORY)
            self.next[partition] = start
            if high > start:
                pending.add(partition)
        self.next = {p: o for p, o in self.next.items() if p in metadata.partitions}
        if not pending:
            return []
        consumer.assign([TopicPartition(self.topic, p, self.next[p]) for p in sorted(pending)])
        found: list[Message] = []
        try:
            # A partition is done when the consumer reports reaching its end (a transactional
            # copy's last offset is a commit marker, never delivered).
            while pending and time.monotonic() < deadline:
                message = consumer.poll(min(0.5, max(0.0, deadline - time.monotonic())))
                if message is None:
                    continue
                error, partition = message.error(), message.partition()
                if error is not None and error.code() == KafkaError._PARTITION_EOF:
                    pending.discard(partition)
                    end = message.offset()
                    if partition is not None and end is not None and end >= 0:
                        self.next[partition] = end  # past a commit marker too
                elif error is not None:
                    raise KafkaException(error)
                elif partition is not None:
                    found.append(message)
                    self.next[partition] = message.offset() + 1  # type: ignore[operator]
        finally:
            consumer.unassign()
        return found


def _parsed(message: Message) -> Heartbeat | None:
    kind, timestamp = message.timestamp()
    return parse(
        message.key(), message.value(), timestamp if kind == TIMESTAMP_LOG_APPEND_TIME else None
    )


def parse(key: bytes | None, value: bytes | None, timestamp: int | None) -> Heartbeat | None:
    """A heartbeat in MM2's format (topo's and MM2's own), or in the JSON topo wrote before;
    None for anything else. `timestamp`: when it arrived, if the broker stamped it."""
    beat = wire.decode_heartbeat(key, value)
    if beat is not None:
        return Heartbeat(beat.source, beat.target, beat.timestamp_ms, timestamp)
    try:
        flow = json.loads(key or b"")
        body = json.loads(value or b"")
        return Heartbeat(flow["source"], flow["target"], int(body["emitted_ms"]), timestamp)
    except (ValueError, KeyError, TypeError):
        return None
