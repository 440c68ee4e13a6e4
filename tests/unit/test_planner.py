"""The planner on plain observed values: every rule, no broker."""

import pytest

from topology.core import analysis, naming
from topology.core.jobs import job_views
from topology.core.model import Topology
from topology.core.naming import RUNS_TOPIC, STATE_TOPIC
from topology.core.observed import Acl, Cluster, Owned, Topic
from topology.core.plan.planner import PlanError, plan
from topology.core.plan.values import Action, Change, Plan, Resource
from topology.core.render.plan_text import render as render_text

MIRROR = """
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
defaults: {replication_factor: 1}
flows:
  - mirror: {from: east, to: west}
    topics: {include: ["orders.*"]}
"""


def topology(text: str = MIRROR) -> Topology:
    result = analysis.analyse(text, "topology.yaml")
    assert result.ok, result.diagnostics
    assert result.topology is not None
    return result.topology


def cluster(
    name: str,
    *topics: Topic,
    acls: tuple[Acl, ...] | None = None,
    owned: tuple[Owned, ...] = (),
    brokers: int = 1,
) -> Cluster:
    if name == "east":  # every flow's source has these once applied
        topics = (internal("heartbeats"), internal(STATE_TOPIC), *topics)
    return Cluster(
        name=name,
        brokers=brokers,
        default_replication_factor=1,
        topics={t.name: t for t in topics},
        acls=acls,
        owned={o.key: o for o in owned},
    )


def internal(name: str) -> Topic:
    if name.endswith("heartbeats"):  # topo makes heartbeat topics and copies stamped on arrival
        return Topic(name, 1, 1, {"cleanup.policy": "compact", **ARRIVAL})
    return Topic(name, 1, 1, {"cleanup.policy": "compact"})


ARRIVAL = {"message.timestamp.type": "LogAppendTime"}


WEST_INTERNAL = (
    internal(STATE_TOPIC),
    internal(RUNS_TOPIC),  # west is the home cluster: the first edge's target
    internal("heartbeats"),
    internal("east.checkpoints.internal"),
    internal("topo-checkpoints.east.internal"),
    internal("topo-offset-syncs.east.internal"),
    internal("east.heartbeats"),  # east's heartbeats, copied like MM2's
)


def mine(name: str, *edges: str) -> Owned:
    """An ownership record this test's topology (topology.yaml) wrote."""
    return Owned("topic", name, edges or ("east->west",), owner="topology")


OWNED_INTERNAL = tuple(mine(t.name) for t in WEST_INTERNAL if t.name != STATE_TOPIC)


def make(text: str = MIRROR, allow_delete: bool = False, **clusters: Cluster) -> Plan:
    """The plan with every flow's job already running as specified: topics and ACLs only."""
    loaded = topology(text)
    running = job_views(loaded)
    return plan(
        loaded, clusters, topology_sha256="0" * 64, allow_delete=allow_delete, running=running
    )


def replica_changes(result: Plan) -> list[Change]:
    """The changes about data topics (not topo's internal ones)."""
    purposes = ("state", "runs", "heartbeats", "checkpoints", "topo-checkpoints", "offset-syncs")
    return [
        c
        for c in result.changes
        if not (c.after and c.after.get("purpose") in purposes) and "heartbeats" not in c.name
    ]


def test_first_plan_creates_copies_with_source_partitions_and_filtered_configs() -> None:
    orders = Topic("orders", 3, 1, {"retention.ms": "1000", "min.insync.replicas": "2"})
    result = make(east=cluster("east", orders, Topic("audit", 1, 1)), west=cluster("west"))
    [change] = replica_changes(result)
    assert (change.action, change.resource, change.cluster, change.name) == (
        Action.CREATE,
        Resource.TOPIC,
        "west",
        "east.orders",
    )
    assert change.after == {
        "partitions": 3,
        "replication_factor": 1,
        "configs": {"retention.ms": "1000"},  # min.insync.replicas is on MM2's exclude list
        "purpose": "replica",
        "sources": ["east/orders"],
    }
    assert change.edges == ("east->west",)
    created = {c.name for c in result.changes}
    assert created == {
        "east.orders",
        STATE_TOPIC,
        RUNS_TOPIC,
        "heartbeats",
        "east.checkpoints.internal",
        "topo-checkpoints.east.internal",
        "topo-offset-syncs.east.internal",
        "east.heartbeats",
    }
    assert result.changes[0].name == STATE_TOPIC  # ownership records need it first


