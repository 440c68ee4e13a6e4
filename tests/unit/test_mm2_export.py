"""`topo export mm2`: an equivalent mm2.properties, and a warning for whatever MM2 cannot say."""

from dataclasses import replace
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.helpers import run_topo
from tests.mm2.normal import SAMPLES, imported, topology_of
from topology.core.analysis import analyse
from topology.core.mm2 import properties
from topology.core.mm2.exporter import ExportResult, export

ENV_PROVIDER = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
DIR_PROVIDER = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"

SECURE = """\
version: 1
clusters:
  east:
    bootstrap: east-1:9093,east-2:9093
    security:
      protocol: SASL_SSL
      sasl: {mechanism: SCRAM-SHA-512, username: mm2, password: "${env:EAST_PASSWORD}"}
      tls: {ca: /certs/ca.pem, cert: /certs/east.pem, key: /certs/east.pem,
            key_password: "${file:/run/secrets/east-key}", verify_hostname: false}
    client: {linger.ms: 5, enable.idempotence: true}
  west:
    bootstrap: west:9092
    security:
      protocol: SASL_PLAINTEXT
      sasl: {mechanism: PLAIN, username: "${env:WEST_USER}", password: "${env:WEST_PASSWORD}"}
flows:
  - mirror: {from: east, to: west}
"""


def run(text: str) -> ExportResult:
    return export(topology_of(text), "topology.yaml")


def props(result: ExportResult) -> dict[str, str]:
    entries, problems = properties.parse(result.text)
    assert problems == []
    keys = [e.key for e in entries]
    assert len(keys) == len(set(keys)), "a key written twice"
    return {e.key: e.value for e in entries}


def codes(result: ExportResult) -> list[str]:
    return [d.code for d in result.diagnostics]


def topology(flows: str, defaults: str = "", clusters: str = "a, b, c") -> str:
    names = [name.strip() for name in clusters.split(",")]
    text = "version: 1\nclusters:\n" + "".join(
        f"  {name}: {{bootstrap: '{name}:9092'}}\n" for name in names
    )
    if defaults:
        text += f"defaults: {defaults}\n"
    return text + "flows:\n" + flows


def test_secret_references_use_kafkas_config_providers() -> None:
    result = run(SECURE)
    written = props(result)
    assert written["config.providers"] == "env, dir"
    assert written["config.providers.env.class"] == ENV_PROVIDER
    assert written["config.providers.dir.class"] == DIR_PROVIDER
    assert written["east.sasl.jaas.config"] == (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="mm2" password="${env:EAST_PASSWORD}";'
    )
    assert written["west.sasl.jaas.config"] == (
        "org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="${env:WEST_USER}" password="${env:WEST_PASSWORD}";'
    )
    # ${file:path} is a whole file: DirectoryConfigProvider's ${dir:DIR:FILE}.
    assert written["east.ssl.key.password"] == "${dir:/run/secrets:east-key}"
    assert result.env_vars == ("EAST_PASSWORD", "WEST_PASSWORD", "WEST_USER")


def test_clusters_security_and_client_properties() -> None:
    written = props(run(SECURE))
    assert written["clusters"] == "east, west"
    assert written["east.bootstrap.servers"] == "east-1:9093,east-2:9093"
    assert written["east.security.protocol"] == "SASL_SSL"
    assert written["east.sasl.mechanism"] == "SCRAM-SHA-512"
    assert written["east.ssl.truststore.type"] == "PEM"
    assert written["east.ssl.truststore.location"] == "/certs/ca.pem"
    assert written["east.ssl.keystore.type"] == "PEM"
    assert written["east.ssl.keystore.location"] == "/certs/east.pem"
    assert written["east.ssl.endpoint.identification.algorithm"] == ""
    assert written["east.linger.ms"] == "5"
    assert written["east.enable.idempotence"] == "true"
    # topo reads committed records only; the exported MM2 does the same on its sources.
    assert written["east.consumer.isolation.level"] == "read_committed"
    assert "west.consumer.isolation.level" not in written
    assert "west.ssl.truststore.type" not in written


