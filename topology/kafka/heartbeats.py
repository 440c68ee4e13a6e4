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
from dataclasses import dataclass

from confluent_kafka import Producer

from topology.core.errors import TopicNotFoundError, TopoError
from topology.core.jobs import JobSpec
from topology.core.mm2 import wire
from topology.core.naming import HEARTBEATS, heartbeats_copy
from topology.kafka import client, records

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


def recent(config: dict[str, str], topic: str, timeout: float = 10) -> list[Heartbeat]:
    """The last heartbeats in `topic` (a cluster's `heartbeats` or a copy such as
    `east.heartbeats`), oldest emitted first; empty when the topic does not exist yet."""
    try:
        found = records.read_topic(config, topic, timeout=timeout, last=HISTORY)
    except TopicNotFoundError:
        return []
    beats = (parse(r.key, r.value, r.timestamp_ms if r.appended else None) for r in found)
    return sorted((b for b in beats if b is not None), key=lambda h: h.emitted_ms)


def copied(target: dict[str, str], spec: JobSpec, timeout: float = 5) -> list[Heartbeat] | None:
    """The recent heartbeats of the flow's source as copied to its target (`target` is the
    target's client config), oldest emitted first; None when the target cannot be read now.
    What `topo status` and the driver's metrics both read."""
    try:
        return recent(target, heartbeats_copy(spec.source, spec.separator), timeout=timeout)
    except TopoError:
        return None


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
