"""The planner: topology + observed clusters -> Plan. Pure: no I/O, same inputs, same plan.

For every replication edge it finds the live source topics its filters admit and decides, for
each remote topic, what the target lacks: the topic itself, partitions, configs, ACLs, topo's
ownership record. Topics topo did not make and no flow writes are never looked at. Everything
the planner reads is recorded (`Reads`) and hashed into the plan's `observed_sha256` (which the
plan's fingerprint covers too), so a saved plan is refused once anything it was computed from
has changed, and only then.
"""

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from topology.core import copy_slots, jobs, kafka_rules, naming, observed, patterns
from topology.core.errors import TopoError
from topology.core.mm2.positions import Handover
from topology.core.model import Edge, Topology
from topology.core.observed import Acl
from topology.core.plan import handover
from topology.core.plan.values import Action, Change, Note, NoteLevel, Plan, Resource

_PURPOSES = {
    "state": "topo's record of the topics and ACLs it created on this cluster",
    "runs": "the running replication's jobs, lease, status and stop requests (topo run, status, "
    "stop)",
    "heartbeats": "heartbeats written here by {edges}, for liveness and latency",
    "checkpoints": "consumer-group offsets translated by {edges}, in MM2's format",
    "topo-checkpoints": "consumer-group offsets translated by {edges}, with their exactness, "
    "for failover",
    "offset-syncs": "source-to-target offset pairs written by {edges}'s job",
}
COMPACTED = {"cleanup.policy": "compact"}
# Heartbeat topics, and every copy of one, are stamped by the broker on arrival: a copy's
# timestamp minus the time the heartbeat was emitted is the flow's end-to-end latency.
ARRIVAL_TIME = {"message.timestamp.type": "LogAppendTime"}
# The run-state topic: a handful of small records, rewritten every few seconds (the lease, the
# status); hourly segments and a low dirty ratio keep what a reader replays short. The last
# hour is never compacted, so a recent lease race is replayed whole; older, compaction may keep
# a lost claim as a key's only record, which the replay's rule for renewals makes harmless
# (topology/core/runstate.py).
RUNS_CONFIGS = {
    **COMPACTED,
    **ARRIVAL_TIME,
    "segment.ms": "3600000",
    "min.cleanable.dirty.ratio": "0.1",
    "min.compaction.lag.ms": "3600000",
}


class PlanError(TopoError):
    """The topology cannot be applied to these clusters as they are."""


def copied_acl(acl: Acl, remote: str) -> Acl | None:
    """MM2's ACL sync rule for a literal topic ACL on the source: its copy on `remote`, or
    None when it is not copied (ALLOW WRITE: only the replication writes to a copy). ALLOW ALL
    becomes ALLOW READ; everything else, DENY included, is copied as it is."""
    if (acl.permission, acl.operation) == ("ALLOW", "WRITE"):
        return None
    operation = "READ" if (acl.permission, acl.operation) == ("ALLOW", "ALL") else acl.operation
    return Acl("TOPIC", remote, "LITERAL", acl.principal, acl.host, operation, acl.permission)


@dataclass(frozen=True)
class _Contribution:
    edge: Edge
    topic: observed.Topic  # the source topic


@dataclass
class _Desired:
    """A topic the topology wants on one cluster, and who wants it."""

    purpose: str
    edges: set[str] = field(default_factory=set)
    contributions: list[_Contribution] = field(default_factory=list)
    replication_factor: int | None = None


