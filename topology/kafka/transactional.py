"""Copy one batch of source records into the target cluster exactly once; run by each Spark task.

Apache Spark has no transactional Kafka sink (SPARK-28908 was closed unmerged), so each task
writes its batch itself, the way MirrorMaker 2's exactly-once source support does (KIP-618):
one Kafka transaction per source partition holds the copied records together with how far they
reach, stored as an offset of the progress group on the target cluster. Both become visible to
read_committed readers, or neither does.

Two attempts at one batch cannot both write: the transactional id is stable per source
partition, so `init_transactions` of a newer attempt fences an older one. After a crash Spark
replays the same offset range; the attempt first reads the committed progress and skips what an
earlier attempt already committed.
"""

import contextlib
import itertools
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from topology.core.errors import KafkaUnavailableError
from topology.kafka import client
from topology.kafka.records import Headers

TopicPartitionKey = tuple[str, int]


@dataclass(frozen=True)
class Row:
    """One record to copy, already renamed for the target."""

    topic: str  # target topic
    partition: int  # target partition (the source partition's number)
    key: bytes | None
    value: bytes | None
    headers: Headers  # order and duplicates kept, values may be None
    timestamp_ms: int  # the source record's timestamp, written as the copy's
    source_topic: str
    source_partition: int
    source_offset: int


@dataclass(frozen=True)
class Written:
    written: int  # records produced and committed by this call
    skipped: int  # records an earlier attempt had already committed


_PRODUCER_SETTINGS = {
    "enable.idempotence": "true",
    "acks": "all",
    # A transaction spans one batch of one partition; the engine bounds the batch's size.
    "transaction.timeout.ms": "60000",
    "linger.ms": "5",
}

_CACHE_LOCK = threading.Lock()
# One producer per transactional id for the life of the process: Spark reuses Python workers,
# and `init_transactions` costs several round trips, once per batch otherwise.
_PRODUCERS: dict[str, tuple[Producer, client.LastError]] = {}
# One progress reader per cluster and group. It reads committed progress and names the group
# to the transaction; it never subscribes, so it never joins the group.
_READERS: dict[tuple[tuple[tuple[str, str], ...], str], tuple[Consumer, client.LastError]] = {}


def write_exactly_once(
    config: dict[str, str],
    rows: Iterable[Row],
    *,
    transactional_prefix: str,
    progress_group: str,
    timeout: float = 60,
) -> Written:
    """Copy `rows` (in source offset order) to the cluster `config` reaches, exactly once.

    Consecutive rows of one source partition go in one transaction, with transactional id
    `<transactional_prefix>.<source topic>.<source partition>`; the transaction also commits
    progress (last source offset + 1) as `progress_group`'s offset of the target partition.
    `timeout` bounds each wait on the cluster. A failure aborts the transaction: a Kafka failure
    (being fenced by a newer attempt among them) raises KafkaUnavailableError, and an exception
    from `rows` itself is raised as it is.
    """
    reader, _ = _progress_reader(config, progress_group)
    written = skipped = 0
    for (topic, partition), group in itertools.groupby(rows, key=_source_partition):
        transactional_id = f"{transactional_prefix}.{topic}.{partition}"
        copied = _PartitionCopy(config, transactional_id, reader, timeout).run(group)
        written += copied.written
        skipped += copied.skipped
    return Written(written, skipped)


def committed_progress(
    config: dict[str, str],
    progress_group: str,
    partitions: Iterable[TopicPartitionKey],
    timeout: float = 30,
) -> dict[TopicPartitionKey, int]:
    """The committed progress of `progress_group` on the target partitions that have any."""
    wanted = list(partitions)
    if not wanted:
        return {}
    reader, last_error = _progress_reader(config, progress_group)
    last_error.reason = None  # the reader is shared: only this read's errors count
    doing = f"reading the progress of group {progress_group}"
    with client.failures_named(config, doing, (last_error, reader)):
        return _read_progress(reader, wanted, timeout)


def _source_partition(row: Row) -> TopicPartitionKey:
    return row.source_topic, row.source_partition


