"""The permission check against clusters that authorize every request (StandardAuthorizer):
`topo plan` as a user granted every ACL docs/security.md lists but one stops with exactly the
kafka-acls.sh line for that one; granted all of them, it plans.

The lists below are written out from docs/security.md, not derived by
topology.core.permission_needs, so a mistake there shows here. They are for this file's
topology: a mirror `psrc -> pdst` of one
topic on the session's secured lab pair, every `sync` and `emit` on, and, for one case,
exactly-once delivery.
"""

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient

# confluent_kafka.admin re-exports these without declaring it: imported from where they are defined.
from confluent_kafka.admin._acl import AclBinding, AclBindingFilter, AclOperation, AclPermissionType
from confluent_kafka.admin._resource import ResourcePatternType, ResourceType

from tests.conftest import SecuredLab
from tests.helpers import run_topo
from topology.kafka import records

pytestmark = pytest.mark.kafka

USER = "topo"  # a lab user that no other test grants anything (SecuredLab.users)
MECHANISM = "SCRAM-SHA-512"
# Every ACL of USER. A name or host of None matches any (documented); the stub types them str.
USERS_ACLS = AclBindingFilter(
    ResourceType.ANY,
    None,  # type: ignore[arg-type]
    ResourcePatternType.ANY,
    f"User:{USER}",
    None,  # type: ignore[arg-type]
    AclOperation.ANY,
    AclPermissionType.ANY,
)
SOURCE, TARGET = "psrc", "pdst"  # the clusters' names in the topology


@dataclass(frozen=True)
class Grant:
    """One ACL for USER: (alias, resource type, name, pattern, operation) in Kafka's words."""

    alias: str
    resource: str  # TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID
    name: str
    operation: str  # READ, WRITE, DESCRIBE_CONFIGS, ...
    prefixed: bool = False

    def line(self, bootstrap: str) -> str:
        """The kafka-acls.sh line docs/security.md gives for it."""
        words = {"DESCRIBE_CONFIGS": "DescribeConfigs", "ALTER_CONFIGS": "AlterConfigs"}
        operation = words.get(self.operation, self.operation.capitalize())
        option = {
            "TOPIC": f"--topic {self.name}",
            "GROUP": f"--group {self.name}",
            "TRANSACTIONAL_ID": f"--transactional-id {self.name}",
            "CLUSTER": "--cluster",
        }[self.resource]
        pattern = " --resource-pattern-type prefixed" if self.prefixed else ""
        return (
            f"kafka-acls.sh --bootstrap-server {bootstrap} --add --allow-principal User:{USER} "
            f"--operation {operation} {option}{pattern}"
        )

    def binding(self) -> AclBinding:
        kind = ResourceType.BROKER if self.resource == "CLUSTER" else ResourceType[self.resource]
        pattern = ResourcePatternType.PREFIXED if self.prefixed else ResourcePatternType.LITERAL
        return AclBinding(
            kind,
            self.name,
            pattern,
            f"User:{USER}",
            "*",
            AclOperation[self.operation],
            AclPermissionType.ALLOW,
        )


def topic(alias: str, name: str, *operations: str) -> list[Grant]:
    return [Grant(alias, "TOPIC", name, op) for op in operations]


