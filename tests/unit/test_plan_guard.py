"""The guard apply runs before the first change: every change against the planner's rules.

Plans here come from the recorded cases in tests/plan/ (a topology and the clusters as
observed), then get one change added or altered, as someone editing a saved plan would.
"""

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from topology.core.analysis import analyse
from topology.core.model import Topology
from topology.core.naming import STATE_TOPIC
from topology.core.observed import Acl, Cluster, Owned, Topic, cluster_from_dict
from topology.core.plan import execute as applying
from topology.core.plan import guard
from topology.core.plan.guard import GuardError
from topology.core.plan.planner import plan
from topology.core.plan.values import Action, Change, Plan, Resource

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(path for path in (ROOT / "tests/plan").iterdir() if path.is_dir())


@dataclasses.dataclass(frozen=True)
class Case:
    topology: Topology
    clusters: dict[str, Cluster]
    plan: Plan

    def check(self, edited: Plan) -> None:
        guard.check(edited, topology=self.topology, observed=self.clusters, expected=self.plan)

    def with_changes(self, *changes: Change, allow_delete: bool | None = None) -> Plan:
        delete = self.plan.allow_delete if allow_delete is None else allow_delete
        return dataclasses.replace(self.plan, changes=changes, allow_delete=delete)

    def adding(self, change: Change) -> Plan:
        return self.with_changes(*self.plan.changes, change)


def load(name: str, allow_delete: bool | None = None, **extra: Cluster) -> Case:
    folder = ROOT / "tests/plan" / name
    text = (folder / "topology.yaml").read_text()
    analysis = analyse(text, "topology.yaml")
    assert analysis.topology is not None, analysis.diagnostics
    recorded = json.loads((folder / "observed.json").read_text())
    clusters = {data["name"]: cluster_from_dict(data) for data in recorded["clusters"]}
    clusters.update(extra)
    delete = recorded["allow_delete"] if allow_delete is None else allow_delete
    made = plan(
        analysis.topology,
        clusters,
        topology_sha256=hashlib.sha256(text.encode()).hexdigest(),
        allow_delete=delete,
    )
    return Case(analysis.topology, clusters, made)


def with_topic(cluster: Cluster, *topics: Topic, owned: tuple[Owned, ...] = ()) -> Cluster:
    return dataclasses.replace(
        cluster,
        topics={**cluster.topics, **{t.name: t for t in topics}},
        owned={**cluster.owned, **{o.key: o for o in owned}},
    )


PAYROLL = Topic("payroll", 3, 1, {})
EVIL = Acl("TOPIC", "east.orders", "LITERAL", "User:evil", "*", "ALL", "ALLOW")


def delete_topic(name: str, cluster: str = "west") -> Change:
    before = {"partitions": 3, "replication_factor": 1, "configs": {}}
    return Change(Action.DELETE, Resource.TOPIC, cluster, name, "gone", before=before)


def refused(case: Case, edited: Plan, message: str) -> str:
    with pytest.raises(GuardError) as raised:
        case.check(edited)
    text = str(raised.value)
    assert message in text, text
    assert "\n" not in text and text.endswith("; nothing was changed")
    return text


# -- what the planner makes passes ---------------------------------------------------------------


@pytest.mark.parametrize("name", [case.name for case in CASES])
@pytest.mark.parametrize("allow_delete", [False, True])
def test_every_plan_the_planner_makes_passes(name: str, allow_delete: bool) -> None:
    case = load(name, allow_delete)
    case.check(case.plan)


def test_the_recorded_cases_hold_deletes_acl_creates_and_adoptions() -> None:
    """So the test above covers the explicit rules, not only the general one."""
    kinds = {
        (change.action, change.resource)
        for name in ("orphans-deleted", "acl-sync", "drift-and-growth", "first-plan")
        for change in load(name, allow_delete=True).plan.changes
    }
    assert {
        (Action.DELETE, Resource.TOPIC),
        (Action.DELETE, Resource.OWNERSHIP),
        (Action.DELETE, Resource.ACL),
        (Action.CREATE, Resource.ACL),
        (Action.CREATE, Resource.TOPIC),
    } <= kinds


# -- deletes -------------------------------------------------------------------------------------


