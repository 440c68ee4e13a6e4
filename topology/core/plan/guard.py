"""The last check before apply changes anything: every change against the planner's rules.

Pure: the plan to execute, the topology, the clusters as apply observed them just now, and
the plan the planner makes from those (`expected`) in; a `GuardError` out for the first change
it refuses, before any change runs (`topology.core.plan.execute.run(guard=...)`).

A plan reaches apply from the planner (`topo apply topology.yaml`) or from a file anyone who
can write it could have edited (`topo apply plan.json`, checked first by `plan.saved`). The
guard holds either to what topo would do itself:

- every change is on a cluster of the topology (a flow change: on its flow's target), once;
- a topic or ACL is deleted only when both the plan and apply's `--allow-delete` (with which
  `expected` was made) allow deletes, only when an ownership record on that cluster says this
  topology (the plan's owner) made it, and never topo's state topic; an ownership record is
  deleted only when it is this topology's and its topic is gone;
- an ACL is created only when the topology's sync rules (MM2's: literal topic ACLs, ALLOW
  WRITE never, ALLOW ALL as READ) derive it from an ACL the source has now;
- a topic is created only when the planner wants that name on that cluster and it is missing;
- an ownership record is never written over another topology's;
- and, covering all the rest, every change is one the planner makes for this topology, these
  clusters and this `allow_delete` (`expected`), value for value.

The explicit rules repeat part of the last one on purpose: each says in its own words why a
change is refused, and each would still hold if the planner itself went wrong.
"""

import json
from collections.abc import Iterator, Mapping
from typing import Any

from topology.core.errors import TopoError
from topology.core.model import Topology
from topology.core.naming import NEVER_DELETED, remote_name
from topology.core.observed import Acl, Cluster, acl_key
from topology.core.plan.execute import describe
from topology.core.plan.planner import copied_acl
from topology.core.plan.values import PHASES, Action, Change, Plan, Resource


class GuardError(TopoError):
    """A change apply must not make; nothing was changed."""


def check(
    plan: Plan, *, topology: Topology, observed: Mapping[str, Cluster], expected: Plan
) -> None:
    """Raise GuardError naming the first change of `plan` that breaks a rule above."""
    why = misfit(plan, topology)
    if why is not None:
        raise GuardError(f"refusing to apply: {why}; nothing was changed")
    rules = _Rules(plan, topology, observed, expected)
    for number, change, misplaced in placed(plan):
        why = misplaced or rules.refusal(change)
        if why is not None:
            raise GuardError(
                f"refusing to apply change {number} ({described(change)}): {why}; "
                "nothing was changed"
            )


def misfit(plan: Plan, topology: Topology) -> str | None:
    """Why `plan` was not made for `topology` (another owner, other clusters or addresses), or
    None. Saved plans are held to this before apply connects (`saved.check_topology`)."""
    if plan.owner != topology.name:
        return (
            f"the plan's owner {shown(plan.owner)} is not the topology's name "
            f"{shown(topology.name)}"
        )
    wanted = {name: cluster.bootstrap for name, cluster in topology.clusters.items()}
    if dict(plan.clusters) != wanted:
        names = sorted(set(plan.clusters) ^ set(wanted)) or sorted(
            name for name in wanted if plan.clusters[name] != wanted[name]
        )
        return f"the plan's clusters are not the topology's (cluster {shown(names[0])} differs)"
    return None


def placed(plan: Plan) -> Iterator[tuple[int, Change, str | None]]:
    """Every change of `plan`, numbered from 1, with why it is out of place, or None: a flow
    change must be on its flow's target, any other change on one of the plan's clusters, and
    no change may repeat an earlier one. Saved plans are held to this before apply connects
    (`saved.read`)."""
    seen: dict[tuple[Any, ...], int] = {}
    for number, change in enumerate(plan.changes, start=1):
        first = seen.setdefault(identity(change), number)
        why = None
        if change.resource is Resource.FLOW:
            if change.cluster != change.name.partition("->")[2]:
                why = (
                    "a flow change must be on its flow's target cluster, not "
                    f"{shown(change.cluster)}"
                )
        elif change.cluster not in plan.clusters:
            why = f"cluster {shown(change.cluster)} is not one of the plan's clusters"
        if why is None and first != number:
            why = f"it repeats change {first}"
        yield number, change, why


