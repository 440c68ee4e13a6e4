"""Where source partitions end for a read_committed reader (their last stable offsets), asked
in one request per source cluster and look: where a handover from MM2 finds the sources (the
running driver's metrics ask theirs in its JVM: spark/cluster_looks.py)."""

import concurrent.futures
from collections.abc import Iterable

from confluent_kafka import IsolationLevel, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec  # type: ignore[attr-defined]

from topology.core.errors import KafkaUnavailableError
from topology.kafka import client


class PartitionEnds:
    def __init__(self, config: dict[str, str]) -> None:
        self.config = config
        self.admin = AdminClient(client.quiet(config, admin=True))

    def of(
        self, partitions: Iterable[tuple[str, int]], timeout: float = 5
    ) -> dict[tuple[str, int], int]:
        """Each partition's end. A partition that no longer exists is left out; when the
        cluster gives no answer (or one partition's end cannot be had), KafkaUnavailableError:
        an end unknown is not an end reached."""
        latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
        wanted = {TopicPartition(t, p): latest for t, p in set(partitions)}
        if not wanted:
            return {}
        found: dict[tuple[str, int], int] = {}
        doing = "reading the source partitions' ends"
        admin = self.admin
        try:
            with client.failures_named(self.config, doing):
                futures = admin.list_offsets(
                    wanted, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=timeout
                )
                for partition, future in futures.items():
                    try:
                        answer = future.result(timeout + 5)
                    except KafkaException as problem:
                        if client.unknown_topic(problem):
                            continue  # deleted: the flow stops reading it
                        raise
                    found[(partition.topic, partition.partition)] = int(answer.offset)
        except (RuntimeError, concurrent.futures.TimeoutError) as problem:
            # (RuntimeError: confluent_kafka's own check of the answer)
            self._renew()
            raise KafkaUnavailableError(f"{doing} failed: {problem or 'timed out'}") from None
        except KafkaUnavailableError:
            self._renew()
            raise
        finally:
            admin.poll(0)  # serve the log lines queued for the quiet logger
        return found

    def _renew(self) -> None:
        """A client of its own for the next look: one whose metadata predates a partition
        added since never finds that partition's leader, and every look would fail."""
        self.admin = AdminClient(client.quiet(self.config, admin=True))