class Reads:
    """Everything the planner looked at, as canonical JSON: the plan's `observed_sha256`."""

    def __init__(self) -> None:
        self._seen: dict[str, Any] = {}

    def note(self, key: str, value: Any) -> None:
        self._seen[key] = value

    def digest(self) -> str:
        text = json.dumps(self._seen, sort_keys=True, separators=(",", ":"), default=list)
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def plan(
    topology: Topology,
    clusters: Mapping[str, observed.Cluster],
    *,
    topology_sha256: str,
    allow_delete: bool = False,
    topo_version: str = "",
    running: Mapping[str, Mapping[str, Any]] | None = None,
    handovers: Mapping[str, Handover] | None = None,
    cores: int | None = None,
) -> Plan:
    """The changes that make `clusters` match `topology`; raises PlanError when none can.

    `running` holds each replication job running now as `jobs.job_views` shows it, by flow
    ("east->west"): a flow whose job is missing is started, one whose view changed (its spec,
    its settings, the engine, its clusters' connections) restarted, one the topology no
    longer has stopped. `handovers` holds what MM2 left for each flow with `start: mm2` that
    is not running and has not copied before (topology/core/plan/handover.py): its start says where
    it resumes. Without one (the running driver's plans, a flow topo copied before) such a start
    is planned without positions. `cores`: what the flows' copy slots are sized for
    (`copy_slots.offered`), None when only the running driver learns it.
    """
    planner = _Planner(topology, clusters, allow_delete)
    changes, notes = planner.run()
    if topology.engine.runner != "none":
        flows = _FlowChanges(topology, clusters, planner.reads, handovers, cores)
        changes.extend(flows.changes(running or {}))
    return Plan(
        topology_file=topology.file,
        topology_sha256=topology_sha256,
        owner=topology.name,
        observed_sha256=planner.reads.digest(),
        clusters={name: cluster.bootstrap for name, cluster in topology.clusters.items()},
        changes=tuple(sorted(changes, key=lambda c: (c.phase, c.cluster, _purpose_rank(c)))),
        notes=tuple(sorted(notes, key=lambda n: (n.level != NoteLevel.WARNING, n.cluster))),
        allow_delete=allow_delete,
        topo_version=topo_version,
    )


def _purpose_rank(change: Change) -> tuple[int, str]:
    # Within a phase and cluster: topo's state topic first (ownership records go there).
    state = change.resource is Resource.TOPIC and change.name == naming.STATE_TOPIC
    return (0 if state else 1, change.name)


