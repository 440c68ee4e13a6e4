"""`topo import mm2`: every property mapped or warned about, secrets out, the result valid."""

import os
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tests.helpers import run_topo
from tests.mm2.normal import SAMPLES, topology_of
from topology.core.analysis import analyse
from topology.core.diagnostics import Severity
from topology.core.mm2 import yaml_out
from topology.core.mm2.import_header import header
from topology.core.mm2.importer import ImportResult, import_properties

SAMPLE_NAMES = sorted(path.stem for path in SAMPLES.glob("*.properties"))
# The literal passwords in the samples: they must never come out of an import.
SAMPLE_PASSWORDS = (
    *("pr1mary-S3cret!", "b4ckup-S3cret!"),
    # mistyped-secrets.properties: secrets under names Kafka spells otherwise, or mistyped
    *("e4st-Pa55word", "e4st-Jass", "e4st-Keystore", "e4st-Key", "e4st-Registry"),
    *("w3st-Key", "w3st-Keystore", "w3st-Trust"),
)


def run(text: str) -> ImportResult:
    return import_properties(text, "mm2.properties")


def data(text: str) -> dict[str, Any]:
    result = run(text)
    assert result.data is not None, [d.headline() for d in result.diagnostics]
    return result.data


def codes(result: ImportResult, severity: Severity | None = None) -> list[str]:
    return [d.code for d in result.diagnostics if severity is None or d.severity is severity]


def messages(result: ImportResult, code: str) -> list[str]:
    return [d.message for d in result.diagnostics if d.code == code]


def sample(name: str) -> str:
    return (SAMPLES / f"{name}.properties").read_text()


def yaml_of(name: str) -> str:
    result = import_properties(sample(name), f"{name}.properties")
    assert result.data is not None
    return yaml_out.render(result.data, header(result, f"{name}.properties"))


BASE = "clusters = a, b\na.bootstrap.servers = a:9092\nb.bootstrap.servers = b:9092\n"
FLOW = BASE + "a->b.enabled = true\n"


# -- the samples --------------------------------------------------------------------------


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_each_sample_imports_to_the_snapshot(name: str, snapshot: SnapshotAssertion) -> None:
    assert yaml_of(name) == snapshot


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_each_imported_sample_passes_validation(name: str) -> None:
    analysis = analyse(yaml_of(name), f"{name}.yaml")
    assert [d.headline() for d in analysis.diagnostics if d.severity is Severity.ERROR] == []


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_no_sample_password_reaches_the_topology_or_a_message(name: str) -> None:
    result = import_properties(sample(name), f"{name}.properties")
    shown = [yaml_of(name), result.shown_text, *(d.message for d in result.diagnostics)]
    for password in SAMPLE_PASSWORDS:
        assert all(password not in text for text in shown)


def test_apache_sample_is_an_active_active_pair_with_its_replication_factor() -> None:
    imported = data(sample("apache-default"))
    assert imported["flows"] == [{"active-active": ["A", "B"]}]
    assert imported["defaults"] == {"replication_factor": 1, "sync": {"group_offsets": False}}
    result = run(sample("apache-default"))
    assert "offset.storage.replication.factor" in result.not_imported
    assert set(codes(result)) == {"M009"}


def test_dr_sample_maps_scram_tls_offsets_and_exactly_once() -> None:
    result = run(sample("dr-sasl-scram"))
    imported = data(sample("dr-sasl-scram"))
    primary = imported["clusters"]["primary"]
    assert primary["security"] == {
        "protocol": "SASL_SSL",
        "sasl": {
            "mechanism": "SCRAM-SHA-512",
            "username": "mm2-primary",
            "password": "${env:PRIMARY_SASL_PASSWORD}",
        },
        "tls": {"ca": "/etc/kafka/certs/primary-ca.pem"},
    }
    assert imported["defaults"] == {"replication_factor": 3, "sync": {"group_offsets": False}}
    assert imported["flows"] == [
        {
            "mirror": {"from": "primary", "to": "backup"},
            "topics": {"include": ["orders.*", "payments\\..*", "customers"]},
            "sync": {"group_offsets": True},
            "delivery": "exactly-once",
        }
    ]
    assert [(v.name, v.generated) for v in result.env_vars] == [
        ("BACKUP_SASL_PASSWORD", True),
        ("PRIMARY_SASL_PASSWORD", True),
    ]
    assert "tasks.max" in result.not_imported


def test_aggregation_sample_becomes_one_identity_aggregate() -> None:
    result = run(sample("aggregation-identity"))
    imported = data(sample("aggregation-identity"))
    assert imported["flows"] == [{"aggregate": {"from": ["eu", "us", "apac"], "into": "analytics"}}]
    assert imported["defaults"]["naming"] == "identity"
    assert imported["defaults"]["emit"] == {"heartbeats": False, "checkpoints": False}
    assert any("aggregate" in note for note in result.notes)


def test_legacy_names_are_imported_as_the_new_ones_with_a_warning() -> None:
    result = run(sample("legacy-blacklist"))
    imported = data(sample("legacy-blacklist"))
    assert codes(result) == ["M013", "M013", "M013"]
    assert imported["defaults"]["topics"] == {
        "exclude": [".*[\\-\\.]internal", ".*\\.replica", "__consumer_offsets", "test-.*"]
    }
    assert imported["defaults"]["groups"]["exclude"][-1] == "tmp-.*"
    # MM2's own exclusions are always on in topo: only the extra one is kept.
    assert imported["defaults"]["configs"] == {"exclude": ["retention\\.ms"]}


