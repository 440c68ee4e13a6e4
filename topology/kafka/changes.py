"""Carry out one plan change on one cluster; and the one encoding of topo's ownership records.

Ownership is written ahead: a topic or ACL topo creates gets its record in the state topic
(`naming.STATE_TOPIC`) before it exists, so a crash in between leaves at worst a record
for something missing, never something of topo's that no record claims. A delete removes the
thing first and its record after, for the same reason.

Records: key `Owned.key` (`topic:<name>`, `acl:<acl_key>`) in UTF-8, value the JSON of
`Owned.to_dict()`; a null value (tombstone) forgets the key. `topology.kafka.inventory` reads
them back with `owned_from_record`.
"""

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from enum import Enum
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Producer, TopicCollection, TopicPartition

# The admin module re-exports these without declaring it; mypy still knows their types.
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourcePatternType,
    ResourceType,
)

from topology.core import observed
from topology.core.errors import KafkaUnavailableError, TopoError
from topology.core.naming import STATE_TOPIC
from topology.core.observed import Acl, Owned
from topology.core.plan.values import Action, Change, Resource
from topology.kafka import client

# -- ownership records ----------------------------------------------------------------------


def ownership_record(owned: Owned) -> tuple[bytes, bytes]:
    """The state topic record saying topo made `owned`: (key, value)."""
    value = json.dumps(owned.to_dict(), sort_keys=True, separators=(",", ":"))
    return owned.key.encode(), value.encode()


def tombstone(key: str) -> tuple[bytes, None]:
    """The state topic record forgetting `key` (an `Owned.key`)."""
    return key.encode(), None


def owned_from_record(key: bytes | None, value: bytes | None) -> tuple[str, Owned | None]:
    """A record read back: its key, and what it records (None for a tombstone).

    Raises ValueError for a record topo did not write.
    """
    if key is None:
        raise ValueError("record has no key")
    text = key.decode()
    if value is None:
        return text, None
    try:
        owned = observed.owned_from_dict(json.loads(value))
    except (KeyError, TypeError, AttributeError) as problem:
        raise ValueError(f"not an ownership record ({problem})") from None
    if owned.key != text:
        raise ValueError(f"key {text} holds the record of {owned.key}")
    return text, owned


# -- ACL bindings in Kafka's words ----------------------------------------------------------

# Kafka calls the cluster resource CLUSTER; librdkafka calls it BROKER.
_RESOURCE_TO_KAFKA = {"BROKER": "CLUSTER"}
_RESOURCE_FROM_KAFKA = {"CLUSTER": "BROKER"}


def acl_from_binding(binding: AclBinding) -> Acl:
    restype = _name(binding.restype)
    return Acl(
        resource_type=_RESOURCE_TO_KAFKA.get(restype, restype),
        resource_name=binding.name,
        pattern_type=_name(binding.resource_pattern_type),
        principal=binding.principal,
        host=binding.host,
        operation=_name(binding.operation),
        permission=_name(binding.permission_type),
    )


def _name(term: Enum | str | int) -> str:
    """An enum's name (AclBinding turns every term into its enum; typed more loosely)."""
    return term.name if isinstance(term, Enum) else str(term)


def acl_binding(acl: Acl) -> AclBinding:
    """The binding for `acl`; a name librdkafka does not know is a TopoError."""
    try:
        restype = ResourceType[_RESOURCE_FROM_KAFKA.get(acl.resource_type, acl.resource_type)]
        pattern = ResourcePatternType[acl.pattern_type]
        operation = AclOperation[acl.operation]
        permission = AclPermissionType[acl.permission]
    except KeyError as unknown:
        raise TopoError(
            f"ACL {acl.describe()}: {unknown.args[0]} is not a Kafka ACL term"
        ) from None
    return AclBinding(
        restype, acl.resource_name, pattern, acl.principal, acl.host, operation, permission
    )


# -- executing a change ---------------------------------------------------------------------


