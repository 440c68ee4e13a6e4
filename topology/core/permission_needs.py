"""The Kafka permissions topo's principal needs on each cluster, and which of them it lacks.

Pure: values in, values out. `required` reads a topology, the plan made for it and the clusters
as observed, and lists every ACL operation topo will use on each cluster, with why
(docs/security.md lists the same by feature). `missing` compares that list with what each
cluster said topo may do (`Access`, gathered by `topology.kafka.permissions` without changing
anything) and gives, for each permission lacking, the `kafka-acls.sh` line that grants it.

Two kinds of need:
- needed now: this plan's changes, reading the clusters, and what the replication job does
  continuously (read sources, write copies, heartbeats, progress, checkpoints, offsets);
- needed later (`now=False`): what only a future change needs, such as growing a copy's
  partitions or syncing its configs when its source changes, or copying ACLs the source does
  not have yet. Missing, these are warnings, not errors.

What the broker is asked (authoritative): the cluster's operations, each existing topic's, each
consumer group's, and whether each topic the plan creates may be created. What cannot be asked
(a topic that does not exist yet, transactional ids) is judged from the ACL bindings topo read
on the cluster, with Kafka's rules: DENY wins, ALL and the implied operations (READ, WRITE,
DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS), literal, wildcard and
prefixed resource names.
"""

import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from topology.core import naming, observed, secrets
from topology.core.model import Cluster as ClusterModel
from topology.core.model import Edge, Topology
from topology.core.naming import STATE_TOPIC
from topology.core.observed import Acl
from topology.core.plan.values import Action, Plan, Resource

# Kafka's one cluster resource; kafka-acls.sh names it with --cluster.
CLUSTER = "CLUSTER"
TOPIC = "TOPIC"
GROUP = "GROUP"
TRANSACTIONAL_ID = "TRANSACTIONAL_ID"
CLUSTER_NAME = "kafka-cluster"
LITERAL = "LITERAL"
PREFIXED = "PREFIXED"

# Every operation Kafka supports on the cluster resource (AclEntry.supportedOperations): a
# principal the broker grants all of them is a super user (or holds ALL on the cluster).
CLUSTER_OPERATIONS = frozenset(
    {
        "CREATE",
        "CLUSTER_ACTION",
        "DESCRIBE_CONFIGS",
        "ALTER_CONFIGS",
        "IDEMPOTENT_WRITE",
        "ALTER",
        "DESCRIBE",
    }
)
# Kafka's implied operations (StandardAuthorizerData): an ALLOW of any of these allows the key.
IMPLIED_BY = {
    "DESCRIBE": frozenset({"DESCRIBE", "READ", "WRITE", "DELETE", "ALTER"}),
    "DESCRIBE_CONFIGS": frozenset({"DESCRIBE_CONFIGS", "ALTER_CONFIGS"}),
}

UNKNOWN_PRINCIPAL = "User:<your principal>"


def probe_name(prefix: str) -> str:
    """The group id asked about for a prefix of random group ids: one it would produce."""
    return f"{prefix}permission-check"


@dataclass(frozen=True, order=True)
class Permission:
    """One operation on one resource of one cluster, and why topo needs it."""

    cluster: str
    resource_type: str  # CLUSTER, TOPIC, GROUP, TRANSACTIONAL_ID
    name: str  # CLUSTER_NAME for the cluster
    pattern_type: str  # LITERAL or PREFIXED
    operation: str  # Kafka's name: READ, WRITE, DESCRIBE_CONFIGS, ...
    why: str = field(default="", compare=False)
    now: bool = field(default=True, compare=False)  # False: only a future change needs it
    # For a prefixed permission: names it covers today, which are what is checked.
    instances: tuple[str, ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.cluster, self.resource_type, self.name, self.pattern_type, self.operation)

    def describe(self) -> str:
        """`WRITE on topic east.orders`, `ALTER on the cluster`, ..."""
        if self.resource_type == CLUSTER:
            return f"{self.operation} on the cluster"
        kind = {TOPIC: "topic", GROUP: "group", TRANSACTIONAL_ID: "transactional id"}.get(
            self.resource_type, self.resource_type.lower()
        )
        if self.pattern_type == PREFIXED:
            return f"{self.operation} on every {kind} starting with {self.name}"
        return f"{self.operation} on {kind} {self.name}"


