"""The permissions topo needs, derived from a topology and its plan, and the check against what
a cluster grants: the pure rules, the asking with a fake admin client, the CLI's report."""

import re
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin._acl import AclOperation  # admin re-exports it without declaring it

from topology.cli import live
from topology.core import analysis
from topology.core import permission_needs as permissions
from topology.core.model import Topology
from topology.core.naming import RUNS_TOPIC, STATE_TOPIC
from topology.core.observed import Acl, Cluster, Group, Owned, Topic
from topology.core.permission_needs import (
    CLUSTER,
    CLUSTER_NAME,
    GROUP,
    LITERAL,
    PREFIXED,
    TOPIC,
    TRANSACTIONAL_ID,
    Access,
    Permission,
)
from topology.core.plan.planner import plan as make_plan
from topology.core.plan.values import Plan
from topology.kafka import permissions as asking

ROOT = Path(__file__).resolve().parents[2]

HEAD = """
version: 1
name: shop
clusters:
  east:
    bootstrap: "east:9092"
    security: {protocol: SASL_PLAINTEXT, sasl: {mechanism: SCRAM-SHA-512, username: topo,
               password: "${env:EAST_PASSWORD}"}}
  west:
    bootstrap: "west:9092"
    security: {protocol: SASL_PLAINTEXT, sasl: {mechanism: SCRAM-SHA-512, username: topo,
               password: "${env:WEST_PASSWORD}"}}
defaults: {replication_factor: 1}
"""
MIRROR = HEAD + "flows:\n  - mirror: {from: east, to: west}\n    topics: {include: [orders]}\n"


def topology(text: str) -> Topology:
    result = analysis.analyse(text, "shop.yaml")
    assert result.ok, result.diagnostics
    assert result.topology is not None
    return result.topology


def cluster(
    name: str,
    *topics: str,
    acls: tuple[Acl, ...] | None = (),
    groups: dict[str, Group] | None = None,
    owned: tuple[Owned, ...] = (),
    partitions: int = 2,
) -> Cluster:
    return Cluster(
        name=name,
        brokers=1,
        default_replication_factor=1,
        topics={t: Topic(t, partitions, 1, {}) for t in topics},
        acls=acls,
        groups=groups or {},
        owned={o.key: o for o in owned},
    )


def needs(
    text: str, *clusters: Cluster, allow_delete: bool = False
) -> tuple[Topology, Plan, tuple[Permission, ...]]:
    loaded = topology(text)
    observed = {c.name: c for c in clusters}
    planned = make_plan(loaded, observed, topology_sha256="0" * 64, allow_delete=allow_delete)
    return loaded, planned, permissions.required(loaded, planned, observed)


def keys(found: Iterable[Permission], now: bool | None = None) -> set[tuple[str, ...]]:
    """(cluster, type, name, pattern, operation) of each; only those needed now (or later)."""
    return {p.key for p in found if now is None or p.now is now}


def topic(cluster: str, name: str, *operations: str) -> set[tuple[str, ...]]:
    return {(cluster, TOPIC, name, LITERAL, op) for op in operations}


def on_cluster(name: str, *operations: str) -> set[tuple[str, ...]]:
    return {(name, CLUSTER, CLUSTER_NAME, LITERAL, op) for op in operations}


def reader_group(cluster: str, prefix: str) -> tuple[str, ...]:
    return (cluster, GROUP, prefix, PREFIXED, "DESCRIBE")


# -- what a topology needs ----------------------------------------------------------------------

READ_AND_CONFIGS = ("DESCRIBE", "DESCRIBE_CONFIGS")


def test_a_fresh_mirror_needs_exactly_these_now_and_these_later() -> None:
    _topology, _plan, found = needs(MIRROR, cluster("east", "orders", "other"), cluster("west"))
    internal = ("CREATE", *READ_AND_CONFIGS, "READ", "WRITE")
    assert keys(found, now=True) == (
        on_cluster("east", "DESCRIBE", "DESCRIBE_CONFIGS")
        | topic("east", "orders", *READ_AND_CONFIGS, "READ")
        | topic("east", "heartbeats", "CREATE", *READ_AND_CONFIGS, "READ", "WRITE")
        | topic("east", STATE_TOPIC, *internal)
        | {reader_group("east", "topo-observe-")}
        | on_cluster("west", "DESCRIBE", "DESCRIBE_CONFIGS")
        | topic("west", STATE_TOPIC, *internal)
        | topic("west", "east.orders", "CREATE", *READ_AND_CONFIGS, "WRITE", "READ")
        | topic("west", "east.heartbeats", "CREATE", *READ_AND_CONFIGS, "WRITE", "READ")
        | topic("west", "heartbeats", "CREATE", *READ_AND_CONFIGS, "WRITE")
        | topic("west", "east.checkpoints.internal", *internal)
        | topic("west", "topo-checkpoints.east.internal", *internal)
        | topic("west", "topo-offset-syncs.east.internal", *internal)
        | topic("west", RUNS_TOPIC, *internal)  # west is the home cluster
        | {
            reader_group("west", p)
            for p in ("topo-observe-", "topo-read-", "topo-offsets-", "topo-runs-")
        }
        # the copy loop's positions
        | {("west", GROUP, "topo-eos.shop.east--west", LITERAL, "READ")}
    )
    assert keys(found, now=False) == (
        topic("west", "east.orders", "ALTER", "ALTER_CONFIGS")
        | topic("west", "east.heartbeats", "ALTER", "ALTER_CONFIGS")
        | on_cluster("west", "ALTER")  # ACL sync, once the source has ACLs to copy
    )
    assert not any(p.key[2] == "other" for p in found), "a topic no flow reads needs nothing"


