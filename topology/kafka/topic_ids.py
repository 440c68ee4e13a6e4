"""The ids of topics on one cluster (Kafka gives a topic a new one each time it is made), asked
in one request per cluster and look: how the running driver tells a topic deleted and made
again under its copy (`core/topic_ids.py`)."""

import concurrent.futures
from collections.abc import Iterable

from confluent_kafka import KafkaException, TopicCollection
from confluent_kafka.admin import AdminClient

from topology.core.errors import KafkaUnavailableError
from topology.kafka import client


class TopicIds:
    def __init__(self, config: dict[str, str]) -> None:
        self.config = config
        self.admin = AdminClient(client.quiet(config, admin=True))

    def of(self, topics: Iterable[str], timeout: float = 5) -> dict[str, str]:
        """Each topic's id; a topic that does not exist is left out. KafkaUnavailableError
        when the cluster gives no answer."""
        names = sorted(set(topics))
        if not names:
            return {}
        found: dict[str, str] = {}
        doing = "reading the topics' ids"
        try:
            with client.failures_named(self.config, doing):
                futures = self.admin.describe_topics(
                    TopicCollection(names), request_timeout=timeout
                )
                for name, future in futures.items():
                    try:
                        described = future.result(timeout + 5)
                    except KafkaException as problem:
                        if client.unknown_topic(problem):
                            continue  # deleted (and not made again yet)
                        raise
                    found[name] = str(described.topic_id)
        except (RuntimeError, concurrent.futures.TimeoutError) as problem:
            self.admin = AdminClient(client.quiet(self.config, admin=True))
            raise KafkaUnavailableError(f"{doing} failed: {problem or 'timed out'}") from None
        finally:
            self.admin.poll(0)  # serve the log lines queued for the quiet logger
        return found
