"""Replication between clusters that authenticate every client and authorize every request,
end to end on the session's secured lab pair (SASL_SSL with SCRAM, PLAIN and OAUTHBEARER, and
mutual TLS on its own port; StandardAuthorizer on): every copy compared record by record, and
no password or private key anywhere topo writes or any process shows.
"""

import json
import os
import subprocess
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import SecuredLab
from tests.helpers import run_topo
from tests.integration.test_acl_sync import acl, grant
from tests.integration.test_offsets import committed, consume_part, rest, resume, seen
from tests.integration.test_replication import (
    STATUS_SCHEMA,
    Settings,
    Topology,
    contents,
    expected,
    varied,
    wait_for,
)
from tests.key_store_files import key_store, trust_store
from topology.core.mm2 import yaml_out
from topology.core.naming import RUNS_TOPIC
from topology.host import jobstate
from topology.kafka import inventory, records

if TYPE_CHECKING:
    from tests.spark_cluster import StandaloneSpark

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


class SecuredTopology(Topology):
    """A test's topology over the secured pair: each alias logs in its own way."""

    def __init__(self, folder: Path, lab: SecuredLab, logins: dict[str, dict[str, object]]):
        names = {alias: str(login.pop("cluster")) for alias, login in logins.items()}
        super().__init__(folder, {alias: lab.admin_config(n) for alias, n in names.items()})
        self.entries = {
            alias: lab.entry(names[alias], **login)  # type: ignore[arg-type]
            for alias, login in logins.items()
        }

    def write(self, flows: str, extra: str = "", more: Settings | None = None) -> None:
        entries = {a: {**e, **(more or {}).get(a, {})} for a, e in self.entries.items()}
        clusters = yaml_out.render({"clusters": entries}).rstrip("\n")
        lines = [
            "version: 1",
            clusters,
            "defaults:",
            "  replication_factor: 1",
            f'  topics: {{include: ["{self.prefix}-.*"]}}',
        ]
        self.file.write_text("\n".join([*lines, extra, "flows:", flows]) + "\n")


def leaks(secrets: Iterable[str], texts: Iterable[str]) -> list[str]:
    """Which secrets appear in any of the texts (never the secret itself: its length)."""
    everything = "\n".join(texts)
    return [f"a secret of {len(s)} characters" for s in secrets if s in everything]


def written_by_topo() -> list[str]:
    """Every file of every replication job: state, status, logs, Spark checkpoints."""
    state = Path(os.environ["TOPO_STATE_DIR"])
    found = [p.read_bytes().decode(errors="replace") for p in state.rglob("*") if p.is_file()]
    assert found, "no job state to scan"
    return found


def command_lines() -> list[str]:
    """Every process's command line: world-readable in /proc."""
    lines = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            lines.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            continue
    return lines


def job_folder_is_private(owner: str) -> bool:
    """Logs, settings and checkpoints of a job are readable by its user only."""
    return jobstate.folder(owner).stat().st_mode & 0o077 == 0


@pytest.fixture
def scram_pair(tmp_path: Path, secured_lab: SecuredLab) -> Iterator[SecuredTopology]:
    made = SecuredTopology(
        tmp_path,
        secured_lab,
        {"a": {"cluster": secured_lab.source}, "b": {"cluster": secured_lab.target}},
    )
    yield made
    made.stop()