def test_flows_shared_settings_and_defaults_left_out() -> None:
    text = topology(
        "  - mirror: {from: a, to: b}\n"
        "    topics: {include: [orders, 'payments\\..*']}\n"
        "  - mirror: {from: a, to: c}\n"
        "    sync: {acls: false}\n",
        defaults="{replication_factor: 3, separator: _, groups: {exclude: ['tmp-.*']}}",
    )
    written = props(run(text))
    assert written["a->b.enabled"] == "true" and written["a->c.enabled"] == "true"
    assert written["replication.factor"] == "3"
    assert written["replication.policy.separator"] == "_"
    assert written["groups.exclude"] == "tmp-.*"
    assert written["sync.group.offsets.enabled"] == "true"  # MM2's default is false
    assert written["a->b.topics"] == "orders, payments\\..*"
    assert written["a->c.sync.topic.acls.enabled"] == "false"
    assert "a->b.sync.topic.acls.enabled" not in written  # MM2's default: true
    for default in ("topics.exclude", "emit.heartbeats.enabled", "replication.policy.class"):
        assert default not in written
    assert not any(key.startswith("b->") or key.startswith("c->") for key in written)


def test_regex_backslashes_survive_the_properties_format() -> None:
    text = topology("  - mirror: {from: a, to: b}\n    topics: {include: ['payments\\..*']}\n")
    result = run(text)
    assert "a->b.topics = payments\\\\..*" in result.text.splitlines()
    assert props(result)["a->b.topics"] == "payments\\..*"


def test_broker_default_replication_factor_is_minus_one() -> None:
    written = props(run(topology("  - mirror: {from: a, to: b}\n")))
    assert written["replication.factor"] == "-1"


def test_identity_naming_and_config_exclusions() -> None:
    text = topology(
        "  - aggregate: {from: [a, b], into: c}\n",
        defaults="{naming: identity, configs: {exclude: ['retention\\.ms']}}",
    )
    written = props(run(text))
    assert written["replication.policy.class"] == (
        "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
    )
    # MM2's list is replaced by the property, so the export repeats MM2's own exclusions.
    assert written["config.properties.exclude"].split(", ")[-2:] == [
        "min\\.insync\\.replicas",
        "retention\\.ms",
    ]


def test_exactly_once_is_set_on_the_target_and_mixed_targets_are_warned() -> None:
    text = topology(
        "  - mirror: {from: a, to: c}\n    delivery: exactly-once\n  - mirror: {from: b, to: c}\n"
    )
    result = run(text)
    assert props(result)["c.exactly.once.source.support"] == "enabled"
    assert props(result)["dedicated.mode.enable.internal.rest"] == "true"  # else MM2 refuses
    [message] = [d.message for d in result.diagnostics]
    assert "b->c" in message and "also become exactly-once" in message


def test_start_latest_is_a_flow_consumer_setting_with_a_version_warning() -> None:
    result = run(topology("  - mirror: {from: a, to: b}\n    start: latest\n"))
    assert props(result)["a->b.consumer.auto.offset.reset"] == "latest"
    assert codes(result) == ["M017"] and "KAFKA-13988" in result.diagnostics[0].message


def test_record_filters_are_warned_about_and_commented() -> None:
    result = run(topology("  - mirror: {from: a, to: b}\n    filter: value IS NOT NULL\n"))
    assert codes(result) == ["M017"]
    assert "no record filter" in result.diagnostics[0].message
    assert "# topo filters this flow's records (filter:); MM2 has no record filter" in result.text
    assert "IS NOT NULL" not in props(result).values()


def test_a_paused_flow_is_warned_about() -> None:
    result = run(topology("  - mirror: {from: a, to: b}\n    paused: true\n"))
    assert codes(result) == ["M017"]
    assert "paused: true is not exported" in result.diagnostics[0].message
    assert props(result)["a->b.enabled"] == "true"


def test_identity_loops_get_a_loud_comment() -> None:
    result = run(topology("  - active-active: [a, b]\n    naming: identity\n"))
    assert codes(result) == ["M018"]
    assert "forever" in result.diagnostics[0].message
    assert result.diagnostics[0].span.line == 7  # the flow
    assert "# !!! clusters a, b replicate in a LOOP with IdentityReplicationPolicy." in result.text
    assert result.text.count("# !!! WARNING: this flow is part of a loop") == 2


def test_a_prefix_loop_is_fine_in_mm2() -> None:
    assert codes(run(topology("  - active-active: [a, b, c]\n"))) == []


