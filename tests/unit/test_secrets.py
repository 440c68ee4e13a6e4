"""topology.core.secrets: `${env:NAME}` and `${file:path}` references, found offline,
resolved late."""

from pathlib import Path

import pytest

from topology.core.analysis import analyse
from topology.core.errors import TopoError
from topology.core.secrets import (
    Reference,
    SecretError,
    _one_typo_away,
    is_secret_key,
    key_words,
    reference,
    reference_problem,
    resolve,
)

SECRET = "s3cr3t-value"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("${env:EAST_PASSWORD}", Reference("env", "EAST_PASSWORD")),
        ("${file:certs/east.pass}", Reference("file", "certs/east.pass")),
        ("  ${env:X}\n", Reference("env", "X")),  # surrounding blanks are not part of the value
        ("${file:/etc/kafka/pass}", Reference("file", "/etc/kafka/pass")),
    ],
)
def test_a_whole_value_reference_is_parsed(value: str, expected: Reference) -> None:
    assert reference(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        *("plain", "", "${env:}", "${env:X", "pre${env:X}", "${env:X}post", "${vault:x}"),
        *("$env:X", "${env:X}${env:Y}", "{env:X}"),
    ],
)
def test_anything_else_is_not_a_reference(value: str) -> None:
    assert reference(value) is None


def test_a_reference_prints_as_it_is_written() -> None:
    assert str(Reference("env", "EAST_USER")) == "${env:EAST_USER}"
    assert str(Reference("file", "a/b")) == "${file:a/b}"


@pytest.mark.parametrize("value", ["plain", "", "${env:X}", "${file:a}", "$dollar", "{}"])
def test_values_that_are_no_reference_or_a_whole_one_have_no_problem(value: str) -> None:
    assert reference_problem(value) is None


@pytest.mark.parametrize("value", ["${env:X", "pre${env:X}", "${vault:x}", "${env:}", "a${b"])
def test_a_value_that_looks_like_a_reference_but_is_not_one_is_a_problem(value: str) -> None:
    assert reference_problem(value) == (
        f"'{value}' looks like a secret reference but is not one; write the whole value as "
        "${env:NAME} or ${file:path}"
    )


def _no_file(path: Path) -> str:
    raise AssertionError(f"read {path}")


def test_a_plain_value_resolves_to_itself_without_looking_anywhere() -> None:
    value = resolve(
        "admin", cluster="east", setting="sasl.username", environ={}, read_file=_no_file
    )
    assert value == "admin"


def test_an_env_reference_resolves_from_the_given_environment() -> None:
    environ = {"EAST_PASSWORD": SECRET, "OTHER": "x"}
    found = resolve("${env:EAST_PASSWORD}", cluster="east", setting="p", environ=environ)
    assert found == SECRET


def test_a_missing_variable_names_the_cluster_setting_and_variable_but_no_value() -> None:
    environ = {"EAST_PASSWORD_OLD": SECRET, "PATH": "/bin"}
    with pytest.raises(SecretError) as raised:
        resolve(
            "${env:EAST_PASSWORD}",
            cluster="east",
            setting="security.sasl.password",
            environ=environ,
        )
    assert str(raised.value) == (
        "cluster east: security.sasl.password needs environment variable EAST_PASSWORD, "
        "which is not set"
    )
    assert SECRET not in str(raised.value)
    assert isinstance(raised.value, TopoError)  # the CLI prints it as one line, no traceback


def test_an_empty_variable_is_set_and_resolves_to_empty() -> None:
    assert resolve("${env:E}", cluster="c", setting="s", environ={"E": ""}) == ""


def test_a_file_reference_is_read_relative_to_the_topologys_folder() -> None:
    read: list[Path] = []

    def read_file(path: Path) -> str:
        read.append(path)
        return f"  {SECRET}\n"

    found = resolve(
        "${file:secrets/east.pass}",
        cluster="east",
        setting="p",
        environ={},
        read_file=read_file,
        base=Path("/repo/topologies"),
    )
    assert found == SECRET  # the trailing newline editors add is not part of the secret
    assert read == [Path("/repo/topologies/secrets/east.pass")]


def test_an_absolute_file_reference_ignores_the_base() -> None:
    read: list[Path] = []

    def read_file(path: Path) -> str:
        read.append(path)
        return SECRET

    resolve(
        "${file:/run/secrets/p}",
        cluster="c",
        setting="s",
        environ={},
        read_file=read_file,
        base=Path("/repo"),
    )
    assert read == [Path("/run/secrets/p")]