class _Needs:
    """Permissions collected while walking a topology; one per key, reasons merged."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str, str, str, str], Permission] = {}

    def add(
        self,
        cluster: str,
        resource_type: str,
        name: str,
        operations: Iterable[str],
        why: str,
        *,
        now: bool = True,
        pattern_type: str = LITERAL,
        instances: Iterable[str] = (),
    ) -> None:
        for operation in operations:
            wanted = Permission(
                cluster, resource_type, name, pattern_type, operation, why, now, tuple(instances)
            )
            had = self._found.get(wanted.key)
            if had is None:
                self._found[wanted.key] = wanted
                continue
            whys = had.why.split("; ")
            self._found[wanted.key] = Permission(
                *had.key,
                why="; ".join(whys if why in whys else [*whys, why]),
                now=had.now or now,
                instances=tuple(dict.fromkeys((*had.instances, *wanted.instances))),
            )

    def topic(
        self, cluster: str, name: str, operations: str, why: str, *, now: bool = True
    ) -> None:
        """`operations` on the topic, space-separated Kafka names."""
        self.add(cluster, TOPIC, name, operations.split(), why, now=now)

    def cluster(self, cluster: str, operation: str, why: str, *, now: bool = True) -> None:
        self.add(cluster, CLUSTER, CLUSTER_NAME, [operation], why, now=now)

    def readers(self, cluster: str, prefix: str, why: str) -> None:
        """DESCRIBE on the random group ids `prefix...` one of topo's readers is given."""
        self.add(
            cluster,
            GROUP,
            prefix,
            ["DESCRIBE"],
            why,
            pattern_type=PREFIXED,
            instances=[probe_name(prefix)],
        )

    def all(self) -> tuple[Permission, ...]:
        return tuple(sorted(self._found.values()))


def required(
    topology: Topology, plan: Plan, clusters: Mapping[str, observed.Cluster]
) -> tuple[Permission, ...]:
    """Every permission topo's principal needs on each cluster for this topology: to read the
    clusters, to apply `plan`, and for the replication jobs it (re)starts to run."""
    needs = _Needs()
    runs = topology.engine.runner != "none"
    for name in sorted(topology.clusters):
        _observing(needs, name, clusters.get(name))
    for change in plan.changes:
        _applying(needs, change.action, change.resource, change.cluster, change.name)
    for edge in topology.edges():
        _edge(needs, topology, plan, clusters, edge, runs)
    home = naming.runs_cluster(topology)
    if home is not None:
        _run_state(needs, home)
    return needs.all()


def _observing(needs: _Needs, name: str, cluster: observed.Cluster | None) -> None:
    needs.cluster(name, "DESCRIBE", "reading the cluster: its ACLs and consumer groups")
    needs.cluster(
        name,
        "DESCRIBE_CONFIGS",
        "reading the cluster: the broker's default replication factor and authorizer",
    )
    if cluster is not None and STATE_TOPIC in cluster.topics:
        _read_state(needs, name)


def _run_state(needs: _Needs, cluster: str) -> None:
    """The running replication's state on the home cluster (the planner creates its topic):
    `topo apply` publishes the jobs, `topo run` and the driver read them and write the lease
    and status, `topo stop` writes a stop request and `topo status` reads the status."""
    _read_state(needs, cluster)  # the runs topic's ownership record
    _topic_read(needs, cluster, naming.RUNS_TOPIC)
    why = "the running replication's jobs, lease, status and stop requests"
    needs.topic(cluster, naming.RUNS_TOPIC, "WRITE READ", f"writing and reading {why}")
    needs.readers(cluster, naming.RUNS_GROUPS, f"reading {why} (the reader's group id)")


