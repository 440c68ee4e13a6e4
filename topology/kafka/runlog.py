"""`topo-runs.internal` read and written: a running replication's state, from any machine.

`RunLog.read` replays partition 0 into one `runstate.Book`: from the beginning on the first
call, then from where the last call stopped. `RunLog.write` appends one record keyed
`<owner>/<kind>` and returns its offset and the broker's timestamp (LogAppendTime), the clock
every lease decision is made by.
"""

import time
import uuid
from contextlib import AbstractContextManager
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from topology.core import runstate
from topology.core.errors import KafkaUnavailableError, TopicNotFoundError
from topology.core.naming import RUNS_GROUPS, RUNS_TOPIC
from topology.kafka import client


class RunLog:
    """One owner's view of the run-state topic on one cluster; not thread-safe."""

    def __init__(
        self,
        config: dict[str, str],
        owner: str,
        timeout: float = 10.0,
        *,
        cluster: str | None = None,
    ) -> None:
        self.owner = owner
        self.timeout = timeout
        self._config = config
        bootstrap = config.get("bootstrap.servers", "?")
        self._cluster = cluster or bootstrap  # named in advice
        self._where = f"{cluster} ({bootstrap})" if cluster else bootstrap  # named in failures
        self._topic_seen = False
        self._book = runstate.Book()
        self._consumer: Consumer | None = None
        self._consumer_error = client.LastError()
        self._assigned = False
        self._producer: Producer | None = None
        self._producer_error = client.LastError()

    # -- reading ----------------------------------------------------------------------------

    def read(self) -> runstate.Book:
        """The book, fed every record up to the partition's high watermark as of now."""
        doing = f"reading {RUNS_TOPIC}"
        deadline = time.monotonic() + self.timeout
        consumer = self._open_consumer()
        with self._failures(doing, self._consumer_error, consumer):
            self._require_topic(consumer, deadline)
            low, high = _watermarks(consumer, deadline)
            start = max(low, self._book.next_offset)
            if high <= start:
                return self._book
            if not self._assigned:
                consumer.assign([TopicPartition(RUNS_TOPIC, 0, start)])
                self._assigned = True
            while self._book.next_offset < high:
                if time.monotonic() >= deadline:
                    raise TimeoutError
                message = consumer.poll(min(0.5, _left(deadline)))
                if message is not None:
                    self._take(message, high)
        return self._book

    def _take(self, message: Message, high: int) -> None:
        error = message.error()
        offset = message.offset()
        if error is not None:
            if error.code() != KafkaError._PARTITION_EOF:
                raise KafkaException(error)
            # The end at the time of the fetch; an earlier read's end is not this one's.
            if offset is not None and offset >= high:
                self._book.next_offset = max(self._book.next_offset, offset)
            return
        assert offset is not None  # set on every record read
        _kind, timestamp = message.timestamp()
        self._book.feed(message.key(), message.value(), timestamp, offset)

    def _open_consumer(self) -> Consumer:
        if self._consumer is None:
            settings = {
                **client.quiet(self._config, self._consumer_error),
                # Offsets come from assign(); the group id is never used to commit.
                "group.id": f"{RUNS_GROUPS}{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",  # an offset compacted away: the next one
                "allow.auto.create.topics": False,
            }
            with client.failures_named(self._config, f"reading {RUNS_TOPIC}"):
                self._consumer = Consumer(settings)
        return self._consumer

    # -- writing ----------------------------------------------------------------------------

    def write(self, kind: str, value: dict[str, Any]) -> tuple[int, int]:
        """Append `value` as this owner's record of `kind`; once acknowledged by every in-sync
        replica, its (offset, broker timestamp in ms)."""
        key = runstate.record_key(self.owner, kind)
        payload = runstate.encode(value)
        doing = f"writing {self.owner}'s {kind} to {RUNS_TOPIC}"
        deadline = time.monotonic() + self.timeout
        producer = self._open_producer()
        delivered: list[tuple[int, int]] = []
        failures: list[str] = []

        def on_delivery(error: KafkaError | None, message: Message) -> None:
            if error is not None:
                failures.append(error.str())
                return
            offset = message.offset()
            _kind, timestamp = message.timestamp()
            delivered.append((offset if offset is not None else -1, timestamp))

        with self._failures(doing, self._producer_error, producer):
            try:
                producer.produce(
                    RUNS_TOPIC, value=payload, key=key, partition=0, on_delivery=on_delivery
                )
            except BufferError:
                raise KafkaUnavailableError(
                    f"{doing} on {self._where} failed: the producer's queue is full"
                ) from None
            unsent = producer.flush(_left(deadline))
        if failures or unsent or not delivered:
            reason = failures[0] if failures else None
            reason = reason or self._producer_error.reason or "no answer in time"
            raise KafkaUnavailableError(f"{doing} on {self._where} failed: {reason}")
        return delivered[0]

    def _open_producer(self) -> Producer:
        if self._producer is None:
            settings = {
                **client.quiet(self._config, self._producer_error),
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 0,
                "message.timeout.ms": max(1000, int(self.timeout * 1000)),
                # A missing topic is refused, never created with a broker's defaults.
                "allow.auto.create.topics": False,
            }
            with client.failures_named(self._config, "connecting a producer"):
                producer = Producer(settings)
            doing = f"writing to {RUNS_TOPIC}"
            with self._failures(doing, self._producer_error, producer):
                self._require_topic(producer, time.monotonic() + self.timeout)
            self._producer = producer
        return self._producer

    # -- both -------------------------------------------------------------------------------

    def _require_topic(self, kafka_client: Any, deadline: float) -> None:
        """TopicNotFoundError unless the topic exists (asked once per RunLog). Every topic's
        metadata is asked for: a request naming the topic could create it on a cluster that
        creates topics on demand."""
        if self._topic_seen:
            return
        if RUNS_TOPIC not in kafka_client.list_topics(timeout=_left(deadline)).topics:
            raise TopicNotFoundError(
                f"{RUNS_TOPIC} does not exist on {self._where}: run `topo apply FILE`: "
                f"it creates {RUNS_TOPIC} on {self._cluster}"
            )
        self._topic_seen = True

    def _failures(
        self, doing: str, last_error: client.LastError, kafka_client: Any
    ) -> AbstractContextManager[None]:
        last_error.reason = None  # the client is long-lived: only this call's errors count
        config = {**self._config, "bootstrap.servers": self._where}
        return client.failures_named(config, doing, (last_error, kafka_client))

    def close(self) -> None:
        """Flush what was written and let go of the clients; the RunLog can open them again."""
        if self._producer is not None:
            self._producer.flush(self.timeout)
            self._producer = None
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
            self._assigned = False

    def __enter__(self) -> "RunLog":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _watermarks(consumer: Consumer, deadline: float) -> tuple[int, int]:
    """The runs partition's low and high watermarks, asked again while its leader moves."""
    while True:
        try:
            low, high = consumer.get_watermark_offsets(
                TopicPartition(RUNS_TOPIC, 0), timeout=_left(deadline), cached=False
            )
            return low, high
        except KafkaException as problem:
            error = problem.args[0] if problem.args else None
            moving = isinstance(error, KafkaError) and error.code() in client.LEADER_MOVING
            if not moving or time.monotonic() >= deadline:
                raise
        time.sleep(0.1)


def _left(deadline: float) -> float:
    return max(0.1, deadline - time.monotonic())