def test_per_flow_sample_keeps_references_separator_and_start() -> None:
    result = run(sample("per-flow-overrides"))
    imported = data(sample("per-flow-overrides"))
    assert imported["defaults"] == {"separator": "_", "replication_factor": 3}
    west = imported["clusters"]["west"]["security"]["sasl"]
    assert west == {
        "mechanism": "PLAIN",
        "username": "${env:WEST_USER}",
        "password": "${env:WEST_PASSWORD}",
    }
    hub = imported["clusters"]["hub"]
    assert hub["security"]["tls"]["key_password"] == "${env:HUB_KEY_PASSWORD}"
    assert hub["client"] == {"request.timeout.ms": 60000}
    east_to_hub, west_to_hub, hub_to_east = imported["flows"]
    assert east_to_hub["start"] == "latest"  # east.consumer.auto.offset.reset
    assert "start" not in hub_to_east
    assert west_to_hub["sync"] == {"configs": False}
    assert hub_to_east["sync"] == {"group_offsets": False}
    # The references were the user's own: nothing generated, all still listed.
    assert {v.name for v in result.env_vars if not v.generated} == {
        "HUB_KEY_PASSWORD",
        "WEST_USER",
        "WEST_PASSWORD",
    }
    assert not any(v.generated for v in result.env_vars)


# -- mapping rules ------------------------------------------------------------------------


def test_mm2_defaults_that_differ_from_topos_are_written() -> None:
    assert data(FLOW)["defaults"] == {"replication_factor": 2, "sync": {"group_offsets": False}}


def test_replication_factor_minus_one_is_the_broker_default() -> None:
    imported = data(FLOW + "replication.factor = -1\nsync.group.offsets.enabled = true\n")
    assert "defaults" not in imported or imported["defaults"] == {}
    assert topology_of(yaml_out.render(imported)).flows[0].settings.replication_factor is None


def test_identity_policy_and_separator() -> None:
    imported = data(
        FLOW + "replication.policy.class = IdentityReplicationPolicy\n"
        "a->b.replication.policy.separator = -\n"
    )
    assert imported["defaults"]["naming"] == "identity"
    assert imported["flows"][0]["separator"] == "-"


def test_mm2_lists_become_yaml_lists_with_empty_entries_dropped() -> None:
    imported = data(FLOW + "a->b.topics = orders ,payments\\\\..*,, \n")
    assert imported["flows"][0]["topics"] == {"include": ["orders", "payments\\..*"]}


def test_top_level_security_applies_to_every_cluster_without_its_own() -> None:
    text = FLOW + (
        "security.protocol = SASL_SSL\nsasl.mechanism = PLAIN\n"
        "sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="svc" password="topsecret";\n'
        "b.security.protocol = PLAINTEXT\n"
    )
    result = run(text)
    imported = data(text)
    assert imported["clusters"]["a"]["security"]["sasl"]["password"] == "${env:A_SASL_PASSWORD}"
    assert "security" not in imported["clusters"]["b"]
    assert "topsecret" not in yaml_out.render(imported)
    assert "sasl.mechanism" in " ".join(messages(result, "M015"))  # unused by b: said so


def test_secret_client_properties_become_environment_variables() -> None:
    text = FLOW + (
        "a.security.protocol = SSL\n"
        "a.ssl.truststore.type = JCEKS\n"  # a store type topo does not read passes through
        "a.ssl.truststore.location = /etc/a.jceks\na.ssl.truststore.password = changeit\n"
        "a.sasl.client.callback.handler.class = x.Y\n"
    )
    result = run(text)
    cluster = data(text)["clusters"]["a"]
    assert cluster["client"] == {
        "ssl.truststore.type": "JCEKS",
        "ssl.truststore.location": "/etc/a.jceks",
        "ssl.truststore.password": "${env:A_SSL_TRUSTSTORE_PASSWORD}",
    }
    assert "JCEKS store" in " ".join(messages(result, "M016"))
    assert "sasl.client.callback.handler.class" in " ".join(messages(result, "M015"))


def test_jks_and_pkcs12_stores_are_carried_with_their_passwords_as_references() -> None:
    text = FLOW + (
        "a.security.protocol = SSL\n"
        "a.ssl.truststore.location = /etc/a.jks\na.ssl.truststore.password = changeit\n"
        "a.ssl.keystore.type = pkcs12\na.ssl.keystore.location = /etc/a.p12\n"
        "a.ssl.keystore.password = kpw\na.ssl.key.password = kpw2\n"
    )
    result = run(text)
    cluster = data(text)["clusters"]["a"]
    assert cluster["security"]["tls"] == {
        "truststore": {"path": "/etc/a.jks", "password": "${env:A_SSL_TRUSTSTORE_PASSWORD}"},
        "keystore": {
            "path": "/etc/a.p12",
            "type": "PKCS12",
            "password": "${env:A_SSL_KEYSTORE_PASSWORD}",
            "key_password": "${env:A_SSL_KEY_PASSWORD}",
        },
    }
    assert "client" not in cluster and not messages(result, "M016")
    said = " ".join(d.message for d in result.diagnostics) + result.shown_text
    assert "kpw" not in said and "changeit" not in said  # secrets are never shown


def test_pem_keystore_and_hostname_verification() -> None:
    cluster = data(
        FLOW + "a.security.protocol = SSL\na.ssl.keystore.type = PEM\n"
        "a.ssl.keystore.location = /c/a.pem\na.ssl.key.password = pw\n"
        "a.ssl.endpoint.identification.algorithm =\n"
    )["clusters"]["a"]
    assert cluster["security"]["tls"] == {
        "cert": "/c/a.pem",
        "key": "/c/a.pem",
        "key_password": "${env:A_SSL_KEY_PASSWORD}",
        "verify_hostname": False,
    }


