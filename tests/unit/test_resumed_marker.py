"""The handover's mark in a flow's checkpoint folder: a checkpoint from before the handover is
moved aside (never deleted), the handover's own is kept when the driver restarts."""

from pathlib import Path

from topology.spark.resumed import MARK, Marker, digest

FIRST = digest({"orders": {0: 41}})
AGAIN = digest({"orders": {0: 97}})  # MM2 ran again since


def _checkpoint(folder: Path) -> Path:
    (folder / "offsets").mkdir(parents=True)
    (folder / "offsets" / "0").write_text("v1")
    return folder


def test_a_checkpoint_from_before_the_handover_is_moved_aside(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path / "east_west")
    moved = Marker(str(folder), FIRST).clear_older()
    assert moved is not None and moved.parent == tmp_path
    assert moved.name.startswith("east_west.before-handover-")
    assert (moved / "offsets" / "0").read_text() == "v1"
    assert not folder.exists()


def test_the_handovers_own_checkpoint_is_kept_across_restarts(tmp_path: Path) -> None:
    folder = tmp_path / "east_west"
    first = Marker(str(folder), FIRST)
    assert first.clear_older() is None  # nothing there yet
    first.mark()
    _checkpoint(folder)  # Spark writes its checkpoint beside the mark
    assert (folder / MARK).exists()
    assert Marker(f"file://{folder}", FIRST).clear_older() is None
    assert Marker(str(folder), AGAIN).clear_older() is not None  # another handover's


def test_a_checkpoint_in_shared_storage_is_left_alone(tmp_path: Path) -> None:
    marker = Marker("hdfs://nn/topo/owner/east_west", FIRST)
    assert marker.clear_older() is None
    marker.mark()  # nothing written: the folder is not on this machine
    assert list(tmp_path.iterdir()) == []


def test_the_handover_is_named_by_its_positions_in_any_order() -> None:
    assert digest({"a": {0: 1, 1: 2}, "b": {0: 3}}) == digest({"b": {0: 3}, "a": {1: 2, 0: 1}})
    assert FIRST != AGAIN


def test_a_flow_taking_over_from_mm2_starts_at_its_positions_once(tmp_path: Path) -> None:
    from topology.spark.starts import Handovers

    said: list[str] = []
    handovers = Handovers(
        {"east->west": {"orders": {0: 41, 2: 7}}}, lambda line, **_: said.append(line)
    )
    folder = _checkpoint(tmp_path / "east_west")  # a checkpoint topo kept before the handover
    starts = handovers.starting("east->west", str(folder), {"orders": 3, "new": 1})
    # every partition named, as Spark wants: MM2's position, else the earliest (-2)
    assert starts == {"new": {"0": -2}, "orders": {"0": 41, "1": -2, "2": 7}}
    assert said and "moved its checkpoint from before the handover" in said[0]
    assert handovers.begins("east->west") and not handovers.begins("east->west")
    # the driver restarted: the handover's own checkpoint is resumed, its positions no longer win
    again = Handovers({"east->west": {"orders": {0: 41, 2: 7}}}, lambda line, **_: None)
    assert again.starting("east->west", str(folder), {"orders": 3}) is not None
    assert not again.begins("east->west")
    assert handovers.starting("other->west", str(tmp_path / "other"), {"orders": 3}) is None


def test_a_checkpoint_lives_in_the_state_folder_or_under_engine_checkpoints(
    tmp_path: Path,
) -> None:
    from topology.core import analysis
    from topology.spark.starts import checkpoint_location

    text = 'version: 1\nname: orders\nclusters:\n  a: {bootstrap: "h:1"}\n  b: {bootstrap: "h:2"}\n'
    flows = "flows:\n  - mirror: {from: a, to: b}\n"
    local = analysis.analyse(text + flows, "t.yaml").topology
    shared = analysis.analyse(
        text + "engine: {checkpoints: 'hdfs://nn/topo/'}\n" + flows, "t.yaml"
    ).topology
    assert local is not None and shared is not None
    assert checkpoint_location(local, tmp_path, "a_b") == str(tmp_path / "checkpoints" / "a_b")
    assert checkpoint_location(shared, tmp_path, "a_b") == "hdfs://nn/topo/orders/a_b"
