"""topology.kafka.changes against real lab clusters: each plan change, observed afterwards.

ACLs need an authorizer: this module starts one SASL lab cluster (with StandardAuthorizer) and
also checks, on it, how inventory reports bad credentials and a principal without rights.
"""

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialUpsertion,
)

from tests.integration.test_inventory import ensure_state_topic, free_port
from topology.core.errors import KafkaUnavailableError, TopoError
from topology.core.observed import Acl, Owned, acl_key
from topology.core.plan.values import Action, Change, Resource
from topology.kafka import changes, inventory, records
from topology.lab import manager

pytestmark = pytest.mark.kafka
OWNER = "itest-changes"
ACL_CLUSTER = "itest-acl"


@pytest.fixture(scope="module")
def secured(lab_dir: Path) -> Iterator[dict[str, str]]:
    """A SASL lab cluster with an authorizer and topo's state topic; its admin's config."""
    manager.up([manager.UpRequest(ACL_CLUSTER, sasl=True)])
    config = manager.admin_config(ACL_CLUSTER)
    ensure_state_topic(config)
    yield config
    manager.down([ACL_CLUSTER], purge=True)


def run(config: dict[str, str], change: Change) -> None:
    changes.execute(config, change, timeout=15, owner=OWNER)


def create_topic(name: str, partitions: int = 1, **configs: str) -> Change:
    after = {
        "partitions": partitions,
        "replication_factor": 1,
        "configs": configs,
        "purpose": "replica",
        "sources": ["east"],
    }
    return Change(Action.CREATE, Resource.TOPIC, "c", name, "test", after=after, edges=("east->c",))


def acl_change(action: Action, acl: Acl) -> Change:
    values: dict[str, Any] = acl.to_dict()
    if action is Action.CREATE:
        return Change(
            action, Resource.ACL, "c", acl.resource_name, "t", after=values, edges=("e->c",)
        )
    return Change(action, Resource.ACL, "c", acl.resource_name, "t", before=values, edges=("e->c",))


# -- topics -------------------------------------------------------------------------------------