def identity(change: Change) -> tuple[Any, ...]:
    """What a change acts on. Two changes of one identity are one change made twice (an ACL
    change is told apart by its binding: a topic has many)."""
    base: tuple[Any, ...] = (change.action, change.resource, change.cluster, change.name)
    if change.resource is Resource.ACL:
        binding = change.after if change.action is Action.CREATE else change.before
        return (*base, canonical(binding))
    return base


def derived_acls(topology: Topology, observed: Mapping[str, Cluster]) -> set[tuple[str, Acl]]:
    """(target cluster, ACL) for every copy the topology's ACL sync derives from the ACLs the
    sources have now: MM2's rule, literal topic ACLs of topics the edge copies, ALLOW WRITE
    never copied, ALLOW ALL copied as READ."""
    derived: set[tuple[str, Acl]] = set()
    for edge in topology.edges():
        source = observed.get(edge.source)
        if not edge.settings.sync.acls or source is None or source.acls is None:
            continue
        for acl in source.acls:
            if (acl.resource_type, acl.pattern_type) != ("TOPIC", "LITERAL"):
                continue
            remote = remote_name(edge, acl.resource_name, source)
            copy = copied_acl(acl, remote) if remote is not None else None
            if copy is not None:
                derived.add((edge.target, copy))
    return derived


class _Rules:
    def __init__(
        self,
        plan: Plan,
        topology: Topology,
        observed: Mapping[str, Cluster],
        expected: Plan,
    ) -> None:
        self.plan = plan
        self.topology = topology
        self.observed = observed
        self.expected = {canonical(compared(change.to_dict())) for change in expected.changes}
        # The plan says `allow_delete`, and so does apply (`expected` was made with its flag).
        self.deletes_allowed = expected.allow_delete
        self.wanted_topics = {
            (change.cluster, change.name)
            for change in expected.changes
            if (change.action, change.resource) == (Action.CREATE, Resource.TOPIC)
        }
        self._derived: set[tuple[str, Acl]] | None = None

    def derived(self) -> set[tuple[str, Acl]]:
        if self._derived is None:
            self._derived = derived_acls(self.topology, self.observed)
        return self._derived

    def refusal(self, change: Change) -> str | None:
        """Why `change` must not be made, or None."""
        where = self._cluster(change)
        if isinstance(where, str):
            return where
        if (change.action, change.resource) not in PHASES:
            return f"topo never plans a {change.action} of a {change.resource}"
        rule = _RULES.get((change.action, change.resource))
        why = rule(self, change, where) if rule is not None and where is not None else None
        if why is None and canonical(compared(change.to_dict())) not in self.expected:
            why = "it is not a change topo plans for this topology and the clusters as they are now"
        return why

    def _cluster(self, change: Change) -> Cluster | str | None:
        """The observed cluster the change is made on (None for a flow change), or why there is
        none. `placed` has checked the change's cluster already."""
        if change.resource is Resource.FLOW:
            return None
        found = self.observed.get(change.cluster)
        if found is None or change.cluster not in self.topology.clusters:
            return f"cluster {shown(change.cluster)} is not one of the topology's clusters"
        return found

    # -- the explicit rules, by action and resource ---------------------------------------------

    def delete_topic(self, change: Change, cluster: Cluster) -> str | None:
        why = self._deletes_allowed("a topic")
        if why is not None:
            return why
        if change.name in NEVER_DELETED:
            return "topo never deletes its state topics (every topology's state is in them)"
        return self._owned_here(cluster.owned.get(f"topic:{change.name}"), "topic")

    def delete_acl(self, change: Change, cluster: Cluster) -> str | None:
        why = self._deletes_allowed("an ACL")
        if why is not None:
            return why
        acl = _acl(change.before)
        if acl is None:
            return "its 'before' is not an ACL binding"
        if acl.resource_name != change.name:
            return "its ACL is not on the topic the change names"
        return self._owned_here(cluster.owned.get(f"acl:{acl_key(acl)}"), "ACL")

    def _deletes_allowed(self, what: str) -> str | None:
        if not self.plan.allow_delete:
            return f"it deletes {what}, and the plan was not made with --allow-delete"
        if not self.deletes_allowed:
            return f"it deletes {what}, and apply was not given --allow-delete"
        return None

    def delete_ownership(self, change: Change, cluster: Cluster) -> str | None:
        why = self._owned_here(cluster.owned.get(f"topic:{change.name}"), "topic")
        if why is not None:
            return why
        if change.name in cluster.topics:
            return "the topic still exists: its ownership record goes only when the topic does"
        return None

    def create_acl(self, change: Change, cluster: Cluster) -> str | None:
        acl = _acl(change.after)
        if acl is None:
            return "its 'after' is not an ACL binding"
        if acl.resource_name != change.name:
            return "its ACL is not on the topic the change names"
        if (change.cluster, acl) not in self.derived():
            return (
                f"the ACL {clip(acl.describe(), 160)} is not derived from any source ACL by the "
                "topology's sync rules"
            )
        return self._not_anothers(cluster.owned.get(f"acl:{acl_key(acl)}"))

    def create_topic(self, change: Change, cluster: Cluster) -> str | None:
        if (change.cluster, change.name) not in self.wanted_topics:
            return "the topology wants no topic of this name on this cluster"
        if change.name in cluster.topics:
            return "the topic exists already"
        return None

    def write_ownership(self, change: Change, cluster: Cluster) -> str | None:
        owned = cluster.owned.get(f"topic:{change.name}")
        why = self._not_anothers(owned)
        if why is not None:
            return why
        if change.action is Action.CREATE and owned is not None:
            return "the topic has an ownership record already"
        if change.name not in cluster.topics:
            return "there is no such topic to record"
        return None

    def alter_topic(self, change: Change, cluster: Cluster) -> str | None:
        if change.name not in cluster.topics:
            return "there is no such topic"
        return self._not_anothers(cluster.owned.get(f"topic:{change.name}"))

    def _owned_here(self, owned: Any, what: str) -> str | None:
        if owned is None:
            return f"topo did not create this {what} (no ownership record on the cluster names it)"
        return self._not_anothers(owned)

    def _not_anothers(self, owned: Any) -> str | None:
        if owned is not None and owned.owner != self.plan.owner:
            return (
                f"it belongs to the topology {shown(owned.owner)}, not to this plan's owner "
                f"{shown(self.plan.owner)}"
            )
        return None


