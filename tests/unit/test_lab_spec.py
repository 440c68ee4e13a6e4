import pytest
from hypothesis import given
from hypothesis import strategies as st

from topology.errors import LabError
from topology.lab.spec import (
    PORT_BASE,
    LabCluster,
    TlsFiles,
    check_name,
    client_config,
    default_port,
    server_properties,
)


def props(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_default_port_is_stable_per_name_and_below_the_ephemeral_range() -> None:
    assert default_port("east") == default_port("east")
    assert default_port("east") != default_port("west")
    for name in ["east", "west", "central", "a", "dr-site_2"]:
        port = default_port(name)
        assert port >= PORT_BASE and port + 1 < 32768
        assert port % 10 == 0  # the controller's port+1 never meets another cluster's port


@pytest.mark.parametrize("name", ["", "East", "-x", "a b", "x" * 41, "../etc"])
def test_bad_names_are_refused_with_the_rule(name: str) -> None:
    with pytest.raises(LabError, match="not valid"):
        check_name(name)


def test_plaintext_broker_is_a_combined_kraft_node_on_loopback() -> None:
    cluster = LabCluster(name="east", port=19090)
    config = props(server_properties(cluster, "/lab/east/data"))
    assert config["process.roles"] == "broker,controller"
    assert config["listeners"] == "CLIENT://127.0.0.1:19090,CONTROLLER://127.0.0.1:19091"
    assert config["advertised.listeners"] == "CLIENT://127.0.0.1:19090"
    assert config["controller.quorum.voters"] == "1@127.0.0.1:19091"
    assert config["listener.security.protocol.map"] == "CLIENT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    assert config["log.dirs"] == "/lab/east/data"
    assert config["auto.create.topics.enable"] == "false"
    assert "authorizer.class.name" not in config
    assert cluster.bootstrap == "127.0.0.1:19090"
    assert client_config(cluster) == {
        "bootstrap.servers": "127.0.0.1:19090",
        "security.protocol": "PLAINTEXT",
    }


def test_sasl_broker_uses_scram_with_an_authorizer_and_admin_super_user() -> None:
    cluster = LabCluster(name="secure", port=19100, sasl=True)
    config = props(server_properties(cluster, "/d", admin_password="s3cret"))
    assert config["listener.security.protocol.map"] == "CLIENT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT"
    assert config["sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert 'password="s3cret"' in config["listener.name.client.scram-sha-512.sasl.jaas.config"]
    assert config["authorizer.class.name"].endswith("StandardAuthorizer")
    assert "User:admin" in config["super.users"].split(";")
    assert config["allow.everyone.if.no.acl.found"] == "false"
    assert client_config(cluster, admin_password="s3cret") == {
        "bootstrap.servers": "127.0.0.1:19100",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "admin",
        "sasl.password": "s3cret",
    }


def test_tls_and_sasl_together_give_sasl_ssl_with_pem_stores() -> None:
    cluster = LabCluster(name="both", port=19110, sasl=True, tls=True)
    files = TlsFiles(ca_pem="/ca.pem", keystore_pem="/ks.pem", key_password="kp")
    config = props(server_properties(cluster, "/d", admin_password="pw", tls=files))
    assert cluster.security_protocol == "SASL_SSL"
    assert config["ssl.keystore.type"] == "PEM"
    assert config["ssl.keystore.location"] == "/ks.pem"
    assert config["ssl.truststore.location"] == "/ca.pem"
    assert client_config(cluster, "pw", ca_pem="/ca.pem")["ssl.ca.location"] == "/ca.pem"


def test_secured_clusters_refuse_to_render_without_their_secrets() -> None:
    with pytest.raises(ValueError, match="password"):
        server_properties(LabCluster(name="s", port=19120, sasl=True), "/d")
    with pytest.raises(ValueError, match="PEM"):
        server_properties(LabCluster(name="t", port=19130, tls=True), "/d")
    with pytest.raises(ValueError, match="CA"):
        client_config(LabCluster(name="t", port=19130, tls=True))


@given(st.from_regex(r"[a-z0-9][a-z0-9_-]{0,39}", fullmatch=True))
def test_every_valid_name_gets_two_ports_below_the_ephemeral_range(name: str) -> None:
    cluster = LabCluster(name=check_name(name), port=default_port(name))
    assert PORT_BASE <= cluster.port < cluster.controller_port < 32768
