"""`ops.verify`'s reads on Kafka: partitions read committed, a flow's progress log, and
MirrorMaker 2's offset-syncs."""

from topology.core.mm2.wire import OffsetSync
from topology.kafka import offsets


class KafkaVerify:
    def __init__(self, configs: dict[str, dict[str, str]]) -> None:
        self.configs = configs

    def partitions(self, cluster: str) -> offsets.PartitionReader:
        return offsets.PartitionReader(self.configs[cluster])

    def progress(self, cluster: str, topic: str, flow: str) -> dict[tuple[str, int], int]:
        return offsets.read_progress(self.configs[cluster], topic, flow)

    def mm2_syncs(self, cluster: str, topic: str) -> list[OffsetSync]:
        return offsets.read_mm2_syncs(self.configs[cluster], topic)