def test_every_permission_says_why() -> None:
    _topology, _plan, found = needs(MIRROR, cluster("east", "orders"), cluster("west"))
    assert all(p.why for p in found)
    [write] = [p for p in found if p.key == ("west", TOPIC, "east.orders", LITERAL, "WRITE")]
    assert write.why == "replicating east->west: writing the copy"


def test_an_active_active_pair_needs_each_side_as_source_and_as_target() -> None:
    text = HEAD + "flows:\n  - active-active: [east, west]\n    topics: {include: [orders]}\n"
    _topology, _plan, found = needs(text, cluster("east", "orders"), cluster("west", "orders"))
    for here, there in (("east", "west"), ("west", "east")):
        assert topic(here, "orders", "READ") <= keys(found)
        assert topic(there, f"{here}.orders", "CREATE", "WRITE", "READ") <= keys(found, now=True)
        assert topic(there, f"{here}.heartbeats", "WRITE") <= keys(found)
        assert topic(here, "heartbeats", "WRITE", "READ") <= keys(found)
    assert not keys(found) & topic("east", "west.east.orders", "WRITE"), "no copy goes back"


def test_exactly_once_needs_its_transactional_ids_its_group_and_read_on_the_copies() -> None:
    text = MIRROR + "    delivery: exactly-once\n"
    _topology, _plan, found = needs(text, cluster("east", "orders", partitions=2), cluster("west"))
    prefix = "topo.shop.east--west."
    [write] = [p for p in found if p.key == ("west", TRANSACTIONAL_ID, prefix, PREFIXED, "WRITE")]
    assert write.now
    assert write.instances == (f"{prefix}loop.0", f"{prefix}loop.1")  # one per copy slot
    assert ("west", GROUP, "topo-eos.shop.east--west", LITERAL, "READ") in keys(found, now=True)
    read = [p for p in found if p.key == ("west", TOPIC, "east.orders", LITERAL, "READ")]
    assert "exactly-once" in read[0].why
    assert not any(p.operation == "IDEMPOTENT_WRITE" for p in found)

    _topology, _plan, at_least_once = needs(MIRROR, cluster("east", "orders"), cluster("west"))
    assert not any(p.resource_type == TRANSACTIONAL_ID for p in at_least_once)


def test_acl_sync_needs_alter_on_the_target_cluster_now_only_when_the_plan_copies_acls() -> None:
    alter = ("west", CLUSTER, CLUSTER_NAME, LITERAL, "ALTER")
    source_acl = Acl("TOPIC", "orders", "LITERAL", "User:app", "*", "READ", "ALLOW")
    east = cluster("east", "orders", acls=(source_acl,))
    _topology, planned, found = needs(MIRROR, east, cluster("west"))
    assert any(c.resource.value == "acl" for c in planned.changes)
    assert alter in keys(found, now=True)

    _topology, _plan, found = needs(MIRROR, cluster("east", "orders"), cluster("west"))
    assert alter in keys(found, now=False)

    off = MIRROR + "    sync: {acls: false}\n"
    _topology, _plan, found = needs(off, east, cluster("west"))
    assert alter not in keys(found)

    _topology, _plan, found = needs(MIRROR, east, cluster("west", acls=None))
    assert alter not in keys(found), "a target without an authorizer gets no ACLs"


def test_group_offset_sync_needs_read_on_each_synced_group_on_the_target() -> None:
    groups = {
        "billing": Group("billing", "STABLE", {("orders", 0): 5}),
        "idle": Group("idle", "EMPTY", {}),  # no offsets: nothing to sync
        "elsewhere": Group("elsewhere", "STABLE", {("other", 0): 5}),  # not a copied topic
        "console-consumer-1": Group("console-consumer-1", "STABLE", {("orders", 0): 1}),
        "topo-eos.shop.x--y": Group("topo-eos.shop.x--y", "STABLE", {("orders", 0): 1}),
    }
    east = cluster("east", "orders", "other", groups=groups)
    text = MIRROR + '    groups: {exclude: ["console-consumer-.*"]}\n'
    _topology, _plan, found = needs(text, east, cluster("west"))
    synced = {p.name for p in found if p.resource_type == GROUP and p.pattern_type == LITERAL}
    assert synced - {"topo-eos.shop.east--west"} == {"billing"}  # (that one: the loop's own)
    assert ("west", GROUP, "billing", LITERAL, "READ") in keys(found, now=True)

    off = MIRROR + "    sync: {group_offsets: false}\n"
    _topology, _plan, found = needs(off, east, cluster("west"))
    assert not any(
        p.resource_type == GROUP
        and p.pattern_type == LITERAL
        and not p.name.startswith("topo-eos.")
        for p in found
    )
    assert reader_group("west", "topo-offsets-") in keys(found), "checkpoints still translate"

    quiet = MIRROR + "    sync: {group_offsets: false}\n    emit: {checkpoints: false}\n"
    _topology, _plan, found = needs(quiet, east, cluster("west"))
    assert reader_group("west", "topo-offsets-") not in keys(found)
    # still read: the copy loop commits how far it copied as its progress group there
    [read] = [p for p in found if p.key == ("west", TOPIC, "east.orders", LITERAL, "READ")]
    assert "progress group" in read.why