def _read_state(needs: _Needs, cluster: str) -> None:
    why = "reading topo's ownership records"
    needs.topic(cluster, STATE_TOPIC, "DESCRIBE DESCRIBE_CONFIGS READ", why)
    needs.readers(cluster, naming.OBSERVE_GROUPS, f"{why} (the reader's group id)")


def _applying(needs: _Needs, action: Action, resource: Resource, cluster: str, name: str) -> None:
    """What executing one change needs (topology/kafka/changes.py)."""
    record = "recording what topo creates in its ownership records"
    if resource is Resource.TOPIC and action is Action.CREATE:
        needs.topic(cluster, name, "CREATE", "creating the topic")
        if name != STATE_TOPIC:
            needs.topic(cluster, STATE_TOPIC, "WRITE", record)
    elif resource is Resource.TOPIC and action is Action.DELETE:
        needs.topic(cluster, name, "DELETE", "deleting the topic (--allow-delete)")
        needs.topic(cluster, STATE_TOPIC, "WRITE", record)
    elif resource is Resource.OWNERSHIP:
        needs.topic(cluster, STATE_TOPIC, "WRITE", record)
    elif resource is Resource.PARTITIONS:
        needs.topic(cluster, name, "ALTER", "adding partitions (sync.partitions)")
    elif resource is Resource.TOPIC_CONFIG:
        why = (
            "syncing its configs, or stamping this heartbeats copy on arrival"
            if name.rsplit(".", 1)[-1] == naming.HEARTBEATS
            else "syncing its configs (sync.configs)"
        )
        needs.topic(cluster, name, "ALTER_CONFIGS", why)
    elif resource is Resource.ACL:
        doing = "creating" if action is Action.CREATE else "deleting"
        needs.cluster(cluster, "ALTER", f"{doing} ACLs (sync.acls)")
        needs.topic(cluster, STATE_TOPIC, "WRITE", record)


def _edge(
    needs: _Needs,
    topology: Topology,
    plan: Plan,
    clusters: Mapping[str, observed.Cluster],
    edge: Edge,
    runs: bool,
) -> None:
    settings = edge.settings
    source, target = edge.source, edge.target
    heartbeats = settings.emit.heartbeats and runs
    translating = runs and (settings.emit.checkpoints or settings.sync.group_offsets)
    exactly_once = runs and settings.delivery == "exactly-once"
    copies = _copies(clusters, edge, runs)
    _named_sources(needs, clusters, edge, copies)
    for cluster, topic in sorted(_internal(needs, edge, runs)):
        _topic_read(needs, cluster, topic)
    for topic, remote in sorted(copies.items()):
        _topic_read(needs, source, topic)
        _topic_read(needs, target, remote)
        if runs:
            needs.topic(source, topic, "READ", f"replicating {edge.name}: reading the source")
            needs.topic(target, remote, "WRITE", f"replicating {edge.name}: writing the copy")
        if translating and settings.provenance:
            why = "translating consumer offsets: reading the copies' source offsets"
            needs.topic(target, remote, "READ", why)
        if exactly_once:
            why = "exactly-once: committing the job's progress in each transaction"
            needs.topic(target, remote, "READ", why)
        elif runs:  # the copy loop keeps its positions in the progress group (spark/loop.py)
            why = "the copy loop: committing how far it copied (its progress group)"
            needs.topic(target, remote, "READ", why)
        if _owner(clusters, target, remote) not in (None, topology.name):
            continue  # another topology's: the planner never changes it
        if settings.sync.partitions:
            why = "adding partitions when its source grows (sync.partitions)"
            needs.topic(target, remote, "ALTER", why, now=False)
        if settings.sync.configs and _managed(plan, clusters, topology, target, remote):
            why = "syncing its configs when its source's configs change (sync.configs)"
            needs.topic(target, remote, "ALTER_CONFIGS", why, now=False)
    found = clusters.get(target)
    if settings.sync.acls and found is not None and found.acls is not None:
        why = "creating ACLs when the source's topics gain some (sync.acls)"
        needs.cluster(target, "ALTER", why, now=False)
    if runs:
        _running(needs, topology, clusters, edge, copies, heartbeats, translating, exactly_once)


