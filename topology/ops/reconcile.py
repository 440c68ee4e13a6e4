"""Reconcile: observe the clusters, plan, check, execute. The one path `topo plan`, `topo
apply` and the running replication driver share.

`checked_plan` is what `topo plan` and `topo apply` do between reading the clusters and showing
the plan: what MirrorMaker 2 left for the flows that take over from it (`handovers`), the plan,
and the permissions it needs that topo's principal lacks; `refusal` says which permission a
refused read lacked. Their reads are the caller's (`Readers`).

`topo apply` plans everything (deletes too, with `--allow-delete`), shows the plan and asks;
the driver, every few seconds while it runs, plans the same way and executes only what a
running job may do on its own (`Change.unattended`: new remote topics, grown partitions,
configs and ACLs that follow the source; never a delete, never a job start or stop). Either way
the plan comes from `planner.plan`, `plan.guard` checks every change against the clusters just
read before the first one runs, and `apply.run` executes them in order and accounts for each.

The adapters are injected: `observe` reads the clusters, `run_change` executes one change. So
this module is tested without Kafka, and it never imports the Kafka adapter.
"""

import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from topology.core import permission_needs as permissions
from topology.core.errors import StalePlanError
from topology.core.jobs import JobSpec, specs_of
from topology.core.mm2.positions import Handover
from topology.core.model import Edge, Topology
from topology.core.naming import HEARTBEATS, offset_syncs_topic
from topology.core.observed import Cluster
from topology.core.plan import execute as applying
from topology.core.plan import guard, planner, saved
from topology.core.plan.values import Change, Plan

Observe = Callable[[], Mapping[str, Cluster]]
RunChange = Callable[[Change], None]


@dataclass(frozen=True)
class Planned:
    """A plan and what it was made from: the clusters as read, for the guard."""

    plan: Plan
    observed: Mapping[str, Cluster]

    def check(self, plan: Plan, topology: Topology) -> None:
        """Refuse (GuardError) any change of `plan` the planner would not make now."""
        guard.check(plan, topology=topology, observed=self.observed, expected=self.plan)


def plan_now(
    topology: Topology,
    sha256: str,
    observed: Mapping[str, Cluster],
    *,
    running: Mapping[str, Mapping[str, Any]],
    allow_delete: bool = False,
    version: str = "",
    handovers: Mapping[str, Handover] | None = None,
    cores: int | None = None,
) -> Planned:
    """The plan for the clusters as observed, with the replication jobs now running (and, for
    flows taking over from MM2, what MM2 left; `cores`, what the flows' copy slots are sized
    for: `planner.plan`)."""
    plan = planner.plan(
        topology,
        dict(observed),
        topology_sha256=sha256,
        allow_delete=allow_delete,
        topo_version=version,
        running=running,
        handovers=handovers,
        cores=cores,
    )
    return Planned(plan, observed)


def check_current(saved_plan: Plan, fresh: Plan, file: str) -> None:
    """Refuse a saved plan that is not exactly the plan topo makes now (StalePlanError)."""
    if fresh.observed_sha256 != saved_plan.observed_sha256:
        now = ", ".join(f"{n} to {action}" for action, n in fresh.summary().items() if n)
        raise StalePlanError(
            f"stale plan: the clusters changed after {file} was made (a plan now would have "
            f"{now or 'no changes'}); plan again"
        )
    difference = saved.first_difference(saved_plan, fresh)
    if difference is not None:
        raise StalePlanError(
            f"stale or edited plan: {file} is not the plan topo makes now ({difference}); "
            "plan again"
        )


def execute(
    plan: Plan,
    planned: Planned,
    topology: Topology,
    run_change: RunChange,
    *,
    on_start: applying.Listener = lambda number, total, change: None,
    on_done: Callable[[applying.Step], None] = lambda step: None,
    run_together: applying.RunTogether | None = None,
) -> applying.Report:
    """Execute `plan`'s changes in order, once the guard has accepted every one of them
    (consecutive topic creations on one cluster by one call of `run_together`, if given)."""
    return applying.run(
        plan,
        run_change,
        guard=lambda whole: planned.check(whole, topology),
        on_start=on_start,
        on_done=on_done,
        run_together=run_together,
    )