@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        (FileNotFoundError(2, "No such file or directory"), "No such file or directory"),
        (PermissionError(13, "Permission denied"), "Permission denied"),
        (IsADirectoryError(21, "Is a directory"), "Is a directory"),
        (OSError("no errno"), "OSError"),
    ],
)
def test_an_unreadable_file_names_the_cluster_setting_path_and_reason(
    failure: OSError, reason: str
) -> None:
    def read_file(path: Path) -> str:
        raise failure

    with pytest.raises(SecretError) as raised:
        resolve(
            "${file:east.pass}",
            cluster="east",
            setting="security.tls.key_password",
            environ={},
            read_file=read_file,
            base=Path("/repo"),
        )
    assert str(raised.value) == (
        "cluster east: security.tls.key_password needs file /repo/east.pass, which cannot be "
        f"read ({reason})"
    )


def test_a_file_that_is_not_text_is_named_without_quoting_its_bytes() -> None:
    def read_file(path: Path) -> str:
        return b"\xffsecret".decode("utf-8")

    with pytest.raises(SecretError) as raised:
        resolve(
            "${file:p.bin}",
            cluster="east",
            setting="p",
            environ={},
            read_file=read_file,
            base=Path("/repo"),
        )
    assert str(raised.value) == "cluster east: p needs file /repo/p.bin, which is not UTF-8 text"
    assert "0xff" not in str(raised.value)


# Real property names, and what users write instead, with the verdict of `is_secret_key`.
# Sources: Kafka's client configs (CommonClientConfigs, SslConfigs, SaslConfigs), librdkafka's
# CONFIGURATION.md, MM2 and Kafka Connect (config providers, client overrides), Schema Registry
# clients, Spark's conf.
SECRET_NAMES = [
    # Kafka Java client and MM2 / Connect
    "sasl.jaas.config",
    "ssl.key.password",
    "ssl.keystore.password",
    "ssl.truststore.password",
    "ssl.keystore.key",  # an inline PEM private key
    "sasl.oauthbearer.client.credentials.client.secret",
    "sasl.oauthbearer.assertion.private.key.passphrase",
    "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config",
    "consumer.override.sasl.jaas.config",
    "producer.ssl.key.password",
    "config.providers.vault.param.token",
    # librdkafka
    "sasl.password",
    "sasl.oauthbearer.client.secret",
    "ssl.key.pem",
    "ssl_key",
    "sasl.oauthbearer.assertion.private.key.pem",
    # Schema Registry clients
    "schema.registry.basic.auth.user.info",  # user:password
    "basic.auth.user.info",
    "bearer.auth.token",
    # Spark
    "spark.ssl.keyStorePassword",
    "spark.authenticate.secret",
    # misspelled, or spelled another way
    "ssl.keystore.pasword",
    "ssl.keystore.passowrd",
    "ssl.keystore.passwd",
    "ssl.keystore.pass",
    "ssl.key.pwd",
    "sasl.jass.config",
    "sasl.oauthbearer.client.secert",
    "basic.auth.user.info.credentials",
    "SASL_PASSWORD",
    "client.secret",
    "keystorepassword",
]
NOT_SECRET_NAMES = [
    "key.serializer",
    "value.deserializer",
    "ssl.key.location",  # a path
    "ssl.keystore.location",
    "ssl.truststore.location",
    "ssl.keystore.type",
    "ssl.keystore.certificate.chain",  # a certificate is public
    "ssl.certificate.pem",
    "ssl.ca.pem",
    "sasl.kerberos.keytab",  # a path
    "sasl.kerberos.principal",
    "sasl.kerberos.service.name",
    "sasl.username",
    "sasl.mechanism",
    "sasl.oauthbearer.method",
    "sasl.oauthbearer.client.id",
    "sasl.oauthbearer.client.credentials.client.id",
    "sasl.oauthbearer.token.endpoint.url",  # an address
    "SASL_OAUTHBEARER_TOKEN_ENDPOINT_URL",
    "sasl.oauthbearer.assertion.private.key.file",
    "sasl.oauthbearer.config",
    "enable.sasl.oauthbearer.unsecure.jwt",
    "basic.auth.credentials.source",  # USER_INFO, URL, SASL_INHERIT
    "delegation.token.expiry.time.ms",
    "spark.kafka.clusters.east.sasl.token.mechanism",
    "ssl.secure.random.implementation",
    "ssl.endpoint.identification.algorithm",
    "security.protocol",
    "oauthbearer_token_refresh_cb",
    "client.id",
    "acks",
    "key",  # topo's own security.tls.key: a path
]


