"""The resolved topology as data and back (topology/core/model_data.py): what the jobs document
carries to the driver, which knows the topology only from it."""

import dataclasses
import json

import pytest

from topology.core import analysis, model_data
from topology.core.model import Cluster, Engine, Flow, FlowSettings, MetricsEndpoint, Topology

EVERYTHING = """version: 1
name: payments
clusters:
  east:
    bootstrap: "east-1:9093,east-2:9093"
    security:
      protocol: SASL_SSL
      sasl: {mechanism: SCRAM-SHA-512, username: topo, password: "${env:EAST_PASSWORD}"}
      tls: {ca: certs/ca.pem, cert: certs/me.pem, key: certs/me.key,
            key_password: "${file:secrets/key-password}", verify_hostname: false}
    client: {client.id: topo-east, request.timeout.ms: 45000}
    consumer: {fetch.min.bytes: 65536}
    producer: {compression.type: lz4}
    admin: {default.api.timeout.ms: 90000}
  west: {bootstrap: "west:9092"}
  central: {bootstrap: "central:9092"}
defaults:
  replication_factor: 2
  groups: {include: ["billing-.*"], exclude: ["billing-test"]}
engine:
  runner: spark
  master: spark://m:7077
  spark_conf: {spark.executor.memory: 2g}
  checkpoints: "s3a://bucket/topo"
  state_cluster: central
  metrics: {bind: 0.0.0.0, port: 9470, ready_lag: 500}
flows:
  - mirror: {from: east, to: west}
    topics: {include: ["orders", "payments\\\\..*"], exclude: ["payments\\\\.test"]}
    naming: identity
    separator: "_"
    sync: {configs: false, partitions: true, acls: false, group_offsets: false}
    emit: {heartbeats: false, checkpoints: false}
    delivery: exactly-once
    start: latest
    filter: "key IS NOT NULL"
    provenance: true
    objectives: {lag_seconds: 2.5, lag_records: 100, min_records_per_second: 5, for_seconds: 30}
    producer: {compression.type: zstd, linger.ms: 50}
    consumer: {max.poll.records: 2000}
  - active-active: [west, central]
    naming: identity
    topics: {include: ["clicks"]}
"""


def topology(text: str = EVERYTHING) -> Topology:
    result = analysis.analyse(text, "payments.yaml")
    assert result.topology is not None and result.ok, result.diagnostics
    return result.topology


def test_a_topology_comes_back_from_its_data_equal_every_setting_kept() -> None:
    made = topology()
    data = json.loads(json.dumps(model_data.to_data(made)))  # as published: through JSON
    back = model_data.from_data(data, "elsewhere/payments.yaml")
    assert back == dataclasses.replace(made, file="elsewhere/payments.yaml")
    assert back.edges() == made.edges() and back.home == made.home == "central"
    assert [e.settings for e in back.edges()] == [e.settings for e in made.edges()]
    assert back.engine.metrics == MetricsEndpoint("0.0.0.0", 9470, 500)


def test_only_the_clusters_asked_for_are_carried() -> None:
    data = model_data.to_data(topology(), {"east", "west"})
    assert sorted(data["clusters"]) == ["east", "west"]


@pytest.mark.parametrize(
    ("kind", "carried"),
    [
        (FlowSettings, lambda: model_data.settings_data(topology().flows[0].settings)),
        (Engine, lambda: model_data.engine_data(Engine(intervals={"x.interval.seconds": 5.0}))),
        (Flow, lambda: model_data.flow_data(topology().flows[0])),
        (
            Cluster,
            lambda: {**model_data.cluster_data(topology().clusters["east"]), "name": 0, "span": 0},
        ),
    ],
)
def test_every_field_of_the_model_is_carried(kind: type, carried: object) -> None:
    """A field added to the model and not to model_data would be lost on the way to the
    driver: this fails until model_data carries it."""
    assert callable(carried)
    names = {field.name for field in dataclasses.fields(kind)} - {"span", "index"} | (
        {"index"} if kind is Flow else set()
    )
    assert names <= set(carried()), names - set(carried())