def _running(
    needs: _Needs,
    topology: Topology,
    clusters: Mapping[str, observed.Cluster],
    edge: Edge,
    copies: Mapping[str, str],
    heartbeats: bool,
    translating: bool,
    exactly_once: bool,
) -> None:
    """What the edge's replication job does besides copying (topology/spark/driver.py)."""
    settings = edge.settings
    source, target = edge.source, edge.target
    if heartbeats:
        for cluster in (source, target):
            needs.topic(cluster, naming.HEARTBEATS, "WRITE", "writing heartbeats")
    syncs = naming.offset_syncs_topic(source, settings.separator)
    needs.topic(target, syncs, "WRITE", f"recording {edge.name}'s progress")
    if settings.emit.checkpoints:
        log = naming.topo_checkpoints_topic(source, settings.separator)
        needs.topic(target, log, "WRITE READ", "writing and reading back checkpoints")
        # READ too: topo's checkpoints from before topo wrote MM2's format are read back there
        log = naming.checkpoints_topic(source, settings.separator, settings.internal_separator)
        needs.topic(target, log, "WRITE READ", "writing checkpoints in MM2's format")
    if translating:
        why = "translating consumer offsets"
        needs.topic(target, syncs, "READ", f"{why}: reading {edge.name}'s progress")
        logs = "reading topo's progress and checkpoint logs (the reader's group id)"
        needs.readers(target, naming.READ_GROUPS, logs)
        if settings.provenance:
            needs.readers(target, naming.OFFSETS_GROUPS, f"{why} (the reader's group id)")
    if settings.sync.group_offsets:
        why = f"committing the group's translated offsets (sync.group_offsets, {edge.name})"
        for group in _synced_groups(clusters.get(source), edge, copies):
            needs.add(target, GROUP, group, ["READ"], why)
    slug = naming.flow_slug(source, target)
    if exactly_once:
        prefix = naming.transactional_prefix(topology.name, slug) + "."
        # a sized flow's count is known as it starts: its first ids stand for the prefix's
        slots = settings.tasks or naming.LOOP_TASKS
        ids = [f"{prefix}{naming.LOOP_TRANSACTIONS}.{n}" for n in range(slots)]
        why = f"exactly-once: one transactional id per copy slot of {edge.name}"
        needs.add(
            target,
            TRANSACTIONAL_ID,
            prefix,
            ["WRITE", "DESCRIBE"],
            why,
            pattern_type=PREFIXED,
            instances=ids,
        )
        why = "exactly-once: the job's progress, committed in each transaction"
        needs.add(target, GROUP, naming.progress_group(topology.name, slug), ["READ"], why)
    else:
        why = "the copy loop: how far it copied, committed as its progress group"
        needs.add(target, GROUP, naming.progress_group(topology.name, slug), ["READ"], why)


def _internal(needs: _Needs, edge: Edge, runs: bool) -> set[tuple[str, str]]:
    """topo's own topics the edge wants (`naming.internal_topics`, as the planner)."""
    wanted = {(cluster, topic) for cluster, topic, _ in naming.internal_topics(edge, runs)}
    for cluster, topic in wanted:
        if topic == STATE_TOPIC:
            _read_state(needs, cluster)
    return wanted


def _topic_read(needs: _Needs, cluster: str, topic: str) -> None:
    why = "reading the cluster: the topic and its configs"
    needs.topic(cluster, topic, "DESCRIBE DESCRIBE_CONFIGS", why)


