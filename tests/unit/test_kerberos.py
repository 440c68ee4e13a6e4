"""Kerberos (SASL GSSAPI): validated as a keytab login, written for the Java client (the copy
slots) and for MM2, the krb5.conf given to topo's JVMs, and the lab's Kerberized cluster as
its broker, KDC and clients see it. Live logins: tests/integration/test_kerberos.py."""

import dataclasses
from pathlib import Path

import pytest

from tests.mm2.normal import exported, imported, normal, topology_of
from topology.core import connection, kerberos
from topology.core.analysis import analyse
from topology.lab import kdc
from topology.lab.spec import (
    Credentials,
    KerberosFiles,
    LabCluster,
    check_security,
    client_config,
    server_properties,
    topology_cluster,
)
from topology.spark.conf import with_java_options

TOPOLOGY = """\
version: 1
clusters:
  dc:
    bootstrap: "kafka-1.dc.example.com:9093"
    security:
      protocol: SASL_SSL
      sasl: {mechanism: GSSAPI}
    client:
      sasl.kerberos.principal: topo/replicator@DC.EXAMPLE.COM
      sasl.kerberos.keytab: keytabs/topo.keytab
  cloud: {bootstrap: "cloud-1:9092"}
flows:
  - mirror: {from: dc, to: cloud}
"""
PRINCIPAL = "sasl.kerberos.principal: topo/replicator@DC.EXAMPLE.COM"


def _errors(text: str) -> list[tuple[int, str]]:
    found = analyse(text, "t.yaml").diagnostics
    return [(d.span.line, d.message) for d in found if d.severity.value == "error"]


def test_a_keytab_login_validates() -> None:
    assert _errors(TOPOLOGY) == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            ("      sasl.kerberos.keytab: keytabs/topo.keytab\n", ""),
            "needs client properties sasl.kerberos.keytab: topo logs in from a keytab",
        ),
        (
            (PRINCIPAL + "\n", ""),
            "needs client properties sasl.kerberos.principal: topo logs in from a keytab",
        ),
        (
            ("{mechanism: GSSAPI}", "{mechanism: GSSAPI, username: u, password: '${env:P}'}"),
            "takes no username or password: name the principal and its keytab",
        ),
    ],
)
def test_a_login_that_cannot_run_unattended_is_one_error_at_the_mechanism(
    change: tuple[str, str], message: str
) -> None:
    ((line, found),) = _errors(TOPOLOGY.replace(*change))
    assert line == 7 and found.startswith("cluster dc: SASL GSSAPI ") and message in found


def test_two_kerberized_clusters_log_in_as_one_principal() -> None:
    both = TOPOLOGY.replace(
        '  cloud: {bootstrap: "cloud-1:9092"}',
        '  cloud:\n    bootstrap: "cloud-1:9093"\n'
        "    security: {protocol: SASL_PLAINTEXT, sasl: {mechanism: GSSAPI}}\n"
        "    client:\n"
        "      sasl.kerberos.principal: topo/replicator@CLOUD.EXAMPLE.COM\n"
        "      sasl.kerberos.keytab: keytabs/topo.keytab\n",
    )
    assert _errors(both) == [
        (
            15,
            "cluster cloud: Kerberos principal 'topo/replicator@CLOUD.EXAMPLE.COM' differs from "
            "cluster dc's 'topo/replicator@DC.EXAMPLE.COM'; one topology logs in to its "
            "Kerberized clusters as one principal (topo's Kafka client keeps one ticket cache "
            "per process): use one principal that every realm accepts",
        )
    ]
    same = both.replace("@CLOUD.EXAMPLE.COM", "@DC.EXAMPLE.COM")
    assert _errors(same) == []