KRB5 = "com.sun.security.auth.module.Krb5LoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
GSSAPI = FLOW + (
    "a.security.protocol = SASL_SSL\na.sasl.mechanism = GSSAPI\n"
    f"a.sasl.jaas.config = {KRB5} required useKeyTab=true storeKey=true "
    'keyTab="/etc/security/mm2.keytab" principal="mm2/host@EXAMPLE.COM" serviceName="kafka";\n'
)
OAUTHBEARER = FLOW + (
    "a.security.protocol = SASL_SSL\na.sasl.mechanism = OAUTHBEARER\n"
    "a.sasl.login.callback.handler.class = org.apache.kafka.common.security.oauthbearer."
    "secured.OAuthBearerLoginCallbackHandler\n"
    "a.sasl.oauthbearer.token.endpoint.url = https://idp.example.com/token\n"
    f'a.sasl.jaas.config = {OAUTH} required clientId="mm2-app" clientSecret="s3cr3t-Oauth" '
    'scope="kafka";\n'
)
# What to write instead of a JAAS line, by mechanism, in the T205 and M009 advice.
KERBEROS_ADVICE = (
    "for Kerberos write librdkafka's client properties instead: sasl.kerberos.principal, "
    "sasl.kerberos.keytab and, when the brokers' service is not kafka, "
    "sasl.kerberos.service.name"
)
OAUTH_ADVICE = (
    "for OAUTHBEARER write librdkafka's client properties instead: sasl.oauthbearer.method: "
    "oidc, sasl.oauthbearer.client.id, sasl.oauthbearer.client.secret (as ${env:NAME}), "
    "sasl.oauthbearer.token.endpoint.url (and sasl.oauthbearer.scope if your identity provider "
    "wants one); or, for tests, Kafka's unsecured tokens: enable.sasl.oauthbearer.unsecure.jwt: "
    'true and sasl.oauthbearer.config: "principal=NAME"'
)
GSSAPI_NO_KEYTAB = (
    "cluster a: SASL GSSAPI needs client properties sasl.kerberos.keytab: topo logs in from a "
    "keytab (the principal's keys), as a service does (e.g. sasl.kerberos.principal: "
    "topo@EXAMPLE.COM, sasl.kerberos.keytab: /etc/security/keytabs/topo.keytab)"
)


def test_a_kerberos_jaas_line_becomes_librdkafka_properties() -> None:
    result = run(GSSAPI)
    cluster = data(GSSAPI)["clusters"]["a"]
    assert cluster["security"] == {"protocol": "SASL_SSL", "sasl": {"mechanism": "GSSAPI"}}
    assert cluster["client"] == {
        "sasl.kerberos.keytab": "/etc/security/mm2.keytab",
        "sasl.kerberos.principal": "mm2/host@EXAMPLE.COM",
        "sasl.kerberos.service.name": "kafka",
    }
    assert codes(result) == []  # useKeyTab and storeKey are what librdkafka's kinit does
    assert result.origins[("clusters", "a", "client", "sasl.kerberos.principal")].line == 7


def test_a_kerberos_service_name_property_wins_over_the_jaas_option() -> None:
    text = GSSAPI.replace('serviceName="kafka"', 'serviceName="other" debug=true') + (
        "a.sasl.kerberos.service.name = kafka\n"
    )
    result = run(text)
    assert data(text)["clusters"]["a"]["client"]["sasl.kerberos.service.name"] == "kafka"
    assert messages(result, "M009") == [
        "a.sasl.jaas.config: login option 'debug' of Krb5LoginModule has no librdkafka "
        "equivalent and is not imported"
    ]


def test_an_oauthbearer_jaas_line_becomes_oidc_properties_with_references() -> None:
    result = run(OAUTHBEARER)
    client = data(OAUTHBEARER)["clusters"]["a"]["client"]
    assert client["sasl.oauthbearer.method"] == "oidc"
    assert client["sasl.oauthbearer.client.id"] == "${env:A_SASL_OAUTHBEARER_CLIENT_ID}"
    assert client["sasl.oauthbearer.client.secret"] == "${env:A_SASL_OAUTHBEARER_CLIENT_SECRET}"
    assert client["sasl.oauthbearer.scope"] == "kafka"
    # An address, not a secret: written as it was, not turned into a variable.
    assert client["sasl.oauthbearer.token.endpoint.url"] == "https://idp.example.com/token"
    assert "sasl.jaas.config" not in client
    # Kafka's own OIDC token fetcher is what method oidc does: taken in, without a word.
    assert "sasl.login.callback.handler.class" not in client
    assert "a.sasl.login.callback.handler.class" not in result.not_imported
    other = OAUTHBEARER.replace(
        "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
        "com.example.VaultTokenHandler",
    )
    assert "a.sasl.login.callback.handler.class" in run(other).not_imported  # said so
    assert {"A_SASL_OAUTHBEARER_CLIENT_ID", "A_SASL_OAUTHBEARER_CLIENT_SECRET"} <= {
        v.name for v in result.env_vars
    }
    text = yaml_out.render(data(OAUTHBEARER), header(result, "mm2.properties"))
    assert "mm2-app" not in text and "s3cr3t-Oauth" not in text
    assert all("s3cr3t-Oauth" not in d.message for d in result.diagnostics)


def test_an_oauthbearer_login_without_a_token_endpoint_says_to_set_one() -> None:
    text = OAUTHBEARER.replace("a.sasl.oauthbearer.token.endpoint.url", "# endpoint")
    (message,) = messages(run(text), "M016")
    assert "set a.sasl.oauthbearer.token.endpoint.url" in message