def test_active_active_over_sasl_ssl_scram_copies_discovers_syncs_and_fails_over(
    scram_pair: SecuredTopology, secured_lab: SecuredLab
) -> None:
    t = scram_pair
    a, b = t.clusters["a"], t.clusters["b"]
    assert t.entries["a"]["security"] == {
        "protocol": "SASL_SSL",
        "sasl": {
            "mechanism": "SCRAM-SHA-512",
            "username": "admin",
            "password": t.entries["a"]["security"]["sasl"]["password"],  # type: ignore[index]
        },
        "tls": t.entries["a"]["security"]["tls"],  # type: ignore[index]
    }
    orders = t.topic("orders")
    records.create_topic(a, orders, 3)
    records.create_topic(b, orders, 2)
    records.produce(a, varied(orders, 24, partitions=3, tag="a"))
    records.produce(b, varied(orders, 10, partitions=2, tag="b"))
    group = f"{t.prefix}-orders"
    # Stated, the ACL look backs off to a minute at most (at topo's defaults: 600 s, as MM2's).
    t.write(
        "  - active-active: [a, b]", "engine: {intervals: {sync.topic.acls.interval.seconds: 10}}"
    )
    shown = [t.apply()]

    remote = f"a.{orders}"
    assert contents(wait_for(b, remote, 24)) == expected(records.read_topic(a, orders), "a")
    assert contents(wait_for(a, f"b.{orders}", 10)) == expected(records.read_topic(b, orders), "b")

    # Discovery: a topic made after the start is created on the target and copied.
    late = t.topic("late")
    records.create_topic(a, late, 2)
    records.produce(a, varied(late, 8, partitions=2, tag="l"))
    assert contents(wait_for(b, f"a.{late}", 8)) == expected(records.read_topic(a, late), "a")

    # An ACL granted on the source while it runs reaches the copy within seconds (ACL sync is
    # on by default), recorded as a change the running driver made.
    grant(a, acl(orders, "READ", principal="User:app"))
    copy_acl = acl(remote, "READ", principal="User:app")
    deadline = time.monotonic() + 120  # a quiet look waits a minute at most, as stated
    while copy_acl not in set(inventory.observe("b", b).acls or ()):
        assert time.monotonic() < deadline, "the source's new ACL never reached the copy"
        time.sleep(1)
    deadline = time.monotonic() + 30
    while not [c for c in t.status()["changes"] if c["resource"] == "acl" and c["name"] == remote]:
        assert time.monotonic() < deadline, "the ACL sync is not in topo status"
        time.sleep(1)

    shown += synced_and_running(t, "a", "b", orders, group)
    plan = run_topo("plan", str(t.file), "--format", "json")
    assert plan.returncode == 0, plan.stderr
    shown += [plan.stdout, plan.stderr]

    # While it runs: no secret in any command line, job file or output; job files private.
    secrets = secured_lab.secrets()
    assert len(secrets) >= 8  # both clusters' admin, broker and user passwords, and keys
    run_state = [  # what any machine reads: the jobs, the lease, the status
        (r.value or b"").decode(errors="replace") for r in records.read_topic(b, RUNS_TOPIC)
    ]
    assert any(f'"owner":"{t.prefix}"' in value for value in run_state)
    assert leaks(secrets, [*command_lines(), *written_by_topo(), *shown, *run_state]) == []
    assert job_folder_is_private(t.prefix)

    moved = failed_over(t, "a", "b", orders, group)
    assert leaks(secrets, [moved.stdout, moved.stderr, *written_by_topo()]) == []


# The group's first records of each partition of a 3-partition topic, read on the source.
CONSUMED = {0: 3, 1: 2, 2: 4}


def synced_and_running(t: Topology, a: str, b: str, orders: str, group: str) -> list[str]:
    """With `a` and `b` replicating both ways: `group`'s position on `orders` reaches its idle
    copy on `b`; `topo status` shows both flows running with heartbeats; `topo offsets` shows
    the group's translation. What the commands printed."""
    source, target, remote = t.clusters[a], t.clusters[b], f"{a}.{orders}"
    consume_part(source, group, orders, CONSUMED)
    deadline = time.monotonic() + 90
    while committed(target, group, remote, 3) != CONSUMED:
        assert time.monotonic() < deadline, f"the group was never synced to {b}"
        time.sleep(2)
    status = t.status()
    deadline = time.monotonic() + 60
    while any(f["latency_ms"] is None for f in status["flows"]) and time.monotonic() < deadline:
        time.sleep(1)
        status = t.status()
    STATUS_SCHEMA.validate(status)
    assert status["running"] and {f["flow"]: f["state"] for f in status["flows"]} == {
        f"{a}->{b}": "running",
        f"{b}->{a}": "running",
    }
    assert all(f["latency_ms"] is not None for f in status["flows"]), "no heartbeat arrived"
    # The driver's looks made in its JVM (the metrics' partition ends and topic ids, by a Java
    # admin client) answer on these clusters (one that failed once on a busy machine answers
    # again within a few seconds).
    deadline = time.monotonic() + 30
    while unanswered_looks(t.prefix) and time.monotonic() < deadline:
        time.sleep(1)
    assert unanswered_looks(t.prefix) == []
    offsets = run_topo("offsets", str(t.file), "--group", group, "--json")
    assert offsets.returncode == 0, offsets.stderr
    assert {(m["from"], m["to"]) for m in json.loads(offsets.stdout)["groups"]} >= {(a, b)}
    return [json.dumps(status), offsets.stdout, offsets.stderr]


