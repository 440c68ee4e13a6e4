"""A cheap look at a cluster's topics, taken every few seconds by a running job: names and
partition counts from metadata only. When it changes, the job re-plans its topics."""

from confluent_kafka.admin import AdminClient

from topology.kafka import client


class TopicWatch:
    def __init__(self, config: dict[str, str]) -> None:
        self._config = config
        self._last_error = client.LastError()
        self._admin = AdminClient(client.quiet(config, self._last_error, admin=True))

    def shapes(self, timeout: float = 10) -> dict[str, int]:
        """Topic name -> partition count (internal topics such as __consumer_offsets left out)."""
        doing = "listing topics"
        with client.failures_named(self._config, doing, (self._last_error, self._admin)):
            topics = self._admin.list_topics(timeout=timeout).topics
        return {
            name: len(meta.partitions)
            for name, meta in topics.items()
            if meta.error is None and not name.startswith("__")
        }
