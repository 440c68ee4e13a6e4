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
