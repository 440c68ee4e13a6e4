"""Replication between a Kerberized cluster (SASL GSSAPI, a KDC of its own) and a SCRAM one, end
to end: plan and apply, both directions copied record by record exactly once, status, group
offsets and failover, through librdkafka's Kerberos login (topo's own commands) and the JDK's
(the copy slots). Needs `make kerberos-client` (confluent-kafka with GSSAPI, MIT's KDC)."""

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import SecuredLab
from tests.helpers import run_topo
from tests.integration.test_replication import contents, expected, varied, wait_for
from tests.integration.test_secured import (
    SecuredTopology,
    command_lines,
    failed_over,
    leaks,
    synced_and_running,
    written_by_topo,
)
from topology.kafka import records

if TYPE_CHECKING:
    from tests.spark_cluster import StandaloneSpark

pytestmark = [pytest.mark.kafka, pytest.mark.spark]


@pytest.fixture
def kerberos_pair(
    tmp_path: Path, kerberos_cluster: str, secured_lab: SecuredLab
) -> Iterator[SecuredTopology]:
    """`k`: the Kerberized cluster as its admin (a keytab); `s`: the secured pair's source as
    its admin (SCRAM-SHA-512 over TLS)."""
    made = SecuredTopology(
        tmp_path,
        secured_lab,
        {"k": {"cluster": kerberos_cluster}, "s": {"cluster": secured_lab.source}},
    )
    yield made
    made.stop()


def test_a_kerberized_cluster_and_a_scram_one_copy_both_ways_and_fail_over(
    kerberos_pair: SecuredTopology, secured_lab: SecuredLab
) -> None:
    t = kerberos_pair
    k, s = t.clusters["k"], t.clusters["s"]
    assert k["sasl.mechanism"] == "GSSAPI" and t.entries["k"]["client"] == {
        "sasl.kerberos.principal": "admin@ITEST-KERBEROS.LAB",
        "sasl.kerberos.keytab": k["sasl.kerberos.keytab"],
    }
    orders = t.topic("orders")
    records.create_topic(k, orders, 3)
    records.create_topic(s, orders, 2)
    records.produce(k, varied(orders, 24, partitions=3, tag="k"))
    records.produce(s, varied(orders, 10, partitions=2, tag="s"))
    group = f"{t.prefix}-orders"
    t.write("  - active-active: [k, s]", extra="  delivery: exactly-once")

    plan = run_topo("plan", str(t.file), "--format", "json")
    assert plan.returncode == 0, plan.stderr
    creates = {
        (change["cluster"], change["name"])
        for change in json.loads(plan.stdout)["changes"]
        if change["action"] == "create" and change["resource"] == "topic"
    }
    assert {("s", f"k.{orders}"), ("k", f"s.{orders}")} <= creates
    shown = [plan.stdout, plan.stderr, t.apply()]

    remote = f"k.{orders}"
    assert contents(wait_for(s, remote, 24)) == expected(records.read_topic(k, orders), "k")
    assert contents(wait_for(k, f"s.{orders}", 10)) == expected(records.read_topic(s, orders), "s")

    shown += synced_and_running(t, "k", "s", orders, group)
    moved = failed_over(t, "k", "s", orders, group)
    # No password of the SCRAM side anywhere; the keytab is named, never read out (as the
    # base64 a setting or a log would carry it in).
    keytab = base64.b64encode(Path(k["sasl.kerberos.keytab"]).read_bytes()).decode()
    texts = [*command_lines(), *written_by_topo(), *shown, moved.stdout, moved.stderr]
    assert leaks([*secured_lab.secrets(), keytab], texts) == []


def test_the_copy_slots_on_spark_executors_log_in_with_kerberos(
    kerberos_pair: SecuredTopology, spark_cluster: "StandaloneSpark"
) -> None:
    """The executors' JVMs, started by workers that were never told of the realm, are given
    its krb5.conf by topo's launch (KRB5_CONFIG as java.security.krb5.conf)."""
    t = kerberos_pair
    k, s = t.clusters["k"], t.clusters["s"]
    orders = t.topic("orders")
    records.create_topic(k, orders, 2)
    records.produce(k, varied(orders, 12, partitions=2, tag="x"))
    t.write(
        "  - mirror: {from: k, to: s}",
        extra=f"engine:\n  runner: spark\n  master: {spark_cluster.master_url}\n",
    )
    t.apply("--once")
    assert contents(records.read_topic(s, f"k.{orders}")) == expected(
        records.read_topic(k, orders), "k"
    )