def unattended(plan: Plan) -> Plan:
    """The part of `plan` a running job makes on its own, between applies."""
    return replace(plan, changes=tuple(c for c in plan.changes if c.unattended))


@dataclass(frozen=True)
class Applied:
    """One change the running driver made (or tried), for `topo status`."""

    at: float
    cluster: str
    action: str
    resource: str
    name: str
    reason: str
    what: str  # the values that changed: "retention.ms: 604800000 -> 86400000"
    outcome: str  # done | failed | not attempted
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "cluster": self.cluster,
            "action": self.action,
            "resource": self.resource,
            "name": self.name,
            "reason": self.reason,
            "what": self.what,
            "outcome": self.outcome,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class Followed:
    """One round of following the sources: the plan made, what was executed, and what the
    plan holds that only `topo apply` may do (deletes), left for it."""

    plan: Plan
    applied: tuple[Applied, ...]
    left: tuple[Change, ...]

    @property
    def failed(self) -> set[tuple[str, str]]:
        """(cluster, name) of every change that failed or was not attempted."""
        return {(a.cluster, a.name) for a in self.applied if a.outcome != "done"}


def changed_values(change: Change) -> str:
    """What a change changes, in one line: each value before -> after (`-` where absent)."""
    before, after = change.before or {}, change.after or {}
    shown = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old != new:
            shown.append(f"{key}: {_value(old)} -> {_value(new)}")
    return "; ".join(shown)


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value) or "[]"
    return str(value)


def follow(
    topology: Topology,
    sha256: str,
    *,
    observe: Observe,
    run_change: RunChange,
    running: Mapping[str, Mapping[str, Any]],
    version: str = "",
    clock: Callable[[], float] = time.time,
    run_together: applying.RunTogether | None = None,
) -> Followed:
    """The running driver's reconcile: read the clusters, plan, execute the unattended part
    (as `topo apply` does, topic creations together by `run_together` if given)."""
    planned = plan_now(topology, sha256, observe(), running=running, version=version)
    doing = unattended(planned.plan)
    left = tuple(c for c in planned.plan.changes if not c.unattended and c.resource.value != "flow")
    report = execute(doing, planned, topology, run_change, run_together=run_together)
    applied = tuple(
        Applied(
            at=clock(),
            cluster=step.change.cluster,
            action=str(step.change.action),
            resource=str(step.change.resource),
            name=step.change.name,
            reason=step.change.reason,
            what=changed_values(step.change),
            outcome=str(step.outcome),
            detail=step.detail,
        )
        for step in report.steps
    )
    return Followed(planned.plan, applied, left)


Shapes = Mapping[str, Mapping[str, int]]  # cluster -> topic -> partition count


def watched(
    shapes: Shapes, sources: Collection[str], remotes: Mapping[str, Collection[str]]
) -> dict[str, dict[str, int]]:
    """What of the clusters' topics the running driver's frequent look compares, so that a
    change of it reconciles at once (`follow`): a source's every topic (a topic made there may
    join a flow), and on a cluster that is only a target, the flows' copies there as last
    followed (`remotes`): a copy deleted under its flow is made again within the look, not at
    the slower config and ACL look, while topics others make there change nothing."""
    return {
        name: dict(topics)
        if name in sources
        else {topic: n for topic, n in topics.items() if topic in remotes.get(name, ())}
        for name, topics in shapes.items()
    }


# -- what `topo plan` and `topo apply` read beyond the inventory, and the checks after it ------


