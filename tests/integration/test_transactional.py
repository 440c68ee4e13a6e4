"""topology.kafka.transactional against real lab clusters: what read_committed readers of the
target see, record by record, after copies, replays, zombies and aborted attempts."""

import time
import uuid
from collections.abc import Iterable, Iterator

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from tests.helpers import RECENT_MS
from topology.core.errors import KafkaUnavailableError
from topology.kafka import client, records, transactional
from topology.kafka.transactional import Row, Written, committed_progress, write_exactly_once

pytestmark = pytest.mark.kafka
SOURCE_TOPIC = "orders"  # the rows' source topic; the tests that make rows need no real one
Content = tuple[int, bytes | None, bytes | None, records.Headers, int | None]


class Ids:
    """A transactional prefix and progress group no other test uses."""

    def __init__(self) -> None:
        unique = uuid.uuid4().hex[:8]
        self.prefix = f"itest-{unique}"
        self.group = f"itest-progress-{unique}"

    def transactional_id(self, partition: int, source_topic: str = SOURCE_TOPIC) -> str:
        return f"{self.prefix}.{source_topic}.{partition}"


@pytest.fixture
def ids() -> Ids:
    return Ids()


def write(target: dict[str, str], rows: Iterable[Row], ids: Ids) -> Written:
    return write_exactly_once(
        target, rows, transactional_prefix=ids.prefix, progress_group=ids.group, timeout=30
    )


def progress(
    target: dict[str, str], ids: Ids, topic: str, partitions: int = 1
) -> dict[tuple[str, int], int]:
    return committed_progress(target, ids.group, [(topic, p) for p in range(partitions)])


def made_rows(topic: str, partition: int, offsets: Iterable[int]) -> list[Row]:
    """Rows of source partition `partition`, with null keys and values, repeated and null
    headers, and a timestamp of their own each."""
    return [
        Row(
            topic=topic,
            partition=partition,
            key=None if offset % 3 == 0 else f"key-{offset}".encode(),
            value=None if offset % 4 == 3 else f"value-{partition}-{offset}".encode(),
            headers=(("h", b"1"), ("h", None), ("offset", str(offset).encode())),
            timestamp_ms=RECENT_MS + offset * 1000 + partition,
            source_topic=SOURCE_TOPIC,
            source_partition=partition,
            source_offset=offset,
        )
        for offset in offsets
    ]


def content(rows: Iterable[Row]) -> list[Content]:
    """What the target must hold for `rows`, in the order read_topic reads it back."""
    ordered = sorted(rows, key=lambda row: (row.partition, row.source_offset))
    return [(r.partition, r.key, r.value, r.headers, r.timestamp_ms) for r in ordered]


def target_content(target: dict[str, str], topic: str) -> list[Content]:
    return [record.content() for record in records.read_topic(target, topic)]


def wait_until_in_log(target: dict[str, str], topic: str, partition: int, count: int) -> None:
    """Until `count` records (committed or not) are in the partition's log on the broker: the
    open transaction's records really reached the broker before the test interrupts it."""
    # read_uncommitted: the high watermark, not the last stable offset, counts open transactions.
    settings = {
        "group.id": f"itest-watch-{uuid.uuid4().hex}",
        "isolation.level": "read_uncommitted",
    }
    consumer = Consumer({**client.quiet(target), **settings})
    try:
        deadline = time.monotonic() + 30
        while consumer.get_watermark_offsets(TopicPartition(topic, partition), 10)[1] < count:
            assert time.monotonic() < deadline, f"{count} records never reached {topic}"
            time.sleep(0.05)
    finally:
        consumer.close()


def test_rows_of_two_source_partitions_are_copied_as_they_are_with_their_progress(
    source: dict[str, str], target: dict[str, str], topic_name: str, ids: Ids
) -> None:
    # Real source records, read back with their offsets, as Spark's Kafka source gives them.
    records.create_topic(source, topic_name, 2)
    written = [
        records.Record(
            topic_name,
            offset % 2,
            None if offset == 0 else f"k{offset}".encode(),
            None if offset == 5 else f"v{offset}".encode(),
            (("trace", b"a"), ("trace", None), ("trace", b"b")) if offset % 3 else (),
            RECENT_MS + offset,
        )
        for offset in range(10)
    ]
    records.produce(source, written)
    read = records.read_topic(source, topic_name)
    renamed = f"east.{topic_name}"
    rows = [
        Row(
            topic=renamed,
            partition=record.partition,
            key=record.key,
            value=record.value,
            headers=record.headers,
            timestamp_ms=record.timestamp_ms or 0,
            source_topic=topic_name,
            source_partition=record.partition,
            source_offset=record.offset or 0,
        )
        for record in read
    ]
    records.create_topic(target, renamed, 3)

    assert write(target, rows, ids) == Written(written=10, skipped=0)

    assert target_content(target, renamed) == [record.content() for record in read]
    assert sorted(map(repr, target_content(target, renamed))) == sorted(
        repr(record.content()) for record in written
    )
    # Partition 2 had no rows, so it has no progress.
    assert progress(target, ids, renamed, partitions=3) == {(renamed, 0): 5, (renamed, 1): 5}
    # One transactional id per source partition, each producer kept for the next batch.
    cached = {ids.transactional_id(p, topic_name) for p in (0, 1)}
    assert cached <= set(transactional._PRODUCERS)


