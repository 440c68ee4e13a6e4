"""Secured lab clusters: SASL/SCRAM with an authorizer, and TLS from the lab CA."""

import stat
from pathlib import Path

import pytest

from tests.conftest import SecuredLab
from tests.helpers import run_topo
from topology.core.errors import KafkaUnavailableError
from topology.kafka import records
from topology.kafka.records import Record
from topology.lab import manager, state, tls

pytestmark = pytest.mark.kafka


def round_trip(config: dict[str, str], topic: str) -> None:
    records.create_topic(config, topic, 1)
    records.produce(config, [Record(topic, 0, b"k", b"secured")])
    [back] = records.read_topic(config, topic)
    assert (back.key, back.value) == (b"k", b"secured")


def test_sasl_cluster_authenticates_and_keeps_its_password_private(
    lab_dir: Path, topic_name: str
) -> None:
    name = "itest-sasl"
    done = run_topo("lab", "up", name, "--sasl")
    assert done.returncode == 0, done.stderr
    config = manager.admin_config(name)
    password = config["sasl.password"]
    assert config["security.protocol"] == "SASL_PLAINTEXT"
    assert password not in done.stdout + done.stderr
    assert password not in run_topo("lab", "status", "--json").stdout
    for private in (state.password_file(name), manager.config_path(name)):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600

    round_trip(config, topic_name)

    wrong = {**config, "sasl.password": "not-the-password"}
    with pytest.raises(KafkaUnavailableError, match="Authentication failed"):
        records.read_topic(wrong, topic_name, timeout=10)
    manager.down([name], purge=True)


def test_tls_cluster_serves_clients_that_trust_the_lab_ca(lab_dir: Path, topic_name: str) -> None:
    name = "itest-tls"
    [started] = manager.up([manager.UpRequest(name, tls=True)])
    assert started.security_protocol == "SSL"
    config = manager.admin_config(name)
    assert config["ssl.ca.location"] == str(tls.ca_pem())
    round_trip(config, topic_name)

    system_trust_only = {k: v for k, v in config.items() if k != "ssl.ca.location"}
    with pytest.raises(KafkaUnavailableError, match="certificate verify failed"):
        records.read_topic(system_trust_only, topic_name, timeout=10)
    manager.down([name], purge=True)


@pytest.mark.parametrize(
    ("mechanism", "mtls"),
    [("SCRAM-SHA-512", None), ("PLAIN", None), ("OAUTHBEARER", None), (None, True)],
    ids=["scram", "plain", "oauthbearer", "mtls"],
)
def test_every_login_of_the_secured_pair_authenticates_and_acls_are_enforced(
    secured_lab: SecuredLab, topic_name: str, mechanism: str | None, mtls: bool | None
) -> None:
    """The admin (a super user) reads through each login; a user with no ACL is refused, so
    the authorizer, not the login, decides."""
    name = secured_lab.source
    admin = secured_lab.admin_config(name)
    records.create_topic(admin, topic_name, 1)
    records.produce(admin, [Record(topic_name, 0, b"k", b"v")])
    as_admin = secured_lab.user_config(name, "admin", mechanism=mechanism, mtls=mtls)
    [back] = records.read_topic(as_admin, topic_name)
    assert (back.key, back.value) == (b"k", b"v")
    as_app = secured_lab.user_config(name, "app", mechanism=mechanism, mtls=mtls)
    with pytest.raises(KafkaUnavailableError, match="authorization failed"):
        records.read_topic(as_app, topic_name, timeout=10)
