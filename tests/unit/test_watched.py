"""The driver's watching thread (topology.spark.watched) with `metrics: false`: nothing served,
sampled or saved, but the topics' ids still watched, for the losses status reports. No Spark, no
Kafka: the looks are replaced by recorders."""

import threading
from pathlib import Path

import pytest

from tests.unit.test_planner import MIRROR, topology
from topology.core.jobs import specs_of
from topology.spark import watched
from topology.spark.watched import Watched


def test_without_metrics_only_the_topic_ids_are_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watched, "SAMPLE_EVERY", 0.01)
    looked, done = [], threading.Event()
    made = Watched("o", {}, {}, {}, tmp_path, lambda line: None)

    def ids() -> bool:
        looked.append("ids")
        done.set()
        return False

    monkeypatch.setattr(made, "_topic_ids", ids)
    for other in ("_lags", "_beats", "sample", "save"):
        monkeypatch.setattr(made, other, lambda other=other: looked.append(other))
    made.start(None)
    assert done.wait(5), "the topic ids were not watched"
    made.stop()
    assert made.endpoint is None and made.url is None
    assert set(looked) == {"ids"}
    assert not (tmp_path / watched.HISTORY_FILE).exists()


class FakeIds:
    """A cluster's topic ids as `TopicIds.of` gives them, set by the test."""

    def __init__(self, ids: dict[str, str]) -> None:
        self.ids = ids

    def of(self, topics: set[str]) -> dict[str, str]:
        return {t: self.ids[t] for t in topics if t in self.ids}


def test_a_look_at_the_topic_ids_says_whether_anything_changed_and_reports_a_topic_made_again(
    tmp_path: Path,
) -> None:
    [spec] = specs_of(topology(MIRROR))
    said: list[str] = []
    made = Watched(
        "o", {}, {spec.flow: spec}, {}, tmp_path, said.append,
        maps=lambda: {spec.flow: {"orders": "east.orders"}},
    )  # fmt: skip
    east, west = FakeIds({"orders": "id-1"}), FakeIds({"east.orders": "id-2"})
    made.ids = {"east": east, "west": west}  # type: ignore[dict-item]
    assert made._topic_ids()  # the first look: everything is new
    assert not made._topic_ids()  # the same ids: nothing changed, the looks back off
    east.ids["orders"] = "id-3"  # deleted and made again on the source
    assert made._topic_ids()
    assert any("LOST: topic orders on the source was deleted and made again" in s for s in said)
    assert not made._topic_ids()
