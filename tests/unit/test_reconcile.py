"""Reconcile, the one path `topo apply` and the running replication driver share: plain
observed clusters in, a recording (or failing) fake in place of the Kafka adapter."""

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from tests.unit.test_plan_guard import PAYROLL, delete_topic
from tests.unit.test_planner import OWNED_INTERNAL, WEST_INTERNAL, cluster, internal, mine, topology
from topology.core.errors import StalePlanError, TopoError
from topology.core.jobs import job_views
from topology.core.model import Topology
from topology.core.naming import STATE_TOPIC
from topology.core.observed import Cluster, Owned, Topic
from topology.core.plan import planner
from topology.core.plan.guard import GuardError
from topology.core.plan.values import Action, Change, Plan, Resource
from topology.ops import reconcile
from topology.ops.reconcile import Applied

SHA = "0" * 64
NOW = 1_700_000_000.0


def running_jobs(loaded: Topology) -> dict[str, dict[str, Any]]:
    """Every flow's job running as the topology wants it: no flow change planned."""
    return job_views(loaded)


def converged_west(*topics: Topic, owned: tuple[Owned, ...] = ()) -> Cluster:
    """west after an apply: topo's internal topics there and recorded as its own."""
    return cluster("west", *topics, *WEST_INTERNAL, owned=(*owned, *OWNED_INTERNAL))


def without_heartbeats(*topics: Topic) -> Cluster:
    """east before its heartbeats topic was made: a change on east as well as on west."""
    return Cluster("east", 1, 1, {t.name: t for t in (internal(STATE_TOPIC), *topics)}, None)


class Recorder:
    """The `run_change` adapter: records every change; raises for the names in `failing`."""

    def __init__(self, failing: Mapping[str, str] | None = None) -> None:
        self.calls: list[Change] = []
        self.failing = dict(failing or {})

    def __call__(self, change: Change) -> None:
        self.calls.append(change)
        if change.name in self.failing:
            raise TopoError(self.failing[change.name])

    @property
    def done(self) -> list[tuple[Action, Resource, str, str]]:
        return [(c.action, c.resource, c.cluster, c.name) for c in self.calls]


def follow(
    clusters: Mapping[str, Cluster],
    run_change: Recorder,
    *,
    loaded: Topology | None = None,
    running: Mapping[str, Mapping[str, Any]] | None = None,
) -> reconcile.Followed:
    loaded = loaded or topology()
    return reconcile.follow(
        loaded,
        SHA,
        observe=lambda: clusters,
        run_change=run_change,
        running=running_jobs(loaded) if running is None else running,
        clock=lambda: NOW,
    )


# -- follow: what the running driver does on its own ---------------------------------------------


def test_follow_creates_the_copy_of_a_new_source_topic_and_records_it() -> None:
    orders = Topic("orders", 3, 1, {"retention.ms": "1000"})
    recorder = Recorder()
    followed = follow({"east": cluster("east", orders), "west": converged_west()}, recorder)
    assert recorder.done == [(Action.CREATE, Resource.TOPIC, "west", "east.orders")]
    [created] = recorder.calls
    assert created.after is not None
    assert (created.after["partitions"], created.after["configs"]) == (3, {"retention.ms": "1000"})
    [applied] = followed.applied
    assert isinstance(applied, Applied)
    assert (
        applied.at,
        applied.cluster,
        applied.action,
        applied.resource,
        applied.name,
        applied.reason,
        applied.outcome,
        applied.detail,
    ) == (
        NOW,
        "west",
        "create",
        "topic",
        "east.orders",
        "replicated from east/orders by east->west",
        "done",
        "",
    )
    assert followed.applied[0].reason == created.reason
    assert followed.applied[0].to_dict()["outcome"] == "done"
    assert followed.plan.changes == (created,)
    assert followed.left == ()
    assert followed.failed == set()


def test_follow_creates_new_copies_together_as_apply_does() -> None:
    first, second = Topic("orders.a", 3, 1, {}), Topic("orders.b", 1, 1, {})
    loaded = topology()
    together: list[list[str]] = []

    def run_together(creations: Any) -> list[str | None]:
        together.append([c.name for c in creations])
        return [None, "creating topic east.orders.b on west failed: the topic already exists"]

    followed = reconcile.follow(
        loaded,
        SHA,
        observe=lambda: {"east": cluster("east", first, second), "west": converged_west()},
        run_change=Recorder(),
        running=running_jobs(loaded),
        clock=lambda: NOW,
        run_together=run_together,
    )
    assert together == [["east.orders.a", "east.orders.b"]]
    assert [(a.name, a.outcome) for a in followed.applied] == [
        ("east.orders.a", "done"),
        ("east.orders.b", "failed"),
    ]
    assert "already exists" in followed.applied[1].detail


