"""The run log's read of its partition's ends while the leader moves (a topic just created:
a broker shows it in its metadata a moment before it leads its partitions, and apply reads the
runs topic right after creating it). The read itself is tested against lab clusters."""

import time

import pytest
from confluent_kafka import KafkaError, KafkaException

from topology.kafka import runlog


class Answers:
    """A stand-in consumer: raises the queued errors, then answers the watermarks."""

    def __init__(self, *errors: int) -> None:
        self.errors = list(errors)
        self.asked = 0

    def get_watermark_offsets(self, *_args: object, **_kwargs: object) -> tuple[int, int]:
        self.asked += 1
        if self.errors:
            raise KafkaException(KafkaError(self.errors.pop(0)))
        return 3, 7


def test_the_ends_are_asked_again_while_the_leader_moves() -> None:
    moving = Answers(KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)
    assert runlog._watermarks(moving, time.monotonic() + 5) == (3, 7)  # type: ignore[arg-type]
    assert moving.asked == 3


def test_another_error_or_a_spent_deadline_is_raised_at_once() -> None:
    refused = Answers(KafkaError.TOPIC_AUTHORIZATION_FAILED)
    with pytest.raises(KafkaException):
        runlog._watermarks(refused, time.monotonic() + 5)  # type: ignore[arg-type]
    assert refused.asked == 1
    late = Answers(KafkaError.NOT_LEADER_FOR_PARTITION)
    with pytest.raises(KafkaException):
        runlog._watermarks(late, time.monotonic() - 1)  # type: ignore[arg-type]
    assert late.asked == 1