class _Cluster:
    """One admin client for one change; every wait bounded by the change's deadline."""

    def __init__(self, config: dict[str, str], timeout: float, owner: str | None) -> None:
        self.config = config
        self._owner = owner
        self.bootstrap = config.get("bootstrap.servers", "?")
        self.deadline = time.monotonic() + timeout
        self.admin, self.last_error = _admin(config)
        self.last_error.reason = None  # the client is shared: only this change's errors count

    def left(self) -> float:
        return max(0.1, self.deadline - time.monotonic())

    def owned(self, kind: str, name: str, edges: Iterable[str], acl: Acl | None = None) -> Owned:
        """The ownership record of something this change makes, for the plan's owner."""
        if self._owner is None:
            raise ValueError(f"recording ownership of {kind} {name} needs execute(owner=...)")
        edges = tuple(sorted(edges))
        return Owned(kind=kind, name=name, edges=edges, acl=acl, owner=self._owner)

    def failures(self, doing: str) -> AbstractContextManager[None]:
        return client.failures_named(self.config, doing, (self.last_error, self.admin))

    def shown(self, topics: Sequence[str]) -> set[str]:
        """Which of `topics` the cluster shows to topo's principal, asked in one request that
        describes them (it never creates one), not the whole cluster's metadata, which at
        thousands of partitions took tens of milliseconds a look."""
        futures = self.admin.describe_topics(
            TopicCollection(list(topics)), request_timeout=self.left()
        )
        found = set()
        for topic, future in futures.items():
            try:
                future.result(timeout=self.left())
            except KafkaException as problem:
                if problem.args[0].code() in _NOT_SHOWN:
                    continue
                raise
            found.add(topic)
        return found

    def has(self, topic: str) -> bool:
        return topic in self.shown([topic])

    def wait_made(self, creations: Sequence[Change]) -> None:
        """Until the cluster shows every topic just created and every partition of them answers
        from its leader: a broker shows a new topic in its metadata a moment before it leads its
        partitions, and what comes next may need the leader (a flow's start reads
        topo-runs.internal at once). A partition that cannot be asked for another reason is
        not waited for."""
        names = {change.name for change in creations}
        while names:
            names -= self.shown(sorted(names))
            if names and time.monotonic() >= self.deadline:
                raise TimeoutError
            if names:
                time.sleep(0.1)
        waiting = {
            TopicPartition(change.name, partition)
            for change in creations
            for partition in range(int(_after(change)["partitions"]))
        }
        while waiting:
            latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
            asked = dict.fromkeys(waiting, latest)
            futures = self.admin.list_offsets(asked, request_timeout=self.left())
            for partition, future in futures.items():
                try:
                    future.result(timeout=self.left())
                except KafkaException as problem:
                    if problem.args[0].code() in client.LEADER_MOVING:
                        continue
                except RuntimeError:  # confluent_kafka's own check of an answer
                    pass
                waiting.discard(partition)
            if waiting and time.monotonic() >= self.deadline:
                raise TimeoutError
            if waiting:
                time.sleep(0.1)

    def write_state(self, records: Sequence[tuple[bytes, bytes | None]], doing: str) -> None:
        """Write records to the state topic; return once every one is acknowledged."""
        producer, last_error = _state_producer(self.config, self.left())
        last_error.reason = None  # the producer is shared: only this write's errors count
        with self.failures(doing):
            # Asked of the admin client: the producer's request naming the topic could create
            # it on a cluster that creates topics on demand.
            if not self.has(STATE_TOPIC):
                raise KafkaUnavailableError(
                    f"{doing} on {self.bootstrap} failed: topo's state topic {STATE_TOPIC} "
                    "does not exist"
                )
        failures: list[str] = []

        def on_delivery(error: KafkaError | None, _message: object) -> None:
            if error is not None:
                failures.append(error.str())

        for key, value in records:
            producer.produce(
                STATE_TOPIC, value=value, key=key, partition=0, on_delivery=on_delivery
            )
        unsent = producer.flush(self.left())
        if unsent or failures:
            reason = failures[0] if failures else (last_error.reason or "no answer in time")
            raise KafkaUnavailableError(f"{doing} on {self.bootstrap} failed: {reason}")

    def wait_gone(self, name: str, doing: str) -> None:
        """Until the cluster no longer shows the topic (a deletion is asynchronous)."""
        with self.failures(doing):
            while self.has(name):
                if time.monotonic() >= self.deadline:
                    raise TimeoutError
                time.sleep(0.1)