class _Planner:
    def __init__(
        self, topology: Topology, clusters: Mapping[str, observed.Cluster], allow_delete: bool
    ) -> None:
        self.topology = topology
        self.clusters = clusters
        self.allow_delete = allow_delete
        self.reads = Reads()
        self.changes: list[Change] = []
        self.notes: list[Note] = []
        self.desired: dict[tuple[str, str], _Desired] = {}
        self.desired_acls: dict[tuple[str, Acl], set[str]] = {}

    def run(self) -> tuple[list[Change], list[Note]]:
        for name, cluster in sorted(self.clusters.items()):
            self.reads.note(
                f"cluster/{name}",
                {
                    "brokers": cluster.brokers,
                    "default_replication_factor": cluster.default_replication_factor,
                    "authorizer": cluster.acls is not None,
                    "owned": sorted(
                        json.dumps(o.to_dict(), sort_keys=True) for o in cluster.owned.values()
                    ),
                },
            )
        for edge in self.topology.edges():
            self._want_internal_topics(edge)
            self._want_replicas(edge)
        self._want_runs_topic()
        for (cluster_name, name), desired in sorted(self.desired.items()):
            self._reconcile_topic(cluster_name, name, desired)
        for (cluster_name, acl), edges in sorted(self.desired_acls.items()):
            self._reconcile_acl(cluster_name, acl, edges)
        for _name, cluster in sorted(self.clusters.items()):
            self._orphans(cluster)
        return self.changes, self.notes

    # -- what the topology wants ----------------------------------------------------------------

    def _cluster(self, name: str) -> observed.Cluster:
        return self.clusters[name]

    def _replication_factor(self, edge: Edge, cluster: str) -> int:
        target = self._cluster(cluster)
        wanted = edge.settings.replication_factor
        if wanted is None:
            wanted = target.default_replication_factor or 1
        if wanted > target.brokers:
            raise PlanError(
                f"flow {edge.name}: replication factor {wanted} is more than the {target.brokers} "
                f"broker(s) of cluster {cluster}; lower replication_factor for this flow"
            )
        return wanted

    def _want(self, cluster: str, name: str, purpose: str, edge: Edge) -> _Desired:
        desired = self.desired.setdefault((cluster, name), _Desired(purpose))
        desired.edges.add(edge.name)
        if desired.replication_factor is None:
            desired.replication_factor = self._replication_factor(edge, cluster)
        return desired

    def _want_internal_topics(self, edge: Edge) -> None:
        runs = self.topology.engine.runner != "none"
        for cluster, name, purpose in naming.internal_topics(edge, runs):
            self._want(cluster, name, purpose, edge)

    def _want_runs_topic(self) -> None:
        """The running replication's state, on the home cluster, for every edge's job."""
        home = naming.runs_cluster(self.topology)
        if home is None:
            return
        edges = self.topology.edges()
        self._want(home, naming.STATE_TOPIC, "state", edges[0])  # records the one below
        for edge in edges:
            self._want(home, naming.RUNS_TOPIC, "runs", edge)

    def _heartbeats(self, edge: Edge) -> bool:
        """Does the edge's job write heartbeats? (None runs under `engine: {runner: none}`.)"""
        return edge.settings.emit.heartbeats and self.topology.engine.runner != "none"

    def _want_replicas(self, edge: Edge) -> None:
        source = self._cluster(edge.source)
        topics = dict(source.topics)
        if self._heartbeats(edge) and naming.HEARTBEATS not in topics:
            # This plan creates the source's heartbeats topic: plan its copy too, so one
            # apply converges.
            rf = self._replication_factor(edge, edge.source)
            topics[naming.HEARTBEATS] = observed.Topic(
                naming.HEARTBEATS, 1, rf, {**COMPACTED, **ARRIVAL_TIME}
            )
        for name, topic in sorted(topics.items()):
            remote = naming.remote_name(edge, name, source)
            if remote is None:
                continue
            self.reads.note(f"topic/{edge.source}/{name}", topic.to_dict())
            desired = self._want(edge.target, remote, "replica", edge)
            desired.contributions.append(_Contribution(edge, topic))
            if edge.settings.sync.acls:
                self._want_acls(edge, source, name, remote)

    def _want_acls(self, edge: Edge, source: observed.Cluster, name: str, remote: str) -> None:
        """MM2's ACL sync: literal topic ACLs; ALLOW WRITE skipped; ALLOW ALL becomes READ."""
        if source.acls is None:
            return
        for acl in source.acls:
            if (acl.resource_type, acl.pattern_type, acl.resource_name) != (
                "TOPIC",
                "LITERAL",
                name,
            ):
                continue
            copy = copied_acl(acl, remote)
            if copy is None:
                continue
            self.reads.note(f"acl/{edge.source}/{observed.acl_key(acl)}", True)
            self.desired_acls.setdefault((edge.target, copy), set()).add(edge.name)

    # -- topics ---------------------------------------------------------------------------------

    def _reconcile_topic(self, cluster_name: str, name: str, desired: _Desired) -> None:
        cluster = self._cluster(cluster_name)
        existing = cluster.topics.get(name)
        owned = cluster.owns_topic(name)
        self.reads.note(f"topic/{cluster_name}/{name}", existing.to_dict() if existing else None)
        if owned is not None and owned.owner != self.topology.name:
            if desired.purpose == "replica":
                self._note(
                    NoteLevel.WARNING,
                    cluster_name,
                    name,
                    f"belongs to the topology '{owned.owner}', which created it; this "
                    f"topology ({self.topology.name}) leaves it alone",
                )
            return
        edges = tuple(sorted(desired.edges))
        partitions, configs, disagreements = self._from_sources(desired)
        for key, values in disagreements.items():
            self._note(
                NoteLevel.WARNING,
                cluster_name,
                name,
                f"its sources disagree on {key} ({values}); it is not synced",
            )
        if existing is None:
            self._create_topic(cluster_name, name, desired, edges, partitions, configs)
            return
        if desired.purpose != "replica":
            return  # topo's internal topics: created when missing, otherwise left as they are
        managed = owned is not None
        # A prefixed name (east.orders) can only be a copy, say one MM2 made: topo adopts it.
        # Under identity naming a same-named topic may be the target's own: it is merged into,
        # never adopted, so its configs are never overwritten and it is never deleted.
        adoptable = all(c.topic.name != name for c in desired.contributions)
        if owned is None and adoptable:
            managed = True
            self._change(
                Action.CREATE,
                Resource.OWNERSHIP,
                cluster_name,
                name,
                f"{name} already exists on {cluster_name}; topo adopts it as the copy {_by(edges)}",
                after={"edges": list(edges)},
                edges=edges,
            )
        elif owned is not None and owned.edges != edges:
            self._change(
                Action.UPDATE,
                Resource.OWNERSHIP,
                cluster_name,
                name,
                "the edges that replicate into it changed",
                before={"edges": list(owned.edges)},
                after={"edges": list(edges)},
                edges=edges,
            )
        elif owned is None:
            self._note(
                NoteLevel.INFO,
                cluster_name,
                name,
                f"merges into the existing topic {name}, which topo did not create; its "
                "configs are left as they are",
            )
        self._partitions(cluster_name, name, existing, partitions, desired, edges)
        if managed:
            self._replication_factor_note(cluster_name, name, existing, desired)
            self._configs(cluster_name, name, existing, configs, desired, disagreements, edges)

    def _from_sources(self, desired: _Desired) -> tuple[int, dict[str, str], dict[str, str]]:
        """Partitions (the most any source has), the configs every source agrees on, and the
        keys they disagree on (described for a note)."""
        if not desired.contributions:  # topo's own topics: `_create_topic` sets their shape
            return 1, {}, {}
        partitions = max(c.topic.partitions for c in desired.contributions)
        per_source = [
            (f"{c.edge.source}/{c.topic.name}", _copied_configs(c))
            for c in desired.contributions
            if c.edge.settings.sync.configs
        ]
        keys = sorted({key for _where, configs in per_source for key in configs})
        agreed: dict[str, str] = {}
        disagreements: dict[str, str] = {}
        for key in keys:
            values = {where: configs.get(key) for where, configs in per_source}
            if len(set(values.values())) == 1:
                value = next(iter(values.values()))
                if value is not None:
                    agreed[key] = value
            else:
                disagreements[key] = ", ".join(
                    f"{where}: {value if value is not None else 'default'}"
                    for where, value in values.items()
                )
        return partitions, agreed, disagreements

    def _create_topic(
        self,
        cluster: str,
        name: str,
        desired: _Desired,
        edges: tuple[str, ...],
        partitions: int,
        configs: dict[str, str],
    ) -> None:
        sources = [f"{c.edge.source}/{c.topic.name}" for c in desired.contributions]
        if desired.purpose == "replica":
            reason = f"replicated from {', '.join(sources)} {_by(edges)}"
        else:
            reason = _PURPOSES[desired.purpose].format(edges=", ".join(edges))
        if desired.purpose in (
            "state",
            "heartbeats",
            "checkpoints",
            "topo-checkpoints",
            "offset-syncs",
        ):
            partitions, configs = 1, dict(COMPACTED)
        if desired.purpose == "runs":
            partitions, configs = 1, dict(RUNS_CONFIGS)
        if desired.purpose == "heartbeats" or _heartbeat_copies(
            desired, set(self.topology.clusters)
        ):
            configs = {**configs, **ARRIVAL_TIME}
        self._change(
            Action.CREATE,
            Resource.TOPIC,
            cluster,
            name,
            reason,
            after={
                "partitions": partitions,
                "replication_factor": desired.replication_factor,
                "configs": configs,
                "purpose": desired.purpose,
                "sources": sources,
            },
            edges=edges,
        )

    def _partitions(
        self,
        cluster: str,
        name: str,
        existing: observed.Topic,
        wanted: int,
        desired: _Desired,
        edges: tuple[str, ...],
    ) -> None:
        if not any(c.edge.settings.sync.partitions for c in desired.contributions):
            if wanted > existing.partitions:
                self._note(
                    NoteLevel.WARNING,
                    cluster,
                    name,
                    f"has {existing.partitions} partitions, its source {wanted}, and "
                    "sync.partitions is off: records of the extra partitions cannot be copied",
                )
            return
        if wanted > existing.partitions:
            self._change(
                Action.UPDATE,
                Resource.PARTITIONS,
                cluster,
                name,
                f"the copy needs its source's {wanted} partitions to keep each record's partition",
                before={"partitions": existing.partitions},
                after={"partitions": wanted},
                edges=edges,
            )
        elif wanted < existing.partitions:
            self._note(
                NoteLevel.INFO,
                cluster,
                name,
                f"has {existing.partitions} partitions, more than its source's {wanted}; "
                "partitions are never removed",
            )

    def _replication_factor_note(
        self, cluster: str, name: str, existing: observed.Topic, desired: _Desired
    ) -> None:
        if existing.replication_factor != desired.replication_factor:
            self._note(
                NoteLevel.INFO,
                cluster,
                name,
                f"has replication factor {existing.replication_factor}, the topology asks "
                f"for {desired.replication_factor}; topo does not move replicas (use "
                "kafka-reassign-partitions)",
            )

    def _configs(
        self,
        cluster: str,
        name: str,
        existing: observed.Topic,
        wanted: dict[str, str],
        desired: _Desired,
        disagreements: Mapping[str, str],
        edges: tuple[str, ...],
    ) -> None:
        syncing = [c for c in desired.contributions if c.edge.settings.sync.configs]
        # A copy of heartbeats is stamped on arrival (its latency is read off it), also one
        # MM2 made (MM2 does not copy message.timestamp.type), whatever is synced. Only a copy
        # of `heartbeats` or of a cluster's copy of it: not a topic that merely ends so.
        clusters = set(self.topology.clusters)
        stamped = ARRIVAL_TIME if _heartbeat_copies(desired, clusters) else {}
        if not syncing and not stamped:
            return
        excluded = _excludes(syncing[0].edge) if syncing else None
        current = {
            key: value
            for key, value in existing.configs.items()
            if key in stamped
            or (excluded is not None and not excluded.matches(key) and key not in disagreements)
        }
        wanted = {**wanted, **stamped} if syncing else dict(stamped)
        before: dict[str, str | None] = {}
        after: dict[str, str | None] = {}
        for key in sorted(set(current) | set(wanted)):
            if key in disagreements or current.get(key) == wanted.get(key):
                continue
            before[key] = current.get(key)
            after[key] = wanted.get(key)  # None: back to the cluster's default, like MM2
        if after:
            reason = (
                "a copy of heartbeats is stamped by its broker on arrival: its latency is read "
                "off it"
                if set(after) <= set(stamped)
                else f"its source's configs changed (synced {_by(edges)})"
            )
            self._change(
                Action.UPDATE,
                Resource.TOPIC_CONFIG,
                cluster,
                name,
                reason,
                before=before,
                after=after,
                edges=edges,
            )

    # -- ACLs -----------------------------------------------------------------------------------

    def _reconcile_acl(self, cluster_name: str, acl: Acl, edges: set[str]) -> None:
        cluster = self._cluster(cluster_name)
        if cluster.acls is None:
            self._note(
                NoteLevel.WARNING,
                cluster_name,
                acl.resource_name,
                f"{cluster_name} has no authorizer, so this ACL is not synced: {acl.describe()}",
            )
            return
        present = acl in cluster.acls
        self.reads.note(f"acl/{cluster_name}/{observed.acl_key(acl)}", present)
        if present:
            return
        owned = cluster.owned.get(f"acl:{observed.acl_key(acl)}")
        if owned is not None and owned.owner != self.topology.name:
            return
        self._change(
            Action.CREATE,
            Resource.ACL,
            cluster_name,
            acl.resource_name,
            f"copied from the source topic's ACLs {_by(tuple(sorted(edges)))}",
            after=acl.to_dict(),
            edges=tuple(sorted(edges)),
        )

    # -- what topo made that nothing wants any more ---------------------------------------------

    def _orphans(self, cluster: observed.Cluster) -> None:
        wanted_acls = {acl for (name, acl) in self.desired_acls if name == cluster.name}
        live_edges = {edge.name for edge in self.topology.edges()}
        for owned in sorted(cluster.owned.values(), key=lambda o: o.key):
            if owned.owner != self.topology.name:
                continue  # another topology's: it alone decides what to do with it
            if owned.kind == "topic" and (cluster.name, owned.name) not in self.desired:
                self._orphan_topic(cluster, owned, live_edges)
            elif owned.kind == "acl" and owned.acl is not None and owned.acl not in wanted_acls:
                self._orphan_acl(cluster, owned, live_edges)

    def _orphan_topic(
        self, cluster: observed.Cluster, owned: observed.Owned, live_edges: set[str]
    ) -> None:
        topic = cluster.topics.get(owned.name)
        facts = topic.to_dict() if topic else None
        self.reads.note(f"topic/{cluster.name}/{owned.name}", facts)
        if topic is None:
            self._change(
                Action.DELETE,
                Resource.OWNERSHIP,
                cluster.name,
                owned.name,
                "the topic no longer exists; its ownership record goes too",
                before={"edges": list(owned.edges)},
                edges=owned.edges,
            )
            return
        if owned.name in naming.NEVER_DELETED:
            return  # every topology's state is in it, whichever created it
        why = _orphaned_because(owned, live_edges)
        if self.allow_delete:
            self._change(
                Action.DELETE,
                Resource.TOPIC,
                cluster.name,
                owned.name,
                f"topo created it and {why}; its data will be lost",
                before=topic.to_dict(),
                edges=owned.edges,
            )
        else:
            self._note(
                NoteLevel.WARNING,
                cluster.name,
                owned.name,
                f"topo created it and {why}; it is kept (plan with --allow-delete to delete it)",
            )

    def _orphan_acl(
        self, cluster: observed.Cluster, owned: observed.Owned, live_edges: set[str]
    ) -> None:
        assert owned.acl is not None
        present = cluster.acls is not None and owned.acl in cluster.acls
        self.reads.note(f"acl/{cluster.name}/{owned.name}", present)
        if not present:
            return
        why = _orphaned_because(owned, live_edges, "its source ACL")
        if self.allow_delete:
            self._change(
                Action.DELETE,
                Resource.ACL,
                cluster.name,
                owned.acl.resource_name,
                f"topo created it and {why}",
                before=owned.acl.to_dict(),
                edges=owned.edges,
            )
        else:
            self._note(
                NoteLevel.WARNING,
                cluster.name,
                owned.acl.resource_name,
                f"topo created the ACL {owned.acl.describe()} and {why}; it is kept (plan "
                "with --allow-delete to delete it)",
            )

    # -- helpers --------------------------------------------------------------------------------

    def _change(
        self,
        action: Action,
        resource: Resource,
        cluster: str,
        name: str,
        reason: str,
        *,
        before: Mapping[str, Any] | None = None,
        after: Mapping[str, Any] | None = None,
        edges: Iterable[str] = (),
    ) -> None:
        self.changes.append(
            Change(action, resource, cluster, name, reason, before, after, tuple(edges))
        )

    def _note(self, level: NoteLevel, cluster: str, name: str, message: str) -> None:
        self.notes.append(Note(level, cluster, name, message))