def documented(topic_name: str, owner: str, exactly_once: bool = False) -> list[Grant]:
    """docs/security.md's list for a mirror of `topic_name` from psrc to pdst."""
    copy = f"{SOURCE}.{topic_name}"
    internal = ("CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "READ", "WRITE")
    grants = [
        # Reading each cluster (no group: topo skips the groups it may not DESCRIBE, and the
        # secured pair holds other tests' groups, so this is tried for real).
        *(
            Grant(a, "CLUSTER", "kafka-cluster", op)
            for a in (SOURCE, TARGET)
            for op in ("DESCRIBE", "DESCRIBE_CONFIGS")
        ),
        *(Grant(a, "GROUP", "topo-observe-", "DESCRIBE", prefixed=True) for a in (SOURCE, TARGET)),
        # The source: the topic, heartbeats and topo's state topic.
        *topic(SOURCE, topic_name, "DESCRIBE", "DESCRIBE_CONFIGS", "READ"),
        *topic(SOURCE, "heartbeats", *internal),
        *topic(SOURCE, "topo-state.internal", *internal),
        # The target: the copies, topo's own topics, its readers' groups, ACL sync.
        *topic(TARGET, copy, *internal, "ALTER", "ALTER_CONFIGS"),
        *topic(TARGET, f"{SOURCE}.heartbeats", *internal, "ALTER", "ALTER_CONFIGS"),
        *topic(TARGET, "heartbeats", "CREATE", "DESCRIBE", "DESCRIBE_CONFIGS", "WRITE"),
        *topic(TARGET, "topo-state.internal", *internal),
        *topic(TARGET, f"{SOURCE}.checkpoints.internal", *internal),
        *topic(TARGET, f"topo-checkpoints.{SOURCE}.internal", *internal),
        *topic(TARGET, f"topo-offset-syncs.{SOURCE}.internal", *internal),
        # The home cluster (the first flow's target): the running replication's state.
        *topic(TARGET, "topo-runs.internal", *internal),
        *(
            Grant(TARGET, "GROUP", prefix, "DESCRIBE", prefixed=True)
            for prefix in ("topo-read-", "topo-offsets-", "topo-runs-")
        ),
        Grant(TARGET, "CLUSTER", "kafka-cluster", "ALTER"),
        # The copy loop's positions (the default engine), whatever the delivery
        Grant(TARGET, "GROUP", f"topo-eos.{owner}.{SOURCE}--{TARGET}", "READ"),
    ]
    if exactly_once:
        ids = f"topo.{owner}.{SOURCE}--{TARGET}."
        grants += [
            Grant(TARGET, "TRANSACTIONAL_ID", ids, "WRITE", prefixed=True),
            Grant(TARGET, "TRANSACTIONAL_ID", ids, "DESCRIBE", prefixed=True),
        ]
    return grants


class Setup:
    """One case: a fresh source topic, a topology reaching both clusters as USER, and USER's
    ACLs, all removed at the end."""

    def __init__(self, lab: SecuredLab, folder: Path) -> None:
        self.lab = lab
        self.names = {SOURCE: lab.source, TARGET: lab.target}
        self.topic = f"perm-{uuid.uuid4().hex[:8]}"
        self.owner = f"perm{uuid.uuid4().hex[:8]}"
        self.folder = folder
        # {**...}: a dict[str, str | int | float | bool], as AdminClient asks (dict is invariant)
        self.admins = {a: AdminClient({**lab.admin_config(n)}) for a, n in self.names.items()}
        records.create_topic(lab.admin_config(lab.source), self.topic, 2)

    def bootstrap(self, alias: str) -> str:
        return self.lab.bootstrap(self.names[alias])

    def topology(self, exactly_once: bool = False) -> Path:
        clusters = {}
        for alias, name in self.names.items():
            entry = self.lab.entry(name, USER, mechanism=MECHANISM)
            entry["security"]["sasl"]["password"] = f"${{env:{alias.upper()}_PASSWORD}}"  # type: ignore[index]
            clusters[alias] = entry
        flow: dict[str, object] = {
            "mirror": {"from": SOURCE, "to": TARGET},
            "topics": {"include": [self.topic]},
        }
        if exactly_once:
            flow["delivery"] = "exactly-once"
        document = {
            "version": 1,
            "name": self.owner,
            "clusters": clusters,
            "defaults": {"replication_factor": 1},
            "flows": [flow],
        }
        file = self.folder / f"{self.owner}.yaml"
        file.write_text(json.dumps(document, indent=2))  # JSON is YAML
        return file

    def env(self) -> dict[str, str]:
        passwords = {
            f"{alias.upper()}_PASSWORD": self.lab.user_config(name, USER, mechanism=MECHANISM)[
                "sasl.password"
            ]
            for alias, name in self.names.items()
        }
        return {**os.environ, **passwords}

    def grant(self, grants: list[Grant]) -> None:
        for alias, admin in self.admins.items():
            bindings = [g.binding() for g in grants if g.alias == alias]
            if bindings:
                for future in admin.create_acls(bindings, request_timeout=30).values():
                    future.result(30)
        self._wait_for(len(grants))

    def revoke_all(self) -> None:
        for admin in self.admins.values():
            for future in admin.delete_acls([USERS_ACLS], request_timeout=30).values():
                future.result(30)
        self._wait_for(0)

    def _wait_for(self, count: int, timeout: float = 20) -> None:
        """Until the brokers list `count` ACLs for USER (ACLs reach the authorizer through the
        metadata log, a moment after create_acls returns)."""
        deadline = time.monotonic() + timeout
        while True:
            found = sum(
                len(admin.describe_acls(USERS_ACLS, request_timeout=10).result(10))
                for admin in self.admins.values()
            )
            if found == count or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert found == count, f"{found} ACLs for User:{USER}, expected {count}"
        time.sleep(1)  # and through to each broker's authorizer

    def plan(self, file: Path) -> tuple[int, str, str]:
        """topo plan's exit code, standard output and standard error."""
        done = run_topo("plan", str(file), "--format", "json", env=self.env())
        return done.returncode, done.stdout, done.stderr


@pytest.fixture
def setup(secured_lab: SecuredLab, tmp_path: Path) -> Iterator[Setup]:
    prepared = Setup(secured_lab, tmp_path)
    prepared.revoke_all()
    yield prepared
    prepared.revoke_all()


def lines_shown(stderr: str) -> list[str]:
    return [line.strip() for line in stderr.splitlines() if line.strip().startswith("kafka-acls")]


def test_every_documented_acl_granted_the_plan_passes(setup: Setup) -> None:
    setup.grant(documented(setup.topic, setup.owner))
    code, stdout, stderr = setup.plan(setup.topology())
    assert code == 0, stderr
    assert f"Permissions: none missing on {TARGET}, {SOURCE}." in stderr, stderr
    assert lines_shown(stderr) == []
    assert json.loads(stdout)["changes"], "the plan is printed"


WITHHELD = [
    # asked of the broker: the existing source topic's operations
    pytest.param(lambda t, o: Grant(SOURCE, "TOPIC", t, "READ"), False, id="read-source"),
    # judged by the ACLs: the copy does not exist yet
    pytest.param(
        lambda t, o: Grant(TARGET, "TOPIC", f"{SOURCE}.{t}", "WRITE"), False, id="write-copy"
    ),
    # asked by a validate-only create
    pytest.param(
        lambda t, o: Grant(TARGET, "TOPIC", f"{SOURCE}.{t}", "CREATE"), False, id="create-copy"
    ),
    # reading the source is refused: explained instead of the bare error (on the target,
    # ALTER on the cluster, for ACL sync, implies DESCRIBE)
    pytest.param(
        lambda t, o: Grant(SOURCE, "CLUSTER", "kafka-cluster", "DESCRIBE"),
        False,
        id="describe-cluster",
    ),
    # judged by the ACLs, for each transactional id the job would use
    pytest.param(
        lambda t, o: Grant(
            TARGET, "TRANSACTIONAL_ID", f"topo.{o}.{SOURCE}--{TARGET}.", "WRITE", prefixed=True
        ),
        True,
        id="transactional-ids",
    ),
    # asked of the broker: the progress group, described though it does not exist yet (the copy
    # loop commits its positions there whatever the delivery)
    pytest.param(
        lambda t, o: Grant(TARGET, "GROUP", f"topo-eos.{o}.{SOURCE}--{TARGET}", "READ"),
        False,
        id="progress-group",
    ),
]


@pytest.mark.parametrize(("withheld", "exactly_once"), WITHHELD)
def test_one_acl_withheld_the_plan_stops_with_exactly_its_line(
    setup: Setup, withheld: Callable[[str, str], Grant], exactly_once: bool
) -> None:
    missing = withheld(setup.topic, setup.owner)
    every = documented(setup.topic, setup.owner, exactly_once)
    assert missing in every
    setup.grant([g for g in every if g != missing])
    code, stdout, stderr = setup.plan(setup.topology(exactly_once))
    assert code == 1, stderr
    assert lines_shown(stderr) == [missing.line(setup.bootstrap(missing.alias))], stderr
    assert f"error: 1 permission(s) missing on {missing.alias}" in stderr
    assert stdout == "", "no plan is printed"


def test_a_permission_only_a_later_change_needs_is_a_warning(setup: Setup) -> None:
    """ALTER on the target cluster copies ACLs, and the source topic has none yet."""
    alter = Grant(TARGET, "CLUSTER", "kafka-cluster", "ALTER")
    setup.grant([g for g in documented(setup.topic, setup.owner) if g != alter])
    code, _stdout, stderr = setup.plan(setup.topology())
    assert code == 0, stderr
    assert "a later change will need" in stderr
    assert lines_shown(stderr) == [alter.line(setup.bootstrap(TARGET))]


@pytest.mark.spark
@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
def test_with_only_the_documented_acls_replication_copies_every_record(
    setup: Setup, exactly_once: bool
) -> None:
    """Least privilege for real: topo's principal holds the ACLs docs/security.md lists and no
    more, and apply creates the copies and copies every record as it is."""
    from tests.integration.test_replication import contents, expected, varied

    source = setup.lab.admin_config(setup.lab.source)
    records.produce(source, varied(setup.topic, 12, partitions=2))
    setup.grant(documented(setup.topic, setup.owner, exactly_once))
    file = setup.topology(exactly_once)
    done = run_topo("apply", str(file), "--auto-approve", "--once", env=setup.env())
    assert done.returncode == 0, done.stdout + done.stderr
    target = setup.lab.admin_config(setup.lab.target)
    copied = records.read_topic(target, f"{SOURCE}.{setup.topic}")
    assert contents(copied) == expected(records.read_topic(source, setup.topic), SOURCE)