# Added to a batch of creations' deadline for each topic in it.
_SECONDS_PER_TOPIC = 0.2

# A topic that does not exist, or that topo's principal may not see (as a listing leaves it out).
_NOT_SHOWN = (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError.TOPIC_AUTHORIZATION_FAILED)

# One idempotent producer per cluster for the life of the process: a new one spends up to half
# a second getting its producer id, once per change of a long apply otherwise.
_PRODUCERS: dict[tuple[tuple[str, str], ...], tuple[Producer, client.LastError]] = {}
_PRODUCERS_LOCK = threading.Lock()


_ADMINS: dict[tuple[tuple[str, str], ...], tuple[AdminClient, client.LastError]] = {}


def _admin(config: dict[str, str]) -> tuple[AdminClient, client.LastError]:
    """One admin client per cluster for the life of the process: connecting anew for every
    change made applying 2,000 topic creations take 104 s instead of 28 s."""
    key = tuple(sorted(config.items()))
    with _PRODUCERS_LOCK:
        if key not in _ADMINS:
            last_error = client.LastError()
            with client.failures_named(config, "connecting"):
                _ADMINS[key] = (
                    AdminClient(client.quiet(config, last_error, admin=True)),
                    last_error,
                )
        return _ADMINS[key]


def _state_producer(config: dict[str, str], timeout: float) -> tuple[Producer, client.LastError]:
    key = tuple(sorted(config.items()))
    with _PRODUCERS_LOCK:
        if key not in _PRODUCERS:
            last_error = client.LastError()
            settings = {
                **client.quiet(config, last_error),
                "acks": "all",
                "enable.idempotence": "true",
                "message.timeout.ms": str(max(1000, int(timeout * 1000))),
            }
            with client.failures_named(config, "connecting a producer"):
                _PRODUCERS[key] = (Producer(settings), last_error)
        return _PRODUCERS[key]


def execute(
    config: dict[str, str], change: Change, timeout: float = 30.0, *, owner: str | None = None
) -> None:
    """Carry out `change` on the cluster `config` reaches; KafkaUnavailableError if it fails.

    `owner` (the plan's topology name, `Plan.owner`) is recorded in every ownership record the
    change writes; a change that writes one without it is a ValueError.
    """
    run = _RUNS.get((change.action, change.resource))
    if run is None:
        raise TopoError(f"topo cannot {change.action} a {change.resource} ({change.name})")
    run(_Cluster(config, timeout, owner), change)