def test_a_topic_topo_did_not_create_is_never_deleted() -> None:
    west = with_topic(load("orphans-deleted").clusters["west"], PAYROLL)
    case = load("orphans-deleted", west=west)
    text = refused(case, case.adding(delete_topic("payroll")), "topo did not create this topic")
    assert text.startswith(
        f"refusing to apply change {len(case.plan.changes) + 1} (west: delete topic payroll): "
    )


def test_a_topic_delete_needs_allow_delete_even_for_topos_own_topic() -> None:
    case = load("orphans-deleted", allow_delete=False)
    own = delete_topic("east.orders")
    refused(case, case.adding(own), "the plan was not made with --allow-delete")


def test_a_delete_needs_allow_delete_from_apply_too() -> None:
    """A saved plan's allow_delete is the file's word; `expected` is made with apply's flag."""
    case = load("orphans-deleted", allow_delete=True)
    [delete, *_] = [c for c in case.plan.changes if c.action is Action.DELETE]
    without = load("orphans-deleted", allow_delete=False).plan
    with pytest.raises(GuardError) as raised:
        guard.check(case.plan, topology=case.topology, observed=case.clusters, expected=without)
    assert "and apply was not given --allow-delete" in str(raised.value)
    assert f"({applying.describe(delete)})" in str(raised.value)


def test_another_topologys_topic_is_never_deleted() -> None:
    case = load("orphans-deleted")
    edited = case.adding(delete_topic("east.other-team"))
    refused(case, edited, "it belongs to the topology 'payments-team', not to this plan's owner")


def test_the_state_topic_is_never_deleted() -> None:
    case = load("orphans-deleted")
    refused(case, case.adding(delete_topic(STATE_TOPIC)), "never deletes its state topic")


def test_a_wanted_topic_of_topos_own_is_not_deleted_either() -> None:
    """Owned, allowed: but the planner keeps it, so the general rule refuses it."""
    case = load("orphans-deleted")
    refused(case, case.adding(delete_topic("east.orders")), "not a change topo plans")


def test_an_acl_delete_needs_allow_delete_and_topos_own_record() -> None:
    case = load("acl-sync", allow_delete=True)
    app = Acl("TOPIC", "east.orders", "LITERAL", "User:app", "*", "READ", "ALLOW")
    change = Change(Action.DELETE, Resource.ACL, "west", "east.orders", "x", before=app.to_dict())
    refused(case, case.adding(change), "topo did not create this ACL")
    strict = load("acl-sync", allow_delete=False)
    refused(strict, strict.adding(change), "the plan was not made with --allow-delete")


def test_an_ownership_record_goes_only_with_its_topic() -> None:
    case = load("orphans-deleted")
    present = Change(
        Action.DELETE,
        Resource.OWNERSHIP,
        "west",
        "east.orders",
        "x",
        before={"edges": ["east->west"]},
    )
    refused(case, case.adding(present), "the topic still exists")
    theirs = dataclasses.replace(present, name="east.other-team")
    refused(case, case.adding(theirs), "belongs to the topology 'payments-team'")


# -- creates -------------------------------------------------------------------------------------


def test_an_acl_no_source_acl_derives_is_never_created() -> None:
    case = load("acl-sync")
    change = Change(
        Action.CREATE,
        Resource.ACL,
        "west",
        "east.orders",
        "copied",
        after=EVIL.to_dict(),
        edges=("east->west",),
    )
    refused(case, case.adding(change), "ALLOW User:evil ALL on TOPIC east.orders (literal)")


@pytest.mark.parametrize(
    ("principal", "operation"),
    [("User:app", "WRITE"), ("User:ops", "ALL")],
    ids=["ALLOW WRITE is never copied", "ALLOW ALL is copied as READ, never as ALL"],
)
def test_mm2s_acl_rules_hold_against_an_edited_plan(principal: str, operation: str) -> None:
    case = load("acl-sync")
    acl = Acl("TOPIC", "east.orders", "LITERAL", principal, "*", operation, "ALLOW")
    change = Change(
        Action.CREATE,
        Resource.ACL,
        "west",
        "east.orders",
        "copied",
        after=acl.to_dict(),
        edges=("east->west",),
    )
    refused(case, case.adding(change), "is not derived from any source ACL")


