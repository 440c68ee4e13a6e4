"""Ask a live cluster what topo's principal may do, changing nothing and needing no more
permission than topo needs anyway.

- `describe_cluster(include_authorized_operations=True)`: the cluster's operations. The broker
  answers them only to a principal allowed to DESCRIBE the cluster, which reading the
  cluster's ACLs needs anyway; without it the answer is empty.
- `describe_topics(..., include_authorized_operations=True)`: each existing topic's operations;
  a topic refused means DESCRIBE is lacking, a topic unknown means it does not exist and
  DESCRIBE is granted.
- `create_topics([...], validate_only=True)` for each topic the plan creates: an authorization
  error means CREATE is lacking. Nothing is created.
- `describe_consumer_groups(..., include_authorized_operations=True)` for each group topo uses
  (a group that does not exist is described as dead, with its operations).

What the broker cannot be asked about without using it (transactional ids; topics that do not
exist yet) is judged by `topology.core.permission_needs` from the ACL bindings the cluster
returned when it was observed. A cluster without an authorizer is not asked at all.
"""

import time
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicCollection

# The admin module re-exports these without declaring it; mypy still knows their types.
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ConfigResource,
    NewTopic,
)

from topology.core import observed
from topology.core.naming import OBSERVE_GROUPS
from topology.core.permission_needs import GROUP, PREFIXED, TOPIC, Access, Permission, probe_name
from topology.kafka import client

_REFUSED = frozenset(
    {
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
    }
)


class _Asker:
    def __init__(self, name: str, config: dict[str, str], timeout: float) -> None:
        self.name = name
        self.deadline = time.monotonic() + timeout
        self.last_error = client.LastError()
        with client.failures_named(config, "connecting to ask about permissions"):
            self.admin = AdminClient(client.quiet(config, self.last_error, admin=True))
        self.notes: list[str] = []
        self.broker_id: int | None = None  # known once the cluster has been described

    def left(self) -> float:
        return max(0.1, self.deadline - time.monotonic())

    def failed(self, doing: str, problem: Exception) -> None:
        self.notes.append(f"{self.name}: {doing} failed ({_reason(problem)}); not checked")

    def open_without_acls(self) -> bool:
        """The broker's allow.everyone.if.no.acl.found (false, Kafka's default, unless read)."""
        if self.broker_id is None:
            return False
        broker = ConfigResource(ConfigResource.Type.BROKER, str(self.broker_id))
        try:
            [future] = self.admin.describe_configs([broker], request_timeout=self.left()).values()
            entry = future.result(self.left()).get("allow.everyone.if.no.acl.found")
        except (KafkaException, TimeoutError, ValueError) as problem:
            self.failed("reading allow.everyone.if.no.acl.found", problem)
            return False
        return entry is not None and str(entry.value).lower() == "true"

    def cluster_operations(self) -> frozenset[str] | None:
        """The cluster operations granted (empty when DESCRIBE on the cluster is not); None
        when the cluster did not answer."""
        try:
            found = self.admin.describe_cluster(
                include_authorized_operations=True, request_timeout=self.left()
            ).result(self.left())
        except (KafkaException, TimeoutError) as problem:
            self.failed("describing the cluster", problem)
            return None
        nodes = getattr(found, "nodes", None) or []
        self.broker_id = nodes[0].id if nodes else None
        return _names(found.authorized_operations)

    def topics(
        self, names: Iterable[str]
    ) -> tuple[dict[str, frozenset[str]], frozenset[str], frozenset[str]]:
        """(operations of each existing topic, topics refused, topics that do not exist)."""
        wanted = sorted(set(names))
        described: dict[str, frozenset[str]] = {}
        hidden: set[str] = set()
        absent: set[str] = set()
        if not wanted:
            return described, frozenset(), frozenset()
        try:
            futures = self.admin.describe_topics(
                TopicCollection(wanted),
                include_authorized_operations=True,
                request_timeout=self.left(),
            )
        except KafkaException as problem:
            self.failed("describing topics", problem)
            return described, frozenset(), frozenset()
        for name, future in futures.items():
            outcome = self._outcome(future, f"describing topic {name}")
            if isinstance(outcome, int):
                if outcome in _REFUSED:
                    hidden.add(name)
                elif outcome == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    absent.add(name)
            elif outcome is not None:
                described[name] = _names(outcome.authorized_operations)
        return described, frozenset(hidden), frozenset(absent)

    def creatable(self, names: Iterable[str]) -> dict[str, bool]:
        """For each topic: may the principal create it? Asked with validate_only: nothing is
        created. Only an authorization error says no; any other answer is not about rights."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        topics = [NewTopic(name, num_partitions=1, replication_factor=-1) for name in wanted]
        try:
            futures = self.admin.create_topics(
                topics, validate_only=True, request_timeout=self.left()
            )
        except KafkaException as problem:
            self.failed("asking whether topics may be created", problem)
            return {}
        found: dict[str, bool] = {}
        for name, future in futures.items():
            outcome = self._outcome(future, f"asking whether topic {name} may be created")
            if isinstance(outcome, int):
                found[name] = outcome not in _REFUSED
            elif outcome is not None:
                found[name] = True
        return found

    def groups(self, names: Iterable[str]) -> dict[str, frozenset[str] | None]:
        """Each group's operations; None for a group the principal may not describe."""
        wanted = sorted(set(names))
        if not wanted:
            return {}
        try:
            futures = self.admin.describe_consumer_groups(
                wanted, include_authorized_operations=True, request_timeout=self.left()
            )
        except KafkaException as problem:
            self.failed("describing consumer groups", problem)
            return {}
        found: dict[str, frozenset[str] | None] = {}
        for name, future in futures.items():
            outcome = self._outcome(future, f"describing consumer group {name}")
            if isinstance(outcome, int):
                if outcome in _REFUSED:
                    found[name] = None
            elif outcome is not None and outcome.authorized_operations is not None:
                found[name] = _names(outcome.authorized_operations)
        return found

    def _outcome(self, future: "Future[Any]", doing: str) -> Any:
        """The future's result; the error code it failed with (an int); or None when it gave
        no answer (noted)."""
        try:
            result = future.result(self.left())
        except KafkaException as problem:
            error = problem.args[0] if problem.args else None
            if isinstance(error, KafkaError):
                return int(error.code())
            self.failed(doing, problem)
            return None
        except TimeoutError as problem:
            self.failed(doing, problem)
            return None
        return result if result is not None else _Done()


