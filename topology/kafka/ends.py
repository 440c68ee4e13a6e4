"""Where source partitions end for a read_committed reader (their last stable offsets), asked
in one request per look: what the metrics compare a flow's read positions with to tell its
lag while a batch is still running or hung."""

from collections.abc import Iterable

from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]

from topology.kafka import client


class PartitionEnds:
    def __init__(self, config: dict[str, str]) -> None:
        self.config = config
        self.admin = AdminClient(client.quiet(config))

    def of(
        self, partitions: Iterable[tuple[str, int]], timeout: float = 5
    ) -> dict[tuple[str, int], int]:
        """Each partition's end; one that no longer exists (or gave no answer) is left out."""
        latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
        wanted = {TopicPartition(t, p): latest for t, p in partitions}
        if not wanted:
            return {}
        found: dict[tuple[str, int], int] = {}
        with client.failures_named(self.config, "reading the source partitions' ends"):
            futures = self.admin.list_offsets(
                wanted, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=timeout
            )
            for partition, future in futures.items():
                try:
                    found[(partition.topic, partition.partition)] = int(future.result().offset)
                except KafkaException:
                    continue
        return found