@pytest.mark.parametrize(
    ("flows", "fragment"),
    [
        ("  - mirror: {from: a, to: b}\n    sync: {partitions: false}\n", "new topics"),
        ("  - mirror: {from: a, to: b}\n    topics: {include: ['x{1,3}']}\n", "comma"),
    ],
)
def test_settings_mm2_reads_differently_are_warned(flows: str, fragment: str) -> None:
    result = run(topology(flows))
    assert codes(result) == ["M017"]
    assert fragment in result.diagnostics[0].message
    assert fragment in result.text.replace("\n# ", " ")


def test_what_only_topo_checks_is_commented() -> None:
    text = topology("  - mirror: {from: a, to: b}\n").replace(
        "  a: {bootstrap: 'a:9092'}", "  a: {bootstrap: 'a:9092', topics: [local]}"
    )
    result = run(text)
    assert codes(result) == ["M017"]
    assert "# cluster a: topics (owned by its own applications)" in result.text


def test_separate_cert_and_key_files_are_explained() -> None:
    text = SECURE.replace("key: /certs/east.pem", "key: /certs/east.key")
    result = run(text)
    assert "east.ssl.keystore.location" not in props(result)
    assert any(
        "concatenate /certs/east.key and /certs/east.pem" in d.message for d in result.diagnostics
    )


def test_relative_file_references_are_warned() -> None:
    result = run(SECURE.replace("/run/secrets/east-key", "secrets/east-key"))
    assert props(result)["east.ssl.key.password"] == "${dir:secrets:east-key}"
    assert any("relative" in d.message for d in result.diagnostics)


@pytest.mark.parametrize("name", sorted(p.stem for p in SAMPLES.glob("*.properties")))
def test_each_imported_sample_exports_to_the_snapshot(
    name: str, snapshot: SnapshotAssertion
) -> None:
    text = imported((SAMPLES / f"{name}.properties").read_text(), f"{name}.properties")
    assert export(topology_of(text, f"{name}.yaml"), f"{name}.yaml").text == snapshot


# -- the command ------------------------------------------------------------------------------


def test_cli_exports_to_stdout_with_warnings_on_stderr(tmp_path: Path) -> None:
    source = tmp_path / "topology.yaml"
    source.write_text(topology("  - active-active: [a, b]\n    naming: identity\n"))
    done = run_topo("export", "mm2", str(source))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# MirrorMaker 2 configuration generated by `topo export mm2`")
    assert "a->b.enabled = true" in done.stdout
    assert f"{source}:7:5: warning[M018]" in done.stderr
    assert "exported 2 MM2 flows" in done.stderr