def replicated_topics(
    topology: Topology, clusters: Mapping[str, observed.Cluster]
) -> dict[str, dict[str, str]]:
    """For each flow ("east->west"), the source topics it copies now and their remote names."""
    found: dict[str, dict[str, str]] = {}
    for edge in topology.edges():
        source = clusters[edge.source]
        names = {name: naming.remote_name(edge, name, source) for name in sorted(source.topics)}
        found[edge.name] = {name: remote for name, remote in names.items() if remote is not None}
    return found


class _FlowChanges:
    """Start, restart or stop each edge's replication job so the running specs match."""

    def __init__(
        self,
        topology: Topology,
        clusters: Mapping[str, observed.Cluster],
        reads: Reads,
        handovers: Mapping[str, Handover] | None,
        cores: int | None,
    ) -> None:
        self.topology = topology
        self.clusters = clusters
        self.reads = reads
        self.handovers = handovers
        self.cores = cores

    def _slots(
        self, specs: Mapping[str, jobs.JobSpec], topics: Mapping[str, Mapping[str, str]]
    ) -> dict[str, str]:
        """Per flow, how many copy slots its copy loop runs (docs/engine.md, Copy slots): its
        `tasks`, or sized from the partitions seen and the cores, as the driver sizes them."""
        wanted = {
            flow: copy_slots.Wanted(
                spec.tasks,
                sum(self.clusters[spec.source].topics[t].partitions for t in topics[flow]),
            )
            for flow, spec in specs.items()
            if not spec.paused  # a paused flow has no slots: the others share the cores
        }
        counts = copy_slots.sized(wanted, self.cores) if self.cores is not None else {}
        return {
            flow: copy_slots.said(w, counts.get(flow, w.tasks), self.cores)
            for flow, w in wanted.items()
        }

    def changes(self, running: Mapping[str, Mapping[str, Any]]) -> list[Change]:
        changes = []
        wanted = {spec.flow: spec for spec in jobs.specs_of(self.topology)}
        topics = replicated_topics(self.topology, self.clusters)
        slots = self._slots(wanted, topics)
        views = jobs.job_views(self.topology, list(wanted.values()))
        self.reads.note("jobs", {flow: dict(spec) for flow, spec in sorted(running.items())})
        for flow, spec in wanted.items():
            after = views[flow]
            before = running.get(flow)
            mode = f"{spec.delivery}, from {spec.source} to {spec.target}"
            if before is None:
                reason = (
                    f"add, paused ({mode}): nothing is copied until it is resumed"
                    if spec.paused
                    else f"start replicating ({mode}, {slots[flow]})"
                )
                resumed = self._resume(spec, topics[flow])
                if resumed is not None:
                    after["resume"] = resumed
                    reason += ", where MirrorMaker 2 stopped"
                changes.append(
                    Change(
                        Action.CREATE,
                        Resource.FLOW,
                        spec.target,
                        flow,
                        reason,
                        after=after,
                        edges=(flow,),
                    )
                )
            elif dict(before) != after:
                changed = sorted(k for k in {*after, *before} if before.get(k) != after.get(k))
                changes.append(
                    Change(
                        Action.UPDATE,
                        Resource.FLOW,
                        spec.target,
                        flow,
                        _restart_reason(changed, spec.paused),
                        before=dict(before),
                        after=after,
                        edges=(flow,),
                    )
                )
        for flow, before in sorted(running.items()):
            if flow not in wanted:
                changes.append(
                    Change(
                        Action.DELETE,
                        Resource.FLOW,
                        str(before.get("target", "?")),
                        flow,
                        "stop: the topology no longer has this flow",
                        before=dict(before),
                        edges=(flow,),
                    )
                )
        return changes

    def _resume(self, spec: jobs.JobSpec, topics: Mapping[str, str]) -> dict[str, Any] | None:
        """Where a flow taking over from MM2 resumes (None for any other start, or when the
        caller read no handovers)."""
        if spec.start != "mm2" or self.handovers is None:
            return None
        found = self.handovers.get(spec.flow)
        if found is None:
            return None  # copied by topo before: it goes on from its committed positions
        self.reads.note(f"mm2/{spec.flow}", found.to_dict())
        try:
            return handover.resume(spec, self.clusters[spec.source], topics, found)
        except handover.HandoverError as problem:
            raise PlanError(str(problem)) from None


