"""A saved plan edited by hand cannot be turned against the clusters: `topo apply PLAN.json`
on the session's lab clusters, as a user (or an attacker with write access to the plan file)
runs it.

Each test saves an honest plan of its own topology (one copy to make), then edits a copy of
the plan and applies it: every edit must exit 1 with one `error:` line and no traceback, and
leave the clusters as they were. Some edits recompute the fingerprint (`fingerprint_of` is
public), so the layer that refuses them is the comparison with a fresh plan, or, with that
comparison switched off in the process, the guard. Finally the honest plan still applies.

Deletes, owners and clusters are tampered with on the plaintext lab pair, with a topic
`payroll-<uuid>` on the target that topo does not own. ACLs are tampered with on the secured
pair (`secured_lab`: SASL_SSL and StandardAuthorizer), where the source topic has an ACL the
topology syncs, so the honest plan copies one and "no ACL for User:evil on the target" is
checked against a cluster that has ACLs at all.
"""

import copy
import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# The admin module re-exports these without declaring it; mypy still knows their types.
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from tests.conftest import SOURCE_CLUSTER, TARGET_CLUSTER, SecuredLab
from tests.helpers import run_topo
from topology.core.mm2 import yaml_out
from topology.core.observed import Acl
from topology.core.plan.values import fingerprint_of
from topology.kafka import inventory, records

pytestmark = pytest.mark.kafka

EVIL = "User:evil"
READER = "User:app"  # granted READ on the secured source topic: the ACL the topology syncs
# `topo` with the comparison against a fresh plan switched off: what is left is the guard.
GUARD_ONLY = (
    "from topology.core.plan import saved\n"
    "saved.first_difference = lambda ours, fresh: None\n"
    "from topology.cli import main\n"
    "main()\n"
)

Edit = Callable[["Tamper", dict[str, Any]], object]


class Tamper:
    """One test's topology, its saved plan, and the lab clusters as they were before.

    `source` and `target` are the clusters' admin client configs; `clusters` the topology's
    `clusters:` entries for aliases src and dst."""

    def __init__(
        self,
        folder: Path,
        source: dict[str, str],
        target: dict[str, str],
        clusters: dict[str, Any],
        *,
        source_acl: bool = False,
    ) -> None:
        self.prefix = f"st{uuid.uuid4().hex[:8]}"
        self.folder = folder
        self.source = source
        self.target = target
        self.payroll = f"payroll-{uuid.uuid4().hex[:8]}"
        self.orders = f"{self.prefix}-orders"
        self.copy = f"src.{self.orders}"
        self.file = folder / f"{self.prefix}.yaml"  # its name, so its owner, is the prefix
        topology = {
            "version": 1,
            "engine": {"runner": "none"},
            "clusters": clusters,
            "defaults": {"replication_factor": 1},
            "flows": [
                {
                    "mirror": {"from": "src", "to": "dst"},
                    "topics": {"include": [f"{self.prefix}-.*"]},
                }
            ],
        }
        header = ["topics and ACLs only: no replication jobs here"]
        self.file.write_text(yaml_out.render(topology, header))
        records.create_topic(self.source, self.orders, 2)
        records.create_topic(self.target, self.payroll, 3)  # someone else's: topo never owned it
        if source_acl:
            self.grant_reader()
        self.saved = folder / "plan.json"
        done = run_topo("plan", str(self.file), "-o", str(self.saved))
        assert done.returncode == 0, done.stderr
        self.honest: dict[str, Any] = json.loads(self.saved.read_text())
        assert any(c["name"] == self.copy for c in self.honest["changes"])
        self.before = self.state()

    def grant_reader(self) -> None:
        """READER may READ the source topic (granted by the admin, as an operator would, so
        with no ownership record); the topology's ACL sync copies that to the target."""
        admin = _admin(self.source)  # kept until the answer: a collected client drops it
        for future in admin.create_acls([_reading(self.orders)]).values():
            future.result(30)
        wanted = Acl("TOPIC", self.orders, "LITERAL", READER, "*", "READ", "ALLOW")
        deadline = time.monotonic() + 20
        while wanted not in _acls(self.source) and time.monotonic() < deadline:
            time.sleep(0.2)  # ACLs reach the brokers through the metadata log
        assert wanted in _acls(self.source), "the source ACL never showed"

    def state(self) -> dict[str, Any]:
        """What an apply could have changed: every topic on both clusters, the target's ACLs
        and topo's ownership records there."""
        source = inventory.observe("src", self.source)
        target = inventory.observe("dst", self.target)
        payroll = target.topics.get(self.payroll)
        return {
            "source topics": sorted(source.topics),
            "target topics": sorted(target.topics),
            "payroll": payroll.to_dict() if payroll else None,
            "target acls": None if target.acls is None else sorted(target.acls),
            "target owned": sorted(target.owned),
        }

    def write(self, data: dict[str, Any], name: str = "edited.json") -> Path:
        path = self.folder / name
        path.write_text(json.dumps(data, indent=2) + "\n")
        return path

    def refused(self, path: Path, *flags: str, guard_only: bool = False) -> str:
        """Apply `path` (with `flags`); it must fail in one clear line and change nothing. The
        line."""
        if guard_only:
            done = subprocess.run(
                [sys.executable, "-c", GUARD_ONLY, "apply", str(path), *flags],
                capture_output=True,
                text=True,
                check=False,
            )
        else:
            done = run_topo("apply", str(path), *flags)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
        assert len(errors) == 1 and done.stderr.splitlines()[-1] == errors[0], done.stderr
        assert "Apply complete" not in done.stdout and "done (" not in done.stderr
        after = self.state()
        assert after == self.before
        assert after["payroll"] is not None  # still there, as it was
        assert not any(EVIL in key for key in after["target owned"])
        assert not any(acl.principal == EVIL for acl in after["target acls"] or ())
        return errors[0]

    # -- edits an attacker would make -------------------------------------------------------

    def delete_payroll(self) -> dict[str, Any]:
        return {
            "action": "delete",
            "resource": "topic",
            "cluster": "dst",
            "name": self.payroll,
            "before": {"partitions": 3, "replication_factor": 1, "configs": {}},
            "reason": "topo created it and its source no longer exists",
            "edges": ["src->dst"],
        }

    def grant_evil(self) -> dict[str, Any]:
        acl = Acl("TOPIC", self.copy, "LITERAL", EVIL, "*", "ALL", "ALLOW")
        return {
            "action": "create",
            "resource": "acl",
            "cluster": "dst",
            "name": self.copy,
            "after": acl.to_dict(),
            "reason": "copied from the source topic's ACLs by src->dst",
            "edges": ["src->dst"],
        }