def test_follow_executes_the_unattended_changes_in_plan_order_on_every_cluster() -> None:
    # east lacks its heartbeats topic (an internal topic of the flow) and has two new topics.
    east = without_heartbeats(Topic("orders.a", 1, 1), Topic("orders.b", 2, 1))
    recorder = Recorder()
    followed = follow({"east": east, "west": converged_west()}, recorder)
    assert recorder.calls == list(followed.plan.changes)  # all of it, in the plan's order
    assert recorder.done == [
        (Action.CREATE, Resource.TOPIC, "east", "heartbeats"),
        (Action.CREATE, Resource.TOPIC, "west", "east.orders.a"),
        (Action.CREATE, Resource.TOPIC, "west", "east.orders.b"),
    ]
    assert [(a.cluster, a.name, a.outcome) for a in followed.applied] == [
        ("east", "heartbeats", "done"),
        ("west", "east.orders.a", "done"),
        ("west", "east.orders.b", "done"),
    ]
    assert [a.reason for a in followed.applied] == [c.reason for c in recorder.calls]


def test_follow_never_starts_a_flow_even_when_no_job_is_running() -> None:
    east = cluster("east", Topic("orders", 1, 1))
    recorder = Recorder()
    followed = follow({"east": east, "west": converged_west()}, recorder, running={})
    [start] = [c for c in followed.plan.changes if c.resource is Resource.FLOW]
    assert (start.action, start.name) == (Action.CREATE, "east->west")  # the plan has it...
    assert recorder.done == [(Action.CREATE, Resource.TOPIC, "west", "east.orders")]  # ...not run
    assert all(c.resource is not Resource.FLOW for c in recorder.calls)
    assert [a.name for a in followed.applied] == ["east.orders"]
    assert start not in followed.left  # a job start is the driver's own business, not apply's


def test_follow_never_stops_the_job_of_a_removed_flow() -> None:
    loaded = topology()
    running = running_jobs(loaded)
    running["east->gone"] = {**running["east->west"], "flow": "east->gone", "target": "gone"}
    recorder = Recorder()
    followed = follow(
        {"east": cluster("east"), "west": converged_west()}, recorder, running=running
    )
    [stop] = followed.plan.changes
    assert (stop.action, stop.resource, stop.name) == (Action.DELETE, Resource.FLOW, "east->gone")
    assert recorder.calls == []
    assert followed.applied == ()
    assert followed.left == ()


def test_follow_never_plans_with_allow_delete_and_leaves_orphans_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[bool] = []
    real = planner.plan

    def spy(*args: Any, **kwargs: Any) -> Plan:
        asked.append(kwargs["allow_delete"])
        return real(*args, **kwargs)

    monkeypatch.setattr(planner, "plan", spy)
    # The source topic was deleted: its copy is an orphan only `apply --allow-delete` removes.
    west = converged_west(Topic("east.orders", 1, 1), owned=(mine("east.orders"),))
    recorder = Recorder()
    followed = follow({"east": cluster("east"), "west": west}, recorder)
    assert asked == [False]
    assert followed.plan.allow_delete is False
    assert followed.plan.changes == ()
    assert recorder.calls == []
    [note] = followed.plan.notes
    assert note.name == "east.orders" and "--allow-delete" in note.message


def test_follow_leaves_a_delete_the_plan_holds_to_apply() -> None:
    # An ownership record whose topic is gone: the planner deletes the record even without
    # --allow-delete; that is still a delete, never made unattended.
    west = converged_west(owned=(mine("east.orders"),))
    recorder = Recorder()
    followed = follow({"east": cluster("east"), "west": west}, recorder)
    [record] = followed.plan.changes
    assert (record.action, record.resource, record.name) == (
        Action.DELETE,
        Resource.OWNERSHIP,
        "east.orders",
    )
    assert recorder.calls == []
    assert followed.applied == ()
    assert followed.left == (record,)