def _copies(clusters: Mapping[str, observed.Cluster], edge: Edge, runs: bool) -> dict[str, str]:
    """Source topic -> its copy's name, for every topic the edge copies now; with the source's
    heartbeats topic when this plan creates it (the planner plans its copy too)."""
    source = clusters.get(edge.source)
    if source is None:
        return {}
    found = {}
    names = set(source.topics)
    if edge.settings.emit.heartbeats and runs:
        names.add(naming.HEARTBEATS)
    for name in sorted(names):
        remote = naming.remote_name(edge, name, source)
        if remote is not None:
            found[name] = remote
    return found


def _named_sources(
    needs: _Needs, clusters: Mapping[str, observed.Cluster], edge: Edge, copies: Mapping[str, str]
) -> None:
    """A topic the flow names literally that topo does not see on the source: without DESCRIBE
    on it, topo cannot tell whether it exists, and would leave it out without a word."""
    source = clusters.get(edge.source)
    literals = edge.settings.topics.literals
    if source is None or not literals:
        return
    for name in sorted(literals):
        if name in copies or name in source.topics or not edge.settings.topics.admits(name):
            continue
        why = f"seeing the topic {edge.name} names (without it topo cannot tell whether it exists)"
        # Nothing this plan does needs it: a warning, so a topic still to come blocks nothing.
        needs.topic(edge.source, name, "DESCRIBE", why, now=False)


def _owner(clusters: Mapping[str, observed.Cluster], cluster: str, topic: str) -> str | None:
    found = clusters.get(cluster)
    owned = found.owns_topic(topic) if found is not None else None
    return owned.owner if owned is not None else None


def _managed(
    plan: Plan,
    clusters: Mapping[str, observed.Cluster],
    topology: Topology,
    cluster: str,
    topic: str,
) -> bool:
    """Is the copy topo's to sync: owned by this topology, or created or adopted by this plan?"""
    if _owner(clusters, cluster, topic) == topology.name:
        return True
    return any(
        change.cluster == cluster
        and change.name == topic
        and change.action is Action.CREATE
        and change.resource in (Resource.TOPIC, Resource.OWNERSHIP)
        for change in plan.changes
    )


def _synced_groups(
    source: observed.Cluster | None, edge: Edge, copies: Mapping[str, str]
) -> list[str]:
    """The source's groups whose offsets the edge commits on its target: admitted by the flow's
    group filter, not topo's own, with offsets on topics the edge copies."""
    if source is None:
        return []
    return [
        group_id
        for group_id, group in sorted(source.groups.items())
        if not group_id.startswith(naming.PROGRESS_GROUPS)
        and any(topic in copies for topic, _partition in group.offsets)
        and edge.settings.groups.admits(group_id)
    ]


# -- what a cluster said, and what is missing ----------------------------------------------------


@dataclass(frozen=True)
class Access:
    """What one cluster said topo's principal may do, asked without changing anything."""

    cluster: str
    authorizer: bool = True
    # The cluster operations granted (empty: DESCRIBE on the cluster is lacking, without which
    # the broker tells none); None when the broker could not be asked.
    cluster_operations: frozenset[str] | None = frozenset()
    topics: Mapping[str, frozenset[str]] = field(default_factory=dict)  # existing: allowed ops
    hidden: frozenset[str] = frozenset()  # asked about and refused: DESCRIBE is lacking
    absent: frozenset[str] = frozenset()  # asked about: no such topic, and DESCRIBE is granted
    creatable: Mapping[str, bool] = field(default_factory=dict)  # validate-only create answers
    groups: Mapping[str, frozenset[str] | None] = field(default_factory=dict)  # None: refused
    acls: tuple[Acl, ...] | None = None  # every binding the cluster has, for what cannot be asked
    principal: str | None = None  # "User:alice", to match bindings; None when unknown
    notes: tuple[str, ...] = ()  # what could not be asked, and why
    # The broker's allow.everyone.if.no.acl.found: a resource no binding concerns is open.
    open_without_acls: bool = False

    @property
    def everything(self) -> bool:
        """The broker grants every cluster operation and no ACL on the cluster explains it:
        a super user (`super.users` is not an ACL), so every check passes. A principal holding
        ALL on the cluster by an ACL is not one: its topics and ids are judged by the ACLs."""
        if self.cluster_operations is None or not self.cluster_operations >= CLUSTER_OPERATIONS:
            return False
        if self.acls is None or self.principal is None:
            return True
        return not any(
            acl.resource_type == CLUSTER
            and acl.permission == "ALLOW"
            and acl.principal in (self.principal, "User:*")
            for acl in self.acls
        )