def test_librdkafka_gets_the_keytab_under_the_topologys_folder_and_java_a_jaas_line() -> None:
    cluster = topology_of(TOPOLOGY).clusters["dc"]
    config = connection.client_config(cluster, {}, base=Path("/etc/topo"))
    assert config["sasl.mechanism"] == "GSSAPI"
    assert config["sasl.kerberos.keytab"] == "/etc/topo/keytabs/topo.keytab"
    assert config["sasl.kerberos.principal"] == "topo/replicator@DC.EXAMPLE.COM"
    java = connection.java_client_config(config)
    assert java["sasl.jaas.config"] == (
        'com.sun.security.auth.module.Krb5LoginModule required useKeyTab="true" '
        'storeKey="true" keyTab="/etc/topo/keytabs/topo.keytab" '
        'principal="topo/replicator@DC.EXAMPLE.COM";'
    )
    # Kafka's Java client has no default service name; librdkafka's is kafka.
    assert java["sasl.kerberos.service.name"] == "kafka"
    assert not {"sasl.kerberos.principal", "sasl.kerberos.keytab"} & set(java)
    other = connection.java_client_config({**config, "sasl.kerberos.service.name": "kfk"})
    assert other["sasl.kerberos.service.name"] == "kfk"


def test_topos_jvms_get_krb5_conf_only_for_a_kerberized_topology() -> None:
    topology = topology_of(TOPOLOGY)
    environment = {"KRB5_CONFIG": "/etc/topo/krb5.conf"}
    environment_option = ("-Djava.security.krb5.conf=/etc/topo/krb5.conf",)
    assert kerberos.java_options(topology, environment) == environment_option
    assert kerberos.java_options(topology, {}) == ()  # the JDK's own: /etc/krb5.conf
    listed = {"KRB5_CONFIG": "/etc/topo/krb5.conf:/etc/krb5.conf"}  # MIT reads both; Java one
    assert kerberos.java_options(topology, listed) == environment_option
    plain = dataclasses.replace(topology, clusters={"cloud": topology.clusters["cloud"]}, flows=())
    assert kerberos.java_options(plain, environment) == ()
    spaced = kerberos.java_options(topology, {"KRB5_CONFIG": "/my conf/krb5.conf"})
    assert spaced == ('"-Djava.security.krb5.conf=/my conf/krb5.conf"',)  # Spark splits at spaces
    conf = with_java_options({"spark.driver.defaultJavaOptions": "-XX:+UseG1GC"}, spaced)
    assert conf == {
        "spark.driver.defaultJavaOptions": f"-XX:+UseG1GC {spaced[0]}",
        "spark.executor.defaultJavaOptions": spaced[0],
    }
    assert with_java_options({"a": "b"}, ()) == {"a": "b"}


def test_export_writes_mm2s_jaas_line_and_import_reads_it_back() -> None:
    text = exported(TOPOLOGY)
    assert (
        "dc.sasl.jaas.config = com.sun.security.auth.module.Krb5LoginModule required "
        'useKeyTab="true" storeKey="true" keyTab="keytabs/topo.keytab" '
        'principal="topo/replicator@DC.EXAMPLE.COM";'
    ) in text
    assert "dc.sasl.kerberos.service.name = kafka" in text
    assert "dc.sasl.kerberos.keytab" not in text and "dc.sasl.kerberos.principal" not in text
    assert "the keytab keytabs/topo.keytab is relative: topo reads it from the topology's" in (
        text.replace("\n# ", " ")
    )
    # The round trip: the same login, with the service name the export had to state.
    stated = TOPOLOGY.replace(PRINCIPAL, PRINCIPAL + "\n      sasl.kerberos.service.name: kafka")
    assert normal(topology_of(imported(text))) == normal(topology_of(stated))


# -- the lab ----------------------------------------------------------------------------------

LAB = LabCluster("krb", 20000, sasl=True, mechanisms=("GSSAPI",), users=("topo",), kerberos=True)
FILES = KerberosFiles("/lab/krb/kerberos/broker.keytab", "kafka/localhost@KRB.LAB")