def test_follow_syncs_a_changed_source_config_to_the_copy() -> None:
    east = cluster("east", Topic("orders", 3, 1, {"retention.ms": "2000"}))
    west = converged_west(
        Topic("east.orders", 3, 1, {"retention.ms": "1000"}), owned=(mine("east.orders"),)
    )
    recorder = Recorder()
    followed = follow({"east": east, "west": west}, recorder)
    [update] = recorder.calls
    assert (update.action, update.resource, update.cluster, update.name) == (
        Action.UPDATE,
        Resource.TOPIC_CONFIG,
        "west",
        "east.orders",
    )
    assert (update.before, update.after) == ({"retention.ms": "1000"}, {"retention.ms": "2000"})
    [applied] = followed.applied
    assert (applied.action, applied.resource, applied.outcome, applied.reason) == (
        "update",
        "topic_config",
        "done",
        update.reason,
    )
    assert applied.to_dict()["what"] == "retention.ms: 1000 -> 2000"


def test_follow_grows_the_copy_when_the_source_gains_partitions() -> None:
    east = cluster("east", Topic("orders", 6, 1))
    west = converged_west(Topic("east.orders", 3, 1), owned=(mine("east.orders"),))
    recorder = Recorder()
    followed = follow({"east": east, "west": west}, recorder)
    [grow] = recorder.calls
    assert (grow.action, grow.resource, grow.name) == (
        Action.UPDATE,
        Resource.PARTITIONS,
        "east.orders",
    )
    assert (grow.before, grow.after) == ({"partitions": 3}, {"partitions": 6})
    [applied] = followed.applied
    assert (applied.resource, applied.outcome) == ("partitions", "done")
    assert applied.to_dict()["what"] == "partitions: 3 -> 6"


def test_follow_does_nothing_on_converged_clusters() -> None:
    east = cluster("east", Topic("orders", 3, 1, {"retention.ms": "1000"}))
    west = converged_west(
        Topic("east.orders", 3, 1, {"retention.ms": "1000"}), owned=(mine("east.orders"),)
    )
    recorder = Recorder()
    followed = follow({"east": east, "west": west}, recorder)
    assert followed.plan.empty
    assert (recorder.calls, followed.applied, followed.left) == ([], (), ())


def test_a_failed_change_stops_its_cluster_and_is_reported_with_its_detail() -> None:
    east = without_heartbeats(Topic("orders.a", 1, 1), Topic("orders.b", 1, 1))
    recorder = Recorder(failing={"east.orders.a": "west: not authorized to create topics"})
    followed = follow({"east": east, "west": converged_west()}, recorder)
    # east's change runs; west's first fails, and west's next is not tried at all.
    assert recorder.done == [
        (Action.CREATE, Resource.TOPIC, "east", "heartbeats"),
        (Action.CREATE, Resource.TOPIC, "west", "east.orders.a"),
    ]
    assert [(a.cluster, a.name, a.outcome) for a in followed.applied] == [
        ("east", "heartbeats", "done"),
        ("west", "east.orders.a", "failed"),
        ("west", "east.orders.b", "not attempted"),
    ]
    failed, skipped = followed.applied[1:]
    assert failed.detail == "west: not authorized to create topics"
    assert "an earlier change on west failed" in skipped.detail
    assert skipped.reason == "replicated from east/orders.b by east->west"
    assert followed.failed == {("west", "east.orders.a"), ("west", "east.orders.b")}


# -- a saved plan against the plan made now ------------------------------------------------------


def planned(east: Cluster, west: Cluster, allow_delete: bool = False) -> reconcile.Planned:
    loaded = topology()
    return reconcile.plan_now(
        loaded,
        SHA,
        {"east": east, "west": west},
        running=running_jobs(loaded),
        allow_delete=allow_delete,
    )


def test_check_current_accepts_the_same_plan() -> None:
    east = cluster("east", Topic("orders", 2, 1))
    saved = planned(east, converged_west()).plan
    fresh = planned(east, converged_west()).plan
    assert not saved.empty
    reconcile.check_current(saved, fresh, "plan.json")  # no error


