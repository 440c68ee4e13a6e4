"""Client settings by role (core/client_roles.py): what a cluster's and a flow's `consumer:`,
`producer:` and `admin:` give each of a flow's copy clients, and what topo refuses (T213)."""

import pytest

from topology.core import analysis, client_roles, intervals
from topology.core.model import Topology

TOPOLOGY = """version: 1
clusters:
  east:
    bootstrap: "east:9092"
    client: {client.dns.lookup: use_all_dns_ips}
    consumer: {fetch.min.bytes: 65536, max.poll.records: 500}
    producer: {compression.type: gzip}
  west:
    bootstrap: "west:9092"
    producer: {compression.type: lz4, linger.ms: 20}
    admin: {request.timeout.ms: 60000}
defaults:
  producer: {batch.size: 1048576}
flows:
  - mirror: {from: east, to: west}
    consumer: {max.poll.records: 2000}
    producer: {compression.type: zstd}
  - mirror: {from: west, to: east}
"""


def topology(text: str = TOPOLOGY) -> Topology:
    found = analysis.analyse(text, "t.yaml")
    assert found.ok and found.topology is not None, found.diagnostics
    return found.topology


def roles_of(made: Topology, flow: str) -> dict[str, dict[str, str]]:
    edge = made.edge(flow)
    return client_roles.of_edge(
        made.clusters[edge.source], made.clusters[edge.target], edge.settings
    )


def test_each_copy_client_gets_its_clusters_role_then_the_flows_own() -> None:
    made = topology()
    east_west = roles_of(made, "east->west")
    assert east_west["consumer"] == {"fetch.min.bytes": "65536", "max.poll.records": "2000"}
    assert east_west["producer"] == {
        "linger.ms": "20",  # west's, over topo's 5
        "batch.size": "1048576",  # the defaults' flow setting
        "compression.type": "zstd",  # the flow's, over west's lz4
        "acks": "all",
        "enable.idempotence": "true",
    }
    assert east_west["admin"] == {"request.timeout.ms": "60000"}
    west_east = roles_of(made, "west->east")
    assert west_east["consumer"] == {}  # west has no consumer section
    assert west_east["producer"]["compression.type"] == "gzip"  # east's producer section
    assert west_east["producer"]["linger.ms"] == "5" and west_east["admin"] == {}


@pytest.mark.parametrize(
    ("role", "setting", "fragment"),
    [
        ("producer", "acks: 1", "producer.acks: topo keeps producer acks itself (only -1 or all)"),
        ("producer", "enable.idempotence: false", "never copied twice"),
        ("producer", "max.in.flight.requests.per.connection: 6", "at most 5 requests"),
        ("producer", "retries: 0", "must retry"),
        ("producer", "transactional.id: mine", "its own transactional id"),
        ("producer", "compression.type: brotli", "compression.type is one of none, gzip"),
        ("producer", "compression.type: ZSTD", "not 'ZSTD'"),  # Kafka's names are lower case
        ("consumer", "isolation.level: read_uncommitted", "aborted transaction"),
        ("consumer", "enable.auto.commit: true", "topo commits a position"),
        ("consumer", "auto.offset.reset: latest", "`start:` setting"),
        ("consumer", "group.id: mine", "in no group"),
        ("admin", "bootstrap.servers: 'x:1'", "topo sets bootstrap.servers itself"),
        ("consumer", "sasl.mechanism: PLAIN", "its `security:` and `client:`"),
        ("producer", "client.id: me", "topo sets client.id itself"),
    ],
)
def test_a_setting_topos_guarantees_rest_on_is_refused_at_its_line(
    role: str, setting: str, fragment: str
) -> None:
    text = (
        "version: 1\nclusters:\n  east: {bootstrap: 'e:1'}\n  west:\n    bootstrap: 'w:1'\n"
        f"    {role}: {{{setting}}}\nflows:\n  - mirror: {{from: east, to: west}}\n"
    )
    [found] = [d for d in analysis.analyse(text, "t.yaml").diagnostics if d.code == "T213"]
    assert fragment in found.message and found.message.startswith(f"cluster west: {role}.")
    assert (found.span.line, found.span.column) == (6, len(role) + 8)  # the key
    if role != "admin":  # a flow's own section is checked the same way, at its line
        flow = text.replace(f"    {role}: {{{setting}}}\n", "") + f"    {role}: {{{setting}}}\n"
        [in_flow] = [d for d in analysis.analyse(flow, "t.yaml").diagnostics if d.code == "T213"]
        assert in_flow.message.startswith(f"flows[0]: {role}.") and in_flow.span.line == 8


def test_what_topo_leaves_open_is_accepted() -> None:
    accepted: list[tuple[str, str, str | int | bool]] = [
        ("producer", "acks", "all"),
        ("producer", "acks", -1),
        ("producer", "enable.idempotence", True),
        ("producer", "max.in.flight.requests.per.connection", 5),
        ("producer", "retries", 10),
        ("producer", "compression.type", "zstd"),
        ("consumer", "isolation.level", "read_committed"),
        ("consumer", "fetch.max.bytes", 52428800),
        ("admin", "request.timeout.ms", 60000),
    ]
    for role, key, value in accepted:
        assert client_roles.refusal(role, key, value) is None, (role, key)


def test_the_drivers_chores_run_at_topos_intervals_or_the_files() -> None:
    # at topo's defaults a quiet source's configs and ACLs are looked at as MM2 looks: 600 s
    assert intervals.of({}) == intervals.Chores(1.0, 2.0, 10.0, 600.0, 10.0, 60.0)
    given = {
        intervals.TOPICS: 30.0,
        intervals.ACLS: 5.0,  # one look with the configs: the shorter wins
        intervals.CHECKPOINTS: 60.0,  # one round with the group offsets (10 s)
    }
    assert intervals.of(given) == intervals.Chores(1.0, 30.0, 5.0, 30.0, 10.0, 60.0)
    # a stated interval backs off to six times itself, whichever of the two is stated
    assert intervals.of({intervals.CONFIGS: 10.0}).follow_longest == 60.0
    assert intervals.of({intervals.ACLS: 600.0}).follow_longest == 60.0  # configs': 10 s
    assert intervals.of({intervals.CONFIGS: 600.0, intervals.ACLS: 600.0}).follow_longest == 3600
    made = topology(TOPOLOGY + "engine: {intervals: {refresh.topics.interval.seconds: 30}}\n")
    assert made.engine.intervals == {intervals.TOPICS: 30.0}
    refused = analysis.analyse(
        TOPOLOGY + "engine: {intervals: {refresh.topics.interval.seconds: 0}}\n", "t.yaml"
    )
    assert not refused.ok
