"""Read what a live cluster holds: topics, their own configs, ACLs, groups and topo's ownership.

One admin client per cluster. Requests that do not depend on each other are sent together and
awaited together, and every wait is bounded by one deadline, so `observe` answers, or fails
with one line naming the cluster and its bootstrap, within about its timeout.
"""

import time
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    ConsumerGroupType,
    KafkaError,
    KafkaException,
    TopicPartition,
)

# The admin module re-exports these without declaring it; mypy still knows their types.
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ClusterMetadata,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourcePatternType,
    ResourceType,
    TopicMetadata,
)

from topology.core import observed
from topology.core.errors import KafkaUnavailableError, TopoError
from topology.core.naming import OBSERVE_GROUPS, STATE_TOPIC
from topology.kafka import client
from topology.kafka.changes import acl_from_binding, owned_from_record

# Kafka's own bookkeeping: never replicated, so never observed.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})

# Reported by the client while it connects; no retry within the timeout would change them.
_HOPELESS = frozenset({KafkaError._AUTHENTICATION, KafkaError._ALL_BROKERS_DOWN})
_CONNECT_STEP = 0.5  # seconds per metadata attempt while connecting, to notice those early
# Topics per DescribeConfigs request: one request for a normal cluster, while the answer for
# tens of thousands of topics stays well below the client's largest response.
_CONFIGS_PER_REQUEST = 1000
# Clusters observed at once: each is an admin client and a consumer, a few threads each.
_CONCURRENT_CLUSTERS = 32

# None matches any name, principal or host (documented; the type hints say str).
_ANY: Any = None
_EVERY_ACL = AclBindingFilter(
    ResourceType.ANY,
    _ANY,
    ResourcePatternType.ANY,
    _ANY,
    _ANY,
    AclOperation.ANY,
    AclPermissionType.ANY,
)


def observe_all(
    configs: Mapping[str, dict[str, str]], timeout: float = 15.0, settings: bool = True
) -> dict[str, observed.Cluster]:
    """Every cluster observed concurrently, each in its own thread (up to 32 at once).

    All are awaited (each within `timeout`); the first failure in `configs`' order is raised
    as it is. Without `settings`, no topic's or broker's configs, no ACL and no ownership record
    is read: the topics (with their partitions) and groups only, which is what the offset
    rounds read (a cluster of hundreds of topics describes tens of thousands of config entries).
    """
    return Observers(configs, timeout).observe_all(settings)


class Observers:
    """The clusters as a running driver looks at them again and again (its offset rounds and
    its reconcile): one admin client per cluster kept from look to look, as MirrorMaker 2 keeps
    its clients, where `observe_all` connects anew each time (a new client's threads, its
    connection and its first metadata, every 10 s per cluster). A cluster whose look failed
    gets a new client at the next look."""

    def __init__(self, configs: Mapping[str, dict[str, str]], timeout: float = 15.0) -> None:
        self.configs = configs
        self.timeout = timeout
        self._kept: dict[str, _Observer] = {}

    def observe_all(
        self, settings: bool = True, skip_groups: str | None = None
    ) -> dict[str, observed.Cluster]:
        """Every cluster observed concurrently: as the module's `observe_all`; without
        `settings`, the groups whose id starts with `skip_groups` are not read (listed only)."""
        if not self.configs:
            return {}
        workers = min(len(self.configs), _CONCURRENT_CLUSTERS)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="topo-observe") as pool:
            futures = {
                name: pool.submit(self._observe, name, settings, skip_groups)
                for name in self.configs
            }
        return {name: future.result() for name, future in futures.items()}

    def _observe(self, name: str, settings: bool, skip_groups: str | None) -> observed.Cluster:
        observer = self._kept.pop(name, None)
        if observer is None:
            observer = _Observer(name, self.configs[name], self.timeout)
        else:
            observer.again(self.timeout)
        cluster = observer.observe() if settings else observer.observe_for_offsets(skip_groups)
        self._kept[name] = observer  # only once it answered: a failure connects anew
        return cluster


def reach_all(configs: Mapping[str, dict[str, str]], timeout: float = 15.0) -> None:
    """Return once every cluster has answered a metadata request, asked concurrently; else
    raise one KafkaUnavailableError naming the first that did not (and how many more)."""
    failed = list(unreachable(configs, timeout).values())
    if failed:
        more = f" (and {len(failed) - 1} more cluster(s))" if len(failed) > 1 else ""
        raise KafkaUnavailableError(f"{failed[0]}{more}")