def test_a_created_topic_has_its_partitions_configs_and_ownership_record(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    run(source, create_topic(topic_name, 2, **{"retention.ms": "3600000"}))

    cluster = inventory.observe("c", source)
    topic = cluster.topics[topic_name]
    assert (topic.partitions, topic.replication_factor) == (2, 1)
    assert dict(topic.configs) == {"retention.ms": "3600000"}
    assert cluster.owns_topic(topic_name) == Owned("topic", topic_name, ("east->c",), owner=OWNER)


def test_topics_created_together_each_succeed_or_fail_on_their_own(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    records.create_topic(source, f"{topic_name}-theirs", 1)
    wanted = [
        create_topic(f"{topic_name}-a", 2, **{"retention.ms": "3600000"}),
        create_topic(f"{topic_name}-theirs"),
        create_topic(f"{topic_name}-bad", 1, **{"cleanup.policy": "no-such-policy"}),
        create_topic(f"{topic_name}-b", 3),
    ]

    outcomes = changes.create_topics(source, wanted, timeout=15, owner=OWNER)

    assert outcomes[0] is None and outcomes[3] is None
    assert outcomes[1] is not None and outcomes[1].endswith("failed: the topic already exists")
    assert outcomes[2] is not None
    assert outcomes[2].startswith(f"creating topic {topic_name}-bad on ")
    cluster = inventory.observe("c", source)
    assert cluster.topics[f"{topic_name}-a"].partitions == 2
    assert dict(cluster.topics[f"{topic_name}-a"].configs) == {"retention.ms": "3600000"}
    assert cluster.topics[f"{topic_name}-b"].partitions == 3
    assert f"{topic_name}-bad" not in cluster.topics
    for name in ("a", "b", "bad"):  # written ahead, as one by one
        owned = Owned("topic", f"{topic_name}-{name}", ("east->c",), owner=OWNER)
        assert cluster.owns_topic(f"{topic_name}-{name}") == owned
    assert cluster.owns_topic(f"{topic_name}-theirs") is None  # someone else's: left alone


def test_ownership_is_recorded_before_the_topic_is_created(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    bad = create_topic(topic_name, 1, **{"cleanup.policy": "no-such-policy"})
    with pytest.raises(KafkaUnavailableError, match=rf"^creating topic {topic_name} on "):
        run(source, bad)
    cluster = inventory.observe("c", source)
    assert topic_name not in cluster.topics
    assert cluster.owns_topic(topic_name) is not None  # written ahead: an owned, missing topic


def test_a_topic_that_exists_is_not_created_and_its_ownership_is_untouched(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    records.create_topic(source, topic_name, 1)
    with pytest.raises(KafkaUnavailableError, match="the topic already exists"):
        run(source, create_topic(topic_name))
    assert inventory.observe("c", source).owns_topic(topic_name) is None


def test_partitions_are_increased(source: dict[str, str], topic_name: str) -> None:
    records.create_topic(source, topic_name, 1)
    run(
        source,
        Change(
            Action.UPDATE,
            Resource.PARTITIONS,
            "c",
            topic_name,
            "test",
            before={"partitions": 1},
            after={"partitions": 3},
        ),
    )
    assert inventory.observe("c", source).topics[topic_name].partitions == 3


def test_topic_configs_are_set_and_deleted_back_to_the_default(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    run(source, create_topic(topic_name, 1, **{"retention.ms": "3600000"}))
    run(
        source,
        Change(
            Action.UPDATE,
            Resource.TOPIC_CONFIG,
            "c",
            topic_name,
            "test",
            before={"retention.ms": "3600000", "max.message.bytes": None},
            after={"retention.ms": None, "max.message.bytes": "2000000"},
        ),
    )
    configs = inventory.observe("c", source).topics[topic_name].configs
    assert dict(configs) == {"max.message.bytes": "2000000"}


def test_ownership_records_are_created_updated_and_deleted(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    for action, edges in ((Action.CREATE, ["a->c"]), (Action.UPDATE, ["b->c", "a->c"])):
        run(
            source,
            Change(
                action,
                Resource.OWNERSHIP,
                "c",
                topic_name,
                "test",
                before=None if action is Action.CREATE else {"edges": ["a->c"]},
                after={"edges": edges},
            ),
        )
    owned = inventory.observe("c", source).owns_topic(topic_name)
    assert owned == Owned("topic", topic_name, ("a->c", "b->c"), owner=OWNER)

    run(
        source,
        Change(
            Action.DELETE, Resource.OWNERSHIP, "c", topic_name, "test", before={"edges": ["a->c"]}
        ),
    )
    assert inventory.observe("c", source).owns_topic(topic_name) is None


def test_deleting_a_topic_that_is_already_gone_still_forgets_it(
    source: dict[str, str], topic_name: str
) -> None:
    ensure_state_topic(source)
    run(
        source,
        Change(
            Action.CREATE, Resource.OWNERSHIP, "c", topic_name, "test", after={"edges": ["a->c"]}
        ),
    )
    run(source, Change(Action.DELETE, Resource.TOPIC, "c", topic_name, "test", before={}))
    assert inventory.observe("c", source).owns_topic(topic_name) is None


def test_without_the_state_topic_nothing_is_created(
    source: dict[str, str], topic_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(changes, "STATE_TOPIC", f"{topic_name}-no-state")
    with pytest.raises(KafkaUnavailableError, match=r"state topic .* does not exist"):
        run(source, create_topic(topic_name))
    assert topic_name not in inventory.observe("c", source).topics


def test_a_change_that_records_ownership_needs_the_owner(source: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="owner"):
        changes.execute(source, create_topic("never-created"))


def test_an_unreachable_cluster_fails_in_time_naming_what_failed(topic_name: str) -> None:
    bootstrap = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(KafkaUnavailableError) as failure:
        changes.execute(
            {"bootstrap.servers": bootstrap},
            Change(
                Action.UPDATE, Resource.PARTITIONS, "c", topic_name, "t", after={"partitions": 2}
            ),
            timeout=2,
        )
    assert time.monotonic() - started < 4
    assert str(failure.value).startswith(
        f"increasing topic {topic_name} to 2 partitions on {bootstrap} failed: "
    )


def test_a_change_apply_does_not_know_is_an_error(source: dict[str, str]) -> None:
    with pytest.raises(TopoError, match="cannot replace a topic"):
        changes.execute(source, Change(Action.REPLACE, Resource.TOPIC, "c", "x", "test"))


# -- ACLs (on the SASL cluster) -------------------------------------------------------------


def test_acls_are_created_observed_owned_and_deleted(
    secured: dict[str, str], topic_name: str
) -> None:
    read = Acl("TOPIC", topic_name, "LITERAL", "User:alice", "*", "READ", "ALLOW")
    everything = Acl("CLUSTER", "kafka-cluster", "LITERAL", "User:alice", "*", "ALL", "ALLOW")
    denied = Acl("GROUP", f"{topic_name}-", "PREFIXED", "User:bob", "10.0.0.1", "DESCRIBE", "DENY")
    for acl in (read, everything, denied):
        run(secured, acl_change(Action.CREATE, acl))

    cluster = inventory.observe("c", secured)
    assert cluster.acls is not None
    assert {read, everything, denied} <= set(cluster.acls)
    for acl in (read, everything, denied):
        assert cluster.owned[f"acl:{acl_key(acl)}"] == Owned(
            "acl", acl_key(acl), ("e->c",), acl=acl, owner=OWNER
        )

    for acl in (read, everything, denied):
        run(secured, acl_change(Action.DELETE, acl))
    cluster = inventory.observe("c", secured)
    assert cluster.acls is not None
    assert not {read, everything, denied} & set(cluster.acls)
    assert not any(key.startswith("acl:") for key in cluster.owned)


def test_an_acl_with_a_term_kafka_does_not_know_is_an_error(secured: dict[str, str]) -> None:
    acl = Acl("TOPIC", "x", "LITERAL", "User:alice", "*", "SNOOZE", "ALLOW")
    with pytest.raises(TopoError, match="SNOOZE is not a Kafka ACL term"):
        run(secured, acl_change(Action.CREATE, acl))


def test_wrong_credentials_are_reported_quickly_naming_the_cluster(
    secured: dict[str, str],
) -> None:
    wrong = {**secured, "sasl.password": "not-the-password"}
    started = time.monotonic()
    with pytest.raises(KafkaUnavailableError) as failure:
        inventory.observe("east", wrong, timeout=10)
    assert time.monotonic() - started < 5
    message = str(failure.value)
    assert message.startswith(f"cluster east ({secured['bootstrap.servers']}) is unreachable: ")
    assert "Authentication failed" in message
    assert wrong["sasl.password"] not in message


def test_a_principal_without_rights_cannot_be_observed(secured: dict[str, str]) -> None:
    admin = AdminClient({**secured})
    credential = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)
    upsert = UserScramCredentialUpsertion("nobody", credential, b"nobody-password")
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(10)
    nobody = {**secured, "sasl.username": "nobody", "sasl.password": "nobody-password"}

    deadline = time.monotonic() + 10  # the new credential reaches the broker asynchronously
    while True:
        try:
            inventory.observe("east", nobody, timeout=5)
        except KafkaUnavailableError as problem:
            if "Authentication failed" in str(problem) and time.monotonic() < deadline:
                continue
            assert str(problem).startswith(f"cluster east ({secured['bootstrap.servers']}): ")
            assert "authorization failed" in str(problem).lower()
            return
        pytest.fail("a principal without rights was observed")
