"""Where a replication query starts when it has no checkpoint (Spark's startingOffsets)."""

from dataclasses import replace

from tests.unit.test_planner import topology
from topology.core.jobs import specs_of
from topology.spark.query import QueryPlan, _starting

TOPOLOGY = """
version: 1
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
flows:
  - mirror: {from: east, to: west}
    start: mm2
"""


def _plan() -> QueryPlan:
    [spec] = specs_of(topology(TOPOLOGY))
    return QueryPlan(spec, {"orders": "east.orders"}, {}, {}, "/tmp/none", once=False)


def test_a_handover_starts_each_partition_at_mm2s_position_and_the_rest_at_the_earliest() -> None:
    planned = replace(_plan(), starting={"orders": {"0": 42, "1": -2}})
    assert _starting(planned) == '{"orders": {"0": 42, "1": -2}}'


def test_start_mm2_without_positions_is_the_earliest_never_a_word_spark_does_not_know() -> None:
    assert _starting(_plan()) == "earliest"
    latest = replace(_plan(), spec=replace(_plan().spec, start="latest"))
    assert _starting(latest) == "latest"
