"""Job specs from topologies, and the provenance rules the copy loop applies (`Hops`)."""

import json
import re

import pytest

from topology.core import analysis
from topology.core.connection import java_client_config
from topology.core.jobs import (
    JobsFormatError,
    copied_headers,
    document,
    forwards,
    job_views,
    read_document,
    spec_from_dict,
    specs_of,
    stamped,
)
from topology.core.model import Topology
from topology.core.model_data import WRITTEN_OUT, LiteralSecretError

MESH = """
version: 1
clusters:
  a: {bootstrap: "127.0.0.1:9001"}
  b: {bootstrap: "127.0.0.1:9002"}
  c: {bootstrap: "127.0.0.1:9003"}
flows:
  - active-active: [a, b, c]
    naming: identity
  - mirror: {from: a, to: c}
    topics: {include: ["audit"]}
    filter: "key IS NOT NULL"
    delivery: exactly-once
"""


def topology(text: str = MESH) -> Topology:
    result = analysis.analyse(text, "mesh.yaml")
    assert result.topology is not None, result.diagnostics
    return result.topology


def test_each_edge_gets_a_spec_with_its_flows_rules() -> None:
    specs = {spec.flow: spec for spec in specs_of(topology())}
    assert set(specs) >= {"a->b", "b->a", "a->c", "c->a", "b->c", "c->b"}
    assert specs["a->b"].naming == "identity"
    assert specs["a->b"].no_forward_from == ("b", "c")
    mirror = [s for s in specs_of(topology()) if s.delivery == "exactly-once"]
    assert [(s.flow, s.record_filter, s.no_forward_from) for s in mirror] == [
        ("a->c", "key IS NOT NULL", ())
    ]
    assert spec_from_dict(specs["a->b"].to_dict()) == specs["a->b"]
    assert specs["a->b"].digest != specs["b->a"].digest


def test_a_record_never_returns_to_a_cluster_it_has_been_on() -> None:
    a_to_b = {s.flow: s for s in specs_of(topology())}["a->b"]
    assert forwards(a_to_b, None) and stamped(a_to_b, None) == "a"
    assert not forwards(a_to_b, "b")  # came from b: never back
    assert not forwards(a_to_b, "b,c")
    assert not forwards(a_to_b, "c")  # delivered to a by the mesh: c sends it to b itself
    assert stamped(a_to_b, "x") == "x,a"


def test_a_copy_keeps_the_records_headers_and_adds_topos_stamps_after_them() -> None:
    specs = {spec.flow: spec for spec in specs_of(topology())}
    own = (("seq", b"1"), ("seq", b"again"), ("empty", None))
    assert copied_headers(specs["a->b"], own, 41) == (
        *own,
        ("topo-provenance", b"a"),
        ("topo-offsets", b"a:41"),
    )
    # On the next hop the earlier stamps are replaced by extended ones, never repeated.
    on_b = copied_headers(specs["a->b"], own, 41)
    assert copied_headers(specs["b->c"], on_b, 17) == (
        *own,
        ("topo-provenance", b"a,b"),
        ("topo-offsets", b"a:41,b:17"),
    )


def test_without_provenance_a_copy_has_exactly_the_records_headers() -> None:
    without = topology(MESH.replace("naming: identity", "naming: prefix\n    provenance: false"))
    spec = next(s for s in specs_of(without) if s.flow == "a->b")
    assert copied_headers(spec, (("k", b"v"),), 3) == (("k", b"v"),)


def test_java_client_settings_carry_sasl_as_jaas_and_a_ca_as_a_pem_trust_store() -> None:
    java = java_client_config(
        {
            "bootstrap.servers": "h:9093",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": "alice",
            "sasl.password": 'p"w',
            "ssl.ca.location": "/certs/ca.pem",
            "ssl.endpoint.identification.algorithm": "none",
            "linger.ms": "5",
        }
    )
    assert java == {
        "bootstrap.servers": "h:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="alice" password="p\\"w";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/certs/ca.pem",
        "ssl.endpoint.identification.algorithm": "",
        "linger.ms": "5",
    }


def test_the_jobs_document_round_trips_through_json() -> None:
    made = document(topology(), now=1700000000.5)
    back = read_document(json.loads(json.dumps(made.to_dict())))
    assert back == made
    assert made.to_dict()["format"] == "2"
    assert made.to_dict()["digest"] == made.digest == back.digest
    assert [spec.flow for spec in back.specs] == [spec.flow for spec in specs_of(topology())]
    assert len(back.specs) == 7  # the mesh's six edges and the audit mirror
    # the driver rebuilds the topology from the document alone: the same jobs, the same views
    assert specs_of(back.topology()) == list(back.specs)
    assert back.views() == job_views(topology())


def test_the_digest_covers_what_runs_and_not_when_it_was_published() -> None:
    assert document(topology(), now=1.0).digest == document(topology(), now=2.0).digest
    moved = analysis.analyse(MESH + "engine: {metrics: {port: 9470}}\n", "t.yaml").topology
    assert moved is not None
    assert document(moved, now=1.0).digest != document(topology(), now=1.0).digest


def test_a_secret_written_in_the_file_never_enters_the_jobs_document() -> None:
    secured = (
        'a: {bootstrap: "127.0.0.1:9001", security: {protocol: SASL_PLAINTEXT, sasl: '
        '{mechanism: PLAIN, username: u, password: "hunter22"}}}'
    )
    text = MESH.replace('a: {bootstrap: "127.0.0.1:9001"}', secured)
    written = analysis.analyse(text, "t.yaml").topology
    assert written is not None
    with pytest.raises(LiteralSecretError, match=r"security\.sasl\.password is written in"):
        document(written, now=1.0)
    shown = json.dumps(job_views(written))  # what a plan shows instead
    assert "hunter22" not in shown and WRITTEN_OUT in shown
    referenced = analysis.analyse(text.replace('"hunter22"', '"${env:EAST_PASSWORD}"'), "t.yaml")
    assert referenced.topology is not None
    carried = json.dumps(document(referenced.topology, now=1.0).to_dict())
    assert "${env:EAST_PASSWORD}" in carried


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"format": "1"}, "format '1' is not '2'"),
        ({"format": None}, "format None"),
        ({"specs": None}, "malformed jobs document"),
        ({"specs": [{"flow": "a->b"}]}, "malformed jobs document"),
        ({"topology": {"name": "x"}}, "malformed jobs document"),
        ({"published_at": "soon"}, "malformed jobs document"),
        ({"owner": "another"}, "digest does not match"),
        ({"digest": "sha256:0"}, "digest does not match"),
    ],
)
def test_a_jobs_document_of_another_format_or_shape_is_refused(
    change: dict[str, object], says: str
) -> None:
    data = {**document(topology(), now=1.0).to_dict(), **change}
    with pytest.raises(JobsFormatError, match=re.escape(says)):
        read_document(data)
    with pytest.raises(JobsFormatError, match="not a jobs document"):
        read_document(["not", "an", "object"])