def unanswered_looks(owner: str) -> list[str]:
    """The driver's looks at its clusters that failed and have not answered since, as its log
    says: each failure is reported once, and so is the look's next answer."""
    lines = (jobstate.folder(owner) / jobstate.LOG).read_text(errors="replace").splitlines()
    failed = [line for line in lines if "metrics: reading" in line or "metrics: a client" in line]
    answered = [line for line in lines if "metrics: " in line and "answers the look" in line]
    return failed[len(answered) :]


def failed_over(
    t: Topology, a: str, b: str, orders: str, group: str
) -> "subprocess.CompletedProcess[str]":
    """Replication stopped, `topo failover` moves `group` from `a` to `b`: its consumers
    resume on the copy exactly where they left the source."""
    t.stop()
    moved = run_topo(
        "failover", str(t.file), "--from", a, "--to", b, "--group", group, "--auto-approve"
    )
    assert moved.returncode == 0, moved.stdout + moved.stderr
    source, target, remote = t.clusters[a], t.clusters[b], f"{a}.{orders}"
    assert committed(target, group, remote, 3) == CONSUMED
    assert seen(resume(target, group, remote, 3)) == seen(rest(source, orders, CONSUMED))
    return moved


def test_a_mutual_tls_source_mirrors_to_a_scram_target_on_the_spark_runner(
    tmp_path: Path,
    secured_lab: SecuredLab,
    spark_cluster: "StandaloneSpark",
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The source's certificates as Java key stores (a JKS key store whose key has a password
    of its own, a JKS trust store), the target's CA as a PKCS#12 trust store, as an
    enterprise's mm2.properties name them: plan's librdkafka and the copy slots' Java clients
    on Spark's executors read them alike."""
    t = SecuredTopology(
        tmp_path,
        secured_lab,
        {
            "src": {"cluster": secured_lab.source, "mtls": True},
            "dst": {"cluster": secured_lab.target},
        },
    )
    pem = t.entries["src"]["security"]["tls"]  # type: ignore[index]
    assert set(pem) == {"ca", "cert", "key"}
    store_password, key_password = "store-" + os.urandom(8).hex(), "key-" + os.urandom(8).hex()
    monkeypatch.setenv("TEST_STORE_PASSWORD", store_password)
    monkeypatch.setenv("TEST_KEY_PASSWORD", key_password)
    ca = Path(pem["ca"])
    folder = tmp_path / "src"
    folder.mkdir()
    certificate, key = Path(pem["cert"]), Path(pem["key"])
    keystore = key_store(folder, certificate, key, ca, "JKS", store_password, key_password)
    password = "${env:TEST_STORE_PASSWORD}"
    t.entries["src"]["security"]["tls"] = {  # type: ignore[index]
        "truststore": {"path": str(trust_store(folder, ca, "JKS", store_password))},
        "keystore": {
            "path": str(keystore),
            "password": password,
            "key_password": "${env:TEST_KEY_PASSWORD}",
        },
    }
    t.entries["dst"]["security"]["tls"] = {  # type: ignore[index]
        "truststore": {
            "path": str(trust_store(tmp_path, ca, "PKCS12", store_password)),
            "password": password,
            "type": "PKCS12",
        }
    }
    src, dst = t.clusters["src"], t.clusters["dst"]
    orders = t.topic("orders")
    records.create_topic(src, orders, 3)
    records.produce(src, varied(orders, 21, partitions=3))
    t.write(
        "  - mirror: {from: src, to: dst}",
        extra=f"engine:\n  runner: spark\n  master: {spark_cluster.master_url}\n",
    )
    log = t.apply("--once")
    assert contents(records.read_topic(dst, f"src.{orders}")) == expected(
        records.read_topic(src, orders), "src"
    )
    secrets = [*secured_lab.secrets(), store_password, key_password]
    assert leaks(secrets, [log, *written_by_topo()]) == []


