"""What offset translation, failover and the offsets rounds read and write on the clusters.

`translate.py`, `failover.py` and `rounds.py` act on Kafka only through an `OffsetsAdapter`,
passed in: in production `topology.kafka.offsets_port.KafkaOffsets` (each method one call of
`topology.kafka.inventory` or `topology.kafka.offsets`, same signatures), in the unit tests an
in-memory fake. A cluster is named by its librdkafka settings (`config`), as the adapter's
functions take it; `observe` also gets the cluster's name in the topology.

Failures are `TopoError`s: `KafkaUnavailableError` when a cluster does not answer, and
`topology.core.errors.ActiveGroupError` from `GroupsLike.commit` when the broker refuses a
commit because the group has members.
"""

from collections.abc import Iterable
from typing import Protocol

from topology.core import observed
from topology.core.mm2.positions import Names
from topology.core.mm2.wire import Checkpoint as MM2Checkpoint
from topology.core.mm2.wire import OffsetSync
from topology.core.offsets.checkpoints import Checkpoint, CheckpointKey


class ReaderLike(Protocol):
    """Single partitions of one cluster read at chosen offsets (`kafka.offsets.PartitionReader`)."""

    def close(self) -> None: ...

    def bounds(self, topic: str, partition: int) -> tuple[int, int]:
        """The partition's first offset and its end (the next offset to be written)."""
        ...

    def first_stamped(
        self, topic: str, partition: int, offset: int, cluster: str, before: int | None = None
    ) -> tuple[int, int] | None:
        """The first record at or after `offset` copied from `cluster`: (its offset here, its
        offset on `cluster`), or None up to the end (or up to `before`, when given)."""
        ...

    def last_stamped_before(
        self, topic: str, partition: int, offset: int, cluster: str, after: int | None = None
    ) -> tuple[int, int] | None:
        """The last record before `offset` copied from `cluster`, or None back to the start
        (or back to just after `after`, when given)."""
        ...

    def offsets(self, topic: str, partition: int, start: int, end: int) -> list[int]:
        """The offsets of the records from `start` to before `end` (committed ones only:
        transaction markers and aborted records have none)."""
        ...

    def timestamp(self, topic: str, partition: int, offset: int) -> int | None:
        """The timestamp (ms) of the first committed record at or after `offset`; None when
        there is none up to the end."""
        ...


class GroupStateLike(Protocol):
    @property
    def members(self) -> int: ...


class GroupsLike(Protocol):
    """One cluster's consumer groups (`kafka.offsets.Groups`)."""

    def state(self, group: str) -> GroupStateLike: ...

    def commit(self, group: str, offsets: dict[tuple[str, int], int]) -> None:
        """Commit `offsets` for `group` (ActiveGroupError while it has members)."""
        ...


class LogWriterLike(Protocol):
    """Appends keyed records to topo's log topics on one cluster (`kafka.offsets.LogWriter`)."""

    def write(self, topic: str, entries: Iterable[tuple[bytes, bytes]]) -> None: ...

    def flush(self) -> None:
        """Wait until every record written is acknowledged (KafkaUnavailableError if not)."""
        ...


class OffsetsAdapter(Protocol):
    def observe(self, name: str, config: dict[str, str]) -> observed.Cluster:
        """What cluster `name` holds now, its groups' committed offsets included."""
        ...

    def read_checkpoints(
        self, config: dict[str, str], topic: str
    ) -> dict[CheckpointKey, Checkpoint]:
        """The latest checkpoint of each group, topic and partition in a checkpoints topic."""
        ...

    def read_progress(
        self, config: dict[str, str], topic: str, flow: str
    ) -> dict[tuple[str, int], int]:
        """How far `flow` has processed each source (topic, partition), from its progress log."""
        ...

    def read_mm2_syncs(self, config: dict[str, str], topic: str) -> list[OffsetSync]:
        """MM2's offset-syncs in a topic, in the order it wrote them; [] when it is missing."""
        ...

    def read_mm2_checkpoints(
        self, config: dict[str, str], topic: str
    ) -> dict[tuple[str, str, int], MM2Checkpoint]:
        """The newest checkpoint in MM2's format per (group, topic, partition) in a topic; {}
        when it is missing."""
        ...

    def read_mm2_resumes(
        self, config: dict[str, str], source: str, names: Names
    ) -> dict[tuple[str, int], int]:
        """Where MM2 resumes each partition of `source` it copied, by its offsets topic
        (`names`) on this cluster (topology/core/mm2/positions.py); {} when it has none."""
        ...

    def reader(self, config: dict[str, str]) -> ReaderLike: ...

    def groups(self, config: dict[str, str]) -> GroupsLike: ...

    def log_writer(self, config: dict[str, str]) -> LogWriterLike: ...
