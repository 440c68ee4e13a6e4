"""A cluster's `admin:` settings as topo's librdkafka admin plane takes them, and how they reach
its admin clients only (`core.admin_plane`, `connection.for_client`, `kafka.client.quiet`)."""

from confluent_kafka.admin import AdminClient

from topology.core import admin_plane, analysis, connection
from topology.core.diagnostics import Span
from topology.core.model import Cluster, Security
from topology.kafka import client


def test_java_names_are_translated_and_held_to_librdkafkas_ranges() -> None:
    found = admin_plane.translate(
        {
            "request.timeout.ms": 600000,
            "receive.buffer.bytes": -1,
            "send.buffer.bytes": "131072",
            "metadata.max.age.ms": 0,
            "client.dns.lookup": "use_all_dns_ips",
            "retry.backoff.ms": 250,
        }
    )
    assert found.settings == {
        "socket.timeout.ms": "300000",
        "socket.receive.buffer.bytes": "0",
        "socket.send.buffer.bytes": "131072",
        "metadata.max.age.ms": "1",
        "client.dns.lookup": "use_all_dns_ips",
        "retry.backoff.ms": "250",
    }
    assert found.notes.keys() == {"request.timeout.ms", "metadata.max.age.ms"}
    assert found.notes["request.timeout.ms"].endswith("takes 10..300000: it uses 300000")


def test_a_setting_without_an_equivalent_or_a_good_value_is_left_out_and_said() -> None:
    found = admin_plane.translate(
        {
            "default.api.timeout.ms": 60000,
            "retries": 3,
            "request.timeout.ms": "soon",
            "metadata.max.age.ms": True,
            "client.dns.lookup": "default",
        }
    )
    assert found.settings == {}
    assert found.notes.keys() == {
        "default.api.timeout.ms",
        "retries",
        "request.timeout.ms",
        "metadata.max.age.ms",
        "client.dns.lookup",
    }
    assert "Java admin client alone" in found.notes["retries"]


def test_a_reconnect_backoff_above_librdkafkas_maximum_raises_the_maximum() -> None:
    # librdkafka refuses to make a client whose maximum is below the backoff (10 s by default)
    assert admin_plane.translate({"reconnect.backoff.ms": 20000}).settings == {
        "reconnect.backoff.ms": "20000",
        "reconnect.backoff.max.ms": "20000",
    }
    both = {"reconnect.backoff.ms": 500, "reconnect.backoff.max.ms": 100}
    assert admin_plane.translate(both).settings["reconnect.backoff.max.ms"] == "500"
    alone = {"reconnect.backoff.max.ms": 0}  # below librdkafka's own backoff, 100 ms
    assert admin_plane.translate(alone).settings == {"reconnect.backoff.max.ms": "100"}


def test_every_translation_at_its_bounds_makes_a_librdkafka_admin_client() -> None:
    """librdkafka refuses an unknown name or a value out of range when the client is made: the
    table must hold to what the installed librdkafka takes."""
    for key, whole in admin_plane.WHOLE.items():
        for value in (whole.low, whole.high):
            settings = admin_plane.translate({key: value}).settings
            AdminClient(client.quiet({"bootstrap.servers": "127.0.0.1:1", **settings}))
    for key, choices in admin_plane.CHOICES.items():
        for choice in choices:
            AdminClient(client.quiet({"bootstrap.servers": "127.0.0.1:1", key: choice}))


def test_the_admin_settings_reach_admin_clients_only() -> None:
    cluster = Cluster(
        "west",
        "w:1",
        Security(),
        {"socket.keepalive.enable": True},
        (),
        Span("t.yaml", 1, 1),
        {"admin": {"request.timeout.ms": 20000}, "consumer": {"fetch.min.bytes": 1}},
    )
    config = connection.client_config(cluster, {})
    admin = client.quiet(config, admin=True)
    other = client.quiet(config)
    assert admin["socket.timeout.ms"] == "20000" and "socket.timeout.ms" not in other
    assert admin["socket.keepalive.enable"] == other["socket.keepalive.enable"] == "true"
    assert not [key for key in (*admin, *other) if key.startswith(connection.ADMIN_PREFIX)]
    java = connection.java_client_config(config)
    assert not [key for key in java if key.startswith(connection.ADMIN_PREFIX)]
    AdminClient(admin)  # librdkafka takes every name it is given


def test_validate_warns_at_the_key_of_each_admin_setting_taken_otherwise() -> None:
    text = (
        "version: 1\nclusters:\n  east: {bootstrap: 'e:1'}\n  west:\n    bootstrap: 'w:1'\n"
        "    admin: {request.timeout.ms: 5, client.id: me, retry.backoff.ms: 100}\n"
        "flows:\n  - mirror: {from: east, to: west}\n"
    )
    found = analysis.analyse(text, "t.yaml").diagnostics
    [held] = [d for d in found if d.code == "T214"]  # client.id is refused (T213), not warned
    assert held.severity == "warning" and (held.span.line, held.span.column) == (6, 13)
    assert held.message == (
        "cluster west: admin.request.timeout.ms: topo's admin plane "
        "(librdkafka socket.timeout.ms) takes 10..300000: it uses 10"
    )
    assert [d.code for d in found if d.severity == "error"] == ["T213"]