def unreachable(
    configs: Mapping[str, dict[str, str]], timeout: float = 15.0
) -> dict[str, KafkaUnavailableError]:
    """The clusters that did not answer a metadata request, asked concurrently, each with
    why; an error that is not about reaching a cluster is raised as it is."""
    if not configs:
        return {}
    workers = min(len(configs), _CONCURRENT_CLUSTERS)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="topo-reach") as pool:
        futures = {
            name: pool.submit(lambda n, c: _Observer(n, c, timeout).connect(), name, config)
            for name, config in configs.items()
        }
    found = {}
    for name, future in futures.items():
        problem = future.exception()
        if problem is None:
            continue
        if not isinstance(problem, KafkaUnavailableError):
            raise problem
        found[name] = problem
    return found


def observe(
    name: str, config: dict[str, str], timeout: float = 15.0, settings: bool = True
) -> observed.Cluster:
    """What cluster `name` (reached with librdkafka settings `config`) holds now; without
    `settings`, its topics' and broker's configs and its ACLs are not read (`observe_all`)."""
    observer = _Observer(name, config, timeout)
    return observer.observe() if settings else observer.observe_for_offsets()


# A group deleted since it was listed, or one topo's principal may not DESCRIBE: the broker
# lists every group to a principal with DESCRIBE on the cluster, but topo reads (and syncs)
# only the groups it is allowed to, as MM2 does.
_GROUPS_NOT_READ = (KafkaError.GROUP_ID_NOT_FOUND, KafkaError.GROUP_AUTHORIZATION_FAILED)