def test_a_replayed_batch_writes_nothing_and_an_overlapping_one_only_its_new_tail(
    target: dict[str, str], topic_name: str, ids: Ids
) -> None:
    records.create_topic(target, topic_name, 1)
    # Offsets with gaps, as a read_committed source has (transaction markers, aborted records).
    first_batch = made_rows(topic_name, 0, [0, 1, 2, 4, 5])
    assert write(target, first_batch, ids) == Written(written=5, skipped=0)

    assert write(target, first_batch, ids) == Written(written=0, skipped=5)
    assert target_content(target, topic_name) == content(first_batch)
    assert progress(target, ids, topic_name) == {(topic_name, 0): 6}

    longer = made_rows(topic_name, 0, [0, 1, 2, 4, 5, 8, 9])
    assert write(target, longer, ids) == Written(written=2, skipped=5)
    assert target_content(target, topic_name) == content(longer)
    assert progress(target, ids, topic_name) == {(topic_name, 0): 10}


def test_a_newer_attempt_fences_a_zombie_mid_transaction(
    target: dict[str, str], topic_name: str, ids: Ids
) -> None:
    records.create_topic(target, topic_name, 1)
    rows = made_rows(topic_name, 0, range(6))
    transactional_id = ids.transactional_id(0)
    newer: list[Written] = []

    def zombie_rows() -> Iterator[Row]:
        yield from rows[:3]
        wait_until_in_log(target, topic_name, 0, 3)
        # A newer attempt of the same batch starts in another worker, with its own producer.
        del transactional._PRODUCERS[transactional_id]
        newer.append(write(target, rows, ids))
        yield from rows[3:]

    with pytest.raises(KafkaUnavailableError, match=rf"{transactional_id} .*fenced"):
        write(target, zombie_rows(), ids)

    assert newer == [Written(written=6, skipped=0)]
    assert target_content(target, topic_name) == content(rows)
    assert progress(target, ids, topic_name) == {(topic_name, 0): 6}
    # The zombie dropped its own producer only; the newer attempt's stays cached.
    assert transactional_id in transactional._PRODUCERS


def test_a_cached_producer_fenced_by_another_worker_is_replaced_and_copies_once(
    target: dict[str, str], topic_name: str, ids: Ids
) -> None:
    records.create_topic(target, topic_name, 1)
    rows = made_rows(topic_name, 0, range(9))
    transactional_id = ids.transactional_id(0)
    assert write(target, rows[:3], ids) == Written(written=3, skipped=0)
    # Worker 1 keeps its producer while worker 2 copies the next batch with a new one, which
    # fences worker 1's. Then the partition's third batch runs on worker 1 again.
    worker_1 = transactional._PRODUCERS.pop(transactional_id)
    assert write(target, rows[:6], ids) == Written(written=3, skipped=3)
    transactional._PRODUCERS[transactional_id] = worker_1

    assert write(target, rows, ids) == Written(written=3, skipped=6)

    assert target_content(target, topic_name) == content(rows)
    assert progress(target, ids, topic_name) == {(topic_name, 0): 9}
    assert transactional._PRODUCERS[transactional_id] is not worker_1
    fenced, _ = worker_1
    with pytest.raises(KafkaException, match="fenced"):
        fenced.begin_transaction()
        fenced.produce(topic_name, value=b"zombie", partition=0)
        fenced.commit_transaction(10)
    assert target_content(target, topic_name) == content(rows)


def test_an_attempt_failing_half_way_leaves_nothing_and_its_retry_copies_everything_once(
    target: dict[str, str], topic_name: str, ids: Ids
) -> None:
    records.create_topic(target, topic_name, 1)
    rows = made_rows(topic_name, 0, range(8))

    def failing_rows() -> Iterator[Row]:
        yield from rows[:4]
        wait_until_in_log(target, topic_name, 0, 4)
        raise RuntimeError("task killed")

    with pytest.raises(RuntimeError, match="task killed"):
        write(target, failing_rows(), ids)

    assert target_content(target, topic_name) == []
    assert progress(target, ids, topic_name) == {}
    assert ids.transactional_id(0) not in transactional._PRODUCERS

    assert write(target, rows, ids) == Written(written=8, skipped=0)
    assert target_content(target, topic_name) == content(rows)
    assert progress(target, ids, topic_name) == {(topic_name, 0): 8}


def test_an_unreachable_target_is_one_line_naming_what_failed_and_why(ids: Ids) -> None:
    nowhere = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "PLAINTEXT"}
    rows = made_rows("t", 0, range(2))
    copying = rf"^copying with transactional id {ids.transactional_id(0)} to 127.0.0.1:1 failed: "
    with pytest.raises(KafkaUnavailableError, match=copying + ".*Connection refused$"):
        write_exactly_once(
            nowhere, rows, transactional_prefix=ids.prefix, progress_group=ids.group, timeout=2
        )
    reading = rf"^reading the progress of group {ids.group} on 127.0.0.1:1 failed: "
    with pytest.raises(KafkaUnavailableError, match=reading + ".*Connection refused$"):
        committed_progress(nowhere, ids.group, [("t", 0)], timeout=2)