def test_check_current_refuses_a_plan_made_before_the_clusters_changed() -> None:
    saved = planned(cluster("east", Topic("orders", 2, 1)), converged_west()).plan
    fresh = planned(cluster("east", Topic("orders", 4, 1)), converged_west()).plan
    assert fresh.observed_sha256 != saved.observed_sha256
    with pytest.raises(StalePlanError, match=r"^stale plan: ") as raised:
        reconcile.check_current(saved, fresh, "plan.json")
    message = str(raised.value)
    assert "plan.json" in message and "1 to create" in message and message.endswith("plan again")


def test_check_current_refuses_an_edited_change_list() -> None:
    east = cluster("east", Topic("orders", 2, 1), Topic("orders.b", 1, 1))
    fresh = planned(east, converged_west()).plan
    dropped = dataclasses.replace(fresh, changes=fresh.changes[1:])
    reworded = dataclasses.replace(
        fresh,
        changes=(dataclasses.replace(fresh.changes[0], reason="trust me"), *fresh.changes[1:]),
    )
    for edited in (dropped, reworded):
        assert edited.observed_sha256 == fresh.observed_sha256
        with pytest.raises(StalePlanError, match=r"^stale or edited plan: plan\.json "):
            reconcile.check_current(edited, fresh, "plan.json")
    with pytest.raises(StalePlanError, match="its reason is not what topo plans now"):
        reconcile.check_current(reworded, fresh, "plan.json")


def test_a_stale_plan_is_a_topo_error() -> None:
    assert issubclass(StalePlanError, TopoError)


# -- execute: the guard first, then every change -------------------------------------------------


def test_execute_runs_a_plan_the_planner_made() -> None:
    made = planned(cluster("east", Topic("orders", 2, 1)), converged_west())
    recorder = Recorder()
    started: list[tuple[int, int, str]] = []
    report = reconcile.execute(
        made.plan,
        made,
        topology(),
        recorder,
        on_start=lambda number, total, change: started.append((number, total, change.name)),
    )
    assert report.ok and report.total == 1
    assert recorder.calls == list(made.plan.changes)
    assert started == [(1, 1, "east.orders")]


def test_execute_refuses_a_forged_delete_and_runs_nothing() -> None:
    # payroll on west is not topo's: no ownership record says this topology made it.
    west = converged_west(PAYROLL)
    made = planned(cluster("east", Topic("orders", 2, 1)), west, allow_delete=True)
    forged = dataclasses.replace(made.plan, changes=(*made.plan.changes, delete_topic("payroll")))
    recorder = Recorder()
    with pytest.raises(GuardError, match="topo did not create this topic") as raised:
        reconcile.execute(forged, made, topology(), recorder)
    assert str(raised.value).endswith("nothing was changed")
    assert recorder.calls == []  # not even the legitimate create before it


def test_execute_refuses_a_change_the_planner_would_not_make() -> None:
    made = planned(cluster("east", Topic("orders", 2, 1)), converged_west())
    [create] = made.plan.changes
    assert create.after is not None
    bigger = dataclasses.replace(create, after={**create.after, "partitions": 99})
    recorder = Recorder()
    with pytest.raises(GuardError):
        reconcile.execute(
            dataclasses.replace(made.plan, changes=(bigger,)), made, topology(), recorder
        )
    assert recorder.calls == []


# -- unattended ----------------------------------------------------------------------------------


def test_unattended_keeps_only_what_a_running_job_may_do_in_order() -> None:
    def change(action: Action, resource: Resource, name: str) -> Change:
        return Change(action, resource, "west", name, "test")

    kept = [
        change(Action.CREATE, Resource.TOPIC, "a"),
        change(Action.UPDATE, Resource.PARTITIONS, "b"),
        change(Action.UPDATE, Resource.TOPIC_CONFIG, "c"),
        change(Action.CREATE, Resource.ACL, "d"),
    ]
    dropped = [
        change(Action.DELETE, Resource.TOPIC, "x"),
        change(Action.DELETE, Resource.ACL, "y"),
        change(Action.DELETE, Resource.OWNERSHIP, "z"),
        change(Action.CREATE, Resource.FLOW, "east->west"),
        change(Action.UPDATE, Resource.FLOW, "east->west"),
    ]
    x, y, z, start, restart = dropped
    mixed = (x, kept[0], start, kept[1], y, kept[2], restart, kept[3], z)
    whole = dataclasses.replace(planned(cluster("east"), converged_west()).plan, changes=mixed)
    part = reconcile.unattended(whole)
    assert part.changes == tuple(kept)
    # Everything else about the plan is kept as it was.
    assert dataclasses.replace(part, changes=whole.changes) == whole
    assert reconcile.unattended(part) == part