def test_converged_clusters_plan_nothing() -> None:
    orders = Topic("orders", 3, 1, {"retention.ms": "1000"})
    west = cluster(
        "west",
        Topic("east.orders", 3, 1, {"retention.ms": "1000"}),
        *WEST_INTERNAL,
        owned=(mine("east.orders"), *OWNED_INTERNAL),
    )
    result = make(east=cluster("east", orders), west=west)
    assert result.empty and not result.notes


def test_a_copy_of_heartbeats_mm2_made_is_stamped_on_arrival_from_now_on() -> None:
    # MM2 does not copy message.timestamp.type: its east.heartbeats keeps the emit time, so no
    # latency could be read off it. Even with configs not synced, topo sets it.
    made_by_mm2 = Topic("east.heartbeats", 1, 1, {"cleanup.policy": "compact"})
    west = cluster(
        "west",
        *(t for t in WEST_INTERNAL if t.name != "east.heartbeats"),
        made_by_mm2,
        owned=OWNED_INTERNAL,
    )
    for text in (MIRROR, MIRROR + "    sync: {configs: false}\n"):
        [change] = make(text, east=cluster("east", internal("heartbeats")), west=west).changes
        assert (change.action, change.resource, change.name) == (
            Action.UPDATE,
            Resource.TOPIC_CONFIG,
            "east.heartbeats",
        )
        assert (change.before, change.after) == ({"message.timestamp.type": None}, ARRIVAL)
        assert change.reason.startswith("a copy of heartbeats is stamped by its broker on arrival")


def test_a_data_topic_that_merely_ends_in_heartbeats_keeps_its_copys_timestamps() -> None:
    # billing is no cluster of the topology: billing.heartbeats is the user's own topic
    text = MIRROR.replace('["orders.*"]', '["billing.*"]')
    billing = Topic("billing.heartbeats", 1, 1, {})
    west = cluster(
        "west",
        *WEST_INTERNAL,
        Topic("east.billing.heartbeats", 1, 1, {}),
        owned=(mine("east.billing.heartbeats"), *OWNED_INTERNAL),
    )
    assert make(text, east=cluster("east", billing, internal("heartbeats")), west=west).empty
    # nor is a new copy of it stamped on arrival
    fresh = cluster("west", *WEST_INTERNAL, owned=OWNED_INTERNAL)
    [created] = make(
        text, east=cluster("east", billing, internal("heartbeats")), west=fresh
    ).changes
    assert created.name == "east.billing.heartbeats"
    assert created.after is not None
    assert "message.timestamp.type" not in created.after["configs"]


TARGET_ONLY = {"min.insync.replicas": "2"}


def test_drifted_configs_are_updated_incrementally_with_old_and_new_values() -> None:
    orders = Topic("orders", 3, 1, {"retention.ms": "2000", "cleanup.policy": "compact"})
    west = cluster(
        "west",
        Topic("east.orders", 3, 1, {"retention.ms": "1000", "segment.ms": "5", **TARGET_ONLY}),
        *WEST_INTERNAL,
        owned=(mine("east.orders"), *OWNED_INTERNAL),
    )
    [change] = make(east=cluster("east", orders), west=west).changes
    assert (change.action, change.resource) == (Action.UPDATE, Resource.TOPIC_CONFIG)
    # segment.ms is not set on the source: back to the default, like MM2's use.defaults.from;
    # min.insync.replicas is never synced, so the target's own value stays.
    assert change.before == {"cleanup.policy": None, "retention.ms": "1000", "segment.ms": "5"}
    assert change.after == {"cleanup.policy": "compact", "retention.ms": "2000", "segment.ms": None}


def test_partitions_grow_with_the_source_and_never_shrink() -> None:
    west = cluster(
        "west",
        Topic("east.orders", 3, 1),
        Topic("east.orders2", 8, 1),
        *WEST_INTERNAL,
        owned=(
            mine("east.orders"),
            mine("east.orders2"),
            *OWNED_INTERNAL,
        ),
    )
    east = cluster("east", Topic("orders", 6, 1), Topic("orders2", 4, 1))
    result = make(east=east, west=west)
    [change] = result.changes
    assert (change.resource, change.name, change.before, change.after) == (
        Resource.PARTITIONS,
        "east.orders",
        {"partitions": 3},
        {"partitions": 6},
    )
    [note] = result.notes
    assert note.name == "east.orders2" and "never removed" in note.message