class _Observer:
    def __init__(self, name: str, config: dict[str, str], timeout: float) -> None:
        self.name = name
        self.config = config
        self.deadline = time.monotonic() + timeout
        self.last_error = client.LastError()
        self.hopeless: KafkaError | None = None
        settings = {**client.quiet(config, self.last_error, admin=True), "error_cb": self._on_error}
        try:
            self.admin = AdminClient(settings)
        except KafkaException as problem:  # a setting librdkafka rejects
            raise KafkaUnavailableError(f"{self.who}: {_said(problem)}") from None

    def again(self, timeout: float) -> None:
        """Ready for another look with the same client: a new deadline, no old error."""
        self.deadline = time.monotonic() + timeout
        self.hopeless = None
        self.last_error.reason = None

    @property
    def who(self) -> str:
        return f"cluster {self.name} ({self.config.get('bootstrap.servers', '?')})"

    def _on_error(self, error: KafkaError) -> None:
        if error.code() in _HOPELESS and self.hopeless is None:
            self.hopeless = error

    def left(self) -> float:
        return max(0.1, self.deadline - time.monotonic())

    @contextmanager
    def step(self, doing: str) -> Iterator[None]:
        """One line naming the cluster and the step for any client failure inside."""
        try:
            yield
        except (KafkaException, TimeoutError) as problem:
            raise KafkaUnavailableError(
                f"{self.who}: {doing} failed: {self.reason(problem)}"
            ) from None

    def reason(self, problem: Exception) -> str:
        """The broker's own words, or for a local failure the client's last error line."""
        error = problem.args[0] if problem.args else None
        if isinstance(error, KafkaError) and error.code() >= 0:
            return error.str()
        self.admin.poll(0)  # serves the queued log lines LastError keeps
        if self.last_error.reason:
            return self.last_error.reason
        if isinstance(error, KafkaError):
            return error.str()
        return "no answer in time" if isinstance(problem, TimeoutError) else str(problem)

    def observe(self) -> observed.Cluster:
        metadata = self.connect()
        names = sorted(set(metadata.topics) - INTERNAL_TOPICS)
        broker = ConfigResource(ResourceType.BROKER, str(min(metadata.brokers)))
        # Everything that needs only the topic list, sent at once.
        with self.step("asking for configs, ACLs and groups"):
            topic_configs: dict[ConfigResource, Future[Any]] = {}
            for start in range(0, len(names), _CONFIGS_PER_REQUEST):
                batch = names[start : start + _CONFIGS_PER_REQUEST]
                topic_configs |= self.admin.describe_configs(
                    [ConfigResource(ResourceType.TOPIC, name) for name in batch],
                    request_timeout=self.left(),
                )
            broker_configs = self.admin.describe_configs([broker], request_timeout=self.left())
            cluster = self.admin.describe_cluster(
                include_authorized_operations=True, request_timeout=self.left()
            )
            acls = self.admin.describe_acls(_EVERY_ACL, request_timeout=self.left())
            groups = self.admin.list_consumer_groups(request_timeout=self.left())
        topics = self.topics(metadata, topic_configs)
        with self.step(f"describing broker {broker.name}'s configs"):
            broker_entries: dict[str, ConfigEntry] = broker_configs[broker].result(self.left())
        default_rf = broker_entries.get("default.replication.factor")
        return observed.Cluster(
            name=self.name,
            brokers=len(metadata.brokers),
            default_replication_factor=(
                int(default_rf.value) if default_rf is not None and default_rf.value else None
            ),
            topics=topics,
            acls=self.acls(broker_entries, cluster, acls),
            groups=self.groups(groups),
            owned=self.owned() if STATE_TOPIC in metadata.topics else {},
        )

    def observe_for_offsets(self, skip_groups: str | None = None) -> observed.Cluster:
        """The topics (with their partitions, no configs) and groups: what the offset rounds
        translate. No ownership records (they would read topo's state topic to its end). A
        group whose id starts with `skip_groups` is left out unread: topo's own progress
        groups hold a position for every partition a flow copies, and no round translates
        them."""
        metadata = self.connect()
        names = sorted(set(metadata.topics) - INTERNAL_TOPICS)
        with self.step("asking for groups"):
            groups = self.admin.list_consumer_groups(request_timeout=self.left())
        return observed.Cluster(
            name=self.name,
            brokers=len(metadata.brokers),
            default_replication_factor=None,
            topics={name: self.topic(metadata.topics[name], {}) for name in names},
            acls=None,
            groups=self.groups(groups, skip_groups),
            owned={},
        )

    def connect(self) -> ClusterMetadata:
        """The cluster's metadata, retried until the deadline unless the client gives up."""
        while True:
            try:
                return self.admin.list_topics(timeout=min(_CONNECT_STEP, self.left()))
            except KafkaException as problem:
                self.admin.poll(0)  # serves error_cb
                if self.hopeless is not None or time.monotonic() >= self.deadline:
                    hopeless = self.hopeless.str() if self.hopeless else None
                    reason = self.last_error.reason or hopeless or _said(problem)
                    raise KafkaUnavailableError(f"{self.who} is unreachable: {reason}") from None

    def topics(
        self, metadata: ClusterMetadata, configs: Mapping[ConfigResource, Future[Any]]
    ) -> dict[str, observed.Topic]:
        found: dict[str, observed.Topic] = {}
        for resource, future in configs.items():
            name = resource.name
            with self.step(f"describing topic {name}'s configs"):
                try:
                    entries: dict[str, ConfigEntry] = future.result(self.left())
                except KafkaException as problem:
                    if problem.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        continue  # deleted since the topic list was read
                    raise
            found[name] = self.topic(metadata.topics[name], entries)
        return dict(sorted(found.items()))

    def topic(self, metadata: TopicMetadata, entries: Mapping[str, ConfigEntry]) -> observed.Topic:
        name = metadata.topic
        assert name is not None  # set on every topic a metadata answer lists
        first = metadata.partitions.get(0)
        if first is None:
            raise KafkaUnavailableError(
                f"{self.who}: topic {name} has no partition 0 in the cluster's metadata "
                f"({metadata.error or 'no error given'})"
            )
        own = {
            key: entry.value
            for key, entry in sorted(entries.items())
            # The client gives the source as an int, though its type hints say ConfigSource.
            if ConfigSource(entry.source) is ConfigSource.DYNAMIC_TOPIC_CONFIG
            and not entry.is_sensitive
            and not entry.is_read_only
            and entry.value is not None
        }
        return observed.Topic(name, len(metadata.partitions), len(first.replicas), own)

    def acls(
        self,
        broker_entries: Mapping[str, ConfigEntry],
        cluster: Future[Any],
        acls: Future[Any],
    ) -> tuple[observed.Acl, ...] | None:
        # librdkafka reports no error for DescribeAcls (neither "no authorizer" nor "not
        # allowed"), so both are found out another way: the broker's authorizer setting, and
        # the operations the cluster grants topo.
        authorizer = broker_entries.get("authorizer.class.name")
        if authorizer is not None and not authorizer.value:
            return None
        with self.step("describing the cluster"):
            granted = cluster.result(self.left()).authorized_operations or []
        if AclOperation.DESCRIBE not in granted:
            raise KafkaUnavailableError(
                f"{self.who}: describing ACLs failed: the principal may not DESCRIBE the cluster"
            )
        with self.step("describing ACLs"):
            bindings = acls.result(self.left())
        return tuple(sorted(acl_from_binding(binding) for binding in bindings))

    def groups(self, listing: Future[Any], skip: str | None = None) -> dict[str, observed.Group]:
        with self.step("listing consumer groups"):
            result = listing.result(self.left())
            if result.errors:  # KafkaErrors (e.g. a coordinator still loading after a restart)
                raise KafkaException(result.errors[0])
        kept = [
            group
            for group in result.valid or []
            if getattr(group, "type", ConsumerGroupType.UNKNOWN)
            in (ConsumerGroupType.UNKNOWN, ConsumerGroupType.CLASSIC, ConsumerGroupType.CONSUMER)
            and not (skip and group.group_id.startswith(skip))
        ]
        # One group per request (the API's limit); all of them in flight at once.
        with self.step("asking for consumer group offsets"):
            requests = {
                group.group_id: self.admin.list_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group.group_id)], request_timeout=self.left()
                )[group.group_id]
                for group in kept
            }
        found: dict[str, observed.Group] = {}
        for group in kept:
            group_id = group.group_id
            with self.step(f"reading consumer group {group_id}'s offsets"):
                try:
                    answer = requests[group_id].result(self.left())
                except KafkaException as problem:
                    if problem.args[0].code() in _GROUPS_NOT_READ:
                        continue  # deleted since listed, or not topo's to read (no DESCRIBE)
                    raise
            offsets: dict[tuple[str, int], int] = {}
            for partition in answer.topic_partitions or []:
                if partition.error is not None:
                    raise KafkaUnavailableError(
                        f"{self.who}: reading consumer group {group_id}'s offset for "
                        f"{partition.topic}[{partition.partition}] failed: {partition.error.str()}"
                    )
                if partition.offset >= 0:
                    offsets[(partition.topic, partition.partition)] = partition.offset
            state = getattr(group, "state", None)
            found[group_id] = observed.Group(
                group_id,
                state.name if state is not None else "UNKNOWN",
                dict(sorted(offsets.items())),
            )
        return dict(sorted(found.items()))

    def owned(self) -> dict[str, observed.Owned]:
        """topo's ownership records: the state topic read to its end, the last record per key."""
        doing = f"reading {STATE_TOPIC}"
        settings = {
            **client.quiet(self.config, self.last_error),
            # Offsets come from assign(); the group id is never used to commit.
            "group.id": f"{OBSERVE_GROUPS}{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            **client.READ_TO_END,
        }
        with self.step(doing):
            consumer = Consumer(settings)
        try:
            with self.step(doing):
                return self._read_state(consumer)
        finally:
            consumer.close()

    def _read_state(self, consumer: Consumer) -> dict[str, observed.Owned]:
        # The last record of each key, decoded only once the end is reached: a record topo
        # cannot read that a later one replaced or tombstoned does no harm.
        latest: dict[bytes | None, tuple[int, bytes | None]] = {}
        for offset, key, value in self._state_records(consumer):
            latest[key] = (offset, value)
        found: dict[str, observed.Owned] = {}
        for key, (offset, value) in latest.items():
            try:
                text, owned = owned_from_record(key, value)
            except (ValueError, UnicodeDecodeError) as problem:
                raise TopoError(
                    f"{self.who}: record {offset} of {STATE_TOPIC} is not one topo wrote "
                    f"({problem})"
                ) from None
            if owned is not None:
                found[text] = owned
        return dict(sorted(found.items()))

    def _state_records(
        self, consumer: Consumer
    ) -> Iterator[tuple[int, bytes | None, bytes | None]]:
        """(offset, key, value) of partition 0 of the state topic, up to its high watermark."""
        low, high = consumer.get_watermark_offsets(
            TopicPartition(STATE_TOPIC, 0), timeout=self.left()
        )
        if high <= low:
            return
        consumer.assign([TopicPartition(STATE_TOPIC, 0, low)])
        while time.monotonic() < self.deadline:
            message = consumer.poll(min(0.5, self.left()))
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    return
                raise KafkaException(error)
            offset = message.offset()
            assert offset is not None  # set on every record read
            yield offset, message.key(), message.value()
            if offset >= high - 1:
                return
        raise TimeoutError


def _said(problem: KafkaException) -> str:
    error = problem.args[0] if problem.args else problem
    return error.str() if isinstance(error, KafkaError) else str(error)