@dataclass(frozen=True)
class Missing:
    permission: Permission
    grant: str  # the kafka-acls.sh line that grants it
    judged: str  # how it was found: "the broker" or "the ACLs on <cluster>"


@dataclass(frozen=True)
class Findings:
    missing: tuple[Missing, ...] = ()
    notes: tuple[str, ...] = ()
    checked: tuple[str, ...] = ()  # clusters whose permissions were checked
    unchecked: tuple[str, ...] = ()  # clusters without an authorizer: nothing to check

    @property
    def errors(self) -> tuple[Missing, ...]:
        return tuple(m for m in self.missing if m.permission.now)

    @property
    def warnings(self) -> tuple[Missing, ...]:
        return tuple(m for m in self.missing if not m.permission.now)


def allows(operations: Iterable[str], operation: str) -> bool:
    """Do `operations` (what the broker granted) include `operation`, directly or implied?"""
    granted = set(operations)
    return "ALL" in granted or bool(granted & IMPLIED_BY.get(operation, frozenset({operation})))


def acls_allow(
    acls: Iterable[Acl],
    principal: str,
    resource_type: str,
    name: str,
    operation: str,
    *,
    open_without_acls: bool = False,
) -> bool | None:
    """What Kafka's ACL authorizer would answer for `principal`, from any host: True, False, or
    None when the bindings cannot tell (a binding for a group or other principal type, or one
    limited to some hosts, concerns the resource). `open_without_acls` is the broker's
    `allow.everyone.if.no.acl.found` (false by default): then a resource no binding concerns
    is allowed. Super users are not visible in ACLs (see `Access.everything`)."""
    concerning = [acl for acl in acls if acl.resource_type == resource_type and _covers(acl, name)]
    if open_without_acls and not concerning:
        return True
    relevant = [
        acl
        for acl in acls
        if acl.resource_type == resource_type
        and _covers(acl, name)
        and acl.operation in (operation, "ALL", *IMPLIED_BY.get(operation, ()))
    ]
    mine = [acl for acl in relevant if acl.principal in (principal, "User:*")]
    denies = [
        acl for acl in mine if acl.permission == "DENY" and acl.operation in (operation, "ALL")
    ]
    if any(acl.host == "*" for acl in denies):
        return False
    if denies:
        return None  # denied from some hosts: which one topo connects from, only it knows
    if any(acl.permission == "ALLOW" and acl.host == "*" for acl in mine):
        return True
    unsure = [acl for acl in relevant if not acl.principal.startswith("User:")]
    unsure += [acl for acl in mine if acl.host != "*"]
    return None if unsure else False


def _covers(acl: Acl, name: str) -> bool:
    if acl.pattern_type == "LITERAL":
        return acl.resource_name in (name, "*")
    if acl.pattern_type == "PREFIXED":
        return name.startswith(acl.resource_name)
    return False