class FakeKafka:
    """Clusters held in memory; `run_change` makes topic creates, partition growth and config
    updates on them the way the Kafka adapter does (a create also writes its ownership)."""

    def __init__(self, owner: str, **clusters: Cluster) -> None:
        self.owner = owner
        self.clusters = dict(clusters)

    def observe(self) -> dict[str, Cluster]:
        return dict(self.clusters)

    def run_change(self, change: Change) -> None:
        on = self.clusters[change.cluster]
        topics, owned = dict(on.topics), dict(on.owned)
        after = change.after or {}
        if (change.action, change.resource) == (Action.CREATE, Resource.TOPIC):
            topics[change.name] = Topic(
                change.name, after["partitions"], after["replication_factor"], after["configs"]
            )
            record = Owned("topic", change.name, change.edges, owner=self.owner)
            owned[record.key] = record
        elif change.resource is Resource.PARTITIONS:
            topic = topics[change.name]
            topics[change.name] = dataclasses.replace(topic, partitions=after["partitions"])
        elif change.resource is Resource.TOPIC_CONFIG:
            topic = topics[change.name]
            configs = {**topic.configs, **after}
            configs = {key: value for key, value in configs.items() if value is not None}
            topics[change.name] = dataclasses.replace(topic, configs=configs)
        else:
            raise AssertionError(f"the driver should not have made {change}")
        self.clusters[change.cluster] = dataclasses.replace(on, topics=topics, owned=owned)


def test_following_converges_and_the_next_round_has_nothing_to_do() -> None:
    loaded = topology()
    kafka = FakeKafka(
        loaded.name,
        east=without_heartbeats(Topic("orders", 2, 1, {"retention.ms": "5"})),
        west=converged_west(),
    )

    def round_() -> reconcile.Followed:
        return reconcile.follow(
            loaded,
            SHA,
            observe=kafka.observe,
            run_change=kafka.run_change,
            running=running_jobs(loaded),
            clock=lambda: NOW,
        )

    first = round_()
    assert [(a.cluster, a.name, a.outcome) for a in first.applied] == [
        ("east", "heartbeats", "done"),
        ("west", "east.orders", "done"),
    ]
    assert round_().plan.empty
    # The source changes while the job runs: the next round follows it, and then rests again.
    east = kafka.clusters["east"]
    grown = Topic("orders", 5, 1, {"retention.ms": "7"})
    kafka.clusters["east"] = dataclasses.replace(east, topics={**east.topics, "orders": grown})
    second = round_()
    assert [(a.resource, a.outcome) for a in second.applied] == [
        ("partitions", "done"),
        ("topic_config", "done"),
    ]
    copy = kafka.clusters["west"].topics["east.orders"]
    assert (copy.partitions, copy.configs) == (5, {"retention.ms": "7"})
    assert round_().plan.empty


# -- checked_plan: what `topo plan` and `topo apply` read beyond the inventory ----------------


class Readers:
    """`ops.reconcile.Readers` over plain values: progress per flow, MM2's handover, and the
    principal's access per cluster (everything by default: no authorizer)."""

    def __init__(
        self,
        progress: Mapping[str, set[tuple[str, int]]] | None = None,
        access: Mapping[str, Any] | None = None,
    ) -> None:
        self.progress_of = dict(progress or {})
        self.access = dict(access or {})
        self.asked: list[str] = []

    def progress(self, cluster: str, topic: str, flow: str) -> set[tuple[str, int]]:
        self.asked.append(f"progress {flow} in {topic} on {cluster}")
        return self.progress_of.get(flow, set())

    def handover(self, spec: Any, edge: Any, topics: Any) -> Any:
        from tests.unit.test_plan_handover import _handover

        self.asked.append(f"handover {spec.flow}")
        return _handover(p0=100, p1=80)

    def accesses(self, needed: Any, clusters: Mapping[str, Cluster]) -> dict[str, Any]:
        from topology.core.permission_needs import Access

        return {name: self.access.get(name, Access(name, authorizer=False)) for name in clusters}

    def reading(self, cluster: str) -> Any:
        self.asked.append(f"reading {cluster}")
        return self.access.get(cluster)