def test_acls_follow_mm2_rules() -> None:
    def acl(name: str, operation: str, permission: str = "ALLOW", pattern: str = "LITERAL") -> Acl:
        return Acl("TOPIC", name, pattern, "User:app", "*", operation, permission)

    source_acls = (
        acl("orders", "READ"),
        acl("orders", "WRITE"),  # ALLOW WRITE: skipped
        acl("orders", "ALL"),  # ALLOW ALL: becomes READ (already there once)
        acl("orders", "WRITE", "DENY"),  # DENY copied as is
        acl("orders", "READ", pattern="PREFIXED"),  # only literal ACLs
        acl("audit", "READ"),  # its topic is not replicated
    )
    east = cluster("east", Topic("orders", 1, 1), Topic("audit", 1, 1), acls=source_acls)
    result = make(east=east, west=cluster("west", acls=()))
    acls = [c.after for c in result.changes if c.resource is Resource.ACL]
    assert acls == [
        acl("east.orders", "READ").to_dict(),
        acl("east.orders", "WRITE", "DENY").to_dict(),
    ]


def test_acls_are_not_synced_into_a_cluster_without_an_authorizer() -> None:
    east = cluster(
        "east",
        Topic("orders", 1, 1),
        acls=(Acl("TOPIC", "orders", "LITERAL", "User:a", "*", "READ", "ALLOW"),),
    )
    result = make(east=east, west=cluster("west", acls=None))
    assert not [c for c in result.changes if c.resource is Resource.ACL]
    assert any("no authorizer" in note.message for note in result.notes)


def test_topics_topo_does_not_manage_are_left_alone() -> None:
    east = cluster(
        "east",
        Topic("payments", 1, 1),
        Topic("__consumer_offsets", 50, 1),
        Topic("orders.internal", 1, 1),
    )
    west = cluster(
        "west", Topic("payments", 9, 1, {"retention.ms": "1"}), Topic("east.payments", 1, 1)
    )
    result = make(east=east, west=west)
    assert replica_changes(result) == []
    assert not result.notes


def test_an_existing_copy_is_adopted_and_synced() -> None:
    east = cluster("east", Topic("orders", 2, 1, {"retention.ms": "5"}))
    west = cluster("west", Topic("east.orders", 1, 1), *WEST_INTERNAL, owned=OWNED_INTERNAL)
    result = make(east=east, west=west)
    kinds = [(c.action, c.resource) for c in result.changes]
    assert kinds == [
        (Action.CREATE, Resource.OWNERSHIP),
        (Action.UPDATE, Resource.PARTITIONS),
        (Action.UPDATE, Resource.TOPIC_CONFIG),
    ]
    assert "adopts" in result.changes[0].reason


def test_orphans_are_kept_unless_deletes_are_allowed() -> None:
    west = cluster(
        "west",
        Topic("east.orders", 1, 1),
        *WEST_INTERNAL,
        owned=(mine("east.orders"), *OWNED_INTERNAL),
    )
    east = cluster("east")  # the source topic was deleted
    kept = make(east=east, west=west)
    assert kept.empty
    [note] = kept.notes
    assert note.name == "east.orders" and "--allow-delete" in note.message
    deleted = make(east=east, west=west, allow_delete=True)
    [change] = deleted.changes
    assert (change.action, change.resource, change.name) == (
        Action.DELETE,
        Resource.TOPIC,
        "east.orders",
    )
    assert "data will be lost" in change.reason


def test_removed_flow_orphans_everything_it_made_on_its_target() -> None:
    no_flows = MIRROR.split("flows:")[0] + "flows: []\n"
    west = cluster(
        "west",
        Topic("east.orders", 1, 1),
        *WEST_INTERNAL,
        owned=(mine("east.orders"), *OWNED_INTERNAL),
    )
    result = make(
        no_flows, allow_delete=True, east=cluster("east", Topic("orders", 1, 1)), west=west
    )
    deleted = sorted(c.name for c in result.changes)
    # topo-runs.internal holds every topology's run state: never deleted, whoever made it.
    made = [o.name for o in OWNED_INTERNAL if o.name not in naming.NEVER_DELETED]
    assert deleted == sorted(["east.orders", *made])
    assert "topo-runs.internal" in {o.name for o in OWNED_INTERNAL}
    assert all("east->west no longer exists" in c.reason for c in result.changes)


