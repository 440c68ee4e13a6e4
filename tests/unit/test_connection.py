"""topology.core.connection: a resolved cluster as librdkafka settings, secrets resolved on
the way."""

from pathlib import Path

import pytest

from topology.core.connection import client_config
from topology.core.diagnostics import Span
from topology.core.model import Cluster, Sasl, Security, Tls
from topology.core.secrets import SecretError

SPAN = Span("topology.yaml", 1, 1)
PLAINTEXT = Security()


def cluster(
    security: Security = PLAINTEXT,
    client: dict[str, str | int | float | bool] | None = None,
    bootstrap: str = "east-1:9092,east-2:9092",
) -> Cluster:
    return Cluster("east", bootstrap, security, client or {}, (), SPAN)


def no_files(path: Path) -> str:
    raise AssertionError(f"no file should be read, not {path}")


def test_a_plaintext_cluster_needs_only_its_bootstrap_and_protocol() -> None:
    assert client_config(cluster(), {}, read_file=no_files) == {
        "bootstrap.servers": "east-1:9092,east-2:9092",
        "security.protocol": "PLAINTEXT",
    }


def test_sasl_credentials_are_resolved_from_the_environment_and_files() -> None:
    sasl = Sasl("SCRAM-SHA-512", username="${env:EAST_USER}", password="${file:east.pass}")
    read: list[Path] = []

    def read_file(path: Path) -> str:
        read.append(path)
        return "pa55\n"

    config = client_config(
        cluster(Security("SASL_PLAINTEXT", sasl=sasl)),
        {"EAST_USER": "alice"},
        read_file=read_file,
        base=Path("/topologies"),
    )
    assert config == {
        "bootstrap.servers": "east-1:9092,east-2:9092",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "pa55",
    }
    assert read == [Path("/topologies/east.pass")]


def test_a_mechanism_without_credentials_sets_only_the_mechanism() -> None:
    config = client_config(cluster(Security("SASL_SSL", sasl=Sasl("GSSAPI"))), {})
    assert config["sasl.mechanism"] == "GSSAPI"
    assert "sasl.username" not in config
    assert "sasl.password" not in config


def test_a_missing_environment_variable_names_the_cluster_and_the_variable() -> None:
    sasl = Sasl("PLAIN", username="alice", password="${env:EAST_PASSWORD}")
    with pytest.raises(SecretError) as raised:
        client_config(cluster(Security("SASL_SSL", sasl=sasl)), {"OTHER": "x"})
    message = str(raised.value)
    assert "cluster east" in message
    assert "EAST_PASSWORD" in message
    assert "security.sasl.password" in message


def test_tls_files_are_relative_to_the_topology_folder() -> None:
    tls = Tls(ca="certs/ca.pem", cert="/etc/east/client.pem", key="certs/client.key")
    config = client_config(cluster(Security("SSL", tls=tls)), {}, base=Path("/topologies"))
    assert config == {
        "bootstrap.servers": "east-1:9092,east-2:9092",
        "security.protocol": "SSL",
        "ssl.ca.location": "/topologies/certs/ca.pem",
        "ssl.certificate.location": "/etc/east/client.pem",
        "ssl.key.location": "/topologies/certs/client.key",
        "ssl.endpoint.identification.algorithm": "https",
    }


def test_tls_key_password_is_a_secret_and_hostname_checks_can_be_turned_off() -> None:
    tls = Tls(key_password="${env:KEY_PASS}", verify_hostname=False)
    config = client_config(cluster(Security("SSL", tls=tls)), {"KEY_PASS": "k3y"})
    assert config["ssl.key.password"] == "k3y"
    assert config["ssl.endpoint.identification.algorithm"] == "none"
    assert "ssl.ca.location" not in config


def test_ssl_without_a_tls_block_still_checks_hostnames() -> None:
    config = client_config(cluster(Security("SASL_SSL", sasl=Sasl("OAUTHBEARER"))), {})
    assert config["ssl.endpoint.identification.algorithm"] == "https"


def test_client_properties_pass_through_as_librdkafka_strings() -> None:
    client: dict[str, str | int | float | bool] = {
        "client.id": "topo",
        "socket.timeout.ms": 5000,
        "enable.ssl.certificate.verification": False,
        "socket.keepalive.enable": True,
        "retry.backoff.ms": 100.5,
    }
    config = client_config(cluster(client=client), {})
    assert config == {
        "client.id": "topo",
        "socket.timeout.ms": "5000",
        "enable.ssl.certificate.verification": "false",
        "socket.keepalive.enable": "true",
        "retry.backoff.ms": "100.5",
        "bootstrap.servers": "east-1:9092,east-2:9092",
        "security.protocol": "PLAINTEXT",
    }