class Readers(Protocol):
    """The reads a plan needs beyond the clusters' inventory, done by the caller's adapters
    (`cli/live.py` builds them over the Kafka adapter)."""

    def progress(self, cluster: str, topic: str, flow: str) -> Collection[tuple[str, int]]:
        """The (topic, partition)s `flow` has recorded progress for in `topic` on `cluster`."""
        ...

    def handover(self, spec: JobSpec, edge: Edge, topics: Collection[str]) -> Handover:
        """What MirrorMaker 2 left for the flow of `spec`: its positions, whether it runs."""
        ...

    def accesses(
        self, needed: Sequence[permissions.Permission], clusters: Mapping[str, Cluster]
    ) -> Mapping[str, permissions.Access]:
        """What topo's principal may do on each cluster, for the permissions `needed`."""
        ...

    def reading(self, cluster: str) -> permissions.Access | None:
        """What the principal may do with what it can see on `cluster`; None when it cannot
        even be asked."""
        ...


@dataclass(frozen=True)
class Checked:
    """A plan and the permissions it needs that topo's principal lacks (or may lack)."""

    planned: Planned
    findings: permissions.Findings


def handovers(
    topology: Topology,
    clusters: Mapping[str, Cluster],
    running: Mapping[str, Any],
    read: Readers,
    say: Callable[[str], None] = lambda line: None,
) -> dict[str, Handover]:
    """What MirrorMaker 2 left for each flow that takes over from it (`start: mm2`), is not
    running and has not copied yet: topo copied its topics since the handover when its progress
    log has any of them (by its own topics: another topology's flow of the same name shares the
    log, and every flow from the source copies its heartbeats), and then it resumes from its
    own positions."""
    if topology.engine.runner == "none":
        return {}  # no flow is started: there is nothing to hand over to
    copied = planner.replicated_topics(topology, clusters)
    found = {}
    for spec in specs_of(topology):
        if spec.start != "mm2" or spec.flow in running:
            continue
        log = offset_syncs_topic(spec.source, spec.separator)
        reached = read.progress(spec.target, log, spec.flow)
        if any(t in copied[spec.flow] and t != HEARTBEATS for t, _partition in reached):
            continue
        say(f"Reading where MirrorMaker 2 stopped {spec.flow} ...")
        found[spec.flow] = read.handover(spec, topology.edge(spec.flow), copied[spec.flow])
    return found


def checked_plan(
    topology: Topology,
    sha256: str,
    clusters: Mapping[str, Cluster],
    *,
    running: Mapping[str, Mapping[str, Any]],
    read: Readers,
    allow_delete: bool = False,
    version: str = "",
    say: Callable[[str], None] = lambda line: None,
    cores: int | None = None,
) -> Checked:
    """Observe (done: `clusters`) -> plan -> check: the plan `topo plan` shows and `topo apply`
    executes, with what MM2 left for the flows that take over from it, and the permissions
    the plan and the replication it starts need that the principal lacks."""
    found = handovers(topology, clusters, running, read, say)
    planned = plan_now(
        topology,
        sha256,
        clusters,
        running=running,
        allow_delete=allow_delete,
        version=version,
        handovers=found,
        cores=cores,
    )
    needed = permissions.required(topology, planned.plan, clusters)
    accesses = read.accesses(needed, clusters)
    findings = permissions.missing(
        needed, accesses, bootstraps=bootstraps(topology), principals=principals(topology)
    )
    return Checked(planned, findings)


def refusal(topology: Topology, message: str, read: Readers) -> permissions.Findings | None:
    """Reading a cluster was refused (`message`): which permissions reading needs and lacks,
    asked of the clusters the message names (else all); None when none is found."""
    if "authorization failed" not in message.lower() and "may not describe" not in message.lower():
        return None
    named = [name for name in topology.clusters if f"cluster {name} (" in message]
    accesses = {}
    for name in sorted(named or topology.clusters):
        access = read.reading(name)
        if access is not None:
            accesses[name] = access
    needed = [p for access in accesses.values() for p in permissions.observing(access)]
    findings = permissions.missing(
        needed, accesses, bootstraps=bootstraps(topology), principals=principals(topology)
    )
    return findings if findings.errors else None


def bootstraps(topology: Topology) -> dict[str, str]:
    return {n: permissions.bootstrap_shown(c.bootstrap) for n, c in topology.clusters.items()}


def principals(topology: Topology) -> dict[str, str]:
    return {n: permissions.principal_shown(c) for n, c in topology.clusters.items()}