def create_topics(
    config: dict[str, str], creations: Sequence[Change], timeout: float = 30.0, *, owner: str
) -> list[str | None]:
    """Carry out topic creations on one cluster at once, as `execute` does each (the ownership
    records written ahead, a topic that exists already refused, each waited for until every
    partition answers from its leader), with one request for each of those steps instead of
    one per topic; for each change, None (done) or the one line saying why it failed. A failure
    of the cluster itself is a KafkaUnavailableError."""
    cluster = _Cluster(config, timeout + _SECONDS_PER_TOPIC * len(creations), owner)
    failed: dict[str, str] = {}
    with cluster.failures(f"creating {len(creations)} topics"):
        there = cluster.shown([change.name for change in creations])
    for name in there:
        failed[name] = (
            f"creating topic {name} on {cluster.bootstrap} failed: the topic already exists"
        )
    wanted = [change for change in creations if change.name not in there]
    if not wanted:
        return [failed.get(change.name) for change in creations]
    records = [ownership_record(cluster.owned("topic", c.name, c.edges)) for c in wanted]
    cluster.write_state(records, f"recording ownership of {len(wanted)} topics")
    with cluster.failures(f"creating {len(wanted)} topics"):
        futures = cluster.admin.create_topics(
            [_new_topic(change) for change in wanted],
            request_timeout=cluster.left(),
            operation_timeout=cluster.left(),
        )
    undone: list[str] = []  # made by someone else since they were looked for: not topo's
    for change in wanted:
        name = change.name
        try:
            with cluster.failures(f"creating topic {name}"):
                try:
                    futures[name].result(timeout=cluster.left())
                except KafkaException as problem:
                    if problem.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                        undone.append(name)
                    raise
        except TopoError as problem:
            failed[name] = str(problem)
    # From here on some topics are made: a failure is told against the topics it concerns.
    if undone:
        tombstones = [tombstone(f"topic:{name}") for name in undone]
        try:
            cluster.write_state(tombstones, f"undoing the ownership of {len(undone)} topics")
        except TopoError as problem:
            for name in undone:
                failed[name] += f"; {problem}"
    made = [change for change in wanted if change.name not in failed]
    try:
        with cluster.failures(f"waiting for {len(made)} new topics"):
            cluster.wait_made(made)
    except TopoError as problem:
        for change in made:
            failed[change.name] = f"creating topic {change.name}: created, but not ready: {problem}"
    return [failed.get(change.name) for change in creations]


def _after(change: Change) -> Mapping[str, Any]:
    if change.after is None:
        raise TopoError(f"{change.action} {change.resource} {change.name} has no 'after'")
    return change.after


def _before(change: Change) -> Mapping[str, Any]:
    if change.before is None:
        raise TopoError(f"{change.action} {change.resource} {change.name} has no 'before'")
    return change.before


def _create_topic(cluster: _Cluster, change: Change) -> None:
    name, after = change.name, _after(change)
    doing = f"creating topic {name}"
    owned = after.get("purpose") != "state"  # topo's state topic records no owner of itself
    record = ownership_record(cluster.owned("topic", name, change.edges)) if owned else None
    with cluster.failures(doing):
        if cluster.has(name):
            # Checked before the ownership record is written: a topic that exists already is
            # someone's (perhaps topo's, from an earlier run), and its record must not change.
            raise KafkaUnavailableError(
                f"{doing} on {cluster.bootstrap} failed: the topic already exists"
            )
    if record is not None:
        cluster.write_state([record], f"recording ownership of topic {name}")
    with cluster.failures(doing):
        future = cluster.admin.create_topics(
            [_new_topic(change)], request_timeout=cluster.left(), operation_timeout=cluster.left()
        )[name]
        try:
            future.result(timeout=cluster.left())
        except KafkaException as problem:
            if record is not None and problem.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                # Made by someone else since the check above: it is not topo's.
                cluster.write_state([tombstone(f"topic:{name}")], f"{doing} (undoing ownership)")
            raise
    with cluster.failures(doing):
        cluster.wait_made([change])


def _new_topic(change: Change) -> NewTopic:
    after = _after(change)
    return NewTopic(
        change.name,
        num_partitions=int(after["partitions"]),
        replication_factor=int(after["replication_factor"]),
        config={key: str(value) for key, value in after.get("configs", {}).items()},
    )


def _delete_topic(cluster: _Cluster, change: Change) -> None:
    name = change.name
    doing = f"deleting topic {name}"
    with cluster.failures(doing):
        future = cluster.admin.delete_topics(
            [name], request_timeout=cluster.left(), operation_timeout=cluster.left()
        )[name]
        try:
            future.result(timeout=cluster.left())
        except KafkaException as problem:
            if problem.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise  # already gone (an earlier apply stopped part-way): only the record is left
    cluster.wait_gone(name, doing=doing)
    cluster.write_state([tombstone(f"topic:{name}")], f"forgetting ownership of topic {name}")