def test_a_flow_taking_over_from_mm2_reads_its_positions_unless_it_runs_or_copied() -> None:
    from tests.unit.test_plan_handover import _clusters, _topology

    made = _topology()
    read = Readers()
    checked = reconcile.checked_plan(made, SHA, _clusters(), running={}, read=read)
    [start] = [c for c in checked.planned.plan.changes if c.resource is Resource.FLOW]
    assert start.after is not None and start.after["resume"]["offsets_topic"].startswith("mm2-")
    assert read.asked == [
        "progress east->west in topo-offset-syncs.east.internal on west",
        "handover east->west",
    ]
    # topo copied one of its topics since: it resumes from its own positions, MM2 not asked
    copied = Readers(progress={"east->west": {("orders", 0)}})
    again = reconcile.checked_plan(made, SHA, _clusters(), running={}, read=copied)
    assert "handover east->west" not in copied.asked
    [start] = [c for c in again.planned.plan.changes if c.resource is Resource.FLOW]
    assert start.after is not None and "resume" not in start.after
    # its heartbeats alone say nothing: every flow from the source copies them
    beats = Readers(progress={"east->west": {("heartbeats", 0)}})
    reconcile.checked_plan(made, SHA, _clusters(), running={}, read=beats)
    assert "handover east->west" in beats.asked
    # running already: nothing is read
    running = Readers()
    reconcile.checked_plan(made, SHA, _clusters(), running=job_views(made), read=running)
    assert running.asked == []


def test_the_permissions_a_plan_needs_and_lacks_are_its_findings() -> None:
    from topology.core.permission_needs import Access

    loaded = topology()
    clusters = {"east": cluster("east", Topic("orders", 1, 1)), "west": cluster("west")}
    open_everywhere = reconcile.checked_plan(
        loaded, SHA, clusters, running=running_jobs(loaded), read=Readers()
    )
    assert open_everywhere.findings.errors == () and open_everywhere.planned.plan.changes
    # west answers, with an authorizer, that topo may do nothing there
    refused = Readers(access={"west": Access("west", cluster_operations=frozenset())})
    checked = reconcile.checked_plan(
        loaded, SHA, clusters, running=running_jobs(loaded), read=refused
    )
    assert checked.findings.errors
    assert {m.permission.cluster for m in checked.findings.errors} == {"west"}
    assert all(m.grant.startswith("kafka-acls.sh") for m in checked.findings.errors)


def test_a_refused_read_asks_the_named_cluster_what_reading_lacks() -> None:
    from topology.core.permission_needs import Access

    loaded = topology()
    read = Readers(access={"west": Access("west", cluster_operations=frozenset())})
    message = "cluster west (127.0.0.1:9002): Topic authorization failed"
    found = reconcile.refusal(loaded, message, read)
    assert found is not None and found.errors and read.asked == ["reading west"]
    assert reconcile.refusal(loaded, "cluster west (127.0.0.1:9002): timed out", read) is None


def test_the_frequent_look_compares_every_source_topic_and_only_the_copies_on_a_target() -> None:
    shapes = {
        "east": {"orders": 3, "payments": 2},  # a source (and a target: active-active)
        "west": {"east.orders": 3, "east.payments": 2, "their-own": 1},  # a target only
    }
    remotes = {"west": {"east.orders", "east.payments"}, "east": {"west.x"}}
    watched = reconcile.watched(shapes, {"east"}, remotes)
    assert watched == {
        "east": {"orders": 3, "payments": 2},
        "west": {"east.orders": 3, "east.payments": 2},
    }
    # another application's topic on the target changes nothing the look compares ...
    busier = {**shapes, "west": {**shapes["west"], "theirs-too": 6}}
    assert reconcile.watched(busier, {"east"}, remotes) == watched
    # ... a copy deleted under its flow, or grown, does: the driver reconciles at once
    deleted = {**shapes, "west": {"east.orders": 3, "their-own": 1}}
    assert reconcile.watched(deleted, {"east"}, remotes) != watched
    grown = {**shapes, "west": {**shapes["west"], "east.payments": 4}}
    assert reconcile.watched(grown, {"east"}, remotes) != watched
    # so does any topic made on a source
    made = {**shapes, "east": {**shapes["east"], "refunds": 1}}
    assert reconcile.watched(made, {"east"}, remotes) != watched