def test_cli_writes_the_file_and_names_the_variables(tmp_path: Path) -> None:
    source, out = tmp_path / "topology.yaml", tmp_path / "mm2.properties"
    source.write_text(SECURE)
    done = run_topo("export", "mm2", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert "EnvVarConfigProvider): EAST_PASSWORD, WEST_PASSWORD, WEST_USER" in done.stderr
    assert "east->west.enabled = true" in out.read_text()


def test_cli_refuses_an_invalid_topology(tmp_path: Path) -> None:
    source, out = tmp_path / "topology.yaml", tmp_path / "mm2.properties"
    source.write_text(topology("  - mirror: {from: a, to: nowhere}\n"))
    done = run_topo("export", "mm2", str(source), "-o", str(out))
    assert done.returncode == 1
    assert "error[T201]" in done.stderr and "nothing exported" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()


# -- never a silent loss, never a stray line -------------------------------------------------

SCRAM_AND_JAAS = """\
version: 1
clusters:
  east:
    bootstrap: east:9093
    security:
      protocol: SASL_SSL
      sasl: {mechanism: SCRAM-SHA-512, username: mm2, password: "${env:EAST_PASSWORD}"}
    client: {sasl.jaas.config: '%s'}
  west: {bootstrap: "west:9092"}
flows:
  - mirror: {from: east, to: west}
"""
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"
# security.protocol set twice, differently: once by security:, once under client:.
PROTOCOL_TWICE = SCRAM_AND_JAAS.replace("{sasl.jaas.config: '%s'}", "{security.protocol: SSL}")


def test_a_jaas_line_beside_scram_credentials_is_refused_not_dropped() -> None:
    # topo validate refuses client.sasl.jaas.config (T205); the export must not depend on
    # that to keep the credentials, so the topology is given to it directly.
    text = SCRAM_AND_JAAS.replace("    client: {sasl.jaas.config: '%s'}\n", "")
    valid = topology_of(text)
    east = replace(valid.clusters["east"], client={"sasl.jaas.config": "${env:EAST_JAAS}"})
    result = export(replace(valid, clusters={**valid.clusters, "east": east}), "topology.yaml")
    assert not result.ok and result.text == ""
    (problem,) = result.diagnostics
    assert problem.code == "M019"
    assert "client.sasl.jaas.config and security.sasl" in problem.message
    assert "drop the other's credentials" in problem.message


def test_a_conflict_is_located_on_the_client_key() -> None:
    analysis = analyse(PROTOCOL_TWICE, "topology.yaml")
    assert analysis.topology is not None
    result = export(analysis.topology, "topology.yaml", analysis.document)
    (problem,) = result.diagnostics
    assert problem.code == "M019" and (problem.span.line, problem.span.column) == (8, 14)


def test_credentials_are_written_when_no_jaas_line_is_given() -> None:
    written = props(run(SCRAM_AND_JAAS.replace("    client: {sasl.jaas.config: '%s'}\n", "")))
    assert written["east.sasl.jaas.config"] == (
        f'{SCRAM_MODULE} required username="mm2" password="${{env:EAST_PASSWORD}}";'
    )


def test_a_client_property_is_refused_where_it_contradicts_security() -> None:
    client = "{security.protocol: SASL_SSL, sasl.mechanism: PLAIN}"
    text = SCRAM_AND_JAAS.replace("{sasl.jaas.config: '%s'}", client)
    (problem,) = run(text).diagnostics
    assert problem.code == "M019"
    assert "client.sasl.mechanism and security.sasl.mechanism" in problem.message
    # Equal to what security says: no conflict, and written once (props() checks).
    agreeing = text.replace(", sasl.mechanism: PLAIN", "")
    assert props(run(agreeing))["east.security.protocol"] == "SASL_SSL"


def test_cli_refuses_the_conflict_with_a_located_error(tmp_path: Path) -> None:
    source = tmp_path / "topology.yaml"
    source.write_text(PROTOCOL_TWICE)
    out = tmp_path / "mm2.properties"
    done = run_topo("export", "mm2", str(source), "-o", str(out))
    assert done.returncode == 1, done.stderr
    assert f"{source}:8:14: error[M019]" in done.stderr
    assert "nothing exported" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists() and done.stdout == ""


# (YAML escape, the character): line breaks to Python, Java or YAML 1.1, and a vertical tab.
BREAKS = [
    ("\\n", "\n"),
    ("\\r", "\r"),
    ("\\r\\n", "\r\n"),
    ("\\N", "\x85"),
    ("\\L", "\u2028"),
    ("\\v", "\x0b"),
]


@pytest.mark.parametrize(("escape", "char"), BREAKS, ids=repr)
def test_names_with_a_line_break_are_refused_not_written_as_stray_lines(
    escape: str, char: str
) -> None:
    text = (
        f'version: 1\nclusters:\n  "east{escape}": {{bootstrap: "e:9092"}}\n'
        f'  west: {{bootstrap: "w:9092", client: {{"a{escape}b=c": x}}}}\n'
        f'flows:\n  - mirror: {{from: "east{escape}", to: west}}\n'
    )
    analysis = analyse(text, "topology.yaml")
    if analysis.topology is None:  # the schema refuses such names itself: nothing to export
        return
    result = export(analysis.topology, "topology.yaml", analysis.document)
    assert codes(result) == ["M020", "M020"] and result.text == ""
    assert [d.span.line for d in result.diagnostics] == [3, 4]


@pytest.mark.parametrize(("escape", "char"), BREAKS, ids=repr)
def test_line_breaks_in_values_and_flow_names_stay_inside_their_property(
    escape: str, char: str
) -> None:
    text = (
        "version: 1\nclusters:\n"
        f'  east: {{bootstrap: "e:9092", client: {{client.id: "a{escape}b=c"}}}}\n'
        '  west: {bootstrap: "w:9092"}\n'
        f'flows:\n  - name: "x{escape}y=z"\n    mirror: {{from: east, to: west}}\n'
        f'    topics: {{include: ["t{escape}u=v"]}}\n'
    )
    analysis = analyse(text, "topology.yaml")
    if analysis.topology is None:
        return
    written = props(export(analysis.topology, "topology.yaml", analysis.document))
    assert "y" not in written and "u" not in written and "b" not in written  # no stray lines
    # client.id goes to MM2's clients per role (`east.client.id` is its Connect worker's)
    assert written["east.consumer.client.id"] == f"a{char}b=c"
    assert written["east->west.topics"] == f"t{char}u=v"


@pytest.mark.parametrize(("escape", "char"), BREAKS, ids=repr)
def test_the_export_refuses_such_names_even_when_the_schema_lets_them_by(
    escape: str, char: str
) -> None:
    valid = topology_of(topology("  - mirror: {from: a, to: b}\n"))
    a = valid.clusters["a"]
    broken = replace(a, name=f"a{char}x = y", client={f"k{char}z": "v"})
    result = export(replace(valid, clusters={**valid.clusters, broken.name: broken}), "t.yaml")
    assert codes(result) == ["M020", "M020"] and result.text == ""
    assert all(char not in d.message for d in result.diagnostics)  # shown escaped: one line


def test_client_settings_by_role_and_intervals_are_written_where_mm2_reads_them() -> None:
    text = (
        "version: 1\nengine: {intervals: {emit.checkpoints.interval.seconds: 30}}\n"
        "clusters:\n  a: {bootstrap: 'a:1', consumer: {fetch.min.bytes: 1024}}\n"
        "  b: {bootstrap: 'b:1', producer: {compression.type: lz4}}\n"
        "flows:\n  - mirror: {from: a, to: b}\n"
        "    producer: {compression.type: zstd}\n    consumer: {max.poll.records: 9}\n"
    )
    found = props(run(text))
    assert found["a.consumer.fetch.min.bytes"] == "1024"
    assert found["b.producer.compression.type"] == "lz4"
    # the copies' producer is Connect's: a flow's own is an override, which beats b's
    assert found["a->b.producer.override.compression.type"] == "zstd"
    assert found["a->b.source.consumer.max.poll.records"] == "9"  # beats a.consumer.*
    assert found["emit.checkpoints.interval.seconds"] == "30"


OAUTH_CLUSTERS = """\
version: 1
clusters:
  idp:
    bootstrap: "kafka-1.idp.example.com:9093"
    security: {protocol: SASL_SSL, sasl: {mechanism: OAUTHBEARER}}
    client:
      sasl.oauthbearer.method: oidc
      sasl.oauthbearer.client.id: "${env:CLIENT_ID}"
      sasl.oauthbearer.client.secret: "${env:CLIENT_SECRET}"
      sasl.oauthbearer.token.endpoint.url: https://idp.example.com/token
      sasl.oauthbearer.scope: kafka
  lab:
    bootstrap: "127.0.0.1:9092"
    security: {protocol: SASL_PLAINTEXT, sasl: {mechanism: OAUTHBEARER}}
    client:
      enable.sasl.oauthbearer.unsecure.jwt: true
      sasl.oauthbearer.config: principal=admin
flows:
  - mirror: {from: idp, to: lab}
"""


def test_oauthbearer_logins_are_written_as_mm2s_java_clients_log_in_and_read_back() -> None:
    """MM2's clients are Java's: librdkafka's OAUTHBEARER settings would be ignored there, and
    the login would fail. The export writes Kafka's own login instead."""
    text = export(topology_of(OAUTH_CLUSTERS), "t.yaml").text
    module = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
    assert (
        "idp.sasl.login.callback.handler.class = org.apache.kafka.common.security.oauthbearer."
        "OAuthBearerLoginCallbackHandler"
    ) in text
    assert (
        f'idp.sasl.jaas.config = {module} required clientId="${{env:CLIENT_ID}}" '
        'clientSecret="${env:CLIENT_SECRET}" scope="kafka";'
    ) in text
    assert "idp.sasl.oauthbearer.token.endpoint.url = https://idp.example.com/token" in text
    assert f'lab.sasl.jaas.config = {module} required unsecuredLoginStringClaim_sub="admin";' in (
        text
    )
    librdkafka_only = ("oauthbearer.method", "client.id", "client.secret", "unsecure.jwt")
    assert not [word for word in librdkafka_only if word in text]
    assert topology_of(imported(text)).clusters == topology_of(OAUTH_CLUSTERS).clusters