@pytest.mark.parametrize(
    ("mechanism", "jaas", "reason", "advice"),
    [
        ("GSSAPI", "${env:A_JAAS}", "comes whole from a config provider", KERBEROS_ADVICE),
        ("GSSAPI", f"{KRB5} required useTicketCache=true;", "sets none of", KERBEROS_ADVICE),
        ("GSSAPI", f"{OAUTH} required;", "holds OAuthBearerLoginModule", KERBEROS_ADVICE),
        ("OAUTHBEARER", "not a login line", "is not a login module line", OAUTH_ADVICE),
        (
            "OAUTHBEARER",
            f'{OAUTH} required debug="true";',
            "sets none of clientId, clientSecret, scope, unsecuredLoginStringClaim_sub",
            OAUTH_ADVICE,
        ),
        (
            "OAUTHBEARER",
            f'{OAUTH} required unsecuredLoginLifetimeSeconds="60";',
            "sets no unsecuredLoginStringClaim_sub (the principal the token names)",
            OAUTH_ADVICE,
        ),
    ],
)
def test_a_jaas_line_topo_cannot_map_is_dropped_saying_what_to_write(
    mechanism: str, jaas: str, reason: str, advice: str
) -> None:
    text = FLOW + (
        "config.providers = env\n"
        "config.providers.env.class = org.apache.kafka.common.config.provider."
        "EnvVarConfigProvider\n"
        f"a.security.protocol = SASL_SSL\na.sasl.mechanism = {mechanism}\n"
        f"a.sasl.jaas.config = {jaas}\n"
    )
    result = run(text)
    (message,) = messages(result, "M009")
    assert message.startswith(f"a.sasl.jaas.config {reason}")
    assert message.endswith(f"so it is not imported: {advice}")
    (warning,) = [d for d in result.diagnostics if d.code == "M009"]
    assert warning.span.line == 9  # the JAAS line
    assert "a.sasl.jaas.config" in result.not_imported
    assert "client" not in data(text)["clusters"]["a"]
    # The login is gone, so the topology has none for the mechanism: validation says so, at it.
    (problem,) = analyse(yaml_out.render(data(text)), "t.yaml").diagnostics
    assert (problem.code, problem.span.line) == ("T205", 8)
    assert problem.message.startswith(f"cluster a: SASL {mechanism} ")


def test_a_kerberos_import_validates() -> None:
    assert analyse(yaml_out.render(data(GSSAPI)), "t.yaml").diagnostics == ()


def test_an_unsecured_oauthbearer_login_becomes_librdkafka_unsecured_tokens() -> None:
    text = FLOW + (
        "a.security.protocol = SASL_PLAINTEXT\na.sasl.mechanism = OAUTHBEARER\n"
        f'a.sasl.jaas.config = {OAUTH} required unsecuredLoginStringClaim_sub="admin" '
        'unsecuredLoginLifetimeSeconds="600" unsecuredLoginExtension_traceId="123" '
        'unsecuredLoginListClaim_roles=",a,b";\n'
    )
    result = run(text)
    assert data(text)["clusters"]["a"]["client"] == {
        "enable.sasl.oauthbearer.unsecure.jwt": True,
        "sasl.oauthbearer.config": "principal=admin lifeSeconds=600 extension_traceId=123",
    }
    assert messages(result, "M009") == [
        "a.sasl.jaas.config: login option 'unsecuredLoginListClaim_roles' of "
        "OAuthBearerLoginModule has no librdkafka equivalent and is not imported"
    ]
    assert analyse(yaml_out.render(data(text)), "t.yaml").diagnostics == ()


def test_an_oauthbearer_config_property_wins_over_the_unsecured_options() -> None:
    text = FLOW + (
        "a.security.protocol = SASL_PLAINTEXT\na.sasl.mechanism = OAUTHBEARER\n"
        f'a.sasl.jaas.config = {OAUTH} required unsecuredLoginStringClaim_sub="admin";\n'
        "a.sasl.oauthbearer.config = principal=other\n"
    )
    client = data(text)["clusters"]["a"]["client"]
    assert client["sasl.oauthbearer.config"] == "principal=other"
    assert client["enable.sasl.oauthbearer.unsecure.jwt"] is True


def test_an_oidc_import_without_a_token_endpoint_fails_validation_naming_it(
    tmp_path: Path,
) -> None:
    source = tmp_path / "mm2.properties"
    source.write_text(OAUTHBEARER.replace("a.sasl.oauthbearer.token.endpoint.url", "# endpoint"))
    done = run_topo("import", "mm2", str(source))
    assert done.returncode == 1
    assert (
        f"{source}:6:1: error[T205]: cluster a: SASL OAUTHBEARER with sasl.oauthbearer.method: "
        "oidc needs client sasl.oauthbearer.token.endpoint.url"
    ) in done.stderr
    assert "Traceback" not in done.stderr and "s3cr3t-Oauth" not in done.stdout + done.stderr


