"""Losses (docs/engine.md, Lost records): what a copy will never have, found by the copy loop
(records removed before they were copied, a log behind the copy) or by the driver's look at topic
ids (a topic deleted and made again on either side); counted once, exported and listed in `topo
status`. Pure parts; tests/integration/test_copy_loop.py makes each happen on lab clusters."""

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from tests.unit.test_objectives import shown_status, status_flow
from topology.core.progress import Loss
from topology.core.topic_ids import IdLook, IdWatch
from topology.telemetry.collector import FiguresCollector
from topology.telemetry.figures import Figures

FLOW = "east->west"


def _running(now: float) -> Figures:
    figures = Figures("shop", {"mode": "continuous"}, {FLOW: ("east", "west")}, now - 300)
    figures.state(FLOW, "running")
    return figures


def test_a_topic_whose_id_changed_was_deleted_and_made_again() -> None:
    watch = IdWatch()
    assert watch.look({"orders": "a1"}, {"east.orders": "b1"}) == []
    # Not answered for, or gone for a while: the id seen stays.
    assert watch.look({}, {}) == []
    assert watch.look({"orders": "a1"}, {"east.orders": "b2"}) == [
        Loss("east.orders", -1, "target", detail="b2")
    ]
    assert watch.look({"orders": "a2", "clicks": "c1"}, {"east.orders": "b2"}) == [
        Loss("orders", -1, "recreated", detail="a2")
    ]
    made_again = Loss("east.orders", -1, "target", detail="b2")
    assert made_again.records is None
    assert made_again.describe().startswith(
        "topic east.orders on the target was deleted and made again under the copy"
    )
    # Made again twice: two losses, each counted.
    figures = _running(1_000.0)
    second = Loss("east.orders", -1, "target", detail="b3")
    assert figures.lost(FLOW, [made_again], 1_000.0) == [made_again]
    assert figures.lost(FLOW, [made_again, second], 1_005.0) == [second]


def test_ids_are_asked_for_when_unknown_and_otherwise_every_so_often() -> None:
    look = IdLook(every=30.0)
    # The first look asks for every topic.
    assert look.wanted(0.0, ["a", "b"]) == {"a", "b"}
    look.answered(0.0, {"a", "b"}, {"a": "1"})  # b does not exist (yet)
    # A topic that just joined, or was missing, is asked for at once; a known one is not.
    assert look.wanted(5.0, ["a", "b", "c"]) == {"b", "c"}
    look.answered(5.0, {"b", "c"}, {"b": "2", "c": "3"})
    assert look.wanted(10.0, ["a", "b", "c"]) == set()
    # A look that got no answer records nothing: the same topics are asked for next time.
    assert look.wanted(30.0, ["a", "b", "c"]) == {"a"}
    assert look.wanted(35.0, ["a", "b", "c"]) == {"a", "b", "c"}
    look.answered(35.0, {"a", "b", "c"}, {"a": "1", "c": "3"})  # b deleted
    assert look.wanted(40.0, ["a", "b", "c"]) == {"b"}
    # A topic no flow wants any more is forgotten: wanted again, it is asked for at once.
    look.forget(["b", "c"])
    assert look.asked.keys() == {"c"}
    assert look.wanted(41.0, ["a", "c"]) == {"a"}


def test_a_topic_made_again_between_looks_is_told_at_its_next_look() -> None:
    """IdLook and IdWatch together, as the driver's telemetry thread runs them every 5 s."""
    look, watch = IdLook(every=30.0), IdWatch()
    ids = {"orders": "a1", "clicks": "c1"}
    found: list[tuple[float, list[Loss]]] = []
    for tick in range(0, 80, 5):
        now = float(tick)
        if now >= 12.0:
            ids["orders"] = "a2"  # deleted and made again at 12 s
        asking = look.wanted(now, ids)
        answer = {t: ids[t] for t in asking}
        look.answered(now, asking, answer)
        losses = watch.look(answer, {})
        if losses:
            found.append((now, losses))
    # Asked at 0 and next at 30: the loss is told once, within `every` of it.
    assert found == [(30.0, [Loss("orders", -1, "recreated", detail="a2")])]


def test_a_loss_is_counted_once_shown_in_status_and_exported() -> None:
    figures = _running(5_000.0)
    gone = Loss("orders", 1, "retention", 4, 10)
    made_again = Loss("orders", 0, "reset", 0, 12)
    assert figures.lost(FLOW, [gone], 5_000.0) == [gone]
    # A copy stopped by on_loss: stop finds the same loss at each restart: counted once.
    assert figures.lost(FLOW, [gone, made_again], 5_010.0) == [made_again]
    registry = CollectorRegistry()
    registry.register(FiguresCollector(lambda: figures.snapshot(5_020.0)))
    scraped = {
        (s.name, s.labels.get("kind")): s.value
        for family in text_string_to_metric_families(generate_latest(registry).decode())
        for s in family.samples
        if s.name.startswith(("topo_records_lost", "topo_losses"))
    }
    assert scraped == {
        ("topo_records_lost_total", "retention"): 6,
        ("topo_records_lost_total", "reset"): 0,
        ("topo_losses_total", "retention"): 1,
        ("topo_losses_total", "reset"): 1,
    }
    losses = [{"at": at, **loss.to_dict()} for at, loss in figures.losses_of(FLOW)]
    shown = shown_status([status_flow(losses=losses)], 5_030.0).splitlines()
    lost = [line for line in shown if " LOST at " in line]
    assert len(lost) == 2
    assert lost[0].endswith(
        "6 records of orders-1 (offsets 4 to 9) were removed from the source by retention "
        "before they were copied"
    )
    assert "orders-0 on the source ends at offset 0, behind the copy at 12" in lost[1]