def test_identity_active_active_never_syncs_a_copy_back_to_its_origin() -> None:
    text = MIRROR.replace(
        '- mirror: {from: east, to: west}\n    topics: {include: ["orders.*"]}',
        '- active-active: [east, west]\n    naming: identity\n    topics: {include: ["orders"]}',
    )
    east = cluster("east", Topic("orders", 2, 1, {"retention.ms": "9"}))
    first = make(text, east=east, west=cluster("west"))
    [copy] = replica_changes(first)
    assert copy.after is not None
    assert (copy.cluster, copy.name, copy.after["configs"]) == (
        "west",
        "orders",
        {"retention.ms": "9"},
    )
    # After apply west's copy is owned by east->west; a later change on east flows one way only.
    east = cluster("east", Topic("orders", 2, 1, {"retention.ms": "10"}))
    west = cluster(
        "west",
        Topic("orders", 2, 1, {"retention.ms": "9"}),
        owned=(mine("orders"),),
    )
    changes = [c for c in replica_changes(make(text, east=east, west=west)) if c.name == "orders"]
    assert [(c.cluster, c.after) for c in changes] == [("west", {"retention.ms": "10"})]


def test_aggregation_takes_the_largest_partition_count_and_only_agreed_configs() -> None:
    text = """
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
  central: {bootstrap: "127.0.0.1:9003"}
defaults: {replication_factor: 1}
flows:
  - aggregate: {from: [east, west], into: central}
    naming: identity
    topics: {include: ["clicks"]}
"""
    east = cluster("east", Topic("clicks", 2, 1, {"retention.ms": "1", "segment.ms": "7"}))
    west = cluster("west", Topic("clicks", 4, 1, {"retention.ms": "2", "segment.ms": "7"}))
    result = make(text, east=east, west=west, central=cluster("central"))
    [change] = replica_changes(result)
    assert change.after is not None
    assert (change.after["partitions"], change.after["configs"]) == (4, {"segment.ms": "7"})
    assert change.edges == ("east->central", "west->central")
    [note] = result.notes
    assert "retention.ms" in note.message and "east/clicks: 1" in note.message


def test_replication_factor_above_the_broker_count_is_refused() -> None:
    text = MIRROR.replace("replication_factor: 1", "replication_factor: 3")
    with pytest.raises(PlanError, match="replication factor 3 is more than the 1 broker"):
        make(text, east=cluster("east"), west=cluster("west"))


def test_fingerprint_changes_only_when_something_the_plan_read_changes() -> None:
    base = make(east=cluster("east", Topic("orders", 1, 1)), west=cluster("west"))
    unrelated = make(
        east=cluster("east", Topic("orders", 1, 1), Topic("audit", 1, 1)), west=cluster("west")
    )
    grown = make(east=cluster("east", Topic("orders", 2, 1)), west=cluster("west"))
    added = make(
        east=cluster("east", Topic("orders", 1, 1), Topic("orders2", 1, 1)), west=cluster("west")
    )
    assert base.observed_sha256 == unrelated.observed_sha256
    assert len({base.observed_sha256, grown.observed_sha256, added.observed_sha256}) == 3
    # The fingerprint covers the whole plan, what was read included.
    assert base.fingerprint == unrelated.fingerprint
    assert len({base.fingerprint, grown.fingerprint, added.fingerprint}) == 3


def test_another_topologys_topics_are_neither_synced_nor_orphaned() -> None:
    theirs = Owned("topic", "east.orders", ("east->west",), owner="payments-team")
    leftover = Owned("topic", "east.legacy", ("east->west",), owner="payments-team")
    west = cluster(
        "west",
        Topic("east.orders", 1, 1),
        Topic("east.legacy", 1, 1),
        *WEST_INTERNAL,
        owned=(theirs, leftover, *OWNED_INTERNAL),
    )
    result = make(allow_delete=True, east=cluster("east", Topic("orders", 4, 1)), west=west)
    assert result.empty
    [note] = result.notes
    assert note.name == "east.orders" and "payments-team" in note.message


def test_under_identity_naming_an_existing_same_named_topic_is_merged_into_not_adopted() -> None:
    text = MIRROR.replace("topics: {include:", "naming: identity\n    topics: {include:")
    east = cluster("east", Topic("orders", 4, 1, {"retention.ms": "5"}))
    west = cluster(
        "west", Topic("orders", 2, 1, {"retention.ms": "99"}), *WEST_INTERNAL, owned=OWNED_INTERNAL
    )
    result = make(text, east=east, west=west)
    # Partitions grow so every record keeps its partition; its configs and ownership stay.
    assert [(c.action, c.resource) for c in result.changes] == [
        (Action.UPDATE, Resource.PARTITIONS)
    ]
    assert any("merges into the existing topic" in note.message for note in result.notes)