_RULES = {
    (Action.DELETE, Resource.TOPIC): _Rules.delete_topic,
    (Action.DELETE, Resource.ACL): _Rules.delete_acl,
    (Action.DELETE, Resource.OWNERSHIP): _Rules.delete_ownership,
    (Action.CREATE, Resource.ACL): _Rules.create_acl,
    (Action.CREATE, Resource.TOPIC): _Rules.create_topic,
    (Action.CREATE, Resource.OWNERSHIP): _Rules.write_ownership,
    (Action.UPDATE, Resource.OWNERSHIP): _Rules.write_ownership,
    (Action.UPDATE, Resource.PARTITIONS): _Rules.alter_topic,
    (Action.UPDATE, Resource.TOPIC_CONFIG): _Rules.alter_topic,
}


def _acl(value: Mapping[str, Any] | None) -> Acl | None:
    if not isinstance(value, Mapping):
        return None
    try:
        acl = Acl(**value)
    except TypeError:
        return None
    return acl if all(isinstance(part, str) for part in acl.to_dict().values()) else None


def canonical(value: Any) -> str:
    """One JSON text per value (sorted keys, lists and tuples alike): how changes compare."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=list)


def compared(change: Mapping[str, Any]) -> Mapping[str, Any]:
    """What of a change a fresh plan must match: all of it but the records waiting where a
    flow taking over from MM2 resumes (they grow while producers write; the positions are
    compared)."""
    after = change.get("after")
    if change.get("resource") != "flow" or not after or "resume" not in after:
        return change
    resume = dict(after["resume"])
    resume.pop("waiting", None)
    resume["partitions"] = [
        {k: v for k, v in item.items() if k != "waiting"} for item in resume["partitions"]
    ]
    return {**change, "after": {**after, "resume": resume}}


def described(change: Change) -> str:
    """A change in a message: what `topo apply` prints for it, cut short if long."""
    return clip(describe(change), 160)


def clip(text: str, limit: int) -> str:
    """`text`, cut to `limit` characters ("..." at the end when cut)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(value: object) -> str:
    """A value from a plan, quoted, cut short if long (80 characters at most)."""
    return clip(repr(value), 80)