def _restart_reason(changed: list[str], paused: bool) -> str:
    """Why a running job changes: paused or resumed (and what else changed with it), or
    restarted on what changed."""
    others = [key for key in changed if key != "paused"]
    if "paused" not in changed:
        return f"restart: {', '.join(others)} changed"
    said = (
        "pause: its copy slots stop with their positions committed (topo reset may move them)"
        if paused
        else "resume: it copies again from its committed positions"
    )
    return f"{said}; {', '.join(others)} changed too" if others else said


def _excludes(edge: Edge) -> patterns.Matcher:
    """MM2's config exclusion list and the flow's own, matched in bounded time."""
    return patterns.Matcher((*kafka_rules.CONFIG_EXCLUDES, *edge.settings.config_exclude))


def _heartbeat_copies(desired: _Desired, clusters: set[str]) -> bool:
    """Is the wanted topic a copy of a heartbeats topic: of `heartbeats` itself or of a copy
    named after the topology's `clusters` (`north.heartbeats`), not of a topic that merely
    ends so (`billing.heartbeats`)?"""
    for c in desired.contributions:
        separator, name = c.edge.settings.separator, c.topic.name
        prefixes = sorted((f"{cluster}{separator}" for cluster in clusters), key=len, reverse=True)
        stripped = True
        while stripped and name != naming.HEARTBEATS:  # (an alias may hold the separator)
            prefix = next((p for p in prefixes if name.startswith(p)), None)
            stripped = prefix is not None
            name = name[len(prefix) :] if prefix is not None else name
        if name == naming.HEARTBEATS:
            return True
    return False


def _copied_configs(contribution: _Contribution) -> dict[str, str]:
    """The source topic's own configs that pass MM2's exclusion list and the flow's."""
    excluded = _excludes(contribution.edge)
    return {k: v for k, v in contribution.topic.configs.items() if not excluded.matches(k)}


def _by(edges: tuple[str, ...]) -> str:
    return f"by {', '.join(edges)}" if edges else ""


def _orphaned_because(owned: observed.Owned, live_edges: set[str], what: str = "its source") -> str:
    gone = [edge for edge in owned.edges if edge not in live_edges]
    if gone:
        flows = f"flows {', '.join(gone)} no longer exist" if len(gone) > 1 else ""
        return flows or f"the flow {gone[0]} no longer exists"
    return f"{what} no longer exists or no longer passes {', '.join(owned.edges)}'s filters"