def _write_ownership(cluster: _Cluster, change: Change) -> None:
    record = ownership_record(cluster.owned("topic", change.name, _after(change)["edges"]))
    cluster.write_state([record], f"recording ownership of topic {change.name}")


def _delete_ownership(cluster: _Cluster, change: Change) -> None:
    doing = f"forgetting ownership of topic {change.name}"
    cluster.write_state([tombstone(f"topic:{change.name}")], doing)


def _add_partitions(cluster: _Cluster, change: Change) -> None:
    count = int(_after(change)["partitions"])
    doing = f"increasing topic {change.name} to {count} partitions"
    with cluster.failures(doing):
        future = cluster.admin.create_partitions(
            [NewPartitions(change.name, count)],
            request_timeout=cluster.left(),
            operation_timeout=cluster.left(),
        )[change.name]
        future.result(timeout=cluster.left())


def _alter_configs(cluster: _Cluster, change: Change) -> None:
    entries = [
        ConfigEntry(key, None, incremental_operation=AlterConfigOpType.DELETE)
        if value is None
        else ConfigEntry(key, str(value), incremental_operation=AlterConfigOpType.SET)
        for key, value in sorted(_after(change).items())
    ]
    resource = ConfigResource(ResourceType.TOPIC, change.name, incremental_configs=entries)
    doing = f"changing configs of topic {change.name}"
    with cluster.failures(doing):
        futures = cluster.admin.incremental_alter_configs(
            [resource], request_timeout=cluster.left()
        )
        for future in futures.values():
            future.result(timeout=cluster.left())


def _create_acl(cluster: _Cluster, change: Change) -> None:
    acl = Acl(**_after(change))
    binding = acl_binding(acl)
    key = observed.acl_key(acl)
    owned = cluster.owned("acl", key, change.edges, acl)
    cluster.write_state([ownership_record(owned)], f"recording ownership of ACL {acl.describe()}")
    doing = f"creating ACL {acl.describe()}"
    with cluster.failures(doing):
        futures = cluster.admin.create_acls([binding], request_timeout=cluster.left())
        for future in futures.values():
            future.result(timeout=cluster.left())


def _delete_acl(cluster: _Cluster, change: Change) -> None:
    acl = Acl(**_before(change))
    binding = acl_binding(acl)
    exact = AclBindingFilter(
        binding.restype,
        binding.name,
        binding.resource_pattern_type,
        binding.principal,
        binding.host,
        binding.operation,
        binding.permission_type,
    )
    doing = f"deleting ACL {acl.describe()}"
    with cluster.failures(doing):
        futures = cluster.admin.delete_acls([exact], request_timeout=cluster.left())
        for future in futures.values():
            future.result(timeout=cluster.left())
    doing = f"forgetting ownership of ACL {acl.describe()}"
    cluster.write_state([tombstone(f"acl:{observed.acl_key(acl)}")], doing)


_RUNS: dict[tuple[Action, Resource], Callable[[_Cluster, Change], None]] = {
    (Action.CREATE, Resource.TOPIC): _create_topic,
    (Action.DELETE, Resource.TOPIC): _delete_topic,
    (Action.CREATE, Resource.OWNERSHIP): _write_ownership,
    (Action.UPDATE, Resource.OWNERSHIP): _write_ownership,
    (Action.DELETE, Resource.OWNERSHIP): _delete_ownership,
    (Action.UPDATE, Resource.PARTITIONS): _add_partitions,
    (Action.UPDATE, Resource.TOPIC_CONFIG): _alter_configs,
    (Action.CREATE, Resource.ACL): _create_acl,
    (Action.DELETE, Resource.ACL): _delete_acl,
}
