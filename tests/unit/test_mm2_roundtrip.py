"""Round trips: import(export(T)) is T, and export(import(P)) does what P does.

Equality is semantic (`tests.mm2.normal`): the same clusters and the same directed edges with
the same settings, wherever a value was written.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.mm2.normal import (
    SAMPLES,
    effective_mm2,
    exported,
    imported,
    normal,
    topology_of,
)
from topology.core.model import FlowKind

EXPRESSIBLE = {
    "dr-pair": """\
version: 1
clusters:
  primary:
    bootstrap: p-1:9093,p-2:9093
    security:
      protocol: SASL_SSL
      sasl: {mechanism: SCRAM-SHA-512, username: mm2, password: "${env:PRIMARY_PASSWORD}"}
      tls: {ca: /certs/ca.pem, cert: /certs/p.pem, key: /certs/p.pem,
            key_password: "${file:/run/secrets/p-key}", verify_hostname: false}
    client: {request.timeout.ms: 60000, client.rack: az1, enable.idempotence: true}
  backup:
    bootstrap: b:9093
    security:
      protocol: SSL
      tls: {ca: /certs/ca.pem}
defaults:
  replication_factor: 3
  sync: {group_offsets: true}
flows:
  - mirror: {from: primary, to: backup}
    topics: {include: [orders, 'payments\\..*'], exclude: ['.*\\.tmp']}
    groups: {exclude: ['console-consumer-.*', 'test-.*']}
    configs: {exclude: ['retention\\.ms']}
    delivery: exactly-once
    start: latest
""",
    "active-active": """\
version: 1
clusters:
  east: {bootstrap: 'east:9092'}
  west: {bootstrap: 'west:9092'}
defaults: {separator: _, replication_factor: null}
flows:
  - active-active: [east, west]
    sync: {acls: false}
    emit: {heartbeats: false}
""",
    "mesh-and-aggregate": """\
version: 1
clusters:
  a: {bootstrap: 'a:9092'}
  b: {bootstrap: 'b:9092'}
  c: {bootstrap: 'c:9092'}
  hub:
    bootstrap: hub:9092
    security:
      protocol: SASL_PLAINTEXT
      sasl: {mechanism: PLAIN, username: "${env:HUB_USER}", password: "${env:HUB_PASSWORD}"}
flows:
  - active-active: [a, b, c]
    topics: {include: ['shared\\..*']}
  - aggregate: {from: [a, b, c], into: hub}
    naming: identity
    topics: {include: [clicks]}
    sync: {group_offsets: false, configs: false}
    emit: {checkpoints: false}
""",
}


@pytest.mark.parametrize("name", sorted(EXPRESSIBLE))
def test_import_of_export_is_the_same_topology(name: str) -> None:
    original = topology_of(EXPRESSIBLE[name])
    again = topology_of(imported(exported(EXPRESSIBLE[name])))
    assert normal(again) == normal(original)
    # These are written the way an import groups flows, so even the flow kinds come back.
    kinds = [(flow.kind, flow.sources, flow.targets) for flow in original.flows]
    assert [(flow.kind, flow.sources, flow.targets) for flow in again.flows] == kinds


def test_two_mirrors_come_back_as_the_active_active_pair_they_are() -> None:
    text = """\
version: 1
clusters: {a: {bootstrap: 'a:1'}, b: {bootstrap: 'b:1'}}
flows:
  - mirror: {from: a, to: b}
  - mirror: {from: b, to: a}
"""
    again = topology_of(imported(exported(text)))
    assert normal(again) == normal(topology_of(text))
    assert [flow.kind for flow in again.flows] == [FlowKind.ACTIVE_ACTIVE]


@pytest.mark.parametrize("name", sorted(p.stem for p in SAMPLES.glob("*.properties")))
def test_export_of_import_does_what_the_properties_did(name: str) -> None:
    original = (SAMPLES / f"{name}.properties").read_text()
    again = exported(imported(original, f"{name}.properties"))
    assert effective_mm2(again) == effective_mm2(original)


def test_the_semantic_forms_are_not_blind() -> None:
    # The comparison must notice a changed setting, or the round trips above prove nothing.
    original = EXPRESSIBLE["active-active"]
    changed = original.replace("sync: {acls: false}", "sync: {acls: true}")
    assert normal(topology_of(changed)) != normal(topology_of(original))
    sample = (SAMPLES / "per-flow-overrides.properties").read_text()
    assert effective_mm2(sample.replace("hub->east.topics = prices", "")) != effective_mm2(sample)


REGEXES = st.lists(
    st.sampled_from(["orders", "payments\\..*", "clicks", ".*", "tmp-.*", "a|b"]),
    max_size=3,
    unique=True,
)
FLOW_SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "topics": st.fixed_dictionaries({}, optional={"include": REGEXES, "exclude": REGEXES}),
        "groups": st.fixed_dictionaries({}, optional={"include": REGEXES, "exclude": REGEXES}),
        "naming": st.sampled_from(["prefix", "identity"]),
        "separator": st.sampled_from([".", "_", "-", "__"]),
        "replication_factor": st.one_of(st.none(), st.integers(1, 5)),
        "sync": st.fixed_dictionaries(
            {},
            optional={
                key: st.booleans() for key in ("configs", "partitions", "acls", "group_offsets")
            },
        ),
        "emit": st.fixed_dictionaries(
            {}, optional={"heartbeats": st.booleans(), "checkpoints": st.booleans()}
        ),
        "configs": st.fixed_dictionaries(
            {}, optional={"exclude": st.lists(st.sampled_from(["retention\\.ms", "x.*"]))}
        ),
        "delivery": st.sampled_from(["at-least-once", "exactly-once"]),
        "start": st.sampled_from(["earliest", "latest"]),
    },
)


@settings(max_examples=60, deadline=None)
@given(defaults=FLOW_SETTINGS, first=FLOW_SETTINGS, second=FLOW_SETTINGS)
def test_any_chain_of_mirrors_survives_the_round_trip(
    defaults: dict[str, object], first: dict[str, object], second: dict[str, object]
) -> None:
    import json

    document = {
        "version": 1,
        "clusters": {name: {"bootstrap": f"{name}:9092"} for name in ("a", "b", "c")},
        "defaults": defaults,
        "flows": [
            {"mirror": {"from": "a", "to": "b"}, **first},
            {"mirror": {"from": "b", "to": "c"}, **second},
        ],
    }
    text = json.dumps(document)  # JSON is YAML
    original = topology_of(text)
    assert normal(topology_of(imported(exported(text)))) == normal(original)
