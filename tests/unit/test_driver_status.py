"""The status a running driver publishes (topology.spark.driver_status): each flow as the
leader judges it, its figures, the changes the driver made; no Spark, no Kafka."""

from topology.core import analysis
from topology.core.flow_status import FlowStatus
from topology.core.jobs import document
from topology.core.runstate import FlowState
from topology.ops.replicate import Leader, Tick
from topology.spark.driver_status import DriverStatus
from topology.telemetry.figures import Figures

TEXT = """version: 1
name: orders
clusters:
  a: {bootstrap: "h:1"}
  b: {bootstrap: "h:2"}
flows:
  - mirror: {from: a, to: b}
  - mirror: {from: b, to: a}
"""


def test_the_status_says_what_the_leader_judged_with_each_flows_figures() -> None:
    topology = analysis.analyse(TEXT, "orders.yaml").topology
    assert topology is not None
    jobs = document(topology, now=7.0)
    figures = Figures("orders", {}, {s.flow: (s.source, s.target) for s in jobs.specs}, 0.0)
    status = DriverStatus(topology, jobs, once=False, figures=figures)
    flows = {spec.flow: FlowStatus(spec) for spec in jobs.specs}
    leader = Leader(list(flows), once=False)
    leader.step(Tick(0.0, maps={"a->b": {"orders": "a.orders"}, "b->a": {}}))
    leader.step(Tick(0.5, started=frozenset({"a->b"})))
    flows["a->b"].topics = 1
    status.judge(flows, leader, {"a->b": ["orders"]})
    made = status.document(
        FlowState.RUNNING, flows.values(), [{"action": "create"}], "http://h:9464"
    )
    assert made["owner"] == "orders" and made["mode"] == "continuous"
    assert made["state"] == "running" and made["jobs_published_at"] == 7.0
    assert made["changes"] == [{"action": "create"}] and made["metrics_url"] == "http://h:9464"
    by_flow = {flow["flow"]: flow for flow in made["flows"]}
    assert by_flow["a->b"]["state"] == "running"
    assert by_flow["b->a"]["state"] == "waiting for topics"
    # the figures follow the leader's judgement: what /metrics says agrees with the status
    assert figures.snapshot(1.0).flows["a->b"].state == "running"
