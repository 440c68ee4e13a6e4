"""The driver's progress records and offset rounds (`spark/offset_rounds.py`): a flow's
positions written to its progress log on the target only for the partitions that moved, and
again after a failed write; what a round tells the driver's back-off. The clusters are fakes;
tests/integration/test_offsets.py writes and reads the real log."""

from collections.abc import Iterable

from tests.unit.test_failover_protocol import CONFIGS, topology, world
from tests.unit.test_progress import _spec
from topology.core import naming
from topology.core.errors import KafkaUnavailableError
from topology.core.flow_status import FlowStatus
from topology.core.offsets import checkpoints
from topology.core.progress import FlowProgress
from topology.ops.rounds import Checkpointer
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


def test_a_round_that_finds_nothing_new_says_so_and_any_change_brings_the_beat_back() -> None:
    """The driver backs its rounds off while they find nothing new: a round is new when it
    wrote, when the clusters' groups or topics changed, or when a partition a group reads was
    copied further; a flow's heartbeats, copied every second and read by no group, are not."""
    kafka = world()
    spec = _spec()
    lines: list[str] = []
    figures = Figures("o", {}, {spec.flow: (spec.source, spec.target)}, 0.0)
    rounds = OffsetRounds(topology(), CONFIGS, {spec.flow}, False, figures, lines.append)
    rounds.checkpointer = Checkpointer(topology(), CONFIGS, kafka)
    rounds.writers[spec.target] = Writer()  # type: ignore[assignment]

    class Observers:
        def observe_all(self, **_options: object) -> dict[str, object]:
            return {name: kafka.observe(name, CONFIGS[name]) for name in ("east", "west")}

    rounds.clusters = Observers()  # type: ignore[assignment]
    status = FlowStatus(spec)
    statuses = {spec.flow: status}

    def outcome() -> bool | None:
        rounds.offsets()
        return rounds.take_outcome()

    assert rounds.take_outcome() is None  # no round yet
    assert outcome() is True  # the first round: checkpoints written
    assert rounds.take_outcome() is None  # told once
    assert outcome() is True  # the group it synced on west is seen moved
    assert outcome() is False  # the same clusters: nothing new
    status.add(moved(1, {("heartbeats", 0): 40}), 1.0, 1.0)
    assert rounds.record(statuses) is False  # copied, but no group reads it
    assert outcome() is False
    status.add(moved(2, {("orders", 0): 10}), 2.0, 2.0)
    assert rounds.record(statuses) is True  # a partition billing and ledger read moved
    assert outcome() is True
    assert outcome() is False
    kafka.clusters["east"].committed["reports"] = {("payments", 0): 5}  # a group moved
    assert outcome() is True
    kafka.clusters["west"].members["billing"] = 1  # a group's members joined on the target
    assert outcome() is True
    assert outcome() is False
    kafka.clusters["east"].down = True
    assert outcome() is True  # a failed round is tried again at the beat
    assert lines[-1].startswith("offsets: east is unreachable")
