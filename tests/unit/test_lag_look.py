"""When the running driver asks a source where its partitions end, and which end a flow's lag is
measured to (topology.core.lag_look), and the driver's metrics thread doing so
(topology.spark.watched: its look at the source replaced by a recorder; no Kafka)."""

from collections.abc import Iterable
from pathlib import Path

from topology.core.jobs import JobSpec
from topology.core.lag_look import WHOLE_EVERY, LagLook, Reported, lag_to_ends
from topology.spark.watched import Watched

A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


def told(at: float, ends: dict[tuple[str, int], int]) -> Reported:
    """A copy's report of these ends at `at`."""
    return {partition: (at, end) for partition, end in ends.items()}


def test_lag_is_each_partitions_end_beyond_the_read_position_summed_per_topic() -> None:
    read = {("orders", 0): 16, ("orders", 1): 10, ("users", 0): 5}
    ends = {("orders", 0): 20, ("orders", 1): 12, ("users", 0): 5, ("gone", 0): 9}
    assert lag_to_ends(read, ends) == {"orders": 6, "users": 0}
    # An end the source did not give is left out (a topic with none has no lag known, not
    # 0); one behind the position is not negative.
    assert lag_to_ends(read, {("orders", 0): 15}) == {"orders": 0}
    assert lag_to_ends(read, {("orders", 1): 13}) == {"orders": 3}


def test_every_partition_is_asked_once_a_minute_and_between_only_those_no_end_is_known_for() -> (
    None
):
    look = LagLook()
    reports = [told(0.0, {A0: 5, A1: 7})]
    assert look.wanted(0.0, {A0, A1, B0}, reports) == ({A0, A1, B0}, True)
    look.answered(0.0, {A0, A1, B0}, {A0: 5, A1: 7, B0: 2}, whole=True)
    # Every end known (from the copy's report or the look): nothing to ask until the minute.
    assert look.wanted(5.0, {A0, A1, B0}, reports) == (set(), False)
    # A partition that just joined, not reported yet: only it is asked.
    assert look.wanted(10.0, {A0, A1, B0, ("c", 0)}, reports) == ({("c", 0)}, False)
    look.answered(10.0, {("c", 0)}, {("c", 0): 0}, whole=False)
    assert look.wanted(15.0, {A0, A1, B0, ("c", 0)}, reports) == (set(), False)
    assert look.wanted(WHOLE_EVERY, {A0, ("c", 0)}, reports) == ({A0, ("c", 0)}, True)
    # The whole look forgets what no flow reads now, and what the source no longer has.
    look.answered(WHOLE_EVERY, {A0, ("c", 0)}, {A0: 9}, whole=True)
    assert set(look.asked) == {A0}
    assert look.wanted(WHOLE_EVERY + 5, {A0, ("c", 0)}, []) == ({("c", 0)}, False)
    assert look.wanted(2 * WHOLE_EVERY, {A0}, []) == ({A0}, True)


def test_a_look_not_answered_is_asked_again() -> None:
    look = LagLook()
    assert look.wanted(0.0, {A0}, []) == ({A0}, True)
    # (The source did not answer: answered() was not called.)
    assert look.wanted(5.0, {A0}, []) == ({A0}, True)


def test_the_newer_of_the_reported_and_the_asked_end_counts() -> None:
    look = LagLook()
    look.answered(10.0, {A0, A1}, {A0: 100, A1: 50}, whole=True)
    read = {A0: 90, A1: 40}
    # A report after the look: its ends count (the copy read on; the source's grew).
    assert look.lag(read, told(12.0, {A0: 95, A1: 50})) == {"a": 15}
    # The copy's last report before the look (it hangs, or the topic was made again with
    # fewer records): the look's ends count.
    assert look.lag(read, told(8.0, {A0: 90, A1: 40})) == {"a": 20}
    look.answered(20.0, {A0, A1}, {A0: 3, A1: 1}, whole=True)
    assert look.lag({A0: 3, A1: 1}, told(8.0, {A0: 100, A1: 50})) == {"a": 0}
    # No look yet: the report alone; neither: no lag known.
    assert LagLook().lag(read, told(1.0, {A0: 91})) == {"a": 1}
    assert LagLook().lag(read, None) == {}


def _spec(flow: str, source: str, target: str = "t") -> JobSpec:
    return JobSpec(
        flow=flow,
        source=source,
        target=target,
        topics={"include": [".*"], "exclude": []},
        naming="prefix",
        separator=".",
        heartbeats=False,
        provenance=True,
        delivery="at-least-once",
        start="earliest",
        record_filter=None,
    )


class _Source:
    """A source cluster's ends, as its `cluster_looks.AdminLooks.ends` answers them; each look
    recorded."""

    def __init__(self, ends: dict[tuple[str, int], int]) -> None:
        self.known = ends
        self.looks: list[set[tuple[str, int]]] = []

    def ids(self, topics: Iterable[str]) -> dict[str, str]:
        raise AssertionError("not asked here")

    def ends(self, partitions: Iterable[tuple[str, int]]) -> dict[tuple[str, int], int]:
        self.looks.append(set(partitions))
        return {p: self.known[p] for p in partitions if p in self.known}


def test_the_metrics_thread_measures_lag_from_reports_and_asks_each_source_once_per_look(
    tmp_path: Path,
) -> None:
    specs = {"e1": _spec("e1", "east"), "e2": _spec("e2", "east"), "w": _spec("w", "west")}
    positions = {"e1": {A0: 4, A1: 2}, "e2": {A0: 1, B0: 0}, "w": {A0: 7}}
    reported = {"e1": told(0.0, {A0: 6, A1: 2}), "w": told(0.0, {A0: 9})}
    east, west = _Source({A0: 10, A1: 2, B0: 3}), _Source({A0: 9})
    sources = {"east": east, "west": west}
    made = Watched(
        "o",
        {},
        specs,
        {},
        tmp_path,
        lambda line: None,
        lambda: positions,
        lambda: reported,
        looker=sources.__getitem__,
    )
    made._lags()
    # The first look at each source is whole: one request for every partition its flows read.
    assert east.looks == [{A0, A1, B0}] and west.looks == [{A0}]
    assert made.figures.lag_of("e1") == 6 and made.figures.lag_of("e2") == 12
    assert made.figures.lag_of("w") == 2
    # The copies report on (e1 read to its end); the sources are not asked again within the
    # minute, but a partition that joined e2 is, alone.
    reported["e1"] = told(10**9, {A0: 10, A1: 2})
    positions["e1"] = {A0: 10, A1: 2}
    positions["e2"] = {A0: 1, B0: 0, ("b", 1): 0}
    east.known[("b", 1)] = 4
    made._lags()
    assert east.looks == [{A0, A1, B0}, {("b", 1)}] and west.looks == [{A0}]
    assert made.figures.lag_of("e1") == 0 and made.figures.lag_of("e2") == 16