def test_client_properties_may_be_secret_references() -> None:
    client: dict[str, str | int | float | bool] = {"sasl.oauthbearer.client.secret": "${env:S}"}
    config = client_config(cluster(client=client), {"S": "oauth-secret"})
    assert config["sasl.oauthbearer.client.secret"] == "oauth-secret"
    with pytest.raises(SecretError, match=r"cluster east: client.sasl.oauthbearer.client.secret"):
        client_config(cluster(client=client), {})


def test_the_topologys_own_settings_win_over_a_client_property() -> None:
    client: dict[str, str | int | float | bool] = {"security.protocol": "SSL"}
    assert client_config(cluster(client=client), {})["security.protocol"] == "PLAINTEXT"


def test_the_bootstrap_may_be_a_reference() -> None:
    config = client_config(cluster(bootstrap="${env:EAST_BOOTSTRAP}"), {"EAST_BOOTSTRAP": "h:1"})
    assert config["bootstrap.servers"] == "h:1"


# -- the Java client (Spark's Kafka connector) ----------------------------------------------

KEY = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n"
CERT = "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n"


def test_java_mutual_tls_gets_the_certificate_and_key_inline_never_a_file() -> None:
    from topology.core.connection import java_client_config

    files = {Path("/c/alice.crt"): CERT, Path("/c/alice.key"): KEY}
    java = java_client_config(
        {
            "bootstrap.servers": "h:9093",
            "security.protocol": "SSL",
            "ssl.ca.location": "/c/ca.pem",
            "ssl.certificate.location": "/c/alice.crt",
            "ssl.key.location": "/c/alice.key",
            "ssl.key.password": "unused for a plain key",
        },
        read_file=files.__getitem__,
    )
    assert java == {
        "bootstrap.servers": "h:9093",
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/c/ca.pem",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.certificate.chain": CERT.strip(),
        "ssl.keystore.key": KEY.strip(),
    }


def test_java_mutual_tls_passes_the_key_password_of_an_encrypted_key() -> None:
    from topology.core.connection import java_client_config

    encrypted = KEY.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY")
    files = {Path("c.crt"): CERT, Path("k.pem"): encrypted}
    java = java_client_config(
        {
            "ssl.certificate.location": "c.crt",
            "ssl.key.location": "k.pem",
            "ssl.key.password": "pw",
        },
        read_file=files.__getitem__,
    )
    assert java["ssl.key.password"] == "pw"


def test_java_mutual_tls_refuses_a_pkcs1_key_with_how_to_convert_it() -> None:
    from topology.core.connection import JavaClientError, java_client_config

    rsa = KEY.replace("PRIVATE KEY", "RSA PRIVATE KEY")
    files = {Path("c.crt"): CERT, Path("k.pem"): rsa}
    with pytest.raises(JavaClientError, match=r"not a PKCS#8 PEM key.*openssl pkcs8"):
        java_client_config(
            {"ssl.certificate.location": "c.crt", "ssl.key.location": "k.pem"},
            read_file=files.__getitem__,
        )


def test_java_oauthbearer_unsecured_tokens_name_the_principal_in_jaas() -> None:
    from topology.core.connection import java_client_config

    java = java_client_config(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": "true",
            "sasl.oauthbearer.config": "principal=alice scope=repl,read lifeSeconds=600 "
            "extension_traceId=abc",
        }
    )
    assert java == {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
        'required unsecuredLoginStringClaim_sub="alice" '
        # Kafka reads a list claim's first character as its delimiter.
        'unsecuredLoginListClaim_scope=",repl,read" unsecuredLoginLifetimeSeconds="600" '
        'unsecuredLoginExtension_traceId="abc";',
    }


def test_java_oauthbearer_oidc_uses_kafkas_login_handler_and_client_credentials() -> None:
    from topology.core.connection import OAUTH_LOGIN_HANDLER, java_client_config

    java = java_client_config(
        {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.method": "oidc",
            "sasl.oauthbearer.client.id": "topo",
            "sasl.oauthbearer.client.secret": 's"cret',
            "sasl.oauthbearer.scope": "kafka",
            "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
            "sasl.oauthbearer.extensions": "logicalCluster=lkc-1, identityPoolId=pool-2",
        }
    )
    assert java == {
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.oauthbearer.token.endpoint.url": "https://idp/token",
        "sasl.login.callback.handler.class": OAUTH_LOGIN_HANDLER,
        "sasl.jaas.config": "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule "
        'required clientId="topo" clientSecret="s\\"cret" scope="kafka" '
        'extension_logicalCluster="lkc-1" extension_identityPoolId="pool-2";',
    }