def test_pausing_a_flow_and_resuming_it_are_said_as_such() -> None:
    clusters = {"east": cluster("east"), "west": cluster("west", *WEST_INTERNAL)}
    paused_file = topology(MIRROR.replace('["orders.*"]}', '["orders.*"]}\n    paused: true'))
    [added] = [
        c
        for c in plan(paused_file, clusters, topology_sha256="0" * 64).changes
        if c.resource is Resource.FLOW
    ]
    assert added.reason.startswith("add, paused (at-least-once, from east to west)")
    assert added.after is not None and added.after["paused"] is True
    first = plan(topology(), clusters, topology_sha256="0" * 64)
    [start] = [c for c in first.changes if c.resource is Resource.FLOW]
    assert start.after is not None
    paused = plan(
        paused_file, clusters, topology_sha256="0" * 64, running={"east->west": start.after}
    )
    [pause] = [c for c in paused.changes if c.resource is Resource.FLOW]
    assert (pause.action, pause.reason) == (
        Action.UPDATE,
        "pause: its copy slots stop with their positions committed (topo reset may move them)",
    )
    resumed = plan(
        topology(), clusters, topology_sha256="0" * 64, running={"east->west": added.after}
    )
    [resume] = [c for c in resumed.changes if c.resource is Resource.FLOW]
    assert resume.reason == "resume: it copies again from its committed positions"
    both = topology(
        MIRROR.replace('["orders.*"]}', '["orders.*"]}\n    paused: true\n    tasks: 3')
    )
    [changed] = [
        c
        for c in plan(
            both, clusters, topology_sha256="0" * 64, running={"east->west": start.after}
        ).changes
        if c.resource is Resource.FLOW
    ]
    assert changed.reason.endswith("; tasks changed too")


def test_each_flow_without_a_running_job_is_started_and_a_changed_one_restarted() -> None:
    loaded = topology()
    clusters = {"east": cluster("east"), "west": cluster("west", *WEST_INTERNAL)}
    first = plan(loaded, clusters, topology_sha256="0" * 64)
    [start] = [c for c in first.changes if c.resource is Resource.FLOW]
    assert (start.action, start.cluster, start.name) == (Action.CREATE, "west", "east->west")
    assert start.after is not None and start.after["topics"]["include"] == ["orders.*"]
    filtered = topology(
        MIRROR.replace('["orders.*"]}', '["orders.*"]}\n    filter: "key IS NOT NULL"')
    )
    running = {"east->west": start.after}
    again = plan(filtered, clusters, topology_sha256="0" * 64, running=running)
    [restart] = [c for c in again.changes if c.resource is Resource.FLOW]
    assert restart.action is Action.UPDATE
    assert restart.reason == "restart: record_filter changed"
    assert restart.after is not None and restart.after["record_filter"] == "key IS NOT NULL"
    assert (
        first.observed_sha256
        != plan(loaded, clusters, topology_sha256="0" * 64, running=running).observed_sha256
    )


def test_a_comment_changes_no_job_and_an_engine_setting_restarts_every_job() -> None:
    """The jobs compared are what the driver runs, not the file's bytes: a comment leaves
    them equal, an `engine:` edit is `~ replication job` with the engine's before and after."""
    clusters = {"east": cluster("east"), "west": cluster("west", *WEST_INTERNAL)}
    running = job_views(topology())
    commented = topology("# reviewed in PR 12\n" + MIRROR.replace("flows:", "flows:  # two"))

    def flow_changes(made: Topology) -> list[Change]:
        planned = plan(made, clusters, topology_sha256="1" * 64, running=running)
        return [c for c in planned.changes if c.resource is Resource.FLOW]

    assert flow_changes(commented) == []
    moved = topology(MIRROR + "engine: {metrics: {port: 9470}, master: 'local[4]'}\n")
    [restart] = flow_changes(moved)
    assert (restart.action, restart.name) == (Action.UPDATE, "east->west")
    assert restart.reason == "restart: engine changed"
    assert restart.before is not None and restart.after is not None
    assert restart.before["engine"]["metrics"]["port"] == 9464
    assert restart.after["engine"]["metrics"]["port"] == 9470
    shown = render_text(plan(moved, clusters, topology_sha256="2" * 64, running=running).to_dict())
    assert "~ replication job east->west" in shown
    assert "~ engine.metrics.port: 9464 → 9470" in shown
    assert '~ engine.master:       "local[*]" → "local[4]"' in shown
    # how the job reaches its clusters is part of it too
    elsewhere = topology(MIRROR.replace("127.0.0.1:9002", "10.0.0.2:9092"))
    [moved_target] = flow_changes(elsewhere)
    assert moved_target.reason == "restart: clusters changed"