def missing(
    needed: Iterable[Permission],
    accesses: Mapping[str, Access],
    *,
    bootstraps: Mapping[str, str],
    principals: Mapping[str, str],
) -> Findings:
    """The permissions in `needed` that the clusters in `accesses` do not grant, each with its
    kafka-acls.sh line (`bootstraps` and `principals` by cluster, as shell words).
    Clusters not in `accesses` were not asked and are skipped."""
    found: list[Missing] = []
    notes = [note for _name, access in sorted(accesses.items()) for note in access.notes]
    unsure: dict[tuple[str, str], list[str]] = {}
    for permission in needed:
        access = accesses.get(permission.cluster)
        if access is None or not access.authorizer:
            continue
        answer, judged = _answer(permission, access)
        if answer is None:
            unsure.setdefault((permission.cluster, judged), []).append(permission.describe())
        elif not answer:
            line = grant_line(
                permission,
                bootstraps.get(permission.cluster, "<bootstrap>"),
                principals.get(permission.cluster, shlex.quote(UNKNOWN_PRINCIPAL)),
            )
            found.append(Missing(permission, line, judged))
    for (cluster, why), what in sorted(unsure.items()):
        shown = ", ".join(what[:5]) + (f" and {len(what) - 5} more" if len(what) > 5 else "")
        notes.append(f"{cluster}: not checked ({why}): {shown}")
    checked = tuple(sorted(n for n, a in accesses.items() if a.authorizer))
    unchecked = tuple(sorted(n for n, a in accesses.items() if not a.authorizer))
    return Findings(tuple(found), tuple(notes), checked, unchecked)


def _answer(permission: Permission, access: Access) -> tuple[bool | None, str]:
    """(granted?, how it is known) for one permission on the cluster that gave `access`; for
    None (cannot tell), why not."""
    broker = "the broker"
    kind, name, operation = permission.resource_type, permission.name, permission.operation
    cluster_operations = access.cluster_operations
    if kind == CLUSTER:
        if cluster_operations is None:
            return None, "the cluster did not say its operations"
        if not cluster_operations and operation != "DESCRIBE":
            return None, "without DESCRIBE on the cluster, the broker tells no other operation"
        return allows(cluster_operations, operation), broker
    if kind == TOPIC and name in access.topics:
        return allows(access.topics[name], operation), broker
    if kind == TOPIC and name in access.hidden and operation in IMPLIED_BY["DESCRIBE"]:
        return False, broker  # each of these implies DESCRIBE, which the broker refused
    if kind == TOPIC and name in access.absent and operation == "DESCRIBE":
        return True, broker
    if kind == TOPIC and operation == "CREATE":
        if cluster_operations is not None and allows(cluster_operations, "CREATE"):
            return True, broker
        if name in access.creatable:
            return access.creatable[name], broker
    names = permission.instances if permission.pattern_type == PREFIXED else (name,)
    if kind == GROUP and all(n in access.groups for n in names):
        said = [access.groups[n] for n in names]
        return all(ops is not None and allows(ops, operation) for ops in said), broker
    if access.everything:
        return True, broker
    if access.principal is None:
        return None, "topo does not know its principal: mutual TLS, Kerberos or OAuth"
    if access.acls is None:
        return None, "the broker cannot be asked, and topo has not read the ACLs"
    judged = f"the ACLs on {access.cluster}"
    answers = [
        acls_allow(
            access.acls,
            access.principal,
            kind,
            n,
            operation,
            open_without_acls=access.open_without_acls,
        )
        for n in names
    ]
    if False in answers:
        return False, judged
    if None in answers:
        return None, "ACLs for another principal type or for some hosts concern it"
    return True, judged


# -- kafka-acls.sh lines and the principal they name ---------------------------------------------

_OPERATION_WORDS = {
    "DESCRIBE_CONFIGS": "DescribeConfigs",
    "ALTER_CONFIGS": "AlterConfigs",
    "IDEMPOTENT_WRITE": "IdempotentWrite",
    "CLUSTER_ACTION": "ClusterAction",
}
_RESOURCE_OPTIONS = {TOPIC: "--topic", GROUP: "--group", TRANSACTIONAL_ID: "--transactional-id"}


