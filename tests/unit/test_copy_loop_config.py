"""What the driver hands a flow's copy loop (topology/spark/loop.py), and where a flow that
copied as micro-batches goes on in the loop (its Spark checkpoint's last committed batch)."""

import json
from dataclasses import replace
from pathlib import Path

from tests.unit.test_planner import topology
from topology.core import naming
from topology.core.jobs import specs_of
from topology.core.progress import LATENCY_BUCKETS
from topology.spark import loop
from topology.spark.resumed import checkpoint_offsets

TOPOLOGY = """
version: 1
name: shop
clusters:
  east: {bootstrap: "127.0.0.1:9001"}
  west: {bootstrap: "127.0.0.1:9002"}
flows:
  - mirror: {from: east, to: west}
"""


def _plan(**changes: object) -> loop.LoopPlan:
    [spec] = specs_of(topology(TOPOLOGY))
    planned = loop.LoopPlan(
        spec,
        {"orders": "east.orders"},
        {"bootstrap.servers": "e:1"},
        {"bootstrap.servers": "w:1"},
        once=False,
        slots=3,
        owner="shop",
        partitions={"orders": 3},
    )
    return replace(planned, **changes)  # type: ignore[arg-type]


def test_the_loop_is_given_the_flow_its_clients_and_where_positions_live() -> None:
    given = loop.config(_plan())
    assert given["topics"] == {"orders": "east.orders"} and given["partitions"] == {"orders": 3}
    assert given["tasks"] == 3  # the copy slots the driver sized or the flow stated
    assert given["source"] == "east" and given["target"] == "west" and given["provenance"]
    assert given["group"] == "topo-eos.shop.east--west"  # the exactly-once writer's group
    assert given["source_client"] == {"bootstrap.servers": "e:1"}
    assert given["target_client"] == {"bootstrap.servers": "w:1"}
    assert not given["exactly_once"] and given["commit_ms"] == 1000
    assert given["start"] == "earliest" and given["starting"] == {} and not given["once"]
    assert given["bounds_ms"] == [round(b * 1000) for b in LATENCY_BUCKETS]
    assert given["producer"]["acks"] == "all" and given["producer"]["enable.idempotence"]


def test_the_loop_is_sent_exactly_the_fields_its_java_parser_is_tested_with() -> None:
    """LoopConfig (topo's jar) refuses an unknown field and requires every field: its JUnit
    tests parse tests/java/loop-config.json, which must hold what loop.config sends."""
    sample = json.loads((Path(__file__).parents[1] / "java" / "loop-config.json").read_text())
    given = loop.config(_plan())
    assert sorted(given) == sorted(sample)
    assert given["format"] == sample["format"] == 1


def test_exactly_once_commits_often_and_a_handover_gives_its_positions() -> None:
    planned = _plan(starting={"orders": {"0": 42, "1": -2}}, once=True)
    planned = replace(planned, spec=replace(planned.spec, delivery="exactly-once"))
    given = loop.config(planned)
    assert given["exactly_once"] and given["commit_ms"] == 100 and given["once"]
    assert given["starting"] == {"orders": {"0": 42, "1": -2}}


def _batch(folder: Path, number: int, ends: str, committed: bool) -> None:
    (folder / "offsets").mkdir(parents=True, exist_ok=True)
    (folder / "commits").mkdir(parents=True, exist_ok=True)
    (folder / "offsets" / str(number)).write_text(f'v1\n{{"batchWatermarkMs":0}}\n{ends}\n')
    if committed:
        (folder / "commits" / str(number)).write_text('v1\n{"nextBatchWatermarkMs":0}\n')


def test_a_checkpoint_gives_the_ends_of_its_newest_committed_batch(tmp_path: Path) -> None:
    folder = tmp_path / "east--west"
    assert checkpoint_offsets(str(folder)) is None  # no checkpoint: the flow's start
    _batch(folder, 8, '{"orders":{"0":10,"1":7}}', committed=True)
    _batch(folder, 9, '{"orders":{"0":12,"1":9}}', committed=True)
    _batch(folder, 10, '{"orders":{"0":15,"1":9}}', committed=False)  # planned, never done
    assert checkpoint_offsets(str(folder)) == {"orders": {"0": 12, "1": 9}}
    assert checkpoint_offsets(f"file://{folder}") == {"orders": {"0": 12, "1": 9}}
    assert checkpoint_offsets("hdfs://namenode/topo/shop/east--west") is None


def test_a_checkpoint_topo_cannot_read_is_no_position_never_an_error(tmp_path: Path) -> None:
    folder = tmp_path / "east--west"
    _batch(folder, 0, "not json", committed=True)
    assert checkpoint_offsets(str(folder)) is None


def test_validate_takes_a_rebalance_wait_in_whole_milliseconds_only() -> None:
    from topology.core import analysis

    def codes(value: str) -> list[str]:
        text = TOPOLOGY.replace(
            "flows:", f"engine: {{spark_conf: {{{naming.LOOP_REBALANCE_CONF}: {value}}}}}\nflows:"
        )
        return [
            d.code for d in analysis.analyse(text, "t.yaml").diagnostics if d.severity == "error"
        ]

    assert codes("0") == [] and codes("5000") == []
    assert codes("-1") == codes("1.5") == codes("1m") == codes("'٣'") == ["T104"]


def test_the_flows_client_settings_by_role_reach_the_loop() -> None:
    given = loop.config(
        _plan(
            consumer={"fetch.min.bytes": "65536"},
            producer={"compression.type": "zstd", "acks": "all"},
            admin={"request.timeout.ms": "60000"},
        )
    )
    assert given["source_client"] == {"bootstrap.servers": "e:1", "fetch.min.bytes": "65536"}
    assert given["producer"] == {"compression.type": "zstd", "acks": "all"}
    assert given["admin"] == {"request.timeout.ms": "60000"}
    assert loop.config(_plan())["producer"] == {
        "linger.ms": "5",
        "batch.size": "262144",
        "acks": "all",
        "enable.idempotence": "true",
    }