def test_a_running_job_whose_flow_was_removed_is_stopped() -> None:
    loaded = topology()
    running = job_views(loaded)
    running["east->gone"] = {**running["east->west"], "flow": "east->gone", "target": "gone"}
    result = plan(
        loaded,
        {"east": cluster("east"), "west": cluster("west", *WEST_INTERNAL)},
        topology_sha256="0" * 64,
        running=running,
    )
    [stop] = [c for c in result.changes if c.resource is Resource.FLOW]
    assert (stop.action, stop.name, stop.after) == (Action.DELETE, "east->gone", None)
    assert stop.phase < result.changes[-1].phase or stop is result.changes[-1]


def test_the_sources_heartbeats_and_their_copy_are_planned_together_so_one_apply_converges() -> (
    None
):
    loaded = topology()
    result = plan(
        loaded,
        {"east": Cluster("east", 1, 1, {}, None), "west": cluster("west")},
        topology_sha256="0" * 64,
    )
    created = {(c.cluster, c.name) for c in result.changes if c.resource is Resource.TOPIC}
    assert {("east", "heartbeats"), ("west", "east.heartbeats"), ("west", "heartbeats")} <= created
    none = topology(MIRROR.replace("version: 1", "version: 1\nengine: {runner: none}"))
    quiet = plan(
        none,
        {"east": Cluster("east", 1, 1, {}, None), "west": cluster("west")},
        topology_sha256="0" * 64,
    )
    assert not [c for c in quiet.changes if "heartbeats" in c.name or c.resource is Resource.FLOW]


def test_the_run_state_topic_is_planned_on_the_home_cluster_when_something_runs() -> None:
    def runs(text: str, **clusters: Cluster) -> list[Change]:
        found = plan(topology(text), clusters, topology_sha256="0" * 64)
        return [c for c in found.changes if c.name == RUNS_TOPIC]

    east, west = cluster("east"), cluster("west")
    [change] = runs(MIRROR, east=east, west=west)
    assert (change.action, change.resource, change.cluster) == (
        Action.CREATE,
        Resource.TOPIC,
        "west",  # the first edge's target
    )
    assert change.after == {
        "partitions": 1,
        "replication_factor": 1,
        "configs": {
            "cleanup.policy": "compact",
            "message.timestamp.type": "LogAppendTime",
            "segment.ms": "3600000",
            "min.cleanable.dirty.ratio": "0.1",
            "min.compaction.lag.ms": "3600000",
        },
        "purpose": "runs",
        "sources": [],
    }
    assert change.edges == ("east->west",)
    assert "jobs, lease, status and stop requests" in change.reason
    # engine.state_cluster moves it, and the state topic that records it comes along (without
    # heartbeats nothing else wants one on the source).
    text = MIRROR.replace("version: 1", "version: 1\nengine: {state_cluster: east}")
    text += "    emit: {heartbeats: false}\n"
    bare_east = Cluster("east", 1, 1, {"orders": Topic("orders", 1, 1)}, None)
    [moved] = runs(text, east=bare_east, west=west)
    assert moved.cluster == "east"
    created = plan(topology(text), {"east": bare_east, "west": west}, topology_sha256="0" * 64)
    assert ("east", STATE_TOPIC) in {(c.cluster, c.name) for c in created.changes}
    # Nothing runs: no run state.
    assert (
        runs(
            MIRROR.replace("version: 1", "version: 1\nengine: {runner: none}"), east=east, west=west
        )
        == []
    )
    # Already there: left as it is, like every internal topic.
    assert runs(MIRROR, east=east, west=cluster("west", internal(RUNS_TOPIC))) == []


def test_a_running_job_may_create_and_grow_copies_but_never_delete_or_stop() -> None:
    def change(action: Action, resource: Resource) -> Change:
        return Change(action, resource, "west", "east.orders", "test")

    assert change(Action.CREATE, Resource.TOPIC).unattended
    assert change(Action.UPDATE, Resource.PARTITIONS).unattended
    assert change(Action.UPDATE, Resource.TOPIC_CONFIG).unattended
    assert not change(Action.DELETE, Resource.TOPIC).unattended
    assert not change(Action.CREATE, Resource.FLOW).unattended