def _admin(config: dict[str, str]) -> AdminClient:
    settings: dict[str, str | int | float | bool] = {**config}
    return AdminClient(settings)


def _reading(topic: str, kind: type[AclBinding] = AclBinding) -> Any:
    """READER's READ on `topic`: the source's ACL, and its copy on the target (as a filter
    matching exactly that binding when `kind` is AclBindingFilter)."""
    return kind(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        READER,
        "*",
        AclOperation.READ,
        AclPermissionType.ALLOW,
    )


def _acls(config: dict[str, str], topic: str | None = None) -> list[Acl]:
    """The cluster's ACLs (on `topic` only, if given), described with the admin `config`."""
    described = inventory.observe("acls", config).acls
    assert described is not None, "the cluster has no authorizer: its ACLs prove nothing"
    return [acl for acl in described if topic is None or acl.resource_name == topic]


def _evil_acls(config: dict[str, str]) -> list[Acl]:
    """Every ACL binding for User:evil on the cluster, on any resource."""
    return [acl for acl in _acls(config) if acl.principal == EVIL]


def resign(data: dict[str, Any]) -> dict[str, Any]:
    """The attacker recomputes the fingerprint, as topo would."""
    data["fingerprint"] = fingerprint_of(data)
    return data


@pytest.fixture
def tamper(tmp_path: Path, lab: dict[str, dict[str, str]]) -> Tamper:
    """On the plaintext pair: the clusters reached by bootstrap alone."""
    source, target = lab[SOURCE_CLUSTER], lab[TARGET_CLUSTER]
    clusters = {
        "src": {"bootstrap": source["bootstrap.servers"]},
        "dst": {"bootstrap": target["bootstrap.servers"]},
    }
    return Tamper(tmp_path, source, target, clusters)


@pytest.fixture
def secured_tamper(tmp_path: Path, secured_lab: SecuredLab) -> Iterator[Tamper]:
    """On the secured pair, as its admin, with READER's ACL on the source topic; the ACLs on
    this test's topics are removed at the end."""
    source = secured_lab.admin_config(secured_lab.source)
    target = secured_lab.admin_config(secured_lab.target)
    clusters = {
        "src": secured_lab.entry(secured_lab.source),
        "dst": secured_lab.entry(secured_lab.target),
    }
    made = Tamper(tmp_path, source, target, clusters, source_acl=True)
    assert made.before["target acls"] is not None, "the secured target lists no ACLs"
    yield made
    for config, topic in ((source, made.orders), (target, made.copy)):
        admin = _admin(config)  # kept until the answer: a collected client drops it
        for future in admin.delete_acls([_reading(topic, AclBindingFilter)]).values():
            future.result(30)