def test_derived_acls_follow_mm2s_rules() -> None:
    case = load("acl-sync")
    derived = {acl for cluster, acl in guard.derived_acls(case.topology, case.clusters)}
    assert {(a.principal, a.operation, a.permission) for a in derived} == {
        ("User:app", "READ", "ALLOW"),
        ("User:intern", "DESCRIBE", "DENY"),
        ("User:ops", "READ", "ALLOW"),
    }
    assert {a.resource_name for a in derived} == {"east.orders"}


def test_a_topic_the_topology_does_not_want_is_never_created() -> None:
    case = load("first-plan")
    change = Change(
        Action.CREATE,
        Resource.TOPIC,
        "west",
        "east.payroll",
        "x",
        after={
            "partitions": 1,
            "replication_factor": 1,
            "configs": {},
            "purpose": "replica",
            "sources": [],
        },
    )
    refused(case, case.adding(change), "the topology wants no topic of this name on this cluster")


def test_a_wanted_topic_is_created_only_as_planned() -> None:
    case = load("first-plan")
    [create] = [c for c in case.plan.changes if c.resource is Resource.TOPIC][:1]
    assert create.after is not None
    bigger = dataclasses.replace(create, after={**create.after, "partitions": 999})
    refused(case, case.with_changes(bigger), "not a change topo plans")


def test_another_topologys_ownership_record_is_never_overwritten() -> None:
    case = load("orphans-deleted")
    change = Change(
        Action.UPDATE,
        Resource.OWNERSHIP,
        "west",
        "east.other-team",
        "x",
        before={"edges": ["east->west"]},
        after={"edges": ["east->west"]},
    )
    refused(case, case.adding(change), "belongs to the topology 'payments-team'")


def test_a_topic_nobody_owns_is_not_adopted_by_an_edited_plan() -> None:
    west = with_topic(load("orphans-deleted").clusters["west"], PAYROLL)
    case = load("orphans-deleted", west=west)
    change = Change(
        Action.CREATE, Resource.OWNERSHIP, "west", "payroll", "x", after={"edges": ["east->west"]}
    )
    refused(case, case.adding(change), "not a change topo plans")


# -- clusters, repeats, kinds --------------------------------------------------------------------


def test_a_change_on_a_cluster_outside_the_topology_is_refused() -> None:
    case = load("first-plan")
    first = case.plan.changes[0]
    moved = dataclasses.replace(first, cluster="elsewhere")
    refused(case, case.with_changes(moved), "cluster 'elsewhere' is not one of the plan's")


def test_a_repeated_change_is_refused() -> None:
    case = load("first-plan")
    first = case.plan.changes[0]
    refused(case, case.with_changes(first, first), "it repeats change 1")


def test_a_replace_is_refused() -> None:
    case = load("first-plan")
    first = case.plan.changes[0]
    replace = dataclasses.replace(first, action=Action.REPLACE, before=first.after)
    refused(case, case.with_changes(replace), "topo never plans a replace of a topic")


def test_a_flow_change_is_on_its_flows_target() -> None:
    case = load("first-plan")
    flow = Change(Action.DELETE, Resource.FLOW, "east", "east->west", "stop", before={})
    refused(case, case.with_changes(flow), "must be on its flow's target cluster")


def test_a_plan_of_another_owner_is_refused() -> None:
    case = load("first-plan")
    with pytest.raises(GuardError, match="the plan's owner 'someone-else' is not the topology's"):
        case.check(dataclasses.replace(case.plan, owner="someone-else"))


def test_a_plan_for_other_clusters_is_refused_naming_the_cluster() -> None:
    case = load("first-plan")
    moved = dataclasses.replace(case.plan, clusters={**case.plan.clusters, "west": "evil:9092"})
    with pytest.raises(GuardError) as raised:
        case.check(moved)
    assert str(raised.value) == (
        "refusing to apply: the plan's clusters are not the topology's (cluster 'west' differs); "
        "nothing was changed"
    )


# -- wired into apply ----------------------------------------------------------------------------


def test_apply_runs_nothing_when_the_guard_refuses_any_change() -> None:
    west = with_topic(load("orphans-deleted").clusters["west"], PAYROLL)
    case = load("orphans-deleted", west=west)
    edited = case.adding(delete_topic("payroll"))  # the last change: all the others are fine
    ran: list[Change] = []
    with pytest.raises(GuardError):
        applying.run(edited, ran.append, guard=case.check)
    assert ran == []
    report = applying.run(case.plan, ran.append, guard=case.check)
    assert report.ok and ran == list(case.plan.changes)