class _Done:
    """A future that succeeded with no value (create_topics' validate_only answer)."""

    authorized_operations = None


def ask(
    name: str,
    config: dict[str, str],
    *,
    cluster: observed.Cluster,
    needed: Iterable[Permission],
    principal: str | None,
    timeout: float = 15.0,
) -> Access:
    """What cluster `name` grants of the permissions `needed` there (those of other clusters
    are ignored). `cluster` is the cluster as observed: its authorizer and ACL bindings."""
    if cluster.acls is None:
        return Access(name, authorizer=False)
    mine = [p for p in needed if p.cluster == name]
    asker = _Asker(name, config, timeout)
    operations = asker.cluster_operations()
    topics = {p.name for p in mine if p.resource_type == TOPIC and p.pattern_type != PREFIXED}
    described, hidden, absent = asker.topics(topics)
    to_create = {
        p.name for p in mine if p.resource_type == TOPIC and p.operation == "CREATE"
    } - set(described)
    creatable = {} if "CREATE" in (operations or ()) else asker.creatable(to_create)
    groups: set[str] = set()
    for permission in mine:
        if permission.resource_type == GROUP:
            prefixed = permission.pattern_type == PREFIXED
            groups.update(permission.instances if prefixed else [permission.name])
    return Access(
        name,
        cluster_operations=operations,
        topics=described,
        hidden=hidden,
        absent=absent,
        creatable=creatable,
        groups=asker.groups(groups),
        acls=cluster.acls,
        principal=principal,
        open_without_acls=asker.open_without_acls(),
        notes=tuple(asker.notes),  # last: asking above may add to them
    )


def ask_for_reading(
    name: str, config: dict[str, str], *, principal: str | None, timeout: float = 15.0
) -> Access:
    """What the principal may do with what it can see on the cluster: its operations, every
    visible topic's, every listed group's. Asked when reading the cluster failed, to say which
    permission was lacking (`topology.core.permission_needs.observing`)."""
    asker = _Asker(name, config, timeout)
    operations = asker.cluster_operations()
    try:
        visible = asker.admin.list_topics(timeout=asker.left()).topics
    except KafkaException as problem:
        asker.failed("listing topics", problem)
        visible = {}
    names = [topic for topic in visible if not topic.startswith("__")]
    described, hidden, _absent = asker.topics(names)
    listed: list[str] = []
    try:
        result = asker.admin.list_consumer_groups(request_timeout=asker.left()).result(asker.left())
        listed = [group.group_id for group in result.valid or []]
    except (KafkaException, TimeoutError) as problem:
        asker.failed("listing consumer groups", problem)
    return Access(
        name,
        cluster_operations=operations,
        topics=described,
        hidden=hidden,
        groups=asker.groups([*listed, probe_name(OBSERVE_GROUPS)]),
        principal=principal,
        notes=tuple(asker.notes),
    )


def ask_all(
    configs: Mapping[str, dict[str, str]],
    clusters: Mapping[str, observed.Cluster],
    needed: Iterable[Permission],
    principals: Mapping[str, str | None],
    timeout: float = 15.0,
) -> dict[str, Access]:
    """`ask` of every cluster in both `configs` and `clusters`, all at once (up to 32)."""
    wanted = list(needed)
    names = sorted(set(configs) & set(clusters))
    if not names:
        return {}
    with ThreadPoolExecutor(min(len(names), 32), thread_name_prefix="topo-permissions") as pool:
        futures = {
            name: pool.submit(
                ask,
                name,
                configs[name],
                cluster=clusters[name],
                needed=wanted,
                principal=principals.get(name),
                timeout=timeout,
            )
            for name in names
        }
    return {name: future.result() for name, future in futures.items()}


def _names(operations: Iterable[Any] | None) -> frozenset[str]:
    """AclOperation values (enums; librdkafka may give names or numbers) as Kafka's names."""
    found = set()
    for operation in operations or ():
        found.add(operation.name if hasattr(operation, "name") else str(operation))
    return frozenset(found)


def _reason(problem: Exception) -> str:
    if isinstance(problem, TimeoutError):
        return "no answer in time"
    error = problem.args[0] if problem.args else problem
    return error.str() if isinstance(error, KafkaError) else str(error)
