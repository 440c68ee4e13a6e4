"""The driver's watching thread (topology.spark.watched): with `metrics: false` nothing served,
sampled or saved, but the topics' ids still watched, for the losses status reports; a topic made
again on either side, told by its id, is a loss reported. No Spark, no Kafka: the looks are
replaced by recorders."""

import threading
from collections.abc import Iterable
from pathlib import Path

import pytest

from tests.unit.test_lag_look import _spec
from topology.core.errors import KafkaUnavailableError
from topology.spark import watched
from topology.spark.watched import Watched


class _Cluster:
    """One cluster's topic ids, as its `cluster_looks.AdminLooks.ids` answers them; each look
    recorded."""

    def __init__(self, ids: dict[str, str]) -> None:
        self.topic_ids = ids
        self.looks: list[set[str]] = []
        self.down = False

    def ids(self, topics: Iterable[str]) -> dict[str, str]:
        self.looks.append(set(topics))
        if self.down:
            raise KafkaUnavailableError("reading the topics' ids on w:9092 failed: timed out")
        return {t: self.topic_ids[t] for t in topics if t in self.topic_ids}

    def ends(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        raise AssertionError("not asked here")


def test_without_metrics_only_the_topic_ids_are_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watched, "SAMPLE_EVERY", 0.01)
    looked, done = [], threading.Event()
    made = Watched("o", {}, {}, {}, tmp_path, lambda line: None, looker=lambda name: _Cluster({}))

    def ids() -> None:
        looked.append("ids")
        done.set()

    monkeypatch.setattr(made, "_topic_ids", ids)
    for other in ("_lags", "_beats", "sample", "save"):
        monkeypatch.setattr(made, other, lambda other=other: looked.append(other))
    made.start(None)
    assert done.wait(5), "the topic ids were not watched"
    made.stop()
    assert made.endpoint is None and made.url is None
    assert set(looked) == {"ids"}
    assert not (tmp_path / watched.HISTORY_FILE).exists()


def test_a_topic_made_again_on_either_side_is_a_loss_reported_once(tmp_path: Path) -> None:
    clusters = {
        "east": _Cluster({"orders": "o1", "audit": "a1"}),
        "west": _Cluster({"east.orders": "t1", "east.audit": "u1"}),
    }
    reported: list[str] = []
    made = _watched(tmp_path, reported, {"orders": "east.orders", "audit": "east.audit"}, clusters)
    made._topic_ids()
    assert clusters["east"].looks == [{"orders", "audit"}]
    assert clusters["west"].looks == [{"east.orders", "east.audit"}]
    assert reported == []
    # Within the next 30 s nothing is asked again.
    made._topic_ids()
    assert len(clusters["east"].looks) == 1 and len(clusters["west"].looks) == 1
    # Then every id is due (the looks' clock moved on): one topic made again on each side.
    _all_due(made)
    clusters["east"].topic_ids = {"orders": "o2", "audit": "a1"}
    clusters["west"].topic_ids = {"east.orders": "t1", "east.audit": "u2"}
    made._topic_ids()
    assert len(reported) == 2, reported
    assert "f: LOST: topic orders on the source was deleted and made again" in reported[0]
    assert "f: LOST: topic east.audit on the target was deleted and made again" in reported[1]
    _all_due(made)
    made._topic_ids()
    assert len(clusters["east"].looks) == 3 and len(reported) == 2  # told once


def test_a_cluster_that_does_not_answer_is_reported_once_and_its_next_answer_too(
    tmp_path: Path,
) -> None:
    west = _Cluster({"east.orders": "t1"})
    reported: list[str] = []
    clusters = {"east": _Cluster({"orders": "o1"}), "west": west}
    made = _watched(tmp_path, reported, {"orders": "east.orders"}, clusters)
    west.down = True
    for _ in range(3):
        _all_due(made)
        made._topic_ids()
    assert len(west.looks) == 3  # asked at each look
    assert reported == [
        "metrics: reading the topics' ids on w:9092 failed: timed out (asked again at each look)"
    ]
    west.down = False
    _all_due(made)
    made._topic_ids()
    assert reported[1:] == ["metrics: west answers the look at its topics' ids again"]
    _all_due(made)
    made._topic_ids()
    west.down = True
    _all_due(made)
    made._topic_ids()
    assert len(reported) == 3 and reported[2] == reported[0]


def _watched(
    tmp_path: Path, reported: list[str], topic_map: dict[str, str], clusters: dict[str, _Cluster]
) -> Watched:
    """One flow `f` from `east` to `west` copying `topic_map`, its looks at `clusters`."""
    return Watched(
        "o",
        {},
        {"f": _spec("f", "east", "west")},
        {},
        tmp_path,
        reported.append,
        maps=lambda: {"f": topic_map},
        looker=clusters.__getitem__,
    )


def _all_due(made: Watched) -> None:
    for look in made.id_looks.values():
        look.asked = dict.fromkeys(look.asked, float("-inf"))
