"""kafka/ends.py's reading of a ListOffsets answer: a deleted partition is left out, a cluster
that does not answer is an error (never an end of 0 waiting records). The answer's futures are
made here; the request itself is made against real clusters by test_copy_loop and the MM2
handover tests."""

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from topology.core.errors import KafkaUnavailableError
from topology.kafka.ends import PartitionEnds


class _Offset:
    def __init__(self, offset: int) -> None:
        self.offset = offset


class _Admin:
    def __init__(self, answers: dict[tuple[str, int], Any]) -> None:
        self.answers = answers
        self.polled = 0

    def list_offsets(self, wanted: dict[TopicPartition, Any], **_: Any) -> dict[Any, Future[Any]]:
        futures = {}
        for partition in wanted:
            future: Future[Any] = Future()
            answer = self.answers[(partition.topic, partition.partition)]
            if isinstance(answer, KafkaError):
                future.set_exception(KafkaException(answer))
            else:
                future.set_result(_Offset(answer))
            futures[partition] = future
        return futures

    def poll(self, _timeout: float) -> None:
        self.polled += 1


def _error(code: int) -> KafkaError:
    return KafkaError(code)


def _ends(answers: dict[tuple[str, int], Any]) -> tuple[PartitionEnds, _Admin]:
    ends = PartitionEnds.__new__(PartitionEnds)
    ends.config = {"bootstrap.servers": "east:9092"}
    admin = _Admin(answers)
    ends.admin = admin  # type: ignore[assignment]
    return ends, admin


def test_each_partitions_end_and_a_deleted_partition_left_out() -> None:
    ends, admin = _ends(
        {("a", 0): 7, ("a", 1): 3, ("gone", 0): _error(KafkaError.UNKNOWN_TOPIC_OR_PART)}
    )
    assert ends.of([("a", 0), ("a", 1), ("gone", 0)]) == {("a", 0): 7, ("a", 1): 3}
    assert admin.polled == 1
    assert ends.of([]) == {}


def test_a_cluster_that_does_not_answer_is_an_error_not_a_lag_of_zero() -> None:
    ends, admin = _ends({("a", 0): _error(KafkaError._TIMED_OUT), ("a", 1): 4})
    with pytest.raises(KafkaUnavailableError, match="east:9092"):
        ends.of([("a", 0), ("a", 1)])
    assert admin.polled == 1


def test_after_a_failed_look_the_next_one_asks_with_a_new_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client whose metadata predates a partition added to the topic fails every look at
    that partition ("Unknown partition"): the lag would stay frozen. A new one knows it."""
    ends, admin = _ends({("a", 0): 7, ("a", 1): _error(KafkaError._UNKNOWN_PARTITION)})
    fresh = _Admin({("a", 0): 7, ("a", 1): 2})
    monkeypatch.setattr("topology.kafka.ends.AdminClient", lambda _config: fresh)
    with pytest.raises(KafkaUnavailableError):
        ends.of([("a", 0), ("a", 1)])
    assert admin.polled == 1
    assert ends.of([("a", 0), ("a", 1)]) == {("a", 0): 7, ("a", 1): 2}
