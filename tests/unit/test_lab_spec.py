import pytest
from hypothesis import given
from hypothesis import strategies as st

from topology.core.errors import LabError
from topology.lab.spec import (
    PORT_BASE,
    Credentials,
    LabCluster,
    TlsFiles,
    check_name,
    check_security,
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
    config = props(server_properties(cluster, "/d", {"admin": "s3cret", "broker": "b"}))
    assert config["listener.security.protocol.map"] == (
        "CLIENT:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT,CONTROLLER:SASL_PLAINTEXT"
    )
    assert config["listener.name.client.sasl.enabled.mechanisms"] == "SCRAM-SHA-512"
    assert config["authorizer.class.name"].endswith("StandardAuthorizer")
    assert config["allow.everyone.if.no.acl.found"] == "false"
    assert client_config(cluster, Credentials(password="s3cret")) == {
        "bootstrap.servers": "127.0.0.1:19100",
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "admin",
        "sasl.password": "s3cret",
    }


def test_tls_and_sasl_together_give_sasl_ssl_with_pem_stores() -> None:
    cluster = LabCluster(name="both", port=19110, sasl=True, tls=True)
    files = TlsFiles(ca_pem="/ca.pem", keystore_pem="/ks.pem", key_password="kp")
    config = props(server_properties(cluster, "/d", {"admin": "pw", "broker": "b"}, tls=files))
    assert cluster.security_protocol == "SASL_SSL"
    assert config["ssl.keystore.type"] == "PEM"
    assert config["ssl.keystore.location"] == "/ks.pem"
    assert config["ssl.truststore.location"] == "/ca.pem"
    who = Credentials(password="pw", ca_pem="/ca.pem")
    assert client_config(cluster, who)["ssl.ca.location"] == "/ca.pem"


def test_secured_clusters_refuse_to_render_without_their_secrets() -> None:
    with pytest.raises(ValueError, match="password"):
        server_properties(LabCluster(name="s", port=19120, sasl=True), "/d")
    with pytest.raises(ValueError, match="admin password"):
        server_properties(LabCluster(name="s", port=19120, sasl=True), "/d", {"broker": "b"})
    with pytest.raises(ValueError, match="PEM"):
        server_properties(LabCluster(name="t", port=19130, tls=True), "/d")
    with pytest.raises(ValueError, match="CA"):
        client_config(LabCluster(name="t", port=19130, tls=True))


@given(st.from_regex(r"[a-z0-9][a-z0-9_-]{0,39}", fullmatch=True))
def test_every_valid_name_gets_two_ports_below_the_ephemeral_range(name: str) -> None:
    cluster = LabCluster(name=check_name(name), port=default_port(name))
    assert PORT_BASE <= cluster.port < cluster.controller_port < 32768


def test_only_the_admin_and_the_broker_are_super_users_and_nothing_is_anonymous() -> None:
    cluster = LabCluster(name="m", port=19140, tls=True, mtls=True, users=("alice",))
    files = TlsFiles(ca_pem="/ca.pem", keystore_pem="/ks.pem", key_password="kp")
    config = props(server_properties(cluster, "/d", {"broker": "bpw"}, tls=files))
    assert config["super.users"] == "User:admin;User:broker"
    protocols = dict(p.split(":") for p in config["listener.security.protocol.map"].split(","))
    assert "PLAINTEXT" not in protocols.values()  # no listener takes a connection unauthenticated
    assert config["listener.name.client.ssl.client.auth"] == "required"
    assert config["ssl.principal.mapping.rules"].startswith("RULE:^CN=")
    assert 'user_broker="bpw"' in config["listener.name.controller.plain.sasl.jaas.config"]
    assert config["inter.broker.listener.name"] == "INTERNAL"
    assert cluster.ports == (19140, 19141, 19142)


def test_sasl_and_mtls_together_put_certificates_on_their_own_port() -> None:
    mechanisms = ("SCRAM-SHA-512", "PLAIN", "OAUTHBEARER")
    cluster = LabCluster(
        "x", 19150, sasl=True, tls=True, mtls=True, mechanisms=mechanisms, users=("bob",)
    )
    files = TlsFiles(ca_pem="/ca.pem", keystore_pem="/ks.pem", key_password="kp")
    passwords = {"admin": "apw", "bob": "bpw", "broker": "k"}
    config = props(server_properties(cluster, "/d", passwords, tls=files))
    assert "MTLS://127.0.0.1:19153" in config["advertised.listeners"]
    assert config["listener.name.mtls.ssl.client.auth"] == "required"
    assert (
        config["listener.name.client.sasl.enabled.mechanisms"] == "SCRAM-SHA-512,PLAIN,OAUTHBEARER"
    )
    plain = config["listener.name.client.plain.sasl.jaas.config"]
    assert 'user_admin="apw"' in plain and 'user_bob="bpw"' in plain
    who = Credentials("bob", "bpw", "/ca.pem", "/bob.crt", "/bob.key")
    assert client_config(cluster, who, mtls=True)["bootstrap.servers"] == "127.0.0.1:19153"
    oauth = client_config(cluster, who, mechanism="OAUTHBEARER")
    assert oauth["sasl.oauthbearer.config"] == "principal=bob"
    assert "sasl.password" not in oauth


def test_a_jwks_url_makes_the_oauthbearer_listener_verify_signed_tokens() -> None:
    cluster = LabCluster(
        "x", 19160, sasl=True, mechanisms=("SCRAM-SHA-512", "OAUTHBEARER"), jwks_url="http://i/k"
    )
    config = props(server_properties(cluster, "/d", {"admin": "a", "broker": "b"}))
    prefix = "listener.name.client.oauthbearer."
    assert config[prefix + "sasl.server.callback.handler.class"].endswith(
        "OAuthBearerValidatorCallbackHandler"
    )
    assert config[prefix + "sasl.oauthbearer.jwks.endpoint.url"] == "http://i/k"
    assert "unsecured" not in config[prefix + "sasl.jaas.config"]
    # Kafka 4 fetches no OAuth URL it is not allowed to.
    assert cluster.java_options == ("-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=http://i/k",)
    with pytest.raises(LabError, match="signed by the OpenID Connect provider"):
        client_config(cluster, Credentials("admin", "a"), mechanism="OAUTHBEARER")
    unsecured = LabCluster("x", 19160, sasl=True, mechanisms=("OAUTHBEARER",))
    assert unsecured.java_options == ()
    assert (
        "unsecuredLoginStringClaim_sub"
        in props(server_properties(unsecured, "/d", {"admin": "a", "broker": "b"}))[
            prefix + "sasl.jaas.config"
        ]
    )


@pytest.mark.parametrize(
    ("cluster", "message"),
    [
        (LabCluster("a", 1, mtls=True), "--mtls needs --tls"),
        (LabCluster("a", 1, sasl=True, mechanisms=("KERBEROS",)), "not one the lab offers"),
        (LabCluster("a", 1, sasl=True, mechanisms=("GSSAPI",)), "GSSAPI needs --kerberos"),
        (LabCluster("a", 1, sasl=True, kerberos=True), "--kerberos offers SASL GSSAPI"),
        (LabCluster("a", 1, sasl=True, users=("admin",)), "not valid"),
        (LabCluster("a", 1, users=("alice",)), "--user needs --sasl or --mtls"),
        (
            LabCluster("a", 1, sasl=True, jwks_url="http://idp/jwks"),
            "needs --mechanism OAUTHBEARER",
        ),
        (
            LabCluster("a", 1, sasl=True, mechanisms=("OAUTHBEARER",), jwks_url="idp/jwks"),
            "is not an http",
        ),
    ],
)
def test_security_options_that_do_not_fit_together_are_refused(
    cluster: LabCluster, message: str
) -> None:
    with pytest.raises(LabError, match=message):
        check_security(cluster)