@pytest.mark.parametrize("key", SECRET_NAMES)
def test_secret_property_names_are_recognised(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize("key", NOT_SECRET_NAMES)
def test_other_property_names_are_not_taken_for_secrets(key: str) -> None:
    assert not is_secret_key(key)


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("ssl.keyStorePassword", ["ssl", "key", "store", "password"]),
        ("SASL_OAUTHBEARER_TOKEN", ["sasl", "oauthbearer", "token"]),
        ("clientSecret", ["client", "secret"]),
        ("SSLKey", ["ssl", "key"]),
    ],
)
def test_names_are_read_as_words(name: str, words: list[str]) -> None:
    assert key_words(name) == words


@pytest.mark.parametrize(
    ("word", "other", "close"),
    [
        ("pasword", "password", True),  # a letter missing
        ("passsword", "password", True),  # one too many
        ("passwerd", "password", True),  # one changed
        ("passowrd", "password", True),  # two swapped
        ("pswrd", "password", False),
        ("secure", "secret", False),  # ssl.secure.random.implementation
        ("secret", "secret", True),
    ],
)
def test_one_typo_away(word: str, other: str, close: bool) -> None:
    assert (word in _one_typo_away(other)) is close
    assert is_secret_key(f"sasl.{word}") is close  # as the rule reads a property's words


def test_a_malformed_reference_to_a_secret_is_named_not_quoted() -> None:
    problem = reference_problem("hunter2${env:X", setting="cluster east: sasl.password")
    assert problem is not None and "hunter2" not in problem
    assert problem.startswith("cluster east: sasl.password looks like a secret reference")


# -- a reference counts as given when validate checks a login -------------------------------

OAUTHBEARER = """\
version: 1
clusters:
  east:
    bootstrap: "127.0.0.1:24980"
    security: {protocol: SASL_SSL, sasl: {mechanism: OAUTHBEARER}}
    client:
CLIENT
  west: {bootstrap: "127.0.0.1:16340"}
flows:
  - mirror: {from: east, to: west}
"""
OIDC = (
    "sasl.oauthbearer.client.id: ${env:ID}, sasl.oauthbearer.client.secret: ${env:SECRET}, "
    "sasl.oauthbearer.token.endpoint.url: '${file:idp-url}'"
)


def _login_problems(client: str) -> list[str]:
    """T205's messages for these client properties, written one a line (a reference is no
    plain scalar in a flow mapping)."""
    lines = "\n".join(f"      {setting}" for setting in client.split(", "))
    analysis = analyse(OAUTHBEARER.replace("CLIENT", lines), "t.yaml")
    assert [d.code for d in analysis.diagnostics if d.severity == "error"] in ([], ["T205"])
    return [d.message for d in analysis.diagnostics if d.code == "T205"]


@pytest.mark.parametrize(
    "client",
    [
        f"sasl.oauthbearer.method: oidc, {OIDC}",  # every OIDC setting by reference
        f"sasl.oauthbearer.method: ${{env:METHOD}}, {OIDC}",  # oidc or default: read on connect
        "enable.sasl.oauthbearer.unsecure.jwt: true, sasl.oauthbearer.config: ${env:CONFIG}",
        "sasl.oauthbearer.method: ${env:M}, enable.sasl.oauthbearer.unsecure.jwt: true, "
        "sasl.oauthbearer.config: '${file:jwt.conf}'",
        "enable.sasl.oauthbearer.unsecure.jwt: ${env:U}, sasl.oauthbearer.config: principal=a",
        f"sasl.oauthbearer.method: oidc, enable.sasl.oauthbearer.unsecure.jwt: ${{env:U}}, {OIDC}",
    ],
)
def test_an_oauthbearer_setting_given_by_reference_counts_as_given(client: str) -> None:
    assert _login_problems(client) == []


@pytest.mark.parametrize(
    ("client", "problem"),
    [
        ("sasl.oauthbearer.method: ${env:M}", "needs a way to get tokens"),
        (
            "sasl.oauthbearer.method: ${env:M}, sasl.oauthbearer.client.id: ${env:ID}",
            "needs a way to get tokens",
        ),
        ("sasl.oauthbearer.method: OIDX", "has client sasl.oauthbearer.method 'OIDX'"),
        (
            "sasl.oauthbearer.method: oidc, sasl.oauthbearer.client.id: ${env:ID}",
            "needs client sasl.oauthbearer.client.secret and sasl.oauthbearer.token.endpoint.url",
        ),
        (
            f"sasl.oauthbearer.method: oidc, enable.sasl.oauthbearer.unsecure.jwt: true, {OIDC}",
            "refuses together",
        ),
    ],
)
def test_an_oauthbearer_login_that_cannot_work_is_still_refused(client: str, problem: str) -> None:
    (found,) = _login_problems(client)
    assert problem in found