def test_without_a_replication_engine_only_topics_are_needed() -> None:
    text = HEAD + "engine: {runner: none}\n" + MIRROR.removeprefix(HEAD)
    _topology, _plan, found = needs(text, cluster("east", "orders"), cluster("west"))
    operations = {p.operation for p in found if p.resource_type == TOPIC and p.name != STATE_TOPIC}
    assert operations == {"CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "ALTER", "ALTER_CONFIGS"}
    assert not any(p.name in ("heartbeats", RUNS_TOPIC, "topo-runs-") for p in found)


def test_another_topologys_copy_is_never_altered_and_deletes_need_delete() -> None:
    theirs = Owned("topic", "east.orders", ("east->west",), owner="other")
    _topology, _plan, found = needs(
        MIRROR, cluster("east", "orders"), cluster("west", "east.orders", owned=(theirs,))
    )
    assert not topic("west", "east.orders", "ALTER", "ALTER_CONFIGS") & keys(found)
    assert topic("west", "east.orders", "WRITE") <= keys(found)

    mine = Owned("topic", "east.gone", ("east->west",), owner="shop")
    _topology, _plan, found = needs(
        MIRROR,
        cluster("east", "orders"),
        cluster("west", "east.gone", owned=(mine,)),
        allow_delete=True,
    )
    assert topic("west", "east.gone", "DELETE") <= keys(found, now=True)


def test_a_topic_named_literally_that_topo_cannot_see_needs_describe_as_a_warning() -> None:
    """Nothing the plan does needs it (the topic may simply not exist yet): it must not
    block the plan, only say that topo cannot tell."""
    _topology, _plan, found = needs(MIRROR, cluster("east"), cluster("west"))
    assert topic("east", "orders", "DESCRIBE") <= keys(found, now=False)
    assert not topic("east", "orders", "DESCRIBE") & keys(found, now=True)


def test_all_on_the_cluster_by_an_acl_is_not_a_super_user() -> None:
    """The broker grants such a principal every cluster operation, as it does a super user,
    but its topics and transactional ids are still only what the ACLs allow."""
    every = frozenset(permissions.CLUSTER_OPERATIONS)
    acl = Acl("CLUSTER", "kafka-cluster", "LITERAL", "User:topo", "*", "ALL", "ALLOW")
    by_acl = Access("west", cluster_operations=every, acls=(acl,), principal="User:topo")
    assert not by_acl.everything
    assert [m.permission for m in check([write_copy()], by_acl).errors] == [write_copy()]
    superuser = Access("west", cluster_operations=every, acls=(), principal="User:topo")
    assert superuser.everything and not check([write_copy()], superuser).errors


# -- judging what a cluster granted -------------------------------------------------------------

BOOTSTRAPS = {"east": "east:9092", "west": "west:9092"}
PRINCIPALS = {"east": "User:topo", "west": "User:topo"}


def check(needed: Iterable[Permission], *accesses: Access) -> permissions.Findings:
    return permissions.missing(
        needed, {a.cluster: a for a in accesses}, bootstraps=BOOTSTRAPS, principals=PRINCIPALS
    )


def write_copy() -> Permission:
    return Permission("west", TOPIC, "east.orders", LITERAL, "WRITE", "replicating east->west")


def test_a_missing_permission_comes_with_the_kafka_acls_line_that_grants_it() -> None:
    access = Access("west", topics={"east.orders": frozenset({"DESCRIBE", "READ"})})
    findings = check([write_copy()], access)
    [missing] = findings.errors
    assert missing.grant == (
        "kafka-acls.sh --bootstrap-server west:9092 --add --allow-principal User:topo "
        "--operation Write --topic east.orders"
    )
    assert missing.judged == "the broker"
    assert findings.checked == ("west",)


@pytest.mark.parametrize(
    ("permission", "line"),
    [
        (
            Permission("w", CLUSTER, CLUSTER_NAME, LITERAL, "DESCRIBE_CONFIGS"),
            "--operation DescribeConfigs --cluster",
        ),
        (
            Permission("w", GROUP, "topo-read-", PREFIXED, "DESCRIBE"),
            "--operation Describe --group topo-read- --resource-pattern-type prefixed",
        ),
        (
            Permission("w", TRANSACTIONAL_ID, "topo.s.a--b.", PREFIXED, "WRITE"),
            "--operation Write --transactional-id topo.s.a--b. --resource-pattern-type prefixed",
        ),
        (
            Permission("w", TOPIC, "east.orders", LITERAL, "ALTER_CONFIGS"),
            "--operation AlterConfigs --topic east.orders",
        ),
        (
            Permission("w", GROUP, "my group", LITERAL, "READ"),
            "--operation Read --group 'my group'",
        ),
    ],
)
def test_each_resource_type_has_its_kafka_acls_option(permission: Permission, line: str) -> None:
    granted = permissions.grant_line(permission, "w:9092", "User:topo")
    start = "kafka-acls.sh --bootstrap-server w:9092 --add --allow-principal User:topo"
    assert granted == f"{start} {line}"


def test_granted_operations_imply_others_as_kafka_does() -> None:
    assert permissions.allows({"WRITE"}, "DESCRIBE")
    assert permissions.allows({"ALTER_CONFIGS"}, "DESCRIBE_CONFIGS")
    assert permissions.allows({"ALL"}, "ALTER")
    assert not permissions.allows({"READ"}, "WRITE")
    assert not permissions.allows({"DESCRIBE"}, "DESCRIBE_CONFIGS")


def test_a_cluster_without_an_authorizer_is_not_checked() -> None:
    findings = check([write_copy()], Access("west", authorizer=False))
    assert findings.missing == ()
    assert findings.unchecked == ("west",)
    assert findings.checked == ()


def test_a_cluster_not_asked_is_skipped() -> None:
    assert check([write_copy()]).missing == ()


def test_create_is_answered_by_the_cluster_or_by_a_validate_only_create() -> None:
    create = Permission("west", TOPIC, "east.orders", LITERAL, "CREATE")
    assert check([create], Access("west", creatable={"east.orders": False})).errors
    assert not check([create], Access("west", creatable={"east.orders": True})).errors
    by_cluster = Access("west", cluster_operations=frozenset({"CREATE", "DESCRIBE"}))
    assert not check([create], by_cluster).errors


def test_a_topic_the_broker_hides_lacks_describe_and_all_that_implies_it() -> None:
    access = Access("east", hidden=frozenset({"orders"}), acls=(), principal="User:topo")
    read = Permission("east", TOPIC, "orders", LITERAL, "READ")
    describe = Permission("east", TOPIC, "orders", LITERAL, "DESCRIBE")
    findings = check([read, describe], access)
    assert [m.permission.operation for m in findings.errors] == ["READ", "DESCRIBE"]


def test_a_group_refused_lacks_every_operation_on_it() -> None:
    read = Permission("west", GROUP, "billing", LITERAL, "READ")
    assert check([read], Access("west", groups={"billing": None})).errors
    assert check([read], Access("west", groups={"billing": frozenset({"DESCRIBE"})})).errors
    assert not check([read], Access("west", groups={"billing": frozenset({"READ"})})).errors


def test_a_prefixed_permission_is_checked_on_the_names_it_stands_for() -> None:
    probe = permissions.probe_name("topo-observe-")
    wanted = Permission("west", GROUP, "topo-observe-", PREFIXED, "DESCRIBE", instances=(probe,))
    assert check([wanted], Access("west", groups={probe: None})).errors
    assert not check([wanted], Access("west", groups={probe: frozenset({"DESCRIBE"})})).errors


def test_later_needs_are_warnings_not_errors() -> None:
    later = Permission("west", TOPIC, "east.orders", LITERAL, "ALTER", now=False)
    findings = check([later], Access("west", topics={"east.orders": frozenset({"WRITE"})}))
    assert findings.errors == ()
    assert [m.permission for m in findings.warnings] == [later]


# -- what only the ACLs can tell ---------------------------------------------------------------


def binding(
    name: str,
    operation: str,
    permission: str = "ALLOW",
    *,
    pattern: str = "LITERAL",
    principal: str = "User:topo",
    host: str = "*",
    resource: str = "TOPIC",
) -> Acl:
    return Acl(resource, name, pattern, principal, host, operation, permission)


@pytest.mark.parametrize(
    ("acls", "answer"),
    [
        ((), False),
        ((binding("east.orders", "WRITE"),), True),
        ((binding("east.", "WRITE", pattern="PREFIXED"),), True),
        ((binding("*", "ALL"),), True),
        ((binding("east.orders", "WRITE", principal="User:*"),), True),
        ((binding("east.orders", "WRITE", principal="User:someone"),), False),
        ((binding("east.orders", "READ"),), False),
        (
            (
                binding("east.", "WRITE", pattern="PREFIXED"),
                binding("east.orders", "WRITE", "DENY"),
            ),
            False,
        ),
        ((binding("*", "ALL"), binding("east.", "ALL", "DENY", pattern="PREFIXED")), False),
        ((binding("east.orders", "WRITE", host="10.0.0.1"),), None),
        ((binding("east.orders", "WRITE", principal="Group:ops"),), None),
        (
            (
                binding("east.orders", "WRITE"),
                binding("east.orders", "WRITE", "DENY", host="10.0.0.1"),
            ),
            None,
        ),
    ],
)
def test_acls_are_judged_by_kafkas_rules(acls: tuple[Acl, ...], answer: bool | None) -> None:
    assert permissions.acls_allow(acls, "User:topo", TOPIC, "east.orders", "WRITE") is answer


def test_describe_is_implied_by_an_allow_but_a_deny_of_read_does_not_deny_describe() -> None:
    acls = (binding("orders", "READ"), binding("orders", "WRITE", "DENY"))
    assert permissions.acls_allow(acls, "User:topo", TOPIC, "orders", "DESCRIBE") is True


def test_a_topic_not_created_yet_is_judged_by_the_acls() -> None:
    access = Access(
        "west", acls=(binding("east.", "READ", pattern="PREFIXED"),), principal="User:topo"
    )
    findings = check([write_copy()], access)
    [missing] = findings.errors
    assert missing.judged == "the ACLs on west"


def test_transactional_ids_are_judged_by_the_acls_for_each_id_they_stand_for() -> None:
    ids = ("topo.shop.east--west.orders.0", "topo.shop.east--west.orders.1")
    wanted = Permission(
        "west", TRANSACTIONAL_ID, "topo.shop.east--west.", PREFIXED, "WRITE", instances=ids
    )
    one = binding(ids[0], "WRITE", resource=TRANSACTIONAL_ID)
    every = binding("topo.shop.", "WRITE", resource=TRANSACTIONAL_ID, pattern="PREFIXED")

    def judged(*acls: Acl) -> permissions.Findings:
        return check([wanted], Access("west", acls=acls, principal="User:topo"))

    assert judged(one).errors, "the id of partition 1 is not granted"
    assert not judged(every).errors
    [missing] = judged().errors
    assert missing.grant.endswith(
        "--operation Write --transactional-id topo.shop.east--west. "
        "--resource-pattern-type prefixed"
    )


def test_a_principal_granted_every_cluster_operation_is_taken_for_a_super_user() -> None:
    access = Access(
        "west", cluster_operations=permissions.CLUSTER_OPERATIONS, acls=(), principal="User:admin"
    )
    assert check([write_copy()], access).missing == ()
    hidden = Access(
        "west",
        cluster_operations=permissions.CLUSTER_OPERATIONS,
        topics={"east.orders": frozenset({"DESCRIBE"})},
    )
    assert check([write_copy()], hidden).errors, "what the broker says still counts"


def test_what_neither_the_broker_nor_the_acls_settle_is_a_note() -> None:
    unknown = Access("west", acls=(), principal=None)
    findings = check([write_copy()], unknown)
    assert findings.missing == ()
    assert findings.notes == (
        "west: not checked (topo does not know its principal: mutual TLS, Kerberos or OAuth): "
        "WRITE on topic east.orders",
    )


# -- the principal and bootstrap a line names ----------------------------------------------------


def security_topology(security: str, bootstrap: str = "east:9092") -> Topology:
    return topology(
        f'version: 1\nclusters:\n  east:\n    bootstrap: "{bootstrap}"\n    security: {security}\n'
        "  west: {bootstrap: 'west:9092'}\n"
        "flows:\n  - mirror: {from: east, to: west}\n"
    )


@pytest.mark.parametrize(
    ("security", "shown", "matched"),
    [
        (
            "{protocol: SASL_SSL, sasl: {mechanism: PLAIN, username: alice, password: '${env:P}'}}",
            "User:alice",
            "User:alice",
        ),
        (
            "{protocol: SASL_SSL, sasl: {mechanism: SCRAM-SHA-256, username: '${env:EAST_USER}', "
            "password: '${env:P}'}}",
            '"User:$EAST_USER"',
            "User:alice",
        ),
        (
            "{protocol: SSL, tls: {ca: ca.pem, cert: c.pem, key: k.pem}}",
            "'User:<your principal>'",
            None,
        ),
        ("{protocol: PLAINTEXT}", "User:ANONYMOUS", "User:ANONYMOUS"),
        ("{protocol: SSL}", "User:ANONYMOUS", "User:ANONYMOUS"),
    ],
)
def test_the_principal_is_shown_without_revealing_a_secret_reference(
    security: str, shown: str, matched: str | None
) -> None:
    east = security_topology(security).clusters["east"]
    assert permissions.principal_shown(east) == shown
    # Matched against the ACLs with the username resolved (here `alice`), never shown.
    assert permissions.principal_matched(east, {"sasl.username": "alice"}) == matched


def test_a_bootstrap_from_the_environment_is_left_to_the_shell() -> None:
    assert permissions.bootstrap_shown("${env:EAST_BOOTSTRAP}") == '"$EAST_BOOTSTRAP"'
    assert permissions.bootstrap_shown("${file:bootstrap.txt}") == "<bootstrap>"
    assert permissions.bootstrap_shown("a:1,b:2") == "a:1,b:2"


# -- reading a cluster refused -------------------------------------------------------------------


def test_reading_needs_describe_configs_on_each_visible_topic_but_no_group() -> None:
    probe = permissions.probe_name("topo-observe-")
    access = Access(
        "east",
        cluster_operations=frozenset({"DESCRIBE", "DESCRIBE_CONFIGS"}),
        topics={
            "orders": frozenset({"READ"}),
            STATE_TOPIC: frozenset({"READ", "DESCRIBE_CONFIGS"}),
        },
        groups={"billing": None, probe: frozenset({"DESCRIBE"})},
    )
    findings = check(permissions.observing(access), access)
    # A group topo may not DESCRIBE is skipped when reading (kafka/inventory.py).
    assert [m.permission.describe() for m in findings.errors] == [
        "DESCRIBE_CONFIGS on topic orders",
    ]


def test_without_describe_on_the_cluster_only_that_is_reported_the_rest_is_unknown() -> None:
    access = Access("east", cluster_operations=frozenset())
    findings = check(permissions.observing(access), access)
    assert [m.permission.describe() for m in findings.errors] == ["DESCRIBE on the cluster"]
    assert findings.notes and "DESCRIBE_CONFIGS on the cluster" in findings.notes[0]


# -- asking a cluster, with a fake admin client --------------------------------------------------


def done(value: Any = None, error: int | None = None) -> "Future[Any]":
    future: Future[Any] = Future()
    if error is None:
        future.set_result(value)
    else:
        future.set_exception(KafkaException(KafkaError(error)))
    return future


class Described:
    def __init__(self, *operations: str) -> None:
        self.authorized_operations = [AclOperation[op] for op in operations] or None


class FakeAdmin:
    """Answers like a broker with an authorizer; records what it was asked."""

    cluster_ops: ClassVar[tuple[str, ...]] = ("DESCRIBE", "DESCRIBE_CONFIGS")
    topics: ClassVar[dict[str, tuple[str, ...] | int]] = {}
    creatable: ClassVar[dict[str, int | None]] = {}
    groups: ClassVar[dict[str, tuple[str, ...] | int]] = {}
    asked: ClassVar[list[tuple[str, Any]]] = []

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings

    open_without_acls: ClassVar[str] = "false"

    def describe_cluster(self, **options: Any) -> "Future[Any]":
        assert options["include_authorized_operations"] is True
        described = Described(*self.cluster_ops)
        described.nodes = [SimpleNamespace(id=1)]  # type: ignore[attr-defined]
        return done(described)

    def describe_configs(self, resources: list[Any], **options: Any) -> dict[Any, "Future[Any]"]:
        self.asked.append(("describe_configs", [str(r) for r in resources]))
        entry = SimpleNamespace(value=self.open_without_acls)
        return {r: done({"allow.everyone.if.no.acl.found": entry}) for r in resources}

    def describe_topics(self, collection: Any, **options: Any) -> dict[str, "Future[Any]"]:
        assert options["include_authorized_operations"] is True
        self.asked.append(("describe_topics", sorted(collection.topic_names)))
        return {
            name: self._answer(self.topics.get(name, KafkaError.UNKNOWN_TOPIC_OR_PART))
            for name in collection.topic_names
        }

    def create_topics(self, topics: list[Any], **options: Any) -> dict[str, "Future[Any]"]:
        assert options["validate_only"] is True, "asking must never create a topic"
        self.asked.append(("create_topics", sorted(t.topic for t in topics)))
        return {t.topic: done(None, self.creatable.get(t.topic)) for t in topics}

    def describe_consumer_groups(self, ids: list[str], **options: Any) -> dict[str, "Future[Any]"]:
        assert options["include_authorized_operations"] is True
        self.asked.append(("describe_consumer_groups", sorted(ids)))
        return {g: self._answer(self.groups.get(g, ("DESCRIBE",))) for g in ids}

    @staticmethod
    def _answer(answer: tuple[str, ...] | int) -> "Future[Any]":
        return done(error=answer) if isinstance(answer, int) else done(Described(*answer))


@pytest.fixture
def fake_admin(monkeypatch: pytest.MonkeyPatch) -> type[FakeAdmin]:
    class Admin(FakeAdmin):
        topics: ClassVar[dict[str, tuple[str, ...] | int]] = {
            "orders": ("DESCRIBE", "READ"),
            "east.orders": ("DESCRIBE", "DESCRIBE_CONFIGS"),
            "secret": KafkaError.TOPIC_AUTHORIZATION_FAILED,
        }
        creatable: ClassVar[dict[str, int | None]] = {
            "new.one": KafkaError.TOPIC_AUTHORIZATION_FAILED
        }
        groups: ClassVar[dict[str, tuple[str, ...] | int]] = {
            "billing": KafkaError.GROUP_AUTHORIZATION_FAILED
        }
        asked: ClassVar[list[tuple[str, Any]]] = []

    monkeypatch.setattr(asking, "AdminClient", Admin)
    return Admin


def ask(needed: list[Permission], **observed: Any) -> Access:
    east = cluster("east", **observed)
    return asking.ask(
        "east",
        {"bootstrap.servers": "east:9092"},
        cluster=east,
        needed=needed,
        principal="User:topo",
    )


def test_asking_sorts_topics_into_granted_hidden_and_absent(fake_admin: type[FakeAdmin]) -> None:
    wanted = [
        Permission("east", TOPIC, n, LITERAL, "DESCRIBE")
        for n in ("orders", "east.orders", "secret", "gone")
    ]
    access = ask(wanted)
    assert access.topics == {
        "orders": frozenset({"DESCRIBE", "READ"}),
        "east.orders": frozenset({"DESCRIBE", "DESCRIBE_CONFIGS"}),
    }
    assert access.hidden == {"secret"}
    assert access.absent == {"gone"}
    assert access.cluster_operations == frozenset({"DESCRIBE", "DESCRIBE_CONFIGS"})
    assert access.principal == "User:topo"


def test_asking_whether_a_topic_may_be_created_creates_nothing(
    fake_admin: type[FakeAdmin],
) -> None:
    wanted = [Permission("east", TOPIC, n, LITERAL, "CREATE") for n in ("new.one", "new.two")]
    access = ask(wanted)
    assert access.creatable == {"new.one": False, "new.two": True}
    assert ("create_topics", ["new.one", "new.two"]) in fake_admin.asked


def test_create_on_the_cluster_spares_the_validate_only_create(
    fake_admin: type[FakeAdmin],
) -> None:
    fake_admin.cluster_ops = ("DESCRIBE", "CREATE")
    access = ask([Permission("east", TOPIC, "new.one", LITERAL, "CREATE")])
    assert access.creatable == {}
    assert not any(call == "create_topics" for call, _ in fake_admin.asked)


def test_asking_about_groups_includes_the_names_a_prefix_stands_for(
    fake_admin: type[FakeAdmin],
) -> None:
    probe = permissions.probe_name("topo-observe-")
    wanted = [
        Permission("east", GROUP, "billing", LITERAL, "READ"),
        Permission("east", GROUP, "topo-observe-", PREFIXED, "DESCRIBE", instances=(probe,)),
        Permission("west", GROUP, "elsewhere", LITERAL, "READ"),  # another cluster's
    ]
    access = ask(wanted)
    assert access.groups == {"billing": None, probe: frozenset({"DESCRIBE"})}


def test_a_cluster_without_an_authorizer_is_never_asked(fake_admin: type[FakeAdmin]) -> None:
    access = ask([write_copy()], acls=None)
    assert access == Access("east", authorizer=False)
    assert fake_admin.asked == []


# -- the CLI: a missing permission stops plan and apply before anything changes ------------------


def loaded(text: str = MIRROR) -> live.Loaded:
    return live.Loaded("shop.yaml", "0" * 64, topology(text))


def with_accesses(
    monkeypatch: pytest.MonkeyPatch, answer: Callable[[list[Permission]], dict[str, Access]]
) -> None:
    monkeypatch.setenv("EAST_PASSWORD", "secret-east")
    monkeypatch.setenv("WEST_PASSWORD", "secret-west")
    monkeypatch.setattr(live, "running_jobs", lambda _loaded: {})

    def ask_all(_configs: Any, _clusters: Any, needed: Any, *_rest: Any, **_kw: Any) -> Any:
        return answer(list(needed))

    monkeypatch.setattr(asking, "ask_all", ask_all)


def granting_all_but(*withheld: tuple[str, ...]) -> Callable[[list[Permission]], dict[str, Access]]:
    """Accesses granting every permission needed except `withheld` (keys): the cluster's
    operations as the broker says them, everything else as ACLs would."""

    def answer(needed: list[Permission]) -> dict[str, Access]:
        granted = [p for p in needed if p.key not in withheld]
        accesses = {}
        for name in ("east", "west"):
            operations = {
                p.operation for p in granted if p.cluster == name and p.resource_type == CLUSTER
            }
            acls = tuple(
                Acl(p.resource_type, p.name, p.pattern_type, "User:topo", "*", p.operation, "ALLOW")
                for p in granted
                if p.cluster == name and p.resource_type != CLUSTER
            )
            accesses[name] = Access(
                name, cluster_operations=frozenset(operations), acls=acls, principal="User:topo"
            )
        return accesses

    return answer


def test_make_plan_stops_with_each_missing_permission_and_its_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    withheld = ("west", TOPIC, "east.orders", LITERAL, "WRITE")
    with_accesses(monkeypatch, granting_all_but(withheld))
    clusters = {"east": cluster("east", "orders"), "west": cluster("west")}
    with pytest.raises(live.MissingPermissionsError) as refused:
        live.make_plan(loaded(), clusters, allow_delete=False)
    assert str(refused.value) == (
        "1 permission(s) missing on west (listed above); grant them, then plan again"
    )
    err = capsys.readouterr().err
    assert "  west: WRITE on topic east.orders\n" in err
    assert (
        "    kafka-acls.sh --bootstrap-server west:9092 --add --allow-principal User:topo "
        "--operation Write --topic east.orders\n"
    ) in err
    assert "secret-west" not in err


def test_make_plan_passes_when_everything_is_granted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with_accesses(monkeypatch, granting_all_but())
    clusters = {"east": cluster("east", "orders"), "west": cluster("west")}
    planned = live.make_plan(loaded(), clusters, allow_delete=False)
    assert not planned.empty
    assert capsys.readouterr().err == "Permissions: none missing on east, west.\n"


def test_make_plan_says_clusters_without_an_authorizer_were_not_checked(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("EAST_PASSWORD", "x")
    monkeypatch.setenv("WEST_PASSWORD", "y")
    monkeypatch.setattr(live, "running_jobs", lambda _loaded: {})
    clusters = {"east": cluster("east", "orders", acls=None), "west": cluster("west", acls=None)}
    live.make_plan(loaded(), clusters, allow_delete=False)  # the real asker: it connects to none
    assert capsys.readouterr().err == "Permissions: not checked on east, west (no authorizer).\n"


def test_a_permission_only_a_later_change_needs_is_a_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with_accesses(monkeypatch, granting_all_but(("west", CLUSTER, CLUSTER_NAME, LITERAL, "ALTER")))
    clusters = {"east": cluster("east", "orders"), "west": cluster("west")}
    live.make_plan(loaded(), clusters, allow_delete=False)
    err = capsys.readouterr().err
    assert "Warning: topo's principal lacks 1 permission(s) a later change will need" in err
    assert "--operation Alter --cluster" in err


def test_reading_refused_is_explained_with_the_permission_reading_lacks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from topology.core.errors import KafkaUnavailableError
    from topology.kafka import inventory

    monkeypatch.setenv("EAST_PASSWORD", "x")
    monkeypatch.setenv("WEST_PASSWORD", "y")

    def refused(_configs: Any, timeout: float) -> Any:
        raise KafkaUnavailableError(
            "cluster west (west:9092): reading the configs of topic orders failed: "
            "Broker: Topic authorization failed"
        )

    asked: list[str] = []

    def ask_for_reading(name: str, _config: Any, **_options: Any) -> Access:
        asked.append(name)
        return Access(
            name,
            cluster_operations=frozenset({"DESCRIBE", "DESCRIBE_CONFIGS"}),
            topics={"orders": frozenset({"READ"})},
            groups={"billing": None},
            principal="User:topo",
        )

    monkeypatch.setattr(inventory, "observe_all", refused)
    monkeypatch.setattr(asking, "ask_for_reading", ask_for_reading)
    with pytest.raises(live.MissingPermissionsError):
        live.observe(live.client_configs(loaded()))
    assert asked == ["west"], "only the cluster that refused is asked"
    err = capsys.readouterr().err
    assert "  west: DESCRIBE_CONFIGS on topic orders\n" in err
    assert "--operation DescribeConfigs --topic orders\n" in err
    assert "group billing" not in err  # skipped when reading, never the cause


def test_a_failure_that_is_no_refusal_is_raised_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    from topology.core.errors import KafkaUnavailableError
    from topology.kafka import inventory

    monkeypatch.setenv("EAST_PASSWORD", "x")
    monkeypatch.setenv("WEST_PASSWORD", "y")

    def unreachable(_configs: Any, timeout: float) -> Any:
        raise KafkaUnavailableError("cluster west (west:9092) is unreachable: Connection refused")

    def never(*_args: Any, **_kw: Any) -> Access:
        raise AssertionError("an unreachable cluster is not asked about permissions")

    monkeypatch.setattr(inventory, "observe_all", unreachable)
    monkeypatch.setattr(asking, "ask_for_reading", never)
    with pytest.raises(KafkaUnavailableError, match="unreachable"):
        live.observe(live.client_configs(loaded()))


# -- docs/security.md lists what topo prints -----------------------------------------------------

DOC = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")


def test_the_security_page_lists_every_line_topo_prints_for_its_example() -> None:
    example = re.search(r"```yaml\n(.*?)```", DOC, re.DOTALL)
    assert example is not None
    east = cluster(
        "east", "orders", groups={"billing": Group("billing", "STABLE", {("orders", 0): 1})}
    )
    loaded_example, _plan, found = needs(example.group(1), east, cluster("west"))
    principals = {n: permissions.principal_shown(c) for n, c in loaded_example.clusters.items()}
    bootstraps = {
        n: permissions.bootstrap_shown(c.bootstrap) for n, c in loaded_example.clusters.items()
    }
    lines = {permissions.grant_line(p, bootstraps[p.cluster], principals[p.cluster]) for p in found}
    absent = sorted(line for line in lines if line not in DOC)
    assert not absent, "docs/security.md lacks:\n" + "\n".join(absent)


def test_a_broker_open_without_acls_allows_what_no_binding_concerns(
    fake_admin: type[FakeAdmin],
) -> None:
    fake_admin.open_without_acls = "true"
    assert ask([], acls=()).open_without_acls is True
    open_ = Access("west", acls=(), principal="User:topo", open_without_acls=True)
    assert not check([write_copy()], open_).errors
    # A binding that concerns the resource decides, as Kafka's authorizer does.
    concerned = Access(
        "west",
        acls=(binding("east.orders", "READ"),),
        principal="User:topo",
        open_without_acls=True,
    )
    assert [m.permission for m in check([write_copy()], concerned).errors] == [write_copy()]


def test_a_broker_closed_without_acls_is_kafkas_default(fake_admin: type[FakeAdmin]) -> None:
    assert ask([], acls=()).open_without_acls is False
    closed = Access("west", acls=(), principal="User:topo")
    assert [m.permission for m in check([write_copy()], closed).errors] == [write_copy()]


def test_the_copy_loop_commits_its_progress_whatever_the_delivery() -> None:
    _topology, _plan, found = needs(MIRROR, cluster("east", "orders"), cluster("west"))
    assert ("west", GROUP, "topo-eos.shop.east--west", LITERAL, "READ") in keys(found, now=True)
    assert topic("west", "east.orders", "READ") <= keys(found, now=True)

    exactly_once = MIRROR + "    delivery: exactly-once\n    tasks: 3\n"
    east = cluster("east", "orders", partitions=2)
    _topology, _plan, found = needs(exactly_once, east, cluster("west"))
    prefix = "topo.shop.east--west."
    [write] = [p for p in found if p.key == ("west", TRANSACTIONAL_ID, prefix, PREFIXED, "WRITE")]
    assert write.instances == tuple(f"{prefix}loop.{n}" for n in range(3))