def _props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_a_kerberized_lab_broker_logs_in_from_its_keytab_and_its_kdc_has_a_port() -> None:
    check_security(LAB)
    assert LAB.realm == "KRB.LAB" and LAB.kdc_port == 20004 and 20004 in LAB.ports
    props = _props(
        server_properties(LAB, "/d", {"admin": "a", "broker": "b"}, kerberos_files=FILES)
    )
    assert props["listener.name.client.sasl.enabled.mechanisms"] == "GSSAPI"
    assert props["sasl.kerberos.service.name"] == "kafka"
    assert props["listener.name.client.gssapi.sasl.jaas.config"] == (
        'com.sun.security.auth.module.Krb5LoginModule required useKeyTab="true" '
        'storeKey="true" keyTab="/lab/krb/kerberos/broker.keytab" '
        'principal="kafka/localhost@KRB.LAB";'
    )
    assert props["super.users"] == "User:admin;User:broker"
    with pytest.raises(ValueError, match="keytab"):
        server_properties(LAB, "/d", {"admin": "a", "broker": "b"})


def test_a_lab_user_reaches_a_kerberized_cluster_with_their_keytab() -> None:
    who = Credentials("topo", keytab="/lab/krb/kerberos/topo.keytab")
    assert client_config(LAB, who) == {
        "bootstrap.servers": "127.0.0.1:20000",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.principal": "topo@KRB.LAB",
        "sasl.kerberos.keytab": "/lab/krb/kerberos/topo.keytab",
        "sasl.kerberos.service.name": "kafka",
    }
    assert topology_cluster(LAB, who, None) == {
        "bootstrap": "127.0.0.1:20000",
        "security": {"protocol": "SASL_PLAINTEXT", "sasl": {"mechanism": "GSSAPI"}},
        "client": {
            "sasl.kerberos.principal": "topo@KRB.LAB",
            "sasl.kerberos.keytab": "/lab/krb/kerberos/topo.keytab",
        },
    }
    with pytest.raises(ValueError, match="keytab"):
        client_config(LAB, Credentials("topo"))


def test_the_lab_realm_names_services_by_their_hosts_canonical_name() -> None:
    krb5 = kdc.krb5_conf_text(LAB)
    assert "default_realm = KRB.LAB" in krb5 and "kdc = 127.0.0.1:20004" in krb5
    # librdkafka's Kerberos library then asks for kafka/<name of 127.0.0.1>, as Java does.
    assert "rdns = true" in krb5 and "dns_canonicalize_hostname = true" in krb5
    conf = kdc.kdc_conf_text(LAB, Path("/lab/krb/kerberos"))
    assert "kdc_tcp_listen = 127.0.0.1:20004" in conf
    assert "database_name = /lab/krb/kerberos/principal" in conf


def test_a_librdkafka_without_gssapi_or_a_missing_keytab_is_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from topology.core.errors import TopoError
    from topology.kafka import client

    keytab = tmp_path / "topo.keytab"
    keytab.write_bytes(b"\x05\x02")
    settings = {
        "bootstrap.servers": "kdc-1:9093",
        "sasl.mechanism": "GSSAPI",
        "sasl.kerberos.keytab": str(keytab),
    }
    monkeypatch.setattr(client, "has_gssapi", lambda: False)  # the PyPI wheel's librdkafka
    with pytest.raises(TopoError, match=r"built without .*deploy/kerberos-client\.sh"):
        client.quiet(settings)
    monkeypatch.setattr(client, "has_gssapi", lambda: True)
    assert client.quiet(settings)["sasl.mechanism"] == "GSSAPI"
    # A keytab that is not there is one line, before kinit is run.
    missing = {**settings, "sasl.kerberos.keytab": str(tmp_path / "none.keytab")}
    with pytest.raises(TopoError, match=r"keytab .*none\.keytab does not exist"):
        client.quiet(missing)
