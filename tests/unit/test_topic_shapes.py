"""The driver's topic look as Python reads it (topology/spark/topic_shapes.py): the lines topo's
Java `TopicShapes` answers (its JUnit test pins them) become names and partition counts, and a
Java failure becomes one line naming the cluster, never a py4j traceback."""

import pytest
from py4j.protocol import Py4JJavaError

from topology.core.errors import KafkaUnavailableError
from topology.spark.topic_shapes import TopicShapes


class _JavaClass:
    def getSimpleName(self) -> str:
        return "TimeoutException"


class _JavaException:
    _target_id = "o1"  # py4j's reference to the exception in the JVM

    def __init__(self, message: str | None, cause: "_JavaException | None" = None) -> None:
        self.message, self.cause = message, cause

    def getMessage(self) -> str | None:
        return self.message

    def getCause(self) -> "_JavaException | None":
        return self.cause

    def getClass(self) -> _JavaClass:
        return _JavaClass()


class _Java:
    def __init__(self, answer: str | None = None, failure: _JavaException | None = None) -> None:
        self.answer, self.failure = answer, failure
        self.asked: list[int] = []

    def shapes(self, timeout_ms: int) -> str:
        self.asked.append(timeout_ms)
        if self.failure is not None:
            raise Py4JJavaError("An error occurred", self.failure)
        assert self.answer is not None
        return self.answer


def test_each_line_is_a_topic_and_its_partition_count() -> None:
    java = _Java("_schemas\t1\norders\t12\n")
    assert TopicShapes(java, "a:9092").shapes(timeout=2.5) == {"_schemas": 1, "orders": 12}
    assert java.asked == [2500]


def test_no_topics_is_an_empty_look() -> None:
    assert TopicShapes(_Java(""), "a:9092").shapes() == {}


@pytest.mark.parametrize(
    ("failure", "said"),
    [
        (
            _JavaException("Timeout expired while fetching topic metadata"),
            "Timeout expired while fetching topic metadata",
        ),
        (_JavaException(None), "TimeoutException"),
        (
            _JavaException(
                "Failed to construct kafka consumer",
                _JavaException("Could not login: the client is being asked for a password\nmore"),
            ),
            "Failed to construct kafka consumer: Could not login: the client is being asked",
        ),
    ],
)
def test_a_java_failure_is_one_line_naming_the_cluster(failure: _JavaException, said: str) -> None:
    with pytest.raises(KafkaUnavailableError) as raised:
        TopicShapes(_Java(failure=failure), "a:9092").shapes()
    line = str(raised.value)
    assert line.startswith(f"listing topics on a:9092 failed: {said}")
    assert "\n" not in line