class _PartitionCopy:
    """The rows of one source partition, copied in one transaction."""

    def __init__(
        self, config: dict[str, str], transactional_id: str, reader: Consumer, timeout: float
    ) -> None:
        self.config = config
        self.transactional_id = transactional_id
        self.reader = reader
        self.timeout = timeout
        self.producer: Producer | None = None
        self.last_error = client.LastError()
        self.fresh = False  # the producer was created (and its transactions initialised) here
        self.open = False  # a transaction is begun and not yet committed or aborted

    def run(self, rows: Iterable[Row]) -> Written:
        try:
            return self._copy(iter(rows))
        except KafkaException as problem:
            failure = self._failure(problem)  # before aborting, whose log lines hide the cause
            self._abandon()
            raise failure from None
        except BaseException:  # the rows failed (Spark killed the task): nothing may commit
            self._abandon()
            raise

    def _copy(self, rows: Iterator[Row]) -> Written:
        first = next(rows)  # groupby yields no empty group
        target = (first.topic, first.partition)
        self._take_producer()
        # Read only now: `init_transactions` of a new producer has just ended any transaction an
        # earlier attempt left open, so the progress read is settled rather than waited on.
        done = self._progress(target)
        written = skipped = 0
        end = -1
        for row in itertools.chain([first], rows):
            if (row.topic, row.partition) != target:
                raise ValueError(
                    f"{self.transactional_id}: one source partition's rows go to "
                    f"{target[0]}[{target[1]}] and {row.topic}[{row.partition}]"
                )
            if row.source_offset < done:
                skipped += 1
                continue
            if not self.open:
                done = self._begin_with(row, target, done)
                if row.source_offset < done:  # a newer attempt had committed it meanwhile
                    skipped += 1
                    continue
            else:
                self._produce(row)
            written += 1
            end = row.source_offset + 1
        if self.open:
            self._commit(target, end)
        return Written(written, skipped)

    def _begin_with(self, row: Row, target: TopicPartitionKey, done: int) -> int:
        """Open the transaction with `row`; the committed progress as it now stands.

        A cached producer may have been fenced since its last use: Spark ran this partition on
        another worker, whose new producer took the transactional id over. So its first record
        is sent at once, which shows that before any more rows are taken, and the producer is
        replaced (fencing the other one in turn) rather than failing the task. A producer made
        by this call can only be fenced by a concurrent attempt; that raises.
        """
        self._begin(row)
        if not self.fresh and self._fenced_meanwhile():
            self._drop_producer()
            self._take_producer()
            done = self._progress(target)  # the other worker may have copied more
            if row.source_offset >= done:
                self._begin(row)
        return done

    def _begin(self, first: Row) -> None:
        self._producer().begin_transaction()
        self.open = True
        self._produce(first)

    def _fenced_meanwhile(self) -> bool:
        try:
            self._producer().flush(self.timeout)
        except KafkaException as problem:
            if not _is_fenced(problem):
                raise
            self.open = False  # a fenced producer's transaction is aborted by the coordinator
            return True
        return False

    def _produce(self, row: Row) -> None:
        producer = self._producer()
        while True:
            try:
                producer.produce(
                    row.topic,
                    value=row.value,
                    key=row.key,
                    partition=row.partition,
                    headers=list(row.headers),
                    timestamp=row.timestamp_ms,
                )
                return
            except BufferError:  # the local queue is full: wait for deliveries to free it
                producer.poll(0.1)

    def _commit(self, target: TopicPartitionKey, end: int) -> None:
        producer = self._producer()
        progress = [TopicPartition(target[0], target[1], end)]
        metadata = self.reader.consumer_group_metadata()
        producer.send_offsets_to_transaction(progress, metadata, self.timeout)
        producer.commit_transaction(self.timeout)
        self.open = False

    def _progress(self, target: TopicPartitionKey) -> int:
        """Where copying `target` resumes: the committed progress, or 0 for none."""
        return _read_progress(self.reader, [target], self.timeout).get(target, 0)

    def _take_producer(self) -> None:
        """This id's cached producer, or a new one, cached once its transactions are initialised."""
        with _CACHE_LOCK:
            cached = _PRODUCERS.get(self.transactional_id)
        self.fresh = cached is None
        if cached is not None:
            self.producer, self.last_error = cached
            self.last_error.reason = None  # the producer is reused: only this copy's errors count
            return
        self.last_error = client.LastError()
        settings = {
            **client.quiet(self.config, self.last_error),
            **_PRODUCER_SETTINGS,
            "transactional.id": self.transactional_id,
        }
        self.producer = Producer(settings)
        self.producer.init_transactions(self.timeout)
        with _CACHE_LOCK:
            _PRODUCERS[self.transactional_id] = (self.producer, self.last_error)

    def _producer(self) -> Producer:
        assert self.producer is not None  # taken before any use
        return self.producer

    def _drop_producer(self) -> None:
        with _CACHE_LOCK:
            if _PRODUCERS.get(self.transactional_id, (None,))[0] is self.producer:
                del _PRODUCERS[self.transactional_id]

    def _abandon(self) -> None:
        """After a failure: abort what is open, and forget the producer, whose state is unsure."""
        if self.producer is None:
            return
        if self.open:
            # Fenced or unreachable: the coordinator aborts it at the next takeover or timeout.
            with contextlib.suppress(KafkaException):
                self.producer.abort_transaction(self.timeout)
            self.open = False
        self._drop_producer()

    def _failure(self, problem: KafkaException) -> KafkaUnavailableError:
        if self.producer is not None:
            # Serves queued log lines, which may name the cause better; a fenced producer
            # raises its fatal error again instead.
            with contextlib.suppress(KafkaException):
                self.producer.poll(0)
        error = problem.args[0] if problem.args else problem
        reason = error.str() if isinstance(error, KafkaError) else str(error)
        bootstrap = self.config.get("bootstrap.servers", "?")
        return KafkaUnavailableError(
            f"copying with transactional id {self.transactional_id} to {bootstrap} failed: "
            f"{self.last_error.reason or reason}"
        )


def _is_fenced(problem: KafkaException) -> bool:
    error = problem.args[0] if problem.args else None
    fenced = (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)
    return isinstance(error, KafkaError) and error.code() in fenced


def _progress_reader(config: dict[str, str], group: str) -> tuple[Consumer, client.LastError]:
    key = (tuple(sorted(config.items())), group)
    with _CACHE_LOCK:
        if key not in _READERS:
            last_error = client.LastError()
            settings = {
                **client.quiet(config, last_error),
                "group.id": group,
                # Makes committed() require stable offsets: a progress offset inside an open
                # transaction is waited for, never read before the transaction ends.
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
            with client.failures_named(config, f"connecting as progress group {group}"):
                _READERS[key] = (Consumer(settings), last_error)
        return _READERS[key]


def _read_progress(
    reader: Consumer, partitions: list[TopicPartitionKey], timeout: float
) -> dict[TopicPartitionKey, int]:
    found = reader.committed([TopicPartition(t, p) for t, p in partitions], timeout=timeout)
    progress: dict[TopicPartitionKey, int] = {}
    for committed in found:
        if committed.error is not None:
            raise KafkaException(committed.error)
        if committed.offset >= 0:  # a negative offset means none was committed
            progress[(committed.topic, committed.partition)] = committed.offset
    return progress