def test_cli_imports_an_oauth_login_that_validates(tmp_path: Path) -> None:
    source = tmp_path / "oauthbearer.properties"
    source.write_text(OAUTHBEARER)
    out = tmp_path / "oauthbearer.yaml"
    done = run_topo("import", "mm2", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "T205" not in done.stderr and "does not pass" not in done.stderr
    written = out.read_text()
    assert "sasl.jaas.config" not in written.split("version: 1", 1)[1]
    assert "s3cr3t-Oauth" not in written + done.stderr and "mm2-app" not in written
    checked = run_topo("validate", str(out))
    assert checked.returncode == 0, checked.stderr


def test_cli_imports_a_kerberos_login_that_validates(tmp_path: Path) -> None:
    source = tmp_path / "gssapi.properties"
    source.write_text(GSSAPI)
    out = tmp_path / "gssapi.yaml"
    done = run_topo("import", "mm2", str(source), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "sasl.kerberos.principal: 'mm2/host@EXAMPLE.COM'" in out.read_text()
    assert run_topo("validate", str(out)).returncode == 0


@pytest.mark.parametrize("output", [True, False])
def test_cli_imports_a_kerberos_login_without_a_keytab_and_says_what_it_needs(
    tmp_path: Path, output: bool
) -> None:
    source = tmp_path / "gssapi.properties"
    source.write_text(GSSAPI.replace(' keyTab="/etc/security/mm2.keytab"', ""))
    out = tmp_path / "gssapi.yaml"
    done = run_topo("import", "mm2", str(source), *(["-o", str(out)] if output else []))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    # With -o the error is in the file written; without, at the sasl.mechanism property.
    where = f"{out}:11:25" if output else f"{source}:6:1"
    assert f"{where}: error[T205]: {GSSAPI_NO_KEYTAB}" in done.stderr
    assert "error: the imported topology does not pass topo validate" in done.stderr
    written = out.read_text() if output else done.stdout
    assert "sasl.kerberos.principal: 'mm2/host@EXAMPLE.COM'" in written
    if output:
        assert run_topo("validate", str(out)).returncode == 1


@pytest.mark.parametrize(
    ("sasl", "advice"),
    [
        ("{mechanism: GSSAPI}", KERBEROS_ADVICE),
        ("{mechanism: OAUTHBEARER}", OAUTH_ADVICE),
        (
            "{mechanism: PLAIN, username: u, password: '${env:P}'}",
            "write the credentials as security.sasl (mechanism, username, password) instead",
        ),
    ],
)
def test_t205_is_at_the_jaas_key_and_advises_by_mechanism(sasl: str, advice: str) -> None:
    text = (
        "version: 1\nclusters:\n  east:\n    bootstrap: 'h:1'\n"
        f"    security: {{protocol: SASL_SSL, sasl: {sasl}}}\n"
        "    client:\n      client.id: mm2\n      sasl.jaas.config: '${env:JAAS}'\n"
        "  west: {bootstrap: 'h:2'}\nflows:\n  - mirror: {from: east, to: west}\n"
    )
    found = [d for d in analyse(text, "t.yaml").diagnostics if d.code == "T205"]
    (problem,) = [d for d in found if "client.sasl.jaas.config" in d.message]
    assert (problem.span.line, problem.span.column) == (8, 7)
    assert problem.message == (
        "cluster east: client.sasl.jaas.config is a Java client setting that topo's Kafka "
        f"client (librdkafka) refuses; {advice}"
    )


def test_a_jaas_line_from_a_provider_asks_for_username_and_password() -> None:
    text = FLOW + (
        "config.providers = env\n"
        "config.providers.env.class = org.apache.kafka.common.config.provider."
        "EnvVarConfigProvider\n"
        "a.security.protocol = SASL_PLAINTEXT\na.sasl.mechanism = SCRAM-SHA-256\n"
        "a.sasl.jaas.config = ${env:A_JAAS}\n"
    )
    result = run(text)
    assert data(text)["clusters"]["a"]["security"]["sasl"] == {
        "mechanism": "SCRAM-SHA-256",
        "username": "${env:A_SASL_USERNAME}",
        "password": "${env:A_SASL_PASSWORD}",
    }
    assert codes(result) == ["M014"]


def test_config_provider_references() -> None:
    text = FLOW + (
        "config.providers = e, d, f\n"
        "config.providers.e.class = org.apache.kafka.common.config.provider.EnvVarConfigProvider\n"
        "config.providers.d.class = "
        "org.apache.kafka.common.config.provider.DirectoryConfigProvider\n"
        "config.providers.f.class = org.apache.kafka.common.config.provider.FileConfigProvider\n"
        "config.providers.d.param.allowed.paths = /run/secrets\n"
        "a.security.protocol = SSL\n"
        "a.ssl.truststore.password = ${e:TRUST_PW}\n"
        "a.ssl.keystore.password = ${d:/run/secrets:keystore-pw}\n"
        "a.ssl.key.password = ${f:/etc/mm2/secret.properties:key}\n"
        "a.custom.token = ${vault:kv:x}\n"
    )
    result = run(text)
    client = data(text)["clusters"]["a"]["client"]
    assert client == {
        "ssl.truststore.password": "${env:TRUST_PW}",
        "ssl.keystore.password": "${file:/run/secrets/keystore-pw}",
        "ssl.key.password": "${env:A_SSL_KEY_PASSWORD}",
        "custom.token": "${env:A_CUSTOM_TOKEN}",
    }
    m014 = messages(result, "M014")
    assert len(m014) == 2
    assert "FileConfigProvider" in m014[0] and "set A_SSL_KEY_PASSWORD" in m014[0]
    assert "'vault'" in m014[1]
    assert "config.providers.d.param.allowed.paths" in result.not_imported


def test_an_env_reference_without_a_provider_is_kept_with_a_warning() -> None:
    text = FLOW + "a.security.protocol = SSL\na.ssl.truststore.password = ${env:TRUST_PW}\n"
    result = run(text)
    assert data(text)["clusters"]["a"]["client"] == {"ssl.truststore.password": "${env:TRUST_PW}"}
    [message] = messages(result, "M014")
    assert "declares no 'env' provider" in message
    assert [(v.name, v.generated) for v in result.env_vars] == [("TRUST_PW", False)]


def test_start_position_follows_mm2s_precedence() -> None:
    text = BASE.replace("clusters = a, b", "clusters = a, b, c") + (
        "c.bootstrap.servers = c:9092\n"
        "a.consumer.auto.offset.reset = latest\n"
        "a->b.enabled = true\n"
        "a->c.enabled = true\na->c.source.consumer.auto.offset.reset = earliest\n"
        "b->c.enabled = true\nb->c.consumer.auto.offset.reset = latest\n"
    )
    flows = {
        (f["mirror"]["from"], f["mirror"]["to"]): f.get("start", "earliest")
        for f in data(text)["flows"]
    }
    assert flows == {("a", "b"): "latest", ("a", "c"): "earliest", ("b", "c"): "latest"}


def test_exactly_once_is_per_target_cluster() -> None:
    text = FLOW + "b->a.enabled = true\nb.exactly.once.source.support = enabled\n"
    flows = data(text)["flows"]
    assert flows == [
        {"mirror": {"from": "a", "to": "b"}, "delivery": "exactly-once"},
        {"mirror": {"from": "b", "to": "a"}},
    ]
    result = run(
        FLOW + "exactly.once.source.support = enabled\nb.exactly.once.source.support = preparing\n"
    )
    assert codes(result) == ["M015", "M009"]


def test_old_name_loses_to_the_new_one() -> None:
    result = run(FLOW + "topics.exclude = x\na->b.topics.blacklist = y\n")
    assert data(FLOW + "topics.exclude = x\na->b.topics.blacklist = y\n")["defaults"]["topics"] == {
        "exclude": ["x"]
    }
    assert sorted(codes(result)) == ["M013", "M015"]


def test_config_exclusions_that_drop_mm2_defaults_are_flagged() -> None:
    result = run(FLOW + "config.properties.exclude = retention\\\\.ms\n")
    assert data(FLOW + "config.properties.exclude = retention\\\\.ms\n")["defaults"]["configs"] == {
        "exclude": ["retention\\.ms"]
    }
    [message] = messages(result, "M016")
    assert "min.insync.replicas" in message


def test_refresh_topics_off_maps_to_partitions_and_says_how_topo_differs() -> None:
    result = run(FLOW + "refresh.topics.enabled = false\n")
    assert data(FLOW + "refresh.topics.enabled = false\n")["defaults"]["sync"] == {
        "partitions": False,
        "group_offsets": False,
    }
    assert codes(result) == ["M016"]


# -- grouping -----------------------------------------------------------------------------

MESH = (
    "clusters = a, b, c\na.bootstrap.servers = a:1\nb.bootstrap.servers = b:1\n"
    "c.bootstrap.servers = c:1\n"
)


def all_pairs(clusters: str = "abc") -> str:
    return "".join(f"{s}->{t}.enabled = true\n" for s in clusters for t in clusters if s != t)


def test_a_full_mesh_with_equal_settings_is_one_active_active_list() -> None:
    assert data(MESH + all_pairs())["flows"] == [{"active-active": ["a", "b", "c"]}]


def test_a_mesh_pair_with_other_settings_splits_off() -> None:
    flows = data(MESH + all_pairs() + "a->c.topics = x\n")["flows"]
    assert {"active-active": ["a", "b"]} in flows
    assert {"mirror": {"from": "a", "to": "c"}, "topics": {"include": ["x"]}} in flows
    assert len(flows) == 4


def test_prefix_fan_in_keeps_its_mirrors() -> None:
    flows = data(MESH + "a->c.enabled = true\nb->c.enabled = true\n")["flows"]
    assert flows == [{"mirror": {"from": "a", "to": "c"}}, {"mirror": {"from": "b", "to": "c"}}]


def test_identity_fan_in_with_different_settings_declares_each_merge() -> None:
    text = (
        MESH + "replication.policy.class = org.apache.kafka.connect.mirror."
        "IdentityReplicationPolicy\na->c.enabled = true\nb->c.enabled = true\n"
        "b->c.sync.topic.acls.enabled = false\n"
    )
    imported = data(text)
    assert imported["flows"] == [
        {"aggregate": {"from": ["a"], "into": "c"}},
        {"aggregate": {"from": ["b"], "into": "c"}, "sync": {"acls": False}},
    ]
    assert not analyse(yaml_out.render(imported), "x.yaml").diagnostics


def test_identity_loops_are_imported_with_a_warning() -> None:
    text = FLOW + "b->a.enabled = true\nreplication.policy.class = IdentityReplicationPolicy\n"
    result = run(text)
    assert data(text)["flows"] == [{"active-active": ["a", "b"]}]
    [message] = messages(result, "M016")
    assert "forever" in message and "provenance" in message


# -- warnings: nothing dropped silently ------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "code", "fragment"),
    [
        ("tasks.max = 4\n", "M009", "tasks.max"),
        ("a->b.offset.lag.max = 10\n", "M009", "a->b.offset.lag.max"),
        ("a->b.emit.checkpoints.interval.seconds = 5\n", "M009", "set it at the top level"),
        ("refresh.groups.interval.seconds = 5\n", "M009", "refresh.groups.interval.seconds"),
        ("offset-syncs.topic.location = target\n", "M009", "offset-syncs.topic.location"),
        ("dedicated.mode.enable.internal.rest = true\n", "M009", "Connect worker"),
        ("a.target.producer.linger.ms = 5\n", "M009", "not per source or target side"),
        ("a.producer.acks = 1\n", "M009", "topo keeps producer acks itself"),
        ("a->b.producer.enable.idempotence = false\n", "M009", "never copied twice"),
        ("a->b.source.admin.request.timeout.ms = 1\n", "M009", "tunes MM2's connectors"),
        ("b->a.emit.heartbeats.enabled = false\n", "M009", "heartbeats"),
        ("frobnicate = yes\n", "M010", "frobnicate"),
        ("a->b.frobnicate = yes\n", "M010", "frobnicate"),
        ("b->a.topics = x\n", "M015", "not enabled"),
        ("a.topics = x\n", "M015", "not per cluster"),
        ("consumer.auto.offset.reset = latest\n", "M015", "top level"),
        ("a.ssl.truststore.location = /x.pem\n", "M015", "PLAINTEXT"),
        ("a.consumer.isolation.level = read_uncommitted\n", "M016", "read_committed"),
        ("a.consumer.auto.offset.reset = none\n", "M009", "earliest or latest"),
        ("x.bootstrap.servers = x:1\nx.security.protocol = SSL\n", "M006", "2 properties"),
        ("a->b.enabled = true\n", "M002", "line 4"),
    ],
)
def test_unmapped_properties_are_named_in_a_warning(extra: str, code: str, fragment: str) -> None:
    result = run(FLOW + extra)
    assert result.data is not None
    assert codes(result) == [code]
    assert fragment in messages(result, code)[0]
    assert result.diagnostics[0].severity is Severity.WARNING
    assert result.diagnostics[0].span.line == len(FLOW.splitlines()) + 1


def test_client_settings_by_role_become_the_clusters_and_the_flows_sections() -> None:
    text = (
        FLOW
        + "a.consumer.fetch.min.bytes = 65536\nb.producer.compression.type = lz4\n"
        + "b.admin.request.timeout.ms = 60000\na->b.producer.override.linger.ms = 50\n"
        + "a->b.producer.compression.type = zstd\na->b.source.consumer.max.poll.records = 9\n"
    )
    result = run(text)
    # MM2 gives a flow's producer.* only its offset-syncs producer: topo, the copies'
    [misread] = messages(result, "M016")
    assert misread.startswith("a->b.producer.compression.type: MM2 gives this only to")
    found = data(text)
    assert found["clusters"]["a"]["consumer"] == {"fetch.min.bytes": 65536}
    assert found["clusters"]["b"]["producer"] == {"compression.type": "lz4"}
    assert found["clusters"]["b"]["admin"] == {"request.timeout.ms": 60000}
    [flow] = found["flows"]
    assert flow["producer"] == {"compression.type": "zstd", "linger.ms": 50}
    assert flow["consumer"] == {"max.poll.records": 9}
    assert analyse(yaml_out.render(found, []), "t.yaml").ok


def test_top_level_intervals_become_the_engines_and_a_bad_one_is_an_error() -> None:
    text = FLOW + "emit.checkpoints.interval.seconds = 30\nrefresh.topics.interval.seconds = 2.5\n"
    assert codes(run(text)) == []
    assert data(text)["engine"] == {
        "intervals": {
            "emit.checkpoints.interval.seconds": 30,
            "refresh.topics.interval.seconds": 2.5,
        }
    }
    for bad in ("soon", "0", "-5"):
        result = run(FLOW + f"emit.checkpoints.interval.seconds = {bad}\n")
        assert result.data is None and codes(result) == ["M011"]
        assert "not a number of seconds above 0" in messages(result, "M011")[0]


def test_warned_properties_are_listed_in_the_header() -> None:
    result = run(FLOW + "tasks.max = 4\nfrobnicate = 1\n")
    text = "\n".join(header(result, "mm2.properties"))
    assert "Not imported" in text and "tasks.max, frobnicate" in text


def test_read_committed_isolation_is_what_topo_does_anyway() -> None:
    assert codes(run(FLOW + "a.consumer.isolation.level = read_committed\n")) == []


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "fragment", "line"),
    [
        ("a.bootstrap.servers = a:1\n", "M003", "no clusters=", 1),
        ("clusters =\n", "M003", "empty", 1),
        ("clusters = a.b, c\na->c.enabled=true\n", "M004", "'a.b'", 1),
        (
            BASE.replace("b.bootstrap.servers = b:9092\n", "") + "a->b.enabled=true\n",
            "M005",
            "b.bootstrap.servers",
            1,
        ),
        (FLOW.replace("a->b", "a->z"), "M007", "z is not in clusters=", 4),
        (BASE + "a->b.enabled = false\n", "M008", "no flow is enabled", 1),
        (FLOW + "a->b.enabled = yes\n", "M011", "not true or false", 5),
        (FLOW + "replication.factor = three\n", "M011", "replication factor", 5),
        (FLOW + "topics = (unclosed\n", "M011", "not a valid regex", 5),
        (FLOW + "replication.policy.separator = /\n", "M011", "separator", 5),
        (FLOW + "a.security.protocol = TLS\n", "M011", "security protocol", 5),
        (
            FLOW + "a.security.protocol = SASL_SSL\na.sasl.mechanism = NTLM\n",
            "M011",
            "'NTLM'",
            6,
        ),
        (FLOW.replace("a:9092", "-host:9092"), "M011", "invalid host", 2),
        (FLOW + "replication.policy.class = com.example.MyPolicy\n", "M012", "custom", 5),
        (FLOW + "topic.filter.class = com.example.Filter\n", "M012", "custom code", 5),
        (FLOW + "key = \\u12\n", "M001", "malformed", 5),
    ],
)
def test_errors_point_at_the_property(text: str, code: str, fragment: str, line: int) -> None:
    result = run(text)
    assert result.data is None
    errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
    assert [d.code for d in errors] == [code]
    assert fragment in errors[0].message
    assert (errors[0].span.file, errors[0].span.line) == ("mm2.properties", line)