def _add_delete(t: Tamper, d: dict[str, Any]) -> object:
    d["changes"].append(t.delete_payroll())
    d["summary"]["delete"] += 1
    return d


def _add_acl(t: Tamper, d: dict[str, Any]) -> object:
    d["changes"].append(t.grant_evil())
    d["summary"]["create"] += 1
    return d


def _acl_to_evil(t: Tamper, d: dict[str, Any]) -> object:
    """The honest ACL copy, made out to User:evil instead."""
    [change] = [c for c in d["changes"] if c["resource"] == "acl"]
    change["after"]["principal"] = EVIL
    return d


EDITS: dict[str, Edit] = {
    "delete of payroll": _add_delete,
    "owner changed": lambda t, d: d["topology"].update(name="someone-else"),
    "allow_delete flipped": lambda t, d: d.update(allow_delete=not d["allow_delete"]),
    "change duplicated": lambda t, d: d["changes"].append(copy.deepcopy(d["changes"][0])),
    "unknown cluster": lambda t, d: d["changes"][0].update(cluster="elsewhere"),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_a_hand_edit_is_refused_as_edited_before_anything_is_read(
    tamper: Tamper, edit: str
) -> None:
    data = copy.deepcopy(tamper.honest)
    EDITS[edit](tamper, data)
    path = tamper.write(data)
    line = tamper.refused(path)
    assert line == (
        f"error: {path}: the plan was edited after `topo plan` wrote it (its fingerprint does "
        "not match its content); plan again"
    )


def _flip_and_delete(t: Tamper, d: dict[str, Any]) -> object:
    d.update(allow_delete=True)
    return _add_delete(t, d)


# Edits with the fingerprint recomputed, the flags apply is given, and the layer that must then
# say no.
RESIGNED: dict[str, tuple[Edit, tuple[str, ...], str]] = {
    "delete of payroll": (_add_delete, (), "stale or edited plan: "),
    "owner changed": (
        lambda t, d: d["topology"].update(name="someone-else"),
        (),
        "the plan's owner 'someone-else' is not the topology's name",
    ),
    "allow_delete flipped, with a delete of payroll": (
        _flip_and_delete,
        (),
        "was made with --allow-delete and deletes 1 topic(s); confirm with `topo apply ",
    ),
    "allow_delete flipped, with a delete of payroll, and --allow-delete given": (
        _flip_and_delete,
        ("--allow-delete",),
        "stale or edited plan: ",
    ),
    "change duplicated": (
        lambda t, d: d["changes"].append(copy.deepcopy(d["changes"][0])),
        (),
        "repeats change 1",
    ),
    "unknown cluster": (
        lambda t, d: d["changes"][0].update(cluster="elsewhere"),
        (),
        "cluster 'elsewhere' is not one of the plan's clusters",
    ),
}


@pytest.mark.parametrize("edit", list(RESIGNED), ids=list(RESIGNED))
def test_an_edit_with_the_fingerprint_recomputed_is_still_refused(
    tamper: Tamper, edit: str
) -> None:
    change, flags, message = RESIGNED[edit]
    data = copy.deepcopy(tamper.honest)
    change(tamper, data)
    line = tamper.refused(tamper.write(resign(data)), *flags)
    assert message in line, line


def test_a_forged_change_is_not_the_plan_topo_makes_and_is_named(tamper: Tamper) -> None:
    data = _add_delete(tamper, copy.deepcopy(tamper.honest))
    assert isinstance(data, dict)
    path = tamper.write(resign(data))
    line = tamper.refused(path)
    number = len(data["changes"])
    assert line == (
        f"error: stale or edited plan: {path} is not the plan topo makes now (change {number} "
        f"(dst: delete topic {tamper.payroll}) is not one topo plans now); plan again"
    )


@pytest.mark.parametrize(
    ("edit", "flags", "message"),
    [
        (_add_delete, (), "the plan was not made with --allow-delete"),
        (
            _flip_and_delete,
            ("--allow-delete",),
            "topo did not create this topic (no ownership record on the cluster names it)",
        ),
    ],
    ids=["delete without allow_delete", "delete of a topic topo does not own"],
)
def test_the_guard_alone_refuses_what_the_comparison_would(
    tamper: Tamper, edit: Edit, flags: tuple[str, ...], message: str
) -> None:
    data = copy.deepcopy(tamper.honest)
    edit(tamper, data)
    line = tamper.refused(tamper.write(resign(data)), *flags, guard_only=True)
    assert line.startswith("error: refusing to apply change ") and message in line, line
    assert line.endswith("; nothing was changed")


def test_a_truncated_plan_is_refused_in_one_line(tamper: Tamper) -> None:
    text = tamper.saved.read_text()
    path = tamper.folder / "truncated.json"
    path.write_text(text[: len(text) // 2])
    line = tamper.refused(path)
    assert line.startswith(f"error: {path}:") and "not a complete plan" in line, line


def test_the_honest_plan_still_applies_after_every_refusal(tamper: Tamper) -> None:
    for edit in EDITS.values():
        data = copy.deepcopy(tamper.honest)
        edit(tamper, data)
        tamper.refused(tamper.write(data))
    for edit, flags, _message in RESIGNED.values():
        data = copy.deepcopy(tamper.honest)
        edit(tamper, data)
        tamper.refused(tamper.write(resign(data)), *flags)
    done = run_topo("apply", str(tamper.saved))
    assert done.returncode == 0, done.stdout + done.stderr
    after = tamper.state()
    assert f"src.{tamper.orders}" in after["target topics"]
    assert after["payroll"] == tamper.before["payroll"]


# -- ACLs, on clusters that enforce them ---------------------------------------------------------

ACL_EDITS: dict[str, Edit] = {
    "ACL create for User:evil ALL": _add_acl,
    "the copied ACL made out to User:evil": _acl_to_evil,
}


def _acl_refused(tamper: Tamper, line: str) -> None:
    """Refused, and the target, which enforces ACLs, has none for User:evil, described
    directly with the admin's config."""
    assert line.startswith("error: "), line
    assert _evil_acls(tamper.target) == []


def test_the_honest_secured_plan_copies_the_source_acl(secured_tamper: Tamper) -> None:
    """So the ACL cases below tamper with a plan that really syncs ACLs."""
    acls = [c["after"] for c in secured_tamper.honest["changes"] if c["resource"] == "acl"]
    assert acls == [
        Acl("TOPIC", secured_tamper.copy, "LITERAL", READER, "*", "READ", "ALLOW").to_dict()
    ]
    assert _acls(secured_tamper.target, secured_tamper.copy) == []  # not yet


@pytest.mark.parametrize("edit", list(ACL_EDITS), ids=list(ACL_EDITS))
def test_an_acl_edit_is_refused_as_edited(secured_tamper: Tamper, edit: str) -> None:
    data = copy.deepcopy(secured_tamper.honest)
    ACL_EDITS[edit](secured_tamper, data)
    path = secured_tamper.write(data)
    line = secured_tamper.refused(path)
    assert line == (
        f"error: {path}: the plan was edited after `topo plan` wrote it (its fingerprint does "
        "not match its content); plan again"
    )
    _acl_refused(secured_tamper, line)


@pytest.mark.parametrize("edit", list(ACL_EDITS), ids=list(ACL_EDITS))
def test_an_acl_edit_with_the_fingerprint_recomputed_is_not_the_plan_topo_makes(
    secured_tamper: Tamper, edit: str
) -> None:
    data = copy.deepcopy(secured_tamper.honest)
    ACL_EDITS[edit](secured_tamper, data)
    path = secured_tamper.write(resign(data))
    line = secured_tamper.refused(path)
    assert line.startswith(
        f"error: stale or edited plan: {path} is not the plan topo makes now (change "
    ), line
    _acl_refused(secured_tamper, line)


@pytest.mark.parametrize("edit", list(ACL_EDITS), ids=list(ACL_EDITS))
def test_the_guard_alone_refuses_an_acl_no_source_acl_derives(
    secured_tamper: Tamper, edit: str
) -> None:
    data = copy.deepcopy(secured_tamper.honest)
    ACL_EDITS[edit](secured_tamper, data)
    line = secured_tamper.refused(secured_tamper.write(resign(data)), guard_only=True)
    assert line.startswith("error: refusing to apply change "), line
    assert f"the ACL ALLOW {EVIL} " in line and "is not derived from any source ACL" in line
    assert line.endswith("; nothing was changed")
    _acl_refused(secured_tamper, line)


def test_the_honest_secured_plan_applies_after_the_refusals(secured_tamper: Tamper) -> None:
    for edit in ACL_EDITS.values():
        data = copy.deepcopy(secured_tamper.honest)
        edit(secured_tamper, data)
        secured_tamper.refused(secured_tamper.write(data))
        secured_tamper.refused(secured_tamper.write(resign(data)))
    done = run_topo("apply", str(secured_tamper.saved))
    assert done.returncode == 0, done.stdout + done.stderr
    assert _acls(secured_tamper.target, secured_tamper.copy) == [
        Acl("TOPIC", secured_tamper.copy, "LITERAL", READER, "*", "READ", "ALLOW")
    ]
    assert _evil_acls(secured_tamper.target) == []