def test_oauthbearer_both_ways_unsecured_source_and_oidc_client_credentials_target(
    tmp_path: Path, secured_lab: SecuredLab, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The source takes Kafka's unsecured test tokens; the target only tokens its OpenID
    Connect provider signed, which topo's clients (librdkafka's for plan, apply and status,
    the copy slots' Java client) ask the provider for with their client id and secret. Copied
    exactly once, record by record; the secret appears nowhere topo writes."""
    oidc = secured_lab.oidc
    monkeypatch.setenv("TEST_OIDC_SECRET", oidc.provider.clients["admin"])
    t = SecuredTopology(
        tmp_path,
        secured_lab,
        {
            "src": {"cluster": secured_lab.source, "mechanism": "OAUTHBEARER"},
            "dst": {"cluster": secured_lab.target},
        },
    )
    assert t.entries["src"]["client"] == {
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=admin",
    }
    dst_security = t.entries["dst"]["security"]
    t.entries["dst"] = {
        "bootstrap": t.entries["dst"]["bootstrap"],
        "security": {
            "protocol": "SASL_SSL",
            "sasl": {"mechanism": "OAUTHBEARER"},
            "tls": dst_security["tls"],  # type: ignore[index]
        },
        "client": {
            "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.client.id": "admin",
            "sasl.oauthbearer.client.secret": "${env:TEST_OIDC_SECRET}",
            "sasl.oauthbearer.token.endpoint.url": oidc.token_url,
            "sasl.oauthbearer.scope": "kafka",
        },
    }
    src, dst = t.clusters["src"], t.clusters["dst"]
    orders = t.topic("orders")
    records.create_topic(src, orders, 2)
    records.produce(src, varied(orders, 16, partitions=2))
    t.write("  - mirror: {from: src, to: dst}\n    delivery: exactly-once")
    issued = len(oidc.provider.issued)
    log = t.apply("--once")
    copied = records.read_topic(dst, f"src.{orders}")  # read_committed
    assert contents(copied) == expected(records.read_topic(src, orders), "src")
    assert oidc.provider.issued[issued:].count("admin") >= 2  # librdkafka's and Java's logins
    status = run_topo("status", str(t.file))
    assert status.returncode == 0, status.stderr
    assert (
        leaks(secured_lab.secrets(), [log, status.stdout, status.stderr, *written_by_topo()]) == []
    )


def test_the_oidc_clusters_broker_refuses_a_token_it_did_not_sign(secured_lab: SecuredLab) -> None:
    """The target verifies signatures: Kafka's unsecured token (no signature) is refused."""
    from topology.core.errors import KafkaUnavailableError

    config = {
        **secured_lab.user_config(secured_lab.source, "admin", mechanism="OAUTHBEARER"),
        "bootstrap.servers": secured_lab.bootstrap(secured_lab.target),
    }
    with pytest.raises(KafkaUnavailableError, match=r"(?i)authenticat|token|sasl"):
        records.read_topic(config, "any-topic", timeout=10)


def test_the_copy_slots_java_client_makes_an_msk_iam_login_with_amazons_library(
    tmp_path: Path, secured_lab: SecuredLab
) -> None:
    """No MSK here: the Java client topo's copy slots run, on their classpath (pyspark's jars,
    the Kafka connector's, Amazon's aws-msk-iam-auth set), is given topo's settings for an
    AWS_MSK_IAM cluster and asks the lab's TLS listener for the mechanism, which the lab refuses
    by name. A missing class or a setting the client cannot use fails before it asks."""
    import subprocess

    import pyspark

    from topology.core import connection, msk_iam
    from topology.host import maven
    from topology.spark.jars import kafka_connector_jars
    from topology.spark.topojar import jdk_tool

    config = {
        **secured_lab.admin_config(secured_lab.target),
        "sasl.mechanism": msk_iam.MECHANISM,
    }
    for key in ("sasl.username", "sasl.password"):
        config.pop(key, None)
    settings = tmp_path / "client.properties"
    java = connection.java_client_config(config)
    settings.write_text("".join(f"{k}={v}\n".replace("\\", "\\\\") for k, v in java.items()))
    jars = [
        *(Path(pyspark.__file__).parent / "jars").glob("*.jar"),
        *kafka_connector_jars(),
        *maven.resolve(msk_iam.JARS),
    ]
    classpath = os.pathsep.join(str(jar) for jar in jars)
    source = Path(__file__).resolve().parents[1] / "java" / "ClientLogin.java"
    done = subprocess.run(
        [jdk_tool("java"), "-cp", classpath, str(source), str(settings)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "UnsupportedSaslMechanismException" in done.stdout, done.stdout
    assert "AWS_MSK_IAM" in done.stdout
