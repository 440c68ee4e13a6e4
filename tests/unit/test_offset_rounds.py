"""The driver's progress records (`spark/offset_rounds.py`): a flow's positions written to its
progress log on the target only for the partitions that moved, and again after a failed write.
The log writer is a fake; tests/integration/test_offsets.py writes and reads the real log."""

from collections.abc import Iterable

from tests.unit.test_failover_protocol import CONFIGS, topology
from tests.unit.test_progress import _spec
from topology.core import naming
from topology.core.errors import KafkaUnavailableError
from topology.core.flow_status import FlowStatus
from topology.core.offsets import checkpoints
from topology.core.progress import FlowProgress
from topology.spark.offset_rounds import OffsetRounds
from topology.telemetry.figures import Figures


class Writer:
    """A progress log that keeps what it is given, or refuses while `down`."""

    def __init__(self) -> None:
        self.written: list[tuple[str, int, int]] = []
        self.down = False
        self.waiting: list[tuple[str, int, int]] = []

    def write(self, _topic: str, entries: Iterable[tuple[bytes, bytes]]) -> None:
        for _key, value in entries:
            progress = checkpoints.decode_progress(value)
            assert progress is not None
            self.waiting.append((progress.topic, progress.partition, progress.next_offset))

    def flush(self, timeout: float = 30) -> None:
        waiting, self.waiting = self.waiting, []
        if self.down:
            raise KafkaUnavailableError("west is down")
        self.written += waiting


def moved(number: int, positions: dict[tuple[str, int], int]) -> FlowProgress:
    return FlowProgress("run-1", number, 0, 0, 0, (), {}, positions, {})


def test_only_the_partitions_that_moved_are_recorded_and_a_failed_write_is_retried() -> None:
    spec = _spec()
    lines: list[str] = []
    figures = Figures("o", {}, {spec.flow: (spec.source, spec.target)}, 0.0)
    rounds = OffsetRounds(topology(), CONFIGS, {spec.flow}, False, figures, lines.append)
    writer = Writer()
    rounds.writers[spec.target] = writer  # type: ignore[assignment]
    status = FlowStatus(spec)
    statuses = {spec.flow: status}
    status.add(moved(1, {("orders", 0): 5, ("orders", 1): 7}), 1.0, 1.0)
    rounds.record(statuses)
    assert sorted(writer.written) == [("orders", 0, 5), ("orders", 1, 7)]
    rounds.record(statuses)  # nothing moved: nothing written
    status.add(moved(2, {("orders", 1): 7}), 2.0, 2.0)  # named, but where it was
    rounds.record(statuses)
    assert len(writer.written) == 2
    status.add(moved(3, {("orders", 1): 9}), 3.0, 3.0)
    writer.down = True
    rounds.record(statuses)
    assert len(writer.written) == 2 and lines == [
        f"{spec.flow}: could not record its progress: west is down"
    ]
    writer.down = False
    rounds.record(statuses)  # the move not written is written now
    assert writer.written[2:] == [("orders", 1, 9)]


def test_a_round_leaves_topos_own_progress_groups_unread() -> None:
    """Each flow's progress group holds a position for every partition it copies; no round
    translates them, so the clusters are asked for every other group's offsets only."""
    spec = _spec()
    lines: list[str] = []
    figures = Figures("o", {}, {spec.flow: (spec.source, spec.target)}, 0.0)
    rounds = OffsetRounds(topology(), CONFIGS, {spec.flow}, False, figures, lines.append)
    asked: list[dict[str, object]] = []

    class Observers:
        def observe_all(self, **options: object) -> dict[str, object]:
            asked.append(options)
            raise KafkaUnavailableError("east is down")

    rounds.clusters = Observers()  # type: ignore[assignment]
    rounds.offsets()

    assert asked == [{"settings": False, "skip_groups": naming.PROGRESS_GROUPS}]
    assert lines == ["offsets: east is down"]
