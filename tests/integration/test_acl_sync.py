"""ACL sync by MM2's rules between two SASL lab clusters that enforce ACLs."""

import json
import os
from pathlib import Path

import pytest

from tests.conftest import SecuredLab
from tests.helpers import run_topo
from topology.core.naming import STATE_TOPIC
from topology.core.observed import Acl
from topology.core.plan.values import Action, Change, Resource
from topology.kafka import changes, inventory, records

pytestmark = pytest.mark.kafka

SOURCE, TARGET = SecuredLab.source, SecuredLab.target


@pytest.fixture(scope="module")
def secured(secured_lab: SecuredLab) -> dict[str, dict[str, str]]:
    """The session's secured pair (SASL_SSL, ACLs enforced), as its admin."""
    return {name: secured_lab.admin_config(name) for name in (SOURCE, TARGET)}


def acl(topic: str, operation: str, permission: str = "ALLOW", principal: str = "User:app") -> Acl:
    return Acl("TOPIC", topic, "LITERAL", principal, "*", operation, permission)


def grant(config: dict[str, str], binding: Acl) -> None:
    """An operator's ACL on the source (recorded under an owner no topology uses)."""
    change = Change(
        Action.CREATE, Resource.ACL, "src", binding.resource_name, "test", after=binding.to_dict()
    )
    changes.execute(config, change, owner="test-setup")


def revoke(config: dict[str, str], binding: Acl) -> None:
    change = Change(
        Action.DELETE, Resource.ACL, "src", binding.resource_name, "test", before=binding.to_dict()
    )
    changes.execute(config, change, owner="test-setup")


def test_acls_are_synced_by_mm2_rules_and_revocations_need_allow_delete(
    secured: dict[str, dict[str, str]], tmp_path: Path
) -> None:
    source, target = secured[SOURCE], secured[TARGET]
    records.create_topic(source, STATE_TOPIC, 1, exist_ok=True)
    records.create_topic(source, "orders", 1, exist_ok=True)
    granted = [
        acl("orders", "READ"),
        acl("orders", "WRITE"),  # ALLOW WRITE is never copied
        acl("orders", "ALL", principal="User:ops"),  # becomes READ
        acl("orders", "DESCRIBE", "DENY", principal="User:intern"),  # copied as it is
    ]
    for binding in granted:
        grant(source, binding)
    file = tmp_path / "secured.yaml"
    file.write_text(
        "version: 1\nengine: {runner: none}\nclusters:\n"
        + "".join(
            f"  {alias}:\n"
            f'    bootstrap: "{config["bootstrap.servers"]}"\n'
            f"    security:\n"
            f"      protocol: {config['security.protocol']}\n"
            f"      tls: {{ca: {config['ssl.ca.location']}}}\n"
            f"      sasl: {{mechanism: {config['sasl.mechanism']}, username: "
            f'{config["sasl.username"]}, password: "${{env:{alias.upper()}_PASSWORD}}"}}\n'
            for alias, config in (("src", source), ("dst", target))
        )
        + "defaults: {replication_factor: 1}\n"
        + "flows:\n  - mirror: {from: src, to: dst}\n    topics: {include: [orders]}\n"
    )
    env = {
        **os.environ,
        "SRC_PASSWORD": source["sasl.password"],
        "DST_PASSWORD": target["sasl.password"],
    }

    planned = run_topo("plan", str(file), "--format", "json", env=env)
    assert planned.returncode == 0, planned.stderr
    for secret in (source["sasl.password"], target["sasl.password"]):
        assert secret not in planned.stdout + planned.stderr
    plan = json.loads(planned.stdout)
    assert sorted(
        (c["after"]["principal"], c["after"]["operation"], c["after"]["permission"])
        for c in plan["changes"]
        if c["resource"] == "acl"
    ) == [
        ("User:app", "READ", "ALLOW"),
        ("User:intern", "DESCRIBE", "DENY"),
        ("User:ops", "READ", "ALLOW"),
    ]
    applied = run_topo("apply", str(file), "--auto-approve", env=env)
    assert applied.returncode == 0, applied.stderr
    on_target = inventory.observe("dst", target).acls
    assert on_target is not None
    assert {
        acl("src.orders", "READ"),
        acl("src.orders", "READ", principal="User:ops"),
        acl("src.orders", "DESCRIBE", "DENY", principal="User:intern"),
    } <= set(on_target)
    assert acl("src.orders", "WRITE") not in on_target
    assert run_topo("plan", str(file), "--detailed-exitcode", env=env).returncode == 0

    revoke(source, granted[0])  # the source revokes app's READ
    kept = json.loads(run_topo("plan", str(file), "--format", "json", env=env).stdout)
    assert not kept["changes"]
    assert any("User:app READ" in note["message"] for note in kept["notes"])
    deleting = json.loads(
        run_topo("plan", str(file), "--format", "json", "--allow-delete", env=env).stdout
    )
    assert [(c["action"], c["resource"], c["before"]) for c in deleting["changes"]] == [
        ("delete", "acl", acl("src.orders", "READ").to_dict())
    ]
    assert run_topo("apply", str(file), "--auto-approve", "--allow-delete", env=env).returncode == 0
    on_target = inventory.observe("dst", target).acls
    assert on_target is not None and acl("src.orders", "READ") not in on_target
