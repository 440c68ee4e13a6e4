"""`topo import strimzi` and `topo import connect`: MM2 as Strimzi and Kafka Connect run it.

The samples under tests/mm2/samples/strimzi and .../connect are taken from those projects'
documentation and examples (SOURCES.md in each folder says where from). Each must import,
validate, and round-trip through `topo export mm2`: what the export writes imports back to the
same topology, and does what the properties the resource stands for did.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.mm2.normal import SAMPLES, effective_mm2, exported, imported, normal, topology_of
from topology.cli import app
from topology.core.mm2 import connect, properties, strimzi, yaml_out
from topology.core.mm2.importer import ImportResult
from topology.core.mm2.stand_in import StandIn
from topology.core.mm2.stand_in import imported as stand_in_import

STRIMZI = sorted((SAMPLES / "strimzi").glob("*.yaml"))
CONNECT = sorted(p for p in (SAMPLES / "connect").glob("*") if p.is_dir())
# Samples topo refuses, and the codes of the errors that say why (SOURCES.md says more).
REFUSED = {
    "mirror-maker-2-oauth-client-assertion": ["M024"],
    "mirror-maker-2-oauth-client-secret": ["M024"],  # its second cluster's refresh token
    "v1-mirror-maker-2-tls-auth-multidoc": ["M008"],  # the only mirror has no sourceConnector
}
# What the tests give the samples' placeholders (the files stay as published).
FILLED = {
    "<eventhubs-namespace>": "mm2-eventhubs",
    "{SOURCE CLUSTER BROKERS ADDRESS}": "b-1.src.a1b2c3.c2.kafka.us-east-1.amazonaws.com:9096",
    "{TARGET CLUSTER BROKERS ADDRESS}": "b-1.dst.d4e5f6.c2.kafka.us-east-1.amazonaws.com:9096",
    # The AWS samples' own policy keeps topic names (CustomMM2ReplicationPolicy.java in
    # their repository), as Kafka's identity policy does.
    "com.amazonaws.kafka.samples.CustomMM2ReplicationPolicy": (
        "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
    ),
}


def _filled(text: str) -> str:
    for placeholder, value in FILLED.items():
        text = text.replace(placeholder, value)
    return text


def _strimzi(text: str, file: str = "mm2.yaml") -> tuple[StandIn, ImportResult]:
    stand_in = strimzi.read(text, file)
    return stand_in, stand_in_import(stand_in, text)


def _connect(files: dict[str, str]) -> tuple[StandIn, ImportResult, connect.Sources]:
    stand_in, whole, sources = connect.read(list(files.items()))
    return stand_in, stand_in_import(stand_in, whole, sources.line_name), sources


def _yaml(result: ImportResult) -> str:
    errors = [d.headline() for d in result.diagnostics if d.severity.value == "error"]
    assert result.data is not None, errors
    return yaml_out.render(result.data)


def _as_properties(stand_in: StandIn) -> str:
    """The MM2 properties the file stands for, as an mm2.properties text."""
    return "".join(properties.line(e.key, e.value) + "\n" for e in stand_in.entries)


def _comparable(form: dict[str, Any], two_files: set[str]) -> dict[str, Any]:
    """A topology's semantic form less what `topo export mm2` cannot say, by design: the flows'
    `mm2` setting (where the MM2 taken over from keeps its Connect state; the export is a
    dedicated-mode MM2, which keeps it in its own places), and a client certificate and key in
    two files (Strimzi's), which MM2's PEM key store, one file, cannot hold (the export says so,
    M017)."""
    for settings in form["edges"].values():
        settings.pop("mm2")
    for alias in two_files:
        tls = form["clusters"][alias]["security"]["tls"]
        tls["cert"] = tls["key"] = None
    return form


def _round_trips(stand_in: StandIn, result: ImportResult) -> None:
    text = _yaml(result)
    original = topology_of(text)  # it validates
    again = exported(text)
    two_files = set(stand_in.certificates)
    assert _comparable(normal(topology_of(imported(again))), two_files) == _comparable(
        normal(original), two_files
    )
    # What the export writes does what the resource's MM2 did, flow by flow and cluster by
    # cluster (the two-file certificates aside, as above).
    mine, theirs = effective_mm2(again), effective_mm2(_as_properties(stand_in))
    for alias in two_files:
        mine["clusters"][alias]["keystore"] = None
    assert mine == theirs


@pytest.mark.parametrize("sample", STRIMZI, ids=[p.stem for p in STRIMZI])
def test_each_strimzi_sample_imports_validates_and_round_trips(sample: Path) -> None:
    stand_in, result = _strimzi(_filled(sample.read_text()), sample.name)
    if sample.stem in REFUSED:
        errors = [d.code for d in result.diagnostics if d.severity.value == "error"]
        assert result.data is None and errors == REFUSED[sample.stem]
        return
    _round_trips(stand_in, result)


@pytest.mark.parametrize("sample", CONNECT, ids=[p.name for p in CONNECT])
def test_each_connect_sample_imports_validates_and_round_trips(sample: Path) -> None:
    files = {
        f"{sample.name}/{p.name}": _filled(p.read_text()) for p in sorted(sample.glob("*.json"))
    }
    stand_in, result, _ = _connect(files)
    _round_trips(stand_in, result)


def test_the_samples_are_there_and_the_aws_policy_as_published_is_custom_code() -> None:
    # The parametrized tests above would pass vacuously on an empty folder.
    assert len(STRIMZI) >= 12
    assert {p.name for p in CONNECT} >= {"aws-sasl-scram", "aws-mtls", "aws-iam", "lsst"}
    published = {"source.json": (SAMPLES / "connect" / "aws-iam" / "source.json").read_text()}
    _, result, _ = _connect(published)
    assert "M012" in [d.code for d in result.diagnostics]


SCRAM_AND_TLS = """\
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata:
  name: dr
spec:
  version: 4.1.0
  replicas: 2
  connectCluster: "backup"
  clusters:
    - alias: "primary"
      bootstrapServers: primary-kafka-bootstrap:9093
      tls:
        trustedCertificates:
          - secretName: primary-cluster-ca-cert
            certificate: ca.crt
      authentication:
        type: scram-sha-512
        username: mm2-user
        passwordSecret:
          secretName: mm2-user
          password: password
    - alias: "backup"
      bootstrapServers: backup-kafka-bootstrap:9093
      tls:
        trustedCertificates:
          - secretName: backup-cluster-ca-cert
            certificate: ca.crt
      authentication:
        type: tls
        certificateAndKey:
          secretName: mm2-backup
          certificate: user.crt
          key: user.key
      config:
        offset.storage.topic: dr-offsets
        config.storage.replication.factor: -1
  mirrors:
    - sourceCluster: "primary"
      targetCluster: "backup"
      sourceConnector:
        tasksMax: 4
        config:
          replication.factor: 3
          sync.topic.acls.enabled: "false"
          replication.policy.separator: "_"
          refresh.topics.interval.seconds: 60
      checkpointConnector:
        config:
          sync.group.offsets.enabled: "true"
          replication.policy.separator: "-"
      topicsPattern: "orders.*|payments"
      groupsExcludePattern: "test-.*"
"""


def test_strimzi_clusters_logins_and_mirrors_map_with_secrets_left_in_kubernetes() -> None:
    _, result = _strimzi(SCRAM_AND_TLS)
    data = result.data
    assert data is not None
    primary, backup = data["clusters"]["primary"], data["clusters"]["backup"]
    assert primary["bootstrap"] == "primary-kafka-bootstrap:9093"
    assert primary["security"] == {
        "protocol": "SASL_SSL",
        "sasl": {
            "mechanism": "SCRAM-SHA-512",
            "username": "mm2-user",
            "password": "${env:PRIMARY_SASL_PASSWORD}",
        },
        "tls": {"ca": "/etc/topo/secrets/primary-cluster-ca-cert/ca.crt"},
    }
    assert backup["security"] == {
        "protocol": "SSL",
        "tls": {
            "ca": "/etc/topo/secrets/backup-cluster-ca-cert/ca.crt",
            "cert": "/etc/topo/secrets/mm2-backup/user.crt",
            "key": "/etc/topo/secrets/mm2-backup/user.key",
        },
    }
    # Where the password is: named with its Secret and key, never copied.
    [variable] = result.env_vars
    assert variable.name == "PRIMARY_SASL_PASSWORD"
    assert "Kubernetes Secret mm2-user, key password" in variable.purpose
    assert any(
        "mm2-backup/user.key is read from Kubernetes Secret mm2-backup" in n for n in result.notes
    )
    # The Connect cluster's state: its offsets topic as configured, Strimzi's default status.
    assert data["defaults"]["mm2"] == {
        "offsets_topic": "dr-offsets",
        "status_topic": "mirrormaker2-cluster-status",
        "connector": "{source}->{target}.MirrorSourceConnector",
    }
    [flow] = data["flows"]
    assert flow["mirror"] == {"from": "primary", "to": "backup"}
    assert flow["topics"] == {"include": ["orders.*|payments"]}
    assert flow["groups"]["exclude"] == ["test-.*"]
    assert flow["sync"] == {"acls": False, "group_offsets": True}
    assert flow["emit"] == {"heartbeats": False}  # no heartbeatConnector
    assert flow["separator"] == "_"  # the source connector's: the first
    assert data["engine"] == {"intervals": {"refresh.topics.interval.seconds": 60}}
    codes = {(d.code, d.span.line) for d in result.diagnostics}
    assert ("M023", 50) in codes  # the checkpoint connector's other separator, at its line
    assert ("M009", 6) in codes and ("M009", 7) in codes  # version, replicas: the pods
    assert ("M009", 41) in codes  # tasksMax
    topology_of(_yaml(result))


def test_strimzi_v1_layout_with_target_and_mirror_sources() -> None:
    text = """\
apiVersion: kafka.strimzi.io/v1
kind: KafkaMirrorMaker2
metadata: {name: mm2}
spec:
  target:
    alias: west
    bootstrapServers: west-kafka-bootstrap:9092
    groupId: mm2-cluster
    offsetStorageTopic: mm2-offsets
    statusStorageTopic: mm2-status
    configStorageTopic: mm2-configs
  mirrors:
    - source:
        alias: east
        bootstrapServers: east-kafka-bootstrap:9092
      sourceConnector: {config: {replication.factor: -1}}
      checkpointConnector: {}
      heartbeatConnector: {}
      topicsPattern: ".*"
"""
    _, result = _strimzi(text)
    data = result.data
    assert data is not None
    assert set(data["clusters"]) == {"west", "east"}
    assert data["defaults"]["mm2"]["offsets_topic"] == "mm2-offsets"
    assert data["defaults"]["mm2"]["status_topic"] == "mm2-status"
    [flow] = data["flows"]
    assert flow["mirror"] == {"from": "east", "to": "west"}
    assert "emit" not in flow
    topology_of(_yaml(result))


def test_strimzi_oauth_client_credentials_become_oidc_with_the_secret_as_a_reference() -> None:
    text = """\
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaMirrorMaker2
metadata: {name: mm2}
spec:
  connectCluster: target
  clusters:
    - alias: source
      bootstrapServers: source:9093
      tls: {trustedCertificates: [{secretName: ca, pattern: "*.crt"}]}
      authentication:
        type: oauth
        tokenEndpointUri: https://sso.example.com/token
        clientId: mm2
        clientSecret: {secretName: mm2-oauth, key: secret}
        scope: kafka
        audience: kafka-broker
    - alias: target
      bootstrapServers: target:9092
  mirrors:
    - {sourceCluster: source, targetCluster: target, sourceConnector: {}}
"""
    _, result = _strimzi(text)
    data = result.data
    assert data is not None
    source = data["clusters"]["source"]
    assert source["security"]["sasl"] == {"mechanism": "OAUTHBEARER"}
    assert source["security"]["tls"] == {"ca": "/etc/topo/secrets/ca/trusted.crt"}
    assert source["client"] == {
        "sasl.oauthbearer.method": "oidc",
        "sasl.oauthbearer.token.endpoint.url": "https://sso.example.com/token",
        "sasl.oauthbearer.client.id": "mm2",
        "sasl.oauthbearer.scope": "kafka",
        "sasl.oauthbearer.client.secret": "${env:SOURCE_SASL_OAUTHBEARER_CLIENT_SECRET}",
    }
    assert any("keys matching *.crt" in n for n in result.notes)
    assert [d.code for d in result.diagnostics if "audience" in d.message] == ["M009"]
    topology_of(_yaml(result))


@pytest.mark.parametrize(
    ("authentication", "says"),
    [
        (
            "{type: oauth, tokenEndpointUri: 'https://t', accessToken: {secretName: t, key: k}}",
            "accessToken",
        ),
        ("{type: custom, sasl: true}", "'custom'"),
    ],
)
def test_a_strimzi_login_topo_cannot_make_is_an_error(authentication: str, says: str) -> None:
    text = f"""\
kind: KafkaMirrorMaker2
spec:
  connectCluster: b
  clusters:
    - {{alias: a, bootstrapServers: 'a:9092', authentication: {authentication}}}
    - {{alias: b, bootstrapServers: 'b:9092'}}
  mirrors: [{{sourceCluster: a, targetCluster: b, sourceConnector: {{}}}}]
"""
    _, result = _strimzi(text)
    assert result.data is None
    [problem] = [d for d in result.diagnostics if d.code == "M024"]
    assert says in problem.message and problem.span.line == 5


def test_a_manifest_is_read_for_its_one_mirror_maker_resource_at_its_own_lines() -> None:
    user = "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaUser\nmetadata: {name: u}\n"
    text = f"{user}---\n{SCRAM_AND_TLS}"
    _, result = _strimzi(text)
    assert result.data is not None
    offset = user.count("\n") + 1
    assert ("M009", 6 + offset) in {(d.code, d.span.line) for d in result.diagnostics}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (
            "kind: KafkaConnect\nspec: {}\n",
            "holds no KafkaMirrorMaker2 resource (it holds KafkaConnect)",
        ),
        (
            "kind: KafkaMirrorMaker2\nmetadata: {name: a}\n---\n"
            "kind: KafkaMirrorMaker2\nmetadata: {name: b}\n",
            "holds 2 KafkaMirrorMaker2 resources (a, b)",
        ),
        ("kind: KafkaMirrorMaker2\n", "has no spec"),
    ],
)
def test_a_file_that_is_not_one_mirror_maker_resource_is_one_error(text: str, says: str) -> None:
    _, result = _strimzi(text)
    assert result.data is None
    assert [d.code for d in result.diagnostics] == ["M022"]
    assert says in result.diagnostics[0].message


SOURCE: dict[str, Any] = {
    "name": "east->west.MirrorSourceConnector",
    "config": {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "east",
        "target.cluster.alias": "west",
        "source.cluster.bootstrap.servers": "east-1:9092",
        "target.cluster.bootstrap.servers": "west-1:9092",
        "source.cluster.security.protocol": "SASL_SSL",
        "source.cluster.sasl.mechanism": "SCRAM-SHA-512",
        "source.cluster.sasl.jaas.config": (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="mm2" password="hunter2-secret";'
        ),
        "topics": "orders.*",
        "tasks.max": "4",
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "refresh.topics.interval.seconds": "30",
    },
}
CHECKPOINT: dict[str, Any] = {
    "connector.class": "MirrorCheckpointConnector",
    "source.cluster.alias": "east",
    "target.cluster.alias": "west",
    "source.cluster.bootstrap.servers": "east-2:9092",
    "target.cluster.bootstrap.servers": "west-1:9092",
    "sync.group.offsets.enabled": "true",
    "emit.checkpoints.interval.seconds": "5",
}


def test_connect_connectors_of_one_flow_become_one_flow_with_its_clusters() -> None:
    files = {
        "source.json": json.dumps(SOURCE, indent=2),
        "checkpoint.json": json.dumps(CHECKPOINT, indent=2),
    }
    _, result, sources = _connect(files)
    data = result.data
    assert data is not None
    assert data["clusters"]["east"]["bootstrap"] == "east-1:9092"  # the first connector's
    assert data["clusters"]["east"]["security"]["sasl"]["password"] == "${env:EAST_SASL_PASSWORD}"
    [flow] = data["flows"]
    assert flow["mirror"] == {"from": "east", "to": "west"}
    assert flow["sync"] == {"group_offsets": True}
    assert flow["emit"] == {"heartbeats": False}  # no heartbeat connector
    assert data["defaults"]["mm2"] == {
        "offsets_topic": "connect-offsets",
        "status_topic": "connect-status",
        "connector": "east->west.MirrorSourceConnector",
    }
    # Each warning is at the file and line it is about.
    placed = [sources.placed(d) for d in result.diagnostics]
    where = {(d.code, d.span.file, d.span.line) for d in placed}
    assert ("M023", "checkpoint.json", 5) in where  # the other bootstrap
    assert ("M016", "source.json", 15) in where  # JsonConverter changed MM2's copies
    assert ("M021", "source.json", 11) in where  # the password, not copied
    [variable] = result.env_vars
    assert "source.json line 11" in variable.purpose
    text = _yaml(result)
    assert "hunter2" not in text + "".join(d.message for d in result.diagnostics)
    assert "hunter2" not in result.shown_text
    topology_of(text)


def test_connect_reads_the_rest_api_forms_and_names_a_bare_config_after_its_file() -> None:
    bare = SOURCE["config"]
    listed = [SOURCE]
    expanded = {"east->west.MirrorSourceConnector": {"info": SOURCE, "status": {}}}
    for form in (bare, listed, expanded):
        _, result, _ = _connect({"mine.json": json.dumps(form)})
        assert result.data is not None
        expected = "mine" if form is bare else "east->west.MirrorSourceConnector"
        assert result.data["defaults"]["mm2"]["connector"] == expected


def test_a_flow_without_its_source_connector_is_left_out_and_said() -> None:
    files = {
        "checkpoint.json": json.dumps(CHECKPOINT),
        "source.json": json.dumps({**SOURCE["config"], "source.cluster.alias": "north"}),
    }
    _, result, sources = _connect(files)
    assert result.data is not None
    assert [f["mirror"] for f in result.data["flows"]] == [{"from": "north", "to": "west"}]
    [left_out] = [sources.placed(d) for d in result.diagnostics if d.code == "M023"]
    assert (
        left_out.span.file == "checkpoint.json" and "no MirrorSourceConnector" in left_out.message
    )


def test_connect_refuses_a_connector_that_is_not_mm2s() -> None:
    other = {
        "name": "jdbc",
        "config": {"connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector"},
    }
    _, result, _ = _connect({"jdbc.json": json.dumps(other)})
    assert result.data is None
    assert [d.code for d in result.diagnostics] == ["M022"]


def test_the_commands_print_warnings_at_the_files_lines_and_exit_as_import_mm2(
    tmp_path: Path,
) -> None:
    (tmp_path / "source.json").write_text(json.dumps(SOURCE, indent=2))
    (tmp_path / "checkpoint.json").write_text(json.dumps(CHECKPOINT, indent=2))
    (tmp_path / "mm2.yaml").write_text(SCRAM_AND_TLS)
    (tmp_path / "kafka.yaml").write_text("kind: Kafka\nspec: {}\n")
    runner = CliRunner()
    out = tmp_path / "topology.yaml"
    result = runner.invoke(
        app,
        [
            "import",
            "connect",
            str(tmp_path / "source.json"),
            str(tmp_path / "checkpoint.json"),
            "-o",
            str(out),
            "--offsets-topic",
            "my-offsets",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"{tmp_path / 'checkpoint.json'}:5:3: warning[M023]" in result.stderr
    assert "EAST_SASL_PASSWORD" in result.stderr and "hunter2" not in result.output
    assert "offsets_topic: my-offsets" in out.read_text()
    assert out.read_text().startswith(
        f"# Imported from {tmp_path / 'source.json'} and 1 more by `topo import connect`."
    )
    result = runner.invoke(app, ["import", "strimzi", str(tmp_path / "mm2.yaml")])
    assert result.exit_code == 0, result.output
    assert "Kubernetes Secret mm2-user, key password" in result.stderr
    result = runner.invoke(app, ["import", "strimzi", str(tmp_path / "kafka.yaml")])
    assert result.exit_code == 1
    assert "error[M022]" in result.stderr and "Traceback" not in result.output


def test_a_second_connectors_password_is_never_shown_even_on_a_line_with_a_warning() -> None:
    """Minified JSON is one line per file, which the warnings about its other settings point
    at: the passwords on it, imported or left out as a second copy, are masked in the text
    lines are shown from, and no message quotes them."""
    from topology.core.render.diagnostics import as_text

    def jaas(password: str) -> str:
        return (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="mm2" password="{password}";'
        )

    checkpoint = {**CHECKPOINT, "source.cluster.sasl.jaas.config": jaas("first-s3cret")}
    source = {
        **SOURCE["config"],
        "source.cluster.sasl.jaas.config": jaas("second-s3cret"),
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    }
    files = {"checkpoint.json": json.dumps(checkpoint), "source.json": json.dumps(source)}
    _, result, sources = _connect(files)
    documents = sources.documents(result.shown_text)
    shown = "\n".join(
        as_text(placed, documents[placed.span.file])
        for placed in map(sources.placed, result.diagnostics)
    )
    assert "M023" in shown and "M016" in shown  # the passwords differ; JsonConverter
    assert "s3cret" not in shown + _yaml(result) + result.shown_text