def test_a_login_module_that_does_not_fit_the_mechanism() -> None:
    result = run(
        FLOW + "a.security.protocol = SASL_SSL\na.sasl.mechanism = PLAIN\na.sasl.jaas.config = "
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" '
        'password="p";\n'
    )
    assert codes(result, Severity.ERROR) == ["M011"]
    assert "PlainLoginModule" in result.diagnostics[0].message


def test_duplicate_keys_keep_the_last_value_as_java_does() -> None:
    result = run(FLOW + "replication.factor = 1\nreplication.factor = 4\n")
    assert (
        data(FLOW + "replication.factor = 1\nreplication.factor = 4\n")["defaults"][
            "replication_factor"
        ]
        == 4
    )
    assert codes(result) == ["M002"]


# -- the command ------------------------------------------------------------------------------


def env() -> dict[str, str]:
    return dict(os.environ)


def test_cli_imports_to_stdout_and_names_the_variables_to_set() -> None:
    done = run_topo("import", "mm2", str(SAMPLES / "dr-sasl-scram.properties"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Imported from ")
    assert 'password: "${env:PRIMARY_SASL_PASSWORD}"' in done.stdout
    assert "Set these environment variables where topo runs" in done.stderr
    assert "PRIMARY_SASL_PASSWORD" in done.stderr and "BACKUP_SASL_PASSWORD" in done.stderr
    assert "warning[M009]: tasks.max" in done.stderr
    for password in SAMPLE_PASSWORDS:
        assert password not in done.stdout and password not in done.stderr


def test_cli_writes_the_file_which_validates(tmp_path: Path) -> None:
    out = tmp_path / "topology.yaml"
    done = run_topo("import", "mm2", str(SAMPLES / "dr-sasl-scram.properties"), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    written = out.read_text()
    for password in SAMPLE_PASSWORDS:
        assert password not in written
    assert f"into {out}" in done.stderr
    checked = run_topo("validate", str(out))
    assert checked.returncode == 0, checked.stderr


def test_cli_shows_the_offending_line_with_the_secret_masked(tmp_path: Path) -> None:
    source = tmp_path / "mm2.properties"
    source.write_text(
        FLOW + "a.security.protocol = SASL_SSL\na.sasl.mechanism = PLAIN\na.sasl.jaas.config = "
        'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" '
        'password="Sup3rSecret" debug="true";\n'
    )
    done = run_topo("import", "mm2", str(source))
    assert done.returncode == 0, done.stderr
    assert f"{source}:7:1: warning[M009]: a.sasl.jaas.config: login option 'debug'" in done.stderr
    assert "7 | a.sasl.jaas.config = ****" in done.stderr
    assert "Sup3rSecret" not in done.stderr + done.stdout


def test_cli_errors_exit_1_without_output(tmp_path: Path) -> None:
    source = tmp_path / "mm2.properties"
    source.write_text(BASE)
    out = tmp_path / "out.yaml"
    done = run_topo("import", "mm2", str(source), "-o", str(out))
    assert done.returncode == 1
    assert f"{source}:1:1: error[M008]: no flow is enabled" in done.stderr
    assert "1 | clusters = a, b" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()


def test_cli_refuses_a_config_topo_would_not_run(tmp_path: Path) -> None:
    # Identity a->b, a->c and c->b: MM2 writes a's records to b twice; topo refuses that.
    source = tmp_path / "mm2.properties"
    source.write_text(
        MESH + "replication.policy.class = IdentityReplicationPolicy\n"
        "a->b.enabled = true\na->c.enabled = true\nc->b.enabled = true\n"
    )
    done = run_topo("import", "mm2", str(source))
    assert done.returncode == 1
    assert "error[T304]" in done.stderr and "does not pass topo validate" in done.stderr
    assert done.stderr.rstrip().endswith("topo does not: fix flows[0] as the errors say")


def test_the_closing_line_names_the_cluster_or_flow_in_error() -> None:
    from topology.core.mm2 import import_check

    text = (
        "version: 1\nclusters:\n  east: {bootstrap: 'h:1', client: {sasl.jaas.config: x}}\n"
        "  west: {bootstrap: 'h:2'}\nflows:\n  - mirror: {from: east, to: west}\n"
    )
    check = analyse(text, "t.yaml")
    assert import_check.subjects(check.diagnostics, check.document) == "cluster east"


def test_cli_missing_file_is_one_line(tmp_path: Path) -> None:
    done = run_topo("import", "mm2", str(tmp_path / "nope.properties"))
    assert done.returncode == 1
    assert done.stderr.strip() == f"error: {tmp_path / 'nope.properties'}: no such file"


def test_cli_help_lists_the_formats() -> None:
    for group in ("import", "export"):
        done = run_topo(group, "--help")
        assert done.returncode == 0 and "mm2" in done.stdout


# -- Java regexes RE2 cannot take ----------------------------------------------------------


@pytest.mark.parametrize(
    ("regex", "included", "excluded"),
    [
        ("(?!internal).*", "orders", "internal"),  # the common Java lookahead idiom
        ("(?!.*\\.internal$).*", "orders", "orders.internal"),
        ("(\\w)\\1.*", "aardvark", "orders"),  # a backreference
        ("[a-z]*+", "orders", "orders-1"),  # a possessive repeat
        ("(?>orders|payments)\\Z", "payments", "payments-eu"),
    ],
)
def test_a_java_regex_re2_cannot_take_imports_validates_and_matches_as_java_would(
    regex: str, included: str, excluded: str
) -> None:
    escaped = regex.replace("\\", "\\\\")  # a backslash is an escape in .properties
    result = run(FLOW + f"a->b.topics = {escaped}\n")
    assert codes(result, Severity.ERROR) == [], [d.headline() for d in result.diagnostics]
    assert result.data is not None
    text = yaml_out.render(result.data, header(result, "mm2.properties"))
    analysis = analyse(text, "topology.yaml")
    assert analysis.ok, [d.headline() for d in analysis.diagnostics]
    assert analysis.topology is not None
    [flow] = analysis.topology.flows
    assert flow.settings.topics.include == (regex,)
    assert flow.settings.topics.admits(included)
    assert not flow.settings.topics.admits(excluded)


def test_a_java_regex_topo_reads_otherwise_is_refused_without_calling_it_invalid() -> None:
    result = run(FLOW + "a->b.topics = [[:alpha:]]+\n")
    [message] = messages(result, "M011")
    assert "cannot be used" in message and "not a valid regex" not in message
    assert "':alph'" in message
