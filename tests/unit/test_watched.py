"""The driver's watching thread (topology.spark.watched) with `metrics: false`: nothing served,
sampled or saved, but the topics' ids still watched, for the losses status reports. No Spark, no
Kafka: the looks are replaced by recorders."""

import threading
from pathlib import Path

import pytest

from topology.spark import watched
from topology.spark.watched import Watched


def test_without_metrics_only_the_topic_ids_are_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watched, "SAMPLE_EVERY", 0.01)
    looked, done = [], threading.Event()
    made = Watched("o", {}, {}, {}, tmp_path, lambda line: None)

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