def grant_line(permission: Permission, bootstrap: str, principal: str) -> str:
    """The kafka-acls.sh command that grants `permission` to `principal` (run it as an
    administrator, with --command-config for the administrator's client settings).
    `bootstrap` and `principal` are shell words already (`bootstrap_shown`, `principal_shown`)."""
    operation = _OPERATION_WORDS.get(permission.operation, permission.operation.capitalize())
    parts = [
        "kafka-acls.sh",
        "--bootstrap-server",
        bootstrap,
        "--add",
        "--allow-principal",
        principal,
        "--operation",
        operation,
    ]
    if permission.resource_type == CLUSTER:
        parts.append("--cluster")
    else:
        option = _RESOURCE_OPTIONS.get(permission.resource_type, "--resource")
        parts += [option, shlex.quote(permission.name)]
    if permission.pattern_type == PREFIXED:
        parts += ["--resource-pattern-type", "prefixed"]
    return " ".join(parts)


def _word(before: str, value: str) -> str:
    """`before + value` as one shell word; an ${env:NAME} reference becomes "$NAME", which the
    shell fills in, so the line never shows what a secret reference holds. None for another
    reference (a file's content is never shown)."""
    found = secrets.reference(value)
    if found is None:
        return shlex.quote(before + value)
    if found.kind == "env" and found.name.isidentifier():
        return f'"{before}${found.name}"'
    return ""


_NAMED_LOGINS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


def principal_shown(cluster: ClusterModel) -> str:
    """The principal topo connects to `cluster` as, as a kafka-acls.sh word: `User:alice` for a
    SASL PLAIN or SCRAM username ("User:$NAME" for `${env:NAME}`), `User:ANONYMOUS` without
    authentication, else 'User:<your principal>' (mutual TLS, Kerberos, OAuth: the broker's
    principal mapping decides)."""
    unknown = shlex.quote(UNKNOWN_PRINCIPAL)
    security = cluster.security
    sasl = security.sasl
    if sasl is not None:
        if sasl.mechanism in _NAMED_LOGINS and sasl.username:
            return _word("User:", sasl.username) or unknown
        return unknown
    if security.tls is not None and security.tls.cert is not None:
        return unknown
    return "User:ANONYMOUS"


def principal_matched(cluster: ClusterModel, config: Mapping[str, str]) -> str | None:
    """The principal to match ACL bindings against (never shown): from the resolved client
    settings `config`; None when only the broker knows it."""
    security = cluster.security
    if security.sasl is not None:
        username = config.get("sasl.username")
        if security.sasl.mechanism in _NAMED_LOGINS and username:
            return f"User:{username}"
        return None
    if security.tls is not None and security.tls.cert is not None:
        return None
    return "User:ANONYMOUS"


def bootstrap_shown(bootstrap: str) -> str:
    """A cluster's bootstrap as a kafka-acls.sh word ("$NAME" for `${env:NAME}`)."""
    return _word("", bootstrap) or "<bootstrap>"


# -- what reading a cluster needs, for when reading it failed ------------------------------------


def observing(access: Access) -> tuple[Permission, ...]:
    """What `topology.kafka.inventory` needs on a cluster, given what it can see there (the
    topics and groups in `access`): asked when reading the cluster failed, to say why."""
    needs = _Needs()
    cluster = access.cluster
    _observing(needs, cluster, None)
    why = "reading the cluster: topo reads the configs of every topic it can see"
    for topic in sorted(access.topics):
        needs.topic(cluster, topic, "DESCRIBE_CONFIGS", why)
    # Groups it may not DESCRIBE, topo skips (kafka/inventory.py): they are never the cause.
    if STATE_TOPIC in access.topics:
        _read_state(needs, cluster)
    return needs.all()
