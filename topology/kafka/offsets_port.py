"""The Kafka implementation of `topology.ops.ports.OffsetsAdapter`: each method one call of
`inventory`, `offsets` or `mm2_state`, with the same arguments. (Structural: this package
never imports the application layer, so the protocol is not named here; mypy checks the match
where the application layer is given a `KafkaOffsets`.)"""

from topology.core import observed
from topology.core.mm2 import wire
from topology.core.mm2.positions import Names
from topology.core.offsets.checkpoints import Checkpoint, CheckpointKey
from topology.kafka import inventory, mm2_state, offsets


class KafkaOffsets:
    """Live clusters, reached with the librdkafka settings each method is given."""

    def observe(self, name: str, config: dict[str, str]) -> observed.Cluster:
        return inventory.observe(name, config)

    def read_checkpoints(
        self, config: dict[str, str], topic: str
    ) -> dict[CheckpointKey, Checkpoint]:
        return offsets.read_checkpoints(config, topic)

    def read_progress(
        self, config: dict[str, str], topic: str, flow: str
    ) -> dict[tuple[str, int], int]:
        return offsets.read_progress(config, topic, flow)

    def read_mm2_syncs(self, config: dict[str, str], topic: str) -> list[wire.OffsetSync]:
        return offsets.read_mm2_syncs(config, topic)

    def read_mm2_checkpoints(
        self, config: dict[str, str], topic: str
    ) -> dict[tuple[str, str, int], wire.Checkpoint]:
        return offsets.read_mm2_checkpoints(config, topic)

    def read_mm2_resumes(
        self, config: dict[str, str], source: str, names: Names
    ) -> dict[tuple[str, int], int]:
        return mm2_state.resumes(config, source, names, timeout=30)

    def reader(self, config: dict[str, str]) -> offsets.PartitionReader:
        return offsets.PartitionReader(config)

    def groups(self, config: dict[str, str]) -> offsets.Groups:
        return offsets.Groups(config)

    def log_writer(self, config: dict[str, str]) -> offsets.LogWriter:
        return offsets.LogWriter(config)
